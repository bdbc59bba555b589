/**
 * ssh: an SSH server greets, shows the pinned host key, or accepts a password.
 *
 * Without credentials or pin the identification banner is read over a plain
 * TCP connection (no SSH library). With `--host-key-sha256` or `--user`,
 * `npm:ssh2` (imported lazily) runs the key exchange, and with `--user` the
 * password authentication.
 *
 * @module
 */

import type { ConditionKind, KindInput, ProbeResult } from "../engine/types.ts";
import { describeError, formatHostPort, type HostPort } from "./_net.ts";
import { describeNodeError, parseHostDefaultPort, readFlagFile } from "./_nodenet.ts";

/** Most bytes read while looking for the identification line (RFC 4253 allows lines before it). */
const BANNER_LIMIT = 8192;
const FINGERPRINT = /^SHA256:[A-Za-z0-9+/]{43}=?$/;

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

function quote(s: string): string {
  const t = s.length > 60 ? s.slice(0, 59) + "…" : s;
  return JSON.stringify(t);
}

interface SshSpec {
  readonly hp: HostPort;
  readonly bannerContains: string | undefined;
  readonly user: string | undefined;
  /** The password, or where to read it at check time. */
  readonly password: { value: string } | { file: string } | undefined;
  readonly pin: string | undefined;
}

/** The ssh kind. */
export const ssh: ConditionKind = {
  name: "ssh",
  aliases: [],
  summary: "an SSH server greets, shows the expected host key, or accepts a login",
  description:
    "Without credentials, satisfied once the server sends a valid identification banner (SSH-2.0- or SSH-1.99-); anything else, or silence, is a failed attempt (use --attempt-timeout for silent servers). --host-key-sha256 runs the key exchange and requires that host key (no login is attempted; a different key stays pending and the error shows the key seen). With --user and a password (--password, --password-env or --password-file), satisfied once password authentication succeeds. The password never appears in any output.",
  target: {
    shape: "required",
    placeholder: "HOST[:PORT]",
    description: "host name or IP address, port 22 by default; IPv6 as [::1]:22",
  },
  flags: [
    {
      name: "banner-contains",
      type: "string",
      placeholder: "TEXT",
      description: "the identification banner includes TEXT (e.g. OpenSSH_9)",
    },
    {
      name: "host-key-sha256",
      type: "string",
      placeholder: "SHA256:...",
      description: "expected host key fingerprint, as ssh-keygen -lf prints it",
    },
    { name: "user", type: "string", placeholder: "NAME", description: "log in as NAME" },
    {
      name: "password",
      type: "string",
      placeholder: "TEXT",
      secret: true,
      description: "password for --user (prefer --password-env or --password-file)",
    },
    {
      name: "password-env",
      type: "string",
      placeholder: "ENVVAR",
      description: "read the password for --user from an environment variable",
    },
    {
      name: "password-file",
      type: "string",
      placeholder: "PATH",
      complete: "file",
      description: "read the password for --user from a file (first line)",
    },
  ],
  examples: [
    { args: "ssh db:22", description: "wait until sshd greets" },
    {
      args: "ssh 10.0.0.7 --host-key-sha256 SHA256:uNiVztksCsDhcc0u9e8BujQXVUpKZIDTMczCvj3tD2s",
      description: "wait until the new host shows its expected host key",
    },
    {
      args: "ssh vm:2222 --user ci --password-env VM_PASSWORD --banner-contains OpenSSH",
      description: "wait until a login with the password works",
    },
  ],
  parse(input) {
    const spec = parseSpec(input);
    return {
      target: formatHostPort(spec.hp),
      check: ({ signal }) =>
        spec.user === undefined && spec.pin === undefined
          ? checkBanner(spec, signal)
          : checkHandshake(spec, signal),
    };
  },
};

