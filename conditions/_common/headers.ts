/**
 * `--header 'Name: value'` (or waitfor's `Name=value`) for the kinds that
 * send headers or metadata (http, grpc, websocket): one parser, and the one rule for which
 * values are secrets (docs/contract.md §9: Authorization, Proxy-Authorization,
 * Cookie, Set-Cookie, and credential names such as X-Api-Key and X-Auth-Token).
 *
 * @module
 */

import { isSecretHeader } from "../../engine/typed_secrets.ts";
import type { KindInput } from "../../engine/types.ts";

/** One header as given. */
export interface HeaderSpec {
  readonly name: string;
  readonly value: string;
  /** Its value is redacted from every output. */
  readonly secret: boolean;
}

/** An HTTP header name (RFC 9110 token). */
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/** Whether a header named `name` carries a secret value (docs/contract.md §9). */
export { isSecretHeader };

/**
 * `Name: value`, or waitfor's `Name=value`, as a name and a value (both trimmed); undefined when
 * neither form gives a header name. Never ambiguous: `:` and `=` are no characters of a name,
 * so at most one of the two splits leaves a name before it (`X-A=b:c` is `X-A` = `b:c`,
 * `X-A: b=c` is `X-A`: `b=c`).
 */
export function splitHeader(text: string): { name: string; value: string } | undefined {
  for (const sep of [":", "="]) {
    const at = text.indexOf(sep);
    const name = text.slice(0, at).trim();
    if (at > 0 && TOKEN.test(name)) return { name, value: text.slice(at + 1).trim() };
  }
  return undefined;
}

/** The usage error of a `--header` that is neither form. */
export function headerFormError(text: string): string {
  return `expected 'Name: value' (or Name=value), got ${JSON.stringify(text)}`;
}

/**
 * Every `--flag 'Name: value'` (or `Name=value`) of `input`, the last of a name winning (names
 * compared case-insensitively); secret values are registered with
 * `input.secret`. A malformed one is a usage error.
 */
export function parseHeaderFlags(input: KindInput, flag = "header"): HeaderSpec[] {
  const headers: HeaderSpec[] = [];
  for (const h of input.strings(flag)) {
    const split = splitHeader(h);
    if (split === undefined) return input.fail(flag, headerFormError(h));
    const { name, value } = split;
    const secret = isSecretHeader(name);
    if (secret) input.secret(value);
    const i = headers.findIndex((x) => x.name.toLowerCase() === name.toLowerCase());
    if (i >= 0) headers.splice(i, 1);
    headers.push({ name, value, secret });
  }
  return headers;
}
