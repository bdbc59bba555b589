/**
 * mongodb: the text of a failed attempt (docs/contract.md §5 mongodb). Every
 * failure is pending. Pure, so the texts are unit-tested over errors shaped
 * like the driver's.
 *
 * @module
 */

import { authFailed, scrub } from "../_common/datastore.ts";
import { describeNodeError } from "../_common/nodeerr.ts";

/** Server error codes of a server that is starting, stopping or between roles. */
const TRANSIENT: Readonly<Record<number, string>> = {
  91: "ShutdownInProgress",
  189: "PrimarySteppedDown",
  10107: "NotWritablePrimary",
  11600: "InterruptedAtShutdown",
  11602: "InterruptedDueToReplStateChange",
  13435: "NotPrimaryNoSecondaryOk",
  13436: "NotPrimaryOrSecondary",
};

/** An error of the driver, as far as the text reads it. */
interface DriverError {
  readonly name?: unknown;
  readonly message?: unknown;
  readonly code?: unknown;
  readonly codeName?: unknown;
  readonly cause?: unknown;
  /** A server selection error's topology description. */
  readonly reason?: {
    readonly type?: unknown;
    readonly servers?: { values?(): Iterable<ServerView> };
  };
}

/** One server of a topology description. */
interface ServerView {
  readonly address?: unknown;
  readonly type?: unknown;
  readonly setName?: unknown;
  readonly error?: unknown;
}

/** What the attempt knows for the error text. */
export interface ErrorContext {
  /** The user that logs in, if any. */
  readonly user: string | undefined;
  /** The first host as typed, for certificate errors. */
  readonly hostname: string;
  /** Every secret the text must not show. */
  readonly secrets: readonly (string | undefined)[];
}

function text(x: unknown): string {
  return typeof x === "string" ? x : x instanceof Error ? x.message : "";
}

/** The pending text of an attempt that failed with `e`. */
export function describeMongoError(e: unknown, ctx: ErrorContext): string {
  const clean = (t: string) => scrub(t, ctx.secrets);
  const err = (e ?? {}) as DriverError;
  const message = text(err.message) || String(e);
  const code = typeof err.code === "number" ? err.code : undefined;
  if (code === 18 || /^Authentication failed/i.test(message)) {
    return clean(authFailed(ctx.user ?? "", message));
  }
  if (code !== undefined && TRANSIENT[code]) return clean(`${message} (${TRANSIENT[code]})`);
  if (err.name === "MongoServerSelectionError" || err.reason?.servers) {
    return clean(describeSelection(err, message, ctx.hostname));
  }
  if (typeof err.codeName === "string") return clean(`${message} (${err.codeName})`);
  const cause = err.cause as { code?: unknown } | undefined;
  if (typeof cause?.code === "string" || typeof (err as { code?: unknown }).code === "string") {
    return clean(describeNodeError(typeof cause?.code === "string" ? cause : e, ctx.hostname));
  }
  return clean(lowerFirst(message));
}

/**
 * A server selection that timed out, in the topology's words: each server's
 * own error (`connection refused (db:27017)`), or what the servers are when
 * none is suitable (`no primary: db-1:27017 is RSSecondary of "rs0"`).
 */
function describeSelection(err: DriverError, message: string, hostname: string): string {
  const servers = [...(err.reason?.servers?.values?.() ?? [])];
  const failures = new Map<string, string[]>();
  for (const s of servers) {
    if (s.error === undefined || s.error === null) continue;
    const why = describeNetworkError(s.error, hostname);
    failures.set(why, [...(failures.get(why) ?? []), text(s.address)]);
  }
  if (failures.size > 0) {
    return [...failures].map(([why, where]) => `${why} (${where.join(", ")})`).join("; ");
  }
  const known = servers.filter((s) => s.type !== "Unknown");
  if (err.reason?.type === "ReplicaSetNoPrimary" || known.length > 0) {
    const list = known.map((s) =>
      `${text(s.address)} is ${text(s.type)}${
        typeof s.setName === "string" ? ` of ${JSON.stringify(s.setName)}` : ""
      }`
    );
    const what = err.reason?.type === "ReplicaSetNoPrimary" ? "no primary" : "no suitable server";
    if (list.length > 0) return `${what}: ${list.join(", ")}`;
    return `${what}: no server answered as a member of the replica set (${lowerFirst(message)})`;
  }
  const m = /connect (E[A-Z]+) (\S+)/.exec(message);
  if (m) return `${describeNodeError({ code: m[1] }, hostname)} (${m[2]})`;
  if (servers.length > 0) {
    return `no answer from ${servers.map((s) => text(s.address)).join(", ")} (${
      lowerFirst(message)
    })`;
  }
  return lowerFirst(message);
}

/**
 * A driver network error (`MongoNetworkError: connect ECONNREFUSED h:p`,
 * its socket error as `cause`) as a short text: `connection refused`.
 */
function describeNetworkError(e: unknown, hostname: string): string {
  const err = e as { cause?: { code?: unknown }; message?: unknown } | null;
  if (typeof err?.cause?.code === "string") return describeNodeError(err.cause, hostname);
  const m = /(?:connect|read|write) (E[A-Z]+)/.exec(text(err?.message));
  if (m) return describeNodeError({ code: m[1] }, hostname);
  const msg = text(err?.message) || text(e);
  return msg === "" ? "connection failed" : describeNodeError(e, hostname) || lowerFirst(msg);
}

function lowerFirst(s: string): string {
  // An acronym or a code (`ENOENT`, `TLS`) stays as it is.
  if (/^[A-Z][A-Z0-9_]/.test(s)) return s;
  return s.charAt(0).toLowerCase() + s.slice(1);
}
