import { assert, assertEquals } from "../../tests/_assert.ts";
import { optionsOf, plan, usageError } from "../../tests/_kit.ts";
import { describeRequestError } from "../_common/httpx.ts";
import { describeNodeError } from "../_common/nodeerr.ts";
import { type HttpOptions, proxyFor } from "../_common/http_options.ts";
import { redactUrl } from "../../engine/typed_secrets.ts";
import { parseStatusSpec, statusMatches } from "../_common/http_status.ts";

/** The message `fn` throws. */
function thrown(fn: () => unknown): string {
  try {
    fn();
  } catch (e) {
    return (e as Error).message;
  }
  throw new Error("expected a throw");
}

Deno.test("parseStatusSpec() accepts codes, classes and lists", () => {
  const s = parseStatusSpec("200,204,3xx");
  assertEquals(s.text, "200,204,3xx");
  assertEquals([200, 204, 301, 399, 201, 404].map((c) => statusMatches(s, c)), [
    true,
    true,
    true,
    true,
    false,
    false,
  ]);
  assertEquals(parseStatusSpec("2XX").text, "2xx");
  for (const bad of ["abc", "", "99", "600", "2x", "200,", "6xx", "200-", "200-600", "2xx-4xx"]) {
    assertEquals(
      thrown(() => parseStatusSpec(bad)),
      `expected a code like 200, a class like 2xx, a range like 200-499 or a list, got ${
        JSON.stringify(bad)
      }`,
    );
  }
});

Deno.test("parseStatusSpec() accepts ranges, alone and in lists", () => {
  const s = parseStatusSpec("200-299, 404 - 410,5xx");
  assertEquals(s.text, "200-299,404-410,5xx");
  assertEquals([199, 200, 250, 299, 300, 403, 404, 410, 411, 503].map((c) => statusMatches(s, c)), [
    false,
    true,
    true,
    true,
    false,
    false,
    true,
    true,
    false,
    true,
  ]);
  assertEquals(statusMatches(parseStatusSpec("302-302"), 302), true);
  assertEquals(
    thrown(() => parseStatusSpec("499-200")),
    "the range 499-200 ends before it starts; write it low-high like 200-499",
  );
});

Deno.test("redactUrl() hides the password (not the user) and secret query values", () => {
  assertEquals(redactUrl("http://localhost:8080/health"), {
    display: "http://localhost:8080/health",
    secrets: [],
  });
  const r = redactUrl("https://bob:pw-1@host/p?token=t0k&page=2&api_key=k%2B1#frag");
  assertEquals(r.display, "https://bob:***@host/p?token=***&page=2&api_key=***#frag");
  for (const s of ["pw-1", "t0k", "k%2B1", "k+1"]) assert(r.secrets.includes(s), s);
  assertEquals(redactUrl("http://h/?password=&x=1").display, "http://h/?password=&x=1");
});

Deno.test("proxyFor() follows the proxy variables and NO_PROXY", () => {
  const u = (s: string) => new URL(s);
  assertEquals(proxyFor(u("http://a.example/"), {}), undefined);
  assertEquals(proxyFor(u("http://a.example/"), { HTTP_PROXY: "http://p:3128" }), "HTTP_PROXY");
  assertEquals(proxyFor(u("https://a.example/"), { HTTP_PROXY: "http://p:3128" }), undefined);
  assertEquals(proxyFor(u("https://a.example/"), { https_proxy: "http://p" }), "https_proxy");
  assertEquals(proxyFor(u("https://a.example/"), { ALL_PROXY: "http://p" }), "ALL_PROXY");
  const env = { HTTP_PROXY: "http://p", NO_PROXY: "localhost, .internal,10.0.0.1:80,[::1]" };
  assertEquals(proxyFor(u("http://localhost:8080/"), env), undefined);
  assertEquals(proxyFor(u("http://db.internal/"), env), undefined);
  assertEquals(proxyFor(u("http://internal/"), env), undefined);
  assertEquals(proxyFor(u("http://10.0.0.1/"), env), undefined);
  assertEquals(proxyFor(u("http://[::1]:80/"), env), undefined);
  assertEquals(proxyFor(u("http://notinternal.example/"), env), "HTTP_PROXY");
  assertEquals(proxyFor(u("http://x/"), { HTTP_PROXY: "http://p", no_proxy: "*" }), undefined);
});

Deno.test("describeRequestError() and describeNodeError() give short reasons", () => {
  const fetchErr = new TypeError("fetch failed", {
    cause: new Error(
      "error sending request for url (http://127.0.0.1:1/): client error (Connect): tcp connect error: Connection refused (os error 111)",
    ),
  });
  assertEquals(describeRequestError(fetchErr), "connection refused");
  const code = (c: string, m = "x") => Object.assign(new Error(m), { code: c });
  assertEquals(describeNodeError(code("ECONNREFUSED"), "h"), "connection refused");
  assertEquals(
    describeNodeError(code("ERR_TLS_CERT_ALTNAME_INVALID"), "api.test"),
    "certificate is not valid for api.test",
  );
  assertEquals(
    describeNodeError(code("UNABLE_TO_VERIFY_LEAF_SIGNATURE"), "h"),
    "certificate not trusted (unable to verify the first certificate)",
  );
  assertEquals(
    describeNodeError(new Error("socket hang up"), "h"),
    "connection closed before a response",
  );
});

