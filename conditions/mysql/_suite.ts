/**
 * The mysql kind's part of the shared suites (tests/_suite.ts): its dead target for
 * tests/conformance/conformance_test.ts and its live row for tests/conformance/live_test.ts.
 *
 * @module
 */

import { makeMariadb, mariadbMissing, MY_PASSWORD } from "./_service.ts";
import { DEAD_MARK, type KindSuite, loginRow } from "../../tests/_suite.ts";

/** What the shared suites run for this kind. */
export const suite: KindSuite = {
  // Its probes run a third-party protocol or parser: in a worker of their own.
  isolated: true,
  dead: () => ({
    args: ["mysql", "mysql://app@127.0.0.1:1/app", "--password-env", "CONF_PW"],
    env: { CONF_PW: DEAD_MARK },
  }),
  live: loginRow("mysql", {
    needs: "MariaDB",
    missing: mariadbMissing,
    make: makeMariadb,
    password: MY_PASSWORD,
    detail: /SELECT 1 answered as app@app/,
    pending: [["--query", "SELECT state FROM status"], "Table 'app.status' doesn't exist"],
    refused: "Access denied for user 'app'@'127.0.0.1' (using password: YES)",
    wrongError: `authentication failed for user "app" from '127.0.0.1' (using password: YES)`,
    grant: (db) => ({
      url: db.url("late1", "late-pw-1", ""),
      add: () => db.sql("CREATE USER 'late1'@'%' IDENTIFIED BY 'late-pw-1'"),
    }),
    bare: (db) => `mysql://app@127.0.0.1:${db.port}/app`,
    usage: ["--min-rows", "1"],
    tls: (db, pki, other) => {
      const byIp = db.url();
      const byName = `mysql://app:${MY_PASSWORD}@localhost:${db.port}/app`;
      return {
        satisfied: [[byName, "--tls", "--ca-file", pki.ca.certFile], [byIp, "--tls", "--insecure"]],
        detail: "SELECT 1 answered as app@app over TLS",
        pending: [
          [[byIp, "--tls", "--ca-file", pki.ca.certFile], "certificate is not valid for 127.0.0.1"],
          [
            [byName, "--tls", "--ca-file", other.ca.certFile],
            "certificate not trusted (unable to verify the first certificate)",
          ],
          [
            [byName, "--tls"],
            "certificate not trusted (self-signed certificate in the chain)",
          ],
        ],
      };
    },
  }),
};
