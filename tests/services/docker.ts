/**
 * A private Docker Engine for the container kind's tests: Debian's dockerd
 * with its own socket, data-root and exec-root in a temporary directory (so it
 * never meets a system dockerd), no bridge and no iptables. No registry is
 * reachable, so test images are built FROM scratch with the static busybox.
 * Containers must run with `--network none`; compose services with
 * `network_mode: none`.
 *
 * ```ts
 * const d = await startDocker();
 * const image = await d.buildBusyboxImage();
 * await d.docker(["run", "-d", "--network", "none", "--name", "c1", image]);
 * await d.docker(["exec", "c1", "touch", "/tmp/healthy"]); // health -> healthy
 * const bare = await d.buildNoShellImage(); // httpd, nc, udhcpd; no shell
 * await d.runContainer("web", { image: bare }); // httpd listening on 8080
 * await d.stop(); // removes containers, stops dockerd, deletes its data
 * ```
 */

import { type Service, sh, spawnService, waitUntil } from "./_util.ts";

/** Debian's docker CLI, same API version as its dockerd (a newer /usr/local/bin/docker may exist). */
export const DOCKER_CLI = "/usr/bin/docker";
/** Debian's dockerd. */
export const DOCKERD_BIN = "/usr/sbin/dockerd";
/** Compose v1 (package docker-compose). */
export const COMPOSE_BIN = "/usr/bin/docker-compose";
/** The image tag {@link DockerEngine.buildBusyboxImage} builds by default. */
export const BUSYBOX_IMAGE = "waitcmd-test:busybox";

/** The image tag {@link DockerEngine.buildNoShellImage} builds. */
export const NOSHELL_IMAGE = "waitcmd-test:noshell";

/** HEALTHCHECK of the busybox image; it is healthy while /tmp/healthy exists. */
export interface HealthcheckSpec {
  /** Default "1s". */
  interval?: string;
  /** Default "1s". */
  timeout?: string;
  /** Default 1. */
  retries?: number;
  /** Default: none. */
  startPeriod?: string;
}

/** Options of {@link DockerEngine.buildBusyboxImage}. */
export interface BusyboxImageOptions {
  /** Default {@link BUSYBOX_IMAGE}. Use another tag for other options. */
  tag?: string;
  /** The HEALTHCHECK (test -f /tmp/healthy), or false for an image without one. */
  healthcheck?: HealthcheckSpec | false;
}

/** A running private dockerd. */
export interface DockerEngine {
  /** "unix:///tmp/.../docker.sock": the value for DOCKER_HOST. */
  host: string;
  /** Path of the socket (for dockerode's `socketPath`). */
  socketPath: string;
  /** Environment for the docker CLI, docker-compose or waitcmd: DOCKER_HOST, DOCKER_CONFIG. */
  env: Record<string, string>;
  /** The temporary directory holding socket, data-root, exec-root and logs. */
  dir: string;
  /** dockerd's log. */
  logFile: string;
  /** Milliseconds dockerd took to answer `docker version`. */
  startMs: number;
  /** Runs the docker CLI against this engine; resolves to its trimmed stdout, rejects on failure. */
  docker(args: string[], opts?: { stdin?: string }): Promise<string>;
  /**
   * Builds an image FROM scratch with the static busybox (sh, sleep, httpd,
   * touch, test, cat, ...), a HEALTHCHECK on /tmp/healthy and a default command that
   * sleeps and exits 0 promptly on SIGTERM. Resolves to the tag.
   */
  buildBusyboxImage(opts?: BusyboxImageOptions): Promise<string>;
  /**
   * Builds {@link NOSHELL_IMAGE}: FROM scratch with no shell and no tool but
   * three servers, the static busybox under their names (busybox picks the
   * applet by the name it runs as, and no `busybox` or `sh` name is there):
   * `/bin/httpd` (the default command, `httpd -f -p 8080`: TCP 8080 over
   * IPv6 and IPv4), `/bin/nc` (`nc -l -p PORT`: TCP) and `/bin/udhcpd`
   * (`udhcpd -f /etc/udhcpd.conf`: UDP 67 on the loopback). Resolves to the tag.
   */
  buildNoShellImage(): Promise<string>;
  /**
   * `docker run -d --network none --name NAME [args...] IMAGE [cmd...]`;
   * resolves to the container id. `image` defaults to {@link BUSYBOX_IMAGE}.
   */
  runContainer(
    name: string,
    opts?: { image?: string; args?: string[]; cmd?: string[] },
  ): Promise<string>;
  /** Runs docker-compose in `projectDir` with project name `projectName`. */
  compose(projectDir: string, projectName: string, args: string[]): Promise<string>;
  /** `docker-compose up -d` of the project. */
  composeUp(projectDir: string, projectName: string): Promise<void>;
  /** `docker-compose down --timeout 1` of the project. */
  composeDown(projectDir: string, projectName: string): Promise<void>;
  /**
   * Stops dockerd the way `systemctl stop docker` does (SIGTERM: it stops the
   * running containers first, there is no live-restore) and waits until it and
   * its containerd have exited. Its socket is gone meanwhile. Containers,
   * images and volumes stay in the data-root. A no-op when it is stopped.
   */
  stopDaemon(): Promise<void>;
  /**
   * Starts dockerd again with the same socket, data-root and flags; resolves
   * once `docker version` answers. Containers with a restart policy
   * (`--restart always`, `unless-stopped`) are started again by dockerd.
   * A no-op when it runs.
   */
  startDaemon(): Promise<void>;
  /** {@linkcode stopDaemon}, `downMs` of outage, then {@linkcode startDaemon}. */
  restartDaemon(downMs: number): Promise<void>;
  /** Removes every container of this engine, stops dockerd (and its containerd), deletes `dir`. */
  stop(): Promise<void>;
}

