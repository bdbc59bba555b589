/**
 * http: an HTTP(S) endpoint answers with an expected status (and body).
 *
 * Requests go straight to the server through `node:http`/`node:https`, trying
 * every address the name resolves to (`localhost`: 127.0.0.1, then ::1), with
 * the TLS options the flags give. When a proxy environment variable applies
 * to the URL (HTTP_PROXY, HTTPS_PROXY, ALL_PROXY, minus NO_PROXY), the request
 * goes through Deno's `fetch`, which honours them. Redirects are followed here
 * (at most 10), one hop at a time, so each hop picks its own route.
 *
 * @module
 */

import type { ConditionKind, KindInput, ProbeResult } from "../engine/types.ts";
import { formatSize } from "./_bytes.ts";
import { type JsonPathExpr, parseJsonPathExpr } from "./_jsonpath.ts";
import { describeError } from "./_net.ts";
import { describeNodeError, readFlagFile } from "./_nodenet.ts";

/** Most body bytes read per response. */
export const BODY_LIMIT = 10 << 20;
/** Most redirects followed per attempt. */
export const MAX_REDIRECTS = 10;

/** Header names whose values are secrets. */
const SECRET_HEADER = /^(authorization|proxy-authorization|cookie|x-api-key|x-auth-token)$/i;
/** Query parameter names whose values are secrets. */
const SECRET_PARAM = /token|key|secret|passw|pwd|auth|sig|credential/i;
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** Which statuses are expected. */
export interface StatusSpec {
  /** As shown in messages: `2xx`, `200,204,3xx`. */
  readonly text: string;
  matches(code: number): boolean;
}

/** Parses `200`, `2xx` or a list `200,204,3xx`, or returns an error text. */
export function parseStatusSpec(text: string): StatusSpec | string {
  const items = text.split(",").map((s) => s.trim());
  const codes = new Set<number>();
  const classes = new Set<number>();
  for (const item of items) {
    if (/^[1-5]\d\d$/.test(item)) codes.add(Number(item));
    else if (/^[1-5]xx$/i.test(item)) classes.add(Number(item[0]));
    else return `expected a code like 200, a class like 2xx or a list, got ${JSON.stringify(text)}`;
  }
  return {
    text: items.map((s) => s.toLowerCase()).join(","),
    matches: (code) => codes.has(code) || classes.has(Math.floor(code / 100)),
  };
}

/**
 * The URL as displayed: user-info becomes `***`, values of query parameters
 * named like token/key/secret/password become `***`. Returns the display text
 * and the secrets it hid.
 */
