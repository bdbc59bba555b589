/**
 * packaging/docker/Dockerfile, built by a private dockerd from the build
 * context the release task prepares. No registry is reachable here, so the
 * distroless base cannot be pulled: the build swaps in a local busybox image
 * (`--build-arg BASE=...`) and the binary is a stand-in. What is under test
 * is the Dockerfile itself: the per-architecture pick from dist/docker, the
 * non-root numeric user, the entrypoint and the default command, and the
 * README's `COPY --from=<image> /waitcmd` recipe.
 */

import { assertEquals, assertStringIncludes } from "../_assert.ts";
import { version } from "../../scripts/targets.ts";
import { startedTest } from "../services/_util.ts";
import { startDocker } from "../services/docker.ts";
import { DENO, repoRoot, run, writeStandIns } from "./_fixture.ts";

startedTest(
  "Dockerfile builds a non-root image whose entrypoint is waitcmd",
  "dockerd",
  startDocker,
  async (d, t) => {
    const dist = await Deno.makeTempDir({ prefix: "waitcmd-docker-test-" });
    try {
      await writeStandIns(dist, version);
      const rel = await run(DENO, [
        ...["run", "-A", `${repoRoot}/scripts/release.ts`, "--skip-compile", "--dist", dist],
        ...["--formula-out", "none"],
      ], {});
      assertEquals(rel.code, 0, rel.stderr);
      const base = await d.buildBusyboxImage({ tag: "waitcmd-test:base", healthcheck: false });
      for (const [arch, target] of [["amd64", "x86_64"], ["arm64", "aarch64"]]) {
        await t.step(`linux/${arch}`, async () => {
          const tag = `waitcmd-test:image-${arch}`;
          await d.docker([
            ...["build", "-q", "-f", `${repoRoot}/packaging/docker/Dockerfile`],
            ...["--build-arg", `BASE=${base}`, "--build-arg", "TARGETOS=linux"],
            ...["--build-arg", `TARGETARCH=${arch}`, "--build-arg", `VERSION=${version}`],
            ...["-t", tag, `${dist}/docker`],
          ]);
          const cfg = JSON.parse(
            await d.docker(["image", "inspect", "--format", "{{json .Config}}", tag]),
          );
          assertEquals(cfg.User, "65532:65532");
          assertEquals(cfg.Entrypoint, ["/waitcmd"]);
          assertEquals(cfg.Cmd, ["--help"]);
          assertEquals(cfg.Labels["org.opencontainers.image.version"], version);
          // Arguments go straight to waitcmd (the stand-in answers like it).
          const out = await d.docker(["run", "--rm", "--network", "none", tag, "--version"]);
          assertEquals(out, `waitcmd ${version} (${target}-unknown-linux-gnu, stand-in)`);
          // The README's recipe: another image takes the binary with one COPY --from.
          const ctx = await Deno.makeTempDir({ prefix: "waitcmd-docker-recipe-" });
          try {
            await Deno.writeTextFile(
              `${ctx}/Dockerfile`,
              `FROM ${base}\nCOPY --from=${tag} /waitcmd /usr/local/bin/waitcmd\n`,
            );
            const recipe = `waitcmd-test:recipe-${arch}`;
            await d.docker(["build", "-q", "-t", recipe, ctx]);
            const copied = await d.docker([
              ...["run", "--rm", "--network", "none", "--entrypoint", "/usr/local/bin/waitcmd"],
              ...[recipe, "--version"],
            ]);
            assertEquals(copied, `waitcmd ${version} (${target}-unknown-linux-gnu, stand-in)`);
          } finally {
            await Deno.remove(ctx, { recursive: true });
          }
        });
      }
      await t.step("a platform without a binary fails the build", async () => {
        try {
          await d.docker([
            ...["build", "-q", "-f", `${repoRoot}/packaging/docker/Dockerfile`],
            ...["--build-arg", `BASE=${base}`, "--build-arg", "TARGETARCH=riscv64"],
            `${dist}/docker`,
          ]);
        } catch (e) {
          assertStringIncludes((e as Error).message, "linux-riscv64/waitcmd");
          return;
        }
        throw new Error("the build succeeded without a binary");
      });
    } finally {
      await d.stop();
      await Deno.remove(dist, { recursive: true });
    }
  },
);
