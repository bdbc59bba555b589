/**
 * The rows of the live conformance suite (live_test.ts): for every kind, its
 * real target (a server from tests/services, or a local file, socket or
 * process made here), the arguments that are satisfied, those that stay
 * pending, how the target goes down and comes back, its credentials, and
 * why a scenario does not apply.
 *
 * @module
 */

import { createSocket, type Socket } from "node:dgram";
import { assert } from "../_assert.ts";
import {
  binariesMissing,
  buildMissing,
  freePort,
  holdConnections,
  sh,
  waitUntil,
} from "../services/_util.ts";
import { chronyMissing, freeUdpPort, startChrony } from "../services/chrony.ts";
import { DNSMASQ_BIN, dnsQuery, startDnsmasq } from "../services/dnsmasq.ts";
import { DOCKERD_BIN, startDocker } from "../services/docker.ts";
import { FERRET_PASSWORD, ferretMissing, makeFerret } from "../services/ferretdb.ts";
import { buildGrpcServer, startGrpcServer } from "../services/grpc.ts";
import { kafkaMissing, prepareKafka } from "../services/kafka.ts";
import { buildKube, type KubeEnv, startKube } from "../services/kube.ts";
import { makeMariadb, mariadbMissing, MY_PASSWORD } from "../services/mariadb.ts";
import { influxdbMissing, makeInfluxdb } from "../services/influxdb.ts";
import { makeNats, natsMissing } from "../services/nats.ts";
import { makePostgres, PG_PASSWORD, postgresMissing } from "../services/postgres.ts";
import { buildPyWs, startPyWs } from "../services/pyws.ts";
import { rabbitmqMissing, startRabbitmq } from "../services/rabbitmq.ts";
import { makeRedis, REDIS_PASSWORD, redisMissing } from "../services/redis.ts";
import { buildVersitygw, startS3 } from "../services/s3.ts";
import { SSHD_BIN, startSshd } from "../services/sshd.ts";
import { startSystemdUser, SYSTEMD_BIN } from "../services/systemd.ts";
import { makePki, type Pki } from "../services/tls.ts";

/** The scenarios of the suite. */
export type Scenario =
  | "late"
  | "satisfied"
  | "timeout"
  | "credential"
  | "secret"
  | "restart"
  | "tls";

/** A server of the kind with TLS, for the tls scenario. */
export interface TlsTarget {
  /** Arguments (after the kind's word) satisfied over TLS... */
  readonly satisfied: readonly string[][];
  /** ...with this detail (a string: the whole detail). */
  readonly detail: string | RegExp;
  /** Arguments (after the kind's word) retried while pending, with their last_error. */
  readonly pending: readonly (readonly [string[], string])[];
  /** Stops the server. */
  remove(): Promise<unknown>;
}

/** One row's live target, made and driven by the suite. */
export interface LiveTarget {
  /** Condition words that hold once the target is up (the kind's word first). */
  readonly satisfied: readonly string[];
  /** The detail of a satisfied attempt (matched whole). */
  readonly detail: RegExp;
  /** Condition words that stay pending while the target is up... */
  readonly pending: readonly string[];
  /** ...with this in their last_error. */
  readonly pendingError: string | RegExp;
  /** Brings the target up; idempotent. `child` is the run that waits for it, if any. */
  up(child?: Deno.ChildProcess): Promise<unknown>;
  /** What an attempt says while the target is down. */
  readonly downError: string | RegExp;
  /** Takes the target down (the restart scenario); returns once attempts see it down. */
  down?(child?: Deno.ChildProcess): Promise<unknown>;
  /** Condition words whose credential the service refuses, and the last_error fragment. */
  readonly wrong?: {
    readonly args: readonly string[];
    readonly error?: string | RegExp;
    /** The kind ends the run at once (exit 3) on refused credentials, instead of waiting. */
    readonly fatal?: boolean;
  };
  /** A login the service does not know yet, and what adds it. */
  readonly grant?: { readonly args: readonly string[]; add(): Promise<unknown> };
  /** The condition without its password, for --password-env and --password-file. */
  readonly passwordFlags?: { readonly bare: readonly string[]; readonly password: string };
  /** Secrets the arguments or the environment hold: none may show in any output. */
  readonly secrets?: readonly string[];
  /** Condition words that are a usage error and hold a secret. */
  readonly usage?: readonly string[];
  /** Environment of every run. */
  readonly env?: Record<string, string>;
  /** Runs waitcmd under this command (e.g. in a network namespace of its own). */
  readonly wrapper?: string[];
  /** The deadline of the runs that time out (default 1s). */
  readonly deadline?: string;
  /**
   * Starts a server of the kind with `pki`'s server certificate (which names localhost only, not
   * 127.0.0.1); `other` is a CA that did not sign it.
   */
  tls?(pki: Pki, other: Pki): Promise<TlsTarget>;
  /** Stops the service and removes what the row made. */
  remove(): Promise<void>;
}

/** A kind's row. */
export interface LiveRow {
  /** What the row needs, for the test's name and `ignoreWithout`. */
  readonly needs: string;
  /** Why that cannot be had here, or undefined. */
  readonly missing?: () => Promise<string | undefined>;
  /** Makes the target, down (the late-start scenario brings it up). */
  make(): LiveTarget | Promise<LiveTarget>;
  /** Why a scenario does not apply to the kind. */
  readonly na?: Partial<Record<Scenario, string>>;
}

/** A secret with characters that URLs must encode. */
export const MARK = "Zq9Live/Mark:7";

/** A temporary directory, removed with `remove()`. */
async function tempDir(kind: string): Promise<string> {
  return await Deno.makeTempDir({ prefix: `waitcmd-live-${kind}-` });
}

/** Something that runs while up: `start` makes it, its result's `stop` ends it. */
function toggle(start: () => Promise<{ stop(): Promise<unknown> }>) {
  let running: { stop(): Promise<unknown> } | undefined;
  return {
    get up() {
      return running !== undefined;
    },
    async start() {
      running ??= await start();
    },
    async stop() {
      const r = running;
      running = undefined;
      await r?.stop();
    },
  };
}

