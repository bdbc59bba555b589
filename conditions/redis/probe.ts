/**
 * redis's probe: on each attempt, one node-redis client (to each address of
 * the host in turn until one answers) logs in, selects the database, sends
 * PING and the checks, and is closed. Its reconnect loop is off, so nothing
 * outlives the attempt; an abort destroys the connection at once.
 *
 * @module
 */

import { createClient } from "@redis/client";
import {
  connectOrDescribe,
  dataStoreProbe,
  type SessionInput,
} from "../_common/datastore_probe.ts";
import type { Probe, ProbeEnv, ProbeResult } from "../../engine/types.ts";
import { clip } from "../../engine/masking.ts";
import type { SecretRegistry } from "../../engine/masking.ts";
import type { UserRegex } from "../_common/regex.ts";
import { DriverSessions } from "../_common/driver.ts";
import { readPassword } from "../_common/dsurl.ts";
import { judgeError } from "./errors.ts";
import type { RedisOptions } from "./mod.ts";

/** The part of a node-redis client the probe uses (its own types are generic over modules). */
interface Client {
  connect(): Promise<unknown>;
  sendCommand(args: string[]): Promise<unknown>;
  close(): Promise<void>;
  destroy(): void;
  on(event: "error", listener: (err: unknown) => void): unknown;
}

/** How much of a key's name or value a result shows. */
const SHOWN = 200;

/** What a key must be: there, equal to a text, or matched by a pattern. */
interface KeyWant {
  readonly key: string;
  readonly equals: string | undefined;
  readonly matches: UserRegex | undefined;
}

/**
 * Longest part of a value a pattern runs on: regex.ts's INLINE_TEXT (64 Ki characters), so RE2
 * runs on this thread; kept here so that the regex engine loads only with `--expect-key`.
 */
export const MATCHED_MAX = 64 << 10;

/** Makes the probe of one redis condition; the regex engine is loaded only for a pattern. */
export async function create(o: RedisOptions, env: ProbeEnv): Promise<Probe> {
  const matches = o.matches === undefined
    ? undefined
    : (await import("../_common/regex.ts")).compileRegex(o.matches);
  const want: KeyWant | undefined = o.key === undefined
    ? undefined
    : { key: o.key, equals: o.equals, matches };
  // close(): pending replies first, then QUIT; destroy(): the socket at once.
  const sessions = new DriverSessions<Client>({
    end: (c) => c.close(),
    destroy: (c) => c.destroy(),
  }, env.clock);
  if (o.socket !== undefined) {
    const path = o.socket;
    return {
      check: ({ signal }) => socketAttempt(path, signal),
      close: () => sessions.close(),
    };
  }
  return dataStoreProbe(o, sessions, session, judgeError);

  /** One attempt over the Unix socket: no addresses to try, no TLS. */
  async function socketAttempt(path: string, signal: AbortSignal): Promise<ProbeResult> {
    let password: string | undefined;
    try {
      password = o.password === undefined ? undefined : await readPassword(o.password);
      return await connectAndCheck({ path }, password, undefined, signal);
    } catch (e) {
      return judgeError(e, { user: o.user, hostname: path, secrets: [password] });
    }
  }

  /** Connects to one address, sends the commands and closes; throws what the driver throws. */
  function session({ address, password, tls, signal }: SessionInput): Promise<ProbeResult> {
    return connectAndCheck({ host: address.hostname, port: address.port }, password, tls, signal);
  }

  /** Connects (to a host or a socket), sends the commands and closes. */
  function connectAndCheck(
    where: { host: string; port: number } | { path: string },
    password: string | undefined,
    tls: SessionInput["tls"],
    signal: AbortSignal,
  ): Promise<ProbeResult> {
    signal.throwIfAborted();
    const client: Client = createClient({
      socket: {
        ...where,
        // One connection per attempt: no reconnects, no timers of the driver's own.
        reconnectStrategy: false,
        connectTimeout: 0,
        noDelay: true,
        keepAlive: false,
        ...(tls === undefined ? {} : { tls: true as const, ...tls }),
      },
      ...(o.user === undefined ? {} : { username: o.user }),
      ...(password === undefined ? {} : { password }),
      database: o.database,
      // AUTH (RESP2) rather than HELLO: works with every server version; no extra round trips.
      RESP: 2,
      disableClientInfo: true,
      maintNotifications: "disabled",
    });
    // A late socket error (after the verdict, after an abort) must not escape as unhandled.
    client.on("error", () => {});
    return sessions.run(client, signal, async (_, state) => {
      await connectOrDescribe(() => client.connect(), "path" in where ? where.path : o.hp.hostname);
      state.up = true;
      const pong = await client.sendCommand(["PING"]);
      if (pong !== "PONG") {
        return { status: "pending", error: `PING answered ${JSON.stringify(String(pong))}` };
      }
      const parts: string[] = ["PONG"];
      if (want !== undefined) {
        const verdict = await checkKey(client, want, env.secrets);
        if (!verdict.ok) return { status: "pending", error: verdict.error };
        parts.push(verdict.detail);
      }
      if (o.role !== undefined) {
        const reply = await client.sendCommand(["ROLE"]);
        const raw = String(Array.isArray(reply) ? reply[0] : reply);
        const role = raw === "slave" ? "replica" : raw;
        if (role !== o.role) {
          return { status: "pending", error: `role is ${role}, expected ${o.role}` };
        }
        parts.push(`role ${role}`);
      }
      if (tls !== undefined) parts.push("TLS");
      return { status: "satisfied", detail: parts.join(", ") };
    });
  }
}

