/**
 * orch (aliases k8s, kubernetes): a Kubernetes object exists, has a
 * condition, matches a JSONPath expression, has rolled out, is ready, has
 * completed, or is gone (docs/contract.md §5 orch).
 *
 * This file declares the kind and parses what the target and flags mean (no
 * I/O). The probe (`probe.ts`) asks the API server through `kube.ts`
 * (kubeconfig through `@kubernetes/client-node`, imported lazily; requests
 * through the shared transports), and `judge.ts` decides whether the
 * objects found satisfy the wait, kubectl's rules included. A watch on the
 * objects asks for an attempt as soon as one of them changes.
 *
 * @module
 */

import { defineKind, type KindInput } from "../../engine/types.ts";
import { type JsonPathExpr, parseJsonPathExpr } from "../_common/jsonpath.ts";

/** Values of `--for` (`create`, kubectl's name since 1.31, means `exists`). */
export const FOR_VALUES: readonly string[] = [
  "exists",
  "create",
  "rollout",
  "ready",
  "complete",
  "delete",
];

/** What the condition waits for. */
export type Want =
  | { readonly type: "exists" }
  | { readonly type: "condition"; readonly condition: string; readonly status: string }
  | { readonly type: "jsonpath"; readonly expr: JsonPathExpr }
  | { readonly type: "rollout" }
  | { readonly type: "ready" }
  | { readonly type: "complete" }
  | { readonly type: "delete" }
  /** The readiness of the object's kind (`orch -f`; docs/contract.md §5 orch). */
  | { readonly type: "readiness" };

/** Which objects the condition is about. */
export type Selection =
  | { readonly by: "name"; readonly name: string }
  | { readonly by: "selector"; readonly selector: string | undefined; readonly all: boolean };

/** What an orch condition needs: plain data settled by `parse`. */
export interface OrchOptions {
  /** The resource word as typed: `deploy`, `deployments.apps`, `certificates`. */
  readonly resource: string;
  readonly selection: Selection;
  readonly want: Want;
  /** `--namespace`; undefined: the context's namespace. */
  readonly namespace: string | undefined;
  /** `--kubeconfig`, when given (else KUBECONFIG, else ~/.kube/config). */
  readonly kubeconfig?: string;
  /** `--context`, when given (else the current context). */
  readonly context?: string;
  /**
   * `-f`/`--file`: the manifests (a file, a directory, `-`) whose objects this condition stands
   * for; `expand` replaces it by one condition per object before the first probe.
   */
  readonly file?: string;
  /**
   * The object's `apiVersion`, for a condition made from a manifest: its type is found by
   * group and kind (`resource` is then the kind), and a type the server does not serve yet is
   * pending rather than fatal (a CRD being installed).
   */
  readonly apiVersion?: string;
}

/** Whether `--for rollout` / `--for complete` apply to a resource. */
export function supports(want: Want, r: { group: string; plural: string }): string | undefined {
  if (want.type === "rollout") {
    const ok = (r.group === "apps" || r.group === "extensions") &&
      ["deployments", "statefulsets", "daemonsets"].includes(r.plural);
    return ok
      ? undefined
      : `--for rollout works with deployments, statefulsets and daemonsets, not ${r.plural}`;
  }
  if (want.type === "complete") {
    return r.group === "batch" && r.plural === "jobs"
      ? undefined
      : `--for complete works with jobs, not ${r.plural}`;
  }
  return undefined;
}

