/**
 * container's probe: finds the target's containers on each attempt and
 * judges them; with `--listening`, reads the ports of those in the wanted
 * state from the host's /proc. The engine's events stream wakes attempts.
 *
 * @module
 */

import type { Probe, ProbeEnv } from "../../engine/types.ts";
import { ContainerClient } from "./docker.ts";
import { judgeContainers, stateHolds } from "./judge.ts";
import type { ContainerOptions } from "./mod.ts";
import { portsOf } from "./netns.ts";

/** Makes the probe of one container condition. */
export function create(options: ContainerOptions, env: ProbeEnv): Probe {
  const client = new ContainerClient(options.target, options.project, options.engine, env.clock);
  const ports = options.want.listening ?? [];
  return {
    check: async ({ signal }) => {
      let { found, sel } = await client.find(signal);
      if (ports.length > 0) {
        // Only a container in the wanted state runs, so has its ports read.
        found = await Promise.all(
          found.map(async (c) =>
            stateHolds(c, options.want) && c.pid > 0
              ? { ...c, closed: await portsOf(c, ports, options.engine.display, signal) }
              : c
          ),
        );
      }
      return judgeContainers(found, options.want, sel);
    },
    watch: (ctx) => client.watch(ctx),
  };
}
