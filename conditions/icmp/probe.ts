/**
 * icmp's probe: the system `ping` (iputils), one run per attempt, its
 * replies counted (docs/contract.md §5 icmp). `ping` is found on PATH at the
 * first attempt; without it the run ends with exit 3.
 *
 * @module
 */

import type { Probe, ProbeEnv, ProbeResult } from "../../engine/types.ts";
import type { IcmpOptions } from "./mod.ts";

/** Seconds between echo requests: the shortest iputils allows without privileges. */
const INTERVAL_S = 0.2;

/** Makes the probe of one icmp condition. */
export function create(o: IcmpOptions, env: ProbeEnv): Probe {
  let ping: Promise<string | undefined> | undefined;
  return {
    check: async ({ signal }): Promise<ProbeResult> => {
      ping ??= findOnPath("ping", env.env.PATH ?? "");
      const path = await ping;
      if (path === undefined) {
        return {
          status: "fatal",
          error:
            "the ping command was not found on PATH (install iputils-ping, or put ping on PATH)",
        };
      }
      return await runPing(path, o, env.env, signal);
    },
  };
}

/** The first executable file named `name` in the `:`-separated `path`, or undefined. */
export async function findOnPath(name: string, path: string): Promise<string | undefined> {
  for (const dir of path.split(":").filter(Boolean)) {
    const full = `${dir.replace(/\/$/, "")}/${name}`;
    try {
      const info = await Deno.stat(full);
      if (info.isFile && ((info.mode ?? 0o111) & 0o111) !== 0) return full;
    } catch {
      // not here
    }
  }
  return undefined;
}

/** One ping run: `count` replies within its deadline, else pending with what was seen. */
async function runPing(
  path: string,
  o: IcmpOptions,
  env: Readonly<Record<string, string>>,
  signal: AbortSignal,
): Promise<ProbeResult> {
  const deadline = Math.ceil(o.count * INTERVAL_S + 1);
  const child = new Deno.Command(path, {
    args: ["-n", "-c", String(o.count), "-i", String(INTERVAL_S), "-w", String(deadline), o.host],
    env: { ...env, LC_ALL: "C", LANG: "C" },
    clearEnv: true,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  // The child dies with the attempt: an abort kills it at once.
  const kill = () => {
    try {
      child.kill("SIGKILL");
    } catch {
      // already gone
    }
  };
  signal.addEventListener("abort", kill, { once: true });
  try {
    const out = await child.output();
    const stdout = new TextDecoder().decode(out.stdout);
    const stderr = new TextDecoder().decode(out.stderr);
    return judgePing(stdout, stderr, o);
  } finally {
    signal.removeEventListener("abort", kill);
  }
}

/** The result of one ping run from its output (iputils' format, C locale). */
export function judgePing(stdout: string, stderr: string, o: IcmpOptions): ProbeResult {
  const replies = stdout.split("\n").filter((l) => / bytes from /.test(l)).length;
  const summary = /(\d+) packets transmitted, (\d+) (?:packets )?received/.exec(stdout);
  const sent = summary ? Number(summary[1]) : undefined;
  const received = summary ? Number(summary[2]) : replies;
  const from = /^PING \S+ \(([^)]+)\)/m.exec(stdout)?.[1] ?? o.host;
  const rtt = /= [\d.]+\/([\d.]+)\/[\d.]+\/[\d.]+ ms/.exec(stdout)?.[1];
  if (received >= o.count) {
    const avg = rtt === undefined ? "" : `, rtt avg ${rtt} ms`;
    const n = o.count === 1 ? "1 echo reply" : `${received} echo replies`;
    return { status: "satisfied", detail: `${n} from ${from}${avg}` };
  }
  const problem = pingProblem(stderr, stdout, o.host);
  if (problem !== undefined) return { status: "pending", error: problem };
  const of = sent === undefined ? "" : ` (${sent} sent)`;
  return {
    status: "pending",
    error: received === 0
      ? `no echo reply from ${from}${of}`
      : `${received} of ${o.count} echo replies from ${from}${of}`,
  };
}

/** ping's own complaint as a short reason, when it made one. */
function pingProblem(stderr: string, stdout: string, host: string): string | undefined {
  const text = stderr.trim().split("\n").filter(Boolean).at(-1)?.replace(/^(\S*\/)?ping: /, "");
  const unreachable = /From \S+ .*(Destination \w+ Unreachable|Time to live exceeded)/i.exec(
    stdout,
  );
  if (unreachable) return unreachable[1]!.toLowerCase();
  if (text === undefined) return undefined;
  if (/Name or service not known|Temporary failure in name resolution|No address/i.test(text)) {
    return `cannot resolve host ${host}`;
  }
  const t = text.replace(new RegExp(`^${host.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}: `), "")
    .replace(/^connect: /, "");
  return t.charAt(0).toLowerCase() + t.slice(1);
}
