/**
 * A real systemd user manager (`systemd --user`, running as root) for the
 * svcmgr kind's tests, with its user D-Bus, in a temporary directory.
 *
 * systemd is installed but is not PID 1 here; the manager runs once the
 * "booted with systemd" marker /run/systemd/system exists. This module creates
 * that marker when missing and removes it again when the last manager it
 * started stops (only if it was the one that created it).
 *
 * The manager is started inside a cgroup of its own (`waitcmd-sd-*` in the
 * name=systemd and cgroup2 hierarchies). That matters: a manager started in
 * the root cgroup takes the root as its own and migrates every process of the
 * machine (PID 1 included) into `/init.scope`, in the v1 controller
 * hierarchies too (with a pids limit). In its own cgroup it only manages its
 * units, and teardown can find and remove everything it made.
 *
 * Unit files go to `$XDG_CONFIG_HOME/systemd/user` of a temporary
 * XDG_CONFIG_HOME (never root's ~/.config).
 */

import { sh, spawnService, waitUntil } from "../../tests/services/_util.ts";

/** The marker systemd checks to decide it was booted with systemd. */
export const SYSTEMD_MARKER = "/run/systemd/system";
/** Where managers started by this module record themselves (for the marker's refcount). */
const REF_DIR = "/run/waitcmd-systemd-refs";
/** The systemd binary. */
export const SYSTEMD_BIN = "/lib/systemd/systemd";

/** A running systemd user manager. */
export interface SystemdUser {
  /**
   * Environment for `systemctl --user`, D-Bus clients and waitcmd:
   * XDG_RUNTIME_DIR, DBUS_SESSION_BUS_ADDRESS (unix:path=$XDG_RUNTIME_DIR/bus)
   * and XDG_CONFIG_HOME.
   */
  env: Record<string, string>;
  /** Directory the unit files go to ($XDG_CONFIG_HOME/systemd/user). */
  unitDir: string;
  /** The temporary directory of this manager. */
  dir: string;
  /** The manager's stdout/stderr. */
  logFile: string;
  /** The manager's pid. */
  pid: number;
  /** Milliseconds until `systemctl --user is-system-running` said running/degraded. */
  startMs: number;
  /** Writes `name` (e.g. "demo.service") into unitDir, then `daemon-reload` unless `reload: false`. */
  writeUnit(name: string, content: string, opts?: { reload?: boolean }): Promise<void>;
  /** Removes a unit file (and reloads unless `reload: false`). */
  removeUnit(name: string, opts?: { reload?: boolean }): Promise<void>;
  /** Runs `systemctl --user ARGS`; resolves to trimmed stdout; rejects on a non-zero exit. */
  systemctl(args: string[]): Promise<string>;
  /** `systemctl --user show -p ...` of a unit as a record (default ActiveState, SubState, Result). */
  show(unit: string, props?: string[]): Promise<Record<string, string>>;
  /** Stops the manager (and its units), removes its cgroup and directory, and the marker if due. */
  stop(): Promise<void>;
}

/** cgroup mount points the manager must be moved in: cgroup2 and the v1 name=systemd hierarchy. */
async function trackingHierarchies(): Promise<string[]> {
  const mounts = await Deno.readTextFile("/proc/self/mounts");
  const out: string[] = [];
  for (const line of mounts.split("\n")) {
    const [, mp, fstype, opts] = line.split(" ");
    if (!mp) continue;
    if (fstype === "cgroup2") out.push(mp);
    else if (fstype === "cgroup" && opts?.split(",").includes("name=systemd")) out.push(mp);
  }
  return out;
}

/** Every cgroup directory named `name` directly under a cgroup mount point. */
async function cgroupDirsNamed(name: string): Promise<string[]> {
  const mounts = await Deno.readTextFile("/proc/self/mounts");
  const dirs: string[] = [];
  for (const line of mounts.split("\n")) {
    const [, mp, fstype] = line.split(" ");
    if (!mp || (fstype !== "cgroup" && fstype !== "cgroup2")) continue;
    try {
      if ((await Deno.stat(`${mp}/${name}`)).isDirectory) dirs.push(`${mp}/${name}`);
    } catch {
      // not in this hierarchy
    }
  }
  return dirs;
}

