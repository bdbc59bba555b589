/**
 * The http kind end to end: the CLI as a subprocess against real HTTP and
 * HTTPS servers (a CA made for the run, mutual TLS, a forward proxy, an
 * IPv6-only listener).
 */

import { assert, assertEquals, assertMatch, assertStringIncludes } from "../../tests/_assert.ts";
import {
  type RunningServer,
  startHttpServer,
  startHttpServerV6,
  startHttpsServer,
  startMutualTlsServer,
  startProxy,
} from "../../tests/services/http_servers.ts";
import { makePki } from "../../tests/services/tls.ts";
import {
  expectJson,
  runCli,
  runJson,
  runLate,
  timing,
  usageErrorLine,
  writeRecipe,
} from "../../tests/e2e/_cli.ts";

const FAST = ["--timeout", "8s", "--interval", "100ms"];
const SHORT = ["--timeout", "1500ms", "--interval", "100ms"];
const opts = { sanitizeResources: false, sanitizeOps: false };

/** Asserts that no output of `r` contains any of `secrets`. */
function assertNoSecrets(r: { stdout: string; stderr: string }, secrets: string[]) {
  for (const s of secrets) {
    assert(!r.stdout.includes(s), `secret ${s} leaked on stdout:\n${r.stdout}`);
    assert(!r.stderr.includes(s), `secret ${s} leaked on stderr:\n${r.stderr}`);
  }
}

