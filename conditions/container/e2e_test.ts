/**
 * container end to end: the CLI against a private dockerd the suite starts
 * (tests/services/docker.ts), with busybox images built FROM scratch (one
 * with a HEALTHCHECK on /tmp/healthy, one without) and a docker-compose
 * project of two services.
 */

import { assert, assertEquals, assertMatch, assertStringIncludes } from "../../tests/_assert.ts";
import { ignoreWithout } from "../../tests/_kit.ts";
import { usageRows } from "../../tests/_suite.ts";
import {
  COMPOSE_BIN,
  DOCKER_CLI,
  DOCKERD_BIN,
  startDocker,
  writeBusyboxCompose,
} from "../../tests/services/docker.ts";
import {
  assertKindUsageErrors,
  expectJson,
  runCli,
  runJson,
  timing,
  usageErrorLine,
} from "../../tests/e2e/_cli.ts";

/** The kind's usage errors, from its folder (conditions/container/_suite.ts). */
const USAGE = await usageRows("container");

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const FAST = ["--timeout", "10s", "--interval", "200ms"];
/**
 * An interval longer than the timeout: a run that ends satisfied before the
 * timeout was woken by the events stream, not by polling.
 */
const EVENTS_ONLY = ["--timeout", "10s", "--interval", "30s"];
/** How long a test lets waitcmd start and make its first attempt before changing a container. */
const SETTLE_MS = 1500;
const NO_HEALTHCHECK = "waitcmd-test:nohc";

/** Why the suite cannot start a dockerd here, or undefined when it can. */
let whyMissing: string | undefined;
for (const bin of [DOCKERD_BIN, DOCKER_CLI, COMPOSE_BIN]) {
  if (!(await Deno.stat(bin).then(() => true, () => false))) {
    whyMissing ??= `${bin} is not installed`;
  }
}

/** Why waitcmd cannot be run in a pid namespace of its own here, or undefined when it can. */
const whyNoUnshare = Deno.uid() !== 0
  ? "unshare --pid needs root"
  : await new Deno.Command("unshare", { args: ["--pid", "--fork", "--mount-proc", "true"] })
    .output().then((o) => o.code === 0 ? undefined : "unshare --pid fails here", () =>
      "unshare is not installed");

