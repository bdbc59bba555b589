/**
 * The file kind's part of the shared suites (tests/_suite.ts): its dead target for
 * tests/conformance/conformance_test.ts, its live row for tests/conformance/live_test.ts, and its
 * usage errors (its unit test checks them on parse, its e2e test through the CLI).
 *
 * @module
 */

import { fileToggle, type KindSuite, tempDir, writeWhole } from "../../tests/_suite.ts";

/** What the shared suites run for this kind. */
export const suite: KindSuite = {
  dead: (d) => ({ args: ["file", `${d.dir}/none`] }),
  live: {
    needs: "a local file",
    async make() {
      const dir = await tempDir("file");
      const f = fileToggle(`${dir}/sub/app.conf`, async () => {
        await Deno.mkdir(`${dir}/sub`, { recursive: true });
        await writeWhole(`${dir}/sub/app.conf`, "state: ready\n");
      });
      return {
        satisfied: ["file", `${dir}/sub/app.conf`, "--contains", "ready"],
        detail: /contains "ready" \(13 B\)/,
        pending: ["file", `${dir}/sub/app.conf`, "--contains", "never"],
        pendingError: 'does not contain "never" (13 B)',
        ...f,
        downError: "does not exist",
        remove: () => Deno.remove(dir, { recursive: true }),
      };
    },
    na: { credential: "file has no credentials", secret: "file takes no secret" },
  },
  usage: [
    [["file", ""], "expected a path, got an empty string"],
    [["file", "/x", "--contains", ""], "--contains: expected a text, got an empty string"],
    [["file", "/x", "--deleted", "--exists"], "--deleted: cannot be combined with --exists"],
    [["file", "/x", "--deleted", "--nonempty"], "--deleted: cannot be combined with --nonempty"],
    [
      ["file", "/x", "--contains", "a", "--deleted"],
      "--deleted: cannot be combined with --contains",
    ],
    [["file", "/x", "--deleted", "--exists=false"], "--deleted: cannot be combined with --exists"],
    [["file", "/x", "--contains"], "--contains: missing value TEXT"],
    [
      ["file", "/x", "--deleted", "--unchanged-for", "2s"],
      "--deleted: cannot be combined with --unchanged-for",
    ],
    [
      ["file", "/x", "--unchanged-for", "0s"],
      "--unchanged-for: expected a duration above 0, like 2s or 500ms",
    ],
    [
      ["file", "/x", "--unchanged-for", "soon"],
      '--unchanged-for: expected a duration like 30s, 2m or 1h30m, got "soon"',
    ],
    [["file"], "missing target PATH"],
  ],
};
