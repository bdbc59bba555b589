/**
 * Statistics and formatting of a bench's samples: medians, percentiles,
 * milliseconds and megabytes as the table shows them, the run count, and
 * progress lines on stderr.
 *
 * Benchmarks measure; nothing here asserts a timing.
 *
 * @module
 */

/** The median of `xs` (NaN for none). */
export function median(xs: readonly number[]): number {
  return percentile(xs, 50);
}

/** The p-th percentile of `xs`, linear between neighbours (NaN for none). */
export function percentile(xs: readonly number[], p: number): number {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  const rank = (p / 100) * (s.length - 1);
  const lo = Math.floor(rank);
  const hi = Math.ceil(rank);
  return s[lo]! + (s[hi]! - s[lo]!) * (rank - lo);
}

/** `12.3 ms`, `1.24 s`. */
export function fmtMs(ms: number): string {
  if (!Number.isFinite(ms)) return "n/a";
  if (ms >= 1000) return `${(ms / 1000).toFixed(2)} s`;
  if (ms >= 100) return `${ms.toFixed(0)} ms`;
  return `${ms.toFixed(1)} ms`;
}

/** `41.2 MB` from kilobytes. */
export function fmtKb(kb: number): string {
  if (!Number.isFinite(kb)) return "n/a";
  return `${(kb / 1024).toFixed(1)} MB`;
}

/** `median 12.3 ms, p95 14.0 ms (n=25)`. */
export function fmtSample(xs: readonly number[]): string {
  return `median ${fmtMs(median(xs))}, p95 ${fmtMs(percentile(xs, 95))} (n=${xs.length})`;
}

/** How many repetitions timing entries use: WAITCMD_BENCH_RUNS, at least 5, default 25. */
export function benchRuns(): number {
  const n = Number(Deno.env.get("WAITCMD_BENCH_RUNS") ?? "25");
  return Number.isInteger(n) && n >= 5 ? n : 25;
}

/** A progress line on stderr (the table itself goes to stdout). */
export function progress(text: string): void {
  console.error(`bench: ${text}`);
}
