/**
 * The ssh kind end to end against Debian's OpenSSH sshd (throwaway user
 * waittest), a TCP server that never sends a banner, and one that greets
 * like an HTTP server.
 */

import { assert, assertEquals, assertMatch, assertStringIncludes } from "../../tests/_assert.ts";
import { ignoreWithout, noIpv6 } from "../../tests/_kit.ts";
import { type Sshd, SSHD_BIN, startSilentTcp, startSshd } from "../../tests/services/sshd.ts";
import { expectJson, runCli, runJson, usageErrorLine } from "../../tests/e2e/_cli.ts";

const FAST = ["--timeout", "10s", "--interval", "200ms"];
const opts = { sanitizeResources: false, sanitizeOps: false };
const WRONG_PIN = "SHA256:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA";

function assertNoSecret(r: { stdout: string; stderr: string }, secret: string) {
  assert(!r.stdout.includes(secret), `password leaked on stdout:\n${r.stdout}`);
  assert(!r.stderr.includes(secret), `password leaked on stderr:\n${r.stderr}`);
}

/** A TCP server on `hostname` that sends `greeting` to every client, then closes. */
function startGreeter(greeting: string, hostname = "127.0.0.1"): { port: number; stop(): void } {
  const l = Deno.listen({ hostname, port: 0 });
  (async () => {
    for await (const conn of l) {
      conn.write(new TextEncoder().encode(greeting)).catch(() => {}).finally(() => {
        setTimeout(() => {
          try {
            conn.close();
          } catch {
            // closed by the client
          }
        }, 50);
      });
    }
  })().catch(() => {});
  return { port: (l.addr as Deno.NetAddr).port, stop: () => l.close() };
}

/** Why sshd cannot be had, or undefined. */
const sshdMissing = await Deno.stat(SSHD_BIN).then(
  () => undefined,
  () => `${SSHD_BIN} not found (run scripts/install-test-deps.sh)`,
);

/** Forwards every connection to [::1]:port to 127.0.0.1:`to`. */
function startV6Forwarder(to: number): { port: number; stop(): void } {
  const l = Deno.listen({ hostname: "::1", port: 0 });
  const conns = new Set<Deno.Conn>();
  (async () => {
    for await (const inbound of l) {
      conns.add(inbound);
      Deno.connect({ hostname: "127.0.0.1", port: to }).then((outbound) => {
        conns.add(outbound);
        const close = () => {
          for (const c of [inbound, outbound]) {
            try {
              c.close();
            } catch {
              // already closed
            }
          }
        };
        Promise.allSettled([
          inbound.readable.pipeTo(outbound.writable, { preventClose: true }),
          outbound.readable.pipeTo(inbound.writable, { preventClose: true }),
        ]).finally(close);
      }).catch(() => inbound.close());
    }
  })().catch(() => {});
  return {
    port: (l.addr as Deno.NetAddr).port,
    stop: () => {
      l.close();
      for (const c of conns) {
        try {
          c.close();
        } catch {
          // already closed
        }
      }
    },
  };
}

Deno.test({
  name: "ssh kind against a real OpenSSH server",
  ignore: ignoreWithout("sshd", sshdMissing),
  ...opts,
  fn: sshdTests,
});

