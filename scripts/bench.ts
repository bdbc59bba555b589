/**
 * The benchmark suite: `deno task bench [NAME...]`.
 *
 * Discovers `scripts/bench/*_bench.ts` (each exports `entries: BenchEntry[]`),
 * runs the entries one after another and prints ONE table on stdout:
 * measurement | figure | target | reference | met?. Progress goes to stderr.
 *
 * NAME selects what runs: a module's short name (`core` for core_bench.ts,
 * `cost` for cost_bench.ts) runs all its entries; any other word runs the
 * entries whose name contains it (case-insensitive). `--json` prints the
 * rows as JSON instead of a table.
 *
 * Exit status: 0 when every entry ran (missed targets are reported, not
 * failed), 1 when an entry could not run at all or reported a violation that
 * must fail the bench (e.g. a heavy SDK in waitcmd's start-up graph), 2 for
 * an unknown NAME.
 *
 * @module
 */

import type { BenchEntry, BenchRow } from "./bench/_types.ts";
import { BenchFailure, denoVersion, ensureBundle } from "./bench/_forms.ts";

const benchDir = new URL("./bench/", import.meta.url);

interface Module {
  readonly short: string;
  readonly file: string;
}

async function discover(): Promise<Module[]> {
  const mods: Module[] = [];
  for await (const e of Deno.readDir(benchDir)) {
    if (e.isFile && e.name.endsWith("_bench.ts") && !e.name.startsWith("_")) {
      mods.push({ short: e.name.slice(0, -"_bench.ts".length), file: e.name });
    }
  }
  return mods.sort((a, b) => a.short.localeCompare(b.short));
}

async function load(m: Module): Promise<BenchEntry[]> {
  const mod = await import(new URL(m.file, benchDir).href);
  if (!Array.isArray(mod.entries)) {
    throw new Error(`Cannot load ${m.file}: it does not export entries: BenchEntry[]`);
  }
  return mod.entries as BenchEntry[];
}

interface Outcome {
  readonly rows: BenchRow[];
  readonly failures: string[];
}

async function runEntries(selected: { module: string; entry: BenchEntry }[]): Promise<Outcome> {
  const rows: BenchRow[] = [];
  const failures: string[] = [];
  for (const { module, entry } of selected) {
    console.error(`bench: == ${module}: ${entry.name}`);
    const t0 = performance.now();
    try {
      const got = await entry.run();
      rows.push(...got);
    } catch (e) {
      const msg = e instanceof Error ? e.message : String(e);
      if (e instanceof BenchFailure) {
        rows.push(...e.rows);
        failures.push(`${entry.name}: ${msg}`);
      } else {
        rows.push({ name: entry.name, figure: `could not run: ${msg}`, target: "", ok: false });
        failures.push(`${entry.name}: could not run: ${msg}`);
      }
    }
    console.error(`bench:    done in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  }
  return { rows, failures };
}

/** The rows as one plain-text table, columns padded to their widest cell. */
export function renderTable(rows: readonly BenchRow[]): string {
  const header = ["measurement", "figure", "target", "reference", "met?"];
  const cells = rows.map((r) => [
    r.name,
    r.figure,
    r.target,
    r.reference ?? "",
    r.ok === undefined ? "" : r.ok ? "yes" : "NO",
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...cells.map((c) => c[i]!.length)));
  const line = (c: string[]) => "| " + c.map((x, i) => x.padEnd(widths[i]!)).join(" | ") + " |";
  const sep = "|" + widths.map((w) => "-".repeat(w + 2)).join("|") + "|";
  return [line(header), sep, ...cells.map(line)].join("\n") + "\n";
}

async function mainBench(args: string[]): Promise<number> {
  const json = args.includes("--json");
  const words = args.filter((a) => a !== "--json").map((a) => a.toLowerCase());
  const modules = await discover();
  const byShort = new Set(modules.map((m) => m.short));
  const moduleWords = words.filter((w) => byShort.has(w));
  const entryWords = words.filter((w) => !byShort.has(w));

  const selected: { module: string; entry: BenchEntry }[] = [];
  for (const m of modules) {
    const wholeModule = words.length === 0 || moduleWords.includes(m.short);
    if (!wholeModule && entryWords.length === 0) continue; // Not asked for: not even imported.
    let entries: BenchEntry[];
    try {
      entries = await load(m);
    } catch (e) {
      console.error(`bench: ${m.file}: ${e instanceof Error ? e.message : e}`);
      return 1;
    }
    for (const entry of entries) {
      const hit = wholeModule || entryWords.some((w) => entry.name.toLowerCase().includes(w));
      if (hit) selected.push({ module: m.short, entry });
    }
  }
  if (selected.length === 0) {
    console.error(
      `bench: nothing matches ${words.map((w) => JSON.stringify(w)).join(", ")}; ` +
        `modules: ${modules.map((m) => m.short).join(", ")}`,
    );
    return 2;
  }

  // The npm packages where the set-up commands put them, so waitcmd starts as it does after set-up.
  const packages = await new Deno.Command(new URL("./packages", import.meta.url).pathname, {
    stdout: "null",
    stderr: "inherit",
  }).output();
  if (!packages.success) {
    console.error("bench: scripts/packages failed (see above)");
    return 1;
  }
  // The release bundle the start-up rows compare with the sources, built once if need be.
  try {
    await ensureBundle();
  } catch (e) {
    console.error(
      `bench: the release bundle could not be built: ${e instanceof Error ? e.message : e}`,
    );
    return 1;
  }
  const started = new Date();
  const { rows, failures } = await runEntries(selected);
  const load1 = (() => {
    try {
      return Deno.loadavg()[0]!.toFixed(2);
    } catch {
      return "?";
    }
  })();
  const about =
    `waitcmd bench, ${started.toISOString()}: ${await denoVersion()}, ${Deno.build.target}, ` +
    `${navigator.hardwareConcurrency} CPUs, load average ${load1} at the end`;
  if (json) {
    console.log(JSON.stringify({ about, rows, failures }, null, 2));
  } else {
    console.log(about);
    console.log(renderTable(rows));
  }
  for (const f of failures) console.error(`bench: FAILED: ${f}`);
  return failures.length > 0 ? 1 : 0;
}

if (import.meta.main) {
  Deno.exit(await mainBench(Deno.args));
}
