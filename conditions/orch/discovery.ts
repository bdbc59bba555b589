/**
 * API discovery for orch: which resource types the server serves
 * (aggregated discovery, else the legacy per-group documents), and the
 * resource a user's word means, as kubectl finds it.
 *
 * @module
 */

import { KubeError } from "./errors.ts";

/** One resource type the API server serves. */
export interface ApiResource {
  /** `""` for the core group. */
  readonly group: string;
  readonly version: string;
  /** Plural resource name used in paths: `deployments`. */
  readonly plural: string;
  readonly singular: string;
  /** `Deployment`. */
  readonly kind: string;
  readonly namespaced: boolean;
  readonly shortNames: readonly string[];
  readonly verbs: readonly string[];
}

/** Aggregated discovery first, else the legacy documents. */
const DISCOVERY_ACCEPT = [
  "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList",
  "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList",
  "application/json",
].join(",");

/** A discovered set of resources and when it was fetched. */
export interface Discovery {
  readonly resources: readonly ApiResource[];
  readonly fetchedAt: number;
}

/** GET that must answer 2xx with JSON (`KubeClient.getJson`). */
export type GetJson = (path: string, signal: AbortSignal, accept?: string) => Promise<unknown>;

/**
 * Every resource type the server serves: aggregated discovery (one request
 * per API kind), else the legacy documents of each group version.
 * `fetchedAt` is `now` when it is done.
 */
export async function fetchDiscovery(
  getJson: GetJson,
  signal: AbortSignal,
  now: () => number,
): Promise<Discovery> {
  const [core, groups] = await Promise.all([
    getJson("/api", signal, DISCOVERY_ACCEPT),
    getJson("/apis", signal, DISCOVERY_ACCEPT),
  ]);
  const resources: ApiResource[] = [];
  for (const [doc, isCore] of [[core, true], [groups, false]] as const) {
    const d = doc as { kind?: string };
    if (d.kind === "APIGroupDiscoveryList") {
      resources.push(...fromAggregated(doc, isCore));
    } else {
      resources.push(...await legacyDiscovery(getJson, doc, isCore, signal));
    }
  }
  return { resources: dedupe(resources), fetchedAt: now() };
}

async function legacyDiscovery(
  getJson: GetJson,
  doc: unknown,
  isCore: boolean,
  signal: AbortSignal,
): Promise<ApiResource[]> {
  const versions: { group: string; groupVersion: string }[] = [];
  if (isCore) {
    for (const v of (doc as { versions?: string[] }).versions ?? []) {
      versions.push({ group: "", groupVersion: v });
    }
  } else {
    for (const g of (doc as { groups?: LegacyGroup[] }).groups ?? []) {
      const preferred = g.preferredVersion?.groupVersion;
      const all = (g.versions ?? []).map((v) => v.groupVersion);
      const ordered = preferred ? [preferred, ...all.filter((v) => v !== preferred)] : all;
      for (const gv of ordered) versions.push({ group: g.name, groupVersion: gv });
    }
  }
  const lists = await Promise.all(versions.map(async (v) => {
    const base = v.group === "" ? `/api/${v.groupVersion}` : `/apis/${v.groupVersion}`;
    try {
      return { v, list: await getJson(base, signal) as LegacyResourceList };
    } catch (e) {
      if (e instanceof KubeError && e.kind === "http") return { v, list: { resources: [] } };
      throw e;
    }
  }));
  const out: ApiResource[] = [];
  for (const { v, list } of lists) {
    const version = v.groupVersion.includes("/")
      ? v.groupVersion.slice(v.groupVersion.indexOf("/") + 1)
      : v.groupVersion;
    for (const r of list.resources ?? []) {
      if (!r.name || r.name.includes("/")) continue;
      out.push({
        group: v.group,
        version,
        plural: r.name,
        singular: r.singularName || r.kind.toLowerCase(),
        kind: r.kind,
        namespaced: !!r.namespaced,
        shortNames: r.shortNames ?? [],
        verbs: r.verbs ?? [],
      });
    }
  }
  return out;
}

