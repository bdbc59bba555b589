/**
 * orch against what a hostile server or a hostile local user can put in its
 * way, through the CLI, with no cluster needed: `-f` files that cannot be
 * used (usage errors, nothing probed), a named pipe or a device given as a
 * kubeconfig (no blocked event loop: the deadline and signals still win), an
 * API server that echoes the request's credentials back (never shown, in any
 * output), and one that answers without end (a bounded read, a pending
 * attempt). The API servers here are small `Deno.serve` stand-ins that speak
 * just enough of the API (discovery and one ConfigMap) to reach the path under
 * test; orch's behaviour against the real API server is e2e_test.ts's and
 * e2e_manifest_test.ts's.
 */

import { assert, assertEquals, assertMatch, assertStringIncludes } from "../../tests/_assert.ts";
import { expectJson, runCli, runJson, usageErrorLine, WAITCMD } from "../../tests/e2e/_cli.ts";

const opts = { sanitizeOps: false, sanitizeResources: false };

/** A stand-in API server: discovery of ConfigMaps, and `object` for any object GET. */
function apiServer(object: (req: Request) => Response): { url: string; close(): Promise<void> } {
  const json = (body: unknown, status = 200) =>
    new Response(JSON.stringify(body), {
      status,
      headers: { "content-type": "application/json" },
    });
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, (req) => {
    const path = new URL(req.url).pathname;
    if (path === "/api") return json({ kind: "APIVersions", versions: ["v1"] });
    if (path === "/apis") return json({ kind: "APIGroupList", groups: [] });
    if (path === "/api/v1") {
      return json({
        kind: "APIResourceList",
        groupVersion: "v1",
        resources: [{
          name: "configmaps",
          singularName: "configmap",
          shortNames: ["cm"],
          namespaced: true,
          kind: "ConfigMap",
          verbs: ["get", "list", "watch"],
        }],
      });
    }
    return object(req);
  });
  return {
    url: `http://127.0.0.1:${server.addr.port}`,
    close: () => server.shutdown(),
  };
}

/** A kubeconfig for `server` whose user is `user` (YAML lines under `user:`). */
function kubeconfig(server: string, user: string[]): string {
  return [
    "apiVersion: v1",
    "kind: Config",
    "clusters:",
    "- name: c",
    "  cluster:",
    `    server: ${server}`,
    "users:",
    "- name: u",
    "  user:",
    ...user.map((l) => `    ${l}`),
    "contexts:",
    "- name: x",
    "  context: {cluster: c, user: u}",
    "current-context: x",
    "",
  ].join("\n");
}

async function mkfifo(path: string): Promise<void> {
  const out = await new Deno.Command("mkfifo", { args: [path] }).output();
  assert(out.success, `mkfifo ${path}`);
}

