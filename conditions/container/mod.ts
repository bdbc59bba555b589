/**
 * container (alias docker): a Docker container, or every container of a
 * Compose service, has a status (and a health), has exited with a code, or
 * has ports listening in its own network namespace.
 *
 * The probe (probe.ts) talks to the engine with dockerode at DOCKER_HOST,
 * else the default socket; the engine's events stream asks for an attempt
 * as soon as a matching container is created, started, stopped or changes
 * health (docs/contract.md §5 container). Ports are read from the host's
 * /proc (netns.ts).
 *
 * @module
 */

import { errorText } from "../../engine/errors.ts";
import { defineKind, type KindInput } from "../../engine/types.ts";
import { type Engine, engineFromEnv } from "./dockerhost.ts";
import type { ContainerWant } from "./judge.ts";
import { parsePortSpec, type PortSpec, portText } from "./netns.ts";

/**
 * Values of `--status`: every State.Status of the Engine API (`removing`: being removed), and
 * `any`: the container exists, whatever its state (docs/contract.md §5 container).
 */
export const STATUSES: readonly string[] = [
  "created",
  "running",
  "paused",
  "restarting",
  "removing",
  "exited",
  "dead",
  "any",
];

/** States in which no healthcheck runs: only `--health none` can hold there. */
const NO_HEALTHCHECK = ["created", "removing", "exited", "dead"];
/** Values of `--health`; `none` means the container has no healthcheck. */
export const HEALTHS: readonly string[] = ["healthy", "unhealthy", "starting", "none"];

/** What a container condition needs. */
export interface ContainerOptions {
  /** Container name or id, or Compose service name, without a leading slash. */
  readonly target: string;
  /** `--project`: only the Compose service of this project. */
  readonly project: string | undefined;
  readonly want: ContainerWant;
  /** Where the engine is (DOCKER_HOST). */
  readonly engine: Engine;
}

const NAME = /^\/?[A-Za-z0-9][A-Za-z0-9_.-]*$/;
const PROJECT = /^[A-Za-z0-9][A-Za-z0-9_.-]*$/;

/** `--listening`'s ports, each once, in the order given. */
function portsOf(input: KindInput): PortSpec[] {
  const ports = new Map<string, PortSpec>();
  for (const text of input.strings("listening")) {
    const p = parsePortSpec(text);
    if (typeof p === "string") input.fail("listening", p);
    ports.set(portText(p), p);
  }
  return [...ports.values()];
}

function wantOf(input: KindInput): ContainerWant {
  const given = input.string("status");
  const health = input.string("health");
  const exitCode = input.integer("exit-code");
  const listening = portsOf(input);
  if (exitCode !== undefined) {
    // Combinations that can never hold (docs/contract.md §5 container).
    if (given !== undefined && given !== "exited") {
      input.fail(
        "exit-code",
        `cannot be combined with --status ${given}: a container has an exit code once it has exited`,
      );
    }
    if (health !== undefined) {
      input.fail(
        "exit-code",
        "cannot be combined with --health: an exited container has no health",
      );
    }
    if (listening.length > 0) {
      input.fail(
        "exit-code",
        "cannot be combined with --listening: an exited container has no ports",
      );
    }
    return { status: "exited", health: undefined, exitCode };
  }
  const status = given ?? "running";
  if (health !== undefined && health !== "none" && NO_HEALTHCHECK.includes(status)) {
    input.fail(
      "health",
      `cannot be combined with --status ${status}: health checks only run while a container runs`,
    );
  }
  if (listening.length > 0 && status !== "running") {
    input.fail(
      "listening",
      `cannot be combined with --status ${status}: ports are read from a running container`,
    );
  }
  return { status, health, ...(listening.length > 0 ? { listening } : {}) };
}

/** The engine DOCKER_HOST names; a bad DOCKER_HOST is a usage error. */
function engineOf(input: KindInput): Engine {
  try {
    return engineFromEnv(input.env);
  } catch (e) {
    return input.fail(undefined, errorText(e));
  }
}

/** The container kind. */
export const container = defineKind<ContainerOptions>({
  name: "container",
  aliases: ["docker"],
  summary:
    "a Docker container (or Compose service) is running, healthy, exited, listening on a port, ...",
  description:
    "Asks the Docker Engine at DOCKER_HOST (unix://, tcp://; https with DOCKER_TLS_VERIFY=1 and DOCKER_CERT_PATH), else the default socket. The target is a container name or id, or a Compose service name (containers labelled com.docker.compose.service; --project narrows to one project, and then only services are looked up); every container of a service must match. Satisfied when the status is --status (default running; any: the container exists, in any state) and, when --health is given, the healthcheck status is --health (none: the container has no healthcheck). --listening PORT[/tcp|/udp] also wants the port listening in the running container's own network namespace, read from the host's /proc/<pid>/net (nothing runs inside the container, so images without a shell work; waitcmd must run on the engine's Linux host). --exit-code N wants the container exited with code N; exited with another code is fatal (exit 3). A missing container and an unreachable engine are retried. The engine's events stream triggers an attempt as soon as a matching container changes; ports are polled at the interval.",
  target: {
    shape: "required",
    placeholder: "NAME",
    description: "container name or id, or Compose service name",
  },
  flags: [
    {
      name: "status",
      type: "enum",
      values: STATUSES,
      placeholder: "STATUS",
      description:
        "expected status: created, running, paused, restarting, removing, exited or dead, or any: the container exists (default running)",
    },
    {
      name: "health",
      type: "enum",
      values: HEALTHS,
      placeholder: "HEALTH",
      description: "expected health: healthy, unhealthy, starting or none (default: not checked)",
    },
    {
      name: "listening",
      type: "string",
      repeatable: true,
      placeholder: "PORT[/PROTO]",
      description:
        "the port listens in the container (tcp by default, or /udp); all given must listen",
    },
    {
      name: "exit-code",
      type: "integer",
      min: 0,
      max: 255,
      placeholder: "N",
      description: "the container has exited with code N; another code is fatal (exit 3)",
    },
    {
      name: "project",
      type: "string",
      placeholder: "NAME",
      description: "Compose project the service belongs to",
    },
  ],
  examples: [
    { args: "docker web --health healthy", description: "wait until the container web is healthy" },
    {
      args: "container db --project shop -- guard container db --project shop --health unhealthy",
      description:
        "wait for the Compose service db of project shop; stop at once if it turns unhealthy",
    },
    {
      args: "container migrate --exit-code 0",
      description:
        "wait until the one-shot container migrate has finished successfully; fail if it did not",
    },
    {
      args: "container setup --status any",
      description: "wait until the container setup exists, whatever its state",
    },
    {
      args: "container api --listening 8080 --listening 9090/udp",
      description:
        "wait until the container api listens on TCP port 8080 and UDP port 9090 (no shell needed in its image)",
    },
  ],
  parse(input) {
    const given = input.target ?? "";
    if (!NAME.test(given)) {
      input.fail(
        undefined,
        `expected a container name, id or compose service name, got ${JSON.stringify(given)}`,
      );
    }
    const project = input.string("project");
    if (project !== undefined && !PROJECT.test(project)) {
      input.fail(
        "project",
        `expected a compose project name like myapp, got ${JSON.stringify(project)}`,
      );
    }
    const want = wantOf(input);
    const engine = engineOf(input);
    const target = given.replace(/^\//, "");
    return { target, options: { target, project, want, engine } };
  },
  load: () => import("./probe.ts").then((m) => m.create),
  isolate: true,
  doctor: (env) => import("../_common/doctor.ts").then((m) => m.dockerSocket(env)),
});
