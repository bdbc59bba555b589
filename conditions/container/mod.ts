/**
 * container (alias docker): a Docker container, or every container of a
 * Compose service, has a status (and a health).
 *
 * The probe (probe.ts) talks to the engine with dockerode at DOCKER_HOST,
 * else the default socket; the engine's events stream asks for an attempt
 * as soon as a matching container is created, started, stopped or changes
 * health (docs/contract.md §5 container).
 *
 * @module
 */

import { errorText } from "../../engine/errors.ts";
import { defineKind, type KindInput } from "../../engine/types.ts";
import { type Engine, engineFromEnv } from "./dockerhost.ts";
import type { ContainerWant } from "./judge.ts";

/** Values of `--status` (Docker's State.Status). */
export const STATUSES: readonly string[] = [
  "created",
  "running",
  "paused",
  "restarting",
  "exited",
  "dead",
];
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

function wantOf(input: KindInput): ContainerWant {
  const status = input.string("status") ?? "running";
  const health = input.string("health");
  if (health !== undefined && health !== "none" && ["created", "exited", "dead"].includes(status)) {
    input.fail(
      "health",
      `cannot be combined with --status ${status}: health checks only run while a container runs`,
    );
  }
  return { status, health };
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
  summary: "a Docker container (or Compose service) is running, healthy, exited, ...",
  description:
    "Asks the Docker Engine at DOCKER_HOST (unix://, tcp://; https with DOCKER_TLS_VERIFY=1 and DOCKER_CERT_PATH), else the default socket. The target is a container name or id, or a Compose service name (containers labelled com.docker.compose.service; --project narrows to one project, and then only services are looked up); every container of a service must match. Satisfied when the status is --status (default running) and, when --health is given, the healthcheck status is --health (none: the container has no healthcheck). A missing container and an unreachable engine are retried. The engine's events stream triggers an attempt as soon as a matching container changes.",
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
        "expected status: created, running, paused, restarting, exited or dead (default running)",
    },
    {
      name: "health",
      type: "enum",
      values: HEALTHS,
      placeholder: "HEALTH",
      description: "expected health: healthy, unhealthy, starting or none (default: not checked)",
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
      args: "container migrate --status exited",
      description: "wait until the one-shot container migrate has finished",
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
  doctor: (env) => import("../_common/doctor.ts").then((m) => m.dockerSocket(env)),
});
