import { assertEquals } from "../tests/_assert.ts";
import { closest, didYouMean, editDistance } from "./suggest.ts";

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
