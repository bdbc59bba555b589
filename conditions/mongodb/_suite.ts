/**
 * The mongodb kind's part of the shared suites (tests/_suite.ts): its dead target for
 * tests/conformance/conformance_test.ts, its live row for tests/conformance/live_test.ts, and its
 * usage errors (its unit test checks them on parse, its e2e test through the CLI).
 *
 * @module
 */

import { FERRET_PASSWORD, ferretMissing, makeFerret } from "./_service.ts";
import { DEAD_MARK, type KindSuite, loginRow } from "../../tests/_suite.ts";

/** What the shared suites run for this kind. */
export const suite: KindSuite = {
  // Its probes run a third-party protocol or parser: in a worker of their own.
  isolated: true,
  dead: (d) => ({ args: ["mongodb", `mongodb://app:${DEAD_MARK}@127.0.0.1:${d.silentTcp}/app`] }),
  live: loginRow("mongodb", {
    needs: "FerretDB (a MongoDB-wire server with SCRAM logins and TLS; not mongod)",
    missing: ferretMissing,
    make: ({ start, tls }) =>
      makeFerret({
        start,
        tls: tls && { certFile: tls.certFile, keyFile: tls.keyFile },
      }),
    password: FERRET_PASSWORD,
    detail: /ping ok: MongoDB 7\.0\.42, standalone/,
    // FerretDB answers as a standalone (no replica set is named at its start here).
    pending: [
      ["--replica-set", "rs0"],
      'not a member of a replica set: standalone, expected "rs0"',
    ],
    refused: "Authentication failed.",
    grant: (f) => ({
      url: f.url("late1", "late-pw-1"),
      add: () => f.command("app", { createUser: "late1", pwd: "late-pw-1", roles: [] }),
    }),
    bare: (f) => `mongodb://app@127.0.0.1:${f.port}/app`,
    usage: ["--ca-file", "ca.pem"],
    // An attempt that meets a bad certificate ends when the driver's server selection gives up
    // (2 s, docs/contract.md §5 mongodb): two of them need more than 1s.
    deadline: "3s",
    tls: (f, pki, other) => {
      const byIp = f.url();
      const byName = `mongodb://app:${encodeURIComponent(FERRET_PASSWORD)}@localhost:${f.port}/app`;
      const ca = pki.ca.certFile;
      return {
        satisfied: [
          [byName, "--tls", "--ca-file", ca],
          [`${byName}?tls=true&tlsCAFile=${encodeURIComponent(ca)}`],
          [byIp, "--tls", "--insecure"],
        ],
        detail: "ping ok: MongoDB 7.0.42, standalone",
        pending: [
          [
            [byIp, "--tls", "--ca-file", ca],
            `certificate is not valid for 127.0.0.1 (127.0.0.1:${f.port})`,
          ],
          [
            [byName, "--tls", "--ca-file", other.ca.certFile],
            `certificate not trusted (unable to verify the first certificate) (localhost:${f.port})`,
          ],
        ],
      };
    },
  }),
  usage: [
    [
      ["mongodb", "postgres://h"],
      'expected mongodb://[user[:password]@]host[:port][,host[:port]...][/db][?options] or mongodb+srv://..., got "postgres://h"',
    ],
    [["mongodb", "mongodb://"], 'the host is missing in "mongodb://"'],
    [["mongodb", "mongodb://a,,b"], 'the host is missing in "mongodb://a,,b"'],
    [
      ["mongodb", "mongodb+srv://a,b"],
      'mongodb+srv:// takes one host name without a port, got "mongodb+srv://a,b"',
    ],
    [
      ["mongodb", "mongodb+srv://c.example.net:27017"],
      'mongodb+srv:// takes one host name without a port, got "mongodb+srv://c.example.net:27017"',
    ],
    [["mongodb", "mongodb://:pw@h"], "the URI has a password but no user"],
    [
      ["mongodb", "mongodb://h", "--password-env", "PW"],
      "--password-env: needs a user in the URI (mongodb://USER@host/)",
      { "PW": "x" },
    ],
    [
      ["mongodb", "mongodb://u:p@h", "--password-file", "f"],
      "--password-file: cannot be combined with a password in the URI",
    ],
    [
      ["mongodb", "mongodb://h", "--ca-file", "ca.pem"],
      "--ca-file: needs --tls, tls=true in the URI or mongodb+srv://",
    ],
    [["mongodb", "mongodb://h/?tls=false", "--tls"], "--tls: cannot be combined with tls=false"],
    [
      ["mongodb", "mongodb://h", "--replica-set", ""],
      "--replica-set: expected a replica set name, got an empty string",
    ],
  ],
};