export function redactUrl(text: string): { display: string; secrets: string[] } {
  const secrets: string[] = [];
  let display = text.replace(/^([a-z][a-z0-9+.-]*:\/\/)([^@/?#]*)@/i, (_m, scheme, info) => {
    secrets.push(info);
    const colon = info.indexOf(":");
    if (colon >= 0) secrets.push(info.slice(colon + 1));
    return `${scheme}***@`;
  });
  const q = display.indexOf("?");
  if (q >= 0) {
    const hash = display.indexOf("#", q);
    const end = hash >= 0 ? hash : display.length;
    const query = display.slice(q + 1, end).split("&").map((pair) => {
      const eq = pair.indexOf("=");
      if (eq < 0) return pair;
      const name = safeDecode(pair.slice(0, eq));
      const value = pair.slice(eq + 1);
      if (!SECRET_PARAM.test(name) || value === "") return pair;
      secrets.push(value, safeDecode(value));
      return `${pair.slice(0, eq)}=***`;
    }).join("&");
    display = display.slice(0, q + 1) + query + display.slice(end);
  }
  return { display, secrets };
}

function safeDecode(s: string): string {
  try {
    return decodeURIComponent(s.replace(/\+/g, " "));
  } catch {
    return s;
  }
}

/**
 * The proxy environment variable that applies to `url`, or undefined when the
 * request goes direct (none set, or NO_PROXY lists the host).
 */
export function proxyFor(url: URL, env: Readonly<Record<string, string>>): string | undefined {
  const scheme = url.protocol === "https:" ? "https" : "http";
  const names = [`${scheme}_proxy`, `${scheme.toUpperCase()}_PROXY`, "all_proxy", "ALL_PROXY"];
  const name = names.find((n) => (env[n] ?? "") !== "");
  if (!name) return undefined;
  const host = url.hostname.replace(/^\[|\]$/g, "").toLowerCase();
  const noProxy = env.no_proxy ?? env.NO_PROXY ?? "";
  for (let entry of noProxy.split(/[\s,]+/)) {
    entry = entry.trim().toLowerCase();
    if (entry === "") continue;
    if (entry === "*") return undefined;
    entry = entry.replace(/^\[(.*)\](:\d+)?$/, "$1").replace(/^([^:]+):\d+$/, "$1");
    const bare = entry.replace(/^\*?\./, "");
    if (host === bare || host.endsWith("." + bare)) return undefined;
  }
  return name;
}

interface Header {
  readonly name: string;
  readonly value: string;
  /** Dropped when a redirect leaves the origin. */
  readonly secret: boolean;
}

interface HttpSpec {
  readonly url: URL;
  readonly method: string;
  readonly headers: readonly Header[];
  readonly body: string | undefined;
  readonly status: StatusSpec;
  readonly contains: string | undefined;
  readonly matches: RegExp | undefined;
  readonly jsonpaths: readonly JsonPathExpr[];
  readonly caFile: string | undefined;
  readonly certFile: string | undefined;
  readonly keyFile: string | undefined;
  readonly insecure: boolean;
  readonly follow: boolean;
  readonly env: Readonly<Record<string, string>>;
}

interface TlsMaterial {
  readonly ca?: string;
  readonly cert?: string;
  readonly key?: string;
  readonly insecure: boolean;
}

/** A response whose body has not been read yet. */
interface Reply {
  readonly status: number;
  readonly statusText: string;
  readonly location: string | undefined;
  /** Reads at most `limit` bytes of the body. */
  read(limit: number): Promise<{ bytes: Uint8Array; truncated: boolean }>;
  /** Releases the connection (idempotent). */
  close(): void;
}

/** A request that failed before a response arrived; `text` is the short reason. */
class RequestFailure extends Error {
  constructor(readonly text: string, readonly retryOtherAddress = false) {
    super(text);
  }
}

const REASONS: Record<number, string> = {
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
  418: "I'm a teapot",
  425: "Too Early",
  429: "Too Many Requests",
  500: "Internal Server Error",
  501: "Not Implemented",
  502: "Bad Gateway",
  503: "Service Unavailable",
  504: "Gateway Timeout",
};

function statusLine(status: number, text: string): string {
  const reason = text || REASONS[status] || "";
  return reason ? `${status} ${reason}` : String(status);
}

/** The http kind. */
export const http: ConditionKind = {
  name: "http",
  aliases: [],
  summary: "an HTTP(S) endpoint answers with the expected status, body or JSON",
  description:
    "Sends a request on each attempt (GET by default, POST with --body) and is satisfied when the status matches --status (default any 2xx) and every body check holds: --contains, --matches and --jsonpath (the body is read up to 10 MiB). Redirects are followed (at most 10) unless --no-follow-redirects. A name is tried on every address it resolves to; localhost on 127.0.0.1 and ::1. HTTP_PROXY, HTTPS_PROXY, ALL_PROXY and NO_PROXY are honoured. A refused connection, a TLS error or another status is retried until the timeout; with --attempt-timeout each request is bounded by it. Unreadable --ca-file/--client-cert/--client-key files are retried too (they may not be written yet).",
  target: {
    shape: "required",
    placeholder: "URL",
    description: "http:// or https:// URL; user-info in it is sent as basic authentication",
  },
  flags: [
    {
      name: "status",
      type: "string",
      placeholder: "CODES",
      description: "expected status: a code 200, a class 2xx or a list 200,204,3xx (default 2xx)",
    },
    {
      name: "contains",
      type: "string",
      placeholder: "TEXT",
      description: "the response body includes TEXT",
    },
    {
      name: "matches",
      type: "string",
      placeholder: "REGEX",
      description: "the response body matches a regular expression (^ and $ match at lines)",
    },
    {
      name: "jsonpath",
      type: "string",
      placeholder: "EXPR",
      repeatable: true,
      description:
        "the JSON body satisfies an expression like '$.status == \"ok\"'; all given must hold",
    },
    {
      name: "method",
      type: "string",
      placeholder: "METHOD",
      description: "request method (default GET, or POST with --body)",
    },
    { name: "body", type: "string", placeholder: "TEXT", description: "request body" },
    {
      name: "header",
      type: "string",
      placeholder: "'NAME: VALUE'",
      repeatable: true,
      description: "request header; Authorization and Cookie values are secrets",
    },
    {
      name: "header-env",
      type: "string",
      placeholder: "NAME=ENVVAR",
      repeatable: true,
      description: "request header whose value is read from an environment variable (secret)",
    },
    {
      name: "basic-auth-env",
      type: "string",
      placeholder: "USER:ENVVAR",
      description: "basic authentication as USER, the password read from an environment variable",
    },
    {
      name: "ca-file",
      type: "string",
      placeholder: "PATH",
      complete: "file",
      description: "trust the CA certificates of this PEM file",
    },
    {
      name: "client-cert",
      type: "string",
      placeholder: "PATH",
      complete: "file",
      description: "client certificate (PEM) for mutual TLS; needs --client-key",
    },
    {
      name: "client-key",
      type: "string",
      placeholder: "PATH",
      complete: "file",
      description: "private key (PEM) of --client-cert",
    },
    {
      name: "insecure",
      type: "boolean",
      description: "do not verify the server certificate",
    },
    {
      name: "no-follow-redirects",
      type: "boolean",
      description: "check a 3xx response itself instead of following it",
    },
  ],
  examples: [
    {
      args: "http http://localhost:8080/health",
      description: "wait until the health endpoint answers 2xx",
    },
    {
      args: "http https://api.internal/ready --ca-file ca.pem --jsonpath '$.status == \"ok\"'",
      description: "wait for a JSON field, trusting a private CA",
    },
    {
      args:
        "http http://localhost:9200/_cluster/health --status 200 --jsonpath '$.status =~ ^(green|yellow)$'",
      description: "wait until Elasticsearch is green or yellow",
    },
    {
      args: "http https://app.example.com/login --no-follow-redirects --status 3xx",
      description: "wait until the login page redirects",
    },
    {
      args: "http http://localhost:3000/api --header-env Authorization=API_TOKEN --contains ready",
      description: "send a secret header taken from the environment",
    },
  ],
  parse(input) {
    const spec = parseSpec(input);
    const { display } = redactUrl(input.target ?? "");
    return {
      target: display,
      check: ({ signal }) => attempt(spec, signal),
    };
  },
};

function parseSpec(input: KindInput): HttpSpec {
  const raw = input.target ?? "";
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return input.fail(undefined, `expected an http:// or https:// URL, got ${JSON.stringify(raw)}`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    input.fail(undefined, `expected an http:// or https:// URL, got ${JSON.stringify(raw)}`);
  }
  if (url.hostname === "") input.fail(undefined, `missing host in ${JSON.stringify(raw)}`);
  for (const s of redactUrl(raw).secrets) input.secret(s);

  const headers: Header[] = [];
  const setHeader = (name: string, value: string, secret: boolean) => {
    const i = headers.findIndex((h) => h.name.toLowerCase() === name.toLowerCase());
    if (i >= 0) headers.splice(i, 1);
    headers.push({ name, value, secret });
    if (secret) input.secret(value);
  };
  if (url.username !== "" || url.password !== "") {
    const user = safeDecode(url.username);
    const pass = safeDecode(url.password);
    input.secret(pass);
    setHeader("Authorization", basicAuth(user, pass), true);
    url.username = "";
    url.password = "";
  }

  const statusText = input.string("status");
  let status: StatusSpec = parseStatusSpec("2xx") as StatusSpec;
  if (statusText !== undefined) {
    const s = parseStatusSpec(statusText);
    if (typeof s === "string") input.fail("status", s);
    status = s as StatusSpec;
  }

  const contains = input.string("contains");
  if (contains === "") input.fail("contains", "expected a text, got an empty string");
  const matchesText = input.string("matches");
  let matches: RegExp | undefined;
  if (matchesText !== undefined) {
    if (matchesText === "") input.fail("matches", "expected a regular expression, got nothing");
    try {
      matches = new RegExp(matchesText, "m");
    } catch (e) {
      const why = (e as Error).message.replace(/^Invalid regular expression: \/.*\/\w*: /s, "");
      input.fail("matches", `invalid regular expression /${matchesText}/: ${lowerFirst(why)}`);
    }
  }
  const jsonpaths: JsonPathExpr[] = [];
  for (const text of input.strings("jsonpath")) {
    const expr = parseJsonPathExpr(text);
    if (typeof expr === "string") input.fail("jsonpath", expr);
    jsonpaths.push(expr as JsonPathExpr);
  }

  const body = input.string("body");
  let method = "GET";
  if (body !== undefined) method = "POST";
  const methodText = input.string("method");
  if (methodText !== undefined) {
    if (!/^[A-Za-z]+$/.test(methodText)) {
      input.fail("method", `expected a method like GET or POST, got ${JSON.stringify(methodText)}`);
    }
    method = methodText.toUpperCase();
  }
  if (method === "HEAD") {
    for (const f of ["contains", "matches", "jsonpath"]) {
      if (input.has(f)) input.fail(f, "needs a response body; HEAD responses have none");
    }
  }
  if (body !== undefined && (method === "GET" || method === "HEAD")) {
    input.fail("body", `cannot be sent with --method ${method}`);
  }

  const basic = input.string("basic-auth-env");
  if (basic !== undefined) {
    const colon = basic.lastIndexOf(":");
    const user = basic.slice(0, colon);
    const envName = basic.slice(colon + 1);
    if (colon <= 0 || !ENV_NAME.test(envName)) {
      input.fail("basic-auth-env", `expected USER:ENVVAR, got ${JSON.stringify(basic)}`);
    }
    const pass = input.env[envName];
    if (pass === undefined) {
      input.fail("basic-auth-env", `environment variable ${envName} is not set`);
    }
    input.secret(pass!);
    setHeader("Authorization", basicAuth(user, pass!), true);
  }
  for (const h of input.strings("header")) {
    const colon = h.indexOf(":");
    const name = h.slice(0, colon).trim();
    if (colon <= 0 || !TOKEN.test(name)) {
      input.fail("header", `expected 'Name: value', got ${JSON.stringify(h)}`);
    }
    const value = h.slice(colon + 1).trim();
    setHeader(name, value, SECRET_HEADER.test(name) || /token|secret|passw|key/i.test(name));
  }
  for (const h of input.strings("header-env")) {
    const eq = h.indexOf("=");
    const name = h.slice(0, eq).trim();
    const envName = h.slice(eq + 1).trim();
    if (eq <= 0 || !TOKEN.test(name) || !ENV_NAME.test(envName)) {
      input.fail("header-env", `expected NAME=ENVVAR, got ${JSON.stringify(h)}`);
    }
    const value = input.env[envName];
    if (value === undefined) input.fail("header-env", `environment variable ${envName} is not set`);
    setHeader(name, value!, true);
  }

  const caFile = input.string("ca-file");
  const certFile = input.string("client-cert");
  const keyFile = input.string("client-key");
  const insecure = input.bool("insecure");
  for (
    const [flag, v] of [["ca-file", caFile], ["client-cert", certFile], ["client-key", keyFile]]
  ) {
    if (v === "") input.fail(flag, "expected a path, got an empty string");
  }
  if (certFile !== undefined && keyFile === undefined) {
    input.fail("client-cert", "needs --client-key");
  }
  if (keyFile !== undefined && certFile === undefined) {
    input.fail("client-key", "needs --client-cert");
  }
  if (insecure && caFile !== undefined) input.fail("insecure", "cannot be combined with --ca-file");
  if (insecure && url.protocol === "https:") {
    const proxy = proxyFor(url, input.env);
    if (proxy) {
      input.fail(
        "insecure",
        `cannot be used through a proxy (${proxy} is set); add the host to NO_PROXY`,
      );
    }
  }

  return {
    url,
    method,
    headers,
    body,
    status,
    contains,
    matches,
    jsonpaths,
    caFile,
    certFile,
    keyFile,
    insecure,
    follow: !input.bool("no-follow-redirects"),
    env: input.env,
  };
}

/** `Basic base64(user:pass)`, the text encoded as UTF-8. */
function basicAuth(user: string, pass: string): string {
  const bytes = new TextEncoder().encode(`${user}:${pass}`);
  return `Basic ${btoa(String.fromCharCode(...bytes))}`;
}

function lowerFirst(s: string): string {
  return s.charAt(0).toLowerCase() + s.slice(1);
}

async function readTls(spec: HttpSpec): Promise<TlsMaterial | string> {
  const files: [string, string | undefined][] = [
    ["ca-file", spec.caFile],
    ["client-cert", spec.certFile],
    ["client-key", spec.keyFile],
  ];
  const texts: (string | undefined)[] = [];
  for (const [flag, path] of files) {
    if (path === undefined) {
      texts.push(undefined);
      continue;
    }
    const text = await readFlagFile(flag, path);
    if (typeof text !== "string") return text.error;
    texts.push(text);
  }
  return { ca: texts[0], cert: texts[1], key: texts[2], insecure: spec.insecure };
}

/** One attempt: the request (following redirects), then the status and body checks. */
async function attempt(spec: HttpSpec, signal: AbortSignal): Promise<ProbeResult> {
  const tls = await readTls(spec);
  if (typeof tls === "string") return { status: "pending", error: tls };
  let url = spec.url;
  let method = spec.method;
  let body = spec.body;
  let headers = spec.headers;
  for (let hop = 0;; hop++) {
    let reply: Reply;
    try {
      reply = await send(url, method, headers, body, tls, spec.env, signal);
    } catch (e) {
      if (signal.aborted) return { status: "pending", error: "aborted" };
      if (e instanceof RequestFailure) return { status: "pending", error: e.text };
      return { status: "pending", error: describeError(e) };
    }
    try {
      const redirect = spec.follow && [301, 302, 303, 307, 308].includes(reply.status) &&
        reply.location !== undefined;
      if (redirect) {
        if (hop >= MAX_REDIRECTS) {
          return { status: "pending", error: `too many redirects (more than ${MAX_REDIRECTS})` };
        }
        let next: URL;
        try {
          next = new URL(reply.location!, url);
        } catch {
          return {
            status: "pending",
            error: `redirect to an invalid URL ${JSON.stringify(reply.location)}`,
          };
        }
        if (next.protocol !== "http:" && next.protocol !== "https:") {
          return { status: "pending", error: `redirect to unsupported URL ${next.protocol}//…` };
        }
        if (
          reply.status === 303 ||
          ((reply.status === 301 || reply.status === 302) && method === "POST")
        ) {
          if (method !== "HEAD") method = "GET";
          body = undefined;
        }
        if (next.origin !== url.origin) headers = headers.filter((h) => !h.secret);
        url = next;
        continue;
      }
      return await judge(spec, reply, method);
    } catch (e) {
      if (signal.aborted) return { status: "pending", error: "aborted" };
      return { status: "pending", error: `reading the response: ${describeError(e)}` };
    } finally {
      reply.close();
    }
  }
}

async function judge(spec: HttpSpec, reply: Reply, method: string): Promise<ProbeResult> {
  const line = statusLine(reply.status, reply.statusText);
  if (!spec.status.matches(reply.status)) {
    return { status: "pending", error: `status ${reply.status}, expected ${spec.status.text}` };
  }
  const needsBody = spec.contains !== undefined || spec.matches !== undefined ||
    spec.jsonpaths.length > 0;
  if (!needsBody || method === "HEAD") return { status: "satisfied", detail: line };
  const { bytes, truncated } = await reply.read(BODY_LIMIT);
  const text = new TextDecoder().decode(bytes);
  const size = truncated ? `more than ${formatSize(BODY_LIMIT)}` : formatSize(bytes.length);
  const parts = [line];
  if (spec.contains !== undefined) {
    if (!text.includes(spec.contains)) {
      return {
        status: "pending",
        error: `body does not contain ${JSON.stringify(spec.contains)} (${line}, ${size})`,
      };
    }
    parts.push(`body contains ${JSON.stringify(spec.contains)}`);
  }
  if (spec.matches !== undefined) {
    if (!spec.matches.test(text)) {
      return {
        status: "pending",
        error: `body does not match /${spec.matches.source}/ (${line}, ${size})`,
      };
    }
    parts.push(`body matches /${spec.matches.source}/`);
  }
  if (spec.jsonpaths.length > 0) {
    if (truncated) {
      return {
        status: "pending",
        error: `body is larger than ${formatSize(BODY_LIMIT)}, not parsed as JSON`,
      };
    }
    let doc: unknown;
    try {
      doc = JSON.parse(text);
    } catch (e) {
      const why = text.trim() === "" ? "it is empty" : lowerFirst((e as Error).message);
      return { status: "pending", error: `body is not JSON: ${why} (${line})` };
    }
    for (const expr of spec.jsonpaths) {
      const r = await expr.evaluate(doc);
      if (!r.ok) return { status: "pending", error: `jsonpath not met: ${r.detail}` };
      parts.push(r.detail);
    }
  }
  return { status: "satisfied", detail: parts.join("; ") };
}

/** Sends one request, through the proxy that applies or straight to the server. */
function send(
  url: URL,
  method: string,
  headers: readonly Header[],
  body: string | undefined,
  tls: TlsMaterial,
  env: Readonly<Record<string, string>>,
  signal: AbortSignal,
): Promise<Reply> {
  const plain: [string, string][] = headers.map((h) => [h.name, h.value]);
  if (!headers.some((h) => h.name.toLowerCase() === "user-agent")) {
    plain.push(["User-Agent", "waitcmd"]);
  }
  if (!headers.some((h) => h.name.toLowerCase() === "accept")) plain.push(["Accept", "*/*"]);
  return proxyFor(url, env)
    ? sendViaFetch(url, method, plain, body, tls, signal)
    : sendDirect(url, method, plain, body, tls, signal);
}

// ---------------------------------------------------------------- fetch (proxied)

async function sendViaFetch(
  url: URL,
  method: string,
  headers: [string, string][],
  body: string | undefined,
  tls: TlsMaterial,
  signal: AbortSignal,
): Promise<Reply> {
  const client = Deno.createHttpClient({
    caCerts: tls.ca !== undefined ? [tls.ca] : undefined,
    cert: tls.cert,
    key: tls.key,
  } as Deno.CreateHttpClientOptions);
  let res: Response;
  try {
    res = await fetch(url, { method, headers, body, redirect: "manual", signal, client });
  } catch (e) {
    client.close();
    throw new RequestFailure(describeFetchError(e));
  }
  let closed = false;
  return {
    status: res.status,
    statusText: res.statusText,
    location: res.headers.get("location") ?? undefined,
    read: (limit) => readLimited(res.body ?? emptyStream(), limit),
    close() {
      if (closed) return;
      closed = true;
      res.body?.cancel().catch(() => {});
      client.close();
    },
  };
}

function emptyStream(): AsyncIterable<Uint8Array> {
  return (async function* () {})();
}

/** `error sending request ...: client error (Connect): tcp connect error: Connection refused` -> `connection refused`. */
export function describeFetchError(e: unknown): string {
  const cause = e instanceof Error && e.cause instanceof Error ? e.cause : e;
  let text = cause instanceof Error ? cause.message : String(cause);
  const m = /client error \([A-Za-z]+\): (.*)$/s.exec(text);
  if (m) text = m[1]!;
  text = text.replace(/^error sending request[^:]*\): /, "").replace(/^tcp connect error: /, "");
  return describeError(text);
}

