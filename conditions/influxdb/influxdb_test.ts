import { assert, assertEquals } from "../../tests/_assert.ts";
import { conditionOf, optionsOf, plan } from "../../tests/_kit.ts";
import { stepUsageErrors } from "../../tests/_suite.ts";
import type { HttpOptions } from "../_common/http_options.ts";

Deno.test("influxdb asks URL/ping for 2xx with a plain GET, the URL's path a prefix", () => {
  const o = optionsOf<HttpOptions>(["influxdb", "http://localhost:8086"]);
  assertEquals([o.url, o.method, o.status.text], ["http://localhost:8086/ping", "GET", "2xx"]);
  assertEquals([o.body, o.bodyFile, o.contains, o.matches], [
    undefined,
    undefined,
    undefined,
    undefined,
  ]);
  assertEquals([o.headers, o.expectHeaders, o.jsonpaths, o.follow], [[], [], [], true]);
  for (
    const [target, url] of [
      ["http://h:8086/", "http://h:8086/ping"],
      ["https://h/influx", "https://h/influx/ping"],
      ["https://h/influx//", "https://h/influx/ping"],
    ]
  ) {
    assertEquals(optionsOf<HttpOptions>(["influxdb", target!]).url, url);
  }
});

Deno.test("influxdb: the name is as typed; user-info is basic authentication and a secret", () => {
  assertEquals(
    conditionOf(["influxdb", "http://localhost:8086"]).name,
    "influxdb http://localhost:8086",
  );
  const p = plan(["influxdb", "http://app:influx-pw-3@h:8086"]);
  assertEquals(p.conditions[0]!.name, "influxdb http://app:***@h:8086");
  assert(p.secrets.includes("influx-pw-3"));
  const o = optionsOf<HttpOptions>(["influxdb", "http://app:influx-pw-3@h:8086"]);
  assertEquals(o.url, "http://h:8086/ping");
  assertEquals(o.headers.map((h) => [h.name, h.secret]), [["Authorization", true]]);
});

Deno.test("influxdb takes http's TLS flags", () => {
  const o = optionsOf<HttpOptions>([
    ...["influxdb", "https://h:8086", "--ca-file", "ca.pem"],
    ...["--client-cert", "c.pem", "--client-key", "k.pem"],
  ]);
  assertEquals([o.caFile, o.certFile, o.keyFile, o.insecure], ["ca.pem", "c.pem", "k.pem", false]);
  assert(optionsOf<HttpOptions>(["influxdb", "https://h", "--insecure"]).insecure);
});

Deno.test("influxdb parse() rejects bad targets and flags", (t) => stepUsageErrors(t, "influxdb"));
