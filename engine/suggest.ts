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

/**
 * The condition a word that names no kind was probably meant to be, when the
 * word looks like a target: `localhost:8080` → `tcp localhost:8080`, a URL →
 * `http <URL>`, a path → `file <path>`, and wait-on's resource forms
 * (`tcp:db:5432`, `http-get://…`, `socket:/run/x.sock`, `file:/tmp/x`) →
 * waitcmd's. `hasKind` says which kind words exist; undefined when nothing fits.
 */
export function conditionFor(word: string, hasKind: (kind: string) => boolean): string | undefined {
  const suggest = (kind: string, target: string) =>
    hasKind(kind) && target !== "" ? `${kind} ${target}` : undefined;
  const hostPort = /^(\[[0-9A-Fa-f:.%]+\]|[A-Za-z0-9_][A-Za-z0-9_.-]*):\d{1,5}$/;
  let m: RegExpExecArray | null;
  if (/^https?:\/\/./i.test(word)) return suggest("http", word);
  if ((m = /^(https?)-get:(?:\/\/)?(.+)$/i.exec(word))) {
    return suggest("http", `${m[1]!.toLowerCase()}://${m[2]}`);
  }
  if ((m = /^tcp:(?:\/\/)?(.+)$/i.exec(word))) {
    return suggest("tcp", /^\d{1,5}$/.test(m[1]!) ? `localhost:${m[1]}` : m[1]!);
  }
  if ((m = /^(?:socket|unix):(?:\/\/)?(.+)$/i.exec(word))) return suggest("unix", m[1]!);
  if ((m = /^file:(?:\/\/)?(.+)$/i.exec(word))) return suggest("file", m[1]!);
  if (/^s3:\/\/./i.test(word)) return suggest("s3", word);
  if (hostPort.test(word)) return suggest("tcp", word);
  if (/^\d{1,5}$/.test(word)) return suggest("tcp", `localhost:${word}`);
  if (/^(\/|\.\.?\/|~\/)./.test(word)) return suggest("file", word);
  return undefined;
}