async function readLimited(
  stream: AsyncIterable<Uint8Array>,
  limit: number,
): Promise<{ bytes: Uint8Array; truncated: boolean }> {
  const parts: Uint8Array[] = [];
  let size = 0;
  let truncated = false;
  for await (const chunk of stream) {
    const room = limit - size;
    if (chunk.length > room) {
      parts.push(chunk.subarray(0, room));
      size += room;
      truncated = true;
      break;
    }
    parts.push(chunk);
    size += chunk.length;
  }
  const bytes = new Uint8Array(size);
  let at = 0;
  for (const p of parts) {
    bytes.set(p, at);
    at += p.length;
  }
  return { bytes, truncated };
}

// ---------------------------------------------------------------- node:http(s) (direct)

interface Address {
  readonly address: string;
  readonly family: number;
}

/** Connection errors after which the next address of the name is tried. */
const TRY_NEXT = new Set([
  "ECONNREFUSED",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "EADDRNOTAVAIL",
  "EAFNOSUPPORT",
  "ETIMEDOUT",
]);

async function addressesOf(hostname: string): Promise<Address[]> {
  const { isIP } = await import("node:net");
  const family = isIP(hostname);
  if (family !== 0) return [{ address: hostname, family }];
  const lower = hostname.toLowerCase().replace(/\.$/, "");
  if (lower === "localhost" || lower.endsWith(".localhost")) {
    return [{ address: "127.0.0.1", family: 4 }, { address: "::1", family: 6 }];
  }
  const dns = await import("node:dns");
  try {
    const list = await dns.promises.lookup(hostname, { all: true, verbatim: true });
    if (list.length === 0) throw new RequestFailure(`cannot resolve host ${hostname}`);
    return list;
  } catch (e) {
    if (e instanceof RequestFailure) throw e;
    const code = (e as { code?: string }).code;
    const why = code === "ENOTFOUND" ? "no such host" : code ?? describeError(e);
    throw new RequestFailure(`cannot resolve host ${hostname}: ${why}`);
  }
}

