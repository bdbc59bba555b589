/**
 * The mongodb kind end to end through the CLI against FerretDB
 * (conditions/mongodb/_service.ts: a MongoDB-wire server with SCRAM logins and
 * TLS, reporting MongoDB 7.0.42; not mongod): satisfied, started late, a
 * wrong password (text and JSON, the password in neither), --password-env
 * and --password-file, authSource and the URI's other options, --primary and
 * --replica-set on a standalone, mongodb+srv:// without SRV records, TLS
 * (--ca-file, the URI's own tls options, --insecure, an untrusted or misnamed
 * certificate, a client certificate asked for) and a replica-set name (FerretDB answers as the writable
 * primary of the set it is given); and usage errors (the driver's URI check
 * included). The live conformance suite (tests/conformance/live_test.ts) runs
 * the scenarios every kind shares against FerretDB too. Secondaries,
 * elections and arbiters are unit tests of the decision (conditions/mongodb):
 * FerretDB has none of them.
 */

import { assert, assertEquals, assertMatch } from "../../tests/_assert.ts";
import { serverTest } from "../../tests/_kit.ts";
import { inTempDir } from "../../tests/services/_util.ts";
import { type Ferret, FERRET_PASSWORD, ferretMissing, makeFerret } from "./_service.ts";
import { makePki, type Pki } from "../../tests/services/tls.ts";
import {
  assertOutcome,
  assertTlsRetried,
  assertUsageErrors,
  type CliResult,
  cliTest,
  runCli,
  runJson,
  runJsonl,
  runLate,
  timing,
} from "../../tests/e2e/_cli.ts";

const FAST = ["--timeout", "60s", "--interval", "300ms"];
const PW = "M0ngo-S3cret";

cliTest(
  "mongodb kind: the URI's serverSelectionTimeoutMS bounds each attempt (a URI option wins over waitcmd's 2 s)",
  async () => {
    // Nothing listens on port 1: each attempt ends when server selection gives up.
    const r = await runJson([
      ...timing("1500ms", "100ms"),
      "mongodb",
      "mongodb://127.0.0.1:1/?serverSelectionTimeoutMS=200&connectTimeoutMS=200&appName=ci",
    ]);
    assertEquals([r.code, r.stderr], [1, ""]);
    const c = r.json.conditions[0]!;
    assert(c.attempts >= 3, `${c.attempts} attempts: ${c.last_error}`);
    assertMatch(c.last_error, /connection refused/);
  },
);

cliTest(
  "mongodb kind: usage errors through the CLI (the driver's URI check included), no password",
  async () => {
    const rows: [string[], string][] = [
      [["mongodb", `postgres://app:${PW}@h/`], "expected mongodb://"],
      [
        ["mongodb", `mongodb://app:${PW}@h/?foo=bar`],
        "the driver rejects the URI: option foo is not supported",
      ],
      [["mongo", `mongodb://app:${PW}@h/`, "--ca-file", "ca.pem"], "--ca-file: needs --tls"],
      [
        ["mongodb", `mongodb://app:${PW}@h/?authSource=admin&authMechanizm=SCRAM-SHA-256`],
        "the driver rejects the URI: option authmechanizm is not supported",
      ],
      [["mongodb", `mongodb+srv://app:${PW}@a,b/`], "mongodb+srv:// takes one host name"],
    ];
    await assertUsageErrors(rows, { secrets: [PW] });
  },
);

/** What FerretDB v1.24.2 answers as, standalone. */
const FERRET_DETAIL = "ping ok: MongoDB 7.0.42, standalone";
const FERRET_MISSING = await ferretMissing();

/** Asserts that no output of `runs` holds one of `secrets` (as typed or URL-encoded). */
function assertNoSecret(runs: readonly CliResult[], secrets: readonly string[]): void {
  for (const r of runs) {
    for (const s of secrets) {
      for (const m of new Set([s, encodeURIComponent(s)])) {
        assert(
          !r.stdout.includes(m) && !r.stderr.includes(m),
          `${m} shows:\n${r.stdout}${r.stderr}`,
        );
      }
    }
  }
}

