/**
 * The helper processes a library starts inside an isolated kind's worker (a kubeconfig's
 * `exec:` credential plugin, an AWS profile's `credential_process`; docs/contract.md §2):
 * each is started in a process group of its own, and its group is reported to the main
 * thread, which ends it with SIGKILL when the worker ends: at the run's end, at the deadline,
 * on a signal, or when the worker is stopped (engine/isolate.ts). So nothing a helper started,
 * its own children included, outlives waitcmd.
 *
 * It patches the `node:child_process` module object of the worker it runs in (a worker serves
 * one kind) before the kind's libraries load, so that the functions they capture at load
 * (`child_process.spawn`, `const { exec } = require("child_process")`) are these: `spawn`
 * gets `detached` (a new session, so a group of its own), and `exec` is run through that
 * `spawn`, since the runtime's `exec` does not honour `detached`. A library bundled as ES modules
 * imports `exec` by name, which no patch reaches: such a helper stays in waitcmd's own group, and
 * the run's end ends it there (`killStrayChildren`, engine/process_group.ts).
 *
 * @module
 */

import cp from "node:child_process";
import type { ChildProcess, SpawnOptions } from "node:child_process";
import { promisify } from "node:util";

/** What the worker tells the main thread of its helpers. */
export interface HelperSink {
  /** A helper started, leading process group `pid`. */
  started(pid: number): void;
  /** The helper of group `pid` exited (its group may still have members). */
  exited(pid: number): void;
}

/** Output `exec` keeps of a helper, as node's default `maxBuffer`. */
const EXEC_MAX_BUFFER = 1024 * 1024;

type Spawn = (command: string, args?: readonly string[], options?: SpawnOptions) => ChildProcess;
type ExecCallback = (error: Error | null, stdout: string, stderr: string) => void;

let installed = false;

/** Makes every child this thread starts through `node:child_process` a reported group leader. */
export function detachHelpers(sink: HelperSink): void {
  if (installed) return;
  installed = true;
  const mod = cp as unknown as Record<string, unknown>;
  const spawn = cp.spawn as unknown as Spawn;
  const detached: Spawn = (command, args = [], options = {}) => {
    const child = spawn(command, args, { ...options, detached: true });
    const pid = child.pid;
    if (pid !== undefined) {
      sink.started(pid);
      child.once("exit", () => sink.exited(pid));
    }
    return child;
  };
  mod.spawn = detached;
  mod.exec = execVia(detached);
}

/**
 * node's `exec(command[, options], callback)` over `spawn`: `/bin/sh -c command`, output kept
 * up to `EXEC_MAX_BUFFER` per stream, the callback's error naming the exit code. With the
 * promisified form `util.promisify` gives node's (`{ stdout, stderr }`).
 */
function execVia(spawn: Spawn): unknown {
  const exec = (
    command: string,
    options?: SpawnOptions | ExecCallback,
    callback?: ExecCallback,
  ): ChildProcess => {
    const cb = typeof options === "function" ? options : callback;
    const opts = typeof options === "function" || options === undefined ? {} : options;
    const child = spawn("/bin/sh", ["-c", command], { ...opts, stdio: "pipe" });
    const out = { stdout: "", stderr: "" };
    for (const name of ["stdout", "stderr"] as const) {
      child[name]?.setEncoding("utf8");
      child[name]?.on("data", (d: string) => {
        if (out[name].length < EXEC_MAX_BUFFER) out[name] += d.slice(0, EXEC_MAX_BUFFER);
      });
    }
    let done = false;
    const finish = (error: Error | null) => {
      if (done) return;
      done = true;
      cb?.(error, out.stdout, out.stderr);
    };
    child.once("error", (e) => finish(e));
    child.once("close", (code, signal) => {
      if (code === 0) return finish(null);
      const e = new Error(`Command failed with ${signal ?? `exit code ${code}`}`);
      finish(Object.assign(e, { code, signal }));
    });
    return child;
  };
  return Object.assign(exec, {
    [promisify.custom]: (command: string, options?: SpawnOptions) =>
      new Promise((resolve, reject) => {
        exec(command, options, (error, stdout, stderr) => {
          if (error) reject(Object.assign(error, { stdout, stderr }));
          else resolve({ stdout, stderr });
        });
      }),
  });
}
