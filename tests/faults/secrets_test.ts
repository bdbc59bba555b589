/**
 * Secrets in every mode (docs/contract.md §9): one marker secret is put in
 * every place a secret can enter, and every output mode (text, the live view
 * on a terminal, json, jsonl, --report, --explain) is run on the success,
 * pending/timeout, usage-error and fatal paths. Not one byte of any output
 * may hold the marker, error texts built by libraries included.
 */

import { assert } from "../_assert.ts";
import { cliTest, runCli, runOnTerminal } from "../e2e/_cli.ts";
import { holdConnections } from "../services/_util.ts";

const MARK = "Zq9SecretMark";

/** Local targets the rows use. */
interface Targets {
  /** An HTTP server answering 200 to /ok and 503 to anything else. */
  readonly http: number;
  /** A TCP port that accepts and never answers (drivers time out and build their errors). */
  readonly silent: number;
  readonly dir: string;
}

/** Where a secret enters: the condition's words, and its environment. */
interface Place {
  readonly name: string;
  /** The condition; `ok` selects a target that is satisfied, else one that stays pending. */
  words(t: Targets, ok: boolean): string[];
  readonly env?: Record<string, string>;
  /** Whether the kind can be satisfied here (the others only time out). */
  readonly canSucceed: boolean;
}

const PLACES: Place[] = [
  {
    name: "URL user-info",
    canSucceed: true,
    words: (t, ok) => ["http", `http://user:${MARK}@127.0.0.1:${t.http}/${ok ? "ok" : "no"}`],
  },
  {
    name: "query keys (token, password, X-Amz-Signature, sig)",
    canSucceed: true,
    words: (t, ok) => [
      "http",
      `http://127.0.0.1:${t.http}/${
        ok ? "ok" : "no"
      }?token=${MARK}1&password=${MARK}2&X-Amz-Signature=${MARK}3&sig=${MARK}4`,
    ],
  },
  {
    name: "headers (--header Authorization, --header-env)",
    canSucceed: true,
    env: { API_TOKEN: `Bearer ${MARK}` },
    words: (t, ok) => [
      ...["http", `http://127.0.0.1:${t.http}/${ok ? "ok" : "no"}`],
      ...["--header", `Authorization: Bearer ${MARK}`, "--header-env", "X-Api-Key=API_TOKEN"],
    ],
  },
  {
    name: "--password",
    canSucceed: false,
    words: () => ["ssh", "127.0.0.1:1", "--user", "u", "--password", MARK],
  },
  {
    name: "--password-env",
    canSucceed: false,
    env: { SSH_PW: MARK },
    words: () => ["ssh", "127.0.0.1:1", "--user", "u", "--password-env", "SSH_PW"],
  },
  {
    name: "--password-file",
    canSucceed: false,
    words: (t) => ["ssh", "127.0.0.1:1", "--user", "u", "--password-file", `${t.dir}/pw`],
  },
  {
    name: "objstore credential variables and flags",
    canSucceed: false,
    env: { CLOUD_ACCESS_KEY_ID: "AKIDEXAMPLE", CLOUD_SECRET_ACCESS_KEY: MARK },
    words: () => [
      ...["s3", "s3://bucket/key", "--endpoint-url", "http://127.0.0.1:1"],
      ...["--session-token", `${MARK}tok`],
    ],
  },
  {
    name: "kubeconfig token",
    canSucceed: false,
    words: (t) => ["k8s", "pod/x", "--kubeconfig", `${t.dir}/kubeconfig`],
  },
  // Data stores: the password in the URL (their drivers build error texts from URLs and
  // connection options), from the environment, and protocol headers.
  ...["postgres", "mysql", "redis", "mongodb", "amqp"].map((scheme): Place => ({
    name: `${scheme} URL password`,
    canSucceed: false,
    // A refused port: the driver's own error text is what the outputs show.
    words:
      () => [scheme === "amqp" ? "rabbitmq" : scheme, `${scheme}://app:${MARK}@127.0.0.1:1/db`],
  })),
  {
    name: "nats URL password and --token-env",
    canSucceed: false,
    env: { NTOK: `${MARK}tok` },
    words: () => [
      ...["nats", `nats://app:${MARK}@127.0.0.1:1`],
      ...["--", "nats", "nats://127.0.0.1:1", "--token-env", "NTOK"],
    ],
  },
  {
    name: "postgres --password-env",
    canSucceed: false,
    env: { PGPW: MARK },
    words: () => ["postgres", "postgres://app@127.0.0.1:1/db", "--password-env", "PGPW"],
  },
  {
    name: "kafka SASL --password-env",
    canSucceed: false,
    env: { KPW: MARK },
    words: () => [
      ...["kafka", "127.0.0.1:1", "--sasl-mechanism", "scram-sha-256", "--user", "app"],
      ...["--password-env", "KPW"],
    ],
  },
  {
    // The command prints it, and its JSON holds it: what --jsonpath shows is masked too.
    name: "exec --env of a credential name",
    canSucceed: true,
    words: (_t, ok) => [
      ...["exec", "--env", `API_TOKEN=${MARK}`, "--jsonpath", ok ? "$.t" : "$.t == nope"],
      ...["--", "sh", "-c", `printf '{"t":"%s"}' "$API_TOKEN"; echo "token $API_TOKEN" >&2`],
    ],
  },
  {
    name: "grpc and websocket Authorization headers",
    canSucceed: false,
    words: (t) => [
      ...["grpc", `127.0.0.1:${t.silent}`, "--header", `Authorization: Bearer ${MARK}`],
      ...["--", "ws", `ws://127.0.0.1:${t.silent}/`, "--header", `Authorization: Bearer ${MARK}`],
    ],
  },
];

