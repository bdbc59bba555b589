/**
 * Every text path of the redaction and escaping (docs/development.md, "Linear-time text
 * handling") takes time linear in its text, whatever the text holds: each is fed 1 MiB and
 * 4 MiB of text made to hurt a backtracking pattern (`x://` and letters, `a:` repeated, many
 * `@`, a secret glued over and over) and must take less than 8 times as long on the larger
 * one, and well under a second. A quadratic path takes 16 times as long, and minutes.
 */

import { assert } from "../_assert.ts";
import { maskArgvText, maskWords, redactUrl } from "../../engine/typed_secrets.ts";
import {
  clip,
  escapeControls,
  maskUrlPasswords,
  redactText,
  SecretRegistry,
} from "../../engine/masking.ts";
import type { ConditionReport, Report } from "../../engine/report.ts";
import { scrub } from "../../conditions/_common/datastore.ts";
import { escapeData, neutraliseLegacyCommands, stepSummary } from "../../output/ci.ts";
import { lineRedactor, makeRedactor, redactOutside } from "../../output/redact.ts";

const MIB = 1 << 20;

/** Adversarial texts of about `n` characters. */
function texts(n: number): Record<string, string> {
  const fill = (unit: string) => unit.repeat(Math.ceil(n / unit.length)).slice(0, n);
  return {
    "scheme then letters": "x://" + fill("a"),
    "a: repeated": fill("a:"),
    "://a:a:a…": "://" + fill("a:"),
    "many @": "x://" + fill("@"),
    "x://a:b@ repeated": fill("x://a:b@"),
    "x://x://…": fill("x://"),
    "glued secret": fill("WRONG"),
    "secret and blanks": fill("hunter22 "),
    "controls": fill("\x1b[3\n"),
    "legacy commands": fill("##["),
    "cells": fill("|\\\r\n"),
  };
}

/** The paths, each a function of one text. */
const registry = new SecretRegistry(["WRONG", "hunter22", "aaaa", "a:a:"]);
const redact = makeRedactor(registry);
const styled = lineRedactor(redact, true);
const plain = lineRedactor(redact, false);
const argv = ["postgres", "postgres://u:hunter22@h/db", "--password", "hunter22"];

/** A report whose last error is `text`, for the step summary. */
function reportOf(text: string): Report {
  const c: ConditionReport = {
    index: 1,
    name: "tcp h:1",
    kind: "tcp",
    target: "h:1",
    guard: false,
    satisfied: false,
    attempts: 1,
    detail: "",
    lastError: text,
    fatal: false,
    exhausted: false,
    stopped: false,
    elapsedMs: null,
    captures: {},
    group: undefined,
    groupName: undefined,
  };
  return {
    status: "timeout",
    elapsedMs: 1000,
    mode: "all",
    timeoutMs: 1000,
    conditions: [c],
    decidedBy: undefined,
    signal: undefined,
  };
}

const PATHS: Record<string, (t: string) => unknown> = {
  "SecretRegistry.mask": (t) => registry.mask(t),
  "redactText": (t) => redactText(t, registry),
  "maskUrlPasswords": (t) => maskUrlPasswords(t),
  "redactUrl": (t) => redactUrl(t),
  "maskWords": (t) => maskWords([t, "--token", t]),
  "maskArgvText": (t) => maskArgvText(t, argv, new Set(["password"])),
  "escapeControls": (t) => escapeControls(t),
  "clip": (t) => clip(t, 200, registry),
  "scrub": (t) => scrub(t, ["WRONG", "hunter22", "a:a:"]),
  "lineRedactor (styled)": (t) => styled(t),
  "lineRedactor": (t) => plain(t),
  "redactOutside": (t) => redactOutside(t, redact),
  "escapeData": (t) => escapeData(t),
  "neutraliseLegacyCommands": (t) => neutraliseLegacyCommands(t),
  "stepSummary": (t) => stepSummary(reportOf(t), redact),
};

/** The time of `f(text)`, in ms. */
function timeOf(f: (t: string) => unknown, text: string): number {
  const t0 = performance.now();
  f(text);
  return performance.now() - t0;
}

