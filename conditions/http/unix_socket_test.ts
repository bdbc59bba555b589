import { assertEquals } from "../../tests/_assert.ts";
import { conditionOf, optionsOf, parseError } from "../../tests/_kit.ts";
import type { HttpOptions } from "../_common/http_options.ts";

Deno.test("http parse() takes --unix-socket; the URL keeps naming path and Host", () => {
  const args = ["http", "http://docker/v1.43/_ping", "--unix-socket", "/var/run/docker.sock"];
  const o = optionsOf<HttpOptions>(args);
  assertEquals([o.url, o.socketPath], ["http://docker/v1.43/_ping", "/var/run/docker.sock"]);
  assertEquals(conditionOf(args).name, "http http://docker/v1.43/_ping");
  assertEquals(optionsOf<HttpOptions>(["http", "http://h/"]).socketPath, undefined);
});

Deno.test("http parse() rejects an empty --unix-socket", () => {
  assertEquals(
    parseError(["http", "http://h/", "--unix-socket", ""]),
    "waitcmd: condition 1 (http): --unix-socket: expected a socket path, got an empty string (see: waitcmd help http)",
  );
});

Deno.test("http --insecure over --unix-socket ignores the proxy variables", () => {
  const env = { HTTPS_PROXY: "http://proxy:3128" };
  const o = optionsOf<HttpOptions>(
    ["http", "https://h/", "--insecure", "--unix-socket", "/run/s.sock"],
    env,
  );
  assertEquals(o.insecure, true);
  assertEquals(
    parseError(["http", "https://h/", "--insecure"], env),
    "waitcmd: condition 1 (http): --insecure: cannot be used through a proxy (HTTPS_PROXY is set); add the host to NO_PROXY (see: waitcmd help http)",
  );
});
