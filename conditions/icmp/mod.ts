/**
 * icmp: a host answers ICMP echo requests, through the system `ping`.
 *
 * @module
 */

import { defineKind } from "../../engine/types.ts";
import { canonicalIp } from "../_common/net.ts";

/** What an icmp condition needs. */
export interface IcmpOptions {
  /** A DNS name or an IP literal (no brackets). */
  readonly host: string;
  /** Echo replies needed in one attempt. */
  readonly count: number;
}

/** The icmp kind. */
export const icmp = defineKind<IcmpOptions>({
  name: "icmp",
  aliases: ["ping"],
  summary: "a host answers ping (ICMP echo)",
  description:
    "Runs the system ping (iputils) on each attempt and is satisfied when --count echo replies (default 1) arrive; ping sends one request every 0.2s for up to --count × 0.2s + 1s. Missing replies, an unknown host or an unreachable network are retried until the timeout. The ping command is looked up on PATH at the first attempt: without it the run ends at once with exit 3. IPv6 literals work as they are or in brackets.",
  target: {
    shape: "required",
    placeholder: "HOST",
    description: "host name or IP address (IPv4 or IPv6)",
  },
  flags: [
    {
      name: "count",
      type: "integer",
      placeholder: "N",
      min: 1,
      max: 100,
      description: "echo replies needed in one attempt (default 1)",
    },
  ],
  examples: [
    { args: "icmp 10.0.0.1", description: "wait until the gateway answers ping" },
    {
      args: "ping db.internal --count 3 -- tcp db.internal:5432",
      description: "wait for three echo replies, then the database port",
    },
  ],
  parse(input) {
    const raw = input.target ?? "";
    const host = raw.replace(/^\[(.*)\]$/, "$1");
    // The host becomes an argument of ping: no option-like or odd words.
    if (host === "" || host.startsWith("-") || !/^[A-Za-z0-9._:%-]+$/.test(host)) {
      input.fail(undefined, `expected a host name or IP address, got ${JSON.stringify(raw)}`);
    }
    if (host.includes(":") && canonicalIp(host) === undefined && !host.includes("%")) {
      input.fail(undefined, `expected a host name or IP address, got ${JSON.stringify(raw)}`);
    }
    // As typed (docs/contract.md §1: display names).
    return { target: raw, options: { host, count: input.integer("count") ?? 1 } };
  },
  load: () => import("./probe.ts").then((m) => m.create),
  doctor: (env) => import("../_common/doctor.ts").then((m) => m.ping(env)),
});
