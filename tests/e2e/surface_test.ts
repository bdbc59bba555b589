/**
 * What a user reads and types every day, through the CLI: `then`'s secrets in every
 * output mode, `--explain`'s plan, `then`'s pitfalls, short global options after a condition,
 * doctor's suggestion, the help topics, and the hints for the failures users meet most
 * (docs/contract.md §1, §6, §7, §9). Servers are started here: HTTP and HTTPS with Deno.serve,
 * a listener on one IP family; missing sockets, bus and kubeconfig are paths that do not exist.
 */

import { assert, assertEquals, assertMatch, assertStringIncludes } from "../_assert.ts";
import { freePort } from "../services/_util.ts";
import { makePki } from "../services/tls.ts";
import { runCli, runJson, usageErrorLine, writeRecipe } from "./_cli.ts";

async function withDir<T>(fn: (dir: string) => Promise<T>): Promise<T> {
  const dir = await Deno.makeTempDir({ prefix: "waitcmd-surface-" });
  try {
    return await fn(dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

/** The first line of stderr for one condition's first attempt, and the JSON report's hint. */
async function hintOf(args: string[], env: Record<string, string> = {}) {
  const text = await runCli(["-t", "1s", "-i", "10s", ...args], { env });
  const json = await runJson(["-t", "1s", "-i", "10s", ...args], { env });
  const line = text.stderr.split("\n").find((l) => l.startsWith("[..] ")) ?? text.stderr;
  return { line, hint: json.json.conditions[0]!.hint, json, text };
}

/** The secrets of `then`'s words below, each also in the label, so every output would show it. */
const SECRETS = ["pw123XYZ", "sekrit99", "tok3nABC", "pgsecret1", "hunter22x"];
const THEN = [
  ...["then", "echo", "postgres://app:pw123XYZ@db/prod", "--password=sekrit99"],
  ...["-H", "Authorization: Bearer tok3nABC", "PGPASSWORD=pgsecret1", "-u", "bob:hunter22x"],
  ...["--", "file", "x"],
];

Deno.test("then's secrets never show: --explain, -o json --explain, text, json, jsonl, --report", async () => {
  await withDir(async (dir) => {
    const port = freePort();
    const conds = ["tcp", `127.0.0.1:${port}`, "--label", `db ${SECRETS.join(" ")}`];
    const report = `${dir}/report.json`;
    const runs = [
      await runCli(["--explain", ...conds, "--", ...THEN]),
      await runCli(["--explain", "-o", "json", ...conds, "--", ...THEN]),
      await runCli(["-t", "500ms", ...conds, "--", ...THEN]),
      await runCli(["-t", "500ms", "-o", "json", ...conds, "--", ...THEN]),
      await runCli(["-t", "500ms", "-o", "jsonl", "--report", report, ...conds, "--", ...THEN]),
    ];
    const outputs = [...runs.flatMap((r) => [r.stdout, r.stderr]), await Deno.readTextFile(report)];
    for (const out of outputs) {
      for (const s of SECRETS) assert(!out.includes(s), `${s} shown in:\n${out}`);
    }
    assertEquals(runs.map((r) => r.code), [0, 0, 1, 1, 1]);
    assertStringIncludes(
      runs[0]!.stdout,
      "then: echo postgres://app:***@db/prod --password=*** -H 'Authorization: ***' PGPASSWORD=*** -u bob:*** -- file x\n",
    );
    const explained = JSON.parse(runs[1]!.stdout);
    assertEquals(explained.then, [
      ...["echo", "postgres://app:***@db/prod", "--password=***", "-H", "Authorization: ***"],
      ...["PGPASSWORD=***", "-u", "bob:***"],
      ...["--", "file", "x"],
    ]);
    // The warning about `-- file` in then's words shows the words, masked; JSON modes say nothing.
    assertStringIncludes(
      runs[2]!.stderr,
      'waitcmd: warning: then\'s command gets "-- file" (echo postgres://app:***@db/prod --password=*** -H Authorization: *** PGPASSWORD=*** -u bob:*** -- file …): conditions go before "-- then"; every word after it is the command\'s\n',
    );
    assertEquals([runs[3]!.stderr, runs[4]!.stderr], ["", ""]);
  });
});

Deno.test("--explain shows kind, target, flags and label of each condition, and then quoted", async () => {
  await withDir(async (dir) => {
    const recipe = await writeRecipe(dir, [
      "conditions:",
      "  - kind: tcp",
      "    target: db:5432",
      "    label: db",
      "  - kind: http",
      "    target: http://api:8080/health",
      "    label: api",
      "    flags: { status: 200, contains: ok }",
      "then: [sh, -c, echo stack is up]",
    ], "stack.yaml");
    const r = await runCli(["--explain", "-f", recipe]);
    assertEquals([r.code, r.stderr], [0, ""]);
    assertEquals(
      r.stdout,
      [
        "waitcmd: would wait for 2 conditions (timeout 5m, interval 2s)",
        "  1. db: tcp db:5432",
        "  2. api: http http://api:8080/health --status=200 --contains=ok",
        "then: sh -c 'echo stack is up'",
        "nothing was probed (--explain)",
        "",
      ].join("\n"),
    );
    const j = JSON.parse((await runCli(["--explain", "-o", "json", "-f", recipe])).stdout);
    assertEquals(
      j.conditions.map((c: Record<string, unknown>) => [c.kind, c.target, c.label, c.flags]),
      [["tcp", "db:5432", "db", []], ["http", "http://api:8080/health", "api", [
        "--status=200",
        "--contains=ok",
      ]]],
    );
  });
});

Deno.test("then pitfalls: one text in a recipe, one quoted word, a condition after then", async () => {
  await withDir(async (dir) => {
    const recipe = await writeRecipe(
      dir,
      "conditions:\n  - kind: tcp\n    target: db:1\nthen: npm test\n",
      "r.yaml",
    );
    assertEquals(
      usageErrorLine(await runCli(["-f", recipe])),
      `waitcmd: ${recipe}:4: then: expected a list of words, not one text: then: ["npm","test"] (see: waitcmd --help)`,
    );
    assertEquals(
      usageErrorLine(await runCli(["tcp", "db:1", "--", "then", "echo hi"])),
      "waitcmd: then: command not found on PATH: echo hi; the command and its arguments are separate words: -- then echo hi (unquoted) (see: waitcmd --help)",
    );
    const port = freePort();
    const r = await runCli([
      ...["-t", "300ms", "tcp", `127.0.0.1:${port}`],
      ...["--", "then", "echo", "hi"],
      ...["--", "file", "x"],
      ...["--", "tcp", "y"],
    ]);
    const warnings = r.stderr.split("\n").filter((l) => l.includes("warning"));
    assertEquals(warnings, [
      'waitcmd: warning: then\'s command gets "-- file" (echo hi -- file …): conditions go before "-- then"; every word after it is the command\'s',
    ]);
    assertEquals(r.stderr.split("\n")[0], warnings[0]);
    // Quiet and JSON runs keep it to themselves.
    const quiet = await runCli([
      ...["-q", "-t", "300ms", "tcp", `127.0.0.1:${port}`],
      ...["--", "then", "echo"],
      ...["--", "file", "x"],
    ]);
    assert(!quiet.stderr.includes("warning"), quiet.stderr);
  });
});

Deno.test("short global options after a condition say where they go", async () => {
  const rows: [string, string][] = [
    ["-t", "-t (--timeout)"],
    ["-q", "-q (--quiet)"],
    ["-i", "-i (--interval)"],
    ["-o", "-o (--output)"],
    ["-f", "-f (--config)"],
  ];
  for (const [flag, named] of rows) {
    assertEquals(
      usageErrorLine(await runCli(["http", "http://x/", flag, "5s"])),
      `waitcmd: condition 1 (http): unknown flag ${flag}; global options such as ${named} go before the first condition (see: waitcmd help http)`,
    );
  }
});

Deno.test("doctor --require suggests a kind for a misspelt one", async () => {
  assertEquals(
    usageErrorLine(await runCli(["doctor", "--require", "kuberntes"])),
    'waitcmd: doctor: --require: unknown kind "kuberntes" (did you mean kubernetes?) (see: waitcmd --help)',
  );
});

Deno.test("doctor --require takes a comma list and repeats, and names each failed requirement", async () => {
  await withDir(async (dir) => {
    const env = { HOME: dir, KUBECONFIG: `${dir}/absent`, KUBERNETES_SERVICE_HOST: "" };
    const reason = `no kubeconfig: ${dir}/absent not found (set KUBECONFIG or use --kubeconfig)`;
    for (const require of [["--require", "tcp,k8s"], ["--require", "tcp", "--require=orch"]]) {
      const r = await runCli(["doctor", ...require], { env });
      assertEquals(r.code, 1, `${require.join(" ")}: ${r.stderr}`);
      assertMatch(r.stdout, /^tcp +ok$/m);
      assertStringIncludes(r.stdout, `orch`);
      assertEquals(r.stderr, `waitcmd: doctor: required kind orch cannot work here: ${reason}\n`);
      const json = await runCli(["doctor", "-o", "json", ...require], { env });
      assertEquals([json.code, json.stderr], [1, ""]);
      const kinds =
        (JSON.parse(json.stdout) as { kinds: { kind: string; reason: string }[] }).kinds;
      assertEquals(kinds.find((k) => k.kind === "orch")?.reason, reason);
    }
    const ok = await runCli(["doctor", "--require", "tcp,file"], { env });
    assertEquals([ok.code, ok.stderr], [0, ""]);
    assertStringIncludes(
      usageErrorLine(await runCli(["doctor", "--require", "tcp,kuberntes"])),
      'waitcmd: doctor: --require: unknown kind "kuberntes" (did you mean kubernetes?)',
    );
    assertStringIncludes(
      usageErrorLine(await runCli(["doctor", "--require", ","])),
      "waitcmd: doctor: --require: expected a kind",
    );
  });
});

Deno.test("help topics: then, recipe, exit-codes, environment, output, groups, captures, start", async () => {
  const main = await runCli(["help"]);
  assertStringIncludes(
    main.stdout,
    "Help topics: waitcmd help <kind>, or then, recipe, exit-codes, environment, output, groups, captures, start.",
  );
  const topics = [
    "then",
    "recipe",
    "exit-codes",
    "environment",
    "output",
    "groups",
    "captures",
    "start",
  ];
  for (const topic of topics) {
    const r = await runCli(["help", topic]);
    assertEquals([r.code, r.stderr], [0, ""]);
    assert(r.stdout.startsWith(`waitcmd help ${topic} - `), r.stdout);
  }
  assertStringIncludes((await runCli(["help", "output"])).stdout, "--progress changes");
  assertStringIncludes((await runCli(["help", "environment"])).stdout, "WAITCMD_CI=off");
  assertStringIncludes(
    (await runCli(["help", "start"])).stdout,
    "waitcmd --start 'npm run start:api' http http://localhost:8080/health",
  );
  assertStringIncludes((await runCli(["help", "environment"])).stdout, "WAITCMD_STOP_GRACE");
  assertEquals(
    usageErrorLine(await runCli(["help", "thne"])),
    'waitcmd: help: unknown kind or topic "thne" (did you mean then?); topics: then, recipe, exit-codes, environment, output, groups, captures, start (see: waitcmd --help)',
  );
});

Deno.test("hints: a name that does not resolve, a server on the other IP family", async () => {
  const dns = await hintOf(["tcp", "no-such-host.invalid:80"]);
  assertEquals(
    dns.hint,
    "check the name no-such-host.invalid; Compose and Kubernetes service names resolve only inside their network",
  );
  assertEquals(
    dns.line.replace(/\(\d+\.\ds\)/, "(T)"),
    `[..] tcp no-such-host.invalid:80 attempt 1 (T): cannot resolve host no-such-host.invalid: no such host (hint: ${dns.hint})`,
  );
  assertStringIncludes(dns.text.stderr, `: no such host (hint: ${dns.hint})\n`);
  let v6: Deno.Listener;
  try {
    v6 = Deno.listen({ hostname: "::1", port: 0 });
  } catch {
    return; // No IPv6 loopback on this machine: nothing listens on the other family.
  }
  const port = (v6.addr as Deno.NetAddr).port;
  try {
    for (const args of [["tcp", `127.0.0.1:${port}`], ["http", `http://127.0.0.1:${port}/`]]) {
      const r = await hintOf(args);
      assertEquals(
        r.hint,
        `the server listens on IPv6 only ([::1]:${port} accepts, 127.0.0.1:${port} refuses): connect to [::1]:${port} or localhost:${port}`,
      );
      assertStringIncludes(r.line, `connection refused (hint: ${r.hint})`);
    }
  } finally {
    v6.close();
  }
});

Deno.test("hints: 401 and 403, a certificate for another name", async () => {
  const ac = new AbortController();
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, signal: ac.signal, onListen() {} },
    (req) => {
      const path = new URL(req.url).pathname;
      if (path === "/forbidden") return new Response("no", { status: 403 });
      return new Response("who?", {
        status: 401,
        headers: { "www-authenticate": 'Bearer realm="api"' },
      });
    },
  );
  const pki = await makePki({ server: { dnsNames: ["other.test"] } });
  const tlsAc = new AbortController();
  const tls = Deno.serve({
    hostname: "127.0.0.1",
    port: 0,
    signal: tlsAc.signal,
    cert: pki.server.certPem,
    key: pki.server.keyPem,
    onListen() {},
  }, () => new Response("ok"));
  try {
    const base = `http://127.0.0.1:${server.addr.port}`;
    const none = await hintOf(["http", `${base}/`]);
    assertEquals(
      none.hint,
      "the server wants credentials (it asks for Bearer): send them with --header-env or --basic-auth-env",
    );
    assertStringIncludes(none.line, `status 401, expected 2xx (hint: ${none.hint})`);
    const sent = await hintOf(["http", `${base}/`, "--header-env", "Authorization=TOKEN"], {
      TOKEN: "Bearer nope",
    });
    assertEquals(sent.hint, "the server refused the credentials sent: check the token or password");
    const forbidden = await hintOf(["http", `${base}/forbidden`]);
    assertEquals(
      forbidden.hint,
      "the credentials lack the permission, or the server refuses this client",
    );
    const want =
      "the certificate is for other.test: connect by one of its names, or give the server one for localhost";
    const https = await hintOf([
      ...["http", `https://localhost:${tls.addr.port}/`, "--ca-file", pki.ca.certFile],
    ]);
    assertEquals(https.hint, want);
    const cert = await hintOf(["tls", `localhost:${tls.addr.port}`, "--ca-file", pki.ca.certFile]);
    assertEquals(cert.hint, want);
    assertStringIncludes(cert.text.stderr, `(hint: ${want})\n`);
  } finally {
    ac.abort();
    tlsAc.abort();
    await Promise.all([server.finished, tls.finished]);
    await pki.cleanup();
  }
});

Deno.test("hints: a kubeconfig without the context, a missing kubeconfig, socket, Docker socket or bus", async () => {
  await withDir(async (dir) => {
    const kubeconfig = `${dir}/config`;
    await Deno.writeTextFile(
      kubeconfig,
      [
        "apiVersion: v1",
        "kind: Config",
        "clusters: [{name: c, cluster: {server: 'https://127.0.0.1:1'}}]",
        "users: [{name: u, user: {token: t0ken}}]",
        "contexts: [{name: dev, context: {cluster: c, user: u}}, {name: prod, context: {cluster: c, user: u}}]",
        "current-context: dev",
      ].join("\n"),
    );
    const ctx = await hintOf([
      ...["k8s", "deployment/web", "--kubeconfig", kubeconfig, "--context", "stage"],
    ]);
    assertEquals(ctx.json.code, 3);
    assertEquals(ctx.hint, "pass --context with one of: dev, prod (kubectl config get-contexts)");
    assertStringIncludes(ctx.text.stderr, `(hint: ${ctx.hint})\n`);
    const missing = await hintOf(["k8s", "deployment/web"], { KUBECONFIG: `${dir}/nope` });
    // No retry can fix a kubeconfig that is not there: fatal, its hint on the summary line.
    assertEquals(missing.json.code, 3);
    assertEquals(missing.hint, "fix KUBECONFIG: it names no kubeconfig file");
    assertStringIncludes(
      missing.text.stderr,
      `waitcmd: fatal: k8s deployment/web: kubeconfig ${dir}/nope (KUBECONFIG): no such file ` +
        `(hint: ${missing.hint})\n`,
    );
    const sock = await hintOf(["unix", `${dir}/app.sock`]);
    assertEquals(
      sock.hint,
      `nothing at ${dir}/app.sock: its server is not running, or listens elsewhere`,
    );
    const docker = await hintOf(["container", "web"], { DOCKER_HOST: `unix://${dir}/docker.sock` });
    assertEquals(
      docker.hint,
      `nothing at ${dir}/docker.sock: the Docker Engine is not running, or listens elsewhere (set DOCKER_HOST)`,
    );
    assertStringIncludes(docker.line, `no such socket (hint: ${docker.hint})`);
    const pid1 = (await Deno.readTextFile("/proc/1/comm").catch(() => "")).trim();
    if (pid1 === "systemd") return; // systemctl answers here: no bus is missing.
    const bus = await hintOf(["svcmgr", "cron"], {
      DBUS_SYSTEM_BUS_ADDRESS: `unix:path=${dir}/system_bus_socket`,
    });
    assertEquals(
      bus.hint,
      "no systemd here (a container?): set DBUS_SYSTEM_BUS_ADDRESS to a systemd's system bus",
    );
    assertMatch(
      bus.line,
      /^\[\.\.\] svcmgr cron\.service attempt 1 \(\d+\.\ds\): cannot reach systemd: .* \(hint: no systemd here/,
    );
  });
});