/** Pids in a cgroup subtree. */
async function pidsUnder(cg: string): Promise<number[]> {
  const pids: number[] = [];
  const walk = async (d: string) => {
    try {
      const procs = await Deno.readTextFile(`${d}/cgroup.procs`);
      for (const p of procs.split("\n")) if (p) pids.push(Number(p));
      for await (const e of Deno.readDir(d)) if (e.isDirectory) await walk(`${d}/${e.name}`);
    } catch {
      // removed meanwhile
    }
  };
  await walk(cg);
  return pids;
}

/** rmdir a cgroup subtree, deepest first (cgroup dirs only go with rmdir). */
async function removeCgroupTree(cg: string): Promise<void> {
  try {
    for await (const e of Deno.readDir(cg)) {
      if (e.isDirectory) await removeCgroupTree(`${cg}/${e.name}`);
    }
    await Deno.remove(cg);
  } catch {
    // busy or gone
  }
}

function pidAlive(pid: number): boolean {
  try {
    Deno.statSync(`/proc/${pid}`);
    return true;
  } catch {
    return false;
  }
}

/** Ensures the marker exists; records this manager; returns its ref file. */
async function acquireMarker(tag: string): Promise<string> {
  await Deno.mkdir(REF_DIR, { recursive: true });
  try {
    await Deno.mkdir(SYSTEMD_MARKER, { recursive: false });
    await Deno.writeTextFile(`${REF_DIR}/created`, "");
  } catch (e) {
    if (!(e instanceof Deno.errors.AlreadyExists)) {
      // /run/systemd itself may be missing.
      await Deno.mkdir(SYSTEMD_MARKER, { recursive: true });
      await Deno.writeTextFile(`${REF_DIR}/created`, "");
    }
  }
  const ref = `${REF_DIR}/${Deno.pid}-${tag}`;
  await Deno.writeTextFile(ref, "");
  return ref;
}

/** Drops this manager's ref; removes the marker if we created it and no live manager of ours is left. */
async function releaseMarker(ref: string): Promise<void> {
  await Deno.remove(ref).catch(() => {});
  const live: string[] = [];
  try {
    for await (const e of Deno.readDir(REF_DIR)) {
      const m = /^(\d+)-/.exec(e.name);
      if (!m) continue;
      if (pidAlive(Number(m[1]))) live.push(e.name);
      else await Deno.remove(`${REF_DIR}/${e.name}`).catch(() => {});
    }
  } catch {
    return;
  }
  if (live.length) return;
  let created = false;
  try {
    await Deno.stat(`${REF_DIR}/created`);
    created = true;
  } catch {
    // the marker was there before us: leave it
  }
  if (created) {
    await Deno.remove(SYSTEMD_MARKER).catch(() => {}); // non-recursive: only if empty
    await Deno.remove(`${REF_DIR}/created`).catch(() => {});
  }
  await Deno.remove(REF_DIR).catch(() => {});
}

/**
 * Starts `systemd --user` as root in its own cgroup with a fresh
 * XDG_RUNTIME_DIR and XDG_CONFIG_HOME; resolves once the manager reports
 * running (or degraded).
 */
