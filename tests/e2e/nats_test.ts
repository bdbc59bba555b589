/**
 * The nats kind end to end against real NATS servers (Debian's nats-server,
 * throwaway instances from tests/services/nats.ts): no auth, a user and
 * password (URL, --password-env, --password-file), a token, a credentials
 * file (operator mode), TLS verified, unverified, untrusted and required,
 * a server started late, a login fixed late, JetStream off, a stream
 * created late, timeouts, usage errors, and no secret in any output.
 */

import { assert, assertEquals, assertMatch, assertStringIncludes } from "../_assert.ts";
import { ignoreWithout } from "../_kit.ts";
import { freePort } from "../services/_util.ts";
import { makeNats, natsMissing, type NatsServer } from "../services/nats.ts";
import { makePki } from "../services/tls.ts";
import { runCli, runJson, runLate, usageErrorLine } from "./_cli.ts";
import { assertSecretsAbsent } from "./_datastore.ts";

const FAST = ["--timeout", "30s", "--interval", "200ms"];
const SHORT = ["--timeout", "1s", "--interval", "200ms"];
const opts = { sanitizeResources: false, sanitizeOps: false };
const missing = await natsMissing();
const VERSION = /^NATS \d+\.\d+\.\d+/;

Deno.test({
  name: "nats kind against a real nats-server: no auth, user and password, token, JetStream",
  ignore: ignoreWithout("nats-server", missing),
  ...opts,
  fn: async (t) => {
    const open = await makeNats({ jetstream: true });
    const users = await makeNats({ user: { name: "app", password: "app-pw-7Qx" } });
    const token = await makeNats({ token: "tok-3Fz9q" });
    try {
      await t.step("a ready server: text on stderr only, one attempt", async () => {
        const r = await runCli([...FAST, "nats", open.url()]);
        assertEquals([r.code, r.stdout], [0, ""]);
        assertMatch(
          r.stderr,
          new RegExp(
            `\\[ok\\] nats ${
              escape(open.url())
            } attempt 1 \\(\\d+\\.\\ds\\): NATS \\d+\\.\\d+\\.\\d+\n`,
          ),
        );
      });

      await t.step("JSON report: name, kind, target, detail; stderr stays empty", async () => {
        const r = await runJson([...FAST, "nats", open.url(), "--jetstream"]);
        assertEquals([r.code, r.stderr, r.json.status], [0, "", "satisfied"]);
        const c = r.json.conditions[0]!;
        assertEquals([c.name, c.kind, c.target], [`nats ${open.url()}`, "nats", open.url()]);
        assertMatch(c.detail, new RegExp(`${VERSION.source}, JetStream \\(0 streams\\)$`));
        assertEquals([c.last_error, c.attempts], ["", 1]);
      });

      await t.step(
        "nothing of the client outlives the verdict: a then command runs undisturbed",
        async () => {
          const r = await runCli([
            "-o",
            "json",
            ...FAST,
            "nats",
            open.url(),
            "--",
            "then",
            "sh",
            "-c",
            "sleep 1; echo then-done",
          ]);
          assertEquals([r.code, r.stderr], [0, ""]);
          assert(r.stdout.trimEnd().endsWith("then-done"), r.stdout);
        },
      );

      await t.step("a user and password: in the URL, --password-env, --password-file", async () => {
        const inUrl = users.url("app:app-pw-7Qx");
        const shown = users.url("app:***");
        const u = await runJson([...FAST, "nats", inUrl]);
        assertEquals(u.code, 0);
        assertEquals(u.json.conditions[0]!.name, `nats ${shown}`);
        assertMatch(u.json.conditions[0]!.detail, VERSION);
        assert(!u.stdout.includes("app-pw-7Qx"));
        const env = await runJson([...FAST, "nats", users.url("app"), "--password-env", "NPW"], {
          env: { NPW: "app-pw-7Qx" },
        });
        assertEquals([env.code, env.json.conditions[0]!.name], [0, `nats ${users.url("app")}`]);
        const file = `${users.dir}/pw.txt`;
        await Deno.writeTextFile(file, "app-pw-7Qx\n");
        const f = await runJson([...FAST, "nats", users.url("app"), "--password-file", file]);
        assertEquals(f.code, 0);
      });

      await t.step("a token from --token-env", async () => {
        const r = await runJson([...FAST, "nats", token.url(), "--token-env", "NATS_TOKEN"], {
          env: { NATS_TOKEN: "tok-3Fz9q" },
        });
        assertEquals([r.code, r.stderr], [0, ""]);
        assertMatch(r.json.conditions[0]!.detail, VERSION);
        assert(!r.stdout.includes("tok-3Fz9q"));
      });

      await t.step(
        "a wrong password: pending, then a timeout (exit 1), in JSON and text",
        async () => {
          const r = await runJson([...SHORT, "nats", users.url("app:wrong-pw-1")]);
          assertEquals([r.code, r.stderr, r.json.status], [1, "", "timeout"]);
          assertEquals(
            r.json.conditions[0]!.last_error,
            'authentication failed for user "app": Authorization Violation',
          );
          assert(r.json.conditions[0]!.attempts >= 2, "a refused login is retried");
          const text = await runCli([...SHORT, "nats", users.url("app:wrong-pw-1")]);
          assertEquals(text.code, 1);
          assertStringIncludes(
            text.stderr,
            `waitcmd: timed out after 1s; not satisfied: nats ${
              users.url("app:***")
            }: authentication failed for user "app": Authorization Violation`,
          );
          assert(!text.stderr.includes("wrong-pw-1"));
        },
      );

      await t.step("a wrong token, and no credentials at all: authentication failed", async () => {
        const wrong = await runJson([...SHORT, "nats", token.url(), "--token-env", "T"], {
          env: { T: "not-the-token" },
        });
        assertEquals(wrong.code, 1);
        assertEquals(
          wrong.json.conditions[0]!.last_error,
          "authentication failed: Authorization Violation",
        );
        const none = await runJson([...SHORT, "nats", users.url()]);
        assertEquals(
          [none.code, none.json.conditions[0]!.last_error],
          [1, "authentication failed: Authorization Violation"],
        );
      });

      await t.step("--jetstream on a server without JetStream stays pending", async () => {
        const r = await runJson(
          [...SHORT, "nats", token.url(), "--token-env", "T", "--jetstream"],
          {
            env: { T: "tok-3Fz9q" },
          },
        );
        assertEquals([r.code, r.json.status], [1, "timeout"]);
        assertEquals(r.json.conditions[0]!.last_error, "JetStream is not enabled on the server");
      });

      await t.step("a stream missing, then created on the server", async () => {
        const r = await runLate(
          [...FAST, "nats", open.url(), "--stream", "ORDERS"],
          () => open.addStream("ORDERS"),
        );
        assertEquals([r.code, r.stderr], [0, ""]);
        assertEquals(r.attempts[0]!.error, 'stream "ORDERS" not found');
        assertMatch(
          r.report.conditions[0]!.detail,
          new RegExp(`${VERSION.source}, JetStream, stream "ORDERS": 0 messages$`),
        );
      });

      await t.step("a port that is not NATS stays pending", async () => {
        // A server whose first line is not INFO (an SSH banner).
        const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
        const accepting = (async () => {
          for await (const c of listener) {
            await c.write(new TextEncoder().encode("SSH-2.0-OpenSSH_9.2\r\n")).catch(() => {});
            c.close();
          }
        })().catch(() => {});
        try {
          const port = (listener.addr as Deno.NetAddr).port;
          const r = await runJson([...SHORT, "nats", `nats://127.0.0.1:${port}`]);
          assertEquals(r.code, 1);
          assertEquals(
            r.json.conditions[0]!.last_error,
            "not a NATS server: its first line is not INFO",
          );
        } finally {
          listener.close();
          await accepting;
        }
      });
    } finally {
      await Promise.all([open.remove(), users.remove(), token.remove()]);
    }
  },
});

