import { assertEquals } from "../../tests/_assert.ts";
import {
  certificateNameHint,
  httpAuthHint,
  missingSocketHint,
  nodeErrorHint,
  noSuchHostHint,
  otherFamilyHint,
} from "./hints.ts";

Deno.test("otherFamilyHint() names the family that listens and the addresses to use", () => {
  assertEquals(
    otherFamilyHint("127.0.0.1", "::1", 8080),
    "the server listens on IPv6 only ([::1]:8080 accepts, 127.0.0.1:8080 refuses): connect to [::1]:8080 or localhost:8080",
  );
  assertEquals(
    otherFamilyHint("::1", "127.0.0.1", 5432),
    "the server listens on IPv4 only (127.0.0.1:5432 accepts, [::1]:5432 refuses): connect to 127.0.0.1:5432 or localhost:5432",
  );
});

Deno.test("certificateNameHint() lists the certificate's names from the cert or Node's reason", () => {
  const want =
    "the certificate is for a.test, 10.0.0.1: connect by one of its names, or give the server one for b.test";
  assertEquals(
    certificateNameHint("b.test", { cert: { subjectaltname: "DNS:a.test, IP Address:10.0.0.1" } }),
    want,
  );
  const reason = {
    code: "ERR_TLS_CERT_ALTNAME_INVALID",
    reason: "Host: b.test. is not in the cert's altnames: DNS:a.test, IP Address:10.0.0.1",
  };
  assertEquals(nodeErrorHint(reason, "b.test"), want);
  assertEquals(nodeErrorHint({ code: "ECONNREFUSED" }, "b.test"), undefined);
  assertEquals(
    certificateNameHint("b.test", {}),
    "the certificate is for other names: connect by one of its names, or give the server one for b.test",
  );
});

Deno.test("httpAuthHint() tells 401 without and with credentials from 403, nothing else", () => {
  assertEquals(
    httpAuthHint(401, false, 'Basic realm="x"'),
    "the server wants credentials (it asks for Basic): send them with --header-env or --basic-auth-env",
  );
  assertEquals(
    httpAuthHint(401, true),
    "the server refused the credentials sent: check the token or password",
  );
  assertEquals(
    httpAuthHint(403, true),
    "the credentials lack the permission, or the server refuses this client",
  );
  assertEquals(httpAuthHint(503, false), undefined);
  assertEquals(
    noSuchHostHint("db"),
    "check the name db; Compose and Kubernetes service names resolve only inside their network",
  );
  assertEquals(
    missingSocketHint("/run/x.sock"),
    "nothing at /run/x.sock: its server is not running, or listens elsewhere",
  );
});
