/**
 * Fault injection through the CLI (docs/reliability.md): a restart during a
 * wait. The server a kind talks to goes away while the condition is still
 * pending and comes back (or does not): kube-apiserver under an `orch` watch,
 * dockerd under a `container` wait, and a systemd unit that flaps or
 * crash-loops under `svcmgr`. Each test states the verdict (exit code, JSON
 * report), that attempts went on while the server was away, that nothing was
 * judged satisfied too early, and that no waitcmd process was left behind.
 *
 * The runs use `--output jsonl` (to see every attempt as it happens) and
 * `--report FILE` (the JSON report, checked against its schema).
 */

import { assert, assertEquals, assertMatch } from "../_assert.ts";
import { ignoreWithout } from "../_kit.ts";
import { assertReportSchema } from "../_schema.ts";
import type { JsonReportShape } from "../e2e/_cli.ts";
import { type LiveCli, startCli } from "../e2e/_cli.ts";
import { DOCKER_CLI, DOCKERD_BIN, startDocker } from "../services/docker.ts";
import { type KubeEnv, STAGE_LABEL, startKube, whyNoCluster } from "../services/kube.ts";
import { startSystemdUser, SYSTEMD_BIN } from "../../conditions/svcmgr/_service.ts";

const opts = { sanitizeResources: false, sanitizeOps: false };

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** An `attempt` event of `--output jsonl`. */
interface AttemptEvent {
  condition: string;
  attempt: number;
  ok: boolean;
  detail: string;
  error: string;
  elapsed_seconds: number;
}

/** How a watched run ended. */
interface Finished {
  code: number;
  /** The JSON report `--report` wrote (schema-checked). */
  report: JsonReportShape;
  attempts: AttemptEvent[];
  /** Milliseconds from the `start` event (the run's clock starts there) to the exit. */
  tookMs: number;
  stderr: string;
}

/** A waitcmd run in progress, in jsonl mode, that also writes its JSON report to a file. */
interface Watched {
  readonly live: LiveCli;
  /** The unique `--label` of its condition: also how to find its process. */
  readonly label: string;
  /** Attempt events of the first condition read so far. */
  attempts(): AttemptEvent[];
  /** Resolves once `n` attempt events have been read (rejects after `timeoutMs` or on exit). */
  attemptsReach(n: number, timeoutMs?: number): Promise<void>;
  /**
   * Resolves with the first attempt event, from the `from`-th on (0-based), that
   * `match` accepts (rejects after `timeoutMs` or on exit).
   */
  attemptWhere(
    from: number,
    match: (a: AttemptEvent) => boolean,
    timeoutMs?: number,
  ): Promise<AttemptEvent>;
  /** Whether the process has exited. */
  exited(): boolean;
  /** Waits for the exit and reads the report. */
  finish(): Promise<Finished>;
  /** Kills the run if it is still going (cleanup after a failed assertion). */
  kill(): void;
}

let runSeq = 0;

/**
 * Starts `waitcmd -o jsonl --report FILE ...globals KIND ... --label L [-- more...]`:
 * the first condition gets a unique label (`more`, e.g. a guard, goes after it).
 * Resolves once the run's `start` event was read.
 */
