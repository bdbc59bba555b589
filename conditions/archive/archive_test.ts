import { assertEquals } from "../../tests/_assert.ts";
import { conditionOf, optionsOf, parseError } from "../../tests/_kit.ts";
import { type ArchiveOptions, normalizeMember } from "./mod.ts";
import { judgeMembers, memberMatcher } from "./probe.ts";

Deno.test("archive parse() normalises members and defaults --min-count with --matches", () => {
  assertEquals(
    optionsOf<ArchiveOptions>([
      ...["archive", "a.tgz", "--contains", "./bin/app", "--contains", "doc/"],
    ]),
    {
      path: "a.tgz",
      format: "auto",
      contains: ["bin/app", "doc"],
      matches: undefined,
      minCount: undefined,
    },
  );
  assertEquals(
    optionsOf<ArchiveOptions>(["archive", "a.zip", "--matches", "*.xml", "--format", "zip"]),
    {
      path: "a.zip",
      format: "zip",
      contains: [],
      matches: "*.xml",
      minCount: 1,
    },
  );
  assertEquals(conditionOf(["archive", "dist/a.tar"]).name, "archive dist/a.tar");
  assertEquals(normalizeMember("././/a/b/"), "a/b");
});

Deno.test("archive parse() rejects bad flags", async (t) => {
  const rows: [string[], string][] = [
    [["--contains", "./"], '--contains: expected a member name, got "./"'],
    [["--matches", ""], "--matches: expected a pattern, got an empty string"],
  ];
  for (const [args, want] of rows) {
    await t.step(args.join(" "), () => {
      assertEquals(
        parseError(["archive", "a.tar", ...args]),
        `waitcmd: condition 1 (archive): ${want} (see: waitcmd help archive)`,
      );
    });
  }
  assertEquals(parseError(["archive", "a.tar", "--min-count", "0"]).includes("--min-count"), true);
  assertEquals(parseError(["archive", "a.tar", "--format", "rar"]).includes("--format"), true);
});

Deno.test("memberMatcher() follows bash globbing, ** for any depth", () => {
  const m = (p: string, n: string) => memberMatcher(p)(n);
  assertEquals(m("*.xml", "a.xml"), true);
  assertEquals(m("*.xml", "sub/a.xml"), false);
  assertEquals(m("**/*.xml", "sub/deep/a.xml"), true);
  assertEquals(m("**/*.xml", "a.xml"), true);
  assertEquals(m("**/*.xml", ".git/a.xml"), false);
  assertEquals(m("*.xml", ".a.xml"), false);
  assertEquals(m("./bin/{app,tool}", "bin/tool"), true);
  assertEquals(m("bin/**", "bin/x/y"), true);
  assertEquals(m("report-[0-9].txt", "report-7.txt"), true);
});

Deno.test("judgeMembers() checks members and counts, directories aside", () => {
  const members = [
    { name: "bin", dir: true },
    { name: "bin/app", dir: false },
    { name: "doc/a.md", dir: false },
    { name: "doc/b.md", dir: false },
  ];
  assertEquals(judgeMembers("tgz", members, { contains: ["bin/app", "bin"] }), {
    status: "satisfied",
    detail: 'tar.gz, 4 members, contains "bin/app", "bin"',
  });
  assertEquals(judgeMembers("zip", members, { contains: ["x", "bin/app", "y"] }), {
    status: "pending",
    error: 'zip, 4 members; missing "x", "y"',
  });
  assertEquals(judgeMembers("tar", members, { contains: [], matches: "doc/*.md", minCount: 3 }), {
    status: "pending",
    error: 'tar, 4 members; 2 matching "doc/*.md", need 3',
  });
  assertEquals(judgeMembers("tar", members, { contains: [], minCount: 3 }), {
    status: "satisfied",
    detail: "tar, 4 members, 3 non-directory members",
  });
});
