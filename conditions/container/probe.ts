/**
 * container's probe: finds the target's containers on each attempt and
 * judges them; the engine's events stream wakes attempts.
 *
 * @module
 */

import { settle } from "../../engine/settle.ts";
import type { Probe, ProbeEnv } from "../../engine/types.ts";
import { ContainerClient } from "./docker.ts";
import { judgeContainers } from "./judge.ts";
import type { ContainerOptions } from "./mod.ts";

/** Makes the probe of one container condition. */
export function create(options: ContainerOptions, env: ProbeEnv): Probe {
  const client = new ContainerClient(options.target, options.project, options.engine, env.clock);
  return {
    check: ({ signal }) =>
      settle(signal, async () => {
        const { found, sel } = await client.find(signal);
        return judgeContainers(found, options.want, sel);
      }),
    watch: (ctx) => client.watch(ctx),
  };
}
