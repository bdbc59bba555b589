/**
 * Hostile servers and the measurements of a run against them, for the
 * garbage-server tests (tests/faults/garbage_test.ts, garbage_matrix.ts;
 * docs/reliability.md): a TCP server per protocol that answers every
 * connection with one behaviour (close at once, random bytes, an endless
 * stream, silence, a huge length prefix, zero-length messages, an echo of
 * what the client says: its credentials included, a huge message of which
 * only just under the driver kinds' read cap ever comes), a UDP one
 * likewise, and a CLI run measured from the outside (from its `start` event
 * to its exit, its peak RSS, what it printed, what it left behind).
 *
 * @module
 */

import { SESSION_READ_MAX } from "../../conditions/_common/datastore.ts";
import { WAITCMD } from "../e2e/_cli.ts";
import { holdConnections } from "../services/_util.ts";

/** How a garbage server answers each connection. */
export type Behaviour =
  | "close"
  | "random"
  | "stream"
  | "silence"
  | "huge"
  | "zero"
  | "echo"
  | "undercap";

/** Every behaviour, in the matrix's order. */
export const BEHAVIOURS: readonly Behaviour[] = [
  "close",
  "random",
  "stream",
  "silence",
  "huge",
  "zero",
  "echo",
  "undercap",
];

/**
 * What the "undercap" behaviour sends on a connection before it falls silent, the
 * connection held open: the huge message's header and then zeros, just under the
 * per-session read cap of the driver kinds' sockets (`socketReadMax`, engine/socket_cap.ts),
 * so that the cap never ends the session and the message never completes.
 */
export const UNDER_CAP_BYTES = SESSION_READ_MAX - 4096;

/** A protocol's framing, as far as the huge and zero-length cases need it. */
export interface Framing {
  /** Said first on every connection (a greeting that gets the client to its framing). */
  readonly greeting?: (conn: Deno.Conn) => Promise<void>;
  /** A header announcing a huge message; an endless stream of zeros follows. */
  readonly huge: Uint8Array;
  /** One zero-length message; it is sent over and over. */
  readonly zero: Uint8Array;
  /** Whether the zero-length message is sent once (then silence) rather than without end. */
  readonly zeroOnce?: boolean;
  /** The zero-length messages' rate, bytes per second (none: as fast as the client reads). */
  readonly zeroRate?: number;
}

const enc = new TextEncoder();

/** `n` as 4 bytes, big-endian. */
export function be32(n: number): Uint8Array {
  const b = new Uint8Array(4);
  new DataView(b.buffer).setUint32(0, n);
  return b;
}

/** `n` as 4 bytes, little-endian. */
export function le32(n: number): Uint8Array {
  const b = new Uint8Array(4);
  new DataView(b.buffer).setUint32(0, n, true);
  return b;
}

/** The bytes of `parts` one after the other (text as UTF-8). */
export function bytes(...parts: (string | Uint8Array | number[])[]): Uint8Array {
  const arrays = parts.map((p) =>
    typeof p === "string" ? enc.encode(p) : p instanceof Uint8Array ? p : new Uint8Array(p)
  );
  const out = new Uint8Array(arrays.reduce((n, a) => n + a.length, 0));
  let at = 0;
  for (const a of arrays) {
    out.set(a, at);
    at += a.length;
  }
  return out;
}

/** `unit` repeated to about 64 KiB. */
function repeated(unit: Uint8Array): Uint8Array {
  const times = Math.max(1, Math.floor(65536 / unit.length));
  const out = new Uint8Array(unit.length * times);
  for (let i = 0; i < times; i++) out.set(unit, i * unit.length);
  return out;
}

/** Writes all of `data` (Deno's write may take part of it). */
async function writeAll(conn: Deno.Conn, data: Uint8Array): Promise<void> {
  for (let off = 0; off < data.length;) off += await conn.write(data.subarray(off));
}

/** Sends back everything the client says, until it ends. */
async function echo(conn: Deno.Conn): Promise<void> {
  const buf = new Uint8Array(65536);
  for (let n = await conn.read(buf); n !== null; n = await conn.read(buf)) {
    await writeAll(conn, buf.subarray(0, n));
  }
}

/** Holds the connection open, reading (and dropping) what the client says, until it ends. */
async function hold(conn: Deno.Conn): Promise<void> {
  const buf = new Uint8Array(4096);
  while ((await conn.read(buf)) !== null) {
    // dropped
  }
}

/** What the HTTP-speaking kinds get (http, objstore, orch, container). */
export const HTTP_FRAMING: Framing = {
  huge: bytes(
    "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n",
    "Content-Length: ",
    String(2 ** 40),
    "\r\n\r\n",
  ),
  zero: bytes("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"),
};

