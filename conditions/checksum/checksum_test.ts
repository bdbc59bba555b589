import { assertEquals, assertStringIncludes } from "../../tests/_assert.ts";
import { checkOnce } from "../../engine/attempt.ts";
import { conditionOf, optionsOf, probeOf } from "../../tests/_kit.ts";
import { inTempDir } from "../../tests/services/_util.ts";
import { stepUsageErrors } from "../../tests/_suite.ts";
import { realClock } from "../../engine/clock.ts";
import { create } from "./probe.ts";
import { type ChecksumOptions, parseEquals } from "./mod.ts";

const once = () => ({ signal: AbortSignal.timeout(10_000), attempt: 1 });
const SHA256_HELLO = "5891b5b522d5df086d0ff0b110fbd9d21bb4fc7163af34d08286a2e846f6be03";

Deno.test("checksum parse() takes the algorithm from the prefix or the length", () => {
  assertEquals(
    optionsOf<ChecksumOptions>(["checksum", "f", "--equals", `sha256:${SHA256_HELLO}`]),
    {
      path: "f",
      algorithm: "sha256",
      digest: SHA256_HELLO,
    },
  );
  assertEquals(parseEquals("D41D8CD98F00B204E9800998ECF8427E"), {
    algorithm: "md5",
    digest: "d41d8cd98f00b204e9800998ecf8427e",
  });
  assertEquals(parseEquals("a".repeat(40)), { algorithm: "sha1", digest: "a".repeat(40) });
  assertEquals(parseEquals(`SHA512:${"b".repeat(128)}`), {
    algorithm: "sha512",
    digest: "b".repeat(128),
  });
  assertEquals(
    conditionOf(["checksum", "dist/a.iso", "--equals", "a".repeat(64)]).name,
    "checksum dist/a.iso",
  );
});

Deno.test("checksum parse() rejects digests it cannot use", (t) => stepUsageErrors(t, "checksum"));

Deno.test("checksum reads an unchanged file once, and again after a watch event", async () => {
  const dir = await Deno.makeTempDir({ prefix: "waitcmd-checksum-" });
  const f = `${dir}/f`;
  const ctl = new AbortController();
  try {
    await Deno.writeTextFile(f, "hellx\n"); // same size as the expected "hello\n"
    const mtime = (await Deno.stat(f)).mtime!;
    const probe = create({ path: f, algorithm: "sha256", digest: SHA256_HELLO }, {
      clock: realClock,
      env: {},
    });
    const first = await checkOnce(probe, once().signal);
    assertEquals(first.status, "pending");
    assertStringIncludes((first as { error: string }).error, "not the expected digest (6 B)");

    // Rewritten in place with the same size and mtime: the stamp is the same, so the
    // kept result stands (the file was not read again).
    await Deno.writeTextFile(f, "hello\n");
    await Deno.utime(f, mtime, mtime);
    assertEquals(await checkOnce(probe, once().signal), first);

    // A watch event says it changed all the same: read again.
    const events = probe.watch!({ signal: ctl.signal, notice: () => {} })[Symbol.asyncIterator]();
    const next = events.next();
    await new Promise((r) => setTimeout(r, 100)); // the watch is armed
    await Deno.writeTextFile(f, "hello\n");
    await Deno.utime(f, mtime, mtime);
    await next;
    assertEquals(await checkOnce(probe, once().signal), {
      status: "satisfied",
      detail: "sha256 matches (6 B)",
    });

    // Another mtime alone also makes it read again.
    await Deno.writeTextFile(f, "hellx\n");
    assertEquals((await checkOnce(probe, once().signal)).status, "pending");
  } finally {
    ctl.abort();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("checksum: a file written while it is read is pending as still being written", () =>
  inTempDir("waitcmd-checksum-")(async (dir) => {
    const f = `${dir}/growing`;
    await Deno.writeFile(f, new Uint8Array(64 << 20));
    const probe = await probeOf(["checksum", f, "--equals", SHA256_HELLO]);
    let writing = true;
    const writer = (async () => {
      using w = await Deno.open(f, { append: true });
      while (writing) {
        await w.write(new Uint8Array(4096));
        await new Promise((r) => setTimeout(r, 1));
      }
    })();
    let seen = "";
    for (let i = 0; i < 20 && !seen.includes("still being written"); i++) {
      const r = await checkOnce(probe, once().signal);
      seen = r.status === "pending" ? r.error : r.status;
    }
    writing = false;
    await writer;
    assertEquals(seen, "the file changed while it was read (still being written?)");
  }));

Deno.test("checksum is pending for a missing path and a directory", () =>
  inTempDir("waitcmd-checksum-")(async (dir) => {
    const p = await probeOf(["checksum", `${dir}/none`, "--equals", SHA256_HELLO]);
    assertEquals(await checkOnce(p, once().signal), { status: "pending", error: "does not exist" });
    const d = await probeOf(["checksum", dir, "--equals", SHA256_HELLO]);
    assertEquals(await checkOnce(d, once().signal), {
      status: "pending",
      error: "is a directory, not a file",
    });
  }));
