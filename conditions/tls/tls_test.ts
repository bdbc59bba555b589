import { assertEquals } from "../../tests/_assert.ts";
import { conditionOf, optionsOf } from "../../tests/_kit.ts";
import { stepUsageErrors } from "../../tests/_suite.ts";
import { type CertFacts, formatLeft, judgeCertificate, nameMatches } from "./judge.ts";
import type { TlsOptions } from "./mod.ts";

const NOW = new Date("2026-06-01T00:00:00Z");
const CERT: CertFacts = {
  notBefore: new Date("2026-05-01T00:00:00Z"),
  notAfter: new Date("2026-07-12T06:00:00Z"),
  subjectAltName:
    "DNS:api.example.com, DNS:*.apps.example.com, IP Address:10.0.0.5, IP Address:0:0:0:0:0:0:0:1",
  trusted: true,
  trustError: undefined,
};

Deno.test("judgeCertificate() is satisfied by a trusted, matching, long-lived certificate", () => {
  assertEquals(
    judgeCertificate(CERT, { name: "api.example.com", validForMs: 30 * 86_400_000 }, NOW),
    {
      status: "satisfied",
      detail: "certificate for api.example.com valid until 2026-07-12 (41d left)",
    },
  );
});

Deno.test("judgeCertificate() names the failed check", async (t) => {
  const want = { name: "api.example.com", validForMs: undefined };
  const rows: [string, CertFacts, { name: string; validForMs: number | undefined }, string][] = [
    [
      "not yet valid",
      { ...CERT, notBefore: new Date("2026-06-02T00:00:00Z") },
      want,
      "certificate is not yet valid (valid from 2026-06-02T00:00:00.000Z)",
    ],
    [
      "expired",
      { ...CERT, notAfter: new Date("2026-05-31T00:00:00Z") },
      want,
      "certificate expired on 2026-05-31T00:00:00.000Z",
    ],
    [
      "untrusted",
      { ...CERT, trusted: false, trustError: "SELF_SIGNED_CERT_IN_CHAIN" },
      want,
      "certificate chain not trusted: self-signed certificate in the chain",
    ],
    [
      "odd trust code",
      { ...CERT, trusted: false, trustError: "CERT_CHAIN_TOO_LONG" },
      want,
      "certificate chain not trusted: cert chain too long",
    ],
    [
      "other name",
      CERT,
      { name: "www.example.com", validForMs: undefined },
      `certificate name does not match www.example.com: it is for ${CERT.subjectAltName}`,
    ],
    [
      "no SANs",
      { ...CERT, subjectAltName: "" },
      want,
      "certificate name does not match api.example.com: it has no subject alternative names",
    ],
    [
      "too short",
      CERT,
      { name: "api.example.com", validForMs: 60 * 86_400_000 },
      "certificate expires in 41d (2026-07-12), less than --valid-for 60d",
    ],
  ];
  for (const [label, cert, w, error] of rows) {
    await t.step(label, () => {
      const result = judgeCertificate(cert, w, NOW);
      assertEquals(result.status === "pending" ? result.error : result, error);
    });
  }
  // A name mismatch says what to do (docs/contract.md §6, hints).
  assertEquals(
    judgeCertificate(CERT, { name: "www.example.com", validForMs: undefined }, NOW),
    {
      status: "pending",
      error: `certificate name does not match www.example.com: it is for ${CERT.subjectAltName}`,
      hint: `the certificate is for ${
        CERT.subjectAltName.split(", ").map((n) => n.replace(/^(DNS|IP Address):/, "")).join(", ")
      }: connect by one of its names, or give the server one for www.example.com`,
    },
  );
});

Deno.test("nameMatches() compares DNS names with DNS SANs and IPs with IP SANs", () => {
  const san = CERT.subjectAltName;
  assertEquals(nameMatches("API.example.com.", san), true);
  assertEquals(nameMatches("web.apps.example.com", san), true);
  assertEquals(nameMatches("a.web.apps.example.com", san), false);
  assertEquals(nameMatches("apps.example.com", san), false);
  assertEquals(nameMatches("10.0.0.5", san), true);
  assertEquals(nameMatches("10.0.0.6", san), false);
  assertEquals(nameMatches("::1", san), true);
  assertEquals(nameMatches("[::1]", san), true);
  assertEquals(nameMatches("10.0.0.5", "DNS:10.0.0.5"), false);
  assertEquals(nameMatches("localhost", "IP Address:127.0.0.1"), false);
});

Deno.test("formatLeft() rounds remaining time down to one unit", () => {
  assertEquals([
    formatLeft(41.9 * 86_400_000),
    formatLeft(13 * 3_600_000),
    formatLeft(150_000),
    formatLeft(5_500),
  ], [
    "41d",
    "13h",
    "2m",
    "5s",
  ]);
});

Deno.test("tls parse() reports malformed values as usage errors", async (t) => {
  await stepUsageErrors(t, "tls");
  assertEquals(conditionOf(["tls", "example.com"]).name, "tls example.com:443");
});

Deno.test("tls parse() returns plain options", () => {
  assertEquals(
    optionsOf<TlsOptions>([
      ...["tls", "[::1]", "--servername", "api.test", "--ca-file", "ca.pem", "--valid-for", "1d"],
    ]),
    {
      hp: { hostname: "::1", port: 443 },
      servername: "api.test",
      caFile: "ca.pem",
      extraCaFile: undefined,
      validForMs: 86_400_000,
    },
  );
  assertEquals(
    optionsOf<TlsOptions>(["tls", "h", "--extra-ca-file", "corp.pem"]).extraCaFile,
    "corp.pem",
  );
  assertEquals(conditionOf(["tls", "[::1]:8443"]).name, "tls [::1]:8443");
});