Deno.test("http kind against a plain HTTP server", opts, async (t) => {
  const srv: RunningServer = startHttpServer();
  const v6: RunningServer = startHttpServerV6();
  const u = srv.url;
  try {
    await t.step("a server that is ready after 3 requests is waited for", async () => {
      const r = await expectJson([
        ...FAST,
        ...["http", `${u}/ready-after/a/3`, "--jsonpath", '$.status == "ok"'],
      ], { code: 0 });
      const c = r.json.conditions[0]!;
      assertEquals(c.attempts, 3);
      assertEquals(c.detail, '200 OK; $.status == "ok" (got "ok")');
    });

    await t.step("progress lines show the status error until the server is ready", async () => {
      const r = await runCli([...FAST, "http", `${u}/ready-after/b/2`]);
      assertEquals(r.code, 0);
      assertMatch(r.stderr, /\[\.\.\] http \S+ attempt 1 \(\d+\.\ds\): status 503, expected 2xx\n/);
      assertMatch(r.stderr, /\[ok\] http \S+ attempt 2 \(\d+\.\ds\): 200 OK\n/);
    });

    await t.step("--status takes a code, a class, a range and a list", async () => {
      for (
        const [path, status, detail] of [
          ["/status/204", "200,204", "204 No Content"],
          ["/status/404", "4xx", "404 Not Found"],
          ["/status/500", "500", "500 Internal Server Error"],
          ["/status/202", "201,2XX", "202 Accepted"],
          ["/status/404", "200-499", "404 Not Found"],
          ["/status/499", "200-499", "499"],
          ["/status/302", "100-199,300-399", "302 Found"],
        ]
      ) {
        const r = await runJson([...FAST, "http", `${u}${path}`, "--status", status!]);
        assertEquals(r.code, 0, `${path} --status ${status}`);
        assertEquals(r.json.conditions[0]!.detail, detail);
      }
      await expectJson([...SHORT, "http", `${u}/status/200`, "--status", "204,3xx"], {
        code: 1,
        error: "status 200, expected 204,3xx",
      });
      await expectJson([...SHORT, "http", `${u}/status/500`, "--status", "200-499"], {
        code: 1,
        error: "status 500, expected 200-499",
      });
      // Pending (503) while starting, then 200: a range that leaves 503 out waits for it.
      const r = await expectJson([
        ...FAST,
        ...["http", `${u}/ready-after/range/3`, "--status", "200-499"],
      ], { code: 0, detail: "200 OK" });
      assertEquals(r.json.conditions[0]!.attempts, 3);
    });

    await t.step("--expect-header finds a response header whose value matches", async () => {
      const q = "Content-Type=application/json;%20charset=utf-8&X-Build=v1.4.2-rc1";
      const ok = await expectJson([
        ...FAST,
        ...["http", `${u}/headers?${q}`, "--expect-header", "content-type: ^application/json"],
        ...["--expect-header", "X-BUILD: v(?P<major>\\d+)\\.", "--expect-header", "X-Build:"],
      ], {
        code: 0,
        detail:
          "200 OK; header content-type matches /^application/json/; header X-BUILD matches /v(?P<major>\\d+)\\./; header X-Build present",
      });
      assertEquals((ok.json.conditions[0] as { captures?: unknown }).captures, {
        "1": "1",
        major: "1",
      });
      // Pending while the header says starting, then satisfied.
      const late = await expectJson([
        ...FAST,
        ...["http", `${u}/header-after/eh/3?h=X-State`, "--expect-header", "x-state: ^ready$"],
      ], { code: 0, detail: "200 OK; header x-state matches /^ready$/" });
      assertEquals(late.json.conditions[0]!.attempts, 3);
      await expectJson([...SHORT, "http", `${u}/headers?${q}`, "--expect-header", "X-Build: ^v2"], {
        code: 1,
        error: 'header X-Build "v1.4.2-rc1" does not match /^v2/ (200 OK)',
      });
      await expectJson([...SHORT, "http", `${u}/ok`, "--expect-header", "X-Missing: ."], {
        code: 1,
        error: "no header X-Missing (200 OK)",
      });
      // A header that carries a session is never shown (the route sets Set-Cookie: starting).
      const cookie = await expectJson([
        ...SHORT,
        ...["http", `${u}/header-after/ck/99?h=Set-Cookie`, "--expect-header", "Set-Cookie: ^x="],
      ], {
        code: 1,
        error: "header Set-Cookie (8 characters, not shown) does not match /^x=/ (200 OK)",
      });
      assertNoSecrets(cookie, ['"starting"']);
      // The status is checked first: a 503 never reaches the header checks.
      await expectJson([
        ...SHORT,
        ...["http", `${u}/status/503`, "--expect-header", "content-type: ."],
      ], { code: 1, error: "status 503, expected 2xx" });
    });

    await t.step("redirects are followed, at most 10", async () => {
      await expectJson([...FAST, "http", `${u}/redirect/3`, "--contains", "landed"], {
        code: 0,
        detail: '200 OK; body contains "landed"',
      });
      await expectJson([...SHORT, "http", `${u}/redirect/11`], {
        code: 1,
        error: "too many redirects (more than 10)",
      });
      await expectJson([...FAST, "http", `${u}/redirect/10`], { code: 0 });
    });

    await t.step("--no-follow-redirects checks the 3xx itself", async () => {
      await expectJson([
        ...FAST,
        ...["http", `${u}/redirect/1`, "--no-follow-redirects", "--status", "302"],
      ], { code: 0, detail: "302 Found" });
      await expectJson([...SHORT, "http", `${u}/redirect/1`, "--no-follow-redirects"], {
        code: 1,
        error: "status 302, expected 2xx",
      });
    });

    await t.step("a redirect to another origin drops the Authorization header", async () => {
      const target = encodeURIComponent(`http://localhost:${v6.port}/echo`);
      const r = await expectJson([
        ...SHORT,
        ...["http", `${u}/redirect-to?url=${target}`],
        ...["--header", "Authorization: Bearer sekret-token-1", "--header", "X-Plain: kept"],
        ...["--jsonpath", "$.headers.x-plain == kept && $.headers.authorization"],
      ], { code: 1 });
      assertStringIncludes(
        r.json.conditions[0]!.last_error,
        "$.headers.authorization (got nothing)",
      );
      assertNoSecrets(r, ["sekret-token-1"]);
    });

    await t.step("--contains and --matches check the body", async () => {
      await expectJson([
        ...FAST,
        ...["http", `${u}/text?body=${encodeURIComponent("line one\nstate: ready\n")}`],
        ...["--contains", "one", "--matches", "^state: (ready|up)$"],
      ], { code: 0, detail: '200 OK; body contains "one"; body matches /^state: (ready|up)$/' });
      await expectJson([...SHORT, "http", `${u}/ok`, "--contains", "absent"], {
        code: 1,
        error: 'body does not contain "absent" (200 OK, 5 B)',
      });
      const nomatch = await runJson([...SHORT, "http", `${u}/ok`, "--matches", "^x+$"]);
      assertEquals(
        nomatch.json.conditions[0]!.last_error,
        "body does not match /^x+$/ (200 OK, 5 B)",
      );
    });

    await t.step("the body is read up to 10 MiB", async () => {
      const r = await expectJson([...SHORT, "http", `${u}/large`, "--contains", "END"], {
        code: 1,
      });
      assertStringIncludes(r.json.conditions[0]!.last_error, 'body does not contain "END"');
      assertStringIncludes(r.json.conditions[0]!.last_error, "more than 10.0 MiB");
      await expectJson([...FAST, "http", `${u}/large`, "--contains", "xxxx"], { code: 0 });
    });

    await t.step("--jsonpath: filters, operators, && || and bare paths", async () => {
      const cases: [string, boolean][] = [
        ['$.conditions[?(@.type=="Available")].status == "True"', true],
        ["{.conditions[?(@.type=='Progressing')].status}=False", true],
        [".replicas >= 3 && .version =~ ^1\\.", true],
        ["$.replicas > 3 || $.status == ok", true],
        ["($.replicas > 3 || $.ready) && $.items", false],
        ["$.ready", true],
        ["$.missing != 1", false],
      ];
      for (const [expr, ok] of cases) {
        const r = await runJson([
          ...(ok ? FAST : SHORT),
          "http",
          `${u}/json`,
          "--jsonpath",
          expr,
        ]);
        assertEquals(r.code, ok ? 0 : 1, `${expr}: ${r.stdout}`);
      }
      const r = await runJson([...SHORT, "http", `${u}/json`, "--jsonpath", "$.replicas == 5"]);
      assertEquals(r.json.conditions[0]!.last_error, "jsonpath not met: $.replicas == 5 (got 3)");
      const two = await runJson([
        ...FAST,
        ...["http", `${u}/json`, "--jsonpath", "$.status == ok", "--jsonpath", "$.replicas == 3"],
      ]);
      assertEquals(
        two.json.conditions[0]!.detail,
        '200 OK; $.status == "ok" (got "ok"); $.replicas == 3 (got 3)',
      );
      const html = await runJson([...SHORT, "http", `${u}/not-json`, "--jsonpath", "$.a"]);
      assertMatch(html.json.conditions[0]!.last_error, /^body is not JSON: .+ \(200 OK\)$/);
    });

    await t.step("--method, --body and --header shape the request", async () => {
      const r = await runJson([
        ...FAST,
        ...["http", `${u}/echo`, "--method", "put", "--body", '{"a":1}'],
        ...["--header", "Content-Type: application/json", "--header", "X-Trace: abc"],
        ...["--jsonpath", '$.method == PUT && $.body == "{\\"a\\":1}" && $.headers.x-trace == abc'],
        ...["--jsonpath", "$.headers.content-type == application/json"],
      ]);
      assertEquals(r.code, 0, r.stdout);
      const post = await runJson([
        ...FAST,
        ...["http", `${u}/echo`, "--body", "x=1", "--jsonpath", "$.method == POST"],
      ]);
      assertEquals(post.code, 0, "--body alone sends POST");
      await expectJson([...FAST, "http", `${u}/ok`, "--method", "HEAD"], {
        code: 0,
        detail: "200 OK",
      });
    });

    await t.step("--body-file sends a file's text, read on every attempt", async () => {
      const dir = await Deno.makeTempDir({ prefix: "waitcmd-http-body-" });
      try {
        const file = `${dir}/payload.json`;
        await Deno.writeTextFile(file, '{"query":"ready?"}');
        await expectJson([
          ...FAST,
          ...[
            "http",
            `${u}/echo`,
            "--body-file",
            file,
            "--header",
            "Content-Type: application/json",
          ],
          ...["--jsonpath", '$.method == POST && $.body == "{\\"query\\":\\"ready?\\"}"'],
        ], { code: 0 });
        await expectJson([
          ...FAST,
          ...["http", `${u}/echo`, "--method", "PUT", "--body-file", file],
          ...["--jsonpath", "$.method == PUT"],
        ], { code: 0 });
        // A file that is not written yet is pending, then sent once it is there.
        const later = `${dir}/later.txt`;
        const r = await runLate([
          ...FAST,
          ...["http", `${u}/echo`, "--body-file", later, "--jsonpath", "$.body == written-late"],
        ], () => Deno.writeTextFile(later, "written-late"));
        assertEquals(r.code, 0, r.stderr);
        assertEquals(
          r.attempts[0]!.error,
          `cannot read --body-file ${later}: no such file or directory`,
        );
        await expectJson([...SHORT, "http", `${u}/echo`, "--body-file", `${dir}/never`], {
          code: 1,
          status: "timeout",
          error: `cannot read --body-file ${dir}/never: no such file or directory`,
        });
      } finally {
        await Deno.remove(dir, { recursive: true });
      }
    });

    await t.step("--header-env, --basic-auth-env and URL user-info stay secret", async () => {
      const env = { API_TOKEN: "tok-4242-secret", DB_PASS: "pa55-word-9" };
      const args = [
        ...["http", `${u}/echo`, "--header-env", "X-Api-Token=API_TOKEN"],
        ...["--basic-auth-env", "alice:DB_PASS"],
        ...["--jsonpath", `$.headers.x-api-token == tok-4242-secret`],
        ...["--jsonpath", `$.headers.authorization == "Basic ${btoa("alice:pa55-word-9")}"`],
      ];
      const r = await runJson([...FAST, ...args], { env });
      assertEquals(r.code, 0, r.stdout);
      assertNoSecrets(r, ["tok-4242-secret", "pa55-word-9", btoa("alice:pa55-word-9")]);
      const text = await runCli([...FAST, ...args], { env });
      assertEquals(text.code, 0);
      assertNoSecrets(text, ["tok-4242-secret", "pa55-word-9", btoa("alice:pa55-word-9")]);

      const info = await runJson([
        ...FAST,
        ...[
          "http",
          `http://bob:hunter-22@127.0.0.1:${srv.port}/echo?access_token=qq-777-zz&page=2`,
        ],
        ...["--jsonpath", `$.headers.authorization == "Basic ${btoa("bob:hunter-22")}"`],
      ]);
      assertEquals(info.code, 0, info.stdout);
      assertEquals(
        info.json.conditions[0]!.name,
        `http http://bob:***@127.0.0.1:${srv.port}/echo?access_token=***&page=2`,
      );
      assertNoSecrets(info, ["hunter-22", "qq-777-zz", btoa("bob:hunter-22")]);
      // A failing run shows the secret values nowhere either (details echo them back).
      const fail = await runCli([
        ...SHORT,
        ...["http", `http://bob:hunter-22@127.0.0.1:${srv.port}/echo?access_token=qq-777-zz`],
        ...["--header", "Authorization: Bearer zz-top-secret"],
        ...["--jsonpath", "$.headers.authorization == nope"],
      ]);
      assertEquals(fail.code, 1);
      assertStringIncludes(fail.stderr, "$.headers.authorization");
      assertNoSecrets(fail, ["hunter-22", "qq-777-zz", "zz-top-secret"]);
    });

    await t.step("a slow server is cut off by --attempt-timeout", async () => {
      const r = await expectJson([
        ...timing("2s", "100ms", "300ms"),
        "http",
        `${u}/slow/5000`,
      ], { code: 1, error: "attempt timed out after 300ms" });
      assert(r.json.conditions[0]!.attempts >= 2);
      assert(r.json.elapsed_seconds < 5, "the slow request did not hold the run");
      await expectJson([...FAST, "--attempt-timeout", "3s", "http", `${u}/slow/200`], { code: 0 });
    });

    await t.step("a condition's own --attempt-timeout wins over the global one", async () => {
      // Global 5 s, the slow condition's own 300 ms: it is cut; the other keeps 5 s and holds.
      const r = await expectJson([
        ...timing("2s", "100ms", "5s"),
        ...["http", `${u}/slow/5000`, "--attempt-timeout", "300ms"],
        ...["--", "http", `${u}/slow/800`],
      ], { code: 1, error: "attempt timed out after 300ms" });
      assert(r.json.conditions[0]!.attempts >= 2);
      assertEquals(r.json.conditions[1]!.satisfied, true);
      // Global 300 ms, the condition's own 3 s: a 600 ms answer is waited for.
      await expectJson([
        ...timing("5s", "100ms", "300ms"),
        ...["http", `${u}/slow/600`, "--attempt-timeout", "3s"],
      ], { code: 0, detail: "200 OK" });
      // The same in a recipe, spelled with `_` or as the global key is.
      const dir = await Deno.makeTempDir({ prefix: "waitcmd-http-recipe-" });
      try {
        const recipe = await writeRecipe(dir, [
          "attempt-timeout: 300ms",
          "conditions:",
          "  - kind: http",
          `    target: ${u}/slow/600`,
          "    attempt_timeout: 3s",
          "  - kind: http",
          `    target: ${u}/slow/700`,
          "    attempt-timeout: 2s",
        ]);
        const ok = await expectJson([...timing("5s", "100ms"), "-f", recipe], { code: 0 });
        assertEquals(ok.json.conditions.map((c) => c.attempts), [1, 1]);
        const explain = await runCli(["--explain", "-f", recipe]);
        assertStringIncludes(explain.stdout, `http ${u}/slow/600 --attempt-timeout=3s`);
      } finally {
        await Deno.remove(dir, { recursive: true });
      }
    });

    await t.step("localhost is tried over IPv6 when IPv4 refuses", async () => {
      const r = await runJson([...FAST, "http", `http://localhost:${v6.port}/ok`]);
      assertEquals(r.code, 0, r.stdout);
      assertEquals(r.json.conditions[0]!.name, `http http://localhost:${v6.port}/ok`);
      const ip = await runJson([
        ...FAST,
        ...["http", `http://[::1]:${v6.port}/echo`],
        ...["--jsonpath", `$.headers.host == "[::1]:${v6.port}"`],
      ]);
      assertEquals(ip.code, 0, ip.stdout);
    });

    await t.step("HTTP_PROXY is honoured and NO_PROXY bypasses it", async () => {
      const proxy = startProxy();
      try {
        const r = await runJson([
          ...FAST,
          ...["http", "http://service.invalid/health", "--contains", "proxied"],
        ], {
          env: { HTTP_PROXY: proxy.url },
        });
        assertEquals(r.code, 0, r.stdout);
        assertEquals(proxy.requests, ["http://service.invalid/health"]);
        const direct = await runJson([...FAST, "http", `${u}/ok`, "--contains", "ready"], {
          env: { http_proxy: "http://127.0.0.1:1", NO_PROXY: "localhost,127.0.0.1" },
        });
        assertEquals(direct.code, 0, direct.stdout);
        assertEquals(proxy.requests.length, 1);

        // A port the Fetch standard blocks cannot be reached through a proxy (docs/contract.md
        // §5): the condition stays pending with fetch's reason, and the proxy is never asked.
        const blocked = await runJson([...SHORT, "http", "http://service.invalid:6000/health"], {
          env: { HTTP_PROXY: proxy.url },
        });
        assertEquals(blocked.code, 1, blocked.stdout);
        assertEquals(
          blocked.json.conditions[0]!.last_error,
          "fetch failed: Requests to port 6000 are blocked",
        );
        assertEquals(proxy.requests.length, 1);
      } finally {
        await proxy.stop();
      }
    });
  } finally {
    await srv.stop();
    await v6.stop();
  }
});

