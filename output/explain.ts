/**
 * `--explain` (`--dry-run`): the plan after full validation, as text or
 * JSON, with nothing probed (docs/contract.md §1).
 *
 * @module
 */

import type { Plan } from "../engine/plan.ts";
import { type Redact, redactDeep } from "./redact.ts";
import { headerLine } from "./text.ts";

/** The plan as a JSON-ready object (secrets removed). */
export function explainObject(plan: Plan, redact: Redact): Record<string, unknown> {
  const o = plan.options;
  const secs = (ms: number) => Number.isFinite(ms) ? Math.round(ms) / 1000 : null;
  return redactDeep({
    explain: true,
    options: {
      timeout_seconds: secs(o.timeoutMs),
      interval_seconds: secs(o.intervalMs),
      attempt_timeout_seconds: o.attemptTimeoutMs === undefined ? null : secs(o.attemptTimeoutMs),
      backoff: o.backoff,
      max_interval_seconds: secs(o.maxIntervalMs),
      jitter: o.jitter,
      delay_seconds: secs(o.delayMs),
      mode: o.mode,
      successes: o.successes,
      stable_for_seconds: secs(o.stableForMs),
      output: o.output,
      report: o.reportFile ?? null,
    },
    conditions: plan.conditions.map((c) => ({
      index: c.index,
      name: c.name,
      kind: c.kind.name,
      target: c.target,
      guard: c.guard,
      not: c.negate,
    })),
    then: plan.then ?? null,
  }, redact);
}

/** The plan as text lines. */
export function explainText(plan: Plan, redact: Redact): string {
  const lines = [headerLine(plan).replace("waiting for", "would wait for")];
  for (const c of plan.conditions) {
    const roles = [
      c.kind.name,
      c.guard ? "guard: exit 3 as soon as it holds" : "",
      c.negate ? "holds while the probe fails" : "",
    ].filter(Boolean);
    lines.push(`  ${c.index}. ${c.name} (${roles.join("; ")})`);
  }
  if (plan.then) lines.push(`then: ${plan.then.join(" ")}`);
  if (plan.options.reportFile) lines.push(`report: ${plan.options.reportFile}`);
  lines.push("nothing was probed (--explain)");
  return redact(lines.join("\n")) + "\n";
}