/** Output modes: extra global options, and whether the run needs a terminal. */
const MODES: { name: string; globals: (dir: string) => string[]; tty?: boolean }[] = [
  { name: "text", globals: () => [] },
  { name: "live view", globals: () => [], tty: true },
  { name: "json", globals: () => ["-o", "json"] },
  { name: "jsonl + --report", globals: (dir) => ["-o", "jsonl", "--report", `${dir}/report.json`] },
  { name: "--explain", globals: () => ["--explain"] },
  { name: "--explain -o json", globals: () => ["--explain", "-o", "json"] },
];

/** The paths of a run: what to add to the command line. */
const PATHS: { name: string; ok: boolean; extra: (t: Targets) => string[]; globals?: string[] }[] =
  [
    { name: "success", ok: true, extra: () => [] },
    { name: "pending then timeout", ok: false, extra: () => [], globals: ["-t", "700ms"] },
    { name: "usage error", ok: false, extra: () => ["--no-such-flag"] },
    {
      name: "fatal (a guard matches)",
      ok: false,
      extra: (t) => ["--", "guard", "file", `${t.dir}/pw`],
      globals: ["-t", "5s"],
    },
  ];

async function run(
  argv: string[],
  env: Record<string, string>,
  tty: boolean,
): Promise<string> {
  if (tty) return (await runOnTerminal(argv, { columns: 120, env })).raw;
  const r = await runCli(argv, { env });
  return r.stdout + r.stderr;
}

cliTest(
  "secrets: a marker secret in every place is absent from every output mode and path",
  async (t) => {
    const dir = await Deno.makeTempDir({ prefix: "waitcmd-secrets-" });
    const server = Deno.serve(
      { hostname: "127.0.0.1", port: 0, onListen: () => {} },
      (req) => new Response("body", { status: new URL(req.url).pathname === "/ok" ? 200 : 503 }),
    );
    await Deno.writeTextFile(`${dir}/pw`, `${MARK}\n`);
    await Deno.writeTextFile(
      `${dir}/kubeconfig`,
      [
        "apiVersion: v1",
        "kind: Config",
        "clusters: [{name: c, cluster: {server: 'https://127.0.0.1:1'}}]",
        `users: [{name: u, user: {token: ${MARK}}}]`,
        "contexts: [{name: x, context: {cluster: c, user: u}}]",
        "current-context: x",
        "",
      ].join("\n"),
    );
    const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
    const silent = holdConnections(listener);
    const targets: Targets = {
      http: server.addr.port,
      silent: (listener.addr as Deno.NetAddr).port,
      dir,
    };
    let runs = 0;
    try {
      for (const place of PLACES) {
        await t.step(place.name, async () => {
          const jobs: Promise<void>[] = [];
          for (const mode of MODES) {
            for (const path of PATHS) {
              if (path.ok && !place.canSucceed) continue;
              const argv = [
                ...(path.globals ?? ["-t", "5s"]),
                "-i",
                "200ms",
                ...mode.globals(dir),
                ...place.words(targets, path.ok),
                ...path.extra(targets),
              ];
              runs++;
              jobs.push((async () => {
                const out = await run(argv, place.env ?? {}, !!mode.tty);
                const report = await Deno.readTextFile(`${dir}/report.json`).catch(() => "");
                const where = `${place.name} / ${mode.name} / ${path.name}`;
                // Positive control: the run said something about the condition (else an empty
                // output would pass for the wrong reason).
                assert(
                  /\*\*\*|http|ssh|s3|k8s|waitcmd|grpc|kafka|postgres|mysql|redis|mongodb|rabbitmq/
                    .test(out),
                  `${where}: no output:\n${out}`,
                );
                assert(!out.includes(MARK), `${where}: the secret is in the output:\n${out}`);
                assert(!report.includes(MARK), `${where}: the secret is in the report file`);
              })());
              // A few runs at a time: the machine is small.
              if (jobs.length >= 4) await Promise.all(jobs.splice(0));
            }
          }
          await Promise.all(jobs);
        });
      }
      assert(runs >= 100, `only ${runs} runs`);
    } finally {
      await silent.close();
      await server.shutdown();
      await Deno.remove(dir, { recursive: true });
    }
  },
);
