/**
 * A real RabbitMQ broker (Debian's rabbitmq-server 3.10) for the rabbitmq
 * kind's tests: one node per test run, with its own epmd on a free port, on
 * 127.0.0.1, everything in a temporary directory. It takes 5-10 s to start,
 * so tests share one broker and isolate themselves with vhosts and users.
 *
 * ```ts
 * const mq = await startRabbitmq({ tls: true });
 * await mq.ctl(["add_vhost", "v1"]);
 * mq.url("admin", mq.adminPassword, "v1"); // amqp://admin:...@127.0.0.1:PORT/v1
 * await mq.stopApp(); await mq.startApp();  // the AMQP listener goes away and comes back
 * await mq.stop();
 * ```
 */

import { Buffer } from "node:buffer";
import { makePki, type Pki } from "../../tests/services/tls.ts";
import {
  freePort,
  reapOnExit,
  type Service,
  sh,
  spawnService,
  waitUntil,
} from "../../tests/services/_util.ts";

/** The broker's start script (Debian package rabbitmq-server). */
export const RABBITMQ_SERVER = "/usr/lib/rabbitmq/bin/rabbitmq-server";
/** Its control tool. */
export const RABBITMQCTL = "/usr/lib/rabbitmq/bin/rabbitmqctl";

/** Why a broker cannot be had here, or undefined. */
export async function rabbitmqMissing(): Promise<string | undefined> {
  for (const p of [RABBITMQ_SERVER, RABBITMQCTL]) {
    try {
      await Deno.stat(p);
    } catch {
      return `${p} not found (run scripts/install-test-deps.sh: package rabbitmq-server)`;
    }
  }
  if (!(await Deno.stat("/usr/bin/epmd").then(() => true, () => false))) {
    return "/usr/bin/epmd not found (package erlang-base, pulled in by rabbitmq-server)";
  }
  return undefined;
}

/** A running broker. */
export interface Rabbitmq {
  /** Always "127.0.0.1". */
  readonly host: string;
  /** The plain AMQP port. */
  readonly port: number;
  /** The AMQPS port, when started with `tls: true`. */
  readonly tlsPort: number | undefined;
  /** The CA that signed the TLS listener's certificate (for --ca-file). */
  readonly pki: Pki | undefined;
  /** The administrator made at boot ("admin", all permissions on "/"). */
  readonly adminUser: "admin";
  readonly adminPassword: string;
  /** The Erlang node name (`waitcmd-<port>@localhost`). */
  readonly node: string;
  readonly dir: string;
  /** `amqp://user:password@127.0.0.1:PORT/vhost` (vhost "/" when omitted), parts percent-encoded. */
  url(user: string, password: string, vhost?: string): string;
  /** Runs `rabbitmqctl -n NODE ...args` and returns its stdout. */
  ctl(args: string[]): Promise<string>;
  /** Adds a user with a password and all permissions on `vhost` (default "/"). */
  addUser(user: string, password: string, vhost?: string): Promise<void>;
  /** Declares a durable queue in `vhost` and publishes `messages` messages to it. */
  declareQueue(vhost: string, queue: string, messages?: number): Promise<void>;
  /** Stops the RabbitMQ application (the listeners close); the Erlang node stays up. */
  stopApp(): Promise<void>;
  /** Starts it again; resolves once the AMQP port accepts connections. */
  startApp(): Promise<void>;
  /** Stops the node and its epmd, removes `dir`. */
  stop(): Promise<void>;
}

/** Whether something accepts TCP connections on 127.0.0.1:port. */
async function accepts(port: number): Promise<boolean> {
  try {
    const c = await Deno.connect({ hostname: "127.0.0.1", port });
    c.close();
    return true;
  } catch {
    return false;
  }
}

