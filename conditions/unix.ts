/**
 * unix: satisfied when a Unix domain socket accepts a connection.
 *
 * @module
 */

import type { ConditionKind } from "../engine/types.ts";
import { describeError } from "./_net.ts";

/** The unix kind. */
export const unix: ConditionKind = {
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
    return {
      target: path,
      async check({ signal }) {
        if (Deno.build.os === "windows") {
          return { status: "fatal", error: "unix sockets are not supported on Windows" };
        }
        try {
          const conn = await Promise.race([
            Deno.connect({ transport: "unix", path }),
            new Promise<never>((_, reject) => {
              signal.addEventListener("abort", () => reject(signal.reason), { once: true });
            }),
          ]);
          conn.close();
          return { status: "satisfied", detail: `connected to ${path}` };
        } catch (e) {
          return { status: "pending", error: describeError(e) };
        }
      },
    };
  },
};
