/**
 * "Did you mean" suggestions for mistyped kinds, flags and values.
 *
 * @module
 */

/** Levenshtein distance between two strings. */
export function editDistance(a: string, b: string): number {
  const prev = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    let diag = prev[0]!;
    prev[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const above = prev[j]!;
      prev[j] = Math.min(
        above + 1,
        prev[j - 1]! + 1,
        diag + (a[i - 1] === b[j - 1] ? 0 : 1),
      );
      diag = above;
    }
  }
  return prev[b.length]!;
}

/** The closest candidate to `word`, if one is close enough to be a plausible typo. */
export function closest(word: string, candidates: Iterable<string>): string | undefined {
  const w = word.toLowerCase();
  let best: string | undefined;
  let bestScore = Infinity;
  for (const c of candidates) {
    const lc = c.toLowerCase();
    let score = editDistance(w, lc);
    // A prefix ("--cont" for "--contains") is a strong hint even when far in edits.
    if (w.length >= 3 && lc.startsWith(w)) score = Math.min(score, 1);
    if (score < bestScore) {
      bestScore = score;
      best = c;
    }
  }
  const limit = Math.max(1, Math.floor(w.length / 3));
  return bestScore <= limit ? best : undefined;
}

/** ` (did you mean X?)`, or empty when nothing is close. */
export function didYouMean(
  word: string,
  candidates: Iterable<string>,
  render: (s: string) => string = (s) => s,
): string {
  const c = closest(word, candidates);
  return c === undefined ? "" : ` (did you mean ${render(c)}?)`;
}
