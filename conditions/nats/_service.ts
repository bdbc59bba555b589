/**
 * Throwaway NATS servers (Debian's `nats-server` package, 2.9) for the nats
 * kind's tests. Each listens on 127.0.0.1 on a free port, with its JetStream
 * store, config and log in its own temporary directory. A server can want a
 * user and password or a token, run JetStream, serve TLS only, or run in
 * operator mode (JWT accounts), where clients log in with a credentials
 * file made here with the NATS project's own JWT library (`@nats-io/jwt`).
 * It can be stopped and started again on the same port.
 */

import {
  createAccount,
  createOperator,
  createUser,
  encodeAccount,
  encodeOperator,
  encodeUser,
  fmtCreds,
} from "@nats-io/jwt";
import { jetstreamManager } from "@nats-io/jetstream";
import { connect } from "@nats-io/transport-node";
import {
  binariesMissing,
  freePort,
  restartable,
  spawnService,
  started,
  waitUntil,
} from "../../tests/services/_util.ts";

/** The server binary. */
export const NATS_SERVER = "/usr/sbin/nats-server";

/** Why nats-server cannot run here, or undefined. */
export function natsMissing(): Promise<string | undefined> {
  return binariesMissing(NATS_SERVER);
}

/** Options of {@link makeNats}. */
export interface NatsServerOptions {
  /** Start it now (default true); otherwise `start()` later. */
  start?: boolean;
  /** Listen on this port (another server's, to replace it); default a free one. */
  port?: number;
  /** Clients must log in as this user. */
  user?: { name: string; password: string };
  /** Clients must present this token. */
  token?: string;
  /** Run JetStream (store in the server's directory). */
  jetstream?: boolean;
  /** Serve TLS only, with this certificate and key. */
  tls?: { certFile: string; keyFile: string };
  /** Operator mode: one account, one user, whose credentials file is `credsFile`. */
  operator?: boolean;
}

/** A throwaway NATS server. */
export interface NatsServer {
  readonly host: "127.0.0.1";
  readonly port: number;
  readonly dir: string;
  /** The user's credentials file (operator mode only). */
  readonly credsFile: string | undefined;
  /** `nats://[userinfo@]127.0.0.1:PORT` (`tls://` with TLS); userinfo as given, not encoded. */
  url(userinfo?: string): string;
  /** Starts it (again, on the same port); resolves once it sends INFO. */
  start(): Promise<void>;
  /** Creates a JetStream stream on subject `NAME.>` (the state a test sets up). */
  addStream(name: string): Promise<void>;
  /** Stops it (SIGTERM). */
  stop(): Promise<void>;
  /** Stops it and removes its directory. */
  remove(): Promise<void>;
}

/** Makes a NATS server, started unless `start: false`. */
export async function makeNats(opts: NatsServerOptions = {}): Promise<NatsServer> {
  const dir = await Deno.makeTempDir({ prefix: "waitcmd-nats-" });
  const port = opts.port ?? freePort();
  const args = ["-a", "127.0.0.1", "-p", String(port), "-n", "waitcmd-test"];
  if (opts.user) args.push("--user", opts.user.name, "--pass", opts.user.password);
  if (opts.token) args.push("--auth", opts.token);
  if (opts.jetstream) args.push("-js", "-sd", `${dir}/js`);
  if (opts.tls) args.push("--tls", "--tlscert", opts.tls.certFile, "--tlskey", opts.tls.keyFile);
  let credsFile: string | undefined;
  if (opts.operator) {
    const op = createOperator();
    const account = createAccount();
    const user = createUser();
    const unlimited = {
      conn: -1,
      subs: -1,
      data: -1,
      payload: -1,
      imports: -1,
      exports: -1,
      wildcards: true,
      leaf: -1,
    };
    const accountJwt = await encodeAccount("app", account, { limits: unlimited }, {
      signer: op,
    });
    await Deno.writeTextFile(
      `${dir}/server.conf`,
      [
        `operator: ${await encodeOperator("waitcmd-test", op)}`,
        "resolver: MEMORY",
        `resolver_preload: { ${account.getPublicKey()}: ${accountJwt} }`,
        "",
      ].join("\n"),
    );
    credsFile = `${dir}/app.creds`;
    await Deno.writeFile(credsFile, fmtCreds(await encodeUser("app", user, account), user));
    args.push("-c", `${dir}/server.conf`);
  }
  const scheme = opts.tls ? "tls" : "nats";
  const n: NatsServer = {
    ...restartable(
      dir,
      () => spawnService(NATS_SERVER, args, { logFile: `${dir}/nats.log` }),
      () =>
        waitUntil(`nats-server on 127.0.0.1:${port}`, () => sendsInfo(port), {
          timeoutMs: 30_000,
          everyMs: 50,
          logFile: `${dir}/nats.log`,
        }),
    ),
    host: "127.0.0.1",
    port,
    dir,
    credsFile,
    url: (userinfo) => `${scheme}://${userinfo ? `${userinfo}@` : ""}127.0.0.1:${port}`,
    async addStream(name) {
      const nc = await connect({
        servers: `127.0.0.1:${port}`,
        reconnect: false,
        ...(opts.user ? { user: opts.user.name, pass: opts.user.password } : {}),
        ...(opts.token ? { token: opts.token } : {}),
      });
      try {
        const jsm = await jetstreamManager(nc);
        await jsm.streams.add({ name, subjects: [`${name}.>`] });
      } finally {
        await nc.close();
      }
    },
  };
  return await started(n, opts.start);
}

/** Whether a server on `port` accepts a connection and sends its INFO line. */
async function sendsInfo(port: number): Promise<boolean> {
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  try {
    const buf = new Uint8Array(5);
    const n = await conn.read(buf);
    return n !== null && new TextDecoder().decode(buf.subarray(0, n)).startsWith("INFO");
  } finally {
    conn.close();
  }
}
