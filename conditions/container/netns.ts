/**
 * container `--listening`: which ports listen in a container's own network
 * namespace, read from the host at `/proc/<pid>/net/{tcp,tcp6,udp,udp6}` of
 * the container's main process (docs/contract.md §5 container). Nothing runs
 * inside the container, so images without a shell or any tool (distroless,
 * scratch) work; waitcmd must run on the engine's Linux host.
 *
 * @module
 */

import { describeError, errorText } from "../../engine/errors.ts";

/** A port `--listening` asks for. */
export interface PortSpec {
  readonly port: number;
  readonly protocol: "tcp" | "udp";
}

/** `8080/tcp`. */
export function portText(p: PortSpec): string {
  return `${p.port}/${p.protocol}`;
}

/**
 * `8080`, `8080/tcp` or `53/udp` (the protocol in any case; tcp when
 * omitted). Returns the error text for anything else.
 */
export function parsePortSpec(text: string): PortSpec | string {
  const m = /^(\d+)(?:\/([A-Za-z0-9]*))?$/.exec(text);
  if (!m) {
    return `expected PORT, PORT/tcp or PORT/udp (like 8080 or 53/udp), got ${JSON.stringify(text)}`;
  }
  const port = Number(m[1]);
  if (!Number.isSafeInteger(port) || port < 1 || port > 65535) {
    return `expected a port from 1 to 65535, got ${JSON.stringify(text)}`;
  }
  const protocol = (m[2] ?? "tcp").toLowerCase();
  if (protocol !== "tcp" && protocol !== "udp") {
    return `expected the protocol tcp or udp after the port, got ${JSON.stringify(text)}`;
  }
  return { port, protocol };
}

/** The kernel's TCP_LISTEN state, as `/proc/net/tcp` writes it (`0A`). */
const TCP_LISTEN = 0x0a;

/** What one socket line of `/proc/net/{tcp,udp}[6]` says: its local port and its state. */
export interface SocketLine {
  readonly port: number;
  readonly state: number;
}

/**
 * Parses one line of `/proc/net/tcp`, `tcp6`, `udp` or `udp6`:
 * `  0: 00000000:1F90 00000000:0000 0A …` (IPv6 addresses have 32 hex
 * digits). The local address is the second field, its port in hex after the
 * colon; the state is the fourth field, in hex. Undefined for the header and
 * anything else.
 */
export function parseSocketLine(line: string): SocketLine | undefined {
  const f = line.trim().split(/\s+/);
  if (f.length < 4 || !/^\d+:$/.test(f[0]!)) return undefined;
  const local = /^(?:[0-9A-Fa-f]{8}|[0-9A-Fa-f]{32}):([0-9A-Fa-f]{4})$/.exec(f[1]!);
  if (!local || !/^[0-9A-Fa-f]{2}$/.test(f[3]!)) return undefined;
  return { port: parseInt(local[1]!, 16), state: parseInt(f[3]!, 16) };
}

/**
 * Whether a socket counts as listening: a TCP socket in state LISTEN; a UDP
 * socket bound to the port (UDP has no listening state).
 */
export function counts(s: SocketLine, protocol: PortSpec["protocol"]): boolean {
  return protocol === "udp" || s.state === TCP_LISTEN;
}

/** Longest line kept; socket lines are about 150 bytes. */
const LINE_MAX = 4096;
const CHUNK = 64 * 1024;

/** A file of /proc that could not be read: its path and the file system's error. */
class ReadError extends Error {
  override name = "ReadError";
  constructor(readonly path: string, override readonly cause: unknown) {
    super(`${path}: ${errorText(cause)}`);
  }
}

/**
 * Calls `line` for each line of `path`, reading it in pieces (a namespace
 * with many sockets makes a long file); a line longer than `LINE_MAX` is
 * skipped. Stops early when `line` returns true. Throws a `ReadError`.
 */
async function eachLine(
  path: string,
  signal: AbortSignal,
  line: (text: string) => boolean,
): Promise<void> {
  let file: Deno.FsFile;
  try {
    file = await Deno.open(path);
  } catch (e) {
    throw new ReadError(path, e);
  }
  try {
    const buf = new Uint8Array(CHUNK);
    const dec = new TextDecoder();
    let rest = "";
    let skipping = false;
    for (;;) {
      signal.throwIfAborted();
      let n: number | null;
      try {
        n = await file.read(buf);
      } catch (e) {
        throw new ReadError(path, e);
      }
      if (n === null) break;
      let text = rest + dec.decode(buf.subarray(0, n), { stream: true });
      let nl: number;
      while ((nl = text.indexOf("\n")) >= 0) {
        const one = text.slice(0, nl);
        text = text.slice(nl + 1);
        if (skipping) skipping = false;
        else if (line(one)) return;
      }
      if (text.length > LINE_MAX) {
        skipping = true;
        text = "";
      }
      rest = skipping ? "" : text;
    }
    if (rest && !skipping) line(rest);
  } finally {
    file.close();
  }
}

