/**
 * ntp's own end-to-end cases, against a small responder in the test process
 * (conditions/ntp/_service.ts) for answers a real server will not give on
 * demand: an unsynchronised clock, stratum 16 and a kiss-o'-death, an
 * offset, silence, and usage errors. A real NTP server (chronyd) ready,
 * started late or restarted, above --max-stratum until the deadline, with
 * its human line and JSON report, is the live conformance suite's
 * (tests/conformance/live_test.ts).
 */
import { assert, assertEquals, assertMatch, assertStringIncludes } from "../../tests/_assert.ts";
import { startNtpResponder } from "./_service.ts";
import {
  assertUsageFragments,
  expectJson,
  runCli,
  runJson,
  runLate,
  timing,
} from "../../tests/e2e/_cli.ts";

const FAST = ["--timeout", "15s", "--interval", "200ms"];
const SHORT = ["--timeout", "1500ms", "--interval", "200ms"];

Deno.test("ntp: an unsynchronised server is pending with the reason, until it synchronises", async () => {
  const r = await startNtpResponder({ leap: 3, stratum: 2 });
  try {
    const late = await runLate(
      [...FAST, "ntp", `127.0.0.1:${r.port}`],
      () => Promise.resolve(r.set({ leap: 0, stratum: 2 })),
    );
    assertEquals(late.code, 0);
    assertEquals(late.attempts[0]!.error, "server clock not synchronised (leap indicator 3)");
    assertMatch(late.report.conditions[0]!.detail, /^offset [+-][\d.]+ms, stratum 2$/);
  } finally {
    await r.stop();
  }
});

Deno.test("ntp: stratum 16 and a kiss-o'-death are unsynchronised", async () => {
  const r = await startNtpResponder({ stratum: 16 });
  try {
    let j = await runJson([...SHORT, "ntp", `127.0.0.1:${r.port}`]);
    assertEquals(j.json.conditions[0]!.last_error, "server clock not synchronised (stratum 16)");
    r.set({ stratum: 0, refId: "DENY" });
    j = await runJson([...SHORT, "ntp", `127.0.0.1:${r.port}`]);
    assertEquals(
      j.json.conditions[0]!.last_error,
      "server clock not synchronised (stratum 0, kiss code DENY)",
    );
  } finally {
    await r.stop();
  }
});

Deno.test("ntp: an offset beyond --max-offset is pending; within it, satisfied", async () => {
  const r = await startNtpResponder({ offsetMs: 5000, stratum: 1 });
  try {
    await expectJson([...SHORT, "ntp", `127.0.0.1:${r.port}`], {
      code: 1,
      status: "timeout",
      error: /^offset \+(4\.9\d\d|5\.0\d\d)s is beyond --max-offset 1s \(stratum 1\)$/,
    });
    await expectJson([...SHORT, "ntp", `127.0.0.1:${r.port}`, "--max-offset", "10s"], {
      code: 0,
      detail: /^offset \+(4\.9\d\d|5\.0\d\d)s, stratum 1$/,
    });
    r.set({ offsetMs: -3000, stratum: 1 });
    const neg = await runJson([...SHORT, "ntp", `127.0.0.1:${r.port}`, "--max-offset", "2s"]);
    assertMatch(
      neg.json.conditions[0]!.last_error,
      /^offset -(2\.9\d\d|3\.0\d\d)s is beyond --max-offset 2s/,
    );
  } finally {
    await r.stop();
  }
});

Deno.test("ntp times out on a silent server with the human summary", async () => {
  const r = await startNtpResponder({ silent: true });
  try {
    const h = await runCli([...timing("2500ms", "100ms"), "ntp", `127.0.0.1:${r.port}`]);
    assertEquals(h.code, 1);
    assertStringIncludes(
      h.stderr,
      `waitcmd: timed out after 2.5s; not satisfied: ntp 127.0.0.1:${r.port}: no reply within 2s`,
    );
    assert(r.requests >= 1);
  } finally {
    await r.stop();
  }
});

Deno.test("ntp usage errors exit 2 with one line", async () => {
  const cases: [string[], string][] = [
    [["ntp", "host:0"], `condition 1 (ntp): port must be from 1 to 65535, got "0"`],
    [
      ["ntp", "host", "--max-offset", "soon"],
      "condition 1 (ntp): --max-offset: expected a duration",
    ],
    [["ntp", "host", "--max-offset", "0"], "condition 1 (ntp): --max-offset: must be above 0"],
    [
      ["ntp", "host", "--max-stratum", "16"],
      "condition 1 (ntp): --max-stratum: expected a whole number from 1 to 15",
    ],
    [["ntp"], "condition 1 (ntp): missing target HOST[:PORT]"],
  ];
  await assertUsageFragments("ntp", cases);
});
