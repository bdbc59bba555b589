/**
 * The shared suites' part of a kind: every kind's folder holds `conditions/<kind>/_suite.ts`,
 * which exports `suite` ({@link KindSuite}): its dead target for the conformance suite
 * (tests/conformance/conformance_test.ts), its live row for the live conformance suite
 * (tests/conformance/live_test.ts) and its usage errors, checked on parse by its unit test and
 * through the CLI by its end-to-end test. The suites find these files through the registry
 * (conditions/mod.ts), so a kind is added without touching them (docs/development.md, "Adding a
 * kind"). The shipped bundle never imports them: it follows main.ts's imports only.
 *
 * This module holds the shapes of those rows, the helpers the rows share, and the loader.
 *
 * @module
 */

import { assert, assertEquals } from "./_assert.ts";
import { usageError } from "./_kit.ts";
import { holdConnections } from "./services/_util.ts";
import type { Pki } from "./services/tls.ts";
import { registry } from "../conditions/all.ts";

// --- A kind's suite file. ---

/** What a kind gives the shared suites. */
export interface KindSuite {
  /** A command line whose target is dead, for the conformance suite. */
  readonly dead: DeadTarget;
  /** Its live row, for the live conformance suite. */
  readonly live: LiveRow;
  /** Its usage errors, where its tests check them through this file. */
  readonly usage?: readonly UsageRow[];
  /**
   * The kind runs its probes in a worker (docs/development.md): said here as well as by its
   * declaration's `isolate`, so that losing it fails tests/conformance/isolation_test.ts.
   */
  readonly isolated?: true;
}

/** The file of `kind`'s folder that holds its suite, relative to the repository's root. */
export const suiteFile = (kind: string): string => `conditions/${kind}/_suite.ts`;

/** `kind`'s suite, from its folder; throws, naming the file, when the kind has none. */
export async function kindSuite(kind: string): Promise<KindSuite> {
  const url = new URL(`../${suiteFile(kind)}`, import.meta.url).href;
  const mod = await import(url).catch((e: unknown) => {
    throw new Error(`the kind ${kind} has no suite: ${suiteFile(kind)} (${e})`);
  });
  // The module is loaded by name, so its type is not checked here: its parts are.
  const suite = (mod as { suite?: Partial<KindSuite> }).suite;
  assert(
    typeof suite?.dead === "function" && typeof suite.live?.make === "function",
    `${suiteFile(kind)} exports no suite with a dead target and a live row`,
  );
  return suite as KindSuite;
}

/**
 * Every registered kind's suite, by name, and what is wrong with the kinds whose suite could not
 * be had (each suite test asserts that list is empty, and a kind missing from the map fails).
 */
export async function kindSuites(): Promise<
  { suites: Map<string, KindSuite>; missing: string[] }
> {
  const suites = new Map<string, KindSuite>();
  const missing: string[] = [];
  for (const k of registry.kinds) {
    await kindSuite(k.name).then((s) => suites.set(k.name, s), (e) => missing.push(String(e)));
  }
  return { suites, missing };
}

// --- The conformance suite's dead targets. ---

/** A secret that must never show in a display name or a result. */
export const DEAD_MARK = "Zq9SecretMark";

/** Local things that never answer, shared by the dead targets. */
export interface Dead {
  /** A TCP port that accepts and then never says anything. */
  readonly silentTcp: number;
  /** A UDP port nobody reads. */
  readonly silentUdp: number;
  /** A directory where nothing exists: a dead target may write there what it reads first. */
  readonly dir: string;
}

/**
 * A command line (the kind's word first) whose target is dead (refused, silent, missing), and
 * whose secrets (where the kind takes any) are DEAD_MARK.
 */
export type DeadTarget = (d: Dead) => { args: string[]; env?: Record<string, string> };

// --- Usage errors. ---

/**
 * One usage error: the words (the condition first, under the name it is given), the text of the
 * line between `waitcmd: condition 1 (NAME): ` and ` (see: waitcmd help KIND)`, and the
 * environment the row needs, if any. A kind's unit test checks its rows on parse and validation
 * ({@link stepUsageErrors}), its e2e test runs them through the CLI (`assertKindUsageErrors` in
 * tests/e2e/_cli.ts), where nothing may be probed.
 */
export type UsageRow = readonly [args: string[], text: string, env?: Record<string, string>];

