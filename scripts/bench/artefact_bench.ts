/**
 * The file-artefact kinds (checksum, archive) on large files:
 *
 * - `checksum FILE --equals sha256:HEX` on a file of random bytes: wall time
 *   next to `sha256sum` on the same file in the same run (target <= 2x
 *   sha256sum) and waitcmd's peak RSS (target < 100 MB: the digest is
 *   streamed, memory must not grow with the file).
 * - `archive FILE.tar.gz --contains LAST --min-count N` on a tar.gz of the
 *   same bytes cut into 16 members: wall time and peak RSS next to
 *   `tar tzf` on the same file (reference only; no target).
 *
 * Size: WAITCMD_BENCH_ARTEFACT_MB (MiB, default 1024: the 1 GiB of the
 * targets); runs per command: WAITCMD_BENCH_ARTEFACT_RUNS (default 3, the
 * median is reported). The files are made in a temporary directory (page
 * cache warm for both sides) and removed afterwards.
 * `scripts/deno run -A scripts/bench/artefact_bench.ts` runs it alone;
 * `deno task bench artefact` through the suite.
 *
 * @module
 */

import type { BenchEntry, BenchRow } from "./_types.ts";
import { waitcmdScript } from "./_forms.ts";
import { runWithResources } from "./_resources.ts";
import { tempDir } from "./_run.ts";
import { fmtKb, fmtMs, median, progress } from "./_stats.ts";

/** Size of the benchmark file in MiB. */
function sizeMb(): number {
  const n = Number(Deno.env.get("WAITCMD_BENCH_ARTEFACT_MB") ?? "1024");
  return Number.isInteger(n) && n >= 1 ? n : 1024;
}

/** Runs per measured command. */
function runs(): number {
  const n = Number(Deno.env.get("WAITCMD_BENCH_ARTEFACT_RUNS") ?? "3");
  return Number.isInteger(n) && n >= 1 ? n : 3;
}

const RSS_TARGET_MB = 100;
/** Members of the tar.gz. */
const PARTS = 16;

async function bash(script: string): Promise<string> {
  const out = await new Deno.Command("bash", {
    args: ["-c", `set -euo pipefail; ${script}`],
    stdout: "piped",
    stderr: "piped",
  }).output();
  if (!out.success) {
    throw new Error(
      `bash -c '${script}' exited ${out.code}: ${new TextDecoder().decode(out.stderr)}`,
    );
  }
  return new TextDecoder().decode(out.stdout).trim();
}

/** Wall times and the largest peak RSS of `n` runs of `cmd` (each must exit 0). */
async function measure(
  cmd: string[],
  n: number,
): Promise<{ ms: number[]; rssKb: number; method: string }> {
  const ms: number[] = [];
  let rssKb = 0;
  let method = "";
  for (let i = 0; i < n; i++) {
    const r = await runWithResources(cmd, { capture: true, timeoutMs: 30 * 60_000 });
    if (r.code !== 0) {
      throw new Error(`${cmd.join(" ")} exited ${r.code}: ${r.stderr.trim().slice(-500)}`);
    }
    ms.push(r.wallMs);
    rssKb = Math.max(rssKb, r.peakRssKb);
    method = r.method;
  }
  return { ms, rssKb, method };
}

/** A file of `mb` MiB of random bytes in `dir`. */
async function randomFile(dir: string, mb: number): Promise<string> {
  const path = `${dir}/random.bin`;
  progress(`writing ${mb} MiB of random bytes`);
  await bash(`head -c ${mb}M /dev/urandom > ${path}`);
  return path;
}

async function checksumRows(): Promise<BenchRow[]> {
  const mb = sizeMb();
  const n = runs();
  const dir = await tempDir("waitcmd-bench-artefact-");
  try {
    const file = await randomFile(dir.path, mb);
    const hex = (await bash(`sha256sum ${file}`)).split(/\s+/)[0]!;
    const ref = await measure(["sha256sum", file], n);
    const wait = await measure(
      [waitcmdScript, "--quiet", "--timeout", "30m", "checksum", file, "--equals", `sha256:${hex}`],
      n,
    );
    const w = median(wait.ms);
    const s = median(ref.ms);
    const rssMb = wait.rssKb / 1024;
    return [
      {
        name: `checksum sha256, ${mb} MiB file (wall)`,
        figure: `${fmtMs(w)} (median of ${n}; ${(w / s).toFixed(2)}x sha256sum)`,
        target: "<= 2x sha256sum",
        reference: `sha256sum ${fmtMs(s)} (same file, same run; page cache warm)`,
        ok: w <= 2 * s,
      },
      {
        name: `checksum sha256, ${mb} MiB file (peak RSS)`,
        figure: fmtKb(wait.rssKb),
        target: `< ${RSS_TARGET_MB} MB`,
        reference: `sha256sum ${fmtKb(ref.rssKb)} (${wait.method})`,
        ok: rssMb < RSS_TARGET_MB,
      },
    ];
  } finally {
    await dir.remove();
  }
}

async function archiveRows(): Promise<BenchRow[]> {
  const mb = sizeMb();
  const n = runs();
  const dir = await tempDir("waitcmd-bench-artefact-");
  try {
    await randomFile(dir.path, mb);
    progress(`making a ${PARTS}-member tar.gz of it (tar, gzip -1)`);
    await bash(
      `cd ${dir.path} && mkdir parts && split -n ${PARTS} -d -a 2 random.bin parts/part- && rm random.bin` +
        ` && tar cf - parts | gzip -1 > big.tar.gz && rm -r parts`,
    );
    const tgz = `${dir.path}/big.tar.gz`;
    const size = (await Deno.stat(tgz)).size;
    const last = `parts/part-${String(PARTS - 1).padStart(2, "0")}`;
    const ref = await measure(["tar", "tzf", tgz], n);
    const wait = await measure(
      [
        waitcmdScript,
        "--quiet",
        "--timeout",
        "30m",
        "archive",
        tgz,
        "--contains",
        last,
        "--min-count",
        String(PARTS),
      ],
      n,
    );
    const w = median(wait.ms);
    const t = median(ref.ms);
    const gz = `${(size / (1 << 20)).toFixed(0)} MiB tar.gz`;
    return [
      {
        name: `archive listing, ${gz} of ${mb} MiB (wall)`,
        figure: `${fmtMs(w)} (median of ${n}; ${(w / t).toFixed(2)}x tar tzf)`,
        target: "",
        reference: `tar tzf ${fmtMs(t)} (same file, same run)`,
      },
      {
        name: `archive listing, ${gz} (peak RSS)`,
        figure: fmtKb(wait.rssKb),
        target: "",
        reference: `tar tzf ${fmtKb(ref.rssKb)} (${wait.method})`,
      },
    ];
  } finally {
    await dir.remove();
  }
}

/** The bench entries of the file-artefact kinds. */
export const entries: BenchEntry[] = [
  { name: "checksum of a large file", run: checksumRows },
  { name: "archive listing of a large tar.gz", run: archiveRows },
];

if (import.meta.main) {
  for (const e of entries) {
    for (const r of await e.run()) {
      const mark = r.ok === undefined ? "" : r.ok ? "ok  " : "MISS";
      console.log(
        `${mark.padEnd(4)} ${r.name}: ${r.figure} (target ${r.target || "none"})${
          r.reference ? `; ${r.reference}` : ""
        }`,
      );
    }
  }
}
