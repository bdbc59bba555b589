/**
 * objstore end to end: the CLI against a real S3 server (versitygw, which
 * verifies SigV4 signatures and keeps custom metadata; conditions/objstore/_service.ts).
 * Buckets and objects are made with a real signing client.
 */

import { assert, assertEquals, assertMatch, assertStringIncludes } from "../../tests/_assert.ts";
import { ignoreWithout } from "../../tests/_kit.ts";
import { type UsageRow, usageRows } from "../../tests/_suite.ts";
import { ServiceUnavailableError } from "../../tests/services/_util.ts";
import { buildVersitygw, type S3Env, startS3 } from "./_service.ts";
import { startSilentTcp } from "../../tests/services/sshd.ts";
import {
  assertKindUsageErrors,
  assertOutcome,
  expectJson,
  runJson,
  runLate,
  timing,
} from "../../tests/e2e/_cli.ts";

/** The kind's usage errors, from its folder (conditions/objstore/_suite.ts). */
const USAGE = await usageRows("objstore");

const FAST = ["--timeout", "10s", "--interval", "200ms"];
/** For runs that must end in a timeout. */
const SHORT = ["--timeout", "1500ms", "--interval", "200ms"];

/**
 * An environment with no credentials or endpoints of the machine leaking in:
 * no AWS_* keys, no profiles, no instance metadata lookups.
 */
const CLEAN: Record<string, string> = {
  AWS_ACCESS_KEY_ID: "",
  AWS_SECRET_ACCESS_KEY: "",
  AWS_SESSION_TOKEN: "",
  AWS_PROFILE: "",
  AWS_REGION: "",
  AWS_DEFAULT_REGION: "",
  AWS_CONFIG_FILE: "/nonexistent/aws-config",
  AWS_SHARED_CREDENTIALS_FILE: "/nonexistent/aws-credentials",
  AWS_EC2_METADATA_DISABLED: "true",
  AWS_WEB_IDENTITY_TOKEN_FILE: "",
  AWS_CONTAINER_CREDENTIALS_RELATIVE_URI: "",
  AWS_CONTAINER_CREDENTIALS_FULL_URI: "",
  AWS_ENDPOINT_URL: "",
  AWS_ENDPOINT_URL_S3: "",
  S3_ENDPOINT_URL: "",
  CLOUD_ENDPOINT_URL: "",
  CLOUD_ENDPOINT_URL_S3: "",
  CLOUD_ACCESS_KEY_ID: "",
  CLOUD_SECRET_ACCESS_KEY: "",
  CLOUD_SESSION_TOKEN: "",
  CLOUD_REGION: "",
};

/** Why the suite cannot build versitygw here, or undefined when it can. */
let whyMissing: string | undefined;
try {
  await buildVersitygw();
} catch (e) {
  if (!(e instanceof ServiceUnavailableError)) throw e;
  whyMissing = e.message;
}