async function watchRun(
  dir: string,
  globals: string[],
  condition: string[],
  env: Record<string, string> = {},
  more: string[] = [],
): Promise<Watched> {
  const label = `restart-${Deno.pid}-${++runSeq}-${Date.now() % 1e6}`;
  const reportFile = `${dir}/${label}.json`;
  const live = startCli(
    [
      "-o",
      "jsonl",
      "--report",
      reportFile,
      ...globals,
      ...condition,
      "--label",
      label,
      ...(more.length ? ["--", ...more] : []),
    ],
    { env },
  );
  try {
    await live.waitFor("stdout", /"event":"start"/, 60_000);
  } catch (e) {
    live.child.kill("SIGKILL");
    const r = await live.done().catch(() => undefined);
    throw new Error(`${e}\n--- stderr ---\n${r?.stderr}`);
  }
  const startedAt = performance.now();
  let done = false;
  const ended = live.done().then((r) => {
    done = true;
    return r;
  });
  const ofFirst = (l: string) => l.includes('"event":"attempt"') && l.includes(`"${label}"`);
  const attempts = () =>
    live.lines.stdout
      .filter(ofFirst)
      .map((l) => JSON.parse(l) as AttemptEvent)
      .filter((a) => a.condition === label);
  return {
    live,
    label,
    attempts,
    // waitFor runs its predicate over all lines again on each new line: keep it stateless.
    // An attempt's number is its place among the condition's attempts (1-based).
    async attemptsReach(n, timeoutMs = 30_000) {
      await live.waitFor("stdout", () => attempts().length >= n, timeoutMs);
    },
    async attemptWhere(from, match, timeoutMs = 30_000) {
      const line = await live.waitFor("stdout", (l) => {
        if (!ofFirst(l)) return false;
        const a = JSON.parse(l) as AttemptEvent;
        return a.condition === label && a.attempt > from && match(a);
      }, timeoutMs);
      return JSON.parse(line) as AttemptEvent;
    },
    exited: () => done,
    async finish() {
      const r = await ended;
      const report = JSON.parse(await Deno.readTextFile(reportFile)) as JsonReportShape;
      await assertReportSchema(report);
      return {
        code: r.code,
        report,
        attempts: attempts(),
        tookMs: r.exitedAt - startedAt,
        stderr: r.stderr,
      };
    },
    kill() {
      if (done) return;
      try {
        live.child.kill("SIGKILL");
      } catch {
        // exited meanwhile
      }
    },
  };
}

/** Asserts that no process (waitcmd, or anything it started) still carries `label` in its command line. */
async function assertNoLeftover(label: string): Promise<void> {
  const out = await new Deno.Command("pgrep", { args: ["-f", label], stdout: "piped" }).output();
  assertEquals(out.code, 1, `left running: ${new TextDecoder().decode(out.stdout)}`);
}

/** Polls `ok` every 100 ms until it holds; throws with `what` after `timeoutMs`. */
async function until(what: string, ok: () => Promise<boolean>, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await ok().catch(() => false)) return;
    await sleep(100);
  }
  throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
}

// --- kube-apiserver ----------------------------------------------------------------------------

/** Why the cluster's binaries cannot be had here, or undefined when they can. */
const whyNoKube = await whyNoCluster();

