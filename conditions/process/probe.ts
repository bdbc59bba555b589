/**
 * process's probe: looks the selected processes up on each attempt.
 *
 * @module
 */

import type { Probe, ProbeResult } from "../../engine/types.ts";
import type { ProcessOptions } from "./mod.ts";
import { hasName, listProcs, type Proc, readProc, running } from "../_common/procs.ts";

/** Makes the probe of one process condition. */
export function create(options: ProcessOptions): Probe {
  const self = Deno.pid;
  const wantStopped = options.want === "stopped";
  const what = options.by === "name" ? `process ${options.name}` : `process ${options.pid}`;

  /** One look at the process table. */
  async function look(): Promise<ProbeResult> {
    let alive: Proc[];
    if (options.by === "pid") {
      const pid = options.pid;
      const p = await readProc(pid);
      alive = p && running(p) ? [p] : [];
      if (p && !running(p) && !wantStopped) {
        return { status: "pending", error: `process ${pid} is a zombie` };
      }
    } else {
      const name = options.name;
      alive = (await listProcs()).filter((p) => p.pid !== self && hasName(p, name) && running(p));
    }
    const pids = alive.map((p) => p.pid).sort((a, b) => a - b);
    const shown = pids.slice(0, 10).join(", ") + (pids.length > 10 ? ", ..." : "");
    if (wantStopped) {
      return alive.length === 0
        ? { status: "satisfied", detail: `${what} not running` }
        : { status: "pending", error: `${what} still running (pid ${shown})` };
    }
    return alive.length > 0
      ? { status: "satisfied", detail: `${what} running (pid ${shown})` }
      : { status: "pending", error: `${what} not running` };
  }

  return {
    check: () => look(),
  };
}
