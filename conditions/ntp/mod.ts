/**
 * ntp: an NTP server answers SNTP (RFC 4330) with a synchronised clock
 * within an offset of ours.
 *
 * @module
 */

import { formatDuration } from "../../engine/duration.ts";
import { defineKind } from "../../engine/types.ts";
import { formatHostPort, type HostPort, hostPortTarget } from "../_common/net.ts";

/** What an ntp condition needs. */
export interface NtpOptions {
  readonly hp: HostPort;
  /** Largest accepted offset between the server's clock and ours, in milliseconds. */
  readonly maxOffsetMs: number;
  /** Highest accepted stratum, when given. */
  readonly maxStratum: number | undefined;
}

/** The ntp kind. */
export const ntp = defineKind<NtpOptions>({
  name: "ntp",
  aliases: [],
  summary: "an NTP server answers with a synchronised clock close to ours",
  description:
    "Sends an SNTP request (RFC 4330) on each attempt and is satisfied when the server answers within 2s with a synchronised clock (leap indicator not 3, stratum 1-15) whose offset from this machine's clock is at most --max-offset (default 1s), and with --max-stratum, whose stratum is at most that. detail gives the offset and the stratum. An unsynchronised server, a larger offset, a higher stratum or no answer is retried until the timeout.",
  target: {
    shape: "required",
    placeholder: "HOST[:PORT]",
    description: "host name or IP address, port 123 by default; IPv6 as [::1]:123",
  },
  flags: [
    {
      name: "max-offset",
      type: "duration",
      placeholder: "DURATION",
      description: "largest accepted offset between the server's clock and ours (default 1s)",
    },
    {
      name: "max-stratum",
      type: "integer",
      placeholder: "N",
      min: 1,
      max: 15,
      description: "highest accepted stratum (1: a reference clock, 2: synced to one, ...)",
    },
  ],
  examples: [
    {
      args: "ntp pool.ntp.org --max-offset 100ms",
      description: "wait until our clock is within 100ms of the pool's",
    },
    {
      args: "ntp 10.0.0.1:123 --max-stratum 3",
      description: "wait for the local time server to be synchronised, at stratum 3 or better",
    },
  ],
  parse(input) {
    const hp = hostPortTarget(input, 123);
    const maxOffsetMs = input.duration("max-offset") ?? 1000;
    if (maxOffsetMs <= 0) input.fail("max-offset", `must be above 0, got ${formatDuration(0)}`);
    return {
      // As typed (docs/contract.md §1: display names).
      target: input.target ?? formatHostPort(hp),
      options: { hp, maxOffsetMs, maxStratum: input.integer("max-stratum") },
    };
  },
  load: () => import("./probe.ts").then((m) => m.create),
});
