/**
 * The garbage-server matrix (docs/reliability.md): every kind that talks to
 * a server over the network × every way a hostile server answers (close at
 * once, random bytes, an endless stream, silence, a huge length prefix, a
 * zero-length message, each in the protocol's own framing, an echo of the
 * request with its credentials, a huge message of which just under the
 * driver kinds' per-session read cap comes and then nothing, the connection
 * held open: the cap never ends it, only the deadline does), through the
 * CLI with `-t 1s`. Run by `deno task faults` (and by scripts/test): about
 * 140 runs, three at a time. The large-manifest case (10,000 objects against
 * a real API server) is tests/faults/large_manifest_test.ts: it needs the
 * real server, not a garbage one.
 *
 * Each case must end within the deadline plus 100 ms, measured from the
 * outside from the run's `start` event to its exit, with CI_MARGIN_MS more
 * for the shared, loaded machines CI runs on: what this catches is an
 * overrun of seconds. And: the peak RSS under the memory cap (512 MiB), no
 * stack trace, stderr empty (no library's console output), exit 1 (a
 * server's bytes are never fatal), no process left behind, and the row's
 * credential (which the echo sends back) in no output. The kinds that
 * only connect (tcp, unix, ports) read nothing a server sends and are left
 * out; icmp has no server.
 *
 * Prints a table of each kind's worst overrun and peak RSS (the figures of
 * docs/reliability.md).
 */

import { assertEquals } from "../_assert.ts";
import {
  be32,
  type Behaviour,
  BEHAVIOURS,
  bytes,
  type FaultRun,
  faultRun,
  type Framing,
  type GarbageServer,
  garbageServer,
  HTTP_FRAMING,
  lastError,
  le32,
  showsTrace,
  udpGarbageServer,
  websocketUpgrade,
} from "./_garbage.ts";

/** What the shared machine may add to a measured exit, beyond the promised 100 ms. */
const CI_MARGIN_MS = 400;
/** The memory cap of every run (the default). */
const CAP = 512 * 2 ** 20;
/** Each run's deadline. */
const DEADLINE_MS = 1000;

const enc = new TextEncoder();

/** Writes a greeting line to the client. */
const greet = (line: string) => async (conn: Deno.Conn) => {
  await conn.write(enc.encode(line));
};

/** One kind of the matrix: how its server speaks, and a condition pointed at it. */
interface Row {
  readonly kind: string;
  /** The TCP framing of the huge and zero cases; none: a UDP kind. */
  readonly framing?: Framing;
  args(port: number, dir: string): string[];
  env?(port: number, dir: string): Record<string, string>;
  /** A credential the condition sends: shown in no output, whatever the server answers. */
  readonly secret?: string;
  /** Writes the files the condition reads (orch's kubeconfig). */
  setup?(port: number, dir: string): Promise<void>;
}

const PIN = "SHA256:" + "a".repeat(43);
/** The credential of the rows that send one. */
const SECRET = "garbage-secret-Zk3w";

