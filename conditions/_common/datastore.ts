/**
 * What the SQL and key-value data-store kinds (postgres, mysql, redis) share
 * (docs/contract.md §5 postgres, §9): the server's own URL form split into
 * host, user, password, path and parameters; the password's single source;
 * the `--tls`, `--ca-file` and `--insecure` flags and the node:tls options
 * they stand for; and the scrubbing of driver messages, which may quote the
 * password or a URL, before they become `last_error`.
 *
 * Pure apart from `nodeTlsOptions` (which reads the CA file at each attempt).
 *
 * @module
 */

import { redactText, SecretRegistry } from "../../engine/masking.ts";
import type { FlagSpec, KindInput } from "../../engine/types.ts";
import { maskUrlPassword, passwordFlags, type PasswordSource } from "./dsurl.ts";
import { readFlagFile } from "./flagfile.ts";
import { canonicalIp, type HostPort, parseHostPort } from "./net.ts";

/**
 * The most one session of a data-store kind reads from its server (docs/contract.md §9): a
 * probe asks for a handshake and a small answer; what a server sends beyond this (a message
 * announcing a gigabyte, an endless stream) is not kept. Each kind declares it as its
 * `socketReadMax`, which its worker enforces at the socket (engine/socket_cap.ts).
 */
export const SESSION_READ_MAX = 4 << 20;

/** A data-store URL, split up and decoded. */
export interface DataStoreUrl {
  /** The scheme as typed, lower-cased (`postgres`, `rediss`). */
  readonly scheme: string;
  readonly hp: HostPort;
  /** The user name, decoded; undefined when the URL has none. */
  readonly user: string | undefined;
  /** The password, decoded; undefined when the URL has none. */
  readonly password: string | undefined;
  /** The path without its leading `/`, decoded; undefined for none or `/`. */
  readonly path: string | undefined;
  /** Query parameters, decoded, in order. */
  readonly params: ReadonlyMap<string, string>;
  /** The URL as displayed: only the password masked (`postgres://app:***@db:5432/app`). */
  readonly display: string;
}

/** How to read one kind's URLs. */
export interface UrlForm {
  /** Accepted schemes, lower case. */
  readonly schemes: readonly string[];
  readonly defaultPort: number;
  /** The form in usage errors: `postgres://[user[:password]@]host[:port][/database]`. */
  readonly form: string;
}

/**
 * Parses the target as a data-store URL, registering its password as a
 * secret first (so no later usage error can show it). Usage errors quote
 * the URL with its password masked.
 */
