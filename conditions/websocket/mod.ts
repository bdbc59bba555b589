/**
 * websocket: a WebSocket endpoint accepts the upgrade and, when asked, sends
 * a message that matches.
 *
 * @module
 */

import { namedGroupsOf } from "../_common/captures.ts";
import { safeDecode } from "../../engine/secrets.ts";
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
}

/** A subprotocol name (RFC 6455: an HTTP token). */
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/** The websocket kind. */
export const websocket = defineKind<WebsocketOptions>({
  name: "websocket",
  aliases: ["ws"],
  summary: "a WebSocket endpoint accepts the upgrade (and sends a matching message)",
  description:
    "Opens a WebSocket connection on each attempt and is satisfied when the upgrade succeeds; with --send the text is sent once it is open, and with --contains or --matches a received message (text, or binary read as UTF-8) must match: messages that do not are skipped until one does or the connection closes. The connection is closed at the end of the attempt. A refused upgrade (an HTTP status instead of 101), a connection or TLS failure, or a closed connection without a match is retried until the timeout; a server that stalls is cut by --attempt-timeout. A name is tried on every address it resolves to. User-info in the URL is sent as basic authentication.",
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
      },
      captures: namedGroupsOf(match.matches),
    };
  },
  validate: (options, fail) => validateTextMatch(options.match, fail),
  load: () => import("./probe.ts").then((m) => m.create),
  isolate: true,
  doctor: (env) => import("../_common/doctor.ts").then((m) => m.caStore(env)),
});
