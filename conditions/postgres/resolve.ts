/**
 * A postgres condition's URL read with libpq's meanings (url.ts, pg's own
 * parser) and combined with its flags: what the probe connects with.
 * `validate` runs it to fail before any probe; the probe runs it again.
 *
 * @module
 */

import type { Fail } from "../../engine/types.ts";
import {
  type ReachOptions,
  type TlsChoice,
  tlsChoice,
  type TlsFlagInput,
  type UrlTls,
} from "../_common/datastore.ts";
import { onePassword, tlsFlagInput } from "../_common/sqlurl.ts";
import type { PostgresOptions } from "./mod.ts";
import { parsePostgresUrl, type PgEndpoint, type PgUrl, type TargetSessionAttrs } from "./url.ts";

/** What a postgres probe connects with. */
export interface PgResolved extends ReachOptions<string> {
  /** The URL's database, else the user's name (as libpq does). */
  readonly database: string;
  readonly sql: PostgresOptions["sql"];
  /** The hosts in libpq's order (`hp` is the first); a socket directory or a host and port. */
  readonly endpoints: readonly PgEndpoint[];
  /** `load_balance_hosts=random`: the hosts in a random order at each attempt. */
  readonly loadBalance: boolean;
  /** `target_session_attrs` (`--primary` is `primary`). */
  readonly targetSessionAttrs: TargetSessionAttrs;
  /** `sslrootcert`: the CA file, read at each attempt (as `--ca-file` is). */
  readonly rootCertFile: string | undefined;
  /** `sslcert`, `sslkey` and `sslpassword`: a client certificate, read at each attempt. */
  readonly clientCert:
    | { readonly certFile?: string; readonly keyFile?: string; readonly passphrase?: string }
    | undefined;
  /** `ssl_min_protocol_version`, `ssl_max_protocol_version`, `sslsni`. */
  readonly tlsExtra: PgUrl["tlsExtra"];
  /** URL parameters pg's Client takes as they are (application_name, options, ...). */
  readonly client: Readonly<Record<string, string>>;
  /** `connect_timeout` in milliseconds (at least 2 s, as libpq); undefined: none. */
  readonly connectTimeoutMs: number | undefined;
}

/** The URL's `sslmode` as a TLS mode and verification (libpq's meanings). */
const SSLMODES: Readonly<Record<string, UrlTls>> = {
  disable: { mode: "off" },
  allow: { mode: "prefer", verify: "none" },
  prefer: { mode: "prefer", verify: "none" },
  require: { mode: "on", verify: "none" },
  "verify-ca": { mode: "on", verify: "ca" },
  "verify-full": { mode: "on", verify: "full" },
  // pg's own: TLS, nothing verified.
  "no-verify": { mode: "on", verify: "none" },
};

/**
 * Reads the condition's URL and combines it with its flags; a problem is
 * `fail`'s usage error (the URL's own at the target, a flag's at the flag).
 */
export function resolvePostgres(o: PostgresOptions, fail: Fail): PgResolved {
  let url: PgUrl;
  try {
    url = parsePostgresUrl(o.url, o.shown);
  } catch (e) {
    return fail(undefined, (e as Error).message);
  }
  const password = onePassword(o, url.password, fail);
  const { tls, rootFile } = tlsOf(tlsFlagInput(o, fail), url);
  const user = url.user ?? "postgres";
  return {
    hp: url.endpoints[0]!.hp,
    endpoints: url.endpoints,
    loadBalance: url.loadBalance,
    user,
    database: url.database ?? user,
    password,
    tls,
    rootCertFile: rootFile,
    clientCert: url.sslcert === undefined && url.sslkey === undefined ? undefined : {
      certFile: url.sslcert,
      keyFile: url.sslkey,
      passphrase: url.sslpassword,
    },
    tlsExtra: url.tlsExtra,
    client: url.client,
    connectTimeoutMs: url.connectTimeout === undefined || url.connectTimeout === 0
      ? undefined
      : Math.max(2, url.connectTimeout) * 1000,
    sql: o.sql,
    targetSessionAttrs: sessionAttrs(o.primary, url.targetSessionAttrs, fail),
  };
}

/**
 * The TLS choice: the URL's `sslmode` (else pg's `ssl`), then the flags; a
 * URL that says nothing about TLS and no TLS flag is libpq's default,
 * `prefer`. `sslrootcert` is the CA file (with `require`, the chain is
 * verified, as libpq does with a root certificate); `system` means the
 * system's CAs and `verify-full`.
 */
function tlsOf(
  input: TlsFlagInput,
  url: PgUrl,
): { tls: TlsChoice; rootFile: string | undefined } {
  const flags = ["tls", "ca-file", "insecure"].some((f) => input.has(f));
  let urlTls: UrlTls = url.sslmode !== undefined
    ? { ...SSLMODES[url.sslmode], said: `sslmode=${url.sslmode}` }
    : url.ssl === true
    ? { mode: "on", verify: "full", said: "ssl=true" }
    : url.ssl === false
    ? { mode: "off", said: "ssl=false" }
    : flags
    ? {}
    : { mode: "prefer", verify: "none" };
  const root = url.sslrootcert;
  if (root === "system") {
    if (url.sslmode !== undefined && url.sslmode !== "verify-full") {
      input.fail(
        undefined,
        `sslrootcert=system needs sslmode=verify-full, got sslmode=${url.sslmode}`,
      );
    }
    urlTls = { mode: "on", verify: "full", said: "sslrootcert=system" };
  }
  if (root !== undefined && root !== "system" && input.has("ca-file")) {
    input.fail("ca-file", "cannot be combined with sslrootcert in the URL");
  }
  const tls = tlsChoice(input, urlTls, "--tls or an sslmode other than disable");
  const rootFile = root !== undefined && root !== "system" && tls.mode !== "off" ? root : undefined;
  // require with a CA file verifies the chain, as libpq does with a root certificate.
  const verify = urlTls.said === "sslmode=require" && (tls.caFile ?? rootFile) !== undefined
    ? "ca" as const
    : tls.verify;
  return { tls: { ...tls, verify }, rootFile };
}

/** `--primary` is `target_session_attrs=primary`; the two must agree. */
function sessionAttrs(
  primary: boolean,
  fromUrl: TargetSessionAttrs,
  fail: Fail,
): TargetSessionAttrs {
  if (!primary) return fromUrl;
  if (fromUrl !== "any" && fromUrl !== "primary") {
    fail("primary", `cannot be combined with target_session_attrs=${fromUrl}`);
  }
  return "primary";
}