Deno.test({
  name: "fault: kube-apiserver restarts during an orch watch: the watch resumes, the verdict holds",
  ignore: ignoreWithout(
    "kube-apiserver, kube-controller-manager, kube-scheduler and kwok",
    whyNoKube,
  ),
  ...opts,
  async fn(t) {
    // Its own cluster: the restart would break every other test sharing one.
    const kube: KubeEnv = await startKube({ cluster: true });
    const dir = await Deno.makeTempDir({ prefix: "waitcmd-restarts-" });
    const runs: Watched[] = [];
    const NS = "restarts";
    const deployments = `/apis/apps/v1/namespaces/${NS}/deployments`;
    const pods = `/api/v1/namespaces/${NS}/pods`;
    try {
      await kube.create("/api/v1/namespaces", {
        apiVersion: "v1",
        kind: "Namespace",
        metadata: { name: NS },
      });
      // Two replicas whose pods KWOK holds Pending: the rollout waits until the test lets them go.
      await kube.create(deployments, {
        apiVersion: "apps/v1",
        kind: "Deployment",
        metadata: { name: "web", namespace: NS },
        spec: {
          replicas: 2,
          selector: { matchLabels: { app: "web" } },
          template: {
            metadata: { labels: { app: "web", [STAGE_LABEL]: "hold" } },
            spec: { containers: [{ name: "web", image: "example.invalid/web:1" }] },
          },
        },
      });
      await until("2 pods of web, held Pending", async () => {
        const l = await kube.get<{ items: unknown[] }>(`${pods}?labelSelector=app%3Dweb`);
        return l.items.length === 2;
      });
      const target = [
        ...["orch", "deploy/web", "--namespace", NS, "--for", "rollout"],
        ...["--kubeconfig", kube.kubeconfig],
      ];
      const pending = /^deployment\/web /;
      const server = kube.server.replaceAll(".", "\\.");
      const refused = new RegExp(`^${server}: connection refused$`);
      // Any failure to talk to the server names it first (refused, reset, TLS cut short).
      const outage = new RegExp(`^${server}: `);

      // Polling every second: attempts go on (and fail) while the server is away.
      const polling = await watchRun(dir, ["-t", "120s", "-i", "1s"], target);
      runs.push(polling);
      // An interval longer than the timeout: only a watch event can end it satisfied, and the
      // watch it had broke with the server, so it must have been taken up again.
      const eventsOnly = await watchRun(dir, ["-t", "120s", "-i", "300s"], target);
      runs.push(eventsOnly);
      // Stays down past its deadline: ends on time, with the outage as its last error.
      const doomed = await watchRun(dir, ["-t", "10s", "-i", "200ms"], target);
      runs.push(doomed);
      for (const r of runs) await r.attemptsReach(1, 60_000);
      for (const r of runs) assertMatch(r.attempts()[0]!.error, pending);

      await t.step("the server stays down past a run's deadline: exit 1 on time", async () => {
        const before = doomed.attempts().length;
        await kube.stopApiserver();
        const d = await doomed.finish();
        assertEquals(d.code, 1, JSON.stringify(d.attempts));
        assertEquals(d.report.status, "timeout");
        const c = d.report.conditions[0]!;
        assertEquals(c.satisfied, false);
        assertMatch(c.last_error, refused);
        // Attempts went on every 200 ms while the server was away (its first one came after
        // about 4 s of start-up, kubeconfig and discovery on a loaded 2-core machine).
        assert(c.attempts >= before + 3, `attempts ${c.attempts}, ${before} before the outage`);
        // The deadline is 10 s after the start event: not before, and at most 2 s after.
        assert(d.report.elapsed_seconds >= 10, `elapsed ${d.report.elapsed_seconds}`);
        assert(d.tookMs < 12_000, `exited ${d.tookMs.toFixed(0)} ms after its start`);
        await assertNoLeftover(doomed.label);
      });

      await t.step("attempts go on while the server is away, and fail", async () => {
        // At 1 s intervals, a few more attempts of the polling run while the server is down.
        const before = polling.attempts().length;
        await polling.attemptsReach(before + 2, 30_000);
        assert(
          polling.attempts().slice(before).every((a) => !a.ok && outage.test(a.error)),
          JSON.stringify(polling.attempts().slice(before)),
        );
        assert(!polling.exited() && !eventsOnly.exited(), "a run ended while the server was away");
      });

      await t.step("satisfied once the pods are let go after the server is back", async () => {
        await kube.startApiserver();
        // Still pending when the server is back: nothing has changed yet.
        const back = polling.attempts().length;
        const first = await polling.attemptWhere(back, (a) => !outage.test(a.error), 60_000);
        assertEquals(first.ok, false);
        assertMatch(first.error, pending);
        assert(!eventsOnly.exited(), "judged before the pods were let go");
        // Let the pods go (KWOK starts them), then the controllers roll the deployment out.
        const held = await kube.get<{ items: { metadata: { name: string } }[] }>(
          `${pods}?labelSelector=app%3Dweb`,
        );
        const released = performance.now();
        for (const p of held.items) {
          await kube.patch(`${pods}/${p.metadata.name}`, {
            metadata: { labels: { [STAGE_LABEL]: null } },
          });
        }
        for (const [name, run] of [["polling", polling], ["events only", eventsOnly]] as const) {
          const r = await run.finish();
          assertEquals(r.code, 0, `${name}: ${JSON.stringify(r.attempts)}`);
          assertEquals(r.report.status, "satisfied");
          const c = r.report.conditions[0]!;
          assertEquals(c.satisfied, true);
          assertEquals(c.detail, "deployment/web rolled out (2/2 replicas updated and available)");
          assertMatch(c.last_error, pending);
          assert(c.attempts > 1, `${name}: attempts ${c.attempts}`);
          // No hang: ended well before its deadline, soon after the pods were let go.
          const late = performance.now() - released;
          assert(late < 60_000, `${name}: ended ${late.toFixed(0)} ms after the release`);
          await assertNoLeftover(run.label);
        }
        const seen = (await polling.finish()).attempts;
        assert(seen.some((a) => refused.test(a.error)), "the polling run saw the outage");
      });
    } finally {
      for (const r of runs) r.kill();
      await kube.stop();
      await Deno.remove(dir, { recursive: true }).catch(() => {});
    }
  },
});

// --- dockerd -------------------------------------------------------------------------------------

