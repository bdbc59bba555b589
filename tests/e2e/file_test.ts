/**
 * The file kind's own end-to-end cases: --nonempty and --contains, a large
 * file, --deleted, contradictory flags. A file created late (in a directory
 * made late too) or re-created, the human line, the JSON report and the
 * timeout are the live conformance suite's (tests/conformance/live_test.ts).
 */

import { assertEquals } from "../_assert.ts";
import { inTempDir } from "../services/_util.ts";
import { USAGE_ROWS } from "../_usage_rows.ts";
import { assertKindUsageErrors, expectJson, runJson } from "./_cli.ts";

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

Deno.test("file rejects contradictory flags", () => assertKindUsageErrors("file", USAGE_ROWS.file));
