/**
 * The boundary of one attempt, where the error rule (docs/contract.md §8) is
 * applied once for every kind: what a probe's `check` throws becomes its
 * result, and an abort ends the attempt at once whatever the probe is still
 * waiting for (a library's import, a driver that ignores signals). Probes
 * return or throw; only this module settles.
 *
 * @module
 */

import { Aborter, onAbort } from "./abort.ts";
import { describeError, FatalError, hintOf } from "./errors.ts";
import { redactText, type SecretRegistry } from "./masking.ts";
import { mark } from "./trace.ts";
import type { Probe, ProbeResult } from "./types.ts";

/**
 * The result the error rule gives a thrown value: `FatalError` is fatal, anything else pending;
 * the hint it carries (`withHint`) comes along.
 */
export function resultOf(e: unknown): ProbeResult {
  const hint = hintOf(e);
  const error = e instanceof FatalError ? e.message : describeError(e);
  const status = e instanceof FatalError ? "fatal" : "pending";
  return hint === undefined ? { status, error } : { status, error, hint };
}

/**
 * A probe's result with its texts from outside masked (docs/contract.md §9): they come from a
 * server's answer, a command's output or a library's error, where a registered secret (as
 * written or percent-encoded, at least 4 characters, not glued to a word) or a password nobody
 * registered may show. This is where a secret is masked by value, once: waitcmd's own words are
 * never (the output masks no registered secret in them). The captures stay as matched: `then`
 * gets them so, and the output masks them (output/json.ts). The same result when nothing is
 * to mask.
 */
export function fromOutside(r: ProbeResult, secrets?: SecretRegistry): ProbeResult {
  const clean = (t: string) => redactText(t, secrets);
  if (r.status !== "satisfied") {
    const error = clean(r.error);
    const hint = r.hint === undefined ? undefined : clean(r.hint);
    if (error === r.error && hint === r.hint) return r;
    return hint === undefined ? { ...r, error } : { ...r, error, hint };
  }
  const detail = clean(r.detail);
  const summary = r.summary === undefined ? undefined : clean(r.summary);
  if (detail === r.detail && summary === r.summary) return r;
  return summary === undefined ? { ...r, detail } : { ...r, detail, summary };
}

/**
 * One attempt of `probe` under `ctl`: the probe's result, or the error rule's
 * for what it throws. When `ctl` aborts first, the attempt ends at once with
 * `aborted()`'s value, and the probe is left to finish (or fail) in the
 * background without an unhandled rejection. Not an async function, and no
 * race of promises: with a thousand attempts in flight, each suspended frame
 * is held a thousand times (docs/performance.md, "Cost per condition").
 * `secrets`: the run's registry, masked by value in the result's texts.
 */
export function attempt<A>(
  probe: Probe,
  ctl: Aborter,
  n: number,
  aborted: () => A,
  secrets?: SecretRegistry,
): Promise<ProbeResult | A> {
  mark("attempt-start");
  let started: Promise<ProbeResult>;
  try {
    // Promise.resolve: a check that breaks its type and returns a plain value still settles.
    started = Promise.resolve(probe.check({ signal: ctl.signal, attempt: n }));
  } catch (e) {
    started = Promise.reject(e);
  }
  return new Promise((resolve) => {
    let settled = false;
    const end = (r: ProbeResult | A) => {
      if (settled) return;
      settled = true;
      mark("attempt-end");
      ctl.whenAborted = undefined;
      resolve(r);
    };
    ctl.whenAborted = () => end(aborted());
    if (ctl.signal.aborted) end(aborted());
    started.then(
      (r) => end(fromOutside(r, secrets)),
      (e: unknown) => end(fromOutside(resultOf(e), secrets)),
    );
  });
}

/**
 * One attempt of `probe` under a caller's `signal` (tests, the conformance
 * suite, probes built on other probes): never throws, and ends at once as
 * pending with the abort's reason when `signal` aborts.
 */
export function checkOnce(probe: Probe, signal: AbortSignal, n = 1): Promise<ProbeResult> {
  const ctl = new Aborter();
  const off = onAbort(signal, () => ctl.abort(signal.reason));
  return attempt(probe, ctl, n, (): ProbeResult => ({
    status: "pending",
    error: signal.reason instanceof Error ? describeError(signal.reason) : "aborted",
  })).finally(off);
}