const ROWS: readonly Row[] = [
  {
    kind: "http",
    framing: HTTP_FRAMING,
    args: (port) => ["http", `http://127.0.0.1:${port}/`, "--contains", "waitcmd-never"],
  },
  {
    kind: "tls",
    framing: { huge: bytes([0x16, 3, 3, 0xff, 0xff]), zero: bytes([0x16, 3, 3, 0, 0]) },
    args: (port) => ["tls", `127.0.0.1:${port}`],
  },
  {
    kind: "ssh",
    framing: {
      greeting: greet("SSH-2.0-OpenSSH_9.2\r\n"),
      huge: be32(0xfffffff0),
      zero: be32(0),
    },
    args: (port) => ["ssh", `127.0.0.1:${port}`, "--host-key-sha256", PIN],
  },
  {
    kind: "objstore",
    secret: SECRET,
    framing: HTTP_FRAMING,
    args: (port) => [
      "objstore",
      "objstore://bucket/key",
      "--endpoint-url",
      `http://127.0.0.1:${port}`,
      "--access-key-id",
      "AKID",
      "--secret-access-key",
      SECRET,
      "--contains",
      "waitcmd-never",
    ],
  },
  {
    kind: "orch",
    secret: SECRET,
    framing: HTTP_FRAMING,
    args: (port, dir) => ["orch", "pod/x", "--kubeconfig", `${dir}/kubeconfig-${port}`],
    setup: (port, dir) =>
      Deno.writeTextFile(
        `${dir}/kubeconfig-${port}`,
        [
          "apiVersion: v1",
          "kind: Config",
          `clusters: [{name: c, cluster: {server: 'http://127.0.0.1:${port}'}}]`,
          `users: [{name: u, user: {token: ${SECRET}}}]`,
          "contexts: [{name: x, context: {cluster: c, user: u}}]",
          "current-context: x",
          "",
        ].join("\n"),
      ),
  },
  {
    kind: "container",
    framing: HTTP_FRAMING,
    args: () => ["container", "web"],
    env: (port) => ({ DOCKER_HOST: `tcp://127.0.0.1:${port}` }),
  },
  {
    kind: "grpc",
    framing: {
      // HTTP/2: a DATA frame of 16 MiB - 1 on stream 1; empty SETTINGS frames.
      huge: bytes([0xff, 0xff, 0xff, 0, 0, 0, 0, 0, 1]),
      zero: bytes([0, 0, 0, 4, 0, 0, 0, 0, 0]),
    },
    args: (port) => ["grpc", `127.0.0.1:${port}`],
  },
  {
    kind: "websocket",
    framing: {
      greeting: websocketUpgrade,
      // A text frame announcing 2^63 - 1 bytes; empty text frames.
      huge: bytes([0x81, 127, 0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff]),
      zero: bytes([0x81, 0]),
    },
    args: (port) => ["websocket", `ws://127.0.0.1:${port}/`, "--matches", "waitcmd-never"],
  },
  {
    kind: "postgres",
    secret: SECRET,
    framing: { huge: bytes("R", be32(2 ** 30 + 4)), zero: bytes("N", be32(4)) },
    args: (port) => ["postgres", `postgres://app:${SECRET}@127.0.0.1:${port}/app?sslmode=disable`],
  },
  {
    kind: "mysql",
    secret: SECRET,
    framing: { huge: bytes([0xff, 0xff, 0xff, 0]), zero: new Uint8Array(4) },
    args: (port) => ["mysql", `mysql://app:${SECRET}@127.0.0.1:${port}/app`],
  },
  {
    kind: "redis",
    secret: SECRET,
    framing: { huge: bytes("$9000000000\r\n"), zero: bytes("$0\r\n\r\n") },
    args: (port) => ["redis", `redis://:${SECRET}@127.0.0.1:${port}/0`],
  },
  {
    kind: "mongodb",
    secret: SECRET,
    framing: { huge: le32(0x7ffffff0), zero: new Uint8Array(16) },
    args: (port) => ["mongodb", `mongodb://app:${SECRET}@127.0.0.1:${port}/app`],
  },
  {
    kind: "rabbitmq",
    secret: SECRET,
    framing: {
      huge: bytes([1, 0, 0, 0xff, 0xff, 0xff, 0xff]),
      zero: bytes([1, 0, 0, 0, 0, 0, 0, 0xce]),
    },
    args: (port) => ["rabbitmq", `amqp://app:${SECRET}@127.0.0.1:${port}/`],
  },
  {
    kind: "kafka",
    framing: { huge: be32(0x7ffffff0), zero: be32(0) },
    args: (port) => ["kafka", `127.0.0.1:${port}`],
  },
  {
    kind: "nats",
    secret: SECRET,
    framing: {
      greeting: greet('INFO {"server_id":"garbage","max_payload":1048576}\r\n'),
      // A message announcing 999,999,999 bytes; empty lines.
      huge: bytes("MSG a 1 999999999\r\n"),
      zero: bytes("\r\n"),
    },
    args: (port) => ["nats", `nats://app:${SECRET}@127.0.0.1:${port}`],
  },
  {
    kind: "influxdb",
    secret: SECRET,
    // The status alone decides (a 2xx, whatever its body, is InfluxDB's answer): 503s here.
    framing: {
      huge: bytes(
        "HTTP/1.1 503 Service Unavailable\r\nContent-Length: ",
        String(2 ** 40),
        "\r\n\r\n",
      ),
      zero: bytes("HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\n\r\n"),
    },
    args: (port) => ["influxdb", `http://app:${SECRET}@127.0.0.1:${port}`],
  },
  {
    kind: "dns",
    args: (port) => ["dns", "app.test", "--resolver", "wire", "--server", `127.0.0.1:${port}`],
  },
  { kind: "ntp", args: (port) => ["ntp", `127.0.0.1:${port}`] },
  {
    kind: "udp",
    args: (port) => ["udp", `127.0.0.1:${port}`, "--send", "ping", "--contains", "waitcmd-never"],
  },
];