async function sshdTests(t: Deno.TestContext) {
  const sshd: Sshd = await startSshd();
  const target = `127.0.0.1:${sshd.port}`;
  try {
    await t.step(
      "the identification banner satisfies it; text mode writes only stderr",
      async () => {
        const r = await runCli([...FAST, "ssh", target]);
        assertEquals(r.code, 0);
        assertEquals(r.stdout, "");
        assertMatch(
          r.stderr,
          new RegExp(`\\[ok\\] ssh ${target} attempt 1 \\(\\d+\\.\\ds\\): SSH-2\\.0-OpenSSH_\\S+`),
        );
      },
    );

    await t.step("JSON report; --banner-contains matches the banner", async () => {
      const r = await expectJson([...FAST, "ssh", target, "--banner-contains", "OpenSSH"], {
        code: 0,
      });
      assertEquals(r.stderr, "");
      const c = r.json.conditions[0]!;
      assertEquals(c.name, `ssh ${target}`);
      assertMatch(c.detail, /^SSH-2\.0-OpenSSH_/);
      assertEquals(c.last_error, "");
    });

    await t.step("--banner-contains with another text times out naming the banner", async () => {
      await expectJson([
        ...["--timeout", "1500ms", "--interval", "200ms", "ssh", target],
        ...["--banner-contains", "dropbear"],
      ], { code: 1, error: /^banner "SSH-2\.0-OpenSSH_.*" does not contain "dropbear"$/ });
    });

    await t.step("the right host key pin is satisfied without a login", async () => {
      const r = await runJson([...FAST, "ssh", target, "--host-key-sha256", sshd.fingerprint]);
      assertEquals(r.code, 0, r.stdout);
      assertStringIncludes(
        r.json.conditions[0]!.detail,
        `host key ${sshd.fingerprint} (ssh-ed25519)`,
      );
      const log = await Deno.readTextFile(sshd.logFile);
      assert(!/Invalid user|Failed none|for waitcmd/.test(log), `a login was attempted:\n${log}`);
    });

    await t.step("a wrong pin stays pending and shows the key seen", async () => {
      const r = await expectJson([
        ...["--timeout", "1500ms", "--interval", "200ms", "ssh", target],
        ...["--host-key-sha256", WRONG_PIN],
      ], {
        code: 1,
        error:
          `host key mismatch: the server shows ${sshd.fingerprint} (ssh-ed25519), expected ${WRONG_PIN}`,
      });
      assert(r.json.conditions[0]!.attempts >= 2, "the mismatch is retried");
    });

    await t.step("--password-env and --password-file with the pin", async () => {
      const env = await runJson(
        [
          ...FAST,
          ...["ssh", target, "--user", "waittest", "--password-env", "SSH_PW"],
          ...["--host-key-sha256", sshd.fingerprint],
        ],
        { env: { SSH_PW: sshd.password } },
      );
      assertEquals(env.code, 0, env.stdout);
      assertStringIncludes(
        env.json.conditions[0]!.detail,
        `logged in as waittest, host key ${sshd.fingerprint}`,
      );
      const file = `${sshd.dir}/pw.txt`;
      await Deno.writeTextFile(file, `${sshd.password}\n`);
      const f = await runJson([
        ...FAST,
        ...["ssh", target, "--user", "waittest", "--password-file", file],
      ]);
      assertEquals(f.code, 0, f.stdout);
      assertNoSecret(f, sshd.password);
    });

    await t.step("the right password with a wrong pin never logs in", async () => {
      const before = (await Deno.readTextFile(sshd.logFile)).split("\n").length;
      const r = await expectJson([
        ...["--timeout", "1500ms", "--interval", "200ms", "ssh", target, "--user", "waittest"],
        ...["--password", sshd.password, "--host-key-sha256", WRONG_PIN],
      ], { code: 1 });
      assertStringIncludes(r.json.conditions[0]!.last_error, "host key mismatch");
      const after = (await Deno.readTextFile(sshd.logFile)).split("\n").slice(before - 1).join(
        "\n",
      );
      assert(!after.includes("Accepted password"), `logged in despite the wrong pin:\n${after}`);
    });

    await t.step("a missing --password-file is retried with a clear error", async () => {
      const missing = `${sshd.dir}/nope.txt`;
      await expectJson([
        ...["--timeout", "1s", "--interval", "200ms", "ssh", target, "--user", "waittest"],
        ...["--password-file", missing],
      ], { code: 1, error: `cannot read --password-file ${missing}: no such file or directory` });
    });

    await t.step("--password-file /dev/zero fails each attempt at once, past the cap", async () => {
      const started = performance.now();
      const r = await expectJson([
        ...["--timeout", "1s", "--interval", "200ms", "ssh", target, "--user", "waittest"],
        ...["--password-file", "/dev/zero"],
      ], { code: 1, error: "cannot read --password-file /dev/zero: larger than 4 MiB" });
      assert(r.json.conditions[0]!.attempts >= 2, "each attempt ends quickly");
      assert(performance.now() - started < 8000, "the run ends at its timeout");
    });

    await t.step({
      name: "localhost reaches a server listening on ::1 only (key exchange)",
      ignore: ignoreWithout("an IPv6 loopback", noIpv6),
      fn: async () => {
        const v6 = startV6Forwarder(sshd.port);
        try {
          const r = await runJson([
            ...FAST,
            ...["ssh", `localhost:${v6.port}`, "--host-key-sha256", sshd.fingerprint],
          ]);
          assertEquals(r.code, 0, r.stdout);
          assertStringIncludes(r.json.conditions[0]!.detail, `host key ${sshd.fingerprint}`);
        } finally {
          v6.stop();
        }
      },
    });
  } finally {
    await sshd.stop();
  }
}

