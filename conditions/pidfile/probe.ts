/**
 * pidfile's probe: reads the pid file and looks at the process it names on
 * each attempt; changes to the file wake it (docs/contract.md §5 pidfile,
 * §10). A process's death has no event: it is seen at the next interval.
 *
 * @module
 */

import type { Probe, ProbeEnv, ProbeResult } from "../../engine/types.ts";
import { watchPath } from "../_common/watch.ts";
import type { PidfileOptions } from "./mod.ts";
import { hasName, type Proc, readProc } from "../_common/procs.ts";

/** Bytes of the pid file read: a pid file is one short line (PostgreSQL's has a few more). */
const PID_FILE_MAX = 4096;
/** The highest pid Linux hands out (PID_MAX_LIMIT). */
const PID_MAX = 4_194_304;
/**
 * A process that started more than this after the pid file's mtime cannot be
 * the one the file was written for: the pid was reused. The slack covers
 * file systems with coarse timestamps.
 */
export const REUSE_SLACK_MS = 2000;

/** The pid a pid file's text names, or why it names none (yet). */
export function parsePidText(text: string): { pid: number } | { error: string } {
  if (text.trim() === "") return { error: "pid file is empty" };
  const first = (text.split("\n")[0] ?? "").trim();
  if (!/^\d+$/.test(first)) {
    return { error: `pid file holds no pid: ${JSON.stringify(first.slice(0, 40))}` };
  }
  const pid = Number(first);
  if (pid < 1 || pid > PID_MAX) return { error: `pid file holds no valid pid: ${first}` };
  return { pid };
}

/** Whether the process found for a pid is the pid file's process, alive; and why. */
export function judgeProcess(
  pid: number,
  proc: Proc | undefined,
  fileMtime: number | undefined,
  name: string | undefined,
): { alive: boolean; text: string } {
  if (proc === undefined) return { alive: false, text: `process ${pid} not running` };
  const comm = proc.names[0] ?? "?";
  if (proc.kernelThread) return { alive: false, text: `pid ${pid} is a kernel thread (${comm})` };
  if (proc.state === "Z" || proc.state === "X") {
    return { alive: false, text: `process ${pid} is a zombie (${comm})` };
  }
  if (
    proc.startedAt !== undefined && fileMtime !== undefined &&
    proc.startedAt > fileMtime + REUSE_SLACK_MS
  ) {
    return {
      alive: false,
      text: `pid ${pid} was reused: ${comm} started after the pid file was written`,
    };
  }
  if (name !== undefined && !hasName(proc, name)) {
    return { alive: false, text: `process ${pid} is ${comm}, not ${name}` };
  }
  // With --name, the name that matched: comm lags the exe for a moment around
  // exec (a daemon's pid file is written before it execs its program).
  return { alive: true, text: `process ${pid} running (${name ?? comm})` };
}

/** The pid file's text (its first 4 KiB) and mtime; undefined when it does not exist. */
async function readPidFile(path: string): Promise<{ text: string; mtime?: number } | undefined> {
  let file: Deno.FsFile;
  try {
    file = await Deno.open(path, { read: true });
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return undefined;
    throw e;
  }
  try {
    const info = await file.stat();
    if (info.isDirectory) throw new Error("is a directory, not a pid file");
    const buf = new Uint8Array(PID_FILE_MAX);
    let n = 0;
    while (n < buf.length) {
      const got = await file.read(buf.subarray(n));
      if (got === null) break;
      n += got;
    }
    return { text: new TextDecoder().decode(buf.subarray(0, n)), mtime: info.mtime?.getTime() };
  } finally {
    file.close();
  }
}

/** Makes the probe of one pidfile condition. */
export function create(options: PidfileOptions, env: ProbeEnv): Probe {
  const { path, want, name } = options;
  return {
    check: async (): Promise<ProbeResult> => {
      const file = await readPidFile(path);
      if (file === undefined) {
        return want === "stopped"
          ? { status: "satisfied", detail: "pid file does not exist" }
          : { status: "pending", error: "does not exist" };
      }
      const read = parsePidText(file.text);
      if ("error" in read) return { status: "pending", error: read.error };
      const v = judgeProcess(read.pid, await readProc(read.pid), file.mtime, name);
      if (want === "running") {
        return v.alive
          ? { status: "satisfied", detail: v.text }
          : { status: "pending", error: v.text };
      }
      return v.alive
        ? { status: "pending", error: v.text.replace(" running (", " still running (") }
        : { status: "satisfied", detail: v.text };
    },
    watch: (ctx) => watchPath(path, ctx, { clock: env.clock }),
  };
}
