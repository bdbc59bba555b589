/**
 * ports's probe: every port tried concurrently (at most 256 connections at
 * once), each on every address of the host until one accepts.
 *
 * @module
 */

import { describeError } from "../../engine/errors.ts";
import type { Probe, ProbeResult } from "../../engine/types.ts";
import { tryConnect } from "../_common/net.ts";
import { formatPorts, type PortsOptions } from "./mod.ts";

/** Most connection attempts under way at once, to stay under fd limits. */
const CONCURRENCY = 256;

/** Makes the probe of one ports condition. */
export function create(options: PortsOptions): Probe {
  const { host, ports: portList, any: wantAny } = options;
  const described = formatPorts(portList);
  return {
    check: async ({ signal }): Promise<ProbeResult> => {
      const open: number[] = [];
      const errors = new Map<string, number>();
      let next = 0;
      const worker = async () => {
        while (next < portList.length && !signal.aborted) {
          const port = portList[next++]!;
          try {
            await tryConnect({ hostname: host, port }, signal);
            open.push(port);
          } catch (e) {
            const err = describeError(e);
            errors.set(err, (errors.get(err) ?? 0) + 1);
          }
        }
      };
      await Promise.all(Array.from({ length: Math.min(CONCURRENCY, portList.length) }, worker));
      signal.throwIfAborted();
      open.sort((a, b) => a - b);
      const n = portList.length;
      if (wantAny ? open.length > 0 : open.length === n) {
        const detail = wantAny
          ? `open: ${formatPorts(open)} (${open.length} of ${n})`
          : `all ${n} port${n === 1 ? "" : "s"} open (${described})`;
        return { status: "satisfied", detail };
      }
      const openSet = new Set(open);
      const closed = portList.filter((p) => !openSet.has(p));
      const why = [...errors.keys()][0] ?? "not open";
      const error = wantAny
        ? `none of ${n} ports open (${described}): ${why}`
        : `closed: ${formatPorts(closed)} (${open.length} of ${n} open): ${why}`;
      return { status: "pending", error };
    },
  };
}
