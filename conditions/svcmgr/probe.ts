/**
 * svcmgr's probe: asks the manager for the unit's state on each attempt and
 * judges it; the unit's D-Bus signals wake attempts.
 *
 * @module
 */

import type { Probe, ProbeEnv } from "../../engine/types.ts";
import { UnitClient } from "./client.ts";
import { judgeUnit } from "./judge.ts";
import type { SvcmgrOptions } from "./mod.ts";

/** Makes the probe of one svcmgr condition. */
export function create(options: SvcmgrOptions, env: ProbeEnv): Probe {
  const address = options.address ?? `unix:path=/run/user/${Deno.uid() ?? 0}/bus`;
  const client = new UnitClient(options.unit, options.user, address, env.clock);
  return {
    check: async ({ signal }) => judgeUnit(await client.state(signal), options.want),
    watch: (ctx) => client.watch(ctx),
    close: () => client.close(),
  };
}
