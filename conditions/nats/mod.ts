/**
 * nats: a NATS server takes the connection (INFO, CONNECT, PING/PONG), and
 * optionally JetStream answers and a stream exists (docs/contract.md §5 nats).
 *
 * The probe talks to the server with the official client
 * (`npm:@nats-io/transport-node`, `npm:@nats-io/jetstream`), imported only
 * by probe.ts; `errors.ts` turns its failures into pending texts.
 *
 * @module
 */

import { defineKind, type KindInput } from "../../engine/types.ts";
import {
  dataStoreUrl,
  passwordSource,
  SESSION_READ_MAX,
  TLS_FLAGS,
  tlsChoice,
} from "../_common/datastore.ts";
import type { ReachOptions } from "../_common/datastore.ts";
import { PASSWORD_FLAGS, secretFromEnv } from "../_common/dsurl.ts";

/** What a nats condition needs. */
export interface NatsOptions extends ReachOptions<string | undefined> {
  /** The URL's user (with a password from the URL or a flag). */
  readonly user: string | undefined;
  /** --token-env: the token's value (a registered secret). */
  readonly token: string | undefined;
  /** --creds-file: a NATS credentials file (user JWT and seed), read at each attempt. */
  readonly credsFile: string | undefined;
  /** --jetstream (or --stream): JetStream answers the account's info. */
  readonly jetstream: boolean;
  /** --stream: this stream exists. */
  readonly stream: string | undefined;
}

/** The form of the target, for usage errors. */
const FORM = "nats://[user[:password]@]host[:port] or tls://...";

/** Characters a stream name may not hold (the NATS CLI's and the client's own rule). */
const STREAM_NAME_BAD = /[.*>/\\\s\p{Cc}]/u;

/** The nats kind. */
export const nats = defineKind<NatsOptions>({
  name: "nats",
  isolate: true,
  socketReadMax: SESSION_READ_MAX,
  parse: parseOptions,
  aliases: [],
  summary: "a NATS server takes the connection, and JetStream or a stream answers",
  description:
    "Opens one connection per attempt (no reconnects, closed after it): the server's INFO, the client's CONNECT with its credentials, and PING answered by PONG. With --jetstream, JetStream must answer the account's info; with --stream NAME (which implies --jetstream), the stream must exist. Pending, with the server's own text: refused or reset connections, refused credentials (\"authentication failed for user ...\", or \"authentication failed: ...\" for a token, credentials file or none), JetStream not enabled, a missing stream, a port that does not speak NATS, TLS failures (an untrusted certificate included). Nothing is fatal. Credentials: the URL's user and password (or --password-env / --password-file for the URL's user), --token-env, or --creds-file (a JWT and nkey seed, read at each attempt); no secret ever shows, and the display name keeps the user and masks only the password. TLS with tls:// or --tls (the chain and the host name verified), --ca-file, --insecure; a server that requires TLS is pending on a plain nats:// URL. A host name is tried on every address it resolves to.",
  target: {
    shape: "required",
    placeholder: "URL",
    description: "nats://[user[:password]@]host[:port] or tls://... for TLS (port 4222)",
  },
  flags: [
    {
      name: "jetstream",
      type: "boolean",
      description: "JetStream answers the account's info",
    },
    {
      name: "stream",
      type: "string",
      placeholder: "NAME",
      description: "the JetStream stream NAME exists (implies --jetstream)",
    },
    {
      name: "token-env",
      type: "string",
      placeholder: "ENVVAR",
      description: "log in with the token in an environment variable",
    },
    {
      name: "creds-file",
      type: "string",
      placeholder: "PATH",
      complete: "file",
      description: "log in with a NATS credentials file (user JWT and seed; read at each attempt)",
    },
    ...PASSWORD_FLAGS,
    ...TLS_FLAGS,
  ],
  examples: [
    { args: "nats nats://localhost:4222", description: "wait until a NATS server takes clients" },
    {
      args: "nats nats://app@nats:4222 --password-env PASSWORD --stream ORDERS",
      description: "wait until the app's user sees the ORDERS stream",
    },
    {
      args:
        "nats tls://nats.internal --creds-file /run/secrets/app.creds --ca-file ca.pem --jetstream",
      description: "over verified TLS with a credentials file, until JetStream answers",
    },
  ],
  load: () => import("./probe.ts").then((m) => m.create),
});

function parseOptions(input: KindInput): { target: string; options: NatsOptions } {
  const url = dataStoreUrl(input, { schemes: ["nats", "tls"], defaultPort: 4222, form: FORM });
  for (const name of url.params.keys()) {
    input.fail(
      undefined,
      `unsupported URL parameter ${
        JSON.stringify(name)
      } (credentials and TLS are set with the URL's user-info and the flags)`,
    );
  }
  if (url.path !== undefined) {
    input.fail(undefined, `a NATS URL has no path, got ${JSON.stringify(`/${url.path}`)}`);
  }
  if (url.user === undefined && url.password !== undefined) {
    input.fail(undefined, "the URL has a password but no user (a token goes in --token-env)");
  }
  const password = passwordSource(input, url);
  if (password !== undefined && url.user === undefined) {
    input.fail(
      input.has("password-env") ? "password-env" : "password-file",
      "needs a user in the URL (nats://USER@host)",
    );
  }
  if (url.user !== undefined && password === undefined) {
    input.fail(
      undefined,
      `user ${
        JSON.stringify(url.user)
      } needs a password (in the URL, --password-env or --password-file); a token goes in --token-env`,
    );
  }
  const token = input.has("token-env") ? secretFromEnv(input, "token-env") : undefined;
  if (token === "") input.fail("token-env", "the variable is empty");
  if (token !== undefined && url.user !== undefined) {
    input.fail("token-env", "cannot be combined with a user in the URL");
  }
  const credsFile = input.string("creds-file");
  if (credsFile === "") input.fail("creds-file", "expected a path, got an empty string");
  if (credsFile !== undefined) {
    if (url.user !== undefined) {
      input.fail("creds-file", "cannot be combined with a user in the URL");
    }
    if (token !== undefined) input.fail("creds-file", "cannot be combined with --token-env");
  }
  const tls = tlsChoice(
    input,
    url.scheme === "tls" ? { mode: "on", said: "tls://" } : {},
    "a tls:// URL or --tls",
  );
  const stream = input.string("stream");
  if (stream === "") input.fail("stream", "expected a stream name, got an empty string");
  if (stream !== undefined && STREAM_NAME_BAD.test(stream)) {
    input.fail(
      "stream",
      `a stream name cannot contain '.', '*', '>', '/', '\\' or white space, got ${
        JSON.stringify(stream)
      }`,
    );
  }
  return {
    target: url.display,
    options: {
      hp: url.hp,
      user: url.user,
      password,
      token,
      credsFile,
      tls,
      jetstream: input.bool("jetstream") || stream !== undefined,
      stream,
    },
  };
}
