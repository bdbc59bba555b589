/**
 * The S3 client of an objstore condition: `@aws-sdk/client-s3` with the
 * endpoint, region and credentials the options settled (explicit keys, else
 * the SDK's default chain, else anonymous requests).
 *
 * @module
 */

import { type Memo, memoize } from "../_common/memo.ts";
import { firstLine } from "./errors.ts";
import type { ObjstoreOptions } from "./mod.ts";

/** The SDK module. */
export type S3Module = typeof import("./s3_lib.ts");
/** One SDK client. */
export type S3Client = InstanceType<S3Module["S3Client"]>;

const SILENT = {
  trace() {},
  debug() {},
  info() {},
  warn() {},
  error() {},
};

/** A client plus who it authenticates as (for messages). */
export interface Session {
  readonly sdk: S3Module;
  readonly client: S3Client;
  /** `access key id AK... (from flags)`; never a secret. */
  readonly who: string;
}

/**
 * The SDK, imported once. The probe's `create` awaits it, so that its
 * evaluation happens before the run's clock starts (docs/contract.md §2).
 */
export const s3Library: Memo<S3Module> = memoize(() => import("./s3_lib.ts"));

/**
 * Imports the SDK and builds the client; every client made is passed to
 * `keep` (so that the probe's `close` destroys it). Throws when a named
 * profile yields no credentials.
 */
export async function connect(
  o: ObjstoreOptions,
  keep: (client: S3Client) => void,
): Promise<Session> {
  const sdk = await s3Library.get();
  const base: Record<string, unknown> = {
    logger: SILENT,
    maxAttempts: 1,
    requestChecksumCalculation: "WHEN_REQUIRED",
    responseChecksumValidation: "WHEN_REQUIRED",
  };
  if (o.endpoint) {
    base.endpoint = o.endpoint.url;
    base.forcePathStyle = o.pathStyle;
  } else {
    base.followRegionRedirects = true;
  }
  const make = (extra: Record<string, unknown>) => {
    const c = new sdk.S3Client({ ...base, ...extra });
    keep(c);
    return c;
  };
  const creds = o.credentials;
  const profile = creds.type === "chain" && creds.profile ? { profile: creds.profile } : {};
  // A client without region and credentials, to ask the SDK for its defaults.
  const defaults = make(profile);
  let region = o.region;
  if (region === undefined) {
    try {
      region = await (defaults.config.region as () => Promise<string>)();
    } catch {
      region = "us-east-1";
    }
  }
  if (creds.type === "static") {
    const client = make({
      region,
      credentials: {
        accessKeyId: creds.accessKeyId,
        secretAccessKey: creds.secretAccessKey,
        ...(creds.sessionToken ? { sessionToken: creds.sessionToken } : {}),
      },
    });
    return { sdk, client, who: `access key id ${creds.accessKeyId} (from ${creds.from})` };
  }
  const from = creds.profile ? `profile ${creds.profile}` : "the AWS SDK's default chain";
  try {
    const id = await (defaults.config.credentials as () => Promise<{ accessKeyId: string }>)();
    const client = make({ ...profile, region });
    return { sdk, client, who: `access key id ${id.accessKeyId} (from ${from})` };
  } catch (e) {
    if (creds.profile) {
      throw Object.assign(
        new Error(`profile ${creds.profile}: ${firstLine(String((e as Error).message ?? e))}`),
        { name: "CredentialsProviderError" },
      );
    }
  }
  // No credentials anywhere: unsigned requests, as for a public bucket.
  const client = make({
    region,
    httpAuthSchemes: [{
      schemeId: "smithy.api#noAuth",
      identityProvider: () => () => Promise.resolve({}),
      signer: { sign: (request: unknown) => Promise.resolve(request) },
    }],
    httpAuthSchemeProvider: () => [{ schemeId: "smithy.api#noAuth" }],
  });
  return { sdk, client, who: "no credentials found (anonymous request)" };
}