async function sendDirect(
  url: URL,
  method: string,
  headers: [string, string][],
  body: string | undefined,
  tls: TlsMaterial,
  signal: AbortSignal,
): Promise<Reply> {
  const hostname = url.hostname.replace(/^\[|\]$/g, "");
  const addresses = await addressesOf(hostname);
  const failures: { address: string; text: string }[] = [];
  for (const [i, addr] of addresses.entries()) {
    signal.throwIfAborted();
    try {
      return await sendTo(url, hostname, addr, method, headers, body, tls, signal);
    } catch (e) {
      if (!(e instanceof RequestFailure) || !e.retryOtherAddress || i === addresses.length - 1) {
        if (failures.length > 0 && e instanceof RequestFailure) {
          failures.push({ address: addr.address, text: e.text });
          throw new RequestFailure(joinFailures(failures));
        }
        throw e;
      }
      failures.push({ address: addr.address, text: e.text });
    }
  }
  throw new RequestFailure(`cannot resolve host ${hostname}`);
}

function joinFailures(failures: { address: string; text: string }[]): string {
  const texts = new Set(failures.map((f) => f.text));
  if (texts.size === 1) {
    return `${failures[0]!.text} (${failures.map((f) => f.address).join(", ")})`;
  }
  return failures.map((f) => `${f.address}: ${f.text}`).join("; ");
}