serverTest(
  "mongodb kind against FerretDB (SCRAM logins; a MongoDB-wire server, not mongod)",
  { name: "FerretDB", missing: FERRET_MISSING, make: () => makeFerret({ start: false }) },
  async (f: Ferret, t) => {
    const url = f.url();
    const at = `127.0.0.1:${f.port}`;

    await t.step("started late: connection refused, then satisfied as app", async () => {
      const r = await runLate([...FAST, "mongodb", url], () => f.start());
      assertOutcome(r, {
        code: 0,
        status: "satisfied",
        detail: FERRET_DETAIL,
        firstError: `connection refused (${at})`,
        stderr: "",
      });
      const c = r.report.conditions[0]!;
      assertEquals(c.name, `mongodb mongodb://app:***@${at}/app`);
      assertNoSecret([r], [FERRET_PASSWORD]);
    });

    await t.step(
      "a wrong password: pending with authentication failed, in text and JSON; no password shows",
      async () => {
        const wrong = f.url("app", "Wr0ng/Pass:word");
        const [j, text] = await Promise.all([
          runJson([...timing("1s", "200ms"), "mongo", wrong]),
          runCli([...timing("1s", "200ms"), "mongo", wrong]),
        ]);
        const error = 'authentication failed for user "app": Authentication failed.';
        assertOutcome(j, { code: 1, status: "timeout", error, stderr: "" });
        assert(j.json.conditions[0]!.attempts >= 2, j.stdout);
        assertEquals([text.code, text.stdout], [1, ""]);
        assertMatch(text.stderr, /^\[\.\.\] mongo mongodb:\/\/app:\*\*\*@.* attempt 1 /m);
        assert(text.stderr.includes(`not satisfied: mongo mongodb://app:***@${at}/app: ${error}`));
        assertNoSecret([j, text], ["Wr0ng/Pass:word"]);
        // A user the server does not have is refused the same way.
        const nobody = await runJson([...timing("1s", "200ms"), "mongodb", f.url("nobody")]);
        assertOutcome(nobody, {
          code: 1,
          error: 'authentication failed for user "nobody": Authentication failed.',
        });
        assertNoSecret([nobody], [FERRET_PASSWORD]);
      },
    );

    await t.step(
      "--password-env, and --password-file written late (read at each attempt)",
      () =>
        inTempDir("waitcmd-mongo-pw-")(async (dir) => {
          const bare = `mongodb://app@${at}/app`;
          const file = `${dir}/pw`;
          const r = await runJsonl(
            [
              ...FAST,
              ...["mongodb", bare, "--password-env", "MONGO_PW"],
              ...["--", "mongodb", bare, "--password-file", file],
            ],
            {
              env: { MONGO_PW: FERRET_PASSWORD },
              onAttempt: (a) => {
                if (!a.ok) return Deno.writeTextFile(file, `${FERRET_PASSWORD}\n`);
              },
            },
          );
          assertEquals([r.code, r.stderr, r.report.status], [0, "", "satisfied"], r.stdout);
          assertEquals(r.report.conditions.map((c) => c.detail), [FERRET_DETAIL, FERRET_DETAIL]);
          assert(
            r.attempts.some((a) =>
              a.error === `cannot read --password-file ${file}: no such file or directory`
            ),
            JSON.stringify(r.attempts),
          );
          // The wrong password from the environment is refused like one in the URI.
          const wrong = await runJson(
            [...timing("1s", "200ms"), "mongodb", bare, "--password-env", "MONGO_PW"],
            { env: { MONGO_PW: "not-the-password" } },
          );
          assertOutcome(wrong, {
            code: 1,
            error: 'authentication failed for user "app": Authentication failed.',
          });
          assertNoSecret([r, wrong], [FERRET_PASSWORD, "not-the-password"]);
        }),
    );

    await t.step(
      "authSource names the user's database; authMechanism and other URI options are the driver's",
      async () => {
        // Redaction of these URIs is another part's: only the absence of the password and the
        // outcome are asserted here, not the name as shown.
        const pw = encodeURIComponent(FERRET_PASSWORD);
        const base = `mongodb://app:${pw}@${at}`;
        const ok = [
          `${base}/other?authSource=app`,
          `${base}/?authSource=app&authMechanism=SCRAM-SHA-256`,
          `${base}/app?authMechanism=SCRAM-SHA-1&appName=ci&directConnection=true`,
          `${base}/app?connectTimeoutMS=5000&serverSelectionTimeoutMS=5000&readPreference=primary`,
        ];
        const r = await runJson([...FAST, ...ok.flatMap((u) => ["--", "mongodb", u]).slice(1)]);
        assertEquals([r.code, r.stderr, r.json.status], [0, "", "satisfied"], r.stdout);
        assertEquals(r.json.conditions.map((c) => c.detail), ok.map(() => FERRET_DETAIL));
        assertEquals(r.json.conditions.map((c) => c.kind), ok.map(() => "mongodb"));
        // The user is app's, not admin's (the path's database is the default authSource).
        const refused = await runJson([
          ...timing("1s", "200ms"),
          ...["mongodb", `${base}/?authSource=admin`],
          ...["--", "mongodb", `${base}/other`],
        ]);
        assertEquals([refused.code, refused.stderr], [1, ""]);
        for (const c of refused.json.conditions) {
          assertEquals(
            c.last_error,
            'authentication failed for user "app": Authentication failed.',
          );
        }
        assertNoSecret([r, refused], [FERRET_PASSWORD]);
      },
    );

    await t.step(
      "without credentials: hello and ping answer (as mongod's do), --primary on a standalone (the alias mongo)",
      async () => {
        const r = await runJson([...FAST, "mongo", `mongodb://${at}/`, "--primary"]);
        assertOutcome(r, { code: 0, detail: FERRET_DETAIL, stderr: "" });
        const c = r.json.conditions[0]!;
        assertEquals([c.name, c.kind], [`mongo mongodb://${at}/`, "mongodb"]);
      },
    );

    await t.step(
      "pending: --replica-set on a standalone, tls=true on a plain server",
      async () => {
        const r = await runJson([
          ...timing("3s", "300ms"),
          ...["mongodb", url, "--replica-set", "rs0"],
          ...["--", "mongodb", `${url}?tls=true`],
        ]);
        assertEquals([r.code, r.stderr], [1, ""], r.stdout);
        assertEquals(r.json.conditions.map((c) => c.last_error), [
          'not a member of a replica set: standalone, expected "rs0"',
          `no answer from ${at} (server selection timed out after 2000 ms)`,
        ]);
        assertNoSecret([r], [FERRET_PASSWORD]);
      },
    );

    await t.step(
      "mongodb+srv:// of a name without SRV records: pending, the lookup named",
      async () => {
        const r = await runJson([
          ...timing("1s", "200ms"),
          "mongodb",
          `mongodb+srv://app:${encodeURIComponent(FERRET_PASSWORD)}@localhost/app`,
        ]);
        assertOutcome(r, { code: 1, error: "querySrv ENOTFOUND _mongodb._tcp.localhost" });
        assertNoSecret([r], [FERRET_PASSWORD]);
      },
    );
  },
);

