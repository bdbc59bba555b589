import { checkOnce } from "../../engine/attempt.ts";
import { assert, assertEquals } from "../../tests/_assert.ts";
import { conditionOf, optionsOf, parseError, plan, probeOf } from "../../tests/_kit.ts";
import { parseHostPort } from "../_common/net.ts";
import type { SshOptions } from "./mod.ts";
import { judgeBanner, keyType } from "./protocol.ts";

const parseSshTarget = (text: string) => {
  try {
    return parseHostPort(text, 22);
  } catch (e) {
    return (e as Error).message;
  }
};

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

Deno.test("parseHostPort() takes host:port, [v6]:port and a bare host on port 22", () => {
  assertEquals(parseSshTarget("db:2222"), { hostname: "db", port: 2222 });
  assertEquals(parseSshTarget("db"), { hostname: "db", port: 22 });
  assertEquals(parseSshTarget("[::1]:22"), { hostname: "::1", port: 22 });
  assertEquals(parseSshTarget("[::1]"), { hostname: "::1", port: 22 });
  assertEquals(parseSshTarget("db:0"), 'port must be from 1 to 65535, got "0"');
  assertEquals(parseSshTarget("a b"), 'expected HOST:PORT or [IPv6]:PORT, got "a b"');
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
  const p = plan(["ssh", "h:22", "--user", "u", "--password-env", "PW"], { PW: "pw-from-env" });
  assertEquals(p.secrets, ["pw-from-env"]);
  assertEquals(p.conditions[0]!.name, "ssh h:22");
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
    await t.step(args.slice(1).join(" "), () => assertEquals(parseError(args, env), line));
  }
});

Deno.test("ssh parse() returns plain options; a password file is only named", () => {
  assertEquals(
    optionsOf<SshOptions>(["ssh", "[::1]", "--user", "u", "--password-file", "/run/pw"]),
    {
      hp: { hostname: "::1", port: 22 },
      bannerContains: undefined,
      user: "u",
      password: { file: "/run/pw" },
      pin: undefined,
    },
  );
  assertEquals(
    optionsOf<SshOptions>(["ssh", "h", "--user", "u", "--password-env", "PW"], { PW: "x" })
      .password,
    { value: "x" },
  );
  assertEquals(conditionOf(["ssh", "[::1]:2222"]).name, "ssh [::1]:2222");
});

Deno.test("--password-file /dev/zero fails the attempt at once, past the 4 MiB cap", async () => {
  const probe = await probeOf([
    ...["ssh", "127.0.0.1:1", "--user", "u", "--password-file", "/dev/zero"],
  ]);
  const before = Deno.memoryUsage().rss;
  const started = performance.now();
  const error = await checkOnce(probe, new AbortController().signal).then(
    (r) => r.status === "pending" ? r.error : `resolved ${JSON.stringify(r)}`,
  );
  assertEquals(error, "cannot read --password-file /dev/zero: larger than 4 MiB");
  assert(performance.now() - started < 2000, "it took too long");
  const grown = Deno.memoryUsage().rss - before;
  assert(grown < 64 << 20, `memory grew by ${grown} bytes`);
});

Deno.test("a missing --password-file fails the attempt, which is retried", async () => {
  const missing = `${await Deno.makeTempDir()}/nope.txt`;
  const probe = await probeOf(["ssh", "127.0.0.1:1", "--user", "u", "--password-file", missing]);
  const error = await checkOnce(probe, new AbortController().signal).then(
    (r) => r.status === "pending" ? r.error : `resolved ${JSON.stringify(r)}`,
  );
  assertEquals(error, `cannot read --password-file ${missing}: no such file or directory`);
  await Deno.remove(missing.replace(/\/nope\.txt$/, ""));
});

Deno.test("ssh imports ssh2 when a handshake condition's probe is made, before the run's clock starts", async () => {
  const { sshLibrary } = await import("./handshake.ts");
  sshLibrary.reset(); // as if never imported: other tests of this file may have
  await probeOf(["ssh", "127.0.0.1:22", "--user", "u", "--password-file", "/dev/null"]);
  const loaded = sshLibrary.peek();
  assert(loaded !== undefined, "ssh2 is not being imported");
  assertEquals(typeof (await loaded).Client, "function");
});