/** The upgrade of a WebSocket client, answered as a server would. */
export async function websocketUpgrade(conn: Deno.Conn): Promise<void> {
  const buf = new Uint8Array(8192);
  let request = "";
  while (!request.includes("\r\n\r\n")) {
    const n = await conn.read(buf);
    if (n === null) return;
    request += new TextDecoder().decode(buf.subarray(0, n));
  }
  const key = /Sec-WebSocket-Key: *(\S+)/i.exec(request)?.[1] ?? "";
  const digest = await crypto.subtle.digest(
    "SHA-1",
    enc.encode(key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"),
  );
  const accept = btoa(String.fromCharCode(...new Uint8Array(digest)));
  await writeAll(
    conn,
    bytes(
      "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n",
      `Sec-WebSocket-Accept: ${accept}\r\n\r\n`,
    ),
  );
}

/** A TCP garbage server: every connection gets `behaviour` in `framing`'s terms. */
export interface GarbageServer {
  readonly port: number;
  close(): void;
}

/** Starts a TCP garbage server on a free loopback port. */
export function garbageServer(behaviour: Behaviour, framing: Framing): GarbageServer {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const serve = async (conn: Deno.Conn) => {
    if (behaviour === "close") return conn.close();
    if (behaviour === "silence") return await hold(conn);
    if (framing.greeting && behaviour !== "random" && behaviour !== "stream") {
      await framing.greeting(conn);
    }
    if (behaviour === "echo") return await echo(conn);
    const reading = hold(conn).catch(() => {});
    switch (behaviour) {
      case "random":
        await writeAll(conn, crypto.getRandomValues(new Uint8Array(4096)));
        return await reading;
      case "stream": {
        const chunk = new Uint8Array(65536);
        for (;;) await writeAll(conn, crypto.getRandomValues(chunk));
      }
      case "huge": {
        await writeAll(conn, framing.huge);
        const zeros = new Uint8Array(65536);
        for (;;) await writeAll(conn, zeros);
      }
      case "undercap": {
        await writeAll(conn, framing.huge);
        const zeros = new Uint8Array(65536);
        for (let left = UNDER_CAP_BYTES - framing.huge.length; left > 0; left -= zeros.length) {
          await writeAll(conn, zeros.subarray(0, Math.min(left, zeros.length)));
        }
        return await reading;
      }
      case "zero": {
        if (framing.zeroOnce) {
          await writeAll(conn, framing.zero);
          return await reading;
        }
        if (framing.zeroRate !== undefined) {
          // A trickle: a tenth of the rate every 100 ms.
          const unit = framing.zero;
          const tenth = repeated(unit).subarray(
            0,
            Math.max(unit.length, Math.floor(framing.zeroRate / 10 / unit.length) * unit.length),
          );
          for (;;) {
            await writeAll(conn, tenth);
            await new Promise((r) => setTimeout(r, 100));
          }
        }
        const many = repeated(framing.zero);
        for (;;) await writeAll(conn, many);
      }
    }
  };
  const held = holdConnections(listener, (conn) => {
    serve(conn).catch(() => {}).finally(() => {
      try {
        conn.close();
      } catch {
        // closed
      }
    });
  });
  return { port: (listener.addr as Deno.NetAddr).port, close: () => void held.close() };
}

/**
 * A UDP garbage server, the datagram counterparts of the behaviours: close is a port
 * nobody binds (refused), random a datagram of random bytes per request, stream a burst of
 * 64 per request, silence no answer, huge a datagram of the largest size, zero an empty one,
 * undercap one just under the largest size.
 */
export async function udpGarbageServer(behaviour: Behaviour): Promise<GarbageServer> {
  const { createSocket } = await import("node:dgram");
  const socket = createSocket("udp4");
  await new Promise<void>((resolve) => socket.bind(0, "127.0.0.1", resolve));
  const port = socket.address().port;
  if (behaviour === "close") {
    // Bound and closed again: the port is free, nothing answers, the kernel refuses.
    await new Promise<void>((resolve) => socket.close(() => resolve()));
    return { port, close() {} };
  }
  socket.on("message", (msg, from) => {
    const send = (data: Uint8Array) => socket.send(data, from.port, from.address, () => {});
    switch (behaviour) {
      case "random":
        return send(crypto.getRandomValues(new Uint8Array(512)));
      case "stream":
        for (let i = 0; i < 64; i++) send(crypto.getRandomValues(new Uint8Array(1024)));
        return;
      case "huge":
        return send(new Uint8Array(65507));
      case "undercap":
        return send(new Uint8Array(65507 - 7));
      case "zero":
        return send(new Uint8Array(0));
      case "echo":
        return send(msg);
      case "silence":
        return;
    }
  });
  return {
    port,
    close() {
      try {
        socket.close();
      } catch {
        // closed
      }
    },
  };
}

/** What one CLI run against a hostile server did, measured from the outside. */
export interface FaultRun {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
  /** From the `start` event (the run's clock starts) to the exit, in ms; NaN without one. */
  readonly startToExitMs: number;
  /** From the signal (when one was sent) to the exit, in ms. */
  readonly signalToExitMs: number;
  /** The process's peak RSS (VmHWM) as last seen before it exited, in bytes. */
  readonly peakRss: number;
  /** Processes that carried the run's mark in their environment and outlived it. */
  readonly leftovers: readonly number[];
}

/** Options of one measured run. */
export interface FaultRunOptions {
  readonly env?: Record<string, string>;
  /** Sends this signal so long after the `start` event. */
  readonly signal?: { readonly name: Deno.Signal; readonly afterMs: number };
  /** Kills a run that has not exited so long after it was spawned (default 30 s). */
  readonly killAfterMs?: number;
}

/** VmHWM of process `pid`, in bytes (0 when it cannot be read). */
function peakRssOf(pid: number): number {
  try {
    const m = /VmHWM:\s+(\d+) kB/.exec(Deno.readTextFileSync(`/proc/${pid}/status`));
    return m ? Number(m[1]) * 1024 : 0;
  } catch {
    return 0;
  }
}

/** Processes whose environment holds `mark`. */
function marked(mark: string): number[] {
  const out: number[] = [];
  for (const e of Deno.readDirSync("/proc")) {
    if (!/^\d+$/.test(e.name)) continue;
    try {
      if (Deno.readTextFileSync(`/proc/${e.name}/environ`).includes(mark)) out.push(Number(e.name));
    } catch {
      // gone, or not ours to read
    }
  }
  return out;
}

/**
 * Runs `waitcmd -o jsonl ...args` and measures it from the outside: when its `start`
 * event came out, when it exited, its peak RSS (sampled every 20 ms), and what it left.
 */
export async function faultRun(args: string[], opts: FaultRunOptions = {}): Promise<FaultRun> {
  const mark = `WAITCMD_FAULT_MARK=${crypto.randomUUID()}`;
  const [markName, markValue] = mark.split("=") as [string, string];
  const child = new Deno.Command(WAITCMD, {
    args: ["-o", "jsonl", ...args],
    env: { NO_COLOR: "1", ...opts.env, [markName]: markValue },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  let startAt = NaN;
  let signalAt = NaN;
  let peak = 0;
  const sampling = setInterval(() => {
    peak = Math.max(peak, peakRssOf(child.pid));
  }, 20);
  const read = async (stream: ReadableStream<Uint8Array>, onLine?: (l: string) => void) => {
    let all = "";
    let rest = "";
    for await (const text of stream.pipeThrough(new TextDecoderStream())) {
      all += text;
      rest += text;
      const lines = rest.split("\n");
      rest = lines.pop()!;
      for (const l of lines) onLine?.(l);
    }
    return all;
  };
  const stdout = read(child.stdout, (line) => {
    if (Number.isNaN(startAt) && line.includes('"event":"start"')) {
      startAt = performance.now();
      if (opts.signal) {
        const { name, afterMs } = opts.signal;
        setTimeout(() => {
          signalAt = performance.now();
          try {
            child.kill(name);
          } catch {
            // exited already
          }
        }, afterMs);
      }
    }
  });
  const stderr = read(child.stderr);
  // A run that does not end by itself is what the tests catch; it must not hang them.
  const killer = setTimeout(() => {
    try {
      child.kill("SIGKILL");
    } catch {
      // exited
    }
  }, opts.killAfterMs ?? 30_000);
  const status = await child.status;
  clearTimeout(killer);
  const exitAt = performance.now();
  clearInterval(sampling);
  const [out, err] = await Promise.all([stdout, stderr]);
  await new Promise((r) => setTimeout(r, 100));
  return {
    code: status.code,
    stdout: out,
    stderr: err,
    startToExitMs: exitAt - startAt,
    signalToExitMs: exitAt - signalAt,
    peakRss: peak,
    leftovers: marked(mark),
  };
}

/** Signs of a stack trace or a crash in a run's output. */
const TRACE = /^\s+at |C stack trace|Fatal JavaScript|error: Uncaught|internal error|panicked/m;

/** Whether a run's output shows a stack trace or a crash. */
export function showsTrace(r: FaultRun): boolean {
  return TRACE.test(r.stdout) || TRACE.test(r.stderr);
}

/** The run's last error of its first condition, from the jsonl `end` event. */
export function lastError(r: FaultRun): string {
  const end = r.stdout.split("\n").findLast((l) => l.includes('"event":"end"'));
  if (end === undefined) return "";
  try {
    return JSON.parse(end).conditions?.[0]?.last_error ?? "";
  } catch {
    return "";
  }
}
