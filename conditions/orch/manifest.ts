/**
 * `orch -f PATH`: the objects of Kubernetes manifests (a file, a directory of
 * `.yaml`/`.yml`/`.json` files, or `-` for standard input; multi-document
 * YAML and `List` objects), each turned into its own condition named
 * `KIND/NAME` (`KIND/NAMESPACE/NAME` when the object sets its namespace).
 * Everything that stops the manifests from being read is a usage error,
 * found before the first probe (docs/contract.md §5 orch).
 *
 * @module
 */

import { describeError } from "../../engine/errors.ts";
import { Interner } from "../../engine/intern.ts";
import type { ExpandContext, Parsed } from "../../engine/types.ts";
import { fileType } from "./files.ts";
import { NAMESPACE, OBJECT_NAME, type OrchOptions } from "./mod.ts";
import { readYaml, type YamlDocument } from "../../engine/yaml.ts";

/** The files of a directory that are read, as kubectl apply -f DIR reads them. */
const MANIFEST_FILE = /\.(ya?ml|json)$/i;

/** One object of a manifest: what identifies it. */
export interface ManifestObject {
  readonly apiVersion: string;
  readonly kind: string;
  readonly name: string;
  /** `metadata.namespace`, when the object sets one. */
  readonly namespace: string | undefined;
}

/** A manifest that cannot be used; its message names the file (and document). */
export class ManifestError extends Error {
  override name = "ManifestError";
}

/**
 * The conditions `-f file` stands for, one per object, in the order of the
 * files and documents (an object given twice counts once). Fails through
 * `ctx.fail` at `--file`.
 */
