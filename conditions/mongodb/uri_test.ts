/**
 * mongodb targets against the driver's own URI parser (the oracle: the
 * options a `MongoClient` reads from the URI alone). For every form of the
 * MongoDB connection-string documentation: what waitcmd reads itself (the
 * user, TLS) is what the driver reads, every option the URI gives is passed
 * on unchanged to the client of an attempt, and waitcmd's per-attempt
 * defaults fill only what the URI leaves unsaid.
 */

import { MongoClient } from "mongodb";
import { assertEquals, assertStringIncludes } from "../../tests/_assert.ts";
import { optionsOf, usageError } from "../../tests/_kit.ts";
import type { MongodbOptions } from "./mod.ts";
import { ATTEMPT_DEFAULTS, driverOptions } from "./options.ts";

/** Forms of the MongoDB manual ("Connection Strings", "Connection String Options"). */
const FORMS = [
  "mongodb://localhost",
  "mongodb://localhost:27017/",
  "mongodb://127.0.0.1:27018/app",
  "mongodb://[::1]:27017/?directConnection=true",
  "mongodb://myDBReader:D1fficultP%40ssw0rd@mongodb0.example.com:27017/?authSource=admin",
  "mongodb://app:pw@db1.example.net:27017,db2.example.net:2500/?replicaSet=test",
  "mongodb://db0.example.com,db1.example.com,db2.example.com/?replicaSet=myRepl&w=majority&wtimeoutMS=5000",
  "mongodb://app:pw@localhost/records?authMechanism=SCRAM-SHA-256&authSource=records",
  "mongodb://localhost/?appName=orders&connectTimeoutMS=10000&socketTimeoutMS=30000",
  "mongodb://localhost/?serverSelectionTimeoutMS=500&heartbeatFrequencyMS=20000",
  "mongodb://localhost/?maxPoolSize=20&minPoolSize=2&maxIdleTimeMS=60000&maxConnecting=4",
  "mongodb://localhost/?retryReads=true&retryWrites=true&readPreference=secondaryPreferred",
  "mongodb://localhost/?readPreference=nearest&maxStalenessSeconds=120&readConcernLevel=majority",
  "mongodb://localhost/?tls=true&tlsAllowInvalidHostnames=true",
  "mongodb://localhost/?ssl=true",
  "mongodb://localhost/?tls=false",
  "mongodb://localhost/?compressors=zlib&zlibCompressionLevel=6",
  "mongodb://localhost/?journal=true&w=2&localThresholdMS=30",
  "mongodb://localhost/?loadBalanced=false&timeoutMS=8000",
  "mongodb+srv://app:pw@cluster0.example.net/?retryWrites=true&w=majority&appName=shop",
  "mongodb://app@localhost/?authMechanism=MONGODB-X509&tls=true",
  "mongodb://localhost/?APPNAME=upper&ConnectTimeoutMS=1500",
];

/** Option values as comparable text (the driver keeps some as objects). */
function shown(v: unknown): string {
  if (v === undefined || typeof v === "function") return String(v);
  try {
    return JSON.stringify(v, (_k, x) => typeof x === "bigint" ? String(x) : x) ?? String(v);
  } catch {
    return String(v);
  }
}

/** The driver's options, keyed by name (its MongoOptions). */
function parsed(uri: string, extra?: object): Record<string, unknown> {
  return new MongoClient(uri, extra).options as unknown as Record<string, unknown>;
}

/** Options derived from others or holding live objects, compared through what they derive from. */
const DERIVED = new Set([
  "metadata",
  "extendedMetadata",
  "hosts",
  "__index",
  "__skipPingOnConnect",
]);

Deno.test("mongodb targets: what waitcmd reads itself (user, TLS) is what the driver reads", () => {
  for (const uri of FORMS) {
    const o = optionsOf<MongodbOptions>(["mongodb", uri]);
    const driver = parsed(uri);
    const credentials = driver.credentials as { username?: string } | undefined;
    assertEquals(
      [uri, o.user ?? "", o.tls.mode === "on"],
      [uri, credentials?.username ?? "", driver.tls === true],
    );
  }
});

Deno.test("mongodb targets: every URI option reaches the attempt's client unchanged", () => {
  const defaults = Object.keys(ATTEMPT_DEFAULTS);
  for (const uri of FORMS) {
    const o = optionsOf<MongodbOptions>(["mongodb", uri]);
    const alone = parsed(uri);
    const attempt = parsed(uri, driverOptions(o, undefined, undefined));
    for (const key of Object.keys(alone)) {
      if (DERIVED.has(key)) continue;
      // waitcmd's defaults for one attempt, where the URI says nothing.
      if (defaults.includes(key) && !o.uriOptions.includes(key.toLowerCase())) {
        assertEquals([uri, key, shown(attempt[key])], [
          uri,
          key,
          shown(ATTEMPT_DEFAULTS[key as keyof typeof ATTEMPT_DEFAULTS]),
        ]);
        continue;
      }
      assertEquals([uri, key, shown(attempt[key])], [uri, key, shown(alone[key])]);
    }
    assertEquals(String(attempt.hosts), String(alone.hosts));
  }
});

Deno.test("mongodb targets: an option the driver does not know is exit 2 naming it", async () => {
  assertStringIncludes(
    await usageError(["mongodb", "mongodb://localhost/?appName=x&connectTimeoutMs=5&foo=1"]),
    "the driver rejects the URI: option foo is not supported",
  );
  assertStringIncludes(
    await usageError(["mongodb", "mongodb://localhost/?tls=yes"]),
    'the driver rejects the URI: tls/ssl must be either "true" or "false"',
  );
  assertEquals(await usageError(["mongodb", "mongodb://localhost/?connectTimeoutMs=5"]), "");
});
