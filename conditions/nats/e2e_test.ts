/**
 * The nats kind end to end against real NATS servers (Debian's nats-server,
 * throwaway instances from conditions/nats/_service.ts), for what is nats's own:
 * JetStream and a stream created late, a token, a credentials file
 * (operator mode), pending states (a wrong token, no credentials, a port
 * that is not NATS, TLS asked of a plain server), usage errors, and no token
 * or credentials in any output. A server started late or restarted, a
 * user's wrong password, --password-env and --password-file, the human
 * line, the JSON report, the password in no output and TLS (verified,
 * unverified, untrusted, misnamed, required) are the live conformance
 * suite's (tests/conformance/live_test.ts).
 */

import { assert, assertEquals, assertMatch } from "../../tests/_assert.ts";
import { ignoreWithout, serverTest } from "../../tests/_kit.ts";
import { makeNats, natsMissing } from "./_service.ts";
import { assertUsageErrors, runCli, runJson, runLate } from "../../tests/e2e/_cli.ts";

const FAST = ["--timeout", "30s", "--interval", "200ms"];
const SHORT = ["--timeout", "1s", "--interval", "200ms"];
const opts = { sanitizeResources: false, sanitizeOps: false };
const missing = await natsMissing();
/** A server in operator mode (JWT accounts), with its credentials file. */
const OPERATOR = { name: "nats-server", missing, make: () => makeNats({ operator: true }) };
const VERSION = /^NATS \d+\.\d+\.\d+/;

