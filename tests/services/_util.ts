/**
 * Shared plumbing for the real services the test suite starts: free loopback
 * ports, temporary directories, background processes that are always reaped,
 * and readiness polling. Service modules (sshd, dockerd, kube-apiserver, ...)
 * build on these so that every service is started and torn down the same way.
 */

/** Ports this test module handed out: a service that is down keeps its port, no other gets it. */
const handedOut = new Set<number>();

/**
 * Where the test modules of one `deno test` process claim their ports: `deno test --parallel`
 * runs several modules at once in one process, each with its own {@link handedOut}, and a port
 * one module handed out (its service still starting, or down to be restarted) must not go to
 * another. A claim is a file made with `createNew` (atomic across threads and processes); a
 * module removes its own claims when it unloads. `WAITCMD_PORT_CLAIMS` names a directory that
 * several `deno test` processes run side by side share (scripts/test's source tests).
 */
const CLAIMS = Deno.env.get("WAITCMD_PORT_CLAIMS") ||
  `${Deno.env.get("TMPDIR") || "/tmp"}/waitcmd-ports-${Deno.pid}`;

/** Claims `port` for this module; false when another module of this process holds it. */
function claimPort(port: number): boolean {
  if (handedOut.has(port)) return false;
  // A second try when the directory went (the last module holding a claim removed it meanwhile).
  for (let tries = 0; tries < 2; tries++) {
    try {
      Deno.mkdirSync(CLAIMS, { recursive: true });
      Deno.openSync(`${CLAIMS}/${port}`, { write: true, createNew: true }).close();
      break;
    } catch (e) {
      if (e instanceof Deno.errors.AlreadyExists) return false;
      // No writable temporary directory: this module's own set still holds.
    }
  }
  if (handedOut.size === 0) globalThis.addEventListener("unload", releasePorts);
  handedOut.add(port);
  return true;
}

/** Removes this module's port claims, and the claims' directory once it is empty. */
function releasePorts(): void {
  for (const port of handedOut) {
    try {
      Deno.removeSync(`${CLAIMS}/${port}`);
    } catch {
      // not made (see claimPort)
    }
  }
  try {
    Deno.removeSync(CLAIMS); // only when no other module holds a claim
  } catch {
    // another module's claims are left, or it is gone
  }
}

/**
 * The kernel's range of ephemeral ports (the source ports of outgoing connections): a service
 * restarted on a port from it may find the port taken by a client's connection meanwhile.
 */
const EPHEMERAL: readonly [number, number] = (() => {
  try {
    const [lo, hi] = Deno.readTextFileSync("/proc/sys/net/ipv4/ip_local_port_range").trim()
      .split(/\s+/).map(Number);
    if (Number.isInteger(lo) && Number.isInteger(hi)) return [lo!, hi!];
  } catch {
    // not Linux: the kernel picks (port 0) below
  }
  return [0, 0];
})();

/**
 * A loopback port that was free a moment ago, and that no caller in this process got before.
 * Taken below the ephemeral range where there is one, so that no client connection (waitcmd's
 * own, of every test) is ever given it while its service is down and about to restart.
 */
export function freePort(hostname = "127.0.0.1"): number {
  const [lo] = EPHEMERAL;
  const below = lo > 11_000;
  for (let tries = 0;; tries++) {
    const wanted = below && tries < 1000 ? 10_000 + Math.floor(Math.random() * (lo - 10_000)) : 0;
    let l: Deno.Listener;
    try {
      l = Deno.listen({ hostname, port: wanted });
    } catch {
      continue; // taken: another try
    }
    const port = (l.addr as Deno.NetAddr).port;
    l.close();
    if (claimPort(port)) return port;
  }
}

/** Root of the per-machine cache for built test services (outside the clone, survives CI runs). */
export function cacheDir(): string {
  return Deno.env.get("WAITCMD_CACHE") ?? `${Deno.env.get("HOME") ?? "/tmp"}/.cache/waitcmd`;
}

/** Directory of the repository (tests/services/_util.ts -> repo root). */
export const repoRoot: string = new URL("../../", import.meta.url).pathname.replace(/\/$/, "");

/** A background process the tests own; `stop()` kills its whole process group. */
export interface Service {
  readonly pid: number;
  readonly logFile: string;
  stop(): Promise<void>;
}

/**
 * Starts `cmd` in its own process group with output going to `logFile`, so a
 * test failure can show the service's log and teardown never leaves children.
 */
