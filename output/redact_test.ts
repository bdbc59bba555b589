import { assertEquals } from "../tests/_assert.ts";
import { SecretRegistry } from "../engine/secrets.ts";
import { lineRedactor, makeRedactor, redactDeep } from "./redact.ts";
import { ansiStyle } from "./text.ts";

Deno.test("makeRedactor() masks the run's secrets, also those registered after it was made", () => {
  const secrets = new SecretRegistry(["hunter22"]);
  const redact = makeRedactor(secrets);
  assertEquals(redact("pw hunter22, kube token tok-123"), "pw ***, kube token tok-123");
  secrets.add("tok-123");
  assertEquals(redact("kube token tok-123"), "kube token ***");
  assertEquals(redact("postgres://app:pw@db"), "postgres://app:***@db");
});

Deno.test("lineRedactor() escapes a server's control characters, not waitcmd's own colours", () => {
  const redact = makeRedactor(["hunter22"]);
  const forged = "ERR bad\n[ok] forged\nwaitcmd: satisfied\x1b[2K hunter22";
  assertEquals(
    lineRedactor(redact, false)(`[..] redis x: ${forged}`),
    "[..] redis x: ERR bad\\n[ok] forged\\nwaitcmd: satisfied\\x1b[2K ***",
  );
  assertEquals(
    lineRedactor(redact, true)(`${ansiStyle.wait("[..]")} redis x: ${forged}`),
    "\x1b[33m[..]\x1b[39m redis x: ERR bad\\n[ok] forged\\nwaitcmd: satisfied\\x1b[2K ***",
  );
});

Deno.test("redactDeep() leaves a value as it is while the run has no secret, masks once it has", () => {
  const secrets = new SecretRegistry();
  const redact = makeRedactor(secrets);
  const value = { a: ["x tok-123"], b: 1 };
  assertEquals(redactDeep(value, redact) === value, true);
  secrets.add("tok-123");
  assertEquals(redactDeep(value, redact), { a: ["x ***"], b: 1 });
});
