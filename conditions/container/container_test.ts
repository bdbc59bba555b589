import { assert, assertEquals } from "../../tests/_assert.ts";
import { conditionOf, optionsOf, probeOf, usageError } from "../../tests/_kit.ts";
import { stepUsageErrors } from "../../tests/_suite.ts";
import { type Engine, engineFromEnv } from "./dockerhost.ts";
import type { ProbeResult } from "../../engine/types.ts";
import {
  type ContainerState,
  type ContainerWant,
  describeContainer,
  judgeContainers,
  type Selection,
} from "./judge.ts";
import type { ContainerOptions } from "./mod.ts";
import type { PortSpec } from "./netns.ts";

/** engineFromEnv's engine, or the error it throws as `{ error }`. */
function engineOrError(env: Record<string, string>): Engine | { error: string } {
  try {
    return engineFromEnv(env);
  } catch (e) {
    return { error: (e as Error).message };
  }
}

const c = (
  name: string,
  status: string,
  health = "none",
  exitCode: number | undefined = 0,
): ContainerState => ({
  name,
  id: `${name}-id`,
  status,
  health,
  exitCode,
  pid: status === "running" ? 100 : 0,
});

const text = (r: ReturnType<typeof judgeContainers>) =>
  r.status === "satisfied" ? r.detail : r.error;

Deno.test("describeContainer() shows exit codes of stopped and health of running containers", () => {
  assertEquals(describeContainer(c("web", "running", "healthy")), "running, healthy");
  assertEquals(describeContainer(c("web", "running")), "running");
  assertEquals(describeContainer(c("web", "exited", "unhealthy", 137)), "exited (exit code 137)");
  assertEquals(describeContainer(c("web", "created", "starting")), "created");
  assertEquals(describeContainer(c("web", "paused", "healthy")), "paused, healthy");
});

Deno.test("judgeContainers() decides a single container", async (t) => {
  const running: ContainerWant = { status: "running", health: undefined };
  const healthy: ContainerWant = { status: "running", health: "healthy" };
  const noHc: ContainerWant = { status: "running", health: "none" };
  const one = { by: "container" } as const;
  const rows: [string, ContainerState, ContainerWant, string, string][] = [
    [
      "running holds",
      c("web", "running", "starting"),
      running,
      "satisfied",
      "container web running, starting",
    ],
    [
      "healthy holds",
      c("web", "running", "healthy"),
      healthy,
      "satisfied",
      "container web running, healthy",
    ],
    [
      "starting is not healthy",
      c("web", "running", "starting"),
      healthy,
      "pending",
      "container web running, starting; want running, healthy",
    ],
    [
      "exited is not running",
      c("web", "exited", "none", 1),
      running,
      "pending",
      "container web exited (exit code 1); want running",
    ],
    [
      "no healthcheck holds for --health none",
      c("web", "running"),
      noHc,
      "satisfied",
      "container web running",
    ],
    [
      "a healthcheck fails --health none",
      c("web", "running", "healthy"),
      noHc,
      "pending",
      "container web running, healthy; want running, no healthcheck",
    ],
    [
      "exited holds for --status exited",
      c("job", "exited", "none", 3),
      { status: "exited", health: undefined },
      "satisfied",
      "container job exited (exit code 3)",
    ],
    // The Engine API's State.Status words, as GET /containers/{id}/json gives them.
    [
      "removing holds for --status removing",
      c("old", "removing", "none", 0),
      { status: "removing", health: undefined },
      "satisfied",
      "container old removing",
    ],
    [
      "running is not removing",
      c("old", "running"),
      { status: "removing", health: undefined },
      "pending",
      "container old running; want removing",
    ],
    ...[
      ["created", "created"],
      ["running", "running"],
      ["paused", "paused"],
      ["restarting", "restarting"],
      ["removing", "removing"],
      ["exited", "exited (exit code 0)"],
      ["dead", "dead (exit code 0)"],
    ].map(([s, shown]): [string, ContainerState, ContainerWant, string, string] => [
      `${s} holds for --status any`,
      c("job", s!, "none", 0),
      { status: "any", health: undefined },
      "satisfied",
      `container job ${shown}`,
    ]),
    [
      "any with --health wants that health in whatever state",
      c("web", "running", "starting"),
      { status: "any", health: "healthy" },
      "pending",
      "container web running, starting; want any status, healthy",
    ],
    [
      "any with --health none holds for an exited container",
      c("job", "exited", "none", 2),
      { status: "any", health: "none" },
      "satisfied",
      "container job exited (exit code 2)",
    ],
  ];
  for (const [name, state, want, status, detail] of rows) {
    await t.step(name, () => {
      const r = judgeContainers([state], want, one);
      assertEquals(r.status, status);
      assertEquals(text(r), detail);
    });
  }
});

