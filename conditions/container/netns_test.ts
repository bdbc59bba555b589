import { assertEquals, assertRejects } from "../../tests/_assert.ts";
import {
  closedPorts,
  counts,
  isContainerProcess,
  parsePortSpec,
  parseSocketLine,
  portsOf,
} from "./netns.ts";

const TCP_HEADER =
  "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode";
const TCP6_HEADER =
  "  sl  local_address                         remote_address                        st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode";
/** Lines as Linux writes them (taken from a busybox httpd and udhcpd in containers). */
const TCP_LISTEN_8080_V6 =
  "   0: 00000000000000000000000000000000:1F90 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 46225 1 0000000039d217ed 100 0 0 10 0";
const TCP_LISTEN_9000_V4 =
  "   0: 0100007F:2328 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 45914 1 000000006d1db53d 100 0 0 10 0";
const TCP_ESTABLISHED_V4 =
  "   1: 0100007F:C350 0100007F:2328 01 00000000:00000000 00:00000000 00000000     0        0 45999 1 000000006d1db53e 20 4 30 10 -1";
const TCP_TIME_WAIT_V4 =
  "   2: 0100007F:1F91 0100007F:D431 06 00000000:00000000 03:00000F8A 00000000     0        0 0 3 0000000000000000";
const UDP_67_V4 =
  " 3116: 00000000:0043 00000000:0000 07 00000000:00000000 00:00000000 00000000     0        0 48852 2 00000000aed29fda 0";
const UDP6_5353 =
  " 1234: 00000000000000000000000000000000:14E9 00000000000000000000000000000000:0000 07 00000000:00000000 00:00000000 00000000     0        0 48999 2 00000000aed29fdb 0";

Deno.test("parseSocketLine() reads the local port and the state of IPv4 and IPv6 lines", async (t) => {
  const rows: [string, string, ReturnType<typeof parseSocketLine>][] = [
    ["tcp6 listening on 8080", TCP_LISTEN_8080_V6, { port: 8080, state: 0x0a }],
    ["tcp listening on 127.0.0.1:9000", TCP_LISTEN_9000_V4, { port: 9000, state: 0x0a }],
    ["tcp established, local port 50000", TCP_ESTABLISHED_V4, { port: 50000, state: 0x01 }],
    ["tcp time-wait", TCP_TIME_WAIT_V4, { port: 8081, state: 0x06 }],
    ["udp bound to 67", UDP_67_V4, { port: 67, state: 0x07 }],
    ["udp6 bound to 5353", UDP6_5353, { port: 5353, state: 0x07 }],
    ["lower-case hex", "   0: 0100007f:ffff 00000000:0000 0a 0 0 0 0", {
      port: 65535,
      state: 0x0a,
    }],
    ["the tcp header", TCP_HEADER, undefined],
    ["the tcp6 header", TCP6_HEADER, undefined],
    ["an empty line", "", undefined],
    ["a short address", "   0: 0100:1F90 00000000:0000 0A", undefined],
    ["a port that is not hex", "   0: 0100007F:1G90 00000000:0000 0A", undefined],
    ["a truncated line", "   0: 0100007F:1F90", undefined],
  ];
  for (const [name, line, want] of rows) {
    await t.step(name, () => assertEquals(parseSocketLine(line), want));
  }
});

Deno.test("counts() takes a TCP socket in LISTEN only, and any bound UDP socket", () => {
  assertEquals(counts(parseSocketLine(TCP_LISTEN_9000_V4)!, "tcp"), true);
  assertEquals(counts(parseSocketLine(TCP_ESTABLISHED_V4)!, "tcp"), false);
  assertEquals(counts(parseSocketLine(TCP_TIME_WAIT_V4)!, "tcp"), false);
  assertEquals(counts(parseSocketLine(UDP_67_V4)!, "udp"), true);
});

