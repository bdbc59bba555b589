/**
 * http: an HTTP(S) endpoint answers with an expected status (and body).
 *
 * Requests go straight to the server through `node:http`/`node:https`, trying
 * every address the name resolves to (`localhost`: 127.0.0.1, then ::1), with
 * the TLS options the flags give. When a proxy environment variable applies
 * to the URL (HTTP_PROXY, HTTPS_PROXY, ALL_PROXY, minus NO_PROXY), the request
 * goes through Deno's `fetch`, which honours them. Redirects are followed
 * (at most 10), one hop at a time, so each hop picks its own route
 * (docs/contract.md §5 http).
 *
 * This file declares the kind; the HTTP request's options, its sending and
 * judging are shared (conditions/_common/: `http_options.ts` parses the flags,
 * `http_probe.ts` sends the requests with `http_send.ts` and judges the
 * answers with `http_judge.ts`).
 *
 * @module
 */

import { namedGroupsOf } from "../_common/captures.ts";
import { defineKind } from "../../engine/types.ts";
import { validateRegex } from "../_common/textmatch.ts";
import { redactUrl } from "../../engine/typed_secrets.ts";
import { HTTP_TLS_FLAGS, type HttpOptions, parseHttpOptions } from "../_common/http_options.ts";

/** The http kind. */
export const http = defineKind<HttpOptions>({
  name: "http",
  aliases: [],
  summary: "an HTTP(S) endpoint answers with the expected status, body or JSON",
  description:
    "Sends a request on each attempt (GET by default, POST with --body or --body-file) and is satisfied when the status matches --status (default any 2xx), every --expect-header finds its header and every body check holds: --contains, --matches, --jsonpath and --xpath (the body is read up to 10 MiB; --xpath parses it as HTML or XML, as its Content-Type says, else XML when it is well-formed XML). Redirects are followed (at most 10) unless --no-follow-redirects. A name is tried on every address it resolves to; localhost on 127.0.0.1 and ::1. HTTP_PROXY, HTTPS_PROXY, ALL_PROXY and NO_PROXY are honoured (not with --unix-socket, which sends every request, redirects included, over the socket; a socket that does not exist yet is retried). A refused connection, a TLS error or another status is retried until the timeout; with --attempt-timeout each request is bounded by it. Unreadable --ca-file/--client-cert/--client-key/--body-file files are retried too (they may not be written yet).",
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
      description:
        "expected status: a code 200, a class 2xx, a range 200-499 or a list 200,204,3xx (default 2xx)",
    },
    {
      name: "expect-header",
      type: "string",
      placeholder: "'NAME: REGEX'",
      repeatable: true,
      description:
        "the response has header NAME (any case) whose value matches REGEX (RE2, anywhere in it)",
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
      name: "xpath",
      type: "string",
      placeholder: "EXPR",
      repeatable: true,
      description:
        "the body, parsed as HTML or XML, gives a non-empty node set or true for an XPath 1.0 expression like '//title' or 'count(//li) > 2'; all given must hold",
    },
    {
      name: "method",
      type: "string",
      placeholder: "METHOD",
      description: "request method (default GET, or POST with --body or --body-file)",
    },
    { name: "body", type: "string", placeholder: "TEXT", description: "request body" },
    {
      name: "body-file",
      type: "string",
      placeholder: "PATH",
      complete: "file",
      description: "request body read from a file (UTF-8 text, at most 4 MiB) on every attempt",
    },
    {
      name: "header",
      type: "string",
      placeholder: "'NAME: VALUE'",
      repeatable: true,
      description:
        "request header (NAME=VALUE, as waitfor writes it, too); Authorization and Cookie values are secrets",
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
    ...HTTP_TLS_FLAGS,
    {
      name: "unix-socket",
      type: "string",
      placeholder: "PATH",
      complete: "file",
      description:
        "send the requests over this Unix domain socket; the URL still gives the path and Host",
    },
    {
      name: "h2c",
      type: "boolean",
      description:
        "send http:// requests as HTTP/2 over cleartext with prior knowledge (h2c), straight to the server",
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
      args: "http http://localhost:8080/api --expect-header 'Content-Type: ^application/json'",
      description: "wait until the API answers 2xx with a JSON content type",
    },
    {
      args: 'http http://localhost:8080/ --xpath \'//div[@id="app" and @data-ready="true"]\'',
      description: "wait until the page has a ready element (HTML, or XML)",
    },
    {
      args: "http http://localhost:50051/healthz --h2c",
      description: "wait for a server that speaks only HTTP/2 over cleartext",
    },
    {
      args: "http https://app.example.com/login --no-follow-redirects --status 3xx",
      description: "wait until the login page redirects",
    },
    {
      args: "http http://localhost:3000/api --header-env Authorization=API_TOKEN --contains ready",
      description: "send a secret header taken from the environment",
    },
    {
      args:
        "http http://localhost/version --unix-socket /var/run/docker.sock --jsonpath '.ApiVersion'",
      description: "ask the Docker Engine's API over its Unix socket",
    },
  ],
  parse(input) {
    const options = parseHttpOptions(input);
    return {
      target: redactUrl(input.target ?? "").display,
      options,
      captures: [
        ...new Set([
          ...namedGroupsOf(options.matches),
          ...options.expectHeaders.flatMap((h) => namedGroupsOf(h.regex)),
        ]),
      ],
    };
  },
  async validate(options, fail) {
    await validateRegex(options.matches, fail, "m");
    for (const h of options.expectHeaders) {
      await validateRegex(h.regex, fail, "", "expect-header");
    }
    if (options.xpaths.length > 0) {
      const { validateXPaths } = await import("../_common/xpath.ts");
      await validateXPaths(options.xpaths, fail);
    }
    if (options.jsonpaths.length === 0) return;
    const { validateJsonPaths } = await import("../_common/jsonpath_lib.ts");
    await validateJsonPaths(options.jsonpaths, fail);
  },
  claims(word) {
    if (/^https?:\/\/./i.test(word)) return `http ${word}`;
    // wait-on's `http-get://host/path` and `https-get:host/path`.
    const m = /^(https?)-get:(?:\/\/)?(.+)$/i.exec(word);
    return m ? `http ${m[1]!.toLowerCase()}://${m[2]}` : undefined;
  },
  load: () => import("./probe.ts").then((m) => m.create),
  doctor: (env) => import("../_common/doctor.ts").then((m) => m.caStore(env)),
});