/**
 * --key, --equals and --expect-key against the server. The value is outside text: a registered
 * secret is masked in it where it is shown (docs/contract.md §9).
 */
async function checkKey(
  client: Client,
  want: KeyWant,
  secrets: SecretRegistry | undefined,
): Promise<{ ok: true; detail: string } | { ok: false; error: string }> {
  const name = JSON.stringify(clip(want.key, SHOWN, secrets));
  if (want.equals === undefined && want.matches === undefined) {
    const n = await client.sendCommand(["EXISTS", want.key]);
    return Number(n) >= 1
      ? { ok: true, detail: `key ${name} exists` }
      : { ok: false, error: `key ${name} does not exist` };
  }
  let value: unknown;
  try {
    value = await client.sendCommand(["GET", want.key]);
  } catch (e) {
    // A hash, list, set, ...: GET answers WRONGTYPE; only a string has a value to compare.
    const message = e instanceof Error ? e.message : String(e);
    if (!message.startsWith("WRONGTYPE")) throw e;
    return { ok: false, error: `key ${name} holds no string value: ${clip(message, SHOWN)}` };
  }
  if (value === null || value === undefined) {
    return { ok: false, error: `key ${name} does not exist` };
  }
  const text = String(value);
  const shown = JSON.stringify(clip(text, SHOWN, secrets));
  if (want.matches !== undefined) {
    // Cut before matching: a value is up to 512 MiB, the pattern runs on its start only.
    const pattern = `/${clip(want.matches.source, SHOWN, secrets)}/`;
    return want.matches.test(head(text))
      ? { ok: true, detail: `key ${name} matches ${pattern}` }
      : { ok: false, error: `key ${name} is ${shown}, which does not match ${pattern}` };
  }
  const equals = JSON.stringify(clip(want.equals!, SHOWN, secrets));
  return text === want.equals
    ? { ok: true, detail: `key ${name} is ${equals}` }
    : { ok: false, error: `key ${name} is ${shown}, expected ${equals}` };
}

/** The first `MATCHED_MAX` characters of `text`, never half a surrogate pair. */
export function head(text: string): string {
  if (text.length <= MATCHED_MAX) return text;
  const end = /[\ud800-\udbff]/.test(text.charAt(MATCHED_MAX - 1)) ? MATCHED_MAX - 1 : MATCHED_MAX;
  return text.slice(0, end);
}