Deno.test("http parse() shows a redacted target and registers every secret", () => {
  const p = plan(
    [
      ...["http", "http://u:pw-secret@h:8/x?token=tok-secret"],
      ...["--header", "Authorization: Bearer hdr-secret", "--header", "X-Plain: visible"],
      ...["--header-env", "X-Api=API", "--basic-auth-env", "me:PASS"],
    ],
    { API: "env-secret", PASS: "basic-secret" },
  );
  assertEquals(p.conditions[0]!.name, "http http://u:***@h:8/x?token=***");
  const basic = btoa("me:basic-secret");
  const secrets = ["pw-secret", "tok-secret", "Bearer hdr-secret", "env-secret", "basic-secret"];
  // The Basic credential alone too: an echoing server shows it without its scheme.
  for (const s of [...secrets, "hdr-secret", basic]) {
    assert(p.secrets.includes(s), `${s} is registered as a secret`);
  }
  assert(!p.secrets.includes("visible"));
});

Deno.test("http parse() reports malformed values as usage errors", async (t) => {
  const where = "waitcmd: condition 1 (http)";
  const see = "(see: waitcmd help http)";
  const rows: [string[], string][] = [
    [
      ["http", "not a url"],
      `${where}: expected an http:// or https:// URL, got "not a url" ${see}`,
    ],
    [
      ["http", "http://h/", "--status", "abc"],
      `${where}: --status: expected a code like 200, a class like 2xx, a range like 200-499 or a list, got "abc" ${see}`,
    ],
    [
      ["http", "http://h/", "--jsonpath", "$.a =="],
      `${where}: --jsonpath: expected a value after $.a == ${see}`,
    ],
    [
      ["http", "http://h/", "--jsonpath", "$.a[?(@.b==)] == 1"],
      `${where}: --jsonpath: bad path "$.a[?(@.b==)]": bad filter (@.b==): it ends with an operator ${see}`,
    ],
    [
      ["http", "http://h/", "--matches", "[z-a]"],
      `${where}: --matches: invalid regular expression /[z-a]/: range out of order in character class ${see}`,
    ],
    [
      ["http", "http://h/", "--method", "HEAD", "--jsonpath", "$.a"],
      `${where}: --jsonpath: needs a response body; HEAD responses have none ${see}`,
    ],
    [
      ["http", "http://h/", "--header", ": v"],
      `${where}: --header: expected 'Name: value' (or Name=value), got ": v" ${see}`,
    ],
    [
      ["http", "http://h/", "--header-env", "X=1BAD"],
      `${where}: --header-env: expected NAME=ENVVAR, got "X=1BAD" ${see}`,
    ],
    [
      ["http", "http://h/", "--basic-auth-env", ":PASS"],
      `${where}: --basic-auth-env: expected USER:ENVVAR, got ":PASS" ${see}`,
    ],
    [
      ["http", "https://h/", "--client-key", "k"],
      `${where}: --client-key: needs --client-cert ${see}`,
    ],
  ];
  for (const [args, line] of rows) {
    await t.step(args.slice(2).join(" ") || args[1]!, async () => {
      assertEquals(await usageError(args), line);
    });
  }
});

Deno.test("http parse() gives plain options: no user-info in the URL, secret headers marked", () => {
  const o = optionsOf<HttpOptions>(
    ["http", "http://u:pw@h:8/x", "--header", "X-Plain: v", "--status", "200,3xx"],
  );
  assertEquals(o.url, "http://h:8/x");
  assertEquals(o.headers, [
    { name: "Authorization", value: `Basic ${btoa("u:pw")}`, secret: true },
    { name: "X-Plain", value: "v", secret: false },
  ]);
  assertEquals(o.status, { text: "200,3xx", codes: [200], classes: [3], ranges: [] });
  assertEquals(structuredClone(o), o, "options are plain data");
});

Deno.test("http parse() does no I/O: missing TLS and body files are only read by check()", () => {
  const p = plan(["http", "https://h/", "--ca-file", "/nonexistent/ca.pem"]);
  assertEquals(p.conditions[0]!.target, "https://h/");
  const o = optionsOf<HttpOptions>(["http", "https://h/", "--body-file", "/nonexistent/b.json"]);
  assertEquals([o.method, o.body, o.bodyFile], ["POST", undefined, "/nonexistent/b.json"]);
});

Deno.test("http, tls, ssh and dns import their npm packages lazily only", async () => {
  const files = [
    "./mod.ts",
    "./probe.ts",
    "../_common/http_options.ts",
    "../_common/http_probe.ts",
    "../_common/http_send.ts",
    "../_common/http_judge.ts",
    "../tls/mod.ts",
    "../ssh/mod.ts",
    "../dns/mod.ts",
    "../_common/jsonpath.ts",
    "../_common/jsonpath_lib.ts",
    "../_common/nodeerr.ts",
    "../_common/httpx.ts",
  ];
  for (const file of files) {
    const src = await Deno.readTextFile(new URL(`./${file}`, import.meta.url));
    const statics = src.split("\n").filter((l) => /^import\s/.test(l) || /^\s+from\s/.test(l));
    for (const pkg of ["ssh2", "dns-packet", "jsonpath-plus", "npm:"]) {
      assertEquals(
        statics.filter((l) => l.includes(`"${pkg}`)),
        [],
        `${file} imports ${pkg} statically`,
      );
    }
  }
});
