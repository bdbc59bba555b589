/**
 * websocket: a WebSocket endpoint accepts the upgrade and, when asked, sends
 * a message that matches.
 *
 * @module
 */

import { namedGroupsOf } from "../_common/captures.ts";
import { safeDecode } from "../../engine/typed_secrets.ts";
import { maskUrlPassword } from "../_common/dsurl.ts";
import { defineKind } from "../../engine/types.ts";
import { type HeaderSpec, parseHeaderFlags } from "../_common/headers.ts";
import { parseTextMatch, type TextMatch, validateTextMatch } from "../_common/textmatch.ts";

/** What a websocket condition needs. */
export interface WebsocketOptions {
  /** The URL without its user-info (sent as an Authorization header instead). */
  readonly url: string;
  readonly headers: readonly HeaderSpec[];
  /** Subprotocols offered; the server must pick one of them when any is given. */
  readonly subprotocols: readonly string[];
  /** Text sent once the upgrade succeeded. */
  readonly send: string | undefined;
  /** What a received message must hold; neither check given: none is awaited. */
  readonly match: TextMatch;
  readonly caFile: string | undefined;
  readonly insecure: boolean;
  /** Send a ping once connected; its pong must come back. */
  readonly ping: boolean;
  /** The close code the server must close the connection with (then awaited). */
  readonly closeCode: number | undefined;
}

/**
 * Whether a server can close with `code` as `ws` reports it: RFC 6455's codes a close frame may
 * carry (1004, 1006 and 1015 never travel, 1016-2999 are unassigned and `ws` refuses them as a
 * protocol error) and 1005, reported for a close frame without a code.
 */
export function closeCodeProblem(code: number): string | undefined {
  if (code === 1004 || code === 1015 || (code >= 1016 && code <= 2999)) {
    return `${code} is reserved by RFC 6455 and never sent by a server`;
  }
  if (code === 1006) {
    return "1006 is never sent by a server (it reports a connection lost without a close frame)";
  }
  return undefined;
}

