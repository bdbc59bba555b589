/**
 * influxdb: an InfluxDB server answers its ping endpoint (`GET /ping`) with a
 * 2xx status, the check InfluxDB's own clients make (docs/contract.md §5
 * influxdb). It is an http condition on `<URL>/ping`: the URL, its
 * user-info and the TLS flags are parsed as http's (conditions/_common/http_options.ts), and
 * the request is sent and judged by the HTTP probe (conditions/_common/http_probe.ts).
 *
 * @module
 */

import { defineKind, type KindInput } from "../../engine/types.ts";
import { redactUrl } from "../../engine/typed_secrets.ts";
import { HTTP_TLS_FLAGS, type HttpOptions, parseHttpOptions } from "../_common/http_options.ts";

/** The TLS flags of http that influxdb takes too, with the same meaning. */
const TLS_FLAGS: ReadonlySet<string> = new Set([
  "ca-file",
  "client-cert",
  "client-key",
  "insecure",
]);

/** The influxdb kind. */
export const influxdb = defineKind<HttpOptions>({
  name: "influxdb",
  aliases: [],
  summary: "an InfluxDB server answers its ping endpoint",
  description:
    "Sends GET URL/ping on each attempt, the endpoint InfluxDB's own clients ping (1.x and 2.x answer it without authentication), and is satisfied by any 2xx status (InfluxDB answers 204 No Content), as http URL/ping would be. Redirects are followed (at most 10). A refused connection, a TLS error or another status is retried until the timeout. User-info in the URL is sent as basic authentication and is a secret; HTTP_PROXY, HTTPS_PROXY, ALL_PROXY and NO_PROXY are honoured. Unreadable --ca-file/--client-cert/--client-key files are retried (they may not be written yet).",
  target: {
    shape: "required",
    placeholder: "URL",
    description:
      "the server's http:// or https:// URL, e.g. http://localhost:8086 (a path is a prefix /ping is added to)",
  },
  flags: HTTP_TLS_FLAGS.filter((f) => TLS_FLAGS.has(f.name)),
  examples: [
    { args: "influxdb http://localhost:8086", description: "wait until InfluxDB answers /ping" },
    {
      args: "influxdb https://influx.internal:8086 --ca-file ca.pem",
      description: "the same over HTTPS, trusting a private CA",
    },
  ],
  parse(input) {
    const options = parseHttpOptions(withTlsFlagsOnly(input));
    const url = new URL(options.url);
    if (url.search !== "" || url.hash !== "") {
      input.fail(
        undefined,
        `expected the server's URL without a query or fragment (like http://localhost:8086), got ${
          JSON.stringify(redactUrl(input.target ?? "").display)
        }`,
      );
    }
    // InfluxDB's clients add /ping to the path the URL has (a reverse proxy's prefix).
    url.pathname = `${url.pathname.replace(/\/+$/, "")}/ping`;
    return {
      target: redactUrl(input.target ?? "").display,
      options: { ...options, url: url.href },
    };
  },
  load: () => import("./probe.ts").then((m) => m.create),
  doctor: (env) => import("../_common/doctor.ts").then((m) => m.caStore(env)),
});

/**
 * `input` as http's parser reads it: the flags influxdb declares as given, http's others as not
 * given (so the request is a plain GET expecting 2xx).
 */
function withTlsFlagsOnly(input: KindInput): KindInput {
  const own = (flag: string) => TLS_FLAGS.has(flag);
  return {
    kindWord: input.kindWord,
    target: input.target,
    command: input.command,
    env: input.env,
    has: (f) => own(f) && input.has(f),
    string: (f) => own(f) ? input.string(f) : undefined,
    strings: (f) => own(f) ? input.strings(f) : [],
    bool: (f) => own(f) && input.bool(f),
    integer: (f) => own(f) ? input.integer(f) : undefined,
    duration: (f) => own(f) ? input.duration(f) : undefined,
    fail: (f, message) => input.fail(f, message),
    secret: (value) => input.secret(value),
  };
}
