/**
 * websocket's probe: one connection per attempt through npm `ws` (it takes
 * a CA, skips verification on request and reports a refused upgrade's
 * status), on each address of the host in turn, closed when the attempt
 * ends (docs/contract.md §5 websocket).
 *
 * @module
 */

import type { Buffer } from "node:buffer";
import type { ClientRequest, IncomingMessage } from "node:http";
import WebSocket from "ws";
import { describeError } from "../../engine/errors.ts";
import type { SecretRegistry } from "../../engine/masking.ts";
import type { Probe, ProbeEnv, ProbeResult } from "../../engine/types.ts";
import { readFlagFile } from "../_common/flagfile.ts";
import { statusLine } from "../_common/http_status.ts";
import { type HostPort, NEXT_ADDRESS_CODES, onEveryAddress } from "../_common/net.ts";
import { describeNodeError } from "../_common/nodeerr.ts";
import {
  asksText,
  describeTextMatch,
  preview,
  textMatcher,
  type TextVerdict,
} from "../_common/textmatch.ts";
import type { WebsocketOptions } from "./mod.ts";

/**
 * The largest message read (docs/contract.md §9): a longer one closes the connection (ws
 * answers it with close code 1009), so no server holds more than this in waitcmd's memory.
 */
export const MAX_MESSAGE_BYTES = 16 << 20;

/**
 * Messages received and not yet judged before the socket stops reading: a server that
 * floods faster than messages are matched waits, instead of piling them up here.
 */
const QUEUED_MAX = 16;

/** The payload of `--ping`'s ping; a pong that does not echo it answers another ping. */
const PING_PAYLOAD = "waitcmd";

/** A failure before the upgrade; `code` is the system's error code. */
class ConnectError extends Error {
  override name = "ConnectError";
  constructor(message: string, readonly code: string | undefined) {
    super(message);
  }
}

/** Makes the probe of one websocket condition. */
export function create(o: WebsocketOptions, env: ProbeEnv): Probe {
  const judge = textMatcher(o.match);
  judge.catch(() => {});
  const url = new URL(o.url);
  const host: HostPort = {
    hostname: url.hostname.replace(/^\[|\]$/g, ""),
    port: url.port === "" ? (url.protocol === "wss:" ? 443 : 80) : Number(url.port),
  };
  return {
    check: async ({ signal }): Promise<ProbeResult> => {
      const test = await judge;
      const ca = o.caFile === undefined ? undefined : await readFlagFile("ca-file", o.caFile);
      return await onEveryAddress(
        host,
        signal,
        (address) => connect(o, address.hostname, ca, test, signal, env.secrets),
        (e) => e instanceof ConnectError && NEXT_ADDRESS_CODES.has(e.code ?? ""),
      );
    },
  };
}

type LookupCallback = (err: Error | null, address: unknown, family?: number) => void;