const RESOURCE_WORD = /^[A-Za-z][A-Za-z0-9-]*(\.[A-Za-z0-9-]+)*$/;
/** An object's name as it may appear in a target or a manifest. */
export const OBJECT_NAME = /^[^\s/]+$/;
/** A namespace name (a DNS label). */
export const NAMESPACE = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;
const LABEL_KEY =
  /^([a-z0-9]([-a-z0-9.]*[a-z0-9])?\/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$/;
const LABEL_VALUE = /^([A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?)?$/;
const CONDITION_TYPE = /^[A-Za-z0-9][A-Za-z0-9_.\/-]*$/;

/** Well-known resource words, for usage errors that need no discovery. */
const WELL_KNOWN: Record<string, { group: string; plural: string }> = {};
for (
  const [group, plural, ...words] of [
    ["", "pods", "pod", "po"],
    ["apps", "deployments", "deployment", "deploy"],
    ["apps", "statefulsets", "statefulset", "sts"],
    ["apps", "daemonsets", "daemonset", "ds"],
    ["apps", "replicasets", "replicaset", "rs"],
    ["batch", "jobs", "job"],
    ["batch", "cronjobs", "cronjob", "cj"],
    ["", "services", "service", "svc"],
    ["", "namespaces", "namespace", "ns"],
    ["", "configmaps", "configmap", "cm"],
    ["", "secrets", "secret"],
    ["", "nodes", "node", "no"],
    ["", "persistentvolumeclaims", "persistentvolumeclaim", "pvc"],
  ]
) {
  for (const w of [plural!, ...words]) {
    WELL_KNOWN[w] = { group: group!, plural: plural! };
    if (group) WELL_KNOWN[`${w}.${group}`] = { group: group!, plural: plural! };
  }
}

/** Checks a label selector's syntax (`a=b,c!=d,e in (f,g),!h,i`); returns an error text or undefined. */
export function checkSelector(sel: string): string | undefined {
  if (sel.trim() === "") return "expected a label selector like app=web, got an empty string";
  const parts: string[] = [];
  let depth = 0;
  let cur = "";
  for (const ch of sel) {
    if (ch === "(") depth++;
    if (ch === ")") depth--;
    if (depth < 0) return `unbalanced ")" in ${JSON.stringify(sel)}`;
    if (ch === "," && depth === 0) {
      parts.push(cur);
      cur = "";
    } else cur += ch;
  }
  if (depth !== 0) return `unbalanced "(" in ${JSON.stringify(sel)}`;
  parts.push(cur);
  for (const raw of parts) {
    const p = raw.trim();
    const bad = `expected requirements like app=web, tier!=db, env in (a,b) or !key, got ${
      JSON.stringify(p)
    }`;
    let m: RegExpExecArray | null;
    if ((m = /^(\S+?)\s*(==|!=|=)\s*(\S*)$/.exec(p))) {
      if (!LABEL_KEY.test(m[1]!) || !LABEL_VALUE.test(m[3]!)) return bad;
    } else if ((m = /^(\S+)\s+(in|notin)\s*\(([^()]*)\)$/.exec(p))) {
      if (!LABEL_KEY.test(m[1]!)) return bad;
      for (const v of m[3]!.split(",")) if (!LABEL_VALUE.test(v.trim())) return bad;
    } else if ((m = /^!?\s*(\S+)$/.exec(p))) {
      if (!LABEL_KEY.test(m[1]!)) return bad;
    } else return bad;
  }
  return undefined;
}

function parseWant(input: KindInput, resource: string): Want {
  const given = ["for", "condition", "jsonpath"].filter((f) => input.has(f));
  if (given.length > 1) {
    input.fail(given[1]!, `cannot be combined with --${given[0]}; give one wait type`);
  }
  const cond = input.string("condition");
  if (cond !== undefined) {
    const eq = cond.indexOf("=");
    const type = (eq < 0 ? cond : cond.slice(0, eq)).trim();
    const status = eq < 0 ? "True" : cond.slice(eq + 1).trim();
    if (!CONDITION_TYPE.test(type) || !/^[A-Za-z]+$/.test(status)) {
      input.fail(
        "condition",
        `expected a condition type like Available or Ready=False, got ${JSON.stringify(cond)}`,
      );
    }
    return { type: "condition", condition: type, status };
  }
  const jp = input.string("jsonpath");
  if (jp !== undefined) {
    try {
      return { type: "jsonpath", expr: parseJsonPathExpr(jp) };
    } catch (e) {
      return input.fail("jsonpath", (e as Error).message);
    }
  }
  const word = input.string("for") ?? "exists";
  const want = { type: word === "create" ? "exists" : word } as Want;
  const known = WELL_KNOWN[resource.toLowerCase()];
  if (known) {
    const problem = supports(want, known);
    if (problem) input.fail("for", problem.replace(/^--for /, ""));
  }
  return want;
}

/** The wait types `-f` takes: each object's readiness by default, or `--for create|delete`. */
const FILE_FOR = ["exists", "create", "delete"];

/**
 * Parses `-f PATH`: the manifests are read by `expand` (`manifest.ts`); here only what can be
 * told without them. A target, a selector or a wait type other than create/delete are usage
 * errors.
 */
function parseFile(input: KindInput, file: string): OrchOptions {
  if (file === "") input.fail("file", "expected a file, a directory or - (standard input)");
  if (input.target !== undefined) {
    input.fail(
      "file",
      `cannot be combined with a target (${
        JSON.stringify(input.target)
      }); the manifests name the objects`,
    );
  }
  for (const f of ["selector", "all", "condition", "jsonpath"]) {
    if (input.has(f)) {
      input.fail(
        f,
        "cannot be combined with --file; each object waits for the readiness of its kind " +
          "(or --for create, --for delete)",
      );
    }
  }
  const word = input.string("for");
  if (word !== undefined && !FILE_FOR.includes(word)) {
    input.fail(
      "for",
      `${word} cannot be combined with --file; give create or delete, ` +
        "or none for the readiness of each object's kind",
    );
  }
  const kubeconfig = input.string("kubeconfig");
  const context = input.string("context");
  return {
    resource: "",
    selection: { by: "selector", selector: undefined, all: true },
    want: word === undefined
      ? { type: "readiness" }
      : { type: word === "delete" ? "delete" : "exists" },
    namespace: input.string("namespace"),
    file,
    ...(kubeconfig !== undefined ? { kubeconfig } : {}),
    ...(context !== undefined ? { context } : {}),
  };
}

/** Parses the target and flags (no I/O). */
export function parseOrch(input: KindInput): OrchOptions {
  for (const f of ["kubeconfig", "context"]) {
    if (input.string(f) === "") input.fail(f, "expected a value, got an empty string");
  }
  const namespace = input.string("namespace");
  if (namespace !== undefined && !NAMESPACE.test(namespace)) {
    input.fail(
      "namespace",
      `expected a namespace name like default, got ${JSON.stringify(namespace)}`,
    );
  }
  const file = input.string("file");
  if (file !== undefined) return parseFile(input, file);
  if (input.target === undefined) {
    input.fail(
      undefined,
      "missing target KIND/NAME (deployment/web), KIND with --selector or --all, " +
        "or -f FILE for the objects of manifests",
    );
  }
  const target = input.target ?? "";
  const slash = target.indexOf("/");
  const resource = slash < 0 ? target : target.slice(0, slash);
  const name = slash < 0 ? undefined : target.slice(slash + 1);
  if (!RESOURCE_WORD.test(resource) || (name !== undefined && !OBJECT_NAME.test(name))) {
    input.fail(
      undefined,
      `expected KIND/NAME (deployment/web) or KIND with --selector, got ${JSON.stringify(target)}`,
    );
  }
  const selector = input.string("selector");
  const all = input.bool("all");
  if (name !== undefined) {
    if (selector !== undefined) input.fail("selector", "cannot be combined with KIND/NAME");
    if (all) input.fail("all", "cannot be combined with KIND/NAME");
  } else if (selector === undefined && !all) {
    input.fail(
      undefined,
      `expected KIND/NAME, or KIND with --selector or --all, got ${JSON.stringify(target)}`,
    );
  }
  if (selector !== undefined) {
    const problem = checkSelector(selector);
    if (problem) input.fail("selector", problem);
  }
  const want = parseWant(input, resource);
  const kubeconfig = input.string("kubeconfig");
  const context = input.string("context");
  return {
    resource,
    selection: name !== undefined
      ? { by: "name", name }
      : { by: "selector", selector: selector?.trim(), all },
    want,
    namespace,
    ...(kubeconfig !== undefined ? { kubeconfig } : {}),
    ...(context !== undefined ? { context } : {}),
  };
}

/** The orch kind. */
export const orch = defineKind<OrchOptions>({
  name: "orch",
  aliases: ["k8s", "kubernetes"],
  summary:
    "a Kubernetes object (or every object of manifests) exists, is ready, rolled out, complete, has a condition or is gone",
  description:
    "Asks the Kubernetes API server of the kubeconfig (--kubeconfig, else KUBECONFIG, else ~/.kube/config; in a pod, the in-cluster service account) with its credentials (client certificates, tokens, token files, exec plugins such as aws eks get-token). The target is KIND/NAME, or KIND with --selector (or --all): any resource the server knows, by kind, plural or short name (deploy, po, sts, a CRD's names), optionally with its group (deployments.apps). Without a wait type, satisfied when the object exists. --for rollout follows kubectl rollout status; --for ready waits for a pod's Ready condition (a Failed pod is fatal); --for complete for a job's Complete condition (a Failed job is fatal); --for delete until the object is gone. With a selector one matching object suffices; with --all every one must hold. A missing object, a selector matching nothing and an unreachable server are retried; refused credentials (401/403) and an unknown kind are fatal (a 401/403 within 30 s of the server being unreachable is retried: a restarting server refuses until its authorization data is loaded). A watch on the objects triggers an attempt as soon as they change. With -f FILE (a manifest, a directory of .yaml/.yml/.json files, or - for standard input) every object in it becomes its own condition, named orch KIND/NAME, and waits for the readiness of its kind: Deployments, StatefulSets and DaemonSets rolled out; Jobs complete; Pods Ready; PersistentVolumeClaims Bound; Services with a ready endpoint (LoadBalancer: an address); any other object its Ready or Available condition when it has one, else that it exists. --for create or --for delete waits for existence or absence instead. A Deployment past its progress deadline is fatal, and the newest Warning event of an object that is not ready is part of its error.",
  target: {
    shape: "optional",
    placeholder: "KIND[/NAME]",
    description:
      "resource kind and object name (deployment/web), or a kind with --selector or --all; none with -f",
  },
  flags: [
    {
      name: "for",
      type: "enum",
      values: FOR_VALUES,
      placeholder: "STATE",
      description:
        "exists (default; also create), rollout, ready (pods), complete (jobs) or delete",
    },
    {
      name: "file",
      short: "f",
      type: "string",
      placeholder: "PATH",
      description:
        "every object of these manifests (file, directory of .yaml/.yml/.json, - for stdin), each ready by its kind",
      complete: "file",
    },
    {
      name: "condition",
      type: "string",
      placeholder: "TYPE[=STATUS]",
      description: "status condition TYPE has STATUS (default True), e.g. Available, Ready=False",
    },
    {
      name: "jsonpath",
      type: "string",
      placeholder: "EXPR",
      description: "the object matches a JSONPath expression, e.g. '.status.readyReplicas >= 2'",
    },
    {
      name: "namespace",
      type: "string",
      placeholder: "NAME",
      description: "namespace (default: the context's namespace, else default)",
    },
    {
      name: "selector",
      type: "string",
      placeholder: "LABELS",
      description: "objects with these labels (app=web,tier!=db); one holding suffices",
    },
    {
      name: "all",
      type: "boolean",
      description: "every selected object (or every one in the namespace) must hold",
    },
    {
      name: "kubeconfig",
      type: "string",
      placeholder: "PATH",
      description: "kubeconfig file (default: KUBECONFIG, else ~/.kube/config)",
      complete: "file",
    },
    {
      name: "context",
      type: "string",
      placeholder: "NAME",
      description: "kubeconfig context (default: the current context)",
    },
  ],
  examples: [
    {
      args: "k8s deployment/web --for rollout",
      description: "wait until a deployment has rolled out",
    },
    {
      args: "orch job/migrate --for complete --namespace shop",
      description: "wait for a job; exit 3 at once if it fails",
    },
    {
      args: "k8s pod --selector app=web --all --for ready --namespace shop",
      description: "wait until every pod labelled app=web is Ready",
    },
    {
      args: "k8s deploy/web --jsonpath '.status.readyReplicas >= 2'",
      description: "wait until at least two replicas are ready",
    },
    {
      args: "--timeout 5m k8s -f deploy/ --namespace shop",
      description:
        "after kubectl apply -f deploy/: wait until every object in it is ready (rolled out, complete, bound, ...)",
    },
    {
      args: "k8s certificate/site-tls --condition Ready --context prod",
      description: "a custom resource's condition, in another context",
    },
  ],
  parse(input) {
    const options = parseOrch(input);
    return { target: options.file !== undefined ? `-f ${options.file}` : input.target!, options };
  },
  async validate(options, fail) {
    if (options.want.type !== "jsonpath") return;
    const { validateJsonPaths } = await import("../_common/jsonpath_lib.ts");
    await validateJsonPaths([options.want.expr], fail);
  },
  expand: (options, ctx) =>
    options.file === undefined
      ? Promise.resolve(undefined)
      : import("./manifest.ts").then((m) => m.expandManifests(options, options.file!, ctx)),
  load: () => import("./probe.ts").then((m) => m.create),
  isolate: true,
  doctor: (env) => import("../_common/doctor.ts").then((m) => m.kubeconfig(env)),
});