Deno.test({
  name: "ssh localhost reads the banner of a server listening on ::1 only",
  ignore: ignoreWithout("an IPv6 loopback", noIpv6),
  ...opts,
  fn: async () => {
    const v6 = startGreeter("SSH-2.0-OpenSSH_9.9 v6only\r\n", "::1");
    try {
      const r = await runJson([...FAST, "ssh", `localhost:${v6.port}`]);
      assertEquals(r.code, 0, r.stdout);
      assertEquals(r.json.conditions[0]!.detail, "SSH-2.0-OpenSSH_9.9 v6only");
    } finally {
      v6.stop();
    }
  },
});

Deno.test(
  "ssh kind fails attempts on silence, other protocols and closed ports",
  opts,
  async (t) => {
    const silent = await startSilentTcp();
    const http = startGreeter("HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n");
    const old = startGreeter("SSH-1.5-ancient\r\n");
    try {
      await t.step("a server that never sends a banner hits --attempt-timeout", async () => {
        for (const extra of [[], ["--host-key-sha256", WRONG_PIN]]) {
          const r = await expectJson([
            ...["--timeout", "1500ms", "--interval", "100ms", "--attempt-timeout", "300ms"],
            ...["ssh", `127.0.0.1:${silent.port}`],
            ...extra,
          ], { code: 1, error: "attempt timed out after 300ms" });
          assert(r.json.conditions[0]!.attempts >= 2);
        }
        assert(silent.accepted >= 4);
      });

      await t.step("an HTTP greeting is not SSH", async () => {
        await expectJson([
          ...["--timeout", "1s", "--interval", "200ms", "ssh", `127.0.0.1:${http.port}`],
        ], { code: 1, error: 'not an SSH server: got "HTTP/1.1 400 Bad Request"' });
      });

      await t.step("SSH-1.5 is not accepted", async () => {
        await expectJson([
          ...["--timeout", "1s", "--interval", "200ms", "ssh", `127.0.0.1:${old.port}`],
        ], { code: 1, error: 'unsupported SSH protocol version: "SSH-1.5-ancient"' });
      });
    } finally {
      await silent.stop();
      http.stop();
      old.stop();
    }
  },
);

Deno.test("ssh kind rejects every malformed value with exit 2 before probing", async () => {
  const where = "waitcmd: condition 1 (ssh)";
  const see = "(see: waitcmd help ssh)";
  const cases: [string[], string][] = [
    [["ssh", "host:port"], `${where}: expected HOST:PORT or [IPv6]:PORT, got "host:port" ${see}`],
    [["ssh", "host:70000"], `${where}: port must be from 1 to 65535, got "70000" ${see}`],
    [
      ["ssh", "h:22", "--host-key-sha256", "MD5:ab:cd"],
      `${where}: --host-key-sha256: expected SHA256: and 43 base64 characters, as ssh-keygen -lf prints it, got "MD5:ab:cd" ${see}`,
    ],
    [
      ["ssh", "h:22", "--user", "u"],
      `${where}: --user: needs --password, --password-env or --password-file ${see}`,
    ],
    [["ssh", "h:22", "--password-env", "PW"], `${where}: --password-env: needs --user ${see}`],
    [
      ["ssh", "h:22", "--user", "u", "--password-env", "UNSET_PW_VAR"],
      `${where}: --password-env: environment variable UNSET_PW_VAR is not set ${see}`,
    ],
    [
      ["ssh", "h:22", "--user", "u", "--password", "x", "--password-env", "PW"],
      `${where}: --password-env: cannot be combined with --password ${see}`,
    ],
    [
      ["ssh", "h:22", "--user", "u", "--password-file", ""],
      `${where}: --password-file: expected a path, got an empty string ${see}`,
    ],
    [
      ["ssh", "h:22", "--banner-contains", ""],
      `${where}: --banner-contains: expected a text, got an empty string ${see}`,
    ],
  ];
  await Promise.all(cases.map(async ([args, line]) => {
    const r = await runCli(args);
    assertEquals(usageErrorLine(r), line, args.join(" "));
    assert(!r.stderr.includes("pw-"), "no secret in the usage error");
  }));
});