/** Why a private dockerd cannot be started here, or undefined when it can. */
let whyNoDocker: string | undefined;
for (const bin of [DOCKERD_BIN, DOCKER_CLI]) {
  if (!(await Deno.stat(bin).then(() => true, () => false))) {
    whyNoDocker ??= `${bin} is not installed`;
  }
}

Deno.test({
  name:
    "fault: kube-apiserver restarts under an RBAC user's wait: its 403s while starting are pending",
  ignore: ignoreWithout("kube-apiserver", whyNoKube),
  ...opts,
  async fn() {
    // A plain apiserver (no controllers needed); its own: it is restarted.
    const kube: KubeEnv = await startKube();
    const dir = await Deno.makeTempDir({ prefix: "waitcmd-restarts-" });
    let run: Watched | undefined;
    try {
      // The fixture's "nobody" user may read everything through a ClusterRole, as CI users do.
      await kube.create("/apis/rbac.authorization.k8s.io/v1/clusterroles", {
        apiVersion: "rbac.authorization.k8s.io/v1",
        kind: "ClusterRole",
        metadata: { name: "waitcmd-reader" },
        rules: [{ apiGroups: ["*"], resources: ["*"], verbs: ["get", "list", "watch"] }],
      });
      await kube.create("/apis/rbac.authorization.k8s.io/v1/clusterrolebindings", {
        apiVersion: "rbac.authorization.k8s.io/v1",
        kind: "ClusterRoleBinding",
        metadata: { name: "waitcmd-reader" },
        roleRef: {
          apiGroup: "rbac.authorization.k8s.io",
          kind: "ClusterRole",
          name: "waitcmd-reader",
        },
        subjects: [{ apiGroup: "rbac.authorization.k8s.io", kind: "User", name: "waitcmd-nobody" }],
      });
      // Bindings reach the authorizer's cache in a moment: wait until the user may read.
      run = await watchRun(dir, ["-t", "120s", "-i", "100ms"], [
        ...["k8s", "configmap/late", "--namespace", "default"],
        ...["--kubeconfig", kube.forbiddenKubeconfig],
      ]);
      await run.attemptWhere(0, (a) => /not found/.test(a.error), 30_000);
      await kube.stopApiserver();
      const down = run.attempts().length;
      await run.attemptWhere(down, (a) => /refused|reset|closed/.test(a.error), 30_000);
      await kube.startApiserver();
      await sleep(3000);
      assert(
        !run.exited(),
        "the wait ended while the server was coming back (a 403 taken as fatal?)",
      );
      await kube.create("/api/v1/namespaces/default/configmaps", {
        apiVersion: "v1",
        kind: "ConfigMap",
        metadata: { name: "late" },
      });
      const f = await run.finish();
      assertEquals([f.code, f.report.status], [0, "satisfied"], f.stderr);
      assertEquals(f.report.conditions[0]!.detail, "configmap/late exists");
      await assertNoLeftover(run.label);
    } finally {
      run?.kill();
      await kube.stop();
      await Deno.remove(dir, { recursive: true });
    }
  },
});

Deno.test({
  name:
    "fault: kube-apiserver restarts under the shared watch of a manifest's objects: it lists again, events still wake them",
  ignore: ignoreWithout("kube-apiserver", whyNoKube),
  ...opts,
  async fn() {
    // A plain apiserver (ConfigMaps need no controller); its own: it is restarted.
    const kube: KubeEnv = await startKube();
    const dir = await Deno.makeTempDir({ prefix: "waitcmd-restarts-" });
    let live: LiveCli | undefined;
    try {
      const names = ["r-0", "r-1", "r-2"];
      await Deno.writeTextFile(
        `${dir}/m.yaml`,
        names.map((n) => `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${n}\n`).join(
          "---\n",
        ),
      );
      // An interval longer than the timeout: only the watch can wake the objects.
      live = startCli([
        "-t",
        "120s",
        "-i",
        "300s",
        "k8s",
        "-f",
        `${dir}/m.yaml`,
        "--namespace",
        "default",
      ], {
        env: { KUBECONFIG: kube.kubeconfig },
      });
      await live.waitFor("stderr", /r-2 not found in namespace default/, 60_000);
      await kube.restartApiserver(3000);
      await sleep(3000);
      const created = performance.now();
      for (const name of names) {
        await kube.create("/api/v1/namespaces/default/configmaps", {
          apiVersion: "v1",
          kind: "ConfigMap",
          metadata: { name },
        });
      }
      const r = await live.done();
      const tookMs = performance.now() - created;
      assertEquals(r.code, 0, r.stderr.slice(-2000));
      assertMatch(r.stderr, /satisfied in .* \(3\/3 conditions\)/);
      // The server's absence was seen by the attempts the failing watch woke.
      assertMatch(r.stderr, /connection (refused|reset)/);
      assert(tookMs < 30_000, `satisfied ${Math.round(tookMs)} ms after the objects were made`);
    } finally {
      try {
        live?.child.kill("SIGKILL");
      } catch {
        // already exited
      }
      await kube.stop();
      await Deno.remove(dir, { recursive: true });
    }
  },
});

