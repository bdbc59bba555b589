/**
 * ports: every port (or, with --any, one port) of a range accepts TCP
 * connections. All ports are probed concurrently (probe.ts).
 *
 * @module
 */

import { defineKind } from "../../engine/types.ts";

/** What a ports condition needs. */
export interface PortsOptions {
  /** Host name or IP address (brackets removed); a name is tried on every address. */
  readonly host: string;
  /** The ports to probe, sorted, unique. */
  readonly ports: readonly number[];
  /** --any: one open port suffices. */
  readonly any: boolean;
}

/** Most ports one condition may scan. */
const MAX_PORTS = 65535;

/**
 * Parses `8000-8010,9000` into a sorted list of unique ports. Throws an
 * `Error` whose message is the usage problem.
 */
export function parsePortList(text: string): number[] {
  const ports = new Set<number>();
  for (const part of text.split(",")) {
    const m = /^\s*(\d+)\s*(?:-\s*(\d+)\s*)?$/.exec(part);
    if (!m) {
      throw new Error(
        `expected a range like 8000-8010 or a list like 80,443, got ${JSON.stringify(text)}`,
      );
    }
    const lo = Number(m[1]);
    const hi = m[2] === undefined ? lo : Number(m[2]);
    if (lo < 1 || hi > 65535 || lo > 65535) {
      throw new Error(`ports must be from 1 to 65535, got ${JSON.stringify(part.trim())}`);
    }
    if (lo > hi) throw new Error(`the range ${JSON.stringify(part.trim())} runs backwards`);
    for (let p = lo; p <= hi; p++) ports.add(p);
  }
  if (ports.size > MAX_PORTS) throw new Error(`too many ports (${ports.size})`);
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
export const ports = defineKind<PortsOptions>({
  name: "ports",
  aliases: [],
  summary: "a range of TCP ports on a host accepts connections",
  description:
    "Probes every port of --range concurrently. With --all (the default) every port must accept a connection; with --any one open port is enough. A host name is tried on every address it resolves to, IPv4 and IPv6: a port is open when one of them accepts.",
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
    let list: number[] = [];
    try {
      list = parsePortList(range!);
    } catch (e) {
      input.fail("range", (e as Error).message);
    }
    if (input.bool("any") && input.bool("all")) input.fail("any", "cannot be combined with --all");
    return { target: input.target!, options: { host, ports: list, any: input.bool("any") } };
  },
  load: () => import("./probe.ts").then((m) => m.create),
});
