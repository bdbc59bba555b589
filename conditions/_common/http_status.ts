/**
 * HTTP statuses: the lines waitcmd shows (`404 Not Found`: the server's reason, else the usual
 * one), and the statuses a condition expects (`--status 2xx,304`) (docs/contract.md §5 http).
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

/** Which statuses are expected. */
export interface StatusSpec {
  /** As shown in messages: `2xx`, `200,204,3xx`. */
  readonly text: string;
  /** Codes expected one by one. */
  readonly codes: readonly number[];
  /** Classes expected whole: 2 for `2xx`. */
  readonly classes: readonly number[];
  /** Inclusive ranges: `[200, 499]` for `200-499`. */
  readonly ranges: readonly (readonly [number, number])[];
}

/**
 * Parses `200`, `2xx`, `200-499` or a list `200,204,3xx,400-403`; throws an `Error` with the
 * usage problem.
 */
export function parseStatusSpec(text: string): StatusSpec {
  const items = text.split(",").map((s) => s.trim());
  const codes = new Set<number>();
  const classes = new Set<number>();
  const ranges: [number, number][] = [];
  for (const item of items) {
    const range = /^([1-5]\d\d)\s*-\s*([1-5]\d\d)$/.exec(item);
    if (/^[1-5]\d\d$/.test(item)) codes.add(Number(item));
    else if (/^[1-5]xx$/i.test(item)) classes.add(Number(item[0]));
    else if (range && Number(range[1]) <= Number(range[2])) {
      ranges.push([Number(range[1]), Number(range[2])]);
    } else if (range) {
      throw new Error(`the range ${item} ends before it starts; write it low-high like 200-499`);
    } else {
      throw new Error(
        `expected a code like 200, a class like 2xx, a range like 200-499 or a list, got ${
          JSON.stringify(text)
        }`,
      );
    }
  }
  return {
    text: items.map((s) => s.toLowerCase().replace(/\s+/g, "")).join(","),
    codes: [...codes],
    classes: [...classes],
    ranges,
  };
}

/** Whether `code` is one of the expected statuses. */
export function statusMatches(spec: StatusSpec, code: number): boolean {
  return spec.codes.includes(code) || spec.classes.includes(Math.floor(code / 100)) ||
    spec.ranges.some(([low, high]) => code >= low && code <= high);
}
