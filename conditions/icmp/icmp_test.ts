import { assertEquals } from "../../tests/_assert.ts";
import { conditionOf, optionsOf, parseError } from "../../tests/_kit.ts";
import type { IcmpOptions } from "./mod.ts";
import { judgePing } from "./probe.ts";

Deno.test("icmp parse() takes a host (IPv6 with or without brackets) and --count", () => {
  assertEquals(optionsOf<IcmpOptions>(["icmp", "db.internal"]), { host: "db.internal", count: 1 });
  assertEquals(optionsOf<IcmpOptions>(["ping", "[::1]", "--count", "3"]), {
    host: "::1",
    count: 3,
  });
  assertEquals(conditionOf(["ping", "[fe80::1%eth0]"]).name, "ping [fe80::1%eth0]");
});

Deno.test("icmp parse() refuses what ping would read as an option or garbage", async (t) => {
  for (const target of ["-1", "a b", "::zz", "", "host;rm"]) {
    await t.step(JSON.stringify(target), () => {
      assertEquals(
        parseError(["icmp", target]),
        `waitcmd: condition 1 (icmp): expected a host name or IP address, got ${
          JSON.stringify(target)
        } (see: waitcmd help icmp)`,
      );
    });
  }
});

const OK = `PING 127.0.0.1 (127.0.0.1) 56(84) bytes of data.
64 bytes from 127.0.0.1: icmp_seq=1 ttl=64 time=0.040 ms
64 bytes from 127.0.0.1: icmp_seq=2 ttl=64 time=0.050 ms

--- 127.0.0.1 ping statistics ---
2 packets transmitted, 2 received, 0% packet loss, time 201ms
rtt min/avg/max/mdev = 0.040/0.045/0.050/0.005 ms
`;

Deno.test("judgePing() counts replies against --count", () => {
  assertEquals(judgePing(OK, "", { host: "localhost", count: 2 }), {
    status: "satisfied",
    detail: "2 echo replies from 127.0.0.1, rtt avg 0.045 ms",
  });
  assertEquals(judgePing(OK, "", { host: "127.0.0.1", count: 3 }), {
    status: "pending",
    error: "2 of 3 echo replies from 127.0.0.1 (2 sent)",
  });
});

Deno.test("judgePing() turns ping's complaints into short reasons", () => {
  const lost =
    "PING 10.9.9.9 (10.9.9.9) 56(84) bytes of data.\n\n--- 10.9.9.9 ping statistics ---\n" +
    "6 packets transmitted, 0 received, 100% packet loss, time 1000ms\n";
  const o = { host: "10.9.9.9", count: 1 };
  assertEquals(judgePing(lost, "", o), {
    status: "pending",
    error: "no echo reply from 10.9.9.9 (6 sent)",
  });
  assertEquals(judgePing("", "/usr/bin/ping: connect: Network is unreachable\n", o), {
    status: "pending",
    error: "network is unreachable",
  });
  assertEquals(
    judgePing("", "ping: nowhere.invalid: Name or service not known\n", {
      host: "nowhere.invalid",
      count: 1,
    }),
    { status: "pending", error: "cannot resolve host nowhere.invalid" },
  );
  const unreachable = "PING 10.0.0.9 (10.0.0.9) 56(84) bytes of data.\n" +
    "From 10.0.0.1 icmp_seq=1 Destination Host Unreachable\n\n--- 10.0.0.9 ping statistics ---\n" +
    "1 packets transmitted, 0 received, +1 errors, 100% packet loss, time 0ms\n";
  assertEquals(judgePing(unreachable, "", o), {
    status: "pending",
    error: "destination host unreachable",
  });
});
