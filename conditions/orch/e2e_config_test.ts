/**
 * orch's configuration end to end, without a cluster (e2e_test.ts beside it has the cluster):
 * what no retry can fix ends the run at once with exit 3 (a kubeconfig that is not there, a
 * context it lacks), and the files a kubeconfig names stay pending while missing
 * (docs/contract.md §5 orch, conditions/orch/README.md).
 */

import { assert, assertEquals, assertMatch, assertStringIncludes } from "../../tests/_assert.ts";
import { freePort, inTempDir } from "../../tests/services/_util.ts";
import { cliTest, expectJson, runCli } from "../../tests/e2e/_cli.ts";

/** A kubeconfig whose API server nobody serves, with `files` in its user (paths or tokens). */
function offlineKubeconfig(user: string[], cluster: string[] = []): string {
  return [
    "apiVersion: v1",
    "kind: Config",
    "clusters:",
    "- name: c",
    "  cluster:",
    `    server: https://127.0.0.1:${freePort()}`,
    ...cluster,
    "users:",
    "- name: u",
    "  user:",
    ...user,
    "contexts:",
    "- name: staging",
    "  context: {cluster: c, user: u}",
    "current-context: staging",
    "",
  ].join("\n");
}

cliTest(
  "orch: a missing kubeconfig or context ends the run at once, exit 3 (no cluster needed)",
  () =>
    inTempDir("waitcmd-orch-config-")(async (dir) => {
      const kc = `${dir}/kubeconfig`;
      await Deno.writeTextFile(kc, offlineKubeconfig(["    token: abc123"]));
      // Only the test's own variables: no KUBERNETES_SERVICE_HOST of a pod the suite may run in.
      const clean = { KUBERNETES_SERVICE_HOST: "", KUBERNETES_SERVICE_PORT: "" };
      const rows: [string, string[], Record<string, string>, string][] = [
        [
          "KUBECONFIG names no file",
          [],
          { KUBECONFIG: `${dir}/nowhere` },
          `kubeconfig ${dir}/nowhere (KUBECONFIG): no such file`,
        ],
        [
          "--kubeconfig names no file",
          ["--kubeconfig", `${dir}/nope.yaml`],
          { KUBECONFIG: kc },
          `kubeconfig ${dir}/nope.yaml (--kubeconfig): no such file`,
        ],
        [
          "the default path has no file",
          [],
          { KUBECONFIG: "", HOME: dir },
          `no kubeconfig: ${dir}/.kube/config does not exist (set --kubeconfig or KUBECONFIG)`,
        ],
        [
          "the kubeconfig has no such context",
          ["--context", "prod"],
          { KUBECONFIG: kc },
          'context "prod" is not in the kubeconfig (contexts: staging)',
        ],
      ];
      for (const [name, flags, env, error] of rows) {
        const started = performance.now();
        const r = await runCli(["--timeout", "60s", "orch", "deployment/web", ...flags], {
          env: { ...clean, ...env },
        });
        const seconds = (performance.now() - started) / 1000;
        assertEquals(r.code, 3, `${name}: ${r.stderr}`);
        // Well under the timeout: the first attempt decides (process start-up included).
        assert(seconds < 15, `${name}: took ${seconds.toFixed(1)}s`);
        const lines = r.stderr.trimEnd().split("\n");
        assertEquals(lines.length, 2, `${name}: the header and one line\n${r.stderr}`);
        assertMatch(lines[0]!, /^waitcmd: waiting for 1 condition /);
        assertStringIncludes(lines[1]!, `waitcmd: fatal: orch deployment/web: ${error}`);
        const json = await expectJson(
          ["--timeout", "60s", "orch", "deployment/web", ...flags],
          { code: 3, status: "fatal", error },
          { env: { ...clean, ...env } },
        );
        assertEquals(json.stderr, "", name);
      }
    }),
);

cliTest(
  "orch: files a kubeconfig names stay pending while missing (a sidecar may write them)",
  () =>
    inTempDir("waitcmd-orch-named-")(async (dir) => {
      const kc = `${dir}/kubeconfig`;
      await Deno.writeTextFile(
        kc,
        offlineKubeconfig([
          `    client-certificate: ${dir}/certs/client.crt`,
          `    client-key: ${dir}/certs/client.key`,
        ], [`    certificate-authority: ${dir}/certs/ca.crt`]),
      );
      const r = await expectJson(
        ["--timeout", "2s", "--interval", "300ms", "orch", "deployment/web"],
        { code: 1, status: "timeout", error: /no such file or directory.*\/certs\/ca\.crt/ },
        { env: { KUBECONFIG: kc, KUBERNETES_SERVICE_HOST: "", KUBERNETES_SERVICE_PORT: "" } },
      );
      assert(r.json.conditions[0]!.attempts > 1, "retried");
    }),
);