Deno.test({
  name: "objstore against a real S3 server (versitygw)",
  ignore: ignoreWithout("versitygw", whyMissing),
  sanitizeOps: false,
  sanitizeResources: false,
  async fn(t) {
    const s3: S3Env = await startS3();
    /** Credentials and endpoint through the CLOUD_* variables. */
    const env = {
      ...CLEAN,
      CLOUD_ACCESS_KEY_ID: s3.accessKeyId,
      CLOUD_SECRET_ACCESS_KEY: s3.secretAccessKey,
      CLOUD_ENDPOINT_URL: s3.endpoint,
    };
    const noSecrets = (text: string) => {
      assert(!text.includes(s3.secretAccessKey), "the secret access key never appears");
    };
    try {
      await s3.createBucket("items");
      const etag = await s3.putObject("items", "dir/a.txt", "hello world", {
        build: "42",
        owner: "ci",
      });

      await t.step("matching metadata holds; the JSON report has the fields", async () => {
        const r = await expectJson(
          [
            ...FAST,
            ...["s3", "s3://items/dir/a.txt", "--metadata", "build=42", "--metadata", "Owner=ci"],
          ],
          { code: 0, status: "satisfied", stderr: "" },
          { env },
        );
        const c = r.json.conditions[0]!;
        assertEquals(c.name, "s3 s3://items/dir/a.txt");
        assertEquals(c.kind, "objstore");
        assertEquals(c.target, "s3://items/dir/a.txt");
        assertEquals(c.satisfied, true);
        assertEquals(c.attempts, 1);
        assertEquals(c.detail, `object 11 B, etag ${etag}, metadata matched`);
        assertEquals(c.last_error, "");
      });

      await t.step("mismatching metadata stays pending and says what differs", async () => {
        const r = await expectJson(
          [
            ...SHORT,
            ...["s3", "s3://items/dir/a.txt", "--metadata", "build=41", "--metadata", "stage=prod"],
          ],
          { code: 1, status: "timeout", stderr: "" },
          { env },
        );
        const c = r.json.conditions[0]!;
        assertEquals(c.satisfied, false);
        assertEquals(
          c.last_error,
          `object 11 B, etag ${etag}; metadata build is "42", want "41"; metadata stage is not set, want "prod"`,
        );
      });

      await t.step("metadata set later (object replaced) makes it hold", async () => {
        const e1 = await s3.putObject("items", "meta/late.txt", "v1", { build: "1" });
        let e2: string | undefined;
        const r = await runLate(
          [...FAST, "s3", "s3://items/meta/late.txt", "--metadata", "build=2"],
          async () => {
            e2 = await s3.putObject("items", "meta/late.txt", "v2", { build: "2" });
          },
          env,
        );
        assertOutcome(r, {
          code: 0,
          firstError: `object 2 B, etag ${e1}; metadata build is "1", want "2"`,
          detail: `object 2 B, etag ${e2}, metadata matched`,
        });
      });

      await t.step("--contains reads the body", async () => {
        await expectJson([...FAST, "s3", "s3://items/dir/a.txt", "--contains", "o w"], {
          code: 0,
          detail: `object 11 B, etag ${etag}, contains "o w"`,
        }, {
          env,
        });
        await expectJson([...SHORT, "s3", "s3://items/dir/a.txt", "--contains", "bye"], {
          code: 1,
          error: `object 11 B, etag ${etag}; does not contain "bye"`,
        }, {
          env,
        });
      });

      await t.step(
        "--contains reads at most 10 MiB; an empty object contains nothing",
        async () => {
          const big = new Uint8Array((10 << 20) + 64).fill(0x61);
          big.set(new TextEncoder().encode("NEEDLE"), 10 << 20);
          big.set(new TextEncoder().encode("EARLY"), (10 << 20) - 5);
          const bigTag = await s3.putObject("items", "big.bin", big);
          await expectJson([...SHORT, "s3", "s3://items/big.bin", "--contains", "NEEDLE"], {
            code: 1,
            error:
              `object 10.0 MiB, etag ${bigTag}; does not contain "NEEDLE" in its first 10.0 MiB`,
          }, {
            env,
          });
          await expectJson([...FAST, "s3", "s3://items/big.bin", "--contains", "EARLY"], {
            code: 0,
          }, {
            env,
          });
          const emptyTag = await s3.putObject("items", "empty", new Uint8Array(0));
          await expectJson([...SHORT, "s3", "s3://items/empty", "--contains", "x"], {
            code: 1,
            error: `object 0 B, etag ${emptyTag}; does not contain "x"`,
          }, {
            env,
          });
        },
      );

      await t.step("a wrong secret from CLOUD_SECRET_ACCESS_KEY names its source", async () => {
        const wrong = s3.secretAccessKey.slice(0, -4) + "beef";
        const r = await expectJson([...SHORT, "s3", "s3://items/dir/a.txt"], {
          code: 1,
          status: "timeout",
          error:
            `credentials refused (403 SignatureDoesNotMatch): the secret access key does not match access key id ${s3.accessKeyId} (from CLOUD_* variables)`,
        }, {
          env: { ...env, CLOUD_SECRET_ACCESS_KEY: wrong },
        });
        assert(!r.stdout.includes(wrong), "the wrong secret never appears");
      });

      await t.step("an unknown access key id is refused too", async () => {
        await expectJson([...SHORT, "s3", "s3://items/dir/a.txt"], {
          code: 1,
          error:
            "credentials refused (404 XAdminUserNotFound): unknown access key id AKNOBODY (from CLOUD_* variables)",
        }, {
          env: { ...env, CLOUD_ACCESS_KEY_ID: "AKNOBODY" },
        });
      });

      await t.step("a bucket-only target waits for the bucket", async () => {
        await expectJson([...FAST, "objstore", "objstore://items"], {
          code: 0,
          detail: "bucket items exists",
        }, { env });
        await expectJson([...SHORT, "objstore", "objstore://nothere"], {
          code: 1,
          error: 'bucket "nothere" does not exist',
        }, { env });
        const late = await runLate(
          [...FAST, "s3", "s3://latebucket/"],
          () => s3.createBucket("latebucket"),
          env,
        );
        assertEquals(late.code, 0);
        assertEquals(late.attempts[0]!.error, 'bucket "latebucket" does not exist');
        assertEquals(late.report.conditions[0]!.detail, "bucket latebucket exists");
      });

      await t.step("an object in a missing bucket says so", async () => {
        const r = await runJson([...SHORT, "s3", "s3://nothere/k"], { env });
        assertEquals(r.json.conditions[0]!.last_error, 'bucket "nothere" does not exist');
      });

      await t.step("the endpoint comes from each variable, in order of precedence", async () => {
        const dead = `http://127.0.0.1:${(await startSilentTcp().then(async (s) => {
          await s.stop();
          return s.port;
        }))}`;
        const vars = [
          "CLOUD_ENDPOINT_URL_S3",
          "CLOUD_ENDPOINT_URL",
          "S3_ENDPOINT_URL",
          "AWS_ENDPOINT_URL_S3",
          "AWS_ENDPOINT_URL",
        ];
        for (let i = 0; i < vars.length; i++) {
          // The variable under test points at the server, every later one at a closed port.
          const e: Record<string, string> = { ...env, CLOUD_ENDPOINT_URL: "" };
          for (let j = i; j < vars.length; j++) e[vars[j]!] = j === i ? s3.endpoint : dead;
          const r = await runJson([...FAST, "s3", "s3://items/dir/a.txt"], { env: e });
          assertEquals(r.code, 0, `${vars[i]}: ${r.stdout}`);
          assertEquals(r.json.conditions[0]!.detail, `object 11 B, etag ${etag}`);
        }
        const flag = await runJson(
          [...FAST, "s3", "s3://items/dir/a.txt", "--endpoint-url", s3.endpoint],
          { env: { ...env, CLOUD_ENDPOINT_URL_S3: dead } },
        );
        assertEquals(flag.code, 0, "--endpoint-url beats the variables");
        await expectJson([...SHORT, "s3", "s3://items/dir/a.txt"], {
          code: 1,
          error: `connection refused (${dead})`,
        }, {
          env: { ...env, CLOUD_ENDPOINT_URL: dead },
        });
      });

      await t.step("s3:// and objstore:// work with both kind words", async () => {
        for (
          const [word, uri] of [["s3", "objstore://items/dir/a.txt"], [
            "objstore",
            "s3://items/dir/a.txt",
          ]]
        ) {
          const r = await expectJson([...FAST, word!, uri!], { code: 0 }, { env });
          assertEquals(r.json.conditions[0]!.name, `${word} ${uri}`);
          assertEquals(r.json.conditions[0]!.kind, "objstore");
        }
      });

      await t.step(
        "credentials from the AWS SDK chain: AWS_* variables and --profile",
        async () => {
          await expectJson([...FAST, "s3", "s3://items/dir/a.txt"], { code: 0 }, {
            env: {
              ...CLEAN,
              S3_ENDPOINT_URL: s3.endpoint,
              AWS_ACCESS_KEY_ID: s3.accessKeyId,
              AWS_SECRET_ACCESS_KEY: s3.secretAccessKey,
            },
          });
          const dir = await Deno.makeTempDir({ prefix: "waitcmd-aws-" });
          try {
            await Deno.writeTextFile(
              `${dir}/credentials`,
              `[ci]\naws_access_key_id = ${s3.accessKeyId}\naws_secret_access_key = ${s3.secretAccessKey}\n`,
            );
            const viaProfile = await expectJson(
              [...FAST, "s3", "s3://items/dir/a.txt", "--profile", "ci"],
              { code: 0 },
              {
                env: {
                  ...CLEAN,
                  S3_ENDPOINT_URL: s3.endpoint,
                  AWS_SHARED_CREDENTIALS_FILE: `${dir}/credentials`,
                },
              },
            );
            assertEquals(viaProfile.stderr, "");
            noSecrets(viaProfile.stdout);
            const noProfile = await expectJson(
              [...SHORT, "s3", "s3://items/dir/a.txt", "--profile", "missing"],
              { code: 1 },
              {
                env: {
                  ...CLEAN,
                  S3_ENDPOINT_URL: s3.endpoint,
                  AWS_SHARED_CREDENTIALS_FILE: `${dir}/credentials`,
                },
              },
            );
            assertStringIncludes(
              noProfile.json.conditions[0]!.last_error,
              "no credentials: profile missing",
            );
          } finally {
            await Deno.remove(dir, { recursive: true });
          }
        },
      );

      await t.step(
        "without any credentials requests are anonymous: public buckets work",
        async () => {
          await s3.createBucket("public");
          await s3.putObject("public", "index.txt", "open to all");
          const { PutBucketPolicyCommand } = await import("@aws-sdk/client-s3");
          await s3.client.send(
            new PutBucketPolicyCommand({
              Bucket: "public",
              Policy: JSON.stringify({
                Version: "2012-10-17",
                Statement: [{
                  Effect: "Allow",
                  Principal: "*",
                  Action: ["s3:GetObject"],
                  Resource: ["arn:aws:s3:::public/*"],
                }],
              }),
            }),
          );
          const anon = { ...CLEAN, CLOUD_ENDPOINT_URL: s3.endpoint };
          const pub = await expectJson(
            [...FAST, "s3", "s3://public/index.txt", "--contains", "open"],
            { code: 0 },
            { env: anon },
          );
          assertEquals(pub.stderr, "");
          assertMatch(
            pub.json.conditions[0]!.detail,
            /^object 11 B, etag "[0-9a-f]+", contains "open"$/,
          );
          await expectJson([...SHORT, "s3", "s3://items/dir/a.txt"], {
            code: 1,
            error:
              "access denied (403 AccessDenied) to the object; no credentials found (anonymous request)",
          }, { env: anon });
        },
      );

      await t.step("an endpoint that never answers is cut off by --attempt-timeout", async () => {
        const silent = await startSilentTcp();
        try {
          const r = await expectJson(
            [
              ...timing("2s", "100ms", "300ms"),
              ...["s3", "s3://items/dir/a.txt"],
              ...["--endpoint-url", `http://127.0.0.1:${silent.port}`],
            ],
            { code: 1 },
            { env },
          );
          assertEquals(r.stderr, "");
          const c = r.json.conditions[0]!;
          assert(c.attempts >= 2, `several attempts, got ${c.attempts}`);
          assertEquals(c.last_error, "attempt timed out after 300ms");
        } finally {
          await silent.stop();
        }
      });

      await t.step("usage errors: exit 2, one line, nothing probed", async () => {
        // A row's own environment goes over CLEAN; a secret flag's value is never echoed.
        const rows = USAGE.map((
          [args, text, env]: UsageRow,
        ): UsageRow => [args, text, env && { ...CLEAN, ...env }]);
        await assertKindUsageErrors("objstore", rows, { env: CLEAN, secrets: ["s3cr3t-value"] });
      });
    } finally {
      await s3.stop();
    }
  },
});