/** A TCP listener on a fixed port that accepts (and holds) connections while up. */
function tcpServer(
  port: number,
  listen: () => Deno.Listener = () => Deno.listen({ hostname: "127.0.0.1", port }),
) {
  return toggle(() => {
    const held = holdConnections(listen());
    return Promise.resolve({ stop: () => held.close() });
  });
}

/** A file target: up writes it, down removes it. */
function fileToggle(path: string, write: () => Promise<unknown>) {
  return {
    up: async () => {
      if (!(await Deno.stat(path).then(() => true, () => false))) await write();
    },
    down: () => Deno.remove(path, { recursive: true }).catch(() => {}),
  };
}

/** Writes `text` to `path` whole at once (a rename), as a finished download appears. */
async function writeWhole(path: string, data: string | Uint8Array): Promise<void> {
  const tmp = `${path}.part-${crypto.randomUUID()}`;
  if (typeof data === "string") await Deno.writeTextFile(tmp, data);
  else await Deno.writeFile(tmp, data);
  await Deno.rename(tmp, path);
}

/** A throwaway server of tests/services that logs users in by URL, stops and starts again. */
interface LoginServer {
  readonly port: number;
  url(user?: string, password?: string): string;
  start(): Promise<unknown>;
  stop(): Promise<unknown>;
  remove(): Promise<void>;
}

/**
 * The row of a kind whose server logs `app` in with `password` from the URL: made stopped,
 * refused with MARK as the password, a user `late1` (password `late-pw-1`) added late by
 * `grant`, and a second server made with TLS for the tls scenario.
 */
function loginRow<S extends LoginServer>(kind: string, o: {
  readonly needs: string;
  readonly missing: () => Promise<string | undefined>;
  /** Makes a server (started unless `start: false`), with TLS from these files if asked. */
  make(opts: {
    start?: boolean;
    tls?: { caFile: string; certFile: string; keyFile: string };
  }): Promise<S>;
  readonly password: string;
  readonly detail: RegExp;
  /** Words after the URL that stay pending, and their last_error. */
  readonly pending: readonly [string[], string];
  /** Why the server refuses `app` with a wrong password. */
  readonly refused: string;
  /** The whole text of that refusal, when it is not `authentication failed for user "app": <refused>`. */
  readonly wrongError?: string;
  grant(server: S): { url: string; add(): Promise<unknown> };
  /** The URL without a password. */
  bare(server: S): string;
  /** Words after a URL with MARK as its password that are a usage error. */
  readonly usage: readonly string[];
  /** What the TLS server (`server`, with `pki`'s certificate) satisfies and leaves pending. */
  tls(server: S, pki: Pki, other: Pki): Omit<TlsTarget, "remove">;
  /** The deadline of the runs that time out, where an attempt may take longer than 1s. */
  readonly deadline?: string;
}): LiveRow {
  return {
    needs: o.needs,
    missing: o.missing,
    async make() {
      const s = await o.make({ start: false });
      const grant = o.grant(s);
      return {
        satisfied: [kind, s.url()],
        detail: o.detail,
        pending: [kind, s.url(), ...o.pending[0]],
        pendingError: o.pending[1],
        up: () => s.start(),
        down: () => s.stop(),
        downError: "connection refused",
        wrong: {
          args: [kind, s.url("app", MARK)],
          error: o.wrongError ?? `authentication failed for user "app": ${o.refused}`,
        },
        grant: { args: [kind, grant.url], add: grant.add },
        passwordFlags: { bare: [kind, o.bare(s)], password: o.password },
        secrets: [MARK, o.password, "late-pw-1"],
        usage: [kind, s.url("app", MARK), ...o.usage],
        deadline: o.deadline,
        tls: async (pki, other) => {
          const { ca, server } = pki;
          const tls = await o.make({
            tls: { caFile: ca.certFile, certFile: server.certFile, keyFile: server.keyFile },
          });
          return { ...o.tls(tls, pki, other), remove: () => tls.remove() };
        },
        remove: () => s.remove(),
      };
    },
  };
}

