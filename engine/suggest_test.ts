import { assertEquals } from "../tests/_assert.ts";
import { registry } from "../conditions/all.ts";
import { closest, conditionFor, didYouMean, editDistance } from "./suggest.ts";

Deno.test("editDistance() counts a transposition as one edit", () => {
  assertEquals([
    editDistance("tpc", "tcp"),
    editDistance("kitten", "sitting"),
    editDistance("", "abc"),
  ], [1, 3, 3]);
});

Deno.test("closest() suggests plausible typos only", () => {
  const kinds = ["http", "tcp", "file", "log", "dns", "objstore"];
  assertEquals(closest("htp", kinds), "http");
  assertEquals(closest("objstor", kinds), "objstore");
  assertEquals(closest("zzzzzz", kinds), undefined);
  assertEquals(
    didYouMean("stauts", ["status", "contains"], (s) => `--${s}`),
    " (did you mean --status?)",
  );
  assertEquals(
    didYouMean("cont", ["status", "contains"], (s) => `--${s}`),
    " (did you mean --contains?)",
  );
});

Deno.test("conditionFor() asks the registered kinds which claims a target-shaped word", () => {
  const cases: [string, string | undefined][] = [
    ["http://localhost:8080/", "http http://localhost:8080/"],
    ["HTTPS://x/", "http HTTPS://x/"],
    ["localhost:8080", "tcp localhost:8080"],
    ["[::1]:80", "tcp [::1]:80"],
    ["10.0.0.1:5432", "tcp 10.0.0.1:5432"],
    ["tcp:localhost:8080", "tcp localhost:8080"],
    ["tcp:4000", "tcp localhost:4000"],
    ["http-get://localhost:8080/", "http http://localhost:8080/"],
    ["https-get:example.com/x", "http https://example.com/x"],
    ["socket:/run/app.sock", "unix /run/app.sock"],
    ["file:/tmp/ready", "file /tmp/ready"],
    ["/tmp/ready", "file /tmp/ready"],
    ["./ready", "file ./ready"],
    ["s3://bucket/key", "s3 s3://bucket/key"],
    ["8080", "tcp localhost:8080"],
    ["tpc", undefined],
    ["web", undefined],
  ];
  assertEquals(
    cases.map(([w]) => conditionFor(w, registry.kinds)),
    cases.map(([, want]) => want),
  );
  assertEquals(conditionFor("s3://b/k", []), undefined);
});

Deno.test("closest() skips candidates a long word cannot be a typo of, without a distance table", () => {
  const blob = "x".repeat(1_000_000);
  const t0 = performance.now();
  assertEquals(closest(blob, ["tcp", "http", "postgres"]), undefined);
  // A distance table would be 1,000,000 x 8 cells; the length bound skips it.
  assertEquals(performance.now() - t0 < 1000, true);
  assertEquals(closest("TCP", ["http", "tcp"]), "tcp");
  assertEquals(closest("--conta", ["--count", "--contains"]), "--contains");
});