Deno.test({
  name: "container against a real Docker Engine",
  ignore: ignoreWithout("dockerd", whyMissing),
  sanitizeOps: false,
  sanitizeResources: false,
  async fn(t) {
    const d = await startDocker();
    const env = { DOCKER_HOST: d.host };
    const health = (name: string) => d.docker(["inspect", "-f", "{{.State.Health.Status}}", name]);
    try {
      const image = await d.buildBusyboxImage();
      await d.buildBusyboxImage({ tag: NO_HEALTHCHECK, healthcheck: false });

      await t.step("docker (alias) writes one JSON report and nothing on stderr", async () => {
        await d.runContainer("plain", { image: NO_HEALTHCHECK });
        const r = await expectJson([...FAST, "docker", "plain", "--health", "none"], {
          code: 0,
          status: "satisfied",
          stderr: "",
        }, {
          env,
        });
        const c = r.json.conditions[0]!;
        assertEquals(c.name, "docker plain");
        assertEquals(c.kind, "container");
        assertEquals(c.target, "plain");
        assertEquals(c.satisfied, true);
        assertEquals(c.attempts, 1);
        assertEquals(c.detail, "container plain running");
        assertEquals(c.last_error, "");
      });

      await t.step("container finds a container by its id too", async () => {
        const id = await d.docker(["inspect", "-f", "{{.Id}}", "plain"]);
        const full = await runJson([...FAST, "container", id], { env });
        assertEquals(full.json.conditions[0]!.detail, "container plain running");
        const short = await runJson([...FAST, "container", id.slice(0, 12)], { env });
        assertEquals(short.json.conditions[0]!.detail, "container plain running");
      });

      await t.step("container --health healthy waits for the healthcheck to pass", async () => {
        await d.runContainer("hc");
        const r = await expectJson([...EVENTS_ONLY, "container", "hc", "--health", "healthy"], {
          code: 0,
        }, {
          env,
          started: async () => {
            await sleep(SETTLE_MS);
            await d.docker(["exec", "hc", "touch", "/tmp/healthy"]);
          },
        });
        const c = r.json.conditions[0]!;
        assertEquals(c.detail, "container hc running, healthy");
        assertMatch(
          c.last_error,
          /^container hc running, (starting|unhealthy); want running, healthy$/,
        );
        assert(r.json.elapsed_seconds < 10, "satisfied before the timeout, so by an event");
      });

      await t.step("container --status exited holds once the container has stopped", async () => {
        await d.runContainer("job", { image: NO_HEALTHCHECK, cmd: ["/bin/sh", "-c", "sleep 100"] });
        await expectJson([...EVENTS_ONLY, "container", "job", "--status", "exited"], {
          code: 0,
          detail: "container job exited (exit code 137)",
          error: "container job running; want exited",
        }, {
          env,
          started: async () => {
            await sleep(SETTLE_MS);
            await d.docker(["kill", "job"]);
          },
        });
      });

      await t.step("container waits for a container that is created late", async () => {
        const r = await runCli([...EVENTS_ONLY, "container", "late"], {
          env,
          started: async () => {
            await sleep(SETTLE_MS);
            await d.runContainer("late", { image: NO_HEALTHCHECK });
          },
        });
        assertEquals(r.code, 0);
        assertEquals(r.stdout, "");
        assertMatch(
          r.stderr,
          /\[\.\.\] container late attempt 1 \(\d+\.\ds\): no container or compose service named "late"\n/,
        );
        assertMatch(
          r.stderr,
          /\[ok\] container late attempt \d+ \(\d+\.\ds\): container late running\n/,
        );
      });

      await t.step("container keeps waiting while the engine cannot be reached", async () => {
        const sock = `${d.dir}/no-such.sock`;
        const r = await expectJson(
          ["--timeout", "600ms", "--interval", "200ms", "container", "plain"],
          { code: 1 },
          { env: { DOCKER_HOST: `unix://${sock}` } },
        );
        assertEquals(r.stderr, "");
        assertEquals(
          r.json.conditions[0]!.last_error,
          `cannot reach the Docker engine at unix://${sock}: no such socket`,
        );
      });

      await t.step("guard container --health unhealthy ends the run with exit 3", async () => {
        // Never gets /tmp/healthy: the first healthcheck fails and it turns unhealthy.
        const args = [
          ...EVENTS_ONLY,
          ...["container", "sick", "--health", "healthy"],
          ...["--", "guard", "container", "sick", "--health", "unhealthy"],
        ];
        await d.runContainer("sick");
        const r = await runCli(args, { env });
        assertEquals(r.code, 3);
        assertEquals(r.stdout, "");
        assertStringIncludes(
          r.stderr,
          "waitcmd: guard container sick matched: container sick running, unhealthy\n",
        );
        const j = await expectJson(args, { code: 3 }, { env });
        assertEquals(j.stderr, "");
        assertEquals(j.json.status, "fatal");
        assertEquals(j.json.conditions[0]!.satisfied, false);
        const guard = j.json.conditions[1]!;
        assertEquals(guard.guard, true);
        assertEquals(guard.fatal, true);
        assertEquals(guard.detail, "container sick running, unhealthy");
      });

      const bare = await d.buildNoShellImage();
      /** `docker inspect` of the container's main process. */
      const pidOf = async (name: string) =>
        Number(await d.docker(["inspect", "-f", "{{.State.Pid}}", name]));

      await t.step(
        "container --listening holds for ports of an image without a shell, read from the host",
        async () => {
          await d.runContainer("bare-web", { image: bare }); // httpd -f -p 8080: [::]:8080
          await d.runContainer("bare-v4", { image: bare, cmd: ["/bin/nc", "-l", "-p", "9000"] });
          // No shell, no tool to run a port check inside (what testcontainers would need).
          const exec = await d.docker(["exec", "bare-web", "/bin/sh", "-c", "true"]).then(
            () => "ran",
            (e: Error) => e.message,
          );
          // 126/127: the runtime cannot find or start /bin/sh.
          assertMatch(exec, /exec bare-web \/bin\/sh -c true exited 12[67]/);
          const args = [
            ...FAST,
            ...["container", "bare-web", "--listening", "8080"],
            ...["--", "docker", "bare-v4", "--listening", "9000/tcp"],
          ];
          const r = await runCli(args, { env });
          assertEquals(r.code, 0, r.stderr);
          assertEquals(r.stdout, "");
          assertMatch(
            r.stderr,
            /\n\[ok\] container bare-web attempt 1 \(\d+\.\ds\): container bare-web running, listening on 8080\/tcp\n/,
          );
          assertMatch(
            r.stderr,
            /\n\[ok\] docker bare-v4 attempt 1 \(\d+\.\ds\): container bare-v4 running, listening on 9000\/tcp\n/,
          );
          const j = await expectJson(args, { code: 0 }, { env });
          assertEquals(j.stderr, "");
          assertEquals(j.json.conditions.map((c) => c.detail), [
            "container bare-web running, listening on 8080/tcp",
            "container bare-v4 running, listening on 9000/tcp",
          ]);
        },
      );

      await t.step(
        "container --listening waits for a container without a shell that is started late",
        async () => {
          await d.docker(["create", "--network", "none", "--name", "bare-late", bare]);
          const r = await expectJson([...FAST, "container", "bare-late", "--listening", "8080"], {
            code: 0,
          }, {
            env,
            started: async () => {
              await sleep(SETTLE_MS);
              await d.docker(["start", "bare-late"]);
            },
          });
          assertEquals(r.stderr, "");
          const c = r.json.conditions[0]!;
          assertEquals(c.detail, "container bare-late running, listening on 8080/tcp");
          // The last failed attempt saw it created, or running before httpd had bound its port.
          assertMatch(
            c.last_error,
            /^container bare-late (created|running, not listening on 8080\/tcp); want running, listening on 8080\/tcp$/,
          );
          assert(c.attempts >= 2, `attempts ${c.attempts}`);
        },
      );

      await t.step(
        "container --listening waits for a running container that binds its port late",
        async () => {
          await d.runContainer("slow-web", {
            image: NO_HEALTHCHECK,
            cmd: ["/bin/sh", "-c", "sleep 2; exec httpd -f -p 8080"],
          });
          const r = await expectJson([...FAST, "container", "slow-web", "--listening", "8080"], {
            code: 0,
          }, {
            env,
          });
          const c = r.json.conditions[0]!;
          assertEquals(c.detail, "container slow-web running, listening on 8080/tcp");
          assertEquals(
            c.last_error,
            "container slow-web running, not listening on 8080/tcp; want running, listening on 8080/tcp",
          );
        },
      );

      await t.step("container --listening times out on a port that never listens", async () => {
        const r = await expectJson(
          [...timing("600ms", "200ms"), "container", "bare-web", "--listening", "8081"],
          { code: 1, status: "timeout", stderr: "" },
          { env },
        );
        const c = r.json.conditions[0]!;
        assertEquals(c.satisfied, false);
        assertEquals(
          c.last_error,
          "container bare-web running, not listening on 8081/tcp; want running, listening on 8081/tcp",
        );
        assert(c.attempts >= 2, `attempts ${c.attempts}`);
        const h = await runCli(
          [...timing("600ms", "200ms"), "container", "bare-web", "--listening", "8081"],
          { env },
        );
        assertEquals(h.code, 1);
        assertStringIncludes(
          h.stderr,
          "waitcmd: timed out after 600ms; not satisfied: container bare-web: container bare-web running, not listening on 8081/tcp; want running, listening on 8081/tcp\n",
        );
      });

      await t.step("container --listening PORT/udp holds for a bound UDP port", async () => {
        await d.runContainer("bare-dhcp", {
          image: bare,
          cmd: ["/bin/udhcpd", "-f", "/etc/udhcpd.conf"],
        });
        await expectJson([...FAST, "container", "bare-dhcp", "--listening", "67/udp"], {
          code: 0,
          detail: "container bare-dhcp running, listening on 67/udp",
        }, {
          env,
        });
        // The same port over TCP is not listening.
        await expectJson([
          ...timing("600ms", "200ms"),
          ...["container", "bare-dhcp", "--listening", "67"],
        ], {
          code: 1,
          error:
            "container bare-dhcp running, not listening on 67/tcp; want running, listening on 67/tcp",
        }, { env });
      });

      await t.step({
        name:
          "container --listening where the engine's processes are not visible says what it needs",
        ignore: ignoreWithout("unshare as root", whyNoUnshare),
        fn: async () => {
          // A pid namespace of its own: the engine's pids are another host's, as for a remote engine.
          const pid = await pidOf("bare-web");
          const out = await runJson(
            ["--timeout", "600ms", "container", "bare-web", "--listening", "8080"],
            { env, wrapper: ["unshare", "--pid", "--fork", "--mount-proc"] },
          );
          assertEquals(out.code, 1, out.stderr);
          const report = out.json;
          assertEquals(report.status, "timeout");
          assertEquals(
            report.conditions[0]!.last_error,
            `cannot read the ports of container bare-web: its process ${pid} is not on this host; --listening needs waitcmd on the engine's host, with access to its /proc (engine: ${d.host})`,
          );
        },
      });

      await t.step("container --exit-code 0 holds once the container has exited 0", async () => {
        // The busybox image's command exits 0 on SIGTERM.
        await d.runContainer("job-ok", { image: NO_HEALTHCHECK });
        const r = await expectJson([...EVENTS_ONLY, "container", "job-ok", "--exit-code", "0"], {
          code: 0,
        }, {
          env,
          started: async () => {
            await sleep(SETTLE_MS);
            await d.docker(["stop", "-t", "5", "job-ok"]);
          },
        });
        assertEquals(r.stderr, "");
        const c = r.json.conditions[0]!;
        assertEquals(c.detail, "container job-ok exited (exit code 0)");
        assertEquals(c.last_error, "container job-ok running; want exited (exit code 0)");
        assert(r.json.elapsed_seconds < 10, "satisfied before the timeout, so by an event");
      });

      await t.step("container --exit-code times out while the container runs", async () => {
        await expectJson([
          ...timing("600ms", "200ms"),
          ...["container", "bare-web", "--exit-code", "0"],
        ], {
          code: 1,
          status: "timeout",
          error: "container bare-web running; want exited (exit code 0)",
        }, { env });
      });

      await t.step(
        "container --exit-code 0 on a container that exits 3 is fatal (exit 3)",
        async () => {
          await d.runContainer("job-bad", {
            image: NO_HEALTHCHECK,
            cmd: ["/bin/sh", "-c", "trap 'exit 3' TERM; sleep 100000 & wait"],
          });
          const r = await runCli([...EVENTS_ONLY, "container", "job-bad", "--exit-code", "0"], {
            env,
            started: async () => {
              await sleep(SETTLE_MS);
              await d.docker(["stop", "-t", "5", "job-bad"]);
            },
          });
          assertEquals(r.code, 3);
          assertEquals(r.stdout, "");
          assertStringIncludes(
            r.stderr,
            "waitcmd: fatal: container job-bad: container job-bad exited (exit code 3); want exit code 0\n",
          );
          // Once exited, at the first attempt.
          const j = await expectJson([...FAST, "container", "job-bad", "--exit-code", "0"], {
            code: 3,
          }, { env });
          assertEquals(j.stderr, "");
          assertEquals(j.json.status, "fatal");
          const c = j.json.conditions[0]!;
          assertEquals([c.fatal, c.attempts, c.satisfied], [true, 1, false]);
          assertEquals(c.last_error, "container job-bad exited (exit code 3); want exit code 0");
          await expectJson([...FAST, "container", "job-bad", "--exit-code", "3"], {
            code: 0,
            detail: "container job-bad exited (exit code 3)",
          }, {
            env,
          });
        },
      );

      await t.step("container --status any holds for a container in any state", async () => {
        // job-bad has exited 3: not fatal here, since no exit code is asked for.
        await expectJson([...FAST, "container", "job-bad", "--status", "any"], {
          code: 0,
          detail: "container job-bad exited (exit code 3)",
        }, { env });
        // Created and never started: exists, so holds; waited for while it does not.
        const r = await expectJson([...EVENTS_ONLY, "docker", "made-late", "--status", "any"], {
          code: 0,
          detail: "container made-late created",
          error: 'no container or compose service named "made-late"',
        }, {
          env,
          started: async () => {
            await sleep(SETTLE_MS);
            await d.docker(["create", "--name", "made-late", NO_HEALTHCHECK]);
          },
        });
        assert(r.json.elapsed_seconds < 10, "satisfied before the timeout, so by an event");
        await expectJson([...timing("600ms", "200ms"), "container", "never", "--status", "any"], {
          code: 1,
          status: "timeout",
          error: 'no container or compose service named "never"',
        }, { env });
        // A created container is not removing: --status removing stays pending (caught live, a
        // removal lasts a few milliseconds; the engine's word is tested in conditions/container/).
        await expectJson(
          [...timing("600ms", "200ms"), "container", "made-late", "--status", "removing"],
          { code: 1, status: "timeout", error: "container made-late created; want removing" },
          { env },
        );
        const explain = await runCli(["--explain", "container", "made-late", "--status", "any"]);
        assertEquals(explain.code, 0);
        assertStringIncludes(
          explain.stdout + explain.stderr,
          "1. container made-late --status any\n",
        );
      });

      const proj = `${d.dir}/compose-shop`;
      await writeBusyboxCompose(proj, {
        web: null,
        worker: ["/bin/sh", "-c", "touch /tmp/healthy; exec sleep 100000"],
      }, image);
      await d.composeUp(proj, "shop");

      await t.step("container finds a Compose service by name, narrowed by --project", async () => {
        const r = await expectJson(
          [...FAST, "container", "worker", "--project", "shop", "--health", "healthy"],
          { code: 0 },
          { env },
        );
        assertEquals(r.stderr, "");
        assertEquals(r.json.conditions[0]!.name, "container worker");
        assertEquals(
          r.json.conditions[0]!.detail,
          "container shop_worker_1 running, healthy (service worker)",
        );
        await expectJson([...FAST, "docker", "web"], {
          code: 0,
          detail: /^container shop_web_1 running, \w+ \(service web\)$/,
        }, { env });
        await expectJson(
          ["--timeout", "500ms", "--interval", "200ms", "container", "web", "--project", "other"],
          { code: 1, error: 'no container of compose service "web" in project "other"' },
          { env },
        );
      });

      await t.step("container wants every container of a scaled service to match", async () => {
        await d.compose(proj, "shop", ["up", "-d", "--scale", "web=2"]);
        await expectJson([...FAST, "container", "web", "--project", "shop"], {
          code: 0,
          detail: "service web: 2 containers running",
        }, { env });
        await d.docker(["stop", "-t", "1", "shop_web_2"]);
        await expectJson([...timing("600ms", "200ms"), "container", "web", "--project", "shop"], {
          code: 1,
          error: "service web: 1/2 containers running; shop_web_2 exited (exit code 0)",
        }, { env });
        // Started again while a wait runs: all match.
        await expectJson([...EVENTS_ONLY, "container", "web", "--project", "shop"], {
          code: 0,
          detail: "service web: 2 containers running",
        }, {
          env,
          started: async () => {
            await sleep(SETTLE_MS);
            await d.docker(["start", "shop_web_2"]);
          },
        });
      });

      await t.step(
        "container --health unhealthy matches a Compose service turning sick",
        async () => {
          await poll(
            "shop_web_1 unhealthy",
            async () => (await health("shop_web_1")) === "unhealthy",
          );
          await expectJson(
            [...FAST, "container", "web", "--project", "shop", "--health", "unhealthy"],
            { code: 0, detail: "service web: 2 containers running, unhealthy" },
            { env },
          );
        },
      );

      await t.step("container usage errors print one line and probe nothing", async () => {
        await assertKindUsageErrors("container", USAGE, {
          env,
          globals: ["--output", "json"],
        });
        assertStringIncludes(
          usageErrorLine(await runCli(["docker"], { env })),
          "missing target NAME",
        );
      });
    } finally {
      await d.stop();
    }
  },
});

