/**
 * Usage errors that say what to type instead (docs/contract.md §1), through
 * the CLI: a target where a kind belongs, wait-on's resource forms, two
 * conditions without `--`, a KIND/NAME target in two words, a value of a
 * sibling flag; and enum values matched case-insensitively.
 *
 * @module
 */

import { assertEquals } from "../_assert.ts";
import { runCli, usageErrorLine } from "./_cli.ts";

const HINTS: [string[], string][] = [
  [
    ["http://localhost:8080/"],
    `waitcmd: condition 1: unknown kind "http://localhost:8080/" (did you mean http http://localhost:8080/?) (see: waitcmd --help)`,
  ],
  [
    ["localhost:8080"],
    `waitcmd: condition 1: unknown kind "localhost:8080" (did you mean tcp localhost:8080?) (see: waitcmd --help)`,
  ],
  [
    ["--timeout", "30s", "tcp:localhost:8080"],
    `waitcmd: condition 1: unknown kind "tcp:localhost:8080" (did you mean tcp localhost:8080?) (see: waitcmd --help)`,
  ],
  [
    ["http-get://localhost:8080/health"],
    `waitcmd: condition 1: unknown kind "http-get://localhost:8080/health" (did you mean http http://localhost:8080/health?) (see: waitcmd --help)`,
  ],
  [
    ["https-get://example.com/"],
    `waitcmd: condition 1: unknown kind "https-get://example.com/" (did you mean http https://example.com/?) (see: waitcmd --help)`,
  ],
  [
    ["tcp", "db:5432", "--", "localhost:8080"],
    `waitcmd: condition 1 (tcp): unexpected "--" before "localhost:8080": a new condition starts with a kind (did you mean tcp localhost:8080?) (see: waitcmd help tcp)`,
  ],
  [
    ["tcp", "db:5432", "tcp", "cache:6379"],
    `waitcmd: condition 1 (tcp): unexpected argument "tcp"; separate conditions with "--": ... -- tcp ... (see: waitcmd help tcp)`,
  ],
  [
    ["tcp", "db:5432", "then", "echo", "up"],
    `waitcmd: condition 1 (tcp): unexpected argument "then"; run a command after the wait with: -- then <command> (see: waitcmd help tcp)`,
  ],
  [
    ["k8s", "deployment", "web"],
    `waitcmd: condition 1 (k8s): unexpected argument "web" after the target "deployment" (did you mean deployment/web?) (see: waitcmd help orch)`,
  ],
  [
    ["docker", "web", "--status", "healthy"],
    `waitcmd: condition 1 (docker): --status: expected one of created, running, paused, restarting, removing, exited, dead, any, got "healthy" (did you mean --health healthy?) (see: waitcmd help container)`,
  ],
  [
    ["docker", "web", "--status=runing"],
    `waitcmd: condition 1 (docker): --status: expected one of created, running, paused, restarting, removing, exited, dead, any, got "runing" (did you mean running?) (see: waitcmd help container)`,
  ],
  // The typo suggestion is unchanged.
  [
    ["tpc", "localhost:1"],
    `waitcmd: condition 1: unknown kind "tpc" (did you mean tcp?) (see: waitcmd --help)`,
  ],
];

for (const [args, line] of HINTS) {
  Deno.test(`waitcmd ${args.join(" ")} says what to type`, async () => {
    assertEquals(usageErrorLine(await runCli(args)), line);
  });
}

Deno.test("waitcmd matches enum values case-insensitively (--type aaaa, --mode ANY, -o JSON)", async () => {
  const ok = await runCli([
    ...["--mode", "ANY", "--explain", "dns", "example.com", "--type", "aaaa", "--rcode", "noerror"],
  ]);
  assertEquals([ok.code, ok.stderr], [0, ""]);
  // The value is given on canonically: -o JSON selects the JSON plan.
  const json = await runCli(["-o", "JSON", "--explain", "dns", "example.com", "--type", "Aaaa"]);
  assertEquals(json.code, 0, json.stderr);
  assertEquals(JSON.parse(json.stdout).explain, true);
  assertEquals(
    usageErrorLine(await runCli(["dns", "example.com", "--type", "aaaaa"])),
    `waitcmd: condition 1 (dns): --type: expected one of A, AAAA, CNAME, MX, NS, TXT, SRV, CAA, PTR, SOA, HTTPS, SVCB, ANY, got "aaaaa" (did you mean AAAA?) (see: waitcmd help dns)`,
  );
});
