/**
 * `--extra-ca-file`: a CA bundle trusted besides the default roots, where
 * `--ca-file` trusts only its own (docs/contract.md §5 tls). node:tls and
 * node:https take one list of roots (`ca`), which replaces the default ones,
 * so the extra CAs are handed over together with the default roots: the
 * Mozilla bundle that the runtime carries (`tls.rootCertificates`), and the
 * system's store when DENO_TLS_CA_STORE asks for it.
 *
 * @module
 */

import { readFlagFile } from "./flagfile.ts";

/** What `--extra-ca-file` flags declare: the flag, shared by the kinds that take it. */
export const EXTRA_CA_FLAG = {
  name: "extra-ca-file",
  type: "string",
  placeholder: "PATH",
  complete: "file",
  description: "also trust the CA certificates of this PEM file, besides the default roots",
} as const;

/** The part of node:tls this module reads (`getCACertificates` is recent: optional). */
interface NodeTlsRoots {
  readonly rootCertificates: readonly string[];
  getCACertificates?(kind: "system"): string[];
}

/**
 * The default roots: Mozilla's bundle, and the system's store when DENO_TLS_CA_STORE names
 * `system` (as the runtime reads that variable: a comma list of `mozilla` and `system`).
 */
export async function defaultRoots(env: Readonly<Record<string, string>>): Promise<string[]> {
  const tls = await import("node:tls") as unknown as NodeTlsRoots;
  const stores = (env.DENO_TLS_CA_STORE || "mozilla").split(",").map((s) => s.trim());
  const roots: string[] = [];
  if (stores.includes("mozilla")) roots.push(...tls.rootCertificates);
  if (stores.includes("system") && tls.getCACertificates) {
    roots.push(...tls.getCACertificates("system"));
  }
  return roots;
}

/**
 * The roots of one attempt: `--ca-file`'s alone when given, else the default roots and
 * `--extra-ca-file`'s, else undefined (the runtime's defaults). The files are read at each
 * attempt: a CA may be written late (a secrets sidecar, cert-manager).
 */
export async function attemptRoots(
  files: { readonly caFile?: string; readonly extraCaFile?: string },
  env: Readonly<Record<string, string>>,
): Promise<string | string[] | undefined> {
  if (files.caFile !== undefined) return await readFlagFile("ca-file", files.caFile);
  if (files.extraCaFile === undefined) return undefined;
  const extra = await readFlagFile("extra-ca-file", files.extraCaFile);
  return [...await defaultRoots(env), extra];
}
