/**
 * mongodb: the decision (docs/contract.md §5 mongodb) — what a `hello`
 * reply means for --primary and --replica-set. Pure, so it is unit-tested
 * over replies shaped like a real server's.
 *
 * @module
 */

/** The fields of a `hello` (or legacy `isMaster`) reply the decision reads. */
export interface HelloReply {
  readonly isWritablePrimary?: unknown;
  /** Legacy `isMaster` name of isWritablePrimary. */
  readonly ismaster?: unknown;
  readonly secondary?: unknown;
  readonly arbiterOnly?: unknown;
  readonly hidden?: unknown;
  readonly setName?: unknown;
  /** The primary as this member sees it (`host:port`). */
  readonly primary?: unknown;
  /** `isdbgrid` on a mongos. */
  readonly msg?: unknown;
  /** Set on a replica-set member that has no valid config yet. */
  readonly isreplicaset?: unknown;
  readonly info?: unknown;
  readonly me?: unknown;
}

/** What the condition asks. */
export interface HelloWants {
  readonly primary: boolean;
  readonly replicaSet: string | undefined;
}

/** What the server is, in words: `writable primary of replica set "rs0"`, `standalone`. */
export function roleOf(h: HelloReply): string {
  const writable = h.isWritablePrimary === true || h.ismaster === true;
  const set = typeof h.setName === "string" ? h.setName : undefined;
  if (h.msg === "isdbgrid") return "mongos (sharded cluster router)";
  if (set !== undefined) {
    const of = `of replica set ${JSON.stringify(set)}`;
    if (writable) return `writable primary ${of}`;
    if (h.secondary === true) return `${h.hidden === true ? "hidden " : ""}secondary ${of}`;
    if (h.arbiterOnly === true) return `arbiter ${of}`;
    return `member ${of} that is neither primary nor secondary (starting up or recovering)`;
  }
  if (h.isreplicaset === true) return "replica-set member without a valid replica set config yet";
  return writable ? "standalone" : "server that is not writable";
}

/** The verdict on a `hello` reply: satisfied (with the role), or pending text. */
export function judgeHello(
  h: HelloReply,
  wants: HelloWants,
): { ok: true; role: string } | { ok: false; error: string } {
  const role = roleOf(h);
  const set = typeof h.setName === "string" ? h.setName : undefined;
  if (wants.replicaSet !== undefined && set !== wants.replicaSet) {
    const is = set === undefined
      ? `not a member of a replica set: ${role}`
      : `replica set is ${JSON.stringify(set)}`;
    return { ok: false, error: `${is}, expected ${JSON.stringify(wants.replicaSet)}` };
  }
  const writable = h.isWritablePrimary === true || h.ismaster === true;
  if (wants.primary && (!writable || h.arbiterOnly === true)) {
    const seen = typeof h.primary === "string" ? ` (it sees ${h.primary} as primary)` : "";
    const a = /^[aeiou]/.test(role) ? "an" : "a";
    return { ok: false, error: `no writable primary answered: the server is ${a} ${role}${seen}` };
  }
  return { ok: true, role };
}