Deno.test({
  name: "nats kind waits for a server started late, and a user whose password is fixed late",
  ignore: ignoreWithout("nats-server", missing),
  ...opts,
  fn: async (t) => {
    await t.step("started after the first attempt: refused, then satisfied", async () => {
      const late = await makeNats({ start: false, jetstream: true });
      try {
        const r = await runLate([...FAST, "nats", late.url(), "--jetstream"], () => late.start());
        assertEquals([r.code, r.stderr], [0, ""]);
        assertEquals(r.attempts[0]!.error, "connection refused");
        assertEquals(r.report.status, "satisfied");
        assertMatch(r.report.conditions[0]!.detail, /JetStream \(0 streams\)$/);
      } finally {
        await late.remove();
      }
    });

    await t.step("restarted with the user's password: refused, then satisfied", async () => {
      // The server wants another password at first; it restarts with the user's one.
      const first = await makeNats({ user: { name: "app", password: "old-pw-1" } });
      const after = await makeNats({
        start: false,
        user: { name: "app", password: "new-pw-2" },
        port: first.port,
      });
      try {
        const r = await runLate(
          [...FAST, "nats", first.url("app:new-pw-2")],
          async () => {
            await first.stop();
            await after.start();
          },
        );
        assertEquals([r.code, r.stderr], [0, ""]);
        assertEquals(
          r.attempts[0]!.error,
          'authentication failed for user "app": Authorization Violation',
        );
      } finally {
        await first.remove();
        await after.remove();
      }
    });
  },
});