export function dataStoreUrl(input: KindInput, form: UrlForm): DataStoreUrl {
  const text = input.target ?? "";
  const masked = maskUrlPassword(text);
  for (const s of masked.secrets) input.secret(s);
  const shown = JSON.stringify(masked.display);
  const m = /^([a-z][a-z0-9+.-]*):\/\/([^/?#]*)(\/[^?#]*)?(?:\?([^#]*))?(#.*)?$/is.exec(text);
  if (!m || !form.schemes.includes(m[1]!.toLowerCase())) {
    input.fail(undefined, `expected ${form.form}, got ${shown}`);
  }
  if (m[5] !== undefined) {
    input.fail(undefined, `a URL fragment (#...) has no meaning here: ${shown}`);
  }
  const authority = m[2]!;
  const at = authority.lastIndexOf("@");
  const info = at < 0 ? undefined : authority.slice(0, at);
  const colon = info?.indexOf(":") ?? -1;
  // User-info is percent-encoded; `+` is a plus there (not a space, as in a query).
  const user = info === undefined ? undefined : decode(colon < 0 ? info : info.slice(0, colon));
  const password = info === undefined || colon < 0 ? undefined : decode(info.slice(colon + 1));
  if (password !== undefined) input.secret(password);
  const hostPort = authority.slice(at + 1);
  if (hostPort === "") input.fail(undefined, `the host is missing in ${shown}`);
  let hp: HostPort;
  try {
    hp = parseHostPort(hostPort, form.defaultPort);
  } catch (e) {
    return input.fail(undefined, (e as Error).message.replace(/HOST:PORT/, "HOST[:PORT]"));
  }
  const rawPath = m[3] === undefined || m[3] === "/" ? undefined : m[3].slice(1);
  const params = new Map<string, string>();
  for (const pair of (m[4] ?? "").split("&")) {
    if (pair === "") continue;
    const eq = pair.indexOf("=");
    const name = decode(eq < 0 ? pair : pair.slice(0, eq));
    params.set(name, decode(eq < 0 ? "" : pair.slice(eq + 1)));
  }
  return {
    scheme: m[1]!.toLowerCase(),
    hp,
    user: user === "" ? undefined : user,
    password,
    path: rawPath === undefined ? undefined : decode(rawPath),
    params,
    display: masked.display,
  };
}

function decode(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

/**
 * The one source of the password: the URL's, or `--password-env` /
 * `--password-file` (docs/contract.md §9). Both the URL and a flag is a
 * usage error; neither is undefined (no password is sent).
 */
export function passwordSource(
  input: KindInput,
  url: Pick<DataStoreUrl, "password">,
): PasswordSource | undefined {
  const fromFlags = passwordFlags(input);
  if (fromFlags !== undefined && url.password !== undefined) {
    input.fail(
      input.has("password-env") ? "password-env" : "password-file",
      "cannot be combined with a password in the URL",
    );
  }
  return fromFlags ?? (url.password === undefined ? undefined : { value: url.password });
}

/** The `--tls`, `--ca-file` and `--insecure` flags. */
export const TLS_FLAGS: readonly FlagSpec[] = [
  { name: "tls", type: "boolean", description: "connect with TLS (verified: chain and host name)" },
  {
    name: "ca-file",
    type: "string",
    placeholder: "PATH",
    complete: "file",
    description: "trust the CA certificates of this PEM file (read at each attempt)",
  },
  {
    name: "insecure",
    type: "boolean",
    description: "with TLS, do not verify the server certificate",
  },
];

/** Whether and how TLS is used. */
export interface TlsChoice {
  /** `off`: plain text; `on`: TLS or nothing; `prefer`: TLS, else plain text when the server has none. */
  readonly mode: "off" | "prefer" | "on";
  /** `full`: chain and host name; `ca`: chain only; `none`: nothing verified. */
  readonly verify: "none" | "ca" | "full";
  /** --ca-file, read at each attempt. */
  readonly caFile: string | undefined;
}

/** What a data-store kind's options say about reaching the server (its options extend this). */
export interface ReachOptions<U extends string | undefined = string | undefined> {
  readonly hp: HostPort;
  readonly user: U;
  readonly password: PasswordSource | undefined;
  readonly tls: TlsChoice;
}

/** What the URL itself says about TLS (`rediss://`, `sslmode=...`). */
export interface UrlTls {
  readonly mode?: TlsChoice["mode"];
  readonly verify?: TlsChoice["verify"];
  /** How the URL said it, for usage errors: `sslmode=disable`. */
  readonly said?: string;
}

/** What `tlsChoice` reads of a condition: its TLS flags, and how to fail. */
export type TlsFlagInput = Pick<KindInput, "bool" | "string" | "has" | "fail">;

/**
 * Combines the TLS flags with what the URL says. `--tls` makes TLS required;
 * `--insecure` turns verification off; `--ca-file` and `--insecure` need TLS
 * and exclude each other, and nothing combines with a URL that disables TLS.
 * `enable` names the ways TLS can be asked for, for the usage errors.
 */
export function tlsChoice(input: TlsFlagInput, url: UrlTls, enable: string): TlsChoice {
  const tls = input.bool("tls");
  const insecure = input.bool("insecure");
  const caFile = input.string("ca-file");
  if (caFile === "") input.fail("ca-file", "expected a path, got an empty string");
  if (insecure && caFile !== undefined) input.fail("insecure", "cannot be combined with --ca-file");
  if (url.mode === "off" && url.said !== undefined) {
    for (const f of ["tls", "ca-file", "insecure"]) {
      if (input.has(f)) input.fail(f, `cannot be combined with ${url.said}`);
    }
  }
  const mode = tls ? "on" : url.mode ?? "off";
  if (mode === "off") {
    for (const f of ["ca-file", "insecure"]) if (input.has(f)) input.fail(f, `needs ${enable}`);
  }
  if (insecure && url.verify !== undefined && url.verify !== "none") {
    input.fail("insecure", `cannot be combined with ${url.said}`);
  }
  const verify = insecure ? "none" : url.verify ?? "full";
  return { mode, verify, caFile };
}

/** The node:tls options the drivers pass through. */
export interface NodeTlsOptions {
  ca?: string;
  rejectUnauthorized: boolean;
  servername?: string;
  checkServerIdentity: (host: string, cert: unknown) => Error | undefined;
}

/**
 * node:tls options for `choice`, verifying against `hostname` (the host as
 * typed, not the address connected to). Reads --ca-file; throws an error
 * naming it when it cannot be read (a pending attempt).
 */
export async function nodeTlsOptions(
  choice: TlsChoice,
  hostname: string,
): Promise<NodeTlsOptions> {
  const tls = await import("node:tls");
  const ca = choice.caFile === undefined ? undefined : await readFlagFile("ca-file", choice.caFile);
  return {
    ...(ca === undefined ? {} : { ca }),
    rejectUnauthorized: choice.verify !== "none",
    // SNI carries names only, never an address.
    ...(canonicalIp(hostname) === undefined ? { servername: hostname } : {}),
    checkServerIdentity: choice.verify === "full"
      ? (_host, cert) => tls.checkServerIdentity(hostname, cert as never)
      : () => undefined,
  };
}

/**
 * A driver's message with every secret taken out (docs/contract.md §9): each value in `secrets`
 * of at least 4 characters (as written and percent-encoded, where not glued to a word) and the
 * password of any URL quoted in it become `***`. Used on every text a driver builds before it can
 * reach `last_error` (the run's registry does not know a --password-file's content). Linear in
 * the text (`redactText`).
 */
export function scrub(text: string, secrets: readonly (string | undefined)[]): string {
  return redactText(text, new SecretRegistry(secrets.filter((s) => s !== undefined)));
}

/** The pending text of refused credentials (docs/contract.md §5: `authentication failed for user "x"`). */
export function authFailed(user: string, serverText: string): string {
  return `authentication failed for user ${JSON.stringify(user)}: ${serverText}`;
}

/** `text` cut to `max` characters with an ellipsis, for values shown in results. */
export function clip(text: string, max = 200): string {
  return text.length <= max ? text : `${text.slice(0, max)}…`;
}

/** Network error codes after which the next address of a name is worth trying. */
const CONNECT_CODES = new Set([
  "ECONNREFUSED",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "EADDRNOTAVAIL",
  "ETIMEDOUT",
]);

/** Whether `e` is a failure to connect at all (so another address may answer). */
export function isConnectFailure(e: unknown): boolean {
  const code = (e as { code?: unknown } | null)?.code;
  return typeof code === "string" && CONNECT_CODES.has(code);
}
