/**
 * Hostile inputs from the local side (docs/reliability.md): words and
 * variables that are not UTF-8, a YAML alias bomb, an open-files limit too
 * low for the runtime. Each is a clear usage error (exit 2) or one fatal line
 * (exit 3), never a wrong verdict, a silent default or a runtime's panic.
 * Raw bytes reach waitcmd through a shell (`printf '\377'`), as a user's would.
 */

import { assert, assertEquals } from "../_assert.ts";
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
  "inputs: YAML mappings of 60,000 keys (a recipe's, a manifest's ConfigMap) are read in seconds; a repeated key is refused as before",
  () =>
    inTempDir("waitcmd-keys-")(async (dir) => {
      const keys = Array.from({ length: 60_000 }, (_, i) => `key${i}: v${i}`);
      await Deno.writeTextFile(`${dir}/repeat.yaml`, [...keys, "key0: again"].join("\n") + "\n");
      const data = keys.map((k) => `  ${k}`);
      const manifest = (extra: string[]) =>
        ["apiVersion: v1", "kind: ConfigMap", "metadata: {name: big}", "data:", ...data, ...extra]
          .join("\n") + "\n";
      await Deno.writeTextFile(`${dir}/cm.yaml`, manifest([]));
      await Deno.writeTextFile(`${dir}/cm-repeat.yaml`, manifest(["  key0: again"]));
      // The YAML package compared each key with every key before it: minutes of CPU here.
      const took: number[] = [];
      const timed = async (script: string) => {
        const t0 = performance.now();
        const r = await sh(script);
        took.push(Math.round(performance.now() - t0));
        return r;
      };
      const recipe = await timed(`exec "$W" -f ${dir}/repeat.yaml`);
      assertEquals(
        [recipe.code, recipe.stdout, recipe.stderr],
        [
          2,
          "",
          `waitcmd: ${dir}/repeat.yaml:60001: not valid YAML or JSON: Map keys must be unique ` +
          "(see: waitcmd --help)\n",
        ],
      );
      const explained = await timed(`exec "$W" --explain orch -f ${dir}/cm.yaml`);
      assertEquals(explained.code, 0, explained.stderr);
      assert(explained.stdout.includes("configmap/big"), explained.stdout.slice(0, 300));
      const repeated = await timed(`exec "$W" --explain orch -f ${dir}/cm-repeat.yaml`);
      assertEquals([repeated.code, repeated.stdout], [2, ""]);
      assert(
        repeated.stderr.includes("line 60005): not valid YAML or JSON: Map keys must be unique"),
        repeated.stderr,
      );
      const load = Deno.readTextFileSync("/proc/loadavg").split(" ")[0];
      console.log(`60,000 keys: ${took.join(", ")} ms (load ${load})`);
      // 6-11 s each at load 15 on 2 cores; the quadratic check took minutes.
      assert(Math.max(...took) < 60_000, `took ${took.join(", ")} ms`);
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

cliTest(
  "inputs: a named pipe given to -f or to a flag that names a file is refused, saying what it is; a pipe already open is read",
  () =>
    inTempDir("waitcmd-fifo-")(async (dir) => {
      // `timeout -s KILL 10`: a read that waits for a writer without end fails the row (137).
      const run = (args: string) =>
        sh(`mkfifo ${dir}/fifo 2>/dev/null; timeout -s KILL 10 "$W" ${args}`);
      const usage = (flag: string) =>
        `cannot read ${
          flag ? `${flag} ` : ""
        }${dir}/fifo: not a regular file (a named pipe) (see: waitcmd`;
      await Deno.writeTextFile(`${dir}/blob`, "blob\n");
      const rows: [string, number, string][] = [
        [`-t 2s -f ${dir}/fifo`, 2, `waitcmd: --config: ${usage("")}`],
        [
          `-t 2s cosign --blob ${dir}/blob --signature ${dir}/blob --key ${dir}/fifo`,
          2,
          `waitcmd: condition 1 (cosign): --key: ${usage("--key")}`,
        ],
        [
          `-t 2s cosign --blob ${dir}/blob --bundle ${dir}/blob --trusted-root ${dir}/fifo`,
          2,
          `waitcmd: condition 1 (cosign): --trusted-root: ${usage("--trusted-root")}`,
        ],
        [
          `-t 1s postgres postgres://u@127.0.0.1:1/db --password-file ${dir}/fifo`,
          1,
          `not satisfied: postgres postgres://u@127.0.0.1:1/db: cannot read --password-file ${dir}/fifo: not a regular file (a named pipe)\n`,
        ],
        [
          `-t 1s archive ${dir}/fifo`,
          1,
          `not satisfied: archive ${dir}/fifo: not a regular file (a named pipe), not an archive\n`,
        ],
        [
          `-t 1s archive /dev/zero`,
          1,
          `not satisfied: archive /dev/zero: not a regular file (a character device), not an archive\n`,
        ],
        [
          `-f - <&-`,
          2,
          "waitcmd: -: standard input is empty (closed, or nothing was written to it); write the recipe to it, or give a file",
        ],
      ];
      for (const [args, code, want] of rows) {
        const r = await run(args);
        assertEquals(r.code, code, `${args}: ${r.stderr}`);
        assert(r.stderr.includes(want), `${args}: expected ${JSON.stringify(want)} in ${r.stderr}`);
      }
      // A pipe already open has its writer: standard input as /dev/stdin is read as before.
      const piped = await sh(
        `echo 'conditions: [{kind: tcp, target: "a:1"}]' | timeout -s KILL 10 "$W" --explain -f /dev/stdin`,
      );
      assertEquals([piped.code, piped.stderr], [0, ""]);
      assert(piped.stdout.includes("1. tcp a:1"), piped.stdout);
    }),
);
