/**
 * ports: every port (or, with --any, one port) of a range accepts TCP
 * connections. All ports are probed concurrently.
 *
 * @module
 */

import type { ConditionKind } from "../engine/types.ts";
import { tryConnect } from "./_net.ts";

/** Most connection attempts under way at once, to stay under fd limits. */
const CONCURRENCY = 256;
/** Most ports one condition may scan. */
const MAX_PORTS = 65535;

/** Parses `8000-8010,9000` into a sorted list of unique ports, or returns an error text. */
export function parsePortList(text: string): number[] | string {
  const ports = new Set<number>();
  for (const part of text.split(",")) {
    const m = /^\s*(\d+)\s*(?:-\s*(\d+)\s*)?$/.exec(part);
    if (!m) {
      return `expected a range like 8000-8010 or a list like 80,443, got ${JSON.stringify(text)}`;
    }
    const lo = Number(m[1]);
    const hi = m[2] === undefined ? lo : Number(m[2]);
    if (lo < 1 || hi > 65535 || lo > 65535) {
      return `ports must be from 1 to 65535, got ${JSON.stringify(part.trim())}`;
    }
    if (lo > hi) return `the range ${JSON.stringify(part.trim())} runs backwards`;
    for (let p = lo; p <= hi; p++) ports.add(p);
  }
  if (ports.size > MAX_PORTS) return `too many ports (${ports.size})`;
  return [...ports].sort((a, b) => a - b);
}

/** Compresses sorted ports into `8000-8003, 8007`. */
export function formatPorts(ports: readonly number[]): string {
  const out: string[] = [];
  for (let i = 0; i < ports.length;) {
    let j = i;
    while (j + 1 < ports.length && ports[j + 1] === ports[j]! + 1) j++;
    out.push(i === j ? `${ports[i]}` : `${ports[i]}-${ports[j]}`);
    i = j + 1;
  }
  return out.join(", ");
}

/** The ports kind. */
export const ports: ConditionKind = {
  name: "ports",
  aliases: [],
  summary: "a range of TCP ports on a host accepts connections",
  description:
    "Probes every port of --range concurrently. With --all (the default) every port must accept a connection; with --any one open port is enough.",
  target: { shape: "required", placeholder: "HOST", description: "host name or IP address" },
  flags: [
    {
      name: "range",
      type: "string",
      placeholder: "LOW-HIGH",
      description: "ports to probe: a range 8000-8010, a list 80,443 or both (required)",
    },
    { name: "any", type: "boolean", description: "one open port suffices" },
    { name: "all", type: "boolean", description: "every port must be open (the default)" },
  ],
  examples: [
    {
      args: "ports localhost --range 8000-8003",
      description: "wait until four local ports all listen",
    },
    {
      args: "ports 10.0.0.5 --range 80,443,8080-8090 --any",
      description: "wait until any of these is open",
    },
  ],
  parse(input) {
    const host = (input.target ?? "").replace(/^\[(.*)\]$/, "$1");
    if (host === "" || /[\s/]/.test(host)) {
      input.fail(undefined, `expected a host, got ${JSON.stringify(input.target)}`);
    }
    const range = input.string("range");
    if (range === undefined) {
      input.fail("range", "is required: the ports to probe, e.g. --range 8000-8010");
    }
    const list = parsePortList(range!);
    if (typeof list === "string") input.fail("range", list);
    if (input.bool("any") && input.bool("all")) input.fail("any", "cannot be combined with --all");
    const wantAny = input.bool("any");
    const portList = list as number[];
    const described = formatPorts(portList);
    return {
      target: input.target!,
      async check({ signal }) {
        const open: number[] = [];
        const errors = new Map<string, number>();
        let next = 0;
        const worker = async () => {
          while (next < portList.length && !signal.aborted) {
            const port = portList[next++]!;
            const err = await tryConnect({ hostname: host, port }, signal);
            if (err === undefined) open.push(port);
            else errors.set(err, (errors.get(err) ?? 0) + 1);
          }
        };
        await Promise.all(Array.from({ length: Math.min(CONCURRENCY, portList.length) }, worker));
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
  },
};