async function poll(what: string, f: () => Promise<boolean>, ms = 15_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (await f().catch(() => false)) return;
    await sleep(100);
  }
  throw new Error(`timed out waiting for ${what}`);
}

/**
 * An engine that answers without end, in place of dockerd on its socket (no real engine
 * does this; a hostile or broken one may). An inspect of `big` answers an endless body. With
 * `events`, the first events stream sends one line of 512 MiB, and the next one an event of
 * `web`, which is found from then on. Counts what it sent.
 */
function hostileEngine(path: string, opts: { events: boolean }) {
  const sent = { inspect: 0, events: 0, streams: 0 };
  let found = false;
  const chunk = new TextEncoder().encode("1".repeat(64 * 1024));
  const web = JSON.stringify({
    Id: "e".repeat(64),
    Name: "/web",
    State: { Status: "running", Pid: 0, ExitCode: 0 },
  });
  const event = JSON.stringify({
    Type: "container",
    Action: "start",
    time: 1,
    Actor: { ID: "e".repeat(64), Attributes: { name: "web" } },
  });
  const never = () => new Promise<void>(() => {}); // held open, as the engine does
  const server = Deno.serve({ path, onListen: () => {} }, (req) => {
    const url = new URL(req.url);
    if (url.pathname === "/containers/big/json") {
      return new Response(
        new ReadableStream<Uint8Array>({
          pull(ctl) {
            if (sent.inspect === 0) ctl.enqueue(new TextEncoder().encode('{"Id":"'));
            sent.inspect += chunk.length;
            ctl.enqueue(chunk);
          },
        }),
      );
    }
    if (url.pathname === "/containers/web/json" && found) return new Response(web);
    if (url.pathname === "/events") {
      const first = opts.events && sent.streams++ === 0;
      return new Response(
        new ReadableStream<Uint8Array>({
          pull(ctl) {
            if (!opts.events) return never();
            if (!first) {
              found = true;
              ctl.enqueue(new TextEncoder().encode(`${event}\n`));
              return never();
            }
            if (sent.events >= 512 * 1024 ** 2) return ctl.close();
            sent.events += chunk.length;
            ctl.enqueue(chunk);
          },
        }),
      );
    }
    if (url.pathname === "/containers/json") return Response.json([]);
    return Response.json({ message: "No such container" }, { status: 404 });
  });
  return { sent, close: () => server.shutdown() };
}

