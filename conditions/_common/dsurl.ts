/**
 * Data-store targets and credentials, shared by the data-store kinds
 * (docs/contract.md §9): the target as displayed keeps the user and masks
 * only the password (`amqp://app:***@mq:5672/prod`), and the common
 * `--password-env` / `--password-file` flags.
 *
 * @module
 */

import { redactUrl, safeDecode } from "../../engine/typed_secrets.ts";
import type { FlagSpec, KindInput } from "../../engine/types.ts";
import { readFlagFile } from "./flagfile.ts";

/** A URL's user-info split, percent-decoded; undefined parts were not written. */
export interface MaskedUrl {
  /** The URL as displayed: the password (and credential-like query values) as `***`. */
  readonly display: string;
  /** The user name as written in the URL, decoded. */
  readonly user: string | undefined;
  /** The password as written in the URL, decoded. */
  readonly password: string | undefined;
  /** Every text to redact: the password raw and decoded, credential query values. */
  readonly secrets: readonly string[];
}

/**
 * Splits `text` (`scheme://[user[:password]@]host...`, any text accepted)
 * into its display form, user and password. The user-info ends at the last
 * `@` before the path, as URL parsers read it.
 */
export function maskUrlPassword(text: string): MaskedUrl {
  const m = /^([a-z][a-z0-9+.-]*:\/\/)([^/?#]*)/i.exec(text);
  const authority = m?.[2] ?? "";
  const at = authority.lastIndexOf("@");
  if (!m || at < 0) {
    const r = redactUrl(text);
    return { display: r.display, user: undefined, password: undefined, secrets: r.secrets };
  }
  const scheme = m[1]!;
  const info = authority.slice(0, at);
  const rest = text.slice(scheme.length + at + 1);
  const colon = info.indexOf(":");
  const rawUser = colon < 0 ? info : info.slice(0, colon);
  const rawPass = colon < 0 ? undefined : info.slice(colon + 1);
  // The rest has no scheme, so redactUrl only masks its credential-like query values.
  const query = redactUrl(rest);
  const secrets = [...query.secrets];
  if (rawPass !== undefined && rawPass !== "") secrets.push(rawPass, safeDecode(rawPass, false));
  const shownInfo = rawPass === undefined ? rawUser : `${rawUser}:***`;
  return {
    display: `${scheme}${shownInfo}@${query.display}`,
    user: rawUser === "" && rawPass === undefined ? undefined : safeDecode(rawUser, false),
    password: rawPass === undefined ? undefined : safeDecode(rawPass, false),
    secrets,
  };
}

/** Where a password comes from: a value (URL, environment) or a file read at each attempt. */
export type PasswordSource = { readonly value: string } | { readonly file: string };

/** The common `--password-env` and `--password-file` flags of the data-store kinds. */
export const PASSWORD_FLAGS: readonly FlagSpec[] = [
  {
    name: "password-env",
    type: "string",
    placeholder: "ENVVAR",
    description: "read the password from an environment variable",
  },
  {
    name: "password-file",
    type: "string",
    placeholder: "PATH",
    complete: "file",
    description: "read the password from a file (first line; read at each attempt)",
  },
];

/**
 * The password given by `--password-env` or `--password-file`, or undefined
 * when neither is. The variable's value is registered as a secret; both
 * flags together, an unset variable or an empty path are usage errors.
 */
export function passwordFlags(input: KindInput): PasswordSource | undefined {
  const envName = input.string("password-env");
  const file = input.string("password-file");
  if (envName !== undefined && file !== undefined) {
    input.fail("password-file", "cannot be combined with --password-env");
  }
  if (envName !== undefined) return { value: secretFromEnv(input, "password-env") };
  if (file !== undefined) {
    if (file === "") input.fail("password-file", "expected a path, got an empty string");
    return { file };
  }
  return undefined;
}

/**
 * The value of the environment variable that `--flag` (given) names: a
 * password, a token. It is registered as a secret; a word that is not a
 * variable name, or an unset variable, is a usage error.
 */
export function secretFromEnv(input: KindInput, flag: string): string {
  const name = input.string(flag) ?? "";
  if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) {
    input.fail(flag, `expected an environment variable name, got ${JSON.stringify(name)}`);
  }
  const value = input.env[name];
  if (value === undefined) input.fail(flag, `environment variable ${name} is not set`);
  input.secret(value);
  return value;
}

/**
 * The password of a source: the value, or the first line of the file read
 * through the 4 MiB cap (throws an error naming `--password-file` when it
 * cannot be read: a pending attempt, since the file may appear later).
 */
export async function readPassword(source: PasswordSource): Promise<string> {
  if ("value" in source) return source.value;
  const text = await readFlagFile("password-file", source.file);
  return text.split(/\r?\n/)[0]!;
}