async function sendTo(
  url: URL,
  hostname: string,
  addr: Address,
  method: string,
  headers: [string, string][],
  body: string | undefined,
  tls: TlsMaterial,
  signal: AbortSignal,
): Promise<Reply> {
  const https = url.protocol === "https:";
  const mod = https ? await import("node:https") : await import("node:http");
  const { isIP } = await import("node:net");
  const outHeaders: Record<string, string> = { Host: url.host };
  for (const [k, v] of headers) outHeaders[k] = v;
  if (body !== undefined) {
    outHeaders["Content-Length"] = String(new TextEncoder().encode(body).length);
  }
  type Incoming = import("node:http").IncomingMessage;
  const res = await new Promise<Incoming>((resolve, reject) => {
    const options: import("node:https").RequestOptions = {
      host: hostname,
      port: url.port === "" ? (https ? 443 : 80) : Number(url.port),
      path: url.pathname + url.search,
      method,
      headers: outHeaders,
      agent: false,
      lookup: ((_h: string, o: { all?: boolean }, cb: (...a: unknown[]) => void) => {
        if (o?.all) cb(null, [{ address: addr.address, family: addr.family }]);
        else cb(null, addr.address, addr.family);
      }) as unknown as import("node:https").RequestOptions["lookup"],
    };
    if (https) {
      if (isIP(hostname) === 0) options.servername = hostname;
      if (tls.ca !== undefined) options.ca = tls.ca;
      if (tls.cert !== undefined) options.cert = tls.cert;
      if (tls.key !== undefined) options.key = tls.key;
      options.rejectUnauthorized = !tls.insecure;
    }
    const req = mod.request(options);
    const onAbort = () => req.destroy(new Error("aborted"));
    signal.addEventListener("abort", onAbort, { once: true });
    req.once("response", (r) => {
      signal.removeEventListener("abort", onAbort);
      resolve(r);
    });
    req.once("error", (e) => {
      signal.removeEventListener("abort", onAbort);
      const code = (e as { code?: string }).code ?? "";
      reject(new RequestFailure(describeNodeError(e, hostname), TRY_NEXT.has(code)));
    });
    if (body !== undefined) req.write(body);
    req.end();
  });
  let closed = false;
  const close = () => {
    if (closed) return;
    closed = true;
    res.destroy();
  };
  const onAbort = () => close();
  signal.addEventListener("abort", onAbort, { once: true });
  const location = res.headers.location;
  return {
    status: res.statusCode ?? 0,
    statusText: res.statusMessage ?? "",
    location: typeof location === "string" ? location : undefined,
    read: (limit) => readLimited(res as AsyncIterable<Uint8Array>, limit),
    close() {
      signal.removeEventListener("abort", onAbort);
      close();
    },
  };
}
