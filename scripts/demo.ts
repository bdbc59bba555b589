/**
 * The main job, end to end: starts a little service that comes up late (a
 * file after 1 s, a TCP listener after 2 s), waits for it with waitcmd, and
 * then runs a command, the way a container entrypoint would.
 *
 * Run: scripts/demo (it installs what the CLI runs first, with scripts/packages)
 */

import { shellQuote } from "../engine/quote.ts";

const root = new URL("../", import.meta.url).pathname;

const dir = await Deno.makeTempDir({ prefix: "waitcmd-demo-" });
const probe = Deno.listen({ hostname: "127.0.0.1", port: 0 });
const port = (probe.addr as Deno.NetAddr).port;
probe.close();

console.error(
  `demo: a service will write ${dir}/ready in 1s and listen on 127.0.0.1:${port} in 2s`,
);
let server: Deno.Listener | undefined;
const t1 = setTimeout(() => Deno.writeTextFileSync(`${dir}/ready`, "ok\n"), 1000);
const t2 = setTimeout(async () => {
  server = Deno.listen({ hostname: "127.0.0.1", port });
  for await (const conn of server) conn.close();
}, 2000);

const args = [
  "--timeout",
  "30s",
  "--interval",
  "250ms",
  "tcp",
  `127.0.0.1:${port}`,
  "--",
  "file",
  `${dir}/ready`,
  "--contains",
  "ok",
  "--",
  "then",
  "echo",
  "demo: dependencies are up, starting the app",
];
// The command itself, to copy: run from the clone, `scripts/waitcmd` is waitcmd.
console.error(`demo: $ ${shellQuote(["scripts/waitcmd", ...args])}`);
const child = new Deno.Command(`${root}scripts/waitcmd`, {
  args,
  stdin: "null",
  stdout: "inherit",
  stderr: "inherit",
}).spawn();
const { code } = await child.status;
clearTimeout(t1);
clearTimeout(t2);
server?.close();
await Deno.remove(dir, { recursive: true });
console.error(`demo: waitcmd exited ${code}`);
Deno.exit(code);