Deno.test("judgeContainers() wants every container of a service to match", () => {
  const svc = { by: "service", service: "web" } as const;
  const running: ContainerWant = { status: "running", health: undefined };
  const healthy: ContainerWant = { status: "running", health: "healthy" };
  const one = judgeContainers([c("p_web_1", "running", "healthy")], healthy, svc);
  assertEquals(one, {
    status: "satisfied",
    detail: "container p_web_1 running, healthy (service web)",
  });
  const two = [c("p_web_1", "running"), c("p_web_2", "running")];
  assertEquals(judgeContainers(two, running, svc), {
    status: "satisfied",
    detail: "service web: 2 containers running",
  });
  const mixed = [
    c("p_web_1", "running"),
    c("p_web_2", "exited", "none", 0),
    c("p_web_3", "created"),
  ];
  assertEquals(judgeContainers(mixed, running, svc), {
    status: "pending",
    error: "service web: 1/3 containers running; p_web_2 exited (exit code 0) (and 1 more)",
  });
  const unhealthy = [c("p_web_1", "running", "healthy"), c("p_web_2", "running", "unhealthy")];
  assertEquals(judgeContainers(unhealthy, healthy, svc), {
    status: "pending",
    error: "service web: 1/2 containers running, healthy; p_web_2 running, unhealthy",
  });
});

Deno.test("judgeContainers() with --exit-code: the code holds, another code is fatal", async (t) => {
  const zero: ContainerWant = { status: "exited", health: undefined, exitCode: 0 };
  const one = { by: "container" } as const;
  const svc = { by: "service", service: "job" } as const;
  const rows: [string, ContainerState[], ContainerWant, Selection, ProbeResult][] = [
    [
      "exited 0 holds",
      [c("job", "exited", "none", 0)],
      zero,
      one,
      { status: "satisfied", detail: "container job exited (exit code 0)" },
    ],
    [
      "still running is pending",
      [c("job", "running")],
      zero,
      one,
      { status: "pending", error: "container job running; want exited (exit code 0)" },
    ],
    [
      "created is pending",
      [c("job", "created")],
      zero,
      one,
      { status: "pending", error: "container job created; want exited (exit code 0)" },
    ],
    [
      "exited 3 is fatal",
      [c("job", "exited", "none", 3)],
      zero,
      one,
      { status: "fatal", error: "container job exited (exit code 3); want exit code 0" },
    ],
    [
      "exited 3 holds for --exit-code 3",
      [c("job", "exited", "none", 3)],
      { ...zero, exitCode: 3 },
      one,
      { status: "satisfied", detail: "container job exited (exit code 3)" },
    ],
    [
      "a service whose containers all exited 0 holds",
      [c("p_job_1", "exited", "none", 0), c("p_job_2", "exited", "none", 0)],
      zero,
      svc,
      { status: "satisfied", detail: "service job: 2 containers exited (exit code 0)" },
    ],
    [
      "one container of a service exited 1: fatal even while another runs",
      [c("p_job_1", "running"), c("p_job_2", "exited", "none", 1)],
      zero,
      svc,
      {
        status: "fatal",
        error: "service job: container p_job_2 exited (exit code 1); want exit code 0",
      },
    ],
    [
      "a service with a container still running is pending",
      [c("p_job_1", "exited", "none", 0), c("p_job_2", "running")],
      zero,
      svc,
      {
        status: "pending",
        error: "service job: 1/2 containers exited (exit code 0); p_job_2 running",
      },
    ],
  ];
  for (const [name, found, want, sel, result] of rows) {
    await t.step(name, () => assertEquals(judgeContainers(found, want, sel), result));
  }
});

