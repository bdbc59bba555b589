/**
 * Data-store kinds: time to verdict of `postgres`, `mysql` and `redis`
 * against a ready server, side by side with wait4x's same check in the same
 * run (interleaved), and the cost of importing each kind's driver under
 * Deno (warm cache), with node's built-ins that every driver needs shown
 * apart, and of loading each probe module the way waitcmd does (npm
 * resolution included). Target: within 2x of wait4x.
 *
 * The servers are the test suite's throwaway instances (PostgreSQL 15,
 * MariaDB 10.11, Redis 7 from Debian; tests/services/). wait4x is a
 * prebuilt peer: WAITCMD_BENCH_WAIT4X names its binary, else it is unpacked
 * from the peers directory (WAITCMD_PEERS_DIR, default `shared/peers` beside the repository,
 * through its install.sh) into the bench's tool cache.
 *
 * Run alone: `scripts/deno run -A scripts/bench/datastore_bench.ts`, or
 * `deno task bench datastore`.
 *
 * @module
 */

import type { BenchEntry, BenchRow } from "./_types.ts";
import {
  bothForms,
  denoScript,
  DRIVER_GOAL_MS,
  ensureBundle,
  launcherNpmFlags,
  repoRoot,
  rssRuns,
  sideBySideRow,
  usageBothForms,
} from "./_forms.ts";
import { interleave, tempDir } from "./_run.ts";
import { benchRuns, fmtSample, progress } from "./_stats.ts";
import { peerBin } from "./_tools.ts";
import { makePostgres, PG_PASSWORD, PG_USER } from "../../conditions/postgres/_service.ts";
import { makeMariadb, MY_PASSWORD, MY_USER } from "../../conditions/mysql/_service.ts";
import { makeRedis } from "../../conditions/redis/_service.ts";

/** Runs of the import-cost measurement per driver. */
const IMPORT_RUNS = 11;

async function timeToVerdict(): Promise<BenchRow[]> {
  const runs = benchRuns();
  const peer = await peerBin("wait4x", "WAITCMD_BENCH_WAIT4X");
  progress("starting PostgreSQL, MariaDB and Redis");
  const [pg, my, rd] = await Promise.all([makePostgres(), makeMariadb(), makeRedis()]);
  try {
    const kinds = [
      {
        kind: "postgres",
        waitcmd: ["postgres", pg.url()],
        // lib/pq's default sslmode is require; the server is plain text.
        wait4x: [
          "postgresql",
          `postgres://${PG_USER}:${PG_PASSWORD}@127.0.0.1:${pg.port}/app?sslmode=disable`,
        ],
      },
      {
        kind: "mysql",
        waitcmd: ["mysql", my.url()],
        wait4x: ["mysql", `${MY_USER}:${MY_PASSWORD}@tcp(127.0.0.1:${my.port})/app`],
      },
      {
        kind: "redis",
        waitcmd: ["redis", rd.url()],
        wait4x: ["redis", rd.url(undefined, undefined, 0)],
      },
    ];
    const rows: BenchRow[] = [];
    await ensureBundle();
    for (const k of kinds) {
      progress(`time to verdict, ${k.kind}: ${runs} runs each, interleaved`);
      const args = ["--timeout", "20s", ...k.waitcmd];
      const commands: Record<string, string[]> = bothForms("waitcmd", args);
      if ("bin" in peer) commands.wait4x = [peer.bin, "--timeout", "20s", ...k.wait4x];
      const t = await interleave(commands, runs);
      progress(`peak RSS, ${k.kind}: ${rssRuns()} runs of each form`);
      rows.push(sideBySideRow({
        name: `time to verdict, ${k.kind} (ready server)`,
        bundle: t["waitcmd (bundle)"]!,
        source: t.waitcmd!,
        usage: await usageBothForms(args, rssRuns()),
        goalMs: DRIVER_GOAL_MS,
        ...("bin" in peer
          ? { peer: { name: "wait4x", times: t.wait4x! } }
          : { peerMissing: `wait4x not available: ${peer.error}` }),
      }));
    }
    return rows;
  } finally {
    await Promise.all([pg.remove(), my.remove(), rd.remove()]);
  }
}

/**
 * What each import-cost run imports: node's built-ins alone, each driver
 * after them, and each kind's probe module the way waitcmd loads it (with
 * `--unstable-lazy-dynamic-imports`: Deno resolves the npm packages at that
 * import, so the figure holds resolution, built-ins and driver together).
 */
const IMPORTS: { name: string; code: string; lazy?: boolean }[] = [
  {
    name: "node built-ins (net, tls, crypto, dns)",
    code:
      "const t = performance.now(); await Promise.all(['node:net', 'node:tls', 'node:crypto', 'node:dns'].map((m) => import(m)));",
  },
  ...["pg", "mysql2", "@redis/client"].map((pkg) => ({
    name: `${pkg} (after the built-ins)`,
    code:
      `await Promise.all(['node:net', 'node:tls', 'node:crypto', 'node:dns'].map((m) => import(m))); const t = performance.now(); await import('${pkg}');`,
  })),
  ...["postgres", "mysql", "redis"].map((kind) => ({
    name: `${kind} probe module, as waitcmd loads it`,
    code: `const t = performance.now(); await import('${repoRoot}/conditions/${kind}/probe.ts');`,
    lazy: true,
  })),
];

async function importCost(): Promise<BenchRow[]> {
  const dir = await tempDir("waitcmd-bench-import-");
  try {
    const rows: BenchRow[] = [];
    const npm = await launcherNpmFlags();
    for (const imp of IMPORTS) {
      const file = `${dir.path}/import.ts`;
      await Deno.writeTextFile(
        file,
        `${imp.code}\nconsole.log((performance.now() - t).toFixed(2));\n`,
      );
      const times: number[] = [];
      // One unmeasured run warms Deno's caches.
      for (let i = 0; i <= IMPORT_RUNS; i++) {
        const out = await new Deno.Command(denoScript, {
          args: [
            "run",
            "-A",
            "--quiet",
            ...(imp.lazy ? ["--unstable-lazy-dynamic-imports"] : []),
            ...npm,
            "--config",
            `${repoRoot}/deno.json`,
            file,
          ],
          stdout: "piped",
          stderr: "piped",
        }).output();
        if (!out.success) {
          throw new Error(`importing ${imp.name}: ${new TextDecoder().decode(out.stderr).trim()}`);
        }
        if (i > 0) times.push(Number(new TextDecoder().decode(out.stdout).trim()));
      }
      rows.push({
        name: `import cost under Deno, ${imp.name}`,
        figure: fmtSample(times),
        target: "",
      });
    }
    return rows;
  } finally {
    await dir.remove();
  }
}

/** The bench entries of this module. */
export const entries: BenchEntry[] = [
  { name: "data-store time to verdict vs wait4x", run: timeToVerdict },
  { name: "data-store driver import cost", run: importCost },
];

if (import.meta.main) {
  for (const e of entries) {
    for (const r of await e.run()) {
      const verdict = r.ok === undefined ? "" : r.ok ? "  ok" : "  MISSED";
      console.log(`${r.name}: ${r.figure}${r.target ? ` (target ${r.target})` : ""}${verdict}`);
      if (r.reference) console.log(`  ${r.reference}`);
    }
  }
}
