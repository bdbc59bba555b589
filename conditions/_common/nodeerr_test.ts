import { assertEquals } from "../../tests/_assert.ts";
import { describeNodeError, tlsReason, trustReason } from "./nodeerr.ts";

Deno.test("tlsReason() gives one text per failure, from a code or from node:tls's message", () => {
  const cases: [string, string | undefined][] = [
    ["SELF_SIGNED_CERT_IN_CHAIN", "certificate not trusted (self-signed certificate in the chain)"],
    [
      "self-signed certificate in certificate chain",
      "certificate not trusted (self-signed certificate in the chain)",
    ],
    ["self signed certificate", "certificate not trusted (self-signed certificate)"],
    [
      "Unable to verify the first certificate.",
      "certificate not trusted (unable to verify the first certificate)",
    ],
    ["unable to get local issuer certificate", "certificate not trusted (unknown issuer)"],
    ["UNABLE_TO_GET_ISSUER_CERT", "certificate not trusted (unknown issuer)"],
    ["CERT_REVOKED", "certificate not trusted (certificate revoked)"],
    ["certificate has expired", "certificate has expired"],
    ["CERT_NOT_YET_VALID", "certificate is not yet valid"],
    ["ERR_TLS_CERT_ALTNAME_INVALID", "certificate is not valid for db.example"],
    [
      "Hostname/IP does not match certificate's altnames: Host: x.",
      "certificate is not valid for db.example",
    ],
    ["ECONNREFUSED", undefined],
    ["wrong version number", undefined],
    ["hasOwnProperty", undefined],
  ];
  for (const [input, want] of cases) assertEquals(tlsReason(input, "db.example"), want, input);
});

Deno.test("describeNodeError() and the tls kind's trust reason take the same words", () => {
  assertEquals(
    describeNodeError({ code: "DEPTH_ZERO_SELF_SIGNED_CERT" }, "h"),
    "certificate not trusted (self-signed certificate)",
  );
  assertEquals(
    describeNodeError({ code: "ERR_TLS_CERT_ALTNAME_INVALID" }, "h"),
    "certificate is not valid for h",
  );
  assertEquals(trustReason("DEPTH_ZERO_SELF_SIGNED_CERT"), "self-signed certificate");
  assertEquals(trustReason("SOME_NEW_CODE"), "some new code");
  assertEquals(trustReason(undefined), "unknown reason");
});
