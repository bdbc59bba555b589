/**
 * udp: a UDP service answers a datagram (that matches).
 *
 * @module
 */

import { namedGroupsOf } from "../_common/captures.ts";
import { defineKind } from "../../engine/types.ts";
import { formatHostPort, type HostPort, hostPortTarget } from "../_common/net.ts";
import { parseTextMatch, type TextMatch, validateTextMatch } from "../_common/textmatch.ts";

/** What a udp condition needs. */
export interface UdpOptions {
  readonly hp: HostPort;
  /** The datagram to send, as hex (from --send's UTF-8 or --send-hex). */
  readonly payloadHex: string;
  /** What the reply must hold. */
  readonly match: TextMatch;
}

/** The udp kind. */
export const udp = defineKind<UdpOptions>({
  name: "udp",
  aliases: [],
  summary: "a UDP service answers a datagram (with the expected text)",
  description:
    "Sends the datagram of --send (text) or --send-hex (bytes) on each attempt and is satisfied by the first reply from the target's port that passes --contains and --matches (any reply when neither is given; the reply is read as UTF-8). Replies that do not match are skipped until one does. An attempt waits at most 1s for a reply (less when --attempt-timeout is shorter); silence, or an ICMP port unreachable (connection refused, where the runtime reports it), is retried until the timeout. A host name's addresses all get the datagram at once.",
  target: {
    shape: "required",
    placeholder: "HOST:PORT",
    description: "host name or IP address and port; IPv6 as [::1]:53",
  },
  flags: [
    {
      name: "send",
      type: "string",
      placeholder: "TEXT",
      description: "datagram to send, as UTF-8 text (this or --send-hex is required)",
    },
    {
      name: "send-hex",
      type: "string",
      placeholder: "HEX",
      description: "datagram to send, as hex bytes (spaces and colons ignored)",
    },
    {
      name: "contains",
      type: "string",
      placeholder: "TEXT",
      description: "the reply includes TEXT",
    },
    {
      name: "matches",
      type: "string",
      placeholder: "REGEX",
      description:
        "the reply matches a regular expression (JavaScript syntax without lookaround or backreferences)",
    },
  ],
  examples: [
    {
      args: "udp localhost:9999 --send ping --contains pong",
      description: "wait until a UDP service answers ping with pong",
    },
    {
      args: "udp 10.0.0.7:27015 --send-hex 'ff ff ff ff 54' --matches '^.{4}I'",
      description: "wait for a game server's info reply",
    },
  ],
  parse(input) {
    const hp = hostPortTarget(input);
    const text = input.string("send");
    const hex = input.string("send-hex");
    if (text !== undefined && hex !== undefined) {
      input.fail("send-hex", "cannot be combined with --send");
    }
    let payloadHex: string;
    if (hex !== undefined) {
      payloadHex = hex.replace(/[\s:]/g, "").toLowerCase();
      if (payloadHex.startsWith("0x")) payloadHex = payloadHex.slice(2);
      if (payloadHex === "" || !/^([0-9a-f]{2})+$/.test(payloadHex)) {
        input.fail(
          "send-hex",
          `expected bytes in hex like 'ff 00 1a', got ${JSON.stringify(hex)}`,
        );
      }
    } else if (text !== undefined) {
      if (text === "") input.fail("send", "expected a text, got an empty string");
      payloadHex = Array.from(
        new TextEncoder().encode(text),
        (b) => b.toString(16).padStart(2, "0"),
      )
        .join("");
    } else {
      return input.fail(undefined, "needs --send TEXT or --send-hex HEX (the datagram to send)");
    }
    const match = parseTextMatch(input);
    return {
      // As typed (docs/contract.md §1: display names).
      target: input.target ?? formatHostPort(hp),
      options: { hp, payloadHex, match },
      captures: namedGroupsOf(match.matches),
    };
  },
  validate: (options, fail) => validateTextMatch(options.match, fail),
  load: () => import("./probe.ts").then((m) => m.create),
});