Deno.test({
  name: "nats kind against a real nats-server: no auth, user and password, token, JetStream",
  ignore: ignoreWithout("nats-server", missing),
  ...opts,
  fn: async (t) => {
    const open = await makeNats({ jetstream: true });
    const users = await makeNats({ user: { name: "app", password: "app-pw-7Qx" } });
    const token = await makeNats({ token: "tok-3Fz9q" });
    // A server whose first line is not INFO (an SSH banner).
    const ssh = Deno.listen({ hostname: "127.0.0.1", port: 0 });
    const accepting = (async () => {
      for await (const c of ssh) {
        await c.write(new TextEncoder().encode("SSH-2.0-OpenSSH_9.2\r\n")).catch(() => {});
        c.close();
      }
    })().catch(() => {});
    try {
      await t.step("JSON report: name, kind, target, detail; stderr stays empty", async () => {
        const r = await runJson([...FAST, "nats", open.url(), "--jetstream"]);
        assertEquals([r.code, r.stderr, r.json.status], [0, "", "satisfied"]);
        const c = r.json.conditions[0]!;
        assertEquals([c.name, c.kind, c.target], [`nats ${open.url()}`, "nats", open.url()]);
        assertMatch(c.detail, new RegExp(`${VERSION.source}, JetStream \\(0 streams\\)$`));
        assertEquals([c.last_error, c.attempts], ["", 1]);
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
        "pending: a wrong token, no credentials, a port that is not NATS, TLS asked of a plain server",
        async () => {
          const sshPort = (ssh.addr as Deno.NetAddr).port;
          const r = await runJson([
            ...SHORT,
            ...["nats", token.url(), "--token-env", "T"],
            ...["--", "nats", users.url()],
            ...["--", "nats", `nats://127.0.0.1:${sshPort}`],
            ...["--", "nats", `tls://127.0.0.1:${open.port}`, "--insecure"],
          ], { env: { T: "not-the-token" } });
          assertEquals([r.code, r.json.status], [1, "timeout"]);
          assertEquals(r.json.conditions.map((c) => c.last_error), [
            "authentication failed: Authorization Violation",
            "authentication failed: Authorization Violation",
            "not a NATS server: its first line is not INFO",
            "the server does not offer TLS (TLS was asked for with a tls:// URL or --tls)",
          ]);
          assert(!r.stdout.includes("not-the-token"));
        },
      );

      await t.step(
        "a comma list of servers whose first is dead: the next one answers, with the list's user-info",
        async () => {
          const list = `nats://app:app-pw-7Qx@127.0.0.1:1,nats://127.0.0.1:${users.port}`;
          const r = await runJson([...FAST, "nats", list]);
          assertEquals([r.code, r.stderr], [0, ""]);
          const c = r.json.conditions[0]!;
          assertEquals(c.target, `nats://app:***@127.0.0.1:1,nats://127.0.0.1:${users.port}`);
          assertMatch(c.detail, VERSION);
          assertEquals(c.attempts, 1);
          assert(!r.stdout.includes("app-pw-7Qx"));
          const dead = await runJson([...SHORT, "nats", "nats://127.0.0.1:1, 127.0.0.1:2"]);
          assertEquals(dead.code, 1);
          assertEquals(
            dead.json.conditions[0]!.last_error,
            "127.0.0.1:1: connection refused; 127.0.0.1:2: connection refused",
          );
        },
      );

      await t.step("a token in the URL's user-info, masked in every output", async () => {
        const r = await runJson([...FAST, "nats", token.url("tok-3Fz9q")]);
        assertEquals([r.code, r.stderr], [0, ""]);
        assertEquals(r.json.conditions[0]!.name, `nats nats://***@127.0.0.1:${token.port}`);
        const wrong = await runJson([...SHORT, "nats", token.url("not-the-tok")]);
        assertEquals(
          wrong.json.conditions[0]!.last_error,
          "authentication failed: Authorization Violation",
        );
        assert(!r.stdout.includes("tok-3Fz9q") && !wrong.stdout.includes("not-the-tok"));
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
    } finally {
      ssh.close();
      await accepting;
      await Promise.all([open.remove(), users.remove(), token.remove()]);
    }
  },
});

serverTest("nats with a credentials file (operator mode, JWT accounts)", OPERATOR, async (op) => {
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
    await other.remove();
  }
});

serverTest(
  "nats: no token or credentials shows in any output mode, on any path",
  OPERATOR,
  async (op) => {
    const mark = "Zq9Nt/Mark:7";
    const token = await makeNats({ token: mark });
    const dir = await Deno.makeTempDir({ prefix: "waitcmd-nats-secret-" });
    try {
      const creds = await Deno.readTextFile(op.credsFile!);
      const marks = [mark, /SU[A-Z0-9]{50,}/.exec(creds)![0], /eyJ[\w.-]{40,}/.exec(creds)![0]];
      const both = (extra: string[] = []) => [
        ...["nats", token.url(), "--token-env", "MARK_TOKEN", ...extra],
        ...["--", "nats", op.url(), "--creds-file", op.credsFile!, ...extra],
      ];
      const paths: [string[], number][] = [
        [["-t", "20s", ...both()], 0],
        [["-t", "1s", "-i", "200ms", ...both(["--jetstream"])], 1],
        [["nats", op.url("app:pw"), "--token-env", "MARK_TOKEN"], 2],
      ];
      const report = `${dir}/report.json`;
      const modes = [[], ["-o", "json"], ["-o", "jsonl", "--report", report], ["--explain"]];
      for (const [args, code] of paths) {
        for (const mode of modes) {
          await Deno.remove(report).catch(() => {});
          const r = await runCli([...mode, ...args], { env: { MARK_TOKEN: mark } });
          const explain = mode.includes("--explain");
          assertEquals(r.code, explain && code !== 2 ? 0 : code, `${mode} ${args}\n${r.stderr}`);
          const text = r.stdout + r.stderr + await Deno.readTextFile(report).catch(() => "");
          for (const m of marks) assert(!text.includes(m), `${m} shows (${mode}):\n${text}`);
        }
      }
    } finally {
      await token.remove();
      await Deno.remove(dir, { recursive: true });
    }
  },
);

Deno.test("nats kind rejects every malformed value with exit 2 before probing", async () => {
  const where = "waitcmd: condition 1 (nats)";
  const see = "(see: waitcmd help nats)";
  const form = "nats://[user:password@|token@]host[:port][,nats://host[:port]...] or tls://...";
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
      ["nats", "nats://s3cr3t-tok@nats:4222,nats://nats:4223/?verbose=true"],
      `${where}: unknown URL parameter "verbose" (a NATS URL takes none: credentials go in its user-info or the flags) ${see}`,
    ],
    [
      ["nats", "nats://127.0.0.1:4222,ws://127.0.0.1:8080"],
      `${where}: ws:// servers are not supported (NATS over TCP only), got "ws://127.0.0.1:8080" ${see}`,
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
  await assertUsageErrors(cases, {
    exact: true,
    env: { PW: "env-pw-zq" },
    secrets: ["sEcr3t", "s3cr3t-tok"],
  });
});
