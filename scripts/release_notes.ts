/**
 * `RELEASE_NOTES.md` of a release (scripts/release.ts writes it): what was
 * published, how to install it, and the checksums.
 *
 * @module
 */

import { assetUrl } from "./archives.ts";
import type { Target } from "./targets.ts";

/** `RELEASE_NOTES.md`: what was published, how to install it, the checksums. */
export function releaseNotes(
  v: string,
  baseUrl: string,
  sums: ReadonlyMap<string, string>,
  missing: readonly Target[],
): string {
  const rows = [...sums].sort(([a], [b]) => a < b ? -1 : 1)
    .map(([f, h]) => `| [\`${f}\`](${assetUrl(baseUrl, f, v)}) | \`${h}\` |`);
  return [
    `# waitcmd ${v}`,
    "",
    ...(missing.length
      ? [
        `> **Incomplete build:** no artifact for ${
          missing.map((t) => `\`${t}\``).join(", ")
        } (no denort available to \`deno compile\`). Do not publish.`,
        "",
      ]
      : []),
    "## Install",
    "",
    "```sh",
    `curl -fsSL ${assetUrl(baseUrl, "install.sh", v)} | sh -s -- --version ${v}`,
    "```",
    "",
    "Or download the archive for your platform, check it against `SHA256SUMS`",
    "(`sha256sum --check --ignore-missing SHA256SUMS`, or `shasum -a 256 -c` on macOS)",
    "and put `waitcmd` on your PATH. Homebrew: `waitcmd.rb` is the formula for this release.",
    "",
    "## Files",
    "",
    "| file | sha256 |",
    "|---|---|",
    ...rows,
    "",
  ].join("\n");
}
