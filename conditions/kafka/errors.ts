/**
 * kafka: the texts of failed attempts and the verdict on the cluster's
 * metadata (docs/contract.md §5 kafka). `@platformatic/kafka` nests its
 * errors (`MultipleErrors` → `NetworkError` → `AuthenticationError` →
 * `ResponseError` → `ProtocolError` with the broker's message), so the
 * cause is found by walking `.errors` and `.cause`. Every failure is
 * pending. Pure, so it is unit-tested without a broker.
 *
 * @module
 */

import { authFailed, scrub } from "../_common/datastore.ts";
import { describeNodeError } from "../_common/nodeerr.ts";

/** An error of the driver, as far as the probe reads it. */
interface DriverError {
  readonly message?: unknown;
  readonly code?: unknown;
  readonly apiId?: unknown;
  readonly apiCode?: unknown;
  readonly serverErrorMessage?: unknown;
  readonly errors?: unknown;
  readonly cause?: unknown;
}

/** Every error in the tree under `e` (itself first), depth first, each once. */
export function errorTree(e: unknown): DriverError[] {
  const out: DriverError[] = [];
  const seen = new Set<unknown>();
  const walk = (x: unknown) => {
    if (x === null || typeof x !== "object" || seen.has(x)) return;
    seen.add(x);
    out.push(x as DriverError);
    const d = x as DriverError;
    if (Array.isArray(d.errors)) { for (const sub of d.errors) walk(sub); }
    walk(d.cause);
  };
  walk(e);
  return out;
}

/** What the attempt knows for the error text. */
export interface ErrorContext {
  /** The SASL user, when there is one. */
  readonly user: string | undefined;
  /** The topic asked for, when there is one. */
  readonly topic: string | undefined;
  /** The first bootstrap host as typed, for certificate errors. */
  readonly hostname: string;
  /** Every secret the text must not show. */
  readonly secrets: readonly (string | undefined)[];
}

function text(x: unknown): string {
  return typeof x === "string" ? x : "";
}

/** The pending text of an attempt that failed with `e`. */
export function describeKafkaError(e: unknown, ctx: ErrorContext): string {
  const tree = errorTree(e);
  const clean = (t: string) => scrub(t, ctx.secrets);
  // The broker's own words, where it sent some (ProtocolError.serverErrorMessage).
  const said = (x: DriverError) => text(x.serverErrorMessage) || text(x.message);

  const refused = tree.find((x) => x.apiId === "SASL_AUTHENTICATION_FAILED" || x.apiCode === 58);
  if (refused) return clean(authFailed(ctx.user ?? "", said(refused)));
  const auth = tree.find((x) => x.code === "PLT_KFK_AUTHENTICATION");
  if (auth) {
    // Not a refused password: an unsupported mechanism, a failed handshake.
    const deepest = tree.filter((x) => x.code === "PLT_KFK_PROTOCOL").at(-1) ?? auth;
    return clean(`SASL authentication failed: ${lowerFirst(said(deepest))}`);
  }
  const unknownTopic = tree.find((x) => /^Unknown topic /.test(text(x.message)));
  if (unknownTopic || tree.some((x) => x.apiCode === 3)) {
    return `topic ${JSON.stringify(ctx.topic ?? "")} does not exist (UNKNOWN_TOPIC_OR_PARTITION)`;
  }
  const protocol = tree.find((x) => x.code === "PLT_KFK_PROTOCOL");
  if (protocol) {
    const id = text(protocol.apiId);
    return clean(`${lowerFirst(said(protocol))}${id ? ` (${id})` : ""}`);
  }
  // Connection failures: one text per bootstrap server (`Connection to H:P failed.` + cause).
  const failures: string[] = [];
  for (const x of tree) {
    const m = /^Connection to (.+) failed\.$/.exec(text(x.message));
    if (m) failures.push(`${m[1]}: ${describeCause(x.cause, ctx.hostname)}`);
  }
  if (failures.length > 0) return clean(joinFailures(failures));
  const timeout = tree.find((x) => /timed out/i.test(text(x.message)));
  if (timeout) return clean(lowerFirst(text(timeout.message)).replace(/\.$/, ""));
  const last = tree.at(-1);
  return clean(describeCause(last ?? e, ctx.hostname));
}

/** A socket-level cause as a short text (`connection refused`). */
function describeCause(cause: unknown, hostname: string): string {
  if (cause === undefined || cause === null) return "connection failed";
  const msg = text((cause as DriverError).message);
  if (/^Connection closed/i.test(msg)) return "connection closed by the broker";
  if (/TLS handshake failed/.test(msg)) return lowerFirst(msg).replace(/\.$/, "");
  return describeNodeError(cause, hostname).replace(/\.$/, "");
}

/** `connection refused (a:9092, b:9092)` when every server failed alike, else one per server. */
function joinFailures(failures: string[]): string {
  const reasons = failures.map((f) => f.slice(f.indexOf(": ") + 2));
  if (new Set(reasons).size === 1) {
    const hosts = failures.map((f) => f.slice(0, f.indexOf(": ")));
    return `${reasons[0]} (${hosts.join(", ")})`;
  }
  return failures.join("; ");
}

function lowerFirst(s: string): string {
  return s.charAt(0).toLowerCase() + s.slice(1);
}

/** The part of the cluster's metadata the verdict reads. */
export interface ClusterView {
  readonly id: string;
  readonly brokers: number;
  readonly controllerId?: number;
  /** The topic asked for, if any: its partitions' leaders (-1: none). */
  readonly topic?: { readonly name: string; readonly leaders: readonly number[] };
}

/** What the condition asks of the cluster. */
export interface ClusterWants {
  readonly topic: string | undefined;
  readonly partitions: number | undefined;
  readonly minBrokers: number | undefined;
}

/** The verdict on one metadata answer: satisfied detail, or pending text. */
export function judgeCluster(
  view: ClusterView,
  wants: ClusterWants,
): { ok: true; detail: string } | { ok: false; error: string } {
  const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? "" : "s"}`;
  if (wants.minBrokers !== undefined && view.brokers < wants.minBrokers) {
    return {
      ok: false,
      error: `the cluster lists ${
        plural(view.brokers, "broker")
      }, waiting for at least ${wants.minBrokers}`,
    };
  }
  const parts = [`cluster ${view.id}: ${plural(view.brokers, "broker")}`];
  if (wants.topic !== undefined) {
    const t = view.topic;
    const name = JSON.stringify(wants.topic);
    if (!t) {
      return { ok: false, error: `topic ${name} does not exist (UNKNOWN_TOPIC_OR_PARTITION)` };
    }
    const n = t.leaders.length;
    if (wants.partitions !== undefined && n < wants.partitions) {
      return {
        ok: false,
        error: `topic ${name} has ${
          plural(n, "partition")
        }, waiting for at least ${wants.partitions}`,
      };
    }
    const leaderless = t.leaders.flatMap((l, i) => (l < 0 ? [i] : []));
    if (leaderless.length > 0) {
      return {
        ok: false,
        error: `topic ${name}: ${plural(leaderless.length, "partition")} without a leader (${
          leaderless.slice(0, 5).join(", ")
        }${leaderless.length > 5 ? ", ..." : ""})`,
      };
    }
    parts.push(`topic ${name}: ${plural(n, "partition")}`);
  }
  return { ok: true, detail: parts.join("; ") };
}