/** A FerretDB server with TLS only, from `pki` (its certificate names localhost, not 127.0.0.1). */
async function tlsFerret(): Promise<
  { f: Ferret; pki: Pki; other: Pki; remove(): Promise<void> }
> {
  const pki = await makePki({ server: { dnsNames: ["localhost"], ips: [] } });
  const other = await makePki({});
  try {
    const f = await makeFerret({
      tls: { certFile: pki.server.certFile, keyFile: pki.server.keyFile },
    });
    return {
      f,
      pki,
      other,
      remove: async () => {
        await f.remove();
        await pki.cleanup();
        await other.cleanup();
      },
    };
  } catch (e) {
    await pki.cleanup();
    await other.cleanup();
    throw e;
  }
}

serverTest(
  "mongodb kind over TLS against FerretDB: verified, the URI's own options, unverified, untrusted",
  { name: "FerretDB", missing: FERRET_MISSING, make: tlsFerret },
  async ({ f, pki, other }, t) => {
    const pw = encodeURIComponent(FERRET_PASSWORD);
    const byName = `mongodb://app:${pw}@localhost:${f.port}/app`;
    const byIp = f.url();
    const ca = pki.ca.certFile;

    await t.step("satisfied: --tls --ca-file, tls=true with tlsCAFile, --insecure", async () => {
      const rows = [
        ["mongodb", byName, "--tls", "--ca-file", ca],
        ["mongodb", `${byName}?tls=true`, "--ca-file", ca],
        ["mongodb", `${byName}?tls=true&tlsCAFile=${encodeURIComponent(ca)}`],
        ["mongodb", byIp, "--tls", "--insecure"],
        ["mongodb", `${byIp}?tls=true&tlsAllowInvalidCertificates=true`],
      ];
      const r = await runJson([...FAST, ...rows.flatMap((w) => ["--", ...w]).slice(1)]);
      assertEquals([r.code, r.stderr, r.json.status], [0, "", "satisfied"], r.stdout);
      assertEquals(r.json.conditions.map((c) => c.detail), rows.map(() => FERRET_DETAIL));
      assertNoSecret([r], [FERRET_PASSWORD]);
    });

    await t.step(
      "pending and retried: another CA, no CA, a name the certificate lacks, no TLS",
      async () => {
        await assertTlsRetried("mongodb", [
          [
            [byName, "--tls", "--ca-file", other.ca.certFile],
            `certificate not trusted (unable to verify the first certificate) (localhost:${f.port})`,
          ],
          [
            [byName, "--tls"],
            `certificate not trusted (unable to verify the first certificate) (localhost:${f.port})`,
          ],
          [
            [byIp, "--tls", "--ca-file", ca],
            `certificate is not valid for 127.0.0.1 (127.0.0.1:${f.port})`,
          ],
        ], timing("3s", "200ms"));
        const plain = await runJson([...timing("3s", "200ms"), "mongodb", byIp]);
        assertEquals([plain.code, plain.stderr], [1, ""], plain.stdout);
        assert(plain.json.conditions[0]!.last_error !== "", plain.stdout);
        assertNoSecret([plain], [FERRET_PASSWORD]);
      },
    );
  },
);