function parseSpec(input: KindInput): SshSpec {
  const hp = parseHostDefaultPort(input.target ?? "", 22);
  if (typeof hp === "string") input.fail(undefined, hp);
  const bannerContains = input.string("banner-contains");
  if (bannerContains === "") input.fail("banner-contains", "expected a text, got an empty string");
  const pin = input.string("host-key-sha256");
  if (pin !== undefined && !FINGERPRINT.test(pin)) {
    input.fail(
      "host-key-sha256",
      `expected SHA256: and 43 base64 characters, as ssh-keygen -lf prints it, got ${
        JSON.stringify(pin)
      }`,
    );
  }
  const sources = ["password", "password-env", "password-file"].filter((f) => input.has(f));
  if (sources.length > 1) {
    input.fail(sources[1], `cannot be combined with --${sources[0]}`);
  }
  const user = input.string("user");
  if (user === "") input.fail("user", "expected a user name, got an empty string");
  if (user !== undefined && sources.length === 0) {
    input.fail("user", "needs --password, --password-env or --password-file");
  }
  if (user === undefined && sources.length > 0) input.fail(sources[0], "needs --user");
  let password: SshSpec["password"];
  if (input.has("password")) password = { value: input.string("password")! };
  const envName = input.string("password-env");
  if (envName !== undefined) {
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(envName)) {
      input.fail(
        "password-env",
        `expected an environment variable name, got ${JSON.stringify(envName)}`,
      );
    }
    const value = input.env[envName];
    if (value === undefined) {
      input.fail("password-env", `environment variable ${envName} is not set`);
    }
    input.secret(value!);
    password = { value: value! };
  }
  const file = input.string("password-file");
  if (file !== undefined) {
    if (file === "") input.fail("password-file", "expected a path, got an empty string");
    password = { file };
  }
  return { hp: hp as HostPort, bannerContains, user, password, pin };
}

function bannerCheck(spec: SshSpec, banner: string): ProbeResult | undefined {
  if (spec.bannerContains !== undefined && !banner.includes(spec.bannerContains)) {
    return {
      status: "pending",
      error: `banner ${quote(banner)} does not contain ${JSON.stringify(spec.bannerContains)}`,
    };
  }
  return undefined;
}

/** No credentials: connect, read the identification line, close. */
async function checkBanner(spec: SshSpec, signal: AbortSignal): Promise<ProbeResult> {
  let conn: Deno.TcpConn;
  try {
    conn = await Deno.connect({ hostname: spec.hp.hostname, port: spec.hp.port, signal });
  } catch (e) {
    if (signal.aborted) return { status: "pending", error: "aborted" };
    return { status: "pending", error: describeError(e) };
  }
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
        if (signal.aborted) return { status: "pending", error: "aborted" };
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
      return bannerCheck(spec, verdict.banner) ?? { status: "satisfied", detail: verdict.banner };
    }
  } finally {
    signal.removeEventListener("abort", onAbort);
    onAbort();
  }
}

/** The SSH public key blob's algorithm name (its first SSH string). */
export function keyType(blob: Uint8Array): string {
  if (blob.length < 4) return "unknown";
  const len = (blob[0]! << 24 | blob[1]! << 16 | blob[2]! << 8 | blob[3]!) >>> 0;
  if (len > 64 || 4 + len > blob.length) return "unknown";
  return new TextDecoder().decode(blob.subarray(4, 4 + len));
}

interface SshClient {
  on(event: string, fn: (...args: never[]) => void): SshClient;
  connect(config: Record<string, unknown>): void;
  end(): void;
  destroy?(): void;
  _protocol?: { _remoteIdentRaw?: Uint8Array };
  _remoteVer?: string;
}

async function readPassword(spec: SshSpec): Promise<string | { error: string }> {
  const p = spec.password!;
  if ("value" in p) return p.value;
  const text = await readFlagFile("password-file", p.file);
  return typeof text === "string" ? text.split(/\r?\n/)[0]! : text;
}

