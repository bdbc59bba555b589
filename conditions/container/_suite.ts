/**
 * The container kind's part of the shared suites (tests/_suite.ts): its dead target for
 * tests/conformance/conformance_test.ts, its live row for tests/conformance/live_test.ts, and its
 * usage errors (its unit test checks them on parse, its e2e test through the CLI).
 *
 * @module
 */

import { binariesMissing } from "../../tests/services/_util.ts";
import { DOCKERD_BIN, startDocker } from "../../tests/services/docker.ts";
import type { KindSuite } from "../../tests/_suite.ts";

/** What the shared suites run for this kind. */
export const suite: KindSuite = {
  // Its probes run a third-party protocol or parser: in a worker of their own.
  isolated: true,
  dead: (d) => ({
    args: ["container", "web"],
    env: { DOCKER_HOST: `unix://${d.dir}/docker.sock` },
  }),
  live: {
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
  usage: [
    [["container", "a b"], 'expected a container name, id or compose service name, got "a b"'],
    [
      ["container", "my web"],
      'expected a container name, id or compose service name, got "my web"',
    ],
    [
      ["docker", "web", "--status", "up"],
      '--status: expected one of created, running, paused, restarting, removing, exited, dead, any, got "up"',
    ],
    [
      ["docker", "web", "--health", "ok"],
      '--health: expected one of healthy, unhealthy, starting, none, got "ok"',
    ],
    [
      ["docker", "web", "--health", "green"],
      '--health: expected one of healthy, unhealthy, starting, none, got "green"',
    ],
    [
      ["container", "web", "--status", "exited", "--health", "healthy"],
      "--health: cannot be combined with --status exited: health checks only run while a container runs",
    ],
    [
      ["container", "web", "--status", "removing", "--health", "healthy"],
      "--health: cannot be combined with --status removing: health checks only run while a container runs",
    ],
    [
      ["container", "web", "--status", "any", "--listening", "80"],
      "--listening: cannot be combined with --status any: ports are read from a running container",
    ],
    [
      ["container", "web", "--status", "any", "--exit-code", "0"],
      "--exit-code: cannot be combined with --status any: a container has an exit code once it has exited",
    ],
    [
      ["container", "web", "--project", "my project"],
      '--project: expected a compose project name like myapp, got "my project"',
    ],
    [
      ["container", "web", "--project", "a/b"],
      '--project: expected a compose project name like myapp, got "a/b"',
    ],
    [
      ["container", "web", "--listening", "http"],
      '--listening: expected PORT, PORT/tcp or PORT/udp (like 8080 or 53/udp), got "http"',
    ],
    [
      ["container", "web", "--listening", "0"],
      '--listening: expected a port from 1 to 65535, got "0"',
    ],
    [
      ["container", "web", "--listening", "70000"],
      '--listening: expected a port from 1 to 65535, got "70000"',
    ],
    [
      ["container", "web", "--listening", "80/sctp"],
      '--listening: expected the protocol tcp or udp after the port, got "80/sctp"',
    ],
    [
      ["container", "web", "--listening", "53/sctp"],
      '--listening: expected the protocol tcp or udp after the port, got "53/sctp"',
    ],
    [
      ["container", "web", "--listening", "80", "--status", "created"],
      "--listening: cannot be combined with --status created: ports are read from a running container",
    ],
    [
      ["container", "web", "--listening", "8080", "--status", "exited"],
      "--listening: cannot be combined with --status exited: ports are read from a running container",
    ],
    [
      ["container", "web", "--exit-code", "256"],
      '--exit-code: expected a whole number from 0 to 255, got "256"',
    ],
    [
      ["container", "web", "--exit-code", "-1"],
      '--exit-code: expected a whole number from 0 to 255, got "-1"',
    ],
    [
      ["container", "web", "--exit-code", "zero"],
      '--exit-code: expected a whole number from 0 to 255, got "zero"',
    ],
    [
      ["container", "web", "--exit-code", "0", "--status", "running"],
      "--exit-code: cannot be combined with --status running: a container has an exit code once it has exited",
    ],
    [
      ["container", "web", "--exit-code", "0", "--health", "none"],
      "--exit-code: cannot be combined with --health: an exited container has no health",
    ],
    [
      ["container", "web", "--exit-code", "0", "--health", "healthy"],
      "--exit-code: cannot be combined with --health: an exited container has no health",
    ],
    [
      ["container", "web", "--exit-code", "0", "--listening", "80"],
      "--exit-code: cannot be combined with --listening: an exited container has no ports",
    ],
    [
      ["container", "web", "--exit-code", "0", "--listening", "8080"],
      "--exit-code: cannot be combined with --listening: an exited container has no ports",
    ],
    [
      ["container", "web"],
      "DOCKER_HOST: ssh:// is not supported; use unix://PATH or tcp://HOST:PORT",
      { "DOCKER_HOST": "ssh://me@host" },
    ],
    [
      ["container", "web"],
      "DOCKER_HOST: ssh:// is not supported; use unix://PATH or tcp://HOST:PORT",
      { "DOCKER_HOST": "ssh://user@example" },
    ],
  ],
};