export async function expandManifests(
  o: OrchOptions,
  file: string,
  ctx: ExpandContext,
): Promise<Parsed<OrchOptions>[]> {
  const objects: ManifestObject[] = [];
  try {
    // One file at a time, read then parsed: a directory of large manifests is never all in
    // memory at once.
    for (const source of await readManifests(file, ctx)) {
      for (const obj of await parseManifest(source.name, await source.text(), ctx.signal)) {
        objects.push(obj);
      }
    }
  } catch (e) {
    if (e instanceof ManifestError) ctx.fail("file", e.message);
    throw e;
  }
  const seen = new Set<string>();
  const unique = objects.filter((obj) => {
    const key = JSON.stringify([groupOf(obj.apiVersion), obj.kind, obj.namespace, obj.name]);
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
  if (unique.length === 0) ctx.fail("file", `no Kubernetes objects in ${describePath(file)}`);
  const { file: _, ...base } = o;
  // One copy of each kind, version and namespace, not one per document: a manifest of tens of
  // thousands of objects (docs/reliability.md, large manifests).
  const strings = new Interner();
  return unique.map((obj) => ({
    target: `${obj.kind.toLowerCase()}/${obj.namespace ? `${obj.namespace}/` : ""}${obj.name}`,
    options: {
      ...base,
      resource: strings.value(obj.kind),
      apiVersion: strings.value(obj.apiVersion),
      selection: { by: "name", name: obj.name },
      namespace: strings.value(obj.namespace) ?? o.namespace,
    },
  }));
}

/** `apps` of `apps/v1`; `""` (the core group) of `v1`. */
function groupOf(apiVersion: string): string {
  const slash = apiVersion.indexOf("/");
  return slash < 0 ? "" : apiVersion.slice(0, slash);
}

function describePath(file: string): string {
  return file === "-" ? "standard input" : file;
}

/** The texts of the manifests `file` names, with the names errors use. */
async function readManifests(
  file: string,
  ctx: ExpandContext,
): Promise<{ name: string; text(): Promise<string> }[]> {
  // The engine's reads are bounded (docs/contract.md §9): no size check here.
  if (file === "-") return [{ name: "standard input", text: () => read(ctx, "-") }];
  if (!await ctx.isDirectory(file)) {
    await checkRegularFile(file);
    return [{ name: file, text: () => read(ctx, file) }];
  }
  const entries = (await ctx.readDir(file)).filter((e) =>
    !e.isDirectory && MANIFEST_FILE.test(e.name)
  );
  if (entries.length === 0) {
    throw new ManifestError(`${file} is a directory without .yaml, .yml or .json files`);
  }
  const out = [];
  for (const e of entries) {
    const path = `${file.replace(/\/+$/, "")}/${e.name}`;
    await checkRegularFile(path);
    out.push({ name: path, text: () => read(ctx, path) });
  }
  return out;
}

async function read(ctx: ExpandContext, path: string): Promise<string> {
  try {
    return await ctx.readText(path);
  } catch (e) {
    throw new ManifestError(`cannot read ${describePath(path)}: ${describeError(e)}`);
  }
}

/**
 * Throws unless `path` is a regular file: a named pipe without a writer would hold the run
 * before its clock starts, a device (`/dev/zero`) would never end (docs/contract.md §5 orch).
 * Standard input is read with `-`.
 */
export async function checkRegularFile(path: string): Promise<void> {
  let info: Deno.FileInfo;
  try {
    info = await Deno.stat(path);
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) {
      throw new ManifestError(`${path}: no such file or directory`);
    }
    throw new ManifestError(`cannot read ${path}: ${describeError(e).replace(/: \w+ '.*'$/, "")}`);
  }
  if (!info.isFile) {
    throw new ManifestError(
      `${path} is not a regular file (${fileType(info)}); give a file, a directory, ` +
        "or - to read standard input",
    );
  }
}

/**
 * The objects of one manifest text (YAML, several documents, or JSON), `List`s
 * expanded to their items. Throws a `ManifestError` naming `name` and the
 * document for text that does not parse and for an object without apiVersion,
 * kind or metadata.name.
 */
export async function parseManifest(
  name: string,
  text: string,
  signal?: AbortSignal,
): Promise<ManifestObject[]> {
  let docs: YamlDocument[];
  try {
    // A large manifest is read in a worker that a signal terminates (engine/yaml.ts).
    docs = await readYaml(text, { all: true }, signal);
  } catch (e) {
    if (!(e instanceof RangeError)) throw e;
    throw new ManifestError(`${name}: not valid YAML or JSON: it is nested too deeply`);
  }
  const out: ManifestObject[] = [];
  for (const [i, doc] of docs.entries()) {
    const where = `${name}: document ${i + 1} (line ${doc.line})`;
    if (doc.error !== undefined) {
      const first = doc.error.message.split("\n")[0]!.replace(/ at line \d+, column \d+:?$/, "");
      throw new ManifestError(
        `${name}: document ${i + 1} (line ${doc.error.line}): not valid YAML or JSON: ${first}`,
      );
    }
    if (doc.valueError !== undefined) {
      throw new ManifestError(`${where}: not valid YAML or JSON: ${doc.valueError}`);
    }
    const value = doc.value;
    if (value === null || value === undefined) continue;
    const obj = object(value, where);
    if (Array.isArray(obj.items) && typeof obj.kind === "string" && obj.kind.endsWith("List")) {
      obj.items.forEach((item, j) => out.push(identify(item, `${where}, item ${j + 1}`)));
    } else {
      out.push(identify(obj, where));
    }
  }
  return out;
}

const EXPECTED = "expected a Kubernetes object (a mapping with apiVersion, kind and metadata.name)";

function object(value: unknown, where: string): Record<string, unknown> {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new ManifestError(`${where}: ${EXPECTED}`);
  }
  return value as Record<string, unknown>;
}

/** What identifies the object `value`; throws when something is missing or invalid. */
function identify(value: unknown, where: string): ManifestObject {
  const obj = object(value, where);
  const text = (v: unknown) => typeof v === "string" && v.trim() !== "" ? v.trim() : undefined;
  const kind = text(obj.kind);
  if (kind === undefined) throw new ManifestError(`${where}: has no kind; ${EXPECTED}`);
  const apiVersion = text(obj.apiVersion);
  if (apiVersion === undefined) {
    throw new ManifestError(`${where}: ${kind} has no apiVersion; ${EXPECTED}`);
  }
  const meta = typeof obj.metadata === "object" && obj.metadata !== null
    ? obj.metadata as Record<string, unknown>
    : {};
  const name = text(meta.name);
  if (name === undefined) {
    const generated = text(meta.generateName) !== undefined
      ? " (an object with generateName gets its name when created: wait for it by label)"
      : "";
    throw new ManifestError(`${where}: ${kind} has no metadata.name${generated}`);
  }
  if (!OBJECT_NAME.test(name)) {
    throw new ManifestError(`${where}: ${kind} has an invalid name ${JSON.stringify(name)}`);
  }
  const namespace = text(meta.namespace);
  if (namespace !== undefined && !NAMESPACE.test(namespace)) {
    throw new ManifestError(
      `${where}: ${kind} ${name} has an invalid namespace ${JSON.stringify(namespace)}`,
    );
  }
  return { apiVersion, kind, name, namespace };
}