interface LegacyGroup {
  name: string;
  preferredVersion?: { groupVersion: string };
  versions?: { groupVersion: string }[];
}

interface LegacyResourceList {
  resources?: {
    name: string;
    singularName?: string;
    kind: string;
    namespaced?: boolean;
    shortNames?: string[];
    verbs?: string[];
  }[];
}

interface AggregatedList {
  items?: {
    metadata?: { name?: string };
    versions?: {
      version: string;
      resources?: {
        resource: string;
        singularResource?: string;
        responseKind?: { kind?: string };
        scope?: string;
        shortNames?: string[];
        verbs?: string[];
      }[];
    }[];
  }[];
}

/** Resources of an aggregated discovery document (versions in the server's order of preference). */
export function fromAggregated(doc: unknown, isCore: boolean): ApiResource[] {
  const out: ApiResource[] = [];
  for (const g of (doc as AggregatedList).items ?? []) {
    const group = isCore ? "" : g.metadata?.name ?? "";
    for (const v of g.versions ?? []) {
      for (const r of v.resources ?? []) {
        if (!r.resource || r.resource.includes("/")) continue;
        const kind = r.responseKind?.kind ?? "";
        out.push({
          group,
          version: v.version,
          plural: r.resource,
          singular: r.singularResource || kind.toLowerCase(),
          kind,
          namespaced: r.scope === "Namespaced",
          shortNames: r.shortNames ?? [],
          verbs: r.verbs ?? [],
        });
      }
    }
  }
  return out;
}

/** Keeps the first (preferred) version of each group's resource. */
function dedupe(list: ApiResource[]): ApiResource[] {
  const seen = new Set<string>();
  return list.filter((r) => {
    const k = `${r.group}/${r.plural}`;
    if (seen.has(k)) return false;
    seen.add(k);
    return true;
  });
}

/**
 * Finds the resource a user's word means, as kubectl does: a plural, singular,
 * short name or kind (case-insensitive), optionally qualified by its group
 * (`deployments.apps`) or version and group (`deployment.v1.apps`). The core
 * group wins over others; then the server's order.
 */
export function resolveResource(
  resources: readonly ApiResource[],
  word: string,
): ApiResource | undefined {
  const w = word.toLowerCase();
  const matches = (r: ApiResource, name: string) =>
    r.plural === name || r.singular === name || r.shortNames.includes(name) ||
    r.kind.toLowerCase() === name;
  const exact = resources.find((r) => matches(r, w));
  if (exact) return exact;
  const dot = w.indexOf(".");
  if (dot < 0) return undefined;
  const name = w.slice(0, dot);
  const rest = w.slice(dot + 1);
  const byGroup = resources.find((r) => r.group === rest && matches(r, name));
  if (byGroup) return byGroup;
  const dot2 = rest.indexOf(".");
  if (dot2 < 0) return undefined;
  const version = rest.slice(0, dot2);
  const group = rest.slice(dot2 + 1);
  return resources.find((r) => r.group === group && r.version === version && matches(r, name));
}

/** The REST path of a resource's collection (`/apis/apps/v1/namespaces/ns/deployments`). */
export function collectionPath(r: ApiResource, namespace: string): string {
  const base = r.group === "" ? `/api/${r.version}` : `/apis/${r.group}/${r.version}`;
  return r.namespaced
    ? `${base}/namespaces/${encodeURIComponent(namespace)}/${r.plural}`
    : `${base}/${r.plural}`;
}

/**
 * The resource type of a manifest's object: its `apiVersion`'s group and its `kind` (exactly,
 * as the server names it). The server's preferred version of that group is used when it
 * serves several.
 */
export function resolveKind(
  resources: readonly ApiResource[],
  apiVersion: string,
  kind: string,
): ApiResource | undefined {
  const slash = apiVersion.indexOf("/");
  const group = slash < 0 ? "" : apiVersion.slice(0, slash);
  const version = apiVersion.slice(slash + 1);
  const all = resources.filter((r) => r.group === group && r.kind === kind);
  return all.find((r) => r.version === version) ?? all[0];
}