Deno.test("http kind against HTTPS servers with a CA made for the run", opts, async (t) => {
  const pki = await makePki();
  const other = await pki.issue("other", { dnsNames: ["other.test"] });
  const tls = startHttpsServer(pki.server.chainPem, pki.server.keyPem);
  const wrongName = startHttpsServer(other.certPem, other.keyPem);
  const mtls = await startMutualTlsServer(pki);
  try {
    await t.step("--ca-file trusts the private CA", async () => {
      const r = await runJson([
        ...FAST,
        ...["http", `https://localhost:${tls.port}/json`, "--ca-file", pki.ca.certFile],
        ...["--jsonpath", "$.ready"],
      ]);
      assertEquals(r.code, 0, r.stdout);
      assertEquals(r.json.conditions[0]!.detail, "200 OK; $.ready (got true)");
      const ip = await runJson([...FAST, "http", `${tls.url}/ok`, "--ca-file", pki.ca.certFile]);
      assertEquals(ip.code, 0, ip.stdout);
    });

    await t.step("--extra-ca-file trusts its CA besides the default roots", async () => {
      const url = `https://localhost:${tls.port}/json`;
      await expectJson([...FAST, "http", url, "--extra-ca-file", pki.ca.certFile], {
        code: 0,
        detail: "200 OK",
      });
      // The default roots are kept: made to hold the run's CA (the system store, read from
      // SSL_CERT_FILE), an unrelated --extra-ca-file still verifies; --ca-file alone does not.
      const unrelated = await makePki({ server: { dnsNames: ["unrelated.test"] } });
      try {
        const env = { DENO_TLS_CA_STORE: "system", SSL_CERT_FILE: pki.ca.certFile };
        await expectJson([...FAST, "http", url, "--extra-ca-file", unrelated.ca.certFile], {
          code: 0,
        }, { env });
        await expectJson([...SHORT, "http", url, "--ca-file", unrelated.ca.certFile], {
          code: 1,
          error: /^certificate not trusted/,
        }, { env });
      } finally {
        await unrelated.cleanup();
      }
    });

    await t.step("an untrusted certificate is a retried error", async () => {
      await expectJson([...SHORT, "http", `https://localhost:${tls.port}/ok`], {
        code: 1,
        error: /^certificate not trusted/,
      });
    });

    await t.step("a certificate for another name is rejected, --insecure accepts it", async () => {
      await expectJson([
        ...SHORT,
        ...["http", `https://localhost:${wrongName.port}/ok`, "--ca-file", pki.ca.certFile],
      ], { code: 1, error: "certificate is not valid for localhost" });
      const insecure = await runJson([
        ...FAST,
        ...["http", `https://localhost:${wrongName.port}/ok`, "--insecure"],
      ]);
      assertEquals(insecure.code, 0, insecure.stdout);
    });

    await t.step("a server requiring a client certificate", async () => {
      await expectJson([
        ...SHORT,
        ...["http", `https://localhost:${mtls.port}/`, "--ca-file", pki.ca.certFile],
      ], { code: 1, error: /client certificate|certificate required|connection reset/ });
      const r = await runJson([
        ...FAST,
        ...["http", `https://localhost:${mtls.port}/`, "--ca-file", pki.ca.certFile],
        ...["--client-cert", pki.client!.certFile, "--client-key", pki.client!.keyFile],
        ...["--contains", "hello waitcmd-client"],
      ]);
      assertEquals(r.code, 0, r.stdout);
    });

    await t.step("a missing --ca-file is retried with a clear error", async () => {
      const missing = `${pki.dir}/nope.pem`;
      await expectJson([
        ...SHORT,
        ...["http", `https://localhost:${tls.port}/ok`, "--ca-file", missing],
      ], { code: 1, error: `cannot read --ca-file ${missing}: no such file or directory` });
    });

    await t.step("HTTPS_PROXY is honoured with --ca-file", async () => {
      const l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
      const dead = (l.addr as Deno.NetAddr).port;
      l.close();
      // The proxy is dead: a request through it fails, proving it was used.
      const r = await expectJson(
        [...SHORT, "http", `https://localhost:${tls.port}/ok`, "--ca-file", pki.ca.certFile],
        { code: 1 },
        {
          env: { HTTPS_PROXY: `http://127.0.0.1:${dead}` },
        },
      );
      assertStringIncludes(r.json.conditions[0]!.last_error, "connection refused");
      const bypass = await runJson([
        ...FAST,
        ...["http", `https://localhost:${tls.port}/ok`, "--ca-file", pki.ca.certFile],
      ], {
        env: { HTTPS_PROXY: `http://127.0.0.1:${dead}`, NO_PROXY: "localhost" },
      });
      assertEquals(bypass.code, 0, bypass.stdout);
    });
  } finally {
    await tls.stop();
    await wrongName.stop();
    await mtls.stop();
    await pki.cleanup();
  }
});

