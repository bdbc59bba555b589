/**
 * The objstore kind's part of the shared suites (tests/_suite.ts): its dead target for
 * tests/conformance/conformance_test.ts, its live row for tests/conformance/live_test.ts, and its
 * usage errors (its unit test checks them on parse, its e2e test through the CLI).
 *
 * @module
 */

import { buildMissing } from "../../tests/services/_util.ts";
import { buildVersitygw, startS3 } from "./_service.ts";
import { DEAD_MARK, type KindSuite, MARK } from "../../tests/_suite.ts";

/** What the shared suites run for this kind. */
export const suite: KindSuite = {
  // Its probes run a third-party protocol or parser: in a worker of their own.
  isolated: true,
  dead: (d) => ({
    args: [
      ...["objstore", "objstore://bucket/key"],
      ...["--endpoint-url", `http://127.0.0.1:${d.silentTcp}`, "--access-key-id", "AKID"],
      ...["--secret-access-key", DEAD_MARK],
    ],
  }),
  live: {
    needs: "versitygw (S3)",
    missing: () => buildMissing(buildVersitygw),
    async make() {
      const s3 = await startS3();
      await s3.createBucket("live");
      const args = (key: string, secret: string) => [
        ...["objstore", `objstore://live/${key}`, "--endpoint-url", s3.endpoint],
        ...["--access-key-id", s3.accessKeyId, "--secret-access-key", secret],
      ];
      const exists = () => s3.headObject("live", "ready.txt").then(() => true, () => false);
      return {
        satisfied: args("ready.txt", s3.secretAccessKey),
        detail: /object 6 B, etag ".*"/,
        pending: [...args("ready.txt", s3.secretAccessKey), "--contains", "never"],
        pendingError: 'does not contain "never"',
        up: async () => {
          if (!(await exists())) await s3.putObject("live", "ready.txt", "ready\n");
        },
        down: () => s3.deleteObject("live", "ready.txt"),
        downError: /does not exist/,
        wrong: {
          args: args("ready.txt", MARK),
          error: "credentials refused (403 SignatureDoesNotMatch)",
        },
        secrets: [MARK, s3.secretAccessKey],
        usage: [...args("ready.txt", MARK), "--metadata", "novalue"],
        remove: () => s3.stop(),
      };
    },
  },
  usage: [
    [["s3", "bkt/k"], 'expected objstore://BUCKET/KEY or s3://BUCKET/KEY, got "bkt/k"'],
    [["s3", "bucket/key"], 'expected objstore://BUCKET/KEY or s3://BUCKET/KEY, got "bucket/key"'],
    [
      ["objstore", "objstore://bkt", "--metadata", "a=b"],
      "--metadata: needs an object key in the target (objstore://BUCKET/KEY)",
    ],
    [
      ["s3", "s3://items", "--metadata", "a=b"],
      "--metadata: needs an object key in the target (objstore://BUCKET/KEY)",
    ],
    [
      ["objstore", "objstore://bkt", "--contains", "x"],
      "--contains: needs an object key in the target (objstore://BUCKET/KEY)",
    ],
    [
      ["s3", "s3://items", "--contains", "x"],
      "--contains: needs an object key in the target (objstore://BUCKET/KEY)",
    ],
    [
      ["s3", "s3://bkt/k", "--metadata", "novalue"],
      '--metadata: expected NAME=VALUE like build=42, got "novalue"',
    ],
    [
      ["s3", "s3://items/k", "--metadata", "nameonly"],
      '--metadata: expected NAME=VALUE like build=42, got "nameonly"',
    ],
    [
      ["s3", "s3://bkt/k", "--metadata", "a=1", "--metadata", "A=2"],
      '--metadata: "a" is given twice with different values',
    ],
    [["s3", "s3://bkt/k", "--contains", ""], "--contains: expected a text, got an empty string"],
    [
      ["s3", "s3://bkt/k", "--endpoint-url", "ftp://x"],
      '--endpoint-url: expected an http(s) URL like http://localhost:9000, got "ftp://x"',
    ],
    [
      ["s3", "s3://items/k", "--endpoint-url", "localhost:9000"],
      '--endpoint-url: expected an http(s) URL like http://localhost:9000, got "localhost:9000"',
    ],
    [
      ["s3", "s3://bkt/k"],
      'CLOUD_ENDPOINT_URL: expected an http(s) URL like http://localhost:9000, got "not a url"',
      { "CLOUD_ENDPOINT_URL": "not a url" },
    ],
    [
      ["s3", "s3://bkt/k", "--endpoint-url", "http://user:pw@host:9000"],
      "--endpoint-url: the endpoint URL must not carry credentials; use --access-key-id",
    ],
    [
      ["s3", "s3://bkt/k", "--virtual-hosted-style"],
      "--virtual-hosted-style: only applies with --endpoint-url or CLOUD_ENDPOINT_URL_S3, CLOUD_ENDPOINT_URL, S3_ENDPOINT_URL",
    ],
    [
      ["s3", "s3://bkt/k", "--region", "eu west"],
      '--region: expected a region like us-east-1, got "eu west"',
    ],
    [
      ["s3", "s3://bkt/k", "--access-key-id", "A"],
      "--access-key-id: needs a secret access key too (--secret-access-key or CLOUD_SECRET_ACCESS_KEY)",
    ],
    [
      ["s3", "s3://bkt/k"],
      "CLOUD_SECRET_ACCESS_KEY: needs an access key id too (--access-key-id or CLOUD_ACCESS_KEY_ID)",
      { "CLOUD_SECRET_ACCESS_KEY": "S" },
    ],
    [
      ["s3", "s3://items/k", "--secret-access-key", "s3cr3t-value"],
      "--secret-access-key: needs an access key id too (--access-key-id or CLOUD_ACCESS_KEY_ID)",
    ],
    [
      ["s3", "s3://bkt/k", "--session-token", "T"],
      "--session-token: needs an access key id and a secret access key too",
    ],
    [
      ["s3", "s3://bkt/k", "--profile", "ci", "--access-key-id", "A"],
      "--profile: cannot be combined with --access-key-id",
    ],
  ],
};