/** The files of a protocol, under `/proc/<pid>/net/`. */
const FILES: Readonly<Record<PortSpec["protocol"], readonly string[]>> = {
  tcp: ["tcp", "tcp6"],
  udp: ["udp", "udp6"],
};

/**
 * The ports of `want` that do not listen in the network namespace of process
 * `pid`, in the order of `want`. `proc` is where procfs is mounted (tests
 * point it elsewhere). Throws a `ReadError` when a file cannot be read.
 */
export async function closedPorts(
  pid: number,
  want: readonly PortSpec[],
  signal: AbortSignal,
  proc = "/proc",
): Promise<PortSpec[]> {
  const open = new Set<string>();
  for (const protocol of ["tcp", "udp"] as const) {
    const ports = new Set(want.filter((p) => p.protocol === protocol).map((p) => p.port));
    if (ports.size === 0) continue;
    for (const name of FILES[protocol]) {
      await eachLine(`${proc}/${pid}/net/${name}`, signal, (text) => {
        const s = parseSocketLine(text);
        if (s && ports.has(s.port) && counts(s, protocol)) {
          ports.delete(s.port);
          open.add(portText({ port: s.port, protocol }));
        }
        return ports.size === 0;
      });
      if (ports.size === 0) break;
    }
  }
  return want.filter((p) => !open.has(portText(p)));
}

/**
 * Whether process `pid` is the container `id`'s: its cgroup path names the
 * container's full id (`/docker/<id>`, `docker-<id>.scope`, `libpod-<id>`),
 * as every engine on Linux names it. A pid that the engine reports from
 * another host or VM (a remote DOCKER_HOST, Docker Desktop) names another
 * process here, or none: its ports would be the wrong ones.
 */
export async function isContainerProcess(
  pid: number,
  id: string,
  signal: AbortSignal,
  proc = "/proc",
): Promise<boolean> {
  if (id === "") return false;
  let found = false;
  await eachLine(`${proc}/${pid}/cgroup`, signal, (text) => {
    found = text.includes(id);
    return found;
  });
  return found;
}

/** What `portsOf` needs of a container: inspect's name, full id and main process. */
export interface ContainerProcess {
  readonly name: string;
  readonly id: string;
  readonly pid: number;
}

/**
 * The ports of `want` that do not listen in running container `c`. Throws
 * an Error that says why they cannot be read, and what `--listening` needs:
 * waitcmd on the engine's Linux host, with read access to its /proc.
 * `engine` is the engine's address, for that text.
 */
export async function portsOf(
  c: ContainerProcess,
  want: readonly PortSpec[],
  engine: string,
  signal: AbortSignal,
  proc = "/proc",
): Promise<PortSpec[]> {
  const cannot = `cannot read the ports of container ${c.name}`;
  const needs = `--listening needs waitcmd on the engine's host, with access to its /proc`;
  if (Deno.build.os !== "linux") {
    throw new Error(`${cannot}: ${needs} (this is ${Deno.build.os}, not Linux)`);
  }
  const elsewhere = new Error(
    `${cannot}: its process ${c.pid} is not on this host; ${needs} (engine: ${engine})`,
  );
  try {
    if (!(await isContainerProcess(c.pid, c.id, signal, proc))) throw elsewhere;
    return await closedPorts(c.pid, want, signal, proc);
  } catch (e) {
    if (!(e instanceof ReadError)) throw e;
    if (e.cause instanceof Deno.errors.NotFound) throw elsewhere;
    if (e.cause instanceof Deno.errors.PermissionDenied) {
      throw new Error(`${cannot}: ${e.path}: permission denied; ${needs}`);
    }
    // Deno's text names the file again: `…: open '/proc/…'`.
    const why = describeError(errorText(e.cause).replace(/: \w+ '[^']*'$/, ""));
    throw new Error(`${cannot}: ${e.path}: ${why}`);
  }
}