Deno.test({
  name: "nats with a credentials file (operator mode, JWT accounts)",
  ignore: ignoreWithout("nats-server", missing),
  ...opts,
  fn: async () => {
    const op = await makeNats({ operator: true });
    const other = await makeNats({ operator: true });
    try {
      const ok = await runJson([...FAST, "nats", op.url(), "--creds-file", op.credsFile!]);
      assertEquals([ok.code, ok.stderr], [0, ""]);
      assertMatch(ok.json.conditions[0]!.detail, VERSION);
      // A user of another operator's account: refused.
      const wrong = await runJson([...SHORT, "nats", op.url(), "--creds-file", other.credsFile!]);
      assertEquals(
        [wrong.code, wrong.json.conditions[0]!.last_error],
        [1, "authentication failed: Authorization Violation"],
      );
      // No credentials: refused; a file that is not credentials: pending with the reason.
      const none = await runJson([...SHORT, "nats", op.url()]);
      assertEquals(
        none.json.conditions[0]!.last_error,
        "authentication failed: Authorization Violation",
      );
      const bogus = `${op.dir}/bogus.creds`;
      await Deno.writeTextFile(bogus, "not credentials\n");
      const bad = await runJson([...SHORT, "nats", op.url(), "--creds-file", bogus]);
      assertEquals(
        bad.json.conditions[0]!.last_error,
        `cannot use --creds-file ${bogus}: unable to parse credentials`,
      );
      // Read at each attempt: a file that appears late.
      const lateFile = `${op.dir}/late.creds`;
      const late = await runLate(
        [...FAST, "nats", op.url(), "--creds-file", lateFile],
        () => Deno.copyFile(op.credsFile!, lateFile),
      );
      assertEquals(late.code, 0);
      assertEquals(
        late.attempts[0]!.error,
        `cannot read --creds-file ${lateFile}: no such file or directory`,
      );
    } finally {
      await op.remove();
      await other.remove();
    }
  },
});

