/**
 * The helper processes a kind's libraries start (a kubeconfig's `exec:` credential plugin, an
 * AWS profile's `credential_process`) never outlive waitcmd, their own children included, at
 * the deadline or on SIGTERM; and a plugin's arguments and environment values are secrets
 * (docs/contract.md §2, §9; engine/helper_procs.ts). Leftovers are found through /proc: every
 * process that carries the run's mark in its environment (tests/faults/_garbage.ts).
 */

import { assert, assertEquals } from "../_assert.ts";
import { faultRun, showsTrace } from "./_garbage.ts";

const opts = { sanitizeResources: false, sanitizeOps: false };

/** A helper that starts a child in the background and waits for it: both must be ended. */
const HANGING = "sleep 300 & sleep 300";

/** A kubeconfig whose user runs `sh -c script` as its exec plugin, against a dead server. */
async function kubeconfig(dir: string, script: string, env: Record<string, string> = {}) {
  const path = `${dir}/kubeconfig`;
  const plugin = {
    apiVersion: "client.authentication.k8s.io/v1",
    command: "sh",
    args: ["-c", script, "plugin-arg-Zq8vLw3x"],
    env: Object.entries(env).map(([name, value]) => ({ name, value })),
    interactiveMode: "Never",
  };
  await Deno.writeTextFile(
    path,
    JSON.stringify({
      apiVersion: "v1",
      kind: "Config",
      clusters: [{ name: "c", cluster: { server: "https://127.0.0.1:1" } }],
      users: [{ name: "u", user: { exec: plugin } }],
      contexts: [{ name: "x", context: { cluster: "c", user: "u" } }],
      "current-context": "x",
    }),
  );
  return path;
}

/** An AWS config whose default profile's `credential_process` is `script`. */
async function awsConfig(dir: string, script: string): Promise<Record<string, string>> {
  const path = `${dir}/aws-config`;
  await Deno.writeTextFile(path, `[default]\ncredential_process = sh -c '${script}'\n`);
  return {
    AWS_CONFIG_FILE: path,
    AWS_SHARED_CREDENTIALS_FILE: `${dir}/none`,
    AWS_EC2_METADATA_DISABLED: "true",
  };
}

const HELPERS = [
  {
    name: "a kubeconfig exec plugin",
    args: async (dir: string) => ["orch", "pod/x", "--kubeconfig", await kubeconfig(dir, HANGING)],
    env: (_dir: string) => Promise.resolve({}),
  },
  {
    name: "an AWS credential_process",
    args: (_dir: string) =>
      Promise.resolve([
        "objstore",
        "objstore://bucket/key",
        "--endpoint-url",
        "http://127.0.0.1:1",
      ]),
    env: (dir: string) => awsConfig(dir, HANGING),
  },
];

for (const h of HELPERS) {
  for (const signal of [undefined, "SIGTERM"] as const) {
    const ending = signal ?? "the deadline";
    Deno.test({
      name: `helpers: ${h.name} that hangs and forks is ended with the run at ${ending}`,
      ...opts,
      fn: async () => {
        const dir = await Deno.makeTempDir();
        try {
          const r = await faultRun(["-t", signal ? "60s" : "2s", ...await h.args(dir)], {
            env: await h.env(dir),
            ...(signal ? { signal: { name: signal, afterMs: 1500 } } : {}),
          });
          assert(!showsTrace(r), r.stderr);
          assertEquals(r.code, signal ? 143 : 1, `exit code; stderr: ${r.stderr}`);
          assertEquals(r.leftovers, [], `${h.name}: processes left behind at ${ending}`);
        } finally {
          await Deno.remove(dir, { recursive: true });
        }
      },
    });
  }
}

Deno.test({
  name: "helpers: a failing exec plugin that echoes its arguments and environment shows neither",
  ...opts,
  fn: async () => {
    const dir = await Deno.makeTempDir();
    try {
      const script = 'echo "token $PLUGIN_TOKEN for $0" >&2; exit 1';
      const config = await kubeconfig(dir, script, { PLUGIN_TOKEN: "env-secret-Kp4nR7" });
      const report = `${dir}/report.json`;
      const r = await faultRun([
        "-t",
        "2s",
        "--report",
        report,
        "orch",
        "pod/x",
        "--kubeconfig",
        config,
      ]);
      assertEquals(r.code, 1, r.stderr);
      const shown = r.stdout + r.stderr + await Deno.readTextFile(report);
      assert(shown.includes("getting credentials"), `the plugin's failure is shown: ${shown}`);
      for (const secret of ["env-secret-Kp4nR7", "plugin-arg-Zq8vLw3x"]) {
        assert(!shown.includes(secret), `${secret} shown:\n${shown}`);
      }
      assertEquals(r.leftovers, []);
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
});
