import { assert, assertEquals } from "../../tests/_assert.ts";
import { optionsOf, plan } from "../../tests/_kit.ts";
import { stepUsageErrors } from "../../tests/_suite.ts";
import { describeObject, metadataMismatch, totalFromContentRange } from "./judge.ts";
import { describeS3Error, type ErrorContext } from "./errors.ts";
import {
  type Endpoint,
  EndpointError,
  endpointOf,
  type ObjectUri,
  type ObjstoreOptions,
  parseObjectUri,
} from "./mod.ts";

/** The parsed URI, or the message of the usage problem. */
function uriOrError(text: string): ObjectUri | string {
  try {
    return parseObjectUri(text);
  } catch (e) {
    return (e as Error).message;
  }
}

/** The endpoint, or the problem and where it came from. */
function endpointOrError(
  flag: string | undefined,
  env: Record<string, string>,
): Endpoint | undefined | { error: string; from: string } {
  try {
    return endpointOf(flag, env);
  } catch (e) {
    if (!(e instanceof EndpointError)) throw e;
    return { error: e.message, from: e.from };
  }
}

Deno.test("parseObjectUri() splits bucket and key, taking the key literally", async (t) => {
  const rows: [string, unknown][] = [
    ["objstore://bkt/a/b.txt", { bucket: "bkt", key: "a/b.txt" }],
    ["s3://bkt/a%20b?c#d", { bucket: "bkt", key: "a%20b?c#d" }],
    ["S3://my.bucket-1/k", { bucket: "my.bucket-1", key: "k" }],
    ["s3://bkt", { bucket: "bkt", key: "" }],
    ["s3://bkt/", { bucket: "bkt", key: "" }],
    ["http://bkt/k", 'expected objstore://BUCKET/KEY or s3://BUCKET/KEY, got "http://bkt/k"'],
    [
      "s3:///k",
      'expected objstore://BUCKET/KEY or s3://BUCKET/KEY: the bucket name is missing in "s3:///k"',
    ],
    [
      "s3://a b/k",
      'bucket names have 3 to 255 letters, digits, dots, hyphens or underscores, got "a b"',
    ],
    [
      "s3://ab/k",
      'bucket names have 3 to 255 letters, digits, dots, hyphens or underscores, got "ab"',
    ],
  ];
  for (const [text, want] of rows) {
    await t.step(text, () => assertEquals(uriOrError(text), want));
  }
});

Deno.test("endpointOf() takes the flag, then the variables in their documented order", () => {
  const all = {
    CLOUD_ENDPOINT_URL_S3: "http://a:1",
    CLOUD_ENDPOINT_URL: "http://b:2",
    S3_ENDPOINT_URL: "http://c:3",
    AWS_ENDPOINT_URL_S3: "http://d:4",
    AWS_ENDPOINT_URL: "http://e:5",
  };
  assertEquals(endpointOf("https://f:6/", all), { url: "https://f:6", from: "--endpoint-url" });
  const order = Object.keys(all) as (keyof typeof all)[];
  for (let i = 0; i < order.length; i++) {
    const env = Object.fromEntries(order.slice(i).map((k) => [k, all[k]]));
    assertEquals(endpointOf(undefined, env), {
      url: all[order[i]!],
      from: order[i]!,
    });
  }
  assertEquals(endpointOf(undefined, {}), undefined);
  assertEquals(endpointOf(undefined, { CLOUD_ENDPOINT_URL: "" }), undefined);
  assertEquals(endpointOrError("localhost:9000", {}), {
    error: 'expected an http(s) URL like http://localhost:9000, got "localhost:9000"',
    from: "--endpoint-url",
  });
});

