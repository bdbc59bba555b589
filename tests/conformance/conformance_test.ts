/**
 * The conformance suite: one contract, run over every registered kind (as
 * every restic backend runs one shared suite). Each kind's dead target is in its folder
 * (`conditions/<kind>/_suite.ts`, found through the registry: tests/_suite.ts); a new kind
 * passes everything else unchanged.
 *
 * Per kind: its examples parse; `parse` does no I/O (checked in a process
 * without permissions); `check` against a dead target returns a result,
 * never throws, and returns within 100 ms of an abort; `close` is
 * idempotent; the display target holds no secret; help and completions
 * list every flag with its values.
 */

import { createSocket } from "node:dgram";
import { assert, assertEquals } from "../_assert.ts";
import { registry } from "../../conditions/all.ts";
import { completionScript } from "../../output/completions.ts";
import { kindHelp } from "../../output/help.ts";
import { readyPlan, repoRootDir } from "../_kit.ts";
import { holdConnections } from "../services/_util.ts";
import { checkOnce } from "../../engine/attempt.ts";
import { type Dead, DEAD_MARK, type DeadTarget, kindSuites, suiteFile } from "../_suite.ts";

const { suites, missing } = await kindSuites();

/** `kind`'s dead target (a kind without a suite fails the first test below, and its own). */
function deadTarget(kind: string): DeadTarget {
  const s = suites.get(kind);
  assert(s, `the kind ${kind} has no suite (${suiteFile(kind)})`);
  return s.dead;
}

async function withDead<T>(fn: (d: Dead) => Promise<T>): Promise<T> {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const silent = holdConnections(listener);
  const udp = createSocket("udp4");
  await new Promise<void>((resolve) => udp.bind(0, "127.0.0.1", resolve));
  const dir = await Deno.makeTempDir({ prefix: "waitcmd-conformance-" });
  const silentTcp = (listener.addr as Deno.NetAddr).port;
  try {
    return await fn({ silentTcp, silentUdp: udp.address().port, dir });
  } finally {
    await silent.close();
    udp.close();
    await Deno.remove(dir, { recursive: true });
  }
}

const opts = { sanitizeResources: false, sanitizeOps: false };

Deno.test("conformance: every registered kind has its suite, with a dead target", () => {
  assertEquals(missing, [], "kinds whose folder has no usable suite file");
  assertEquals([...suites.keys()], registry.kinds.map((k) => k.name));
});

