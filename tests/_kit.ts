/**
 * The shared test kit: what unit tests of kinds and the conformance suite
 * need, once (parse a command line, get its usage error, make a condition's
 * probe), and the rule for tests that need a service.
 *
 * @module
 */

import { registry } from "../conditions/all.ts";
import { realClock } from "../engine/clock.ts";
import { UsageError } from "../engine/errors.ts";
import { parseArgv } from "../engine/grammar.ts";
import type { ConditionPlan, Plan } from "../engine/plan.ts";
import { preparePlan, type ReadyPlan, validatePlan } from "../engine/prepare.ts";
import type { Probe } from "../engine/types.ts";

/**
 * The usage-error line `waitcmd ARGS` would print (parsing and library
 * validation), or "" when the arguments are valid.
 */
export async function usageError(
  args: readonly string[],
  env: Record<string, string> = {},
): Promise<string> {
  try {
    const c = parseArgv(args, registry, env);
    if (c.type === "run") await validatePlan(c.plan);
    return "";
  } catch (e) {
    if (e instanceof UsageError) return e.format();
    throw e;
  }
}

/** The usage-error line of the synchronous parse alone, or "" when it parses. */
export function parseError(args: readonly string[], env: Record<string, string> = {}): string {
  try {
    parseArgv(args, registry, env);
    return "";
  } catch (e) {
    if (e instanceof UsageError) return e.format();
    throw e;
  }
}

/** The plan of a command line that must parse. */
export function plan(args: readonly string[], env: Record<string, string> = {}): Plan {
  const c = parseArgv(args, registry, env);
  if (c.type !== "run") throw new Error(`expected a run, got ${c.type}`);
  return c.plan;
}

/** The options a kind's `parse` gave the first condition of `args`. */
export function optionsOf<O>(args: readonly string[], env: Record<string, string> = {}): O {
  return plan(args, env).conditions[0]!.options as O;
}

/** The first condition of `args`. */
export function conditionOf(args: readonly string[]): ConditionPlan {
  return plan(args).conditions[0]!;
}

/**
 * The plan of `args` with its probes made (kinds loaded), on the real clock, in this
 * process (isolated kinds too: the CLI runs those in workers, engine/isolate.ts).
 */
export async function readyPlan(
  args: readonly string[],
  env: Record<string, string> = {},
): Promise<ReadyPlan> {
  const p = plan(args, env);
  await validatePlan(p);
  return await preparePlan(p, { clock: realClock, env }, { inProcess: true });
}

/** The probe of the first condition of `args`. */
export async function probeOf(
  args: readonly string[],
  env: Record<string, string> = {},
): Promise<Probe> {
  return (await readyPlan(args, env)).conditions[0]!.probe;
}

/** Whether this run is CI's (`CI=true`): there a missing service fails instead of being ignored. */
export function inCi(): boolean {
  return !!Deno.env.get("CI");
}

/**
 * The `ignore` value of a test that needs a service: `unavailable` is why it
 * cannot be had (undefined when it can). Outside CI the test is ignored and
 * the reason printed; in CI it runs, and fails on the missing service.
 */
export function ignoreWithout(name: string, unavailable: string | undefined): boolean {
  if (unavailable === undefined || inCi()) return false;
  console.error(`ignored: tests needing ${name}: ${unavailable}`);
  return true;
}

/**
 * Declares a test against a throwaway server of its own (tests/services), made by
 * `service.make` and removed after, ignored where the service cannot be had
 * ({@link ignoreWithout}). Its CLI runs and the server outlive the sanitizers' view, which are off.
 */
export function serverTest<S extends { remove(): Promise<unknown> }>(
  name: string,
  service: {
    /** The service, for the reason a test is ignored. */
    readonly name: string;
    /** Why the service cannot be had here, or undefined. */
    readonly missing: string | undefined;
    make(): Promise<S>;
  },
  fn: (server: S, t: Deno.TestContext) => Promise<void>,
): void {
  Deno.test({
    name,
    ignore: ignoreWithout(service.name, service.missing),
    sanitizeResources: false,
    sanitizeOps: false,
    fn: async (t) => {
      const server = await service.make();
      try {
        await fn(server, t);
      } finally {
        await server.remove();
      }
    },
  });
}

/** Why there is no IPv6 loopback here, or undefined (for `ignoreWithout`). */
export const noIpv6: string | undefined = (() => {
  try {
    Deno.listen({ hostname: "::1", port: 0 }).close();
    return undefined;
  } catch (e) {
    return `cannot listen on ::1: ${e instanceof Error ? e.message : e}`;
  }
})();

/** Splits an example's argument string like a POSIX shell would (quotes, no expansion). */
export function shellWords(s: string): string[] {
  const out: string[] = [];
  let cur = "";
  let inWord = false;
  for (let i = 0; i < s.length; i++) {
    const ch = s[i]!;
    if (ch === "'") {
      const end = s.indexOf("'", i + 1);
      cur += s.slice(i + 1, end);
      i = end;
      inWord = true;
    } else if (ch === '"') {
      const end = s.indexOf('"', i + 1);
      cur += s.slice(i + 1, end);
      i = end;
      inWord = true;
    } else if (ch === " ") {
      if (inWord) out.push(cur);
      cur = "";
      inWord = false;
    } else {
      cur += ch;
      inWord = true;
    }
  }
  if (inWord) out.push(cur);
  return out;
}

/** Variables the examples may name (tokens and passwords read from the environment). */
export const EXAMPLE_ENV: Readonly<Record<string, string>> = {
  HOME: "/root",
  API_TOKEN: "example-token",
  TOKEN: "example-token",
  PASSWORD: "example-password",
  SSH_PASSWORD: "example-password",
  DB_PASSWORD: "example-password",
  VM_PASSWORD: "example-password",
};

/** Directory of the repository. */
export const repoRootDir: string = new URL("../", import.meta.url).pathname.replace(/\/$/, "");

/** The npm packages a Deno cache holds (`registry.npmjs.org/<name>/<version>/`). */
export async function cachedPackages(denoDir: string): Promise<string[]> {
  const found: string[] = [];
  const walk = async (dir: string, depth: number) => {
    for await (const e of Deno.readDir(dir)) {
      if (!e.isDirectory) continue;
      if (depth === 0) found.push(`${dir}/${e.name}`);
      else await walk(`${dir}/${e.name}`, e.name.startsWith("@") ? depth : depth - 1);
    }
  };
  await walk(`${denoDir}/npm/registry.npmjs.org`, 1).catch((e) => {
    if (!(e instanceof Deno.errors.NotFound)) throw e;
  });
  return found;
}
