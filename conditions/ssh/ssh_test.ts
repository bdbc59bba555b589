import { checkOnce } from "../../engine/attempt.ts";
import { assert, assertEquals } from "../../tests/_assert.ts";
import { conditionOf, optionsOf, plan, probeOf } from "../../tests/_kit.ts";
import { stepUsageErrors } from "../../tests/_suite.ts";
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

Deno.test("judgeBanner() accepts SSH-2.0 and SSH-1.99 identification lines", async (t) => {
  const rows: [string, string][] = [
    ["SSH-2.0-OpenSSH_9.2p1 Debian\r\n", "SSH-2.0-OpenSSH_9.2p1 Debian"],
    ["SSH-1.99-Cisco-1.25\n", "SSH-1.99-Cisco-1.25"],
    ["Welcome to the box\r\nSSH-2.0-dropbear\r\n", "SSH-2.0-dropbear"],
  ];
  for (const [text, banner] of rows) {
    await t.step(banner, () => assertEquals(judgeBanner(text, false), { ok: true, banner }));
  }
});

Deno.test("judgeBanner() waits for a complete line and rejects everything else", async (t) => {
  // [what was read, whether the connection ended, the error; undefined: wait for more]
  const rows: [string, boolean, string | undefined][] = [
    ["SSH-2.0-Open", false, undefined],
    ["", false, undefined],
    ["SSH-1.5-old\n", false, 'unsupported SSH protocol version: "SSH-1.5-old"'],
    ["HTTP/1.1 400 Bad Request\r\n", false, 'not an SSH server: got "HTTP/1.1 400 Bad Request"'],
    ["", true, "connection closed without an identification banner"],
    ["hello there", true, 'no SSH identification banner: got "hello there"'],
    ["x".repeat(9000), false, "no SSH identification banner in the first 8192 bytes"],
  ];
  for (const [text, ended, error] of rows) {
    await t.step(`${JSON.stringify(text.slice(0, 30))}${ended ? ", ended" : ""}`, () => {
      assertEquals(
        judgeBanner(text, ended),
        error === undefined ? undefined : { ok: false, error },
      );
    });
  }
  assertEquals(judgeBanner("\x16\x03\x01\x02\n", false)?.ok, false);
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
  const p = plan(["ssh", "h:22", "--user", "u", "--password-env", "PW"], { PW: "pw-from-env" });
  assertEquals(p.secrets, ["pw-from-env"]);
  assertEquals(p.conditions[0]!.name, "ssh h:22");
  await stepUsageErrors(t, "ssh");
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
