/**
 * "Did you mean" suggestions for mistyped kinds, flags and values.
 *
 * @module
 */

/** Edit distance counting an adjacent transposition as one edit ("tpc" is 1 from "tcp"). */
export function editDistance(a: string, b: string): number {
  const d: number[][] = Array.from(
    { length: a.length + 1 },
    (_, i) => Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  );
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let v = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) {
        v = Math.min(v, d[i - 2]![j - 2]! + 1);
      }
      d[i]![j] = v;
    }
  }
  return d[a.length]![b.length]!;
}

/** The closest candidate to `word`, if one is close enough to be a plausible typo. */
export function closest(word: string, candidates: Iterable<string>): string | undefined {
  const w = word.toLowerCase();
  const limit = Math.max(1, Math.floor(w.length / 3));
  let best: string | undefined;
  let bestScore = Infinity;
  for (const c of candidates) {
    const lc = c.toLowerCase();
    // A prefix ("--cont" for "--contains") is a strong hint even when far in edits.
    const prefix = w.length >= 3 && lc.startsWith(w);
    // The length difference is a lower bound of the distance: a word far longer than every
    // candidate (a pasted blob) costs no table of its length times theirs.
    if (!prefix && Math.abs(w.length - lc.length) > limit) continue;
    const score = w === lc ? 0 : prefix ? 1 : editDistance(w, lc);
    if (score < bestScore) {
      bestScore = score;
      best = c;
    }
  }
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

/**
 * The condition a word that names no kind was probably meant to be, when a
 * kind claims the word as its target (`localhost:8080` → `tcp
 * localhost:8080`): the first claim in the registry's order, else undefined.
 */
export function conditionFor(
  word: string,
  kinds: readonly { claims?(word: string): string | undefined }[],
): string | undefined {
  for (const k of kinds) {
    const meant = k.claims?.(word);
    if (meant !== undefined) return meant;
  }
  return undefined;
}
