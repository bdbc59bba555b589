/**
 * The tcp kind's own end-to-end cases: an IPv6 literal and malformed
 * addresses. A listening port (the human line, the JSON report), one that
 * listens late or restarts, and a refused port until the deadline are the
 * live conformance suite's (tests/conformance/live_test.ts).
 */

import { assertEquals, assertStringIncludes } from "../../tests/_assert.ts";
import { ignoreWithout, noIpv6 } from "../../tests/_kit.ts";
import { expectJson, runCli, usageErrorLine } from "../../tests/e2e/_cli.ts";

Deno.test({
  name: "tcp connects to an IPv6 literal",
  ignore: ignoreWithout("an IPv6 loopback", noIpv6),
  fn: async () => {
    const l = Deno.listen({ hostname: "::1", port: 0 });
    const port = (l.addr as Deno.NetAddr).port;
    try {
      const r = await expectJson(["--timeout", "5s", "tcp", `[::1]:${port}`], { code: 0 });
      assertEquals(r.json.conditions[0]!.name, `tcp [::1]:${port}`);
    } finally {
      l.close();
    }
  },
});

Deno.test("tcp rejects malformed addresses with exit 2", async () => {
  for (
    const [target, msg] of [
      ["localhost", `expected HOST:PORT or [IPv6]:PORT, got "localhost"`],
      ["db:0", `port must be from 1 to 65535, got "0"`],
      ["db:http", `expected HOST:PORT`],
    ]
  ) {
    const line = usageErrorLine(await runCli(["tcp", target!]));
    assertStringIncludes(line, `waitcmd: condition 1 (tcp): ${msg}`);
    assertStringIncludes(line, "(see: waitcmd help tcp)");
  }
});