Deno.test("objstore parse() settles endpoint, path style, region and credentials", async (t) => {
  await t.step("an endpoint override means path-style; --virtual-hosted-style opts out", () => {
    const s = optionsOf<ObjstoreOptions>([
      ...["s3", "s3://bkt/k", "--endpoint-url", "http://127.0.0.1:9000"],
    ]);
    assertEquals([s.endpoint, s.pathStyle], [
      { url: "http://127.0.0.1:9000", from: "--endpoint-url" },
      true,
    ]);
    const v = optionsOf<ObjstoreOptions>(["s3", "s3://bkt/k", "--virtual-hosted-style"], {
      S3_ENDPOINT_URL: "https://s3.example.com",
    });
    assertEquals([v.endpoint?.from, v.pathStyle], ["S3_ENDPOINT_URL", false]);
    assertEquals(optionsOf<ObjstoreOptions>(["s3", "s3://bkt/k"]).endpoint, undefined);
  });

  await t.step("region from --region, else CLOUD_REGION, else left to the SDK", () => {
    assertEquals(
      optionsOf<ObjstoreOptions>(["s3", "s3://bkt/k", "--region", "auto"], { CLOUD_REGION: "x" })
        .region,
      "auto",
    );
    assertEquals(
      optionsOf<ObjstoreOptions>(["s3", "s3://bkt/k"], { CLOUD_REGION: "eu-west-3" }).region,
      "eu-west-3",
    );
    assertEquals(
      optionsOf<ObjstoreOptions>(["s3", "s3://bkt/k"], { AWS_REGION: "eu-west-3" }).region,
      undefined,
    );
  });

  await t.step("flags beat CLOUD_* variables, field by field", () => {
    const env = {
      CLOUD_ACCESS_KEY_ID: "AKENV",
      CLOUD_SECRET_ACCESS_KEY: "env-secret",
      CLOUD_SESSION_TOKEN: "env-token",
    };
    assertEquals(optionsOf<ObjstoreOptions>(["s3", "s3://bkt/k"], env).credentials, {
      type: "static",
      accessKeyId: "AKENV",
      secretAccessKey: "env-secret",
      sessionToken: "env-token",
      from: "CLOUD_* variables",
    });
    assertEquals(
      optionsOf<ObjstoreOptions>(["s3", "s3://bkt/k", "--access-key-id", "AKFLAG"], env)
        .credentials,
      {
        type: "static",
        accessKeyId: "AKFLAG",
        secretAccessKey: "env-secret",
        sessionToken: "env-token",
        from: "flags and CLOUD_* variables",
      },
    );
    assertEquals(
      optionsOf<ObjstoreOptions>([
        ...["s3", "s3://bkt/k", "--access-key-id", "A", "--secret-access-key", "S"],
      ]).credentials,
      {
        type: "static",
        accessKeyId: "A",
        secretAccessKey: "S",
        sessionToken: undefined,
        from: "flags",
      },
    );
  });

  await t.step("without explicit keys the SDK chain is used; --profile beats CLOUD_*", () => {
    assertEquals(optionsOf<ObjstoreOptions>(["s3", "s3://bkt/k"]).credentials, { type: "chain" });
    assertEquals(
      optionsOf<ObjstoreOptions>(["s3", "s3://bkt/k", "--profile", "ci"], {
        CLOUD_ACCESS_KEY_ID: "A",
        CLOUD_SECRET_ACCESS_KEY: "S",
      }).credentials,
      { type: "chain", profile: "ci" },
    );
  });

  await t.step("secrets from flags and variables are registered for redaction", () => {
    const p = plan(["s3", "s3://bkt/k", "--session-token", "flag-token"], {
      CLOUD_ACCESS_KEY_ID: "AKENV",
      CLOUD_SECRET_ACCESS_KEY: "env-secret",
      AWS_SECRET_ACCESS_KEY: "aws-secret",
    });
    for (const s of ["flag-token", "env-secret", "aws-secret"]) {
      assert(p.secrets.includes(s), `${s} registered`);
    }
    assert(!p.secrets.includes("AKENV"), "the access key id is not a secret");
  });

  await t.step("metadata names are lower-cased, an x-amz-meta- prefix dropped", () => {
    const s = optionsOf<ObjstoreOptions>([
      ...["s3", "s3://bkt/k", "--metadata", "Build=42", "--metadata", "x-amz-meta-owner=me"],
    ]);
    assertEquals([...s.metadata], [["build", "42"], ["owner", "me"]]);
  });

  await t.step("the display name keeps the target and the kind word as typed", () => {
    const c = plan(["s3", "objstore://bkt/k"]).conditions[0]!;
    assertEquals([c.name, c.kind.name], ["s3 objstore://bkt/k", "objstore"]);
  });
});

Deno.test("objstore parse() rejects malformed targets and flag values", (t) =>
  stepUsageErrors(t, "objstore"));