serverTest(
  "mongodb kind against FerretDB answering as the primary of replica set rs0 (--repl-set-name)",
  { name: "FerretDB", missing: FERRET_MISSING, make: () => makeFerret({ replSetName: "rs0" }) },
  async (f) => {
    const url = f.url();
    const r = await runJson([
      ...FAST,
      ...["mongodb", url, "--primary", "--replica-set", "rs0"],
      ...["--", "mongodb", `${url}?replicaSet=rs0`, "--primary"],
    ]);
    assertEquals([r.code, r.stderr, r.json.status], [0, "", "satisfied"], r.stdout);
    const detail = 'ping ok: MongoDB 7.0.42, writable primary of replica set "rs0"';
    assertEquals(r.json.conditions.map((c) => c.detail), [detail, detail]);
    const other = await runJson([...timing("1s", "200ms"), "mongodb", url, "--replica-set", "rs1"]);
    assertOutcome(other, { code: 1, error: 'replica set is "rs0", expected "rs1"' });
    assertNoSecret([r, other], [FERRET_PASSWORD]);
  },
);

/** A FerretDB server with TLS that asks every client for a certificate its CA signed. */
async function mutualTlsFerret(): Promise<{ f: Ferret; pki: Pki; remove(): Promise<void> }> {
  const pki = await makePki({ server: { dnsNames: ["localhost"], ips: ["127.0.0.1"] } });
  try {
    const f = await makeFerret({
      tls: {
        certFile: pki.server.certFile,
        keyFile: pki.server.keyFile,
        clientCaFile: pki.ca.certFile,
      },
    });
    return { f, pki, remove: () => f.remove().then(() => pki.cleanup()) };
  } catch (e) {
    await pki.cleanup();
    throw e;
  }
}

serverTest(
  "mongodb kind against FerretDB asking for a client certificate (the URI's tlsCertificateKeyFile)",
  { name: "FerretDB", missing: FERRET_MISSING, make: mutualTlsFerret },
  async ({ f, pki }) => {
    // The driver reads the client's certificate and key from one PEM file.
    // Written once the run started, as cert-manager or a secrets sidecar would (DECISIONS §15:
    // a client certificate not there yet is pending).
    const both = `${pki.dir}/client-both.pem`;
    const url = f.url();
    const withCert = `${url}?tls=true&tlsCertificateKeyFile=${encodeURIComponent(both)}`;
    const ok = await runLate(
      [...FAST, "mongodb", withCert, "--ca-file", pki.ca.certFile],
      () => Deno.writeTextFile(both, `${pki.client!.certPem}\n${pki.client!.keyPem}\n`),
    );
    assertOutcome(ok, {
      code: 0,
      status: "satisfied",
      detail: FERRET_DETAIL,
      stderr: "",
      firstError: /no such file or directory/,
    });
    const without = await runJson([
      ...timing("3s", "200ms"),
      ...["mongodb", url, "--tls", "--ca-file", pki.ca.certFile],
    ]);
    // Under TLS 1.3 the server's alert may come before or after the client read: either the alert
    // ("requires a client certificate") or the connection closed.
    assertOutcome(without, {
      code: 1,
      status: "timeout",
      error: /requires a client certificate|connection .* closed/,
    });
    assert(without.json.conditions[0]!.attempts >= 2, without.stdout);
    assertNoSecret([ok, without], [FERRET_PASSWORD]);
  },
);