/**
 * Undefined when `f` took less than 8 times as long on 4 MiB as on 1 MiB (linear: 4), with 50 ms
 * for timers and the collector, the best of up to 3 measures each (the machine may be busy for a
 * moment), and under 5 s on 4 MiB in any case; else what was measured. A quadratic path takes
 * hours on 4 MiB.
 */
function linearOn(
  f: (t: string) => unknown,
  name: string,
  [small, large]: readonly [Record<string, string>, Record<string, string>],
): string | undefined {
  let t1 = Infinity;
  let t4 = Infinity;
  for (let round = 0; round < 3; round++) {
    t1 = Math.min(t1, timeOf(f, small[name]!));
    t4 = Math.min(t4, timeOf(f, large[name]!));
    if (t4 > 5000) break;
    if (t4 <= 8 * t1 + 50) return undefined;
  }
  const size = (t: string) => `${t.length >> 10} KiB`;
  return `${name}: ${t1.toFixed(1)} ms for ${size(small[name]!)}, ` +
    `${t4.toFixed(1)} ms for ${size(large[name]!)}`;
}

/** 16 and 64 KiB first: a quadratic path fails there in seconds, not after hours on 4 MiB. */
const SIZES = [[texts(16 << 10), texts(64 << 10)], [texts(MIB), texts(4 * MIB)]] as const;

for (const [path, f] of Object.entries(PATHS)) {
  Deno.test(`${path} is linear on adversarial text`, () => {
    for (const sizes of SIZES) {
      const slow = Object.keys(sizes[0]).map((name) => linearOn(f, name, sizes))
        .filter((s) => s !== undefined);
      assert(slow.length === 0, `${path} is not linear:\n${slow.join("\n")}`);
    }
  });
}

/** A YAML mapping of `n` keys, one a line; with `repeat`, its last key repeats the first. */
function mapping(n: number, repeat: boolean): string {
  const lines = Array.from({ length: n }, (_, i) => `key${i}: ${i}`);
  if (repeat) lines.push("key0: again");
  return lines.join("\n") + "\n";
}

// The package's own check of unique keys compared each key with every key before it: minutes
// of CPU for a mapping of 60,000 keys (a recipe's, a manifest's). Read with our check, 4 times
// the keys take about 4 times as long, and 60,000 of them seconds at most.
for (const [reader, all] of [["a recipe", false], ["a manifest", true]] as const) {
  Deno.test(`YAML of ${reader}: a mapping of 60,000 keys is read in linear time`, async () => {
    const { documentsOf, DUPLICATE_KEY } = await import("../../engine/yaml.ts");
    const { commonJsExports } = await import("../../engine/commonjs.ts");
    const yaml = commonJsExports(await import("yaml"));
    const read = (text: string) => documentsOf(yaml, text, { all, uniqueKeys: true, lines: !all });
    const texts = {
      "distinct keys": [mapping(15_000, false), mapping(60_000, false)],
      "the last key repeats the first": [mapping(15_000, true), mapping(60_000, true)],
    };
    const slow: string[] = [];
    for (const [name, [small, large]] of Object.entries(texts)) {
      const repeats = name !== "distinct keys";
      let t1 = Infinity;
      let t4 = Infinity;
      for (let round = 0; round < 3; round++) {
        t1 = Math.min(t1, timeOf(read, small!));
        const t0 = performance.now();
        const [doc] = read(large!);
        t4 = Math.min(t4, performance.now() - t0);
        assert(
          repeats
            ? doc!.error?.message === DUPLICATE_KEY && doc!.error.line === 60_001
            : doc!.error === undefined,
          `${name}: ${JSON.stringify(doc!.error)}`,
        );
        if (t4 > 30_000 || t4 <= 8 * t1 + 50) break;
      }
      // Generous for a machine at load 15 on 2 cores (about 3 s there); the quadratic check
      // took minutes.
      if (t4 > 8 * t1 + 50 || t4 > 30_000) {
        slow.push(`${name}: ${t1.toFixed(0)} ms for 15,000 keys, ${t4.toFixed(0)} ms for 60,000`);
      }
    }
    assert(slow.length === 0, `YAML of ${reader} is not linear:\n${slow.join("\n")}`);
  });
}
