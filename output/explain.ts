/**
 * `--explain` (`--dry-run`): the plan after full validation, as text or
 * JSON, with nothing probed (docs/contract.md §1): every condition with its
 * kind, target, flags and label, the groups that combine them, and `then`
 * quoted as a shell would need it. Secrets are masked where they stand
 * (docs/contract.md §9); waitcmd's own words never are.
 *
 * @module
 */

import type { ConditionPlan, GroupNode, Plan, PlanNode } from "../engine/plan.ts";
import { maskWords } from "../engine/typed_secrets.ts";
import { type Redact, redactDeep } from "./redact.ts";
import { quoteMasked } from "../engine/quote.ts";
import { headerLine } from "./text.ts";
import { paced, Pacer } from "../engine/pace.ts";
import { shownOptions } from "../engine/options.ts";

/**
 * The condition as a command line would write it: `[guard] [not] kind target --flag value`,
 * its secrets masked where they stand; with `raw`, the flags and command as given.
 */
function conditionWords(c: ConditionPlan, raw = false): string[] {
  const words = [
    ...(c.guard ? ["guard"] : []),
    ...(c.negate ? ["not"] : []),
    c.kindWord,
    ...(c.kind.target.shape === "command" || c.kind.target.shape === "none" || c.target === ""
      ? []
      : [c.target]),
    ...(raw ? c.words ?? [] : flagWords(c)),
  ];
  if (c.command !== undefined && c.command.length > 0) {
    words.push("--", ...(raw ? c.command : commandWords(c)));
  }
  return words;
}

/**
 * A condition's flags as shown: the values of its kind's secret flags, of credential-named
 * options and headers and the passwords of URLs masked where they stand (docs/contract.md §9).
 */
function flagWords(c: ConditionPlan): string[] {
  const secret = new Set(c.kind.flags.filter((f) => f.secret).map((f) => f.name));
  const words = c.words ?? [];
  return maskWords(words, secret, words.length).display;
}

/** exec's command as shown, its secrets masked where they stand. */
function commandWords(c: ConditionPlan): string[] {
  return maskWords(c.command ?? []).display;
}

/** The label a condition was given, if any (its name differs from what it would be). */
function labelOf(c: ConditionPlan): string | undefined {
  const natural = `${c.negate ? "not " : ""}${c.kindWord} ${c.target}`.trimEnd();
  return c.name === natural ? undefined : c.name;
}

/**
 * The plan as a JSON-ready object (secrets removed), made in slices with turns of the event
 * loop between them, so a signal is answered meanwhile (docs/contract.md §3).
 */
export async function explainObject(
  plan: Plan,
  redact: Redact,
  pacer: Pacer = new Pacer(),
): Promise<Record<string, unknown>> {
  const o = plan.options;
  const node = (n: PlanNode): Record<string, unknown> =>
    n.type === "leaf" ? { condition: n.condition.index } : {
      group: n.path,
      op: n.op,
      name: n.name,
      members: n.children.map(node),
    };
  return redactDeep({
    explain: true,
    options: shownOptions(o),
    conditions: await paced(conditionObjects(plan), pacer),
    plan: plan.root.children.map(node),
    then: plan.then ? maskWords(plan.then).display : null,
  }, redact);
}

/** Each condition's object for the JSON explanation; yields between them. */
function* conditionObjects(plan: Plan): Generator<void, Record<string, unknown>[]> {
  const out: Record<string, unknown>[] = [];
  for (const c of plan.conditions) {
    yield;
    out.push({
      index: c.index,
      name: c.name,
      kind: c.kind.name,
      target: c.target,
      label: labelOf(c) ?? null,
      flags: flagWords(c),
      ...(c.command ? { command: commandWords(c) } : {}),
      guard: c.guard,
      not: c.negate,
      ...(c.group === undefined ? {} : { group: c.group }),
      words: conditionWords(c),
    });
  }
  return out;
}

/**
 * The plan as text lines, made in slices with turns of the event loop between them, so a
 * signal is answered meanwhile (docs/contract.md §3).
 */
export async function explainText(
  plan: Plan,
  redact: Redact,
  pacer: Pacer = new Pacer(),
): Promise<string> {
  return await paced(textLines(plan, redact), pacer);
}

/** The text explanation; yields between conditions. */
function* textLines(plan: Plan, redact: Redact): Generator<void, string> {
  const lines = [headerLine(plan).replace("waiting for", "would wait for")];
  function* walk(n: PlanNode, indent: string): Generator<void, void> {
    yield;
    if (n.type === "group") {
      lines.push(`${indent}group ${n.path}: ${groupText(n)}`);
      for (const child of n.children) yield* walk(child, indent + "  ");
      return;
    }
    const c = n.condition;
    const label = labelOf(c);
    const roles = [
      c.guard ? "guard: exit 3 as soon as it holds" : "",
      c.negate ? "holds while the probe fails" : "",
    ].filter(Boolean);
    lines.push(
      `${indent}${c.index}. ${label === undefined ? "" : `${label}: `}${
        quoteMasked(conditionWords(c, true), conditionWords(c))
      }${roles.length ? ` (${roles.join("; ")})` : ""}`,
    );
  }
  for (const n of plan.root.children) yield* walk(n, "  ");
  plan.options.start.forEach((c, i) => lines.push(`start ${i + 1}: ${c.shown}`));
  if (plan.options.startLog) lines.push(`start log: ${plan.options.startLog}`);
  if (plan.then) lines.push(`then: ${quoteMasked(plan.then, maskWords(plan.then).display)}`);
  if (plan.options.reportFile) lines.push(`report: ${plan.options.reportFile}`);
  lines.push("nothing was probed (--explain)");
  return redact(lines.join("\n")) + "\n";
}

/** `any[tcp a:1, tcp b:2] (one member must hold)`. */
function groupText(g: GroupNode): string {
  return `${g.name} (${g.op === "any" ? "one member must hold" : "every member must hold"})`;
}
