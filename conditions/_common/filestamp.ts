/**
 * Results computed from a file's content (a digest, an archive's listing, a
 * signature check), kept until the file changes: the kinds that read whole
 * files (checksum, archive, cosign) read them again only when a `stat`
 * shows another size, mtime or inode, or when the watcher reports a change
 * (docs/contract.md §5 checksum). A file that changes while it is read is
 * reported as still being written.
 *
 * @module
 */

/** What identifies one version of a file: a change in any field means new content. */
export interface FileStamp {
  readonly size: number;
  /** Modification time in ms (sub-ms precision where the file system has it). */
  readonly mtime: number;
  readonly ino: number | null;
  readonly dev: number;
}

/**
 * `Deno.stat(path)`, or undefined when nothing is there; any other failure (permission
 * denied, a loop of links) is thrown: the runner reports it as a pending attempt.
 */
export async function statIfExists(path: string): Promise<Deno.FileInfo | undefined> {
  try {
    return await Deno.stat(path);
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return undefined;
    throw e;
  }
}

/** The stamp of a `stat` result. */
export function stampOf(info: Deno.FileInfo): FileStamp {
  return {
    size: info.size,
    mtime: info.mtime?.getTime() ?? -1,
    ino: info.ino,
    dev: info.dev,
  };
}

/** Whether two stamps name the same version of a file. */
export function sameStamp(a: FileStamp | undefined, b: FileStamp | undefined): boolean {
  return a !== undefined && b !== undefined && a.size === b.size && a.mtime === b.mtime &&
    a.ino === b.ino && a.dev === b.dev;
}

/** Thrown when a file changed while it was being read: the attempt is pending. */
export class StillWritingError extends Error {
  override name = "StillWritingError";
  constructor(what: string) {
    super(`${what} changed while it was read (still being written?)`);
  }
}

/**
 * Checks after a read that `path` is still the version `before` stamped;
 * throws `StillWritingError` otherwise (a write, a truncation, a rename over
 * it). `what` names the file in the message.
 */
export async function assertUnchanged(
  path: string,
  before: FileStamp,
  what: string,
): Promise<void> {
  let after: FileStamp;
  try {
    after = stampOf(await Deno.stat(path));
  } catch {
    throw new StillWritingError(what);
  }
  if (!sameStamp(before, after)) throw new StillWritingError(what);
}

/**
 * One result per set of file versions. `invalidate` (called on a watch
 * event) drops it even when the stamps look the same, which covers writes
 * within the file system's timestamp granularity; a result computed while an
 * invalidation happened is not kept.
 */
export class ContentCache<T> {
  #stamps: readonly FileStamp[] = [];
  #value: T | undefined;
  #has = false;
  #generation = 0;

  /** Forgets the result: the next `get` misses. */
  invalidate(): void {
    this.#generation++;
    this.#has = false;
  }

  /** The generation to pass to `set` for a computation starting now. */
  begin(): number {
    return this.#generation;
  }

  /** The kept result for exactly these file versions, if any. */
  get(stamps: readonly FileStamp[]): T | undefined {
    if (!this.#has || stamps.length !== this.#stamps.length) return undefined;
    return stamps.every((s, i) => sameStamp(s, this.#stamps[i])) ? this.#value : undefined;
  }

  /** Keeps `value` for `stamps`, unless an invalidation came after `generation` began. */
  set(stamps: readonly FileStamp[], value: T, generation: number): void {
    if (generation !== this.#generation) return;
    this.#stamps = stamps;
    this.#value = value;
    this.#has = true;
  }
}

/** Passes `source`'s change notifications on, invalidating `cache` before each one. */
export async function* invalidating<T>(
  source: AsyncIterable<T>,
  cache: { invalidate(): void },
): AsyncIterable<T> {
  for await (const x of source) {
    cache.invalidate();
    yield x;
  }
}

/**
 * Every value of each source, as they come (for a kind that watches several
 * paths). Ends when all sources have ended; stopping early stops them all.
 */
export async function* mergeIterables<T>(sources: readonly AsyncIterable<T>[]): AsyncIterable<T> {
  const its = sources.map((s) => s[Symbol.asyncIterator]());
  const next = (i: number) => its[i]!.next().then((r) => ({ i, r }));
  const inFlight = new Map<number, Promise<{ i: number; r: IteratorResult<T> }>>();
  its.forEach((_, i) => inFlight.set(i, next(i)));
  try {
    while (inFlight.size > 0) {
      const { i, r } = await Promise.race(inFlight.values());
      if (r.done) {
        inFlight.delete(i);
        continue;
      }
      inFlight.set(i, next(i));
      yield r.value;
    }
  } finally {
    // Not awaited: an async generator's return waits for its pending next, which ends
    // when the watch's signal aborts (the run's end) and not before.
    for (const it of its) Promise.resolve(it.return?.()).catch(() => {});
  }
}
