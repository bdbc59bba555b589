/**
 * The influxdb kind end to end against a real InfluxDB (Debian's influxd
 * 1.6, throwaway instances from conditions/influxdb/_service.ts): ready at once,
 * started late, a path prefix it does not serve until the deadline, the
 * URL's password in no output, and usage errors. Restarts, the human line
 * and TLS (verified, unverified, untrusted, misnamed) are the live
 * conformance suite's (tests/conformance/live_test.ts).
 */

import { assert, assertEquals } from "../../tests/_assert.ts";
import { serverTest } from "../../tests/_kit.ts";
import { usageRows } from "../../tests/_suite.ts";
import { influxdbMissing, makeInfluxdb } from "./_service.ts";
import { assertKindUsageErrors, runJson, runLate, timing } from "../../tests/e2e/_cli.ts";

/** The kind's usage errors, from its folder (conditions/influxdb/_suite.ts). */
const USAGE = await usageRows("influxdb");

const FAST = timing("30s", "200ms");
const SHORT = timing("1s", "200ms");
const missing = await influxdbMissing();
const INFLUXD = { name: "influxd", missing, make: () => makeInfluxdb({ start: false }) };

serverTest(
  "influxdb against a real influxd: late, ready, a prefix it does not serve",
  INFLUXD,
  async (s, t) => {
    await t.step("started late: refused, then /ping answers 204", async () => {
      const r = await runLate([...FAST, "influxdb", s.url], () => s.start());
      assertEquals([r.code, r.stderr], [0, ""]);
      assertEquals(r.attempts[0]!.error, "connection refused");
      const c = r.report.conditions[0]!;
      assertEquals([c.name, c.kind, c.target], [`influxdb ${s.url}`, "influxdb", s.url]);
      assertEquals([c.satisfied, c.detail], [true, "204 No Content"]);
    });

    await t.step("ready: one attempt; a trailing slash is the same server", async () => {
      for (const url of [s.url, `${s.url}/`, `http://localhost:${s.port}`]) {
        const r = await runJson([...FAST, "influxdb", url]);
        assertEquals([r.code, r.stderr, r.json.status], [0, "", "satisfied"], url);
        assertEquals([r.json.conditions[0]!.attempts, r.json.conditions[0]!.detail], [
          1,
          "204 No Content",
        ]);
      }
    });

    await t.step(
      "a path prefix the server does not serve: pending until the deadline",
      async () => {
        const r = await runJson([...SHORT, "influxdb", `${s.url}/influx`]);
        assertEquals([r.code, r.json.status], [1, "timeout"]);
        assertEquals(
          r.json.conditions[0]!.last_error,
          "/influx/ping answered status 404, expected 2xx",
        );
      },
    );

    await t.step(
      "the URL's password is sent (InfluxDB ignores it on /ping) and shown nowhere",
      async () => {
        const url = `http://app:influx-pw-3@127.0.0.1:${s.port}`;
        const r = await runJson([...FAST, "influxdb", url]);
        assertEquals([r.code, r.stderr], [0, ""]);
        assertEquals(r.json.conditions[0]!.name, `influxdb http://app:***@127.0.0.1:${s.port}`);
        assert(!r.stdout.includes("influx-pw-3"));
      },
    );

    await t.step("stopped: refused until the deadline", async () => {
      await s.stop();
      const r = await runJson([...SHORT, "influxdb", s.url]);
      assertEquals([r.code, r.json.status], [1, "timeout"]);
      assertEquals(r.json.conditions[0]!.last_error, "connection refused");
    });
  },
);

Deno.test("influxdb usage errors: exit 2, one line, nothing probed, no password", () =>
  assertKindUsageErrors("influxdb", USAGE, { secrets: ["influx-pw-3"] }));
