import { assertEquals, assertStringIncludes } from "../../tests/_assert.ts";
import { inTempDir, sh } from "../../tests/services/_util.ts";
import { assertKindUsageErrors, runJson, runLate } from "../../tests/e2e/_cli.ts";
import { usageRows } from "../../tests/_suite.ts";

/** The kind's usage errors, from its folder (conditions/permission/_suite.ts). */
const USAGE = await usageRows("permission");

const FAST = ["--interval", "100ms"];

Deno.test("permission waits for chmod and chown on a real file", () =>
  inTempDir("waitcmd-perm-")(async (dir) => {
    const f = `${dir}/key.pem`;
    await sh("sh", ["-c", `umask 022 && echo secret > ${f}`]);
    const r = await runLate(
      [
        ...["--timeout", "20s"],
        ...FAST,
        ...["permission", f, "--mode", "0600", "--owner", "nobody", "--group", "4321"],
      ],
      () => sh("sh", ["-c", `chmod 600 ${f} && chown nobody:4321 ${f}`]),
    );
    assertEquals(r.code, 0);
    const c = r.report.conditions[0]!;
    assertEquals(c.name, `permission ${f}`);
    assertEquals(
      r.attempts[0]!.error,
      "mode is 0644, not 0600; owner is 0, not nobody (65534); group is 0, not 4321",
    );
    assertStringIncludes(c.last_error, "owner is 0, not nobody (65534); group is 0, not 4321");
    assertEquals(c.detail, "file 0600, owner 65534, group 4321");

    const alias = await runJson([
      ...["--timeout", "5s", "perm", f, "--mode-includes", "0400", "--type", "file"],
    ]);
    assertEquals([alias.code, alias.json.conditions[0]!.name, alias.json.conditions[0]!.kind], [
      0,
      `perm ${f}`,
      "permission",
    ]);
  }));

Deno.test("permission --type tells files, dirs, symlinks (lstat), sockets and fifos apart", async () => {
  const dir = await Deno.makeTempDir({ prefix: "waitcmd-perm-" });
  const sock = Deno.listen({ transport: "unix", path: `${dir}/app.sock` });
  try {
    await sh("sh", [
      "-c",
      `cd ${dir} && mkfifo pipe && touch file && mkdir sub && ln -s file link`,
    ]);
    const type = async (
      path: string,
      t: string,
    ) => (await runJson([
      ...["--timeout", "300ms"],
      ...FAST,
      ...["permission", `${dir}/${path}`, "--type", t],
    ]));
    for (
      const [path, t] of [["app.sock", "socket"], ["pipe", "fifo"], ["file", "file"], [
        "sub",
        "dir",
      ], ["link", "symlink"]]
    ) {
      const r = await type(path!, t!);
      assertEquals([path, r.code], [path, 0]);
    }
    // Without --type symlink a link is followed.
    assertEquals((await type("link", "file")).code, 0);
    const wrong = await type("pipe", "socket");
    assertEquals([wrong.code, wrong.json.conditions[0]!.last_error], [
      1,
      "is a fifo, not a socket",
    ]);
  } finally {
    sock.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("permission usage errors", () => assertKindUsageErrors("permission", USAGE));