Deno.test({
  name: "orch -f: files that cannot be used are usage errors, found before any probe",
  ...opts,
  async fn(t) {
    const dir = await Deno.makeTempDir({ prefix: "waitcmd-orch-files-" });
    try {
      await Deno.mkdir(`${dir}/empty`);
      await Deno.writeTextFile(`${dir}/bad.yaml`, "apiVersion: v1\nkind: [\n");
      await Deno.writeTextFile(
        `${dir}/nameless.yaml`,
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n---\napiVersion: v1\nkind: Secret\n",
      );
      await Deno.writeTextFile(
        `${dir}/ok.yaml`,
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n",
      );
      await mkfifo(`${dir}/pipe`);
      // A server that is never reached: nothing may be probed.
      const env = { KUBECONFIG: `${dir}/never.kubeconfig` };
      const rows: [string, string[], string][] = [
        [
          "a missing file",
          ["-f", `${dir}/nope.yaml`],
          `--file: ${dir}/nope.yaml: no such file or directory`,
        ],
        [
          "a directory without manifests",
          ["-f", `${dir}/empty`],
          `--file: ${dir}/empty is a directory without .yaml, .yml or .json files`,
        ],
        [
          "YAML that does not parse",
          ["--file", `${dir}/bad.yaml`],
          `--file: ${dir}/bad.yaml: document 1 (line 3): not valid YAML or JSON: `,
        ],
        [
          "an object without a name",
          ["-f", `${dir}/nameless.yaml`],
          `--file: ${dir}/nameless.yaml: document 2 (line 4): Secret has no metadata.name`,
        ],
        [
          "a named pipe (no writer: reading it would block)",
          ["-f", `${dir}/pipe`],
          `--file: ${dir}/pipe is not a regular file (a named pipe); give a file, a directory, or - to read standard input`,
        ],
        [
          "a device (reading it would never end)",
          ["-f", "/dev/zero"],
          "--file: /dev/zero is not a regular file (a character device)",
        ],
        [
          "-f with a target",
          ["deployment/web", "-f", `${dir}/ok.yaml`],
          '--file: cannot be combined with a target ("deployment/web"); the manifests name the objects',
        ],
        ["neither a target nor -f", [], "missing target KIND/NAME (deployment/web)"],
        [
          "-f with --for rollout",
          ["-f", `${dir}/ok.yaml`, "--for", "rollout"],
          "--for: rollout cannot be combined with --file",
        ],
      ];
      for (const [name, args, fragment] of rows) {
        await t.step(name, async () => {
          const r = await runCli(["-t", "5s", "k8s", ...args], { env });
          const line = usageErrorLine(r);
          assertStringIncludes(line, `waitcmd: condition 1 (k8s): ${fragment}`);
          assert(line.endsWith("(see: waitcmd help orch)"), line);
        });
      }
      await t.step("empty standard input", async () => {
        const r = await runCli(["k8s", "-f", "-"], { env, stdin: "# nothing\n" });
        assertStringIncludes(
          usageErrorLine(r),
          "waitcmd: condition 1 (k8s): --file: no Kubernetes objects in standard input",
        );
      });
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
});

Deno.test({
  name:
    "orch: a named pipe as a kubeconfig or a token file is pending; the deadline and SIGTERM win",
  ...opts,
  async fn(t) {
    const dir = await Deno.makeTempDir({ prefix: "waitcmd-orch-fifo-" });
    try {
      await mkfifo(`${dir}/kubeconfig`);
      await mkfifo(`${dir}/token`);
      await Deno.writeTextFile(
        `${dir}/token.kubeconfig`,
        kubeconfig("https://127.0.0.1:1", [`token-file: ${dir}/token`]),
      );
      await t.step("--kubeconfig FIFO: a timeout (exit 1) that says why", async () => {
        const r = await runJson([
          ...["-t", "2s", "k8s", "ns/default", "--kubeconfig", `${dir}/kubeconfig`],
        ]);
        assertEquals([r.code, r.json.status, r.stderr], [1, "timeout", ""]);
        assertEquals(
          r.json.conditions[0]!.last_error,
          `kubeconfig ${dir}/kubeconfig: not a regular file (a named pipe); waitcmd reads kubeconfigs and the files they name only from regular files`,
        );
      });
      await t.step("a token-file that is a FIFO: the same", async () => {
        await expectJson(["-t", "2s", "k8s", "ns/default"], {
          code: 1,
          error:
            `kubeconfig ${dir}/token.kubeconfig: token-file ${dir}/token: not a regular file (a named pipe); waitcmd reads kubeconfigs and the files they name only from regular files`,
        }, {
          env: { KUBECONFIG: `${dir}/token.kubeconfig` },
        });
      });
      await t.step("SIGTERM after the first attempt: cancelled, exit 143", async () => {
        const child = new Deno.Command(WAITCMD, {
          args: [
            ...["-o", "jsonl", "-t", "60s", "k8s", "ns/default"],
            ...["--kubeconfig", `${dir}/kubeconfig`],
          ],
          env: { NO_COLOR: "1" },
          stdin: "null",
          stdout: "piped",
          stderr: "piped",
        }).spawn();
        const stderr = new Response(child.stderr).text();
        let out = "";
        let signalled = false;
        for await (const chunk of child.stdout.pipeThrough(new TextDecoderStream())) {
          out += chunk;
          if (!signalled && out.includes('"event":"attempt"')) {
            signalled = true;
            child.kill("SIGTERM");
          }
        }
        const status = await child.status;
        assertEquals([status.code, await stderr], [143, ""]);
        const end = JSON.parse(out.trimEnd().split("\n").at(-1)!);
        assertEquals([end.event, end.status], ["end", "cancelled"]);
      });
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
});

Deno.test({
  name: "orch: kubeconfig credentials echoed back by a server never reach any output",
  ...opts,
  async fn(t) {
    const dir = await Deno.makeTempDir({ prefix: "waitcmd-orch-echo-" });
    // A 500 whose Status message is the request's Authorization header.
    const echo = apiServer((req) =>
      new Response(
        JSON.stringify({
          kind: "Status",
          message: `internal error; request had Authorization: ${req.headers.get("authorization")}`,
        }),
        { status: 500, headers: { "content-type": "application/json" } },
      )
    );
    // A ConfigMap whose data holds the header: a 200 answer, shown through --jsonpath.
    const mirror = apiServer((req) =>
      new Response(
        JSON.stringify({
          apiVersion: "v1",
          kind: "ConfigMap",
          metadata: { name: "x", namespace: "default" },
          data: { seen: req.headers.get("authorization") },
        }),
        { headers: { "content-type": "application/json" } },
      )
    );
    const stamp = crypto.randomUUID().replaceAll("-", "");
    const secrets = {
      static: `static${stamp}`,
      exec: `exec${stamp}`,
      file: `file${stamp}`,
      provider: `provider${stamp}`,
      password: `pw${stamp}`,
    };
    try {
      await Deno.writeTextFile(`${dir}/token`, `${secrets.file}\n`);
      await Deno.writeTextFile(`${dir}/provider-token`, secrets.provider);
      await Deno.writeTextFile(
        `${dir}/plugin`,
        `#!/bin/sh\necho '{"apiVersion":"client.authentication.k8s.io/v1beta1","kind":"ExecCredential","status":{"token":"${secrets.exec}"}}'\n`,
        { mode: 0o755 },
      );
      const users: [string, string[], string][] = [
        ["a static token", [`token: ${secrets.static}`], secrets.static],
        [
          "an exec plugin's token",
          [
            "exec:",
            "  apiVersion: client.authentication.k8s.io/v1beta1",
            `  command: ${dir}/plugin`,
            "  interactiveMode: Never",
          ],
          secrets.exec,
        ],
        ["a token file's token", [`token-file: ${dir}/token`], secrets.file],
        [
          "an auth provider's token file",
          ["auth-provider:", "  name: file", "  config:", `    tokenFile: ${dir}/provider-token`],
          secrets.provider,
        ],
        [
          "a basic-auth password",
          ["username: admin", `password: ${secrets.password}`],
          secrets.password,
        ],
      ];
      for (const [name, user, secret] of users) {
        await t.step(name, async () => {
          const cfg = `${dir}/${name.replaceAll(" ", "-")}.kubeconfig`;
          await Deno.writeTextFile(cfg, kubeconfig(echo.url, user));
          const args = ["-t", "1500ms", "-i", "200ms", "k8s", "cm/x"];
          const env = { KUBECONFIG: cfg };
          const report = `${dir}/report.json`;
          const [text, json, jsonl] = await Promise.all([
            runCli(args, { env }),
            runJson(args, { env }),
            runCli(["-o", "jsonl", "--report", report, ...args], { env }),
          ]);
          const outputs: [string, string][] = [
            ["text", text.stdout + text.stderr],
            ["json", json.stdout + json.stderr],
            ["jsonl", jsonl.stdout + jsonl.stderr],
            ["--report", await Deno.readTextFile(report)],
          ];
          for (const [mode, out] of outputs) {
            assert(!out.includes(secret), `${mode}: the secret is shown:\n${out}`);
            assert(!out.includes(btoa(`admin:${secret}`)), `${mode}: basic credentials shown`);
          }
          // Positive control: the echoing answer is what the run reports, its credential masked.
          assertEquals(json.code, 1);
          assertMatch(
            json.json.conditions[0]!.last_error,
            /^configmap\/x: 500 Internal Server Error: internal error; request had Authorization: \*\*\*$/,
          );
        });
      }
      await t.step(
        "a token in a successful answer, shown by --jsonpath (the run's redactor knows it)",
        async () => {
          const cfg = `${dir}/mirror.kubeconfig`;
          await Deno.writeTextFile(cfg, kubeconfig(mirror.url, [`token: ${secrets.static}`]));
          const r = await expectJson(
            ["-t", "1500ms", "k8s", "cm/x", "--jsonpath", ".data.seen == 'nope'"],
            { code: 1 },
            { env: { KUBECONFIG: cfg } },
          );
          assert(!r.stdout.includes(secrets.static), r.stdout);
          assertEquals(
            r.json.conditions[0]!.last_error,
            'configmap/x .data.seen == "nope" (got "***")',
          );
        },
      );
    } finally {
      await echo.close();
      await mirror.close();
      await Deno.remove(dir, { recursive: true });
    }
  },
});

Deno.test({
  name: "orch: an answer without end is read up to its cap and is a pending attempt",
  ...opts,
  async fn() {
    const dir = await Deno.makeTempDir({ prefix: "waitcmd-orch-huge-" });
    const chunk = new TextEncoder().encode(`{"items":[${'"x",'.repeat(16_000)}`);
    const server = Deno.serve(
      { hostname: "127.0.0.1", port: 0, onListen: () => {} },
      () =>
        new Response(
          new ReadableStream({
            pull: (c) => c.enqueue(chunk),
          }),
          { headers: { "content-type": "application/json" } },
        ),
    );
    try {
      const cfg = `${dir}/kubeconfig`;
      await Deno.writeTextFile(
        cfg,
        kubeconfig(`http://127.0.0.1:${server.addr.port}`, ["token: t0ken"]),
      );
      const r = await runJson(["-t", "3s", "k8s", "ns/default", "--kubeconfig", cfg]);
      assertEquals([r.code, r.json.status, r.stderr], [1, "timeout", ""]);
      // Discovery asks for /api and /apis at once: either is the one reported.
      assertMatch(
        r.json.conditions[0]!.last_error,
        /^GET \/apis?: an answer larger than 16 MiB \(the most waitcmd reads\)$/,
      );
    } finally {
      await server.shutdown();
      await Deno.remove(dir, { recursive: true });
    }
  },
});
