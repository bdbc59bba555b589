/**
 * objstore: SDK errors as short reasons that never show a secret (pure).
 *
 * @module
 */

import { describeError } from "../../engine/errors.ts";
import { clip, type SecretRegistry } from "../../engine/masking.ts";

/** An SDK error as far as it is read here. */
export interface SdkError {
  readonly name?: string;
  readonly Code?: string;
  readonly code?: string;
  readonly message?: string;
  readonly $metadata?: { readonly httpStatusCode?: number };
  readonly cause?: unknown;
}

/** Context for error messages. */
export interface ErrorContext {
  readonly bucket: string;
  readonly key: string;
  readonly endpoint: string;
  /** `access key id AK... (from flags)`; `no credentials (anonymous request)`. */
  readonly who: string;
  /** The run's secrets, masked before a message is cut (docs/contract.md §9). */
  readonly secrets?: SecretRegistry;
}

/**
 * An S3 error as a short reason. Everything is retried (the object may
 * appear, a policy may change); the reason says what was refused without
 * ever showing a secret.
 */
export function describeS3Error(e: unknown, ctx: ErrorContext): string {
  const err = (typeof e === "object" && e !== null ? e : { message: String(e) }) as SdkError;
  const status = err.$metadata?.httpStatusCode;
  const code = err.Code ??
    (err.name && err.name !== "Error" && err.name !== "Unknown" ? err.name : "");
  const tag = `${status ?? ""}${status && code ? " " : ""}${code}`;
  const net = networkReason(err);
  if (status === undefined && net) return `${net} (${ctx.endpoint})`;
  switch (code) {
    case "NoSuchKey":
      return `object ${JSON.stringify(ctx.key)} does not exist`;
    case "NoSuchBucket":
      return `bucket ${JSON.stringify(ctx.bucket)} does not exist`;
    case "NotFound":
      return ctx.key
        ? `object ${JSON.stringify(ctx.key)} (or bucket ${JSON.stringify(ctx.bucket)}) not found`
        : `bucket ${JSON.stringify(ctx.bucket)} does not exist`;
    case "SignatureDoesNotMatch":
      return `credentials refused (${tag}): the secret access key does not match ${ctx.who}`;
    case "InvalidAccessKeyId":
    case "XAdminUserNotFound":
      return `credentials refused (${tag}): unknown ${ctx.who}`;
    case "ExpiredToken":
    case "TokenRefreshRequired":
      return `credentials refused (${tag}): the session token has expired (${ctx.who})`;
    case "InvalidToken":
      return `credentials refused (${tag}): the session token is invalid (${ctx.who})`;
    case "AccessDenied":
    case "AllAccessDisabled":
      return `access denied (${tag}) to ${ctx.key ? "the object" : "the bucket"}; ${ctx.who}`;
    case "PermanentRedirect":
    case "AuthorizationHeaderMalformed":
      return `wrong region (${tag}); set --region or CLOUD_REGION`;
    case "CredentialsProviderError":
      return `no credentials: ${firstLine(err.message, ctx.secrets)}`;
  }
  if (status === 403) {
    return `access denied (403) to ${ctx.key ? "the object" : "the bucket"}; ${ctx.who}`;
  }
  if (status === 404) {
    return ctx.key
      ? `object ${JSON.stringify(ctx.key)} not found`
      : `bucket ${JSON.stringify(ctx.bucket)} does not exist`;
  }
  const msg = err.message && err.message !== "UnknownError"
    ? `: ${firstLine(err.message, ctx.secrets)}`
    : "";
  if (tag) return `${tag}${msg}`;
  return describeError(err.message ?? String(e));
}

/** The first line of a message, redacted, then cut to 200 characters (docs/contract.md §9). */
export function firstLine(s: string | undefined, secrets?: SecretRegistry): string {
  return clip((s ?? "").trim().split("\n")[0] ?? "", 200, secrets);
}

function networkReason(err: SdkError): string | undefined {
  const codeOf = (x: unknown) => (x as { code?: string } | undefined)?.code;
  const code = codeOf(err) ?? codeOf(err.cause);
  switch (code) {
    case "ECONNREFUSED":
      return "connection refused";
    case "ECONNRESET":
      return "connection reset by peer";
    case "ENOTFOUND":
    case "EAI_AGAIN":
      return "cannot resolve host";
    case "ETIMEDOUT":
    case "TimeoutError":
      return "connection timed out";
    case "EHOSTUNREACH":
      return "host unreachable";
    case "ENETUNREACH":
      return "network unreachable";
  }
  if (code && /^(ERR_TLS|CERT_|UNABLE_TO|DEPTH_ZERO|SELF_SIGNED)/.test(code)) {
    return `tls: ${describeError(err.message ?? code)}`;
  }
  if (err.name === "TimeoutError") return "connection timed out";
  return undefined;
}
