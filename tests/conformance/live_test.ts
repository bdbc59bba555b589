/**
 * The live conformance suite: one set of scenarios, run through the CLI
 * against every kind's real target (as restic runs one suite against every
 * live backend through a per-backend config). Each kind's row (its folder's
 * `_suite.ts`, found through the registry: tests/_suite.ts) starts its real service or makes its local target, and
 * names the arguments that are satisfied, those that stay pending with their
 * `last_error`, how the target goes down and comes back, and its
 * credentials. The scenarios, once per row:
 *
 * - late start: pending while the target is down, then satisfied; the
 *   process exits at once after its verdict (no driver holds it);
 * - satisfied: the human line (and a `then` command undisturbed by anything
 *   left of the probe), and the JSON report;
 * - timeout: pending until the deadline, exit 1, in JSON (checked against
 *   docs/report.schema.json, as every report the runner reads) and text;
 * - wrong credential: pending with `authentication failed`, then exit 1;
 *   where the service can add a user, accepted once it has it; where the
 *   kind reads passwords from `--password-env` and `--password-file`,
 *   both work, the file read again at each attempt;
 * - no secret: no secret of the row in any output of any of its runs (text,
 *   json, jsonl), nor in `--report`, `--explain` or a usage error;
 * - restart: satisfied again after the target went down and came back;
 * - tls, where the row starts a server of the kind with TLS (the kinds that
 *   reach TLS through their driver's own options): satisfied verified by
 *   name and unverified, with the detail naming TLS; an untrusted or
 *   misnamed certificate retried as pending (until the row's deadline).
 *
 * A row says why a scenario does not apply to its kind (tls is only where
 * a row gives it). A kind of the
 * registry without a row fails. Rows run a few at a time (their runs mostly
 * wait); each test reports its row's scenarios as steps.
 */

import { assert, assertEquals, assertMatch } from "../_assert.ts";
import { registry } from "../../conditions/all.ts";
import { ignoreWithout } from "../_kit.ts";
import { inTempDir } from "../services/_util.ts";
import { makePki } from "../services/tls.ts";
import {
  assertTlsRetried,
  type CliOptions,
  type CliResult,
  late,
  literal,
  runCli,
  runJson,
  runJsonl,
  usageErrorLine,
} from "../e2e/_cli.ts";
import { kindSuites, type LiveRow, type LiveTarget, type Scenario, suiteFile } from "../_suite.ts";

const { suites, missing } = await kindSuites();
/** Each kind's live row, from its folder (conditions/<kind>/_suite.ts). */
const LIVE_ROWS: Record<string, LiveRow> = Object.fromEntries(
  [...suites].map(([kind, s]) => [kind, s.live]),
);

/** Rows run at the same time (each row's runs are mostly waits on its target). */
const WINDOW = 3;
/** Pace of the runs that end satisfied. */
const FAST = ["--timeout", "60s", "--interval", "200ms"];
/** How long after its verdict a run may take to exit (closing the probe, writing the report). */
const EXIT_AFTER_VERDICT_MS = 3000;

const source = (m: string | RegExp) => typeof m === "string" ? literal(m) : m.source;
const matches = (text: string, m: string | RegExp) =>
  typeof m === "string" ? text.includes(m) : m.test(text);

/** One row's live target and every output its runs wrote (for the secret scenario). */
class Row {
  readonly seen: string[] = [];
  constructor(readonly kind: string, readonly t: LiveTarget) {}

  /** Options of every run of this row. */
  opts(extra: CliOptions = {}): CliOptions {
    return { env: this.t.env, wrapper: this.t.wrapper, ...extra };
  }

  /** Records what a run wrote. */
  keep<R extends CliResult>(r: R): R {
    this.seen.push(r.stdout, r.stderr);
    return r;
  }

  /** The pending runs' pace: a deadline of `t.deadline` (default 1s). */
  short(): string[] {
    return ["--timeout", this.t.deadline ?? "1s", "--interval", "200ms"];
  }
}

