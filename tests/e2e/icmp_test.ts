/**
 * icmp end to end: the CLI running the system ping (iputils) against
 * 127.0.0.1 and ::1. The unanswered cases run the CLI in a network namespace
 * of its own (`unshare --net`, made by the test): there the loopback is down
 * (network unreachable) or ignores echo requests (no reply) until the test
 * changes that, so no packet ever leaves the machine.
 */

import { assert, assertEquals, assertMatch, assertStringIncludes } from "../_assert.ts";
import { ignoreWithout } from "../_kit.ts";
import { sh } from "../services/_util.ts";
import { late, runCli, runJson, runJsonl, usageErrorLine } from "./_cli.ts";

const FAST = ["--timeout", "10s", "--interval", "200ms"];

async function which(name: string): Promise<string | undefined> {
  for (const dir of (Deno.env.get("PATH") ?? "").split(":")) {
    if (await Deno.stat(`${dir}/${name}`).then((s) => s.isFile, () => false)) {
      return `${dir}/${name}`;
    }
  }
  return undefined;
}

const PING = await which("ping");
const pingMissing = PING ? undefined : "ping is not installed (iputils-ping)";

/** Why the suite cannot make a network namespace here, or undefined when it can. */
let netnsMissing: string | undefined = pingMissing;
if (!netnsMissing) {
  try {
    await sh("unshare", ["--net", "--", "ip", "link", "set", "lo", "up"]);
  } catch (e) {
    netnsMissing = `cannot make a network namespace: ${(e as Error).message}`;
  }
}

/**
 * Runs `waitcmd -o jsonl ARGS` in a new network namespace whose loopback is
 * set up by `setup` (shell commands run in it first), and runs `change`
 * (shell commands in that namespace) after the first failed attempt.
 */
function runInNetns(setup: string, args: string[], change?: string) {
  return runJsonl(args, {
    wrapper: ["unshare", "--net", "--", "sh", "-c", `${setup}\nexec "$0" "$@"`],
    onAttempt: change
      ? late((child) => sh("nsenter", ["-t", String(child.pid), "-n", "sh", "-c", change]))
      : undefined,
  });
}

Deno.test({
  name: "icmp is satisfied by echo replies from 127.0.0.1 and ::1",
  ignore: ignoreWithout("ping", pingMissing),
  async fn() {
    const j = await runJson([...FAST, "icmp", "127.0.0.1"]);
    assertEquals([j.code, j.stderr, j.json.status], [0, "", "satisfied"]);
    const c = j.json.conditions[0]!;
    assertEquals([c.name, c.kind, c.attempts], ["icmp 127.0.0.1", "icmp", 1]);
    assertMatch(c.detail, /^1 echo reply from 127\.0\.0\.1, rtt avg [\d.]+ ms$/);

    const h = await runCli([...FAST, "ping", "[::1]", "--count", "3"]);
    assertEquals([h.code, h.stdout], [0, ""]);
    assertMatch(
      h.stderr,
      /\[ok\] ping \[::1\] attempt 1 \(\d+\.\ds\): 3 echo replies from ::1, rtt avg [\d.]+ ms/,
    );
  },
});

Deno.test({
  name: "icmp waits while echo requests go unanswered (pending, then satisfied)",
  ignore: ignoreWithout("network namespaces", netnsMissing),
  async fn() {
    const r = await runInNetns(
      "ip link set lo up; sysctl -qw net.ipv4.icmp_echo_ignore_all=1",
      [...FAST, "icmp", "127.0.0.1"],
      "sysctl -qw net.ipv4.icmp_echo_ignore_all=0",
    );
    assertEquals(r.code, 0);
    assertMatch(r.attempts[0]!.error, /^no echo reply from 127\.0\.0\.1 \(\d+ sent\)$/);
    assert(r.attempts.at(-1)!.ok);
  },
});