/** Environment for the docker CLI / docker-compose talking to `dockerHost`. */
function cliEnv(dockerHost: string, configDir?: string): Record<string, string> {
  return {
    DOCKER_HOST: dockerHost,
    DOCKER_BUILDKIT: "0",
    COMPOSE_DOCKER_CLI_BUILD: "0",
    ...(configDir ? { DOCKER_CONFIG: configDir } : {}),
  };
}

/** Runs docker-compose for a project against `dockerHost`. */
export function compose(
  dockerHost: string,
  projectDir: string,
  projectName: string,
  args: string[],
): Promise<string> {
  return sh(COMPOSE_BIN, ["--no-ansi", "-p", projectName, ...args], {
    cwd: projectDir,
    env: cliEnv(dockerHost),
  });
}

/** `docker-compose up -d` in `projectDir` (which holds docker-compose.yml). */
export async function composeUp(
  dockerHost: string,
  projectDir: string,
  projectName: string,
): Promise<void> {
  await compose(dockerHost, projectDir, projectName, ["up", "-d"]);
}

/** `docker-compose down --timeout 1` in `projectDir`. */
export async function composeDown(
  dockerHost: string,
  projectDir: string,
  projectName: string,
): Promise<void> {
  await compose(dockerHost, projectDir, projectName, ["down", "--timeout", "1"]);
}

/**
 * Writes `projectDir/docker-compose.yml` with one service per entry of
 * `services` (name -> command, or null for the image's default command), all
 * on `image` with `network_mode: none`. Creates `projectDir` if missing.
 */
export async function writeBusyboxCompose(
  projectDir: string,
  services: Record<string, string[] | null> = { web: null, worker: null },
  image = BUSYBOX_IMAGE,
): Promise<string> {
  await Deno.mkdir(projectDir, { recursive: true });
  const lines = ['version: "2.4"', "services:"];
  for (const [name, cmd] of Object.entries(services)) {
    lines.push(`  ${name}:`, `    image: ${image}`, "    network_mode: none");
    if (cmd) lines.push(`    command: ${JSON.stringify(cmd)}`);
  }
  const file = `${projectDir}/docker-compose.yml`;
  await Deno.writeTextFile(file, lines.join("\n") + "\n");
  return file;
}

/** Lazily unmounts whatever is still mounted under `dir` (deepest first). */
async function unmountUnder(dir: string): Promise<void> {
  const mounts = (await Deno.readTextFile("/proc/self/mounts").catch(() => ""))
    .split("\n")
    .map((l) => l.split(" ")[1]?.replace(/\\040/g, " "))
    .filter((m): m is string => !!m && (m === dir || m.startsWith(dir + "/")))
    .sort((a, b) => b.length - a.length);
  for (const m of mounts) await sh("umount", ["-l", m]).catch(() => {});
}

