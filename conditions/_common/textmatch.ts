/**
 * `--contains TEXT` and `--matches REGEX` on a received message (udp's
 * reply, websocket's message; `--matches` alone for log and http): checked when parsed (JavaScript's syntax,
 * no I/O), again by `validateTextMatch` for the linear-time engine that runs
 * it (docs/contract.md §9), and judged by `textMatcher` in the probe.
 *
 * @module
 */

import { redactText, type SecretRegistry } from "../../engine/masking.ts";
import type { Fail, KindInput } from "../../engine/types.ts";
import { type Captures, toJsSyntax } from "./captures.ts";

/** What a received text must hold; neither given: anything does. */
export interface TextMatch {
  /** The text includes this (case-sensitive). */
  readonly contains: string | undefined;
  /** The text matches this regular expression (source). */
  readonly matches: string | undefined;
}

/**
 * `--matches REGEX` of `input` (its source), checked against JavaScript's
 * syntax with `flags`; an empty or bad expression is a usage error. RE2's
 * narrower syntax is checked by `validateRegex`.
 */
export function parseRegex(input: KindInput, flags = ""): string | undefined {
  const matches = input.string("matches");
  if (matches === undefined) return undefined;
  if (matches === "") input.fail("matches", "expected a regular expression, got nothing");
  checkRegexSyntax(input, "matches", matches, flags);
  return matches;
}

/**
 * Fails at `--flag` unless `source` is a regular expression in JavaScript's syntax (RE2's
 * `(?P<name>…)` included); RE2's narrower syntax is checked by `validateRegex`.
 */
export function checkRegexSyntax(
  input: KindInput,
  flag: string,
  source: string,
  flags = "",
): void {
  try {
    // RE2's `(?P<name>…)` is JavaScript's `(?<name>…)` (docs/contract.md §7, captures).
    new RegExp(toJsSyntax(source), flags);
  } catch (e) {
    const why = (e as Error).message.replace(/^Invalid regular expression: \/.*\/\w*: /s, "");
    input.fail(
      flag,
      `invalid regular expression /${source}/: ${why.charAt(0).toLowerCase()}${why.slice(1)}`,
    );
  }
}

/** The RE2 check of `--matches` (or of `--flag`'s pattern; validate step: it loads the regex engine). */
export async function validateRegex(
  matches: string | undefined,
  fail: Fail,
  flags = "",
  flag = "matches",
): Promise<void> {
  if (matches === undefined) return;
  const { re2Problem } = await import("./regex.ts");
  const why = re2Problem(matches, flags);
  if (why !== undefined) fail(flag, why);
}

/** `--contains` and `--matches` of `input`; an empty value or a bad expression is a usage error. */
export function parseTextMatch(input: KindInput): TextMatch {
  const contains = input.string("contains");
  if (contains === "") input.fail("contains", "expected a text, got an empty string");
  return { contains, matches: parseRegex(input) };
}

/** Whether anything is asked of the text. */
export function asksText(m: TextMatch): boolean {
  return m.contains !== undefined || m.matches !== undefined;
}

/** The RE2 check of `--matches` (validate step: it loads the regex engine). */
export function validateTextMatch(m: TextMatch, fail: Fail): Promise<void> {
  return validateRegex(m.matches, fail);
}

/** A judge's verdict on one text: why it does not hold, or what `--matches` captured. */
export type TextVerdict = { readonly why: string } | { readonly captures: Captures };

/** No captures: what a text that holds without `--matches` gives. */
const NONE: Captures = Object.freeze({});

/**
 * A judge of received texts (`does not contain "ready"`, or the captures of `--matches`). A
 * long text is matched off the main thread (`execText`); `signal` ends that. Loaded by probes
 * only.
 */
export async function textMatcher(
  m: TextMatch,
): Promise<(text: string, signal: AbortSignal) => Promise<TextVerdict>> {
  const regex = m.matches === undefined ? undefined : await import("./regex.ts");
  const re = regex?.compileRegex(m.matches!);
  return async (text, signal) => {
    if (m.contains !== undefined && !text.includes(m.contains)) {
      return { why: `does not contain ${JSON.stringify(m.contains)}` };
    }
    if (re === undefined) return { captures: NONE };
    const captures = await regex!.execText(re, text, signal);
    return captures === undefined ? { why: `does not match /${m.matches}/` } : { captures };
  };
}

/** The checks as words for a detail: `contains "ready"`, `matches /^ok/`. */
export function describeTextMatch(m: TextMatch): string {
  const parts: string[] = [];
  if (m.contains !== undefined) parts.push(`contains ${JSON.stringify(m.contains)}`);
  if (m.matches !== undefined) parts.push(`matches /${m.matches}/`);
  return parts.join(", ");
}

/** Longest text a preview shows. */
const PREVIEW_CHARS = 60;

/**
 * A received payload as a short quoted text for details and errors:
 * `"pong"`, `"a long text…" (120 B)`, or hex for binary data (`0x1c02…`).
 * The run's `secrets` are masked before the text is cut (docs/contract.md
 * §9); binary data that holds one is not shown at all.
 */
export function preview(bytes: Uint8Array, secrets?: SecretRegistry): string {
  const text = new TextDecoder("utf-8", { fatal: false }).decode(bytes);
  const shown = redactText(text, secrets);
  // deno-lint-ignore no-control-regex
  const binary = text.includes("\uFFFD") || /[\x00-\x08\x0e-\x1f\x7f]/.test(text);
  const size = `${bytes.length} B`;
  if (binary) {
    if (shown !== text) return `binary data (${size})`;
    const hex = Array.from(bytes.subarray(0, 24), (b) => b.toString(16).padStart(2, "0")).join("");
    return `0x${hex}${bytes.length > 24 ? "…" : ""} (${size})`;
  }
  // JSON's quoting escapes the control characters.
  if (shown.length <= PREVIEW_CHARS) return `${JSON.stringify(shown)} (${size})`;
  return `${JSON.stringify(shown.slice(0, PREVIEW_CHARS))}… (${size})`;
}