Deno.test("judgeContainers() with --listening wants the ports open in every container", async (t) => {
  const web: PortSpec = { port: 8080, protocol: "tcp" };
  const dns: PortSpec = { port: 53, protocol: "udp" };
  const want: ContainerWant = { status: "running", health: undefined, listening: [web, dns] };
  const one = { by: "container" } as const;
  const svc = { by: "service", service: "web" } as const;
  const open = (x: ContainerState) => ({ ...x, closed: [] });
  const rows: [string, ContainerState[], ContainerWant, Selection, ProbeResult][] = [
    [
      "both ports listen",
      [open(c("web", "running"))],
      want,
      one,
      { status: "satisfied", detail: "container web running, listening on 8080/tcp, 53/udp" },
    ],
    [
      "one port does not listen",
      [{ ...c("web", "running"), closed: [dns] }],
      want,
      one,
      {
        status: "pending",
        error:
          "container web running, not listening on 53/udp; want running, listening on 8080/tcp, 53/udp",
      },
    ],
    [
      "a created container is pending on its status",
      [c("web", "created")],
      want,
      one,
      {
        status: "pending",
        error: "container web created; want running, listening on 8080/tcp, 53/udp",
      },
    ],
    [
      "health and ports together",
      [open(c("web", "running", "healthy"))],
      { ...want, health: "healthy", listening: [web] },
      one,
      { status: "satisfied", detail: "container web running, healthy, listening on 8080/tcp" },
    ],
    [
      "ports not read are not open",
      [c("web", "running")],
      { ...want, listening: [web] },
      one,
      { status: "pending", error: "container web running; want running, listening on 8080/tcp" },
    ],
    [
      "every container of a service",
      [open(c("p_web_1", "running")), open(c("p_web_2", "running"))],
      { ...want, listening: [web] },
      svc,
      { status: "satisfied", detail: "service web: 2 containers running, listening on 8080/tcp" },
    ],
    [
      "one container of a service not listening yet",
      [open(c("p_web_1", "running")), { ...c("p_web_2", "running"), closed: [web] }],
      { ...want, listening: [web] },
      svc,
      {
        status: "pending",
        error:
          "service web: 1/2 containers running, listening on 8080/tcp; p_web_2 running, not listening on 8080/tcp",
      },
    ],
  ];
  for (const [name, found, w, sel, result] of rows) {
    await t.step(name, () => assertEquals(judgeContainers(found, w, sel), result));
  }
});