/** `kind`'s usage-error rows; throws when its suite has none. */
export async function usageRows(kind: string): Promise<readonly UsageRow[]> {
  const rows = (await kindSuite(kind)).usage;
  assert(rows && rows.length > 0, `${suiteFile(kind)} has no usage rows`);
  return rows;
}

/**
 * One step a row of `kind`: the usage-error line of the row's words (with its environment) must be
 * exactly `waitcmd: condition 1 (NAME): TEXT (see: waitcmd help KIND)`.
 */
export async function stepUsageErrors(t: Deno.TestContext, kind: string): Promise<void> {
  for (const [args, text, env] of await usageRows(kind)) {
    const name = [...Object.entries(env ?? {}).map(([k, v]) => `${k}=${v}`), ...args].join(" ");
    const want = `waitcmd: condition 1 (${args[0]}): ${text} (see: waitcmd help ${kind})`;
    await t.step(name, async () => assertEquals(await usageError(args, env), want));
  }
}

// --- The live conformance suite's rows. ---

/** The scenarios of the suite. */
export type Scenario =
  | "late"
  | "satisfied"
  | "timeout"
  | "credential"
  | "secret"
  | "restart"
  | "tls";

/** A server of the kind with TLS, for the tls scenario. */
export interface TlsTarget {
  /** Arguments (after the kind's word) satisfied over TLS... */
  readonly satisfied: readonly string[][];
  /** ...with this detail (a string: the whole detail). */
  readonly detail: string | RegExp;
  /** Arguments (after the kind's word) retried while pending, with their last_error. */
  readonly pending: readonly (readonly [string[], string])[];
  /** Stops the server. */
  remove(): Promise<unknown>;
}

/** One row's live target, made and driven by the suite. */
export interface LiveTarget {
  /** Condition words that hold once the target is up (the kind's word first). */
  readonly satisfied: readonly string[];
  /** The detail of a satisfied attempt (matched whole). */
  readonly detail: RegExp;
  /** Condition words that stay pending while the target is up... */
  readonly pending: readonly string[];
  /** ...with this in their last_error. */
  readonly pendingError: string | RegExp;
  /** Brings the target up; idempotent. `child` is the run that waits for it, if any. */
  up(child?: Deno.ChildProcess): Promise<unknown>;
  /** What an attempt says while the target is down. */
  readonly downError: string | RegExp;
  /** Takes the target down (the restart scenario); returns once attempts see it down. */
  down?(child?: Deno.ChildProcess): Promise<unknown>;
  /** Condition words whose credential the service refuses, and the last_error fragment. */
  readonly wrong?: {
    readonly args: readonly string[];
    readonly error?: string | RegExp;
    /** The kind ends the run at once (exit 3) on refused credentials, instead of waiting. */
    readonly fatal?: boolean;
  };
  /** A login the service does not know yet, and what adds it. */
  readonly grant?: { readonly args: readonly string[]; add(): Promise<unknown> };
  /** The condition without its password, for --password-env and --password-file. */
  readonly passwordFlags?: { readonly bare: readonly string[]; readonly password: string };
  /** Secrets the arguments or the environment hold: none may show in any output. */
  readonly secrets?: readonly string[];
  /** Condition words that are a usage error and hold a secret. */
  readonly usage?: readonly string[];
  /** Environment of every run. */
  readonly env?: Record<string, string>;
  /** Runs waitcmd under this command (e.g. in a network namespace of its own). */
  readonly wrapper?: string[];
  /** The deadline of the runs that time out (default 1s). */
  readonly deadline?: string;
  /**
   * Starts a server of the kind with `pki`'s server certificate (which names localhost only, not
   * 127.0.0.1); `other` is a CA that did not sign it.
   */
  tls?(pki: Pki, other: Pki): Promise<TlsTarget>;
  /** Stops the service and removes what the row made. */
  remove(): Promise<void>;
}

/** A kind's row. */
export interface LiveRow {
  /** What the row needs, for the test's name and `ignoreWithout`. */
  readonly needs: string;
  /** Why that cannot be had here, or undefined. */
  readonly missing?: () => Promise<string | undefined>;
  /** Makes the target, down (the late-start scenario brings it up). */
  make(): LiveTarget | Promise<LiveTarget>;
  /** Why a scenario does not apply to the kind. */
  readonly na?: Partial<Record<Scenario, string>>;
}

/** A secret with characters that URLs must encode. */
export const MARK = "Zq9Live/Mark:7";

/** A temporary directory, removed with `remove()`. */
export async function tempDir(kind: string): Promise<string> {
  return await Deno.makeTempDir({ prefix: `waitcmd-live-${kind}-` });
}

