/**
 * The pidfile kind's part of the shared suites (tests/_suite.ts): its dead target for
 * tests/conformance/conformance_test.ts, its live row for tests/conformance/live_test.ts, and its
 * usage errors (its unit test checks them on parse, its e2e test through the CLI).
 *
 * @module
 */

import { fileToggle, type KindSuite, tempDir, writeWhole } from "../../tests/_suite.ts";

/** What the shared suites run for this kind. */
export const suite: KindSuite = {
  dead: (d) => ({ args: ["pidfile", `${d.dir}/none.pid`] }),
  live: {
    needs: "a local pid file and process",
    async make() {
      const dir = await tempDir("pidfile");
      const pf = `${dir}/app.pid`;
      const child = new Deno.Command("sleep", { args: ["600"], stdout: "null", stderr: "null" })
        .spawn();
      const dead = new Deno.Command("true").spawn();
      await dead.status;
      await Deno.writeTextFile(`${dir}/dead.pid`, `${dead.pid}\n`);
      return {
        satisfied: ["pidfile", pf, "--name", "sleep"],
        detail: new RegExp(`process ${child.pid} running \\(sleep\\)`),
        pending: ["pidfile", `${dir}/dead.pid`],
        pendingError: `process ${dead.pid} not running`,
        ...fileToggle(pf, () => writeWhole(pf, `${child.pid}\n`)),
        downError: "does not exist",
        remove: async () => {
          child.kill("SIGKILL");
          await child.status;
          await Deno.remove(dir, { recursive: true });
        },
      };
    },
    na: { credential: "pidfile has no credentials", secret: "pidfile takes no secret" },
  },
  usage: [
    [["pidfile", "a", "--running", "--stopped"], "--stopped: cannot be combined with --running"],
    [
      ["pidfile", "a", "--name", "/usr/bin/x"],
      '--name: expected an executable name without a directory, got "/usr/bin/x"',
    ],
  ],
};
