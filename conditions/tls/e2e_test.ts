/**
 * The tls kind end to end against real TLS servers whose certificates come
 * from a CA made for the run: valid, short-lived, expired, not yet valid, for
 * another name, and without IP SANs.
 */

import { assertEquals, assertMatch } from "../../tests/_assert.ts";
import { type RunningServer, startHttpsServer } from "../../tests/services/http_servers.ts";
import { startSilentTcp } from "../../tests/services/sshd.ts";
import { daysFromNow, makePki } from "../../tests/services/tls.ts";
import { ignoreWithout, noIpv6 } from "../../tests/_kit.ts";
import { usageRows } from "../../tests/_suite.ts";
import { assertKindUsageErrors, expectJson, runJson, runLate } from "../../tests/e2e/_cli.ts";

/** The kind's usage errors, from its folder (conditions/tls/_suite.ts). */
const USAGE = await usageRows("tls");

const FAST = ["--timeout", "8s", "--interval", "100ms"];
const SHORT = ["--timeout", "1s", "--interval", "200ms"];
const opts = { sanitizeResources: false, sanitizeOps: false };

Deno.test("tls kind against servers with certificates from a run CA", opts, async (t) => {
  const pki = await makePki({
    server: { dnsNames: ["localhost", "api.test"], ips: ["127.0.0.1", "::1"] },
  });
  const leaves = {
    short: await pki.issue("short", { dnsNames: ["localhost"], validDays: 2 }),
    expired: await pki.issue("expired", {
      dnsNames: ["localhost"],
      notBefore: daysFromNow(-10),
      notAfter: daysFromNow(-1),
    }),
    future: await pki.issue("future", {
      dnsNames: ["localhost"],
      notBefore: daysFromNow(3),
      validDays: 10,
    }),
    dnsOnly: await pki.issue("dnsonly", { dnsNames: ["localhost"] }),
  };
  const servers: RunningServer[] = [];
  const serve = (cert: string, key: string) => {
    const s = startHttpsServer(cert, key);
    servers.push(s);
    return s;
  };
  const main = serve(pki.server.chainPem, pki.server.keyPem);
  const short = serve(leaves.short.chainPem, leaves.short.keyPem);
  const expired = serve(leaves.expired.chainPem, leaves.expired.keyPem);
  const future = serve(leaves.future.chainPem, leaves.future.keyPem);
  const dnsOnly = serve(leaves.dnsOnly.chainPem, leaves.dnsOnly.keyPem);
  const ca = ["--ca-file", pki.ca.certFile];
  const day = (d: Date) => d.toISOString().slice(0, 10);
  try {
    await t.step("JSON report; --valid-for shorter than what is left", async () => {
      const r = await expectJson(
        [...FAST, ...["tls", `localhost:${main.port}`], ...ca, ...["--valid-for", "29d"]],
        {
          code: 0,
          stderr: "",
          detail: /^certificate for localhost valid until \d{4}-\d\d-\d\d \((29|30)d left\)$/,
        },
      );
      assertEquals(r.json.conditions[0]!.name, `tls localhost:${main.port}`);
    });

    await t.step("--valid-for longer than what is left times out naming the check", async () => {
      await expectJson([...FAST, "tls", `localhost:${short.port}`, ...ca, "--valid-for", "1d12h"], {
        code: 0,
      });
      await expectJson([...SHORT, "tls", `localhost:${short.port}`, ...ca, "--valid-for", "3d"], {
        code: 1,
        error: `certificate expires in 1d (${
          day(leaves.short.notAfter)
        }), less than --valid-for 3d`,
      });
      const h = await runJson([
        ...SHORT,
        ...["tls", `localhost:${short.port}`],
        ...ca,
        ...["--valid-for", "72h"],
      ]);
      assertMatch(h.json.conditions[0]!.last_error, /less than --valid-for 3d$/);
    });

    await t.step("expired and not-yet-valid certificates", async () => {
      await expectJson([...SHORT, "tls", `localhost:${expired.port}`, ...ca], {
        code: 1,
        error: `certificate expired on ${leaves.expired.notAfter.toISOString()}`,
      });
      await expectJson([...SHORT, "tls", `localhost:${future.port}`, ...ca], {
        code: 1,
        error: `certificate is not yet valid (valid from ${leaves.future.notBefore.toISOString()})`,
      });
    });

    await t.step("the name: DNS against DNS SANs, IP against IP SANs, --servername", async () => {
      await expectJson([...FAST, "tls", `127.0.0.1:${main.port}`, ...ca], {
        code: 0,
        detail: /^certificate for 127\.0\.0\.1 valid until/,
      });
      await expectJson([...SHORT, "tls", `127.0.0.1:${dnsOnly.port}`, ...ca], {
        code: 1,
        error: "certificate name does not match 127.0.0.1: it is for DNS:localhost",
      });
      await expectJson(
        [...FAST, ...["tls", `127.0.0.1:${dnsOnly.port}`], ...ca, ...["--servername", "localhost"]],
        { code: 0 },
      );
      await expectJson(
        [...FAST, ...["tls", `127.0.0.1:${main.port}`], ...ca, ...["--servername", "api.test"]],
        { code: 0, detail: /^certificate for api\.test valid until/ },
      );
      await expectJson([
        ...SHORT,
        ...["tls", `127.0.0.1:${main.port}`],
        ...ca,
        ...["--servername", "other.test"],
      ], {
        code: 1,
        error: /^certificate name does not match other\.test: it is for DNS:localhost/,
      });
    });

    await t.step(
      "--extra-ca-file trusts its CA besides the default roots; the default roots alone do not",
      async () => {
        const at = ["tls", `localhost:${main.port}`];
        await expectJson([...FAST, ...at, "--extra-ca-file", pki.ca.certFile], {
          code: 0,
          detail: /^certificate for localhost valid until /,
        });
        await expectJson([...SHORT, ...at], {
          code: 1,
          error: /^certificate chain not trusted: /,
        });
        // The default roots are kept: made to hold the run's CA (the system store, read from
        // SSL_CERT_FILE), an unrelated --extra-ca-file still verifies; --ca-file alone does not.
        const other = await makePki({ server: { dnsNames: ["other.test"] } });
        try {
          // An unrelated extra CA does not make the run's certificate trusted.
          await expectJson([...SHORT, ...at, "--extra-ca-file", other.ca.certFile], {
            code: 1,
            error: /^certificate chain not trusted: /,
          });
          const env = { DENO_TLS_CA_STORE: "system", SSL_CERT_FILE: pki.ca.certFile };
          await expectJson([...FAST, ...at, "--extra-ca-file", other.ca.certFile], {
            code: 0,
          }, { env });
          await expectJson([...SHORT, ...at, "--ca-file", other.ca.certFile], {
            code: 1,
            error: /^certificate chain not trusted: /,
          }, { env });
        } finally {
          await other.cleanup();
        }
        // A CA written late (a secrets sidecar): pending while it cannot be read.
        const late = `${pki.dir}/late-ca.pem`;
        const r = await runLate(
          [...FAST, ...at, "--extra-ca-file", late],
          () => Deno.copyFile(pki.ca.certFile, late),
        );
        assertEquals([r.code, r.report.status], [0, "satisfied"]);
        assertEquals(
          r.attempts[0]!.error,
          `cannot read --extra-ca-file ${late}: no such file or directory`,
        );
      },
    );

    await t.step("connection errors and a missing --ca-file", async () => {
      const l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
      const port = (l.addr as Deno.NetAddr).port;
      l.close();
      await expectJson([...SHORT, "tls", `127.0.0.1:${port}`], {
        code: 1,
        error: "connection refused",
      });
      const missing = `${pki.dir}/none.pem`;
      const m = await runJson([...SHORT, "tls", `localhost:${main.port}`, "--ca-file", missing]);
      assertEquals(
        m.json.conditions[0]!.last_error,
        `cannot read --ca-file ${missing}: no such file or directory`,
      );
    });

    await t.step({
      name: "localhost reaches a server listening on ::1 only",
      ignore: ignoreWithout("an IPv6 loopback", noIpv6),
      fn: async () => {
        const v6 = Deno.serve({
          hostname: "::1",
          port: 0,
          cert: pki.server.chainPem,
          key: pki.server.keyPem,
          onListen: () => {},
        }, () => new Response("ok"));
        try {
          const r = await runJson([...FAST, "tls", `localhost:${v6.addr.port}`, ...ca]);
          assertEquals(r.code, 0, r.stdout);
          assertMatch(r.json.conditions[0]!.detail, /^certificate for localhost valid until/);
        } finally {
          await v6.shutdown();
        }
      },
    });

    await t.step("a plain-TCP server that never answers hits --attempt-timeout", async () => {
      const silent = await startSilentTcp();
      try {
        await expectJson([
          ...SHORT,
          ...["--attempt-timeout", "300ms", "tls", `127.0.0.1:${silent.port}`],
        ], { code: 1, error: "attempt timed out after 300ms" });
      } finally {
        await silent.stop();
      }
    });
  } finally {
    for (const s of servers) await s.stop();
    await pki.cleanup();
  }
});

Deno.test("tls kind rejects every malformed value with exit 2 before probing", () =>
  assertKindUsageErrors("tls", USAGE));