Deno.test({
  name: "nats over TLS: verified by name, unverified; untrusted, misnamed and required pending",
  ignore: ignoreWithout("nats-server", missing),
  ...opts,
  fn: async () => {
    // The certificate names localhost only, not 127.0.0.1.
    const pki = await makePki({ server: { dnsNames: ["localhost"], ips: [] } });
    const other = await makePki({});
    const n = await makeNats({
      tls: { certFile: pki.server.certFile, keyFile: pki.server.keyFile },
      jetstream: true,
    });
    try {
      const byName = `tls://localhost:${n.port}`;
      const byIp = n.url();
      assert(byIp.startsWith("tls://127.0.0.1:"));
      for (
        const args of [
          [byName, "--ca-file", pki.ca.certFile],
          [`nats://localhost:${n.port}`, "--tls", "--ca-file", pki.ca.certFile, "--jetstream"],
          [byIp, "--insecure"],
        ]
      ) {
        const r = await runJson([...FAST, "nats", ...args]);
        assertEquals([r.code, r.stderr], [0, ""], args.join(" "));
        assertMatch(r.json.conditions[0]!.detail, /, TLS$/);
      }
      const pending: [string[], string][] = [
        [[byIp, "--ca-file", pki.ca.certFile], "certificate is not valid for 127.0.0.1"],
        [
          [byName, "--ca-file", other.ca.certFile],
          "certificate not trusted (unable to verify the first certificate)",
        ],
        [[byName], "certificate not trusted (unable to verify the first certificate)"],
        [
          [`nats://localhost:${n.port}`],
          "the server requires TLS (use a tls:// URL or --tls)",
        ],
      ];
      for (const [args, error] of pending) {
        const r = await runJson([...SHORT, "nats", ...args]);
        assertEquals([r.code, r.json.status], [1, "timeout"], args.join(" "));
        assertEquals(r.json.conditions[0]!.last_error, error, args.join(" "));
        assert(r.json.conditions[0]!.attempts >= 2, "TLS failures are retried");
      }
    } finally {
      await n.remove();
      await pki.cleanup();
      await other.cleanup();
    }
  },
});

Deno.test({
  name: "nats: TLS asked of a plain server stays pending",
  ignore: ignoreWithout("nats-server", missing),
  ...opts,
  fn: async () => {
    const n: NatsServer = await makeNats();
    try {
      const r = await runJson([...SHORT, "nats", `tls://127.0.0.1:${n.port}`, "--insecure"]);
      assertEquals([r.code, r.json.status], [1, "timeout"]);
      assertEquals(
        r.json.conditions[0]!.last_error,
        "the server does not offer TLS (TLS was asked for with a tls:// URL or --tls)",
      );
    } finally {
      await n.remove();
    }
  },
});

