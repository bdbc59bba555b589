import { assert, assertEquals, assertMatch, assertRejects } from "../../tests/_assert.ts";
import { INLINE_TEXT, judgeXPaths, xpathProblem } from "./xpath.ts";
import { parseBody, parseHtml, parseXml, XmlSyntaxError } from "./xdom.ts";

/** A signal that never aborts. */
const signal = () => new AbortController().signal;

Deno.test("xpath: a large body's work in the worker ends with the attempt", async () => {
  const wide = "<li>x</li>".repeat(200_000);
  const ctl = new AbortController();
  const started = performance.now();
  const judging = judgeXPaths(["//li[. = 'y']"], wide, "text/html", "200 OK", ctl.signal);
  setTimeout(() => ctl.abort(new Error("attempt timed out")), 50);
  await assertRejects(() => judging, Error, "attempt timed out");
  // The main thread was free: the abort was seen at once, not after the search.
  assert(performance.now() - started < 5_000);
  // And the same body is judged in the worker when given the time.
  const r = await judgeXPaths(["count(//li) = 200000"], wide, "text/html", "200 OK", signal());
  assertEquals(r, { ok: true, details: ["xpath count(//li) = 200000 is true"], value: "true" });
});

Deno.test("xdom: HTML as browsers read it, XML with namespaces", async () => {
  const html = await parseHtml("<!doctype html><ul><li a=1>x<li>y &amp; z<br></ul>");
  assertEquals(html.format, "HTML");
  const ul = html.documentElement!;
  assertEquals(ul.localName, "ul");
  assertEquals(ul.childNodes.map((n) => n.nodeName), ["li", "li"]);
  assertEquals(ul.childNodes[1]!.childNodes.map((n) => n.nodeValue ?? n.nodeName), [
    "y & z",
    "br",
  ]);
  const xml = await parseXml('<?xml version="1.0"?><a xmlns="urn:a" xmlns:p="urn:p"><p:b/></a>');
  assertEquals(xml.documentElement!.namespaceURI, "urn:a");
  assertEquals(xml.documentElement!.attributes.length, 0);
  assertEquals(xml.prefixes.get("p"), "urn:p");
  assertEquals((xml.documentElement!.firstChild as { namespaceURI: string }).namespaceURI, "urn:p");
});

Deno.test("xdom: entities a DTD declares are not expanded", async () => {
  const lol =
    `<!DOCTYPE l [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;">]><l>&b;</l>`;
  let error: unknown;
  try {
    await parseXml(lol);
  } catch (e) {
    error = e;
  }
  assertEquals(error instanceof XmlSyntaxError, true);
  // Without a declared XML type, it is read as HTML, where &b; is text.
  assertEquals((await parseBody(lol, undefined)).format, "HTML");
});

Deno.test("xpath: a deeply nested body is judged without overflowing the stack", async () => {
  const deep = "<div>".repeat(20_000) + "x" + "</div>".repeat(20_000);
  // Longer than INLINE_TEXT: parsed and searched in the worker.
  assert(deep.length > INLINE_TEXT);
  const r = await judgeXPaths(["//div[1]"], deep, "text/html", "200 OK", signal());
  assertEquals(r.ok, true);
});

Deno.test("xpath: a node is in a node set once, in document order", async () => {
  const page = "<ul><li>a<li>b<li>c</ul>";
  const r = await judgeXPaths(
    ["count(//li | //li | //ul/li) = 3", "//li[last()] | //li[1]", "(//li | //ul/li)[2] = 'b'"],
    page,
    "text/html",
    "200 OK",
    signal(),
  );
  assertEquals(r, {
    ok: true,
    details: [
      "xpath count(//li | //li | //ul/li) = 3 is true",
      'xpath //li[last()] | //li[1] found 2 nodes (first: "a")',
      "xpath (//li | //ul/li)[2] = 'b' is true",
    ],
    value: "true",
  });
});

Deno.test("xpath: problems found before any request", async () => {
  assertEquals(await xpathProblem("//a | //b"), undefined);
  assertEquals(await xpathProblem("not(//a)"), undefined);
  assertMatch((await xpathProblem("sum(//a)"))!, /gives a number/);
  assertMatch((await xpathProblem("//a[last(1)]"))!, /last\(\) takes 0 arguments, got 1/);
  assertMatch((await xpathProblem("x:f()"))!, /unknown function x:f\(\)/);
});