/** The scenarios, in the order they run (late start first: it brings the target up). */
const SCENARIOS: {
  id: Scenario;
  name: string;
  run: (r: Row) => Promise<void>;
  /** A row without the scenario's target needs no reason why not. */
  optional?: boolean;
}[] = [
  {
    id: "late",
    name: "late start: pending while the target is down, then satisfied; exits at once",
    run: async (row) => {
      const { t } = row;
      const r = row.keep(
        await runJsonl([...FAST, ...t.satisfied], row.opts({ onAttempt: late((c) => t.up(c)) })),
      );
      assertEquals([r.code, r.stderr, r.report.status], [0, "", "satisfied"], r.stdout);
      const first = r.attempts[0]!;
      assert(!first.ok, `the first attempt held before the target was up: ${first.detail}`);
      assert(matches(first.error, t.downError), `first error: ${first.error}`);
      assert(r.attempts.at(-1)!.ok, "the run ends on a success");
      const exit = r.exitedAt - r.lastAttemptAt;
      assert(exit < EXIT_AFTER_VERDICT_MS, `exited ${exit.toFixed(0)} ms after the verdict`);
    },
  },
  {
    id: "satisfied",
    name: "satisfied: the human line, a then command undisturbed, the JSON report",
    run: async (row) => {
      const { t } = row;
      const then = ["--", "then", "sh", "-c", "sleep 0.5; echo then-done"];
      const [text, j] = await Promise.all([
        runCli([...FAST, ...t.satisfied, ...then], row.opts()).then((r) => row.keep(r)),
        runJson([...FAST, ...t.satisfied], row.opts()).then((r) => row.keep(r)),
      ]);
      assertEquals([j.code, j.stderr, j.json.status], [0, "", "satisfied"], j.stdout);
      const c = j.json.conditions[0]!;
      assertEquals([c.kind, c.satisfied, c.attempts, c.last_error], [row.kind, true, 1, ""]);
      assertEquals(c.name, `${t.satisfied[0]} ${c.target}`);
      assertMatch(c.detail, new RegExp(`^(?:${t.detail.source})$`));
      // stdout is the then command's; stderr the header, the one attempt, the summary.
      assertEquals([text.code, text.stdout], [0, "then-done\n"], text.stderr);
      const lines = text.stderr.trimEnd().split("\n");
      assertEquals(lines.length, 3, text.stderr);
      assertMatch(lines[0]!, /^waitcmd: waiting for 1 condition \(timeout 1m, interval 200ms\)$/);
      assertMatch(
        lines[1]!,
        new RegExp(`^\\[ok\\] ${literal(c.name)} attempt 1 \\(\\d+\\.\\ds\\): ${t.detail.source}$`),
      );
      assertMatch(lines[2]!, /^waitcmd: satisfied in \d+\.\ds \(1\/1 conditions\)$/);
    },
  },
  {
    id: "timeout",
    name: "timeout: pending until the deadline, exit 1, in JSON (schema) and text",
    run: async (row) => {
      await assertTimesOut(row, row.t.pending, row.t.pendingError, 1);
    },
  },
  {
    id: "credential",
    name: "wrong credential: refused until the deadline (exit 1; or fatal); accepted late",
    run: async (row) => {
      const { t } = row;
      const wrong = t.wrong!;
      const error = wrong.error ?? "authentication failed";
      if (wrong.fatal) await assertFatal(row, wrong.args, error);
      else await assertTimesOut(row, wrong.args, error, 2);
      if (t.grant) {
        // A login the service does not know yet, then added: pending, then satisfied.
        const r = row.keep(
          await runJsonl([...FAST, ...t.grant.args], row.opts({ onAttempt: late(t.grant.add) })),
        );
        assertEquals([r.code, r.report.status], [0, "satisfied"], r.stderr);
        assertMatch(r.attempts[0]!.error, /authentication failed/);
      }
      if (t.passwordFlags) {
        // --password-env, and --password-file written once the run started (read at each attempt).
        const { bare, password } = t.passwordFlags;
        await inTempDir("waitcmd-live-pw-")(async (dir) => {
          const file = `${dir}/pw`;
          const r = row.keep(
            await runJsonl(
              [
                ...FAST,
                ...[...bare, "--password-env", "WAITCMD_LIVE_PW"],
                "--",
                ...[...bare, "--password-file", file],
              ],
              {
                ...row.opts({ onAttempt: late(() => Deno.writeTextFile(file, `${password}\n`)) }),
                env: { ...t.env, WAITCMD_LIVE_PW: password },
              },
            ),
          );
          assertEquals([r.code, r.report.status], [0, "satisfied"], r.stderr);
          const unread = `cannot read --password-file ${file}: no such file or directory`;
          assert(r.attempts.some((a) => a.error === unread), JSON.stringify(r.attempts));
          assert(r.report.conditions.every((c) => c.satisfied));
        });
      }
    },
  },
  {
    id: "secret",
    name: "no secret in any output: text, json, jsonl, --report, --explain, a usage error",
    run: (row) =>
      inTempDir("waitcmd-live-secret-")(async (dir) => {
        const { t } = row;
        const marks = [...new Set(t.secrets!.flatMap((s) => [s, encodeURIComponent(s)]))];
        const all = [
          ...t.satisfied,
          "--",
          ...t.pending,
          ...(t.wrong ? ["--", ...t.wrong.args] : []),
        ];
        const report = `${dir}/report.json`;
        const [jsonl, explain, explainJson] = await Promise.all([
          runCli(["-o", "jsonl", "--report", report, ...row.short(), ...all], row.opts()),
          runCli(["--explain", ...all], row.opts()),
          runCli(["--explain", "-o", "json", ...all], row.opts()),
        ]);
        const code = t.wrong?.fatal ? 3 : 1;
        assertEquals([jsonl.code, explain.code, explainJson.code], [code, 0, 0], jsonl.stderr);
        const outputs = [
          ...row.seen,
          ...[jsonl, explain, explainJson].flatMap((r) => [r.stdout, r.stderr]),
          await Deno.readTextFile(report),
        ];
        if (t.usage) {
          const u = await runCli([...t.usage], row.opts());
          usageErrorLine(u);
          outputs.push(u.stdout, u.stderr);
        }
        for (const text of outputs) {
          for (const m of marks) assert(!text.includes(m), `the secret ${m} shows:\n${text}`);
        }
      }),
  },
  {
    id: "restart",
    name: "restart: down after a success, back up, satisfied again",
    run: async (row) => {
      const { t } = row;
      let phase = "up";
      // The process is stopped (SIGSTOP) while the target goes down, so that at most the one
      // attempt already running can succeed after the first: with --successes 3 the run
      // cannot end before an attempt has seen the target down.
      const r = row.keep(
        await runJsonl(
          ["--timeout", "60s", "--interval", "300ms", "--successes", "3", ...t.satisfied],
          row.opts({
            onAttempt: async (a, _all, child) => {
              if (phase === "up" && a.ok) {
                phase = "going down";
                child.kill("SIGSTOP");
                try {
                  await t.down!(child);
                } finally {
                  child.kill("SIGCONT");
                }
                phase = "down";
              } else if (phase === "down" && !a.ok) {
                phase = "coming up";
                await t.up(child);
                phase = "up again";
              }
            },
          }),
        ),
      );
      assertEquals([r.code, r.report.status, phase], [0, "satisfied", "up again"], r.stderr);
      const firstOk = r.attempts.findIndex((a) => a.ok);
      const failed = r.attempts.slice(firstOk).filter((a) => !a.ok);
      assert(failed.some((a) => matches(a.error, t.downError)), JSON.stringify(failed));
      assert(r.attempts.at(-1)!.ok, "the run ends on a success");
    },
  },
  {
    id: "tls",
    name: "tls: verified by name, unverified; untrusted or misnamed retried as pending",
    optional: true,
    run: async (row) => {
      // The certificate names localhost only, not 127.0.0.1.
      const pki = await makePki({ server: { dnsNames: ["localhost"], ips: [] } });
      const other = await makePki({});
      try {
        const tls = await row.t.tls!(pki, other);
        try {
          for (const args of tls.satisfied) {
            const r = row.keep(await runJson([...FAST, row.kind, ...args], row.opts()));
            assertEquals([r.code, r.stderr], [0, ""], args.join(" "));
            const detail = r.json.conditions[0]!.detail;
            if (typeof tls.detail === "string") assertEquals(detail, tls.detail);
            else assertMatch(detail, tls.detail);
          }
          await assertTlsRetried(row.kind, tls.pending, row.short());
        } finally {
          await tls.remove();
        }
      } finally {
        await pki.cleanup();
        await other.cleanup();
      }
    },
  },
];