/** Something that runs while up: `start` makes it, its result's `stop` ends it. */
export function toggle(start: () => Promise<{ stop(): Promise<unknown> }>) {
  let running: { stop(): Promise<unknown> } | undefined;
  return {
    get up() {
      return running !== undefined;
    },
    async start() {
      running ??= await start();
    },
    async stop() {
      const r = running;
      running = undefined;
      await r?.stop();
    },
  };
}

/** A TCP listener on a fixed port that accepts (and holds) connections while up. */
export function tcpServer(
  port: number,
  listen: () => Deno.Listener = () => Deno.listen({ hostname: "127.0.0.1", port }),
) {
  return toggle(() => {
    const held = holdConnections(listen());
    return Promise.resolve({ stop: () => held.close() });
  });
}

/** A file target: up writes it, down removes it. */
export function fileToggle(path: string, write: () => Promise<unknown>) {
  return {
    up: async () => {
      if (!(await Deno.stat(path).then(() => true, () => false))) await write();
    },
    down: () => Deno.remove(path, { recursive: true }).catch(() => {}),
  };
}

/** Writes `text` to `path` whole at once (a rename), as a finished download appears. */
export async function writeWhole(path: string, data: string | Uint8Array): Promise<void> {
  const tmp = `${path}.part-${crypto.randomUUID()}`;
  if (typeof data === "string") await Deno.writeTextFile(tmp, data);
  else await Deno.writeFile(tmp, data);
  await Deno.rename(tmp, path);
}

/** A throwaway server of tests/services that logs users in by URL, stops and starts again. */
export interface LoginServer {
  readonly port: number;
  url(user?: string, password?: string): string;
  start(): Promise<unknown>;
  stop(): Promise<unknown>;
  remove(): Promise<void>;
}

/**
 * The row of a kind whose server logs `app` in with `password` from the URL: made stopped,
 * refused with MARK as the password, a user `late1` (password `late-pw-1`) added late by
 * `grant`, and a second server made with TLS for the tls scenario.
 */
export function loginRow<S extends LoginServer>(kind: string, o: {
  readonly needs: string;
  readonly missing: () => Promise<string | undefined>;
  /** Makes a server (started unless `start: false`), with TLS from these files if asked. */
  make(opts: {
    start?: boolean;
    tls?: { caFile: string; certFile: string; keyFile: string };
  }): Promise<S>;
  readonly password: string;
  readonly detail: RegExp;
  /** Words after the URL that stay pending, and their last_error. */
  readonly pending: readonly [string[], string];
  /** Why the server refuses `app` with a wrong password. */
  readonly refused: string;
  /** The whole text of that refusal, when it is not `authentication failed for user "app": <refused>`. */
  readonly wrongError?: string;
  grant(server: S): { url: string; add(): Promise<unknown> };
  /** The URL without a password. */
  bare(server: S): string;
  /** Words after a URL with MARK as its password that are a usage error. */
  readonly usage: readonly string[];
  /** What the TLS server (`server`, with `pki`'s certificate) satisfies and leaves pending. */
  tls(server: S, pki: Pki, other: Pki): Omit<TlsTarget, "remove">;
  /** The deadline of the runs that time out, where an attempt may take longer than 1s. */
  readonly deadline?: string;
}): LiveRow {
  return {
    needs: o.needs,
    missing: o.missing,
    async make() {
      const s = await o.make({ start: false });
      const grant = o.grant(s);
      return {
        satisfied: [kind, s.url()],
        detail: o.detail,
        pending: [kind, s.url(), ...o.pending[0]],
        pendingError: o.pending[1],
        up: () => s.start(),
        down: () => s.stop(),
        downError: "connection refused",
        wrong: {
          args: [kind, s.url("app", MARK)],
          error: o.wrongError ?? `authentication failed for user "app": ${o.refused}`,
        },
        grant: { args: [kind, grant.url], add: grant.add },
        passwordFlags: { bare: [kind, o.bare(s)], password: o.password },
        secrets: [MARK, o.password, "late-pw-1"],
        usage: [kind, s.url("app", MARK), ...o.usage],
        deadline: o.deadline,
        tls: async (pki, other) => {
          const { ca, server } = pki;
          const tls = await o.make({
            tls: { caFile: ca.certFile, certFile: server.certFile, keyFile: server.keyFile },
          });
          return { ...o.tls(tls, pki, other), remove: () => tls.remove() };
        },
        remove: () => s.remove(),
      };
    },
  };
}
