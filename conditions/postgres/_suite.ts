/**
 * The postgres kind's part of the shared suites (tests/_suite.ts): its dead target for
 * tests/conformance/conformance_test.ts and its live row for tests/conformance/live_test.ts.
 *
 * @module
 */

import { makePostgres, PG_PASSWORD, postgresMissing } from "./_service.ts";
import { DEAD_MARK, type KindSuite, loginRow } from "../../tests/_suite.ts";

/** What the shared suites run for this kind. */
export const suite: KindSuite = {
  // Its probes run a third-party protocol or parser: in a worker of their own.
  isolated: true,
  dead: () => ({ args: ["postgres", `postgres://app:${DEAD_MARK}@127.0.0.1:1/app`] }),
  live: loginRow("postgres", {
    needs: "PostgreSQL",
    missing: postgresMissing,
    make: makePostgres,
    password: PG_PASSWORD,
    detail: /SELECT 1 answered as app@app/,
    pending: [["--query", "SELECT state FROM status"], 'relation "status" does not exist'],
    refused: 'password authentication failed for user "app"',
    // The server's text names the user: said once.
    wrongError: 'password authentication failed for user "app"',
    grant: (pg) => ({
      url: pg.url("late1", "late-pw-1", "postgres"),
      add: () => pg.psql("CREATE ROLE late1 LOGIN PASSWORD 'late-pw-1'"),
    }),
    bare: (pg) => `postgres://app@127.0.0.1:${pg.port}/app`,
    usage: ["--expect", "x"],
    tls: (pg, pki, other) => {
      const byIp = (q = "") => `${pg.url()}${q}`;
      const byName = (q = "") => `postgres://app:${PG_PASSWORD}@localhost:${pg.port}/app${q}`;
      return {
        satisfied: [
          [byName(), "--tls", "--ca-file", pki.ca.certFile],
          [byName("?sslmode=verify-full"), "--ca-file", pki.ca.certFile],
          [byIp("?sslmode=verify-ca"), "--ca-file", pki.ca.certFile],
          [byIp("?sslmode=require")],
          [byIp("?sslmode=prefer")],
          [byIp(), "--tls", "--insecure"],
        ],
        detail: "SELECT 1 answered as app@app over TLS",
        pending: [
          [
            [byIp(), "--tls", "--ca-file", pki.ca.certFile],
            "certificate is not valid for 127.0.0.1",
          ],
          [
            [byName("?sslmode=verify-full"), "--ca-file", other.ca.certFile],
            "certificate not trusted (unable to verify the first certificate)",
          ],
          [[byName(), "--tls"], "certificate not trusted (unable to verify the first certificate)"],
        ],
      };
    },
  }),
};