/** Runs `args` (pending) to the deadline in JSON and in text: exit 1, the error named. */
async function assertTimesOut(
  row: Row,
  args: readonly string[],
  error: string | RegExp,
  minAttempts: number,
): Promise<void> {
  const short = row.short();
  const [j, text] = await Promise.all([
    runJson([...short, ...args], row.opts()).then((r) => row.keep(r)),
    runCli([...short, ...args], row.opts()).then((r) => row.keep(r)),
  ]);
  assertEquals([j.code, j.stderr, j.json.status], [1, "", "timeout"], j.stdout);
  const c = j.json.conditions[0]!;
  assertEquals([c.kind, c.satisfied, c.detail], [row.kind, false, ""]);
  assert(matches(c.last_error, error), `last_error: ${c.last_error}`);
  assert(c.attempts >= minAttempts, `${c.attempts} attempts`);
  assertEquals([text.code, text.stdout], [1, ""]);
  assertMatch(
    text.stderr,
    new RegExp(
      `waitcmd: timed out after ${literal(short[1]!)}; not satisfied: ${literal(c.name)}: .*${
        source(error)
      }`,
    ),
  );
}

/** Runs `args` (refused at once) in JSON and in text: exit 3 after one attempt, the error named. */
async function assertFatal(row: Row, args: readonly string[], error: string | RegExp) {
  const [j, text] = await Promise.all([
    runJson([...FAST, ...args], row.opts()).then((r) => row.keep(r)),
    runCli([...FAST, ...args], row.opts()).then((r) => row.keep(r)),
  ]);
  assertEquals([j.code, j.stderr, j.json.status], [3, "", "fatal"], j.stdout);
  const c = j.json.conditions[0]!;
  assertEquals([c.kind, c.satisfied, c.fatal, c.attempts], [row.kind, false, true, 1]);
  assert(matches(c.last_error, error), `last_error: ${c.last_error}`);
  assertEquals([text.code, text.stdout], [3, ""]);
  assertMatch(text.stderr, new RegExp(`waitcmd: fatal: ${literal(c.name)}: .*${source(error)}`));
}