Deno.test("engineFromEnv() reads DOCKER_HOST like the docker CLI", async (t) => {
  const rows: [Record<string, string>, unknown][] = [
    [{}, { display: "unix:///var/run/docker.sock", socketPath: "", home: undefined }],
    [{ HOME: "/home/u" }, {
      display: "unix:///var/run/docker.sock",
      socketPath: "",
      home: "/home/u",
    }],
    [{ DOCKER_HOST: "unix:///tmp/d.sock" }, {
      display: "unix:///tmp/d.sock",
      socketPath: "/tmp/d.sock",
    }],
    [
      { DOCKER_HOST: "tcp://127.0.0.1:2375" },
      {
        display: "tcp://127.0.0.1:2375",
        host: "127.0.0.1",
        port: "2375",
        protocol: "http",
        certPath: undefined,
      },
    ],
    [
      { DOCKER_HOST: "tcp://[::1]:2376", DOCKER_CERT_PATH: "/certs" },
      {
        display: "tcp://[::1]:2376",
        host: "::1",
        port: "2376",
        protocol: "https",
        certPath: "/certs",
      },
    ],
    [
      { DOCKER_HOST: "tcp://docker:4000", DOCKER_TLS_VERIFY: "1" },
      {
        display: "tcp://docker:4000",
        host: "docker",
        port: "4000",
        protocol: "https",
        certPath: undefined,
      },
    ],
    [
      { DOCKER_HOST: "localhost:2375" },
      {
        display: "localhost:2375",
        host: "localhost",
        port: "2375",
        protocol: "http",
        certPath: undefined,
      },
    ],
    [
      { DOCKER_HOST: "ssh://me@host" },
      { error: "DOCKER_HOST: ssh:// is not supported; use unix://PATH or tcp://HOST:PORT" },
    ],
    [
      { DOCKER_HOST: "what ever" },
      { error: 'DOCKER_HOST: expected unix://PATH or tcp://HOST:PORT, got "what ever"' },
    ],
  ];
  for (const [env, want] of rows) {
    await t.step(env.DOCKER_HOST ?? "(unset)", () => assertEquals(engineOrError(env), want));
  }
});

Deno.test("container parse() keeps the alias in the name and strips a leading slash", async () => {
  const args = ["docker", "/web", "--health", "healthy"];
  const cond = conditionOf(args);
  assertEquals(cond.kind.name, "container");
  assertEquals(cond.name, "docker web");
  assert((await probeOf(args)).watch !== undefined, "container watches the events stream");
});

Deno.test("container parse() gives the target, the wait and the engine as options", () => {
  assertEquals(
    optionsOf<ContainerOptions>(
      ["container", "/db", "--project", "shop", "--status", "exited", "--health", "none"],
      { DOCKER_HOST: "unix:///tmp/d.sock" },
    ),
    {
      target: "db",
      project: "shop",
      want: { status: "exited", health: "none" },
      engine: { display: "unix:///tmp/d.sock", socketPath: "/tmp/d.sock" },
    },
  );
  assertEquals(
    optionsOf<ContainerOptions>(["container", "job", "--exit-code", "0"]).want,
    { status: "exited", health: undefined, exitCode: 0 },
  );
  assertEquals(
    optionsOf<ContainerOptions>(["container", "job", "--status", "exited", "--exit-code", "3"])
      .want,
    { status: "exited", health: undefined, exitCode: 3 },
  );
  assertEquals(
    optionsOf<ContainerOptions>([
      ...["container", "api", "--health", "healthy", "--listening", "8080"],
      ...["--listening", "53/UDP", "--listening", "8080/tcp"],
    ]).want,
    {
      status: "running",
      health: "healthy",
      listening: [{ port: 8080, protocol: "tcp" }, { port: 53, protocol: "udp" }],
    },
  );
  for (const status of ["any", "removing", "ANY"]) {
    assertEquals(
      optionsOf<ContainerOptions>(["container", "job", "--status", status]).want,
      { status: status.toLowerCase(), health: undefined },
    );
  }
  assertEquals(
    optionsOf<ContainerOptions>(["container", "job", "--status", "any", "--health", "healthy"])
      .want,
    { status: "any", health: "healthy" },
  );
  const plain = optionsOf<ContainerOptions>(["docker", "web"], { HOME: "/home/u" });
  assertEquals(plain.want, { status: "running", health: undefined });
  assertEquals(plain.project, undefined);
  assertEquals(plain.engine.home, "/home/u");
});

Deno.test("container parse() reports usage errors at the condition and flag", async (t) => {
  await stepUsageErrors(t, "container");
  // --health none (no healthcheck) is fine for a stopped container.
  assertEquals(
    await usageError(["container", "web", "--status", "exited", "--health", "none"]),
    "",
  );
});
