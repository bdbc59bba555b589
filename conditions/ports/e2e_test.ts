import { assert, assertEquals, assertStringIncludes } from "../../tests/_assert.ts";
import { freePort } from "../../tests/services/_util.ts";
import { ignoreWithout, noIpv6 } from "../../tests/_kit.ts";
import {
  assertKindUsageErrors,
  expectJson,
  runCli,
  runJson,
  timing,
} from "../../tests/e2e/_cli.ts";

function listenMany(n: number): { ports: number[]; close(): void } {
  const ls = Array.from({ length: n }, () => Deno.listen({ hostname: "127.0.0.1", port: 0 }));
  return {
    ports: ls.map((l) => (l.addr as Deno.NetAddr).port),
    close: () => ls.forEach((l) => l.close()),
  };
}

Deno.test("ports --any is satisfied by one open port of a range", async () => {
  const s = listenMany(1);
  const p = s.ports[0]!;
  try {
    const lo = Math.max(1, p - 5);
    const r = await expectJson([
      ...["--timeout", "5s", "ports", "localhost", "--range", `${lo}-${p}`, "--any"],
    ], { code: 0 });
    assertStringIncludes(r.json.conditions[0]!.detail, `${p}`);
  } finally {
    s.close();
  }
});

Deno.test({
  name: "ports localhost counts a port listening on ::1 only as open",
  ignore: ignoreWithout("an IPv6 loopback", noIpv6),
  fn: async () => {
    const ls = [0, 0].map(() => Deno.listen({ hostname: "::1", port: 0 }));
    const ports = ls.map((l) => (l.addr as Deno.NetAddr).port);
    try {
      const r = await runJson([
        ...["--timeout", "5s", "ports", "localhost", "--range", ports.join(",")],
      ]);
      assertEquals(r.code, 0, r.stdout);
      assertStringIncludes(r.json.conditions[0]!.detail, "all 2 ports open");
    } finally {
      ls.forEach((l) => l.close());
    }
  },
});

Deno.test("ports scans a large range concurrently", async () => {
  // A range starting at a closed port: whatever else listens in it (the machine is shared),
  // --all cannot hold, and the scan of 1,000 ports must fit well inside one attempt.
  const base = Math.min(freePort(), 64000);
  const r = await expectJson([
    ...timing("3s", "5s"),
    ...["ports", "127.0.0.1", "--range", `${base}-${base + 999}`],
  ], { code: 1 });
  assertEquals(r.json.conditions[0]!.attempts, 1);
  assertStringIncludes(r.json.conditions[0]!.last_error, "of 1000 open)");
});

Deno.test("ports validates its flags", async () => {
  await assertKindUsageErrors("ports", [
    [["ports", "h"], "--range: is required: the ports to probe, e.g. --range 8000-8010"],
    [["ports", "h", "--range", "9-1"], '--range: the range "9-1" runs backwards'],
    [["ports", "h", "--range", "1-2", "--any", "--all"], "--any: cannot be combined with --all"],
  ]);
  const r = await runCli(["ports", "--range", "1-2"]);
  assert(r.code === 2 && r.stderr.includes("missing target HOST"));
});