/** Key exchange (and, with --user, password authentication) through npm:ssh2. */
async function checkHandshake(spec: SshSpec, signal: AbortSignal): Promise<ProbeResult> {
  let password: string | undefined;
  if (spec.user !== undefined) {
    const p = await readPassword(spec);
    if (typeof p !== "string") return { status: "pending", error: p.error };
    password = p;
  }
  const mod = await import("ssh2");
  const Client = (mod as unknown as { Client: new () => SshClient }).Client;
  const client = new Client();
  const { createHash } = await import("node:crypto");
  let seen: { fp: string; type: string } | undefined;
  let loggedIn = false;
  return await new Promise<ProbeResult>((resolve) => {
    let done = false;
    const finish = (r: ProbeResult) => {
      if (done) return;
      done = true;
      signal.removeEventListener("abort", onAbort);
      try {
        client.end();
      } catch {
        // already closed
      }
      resolve(r);
    };
    const onAbort = () => finish({ status: "pending", error: "aborted" });
    signal.addEventListener("abort", onAbort, { once: true });
    const ident = () => {
      const raw = client._protocol?._remoteIdentRaw;
      if (raw) return new TextDecoder("latin1").decode(raw).trim();
      return client._remoteVer ? `SSH-2.0-${client._remoteVer}` : "SSH-2.0-?";
    };
    client.on("handshake", () => {
      const banner = ident();
      const bad = bannerCheck(spec, banner);
      if (bad) return finish(bad);
      if (spec.user === undefined) {
        finish({
          status: "satisfied",
          detail: `host key ${seen?.fp} (${seen?.type}), ${banner}`,
        });
      }
    });
    client.on("ready", () => {
      loggedIn = true;
      const pinned = spec.pin ? `, host key ${seen?.fp}` : "";
      finish({ status: "satisfied", detail: `logged in as ${spec.user}${pinned} (${ident()})` });
    });
    client.on("error", (e: Error & { level?: string; code?: string }) => {
      if (seen && spec.pin && seen.fp !== spec.pin) {
        return finish({
          status: "pending",
          error:
            `host key mismatch: the server shows ${seen.fp} (${seen.type}), expected ${spec.pin}`,
        });
      }
      if (e.level === "client-authentication") {
        return finish({ status: "pending", error: `authentication failed for user ${spec.user}` });
      }
      if (e.level === "client-socket" || e.code) {
        return finish({ status: "pending", error: describeNodeError(e, spec.hp.hostname) });
      }
      const msg = e.message.charAt(0).toLowerCase() + e.message.slice(1);
      if (/identification|header|greeting/i.test(e.message)) {
        return finish({ status: "pending", error: `not an SSH server: ${msg}` });
      }
      finish({ status: "pending", error: msg });
    });
    // Servers that take passwords only through PAM's keyboard-interactive prompts.
    client.on(
      "keyboard-interactive",
      (_n: string, _i: string, _l: string, prompts: unknown[], reply: (a: string[]) => void) => {
        reply(prompts.map(() => password ?? ""));
      },
    );
    client.on("close", () => {
      if (!loggedIn) {
        finish({ status: "pending", error: "connection closed during the SSH handshake" });
      }
    });
    const config: Record<string, unknown> = {
      host: spec.hp.hostname,
      port: spec.hp.port,
      readyTimeout: 0,
      keepaliveInterval: 0,
      tryKeyboard: spec.user !== undefined,
      hostVerifier: (key: Uint8Array) => {
        seen = {
          fp: "SHA256:" + createHash("sha256").update(key).digest("base64").replace(/=+$/, ""),
          type: keyType(key),
        };
        return spec.pin === undefined || seen.fp === spec.pin;
      },
    };
    if (spec.user !== undefined) {
      config.username = spec.user;
      config.password = password;
    } else {
      // Only the key exchange is wanted: the handshake event ends the attempt.
      config.username = "waitcmd";
    }
    try {
      client.connect(config);
    } catch (e) {
      finish({ status: "pending", error: describeError(e) });
    }
  });
}
