/**
 * nats: the target's server list, read as the official clients read their
 * `servers` (docs/contract.md §5 nats): a comma list of URLs, each
 * `nats://[user:password@|token@]host[:port]`, `tls://...` or a bare
 * `host[:port]` (nats:// assumed), port 4222 by default, white space around
 * each entry ignored. As in the NATS clients, user-info with a password is a
 * user and password, and user-info alone is a token (unless
 * `--password-env` / `--password-file` gives the user's password), and one
 * `tls://` server turns TLS on for all. Pure; conditions/nats/url_test.ts
 * checks the forms against the client's own server list.
 *
 * @module
 */

import type { KindInput } from "../../engine/types.ts";
import { maskUrlPassword } from "../_common/dsurl.ts";
import { type HostPort, parseHostPort } from "../_common/net.ts";

/** The form of the target, for usage errors. */
export const FORM =
  "nats://[user:password@|token@]host[:port][,nats://host[:port]...] or tls://...";

/** What a nats target says. */
export interface NatsTarget {
  /** The servers, in the order written. */
  readonly servers: readonly HostPort[];
  /** The user of user-info with a password (or with a password flag). */
  readonly user: string | undefined;
  /** The password of user-info, decoded. */
  readonly password: string | undefined;
  /** A token: user-info without a password (and no password flag). */
  readonly token: string | undefined;
  /** Whether a server is written `tls://`. */
  readonly tls: boolean;
  /** The target as displayed: passwords and tokens as `***`. */
  readonly display: string;
}

/** One entry: scheme, user-info, host and port, path, query, fragment. */
const ENTRY = /^([a-z][a-z0-9+.-]*):\/\/([^/?#]*)(\/[^?#]*)?(?:\?([^#]*))?(#.*)?$/is;

/** One server of the list, split. */
interface Entry {
  readonly scheme: string;
  readonly info: string | undefined;
  readonly hp: HostPort;
  readonly display: string;
}

/**
 * Reads the target's server list. `userFlagPassword`: a password flag is
 * given, so user-info alone is a user, not a token. Every secret is
 * registered before any usage error can quote the target.
 */
export function parseNatsTarget(input: KindInput, userFlagPassword: boolean): NatsTarget {
  const text = input.target ?? "";
  const raw = text.split(",").map((s) => s.trim());
  const entries: Entry[] = [];
  // Secrets first: every user-info of the list (a token shows nowhere either).
  for (const s of raw) registerSecrets(input, s, userFlagPassword);
  for (const s of raw) entries.push(parseEntry(input, s === "" ? s : withScheme(s)));
  const infos = new Set(entries.map((e) => e.info).filter((i) => i !== undefined));
  if (infos.size > 1) {
    input.fail(undefined, "the servers' user-info differ: write the same on each, or on one");
  }
  const info = [...infos][0];
  const colon = info?.indexOf(":") ?? -1;
  const name = info === undefined ? undefined : decode(colon < 0 ? info : info.slice(0, colon));
  const password = info === undefined || colon < 0 ? undefined : decode(info.slice(colon + 1));
  const isToken = info !== undefined && colon < 0 && !userFlagPassword;
  if (name === "" && password !== undefined) {
    input.fail(undefined, "the URL has a password but no user (a token is written token@host)");
  }
  return {
    servers: entries.map((e) => e.hp),
    user: isToken || name === "" ? undefined : name,
    password,
    token: isToken ? name : undefined,
    tls: entries.some((e) => e.scheme === "tls"),
    display: entries.map((e) => e.display).join(","),
  };
}

/** A bare `host[:port]` is a nats:// URL, as the clients read it. */
function withScheme(s: string): string {
  return /^[a-z][a-z0-9+.-]*:\/\//i.test(s) ? s : `nats://${s}`;
}

/** Registers an entry's password, or its token (user-info alone, no password flag). */
function registerSecrets(input: KindInput, s: string, userFlagPassword: boolean): void {
  const masked = maskUrlPassword(withScheme(s));
  for (const secret of masked.secrets) input.secret(secret);
  if (masked.password === undefined && masked.user !== undefined && !userFlagPassword) {
    input.secret(masked.user);
    // As written too (percent-encoded): the user-info up to its last `@`.
    const raw = /^[^:]*:\/\/([^/?#]*)@/.exec(withScheme(s))?.[1];
    if (raw !== undefined) input.secret(raw);
  }
}

/** One entry of the list. */
function parseEntry(input: KindInput, s: string): Entry {
  const masked = maskUrlPassword(s);
  const tokenShown = masked.password === undefined && masked.user !== undefined;
  const display = tokenShown ? s.replace(/^([^:]*:\/\/)[^/?#]*@/, "$1***@") : masked.display;
  const shown = JSON.stringify(display);
  const m = ENTRY.exec(s);
  if (!m) input.fail(undefined, `expected ${FORM}, got ${shown || '""'}`);
  const scheme = m[1]!.toLowerCase();
  if (scheme === "ws" || scheme === "wss") {
    input.fail(
      undefined,
      `${scheme}:// servers are not supported (NATS over TCP only), got ${shown}`,
    );
  }
  if (scheme !== "nats" && scheme !== "tls") {
    input.fail(undefined, `expected ${FORM}, got ${shown}`);
  }
  if (m[5] !== undefined) {
    input.fail(undefined, `a URL fragment (#...) has no meaning here: ${shown}`);
  }
  if (m[4] !== undefined && m[4] !== "") {
    const name = decode(m[4].split("&")[0]!.split("=")[0]!);
    input.fail(
      undefined,
      `unknown URL parameter ${
        JSON.stringify(name)
      } (a NATS URL takes none: credentials go in its user-info or the flags)`,
    );
  }
  if (m[3] !== undefined && m[3] !== "/") {
    input.fail(undefined, `a NATS URL has no path, got ${JSON.stringify(m[3])}`);
  }
  const authority = m[2]!;
  const at = authority.lastIndexOf("@");
  const hostPort = authority.slice(at + 1);
  if (hostPort === "") input.fail(undefined, `the host is missing in ${shown}`);
  try {
    return {
      scheme,
      info: at < 0 ? undefined : authority.slice(0, at),
      hp: parseHostPort(hostPort, 4222),
      display,
    };
  } catch (e) {
    return input.fail(undefined, (e as Error).message.replace(/HOST:PORT/, "HOST[:PORT]"));
  }
}

function decode(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}
