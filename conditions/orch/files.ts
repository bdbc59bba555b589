/**
 * Paths orch reads that are not regular files (kubeconfigs, the files they
 * name, `-f` manifests): named in words for the error that refuses them
 * (docs/contract.md §5 orch). The words are the engine's, as every file a
 * flag names says them (engine/files.ts).
 *
 * @module
 */

export { fileType } from "../../engine/files.ts";
