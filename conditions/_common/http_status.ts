/**
 * HTTP status lines as waitcmd shows them (`404 Not Found`): the server's reason, else the usual
 * one (docs/contract.md §5 http).
 *
 * @module
 */

/** Reason phrases of the statuses servers send most. */
export const HTTP_REASONS: Readonly<Record<number, string>> = {
  200: "OK",
  201: "Created",
  202: "Accepted",
  204: "No Content",
  301: "Moved Permanently",
  302: "Found",
  303: "See Other",
  304: "Not Modified",
  307: "Temporary Redirect",
  308: "Permanent Redirect",
  400: "Bad Request",
  401: "Unauthorized",
  403: "Forbidden",
  404: "Not Found",
  405: "Method Not Allowed",
  408: "Request Timeout",
  409: "Conflict",
  410: "Gone",
  418: "I'm a teapot",
  425: "Too Early",
  429: "Too Many Requests",
  500: "Internal Server Error",
  501: "Not Implemented",
  502: "Bad Gateway",
  503: "Service Unavailable",
  504: "Gateway Timeout",
};

/** `404 Not Found`: the status with the server's reason, else the usual one, else alone. */
export function statusLine(status: number, reason = ""): string {
  const text = reason || HTTP_REASONS[status] || "";
  return text ? `${status} ${text}` : String(status);
}
