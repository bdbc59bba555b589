/**
 * The process kind's part of the shared suites (tests/_suite.ts): its dead target for
 * tests/conformance/conformance_test.ts and its live row for tests/conformance/live_test.ts.
 *
 * @module
 */

import { type KindSuite, tempDir, toggle } from "../../tests/_suite.ts";

/** What the shared suites run for this kind. */
export const suite: KindSuite = {
  dead: () => ({ args: ["process", "--name", "no-such-process-zq9"] }),
  live: {
    needs: "a local process",
    async make() {
      const dir = await tempDir("process");
      // Under 15 characters: the kernel cuts comm there (long names are process_test's).
      const id = crypto.randomUUID().slice(0, 6);
      const name = `zqlive-${id}`;
      await Deno.copyFile("/bin/sleep", `${dir}/${name}`);
      await Deno.chmod(`${dir}/${name}`, 0o755);
      const proc = toggle(() => {
        const child = new Deno.Command(`${dir}/${name}`, {
          args: ["600"],
          stdin: "null",
          stdout: "null",
          stderr: "null",
        }).spawn();
        return Promise.resolve({
          async stop() {
            child.kill("SIGKILL");
            await child.status;
          },
        });
      });
      return {
        satisfied: ["process", "--name", name],
        detail: new RegExp(`process ${name} running \\(pid \\d+\\)`),
        pending: ["process", "--name", `zqnone-${id}`],
        pendingError: `process zqnone-${id} not running`,
        up: () => proc.start(),
        down: () => proc.stop(),
        downError: `process ${name} not running`,
        remove: async () => {
          await proc.stop();
          await Deno.remove(dir, { recursive: true });
        },
      };
    },
    na: { credential: "process has no credentials", secret: "process takes no secret" },
  },
};
