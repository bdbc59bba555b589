/**
 * How waitcmd is run outside the sources' own `deno run`: the permissions and
 * V8 flags that the compiled binary (scripts/compile.ts) and the bundle's
 * launcher share, the launcher's other flags, and the launcher itself, which
 * scripts/bundle.ts writes beside the bundle.
 *
 * @module
 */

import { ENTRY } from "./bundle_manifest.ts";

/** The permissions of the compiled binary, and of the launcher that runs the bundle. */
export const PERMISSIONS: readonly string[] = ["--allow-all"];

/**
 * The V8 flags waitcmd runs with, from the sources (scripts/waitcmd), the bundle's launcher and
 * the compiled binary alike: semi-spaces of 4 MiB (the young generation of each heap, the main
 * thread's and each worker's, is otherwise up to 48 MiB) and an old generation that grows by a
 * fifth of what it holds between two full collections (otherwise by up to four times), so that
 * the garbage of many attempts is collected before it weighs. A manifest of 10,000 objects
 * polled for 30 s peaked at 510-560 MiB without them, past the memory cap of 512 MiB, and at
 * 365-372 MiB with them, for about a third more CPU time in that run (docs/reliability.md,
 * large manifests).
 */
export const V8_FLAGS = "--v8-flags=--max-semi-space-size=4,--heap-growing-percent=20";

/**
 * What the launcher adds so that `deno run` of the bundle starts as the
 * compiled binary does: no config file or lockfile looked for (the binary
 * has none), nothing fetched, and a dynamic import resolved only when it runs.
 */
export const LAUNCHER_FLAGS: readonly string[] = [
  "--quiet",
  "--no-prompt",
  "--no-config",
  "--no-lock",
  "--cached-only",
  "--unstable-lazy-dynamic-imports",
  V8_FLAGS,
];

/** The launcher: `deno run` of the bundle as the compiled binary runs it. */
export function launcherScript(deno: string): string {
  const q = (s: string) => `'${s.replaceAll("'", `'\\''`)}'`;
  return [
    "#!/bin/sh",
    "# waitcmd from its bundle (written by scripts/bundle.ts): the pinned Deno runs main.js with",
    "# the permissions of the compiled binary, reads no config or lockfile and fetches nothing.",
    "case $0 in */*) here=${0%/*} ;; *) here=. ;; esac",
    `exec ${q(deno)} run ${[...PERMISSIONS, ...LAUNCHER_FLAGS].join(" ")} "$here/${ENTRY}" "$@"`,
    "",
  ].join("\n");
}