/** What went wrong with one run, or undefined when it held every promise. */
function verdict(r: FaultRun, secret: string | undefined): string | undefined {
  const wrong: string[] = [];
  if (secret && (r.stdout + r.stderr).includes(secret)) wrong.push("the credential shown");
  if (r.code !== 1) wrong.push(`exit ${r.code}`);
  if (!(r.startToExitMs <= DEADLINE_MS + 100 + CI_MARGIN_MS)) {
    wrong.push(`exited ${Math.round(r.startToExitMs - DEADLINE_MS)} ms after the deadline`);
  }
  if (!(r.peakRss > 0 && r.peakRss < CAP)) {
    wrong.push(`peak RSS ${Math.round(r.peakRss / 2 ** 20)} MiB`);
  }
  if (showsTrace(r)) wrong.push("a trace or a crash");
  if (r.stderr !== "") wrong.push(`stderr: ${r.stderr.slice(0, 300)}`);
  if (r.leftovers.length > 0) wrong.push(`left behind: ${r.leftovers.join(", ")}`);
  return wrong.length === 0 ? undefined : wrong.join("; ");
}

Deno.test({
  name: "garbage matrix: every network kind × every hostile answer ends on time, bounded, clean",
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async () => {
    const dir = await Deno.makeTempDir({ prefix: "waitcmd-garbage-" });
    const cases = ROWS.flatMap((row) => BEHAVIOURS.map((b) => ({ row, b })));
    const failures: string[] = [];
    const figures = new Map<string, { overrun: number; rss: number }>();
    const overruns: { name: string; ms: number }[] = [];
    const one = async (row: Row, b: Behaviour) => {
      const server: GarbageServer = row.framing
        ? garbageServer(b, row.framing)
        : await udpGarbageServer(b);
      try {
        await row.setup?.(server.port, dir);
        const r = await faultRun(
          ["-t", `${DEADLINE_MS}ms`, "-i", "200ms", ...row.args(server.port, dir)],
          { env: row.env?.(server.port, dir), killAfterMs: 20_000 },
        );
        const wrong = verdict(r, row.secret);
        if (wrong) failures.push(`${row.kind} × ${b}: ${wrong} (${lastError(r)})`);
        overruns.push({ name: `${row.kind} × ${b}`, ms: r.startToExitMs - DEADLINE_MS });
        const f = figures.get(row.kind) ?? { overrun: -Infinity, rss: 0 };
        figures.set(row.kind, {
          overrun: Math.max(f.overrun, r.startToExitMs - DEADLINE_MS),
          rss: Math.max(f.rss, r.peakRss),
        });
      } finally {
        server.close();
      }
    };
    // Three at a time.
    const queue = [...cases];
    await Promise.all([0, 1, 2].map(async () => {
      for (let c = queue.shift(); c; c = queue.shift()) await one(c.row, c.b);
    }));
    await Deno.remove(dir, { recursive: true });
    console.log("kind        worst overrun  peak RSS");
    for (const [kind, f] of figures) {
      console.log(
        `${kind.padEnd(12)}${`${Math.round(f.overrun)} ms`.padStart(13)}  ${
          `${Math.round(f.rss / 2 ** 20)} MiB`.padStart(8)
        }`,
      );
    }
    const sorted = overruns.map((o) => o.ms).sort((a, b) => a - b);
    console.log(
      `overrun over ${sorted.length} cases: median ${
        Math.round(sorted[sorted.length >> 1] ?? NaN)
      } ms; slowest: ${
        overruns.sort((a, b) => b.ms - a.ms).slice(0, 5).map((o) =>
          `${o.name} ${Math.round(o.ms)} ms`
        )
          .join(", ")
      }`,
    );
    assertEquals(failures, []);
  },
});