Deno.test("parsePortSpec() reads PORT, PORT/tcp and PORT/udp", async (t) => {
  const rows: [string, ReturnType<typeof parsePortSpec>][] = [
    ["8080", { port: 8080, protocol: "tcp" }],
    ["8080/tcp", { port: 8080, protocol: "tcp" }],
    ["53/udp", { port: 53, protocol: "udp" }],
    ["53/UDP", { port: 53, protocol: "udp" }],
    ["65535", { port: 65535, protocol: "tcp" }],
    ["0", 'expected a port from 1 to 65535, got "0"'],
    ["65536", 'expected a port from 1 to 65535, got "65536"'],
    ["99999999999999999999", 'expected a port from 1 to 65535, got "99999999999999999999"'],
    ["80/sctp", 'expected the protocol tcp or udp after the port, got "80/sctp"'],
    ["80/", 'expected the protocol tcp or udp after the port, got "80/"'],
    ["http", 'expected PORT, PORT/tcp or PORT/udp (like 8080 or 53/udp), got "http"'],
    ["-1", 'expected PORT, PORT/tcp or PORT/udp (like 8080 or 53/udp), got "-1"'],
    ["", 'expected PORT, PORT/tcp or PORT/udp (like 8080 or 53/udp), got ""'],
  ];
  for (const [text, want] of rows) {
    await t.step(JSON.stringify(text), () => assertEquals(parsePortSpec(text), want));
  }
});

const ID = "295863d8f5d3ed4e578188be807cd597879ef278b626aabf98bd79bc6f9ef4f0";

/** A procfs stand-in in a temporary directory: process 42's net files and cgroup. */
async function fakeProc(files: Record<string, string>): Promise<string> {
  const proc = await Deno.makeTempDir({ prefix: "waitcmd-proc-" });
  await Deno.mkdir(`${proc}/42/net`, { recursive: true });
  for (const [name, text] of Object.entries(files)) {
    await Deno.writeTextFile(`${proc}/42/${name}`, text);
  }
  return proc;
}

const never = new AbortController().signal;

Deno.test("closedPorts() reads tcp, tcp6, udp and udp6 of the process's namespace", async () => {
  const proc = await fakeProc({
    "net/tcp": [TCP_HEADER, TCP_LISTEN_9000_V4, TCP_ESTABLISHED_V4, ""].join("\n"),
    "net/tcp6": [TCP6_HEADER, TCP_LISTEN_8080_V6, ""].join("\n"),
    "net/udp": [TCP_HEADER, UDP_67_V4, ""].join("\n"),
    "net/udp6": [TCP6_HEADER, UDP6_5353].join("\n"),
  });
  try {
    const p = (port: number, protocol: "tcp" | "udp") => ({ port, protocol });
    const ask = [p(8080, "tcp"), p(9000, "tcp"), p(67, "udp"), p(5353, "udp")];
    assertEquals(await closedPorts(42, ask, never, proc), []);
    // 50000 is only a client's local port; 8080 is not bound over UDP; 9000 not over UDP either.
    assertEquals(
      await closedPorts(
        42,
        [p(50000, "tcp"), p(8080, "udp"), p(67, "udp"), p(9000, "udp")],
        never,
        proc,
      ),
      [p(50000, "tcp"), p(8080, "udp"), p(9000, "udp")],
    );
  } finally {
    await Deno.remove(proc, { recursive: true });
  }
});

Deno.test("closedPorts() reads a long file in pieces and skips a line too long to be a socket", async () => {
  const filler = Array.from(
    { length: 5000 },
    (_, i) =>
      `${String(i).padStart(4)}: 0100007F:${
        (10000 + i).toString(16).toUpperCase()
      } 00000000:0000 01 0 0 0 0`,
  );
  const proc = await fakeProc({
    "net/tcp": [TCP_HEADER, ...filler, "x".repeat(100_000), TCP_LISTEN_9000_V4, ""].join("\n"),
    "net/tcp6": "",
  });
  try {
    assertEquals(await closedPorts(42, [{ port: 9000, protocol: "tcp" }], never, proc), []);
    // Port 10000 appears only in ESTABLISHED lines.
    assertEquals(await closedPorts(42, [{ port: 10000, protocol: "tcp" }], never, proc), [{
      port: 10000,
      protocol: "tcp",
    }]);
  } finally {
    await Deno.remove(proc, { recursive: true });
  }
});