/** Pids of dockerd/containerd(-shim) processes whose command line mentions `dir`. */
async function pidsMentioning(dir: string): Promise<number[]> {
  const pids: number[] = [];
  for await (const e of Deno.readDir("/proc")) {
    if (!/^\d+$/.test(e.name) || Number(e.name) === Deno.pid) continue;
    try {
      const comm = (await Deno.readTextFile(`/proc/${e.name}/comm`)).trim();
      if (!/^(dockerd|containerd)/.test(comm)) continue;
      const cmd = await Deno.readTextFile(`/proc/${e.name}/cmdline`);
      if (cmd.includes(dir)) pids.push(Number(e.name));
    } catch {
      // gone
    }
  }
  return pids;
}

/** cgroup mount points (v1 and v2). */
async function cgroupMounts(): Promise<string[]> {
  return (await Deno.readTextFile("/proc/self/mounts").catch(() => ""))
    .split("\n")
    .map((l) => l.split(" "))
    .filter((f) => f[2] === "cgroup" || f[2] === "cgroup2")
    .map((f) => f[1]!);
}

async function exists(path: string): Promise<boolean> {
  return await Deno.stat(path).then(() => true, () => false);
}

/** Starts a private dockerd; resolves once `docker version` answers. */
export async function startDocker(): Promise<DockerEngine> {
  const dir = await Deno.makeTempDir({ prefix: "waitcmd-docker-" });
  const socketPath = `${dir}/docker.sock`;
  const host = `unix://${socketPath}`;
  const logFile = `${dir}/dockerd.log`;
  const configDir = `${dir}/cli-config`;
  await Deno.mkdir(configDir);
  const env = cliEnv(host, configDir);

  // dockerd (cgroupfs driver) makes a parent `docker` cgroup in every hierarchy;
  // remove on stop those that were not there before (rmdir only takes empty ones).
  const newCgroups: string[] = [];
  for (const mp of await cgroupMounts()) {
    if (!(await exists(`${mp}/docker`))) newCgroups.push(`${mp}/docker`);
  }

  const started = performance.now();
  const dockerdArgs = [
    "--iptables=false",
    "--ip6tables=false",
    "--bridge=none",
    "--host",
    host,
    "--data-root",
    `${dir}/data`,
    "--exec-root",
    `${dir}/exec`,
    "--pidfile",
    `${dir}/dockerd.pid`,
    "--log-level",
    "warn",
  ];
  // `undefined` while stopped by stopDaemon (the engine's restart helpers).
  let svc: Service | undefined = spawnService(DOCKERD_BIN, dockerdArgs, { logFile });

  const docker = (args: string[], opts: { stdin?: string } = {}) =>
    sh(DOCKER_CLI, args, { env, stdin: opts.stdin });

  /** containerd (own process group) normally exits with dockerd; make sure. */
  const reapContainerd = async () => {
    for (let i = 0; i < 20; i++) {
      const left = await pidsMentioning(dir);
      if (!left.length) break;
      if (i === 10) {
        for (const pid of left) {
          try {
            Deno.kill(pid, "SIGKILL");
          } catch {
            // gone
          }
        }
      }
      await new Promise((r) => setTimeout(r, 200));
    }
  };

  const answering = () =>
    waitUntil("dockerd answering docker version", async () => {
      await docker(["version", "--format", "{{.Server.Version}}"]);
      return true;
    }, { timeoutMs: 60_000, everyMs: 100, logFile });

  const teardown = async () => {
    try {
      const ids = (await docker(["ps", "-aq"])).split("\n").filter(Boolean);
      if (ids.length) await docker(["rm", "-f", "-v", ...ids]);
    } catch {
      // dockerd already gone: its containers go with it
    }
    await svc?.stop();
    svc = undefined;
    await reapContainerd();
    for (const cg of newCgroups) await Deno.remove(cg).catch(() => {});
    await unmountUnder(dir);
    await Deno.remove(dir, { recursive: true }).catch(async () => {
      await unmountUnder(dir);
      await Deno.remove(dir, { recursive: true }).catch(() => {});
    });
  };

  try {
    await answering();
  } catch (e) {
    await teardown();
    throw e;
  }
  const startMs = performance.now() - started;

  let stopped = false;
  const stopDaemon = async () => {
    const s = svc;
    if (!s) return;
    svc = undefined;
    await s.stop();
    await reapContainerd();
  };
  const startDaemon = async () => {
    if (svc || stopped) return;
    svc = spawnService(DOCKERD_BIN, dockerdArgs, { logFile });
    await answering();
  };
  return {
    host,
    socketPath,
    env,
    dir,
    logFile,
    startMs,
    docker,
    async buildBusyboxImage(opts: BusyboxImageOptions = {}) {
      const tag = opts.tag ?? BUSYBOX_IMAGE;
      const ctx = await Deno.makeTempDir({ dir, prefix: "image-" });
      await Deno.mkdir(`${ctx}/bin`);
      await Deno.mkdir(`${ctx}/tmp`);
      await Deno.copyFile("/bin/busybox", `${ctx}/bin/busybox`);
      await Deno.chmod(`${ctx}/bin/busybox`, 0o755);
      for (
        const c of [
          "sh",
          "sleep",
          "httpd",
          "touch",
          "test",
          "cat",
          "rm",
          "ls",
          "echo",
          "kill",
          "true",
          "false",
        ]
      ) {
        await Deno.symlink("busybox", `${ctx}/bin/${c}`);
      }
      const hc = opts.healthcheck === false ? undefined : {
        interval: "1s",
        timeout: "1s",
        retries: 1,
        ...opts.healthcheck,
      };
      await Deno.writeTextFile(
        `${ctx}/Dockerfile`,
        [
          "FROM scratch",
          "COPY bin /bin",
          "COPY tmp /tmp",
          ...(hc
            ? [
              `HEALTHCHECK --interval=${hc.interval} --timeout=${hc.timeout} --retries=${hc.retries}` +
              (hc.startPeriod ? ` --start-period=${hc.startPeriod}` : "") +
              ` CMD ["/bin/test","-f","/tmp/healthy"]`,
            ]
            : []),
          // PID 1 ignores SIGTERM without a handler: trap it so `docker stop` is prompt.
          `CMD ["/bin/sh","-c","trap 'exit 0' TERM INT; sleep 100000 & wait"]`,
          "",
        ].join("\n"),
      );
      await docker(["build", "-q", "-t", tag, ctx]);
      await Deno.remove(ctx, { recursive: true }).catch(() => {});
      return tag;
    },
    async buildNoShellImage() {
      const ctx = await Deno.makeTempDir({ dir, prefix: "image-" });
      for (const d of ["bin", "etc", "tmp"]) await Deno.mkdir(`${ctx}/${d}`);
      await Deno.copyFile("/bin/busybox", `${ctx}/bin/httpd`);
      await Deno.chmod(`${ctx}/bin/httpd`, 0o755);
      for (const c of ["nc", "udhcpd"]) await Deno.symlink("httpd", `${ctx}/bin/${c}`);
      // A DHCP server on the loopback (the only interface with --network none) binds UDP 67.
      await Deno.writeTextFile(
        `${ctx}/etc/udhcpd.conf`,
        "interface lo\nstart 127.0.0.10\nend 127.0.0.20\nlease_file /tmp/leases\n",
      );
      await Deno.writeTextFile(
        `${ctx}/Dockerfile`,
        [
          "FROM scratch",
          "COPY bin /bin",
          "COPY etc /etc",
          "COPY tmp /tmp",
          // As PID 1 httpd ignores SIGTERM: stop these with `docker rm -f` or `docker kill`.
          'CMD ["/bin/httpd","-f","-p","8080"]',
          "",
        ].join("\n"),
      );
      await docker(["build", "-q", "-t", NOSHELL_IMAGE, ctx]);
      await Deno.remove(ctx, { recursive: true }).catch(() => {});
      return NOSHELL_IMAGE;
    },
    runContainer(name, opts = {}) {
      return docker([
        "run",
        "-d",
        "--network",
        "none",
        "--name",
        name,
        ...(opts.args ?? []),
        opts.image ?? BUSYBOX_IMAGE,
        ...(opts.cmd ?? []),
      ]);
    },
    compose: (projectDir, projectName, args) => compose(host, projectDir, projectName, args),
    composeUp: (projectDir, projectName) => composeUp(host, projectDir, projectName),
    composeDown: (projectDir, projectName) => composeDown(host, projectDir, projectName),
    stopDaemon,
    startDaemon,
    async restartDaemon(downMs: number) {
      await stopDaemon();
      await new Promise((r) => setTimeout(r, downMs));
      await startDaemon();
    },
    async stop() {
      if (stopped) return;
      stopped = true;
      await teardown();
    },
  };
}
