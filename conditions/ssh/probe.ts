/**
 * ssh's probe: without credentials or pin, the identification banner read
 * over a plain TCP connection; otherwise the ssh2 handshake (handshake.ts).
 * A host name is tried on each of its addresses until one accepts the
 * connection; that address decides the attempt.
 *
 * @module
 */

import type { Probe, ProbeResult } from "../../engine/types.ts";
import { describeError } from "../../engine/errors.ts";
import { readFlagFile } from "../_common/flagfile.ts";
import { type HostPort, onEveryAddress } from "../_common/net.ts";
import { checkHandshake, sshLibrary } from "./handshake.ts";
import type { SshOptions } from "./mod.ts";
import { bannerCheck, judgeBanner } from "./protocol.ts";

/** Makes the probe of one ssh condition; ssh2 is imported only for a handshake. */
export async function create(options: SshOptions): Promise<Probe> {
  const bannerOnly = options.user === undefined && options.pin === undefined;
  if (!bannerOnly) await sshLibrary.get();
  return {
    check: async ({ signal }): Promise<ProbeResult> => {
      if (bannerOnly) {
        return await onEveryAddress(
          options.hp,
          signal,
          (address) => checkBanner(options, address, signal),
        );
      }
      const password = options.user === undefined ? undefined : await readPassword(options);
      return await onEveryAddress(
        options.hp,
        signal,
        (address) => checkHandshake(options, address, password, signal),
      );
    },
  };
}

/**
 * The password for --user: the first line of --password-file, read at each
 * attempt with the 4 MiB cap (docs/contract.md §9); throws when it cannot be read.
 */
async function readPassword(options: SshOptions): Promise<string> {
  const p = options.password!;
  if ("value" in p) return p.value;
  const text = await readFlagFile("password-file", p.file);
  return text.split(/\r?\n/)[0]!;
}

/**
 * No credentials: connect, read the identification line, close. Rejects only
 * when the connection fails; once connected, every outcome is a result.
 */
async function checkBanner(
  options: SshOptions,
  address: HostPort,
  signal: AbortSignal,
): Promise<ProbeResult> {
  const conn = await Deno.connect({ hostname: address.hostname, port: address.port, signal });
  const onAbort = () => {
    try {
      conn.close();
    } catch {
      // already closed
    }
  };
  signal.addEventListener("abort", onAbort, { once: true });
  const decoder = new TextDecoder("latin1");
  const buf = new Uint8Array(1024);
  let data = "";
  try {
    for (;;) {
      let n: number | null;
      try {
        n = await conn.read(buf);
      } catch (e) {
        signal.throwIfAborted();
        const verdict = judgeBanner(data, true);
        if (verdict && !verdict.ok && data.trim() !== "") {
          return { status: "pending", error: verdict.error };
        }
        return { status: "pending", error: describeError(e) };
      }
      if (n !== null) data += decoder.decode(buf.subarray(0, n));
      const verdict = judgeBanner(data, n === null);
      if (verdict === undefined) continue;
      if (!verdict.ok) return { status: "pending", error: verdict.error };
      return bannerCheck(options.bannerContains, verdict.banner) ??
        { status: "satisfied", detail: verdict.banner };
    }
  } finally {
    signal.removeEventListener("abort", onAbort);
    onAbort();
  }
}