Deno.test("http kind rejects every malformed value with exit 2 before probing", async () => {
  const where = "waitcmd: condition 1 (http)";
  const see = "(see: waitcmd help http)";
  const cases: [string[], string, Record<string, string>?][] = [
    [
      ["http", "localhost:8080"],
      `${where}: expected an http:// or https:// URL, got "localhost:8080" ${see}`,
    ],
    [
      ["http", "ftp://host/file"],
      `${where}: expected an http:// or https:// URL, got "ftp://host/file" ${see}`,
    ],
    [
      ["http", "http://h/", "--status", "abc"],
      `${where}: --status: expected a code like 200, a class like 2xx, a range like 200-499 or a list, got "abc" ${see}`,
    ],
    [
      ["http", "http://h/", "--status", "500-200"],
      `${where}: --status: the range 500-200 ends before it starts; write it low-high like 200-499 ${see}`,
    ],
    [
      ["http", "http://h/", "--status", "200-600"],
      `${where}: --status: expected a code like 200, a class like 2xx, a range like 200-499 or a list, got "200-600" ${see}`,
    ],
    [
      ["http", "http://h/", "--status", "200,6xx"],
      `${where}: --status: expected a code like 200, a class like 2xx, a range like 200-499 or a list, got "200,6xx" ${see}`,
    ],
    [
      ["http", "http://h/", "--matches", "(a"],
      `${where}: --matches: invalid regular expression /(a/: unterminated group ${see}`,
    ],
    [
      ["http", "http://h/", "--contains", ""],
      `${where}: --contains: expected a text, got an empty string ${see}`,
    ],
    [
      ["http", "http://h/", "--jsonpath", "status == ok"],
      `${where}: --jsonpath: expected a path like $.status, .status or {.status}, got "status" ${see}`,
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
      ["http", "http://h/", "--expect-header", "NoColon"],
      `${where}: --expect-header: expected 'NAME: REGEX' (or NAME=REGEX), got "NoColon" ${see}`,
    ],
    [
      ["http", "http://h/", "--expect-header", "Bad Name: x"],
      `${where}: --expect-header: expected 'NAME: REGEX' (or NAME=REGEX), got "Bad Name: x" ${see}`,
    ],
    [
      ["http", "http://h/", "--expect-header", "X-A: (a"],
      `${where}: --expect-header: invalid regular expression /(a/: unterminated group ${see}`,
    ],
    [
      ["http", "http://h/", "--expect-header", "X-A: (?=a)"],
      `${where}: --expect-header: not supported by waitcmd's linear-time engine (RE2: no lookaround or backreferences): invalid or unsupported Perl syntax: (?= ${see}`,
    ],
    [
      ["http", "http://h/", "--method", "GE T"],
      `${where}: --method: expected a method like GET or POST, got "GE T" ${see}`,
    ],
    [
      ["http", "http://h/", "--method", "HEAD", "--contains", "x"],
      `${where}: --contains: needs a response body; HEAD responses have none ${see}`,
    ],
    [
      ["http", "http://h/", "--method", "GET", "--body", "x"],
      `${where}: --body: cannot be sent with --method GET ${see}`,
    ],
    [
      ["http", "http://h/", "--body-file", "b.json", "--body", "x"],
      `${where}: --body-file: cannot be combined with --body ${see}`,
    ],
    [
      ["http", "http://h/", "--body-file", "b.json", "--method", "HEAD"],
      `${where}: --body-file: cannot be sent with --method HEAD ${see}`,
    ],
    [
      ["http", "http://h/", "--body-file", ""],
      `${where}: --body-file: expected a path, got an empty string ${see}`,
    ],
    [
      ["http", "http://h/", "--body-file", "-"],
      `${where}: --body-file: expected a file: standard input cannot be read on every attempt ${see}`,
    ],
    [
      ["http", "http://h/", "--header", "NoColon"],
      `${where}: --header: expected 'Name: value' (or Name=value), got "NoColon" ${see}`,
    ],
    [
      ["http", "http://h/", "--header", "Bad Name: v"],
      `${where}: --header: expected 'Name: value' (or Name=value), got "Bad Name: v" ${see}`,
    ],
    [
      ["http", "http://h/", "--header-env", "X-Token"],
      `${where}: --header-env: expected NAME=ENVVAR, got "X-Token" ${see}`,
    ],
    [
      ["http", "http://h/", "--header-env", "X-Token=NOT_SET_ANYWHERE"],
      `${where}: --header-env: environment variable NOT_SET_ANYWHERE is not set ${see}`,
    ],
    [
      ["http", "http://h/", "--basic-auth-env", "alice"],
      `${where}: --basic-auth-env: expected USER:ENVVAR, got "alice" ${see}`,
    ],
    [
      ["http", "http://h/", "--basic-auth-env", "alice:NOT_SET_ANYWHERE"],
      `${where}: --basic-auth-env: environment variable NOT_SET_ANYWHERE is not set ${see}`,
    ],
    [
      ["http", "https://h/", "--client-cert", "c.pem"],
      `${where}: --client-cert: needs --client-key ${see}`,
    ],
    [
      ["http", "https://h/", "--client-key", "k.pem"],
      `${where}: --client-key: needs --client-cert ${see}`,
    ],
    [
      ["http", "https://h/", "--ca-file", ""],
      `${where}: --ca-file: expected a path, got an empty string ${see}`,
    ],
    [
      ["http", "https://h/", "--insecure", "--ca-file", "ca.pem"],
      `${where}: --insecure: cannot be combined with --ca-file ${see}`,
    ],
    [
      ["http", "https://h/", "--insecure", "--extra-ca-file", "ca.pem"],
      `${where}: --insecure: cannot be combined with --extra-ca-file ${see}`,
    ],
    [
      ["http", "https://h/", "--extra-ca-file", ""],
      `${where}: --extra-ca-file: expected a path, got an empty string ${see}`,
    ],
    [
      ["http", "https://h/", "--ca-file", "a.pem", "--extra-ca-file", "b.pem"],
      `${where}: --extra-ca-file: cannot be combined with --ca-file, which trusts only its own CAs ${see}`,
    ],
    [
      ["http", "https://h/", "--insecure"],
      `${where}: --insecure: cannot be used through a proxy (HTTPS_PROXY is set); add the host to NO_PROXY ${see}`,
      { HTTPS_PROXY: "http://127.0.0.1:1" },
    ],
    [
      ["http", "http://h/", "--attempt-timeout", "0s"],
      `${where}: --attempt-timeout: must be longer than 0 ${see}`,
    ],
    [
      ["http", "http://h/", "--no-follow-redirects=maybe"],
      `${where}: --no-follow-redirects: expected true or false, got "maybe" ${see}`,
    ],
  ];
  await Promise.all(cases.map(async ([args, line, env]) => {
    const r = await runCli(args, { env });
    assertEquals(usageErrorLine(r), line, args.join(" "));
  }));
});
