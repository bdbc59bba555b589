/**
 * http `--xpath EXPR` end to end: the CLI as a subprocess against the suite's
 * real HTTP server (tests/services/http_servers.ts), on HTML as servers write
 * it and on XML, with and without namespaces.
 */

import { assert, assertEquals } from "../../tests/_assert.ts";
import { type RunningServer, startHttpServer } from "../../tests/services/http_servers.ts";
import {
  assertKindUsageErrors,
  expectJson,
  runCli,
  usageErrorLine,
  writeRecipe,
} from "../../tests/e2e/_cli.ts";

const FAST = ["--timeout", "8s", "--interval", "100ms"];
const SHORT = ["--timeout", "1200ms", "--interval", "100ms"];
const opts = { sanitizeResources: false, sanitizeOps: false };

/** The `/typed` route's URL for `body` served as `type`. */
function typed(base: string, type: string, body: string): string {
  return `${base}/typed?${new URLSearchParams({ type, body })}`;
}

const ATOM = `<?xml version="1.0" encoding="utf-8"?>
<feed xmlns="http://www.w3.org/2005/Atom" xmlns:h="urn:example:health">
  <title>Deployments</title>
  <entry><title>api</title><h:state code="200">ready</h:state></entry>
  <entry><title>worker</title><h:state code="503">starting</h:state></entry>
</feed>`;

Deno.test("http --xpath against a real HTTP server", opts, async (t) => {
  const srv: RunningServer = startHttpServer();
  const u = srv.url;
  try {
    await t.step("real-world HTML: node sets and booleans", async () => {
      const r = await expectJson([
        ...FAST,
        ...["http", `${u}/page-after/html/1`, "--xpath", "//title"],
        ...["--xpath", "count(//li) > 2", "--xpath", '//div[@id="state" and @data-ready="true"]'],
        ...["--xpath", "//ul/li[3][@data-n=3]", "--xpath", "//table/tr/td[2]"],
        ...["--xpath", "//BR", "--xpath", "//p[contains(., 'Services')]"],
      ], {
        code: 0,
        detail: '200 OK; xpath //title found 1 node (first: "Status & health"); ' +
          "xpath count(//li) > 2 is true; " +
          'xpath //div[@id="state" and @data-ready="true"] found 1 node (first: "Ready"); ' +
          'xpath //ul/li[3][@data-n=3] found 1 node (first: "item 3"); ' +
          'xpath //table/tr/td[2] found 1 node (first: "up"); ' +
          'xpath //BR found 1 node (first: ""); ' +
          "xpath //p[contains(., 'Services')] found 1 node (first: \"Servicesbelow\")",
      });
      // The first node's text is the condition's `value` capture.
      assertEquals((r.json.conditions[0] as { captures?: unknown }).captures, {
        value: "Servicesbelow\n",
      });
    });

    await t.step("a large page is searched off the main thread", async () => {
      // 20,000 items: about 0.8 MB, far over what is searched inline (64 KiB).
      await expectJson([
        ...FAST,
        ...["http", `${u}/items/20000`, "--xpath", "count(//li[@class='item']) = 20000"],
        ...["--xpath", "//li[@data-n=20000]"],
      ], {
        code: 0,
        detail: "200 OK; xpath count(//li[@class='item']) = 20000 is true; " +
          'xpath //li[@data-n=20000] found 1 node (first: "item 20000")',
      });
      // Long enough for a whole attempt on this page (a worker, a parse of 0.8 MB) to end.
      const timing = ["--timeout", "6s", "--interval", "100ms"];
      await expectJson([...timing, "http", `${u}/items/20000`, "--xpath", "//li[@data-n=20001]"], {
        code: 1,
        error:
          /^xpath \/\/li\[@data-n=20001\] found no node in the HTML body \(200 OK, [\d.]+ [KM]iB\)$/,
      });
    });

    await t.step("a search that takes longer than the deadline does not hold it", async () => {
      // preceding:: on every item: quadratic, many seconds; the deadline ends it at 1s.
      const started = performance.now();
      const r = await runCli([
        ...["--timeout", "1s", "http", `${u}/items/20000`],
        ...["--xpath", "//li[count(preceding::li) > 30000]"],
      ]);
      const took = performance.now() - started;
      assertEquals(r.code, 1, r.stderr);
      assert(took < 4_000, `the deadline was held: the run took ${Math.round(took)} ms`);
    });

    await t.step("pending until the page holds, then satisfied", async () => {
      const r = await expectJson([
        ...FAST,
        ...["http", `${u}/page-after/late/3`, "--xpath", "count(//li[@class='item']) > 2"],
      ], {
        code: 0,
        detail: "200 OK; xpath count(//li[@class='item']) > 2 is true",
        // The error of the last attempt before it held.
        error:
          /^xpath count\(\/\/li\[@class='item'\]\) > 2 is false on the HTML body \(200 OK, \d+ B\)$/,
      });
      assertEquals(r.json.conditions[0]!.attempts, 3);
    });

    await t.step("XML: the default namespace, a declared prefix, attributes", async () => {
      await expectJson([
        ...FAST,
        ...[
          "http",
          typed(u, "application/atom+xml", ATOM),
          "--xpath",
          "/feed/title = 'Deployments'",
        ],
        ...[
          "--xpath",
          "//entry[title='api']/h:state[@code=200]",
          "--xpath",
          "count(//h:state) = 2",
        ],
      ], {
        code: 0,
        detail: "200 OK; xpath /feed/title = 'Deployments' is true; " +
          "xpath //entry[title='api']/h:state[@code=200] found 1 node (first: \"ready\"); " +
          "xpath count(//h:state) = 2 is true",
      });
      // Without an XML Content-Type, well-formed XML is still read as XML: names keep their case.
      await expectJson([
        ...SHORT,
        ...["http", typed(u, "text/plain", "<Root><Item ok='yes'/></Root>"), "--xpath", "//item"],
      ], { code: 1, error: "xpath //item found no node in the XML body (200 OK, 29 B)" });
      await expectJson([
        ...FAST,
        ...["http", typed(u, "", "<Root><Item ok='yes'/></Root>"), "--xpath", "//Item[@ok='yes']"],
      ], { code: 0, detail: "200 OK; xpath //Item[@ok='yes'] found 1 node (first: \"\")" });
    });

    await t.step("a recipe's xpath list; --explain checks the expressions", async () => {
      const dir = await Deno.makeTempDir({ prefix: "waitcmd-xpath-" });
      try {
        const ok = await writeRecipe(dir, [
          "conditions:",
          "  - kind: http",
          `    target: ${u}/page-after/recipe/1`,
          "    flags:",
          `      xpath: ["//title", "count(//li) > 2"]`,
        ]);
        await expectJson([...FAST, "-f", ok], {
          code: 0,
          detail: '200 OK; xpath //title found 1 node (first: "Status & health"); ' +
            "xpath count(//li) > 2 is true",
        });
        const bad = await writeRecipe(dir, [
          "conditions:",
          "  - kind: http",
          `    target: ${u}/`,
          "    flags:",
          `      xpath: ["count(//li)"]`,
        ], "bad.yaml");
        const r = await runCli(["--explain", "-f", bad]);
        assertEquals(
          usageErrorLine(r),
          `waitcmd: ${bad}:5: condition 1 (http): --xpath: "count(//li)" gives a number, never a node set or true: compare it, like count(//li) > 2 (see: waitcmd help http)`,
        );
      } finally {
        await Deno.remove(dir, { recursive: true });
      }
    });

    await t.step("timeout: the node never comes, or the XML is not well-formed", async () => {
      await expectJson([...SHORT, "http", `${u}/page-after/never/1`, "--xpath", "//li[4]"], {
        code: 1,
        error: /^xpath \/\/li\[4\] found no node in the HTML body \(200 OK, \d+ B\)$/,
      });
      await expectJson([
        ...SHORT,
        ...["http", typed(u, "application/xml", "<a><b></a>"), "--xpath", "//b"],
      ], {
        code: 1,
        error:
          "body is not well-formed XML: Unexpected close tag (line 1, column 11) (200 OK, 10 B)",
      });
      await expectJson([
        ...SHORT,
        ...["http", typed(u, "application/xml", ATOM), "--xpath", "//x:state"],
      ], {
        code: 1,
        error: "xpath //x:state failed on the XML body: the namespace prefix x is not declared",
      });
      // The status is checked first.
      await expectJson([...SHORT, "http", `${u}/status/503`, "--xpath", "//p"], {
        code: 1,
        error: "status 503, expected 2xx",
      });
      // A body over the 10 MiB budget is not parsed.
      await expectJson([...SHORT, "http", `${u}/large`, "--xpath", "//p"], {
        code: 1,
        error: "body is larger than 10.0 MiB, not parsed as HTML or XML",
      });
    });
  } finally {
    await srv.stop();
  }
});

