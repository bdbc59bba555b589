/**
 * Hints for the failures users meet most (docs/contract.md §6, hints): what
 * is likely wrong and how to fix it, carried beside an attempt's error
 * (engine/errors.ts `withHint`). The engine and the renderers only pass them
 * on; the kinds and the helpers they share produce them here, from what they
 * know of the failure (an error code, the certificate, an HTTP status), never
 * by guessing from a text.
 *
 * @module
 */

/** A name that the resolver says does not exist. */
export function noSuchHostHint(host: string): string {
  return `check the name ${host}; Compose and Kubernetes service names resolve only inside ` +
    "their network";
}

/** A loopback address refused while the other IP family's loopback, same port, accepts. */
export function otherFamilyHint(refused: string, accepts: string, port: number): string {
  const family = accepts.includes(":") ? "IPv6" : "IPv4";
  const at = (ip: string) => ip.includes(":") ? `[${ip}]:${port}` : `${ip}:${port}`;
  return `the server listens on ${family} only (${at(accepts)} accepts, ${at(refused)} ` +
    `refuses): connect to ${at(accepts)} or localhost:${port}`;
}

/**
 * A certificate that is valid but not for `host`: its names, when the TLS
 * error carries the certificate (`subjectaltname`) or its reason.
 */
export function certificateNameHint(host: string, e: unknown): string {
  const err = e as { cert?: { subjectaltname?: unknown }; reason?: unknown } | null;
  let names = typeof err?.cert?.subjectaltname === "string" ? err.cert.subjectaltname : "";
  if (!names && typeof err?.reason === "string") {
    names = /altnames: (.*)$/.exec(err.reason)?.[1] ?? "";
  }
  const list = names.split(",").map((n) => n.trim().replace(/^(DNS|IP Address):/, "")).filter(
    Boolean,
  );
  const what = list.length ? `for ${list.join(", ")}` : "for other names";
  return `the certificate is ${what}: connect by one of its names, or give the server one for ` +
    host;
}

/** The hint of a Node TLS or socket error that has one (a certificate for another name). */
export function nodeErrorHint(e: unknown, host: string): string | undefined {
  const code = (e as { code?: unknown } | null)?.code;
  return code === "ERR_TLS_CERT_ALTNAME_INVALID" ? certificateNameHint(host, e) : undefined;
}

/**
 * An HTTP 401 or 403 where another status was expected; undefined for other
 * statuses. `sentCredentials`: the request carried an Authorization or Cookie
 * header; `challenge`: the 401's `WWW-Authenticate` scheme, if any.
 */
export function httpAuthHint(
  status: number,
  sentCredentials: boolean,
  challenge?: string,
): string | undefined {
  if (status === 401) {
    if (sentCredentials) {
      return "the server refused the credentials sent: check the token or password";
    }
    const scheme = challenge ? ` (it asks for ${challenge.split(/[\s,]/)[0]})` : "";
    return `the server wants credentials${scheme}: send them with --header-env or ` +
      "--basic-auth-env";
  }
  if (status === 403) {
    return "the credentials lack the permission, or the server refuses this client";
  }
  return undefined;
}

/** A Unix socket that does not exist (`what` names its server: `the Docker Engine`). */
export function missingSocketHint(path: string, what = "its server"): string {
  return `nothing at ${path}: ${what} is not running, or listens elsewhere`;
}