/** One connection to `address`: the upgrade, the message sent, a matching message awaited. */
function connect(
  o: WebsocketOptions,
  address: string,
  ca: string | undefined,
  test: (text: string, signal: AbortSignal) => Promise<TextVerdict>,
  signal: AbortSignal,
  secrets: SecretRegistry | undefined,
): Promise<ProbeResult> {
  signal.throwIfAborted();
  const family = address.includes(":") ? 6 : 4;
  const headers: Record<string, string> = { "User-Agent": "waitcmd" };
  for (const h of o.headers) headers[h.name] = h.value;
  const servername = new URL(o.url).hostname.replace(/^\[|\]$/g, "");
  const ws = new WebSocket(o.url, [...o.subprotocols], {
    headers,
    perMessageDeflate: false,
    followRedirects: false,
    maxPayload: MAX_MESSAGE_BYTES,
    ca,
    rejectUnauthorized: !o.insecure,
    // Connect to this address of the name; the URL still gives Host and the TLS name.
    lookup: ((_h: string, opts: { all?: boolean }, cb: LookupCallback) => {
      if (opts?.all) cb(null, [{ address, family }]);
      else cb(null, address, family);
    }) as unknown as WebSocket.ClientOptions["lookup"],
  });
  const wantsMessage = asksText(o.match);
  const wantsClose = o.closeCode !== undefined;
  return new Promise<ProbeResult>((resolve, reject) => {
    let done = false;
    let skipped = 0;
    let last: string | undefined;
    let judging: Promise<void> = Promise.resolve();
    let queued = 0;
    let upgraded = "";
    let sent = false;
    let ponged = false;
    /** The matching message's detail and captures, once one came. */
    let matched: { detail: string; captures: Record<string, string> } | undefined;
    const finish = (r: ProbeResult | Error) => {
      if (done) return;
      done = true;
      signal.removeEventListener("abort", onAbort);
      ws.terminate();
      if (r instanceof Error) reject(r);
      else resolve(r);
    };
    /** What holds so far, as the detail's parts after the upgrade. */
    const parts = (): string[] => [
      upgraded,
      ...(sent && !wantsMessage ? [`sent ${JSON.stringify(o.send)}`] : []),
      ...(ponged ? ["pong received"] : []),
      ...(matched ? [matched.detail] : []),
    ];
    /** Every check before the close holds (the message, the pong, the text sent). */
    const ready = () =>
      (!o.ping || ponged) && (!wantsMessage || matched !== undefined) &&
      (o.send === undefined || sent || wantsMessage);
    /** Without a close to wait for, the attempt holds once every other check does. */
    const settle = () => {
      if (wantsClose || !ready()) return;
      const result: ProbeResult = { status: "satisfied", detail: parts().join("; ") };
      finish(matched ? { ...result, captures: matched.captures } : result);
    };
    const onAbort = () =>
      finish(signal.reason instanceof Error ? signal.reason : new Error("aborted"));
    signal.addEventListener("abort", onAbort, { once: true });
    // `on`, not `once`: a later error without a listener would end the process.
    ws.on("error", (e: Error) => {
      const code = (e as { code?: string }).code;
      finish(new ConnectError(describeNodeError(e, servername), code));
    });
    ws.on("unexpected-response", (req: ClientRequest, res: IncomingMessage) => {
      const line = statusLine(res.statusCode ?? 0, res.statusMessage ?? "");
      res.resume();
      req.destroy();
      finish({ status: "pending", error: `upgrade refused: status ${line}` });
    });
    ws.on("pong", (data: Buffer) => {
      if (o.ping && new TextDecoder().decode(data) === PING_PAYLOAD) {
        ponged = true;
        settle();
      }
    });
    ws.on("open", () => {
      upgraded = ws.protocol ? `upgraded, subprotocol ${ws.protocol}` : "upgraded";
      if (o.ping) ws.ping(PING_PAYLOAD);
      if (o.send !== undefined) {
        // Without a reply to wait for, the attempt ends once the message is written.
        ws.send(o.send, (e?: Error) => {
          if (e) finish(new ConnectError(`sending the message: ${describeError(e)}`, undefined));
          else {
            sent = true;
            settle();
          }
        });
      }
      settle();
    });
    ws.on("message", (data: WebSocket.RawData) => {
      // Nothing asked of messages (an echo may beat the send callback), or one matched already.
      if (!wantsMessage || matched) return;
      const bytes = toBytes(data);
      const text = new TextDecoder().decode(bytes);
      if (++queued >= QUEUED_MAX) ws.pause();
      // Judged in arrival order; a long text is matched off the main thread.
      judging = judging.then(async () => {
        if (matched) return;
        const verdict = await test(text, signal);
        if (--queued < QUEUED_MAX && ws.isPaused) ws.resume();
        if ("captures" in verdict) {
          matched = {
            detail: `message ${preview(bytes, secrets)} ${describeTextMatch(o.match)}`,
            captures: verdict.captures,
          };
          settle();
          return;
        }
        skipped++;
        last = `${preview(bytes, secrets)} ${verdict.why}`;
      }).catch((e) => finish(e instanceof Error ? e : new Error(String(e))));
    });
    ws.on("close", (code: number, reason: Buffer) => {
      const why = reason.length > 0 ? ` ${JSON.stringify(new TextDecoder().decode(reason))}` : "";
      // After the messages that came before the close are judged.
      judging = judging.then(() => {
        const closed = `connection closed (code ${code}${why})`;
        if (wantsMessage && !matched) {
          const seen = skipped === 0
            ? "no message"
            : `${skipped} message${skipped === 1 ? "" : "s"} skipped; last ${last}`;
          return finish({
            status: "pending",
            error: `${closed} before a matching message (${seen})`,
          });
        }
        if (o.ping && !ponged) {
          return finish({ status: "pending", error: `${closed} before the pong` });
        }
        if (!wantsClose) return finish({ status: "pending", error: closed });
        if (code !== o.closeCode) {
          return finish({ status: "pending", error: `${closed}, expected code ${o.closeCode}` });
        }
        const detail = [...parts(), `closed with code ${code}${why}`].join("; ");
        finish(
          matched
            ? { status: "satisfied", detail, captures: matched.captures }
            : { status: "satisfied", detail },
        );
      });
    });
  });
}

/** A message's payload as bytes, whatever form `ws` delivered it in. */
function toBytes(data: WebSocket.RawData): Uint8Array {
  if (Array.isArray(data)) {
    const parts = data.map((b) => new Uint8Array(b.buffer, b.byteOffset, b.byteLength));
    const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
    let at = 0;
    for (const p of parts) {
      out.set(p, at);
      at += p.length;
    }
    return out;
  }
  if (data instanceof ArrayBuffer) return new Uint8Array(data);
  return new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
}
