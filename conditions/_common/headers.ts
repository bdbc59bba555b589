/**
 * `--header 'Name: value'` for the kinds that send headers or metadata
 * besides http (grpc, websocket): one parser, and the one rule for which
 * values are secrets (docs/contract.md §9: Authorization, Proxy-Authorization,
 * Cookie, Set-Cookie, and credential names such as X-Api-Key and X-Auth-Token).
 *
 * @module
 */

import { isSecretHeader } from "../../engine/secrets.ts";
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
 * Every `--flag 'Name: value'` of `input`, the last of a name winning (names
 * compared case-insensitively); secret values are registered with
 * `input.secret`. A malformed one is a usage error.
 */
export function parseHeaderFlags(input: KindInput, flag = "header"): HeaderSpec[] {
  const headers: HeaderSpec[] = [];
  for (const h of input.strings(flag)) {
    const colon = h.indexOf(":");
    const name = h.slice(0, colon).trim();
    if (colon <= 0 || !TOKEN.test(name)) {
      input.fail(flag, `expected 'Name: value', got ${JSON.stringify(h)}`);
    }
    const value = h.slice(colon + 1).trim();
    const secret = isSecretHeader(name);
    if (secret) input.secret(value);
    const i = headers.findIndex((x) => x.name.toLowerCase() === name.toLowerCase());
    if (i >= 0) headers.splice(i, 1);
    headers.push({ name, value, secret });
  }
  return headers;
}
