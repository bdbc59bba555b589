/**
 * tcp: satisfied when a TCP connection to HOST:PORT opens.
 *
 * @module
 */

import { defineKind } from "../../engine/types.ts";
import { formatHostPort, type HostPort, hostPortTarget } from "../_common/net.ts";

/** What a tcp condition needs. */
export type TcpOptions = HostPort;

/** The tcp kind. */
export const tcp = defineKind<TcpOptions>({
  name: "tcp",
  aliases: [],
  summary: "a TCP port accepts connections",
  description:
    "Satisfied when a TCP connection to the address opens (it is closed at once). A host name is tried on every address it resolves to, IPv4 and IPv6. A refused or unreachable address is retried until the timeout; last_error carries the connection error.",
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
    return { target: formatHostPort(hp), options: hp };
  },
  claims(word) {
    // wait-on's `tcp:host:port` and `tcp:port`, a bare `host:port`, a bare port.
    const m = /^tcp:(?:\/\/)?(.+)$/i.exec(word);
    const target = m ? m[1]! : word;
    if (/^\d{1,5}$/.test(target)) return `tcp localhost:${target}`;
    const hostPort = /^(\[[0-9A-Fa-f:.%]+\]|[A-Za-z0-9_][A-Za-z0-9_.-]*):\d{1,5}$/;
    return hostPort.test(target) ? `tcp ${target}` : undefined;
  },
  load: () => import("./probe.ts").then((m) => m.create),
});
