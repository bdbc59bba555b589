/**
 * unix: satisfied when a Unix domain socket accepts a connection.
 *
 * @module
 */

import { defineKind } from "../../engine/types.ts";

/** What a unix condition needs. */
export interface UnixOptions {
  /** Path of the socket. */
  readonly path: string;
}

/** The unix kind. */
export const unix = defineKind<UnixOptions>({
  name: "unix",
  aliases: [],
  summary: "a Unix domain socket accepts connections",
  description:
    "Satisfied when a connection to the socket is accepted (it is closed at once). A missing path or a refused connection is retried until the timeout.",
  target: {
    shape: "required",
    placeholder: "PATH",
    description: "path of the socket",
    complete: "file",
  },
  flags: [],
  examples: [
    { args: "unix /var/run/docker.sock", description: "wait for the Docker Engine's socket" },
    {
      args: "unix /run/postgresql/.s.PGSQL.5432 -- tcp db:5432",
      description: "a local and a TCP listener",
    },
  ],
  parse(input) {
    const path = input.target ?? "";
    if (path === "") input.fail(undefined, "expected a socket path, got an empty string");
    return { target: path, options: { path } };
  },
  claims(word) {
    // wait-on's `socket:/run/app.sock`.
    const m = /^(?:socket|unix):(?:\/\/)?(.+)$/i.exec(word);
    return m ? `unix ${m[1]}` : undefined;
  },
  load: () => import("./probe.ts").then((m) => m.create),
});