/** Starts a broker (and its epmd); resolves once the AMQP port accepts connections. */
export async function startRabbitmq(opts: { tls?: boolean } = {}): Promise<Rabbitmq> {
  const dir = await Deno.makeTempDir({ prefix: "waitcmd-rabbitmq-" });
  const reaper = reapOnExit(dir);
  const port = freePort();
  const distPort = freePort();
  const epmdPort = freePort();
  const tlsPort = opts.tls ? freePort() : undefined;
  const node = `waitcmd-${port}@localhost`;
  const adminPassword = `adm-${crypto.randomUUID().slice(0, 8)}`;
  const pki = opts.tls
    ? await makePki({ dir: `${dir}/pki`, server: { dnsNames: ["localhost"], ips: ["127.0.0.1"] } })
    : undefined;
  for (const sub of ["mnesia", "log", "home"]) await Deno.mkdir(`${dir}/${sub}`);
  await Deno.writeTextFile(`${dir}/enabled_plugins`, "[].\n");
  await Deno.writeTextFile(`${dir}/rabbitmq-env.conf`, "");
  const conf = [
    `listeners.tcp.default = 127.0.0.1:${port}`,
    "loopback_users = none",
    "default_user = admin",
    `default_pass = ${adminPassword}`,
    "default_permissions.configure = .*",
    "default_permissions.read = .*",
    "default_permissions.write = .*",
    "disk_free_limit.absolute = 10MB",
    "log.console = false",
    "log.file.level = info",
  ];
  if (pki && tlsPort) {
    conf.push(
      `listeners.ssl.default = 127.0.0.1:${tlsPort}`,
      `ssl_options.cacertfile = ${pki.ca.certFile}`,
      `ssl_options.certfile = ${pki.server.certFile}`,
      `ssl_options.keyfile = ${pki.server.keyFile}`,
      "ssl_options.verify = verify_none",
      "ssl_options.fail_if_no_peer_cert = false",
    );
  }
  await Deno.writeTextFile(`${dir}/rabbitmq.conf`, conf.join("\n") + "\n");
  const env: Record<string, string> = {
    PATH: Deno.env.get("PATH") ?? "/usr/sbin:/usr/bin:/sbin:/bin",
    HOME: `${dir}/home`,
    LANG: "C.UTF-8",
    LC_ALL: "C.UTF-8",
    RABBITMQ_NODENAME: node,
    RABBITMQ_NODE_IP_ADDRESS: "127.0.0.1",
    RABBITMQ_NODE_PORT: String(port),
    RABBITMQ_DIST_PORT: String(distPort),
    ERL_EPMD_PORT: String(epmdPort),
    ERL_EPMD_ADDRESS: "127.0.0.1",
    RABBITMQ_MNESIA_BASE: `${dir}/mnesia`,
    RABBITMQ_LOG_BASE: `${dir}/log`,
    RABBITMQ_ENABLED_PLUGINS_FILE: `${dir}/enabled_plugins`,
    RABBITMQ_CONFIG_FILE: `${dir}/rabbitmq.conf`,
    RABBITMQ_CONF_ENV_FILE: `${dir}/rabbitmq-env.conf`,
    RABBITMQ_PID_FILE: `${dir}/rabbitmq.pid`,
  };
  const services: Service[] = [];
  const stopAll = async () => {
    try {
      await sh(RABBITMQCTL, ["-n", node, "stop"], { env });
    } catch {
      // not running: the process-group kill below does it
    }
    for (const s of services.reverse()) await s.stop();
  };
  try {
    const epmd = spawnService(
      "/usr/bin/epmd",
      ["-port", String(epmdPort), "-address", "127.0.0.1"],
      { logFile: `${dir}/epmd.log`, env },
    );
    services.push(epmd);
    await waitUntil(`epmd on 127.0.0.1:${epmdPort}`, () => accepts(epmdPort), {
      timeoutMs: 10_000,
    });
    const server = spawnService(RABBITMQ_SERVER, [], { logFile: `${dir}/server.log`, env });
    services.push(server);
    reaper.setPids(services.map((s) => s.pid));
    await waitUntil(`rabbitmq on 127.0.0.1:${port}`, () => accepts(port), {
      timeoutMs: 90_000,
      everyMs: 200,
      logFile: `${dir}/server.log`,
    });
    // The listener opens before boot has finished everything; wait for the app proper.
    await sh(RABBITMQCTL, ["-n", node, "await_startup", "--timeout", "60"], { env });
  } catch (e) {
    await stopAll();
    reaper.release();
    await Deno.remove(dir, { recursive: true }).catch(() => {});
    throw e;
  }
  const ctl = (args: string[]) => sh(RABBITMQCTL, ["-q", "-n", node, ...args], { env });
  const enc = encodeURIComponent;
  const url = (user: string, password: string, vhost = "/") =>
    `amqp://${enc(user)}:${enc(password)}@127.0.0.1:${port}/${enc(vhost)}`;
  return {
    host: "127.0.0.1",
    port,
    tlsPort,
    pki,
    adminUser: "admin",
    adminPassword,
    node,
    dir,
    url,
    ctl,
    async addUser(user, password, vhost = "/") {
      await ctl(["add_user", user, password]);
      await ctl(["set_permissions", "-p", vhost, user, ".*", ".*", ".*"]);
    },
    async declareQueue(vhost, queue, messages = 0) {
      const amqp = await import("amqplib");
      const conn = await amqp.connect(url("admin", adminPassword, vhost));
      try {
        const ch = await conn.createConfirmChannel();
        await ch.assertQueue(queue, { durable: true });
        for (let i = 0; i < messages; i++) {
          ch.sendToQueue(queue, Buffer.from(String(i)));
        }
        await ch.waitForConfirms();
        await ch.close();
      } finally {
        await conn.close();
      }
    },
    async stopApp() {
      await ctl(["stop_app"]);
    },
    async startApp() {
      await ctl(["start_app"]);
      await waitUntil(`rabbitmq on 127.0.0.1:${port}`, () => accepts(port), { timeoutMs: 60_000 });
    },
    async stop() {
      await stopAll();
      reaper.release();
      await pki?.cleanup();
      if (!Deno.env.get("WAITCMD_KEEP_SERVICE_DIRS")) {
        await Deno.remove(dir, { recursive: true }).catch(() => {});
      }
    },
  };
}
