/**
 * The ssh kind's key exchange (and, with --user, password authentication)
 * through `npm:ssh2`, imported by the probe's `create` only when a condition
 * needs it (docs/contract.md §2).
 *
 * @module
 */

import { describeError } from "../../engine/errors.ts";
import type { ProbeResult } from "../../engine/types.ts";
import { type Memo, memoize } from "../_common/memo.ts";
import type { HostPort } from "../_common/net.ts";
import { describeNodeError } from "../_common/nodeerr.ts";
import type { SshOptions } from "./mod.ts";
import { bannerCheck, keyType } from "./protocol.ts";
import { commonJsExports } from "../../engine/commonjs.ts";

/** ssh2's client and node:crypto's hash, imported once. */
export const sshLibrary: Memo<{
  Client: new () => SshClient;
  createHash: typeof import("node:crypto").createHash;
}> = memoize(async () => {
  const [mod, crypto] = await Promise.all([import("ssh2"), import("node:crypto")]);
  const ssh2 = commonJsExports(mod as unknown as { Client: new () => SshClient });
  return {
    Client: ssh2.Client,
    createHash: crypto.createHash,
  };
});

interface SshClient {
  on(event: string, fn: (...args: never[]) => void): SshClient;
  connect(config: Record<string, unknown>): void;
  end(): void;
  destroy(): void;
  _protocol?: { _remoteIdentRaw?: Uint8Array };
  _remoteVer?: string;
}

/**
 * One SSH handshake with `address`. Rejects only when the TCP connection
 * fails (so the next address is tried); once connected, every outcome is a
 * result.
 */
export async function checkHandshake(
  options: SshOptions,
  address: HostPort,
  password: string | undefined,
  signal: AbortSignal,
): Promise<ProbeResult> {
  const { Client, createHash } = await sshLibrary.get();
  signal.throwIfAborted();
  const client = new Client();
  const { pin, user } = options;
  let seen: { fp: string; type: string } | undefined;
  let connected = false;
  let loggedIn = false;
  return await new Promise<ProbeResult>((resolve, reject) => {
    let done = false;
    const finish = (r: ProbeResult | Error) => {
      if (done) return;
      done = true;
      signal.removeEventListener("abort", onAbort);
      try {
        // A server that answered: goodbye. Any other: the socket goes at once, or a server
        // that keeps sending would have its bytes read (and kept) after ssh2's end(), which
        // half-closes; ssh2's destroy() does nothing once the socket was ended.
        if (!(r instanceof Error) && r.status === "satisfied") client.end();
        else client.destroy();
      } catch {
        // already closed
      }
      if (r instanceof Error) reject(r);
      else resolve(r);
    };
    /** A failure: an error before the connection opened, a pending result after. */
    const fail = (text: string) =>
      finish(connected ? { status: "pending", error: text } : new Error(text));
    const onAbort = () => finish(new Error("aborted"));
    signal.addEventListener("abort", onAbort, { once: true });
    const ident = () => {
      const raw = client._protocol?._remoteIdentRaw;
      if (raw) return new TextDecoder("latin1").decode(raw).trim();
      return client._remoteVer ? `SSH-2.0-${client._remoteVer}` : "SSH-2.0-?";
    };
    client.on("connect", () => {
      connected = true;
    });
    client.on("handshake", () => {
      const banner = ident();
      const bad = bannerCheck(options.bannerContains, banner);
      if (bad) return finish(bad);
      if (user === undefined) {
        finish({
          status: "satisfied",
          detail: `host key ${seen?.fp} (${seen?.type}), ${banner}`,
        });
      }
    });
    client.on("ready", () => {
      loggedIn = true;
      const pinned = pin ? `, host key ${seen?.fp}` : "";
      finish({ status: "satisfied", detail: `logged in as ${user}${pinned} (${ident()})` });
    });
    client.on("error", (e: Error & { level?: string; code?: string }) => {
      if (seen && pin && seen.fp !== pin) {
        return fail(
          `host key mismatch: the server shows ${seen.fp} (${seen.type}), expected ${pin}`,
        );
      }
      if (e.level === "client-authentication") {
        return fail(`authentication failed for user ${user}`);
      }
      if (e.level === "client-socket" || e.code) {
        return fail(describeNodeError(e, options.hp.hostname));
      }
      const msg = e.message.charAt(0).toLowerCase() + e.message.slice(1);
      if (/identification|header|greeting/i.test(e.message)) {
        return fail(`not an SSH server: ${msg}`);
      }
      fail(msg);
    });
    // Servers that take passwords only through PAM's keyboard-interactive prompts.
    client.on(
      "keyboard-interactive",
      (_n: string, _i: string, _l: string, prompts: unknown[], reply: (a: string[]) => void) => {
        reply(prompts.map(() => password ?? ""));
      },
    );
    client.on("close", () => {
      if (!loggedIn) fail("connection closed during the SSH handshake");
    });
    const config: Record<string, unknown> = {
      host: address.hostname,
      port: address.port,
      readyTimeout: 0,
      keepaliveInterval: 0,
      tryKeyboard: user !== undefined,
      hostVerifier: (key: Uint8Array) => {
        seen = {
          fp: "SHA256:" + createHash("sha256").update(key).digest("base64").replace(/=+$/, ""),
          type: keyType(key),
        };
        return pin === undefined || seen.fp === pin;
      },
    };
    if (user !== undefined) {
      config.username = user;
      config.password = password;
    } else {
      // Only the key exchange is wanted: the handshake event ends the attempt.
      config.username = "waitcmd";
    }
    try {
      client.connect(config);
    } catch (e) {
      fail(describeError(e));
    }
  });
}