Deno.test({
  name: "fault: dockerd restarts during a container wait: attempts go on, the verdict follows",
  ignore: ignoreWithout("dockerd", whyNoDocker),
  ...opts,
  async fn(t) {
    const d = await startDocker();
    const env = { DOCKER_HOST: d.host };
    const dir = await Deno.makeTempDir({ prefix: "waitcmd-restarts-" });
    const runs: Watched[] = [];
    const state = (name: string) =>
      d.docker(["inspect", "-f", "{{.State.Status}} {{.State.Health.Status}}", name]);
    try {
      // Healthy while /tmp/healthy exists (checked every second): none does yet.
      await d.buildBusyboxImage();
      // Started again by dockerd when it comes back; `once` is not.
      await d.runContainer("hc", { args: ["--restart", "always"] });
      await d.runContainer("once");
      const healthy = ["--health", "healthy"];
      const unhealthy = (name: string) =>
        new RegExp(`^container ${name} running, (starting|unhealthy); want running, healthy$`);
      const gone = new RegExp(
        `^cannot reach the Docker engine at ${
          d.host.replaceAll(".", "\\.")
        }: (no such socket|connection refused)$`,
      );

      // Polling every 500 ms: attempts go on (and fail) while dockerd is away.
      const polling = await watchRun(dir, ["-t", "120s", "-i", "500ms"], [
        "container",
        "hc",
        ...healthy,
      ], env);
      runs.push(polling);
      // An interval longer than the timeout: only the events stream (which broke with
      // dockerd, so it must have been taken up again) can end it satisfied.
      const eventsOnly = await watchRun(dir, ["-t", "120s", "-i", "300s"], [
        "container",
        "hc",
        ...healthy,
      ], env);
      runs.push(eventsOnly);
      // dockerd stays down past its deadline (stopping dockerd, its containers first, takes
      // about 2 s of it).
      const doomed = await watchRun(dir, ["-t", "8s", "-i", "200ms"], [
        "container",
        "hc",
        ...healthy,
      ], env);
      runs.push(doomed);
      // A container dockerd does not start again: never healthy, whatever happens later.
      const never = await watchRun(dir, ["-t", "20s", "-i", "500ms"], [
        "container",
        "once",
        ...healthy,
      ], env);
      runs.push(never);
      for (const r of runs) await r.attemptsReach(1);
      for (const r of [polling, eventsOnly, doomed]) {
        assertMatch(r.attempts()[0]!.error, unhealthy("hc"));
      }
      assertMatch(never.attempts()[0]!.error, unhealthy("once"));

      await t.step("dockerd stays down past a run's deadline: exit 1 on time", async () => {
        const before = doomed.attempts().length;
        await d.stopDaemon();
        const r = await doomed.finish();
        assertEquals(r.code, 1, JSON.stringify(r.attempts));
        assertEquals(r.report.status, "timeout");
        const c = r.report.conditions[0]!;
        assertEquals(c.satisfied, false);
        // The socket went with dockerd: the error names it.
        assertMatch(c.last_error, gone);
        assert(c.attempts > before, `attempts ${c.attempts}, ${before} before the outage`);
        // The deadline is 8 s after the start event: not before, and at most 2 s after.
        assert(r.report.elapsed_seconds >= 8, `elapsed ${r.report.elapsed_seconds}`);
        assert(r.tookMs < 10_000, `exited ${r.tookMs.toFixed(0)} ms after its start`);
        await assertNoLeftover(doomed.label);
      });

      await t.step("attempts go on while dockerd is away, and fail", async () => {
        const before = polling.attempts().length;
        await polling.attemptsReach(before + 2);
        const away = polling.attempts().slice(before);
        assert(away.every((a) => !a.ok && gone.test(a.error)), JSON.stringify(away));
        for (const r of [polling, eventsOnly, never]) assert(!r.exited(), `${r.label} ended`);
      });

      await t.step("healthy after dockerd is back and restarts the container", async () => {
        const back = polling.attempts().length;
        await d.startDaemon();
        await until("hc running again", async () => (await state("hc")).startsWith("running "));
        // Not healthy yet (no /tmp/healthy): still pending once dockerd answers again.
        const first = await polling.attemptWhere(back, (a) => !gone.test(a.error));
        assertEquals(first.ok, false);
        assertMatch(
          first.error,
          /^container hc (running, (starting|unhealthy)|exited \(exit code \d+\)|restarting, \w+); want running, healthy$/,
        );
        assert(!eventsOnly.exited(), "judged before the container was healthy");
        const fixed = performance.now();
        await d.docker(["exec", "hc", "touch", "/tmp/healthy"]);
        for (const [name, run] of [["polling", polling], ["events only", eventsOnly]] as const) {
          const r = await run.finish();
          assertEquals(r.code, 0, `${name}: ${JSON.stringify(r.attempts)}`);
          assertEquals(r.report.status, "satisfied");
          const c = r.report.conditions[0]!;
          assertEquals([c.satisfied, c.detail], [true, "container hc running, healthy"]);
          assert(c.attempts > 1, `${name}: attempts ${c.attempts}`);
          // No hang: the healthcheck runs every second.
          const late = performance.now() - fixed;
          assert(late < 15_000, `${name}: ended ${late.toFixed(0)} ms after the fix`);
          await assertNoLeftover(run.label);
        }
      });

      await t.step(
        "a container dockerd did not start again is never healthy: exit 1 on time",
        async () => {
          assertMatch(await state("once"), /^exited /);
          const r = await never.finish();
          assertEquals(r.code, 1, JSON.stringify(r.attempts));
          assertEquals(r.report.status, "timeout");
          const c = r.report.conditions[0]!;
          assertEquals(c.satisfied, false);
          assertMatch(
            c.last_error,
            /^container once exited \(exit code \d+\); want running, healthy$/,
          );
          // (Attempts during the outage are the polling run's to show, in the step above.)
          // The deadline is 20 s after the start event: not before, and at most 2 s after.
          assert(r.report.elapsed_seconds >= 20, `elapsed ${r.report.elapsed_seconds}`);
          assert(r.tookMs < 22_000, `exited ${r.tookMs.toFixed(0)} ms after its start`);
          await assertNoLeftover(never.label);
        },
      );
    } finally {
      for (const r of runs) r.kill();
      await d.stop();
      await Deno.remove(dir, { recursive: true }).catch(() => {});
    }
  },
});

