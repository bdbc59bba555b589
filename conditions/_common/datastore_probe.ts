/**
 * The attempt every data-store probe makes (docs/contract.md §5, data
 * stores): read the password, build the TLS options, try each address of the
 * host in turn with one fresh session, and turn what the driver threw into a
 * result. Loaded by probes only.
 *
 * @module
 */

import { hintOf, withHint } from "../../engine/errors.ts";
import type { Probe, ProbeResult } from "../../engine/types.ts";
import {
  isConnectFailure,
  type NodeTlsOptions,
  nodeTlsOptions,
  type ReachOptions,
} from "./datastore.ts";
import { readPassword } from "./dsurl.ts";
import { type HostPort, loopbackRefusal, onEveryAddress } from "./net.ts";
import { nodeErrorHint } from "./hints.ts";
import { describeNodeError } from "./nodeerr.ts";

/** What one session gets. */
export interface SessionInput {
  /** The one address of the host this session connects to. */
  readonly address: HostPort;
  /** The password, read for this attempt; undefined without one. */
  readonly password: string | undefined;
  /** The TLS options, undefined for plain text. */
  readonly tls: NodeTlsOptions | undefined;
  /** The attempt's signal. */
  readonly signal: AbortSignal;
}

/** One session with one address: connects, checks, closes; throws what the driver throws. */
export type Session = (input: SessionInput) => Promise<ProbeResult>;

/** What a kind's error judge is told besides the error. */
export interface ErrorContext<U extends string | undefined = string | undefined> {
  /** The user that logs in. */
  readonly user: U;
  /** The host as typed, for certificate errors. */
  readonly hostname: string;
  /** Every secret the text must not show (the password, whatever its source). */
  readonly secrets: readonly (string | undefined)[];
}

/**
 * One attempt: `session` on each address of `o.hp` until one answers; an
 * error (a driver's, a password file's, the TLS files') becomes
 * `judge(error, context)`.
 */
export async function attemptEveryAddress<U extends string | undefined>(
  o: ReachOptions<U>,
  signal: AbortSignal,
  session: Session,
  judge: (e: unknown, ctx: ErrorContext<U>) => ProbeResult,
): Promise<ProbeResult> {
  let password: string | undefined;
  try {
    password = o.password === undefined ? undefined : await readPassword(o.password);
    const tls = o.tls.mode === "off" ? undefined : await nodeTlsOptions(o.tls, o.hp.hostname);
    return await onEveryAddress(
      o.hp,
      signal,
      (address) =>
        session({ address, password, tls, signal }).catch((e) => loopbackRefusal(e, address)),
      isConnectFailure,
    );
  } catch (e) {
    const result = judge(e, { user: o.user, hostname: o.hp.hostname, secrets: [password] });
    // What the shared helpers knew (docs/contract.md §6, hints) survives the kind's judgement.
    const hint = hintOf(e) ?? nodeErrorHint(e, o.hp.hostname);
    return result.status === "satisfied" || hint === undefined ? result : { ...result, hint };
  }
}

/**
 * One attempt over a Unix socket (the kind's session connects to `path`
 * itself): nothing to resolve, one session, TLS only when `withTls` (libpq
 * uses none on a socket; mysql2 does what it is asked).
 */
export async function attemptOnSocket<U extends string | undefined>(
  o: ReachOptions<U>,
  path: string,
  withTls: boolean,
  signal: AbortSignal,
  session: Session,
  judge: (e: unknown, ctx: ErrorContext<U>) => ProbeResult,
): Promise<ProbeResult> {
  let password: string | undefined;
  try {
    password = o.password === undefined ? undefined : await readPassword(o.password);
    const tls = !withTls || o.tls.mode === "off"
      ? undefined
      : await nodeTlsOptions(o.tls, o.hp.hostname);
    return await session({ address: o.hp, password, tls, signal });
  } catch (e) {
    return judge(e, { user: o.user, hostname: path, secrets: [password] });
  }
}

/**
 * The probe of a data-store kind: each attempt is {@link attemptEveryAddress} with `session` and
 * `judge`; `close` ends the driver sessions still open.
 */
export function dataStoreProbe<U extends string | undefined>(
  o: ReachOptions<U>,
  sessions: { close(): void },
  session: Session,
  judge: (e: unknown, ctx: ErrorContext<U>) => ProbeResult,
): Probe {
  return {
    check: ({ signal }) => attemptEveryAddress(o, signal, session, judge),
    close: () => sessions.close(),
  };
}

/**
 * Runs a driver's `connect()` and returns what it gives; a refused or unreachable connection is thrown
 * again as one text for every address (`connection refused`), so that the
 * addresses of a name read as one failure.
 */
export async function connectOrDescribe<T>(
  connect: () => Promise<T>,
  hostname: string,
): Promise<T> {
  try {
    return await connect();
  } catch (e) {
    if (isConnectFailure(e)) {
      const error = Object.assign(new Error(describeNodeError(e, hostname)), {
        code: (e as { code: string }).code,
      });
      throw withHint(error, nodeErrorHint(e, hostname));
    }
    throw e;
  }
}