Deno.test("isContainerProcess() finds the container's id in the process's cgroup", async () => {
  const proc = await fakeProc({
    cgroup: `12:pids:/docker/${ID}\n0::/docker/${ID}\n`,
  });
  try {
    assertEquals(await isContainerProcess(42, ID, never, proc), true);
    assertEquals(await isContainerProcess(42, "f".repeat(64), never, proc), false);
    assertEquals(await isContainerProcess(42, "", never, proc), false);
    await Deno.writeTextFile(`${proc}/42/cgroup`, `0::/system.slice/docker-${ID}.scope\n`);
    assertEquals(await isContainerProcess(42, ID, never, proc), true);
  } finally {
    await Deno.remove(proc, { recursive: true });
  }
});

Deno.test("portsOf() says why the ports cannot be read", async () => {
  const proc = await fakeProc({
    cgroup: "0::/user.slice/session-1.scope\n",
    "net/tcp": TCP_LISTEN_9000_V4,
    "net/tcp6": "",
  });
  const c = { name: "web", id: ID, pid: 42 };
  const ask = [{ port: 9000, protocol: "tcp" as const }];
  const engine = "tcp://10.0.0.5:2375";
  try {
    // Another process (of another host's pid): never read as the container's.
    await assertRejects(
      () => portsOf(c, ask, engine, never, proc),
      Error,
      "cannot read the ports of container web: its process 42 is not on this host; --listening needs waitcmd on the engine's host, with access to its /proc (engine: tcp://10.0.0.5:2375)",
    );
    await assertRejects(
      () => portsOf({ ...c, pid: 43 }, ask, engine, never, proc),
      Error,
      "cannot read the ports of container web: its process 43 is not on this host",
    );
    await Deno.writeTextFile(`${proc}/42/cgroup`, `0::/docker/${ID}\n`);
    assertEquals(await portsOf(c, ask, engine, never, proc), []);
    await Deno.remove(`${proc}/42/net/tcp`);
    await Deno.mkdir(`${proc}/42/net/tcp`);
    await assertRejects(
      () => portsOf(c, ask, engine, never, proc),
      Error,
      `cannot read the ports of container web: ${proc}/42/net/tcp: is a directory`,
    );
  } finally {
    await Deno.remove(proc, { recursive: true });
  }
});

/**
 * `portsOf`'s error on a file it may not read, from a Deno process without the
 * capabilities that let root read any file (root is what the suite runs as).
 */
async function unreadableError(path: string, proc: string): Promise<string> {
  const code = `
    import { portsOf } from ${JSON.stringify(new URL("./netns.ts", import.meta.url).href)};
    try {
      await portsOf({ name: "web", id: ${JSON.stringify(ID)}, pid: 42 },
        [{ port: 1, protocol: "tcp" }], "", new AbortController().signal, ${JSON.stringify(proc)});
      console.log("read");
    } catch (e) {
      console.log(e.message);
    }`;
  const deno = [Deno.execPath(), "eval", "--no-lock", code];
  const cmd = Deno.uid() === 0
    ? ["setpriv", "--bounding-set=-dac_override,-dac_read_search", "--", ...deno]
    : deno;
  await Deno.chmod(path, 0);
  const out = await new Deno.Command(cmd[0]!, { args: cmd.slice(1), stderr: "inherit" }).output();
  return new TextDecoder().decode(out.stdout).trim();
}

Deno.test({
  name: "portsOf() on a file it may not read says permission denied and what is needed",
  ignore: Deno.build.os !== "linux",
  fn: async () => {
    const proc = await fakeProc({ cgroup: `0::/docker/${ID}\n`, "net/tcp": "", "net/tcp6": "" });
    try {
      assertEquals(
        await unreadableError(`${proc}/42/net/tcp`, proc),
        `cannot read the ports of container web: ${proc}/42/net/tcp: permission denied; --listening needs waitcmd on the engine's host, with access to its /proc`,
      );
    } finally {
      await Deno.remove(proc, { recursive: true });
    }
  },
});
