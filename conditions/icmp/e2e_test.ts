/**
 * icmp's own end-to-end cases: the CLI running the system ping (iputils):
 * --count against ::1, ping missing (fatal), an attempt cut short (ping
 * killed), usage errors and doctor. Echo replies from 127.0.0.1 (the human
 * line, the JSON report), echo requests unanswered then answered, and an
 * unreachable network until the deadline are the live conformance suite's
 * (tests/conformance/live_test.ts), in a network namespace of their own.
 */
import { assertEquals, assertMatch, assertStringIncludes } from "../../tests/_assert.ts";
import { ignoreWithout } from "../../tests/_kit.ts";
import { assertUsageFragments, expectJson, runCli, runJson } from "../../tests/e2e/_cli.ts";

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

Deno.test({
  name: "icmp counts --count echo replies from ::1",
  ignore: ignoreWithout("ping", pingMissing),
  async fn() {
    const h = await runCli([...FAST, "ping", "[::1]", "--count", "3"]);
    assertEquals([h.code, h.stdout], [0, ""]);
    assertMatch(
      h.stderr,
      /\[ok\] ping \[::1\] attempt 1 \(\d+\.\ds\): 3 echo replies from ::1, rtt avg [\d.]+ ms/,
    );
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
    await expectJson([
      ...["--timeout", "1s", "--attempt-timeout", "300ms", "--interval", "100ms"],
      ...["icmp", "127.0.0.77", "--count", "40"],
    ], { code: 1, error: "attempt timed out after 300ms" });
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
  await assertUsageFragments("icmp", cases);
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