/** Runs waitcmd under /usr/bin/time; its exit code, JSON report and peak RSS in MB. */
async function runMeasured(args: string[], env: Record<string, string>) {
  const out = await runCli(["--output", "json", ...args], {
    env,
    wrapper: ["/usr/bin/time", "-f", "maxrss_kb=%M"],
  });
  const rssMb = Number(/maxrss_kb=(\d+)/.exec(out.stderr)?.[1] ?? "0") / 1024;
  return { code: out.code, report: out.json!, rssMb, err: out.stderr };
}

Deno.test({
  name: "fault: container reads an engine's endless answers with a cap, memory stays flat",
  ignore: ignoreWithout(
    "/usr/bin/time",
    await Deno.stat("/usr/bin/time").then(() => undefined, () => "/usr/bin/time is not installed"),
  ),
  sanitizeOps: false,
  sanitizeResources: false,
  async fn(t) {
    /** Runs `fn` with a hostile engine on a socket of its own. */
    const withEngine = async (
      events: boolean,
      fn: (e: ReturnType<typeof hostileEngine>, env: Record<string, string>) => Promise<void>,
    ) => {
      const dir = await Deno.makeTempDir({ prefix: "waitcmd-hostile-docker-" });
      const engine = hostileEngine(`${dir}/docker.sock`, { events });
      try {
        await fn(engine, { DOCKER_HOST: `unix://${dir}/docker.sock` });
      } finally {
        await engine.close();
        await Deno.remove(dir, { recursive: true });
      }
    };
    await t.step("an endless inspect answer is a pending error at 4 MiB", async () => {
      await withEngine(false, async (engine, env) => {
        const r = await runMeasured(["-t", "3s", "-i", "500ms", "container", "big"], env);
        assertEquals(r.code, 1, r.err);
        assertEquals(r.report.status, "timeout");
        const c = r.report.conditions[0]!;
        assertEquals(c.last_error, "docker engine: the answer to inspect big is larger than 4 MiB");
        const mib = engine.sent.inspect / 1024 ** 2;
        console.log(
          `endless inspect answer: peak RSS ${r.rssMb.toFixed(0)} MB, ${c.attempts} attempts, ${
            mib.toFixed(0)
          } MiB sent`,
        );
        assert(r.rssMb > 0 && r.rssMb < 256, `peak RSS ${r.rssMb.toFixed(0)} MB`);
        // Each attempt stopped reading soon after the cap.
        assert(mib < c.attempts * 16, `${mib.toFixed(0)} MiB sent to ${c.attempts} attempts`);
      });
    });
    await t.step(
      "an event line without end is left at 1 MiB; the next stream's event wakes the wait",
      async () => {
        await withEngine(true, async (engine, env) => {
          // Polling alone would not find web before the timeout: the event does.
          const r = await runMeasured(["-t", "60s", "-i", "50s", "container", "web"], env);
          assertEquals(r.code, 0, r.err);
          assertEquals(r.report.conditions[0]!.detail, "container web running");
          assertEquals(engine.sent.streams >= 2, true);
          const mib = engine.sent.events / 1024 ** 2;
          console.log(`event line without end: peak RSS ${r.rssMb.toFixed(0)} MB, ${mib} MiB sent`);
          assert(mib < 32, `${mib} MiB of the line sent before the stream was left`);
          assert(r.rssMb > 0 && r.rssMb < 256, `peak RSS ${r.rssMb.toFixed(0)} MB`);
        });
      },
    );
  },
});
