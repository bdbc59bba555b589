/**
 * `deno task soak [minutes]`: 100 mixed conditions that stay pending (tcp on
 * closed ports, http answering 503, missing files, a log with no matching
 * line, dns against a silent server) at `--interval 200ms`, for `minutes`
 * (default 2). RSS, open file descriptors and CPU time of the waitcmd
 * process are sampled every 10 s. The soak fails when, after the warm-up
 * (the first quarter, at least 60 s), the lowest RSS of the late samples is
 * more than 10% above the warm-up's peak, or the descriptors (other than
 * sockets) or the sockets open at the quietest late sample outnumber the
 * most seen during the warm-up. RSS and descriptors come and go with the
 * collector and the attempts under way; a leak raises the floor
 * (docs/reliability.md).
 *
 * @module
 */

import { createSocket } from "node:dgram";

const minutes = Number(Deno.args[0] ?? "2");
if (!(minutes > 0)) {
  console.error(`soak: expected a number of minutes, got ${JSON.stringify(Deno.args[0])}`);
  Deno.exit(2);
}
const SAMPLE_MS = 10_000;
const root = new URL("..", import.meta.url).pathname.replace(/\/$/, "");

const dir = await Deno.makeTempDir({ prefix: "waitcmd-soak-" });
const http = Deno.serve(
  { hostname: "127.0.0.1", port: 0, onListen: () => {} },
  () => new Response("not yet", { status: 503 }),
);
const dns = createSocket("udp4");
await new Promise<void>((r) => dns.bind(0, "127.0.0.1", r));
await Deno.writeTextFile(`${dir}/app.log`, "starting\n");

/** Ports nothing listens on. */
function closedPorts(n: number): number[] {
  const ls = Array.from({ length: n }, () => Deno.listen({ hostname: "127.0.0.1", port: 0 }));
  const ports = ls.map((l) => (l.addr as Deno.NetAddr).port);
  for (const l of ls) l.close();
  return ports;
}

const conditions: string[][] = [];
for (const port of closedPorts(40)) conditions.push(["tcp", `127.0.0.1:${port}`]);
for (let i = 0; i < 25; i++) {
  conditions.push(["http", `http://127.0.0.1:${http.addr.port}/health/${i}`]);
}
for (let i = 0; i < 15; i++) conditions.push(["file", `${dir}/never-${i}`]);
for (let i = 0; i < 10; i++) {
  conditions.push(["log", `${dir}/app.log`, "--contains", `ready-${i}`]);
}
for (let i = 0; i < 10; i++) {
  conditions.push([
    "dns",
    `app${i}.test`,
    "--server",
    `127.0.0.1:${(dns.address()).port}`,
  ]);
}
const argv = ["-t", "none", "-i", "200ms", "--attempt-timeout", "1s", "-q"];
conditions.forEach((c, i) => argv.push(...(i > 0 ? ["--"] : []), ...c));

// A writer keeps the log growing with lines that never match.
let writing = true;
const writer = (async () => {
  const f = await Deno.open(`${dir}/app.log`, { append: true });
  let n = 0;
  while (writing) {
    await f.write(new TextEncoder().encode(`line ${n++} of noise\n`));
    await new Promise((r) => setTimeout(r, 100));
  }
  f.close();
})();

const child = new Deno.Command(`${root}/scripts/waitcmd`, {
  args: argv,
  env: { NO_COLOR: "1" },
  stdin: "null",
  stdout: "null",
  stderr: "piped",
}).spawn();
const stderr = new Response(child.stderr).text();

interface Sample {
  atS: number;
  rssMb: number;
  /** Open descriptors other than sockets (files, pipes, watches): these must stay flat. */
  fds: number;
  /** Open sockets: they come and go with attempts in flight. */
  sockets: number;
  cpuS: number;
}

const ticks = 100; // USER_HZ on Linux
async function sample(pid: number, atS: number): Promise<Sample> {
  const status = await Deno.readTextFile(`/proc/${pid}/status`);
  const rssKb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? "0");
  const stat = (await Deno.readTextFile(`/proc/${pid}/stat`)).split(") ")[1]!.split(" ");
  const cpu = (Number(stat[11]) + Number(stat[12])) / ticks;
  let fds = 0;
  let sockets = 0;
  for await (const e of Deno.readDir(`/proc/${pid}/fd`)) {
    const link = await Deno.readLink(`/proc/${pid}/fd/${e.name}`).catch(() => "");
    if (link.startsWith("socket:")) sockets++;
    else fds++;
  }
  return { atS, rssMb: rssKb / 1024, fds, sockets, cpuS: cpu };
}

