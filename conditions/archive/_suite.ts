/**
 * The archive kind's part of the shared suites (tests/_suite.ts): its dead target for
 * tests/conformance/conformance_test.ts and its live row for tests/conformance/live_test.ts.
 *
 * @module
 */

import { sh } from "../../tests/services/_util.ts";
import { fileToggle, type KindSuite, tempDir } from "../../tests/_suite.ts";

/** What the shared suites run for this kind. */
export const suite: KindSuite = {
  // Its probes run a third-party protocol or parser: in a worker of their own.
  isolated: true,
  dead: (d) => ({ args: ["archive", `${d.dir}/none.tar.gz`, "--contains", "x"] }),
  live: {
    needs: "tar",
    async make() {
      const dir = await tempDir("archive");
      await Deno.mkdir(`${dir}/src/bin`, { recursive: true });
      await Deno.writeTextFile(`${dir}/src/bin/app`, "app\n");
      const tgz = `${dir}/release.tgz`;
      return {
        satisfied: ["archive", tgz, "--contains", "bin/app"],
        detail: /.*bin\/app.*/,
        pending: ["archive", tgz, "--contains", "bin/never"],
        pendingError: 'missing "bin/never"',
        ...fileToggle(tgz, async () => {
          await sh("tar", ["czf", `${dir}/part.tgz`, "-C", `${dir}/src`, "bin"]);
          await Deno.rename(`${dir}/part.tgz`, tgz);
        }),
        downError: "does not exist",
        remove: () => Deno.remove(dir, { recursive: true }),
      };
    },
    na: { credential: "archive has no credentials", secret: "archive takes no secret" },
  },
};
