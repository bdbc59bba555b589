/**
 * What an SSH server says, judged without a library: its identification
 * line and the algorithm name of its host key blob. Pure.
 *
 * @module
 */

import type { ProbeResult } from "../../engine/types.ts";

/** Most bytes read while looking for the identification line (RFC 4253 allows lines before it). */
export const BANNER_LIMIT = 8192;

/** The outcome of reading a server's first lines. */
export type BannerResult = { ok: true; banner: string } | { ok: false; error: string };

/**
 * Judges what a server sent first: the identification line must start with
 * `SSH-2.0-` or `SSH-1.99-`; other text lines may precede it (RFC 4253
 * §4.2), but an HTTP reply, binary data or an unsupported version is not SSH.
 * Returns undefined while more data is needed.
 */
export function judgeBanner(data: string, closed: boolean): BannerResult | undefined {
  const lines = data.split("\n");
  const complete = closed ? lines : lines.slice(0, -1);
  for (const raw of complete) {
    const line = raw.replace(/\r$/, "");
    if (line.startsWith("SSH-")) {
      if (line.startsWith("SSH-2.0-") || line.startsWith("SSH-1.99-")) {
        return { ok: true, banner: line };
      }
      return { ok: false, error: `unsupported SSH protocol version: ${quote(line)}` };
    }
    if (line === "" && closed) continue;
    // deno-lint-ignore no-control-regex
    if (/^HTTP\/|[\x00-\x08\x0e-\x1f]/.test(line)) {
      return { ok: false, error: `not an SSH server: got ${quote(line)}` };
    }
  }
  if (closed) {
    return {
      ok: false,
      error: data.trim() === ""
        ? "connection closed without an identification banner"
        : `no SSH identification banner: got ${quote(data.trim())}`,
    };
  }
  if (data.length >= BANNER_LIMIT) {
    return { ok: false, error: `no SSH identification banner in the first ${BANNER_LIMIT} bytes` };
  }
  return undefined;
}

/** The pending result when `banner` lacks --banner-contains, else undefined. */
export function bannerCheck(
  bannerContains: string | undefined,
  banner: string,
): ProbeResult | undefined {
  if (bannerContains !== undefined && !banner.includes(bannerContains)) {
    return {
      status: "pending",
      error: `banner ${quote(banner)} does not contain ${JSON.stringify(bannerContains)}`,
    };
  }
  return undefined;
}

/** `s` quoted for a message, shortened to 60 characters. */
export function quote(s: string): string {
  const t = s.length > 60 ? s.slice(0, 59) + "…" : s;
  return JSON.stringify(t);
}

/** The SSH public key blob's algorithm name (its first SSH string). */
export function keyType(blob: Uint8Array): string {
  if (blob.length < 4) return "unknown";
  const len = (blob[0]! << 24 | blob[1]! << 16 | blob[2]! << 8 | blob[3]!) >>> 0;
  if (len > 64 || 4 + len > blob.length) return "unknown";
  return new TextDecoder().decode(blob.subarray(4, 4 + len));
}