// --- systemd -------------------------------------------------------------------------------------

/** Why a systemd user manager cannot be started here, or undefined when it can. */
const whyNoSystemd = await Deno.stat(SYSTEMD_BIN).then(
  () => undefined,
  () => `${SYSTEMD_BIN} is not installed`,
);

/**
 * The units of the systemd test; `dir` holds the flag files that end their faults.
 * - flap: active 0.3 s, then down (activating, auto-restart) 0.5 s, again and again,
 *   until `flap.steady` exists; no start limit.
 * - crashloop: its start fails (ExecStartPost, after 0.3 s) and systemd restarts it,
 *   until `crash.fixed` exists; never active before; no start limit.
 * - giveup: like crashloop, never fixed; systemd gives up after 3 starts (start-limit-hit).
 */
const flakyUnits = (dir: string): Record<string, string> => ({
  "flap.service": [
    "[Unit]",
    "StartLimitIntervalSec=0",
    "[Service]",
    `ExecStart=/bin/sh -c 'if [ -e ${dir}/flap.steady ]; then exec sleep 1000; fi; sleep 0.3; exit 1'`,
    "Restart=always",
    "RestartSec=500ms",
    "",
  ].join("\n"),
  "crashloop.service": [
    "[Unit]",
    "StartLimitIntervalSec=0",
    "[Service]",
    "ExecStart=/bin/sleep 1000",
    `ExecStartPost=/bin/sh -c 'sleep 0.3; test -e ${dir}/crash.fixed'`,
    "Restart=always",
    "RestartSec=300ms",
    "",
  ].join("\n"),
  "giveup.service": [
    "[Unit]",
    "StartLimitIntervalSec=60s",
    "StartLimitBurst=3",
    "[Service]",
    "ExecStart=/bin/sleep 1000",
    `ExecStartPost=/bin/sh -c 'sleep 0.3; test -e ${dir}/never'`,
    "Restart=always",
    "RestartSec=300ms",
    "",
  ].join("\n"),
});