Deno.test("conformance: parse() of every kind's examples does no I/O (no permissions)", async () => {
  const deno = Deno.execPath();
  const out = await new Deno.Command(deno, {
    args: [
      ...["run", "--no-prompt", "--quiet", "--config", `${repoRootDir}/deno.json`],
      `${repoRootDir}/tests/conformance/_parse_noio.ts`,
    ],
    env: { NO_COLOR: "1" },
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = new TextDecoder().decode(out.stdout);
  const err = new TextDecoder().decode(out.stderr);
  assertEquals(out.code, 0, `the no-permission parse run failed:\n${err}`);
  const lines = text.trim().split("\n");
  const failures = lines.filter((l) => !l.startsWith("ok "));
  assertEquals(failures, [], "examples that failed to parse without permissions");
  const examples = registry.kinds.reduce((n, k) => n + k.examples.length, 0);
  assertEquals(lines.length, examples, "one line per example");
});

for (const kind of registry.kinds) {
  Deno.test({
    name: `conformance ${kind.name}: check on a dead target returns a result and stops on abort`,
    ...opts,
    fn: () =>
      withDead(async (d) => {
        const row = deadTarget(kind.name)(d);
        const plan = await readyPlan(row.args, { ...row.env });
        const c = plan.conditions[0]!;
        assert(!c.name.includes(DEAD_MARK), `display name holds a secret: ${c.name}`);
        assert(!c.target.includes(DEAD_MARK), `target holds a secret: ${c.target}`);

        // One attempt left to finish on its own (bounded by 3 s), through the attempt boundary
        // (engine/attempt.ts) as the runner runs it: a result, never a satisfied one.
        const first = await checkOnce(c.probe, AbortSignal.timeout(3000), 1);
        assert(
          first.status === "pending" || first.status === "fatal",
          `a dead target must not satisfy ${kind.name}: ${JSON.stringify(first)}`,
        );
        assert(!first.error.includes(DEAD_MARK), `the result holds a secret: ${first.error}`);

        // One attempt aborted after 50 ms: the boundary ends it within 100 ms of the abort, and
        // the probe itself (its own promise, resolved or rejected) stops within a second, so
        // nothing it holds outlives the attempt for long.
        const ctl = new AbortController();
        const own = Promise.resolve().then(() => c.probe.check({ signal: ctl.signal, attempt: 2 }))
          .then(() => performance.now(), () => performance.now());
        const checking = checkOnce(c.probe, ctl.signal, 3);
        await new Promise((r) => setTimeout(r, 50));
        const abortedAt = performance.now();
        ctl.abort(new Error("run ended"));
        const second = await checking;
        const took = performance.now() - abortedAt;
        assert(took <= 100, `${kind.name} took ${took.toFixed(0)} ms to settle after an abort`);
        assert(
          second.status !== "satisfied",
          `aborted attempt satisfied: ${JSON.stringify(second)}`,
        );
        const stopped = await Promise.race([
          own,
          new Promise<undefined>((r) => setTimeout(() => r(undefined), 1000)),
        ]);
        assert(stopped !== undefined, `${kind.name}'s probe still ran 1 s after its abort`);

        await c.probe.close?.();
        await c.probe.close?.();
      }),
  });
}

Deno.test("conformance: help and completions list every flag of every kind with its values", async (t) => {
  const scripts = Object.fromEntries(
    ["bash", "zsh", "fish"].map((s) => [s, completionScript(s, registry)]),
  );
  for (const kind of registry.kinds) {
    await t.step(kind.name, () => {
      const help = kindHelp(kind);
      for (const f of kind.flags) {
        assert(help.includes(`--${f.name}`), `help ${kind.name} lacks --${f.name}`);
        for (const [shell, script] of Object.entries(scripts)) {
          assert(script.includes(f.name), `${shell} completion lacks ${kind.name} --${f.name}`);
          for (const v of f.values ?? []) {
            assert(script.includes(v), `${shell} completion lacks ${kind.name} --${f.name} ${v}`);
          }
        }
        for (const v of f.values ?? []) {
          assert(help.includes(v), `help ${kind.name} lacks value ${v} of --${f.name}`);
        }
      }
    });
  }
});

Deno.test({
  name:
    "conformance: through the CLI, every kind ends within 100 ms of the deadline on a dead target",
  ...opts,
  fn: () =>
    withDead(async (d) => {
      const { startCli } = await import("../e2e/_cli.ts");
      const results: string[] = [];
      const kinds = [...registry.kinds];
      // Three at a time: each run is start-up plus a 1 s deadline.
      const worker = async () => {
        for (let kind = kinds.shift(); kind; kind = kinds.shift()) {
          const row = deadTarget(kind.name)(d);
          const run = startCli(["-o", "jsonl", "-t", "1s", "-i", "100ms", ...row.args], {
            env: row.env,
          });
          // The start event is written when the run's clock starts (drivers already loaded).
          await run.waitFor("stdout", /"event":"start"/, 60_000).catch(() => "");
          const startSeen = performance.now();
          const r = await run.done();
          const end = JSON.parse(
            run.lines.stdout.findLast((l) => l.includes('"event":"end"')) ?? "{}",
          );
          const all = r.stdout + r.stderr;
          const wall = r.exitedAt - startSeen;
          if (r.code !== 1 && r.code !== 3) {
            results.push(`${kind.name}: exit ${r.code}\n${r.stderr}`);
          } else if (all.includes(DEAD_MARK)) results.push(`${kind.name}: a secret in the output`);
          else if (r.code === 1 && !(end.elapsed_seconds <= 1.1)) {
            results.push(`${kind.name}: the run took ${end.elapsed_seconds} s for a 1 s deadline`);
          } else if (wall > 1000 + 100 + 250) {
            // 250 ms for the pipe, the exit itself and a loaded CI machine.
            results.push(`${kind.name}: exited ${(wall - 1000).toFixed(0)} ms after the deadline`);
          }
        }
      };
      await Promise.all([worker(), worker(), worker()]);
      assertEquals(results, []);
    }),
});
