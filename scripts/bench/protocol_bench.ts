/**
 * Protocol kinds: time to verdict of `grpc` and `websocket` against a ready
 * server, side by side with waitfor's same checks in the same run
 * (interleaved), with waitcmd's `tcp` on the same port as the floor of any
 * waitcmd run, and the import cost of their libraries (@grpc/grpc-js, ws)
 * under Deno. Target: within 2x of waitfor.
 *
 * The servers: the reference gRPC health server the tests use
 * (conditions/grpc/_service.ts, built by scripts/services/build-grpc.sh) and a
 * Deno.serve WebSocket upgrade in this process. waitfor is a prebuilt peer:
 * WAITCMD_BENCH_WAITFOR names its binary, else it is unpacked from the peers
 * directory (WAITCMD_PEERS_DIR, default `shared/peers` beside the repository, through its
 * install.sh) into the bench's tool cache.
 *
 * Run alone: `scripts/deno run -A scripts/bench/protocol_bench.ts`, or
 * `deno task bench protocol`.
 *
 * @module
 */

import type { BenchEntry, BenchRow } from "./_types.ts";
import {
  bothForms,
  bundleLauncher,
  denoScript,
  DRIVER_GOAL_MS,
  ensureBundle,
  launcherNpmFlags,
  repoRoot,
  rssRuns,
  sideBySideRow,
  usageBothForms,
} from "./_forms.ts";
import { interleave, tempDir } from "./_run.ts";
import { benchRuns, fmtMs, fmtSample, median, progress } from "./_stats.ts";
import { peerBin } from "./_tools.ts";
import { startGrpcServer } from "../../conditions/grpc/_service.ts";

/** Runs of the import-cost measurement per library. */
const IMPORT_RUNS = 11;

async function timeToVerdict(): Promise<BenchRow[]> {
  const runs = benchRuns();
  const peer = await peerBin("waitfor", "WAITCMD_BENCH_WAITFOR");
  progress("starting the gRPC health server and a Deno.serve WebSocket server");
  const grpc = await startGrpcServer();
  const ws = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, (req) => {
    if (req.headers.get("upgrade") !== "websocket") return new Response("plain\n");
    const { response } = Deno.upgradeWebSocket(req);
    return response;
  });
  const wsUrl = `ws://127.0.0.1:${ws.addr.port}/`;
  try {
    const kinds = [
      {
        kind: "grpc",
        port: grpc.h2c,
        waitcmd: ["grpc", grpc.h2c],
        waitfor: ["grpc", grpc.h2c],
      },
      {
        kind: "websocket",
        port: `127.0.0.1:${ws.addr.port}`,
        waitcmd: ["websocket", wsUrl],
        waitfor: ["websocket", wsUrl],
      },
    ];
    const rows: BenchRow[] = [];
    await ensureBundle();
    for (const k of kinds) {
      progress(`time to verdict, ${k.kind}: ${runs} runs each, interleaved`);
      const args = ["--timeout", "20s", ...k.waitcmd];
      const commands: Record<string, string[]> = {
        ...bothForms("waitcmd", args),
        "waitcmd tcp": [bundleLauncher, "--timeout", "20s", "tcp", k.port],
      };
      if ("bin" in peer) commands.waitfor = [peer.bin, "--timeout", "20s", ...k.waitfor];
      const t = await interleave(commands, runs);
      progress(`peak RSS, ${k.kind}: ${rssRuns()} runs of each form`);
      rows.push(sideBySideRow({
        name: `time to verdict, ${k.kind} (ready server)`,
        bundle: t["waitcmd (bundle)"]!,
        source: t.waitcmd!,
        usage: await usageBothForms(args, rssRuns()),
        goalMs: DRIVER_GOAL_MS,
        ...("bin" in peer
          ? { peer: { name: "waitfor", times: t.waitfor! } }
          : { peerMissing: `waitfor not available: ${peer.error}` }),
        extra: `waitcmd tcp on the same port from the bundle ${fmtMs(median(t["waitcmd tcp"]!))}`,
      }));
    }
    return rows;
  } finally {
    await grpc.stop();
    await ws.shutdown();
  }
}

/** What each import-cost run imports. */
const IMPORTS: { name: string; pkg: string }[] = [
  { name: "@grpc/grpc-js (grpc)", pkg: "@grpc/grpc-js" },
  { name: "ws (websocket)", pkg: "ws" },
];

async function importCost(): Promise<BenchRow[]> {
  const dir = await tempDir("waitcmd-bench-import-");
  try {
    const rows: BenchRow[] = [];
    const npm = await launcherNpmFlags();
    for (const imp of IMPORTS) {
      const file = `${dir.path}/import.ts`;
      await Deno.writeTextFile(
        file,
        `const t = performance.now(); await import('${imp.pkg}');\n` +
          "console.log((performance.now() - t).toFixed(2));\n",
      );
      const times: number[] = [];
      // One unmeasured run warms Deno's caches.
      for (let i = 0; i <= IMPORT_RUNS; i++) {
        const out = await new Deno.Command(denoScript, {
          args: ["run", "-A", "--quiet", ...npm, "--config", `${repoRoot}/deno.json`, file],
          stdout: "piped",
          stderr: "piped",
        }).output();
        if (!out.success) {
          throw new Error(`importing ${imp.pkg}: ${new TextDecoder().decode(out.stderr).trim()}`);
        }
        if (i > 0) times.push(Number(new TextDecoder().decode(out.stdout).trim()));
      }
      rows.push({
        name: `import cost under Deno, ${imp.name}`,
        figure: fmtSample(times),
        target: "",
      });
    }
    return rows;
  } finally {
    await dir.remove();
  }
}

/** The bench entries of this module. */
export const entries: BenchEntry[] = [
  { name: "protocol time to verdict vs waitfor", run: timeToVerdict },
  { name: "protocol library import cost", run: importCost },
];

if (import.meta.main) {
  for (const e of entries) {
    for (const r of await e.run()) {
      const verdict = r.ok === undefined ? "" : r.ok ? "  ok" : "  MISSED";
      console.log(`${r.name}: ${r.figure}${r.target ? ` (target ${r.target})` : ""}${verdict}`);
      if (r.reference) console.log(`  ${r.reference}`);
    }
  }
}