export function spawnService(
  cmd: string,
  args: string[],
  opts: { logFile: string; env?: Record<string, string>; cwd?: string },
): Service {
  const log = Deno.openSync(opts.logFile, { write: true, create: true, append: true });
  const child = new Deno.Command(cmd, {
    args,
    env: opts.env,
    cwd: opts.cwd,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
    detached: true,
  }).spawn();
  // Copy both streams into the log; done in the background, finished on stop.
  const pumps = [child.stdout, child.stderr].map(async (s) => {
    for await (const chunk of s) log.writeSync(chunk);
  });
  let stopped = false;
  return {
    pid: child.pid,
    logFile: opts.logFile,
    async stop() {
      if (stopped) return;
      stopped = true;
      killGroup(child.pid, "SIGTERM");
      const done = child.status.then(() => true);
      const timer = new Promise<boolean>((r) => setTimeout(() => r(false), 5000));
      const exited = await Promise.race([done, timer]);
      if (!exited) killGroup(child.pid, "SIGKILL");
      await child.status;
      killGroup(child.pid, "SIGKILL"); // stragglers left in the group
      await Promise.allSettled(pumps);
      log.close();
    },
  };
}

/** Signals a whole process group, ignoring a group that is already gone. */
export function killGroup(pid: number, signal: Deno.Signal): void {
  try {
    Deno.kill(-pid, signal);
  } catch {
    // ESRCH: nothing left to signal.
  }
}

/** Polls `check` every `everyMs` until it returns true; throws with `what` after `timeoutMs`. */
export async function waitUntil(
  what: string,
  check: () => Promise<boolean> | boolean,
  { timeoutMs = 30_000, everyMs = 100, logFile }: {
    timeoutMs?: number;
    everyMs?: number;
    logFile?: string;
  } = {},
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    try {
      if (await check()) return;
    } catch {
      // not ready yet
    }
    await new Promise((r) => setTimeout(r, everyMs));
  }
  let tail = "";
  if (logFile) {
    try {
      tail = "\n--- " + logFile + " ---\n" + (await Deno.readTextFile(logFile)).slice(-4000);
    } catch {
      tail = "";
    }
  }
  throw new Error(`Timed out after ${timeoutMs} ms waiting for ${what}${tail}`);
}

