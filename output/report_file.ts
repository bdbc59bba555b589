/**
 * `--report FILE` (docs/contract.md §7): checked before the wait, written
 * after it, safely. A regular file (or a new one) is replaced atomically: a
 * temporary file with an unpredictable name is created exclusively beside
 * it (never through a link someone planted), given the old file's mode, and
 * renamed over it; a link at the path is replaced, not followed. A target
 * that is not a regular file (a device, a FIFO, `/dev/stdout`) is written
 * directly, never replaced, but only through a link of ours or root's: a
 * link another user owns is replaced like a missing file.
 *
 * @module
 */

import { describeError, UsageError } from "../engine/errors.ts";

/** How long the report may wait to be written into a FIFO nobody reads. */
const DIRECT_WRITE_MS = 2000;

/** The directory a file path lives in. */
function dirOf(path: string): string {
  const slash = path.lastIndexOf("/");
  return slash < 0 ? "." : slash === 0 ? "/" : path.slice(0, slash);
}

/** A name no other process can guess: the temporary file beside the report. */
function tempName(path: string): string {
  const bytes = crypto.getRandomValues(new Uint8Array(12));
  const tag = Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
  return `${dirOf(path)}/.waitcmd-report-${tag}.tmp`;
}

/**
 * What the path names once links are followed, or undefined when nothing is there or the
 * path is a link that must not be followed: one owned by another user than us and root
 * (planted in a shared directory such as /tmp), which is replaced like a missing file.
 */
async function targetOf(path: string): Promise<Deno.FileInfo | undefined> {
  try {
    const link = await Deno.lstat(path);
    if (link.isSymlink && link.uid !== Deno.uid() && link.uid !== 0) return undefined;
    return await Deno.stat(path);
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return undefined;
    throw e;
  }
}

/** Whether the report goes straight into what `path` names (not a regular file). */
function direct(info: Deno.FileInfo | undefined): boolean {
  return info !== undefined && !info.isFile && !info.isDirectory;
}

/**
 * The report file must be writable before the wait starts: its directory
 * exists and takes a new file, or it names something that takes writes
 * (docs/contract.md §7). A usage error otherwise.
 */
export async function checkReportFile(path: string): Promise<void> {
  try {
    const info = await targetOf(path);
    if (info?.isDirectory) throw new Error("is a directory");
    if (direct(info)) return;
    const probe = tempName(path);
    await Deno.writeFile(probe, new Uint8Array(), { createNew: true, mode: 0o600 });
    await Deno.remove(probe);
  } catch (e) {
    const why = e instanceof Deno.errors.NotFound
      ? `directory ${dirOf(path)} does not exist`
      : describeError(e).replace(/: \w+ '.*'$/, "");
    throw new UsageError("--report", `cannot write ${path}: ${why}`);
  }
}

/** Writes the report (see the module's rules); throws what failed. */
export async function writeReportFile(path: string, text: string): Promise<void> {
  const data = new TextEncoder().encode(text);
  const info = await targetOf(path);
  if (direct(info)) return await writeDirect(path, data);
  const tmp = tempName(path);
  try {
    // createNew: O_EXCL, so a link planted at the temporary name is never followed.
    await Deno.writeFile(tmp, data, { createNew: true, mode: 0o600 });
    const mode = info?.mode ?? (0o666 & ~Deno.umask());
    await Deno.chmod(tmp, mode & 0o7777);
    await Deno.rename(tmp, path);
  } catch (e) {
    await Deno.remove(tmp).catch(() => {});
    throw e;
  }
}

/** Into a device, a FIFO or a terminal as it is; a FIFO nobody reads is given up on. */
function writeDirect(path: string, data: Uint8Array, what = "the report"): Promise<void> {
  return bounded(what, async () => {
    using file = await Deno.open(path, { write: true });
    await writeAll(file, data);
  });
}

/** Every byte of `data` into `file`. */
async function writeAll(file: Deno.FsFile, data: Uint8Array): Promise<void> {
  let rest = data;
  while (rest.length > 0) rest = rest.subarray(await file.write(rest));
}

/**
 * `write` given {@link DIRECT_WRITE_MS}: opening a FIFO for writing waits for a reader, and
 * a full one for room, in a thread the process cannot take back; the run does not wait for it.
 */
async function bounded(what: string, write: () => Promise<void>): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`nothing took ${what} within ${DIRECT_WRITE_MS / 1000}s`)),
      DIRECT_WRITE_MS,
    );
  });
  const writing = write();
  writing.catch(() => {}); // what fails after the timer is said by the race's rejection already
  try {
    await Promise.race([writing, late]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Appends `text` to the file at `path` by `--report`'s rules (docs/contract.md §6, CI logs): a
 * symbolic link is not followed (an error), a device or a FIFO is written directly and a FIFO
 * nobody reads is given up after 2 s, a regular file is appended to (the one that was looked
 * at: one swapped for another meanwhile is an error), and a missing one is created exclusively.
 * Throws what failed. `what` names the text in the error (`the step summary`).
 */
export async function appendFile(path: string, text: string, what: string): Promise<void> {
  const data = new TextEncoder().encode(text);
  let seen: Deno.FileInfo | undefined;
  try {
    seen = await Deno.lstat(path);
  } catch (e) {
    if (!(e instanceof Deno.errors.NotFound)) throw e;
  }
  if (seen?.isSymlink) throw new Error("is a symbolic link, not followed");
  if (seen?.isDirectory) throw new Error("is a directory");
  if (seen !== undefined && !seen.isFile) return await writeDirect(path, data, what);
  await bounded(what, async () => {
    // createNew: O_EXCL, so a link planted at a missing name is never followed.
    using file = await Deno.open(
      path,
      seen === undefined ? { append: true, createNew: true, mode: 0o666 } : { append: true },
    );
    const now = await file.stat();
    if (seen !== undefined && (now.ino !== seen.ino || now.dev !== seen.dev)) {
      throw new Error("was replaced while it was being opened");
    }
    await writeAll(file, data);
  });
}