Deno.test({
  name: "nats: no password, token or credentials shows in any output mode, on any path",
  ignore: ignoreWithout("nats-server", missing),
  ...opts,
  fn: async () => {
    const mark = "Zq9Nt/Mark:7";
    const users = await makeNats({ user: { name: "marked", password: mark } });
    const token = await makeNats({ token: mark });
    const op = await makeNats({ operator: true });
    const dir = await Deno.makeTempDir({ prefix: "waitcmd-nats-secret-" });
    try {
      await Deno.writeTextFile(`${dir}/pw`, `${mark}\n`);
      const creds = await Deno.readTextFile(op.credsFile!);
      const seed = /SU[A-Z0-9]{50,}/.exec(creds)![0];
      const jwt = /eyJ[\w.-]{40,}/.exec(creds)![0];
      const inUrl = users.url(`marked:${encodeURIComponent(mark)}`);
      const bare = users.url("marked");
      const all = (extra: string[] = []) => [
        "nats",
        inUrl,
        ...extra,
        "--",
        "nats",
        bare,
        "--password-env",
        "MARK_PW",
        ...extra,
        "--",
        "nats",
        bare,
        "--password-file",
        `${dir}/pw`,
        ...extra,
        "--",
        "nats",
        token.url(),
        "--token-env",
        "MARK_TOKEN",
        ...extra,
        "--",
        "nats",
        op.url(),
        "--creds-file",
        op.credsFile!,
        ...extra,
      ];
      const wrong = users.url(`app:${encodeURIComponent(mark)}`);
      await assertSecretsAbsent(
        [
          { name: "success", args: ["-t", "20s", ...all()], codes: [0] },
          {
            name: "pending then timeout (no JetStream)",
            args: ["-t", "1s", "-i", "200ms", ...all(["--jetstream"])],
            codes: [1],
          },
          {
            name: "authentication failed then timeout",
            args: ["-t", "1s", "-i", "200ms", "nats", wrong],
            codes: [1],
          },
          {
            name: "usage error",
            args: ["nats", inUrl, "--stream", "a.b"],
            codes: [2],
          },
          {
            name: "usage error (token and user)",
            args: ["nats", inUrl, "--token-env", "MARK_TOKEN"],
            codes: [2],
          },
        ],
        [mark, encodeURIComponent(mark), seed, jwt],
        { MARK_PW: mark, MARK_TOKEN: mark },
      );
    } finally {
      await Promise.all([users.remove(), token.remove(), op.remove()]);
      await Deno.remove(dir, { recursive: true });
    }
  },
});

Deno.test("nats: a dead port is pending with connection refused, and times out", async () => {
  const port = freePort();
  const r = await runJson([...SHORT, "nats", `nats://app:pw-dead-1@localhost:${port}`]);
  assertEquals([r.code, r.stderr, r.json.status], [1, "", "timeout"]);
  assertEquals(r.json.conditions[0]!.last_error, "connection refused");
  assert(r.json.conditions[0]!.attempts >= 2);
  assert(!r.stdout.includes("pw-dead-1"));
});

Deno.test("nats kind rejects every malformed value with exit 2 before probing", async () => {
  const where = "waitcmd: condition 1 (nats)";
  const see = "(see: waitcmd help nats)";
  const form = "nats://[user[:password]@]host[:port] or tls://...";
  const cases: [string[], string][] = [
    [["nats", "http://nats:4222"], `${where}: expected ${form}, got "http://nats:4222" ${see}`],
    [
      ["nats", "nats://nats:99999"],
      `${where}: port must be from 1 to 65535, got "99999" ${see}`,
    ],
    [
      ["nats", "nats://nats", "--stream", "orders.eu"],
      `${where}: --stream: a stream name cannot contain '.', '*', '>', '/', '\\' or white space, got "orders.eu" ${see}`,
    ],
    [
      ["nats", "nats://nats", "--token-env", "UNSET_NATS_TOKEN"],
      `${where}: --token-env: environment variable UNSET_NATS_TOKEN is not set ${see}`,
    ],
    [
      ["nats", "nats://app:sEcr3t@nats", "--password-env", "PW"],
      `${where}: --password-env: cannot be combined with a password in the URL ${see}`,
    ],
    [
      // A usage error masks every URL's user-info (the command line is redacted unparsed).
      ["nats", "nats://app@nats"],
      `${where}: user "***" needs a password (in the URL, --password-env or --password-file); a token goes in --token-env ${see}`,
    ],
    [
      ["nats", "nats://nats", "--ca-file", "ca.pem"],
      `${where}: --ca-file: needs a tls:// URL or --tls ${see}`,
    ],
    [
      ["nats", "nats://nats", "--jetstream", "--creds-file", ""],
      `${where}: --creds-file: expected a path, got an empty string ${see}`,
    ],
  ];
  await Promise.all(cases.map(async ([args, line]) => {
    const r = await runCli(args, { env: { PW: "env-pw-zq" } });
    assertEquals(usageErrorLine(r), line, args.join(" "));
    assert(!r.stderr.includes("sEcr3t"), r.stderr);
  }));
});

function escape(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}
