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
import { redactText } from "./secrets.ts";
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
 * A probe's result with the URL passwords in its texts masked: they come from outside (a
 * server's answer, a command's output), where a password nobody registered may show
 * (docs/contract.md §9). A look for `://` per text, and the same result when there is none.
 */
function fromOutside(r: ProbeResult): ProbeResult {
  if (r.status !== "satisfied") {
    return r.error.includes("://") ? { ...r, error: redactText(r.error) } : r;
  }
  if (!r.detail.includes("://") && !r.summary?.includes("://")) return r;
  const out = { ...r, detail: redactText(r.detail) };
  return r.summary === undefined ? out : { ...out, summary: redactText(r.summary) };
}

/**
 * One attempt of `probe` under `ctl`: the probe's result, or the error rule's
 * for what it throws. When `ctl` aborts first, the attempt ends at once with
 * `aborted()`'s value, and the probe is left to finish (or fail) in the
 * background without an unhandled rejection. Not an async function, and no
 * race of promises: with a thousand attempts in flight, each suspended frame
 * is held a thousand times (docs/performance.md, "Cost per condition").
 */
export function attempt<A>(
  probe: Probe,
  ctl: Aborter,
  n: number,
  aborted: () => A,
): Promise<ProbeResult | A> {
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
      ctl.whenAborted = undefined;
      resolve(r);
    };
    ctl.whenAborted = () => end(aborted());
    if (ctl.signal.aborted) end(aborted());
    started.then((r) => end(fromOutside(r)), (e: unknown) => end(resultOf(e)));
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
