/**
 * dns's probe: one lookup per attempt through the system or the wire
 * resolver, judged against the condition's requirements.
 *
 * @module
 */

import type { Probe, ProbeEnv, ProbeResult } from "../../engine/types.ts";
import { judgeLookup } from "./judge.ts";
import type { DnsOptions } from "./mod.ts";
import { lookupSystem } from "./system.ts";
import { dnsPacketLibrary, lookupWire } from "./wire.ts";

/** Makes the probe of one dns condition; the wire resolver's library is imported here. */
export async function create(options: DnsOptions, env: ProbeEnv): Promise<Probe> {
  if (options.wire) await dnsPacketLibrary.get();
  return {
    check: async ({ signal }): Promise<ProbeResult> => {
      const found = options.wire
        ? await lookupWire(options, signal, env.clock)
        : await lookupSystem(options.name, options.type, signal);
      signal.throwIfAborted();
      return judgeLookup(found, options);
    },
  };
}