export async function startSystemdUser(): Promise<SystemdUser> {
  const dir = await Deno.makeTempDir({ prefix: "waitcmd-systemd-" });
  const runtimeDir = `${dir}/run`;
  const configHome = `${dir}/config`;
  const unitDir = `${configHome}/systemd/user`;
  const logFile = `${dir}/manager.log`;
  await Deno.mkdir(runtimeDir, { mode: 0o700 });
  await Deno.chmod(runtimeDir, 0o700);
  await Deno.mkdir(unitDir, { recursive: true });
  for (const d of ["data", "state", "cache"]) await Deno.mkdir(`${dir}/${d}`);
  const env: Record<string, string> = {
    XDG_RUNTIME_DIR: runtimeDir,
    DBUS_SESSION_BUS_ADDRESS: `unix:path=${runtimeDir}/bus`,
    XDG_CONFIG_HOME: configHome,
  };
  const managerEnv = {
    ...env,
    XDG_DATA_HOME: `${dir}/data`,
    XDG_STATE_HOME: `${dir}/state`,
    XDG_CACHE_HOME: `${dir}/cache`,
  };

  const tag = dir.slice(dir.lastIndexOf("-") + 1);
  const cgName = `waitcmd-sd-${tag}`;
  const hierarchies = await trackingHierarchies();
  if (!hierarchies.length) {
    await Deno.remove(dir, { recursive: true }).catch(() => {});
    throw new Error("no cgroup2 or name=systemd cgroup hierarchy mounted");
  }
  const procsFiles: string[] = [];
  try {
    for (const h of hierarchies) {
      await Deno.mkdir(`${h}/${cgName}`);
      procsFiles.push(`${h}/${cgName}/cgroup.procs`);
    }
  } catch (e) {
    for (const d of await cgroupDirsNamed(cgName)) await removeCgroupTree(d);
    await Deno.remove(dir, { recursive: true }).catch(() => {});
    throw new Error(`cannot create a cgroup for the systemd user manager: ${e}`);
  }

  const ref = await acquireMarker(tag);
  const started = performance.now();
  // Move the shell into the cgroup(s) first, then exec the manager (same pid).
  const svc = spawnService("/bin/sh", [
    "-c",
    'for f in "$@"; do echo $$ > "$f" || exit 97; done; exec ' + SYSTEMD_BIN + " --user",
    "sh",
    ...procsFiles,
  ], { logFile, env: managerEnv });

  const systemctl = (args: string[]) => sh("systemctl", ["--user", ...args], { env });
  const teardown = async () => {
    await svc.stop();
    // Units run in their own sessions: anything the manager left in its cgroup goes now.
    for (const cg of await cgroupDirsNamed(cgName)) {
      for (const pid of await pidsUnder(cg)) {
        try {
          Deno.kill(pid, "SIGKILL");
        } catch {
          // gone
        }
      }
    }
    for (let i = 0; i < 20; i++) {
      let left = 0;
      for (const cg of await cgroupDirsNamed(cgName)) {
        left += (await pidsUnder(cg)).length;
        await removeCgroupTree(cg);
      }
      if (!left && !(await cgroupDirsNamed(cgName)).length) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    await releaseMarker(ref);
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  };

  try {
    await waitUntil("systemd --user running", async () => {
      // Exits non-zero unless "running"; read stdout either way.
      const out = await new Deno.Command("systemctl", {
        args: ["--user", "is-system-running"],
        env,
        stdin: "null",
        stdout: "piped",
        stderr: "null",
      }).output();
      const st = new TextDecoder().decode(out.stdout).trim();
      return st === "running" || st === "degraded";
    }, { timeoutMs: 30_000, everyMs: 50, logFile });
  } catch (e) {
    await teardown();
    throw e;
  }
  const startMs = performance.now() - started;

  let stopped = false;
  return {
    env,
    unitDir,
    dir,
    logFile,
    pid: svc.pid,
    startMs,
    async writeUnit(name, content, opts = {}) {
      await Deno.writeTextFile(`${unitDir}/${name}`, content);
      if (opts.reload !== false) await systemctl(["daemon-reload"]);
    },
    async removeUnit(name, opts = {}) {
      await Deno.remove(`${unitDir}/${name}`).catch(() => {});
      if (opts.reload !== false) await systemctl(["daemon-reload"]);
    },
    systemctl,
    async show(unit, props = ["ActiveState", "SubState", "Result"]) {
      const out = await systemctl(["show", "-p", props.join(","), unit]);
      const rec: Record<string, string> = {};
      for (const line of out.split("\n")) {
        const i = line.indexOf("=");
        if (i > 0) rec[line.slice(0, i)] = line.slice(i + 1);
      }
      return rec;
    },
    async stop() {
      if (stopped) return;
      stopped = true;
      await teardown();
    },
  };
}
