/**
 * What the SQL kinds share about their targets
 * (docs/contract.md §5, SQL connection strings): the declaration keeps the
 * target as written and the flags, without loading the client's parser;
 * the kind's `validate` (and its probe) reads the target with that parser
 * and combines it with the flags through these helpers.
 *
 * @module
 */

import type { Fail, KindInput } from "../../engine/types.ts";
import type { TlsFlagInput } from "./datastore.ts";
import { type MaskedUrl, passwordFlags, type PasswordSource } from "./dsurl.ts";

/** A target as written, and the password and TLS flags given with it. */
export interface TargetAndFlags {
  /** The target as written (its password included: options never reach an output). */
  readonly url: string;
  /** The target as usage errors quote it, its password masked. */
  readonly shown: string;
  /** --password-env's value or --password-file's path. */
  readonly flagPassword: PasswordSource | undefined;
  /** Which of the two, for the usage error of a password given twice. */
  readonly flagPasswordName: "password-env" | "password-file";
  readonly tlsFlags: {
    readonly tls: boolean;
    readonly insecure: boolean;
    readonly caFile: string | undefined;
  };
}

/** The target (`masked` is its display form) and the flags of `input`. */
export function targetAndFlags(input: KindInput, masked: MaskedUrl): TargetAndFlags {
  return {
    url: input.target ?? "",
    shown: JSON.stringify(masked.display),
    flagPassword: passwordFlags(input),
    flagPasswordName: input.has("password-env") ? "password-env" : "password-file",
    tlsFlags: {
      tls: input.bool("tls"),
      insecure: input.bool("insecure"),
      caFile: input.string("ca-file"),
    },
  };
}

/** The one source of the password: a flag's, or the target's; both is a usage error at the flag. */
export function onePassword(
  o: TargetAndFlags,
  fromTarget: string | undefined,
  fail: Fail,
): PasswordSource | undefined {
  if (o.flagPassword !== undefined && fromTarget !== undefined) {
    fail(o.flagPasswordName, "cannot be combined with a password in the URL");
  }
  return o.flagPassword ?? (fromTarget === undefined ? undefined : { value: fromTarget });
}

/** The TLS flags as `tlsChoice` reads them. */
export function tlsFlagInput(o: TargetAndFlags, fail: Fail): TlsFlagInput {
  const f = o.tlsFlags;
  const has = (name: string) =>
    name === "tls"
      ? f.tls
      : name === "insecure"
      ? f.insecure
      : name === "ca-file"
      ? f.caFile !== undefined
      : false;
  return {
    bool: (name) => name !== "ca-file" && has(name),
    string: (name) => name === "ca-file" ? f.caFile : undefined,
    has,
    fail,
  };
}