const samples: Sample[] = [];
const started = performance.now();
const endAt = started + minutes * 60_000;
let failed = "";
try {
  // The launcher execs Deno, so the child's pid is waitcmd's.
  while (performance.now() < endAt) {
    await new Promise((r) => setTimeout(r, Math.min(SAMPLE_MS, endAt - performance.now())));
    const s = await sample(child.pid, Math.round((performance.now() - started) / 1000));
    samples.push(s);
    console.log(
      `soak: ${s.atS}s rss ${s.rssMb.toFixed(1)} MB, fds ${s.fds} + ${s.sockets} sockets, ` +
        `cpu ${s.cpuS.toFixed(2)} s`,
    );
  }
} catch (e) {
  failed = `waitcmd stopped during the soak: ${e}\n${await stderr}`;
} finally {
  child.kill("SIGTERM");
  await child.status;
  writing = false;
  await writer;
  await http.shutdown();
  dns.close();
  await Deno.remove(dir, { recursive: true });
}

if (!failed) {
  // Warm-up: the first quarter, at least 60 s. V8 sizes its heap over the first GC cycles: with
  // 100 conditions RSS climbs for about 50 s and then stays flat (the 60-minute run in
  // docs/reliability.md); a 30 s warm-up read that climb as growth.
  const warm = Math.max(6, Math.floor(samples.length / 4));
  const base = samples.slice(0, warm);
  const after = samples.slice(warm);
  const baseRss = Math.max(...base.map((s) => s.rssMb));
  const baseFds = Math.max(...base.map((s) => s.fds));
  const maxRss = Math.max(baseRss, ...after.map((s) => s.rssMb));
  const maxFds = Math.max(baseFds, ...after.map((s) => s.fds));
  // Sockets in flight vary from sample to sample; leaked ones would never close, so the
  // fewest open at any late sample must not exceed the most open during the warm-up.
  const baseSockets = Math.max(...base.map((s) => s.sockets));
  const late = after.slice(-Math.max(1, Math.floor(after.length / 3)));
  const minLateSockets = Math.min(...late.map((s) => s.sockets));
  // Files, pipes and watches open for a moment inside an attempt show up in a sample too; a
  // leak raises the floor, so the fewest at a late sample is what must not grow.
  const minLateFds = Math.min(...late.map((s) => s.fds));
  // RSS saws up and down by 10-20% with V8's collections (149-177 MB within 5 minutes at rest);
  // a peak above the warm-up's is one tooth, a leak lifts the lowest late sample too.
  const minLateRss = Math.min(...late.map((s) => s.rssMb));
  const last = samples.at(-1)!;
  const cpuShare = last.cpuS / last.atS;
  console.log(
    `soak: ${conditions.length} conditions, ${minutes} min: RSS up to ${
      baseRss.toFixed(1)
    } MB in the ` +
      `warm-up, at least ${minLateRss.toFixed(1)} MB late (${
        ((minLateRss / baseRss - 1) * 100).toFixed(1).replace(/^(?!-)/, "+")
      }%), max ${maxRss.toFixed(1)} MB; ` +
      `fds up to ${baseFds} in the warm-up, at least ${minLateFds} late (max ${maxFds}); sockets up to ${baseSockets} in the warm-up, at least ` +
      `${minLateSockets} late; CPU ${last.cpuS.toFixed(1)} s (${
        (cpuShare * 100).toFixed(1)
      }% of a core)`,
  );
  if (after.length === 0) failed = "too short: no sample after the warm-up";
  else if (minLateRss > baseRss * 1.1) failed = `RSS grew more than 10% after the warm-up`;
  else if (minLateFds > baseFds) failed = `open file descriptors grew after the warm-up`;
  else if (minLateSockets > baseSockets) failed = `open sockets grew after the warm-up`;
}
if (failed) {
  console.error(`soak: FAILED: ${failed}`);
  Deno.exit(1);
}
console.log("soak: ok");
