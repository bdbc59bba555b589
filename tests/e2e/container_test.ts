/**
 * container end to end: the CLI against a private dockerd the suite starts
 * (tests/services/docker.ts), with busybox images built FROM scratch (one
 * with a HEALTHCHECK on /tmp/healthy, one without) and a docker-compose
 * project of two services.
 */

import { assert, assertEquals, assertMatch, assertStringIncludes } from "../_assert.ts";
import { ignoreWithout } from "../_kit.ts";
import {
  COMPOSE_BIN,
  DOCKER_CLI,
  DOCKERD_BIN,
  startDocker,
  writeBusyboxCompose,
} from "../services/docker.ts";
import { runCli, runJson, usageErrorLine } from "./_cli.ts";

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

      await t.step(
        "container holds for a running container, with human lines on stderr",
        async () => {
          await d.runContainer("plain", { image: NO_HEALTHCHECK });
          const r = await runCli([...FAST, "container", "plain"], { env });
          assertEquals(r.code, 0);
          assertEquals(r.stdout, "");
          const lines = r.stderr.trimEnd().split("\n");
          assertEquals(lines[0], "waitcmd: waiting for 1 condition (timeout 10s, interval 200ms)");
          assertMatch(
            lines[1]!,
            /^\[ok\] container plain attempt 1 \(\d+\.\ds\): container plain running$/,
          );
          assertMatch(lines[2]!, /^waitcmd: satisfied in \d+\.\ds \(1\/1 conditions\)$/);
        },
      );

      await t.step("docker (alias) writes one JSON report and nothing on stderr", async () => {
        const r = await runJson([...FAST, "docker", "plain", "--health", "none"], { env });
        assertEquals(r.code, 0);
        assertEquals(r.stderr, "");
        assertEquals(r.json.status, "satisfied");
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
        const r = await runJson([...EVENTS_ONLY, "container", "hc", "--health", "healthy"], {
          env,
          started: async () => {
            await sleep(SETTLE_MS);
            await d.docker(["exec", "hc", "touch", "/tmp/healthy"]);
          },
        });
        assertEquals(r.code, 0);
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
        const r = await runJson([...EVENTS_ONLY, "container", "job", "--status", "exited"], {
          env,
          started: async () => {
            await sleep(SETTLE_MS);
            await d.docker(["kill", "job"]);
          },
        });
        assertEquals(r.code, 0);
        assertEquals(r.json.conditions[0]!.detail, "container job exited (exit code 137)");
        assertEquals(r.json.conditions[0]!.last_error, "container job running; want exited");
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

      await t.step(
        "container times out on a missing container with a clear last_error",
        async () => {
          const r = await runJson(
            ["--timeout", "600ms", "--interval", "200ms", "container", "nosuch"],
            { env },
          );
          assertEquals(r.code, 1);
          assertEquals(r.stderr, "");
          assertEquals(r.json.status, "timeout");
          const c = r.json.conditions[0]!;
          assertEquals(c.satisfied, false);
          assertEquals(c.detail, "");
          assertEquals(c.last_error, 'no container or compose service named "nosuch"');
          assert(c.attempts >= 2, `attempts ${c.attempts}`);
        },
      );

      await t.step("container keeps waiting while the engine cannot be reached", async () => {
        const sock = `${d.dir}/no-such.sock`;
        const r = await runJson(
          ["--timeout", "600ms", "--interval", "200ms", "container", "plain"],
          { env: { DOCKER_HOST: `unix://${sock}` } },
        );
        assertEquals(r.code, 1);
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
          "container",
          "sick",
          "--health",
          "healthy",
          "--",
          "guard",
          "container",
          "sick",
          "--health",
          "unhealthy",
        ];
        await d.runContainer("sick");
        const r = await runCli(args, { env });
        assertEquals(r.code, 3);
        assertEquals(r.stdout, "");
        assertStringIncludes(
          r.stderr,
          "waitcmd: guard container sick matched: container sick running, unhealthy\n",
        );
        const j = await runJson(args, { env });
        assertEquals(j.code, 3);
        assertEquals(j.stderr, "");
        assertEquals(j.json.status, "fatal");
        assertEquals(j.json.conditions[0]!.satisfied, false);
        const guard = j.json.conditions[1]!;
        assertEquals(guard.guard, true);
        assertEquals(guard.fatal, true);
        assertEquals(guard.detail, "container sick running, unhealthy");
      });

      const proj = `${d.dir}/compose-shop`;
      await writeBusyboxCompose(proj, {
        web: null,
        worker: ["/bin/sh", "-c", "touch /tmp/healthy; exec sleep 100000"],
      }, image);
      await d.composeUp(proj, "shop");

      await t.step("container finds a Compose service by name, narrowed by --project", async () => {
        const r = await runJson(
          [...FAST, "container", "worker", "--project", "shop", "--health", "healthy"],
          { env },
        );
        assertEquals(r.code, 0);
        assertEquals(r.stderr, "");
        assertEquals(r.json.conditions[0]!.name, "container worker");
        assertEquals(
          r.json.conditions[0]!.detail,
          "container shop_worker_1 running, healthy (service worker)",
        );
        const any = await runJson([...FAST, "docker", "web"], { env });
        assertEquals(any.code, 0);
        assertMatch(
          any.json.conditions[0]!.detail,
          /^container shop_web_1 running, \w+ \(service web\)$/,
        );
        const other = await runJson(
          ["--timeout", "500ms", "--interval", "200ms", "container", "web", "--project", "other"],
          { env },
        );
        assertEquals(other.code, 1);
        assertEquals(
          other.json.conditions[0]!.last_error,
          'no container of compose service "web" in project "other"',
        );
      });

      await t.step("container wants every container of a scaled service to match", async () => {
        await d.compose(proj, "shop", ["up", "-d", "--scale", "web=2"]);
        const both = await runJson([...FAST, "container", "web", "--project", "shop"], { env });
        assertEquals(both.code, 0);
        assertEquals(both.json.conditions[0]!.detail, "service web: 2 containers running");
        await d.docker(["stop", "-t", "1", "shop_web_2"]);
        const one = await runJson(
          ["--timeout", "600ms", "--interval", "200ms", "container", "web", "--project", "shop"],
          { env },
        );
        assertEquals(one.code, 1);
        assertEquals(
          one.json.conditions[0]!.last_error,
          "service web: 1/2 containers running; shop_web_2 exited (exit code 0)",
        );
        // Started again while a wait runs: all match.
        const again = await runJson([...EVENTS_ONLY, "container", "web", "--project", "shop"], {
          env,
          started: async () => {
            await sleep(SETTLE_MS);
            await d.docker(["start", "shop_web_2"]);
          },
        });
        assertEquals(again.code, 0);
        assertEquals(again.json.conditions[0]!.detail, "service web: 2 containers running");
      });

      await t.step(
        "container --health unhealthy matches a Compose service turning sick",
        async () => {
          await poll(
            "shop_web_1 unhealthy",
            async () => (await health("shop_web_1")) === "unhealthy",
          );
          const r = await runJson(
            [...FAST, "container", "web", "--project", "shop", "--health", "unhealthy"],
            { env },
          );
          assertEquals(r.code, 0);
          assertEquals(
            r.json.conditions[0]!.detail,
            "service web: 2 containers running, unhealthy",
          );
        },
      );

      await t.step("container usage errors print one line and probe nothing", async (t) => {
        const rows: [string[], Record<string, string>, string][] = [
          [
            ["container", "my web"],
            env,
            'waitcmd: condition 1 (container): expected a container name, id or compose service name, got "my web" (see: waitcmd help container)',
          ],
          [
            ["docker", "web", "--status", "up"],
            env,
            'waitcmd: condition 1 (docker): --status: expected one of created, running, paused, restarting, exited, dead, got "up" (see: waitcmd help container)',
          ],
          [
            ["docker", "web", "--health", "green"],
            env,
            'waitcmd: condition 1 (docker): --health: expected one of healthy, unhealthy, starting, none, got "green" (see: waitcmd help container)',
          ],
          [
            ["container", "web", "--status", "exited", "--health", "healthy"],
            env,
            "waitcmd: condition 1 (container): --health: cannot be combined with --status exited: health checks only run while a container runs (see: waitcmd help container)",
          ],
          [
            ["container", "web", "--project", "a/b"],
            env,
            'waitcmd: condition 1 (container): --project: expected a compose project name like myapp, got "a/b" (see: waitcmd help container)',
          ],
          [
            ["container", "web"],
            { DOCKER_HOST: "ssh://user@example" },
            "waitcmd: condition 1 (container): DOCKER_HOST: ssh:// is not supported; use unix://PATH or tcp://HOST:PORT (see: waitcmd help container)",
          ],
        ];
        for (const [args, runEnv, want] of rows) {
          await t.step(args.join(" "), async () => {
            assertEquals(
              usageErrorLine(await runCli(["--output", "json", ...args], { env: runEnv })),
              want,
            );
          });
        }
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
