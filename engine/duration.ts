/**
 * Durations as users type them (`500ms`, `30s`, `1h30m`, `30d`, a bare number
 * of seconds) and as waitcmd prints them.
 *
 * @module
 */

const UNIT_MS: Record<string, number> = {
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
  d: 86_400_000,
};

const PART = /(\d+(?:\.\d+)?|\.\d+)(ms|s|m|h|d)/y;

/** Parses a duration into milliseconds, or returns undefined when it is not one. */
export function parseDuration(text: string): number | undefined {
  const s = text.trim();
  if (s === "") return undefined;
  if (/^(\d+(\.\d+)?|\.\d+)$/.test(s)) return Math.round(Number(s) * 1000);
  let total = 0;
  let at = 0;
  PART.lastIndex = 0;
  while (at < s.length) {
    PART.lastIndex = at;
    const m = PART.exec(s);
    if (!m) return undefined;
    total += Number(m[1]) * UNIT_MS[m[2]!]!;
    at = PART.lastIndex;
  }
  if (!Number.isFinite(total)) return undefined;
  return Math.round(total);
}

/** Formats milliseconds the way users type them: `500ms`, `1.5s`, `2m`, `1h30m`, `30d`. */
export function formatDuration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)}ms`;
  if (ms < 60_000) return `${trimNumber(ms / 1000)}s`;
  let rest = Math.round(ms / 1000);
  const parts: string[] = [];
  for (const [unit, secs] of [["d", 86400], ["h", 3600], ["m", 60], ["s", 1]] as const) {
    const n = Math.floor(rest / secs);
    if (n > 0) parts.push(`${n}${unit}`);
    rest -= n * secs;
  }
  return parts.join("");
}

/** Seconds with one decimal, as in progress lines: `4.0s`. */
export function formatElapsed(ms: number): string {
  return `${(ms / 1000).toFixed(1)}s`;
}

function trimNumber(n: number): string {
  return String(Math.round(n * 1000) / 1000);
}