Deno.test("metadataMismatch() requires every wanted entry, names case-insensitive", () => {
  const want = new Map([["build", "42"], ["owner", "me"]]);
  assertEquals(metadataMismatch(want, { build: "42", owner: "me", extra: "x" }), undefined);
  assertEquals(metadataMismatch(want, { Build: "42", OWNER: "me" }), undefined);
  assertEquals(
    metadataMismatch(want, { build: "41" }),
    'metadata build is "41", want "42"; metadata owner is not set, want "me"',
  );
  assertEquals(metadataMismatch(new Map(), {}), undefined);
});

Deno.test("describeObject() and totalFromContentRange() read what S3 answers", () => {
  assertEquals(
    describeObject({ size: 1234, etag: '"abc"', metadata: {} }),
    'object 1.2 KiB, etag "abc"',
  );
  assertEquals(describeObject({ size: 0, etag: undefined, metadata: {} }), "object 0 B");
  assertEquals(totalFromContentRange("bytes 0-4/11"), 11);
  assertEquals(totalFromContentRange("bytes 0-0/*"), undefined);
  assertEquals(totalFromContentRange(undefined), undefined);
});

Deno.test("describeS3Error() names the refusal without the secret", async (t) => {
  const ctx: ErrorContext = {
    bucket: "bkt",
    key: "dir/a.txt",
    endpoint: "http://127.0.0.1:9000",
    who: "access key id AKX (from flags)",
  };
  const err = (name: string, status?: number, extra: Record<string, unknown> = {}) => ({
    name,
    $metadata: { httpStatusCode: status },
    message: "UnknownError",
    ...extra,
  });
  const rows: [string, unknown, ErrorContext, string][] = [
    ["no such key", err("NoSuchKey", 404), ctx, 'object "dir/a.txt" does not exist'],
    ["no such bucket", err("NoSuchBucket", 404), ctx, 'bucket "bkt" does not exist'],
    [
      "HEAD 404 without a code",
      err("NotFound", 404),
      ctx,
      'object "dir/a.txt" (or bucket "bkt") not found',
    ],
    ["bucket HEAD 404", err("NotFound", 404), { ...ctx, key: "" }, 'bucket "bkt" does not exist'],
    [
      "wrong secret",
      err("SignatureDoesNotMatch", 403),
      ctx,
      "credentials refused (403 SignatureDoesNotMatch): the secret access key does not match access key id AKX (from flags)",
    ],
    [
      "unknown key (AWS)",
      err("InvalidAccessKeyId", 403),
      ctx,
      "credentials refused (403 InvalidAccessKeyId): unknown access key id AKX (from flags)",
    ],
    [
      "unknown key (versitygw)",
      err("XAdminUserNotFound", 404),
      ctx,
      "credentials refused (404 XAdminUserNotFound): unknown access key id AKX (from flags)",
    ],
    [
      "expired token",
      err("ExpiredToken", 400),
      ctx,
      "credentials refused (400 ExpiredToken): the session token has expired (access key id AKX (from flags))",
    ],
    [
      "access denied, anonymous",
      err("AccessDenied", 403),
      { ...ctx, who: "no credentials found (anonymous request)" },
      "access denied (403 AccessDenied) to the object; no credentials found (anonymous request)",
    ],
    [
      "HEAD 403 without a code",
      err("Unknown", 403),
      ctx,
      "access denied (403) to the object; access key id AKX (from flags)",
    ],
    [
      "connection refused",
      { name: "Error", code: "ECONNREFUSED", message: "connect ECONNREFUSED 127.0.0.1:9000" },
      ctx,
      "connection refused (http://127.0.0.1:9000)",
    ],
    [
      "other status",
      err("SlowDown", 503, { message: "Please reduce your request rate." }),
      ctx,
      "503 SlowDown: Please reduce your request rate.",
    ],
  ];
  for (const [name, e, c, want] of rows) {
    await t.step(name, () => assertEquals(describeS3Error(e, c), want));
  }
});

Deno.test("objstore imports the S3 SDK when its probe is made, before the run's clock starts", async () => {
  const { probeOf } = await import("../../tests/_kit.ts");
  const { s3Library } = await import("./client.ts");
  s3Library.reset(); // as if never imported: other tests of this file may have
  const probe = await probeOf(["objstore", "s3://bucket/key"]);
  const loaded = s3Library.peek();
  assert(loaded !== undefined, "the SDK is not being imported");
  assertEquals(typeof (await loaded).S3Client, "function");
  await probe.close?.();
});
