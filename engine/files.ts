/**
 * Files that feed waitcmd (recipes, manifests, passwords, keys, CA bundles):
 * read whole, with a documented cap (docs/contract.md §9), so `-f
 * /dev/zero` is an error and not gigabytes of memory. Pipes already open
 * (`<(…)`, standard input) are read like files, asynchronously: nothing here
 * blocks the event loop, so the deadline and signals are answered while a
 * read waits. A named pipe (`mkfifo`) is refused: opening it would wait for a
 * writer without end.
 *
 * @module
 */

import { describeError } from "./errors.ts";

/** Why a file could not be read, as one short text. */
export class FileReadError extends Error {
  override name = "FileReadError";
}

/** What a path that is not a regular file is, in words: `a named pipe`. */
export function fileType(info: Deno.FileInfo): string {
  if (info.isFifo) return "a named pipe";
  if (info.isCharDevice) return "a character device";
  if (info.isBlockDevice) return "a block device";
  if (info.isSocket) return "a socket";
  if (info.isDirectory) return "a directory";
  return "not a file";
}

/**
 * Whether `path`, which `stat` found to be a pipe, is a named pipe in the file system (made
 * by `mkfifo`): opening one waits for a writer that may never come, in a thread nothing can
 * take back. A pipe already open (`<(echo pw)`, `/dev/stdin`, `/proc/self/fd/N`) has its
 * writer, and is read like a file.
 */
export async function isNamedPipe(path: string): Promise<boolean> {
  if (/^\/(dev\/(fd\/|std)|proc\/)/.test(path)) return false;
  try {
    return (await Deno.lstat(await Deno.realPath(path))).isFifo === true;
  } catch {
    // An anonymous pipe has no path of its own: realpath fails on it.
    return false;
  }
}

/**
 * The text of `path` (`-`: standard input), at most `maxBytes`; throws a
 * `FileReadError` saying why (`no such file or directory`, `is a
 * directory`, `not a regular file (a named pipe)`, `larger than 4 MiB`).
 * A named pipe (`mkfifo`) is refused before it is opened ({@link isNamedPipe}). `strict`: bytes that are not UTF-8 are
 * an error (`not valid UTF-8`) instead of U+FFFD, for texts whose words are
 * used as they are (a recipe's paths).
 */
export async function readBounded(
  path: string,
  maxBytes: number,
  strict = false,
): Promise<string> {
  let file: { read(p: Uint8Array): Promise<number | null>; close?(): void };
  try {
    if (path === "-") {
      file = Deno.stdin;
    } else {
      const info = await Deno.stat(path);
      if (info.isDirectory) throw new FileReadError("is a directory");
      if (info.isFifo && await isNamedPipe(path)) {
        throw new FileReadError("not a regular file (a named pipe)");
      }
      file = await Deno.open(path, { read: true });
    }
  } catch (e) {
    if (e instanceof FileReadError) throw e;
    throw new FileReadError(
      e instanceof Deno.errors.NotFound
        ? "no such file or directory"
        : describeError(e).replace(/: \w+ '.*'$/, ""),
    );
  }
  try {
    const chunks: Uint8Array[] = [];
    let size = 0;
    const buf = new Uint8Array(64 << 10);
    while (true) {
      const n = await file.read(buf);
      if (n === null) break;
      size += n;
      if (size > maxBytes) throw new FileReadError(`larger than ${formatCap(maxBytes)}`);
      chunks.push(buf.slice(0, n));
    }
    const out = new Uint8Array(size);
    let at = 0;
    for (const c of chunks) {
      out.set(c, at);
      at += c.length;
    }
    try {
      return new TextDecoder("utf-8", { fatal: strict }).decode(out);
    } catch {
      throw new FileReadError("not valid UTF-8");
    }
  } catch (e) {
    if (e instanceof FileReadError) throw e;
    throw new FileReadError(describeError(e));
  } finally {
    if (path !== "-") file.close?.();
  }
}

/** `4 MiB`, `512 KiB`. */
function formatCap(bytes: number): string {
  return bytes >= 1 << 20 ? `${bytes / (1 << 20)} MiB` : `${bytes / 1024} KiB`;
}

/** Whether `b` is well-formed UTF-8 (no overlong forms, no surrogates, nothing above U+10FFFF). */
export function isUtf8(b: Uint8Array): boolean {
  for (let i = 0; i < b.length;) {
    const c = b[i]!;
    if (c < 0x80) {
      i++;
      continue;
    }
    // The first continuation byte's range depends on the lead byte (RFC 3629, table 3-7).
    let n: number, lo = 0x80, hi = 0xbf;
    if (c >= 0xc2 && c <= 0xdf) n = 1;
    else if (c >= 0xe0 && c <= 0xef) {
      n = 2;
      if (c === 0xe0) lo = 0xa0;
      if (c === 0xed) hi = 0x9f;
    } else if (c >= 0xf0 && c <= 0xf4) {
      n = 3;
      if (c === 0xf0) lo = 0x90;
      if (c === 0xf4) hi = 0x8f;
    } else return false;
    for (let k = 1; k <= n; k++) {
      const d = b[i + k];
      if (d === undefined) return false;
      if (k === 1 ? d < lo || d > hi : d < 0x80 || d > 0xbf) return false;
    }
    i += n + 1;
  }
  return true;
}

/** Reads up to `n` bytes from the start of `path` (fewer when the file is shorter). */
export async function readHead(path: string, n: number): Promise<Uint8Array> {
  using f = await Deno.open(path, { read: true });
  const buf = new Uint8Array(n);
  let got = 0;
  while (got < n) {
    const r = await f.read(buf.subarray(got));
    if (r === null) break;
    got += r;
  }
  return buf.subarray(0, got);
}
