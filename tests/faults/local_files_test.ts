/**
 * Hostile local files and limits (docs/reliability.md): a directory a glob
 * cannot read, a zip of very many entries, a trusted root of the wrong shape,
 * and the error texts of a process out of descriptors. Each gives the verdict
 * the contract states (pending with the reason, bounded memory and time, a
 * usage error, one short text), never a false success or a raw library text.
 */

import { assert, assertEquals, assertStringIncludes } from "../_assert.ts";
import { ignoreWithout } from "../_kit.ts";
import { cliTest, runCli, usageErrorLine, WAITCMD } from "../e2e/_cli.ts";
import { makeSigstore } from "../../conditions/cosign/_service.ts";
import { peakRss, sh, spawnWaitcmd } from "./_proc.ts";
import { inTempDir } from "../services/_util.ts";

const opts = { sanitizeResources: false, sanitizeOps: false };
const notRoot = Deno.uid() === 0 ? undefined : "the test runs waitcmd as user nobody (root)";

Deno.test({
  name: "files: glob --absent on a directory it cannot read stays pending (permission denied)",
  ignore: ignoreWithout("root", notRoot),
  ...opts,
  fn: () =>
    inTempDir("waitcmd-glob-")(async (dir) => {
      await sh(`chmod 755 '${dir}' && mkdir '${dir}/root-only' && touch '${dir}/root-only/a.lock'`);
      await sh(`chmod 700 '${dir}/root-only'`);
      const home = await Deno.makeTempDir({ prefix: "waitcmd-home-" });
      await sh(`chmod 777 '${home}'`);
      const out = await new Deno.Command("setpriv", {
        args: [
          ...["--reuid=nobody", "--regid=nogroup", "--clear-groups", WAITCMD, "--timeout", "1s"],
          ...["--output", "json", "glob", `${dir}/root-only/*.lock`, "--absent"],
        ],
        env: { HOME: home, NO_COLOR: "1" },
        stdout: "piped",
        stderr: "piped",
      }).output();
      await Deno.remove(home, { recursive: true });
      const report = JSON.parse(new TextDecoder().decode(out.stdout));
      assertEquals([out.code, report.status], [1, "timeout"]);
      assertEquals(
        report.conditions[0].last_error,
        `permission denied: readdir '${dir}/root-only'`,
      );
    }),
});

/** A zip of `n` empty entries, made by Python's zipfile (fast; zip(1) would need the files). */
async function emptyEntriesZip(path: string, n: number): Promise<void> {
  await sh(
    `python3 -c "import zipfile
with zipfile.ZipFile('${path}', 'w') as z:
    for i in range(${n}): z.writestr(f'd/f{i}.txt', b'')"`,
  );
}

/** Runs waitcmd on `args`, sampling its peak RSS; the report and the peak. */
async function measured(args: string[]) {
  const w = spawnWaitcmd(["--output", "json", ...args]);
  let peak = 0;
  let over = false;
  const done = w.ended(120_000).finally(() => over = true);
  while (!over) {
    peak = Math.max(peak, peakRss(w.child.pid));
    await new Promise((r) => setTimeout(r, 50));
  }
  const r = await done;
  return { ...r, report: JSON.parse(r.stdout), peak };
}

/** `archive` on a zip of `n` empty entries (in a directory of its own): in bounded memory. */
function measuredZip(n: number, timeout: string) {
  return inTempDir("waitcmd-zip-")(async (dir) => {
    await emptyEntriesZip(`${dir}/entries.zip`, n);
    const r = await measured(["--timeout", timeout, "archive", `${dir}/entries.zip`]);
    assert(r.peak < 500 << 20, `peak RSS ${(r.peak / 1048576).toFixed(0)} MB`);
    return r;
  });
}

cliTest("files: a zip of 100,000 empty entries is read in bounded memory and time", async () => {
  const r = await measuredZip(100_000, "30s");
  assertEquals([r.code, r.hung, r.report.status], [0, false, "satisfied"], r.stderr);
  assertEquals(r.report.conditions[0].detail, "zip, 100000 members");
});

cliTest(
  "files: a zip of more than 100,000 entries is pending with the cap, memory bounded",
  async () => {
    const r = await measuredZip(150_000, "10s");
    assertEquals([r.code, r.hung, r.report.status], [1, false, "timeout"], r.stderr);
    assertStringIncludes(
      r.report.conditions[0].last_error,
      "cannot read the zip archive (14.4 MiB): it has more than 100,000 members " +
        "(waitcmd reads at most 100,000)",
    );
  },
);

cliTest("files: a trusted root whose certificateAuthorities is 5 is a usage error", async () => {
  const dir = await Deno.makeTempDir({ prefix: "waitcmd-root-" });
  const sigstore = await makeSigstore();
  try {
    const root = JSON.parse(sigstore.trustedRoot);
    root.certificateAuthorities = 5;
    await Deno.writeTextFile(`${dir}/root.json`, JSON.stringify(root));
    await Deno.writeTextFile(`${dir}/blob`, "x");
    const line = usageErrorLine(
      await runCli([
        ...["--timeout", "5s", "cosign", "--blob", `${dir}/blob`],
        ...["--bundle", `${dir}/blob.sigstore.json`, "--trusted-root", `${dir}/root.json`],
      ]),
    );
    assertEquals(
      line,
      `waitcmd: condition 1 (cosign): --trusted-root: cannot read --trusted-root ${dir}/root.json: ` +
        "not a Sigstore trusted root (certificateAuthorities is a number, not a list) " +
        "(see: waitcmd help cosign)",
    );
  } finally {
    await sigstore.close();
    await Deno.remove(dir, { recursive: true });
  }
});

cliTest(
  "files: out of descriptors, attempts say `too many open files`, never `emfile`",
  async () => {
    const words = Array.from({ length: 60 }, (_, i) => [
      ...(i > 0 ? ["--"] : []),
      "http",
      "http://127.0.0.1:1/",
      "--label",
      `c${i}`,
    ]).flat();
    const out = await new Deno.Command("sh", {
      args: [
        ...["-c", 'ulimit -n 40; exec "$0" "$@"', WAITCMD, "--timeout", "2s", "-o", "json"],
        ...words,
      ],
      env: { NO_COLOR: "1" },
      stdout: "piped",
      stderr: "piped",
    }).output();
    const report = JSON.parse(new TextDecoder().decode(out.stdout));
    const errors = new Set<string>(
      report.conditions.map((c: { last_error: string }) => c.last_error),
    );
    assert(errors.has("too many open files"), [...errors].join(" | "));
    for (const e of errors) {
      assert(["too many open files", "connection refused"].includes(e), `raw text: ${e}`);
    }
  },
);
