/**
 * Paths orch reads that are not regular files (kubeconfigs, the files they
 * name, `-f` manifests): named in words for the error that refuses them
 * (docs/contract.md §5 orch).
 *
 * @module
 */

/** What a path that is not a regular file is, in words: `a named pipe`. */
export function fileType(info: Deno.FileInfo): string {
  if (info.isFifo) return "a named pipe";
  if (info.isCharDevice) return "a character device";
  if (info.isBlockDevice) return "a block device";
  if (info.isSocket) return "a socket";
  if (info.isDirectory) return "a directory";
  return "not a file";
}