/** Runs a command to completion and returns its trimmed stdout; throws with stderr on failure. */
export async function sh(cmd: string, args: string[], opts: {
  env?: Record<string, string>;
  cwd?: string;
  stdin?: string;
} = {}): Promise<string> {
  const child = new Deno.Command(cmd, {
    args,
    env: opts.env,
    cwd: opts.cwd,
    stdin: opts.stdin === undefined ? "null" : "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  if (opts.stdin !== undefined) {
    const w = child.stdin.getWriter();
    await w.write(new TextEncoder().encode(opts.stdin));
    await w.close();
  }
  const out = await child.output();
  const text = new TextDecoder().decode(out.stdout).trim();
  if (!out.success) {
    throw new Error(
      `${cmd} ${args.join(" ")} exited ${out.code}: ${new TextDecoder().decode(out.stderr).trim()}`,
    );
  }
  return text;
}

/**
 * Declares that a test needs a service that could not be started. Tests must
 * not skip silently: in CI (CI=true) this throws, so a missing service fails
 * the run; elsewhere it prints why and returns false so the caller can skip.
 */
export function requireService(name: string, why: string): false {
  const msg = `required service ${name} unavailable: ${why}`;
  if (Deno.env.get("CI")) throw new Error(msg);
  console.error(`SKIP: ${msg}`);
  return false;
}

/**
 * Declares a test of a service that `start` starts (the sanitizers off: the service outlives
 * their view); where it cannot start, the test says why ({@link requireService}: in CI that
 * fails) and ends.
 */
export function startedTest<S>(
  name: string,
  service: string,
  start: () => Promise<S>,
  fn: (s: S, t: Deno.TestContext) => Promise<void>,
): void {
  Deno.test({
    name,
    sanitizeOps: false,
    sanitizeResources: false,
    async fn(t) {
      let s: S;
      try {
        s = await start();
      } catch (err) {
        requireService(service, err instanceof Error ? err.message : String(err));
        return;
      }
      await fn(s, t);
    },
  });
}

/** Thrown when a Go-built test service cannot be built (no Go toolchain, no module proxy, ...). */
export class ServiceUnavailableError extends Error {
  override name = "ServiceUnavailableError";
}

/**
 * Runs one of scripts/services/build-*.sh (a no-op once its binaries are
 * cached; a cold build reports progress on stderr) and returns the last line
 * of its stdout: the path it built. `what` names the versions for the error.
 */
export async function runBuildScript(
  script: string,
  what: string,
  args: readonly string[] = [],
): Promise<string> {
  const path = `${repoRoot}/scripts/services/${script}`;
  let out: Deno.CommandOutput;
  try {
    out = await new Deno.Command("bash", {
      args: [path, ...args],
      env: { WAITCMD_CACHE: cacheDir() },
      stdin: "null",
      stdout: "piped",
      stderr: "inherit",
    }).output();
  } catch (err) {
    throw new ServiceUnavailableError(`cannot run ${path}: ${err}`);
  }
  const lines = new TextDecoder().decode(out.stdout).trim().split("\n");
  const built = lines[lines.length - 1] ?? "";
  if (!out.success || !built) {
    throw new ServiceUnavailableError(`${path} exited ${out.code} (${what}); see its stderr above`);
  }
  return built;
}

/** Services and directories still up, reaped if the test process ends without their stop(). */
const unreaped = new Map<number, { pids: number[]; dir: string }>();
let unreapedSeq = 0;
let reapHooked = false;

function reapAll(): void {
  for (const { pids, dir } of unreaped.values()) {
    for (const pid of pids) killGroup(pid, "SIGKILL");
    if (!Deno.env.get("WAITCMD_KEEP_SERVICE_DIRS")) {
      try {
        Deno.removeSync(dir, { recursive: true });
      } catch {
        // already gone
      }
    }
  }
  unreaped.clear();
}

/**
 * Registers a service's temporary directory (and, via `setPids`, its process
 * groups) to be killed and removed if the test process ends without calling
 * the service's stop(): on unload, and on SIGINT or SIGTERM (a killed test
 * run would otherwise leave etcd and friends behind). `release()` when the
 * service stopped normally.
 */
export function reapOnExit(dir: string): { setPids(pids: number[]): void; release(): void } {
  if (!reapHooked) {
    reapHooked = true;
    globalThis.addEventListener("unload", reapAll);
    for (const [sig, code] of [["SIGINT", 130], ["SIGTERM", 143]] as const) {
      Deno.addSignalListener(sig, () => {
        reapAll();
        Deno.exit(code);
      });
    }
  }
  const id = ++unreapedSeq;
  unreaped.set(id, { pids: [], dir });
  return {
    setPids: (pids) => void unreaped.set(id, { pids, dir }),
    release: () => void unreaped.delete(id),
  };
}

/**
 * A server in `dir` that can be stopped and started again (on the same
 * port): `spawn` starts its process, `ready` waits until it answers. The
 * process is reaped if the tests end first; `remove()` stops it and deletes
 * `dir`.
 */
export interface Restartable {
  /** Starts it unless it runs; resolves once `ready` does. */
  start(): Promise<void>;
  /** Stops it (a no-op when it is stopped); its port refuses. */
  stop(): Promise<void>;
  /** Stops it and removes its directory. */
  remove(): Promise<void>;
}

/** Makes a {@link Restartable} (see there); `halt` signals the process before it is stopped. */
export function restartable(
  dir: string,
  spawn: () => Service | Promise<Service>,
  ready: (svc: Service) => Promise<unknown>,
  halt?: (svc: Service) => void,
): Restartable {
  const reap = reapOnExit(dir);
  let svc: Service | undefined;
  const r: Restartable = {
    async start() {
      if (!svc) {
        svc = await spawn();
        reap.setPids([svc.pid]);
      }
      await ready(svc);
    },
    async stop() {
      if (!svc) return;
      const s = svc;
      svc = undefined;
      halt?.(s);
      await s.stop();
      reap.setPids([]);
    },
    async remove() {
      await r.stop();
      await Deno.remove(dir, { recursive: true }).catch(() => {});
      reap.release();
    },
  };
  return r;
}

/** Starts `server` unless `start` is false; removes it when it fails to start. */
export async function started<T extends Restartable>(server: T, start = true): Promise<T> {
  if (start) {
    try {
      await server.start();
    } catch (e) {
      await server.remove();
      throw e;
    }
  }
  return server;
}

/** `user:password` percent-encoded for a URL (`user` alone when the password is empty). */
export function userinfo(user: string, password: string): string {
  return password === ""
    ? encodeURIComponent(user)
    : `${encodeURIComponent(user)}:${encodeURIComponent(password)}`;
}

/** Why one of `bins` is not installed here (scripts/install-test-deps.sh), or undefined. */
export async function binariesMissing(...bins: string[]): Promise<string | undefined> {
  for (const bin of bins) {
    if (!(await Deno.stat(bin).then(() => true, () => false))) {
      return `${bin} not found (run scripts/install-test-deps.sh)`;
    }
  }
  return undefined;
}

/**
 * Why `build` (a build script's wrapper) cannot build here (its {@link ServiceUnavailableError}:
 * no toolchain, no module proxy, ...), or undefined once it built. Any other error is a fault of
 * the build's own, and is thrown.
 */
export async function buildMissing(build: () => Promise<unknown>): Promise<string | undefined> {
  try {
    await build();
    return undefined;
  } catch (e) {
    if (!(e instanceof ServiceUnavailableError)) throw e;
    return e.message;
  }
}

/** Why a Java service that `build` makes cannot be had (no java, or no build), or undefined. */
export async function javaBuildMissing(
  build: () => Promise<unknown>,
): Promise<string | undefined> {
  try {
    await sh("java", ["-version"]);
  } catch (e) {
    return `java not found (run scripts/install-test-deps.sh): ${
      e instanceof Error ? e.message : e
    }`;
  }
  return await buildMissing(build);
}

/** A service's own temporary directory (see {@link serviceDir}). */
export interface ServiceDir {
  readonly dir: string;
  /** The process groups to kill if the tests end before `remove()`. */
  setPids(pids: number[]): void;
  /** Forgets the processes and deletes the directory (kept with WAITCMD_KEEP_SERVICE_DIRS=1). */
  remove(): Promise<void>;
}

/**
 * A new temporary directory (`prefix`) for one service, killed and removed with its processes if
 * the test process ends first ({@link reapOnExit}).
 */
export async function serviceDir(prefix: string): Promise<ServiceDir> {
  const dir = await Deno.makeTempDir({ prefix });
  const reap = reapOnExit(dir);
  return {
    dir,
    setPids: reap.setPids,
    async remove() {
      reap.release();
      if (!Deno.env.get("WAITCMD_KEEP_SERVICE_DIRS")) {
        await Deno.remove(dir, { recursive: true }).catch(() => {});
      }
    },
  };
}

/** A server started by {@link startLogged}. */
export interface LoggedService {
  readonly dir: string;
  readonly logFile: string;
  /** Stops the process and removes {@link dir}. */
  stop(): Promise<void>;
}

/**
 * The one start, wait and teardown of a single-process server: `cmd args` (which may name files
 * in the directory, given to `args`) runs in a {@link serviceDir}, with its output in `log` there,
 * and is ready once `ready` (polled as {@link waitUntil} polls) says so; it may read the log,
 * where such servers tell their addresses. One that does not come up is stopped and removed.
 */
export async function startLogged(opts: {
  /** Prefix of the directory's name. */
  prefix: string;
  /** The log's name in the directory. */
  log: string;
  /** What is awaited, for the timeout's message. */
  what: string;
  cmd: string;
  args: string[] | ((dir: string) => string[] | Promise<string[]>);
  env?: Record<string, string>;
  ready: (logFile: string) => Promise<boolean>;
  timeoutMs?: number;
  everyMs?: number;
}): Promise<LoggedService> {
  const sd = await serviceDir(opts.prefix);
  const logFile = `${sd.dir}/${opts.log}`;
  let svc: Service | undefined;
  const stop = async () => {
    await svc?.stop();
    await sd.remove();
  };
  try {
    const args = typeof opts.args === "function" ? await opts.args(sd.dir) : opts.args;
    svc = spawnService(opts.cmd, args, { logFile, env: opts.env, cwd: sd.dir });
    sd.setPids([svc.pid]);
    await waitUntil(opts.what, () => opts.ready(logFile), {
      timeoutMs: opts.timeoutMs ?? 15_000,
      everyMs: opts.everyMs,
      logFile,
    });
  } catch (e) {
    await stop();
    throw e;
  }
  return { dir: sd.dir, logFile, stop };
}

/**
 * One service per test process, started by `start` on first use and shared by the tests (each
 * should use its own names in it); a failed start is remembered, so later calls reject with the
 * same error instead of starting again.
 */
export function sharedService<T extends { stop(): Promise<void> }>(
  start: () => Promise<T>,
): { get(): Promise<T>; stop(): Promise<void> } {
  let shared: Promise<T> | undefined;
  return {
    get() {
      if (!shared) {
        shared = start();
        shared.catch(() => {}); // the caller sees the rejection; avoid an unhandled one here
      }
      return shared;
    },
    async stop() {
      const s = shared;
      shared = undefined;
      if (!s) return;
      try {
        await (await s).stop();
      } catch {
        // it never started
      }
    },
  };
}

/** `bytes` random bytes as lower-case hex (throwaway tokens and secrets). */
export function randomHex(bytes: number): string {
  return Array.from(crypto.getRandomValues(new Uint8Array(bytes)))
    .map((b) => b.toString(16).padStart(2, "0")).join("");
}

/** `fn` run once at the most: a service's `stop()` that may be called again (later calls wait for the first). */
export function once(fn: () => Promise<void>): () => Promise<void> {
  let done: Promise<void> | undefined;
  return () => done ??= fn();
}

/** A temporary directory (`prefix`) that the system user `owner` owns. */
export async function ownedDir(prefix: string, owner: string): Promise<string> {
  const dir = await Deno.makeTempDir({ prefix });
  await sh("chown", [`${owner}:${owner}`, dir]);
  return dir;
}

/**
 * The data directories of a database server that runs as the system user `owner`, copied from a
 * template that `init` makes once per test process (into `data` of a directory of its own,
 * removed when the process ends): a server then starts from a copy in well under a second.
 * `copy(prefix, files)` makes a new directory with the copy in `data`, and each of `files`
 * (`[source, name]`, e.g. TLS keys) copied in beside it, for `owner` alone to read.
 */
export function dataTemplate(
  owner: string,
  prefix: string,
  init: (dir: string, data: string) => Promise<void>,
): (
  prefix: string,
  files?: [from: string, to: string][],
) => Promise<{ dir: string; data: string }> {
  let template: Promise<string> | undefined;
  const made = () =>
    template ??= (async () => {
      const dir = await ownedDir(prefix, owner);
      reapOnExit(dir);
      await init(dir, `${dir}/data`);
      return `${dir}/data`;
    })();
  return async (prefix, files = []) => {
    const data0 = await made();
    const dir = await ownedDir(prefix, owner);
    await sh("cp", ["-a", data0, `${dir}/data`]);
    for (const [from, to] of files) {
      await Deno.copyFile(from, `${dir}/${to}`);
      await sh("chown", [`${owner}:${owner}`, `${dir}/${to}`]);
      await Deno.chmod(`${dir}/${to}`, 0o600);
    }
    return { dir, data: `${dir}/data` };
  };
}

/**
 * A runner of `fn` in a fresh temporary directory named `prefix…` (its real path), removed
 * afterwards whatever `fn` does.
 */
export function inTempDir(prefix: string): <T>(fn: (dir: string) => Promise<T>) => Promise<T> {
  return async (fn) => {
    const dir = await Deno.realPath(await Deno.makeTempDir({ prefix }));
    try {
      return await fn(dir);
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  };
}

/**
 * Accepts the connections of `listener` and holds them, handing each to `onConn` (by default
 * nothing is said; a TLS one is let finish its handshake); `close()` stops the listener and
 * closes every connection it accepted.
 */
export function holdConnections(
  listener: Deno.Listener,
  onConn: (c: Deno.Conn) => void = (c) => {
    if ("handshake" in c) (c as Deno.TlsConn).handshake().catch(() => {});
  },
): { close(): Promise<void> } {
  const held: Deno.Conn[] = [];
  const accepting = (async () => {
    try {
      for await (const c of listener) {
        held.push(c);
        onConn(c);
      }
    } catch {
      // closed
    }
  })();
  return {
    async close() {
      listener.close();
      for (const c of held) {
        try {
          c.close();
        } catch {
          // closed by the client
        }
      }
      await accepting;
    },
  };
}

/** A TCP listener on 127.0.0.1 that accepts and closes every connection. */
export function acceptingPort(): { port: number; close(): void } {
  const l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  (async () => {
    try {
      for await (const c of l) c.close();
    } catch {
      // closed
    }
  })();
  return { port: (l.addr as Deno.NetAddr).port, close: () => l.close() };
}

/** A TCP port on 127.0.0.1 that nothing listens on (a connection is refused). */
export function closedPort(): number {
  return freePort();
}

/**
 * A zombie: a shell that starts a short sleep, writes its pid to `pidFile` and execs into a
 * long sleep that never reaps it. Returns the parent (kill it to end the zombie) and the
 * zombie's pid, once the sleep has exited.
 */
export async function makeZombie(
  pidFile: string,
): Promise<{ parent: Deno.ChildProcess; zpid: number }> {
  const parent = new Deno.Command("sh", {
    args: ["-c", `sleep 0.1 & echo $! > ${pidFile}; exec sleep 30`],
    stdout: "null",
    stderr: "null",
  }).spawn();
  let zpid = 0;
  for (let i = 0; i < 100 && !zpid; i++) {
    await new Promise((r) => setTimeout(r, 50));
    zpid = Number((await Deno.readTextFile(pidFile).catch(() => "")).trim());
  }
  await new Promise((r) => setTimeout(r, 500)); // the child has exited by now
  return { parent, zpid };
}
