/**
 * One redaction rule (docs/contract.md §9): in every text from outside, the
 * run's secrets and every URL's password are masked, then control characters
 * are escaped, then the text is cut. Cut first, the start of a secret stayed
 * (exec's last line at 199 characters, an http --jsonpath value at 59, an S3
 * error at 200); a newline in a server's answer forged `[ok] …` and
 * `waitcmd: satisfied` lines. Hostile servers here are local and minimal, each
 * answering exactly the bytes of the fault.
 */

import { assert, assertEquals } from "../_assert.ts";
import { cliTest, runCli } from "../e2e/_cli.ts";
import { inTempDir } from "../services/_util.ts";

/** Fails when any output holds `prefix` (the start of a secret). */
function assertHidden(r: { stdout: string; stderr: string }, prefix: string, what: string): void {
  for (const [name, text] of [["stdout", r.stdout], ["stderr", r.stderr]]) {
    assert(!text!.includes(prefix), `${what}: ${name} shows ${prefix}…:\n${text}`);
  }
}

/**
 * Runs the words in text and in JSON (`--timeout 2s`) and asserts each run exits 1, shows no
 * `hidden` (the start of a secret) in `what`, and shows `shown` where one is given.
 */
async function assertMasked(
  args: string[],
  env: Record<string, string>,
  want: { hidden: string; what: string; shown?: string },
): Promise<void> {
  for (const output of [[], ["--output", "json"]]) {
    const r = await runCli(["--timeout", "2s", ...output, ...args], { env });
    assertEquals(r.code, 1, r.stderr);
    assertHidden(r, want.hidden, want.what);
    if (want.shown !== undefined) {
      assert((r.stdout + r.stderr).includes(want.shown), r.stdout + r.stderr);
    }
  }
}

/** Runs `fn` with the URL of a local HTTP server answering with `handler`, then stops it. */
async function withHttp(
  handler: (req: Request) => Response,
  fn: (url: string) => Promise<void>,
): Promise<void> {
  const ac = new AbortController();
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, signal: ac.signal, onListen: () => {} },
    handler,
  );
  try {
    await fn(`http://127.0.0.1:${server.addr.port}`);
  } finally {
    ac.abort();
    await server.finished;
  }
}

cliTest(
  "redaction: exec's last line is cut after the secret is masked (no prefix at 199)",
  async () => {
    const PW = "Zq9Secret11";
    // A second condition registers PW as a secret; exec's line ends in it past the cut.
    await assertMasked(
      [
        "exec",
        ...["--", "sh", "-c", 'printf "%0190d%s\\n" 0 "$PW"; exit 1'],
        ...["--", "http", "http://127.0.0.1:1/", "--header-env", "X-Api-Key=PW"],
      ],
      { PW },
      { hidden: PW.slice(0, 4), what: "exec's last line", shown: "0***" },
    );
  },
);

cliTest("redaction: a URL's password in a command's output is masked, its user kept", async () => {
  await assertMasked(
    [
      "exec",
      ...["--", "sh"],
      ...["-c", 'echo "cannot reach postgres://app:Zq9UrlPw7@db:5432/app" >&2; exit 1'],
    ],
    {},
    { hidden: "Zq9Url", what: "exec's stderr", shown: "postgres://app:***@db:5432/app" },
  );
});

cliTest(
  "redaction: an http --jsonpath value echoing a header secret is cut after masking",
  async () => {
    const TOKEN = "Zq9SecretTwentyChars";
    await withHttp(
      // The value's JSON text puts the secret across the 59th character.
      (req) => Response.json({ echo: `${"p".repeat(45)}${req.headers.get("x-api-key")}` }),
      (url) =>
        assertMasked(
          [
            ...["http", `${url}/`, "--header-env", "X-Api-Key=TOKEN"],
            ...["--jsonpath", '$.echo == "nothing"'],
          ],
          { TOKEN },
          { hidden: TOKEN.slice(0, 4), what: "the jsonpath value" },
        ),
    );
  },
);

cliTest("redaction: an S3 error echoing the session token is cut after masking", async () => {
  const TOKEN = "Zq9SessionTokenThirtyTwoCharsXYZ";
  const message = `${"m".repeat(185)}${TOKEN} and more`;
  const env = {
    CLOUD_ACCESS_KEY_ID: "AKIDFAULT",
    CLOUD_SECRET_ACCESS_KEY: "Zq9SecretAccessKey",
    CLOUD_SESSION_TOKEN: TOKEN,
  };
  await withHttp(
    () =>
      new Response(
        `<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>InvalidArgument</Code>` +
          `<Message>${message}</Message><RequestId>1</RequestId></Error>`,
        { status: 400, headers: { "content-type": "application/xml" } },
      ),
    (url) =>
      assertMasked(["objstore", "s3://bucket/key", "--endpoint-url", url], env, {
        hidden: TOKEN.slice(0, 4),
        what: "the S3 error",
        shown: "InvalidArgument",
      }),
  );
});

cliTest(
  "redaction: newlines in a server's answer cannot forge [ok] or satisfied lines",
  async () => {
    // A "redis" server whose every answer is an error with lines of waitcmd's in it.
    const { createServer } = await import("node:net");
    const forged = "-ERR bad\n[ok] forged attempt\nwaitcmd: satisfied in 0.1s (1/1 conditions)\r\n";
    const server = createServer((sock) => {
      sock.on("data", () => sock.write(forged));
      sock.on("error", () => {});
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const port = (server.address() as { port: number }).port;
    try {
      const r = await runCli(["--timeout", "2s", "redis", `redis://127.0.0.1:${port}`]);
      assertEquals(r.code, 1);
      const lines = r.stderr.trimEnd().split("\n");
      for (const line of lines) {
        assert(
          /^(waitcmd: waiting for |\[\.\.\] redis |waitcmd: timed out after )/.test(line),
          `a line that is not waitcmd's: ${JSON.stringify(line)}\n${r.stderr}`,
        );
      }
      assert(r.stderr.includes("ERR bad\\n[ok] forged attempt\\nwaitcmd: satisfied"), r.stderr);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  },
);

cliTest(
  "redaction: a carriage return or escape sequence in a log line is written as an escape",
  () =>
    inTempDir("waitcmd-ctl-")(async (dir) => {
      await Deno.writeTextFile(`${dir}/app.log`, "ready\r[ok] forged\x1b[1A\x1b[2K\u2028done\n");
      const r = await runCli([
        ...["--timeout", "2s", "log", `${dir}/app.log`, "--from-start", "--contains", "ready"],
      ]);
      assertEquals(r.code, 0, r.stderr);
      // deno-lint-ignore no-control-regex
      assert(!/[\r\x1b\u2028]/.test(r.stderr), JSON.stringify(r.stderr));
      assert(r.stderr.includes("ready\\r[ok] forged\\x1b[1A\\x1b[2K\\u2028done"), r.stderr);
    }),
);