/** What one step of a row's test reports. */
interface Outcome {
  readonly name: string;
  /** Why the scenario does not apply (the step is ignored). */
  readonly skip?: string;
  readonly error?: unknown;
}

/** Needs of each scenario: what the row's target must give for it to run. */
const NEEDS: Partial<Record<Scenario, (t: LiveTarget) => boolean>> = {
  credential: (t) => t.wrong !== undefined,
  secret: (t) => t.secrets !== undefined && t.secrets.length > 0,
  restart: (t) => t.down !== undefined,
  tls: (t) => t.tls !== undefined,
};

/** Runs every scenario of one row; never throws (each failure is its step's). */
async function runRow(kind: string, row: LiveRow): Promise<Outcome[]> {
  let target: LiveTarget;
  try {
    target = await row.make();
  } catch (e) {
    return [{ name: "the live target starts", error: e }];
  }
  const r = new Row(kind, target);
  const out: Outcome[] = [];
  try {
    for (const s of SCENARIOS) {
      const na = row.na?.[s.id];
      const gives = NEEDS[s.id]?.(target) ?? true;
      if (na !== undefined) {
        out.push({
          name: `${s.id}: does not apply: ${na}`,
          skip: na,
          error: gives && s.id !== "late"
            ? new Error(`the row gives a ${s.id} target yet says it does not apply`)
            : undefined,
        });
        if (s.id === "late") await target.up().catch(() => {});
        continue;
      }
      if (!gives) {
        if (s.optional) continue;
        out.push({ name: s.name, error: new Error(`no ${s.id} target, and no reason why not`) });
        continue;
      }
      try {
        await s.run(r);
        out.push({ name: s.name });
      } catch (e) {
        out.push({ name: s.name, error: e });
        // A later scenario needs the target up.
        await target.up().catch(() => {});
      }
    }
  } finally {
    await target.remove().catch((e) => out.push({ name: "the live target stops", error: e }));
  }
  return out;
}

const kinds = registry.kinds.map((k) => k.name);
const ignored = new Map<string, boolean>();
for (const kind of kinds) {
  const row = LIVE_ROWS[kind];
  ignored.set(kind, row ? ignoreWithout(row.needs, await row.missing?.()) : false);
}

/** Started rows, by kind: each starts when its test or one up to WINDOW - 1 before it runs. */
const started = new Map<string, Promise<Outcome[]>>();
function start(kind: string): Promise<Outcome[]> {
  let p = started.get(kind);
  if (!p) {
    p = runRow(kind, LIVE_ROWS[kind]!);
    started.set(kind, p);
  }
  return p;
}

Deno.test("live: every registered kind has a row, and every row a kind", () => {
  assertEquals(missing, [], "kinds whose folder has no usable suite file");
  assertEquals(kinds.filter((k) => !LIVE_ROWS[k]), [], "kinds without a live row");
  assertEquals(Object.keys(LIVE_ROWS).filter((k) => !kinds.includes(k)), [], "rows of no kind");
});

for (const [i, kind] of kinds.entries()) {
  const row = LIVE_ROWS[kind];
  Deno.test({
    name: `live ${kind}: ${row?.needs ?? "no row"}`,
    ignore: ignored.get(kind),
    sanitizeOps: false,
    sanitizeResources: false,
    fn: async (t) => {
      assert(row, `the kind ${kind} has no live row (${suiteFile(kind)})`);
      const next = kinds.slice(i, i + WINDOW).filter((k) => LIVE_ROWS[k] && !ignored.get(k));
      for (const k of next) start(k);
      for (const o of await start(kind)) {
        await t.step({
          name: o.name,
          ignore: o.skip !== undefined && o.error === undefined,
          fn: () => {
            if (o.error !== undefined) throw o.error;
          },
        });
      }
    },
  });
}