Deno.test({
  name: "icmp times out when the network is unreachable",
  ignore: ignoreWithout("network namespaces", netnsMissing),
  async fn() {
    const r = await runInNetns("true", [
      "--timeout",
      "1500ms",
      "--interval",
      "200ms",
      "icmp",
      "127.0.0.1",
    ]);
    assertEquals([r.code, r.report.status], [1, "timeout"]);
    assertEquals(r.report.conditions[0]!.last_error, "network is unreachable");
  },
});

Deno.test({
  name: "icmp without ping on PATH is fatal (exit 3) naming ping",
  ignore: ignoreWithout("ping", pingMissing),
  async fn() {
    const dir = await Deno.makeTempDir({ prefix: "waitcmd-icmp-" });
    try {
      // PATH without ping (the launcher finds its Deno by its own path).
      const h = await runCli([...FAST, "icmp", "127.0.0.1"], { env: { PATH: dir } });
      assertEquals(h.code, 3);
      assertStringIncludes(
        h.stderr,
        "waitcmd: fatal: icmp 127.0.0.1: the ping command was not found on PATH",
      );
      const j = await runJson([...FAST, "ping", "127.0.0.1"], { env: { PATH: dir } });
      assertEquals([j.code, j.json.status, j.json.conditions[0]!.fatal], [3, "fatal", true]);
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
});

Deno.test({
  name: "icmp kills ping when an attempt is cut",
  ignore: ignoreWithout("ping", pingMissing),
  async fn() {
    // 40 replies take 8 s; the attempt is cut after 300 ms, the run after 1 s.
    const h = await runJson([
      "--timeout",
      "1s",
      "--attempt-timeout",
      "300ms",
      "--interval",
      "100ms",
      "icmp",
      "127.0.0.77",
      "--count",
      "40",
    ]);
    assertEquals(h.code, 1);
    assertEquals(h.json.conditions[0]!.last_error, "attempt timed out after 300ms");
    const left: string[] = [];
    for await (const e of Deno.readDir("/proc")) {
      if (!/^\d+$/.test(e.name)) continue;
      const cmd = await Deno.readTextFile(`/proc/${e.name}/cmdline`).catch(() => "");
      if (cmd.includes("127.0.0.77")) left.push(cmd.replaceAll("\0", " "));
    }
    assertEquals(left, [], "ping processes left behind");
  },
});

Deno.test("icmp usage errors exit 2 with one line", async () => {
  const cases: [string[], string][] = [
    [["icmp", "-1"], `condition 1 (icmp): expected a host name or IP address, got "-1"`],
    [["icmp", "a b"], `condition 1 (icmp): expected a host name or IP address, got "a b"`],
    [["icmp", "::zz"], `condition 1 (icmp): expected a host name or IP address, got "::zz"`],
    [
      ["icmp", "h", "--count", "0"],
      "condition 1 (icmp): --count: expected a whole number from 1 to 100",
    ],
    [["icmp"], "condition 1 (icmp): missing target HOST"],
  ];
  for (const [args, fragment] of cases) {
    const line = usageErrorLine(await runCli(args));
    assertStringIncludes(line, `waitcmd: ${fragment}`);
    assertStringIncludes(line, "(see: waitcmd help icmp)");
  }
});

Deno.test("waitcmd doctor reports ping for icmp", async () => {
  const dir = await Deno.makeTempDir({ prefix: "waitcmd-icmp-" });
  try {
    const missing = await runCli(["doctor", "-o", "json", "--require", "icmp"], {
      env: { PATH: dir },
    });
    assertEquals(missing.code, 1);
    const row =
      (JSON.parse(missing.stdout) as { kinds: { kind: string; ok: boolean; reason: string }[] })
        .kinds.find((k) => k.kind === "icmp");
    assertEquals(row, {
      kind: "icmp",
      ok: false,
      reason: "no ping command on PATH (install iputils-ping)",
    });
    if (!pingMissing) {
      const ok = await runCli(["doctor", "--require", "icmp"]);
      assertEquals(ok.code, 0);
      assertMatch(ok.stdout + ok.stderr, /icmp\s+ok/);
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
