/**
 * tcp: satisfied when a TCP connection to HOST:PORT opens.
 *
 * @module
 */

import type { ConditionKind } from "../engine/types.ts";
import { formatHostPort, hostPortTarget, tryConnect } from "./_net.ts";

/** The tcp kind. */
export const tcp: ConditionKind = {
  name: "tcp",
  aliases: [],
  summary: "a TCP port accepts connections",
  description:
    "Satisfied when a TCP connection to the address opens (it is closed at once). A refused or unreachable address is retried until the timeout; last_error carries the connection error.",
  target: {
    shape: "required",
    placeholder: "HOST:PORT",
    description: "host name or IP address and port; IPv6 as [::1]:5432",
  },
  flags: [],
  examples: [
    { args: "tcp db:5432", description: "wait until PostgreSQL accepts connections" },
    {
      args: "--timeout 30s tcp localhost:6379 -- tcp [::1]:8080",
      description: "wait for Redis and an IPv6 listener, at most 30 seconds",
    },
  ],
  parse(input) {
    const hp = hostPortTarget(input);
    const target = formatHostPort(hp);
    return {
      target,
      async check({ signal }) {
        const err = await tryConnect(hp, signal);
        return err === undefined
          ? { status: "satisfied", detail: `connected to ${target}` }
          : { status: "pending", error: err };
      },
    };
  },
};
