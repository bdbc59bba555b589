import { assertEquals, assertThrows } from "../tests/_assert.ts";
import { parseArgv } from "../engine/grammar.ts";
import { UsageError } from "../engine/errors.ts";
import { registry } from "./mod.ts";
import { parseHostDefaultPort as parseSshTarget } from "./_nodenet.ts";
import { judgeBanner, keyType } from "./ssh.ts";

function usage(args: string[], env: Record<string, string> = {}): string {
  return assertThrows(() => parseArgv(args, registry, env), UsageError).format();
}

Deno.test("judgeBanner() accepts SSH-2.0 and SSH-1.99 identification lines", () => {
  assertEquals(judgeBanner("SSH-2.0-OpenSSH_9.2p1 Debian\r\n", false), {
    ok: true,
    banner: "SSH-2.0-OpenSSH_9.2p1 Debian",
  });
  assertEquals(judgeBanner("SSH-1.99-Cisco-1.25\n", false), {
    ok: true,
    banner: "SSH-1.99-Cisco-1.25",
  });
  assertEquals(judgeBanner("Welcome to the box\r\nSSH-2.0-dropbear\r\n", false), {
    ok: true,
    banner: "SSH-2.0-dropbear",
  });
});

Deno.test("judgeBanner() waits for a complete line and rejects everything else", () => {
  assertEquals(judgeBanner("SSH-2.0-Open", false), undefined);
  assertEquals(judgeBanner("", false), undefined);
  assertEquals(judgeBanner("SSH-1.5-old\n", false), {
    ok: false,
    error: 'unsupported SSH protocol version: "SSH-1.5-old"',
  });
  assertEquals(judgeBanner("HTTP/1.1 400 Bad Request\r\n", false), {
    ok: false,
    error: 'not an SSH server: got "HTTP/1.1 400 Bad Request"',
  });
  assertEquals(judgeBanner("\x16\x03\x01\x02\n", false)?.ok, false);
  assertEquals(judgeBanner("", true), {
    ok: false,
    error: "connection closed without an identification banner",
  });
  assertEquals(judgeBanner("hello there", true), {
    ok: false,
    error: 'no SSH identification banner: got "hello there"',
  });
  assertEquals(judgeBanner("x".repeat(9000), false), {
    ok: false,
    error: "no SSH identification banner in the first 8192 bytes",
  });
});

Deno.test("parseHostDefaultPort() takes host:port, [v6]:port and a bare host on port 22", () => {
  assertEquals(parseSshTarget("db:2222", 22), { hostname: "db", port: 2222 });
  assertEquals(parseSshTarget("db", 22), { hostname: "db", port: 22 });
  assertEquals(parseSshTarget("[::1]:22", 22), { hostname: "::1", port: 22 });
  assertEquals(parseSshTarget("[::1]", 22), { hostname: "::1", port: 22 });
  assertEquals(parseSshTarget("db:0", 22), 'port must be from 1 to 65535, got "0"');
  assertEquals(parseSshTarget("a b", 22), 'expected HOST:PORT or [IPv6]:PORT, got "a b"');
});

Deno.test("keyType() reads the algorithm name of a public key blob", () => {
  const name = new TextEncoder().encode("ssh-ed25519");
  const blob = new Uint8Array([0, 0, 0, name.length, ...name, 0, 0, 0, 1, 7]);
  assertEquals(keyType(blob), "ssh-ed25519");
  assertEquals(keyType(new Uint8Array([1, 2])), "unknown");
});

Deno.test("ssh parse() registers the password and reports bad combinations", async (t) => {
  const where = "waitcmd: condition 1 (ssh)";
  const see = "(see: waitcmd help ssh)";
  const c = parseArgv(["ssh", "h:22", "--user", "u", "--password-env", "PW"], registry, {
    PW: "pw-from-env",
  });
  if (c.type !== "run") throw new Error("expected a run");
  assertEquals(c.plan.secrets, ["pw-from-env"]);
  assertEquals(c.plan.conditions[0]!.name, "ssh h:22");
  const rows: [string[], string, Record<string, string>?][] = [
    [["ssh", "h:99999"], `${where}: port must be from 1 to 65535, got "99999" ${see}`],
    [
      ["ssh", "h", "--host-key-sha256", "abc"],
      `${where}: --host-key-sha256: expected SHA256: and 43 base64 characters, as ssh-keygen -lf prints it, got "abc" ${see}`,
    ],
    [
      ["ssh", "h", "--user", "u"],
      `${where}: --user: needs --password, --password-env or --password-file ${see}`,
    ],
    [["ssh", "h", "--password", "p"], `${where}: --password: needs --user ${see}`],
    [
      ["ssh", "h", "--user", "u", "--password", "p", "--password-file", "f"],
      `${where}: --password-file: cannot be combined with --password ${see}`,
    ],
    [
      ["ssh", "h", "--user", "u", "--password-env", "NOPE_UNSET"],
      `${where}: --password-env: environment variable NOPE_UNSET is not set ${see}`,
    ],
    [
      ["ssh", "h", "--user", "u", "--password-env", "1X"],
      `${where}: --password-env: expected an environment variable name, got "1X" ${see}`,
    ],
    [
      ["ssh", "h", "--banner-contains", ""],
      `${where}: --banner-contains: expected a text, got an empty string ${see}`,
    ],
    [
      ["ssh", "h", "--user", "", "--password", "p"],
      `${where}: --user: expected a user name, got an empty string ${see}`,
    ],
  ];
  for (const [args, line, env] of rows) {
    await t.step(args.slice(1).join(" "), () => assertEquals(usage(args, env), line));
  }
});
