/**
 * The file kind's own end-to-end cases: --nonempty and --contains, a large
 * file, --deleted, contradictory flags. A file created late (in a directory
 * made late too) or re-created, the human line, the JSON report and the
 * timeout are the live conformance suite's (tests/conformance/live_test.ts).
 */

import { assert, assertEquals, assertMatch } from "../../tests/_assert.ts";
import { formatSize } from "../_common/bytes.ts";
import { inTempDir } from "../../tests/services/_util.ts";
import { usageRows } from "../../tests/_suite.ts";
import {
  assertKindUsageErrors,
  expectJson,
  runJson,
  startCli,
  timing,
} from "../../tests/e2e/_cli.ts";

/** The kind's usage errors, from its folder (conditions/file/_suite.ts). */
const USAGE = await usageRows("file");

const later = (ms: number, fn: () => Promise<void> | void) => async () => {
  await new Promise((r) => setTimeout(r, ms));
  await fn();
};

Deno.test("file --nonempty and --contains combine", () =>
  inTempDir("waitcmd-file-")(async (dir) => {
    const f = `${dir}/cfg`;
    await Deno.writeTextFile(f, "");
    await expectJson(
      [
        ...["--timeout", "10s", "--interval", "100ms", "file", f, "--nonempty"],
        ...["--contains", "ready: true"],
      ],
      { code: 0, detail: `contains "ready: true" (18 B)` },
      {
        started: later(300, async () => {
          await Deno.writeTextFile(f, "state\n");
          await new Promise((res) => setTimeout(res, 300));
          await Deno.writeTextFile(f, "state\nready: true\n");
        }),
      },
    );
    await expectJson([
      ...["--timeout", "400ms", "--interval", "100ms", "file", f, "--contains", "absent text"],
    ], { code: 1, error: `does not contain "absent text" (18 B)` });
    await Deno.writeTextFile(f, "");
    const empty = await runJson([
      ...["--timeout", "300ms", "--interval", "100ms", "file", f, "--nonempty"],
    ]);
    assertEquals(empty.json.conditions[0]!.last_error, "exists but is empty");
  }));

Deno.test("file --contains finds text across read-chunk borders in a large file", () =>
  inTempDir("waitcmd-file-")(async (dir) => {
    const f = `${dir}/big`;
    const pad = "x".repeat((1 << 20) - 3);
    await Deno.writeTextFile(f, pad + "NEEDLE" + pad);
    await expectJson(["--timeout", "10s", "file", f, "--contains", "NEEDLE"], { code: 0 });
  }));

Deno.test("file --deleted holds at once for a missing path and waits for removal", () =>
  inTempDir("waitcmd-file-")(async (dir) => {
    const f = `${dir}/pid`;
    const never = await runJson(["--timeout", "5s", "file", `${dir}/never`, "--deleted"]);
    assertEquals(
      [never.code, never.json.conditions[0]!.attempts, never.json.conditions[0]!.detail],
      [0, 1, "does not exist"],
    );
    await Deno.writeTextFile(f, "1");
    await expectJson(["--timeout", "10s", "--interval", "100ms", "file", f, "--deleted"], {
      code: 0,
      error: "still exists",
    }, {
      started: later(300, () => Deno.remove(f)),
    });
  }));

Deno.test("file rejects contradictory flags", () => assertKindUsageErrors("file", USAGE));

Deno.test("file --unchanged-for waits until a file being written has stopped changing", () =>
  inTempDir("waitcmd-file-")(async (dir) => {
    const f = `${dir}/out.log`;
    // 15 lines, one every 150 ms, by a real process: the file exists (and is non-empty) long
    // before it is complete.
    const cli = startCli([
      ...timing("20s", "100ms"),
      "--output",
      "json",
      "file",
      f,
      "--unchanged-for",
      "1s",
    ]);
    const writer = new Deno.Command("sh", {
      args: ["-c", `for i in $(seq 1 15); do echo "line $i" >> '${f}'; sleep 0.15; done`],
    }).spawn();
    const wrote = await writer.status;
    assert(wrote.success);
    const r = await cli.done();
    const size = (await Deno.stat(f)).size;
    assertEquals(r.code, 0, r.stderr);
    const c = r.json!.conditions[0]!;
    // Satisfied only with all 15 lines there, never at a part of them.
    assertEquals(c.detail, `unchanged for 1s (${formatSize(size)})`);
    assert(c.attempts > 2, `pending while written: ${c.attempts} attempts`);
    assertMatch(c.last_error, /^(does not exist|unchanged for \d\.\ds of 1s \(\d+ B\))$/);
    // A file that keeps changing times out, saying how long it stayed the same.
    const busy = new Deno.Command("sh", {
      args: ["-c", `for i in $(seq 1 30); do echo "busy $i" >> '${f}'; sleep 0.1; done`],
    }).spawn();
    try {
      const t = await expectJson(
        [...timing("1500ms", "100ms"), "file", f, "--unchanged-for", "1s"],
        {
          code: 1,
          status: "timeout",
        },
      );
      assertMatch(t.json.conditions[0]!.last_error, /^unchanged for 0\.\ds of 1s \(\d+ B\)$/);
    } finally {
      await busy.status;
    }
    // With --contains too, both must hold.
    await expectJson([
      ...["--timeout", "10s", "file", f, "--unchanged-for", "300ms", "--contains", "busy 30"],
    ], { code: 0, detail: /^unchanged for 300ms, contains "busy 30" \(\d+ B\)$/ });
  }));
