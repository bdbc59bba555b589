/**
 * svcmgr end to end: the CLI against a real `systemd --user` manager
 * (conditions/svcmgr/_service.ts), asked over its D-Bus and, with the bus made
 * unreachable, through `systemctl --user`.
 *
 * The system manager (svcmgr without --user) is reached the same way on a
 * different bus: here DBUS_SYSTEM_BUS_ADDRESS is pointed at the user
 * manager's bus, which exercises that path without a systemd as PID 1.
 *
 * The JSON report of a satisfied run (by the alias systemd), a unit started
 * late or restarted, and a timeout are the live conformance suite's
 * (tests/conformance/live_test.ts).
 */

import { assert, assertEquals, assertMatch, assertStringIncludes } from "../../tests/_assert.ts";
import { ignoreWithout } from "../../tests/_kit.ts";
import { sh } from "../../tests/services/_util.ts";
import { startSystemdUser, SYSTEMD_BIN } from "./_service.ts";
import { expectJson, runCli, runJson, timing, usageErrorLine } from "../../tests/e2e/_cli.ts";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Quick runs: small timeout and interval, as every test must. */
const FAST = ["--timeout", "5s", "--interval", "200ms"];
/**
 * An interval longer than the timeout: a run that ends satisfied before the
 * timeout was woken by a D-Bus signal, not by polling.
 */
const EVENTS_ONLY = ["--timeout", "8s", "--interval", "30s"];

/** How long a test lets waitcmd start and make its first attempt before changing a unit. */
const SETTLE_MS = 1500;

/** The units of this file; `dir` holds the flag file that makes flap.service fail. */
const units = (dir: string): Record<string, string> => ({
  "ok.service": "[Service]\nExecStart=/bin/sleep 1000\n",
  "idle.service": "[Service]\nExecStart=/bin/sleep 1000\n",
  "bad.service": "[Service]\nExecStart=/bin/false\n",
  // A oneshot is "activating" while it runs, never "active": it goes straight to failed.
  "crash.service": "[Service]\nType=oneshot\nExecStart=/bin/sh -c 'sleep 0.3; exit 1'\n",
  "late.service": "[Service]\nExecStart=/bin/sleep 1000\n",
  "stopme.service": "[Service]\nExecStart=/bin/sleep 1000\n",
  // Runs until the test creates the flag file, then fails.
  "flap.service":
    `[Service]\nExecStart=/bin/sh -c 'while [ ! -e ${dir}/flap.fail ]; do sleep 0.05; done; rm -f ${dir}/flap.fail; exit 2'\n`,
  "tick.timer": "[Timer]\nOnActiveSec=1h\nUnit=ok.service\n",
});

async function poll(what: string, f: () => Promise<boolean>, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (await f()) return;
    await sleep(50);
  }
  throw new Error(`timed out waiting for ${what}`);
}

/** Why the suite cannot start a systemd user manager here, or undefined when it can. */
const whyMissing = await Deno.stat(SYSTEMD_BIN).then(
  () => undefined,
  () => `${SYSTEMD_BIN} is not installed`,
);

