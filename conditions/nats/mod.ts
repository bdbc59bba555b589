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
import { passwordSource, SESSION_READ_MAX, TLS_FLAGS, tlsChoice } from "../_common/datastore.ts";
import type { ReachOptions } from "../_common/datastore.ts";
import { PASSWORD_FLAGS, secretFromEnv } from "../_common/dsurl.ts";
import type { HostPort } from "../_common/net.ts";
import { parseNatsTarget } from "./url.ts";

/** What a nats condition needs. */
export interface NatsOptions extends ReachOptions<string | undefined> {
  /** The URL's user (with a password from the URL or a flag). */
  readonly user: string | undefined;
  /** The servers of the target's list, tried in order (`hp` is the first). */
  readonly servers: readonly HostPort[];
  /** --token-env's value or the URL's token (a registered secret). */
  readonly token: string | undefined;
  /** --creds-file: a NATS credentials file (user JWT and seed), read at each attempt. */
  readonly credsFile: string | undefined;
  /** --jetstream (or --stream): JetStream answers the account's info. */
  readonly jetstream: boolean;
  /** --stream: this stream exists. */
  readonly stream: string | undefined;
}

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
    "Opens one connection per attempt (no reconnects, closed after it): the server's INFO, the client's CONNECT with its credentials, and PING answered by PONG. With --jetstream, JetStream must answer the account's info; with --stream NAME (which implies --jetstream), the stream must exist. Pending, with the server's own text: refused or reset connections, refused credentials (\"authentication failed for user ...\", or \"authentication failed: ...\" for a token, credentials file or none), JetStream not enabled, a missing stream, a port that does not speak NATS, TLS failures (an untrusted certificate included). Nothing is fatal. The target is one server or a comma list of servers (nats://a:4222,nats://b:4222, a bare host:port is nats://), tried in order on each attempt until one answers. Credentials: the URL's user and password (or --password-env / --password-file for the URL's user), a token as the URL's user-info alone (nats://TOKEN@host) or --token-env, or --creds-file (a JWT and nkey seed, read at each attempt); no secret ever shows, and the display name keeps the user and masks only the password (a token entirely). TLS with tls:// (on any server of the list) or --tls (the chain and the host name verified), --ca-file, --insecure; a server that requires TLS is pending on a plain nats:// URL. A host name is tried on every address it resolves to.",
  target: {
    shape: "required",
    placeholder: "URL",
    description:
      "nats://[user:password@|token@]host[:port] or tls://... for TLS (port 4222); a comma list of servers, tried in order",
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
      args: "nats nats://nats-1:4222,nats://nats-2:4222,nats://nats-3:4222 --jetstream",
      description: "until one server of the cluster takes clients and JetStream answers",
    },
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
  const flagPassword = input.has("password-env") || input.has("password-file");
  const url = parseNatsTarget(input, flagPassword);
  const password = passwordSource(input, url);
  if (password !== undefined && url.user === undefined) {
    input.fail(
      input.has("password-env") ? "password-env" : "password-file",
      "needs a user in the URL (nats://USER@host)",
    );
  }
  const envToken = input.has("token-env") ? secretFromEnv(input, "token-env") : undefined;
  if (envToken === "") input.fail("token-env", "the variable is empty");
  if (envToken !== undefined && (url.user !== undefined || url.token !== undefined)) {
    input.fail("token-env", "cannot be combined with user-info in the URL");
  }
  const token = envToken ?? url.token;
  const credsFile = input.string("creds-file");
  if (credsFile === "") input.fail("creds-file", "expected a path, got an empty string");
  if (credsFile !== undefined) {
    if (url.user !== undefined || url.token !== undefined) {
      input.fail("creds-file", "cannot be combined with user-info in the URL");
    }
    if (token !== undefined) input.fail("creds-file", "cannot be combined with --token-env");
  }
  const tls = tlsChoice(
    input,
    url.tls ? { mode: "on", said: "tls://" } : {},
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
      hp: url.servers[0]!,
      servers: url.servers,
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