/** A subprotocol name (RFC 6455: an HTTP token). */
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/** The websocket kind. */
export const websocket = defineKind<WebsocketOptions>({
  name: "websocket",
  aliases: ["ws"],
  summary: "a WebSocket endpoint accepts the upgrade (and sends a matching message)",
  description:
    "Opens a WebSocket connection on each attempt and is satisfied when the upgrade succeeds; with --send the text is sent once it is open, and with --contains or --matches a received message (text, or binary read as UTF-8) must match: messages that do not are skipped until one does or the connection closes. With --ping a ping is sent once it is open and its pong must come back. With --expect-close-code the attempt then waits for the server to close the connection, and holds when the close code is that one (after the matching message and the pong, when asked). The connection is closed at the end of the attempt. A refused upgrade (an HTTP status instead of 101), a connection or TLS failure, or a closed connection without a match is retried until the timeout; a server that stalls is cut by --attempt-timeout. A name is tried on every address it resolves to. User-info in the URL is sent as basic authentication.",
  target: {
    shape: "required",
    placeholder: "URL",
    description: "ws:// or wss:// URL",
  },
  flags: [
    {
      name: "send",
      type: "string",
      placeholder: "TEXT",
      description: "text message to send once connected",
    },
    {
      name: "contains",
      type: "string",
      placeholder: "TEXT",
      description: "a received message includes TEXT",
    },
    {
      name: "matches",
      type: "string",
      placeholder: "REGEX",
      description:
        "a received message matches a regular expression (JavaScript syntax without lookaround or backreferences)",
    },
    {
      name: "ping",
      type: "boolean",
      description: "send a ping once connected; the server must answer with a pong",
    },
    {
      name: "expect-close-code",
      type: "integer",
      placeholder: "CODE",
      min: 1000,
      max: 4999,
      description:
        "the server closes the connection with this close code (1000-1003, 1005, 1007-1014, 3000-4999)",
    },
    {
      name: "header",
      type: "string",
      placeholder: "'NAME: VALUE'",
      repeatable: true,
      description: "header of the upgrade request; Authorization and Cookie values are secrets",
    },
    {
      name: "subprotocol",
      type: "string",
      placeholder: "NAME",
      repeatable: true,
      description: "subprotocol to offer; the server must accept one of those offered",
    },
    {
      name: "ca-file",
      type: "string",
      placeholder: "PATH",
      complete: "file",
      description: "trust the CA certificates of this PEM file (wss://)",
    },
    {
      name: "insecure",
      type: "boolean",
      description: "do not verify the server certificate (wss://)",
    },
  ],
  examples: [
    {
      args: "websocket ws://localhost:8080/socket",
      description: "wait until the endpoint accepts WebSocket connections",
    },
    {
      args: "ws wss://api.internal/live --send ping --contains pong --ca-file ca.pem",
      description: "wait until a ping is answered with pong, trusting a private CA",
    },
    {
      args: "ws ws://localhost:8080/socket --ping",
      description: "wait until the endpoint answers a WebSocket ping",
    },
    {
      args: "ws ws://localhost:8080/jobs/42 --expect-close-code 4000",
      description: "wait until the server ends the job's stream with close code 4000",
    },
    {
      args: "websocket ws://localhost:4000/graphql --subprotocol graphql-transport-ws",
      description: "wait for a GraphQL endpoint that speaks its subprotocol",
    },
  ],
  parse(input) {
    const raw = input.target ?? "";
    let url: URL;
    try {
      url = new URL(raw);
    } catch {
      return input.fail(undefined, `expected a ws:// or wss:// URL, got ${JSON.stringify(raw)}`);
    }
    if (url.protocol !== "ws:" && url.protocol !== "wss:") {
      input.fail(undefined, `expected a ws:// or wss:// URL, got ${JSON.stringify(raw)}`);
    }
    if (url.hostname === "") input.fail(undefined, `missing host in ${JSON.stringify(raw)}`);
    // Shown as typed with the password masked (docs/contract.md §1); the user stays visible.
    const masked = maskUrlPassword(raw);
    for (const s of masked.secrets) input.secret(s);
    const headers = parseHeaderFlags(input);
    if (url.username !== "" || url.password !== "") {
      const user = safeDecode(url.username);
      const pass = safeDecode(url.password);
      input.secret(pass);
      const bytes = new TextEncoder().encode(`${user}:${pass}`);
      const value = `Basic ${btoa(String.fromCharCode(...bytes))}`;
      input.secret(value);
      if (!headers.some((h) => h.name.toLowerCase() === "authorization")) {
        headers.push({ name: "Authorization", value, secret: true });
      }
      url.username = "";
      url.password = "";
    }
    const subprotocols = input.strings("subprotocol");
    for (const p of subprotocols) {
      if (!TOKEN.test(p)) {
        input.fail("subprotocol", `expected a name like chat.v1, got ${JSON.stringify(p)}`);
      }
    }
    if (new Set(subprotocols).size !== subprotocols.length) {
      input.fail("subprotocol", "each subprotocol may be offered once");
    }
    const send = input.string("send");
    const caFile = input.string("ca-file");
    if (caFile === "") input.fail("ca-file", "expected a path, got an empty string");
    const insecure = input.bool("insecure");
    if (insecure && caFile !== undefined) {
      input.fail("insecure", "cannot be combined with --ca-file");
    }
    if (url.protocol === "ws:") {
      if (caFile !== undefined) input.fail("ca-file", "needs a wss:// URL");
      if (insecure) input.fail("insecure", "needs a wss:// URL");
    }
    const match = parseTextMatch(input);
    const ping = input.bool("ping");
    const closeCode = input.integer("expect-close-code");
    if (closeCode !== undefined) {
      const problem = closeCodeProblem(closeCode);
      if (problem !== undefined) input.fail("expect-close-code", problem);
    }
    return {
      target: masked.display,
      options: {
        url: url.href,
        headers,
        subprotocols,
        send,
        match,
        caFile,
        insecure,
        ping,
        closeCode,
      },
      captures: namedGroupsOf(match.matches),
    };
  },
  validate: (options, fail) => validateTextMatch(options.match, fail),
  load: () => import("./probe.ts").then((m) => m.create),
  isolate: true,
  doctor: (env) => import("../_common/doctor.ts").then((m) => m.caStore(env)),
});