Deno.test({
  name: "svcmgr against a real systemd user manager",
  ignore: ignoreWithout("systemd --user", whyMissing),
  sanitizeOps: false,
  sanitizeResources: false,
  async fn(t) {
    const sd = await startSystemdUser();
    const env = sd.env;
    const active = (unit: string) => sd.show(unit).then((r) => r.ActiveState);
    /** A run's `started`: once the run settled into waiting, `then`. */
    const settled = (then: () => Promise<unknown>) => async () => {
      await sleep(SETTLE_MS);
      await then();
    };
    /** A run's `started`: once the run settled into waiting, `systemctl --user ARGS`. */
    const settledThen = (...args: string[]) => settled(() => sd.systemctl(args));
    /** `svcmgr --user UNIT --inactive` holds once the running unit is stopped while it waits. */
    const assertStoppedWhileWaiting = async (unit: string, detail: string | RegExp) => {
      const r = await expectJson([...EVENTS_ONLY, "svcmgr", "--user", unit, "--inactive"], {
        code: 0,
        detail,
      }, { env, started: settledThen("stop", `${unit}.service`) });
      // An attempt may see the unit on its way down (systemd says so while sleep takes SIGTERM).
      const seen = r.json.conditions[0]!.last_error;
      assert(["active (running)", "deactivating (stop-sigterm)"].includes(seen), seen);
    };
    try {
      for (const [name, content] of Object.entries(units(sd.dir))) {
        await sd.writeUnit(name, content, { reload: false });
      }
      await sd.systemctl(["daemon-reload"]);
      await sd.systemctl(["start", "ok.service", "bad.service", "tick.timer"]);
      await poll("bad.service failed", async () => (await active("bad.service")) === "failed");

      const holds: [name: string, args: string[], detail: string][] = [
        [
          "svcmgr --active also holds for a unit type other than service",
          ["tick.timer"],
          "active (waiting)",
        ],
        [
          "svcmgr --inactive holds for a unit that never ran",
          ["idle", "--inactive"],
          "inactive (dead)",
        ],
        [
          "svcmgr --failed holds for a unit whose ExecStart failed",
          ["bad", "--failed"],
          "failed (failed, result exit-code)",
        ],
      ];
      for (const [name, args, detail] of holds) {
        await t.step(name, async () => {
          await expectJson([...FAST, "svcmgr", "--user", ...args], { code: 0, detail }, { env });
        });
      }

      await t.step(
        "svcmgr reports a missing unit as `unit not found` and keeps waiting",
        async () => {
          const r = await runCli(
            ["--timeout", "600ms", "--interval", "200ms", "svcmgr", "--user", "nosuch"],
            { env },
          );
          assertEquals(r.code, 1);
          assertEquals(r.stdout, "");
          assertMatch(
            r.stderr,
            /\[\.\.\] svcmgr nosuch\.service attempt 1 \(\d+\.\ds\): unit not found\n/,
          );
          assertStringIncludes(
            r.stderr,
            "waitcmd: timed out after 600ms; not satisfied: svcmgr nosuch.service: unit not found\n",
          );
          const j = await runJson(
            [...timing("300ms", "100ms"), "svcmgr", "--user", "nosuch", "--failed"],
            { env },
          );
          assertEquals(j.json.conditions[0]!.last_error, "unit not found");
        },
      );

      await t.step("svcmgr --inactive holds for a unit that is not loaded", async () => {
        // systemd calls a unit it cannot find inactive.
        await expectJson([...FAST, "svcmgr", "--user", "nosuch", "--inactive"], {
          code: 0,
          detail: "inactive (dead); unit not found",
          error: "",
        }, {
          env,
        });
        // A transient unit that ran and was collected (systemd-run without --remain-after-exit).
        await sh("systemd-run", ["--user", "--unit", "once.service", "/bin/true"], { env });
        await poll(
          "once.service collected",
          async () => (await sd.show("once.service", ["LoadState"])).LoadState === "not-found",
        );
        await expectJson([...FAST, "svcmgr", "--user", "once", "--inactive"], {
          code: 0,
          detail: "inactive (dead); unit not found",
        }, { env });
        // A running transient unit: --inactive holds once it is stopped (and collected).
        await sh("systemd-run", ["--user", "--unit", "job.service", "/bin/sleep", "1000"], { env });
        await assertStoppedWhileWaiting("job", /^inactive \(dead\)/);
        // --active keeps waiting for it (--failed: see above).
        const active = await runJson(
          ["--timeout", "1s", "--interval", "200ms", "svcmgr", "--user", "once"],
          { env },
        );
        assertEquals([active.code, active.json.conditions[0]!.last_error], [1, "unit not found"]);
      });

      await t.step("svcmgr wakes on PropertiesChanged when a unit becomes active", async () => {
        const r = await expectJson([...EVENTS_ONLY, "svcmgr", "--user", "late"], { code: 0 }, {
          env,
          started: settledThen("start", "late.service"),
        });
        const c = r.json.conditions[0]!;
        assertEquals(c.detail, "active (running)");
        assertEquals(c.last_error, "inactive (dead)");
        assert(r.json.elapsed_seconds < 8, "satisfied before the timeout, so by a signal");
      });

      await t.step("svcmgr --inactive holds once a running unit is stopped", async () => {
        await sd.systemctl(["start", "stopme.service"]);
        await assertStoppedWhileWaiting("stopme", "inactive (dead)");
      });

      await t.step("svcmgr notices a unit that is written and loaded while it waits", async () => {
        const r = await runCli([...EVENTS_ONLY, "svcmgr", "--user", "born"], {
          env,
          started: settled(async () => {
            await sd.writeUnit("born.service", "[Service]\nExecStart=/bin/sleep 1000\n");
            await sd.systemctl(["start", "born.service"]);
          }),
        });
        assertEquals(r.code, 0);
        // Not found at first; the reload and the start each wake an attempt.
        assertMatch(
          r.stderr,
          /\[\.\.\] svcmgr born\.service attempt 1 \(\d+\.\ds\): unit not found\n/,
        );
        assertMatch(
          r.stderr,
          /\[ok\] svcmgr born\.service attempt \d+ \(\d+\.\ds\): active \(running\)\n/,
        );
      });

      await t.step("svcmgr follows a flapping unit: active, then failed, then active", async () => {
        await sd.systemctl(["start", "flap.service"]);
        assertEquals(await active("flap.service"), "active");
        // Active now; fails (exit 2) once the flag file appears, while a --failed wait runs.
        await expectJson([...EVENTS_ONLY, "svcmgr", "--user", "flap", "--failed"], {
          code: 0,
          detail: "failed (failed, result exit-code)",
          error: "active (running)",
        }, {
          env,
          started: settled(() => Deno.writeTextFile(`${sd.dir}/flap.fail`, "")),
        });
        // Started again while an --active wait runs: active once more.
        await expectJson([...EVENTS_ONLY, "svcmgr", "--user", "flap"], {
          code: 0,
          detail: "active (running)",
          error: "failed (failed, result exit-code)",
        }, {
          env,
          started: settledThen("start", "flap.service"),
        });
        await sd.systemctl(["stop", "flap.service"]);
      });

      await t.step(
        "guard svcmgr --failed ends the run with exit 3 when the unit crashes",
        async () => {
          const args = [
            ...EVENTS_ONLY,
            ...["svcmgr", "--user", "crash"],
            ...["--", "guard", "svcmgr", "--user", "crash", "--failed"],
          ];
          const started = settledThen("start", "--no-block", "crash.service");
          const r = await runCli(args, { env, started });
          assertMatch(
            r.stderr,
            /\[\.\.\] svcmgr crash\.service attempt 1 \(\d+\.\ds\): inactive \(dead\)\n/,
          );
          assertEquals(r.code, 3);
          assertEquals(r.stdout, "");
          assertStringIncludes(
            r.stderr,
            "waitcmd: guard svcmgr crash.service matched: failed (failed, result exit-code)\n",
          );
          await sd.systemctl(["reset-failed", "crash.service"]);
          const j = await expectJson(args, { code: 3 }, { env, started });
          assertEquals(j.stderr, "");
          assertEquals(j.json.status, "fatal");
          const guard = j.json.conditions[1]!;
          assertEquals(guard.guard, true);
          assertEquals(guard.fatal, true);
          assertEquals(guard.detail, "failed (failed, result exit-code)");
        },
      );

      await t.step("svcmgr falls back to systemctl when the bus cannot be reached", async () => {
        const noBus = { ...env, DBUS_SESSION_BUS_ADDRESS: `unix:path=${sd.dir}/no-such-bus` };
        const r = await runCli([...FAST, "svcmgr", "--user", "ok"], { env: noBus });
        assertEquals(r.code, 0);
        assertMatch(
          r.stderr,
          /\[ok\] svcmgr ok\.service attempt 1 \(\d+\.\ds\): active \(running\)/,
        );
        const j = await expectJson([...FAST, "svcmgr", "--user", "bad", "--failed"], { code: 0 }, {
          env: noBus,
        });
        assertEquals(j.stderr, "");
        assertEquals(j.json.conditions[0]!.detail, "failed (failed, result exit-code)");
        const missing = await runJson(
          ["--timeout", "300ms", "--interval", "100ms", "svcmgr", "--user", "nosuch"],
          { env: noBus },
        );
        assertEquals(missing.json.conditions[0]!.last_error, "unit not found");
      });

      await t.step(
        "svcmgr survives a D-Bus peer that refuses Hello and uses systemctl",
        async () => {
          // systemd's private socket speaks D-Bus but is no bus: dbus-next's failed
          // Hello must not end the process with an unhandled rejection.
          const peer = {
            ...env,
            DBUS_SESSION_BUS_ADDRESS: `unix:path=${env.XDG_RUNTIME_DIR}/systemd/private`,
          };
          // It sometimes leaves Hello unanswered: the 2s connect bound, then systemctl, still fit.
          const r = await expectJson(
            [...timing("10s", "200ms"), "svcmgr", "--user", "ok"],
            { code: 0 },
            {
              env: peer,
            },
          );
          assertEquals(r.stderr, "");
          assertEquals(r.json.conditions[0]!.detail, "active (running)");
        },
      );

      await t.step("svcmgr says why when neither the bus nor systemctl answers", async () => {
        const nothing = {
          DBUS_SESSION_BUS_ADDRESS: `unix:path=${sd.dir}/no-such-bus`,
          XDG_RUNTIME_DIR: `${sd.dir}/no-such-dir`,
        };
        const r = await expectJson(
          ["--timeout", "500ms", "--interval", "200ms", "svcmgr", "--user", "ok"],
          { code: 1 },
          { env: nothing },
        );
        assertEquals(r.stderr, "");
        assertMatch(
          r.json.conditions[0]!.last_error,
          /^cannot reach the systemd user manager: D-Bus: .*no-such-bus.*; systemctl: /,
        );
      });

      await t.step("svcmgr without --user asks the bus at DBUS_SYSTEM_BUS_ADDRESS", async () => {
        const system = { DBUS_SYSTEM_BUS_ADDRESS: env.DBUS_SESSION_BUS_ADDRESS! };
        await expectJson([...FAST, "svcmgr", "ok"], { code: 0, detail: "active (running)" }, {
          env: system,
        });
      });

      await t.step(
        "doctor asks the bus svcmgr uses, then systemctl, as an attempt would",
        async () => {
          const system = { DBUS_SYSTEM_BUS_ADDRESS: env.DBUS_SESSION_BUS_ADDRESS! };
          const ok = await runCli(["doctor", "-o", "json", "--require", "svcmgr"], { env: system });
          const row = (r: { stdout: string }) =>
            (JSON.parse(r.stdout) as { kinds: { kind: string; ok: boolean; reason: string }[] })
              .kinds.find((k) => k.kind === "svcmgr")!;
          assertEquals([ok.code, row(ok)], [0, { kind: "svcmgr", ok: true, reason: "" }]);
          // No system bus, and systemctl cannot reach a manager (systemd is not PID 1 here): a
          // systemctl on PATH or a user bus that answers is not enough for svcmgr without --user.
          const pid1 = (await Deno.readTextFile("/proc/1/comm").catch(() => "")).trim();
          if (pid1 === "systemd") return;
          const none = {
            ...env,
            DBUS_SYSTEM_BUS_ADDRESS: "unix:path=/nonexistent/system_bus_socket",
          };
          const no = await runCli(["doctor", "-o", "json", "--require", "svcmgr"], { env: none });
          assertEquals(no.code, 1, no.stdout);
          assertMatch(
            row(no).reason,
            /^cannot reach systemd: D-Bus: .*\/nonexistent\/system_bus_socket.*; systemctl: .* \(svcmgr --user works: the user manager answers\)$/,
          );
        },
      );

      await t.step("svcmgr usage errors print one line and probe nothing", async (t) => {
        const rows: [string[], string][] = [
          [
            ["svcmgr", "web server"],
            'waitcmd: condition 1 (svcmgr): expected a unit name like nginx or nginx.service, got "web server" (allowed: letters, digits and :_.\\@-) (see: waitcmd help svcmgr)',
          ],
          [
            ["svcmgr", ""],
            "waitcmd: condition 1 (svcmgr): expected a unit name like nginx or nginx.service, got an empty string (see: waitcmd help svcmgr)",
          ],
          [
            ["systemd", "ok", "--active", "--failed"],
            "waitcmd: condition 1 (systemd): --failed: cannot be combined with --active (see: waitcmd help svcmgr)",
          ],
          [
            ["svcmgr", "getty@.service"],
            'waitcmd: condition 1 (svcmgr): "getty@.service" is a template; name an instance like getty@1.service (see: waitcmd help svcmgr)',
          ],
          [
            ["svcmgr", "ok", "--user=maybe"],
            'waitcmd: condition 1 (svcmgr): --user: expected true or false, got "maybe" (see: waitcmd help svcmgr)',
          ],
        ];
        for (const [args, want] of rows) {
          await t.step(args.join(" "), async () => {
            assertEquals(
              usageErrorLine(await runCli(["--output", "json", ...args], { env })),
              want,
            );
          });
        }
        const missing = usageErrorLine(await runCli(["svcmgr"], { env }));
        assertStringIncludes(missing, "missing target UNIT");
      });
    } finally {
      await sd.stop();
    }
  },
});