Deno.test("http --xpath: a bad expression is a usage error before any request", async () => {
  // Port 9 (discard) is never asked: the error comes first.
  const url = "http://127.0.0.1:9/";
  await assertKindUsageErrors("http", [
    [
      ["http", url, "--xpath", "//a["],
      '--xpath: invalid XPath 1.0 expression "//a[": XPath parse error',
    ],
    [
      ["http", url, "--xpath", "//title", "--xpath", "nosuch(//a)"],
      '--xpath: invalid XPath 1.0 expression "nosuch(//a)": unknown function nosuch()',
    ],
    [
      ["http", url, "--xpath", "//a[@id=$id]"],
      '--xpath: invalid XPath 1.0 expression "//a[@id=$id]": variables are not supported ($id)',
    ],
    [
      ["http", url, "--xpath", "//li[nosuch()]"],
      '--xpath: invalid XPath 1.0 expression "//li[nosuch()]": unknown function nosuch()',
    ],
    [
      ["http", url, "--xpath", "//li[contains(.)]"],
      '--xpath: invalid XPath 1.0 expression "//li[contains(.)]": contains() takes 2 arguments, got 1',
    ],
    [
      ["http", url, "--xpath", "count(//li)"],
      '--xpath: "count(//li)" gives a number, never a node set or true: compare it, like count(//li) > 2',
    ],
    [
      ["http", url, "--xpath", "string(//title)"],
      "--xpath: \"string(//title)\" gives a string, never a node set or true: compare it, like string(//title) = 'Ready'",
    ],
    [
      ["http", url, "--xpath", " "],
      "--xpath: expected an XPath expression like '//title', got an empty string",
    ],
    [
      ["http", url, "--method", "HEAD", "--xpath", "//title"],
      "--xpath: needs a response body; HEAD responses have none",
    ],
  ]);
});