/**
 * The states of a unit whose start fails and that systemd restarts: activating (start,
 * start-post, auto-restart) or deactivating (its main process stopped for the failed
 * ExecStartPost). Only the ActiveState is matched: svcmgr reads it and the SubState in two
 * D-Bus calls, so a SubState can belong to the next state (`activating (running)`).
 */
const CRASH_LOOPING = /^(activating|deactivating) \([a-z-]+\)$/;

Deno.test({
  name: "fault: a systemd unit that flaps or crash-loops during a svcmgr wait",
  ignore: ignoreWithout("systemd --user", whyNoSystemd),
  ...opts,
  async fn(t) {
    const sd = await startSystemdUser();
    const env = sd.env;
    const dir = await Deno.makeTempDir({ prefix: "waitcmd-restarts-" });
    const runs: Watched[] = [];
    const restarts = async (unit: string) =>
      Number((await sd.show(unit, ["NRestarts"])).NRestarts ?? "0");
    /** Ends `run`, which must be satisfied with its unit active (running); returns what it ran. */
    const finishActive = async (run: Watched, name: string) => {
      const r = await run.finish();
      assertEquals(r.code, 0, `${name}: ${JSON.stringify(r.attempts)}`);
      assertEquals(r.report.status, "satisfied");
      const c = r.report.conditions[0]!;
      assertEquals([c.satisfied, c.detail], [true, "active (running)"], JSON.stringify(c));
      return r;
    };
    /** A watched run of `svcmgr --user UNIT` (guarded by its `--failed`), killed at the end. */
    const svcmgr = async (globals: string[], unit: string, guarded = false) => {
      const guard = guarded ? ["guard", "svcmgr", "--user", unit, "--failed"] : [];
      const run = await watchRun(dir, globals, ["svcmgr", "--user", unit], env, guard);
      runs.push(run);
      return run;
    };
    try {
      for (const [name, content] of Object.entries(flakyUnits(dir))) {
        await sd.writeUnit(name, content, { reload: false });
      }
      await sd.systemctl(["daemon-reload"]);

      await t.step(
        "a flapping unit never satisfies --stable-for 2s or --successes 8, then does once it stays up",
        async () => {
          await sd.systemctl(["start", "flap.service"]);
          // Down 500 ms at a time: longer than the stable window's sampling step (2 s / 5) and
          // than 2 of the --successes run's 200 ms intervals, so every dip is seen. Up 300 ms at
          // a time: room for 2 interval attempts, plus the ones the unit's D-Bus signals wake
          // when it goes up (2 or 3 seen here), far from 8.
          const stable = await svcmgr(["-t", "60s", "-i", "200ms", "--stable-for", "2s"], "flap");
          const successes = await svcmgr(["-t", "60s", "-i", "200ms", "--successes", "8"], "flap");
          // Both see it up and down, several times over (at least 3 restarts), and hold off.
          const n0 = await restarts("flap.service");
          await until("3 restarts of flap", async () => (await restarts("flap.service")) >= n0 + 3);
          for (const r of [stable, successes]) {
            const seen = r.attempts();
            assert(!r.exited(), `satisfied while flapping: ${JSON.stringify(seen)}`);
            assert(seen.some((a) => a.ok), `never saw it up: ${JSON.stringify(seen)}`);
            assert(
              seen.some((a) => /^activating \([a-z-]+\)$/.test(a.error)),
              `never saw it down: ${JSON.stringify(seen)}`,
            );
          }
          // From now on it stays up (once the current run of it has ended).
          await Deno.writeTextFile(`${dir}/flap.steady`, "");
          const steadied = performance.now();
          const both = [["--stable-for", stable], ["--successes", successes]] as const;
          for (const [name, run] of both) {
            const r = await finishActive(run, name);
            const c = r.report.conditions[0]!;
            // Its last failure was the unit being down (activating, auto-restart), not an error
            // of waitcmd's; the SubState is read apart from the ActiveState (see CRASH_LOOPING).
            assertMatch(c.last_error, /^activating \([a-z-]+\)$/, JSON.stringify(r.attempts));
            assert(c.attempts >= 8, `${name}: attempts ${c.attempts}`);
            const late = performance.now() - steadied;
            assert(late < 20_000, `${name}: ended ${late.toFixed(0)} ms after the fix`);
            // The stable window began with the first start that stayed up, after the fix.
            if (name === "--stable-for") assert(late >= 1900, `ended ${late.toFixed(0)} ms after`);
            await assertNoLeftover(run.label);
          }
          await sd.systemctl(["stop", "flap.service"]);
        },
      );

      await t.step(
        "--active on a unit whose start fails and is restarted: pending, not fatal, until it is fixed",
        async () => {
          await sd.systemctl(["start", "--no-block", "crashloop.service"]);
          // A guard on --failed: a unit systemd is still restarting has not failed for good.
          const run = await svcmgr(["-t", "60s", "-i", "200ms"], "crashloop", true);
          await until(
            "3 restarts of crashloop",
            async () => (await restarts("crashloop.service")) >= 3,
          );
          const seen = run.attempts();
          assert(!run.exited(), `ended while crash-looping: ${JSON.stringify(seen)}`);
          assert(seen.every((a) => !a.ok), JSON.stringify(seen));
          await Deno.writeTextFile(`${dir}/crash.fixed`, "");
          const r = await finishActive(run, "crashloop");
          const [c, guard] = r.report.conditions;
          assertMatch(c!.last_error, CRASH_LOOPING);
          // Never active before the fix, never failed for good either.
          assert(
            r.attempts.every((a) => a.ok || CRASH_LOOPING.test(a.error)),
            JSON.stringify(r.attempts),
          );
          assertEquals([guard!.guard, guard!.satisfied, guard!.fatal], [true, false, false]);
          await assertNoLeftover(run.label);
          await sd.systemctl(["stop", "crashloop.service"]);
        },
      );

      await t.step(
        "--active on a unit systemd gives up on (start limit): exit 3 with a guard, else exit 1 on time",
        async () => {
          await sd.systemctl(["start", "--no-block", "giveup.service"]);
          const guarded = await svcmgr(["-t", "60s", "-i", "200ms"], "giveup", true);
          const plain = await svcmgr(["-t", "6s", "-i", "200ms"], "giveup");
          const g = await guarded.finish();
          assertEquals(g.code, 3, JSON.stringify(g.attempts));
          assertEquals(g.report.status, "fatal");
          // What systemd says now: failed after its restarts (StartLimitBurst=3), for good.
          const shown = await sd.show("giveup.service", [
            "ActiveState",
            "SubState",
            "Result",
            "NRestarts",
          ]);
          assertEquals([shown.ActiveState, shown.SubState], ["failed", "failed"]);
          assert(Number(shown.NRestarts) >= 2, `NRestarts ${shown.NRestarts}`);
          await sleep(1000);
          assertEquals(
            await restarts("giveup.service"),
            Number(shown.NRestarts),
            "restarted again",
          );
          const failed = `failed (failed, result ${shown.Result})`;
          const [c, guard] = g.report.conditions;
          assertEquals(c!.satisfied, false);
          assertEquals([guard!.guard, guard!.satisfied, guard!.detail], [true, true, failed]);
          // Not before systemd gave up: every attempt until then saw it crash-looping.
          assert(
            g.attempts.every((a) => CRASH_LOOPING.test(a.error) || a.error === failed),
            JSON.stringify(g.attempts),
          );
          await assertNoLeftover(guarded.label);

          const p = await plain.finish();
          assertEquals(p.code, 1, JSON.stringify(p.attempts));
          assertEquals(p.report.status, "timeout");
          assertEquals(p.report.conditions[0]!.last_error, failed);
          assert(p.report.elapsed_seconds >= 6, `elapsed ${p.report.elapsed_seconds}`);
          assert(p.tookMs < 8000, `exited ${p.tookMs.toFixed(0)} ms after its start`);
          await assertNoLeftover(plain.label);
        },
      );
    } finally {
      for (const r of runs) r.kill();
      await sd.stop();
      await Deno.remove(dir, { recursive: true }).catch(() => {});
    }
  },
});
