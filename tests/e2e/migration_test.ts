/**
 * docs/migration.md runs: every `waitcmd …` command of its tables, through
 * the CLI. Commands of the kinds this test can serve run live, against an
 * HTTP server it starts in place of `localhost:8080` and a directory it
 * prepares in place of `/tmp/wm`, and must be satisfied (exit 0); the others
 * run with `--explain`, which parses and validates them (exit 0).
 */

import { assert, assertEquals } from "../_assert.ts";
import { htmlPage } from "../services/http_servers.ts";
import { repoRootDir } from "../_kit.ts";
import { splitWords } from "../../engine/words.ts";
import { runCli } from "./_cli.ts";

const PAGE = `${repoRootDir}/docs/migration.md`;

/** Kinds run live here (their targets are the server and the directory this test makes). */
const LIVE = new Set([
  "http",
  "tcp",
  "file",
  "exec",
  "glob",
  "log",
  "ports",
  "lockfile",
  "cosign",
  "not",
]);

/** Global options that take a value, to find the kind word after them. */
const VALUED = new Set([
  "-t",
  "--timeout",
  "-i",
  "--interval",
  "--attempt-timeout",
  "--backoff",
  "--max-interval",
  "--jitter",
  "--delay",
  "--mode",
  "--successes",
  "--stable-for",
  "-o",
  "--output",
  "-f",
  "--config",
]);

/** One row's command: the peer's form (for messages) and waitcmd's words after `waitcmd`. */
interface Row {
  readonly peer: string;
  readonly words: string[];
}

/** Every table row whose waitcmd cell starts with a `waitcmd …` code span. */
export function commandsOf(markdown: string): Row[] {
  const rows: Row[] = [];
  for (const line of markdown.split("\n")) {
    if (!line.startsWith("|")) continue;
    const cells = line.split("|").slice(1, -1).map((c) => c.trim());
    const cmd = /^`(waitcmd [^`]+)`/.exec(cells[1] ?? "");
    if (!cmd) continue;
    rows.push({ peer: cells[0]!, words: splitWords(cmd[1]!).slice(1) });
  }
  return rows;
}

/** The first word that is not a global option or its value. */
function kindOf(words: readonly string[]): string {
  for (let i = 0; i < words.length; i++) {
    const w = words[i]!;
    if (VALUED.has(w)) i++;
    else if (!w.startsWith("-")) return w;
  }
  return "";
}

/** How a row runs: live (with the server's port and the directory put in), or `--explain`. */
function planOf(words: readonly string[], port: number, dir: string): string[] {
  const put = words.map((w) =>
    w.replaceAll("localhost:8080", `127.0.0.1:${port}`).replaceAll("8080", String(port))
      .replaceAll("/tmp/wm", dir)
  );
  const live = (LIVE.has(kindOf(words)) && !words.some((w) => /^https:|unix-socket/.test(w))) ||
    words[0] === "-f" || words[0] === "doctor" || words[0] === "completions";
  if (!live) return ["--explain", ...put];
  if (words[0] === "doctor" || words[0] === "completions") return put;
  const globals = words.includes("--timeout") ? [] : ["--timeout", "20s"];
  return [...globals, ...put];
}

/** The directory the page's commands read (`/tmp/wm`). */
async function prepare(dir: string, port: number): Promise<void> {
  await Deno.writeTextFile(`${dir}/ready.flag`, "ready\n");
  // cosign's blob signature: ECDSA P-256 over SHA-256, base64 DER, with its PEM public key.
  const { generateKeyPairSync, sign } = await import("node:crypto");
  const { publicKey, privateKey } = generateKeyPairSync("ec", { namedCurve: "P-256" });
  const sig = sign("sha256", new TextEncoder().encode("ready\n"), privateKey);
  await Deno.writeTextFile(`${dir}/ready.flag.sig`, sig.toString("base64"));
  await Deno.writeTextFile(
    `${dir}/cosign.pub`,
    publicKey.export({ type: "spki", format: "pem" }).toString(),
  );
  await Deno.writeTextFile(`${dir}/old.lock`, "1234\n");
  const tenMinutesAgo = new Date(Date.now() - 10 * 60_000);
  await Deno.utime(`${dir}/old.lock`, tenMinutesAgo, tenMinutesAgo);
  await Deno.writeTextFile(
    `${dir}/app.log`,
    'DEBUG starting\nINFO server ready\n{"level":"info","msg":"started"}\n',
  );
  await Deno.mkdir(`${dir}/jobs`);
  for (const n of [1, 2, 3]) await Deno.writeTextFile(`${dir}/jobs/${n}.done`, "");
  await Deno.writeTextFile(
    `${dir}/recipe.yaml`,
    `timeout: 20s\nconditions:\n  - kind: tcp\n    target: 127.0.0.1:${port}\n` +
      `  - kind: http\n    target: http://127.0.0.1:${port}/health\n`,
  );
}

Deno.test("docs/migration.md: every waitcmd command runs", {
  sanitizeResources: false,
  sanitizeOps: false,
}, async () => {
  const rows = commandsOf(await Deno.readTextFile(PAGE));
  // The three peers' tables together: a page that lost its commands fails here.
  assert(rows.length > 100, `only ${rows.length} commands found in ${PAGE}`);
  const server = Deno.serve({ port: 0, hostname: "127.0.0.1", onListen() {} }, (req) => {
    const path = new URL(req.url).pathname;
    if (path === "/health") return Response.json({ status: "ok", ready: true });
    return new Response(htmlPage(3), { headers: { "content-type": "text/html" } });
  });
  const dir = await Deno.makeTempDir({ prefix: "waitcmd-migration-" });
  try {
    await prepare(dir, server.addr.port);
    const env = { SSH_PASSWORD: "example-password" };
    const failures: string[] = [];
    const queue = rows.map((r) => ({ ...r, args: planOf(r.words, server.addr.port, dir) }));
    const live = queue.filter((r) => r.args[0] !== "--explain").length;
    const worker = async () => {
      for (let r = queue.shift(); r; r = queue.shift()) {
        const out = await runCli(r.args, { env });
        if (out.code !== 0) {
          failures.push(`${r.peer}: waitcmd ${r.args.join(" ")}: exit ${out.code}\n${out.stderr}`);
        }
      }
    };
    await Promise.all([worker(), worker(), worker()]);
    assertEquals(failures, []);
    // Most rows run live: the page is about what runs, not only what parses.
    assert(live >= 60, `only ${live} commands ran live`);
  } finally {
    await server.shutdown();
    await Deno.remove(dir, { recursive: true });
  }
});
