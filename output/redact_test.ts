import { assertEquals } from "../tests/_assert.ts";
import { SecretRegistry } from "../engine/masking.ts";
import { lineRedactor, makeRedactor, redactDeep, redactOutside } from "./redact.ts";
import { ansiStyle } from "./text.ts";

Deno.test("makeRedactor() masks URL passwords and never a registered secret in waitcmd's words", () => {
  const secrets = new SecretRegistry(["postgres"]);
  const redact = makeRedactor(secrets);
  assertEquals(
    redact("[ok] postgres postgres://postgres:postgres@db:5432/postgres"),
    "[ok] postgres postgres://postgres:***@db:5432/postgres",
  );
});

Deno.test("redactOutside() masks the run's secrets by value, also those registered later", () => {
  const secrets = new SecretRegistry(["hunter22"]);
  const redact = makeRedactor(secrets);
  assertEquals(redactOutside("pw hunter22, token tok-123", redact), "pw ***, token tok-123");
  secrets.add("tok-123");
  assertEquals(redactOutside("kube token tok-123", redact), "kube token ***");
  assertEquals(redactOutside("postgres://app:pw@db", redact), "postgres://app:***@db");
});

Deno.test("lineRedactor() escapes a server's control characters, not waitcmd's own colours", () => {
  const redact = makeRedactor(["hunter22"]);
  const forged = "ERR bad\n[ok] forged\nwaitcmd: satisfied\x1b[2K redis://u:hunter22@h";
  assertEquals(
    lineRedactor(redact, false)(`[..] redis x: ${forged}`),
    "[..] redis x: ERR bad\\n[ok] forged\\nwaitcmd: satisfied\\x1b[2K redis://u:***@h",
  );
  assertEquals(
    lineRedactor(redact, true)(`${ansiStyle.wait("[..]")} redis x: ${forged}`),
    "\x1b[33m[..]\x1b[39m redis x: ERR bad\\n[ok] forged\\nwaitcmd: satisfied\\x1b[2K redis://u:***@h",
  );
});

Deno.test("lineRedactor().lines() is each line redacted, joined: at once when none needs it", () => {
  const line = lineRedactor(makeRedactor([]), false);
  const plain = Array.from({ length: 1000 }, (_, i) => `waitcmd: timed out; tcp h:${i}: refused`);
  const cases = [
    plain,
    [...plain, "tcp h:1: redis://u:pw@h refused"],
    [...plain, "tcp h:1: ERR bad\n[ok] forged"],
    [...plain, "tcp h:1: \x1b[2K\u2028 and\ttab"],
    ["one"],
    [],
  ];
  for (const lines of cases) {
    assertEquals(line.lines!(lines), lines.map(line).join("\n"));
  }
  assertEquals(line.lines!(cases[1]!).endsWith("redis://u:***@h refused"), true);
  assertEquals(line.lines!(cases[2]!).endsWith("ERR bad\\n[ok] forged"), true);
  // Only the output's own redactor (URL passwords) has the shortcut; a colour-keeping one not.
  assertEquals(lineRedactor((t) => t.replaceAll("x", "*"), false).lines, undefined);
  assertEquals(lineRedactor(makeRedactor([]), true).lines, undefined);
});

Deno.test("redactDeep() leaves a value as it is while the run has no secret, masks once it has", () => {
  const secrets = new SecretRegistry();
  const redact = makeRedactor(secrets);
  const value = { a: ["x db://u:tok-123@h"], b: 1 };
  assertEquals(redactDeep(value, redact) === value, true);
  secrets.add("tok-123");
  assertEquals(redactDeep(value, redact), { a: ["x db://u:***@h"], b: 1 });
});
