import { assert, assertEquals } from "../../tests/_assert.ts";
import { conditionOf, optionsOf, probeOf, usageError } from "../../tests/_kit.ts";
import { stepUsageErrors } from "../../tests/_suite.ts";
import { describeUnitState, judgeUnit, parseShow, type UnitState } from "./judge.ts";
import { isHelloRethrow, noteBusError } from "./dbus.ts";
import { busAddress, type SvcmgrOptions } from "./mod.ts";
import { normalizeUnitName } from "./unitname.ts";

/** normalizeUnitName's name, or the error it throws as `{ error }`. */
function nameOrError(text: string): string | { error: string } {
  try {
    return normalizeUnitName(text);
  } catch (e) {
    return { error: (e as Error).message };
  }
}

Deno.test("normalizeUnitName() appends .service unless a unit type is given", async (t) => {
  const rows: [string, string][] = [
    ["nginx", "nginx.service"],
    ["nginx.service", "nginx.service"],
    ["sync.timer", "sync.timer"],
    ["dbus.socket", "dbus.socket"],
    ["multi-user.target", "multi-user.target"],
    ["getty@tty1", "getty@tty1.service"],
    ["my.app", "my.app.service"],
    ["dev-sda1.device", "dev-sda1.device"],
    ["a:b_c\\x2dd", "a:b_c\\x2dd.service"],
  ];
  for (const [input, want] of rows) {
    await t.step(input, () => assertEquals(nameOrError(input), want));
  }
});

Deno.test("normalizeUnitName() rejects what is not a unit name", async (t) => {
  const rows: [string, string][] = [
    ["", "expected a unit name like nginx or nginx.service, got an empty string"],
    [
      "a b",
      'expected a unit name like nginx or nginx.service, got "a b" (allowed: letters, digits and :_.\\@-)',
    ],
    [
      "web/*",
      'expected a unit name like nginx or nginx.service, got "web/*" (allowed: letters, digits and :_.\\@-)',
    ],
    [".service", 'expected a unit name like nginx or nginx.service, got ".service"'],
    ["@x.service", 'expected a unit name like nginx or nginx.service, got "@x.service"'],
    ["getty@", '"getty@" is a template; name an instance like getty@1.service'],
    ["getty@.service", '"getty@.service" is a template; name an instance like getty@1.service'],
    ["x".repeat(250), "unit name is longer than 255 characters"],
  ];
  for (const [input, want] of rows) {
    await t.step(JSON.stringify(input.slice(0, 20)), () => {
      assertEquals(nameOrError(input), { error: want });
    });
  }
});

Deno.test("judgeUnit() decides each wait from the unit's state", async (t) => {
  const st = (active: string, sub: string, load = "loaded", result?: string): UnitState => ({
    load,
    active,
    sub,
    result,
  });
  const rows: [string, UnitState, "active" | "inactive" | "failed", string, string][] = [
    ["active holds", st("active", "running"), "active", "satisfied", "active (running)"],
    [
      "reloading counts as active",
      st("reloading", "reload"),
      "active",
      "satisfied",
      "reloading (reload)",
    ],
    ["oneshot exited is active", st("active", "exited"), "active", "satisfied", "active (exited)"],
    [
      "activating is not yet",
      st("activating", "start-pre"),
      "active",
      "pending",
      "activating (start-pre)",
    ],
    ["inactive is not active", st("inactive", "dead"), "active", "pending", "inactive (dead)"],
    [
      "failed shows its result",
      st("failed", "failed", "loaded", "exit-code"),
      "active",
      "pending",
      "failed (failed, result exit-code)",
    ],
    ["inactive holds", st("inactive", "dead"), "inactive", "satisfied", "inactive (dead)"],
    [
      "deactivating is not yet inactive",
      st("deactivating", "stop-sigterm"),
      "inactive",
      "pending",
      "deactivating (stop-sigterm)",
    ],
    ["failed is not inactive", st("failed", "failed"), "inactive", "pending", "failed (failed)"],
    [
      "failed holds",
      st("failed", "failed", "loaded", "signal"),
      "failed",
      "satisfied",
      "failed (failed, result signal)",
    ],
    ["running is not failed", st("active", "running"), "failed", "pending", "active (running)"],
    [
      "a missing unit is not found",
      st("inactive", "dead", "not-found"),
      "active",
      "pending",
      "unit not found",
    ],
    [
      "but --inactive holds for it (systemd calls it inactive)",
      st("inactive", "dead", "not-found"),
      "inactive",
      "satisfied",
      "inactive (dead); unit not found",
    ],
    [
      "and --failed waits on",
      st("inactive", "dead", "not-found"),
      "failed",
      "pending",
      "unit not found",
    ],
    [
      "a running unit whose file was removed still counts",
      st("active", "running", "not-found"),
      "active",
      "satisfied",
      "active (running)",
    ],
    [
      "a masked unit says so",
      st("inactive", "dead", "masked"),
      "active",
      "pending",
      "inactive (dead); unit masked",
    ],
    [
      "a broken unit file says so",
      st("inactive", "dead", "bad-setting"),
      "active",
      "pending",
      "inactive (dead); unit bad-setting",
    ],
  ];
  for (const [name, state, want, status, text] of rows) {
    await t.step(name, () => {
      const r = judgeUnit(state, want);
      assertEquals(r.status, status);
      assertEquals(
        r.status === "satisfied" ? r.detail : r.status === "pending" ? r.error : "",
        text,
      );
    });
  }
});

