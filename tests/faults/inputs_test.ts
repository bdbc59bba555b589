/**
 * Hostile inputs from the local side (docs/reliability.md): words and
 * variables that are not UTF-8, a YAML alias bomb, an open-files limit too
 * low for the runtime. Each is a clear usage error (exit 2) or one fatal line
 * (exit 3), never a wrong verdict, a silent default or a runtime's panic.
 * Raw bytes reach waitcmd through a shell (`printf '\377'`), as a user's would.
 */

import { assertEquals } from "../_assert.ts";
import { cliTest, WAITCMD } from "../e2e/_cli.ts";
import { inTempDir } from "../services/_util.ts";

const opts = { sanitizeResources: false, sanitizeOps: false };

/** Runs `script` under sh with `$W` naming waitcmd; returns exit code and outputs. */
async function sh(script: string): Promise<{ code: number; stdout: string; stderr: string }> {
  const out = await new Deno.Command("sh", {
    args: ["-c", `W="$0"; ${script}`, WAITCMD],
    env: { NO_COLOR: "1" },
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = (b: Uint8Array) => new TextDecoder().decode(b);
  return { code: out.code, stdout: text(out.stdout), stderr: text(out.stderr) };
}

/** A temporary directory holding a file whose name is not UTF-8 (`bad\xff\xfename`). */
async function withBadName(body: (dir: string) => Promise<void>): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "waitcmd-utf8-" });
  try {
    const made = await sh(`touch "$(printf '${dir}/bad\\377\\376name')"`);
    assertEquals(made.code, 0, made.stderr);
    await body(dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

const NOT_UTF8 = (n: number, after: string) =>
  `waitcmd: argument ${n} (after "${after}") is not valid UTF-8: waitcmd cannot use such a ` +
  "path or word exactly as given (see: waitcmd --help)\n";

for (const kind of ["lockfile", "file", "not file"]) {
  Deno.test({
    name: `inputs: ${kind} with a path that is not UTF-8 is a usage error, not a verdict`,
    ...opts,
    fn: () =>
      withBadName(async (dir) => {
        // The file exists under its real name: `lockfile` (absent) would be satisfied and
        // `file` time out if the mangled name were looked at.
        const r = await sh(`exec "$W" -t 2s ${kind} "$(printf '${dir}/bad\\377\\376name')"`);
        const words = kind.split(" ");
        assertEquals(
          [r.code, r.stdout, r.stderr],
          [2, "", NOT_UTF8(words.length + 3, words.at(-1)!)],
        );
      }),
  });
}

cliTest("inputs: a then command's word that is not UTF-8 is a usage error too", async () => {
  const r = await sh(`exec "$W" -t 2s file / -- then cat "$(printf 'x\\377')"`);
  assertEquals([r.code, r.stderr], [2, NOT_UTF8(8, "cat")]);
});

for (const name of ["WAITCMD_TIMEOUT", "WAITCMD_MODE", "WAITCMD_OUTPUT", "WAITCMD_INTERVAL"]) {
  Deno.test({
    name: `inputs: ${name} that is not UTF-8 is a usage error naming it, not ignored`,
    ...opts,
    fn: async () => {
      const r = await sh(`exec env "${name}=$(printf '1\\377s')" "$W" -t 2s tcp 127.0.0.1:1`);
      assertEquals(
        [r.code, r.stdout, r.stderr],
        [2, "", `waitcmd: ${name}: the value is not valid UTF-8 (see: waitcmd help environment)\n`],
      );
    },
  });
}

cliTest(
  "inputs: a recipe that is not UTF-8 is a usage error",
  () =>
    inTempDir("waitcmd-utf8-")(async (dir) => {
      const r = await sh(
        `printf 'conditions:\\n  - kind: file\\n    target: /x\\377\\n' > ${dir}/r.yaml; ` +
          `exec "$W" -t 2s -f ${dir}/r.yaml`,
      );
      assertEquals(
        [r.code, r.stderr],
        [
          2,
          `waitcmd: --config: cannot read ${dir}/r.yaml: not valid UTF-8 (see: waitcmd --help)\n`,
        ],
      );
    }),
);

cliTest(
  "inputs: a YAML alias bomb in a recipe is a usage error (exit 2), not an internal error",
  () =>
    inTempDir("waitcmd-yaml-")(async (dir) => {
      const levels = "abcdefgh".split("");
      const lines = levels.map((l, i) =>
        i === 0
          ? `${l}: &${l} ["x","x","x","x","x","x","x","x","x"]`
          : `${l}: &${l} [${Array(9).fill(`*${levels[i - 1]}`).join(",")}]`
      );
      await Deno.writeTextFile(`${dir}/bomb.yaml`, lines.join("\n") + "\n");
      const r = await sh(`exec "$W" -f ${dir}/bomb.yaml`);
      assertEquals(
        [r.code, r.stdout, r.stderr],
        [
          2,
          "",
          `waitcmd: ${dir}/bomb.yaml: not valid YAML or JSON: its aliases expand too far ` +
          "(an alias bomb?) (see: waitcmd --help)\n",
        ],
      );
    }),
);

cliTest(
  "inputs: an open-files limit too low for the runtime is one fatal line (exit 3)",
  async () => {
    // 24: low enough for the runtime to fail, high enough for it to load waitcmd's modules
    // (below about 20 it fails before any of waitcmd's code runs: docs/contract.md §3).
    const r = await sh(`ulimit -n 24; exec "$W" -t 1s exec -- true`);
    assertEquals(
      [r.code, r.stdout, r.stderr],
      [
        3,
        "",
        "waitcmd: fatal: the open files limit (ulimit -n) is 24; waitcmd needs at least 32\n",
      ],
    );
  },
);