export const LIVE_ROWS: Record<string, LiveRow> = {
  http: {
    needs: "an HTTP server (Deno.serve) checking basic auth",
    make() {
      const port = freePort();
      const auth = `Basic ${btoa(`app:${MARK}`)}`;
      const server = toggle(() =>
        Promise.resolve(
          Deno.serve({ hostname: "127.0.0.1", port, onListen: () => {} }, (req) => {
            if (req.headers.get("authorization") !== auth) {
              return new Response("who?", { status: 401 });
            }
            const path = new URL(req.url).pathname;
            return new Response(path === "/ready" ? "ok" : "no", {
              status: path === "/ready" ? 200 : 503,
            });
          }),
        ).then((s) => ({ stop: () => s.shutdown() }))
      );
      const url = (pw: string, path: string) =>
        `http://app:${encodeURIComponent(pw)}@127.0.0.1:${port}${path}`;
      return {
        satisfied: ["http", url(MARK, "/ready")],
        detail: /200 OK/,
        pending: ["http", url(MARK, "/starting")],
        pendingError: "status 503, expected 2xx",
        up: () => server.start(),
        down: () => server.stop(),
        downError: "connection refused",
        wrong: { args: ["http", url("wrong-pw", "/ready")], error: "status 401, expected 2xx" },
        secrets: [MARK, btoa(`app:${MARK}`)],
        usage: ["http", url(MARK, "/ready"), "--status", "999"],
        remove: () => server.stop(),
      };
    },
  },

  tcp: {
    needs: "a TCP listener",
    make() {
      const port = freePort();
      const server = tcpServer(port);
      return {
        satisfied: ["tcp", `localhost:${port}`],
        detail: new RegExp(`connected to localhost:${port}`),
        pending: ["tcp", `127.0.0.1:${freePort()}`],
        pendingError: "connection refused",
        up: () => server.start(),
        down: () => server.stop(),
        downError: "connection refused",
        remove: () => server.stop(),
      };
    },
    na: { credential: "tcp has no credentials", secret: "tcp takes no secret" },
  },

  file: {
    needs: "a local file",
    async make() {
      const dir = await tempDir("file");
      const f = fileToggle(`${dir}/sub/app.conf`, async () => {
        await Deno.mkdir(`${dir}/sub`, { recursive: true });
        await writeWhole(`${dir}/sub/app.conf`, "state: ready\n");
      });
      return {
        satisfied: ["file", `${dir}/sub/app.conf`, "--contains", "ready"],
        detail: /contains "ready" \(13 B\)/,
        pending: ["file", `${dir}/sub/app.conf`, "--contains", "never"],
        pendingError: 'does not contain "never" (13 B)',
        ...f,
        downError: "does not exist",
        remove: () => Deno.remove(dir, { recursive: true }),
      };
    },
    na: { credential: "file has no credentials", secret: "file takes no secret" },
  },

  log: {
    needs: "a local log file",
    async make() {
      const dir = await tempDir("log");
      const log = `${dir}/app.log`;
      await Deno.writeTextFile(log, "starting\n");
      return {
        satisfied: ["log", log, "--contains", "ready", "--from-start"],
        detail: /.*/,
        pending: ["log", log, "--contains", "never", "--from-start"],
        pendingError: "no matching line yet",
        up: async () => {
          if (!(await Deno.readTextFile(log)).includes("ready")) {
            await Deno.writeTextFile(log, "service ready\n", { append: true });
          }
        },
        downError: "no matching line yet",
        remove: () => Deno.remove(dir, { recursive: true }),
      };
    },
    na: {
      credential: "log has no credentials",
      secret: "log takes no secret",
      restart: "a log holds once a line came; rotation and truncation are in log_test",
    },
  },

  dns: {
    needs: "dnsmasq",
    missing: () => binariesMissing(DNSMASQ_BIN),
    async make() {
      const d = await startDnsmasq({ a: { "app.test": "10.1.2.3" } });
      const resolves = async () => (await dnsQuery(d.server, "live.test", "A")).answers.length > 0;
      const wire = ["--resolver", "wire", "--server", d.server];
      return {
        satisfied: ["dns", "live.test", ...wire],
        detail: /A 10\.9\.8\.7/,
        pending: ["dns", "app.test", ...wire, "--equals", "10.9.9.9"],
        pendingError: "A records do not include 10.9.9.9 (got A 10.1.2.3)",
        up: async () => {
          if (!(await resolves())) await d.addHost("live.test", "10.9.8.7");
        },
        down: async () => {
          await d.removeHost("live.test");
          await waitUntil("dnsmasq to drop live.test", async () => !(await resolves()));
        },
        downError: /NXDOMAIN/,
        remove: () => d.stop(),
      };
    },
    na: { credential: "dns has no credentials", secret: "dns takes no secret" },
  },

  tls: {
    needs: "a TLS listener (Deno.listenTls) with a CA made for the run",
    async make() {
      const pki = await makePki({});
      const other = await makePki({});
      const port = freePort();
      const server = tcpServer(port, () =>
        Deno.listenTls({
          hostname: "127.0.0.1",
          port,
          cert: Deno.readTextFileSync(pki.server.certFile),
          key: Deno.readTextFileSync(pki.server.keyFile),
        }));
      const target = `127.0.0.1:${port}`;
      return {
        satisfied: ["tls", target, "--ca-file", pki.ca.certFile],
        detail: /certificate for 127\.0\.0\.1 valid until .*/,
        pending: ["tls", target, "--ca-file", other.ca.certFile],
        pendingError: "certificate chain not trusted",
        up: () => server.start(),
        down: () => server.stop(),
        downError: "connection refused",
        remove: async () => {
          await server.stop();
          await pki.cleanup();
          await other.cleanup();
        },
      };
    },
    na: {
      credential: "tls has no credentials (client certificates are http's)",
      secret: "tls takes no secret",
    },
  },

  ssh: {
    needs: "OpenSSH sshd",
    missing: () => binariesMissing(SSHD_BIN),
    make() {
      const port = freePort();
      const sshd = toggle(() => startSshd({ port }));
      const target = `127.0.0.1:${port}`;
      const login = ["--user", "waittest", "--password-env", "SSH_PW"];
      return {
        satisfied: ["ssh", target, ...login],
        detail: /logged in as waittest .*/,
        pending: ["ssh", target, ...login, "--banner-contains", "Dropbear"],
        pendingError: /banner/,
        up: () => sshd.start(),
        down: () => sshd.stop(),
        downError: "connection refused",
        wrong: {
          args: ["ssh", target, "--user", "waittest", "--password", MARK],
          error: "authentication failed for user waittest",
        },
        passwordFlags: { bare: ["ssh", target, "--user", "waittest"], password: "s3cret" },
        env: { SSH_PW: "s3cret" },
        secrets: [MARK, "s3cret"],
        usage: ["ssh", target, "--password", MARK],
        // sshd answers a failed password after a delay (PAM): two attempts take seconds.
        deadline: "6s",
        remove: () => sshd.stop(),
      };
    },
  },

  objstore: {
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

  glob: {
    needs: "a local directory",
    async make() {
      const dir = await tempDir("glob");
      await Deno.mkdir(`${dir}/out/deep`, { recursive: true });
      return {
        satisfied: ["glob", `${dir}/out/**/*.ready`],
        detail: /1 match: .*\/out\/deep\/app\.ready/,
        pending: ["glob", `${dir}/out/**/*.never`],
        pendingError: "no matches",
        ...fileToggle(
          `${dir}/out/deep/app.ready`,
          () => writeWhole(`${dir}/out/deep/app.ready`, ""),
        ),
        downError: "no matches",
        remove: () => Deno.remove(dir, { recursive: true }),
      };
    },
    na: { credential: "glob has no credentials", secret: "glob takes no secret" },
  },

  ports: {
    needs: "TCP listeners",
    make() {
      const [a, b] = [freePort(), freePort()];
      const servers = [tcpServer(a), tcpServer(b)];
      return {
        satisfied: ["ports", "127.0.0.1", "--range", `${a},${b}`],
        detail: /all 2 ports open \(\d+, \d+\)/,
        pending: ["ports", "127.0.0.1", "--range", `${a},${freePort()}`],
        pendingError: /closed: \d+ \(1 of 2 open\)/,
        up: () => Promise.all(servers.map((s) => s.start())),
        down: () => Promise.all(servers.map((s) => s.stop())),
        downError: /closed: .*connection refused/,
        remove: () => Promise.all(servers.map((s) => s.stop())).then(() => {}),
      };
    },
    na: { credential: "ports has no credentials", secret: "ports takes no secret" },
  },

  orch: {
    needs: "kube-apiserver and etcd",
    missing: () => buildMissing(() => buildKube()),
    async make() {
      const kube: KubeEnv = await startKube();
      const pod = {
        apiVersion: "v1",
        kind: "Pod",
        metadata: { name: "live-web", namespace: "default" },
        spec: { containers: [{ name: "web", image: "busybox" }] },
      };
      const path = "/api/v1/namespaces/default/pods/live-web";
      let apiserver = true;
      const kc = (k: string) => ["--kubeconfig", k];
      return {
        satisfied: ["orch", "pod/live-web", ...kc(kube.tokenKubeconfig)],
        detail: /pod\/live-web exists.*/,
        // Nothing schedules the pod (no scheduler runs): it is never Ready.
        pending: ["orch", "pod/live-web", "--for", "ready", ...kc(kube.tokenKubeconfig)],
        pendingError: /not ready|Pending|not scheduled/,
        up: async () => {
          if (!apiserver) {
            await kube.startApiserver();
            apiserver = true;
          }
          if (!(await kube.tryGet(path))) await kube.create("/api/v1/namespaces/default/pods", pod);
        },
        down: async () => {
          await kube.stopApiserver();
          apiserver = false;
        },
        // A pooled HTTP/2 connection may meet the apiserver stopping before a refused connect.
        downError: /not found|connection (refused|closed|reset)/,
        // Refused credentials are fatal for orch (docs/contract.md, orch).
        wrong: {
          args: ["orch", "pod/live-web", ...kc(kube.badKubeconfig)],
          error: "credentials refused (401 Unauthorized)",
          fatal: true,
        },
        secrets: [kube.adminToken],
        usage: ["orch", "pod/live-web", ...kc(kube.tokenKubeconfig), "--for", "sometime"],
        remove: () => kube.stop(),
      };
    },
  },

  container: {
    needs: "a private dockerd",
    missing: () => binariesMissing(DOCKERD_BIN),
    async make() {
      const d = await startDocker();
      await d.buildBusyboxImage();
      let made = false;
      return {
        satisfied: ["container", "live-web"],
        detail: /container live-web running.*/,
        pending: ["container", "live-web", "--status", "exited"],
        pendingError: /running.*want exited/,
        up: async () => {
          if (!made) await d.runContainer("live-web");
          else await d.docker(["start", "live-web"]);
          made = true;
        },
        down: () => d.docker(["stop", "-t", "1", "live-web"]),
        downError: /no container or compose service named "live-web"|exited/,
        env: d.env,
        remove: () => d.stop(),
      };
    },
    na: {
      credential: "container talks to a local engine socket",
      secret: "container takes no secret",
    },
  },

  process: {
    needs: "a local process",
    async make() {
      const dir = await tempDir("process");
      // Under 15 characters: the kernel cuts comm there (long names are process_test's).
      const id = crypto.randomUUID().slice(0, 6);
      const name = `zqlive-${id}`;
      await Deno.copyFile("/bin/sleep", `${dir}/${name}`);
      await Deno.chmod(`${dir}/${name}`, 0o755);
      const proc = toggle(() => {
        const child = new Deno.Command(`${dir}/${name}`, {
          args: ["600"],
          stdin: "null",
          stdout: "null",
          stderr: "null",
        }).spawn();
        return Promise.resolve({
          async stop() {
            child.kill("SIGKILL");
            await child.status;
          },
        });
      });
      return {
        satisfied: ["process", "--name", name],
        detail: new RegExp(`process ${name} running \\(pid \\d+\\)`),
        pending: ["process", "--name", `zqnone-${id}`],
        pendingError: `process zqnone-${id} not running`,
        up: () => proc.start(),
        down: () => proc.stop(),
        downError: `process ${name} not running`,
        remove: async () => {
          await proc.stop();
          await Deno.remove(dir, { recursive: true });
        },
      };
    },
    na: { credential: "process has no credentials", secret: "process takes no secret" },
  },

  svcmgr: {
    needs: "a systemd user manager",
    missing: () => binariesMissing(SYSTEMD_BIN),
    async make() {
      const sd = await startSystemdUser();
      await sd.writeUnit("live.service", "[Service]\nExecStart=/bin/sleep 600\n");
      return {
        // By its alias: the report names the condition "systemd live.service", of kind svcmgr.
        satisfied: ["systemd", "live.service", "--user"],
        detail: /active \(running\)/,
        pending: ["svcmgr", "live.service", "--user", "--failed"],
        pendingError: "active (running)",
        up: () => sd.systemctl(["start", "live.service"]),
        down: () => sd.systemctl(["stop", "live.service"]),
        downError: "inactive (dead)",
        env: sd.env,
        remove: () => sd.stop(),
      };
    },
    na: {
      credential: "svcmgr asks the local manager over D-Bus",
      secret: "svcmgr takes no secret",
    },
  },

  exec: {
    needs: "a local command",
    async make() {
      const dir = await tempDir("exec");
      const flag = `${dir}/ready`;
      const cmd = ["--", "sh", "-c", 'test -f "$1"', "sh", flag];
      return {
        satisfied: ["exec", ...cmd],
        detail: /exit 0/,
        pending: ["exec", "--", "sh", "-c", "exit 4"],
        pendingError: "exit 4",
        ...fileToggle(flag, () => Deno.writeTextFile(flag, "")),
        downError: "exit 1",
        remove: () => Deno.remove(dir, { recursive: true }),
      };
    },
    na: {
      credential: "exec has no credentials",
      secret:
        "exec takes no secret; the credentials among its arguments are masked in its name (exec_test)",
    },
  },

  unix: {
    needs: "a Unix socket listener",
    async make() {
      const dir = await tempDir("unix");
      const path = `${dir}/app.sock`;
      const server = tcpServer(0, () => Deno.listen({ transport: "unix", path }));
      return {
        satisfied: ["unix", path],
        detail: /connected to .*\/app\.sock/,
        pending: ["unix", `${dir}/other.sock`],
        pendingError: "no such file or directory",
        up: () => server.start(),
        down: async () => {
          await server.stop();
          await Deno.remove(path).catch(() => {});
        },
        downError: "no such file or directory",
        remove: async () => {
          await server.stop();
          await Deno.remove(dir, { recursive: true });
        },
      };
    },
    na: { credential: "unix has no credentials", secret: "unix takes no secret" },
  },

  postgres: loginRow("postgres", {
    needs: "PostgreSQL",
    missing: postgresMissing,
    make: makePostgres,
    password: PG_PASSWORD,
    detail: /SELECT 1 answered as app@app/,
    pending: [["--query", "SELECT state FROM status"], 'relation "status" does not exist'],
    refused: 'password authentication failed for user "app"',
    // The server's text names the user: said once.
    wrongError: 'password authentication failed for user "app"',
    grant: (pg) => ({
      url: pg.url("late1", "late-pw-1", "postgres"),
      add: () => pg.psql("CREATE ROLE late1 LOGIN PASSWORD 'late-pw-1'"),
    }),
    bare: (pg) => `postgres://app@127.0.0.1:${pg.port}/app`,
    usage: ["--expect", "x"],
    tls: (pg, pki, other) => {
      const byIp = (q = "") => `${pg.url()}${q}`;
      const byName = (q = "") => `postgres://app:${PG_PASSWORD}@localhost:${pg.port}/app${q}`;
      return {
        satisfied: [
          [byName(), "--tls", "--ca-file", pki.ca.certFile],
          [byName("?sslmode=verify-full"), "--ca-file", pki.ca.certFile],
          [byIp("?sslmode=verify-ca"), "--ca-file", pki.ca.certFile],
          [byIp("?sslmode=require")],
          [byIp("?sslmode=prefer")],
          [byIp(), "--tls", "--insecure"],
        ],
        detail: "SELECT 1 answered as app@app over TLS",
        pending: [
          [
            [byIp(), "--tls", "--ca-file", pki.ca.certFile],
            "certificate is not valid for 127.0.0.1",
          ],
          [
            [byName("?sslmode=verify-full"), "--ca-file", other.ca.certFile],
            "certificate not trusted (unable to verify the first certificate)",
          ],
          [[byName(), "--tls"], "certificate not trusted (unable to verify the first certificate)"],
        ],
      };
    },
  }),

  mysql: loginRow("mysql", {
    needs: "MariaDB",
    missing: mariadbMissing,
    make: makeMariadb,
    password: MY_PASSWORD,
    detail: /SELECT 1 answered as app@app/,
    pending: [["--query", "SELECT state FROM status"], "Table 'app.status' doesn't exist"],
    refused: "Access denied for user 'app'@'127.0.0.1' (using password: YES)",
    wrongError: `authentication failed for user "app" from '127.0.0.1' (using password: YES)`,
    grant: (db) => ({
      url: db.url("late1", "late-pw-1", ""),
      add: () => db.sql("CREATE USER 'late1'@'%' IDENTIFIED BY 'late-pw-1'"),
    }),
    bare: (db) => `mysql://app@127.0.0.1:${db.port}/app`,
    usage: ["--min-rows", "1"],
    tls: (db, pki, other) => {
      const byIp = db.url();
      const byName = `mysql://app:${MY_PASSWORD}@localhost:${db.port}/app`;
      return {
        satisfied: [[byName, "--tls", "--ca-file", pki.ca.certFile], [byIp, "--tls", "--insecure"]],
        detail: "SELECT 1 answered as app@app over TLS",
        pending: [
          [[byIp, "--tls", "--ca-file", pki.ca.certFile], "certificate is not valid for 127.0.0.1"],
          [
            [byName, "--tls", "--ca-file", other.ca.certFile],
            "certificate not trusted (unable to verify the first certificate)",
          ],
          [
            [byName, "--tls"],
            "certificate not trusted (self-signed certificate in the chain)",
          ],
        ],
      };
    },
  }),

  redis: loginRow("redis", {
    needs: "Redis",
    missing: redisMissing,
    make: makeRedis,
    password: REDIS_PASSWORD,
    detail: /PONG/,
    pending: [["--key", "app:ready"], 'key "app:ready" does not exist'],
    refused: "WRONGPASS invalid username-password pair or user is disabled.",
    grant: (r) => ({
      url: r.url("late1", "late-pw-1"),
      add: () => r.cli("ACL", "SETUSER", "late1", "on", ">late-pw-1", "~*", "+@all"),
    }),
    bare: (r) => `redis://app@127.0.0.1:${r.port}`,
    usage: ["--equals", "x"],
    tls: (r, pki, other) => {
      const byIp = r.url();
      assert(byIp.startsWith("rediss://"), byIp);
      const byName = `rediss://app:${REDIS_PASSWORD}@localhost:${r.port}`;
      return {
        satisfied: [
          [byName, "--ca-file", pki.ca.certFile],
          [byName.replace("rediss:", "redis:"), "--tls", "--ca-file", pki.ca.certFile],
          [byIp, "--insecure"],
        ],
        detail: "PONG, TLS",
        pending: [
          [[byIp, "--ca-file", pki.ca.certFile], "certificate is not valid for 127.0.0.1"],
          [
            [byName, "--ca-file", other.ca.certFile],
            "certificate not trusted (unable to verify the first certificate)",
          ],
        ],
      };
    },
  }),

  mongodb: loginRow("mongodb", {
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

  rabbitmq: {
    needs: "RabbitMQ",
    missing: rabbitmqMissing,
    async make() {
      const mq = await startRabbitmq();
      await mq.stopApp();
      let up = false;
      return {
        satisfied: ["rabbitmq", mq.url("admin", mq.adminPassword)],
        detail: /.*as "admin".*/,
        pending: ["rabbitmq", mq.url("admin", mq.adminPassword), "--queue", "none"],
        pendingError: "NOT_FOUND - no queue 'none'",
        up: async () => {
          if (!up) await mq.startApp();
          up = true;
        },
        down: async () => {
          await mq.stopApp();
          up = false;
        },
        downError: /connection (refused|reset|closed)/,
        wrong: {
          args: ["rabbitmq", mq.url("admin", MARK)],
          error: 'authentication failed for user "admin": ACCESS_REFUSED',
        },
        grant: {
          args: ["rabbitmq", mq.url("late1", "late-pw-1")],
          add: () => mq.addUser("late1", "late-pw-1"),
        },
        passwordFlags: {
          bare: ["rabbitmq", `amqp://admin@127.0.0.1:${mq.port}/`],
          password: mq.adminPassword,
        },
        secrets: [MARK, mq.adminPassword, "late-pw-1"],
        usage: ["rabbitmq", mq.url("admin", MARK), "--min-messages", "1"],
        deadline: "2s",
        remove: () => mq.stop(),
      };
    },
  },

  kafka: {
    needs: "Apache Kafka (KRaft)",
    missing: kafkaMissing,
    async make() {
      const k = await prepareKafka({ users: { app: "kafka-live-pw" } });
      const sasl = (pwEnv: string) => [
        ...["kafka", `127.0.0.1:${k.saslPort}`, "--sasl-mechanism", "plain", "--user", "app"],
        ...["--password-env", pwEnv],
      ];
      let up = false;
      return {
        satisfied: sasl("KAFKA_PW"),
        detail: /cluster \S+: 1 broker, SASL PLAIN as "app"/,
        pending: [...sasl("KAFKA_PW"), "--topic", "orders"],
        pendingError: 'topic "orders" does not exist (UNKNOWN_TOPIC_OR_PARTITION)',
        up: async () => {
          if (!up) await k.start();
          up = true;
        },
        down: async () => {
          await k.halt();
          up = false;
        },
        downError: `connection refused (127.0.0.1:${k.saslPort})`,
        wrong: {
          args: sasl("KAFKA_WRONG_PW"),
          error:
            'authentication failed for user "app": Authentication failed: Invalid username or password',
        },
        passwordFlags: { bare: sasl("x").slice(0, -2), password: "kafka-live-pw" },
        env: { KAFKA_PW: "kafka-live-pw", KAFKA_WRONG_PW: MARK },
        secrets: [MARK, "kafka-live-pw"],
        usage: [...sasl("KAFKA_WRONG_PW"), "--partitions", "2"],
        deadline: "2s",
        remove: () => k.stop(),
      };
    },
  },

  nats: {
    needs: "nats-server",
    missing: natsMissing,
    async make() {
      const n = await makeNats({ start: false, user: { name: "app", password: "nats-live-pw" } });
      return {
        satisfied: ["nats", n.url("app:nats-live-pw")],
        detail: /NATS \d+\.\d+\.\d+/,
        pending: ["nats", n.url("app:nats-live-pw"), "--jetstream"],
        pendingError: "JetStream is not enabled on the server",
        up: () => n.start(),
        down: () => n.stop(),
        downError: "connection refused",
        wrong: {
          args: ["nats", n.url(`app:${encodeURIComponent(MARK)}`)],
          error: 'authentication failed for user "app": Authorization Violation',
        },
        passwordFlags: { bare: ["nats", n.url("app")], password: "nats-live-pw" },
        secrets: [MARK, "nats-live-pw"],
        usage: ["nats", n.url(`app:${encodeURIComponent(MARK)}`), "--stream", "a.b"],
        tls: async (pki, other) => {
          const tls = await makeNats({
            tls: { certFile: pki.server.certFile, keyFile: pki.server.keyFile },
            jetstream: true,
          });
          const byName = `tls://localhost:${tls.port}`;
          const byIp = tls.url();
          assert(byIp.startsWith("tls://127.0.0.1:"), byIp);
          return {
            satisfied: [
              [byName, "--ca-file", pki.ca.certFile],
              [
                `nats://localhost:${tls.port}`,
                "--tls",
                "--ca-file",
                pki.ca.certFile,
                "--jetstream",
              ],
              [byIp, "--insecure"],
            ],
            detail: /, TLS$/,
            pending: [
              [[byIp, "--ca-file", pki.ca.certFile], "certificate is not valid for 127.0.0.1"],
              [
                [byName, "--ca-file", other.ca.certFile],
                "certificate not trusted (unable to verify the first certificate)",
              ],
              [[byName], "certificate not trusted (unable to verify the first certificate)"],
              [
                [`nats://localhost:${tls.port}`],
                "the server requires TLS (use a tls:// URL or --tls)",
              ],
            ],
            remove: () => tls.remove(),
          };
        },
        remove: () => n.remove(),
      };
    },
  },

  influxdb: {
    needs: "influxd (Debian's influxdb)",
    missing: influxdbMissing,
    async make() {
      const s = await makeInfluxdb({ start: false });
      const withPassword = `http://app:${encodeURIComponent(MARK)}@127.0.0.1:${s.port}`;
      return {
        satisfied: ["influxdb", withPassword],
        detail: /204 No Content/,
        pending: ["influxdb", `${s.url}/influx`],
        pendingError: "/influx/ping answered status 404, expected 2xx",
        up: () => s.start(),
        down: () => s.stop(),
        downError: "connection refused",
        secrets: [MARK],
        usage: ["influxdb", `${withPassword}/?db=x`],
        // A failed TLS handshake with influxd takes most of a second on a busy machine.
        deadline: "2s",
        tls: async (pki, other) => {
          const tls = await makeInfluxdb({
            tls: {
              caFile: pki.ca.certFile,
              certFile: pki.server.certFile,
              keyFile: pki.server.keyFile,
            },
          });
          const byName = `https://localhost:${tls.port}`;
          const byIp = tls.url;
          return {
            satisfied: [[byName, "--ca-file", pki.ca.certFile], [byIp, "--insecure"]],
            detail: "204 No Content",
            pending: [
              [[byIp, "--ca-file", pki.ca.certFile], "certificate is not valid for 127.0.0.1"],
              [
                [byName, "--ca-file", other.ca.certFile],
                "certificate not trusted (unable to verify the first certificate)",
              ],
              [[byName], "certificate not trusted (unable to verify the first certificate)"],
            ],
            remove: () => tls.remove(),
          };
        },
        remove: () => s.remove(),
      };
    },
    na: { credential: "InfluxDB answers /ping without authentication" },
  },

  pidfile: {
    needs: "a local pid file and process",
    async make() {
      const dir = await tempDir("pidfile");
      const pf = `${dir}/app.pid`;
      const child = new Deno.Command("sleep", { args: ["600"], stdout: "null", stderr: "null" })
        .spawn();
      const dead = new Deno.Command("true").spawn();
      await dead.status;
      await Deno.writeTextFile(`${dir}/dead.pid`, `${dead.pid}\n`);
      return {
        satisfied: ["pidfile", pf, "--name", "sleep"],
        detail: new RegExp(`process ${child.pid} running \\(sleep\\)`),
        pending: ["pidfile", `${dir}/dead.pid`],
        pendingError: `process ${dead.pid} not running`,
        ...fileToggle(pf, () => writeWhole(pf, `${child.pid}\n`)),
        downError: "does not exist",
        remove: async () => {
          child.kill("SIGKILL");
          await child.status;
          await Deno.remove(dir, { recursive: true });
        },
      };
    },
    na: { credential: "pidfile has no credentials", secret: "pidfile takes no secret" },
  },

  lockfile: {
    needs: "a local lock file",
    async make() {
      const dir = await tempDir("lockfile");
      const lock = `${dir}/app.lock`;
      return {
        satisfied: ["lockfile", lock, "--present"],
        detail: /lock file exists \(modified .*\)/,
        pending: ["lockfile", `${dir}/other.lock`, "--present"],
        pendingError: "does not exist",
        ...fileToggle(lock, () => Deno.writeTextFile(lock, "")),
        downError: "does not exist",
        remove: () => Deno.remove(dir, { recursive: true }),
      };
    },
    na: { credential: "lockfile has no credentials", secret: "lockfile takes no secret" },
  },

  permission: {
    needs: "a local file",
    async make() {
      const dir = await tempDir("permission");
      const f = `${dir}/app.key`;
      return {
        satisfied: ["permission", f, "--mode", "0640"],
        detail: /file 0640, owner \d+, group \d+/,
        pending: ["permission", f, "--mode", "0600"],
        pendingError: "mode is 0640, not 0600",
        up: async () => {
          await Deno.writeTextFile(f, "key\n");
          await Deno.chmod(f, 0o640);
        },
        down: () => Deno.chmod(f, 0o644),
        downError: /does not exist|mode is 0644, not 0640/,
        remove: () => Deno.remove(dir, { recursive: true }),
      };
    },
    na: { credential: "permission has no credentials", secret: "permission takes no secret" },
  },

  checksum: {
    needs: "a local file",
    async make() {
      const dir = await tempDir("checksum");
      const f = `${dir}/release.bin`;
      const data = "release 1.2.3\n";
      const digest = Array.from(
        new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(data))),
      ).map((b) => b.toString(16).padStart(2, "0")).join("");
      return {
        satisfied: ["checksum", f, "--equals", `sha256:${digest}`],
        detail: /sha256 matches \(14 B\)/,
        pending: ["checksum", f, "--equals", `sha256:${"0".repeat(64)}`],
        pendingError: `sha256 is ${digest}, not the expected digest (14 B)`,
        ...fileToggle(f, () => writeWhole(f, data)),
        downError: "does not exist",
        remove: () => Deno.remove(dir, { recursive: true }),
      };
    },
    na: { credential: "checksum has no credentials", secret: "checksum takes no secret" },
  },

  archive: {
    needs: "tar",
    async make() {
      const dir = await tempDir("archive");
      await Deno.mkdir(`${dir}/src/bin`, { recursive: true });
      await Deno.writeTextFile(`${dir}/src/bin/app`, "app\n");
      const tgz = `${dir}/release.tgz`;
      return {
        satisfied: ["archive", tgz, "--contains", "bin/app"],
        detail: /.*bin\/app.*/,
        pending: ["archive", tgz, "--contains", "bin/never"],
        pendingError: 'missing "bin/never"',
        ...fileToggle(tgz, async () => {
          await sh("tar", ["czf", `${dir}/part.tgz`, "-C", `${dir}/src`, "bin"]);
          await Deno.rename(`${dir}/part.tgz`, tgz);
        }),
        downError: "does not exist",
        remove: () => Deno.remove(dir, { recursive: true }),
      };
    },
    na: { credential: "archive has no credentials", secret: "archive takes no secret" },
  },

  cosign: {
    needs: "openssl",
    async make() {
      const dir = await tempDir("cosign");
      const bash = (script: string) => sh("bash", ["-c", `set -e; cd ${dir}; ${script}`]);
      await bash(
        "openssl genpkey -algorithm ed25519 -out key.pem; openssl pkey -in key.pem -pubout -out key.pub; echo release > blob; echo other > other",
      );
      const sign = (what: string, sig: string) =>
        bash(`openssl pkeyutl -sign -inkey key.pem -rawin -in ${what} | base64 > ${sig}`);
      await sign("other", "other.sig");
      const args = (sig: string) => [
        ...["cosign", "--blob", `${dir}/blob`, "--signature", `${dir}/${sig}`],
        ...["--key", `${dir}/key.pub`],
      ];
      return {
        satisfied: args("blob.sig"),
        detail: /signature verified \(Ed25519 key\)/,
        pending: args("other.sig"),
        pendingError: "the signature does not verify with the Ed25519 key",
        ...fileToggle(`${dir}/blob.sig`, () => sign("blob", "blob.sig")),
        downError: /blob\.sig does not exist/,
        remove: () => Deno.remove(dir, { recursive: true }),
      };
    },
    na: { credential: "cosign has no credentials", secret: "cosign takes no secret" },
  },

  grpc: {
    needs: "the reference gRPC health server (grpc-go)",
    missing: () => buildMissing(buildGrpcServer),
    make() {
      const h2c = `127.0.0.1:${freePort()}`;
      const server = toggle(() =>
        startGrpcServer({ h2c, requireHeader: `authorization: Bearer ${MARK}` })
      );
      const header = (v: string) => ["--header", `authorization: Bearer ${v}`];
      return {
        satisfied: ["grpc", `localhost:${h2c.split(":")[1]}`, ...header(MARK)],
        detail: /server SERVING/,
        pending: ["grpc", h2c, ...header(MARK), "--service", "none.Service"],
        pendingError: /SERVICE_UNKNOWN|NOT_FOUND|unknown/,
        up: () => server.start(),
        down: () => server.stop(),
        downError: "connection refused",
        wrong: {
          args: ["grpc", h2c, ...header("wrong-token")],
          error: "UNAUTHENTICATED: missing or wrong authorization",
        },
        secrets: [MARK],
        usage: ["grpc", h2c, ...header(MARK), "--servername", "x"],
        remove: () => server.stop(),
      };
    },
  },

  websocket: {
    needs: "Python websockets (PyPI)",
    missing: () => buildMissing(buildPyWs),
    make() {
      const port = freePort();
      const server = toggle(() =>
        startPyWs({ port, requireHeader: `Authorization: Bearer ${MARK}` })
      );
      // /greet sends a greeting at once; /deny refuses the upgrade (tests/services/pyws/server.py).
      const url = `ws://127.0.0.1:${port}/greet`;
      const header = (v: string) => ["--header", `Authorization: Bearer ${v}`];
      return {
        satisfied: ["websocket", `ws://localhost:${port}/greet`, ...header(MARK)],
        detail: /upgraded/,
        pending: ["websocket", `ws://127.0.0.1:${port}/deny`, ...header(MARK)],
        pendingError: "upgrade refused: status 403 Forbidden",
        up: () => server.start(),
        down: () => server.stop(),
        downError: "connection refused",
        wrong: {
          args: ["websocket", url, ...header("wrong-token")],
          error: "upgrade refused: status 401 Unauthorized",
        },
        secrets: [MARK],
        usage: ["websocket", url, ...header(MARK), "--contains", ""],
        remove: () => server.stop(),
      };
    },
  },

  udp: {
    needs: "a UDP responder (node:dgram)",
    async make() {
      const port = await freeUdpPort();
      const server = toggle(async () => {
        const s: Socket = createSocket("udp4");
        s.on("message", (msg, from) => {
          if (msg.toString() === "ping") s.send("pong ready", from.port, from.address);
        });
        await new Promise<void>((res) => s.bind(port, "127.0.0.1", res));
        return { stop: () => new Promise<void>((res) => s.close(() => res())) };
      });
      return {
        satisfied: ["udp", `127.0.0.1:${port}`, "--send", "ping", "--contains", "ready"],
        detail: /.*ready.*/,
        pending: ["udp", `127.0.0.1:${port}`, "--send", "ping", "--contains", "never"],
        pendingError: /no matching reply within 1s/,
        up: () => server.start(),
        down: () => server.stop(),
        downError: /no reply|refused/,
        deadline: "2s",
        remove: () => server.stop(),
      };
    },
    na: { credential: "udp has no credentials", secret: "udp takes no secret" },
  },

  ntp: {
    needs: "chrony",
    missing: chronyMissing,
    async make() {
      const port = await freeUdpPort();
      const chrony = toggle(() => startChrony({ port }));
      return {
        satisfied: ["ntp", `127.0.0.1:${port}`],
        detail: /offset [+-]\d+\.\d{3}ms, stratum 8/,
        pending: ["ntp", `127.0.0.1:${port}`, "--max-stratum", "2"],
        pendingError: "stratum 8 is above --max-stratum 2 (offset ",
        up: () => chrony.start(),
        down: () => chrony.stop(),
        downError: /no reply/,
        deadline: "2s",
        remove: () => chrony.stop(),
      };
    },
    na: { credential: "ntp has no credentials", secret: "ntp takes no secret" },
  },

  icmp: {
    needs: "ping and network namespaces",
    missing: async () => {
      const ping = await sh("sh", ["-c", "command -v ping"]).then(() => undefined, () => "no ping");
      if (ping) return ping;
      return await sh("unshare", ["--net", "--", "ip", "link", "set", "lo", "up"]).then(
        () => undefined,
        (e) => `cannot make a network namespace: ${(e as Error).message}`,
      );
    },
    async make() {
      const dir = await tempDir("icmp");
      const flag = `${dir}/answering`;
      // Each run gets a network namespace of its own (no packet leaves the machine), whose
      // loopback ignores echo requests unless the flag file exists; up and down change it.
      const ignore = (on: boolean) => `sysctl -qw net.ipv4.icmp_echo_ignore_all=${on ? 1 : 0}`;
      const setup = `ip link set lo up; [ -e ${flag} ] || ${ignore(true)}`;
      const inNs = (child: Deno.ChildProcess | undefined, cmd: string) =>
        child ? sh("nsenter", ["-t", String(child.pid), "-n", "sh", "-c", cmd]) : undefined;
      return {
        satisfied: ["icmp", "127.0.0.1"],
        detail: /1 echo reply from 127\.0\.0\.1, rtt avg [\d.]+ ms/,
        // No route in the namespace.
        pending: ["icmp", "10.9.9.9"],
        pendingError: "network is unreachable",
        up: async (child) => {
          await Deno.writeTextFile(flag, "");
          await inNs(child, ignore(false));
        },
        down: async (child) => {
          await Deno.remove(flag).catch(() => {});
          await inNs(child, ignore(true));
        },
        downError: /^no echo reply from 127\.0\.0\.1 \(\d+ sent\)$/,
        wrapper: ["unshare", "--net", "--", "sh", "-c", `${setup}\nexec "$0" "$@"`],
        remove: () => Deno.remove(dir, { recursive: true }),
      };
    },
    na: { credential: "icmp has no credentials", secret: "icmp takes no secret" },
  },
};