Deno.test("describeUnitState() leaves out a successful result", () => {
  assertEquals(
    describeUnitState({ load: "loaded", active: "active", sub: "running", result: "success" }),
    "active (running)",
  );
  assertEquals(
    describeUnitState({ load: "loaded", active: "failed", sub: "failed", result: "success" }),
    "failed (failed)",
  );
});

Deno.test("parseShow() reads systemctl show output", () => {
  assertEquals(
    parseShow("Result=success\nLoadState=not-found\nActiveState=inactive\nSubState=dead\n"),
    { load: "not-found", active: "inactive", sub: "dead", result: "success" },
  );
  assertEquals(parseShow("ActiveState=active\nSubState=running"), {
    load: "",
    active: "active",
    sub: "running",
    result: undefined,
  });
  assertEquals(parseShow("Failed to connect to bus\n"), undefined);
});

Deno.test("busAddress() picks the session or system bus from the environment", () => {
  assertEquals(
    busAddress(true, { DBUS_SESSION_BUS_ADDRESS: "unix:path=/run/user/1000/bus" }),
    "unix:path=/run/user/1000/bus",
  );
  assertEquals(busAddress(true, { XDG_RUNTIME_DIR: "/tmp/rt" }), "unix:path=/tmp/rt/bus");
  assertEquals(busAddress(false, {}), "unix:path=/var/run/dbus/system_bus_socket");
  assertEquals(
    busAddress(false, {
      DBUS_SYSTEM_BUS_ADDRESS: "unix:path=/x/bus",
      DBUS_SESSION_BUS_ADDRESS: "y",
    }),
    "unix:path=/x/bus",
  );
  // Of several addresses, the first one dbus-next can dial.
  assertEquals(
    busAddress(true, {
      DBUS_SESSION_BUS_ADDRESS: "unixexec:path=/bin/x;unix:path=/a/bus;tcp:host=h",
    }),
    "unix:path=/a/bus",
  );
});

Deno.test("svcmgr parse() names the condition by the full unit name and keeps the alias", async () => {
  const args = ["systemd", "--user", "nginx", "--inactive"];
  const c = conditionOf(args);
  assertEquals(c.kind.name, "svcmgr");
  assertEquals(c.name, "systemd nginx.service");
  assertEquals(c.target, "nginx.service");
  const probe = await probeOf(args);
  assert(probe.watch !== undefined, "svcmgr watches for changes");
  await probe.close?.();
});

Deno.test("svcmgr parse() gives the unit, the wait and the bus as options", () => {
  const env = { DBUS_SESSION_BUS_ADDRESS: "unix:path=/tmp/u/bus" };
  assertEquals(optionsOf<SvcmgrOptions>(["systemd", "--user", "nginx", "--inactive"], env), {
    unit: "nginx.service",
    want: "inactive",
    user: true,
    address: "unix:path=/tmp/u/bus",
  });
  assertEquals(optionsOf<SvcmgrOptions>(["svcmgr", "sync.timer", "--failed"]), {
    unit: "sync.timer",
    want: "failed",
    user: false,
    address: "unix:path=/var/run/dbus/system_bus_socket",
  });
  assertEquals(optionsOf<SvcmgrOptions>(["svcmgr", "x"]).want, "active");
});

Deno.test("svcmgr parse() reports usage errors at the condition and flag", async (t) => {
  await stepUsageErrors(t, "svcmgr");
  // A template needs an instance (here in a second condition, named by its place).
  assertEquals(
    await usageError(["svcmgr", "x", "--", "svcmgr", "getty@"]),
    'waitcmd: condition 2 (svcmgr): "getty@" is a template; name an instance like getty@1.service (see: waitcmd help svcmgr)',
  );
  // The engine's own checks apply too: a missing target, an unknown flag.
  assert((await usageError(["svcmgr"])).includes("missing target UNIT"));
  assert((await usageError(["svcmgr", "x", "--actve"])).includes("--active"));
});

Deno.test("isHelloRethrow() knows dbus-next's rethrow of a reported bus error by its text", () => {
  const refused = Object.assign(new Error("Unknown object '/org/freedesktop/DBus'."), {
    name: "DBusError",
  });
  assertEquals(isHelloRethrow(new Error(String(refused))), false);
  noteBusError(refused);
  // dbus-next's bus.js: `.catch((err) => { this.emit('error', err); throw new Error(err); })`
  assertEquals(isHelloRethrow(new Error(String(refused))), true);
  assertEquals(isHelloRethrow(new Error("another failure")), false);
  assertEquals(isHelloRethrow(String(refused)), false);
});
