/**
 * The Sigstore test service, as a process of its own: @sigstore/mock's Fulcio
 * (a certificate authority with a CT log) and Rekor (a transparency log),
 * served over HTTP on a loopback port, and @sigstore/sign's keyless signing
 * flow against them (an ephemeral key, a certificate for the test identity, a
 * log entry with its signed entry timestamp). The trusted root holds the
 * authority's root certificate and both logs' keys, as Sigstore's TUF
 * repository would. Nothing is fetched from outside and no fixture is copied.
 *
 * Its packages are the tests' alone, so they live in this folder's deno.json
 * and deno.lock, apart from the CLI's: the main job's set-up never installs
 * them (`scripts/packages --tests` does). conditions/cosign/_service.ts starts
 * it; the protocol is JSON lines:
 *
 * - argument: the identity certificates are issued to;
 * - first line out: `{"trustedRoot": "<JSON text>"}`;
 * - each line in, a blob as base64; each line out, `{"bundle": "<JSON text>"}`
 *   or `{"error": "<text>"}`.
 *
 * @module
 */

import { Buffer } from "node:buffer";
import { createHash, generateKeyPairSync } from "node:crypto";
import { bundleToJSON } from "@sigstore/bundle";
import {
  fulcioHandler,
  initializeCA,
  initializeCTLog,
  initializeTLog,
  rekorHandler,
} from "@sigstore/mock";
import { HashAlgorithm, PublicKeyDetails, TrustedRoot } from "@sigstore/protobuf-specs";
import { FulcioSigner, MessageSignatureBundleBuilder, RekorWitness } from "@sigstore/sign";

const SIGNER_IDENTITY = Deno.args[0] ?? "ci@waitcmd.test";

const ecKey = () => generateKeyPairSync("ec", { namedCurve: "P-256" });
const b64url = (o: unknown) => Buffer.from(JSON.stringify(o)).toString("base64url");

/** Starts a mock Fulcio and Rekor on a loopback port; a signer and its trusted root. */
async function start(): Promise<{ sign(blob: Uint8Array): Promise<string>; trustedRoot: string }> {
  const ctlog = await initializeCTLog(ecKey());
  const ca = await initializeCA(ecKey(), ctlog);
  const handlers: {
    path: string;
    fn: (body: string) => Promise<{ statusCode: number; response: unknown; contentType?: string }>;
  }[] = [];
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen() {} },
    async (req) => {
      const h = handlers.find((x) => x.path === new URL(req.url).pathname);
      if (h === undefined) return new Response("not found", { status: 404 });
      const r = await h.fn(await req.text());
      return new Response(r.response as BodyInit, {
        status: r.statusCode,
        headers: { "content-type": r.contentType ?? "application/json" },
      });
    },
  );
  const base = `http://127.0.0.1:${server.addr.port}`;
  const tlog = await initializeTLog(base, ecKey());
  handlers.push(fulcioHandler(ca, { strict: true }), rekorHandler(tlog, { strict: true }));

  const since = new Date(Date.now() - 60_000);
  const logKey = (raw: Buffer) => ({
    rawBytes: raw,
    keyDetails: PublicKeyDetails.PKIX_ECDSA_P256_SHA_256,
    validFor: { start: since },
  });
  const root = TrustedRoot.toJSON({
    mediaType: "application/vnd.dev.sigstore.trustedroot+json;version=0.1",
    tlogs: [{
      baseUrl: base,
      hashAlgorithm: HashAlgorithm.SHA2_256,
      publicKey: logKey(tlog.publicKey),
      logId: { keyId: createHash("sha256").update(tlog.publicKey).digest() },
    }],
    certificateAuthorities: [{
      subject: { organization: "waitcmd-test", commonName: "waitcmd-test" },
      uri: base,
      certChain: { certificates: [{ rawBytes: Buffer.from(ca.rootCertificate.buffer) }] },
      validFor: { start: since },
    }],
    ctlogs: [{
      baseUrl: base,
      hashAlgorithm: HashAlgorithm.SHA2_256,
      publicKey: logKey(ctlog.publicKey),
      logId: { keyId: Buffer.from(ctlog.logID.buffer) },
    }],
    timestampAuthorities: [],
  } as unknown as TrustedRoot);

  // An OIDC token as Fulcio reads it (the mock checks its form, not a signature).
  const now = Math.floor(Date.now() / 1000);
  const token = `${b64url({ alg: "none" })}.${
    b64url({
      iss: "https://issuer.waitcmd.test",
      sub: SIGNER_IDENTITY,
      email: SIGNER_IDENTITY,
      email_verified: true,
      aud: "sigstore",
      iat: now,
      exp: now + 3600,
    })
  }.sig`;
  const builder = new MessageSignatureBundleBuilder({
    signer: new FulcioSigner({
      identityProvider: { getToken: () => Promise.resolve(token) },
      fulcioBaseURL: base,
    }),
    witnesses: [new RekorWitness({ rekorBaseURL: base })],
  });

  return {
    async sign(blob) {
      const bundle = await builder.create({ data: Buffer.from(blob) });
      return JSON.stringify(bundleToJSON(bundle), null, 2);
    },
    trustedRoot: JSON.stringify(root, null, 2),
  };
}

const { sign, trustedRoot } = await start();
const enc = new TextEncoder();
const out = (v: unknown) => Deno.stdout.writeSync(enc.encode(JSON.stringify(v) + "\n"));
out({ trustedRoot });
let buffered = "";
for await (const chunk of Deno.stdin.readable.pipeThrough(new TextDecoderStream())) {
  buffered += chunk;
  let nl;
  while ((nl = buffered.indexOf("\n")) >= 0) {
    const line = buffered.slice(0, nl);
    buffered = buffered.slice(nl + 1);
    try {
      out({ bundle: await sign(Buffer.from(line, "base64")) });
    } catch (e) {
      out({ error: e instanceof Error ? e.message : String(e) });
    }
  }
}
Deno.exit(0);
