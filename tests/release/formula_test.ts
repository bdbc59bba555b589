/**
 * The Homebrew formula the release task generates: every macOS/Linux,
 * arm64/x86_64 target is listed with its URL and the SHA-256 of its artifact.
 * Checked as text, and — when Ruby is there — by evaluating the formula with a
 * minimal stand-in for Homebrew's DSL: per platform it must select the right
 * URL and checksum, and its `test do` block must pass against the real
 * waitcmd (run from source): `--version` and a real wait on a file.
 */

import { assert, assertEquals, assertStringIncludes } from "../_assert.ts";
import { version } from "../../scripts/targets.ts";
import { archiveName, assetUrl, parseSha256sums } from "../../scripts/archives.ts";
import { formula, FORMULA_TARGETS, NOT_BUILT } from "../../scripts/formula.ts";
import { requireService } from "../services/_util.ts";
import { WAITCMD } from "../e2e/_cli.ts";
import { DENO, fileSha256, repoRoot, run, writeStandIns } from "./_fixture.ts";

const BASE = "https://downloads.example.test/waitcmd";

/** The `on_<os> do ... on_<cpu> do url/sha256 end ... end` blocks, read back from the text. */
function platforms(rb: string): Map<string, { url: string; sha256: string }> {
  const out = new Map<string, { url: string; sha256: string }>();
  const osRe = /^ {2}on_(macos|linux) do\n([\s\S]*?)^ {2}end$/gm;
  for (const os of rb.matchAll(osRe)) {
    const cpuRe = /^ {4}on_(arm|intel) do\n[\s\S]*?url "([^"]+)"\n\s*sha256 "([^"]+)"\n {4}end$/gm;
    for (const cpu of os[2]!.matchAll(cpuRe)) {
      out.set(`${os[1]}/${cpu[1]}`, { url: cpu[2]!, sha256: cpu[3]! });
    }
  }
  return out;
}

Deno.test("formula() lists every macOS and Linux target with its URL and checksum", () => {
  const sums = new Map(
    FORMULA_TARGETS.map((f, i) => [archiveName(f.target, "1.2.3"), `${i}`.repeat(64)]),
  );
  const rb = formula({ version: "1.2.3", baseUrl: `${BASE}/`, checksums: sums });
  const got = platforms(rb);
  assertEquals([...got.keys()].sort(), ["linux/arm", "linux/intel", "macos/arm", "macos/intel"]);
  FORMULA_TARGETS.forEach((f, i) => {
    const file = archiveName(f.target, "1.2.3");
    assertEquals(got.get(`${f.os}/${f.cpu}`), {
      url: `${BASE}/v1.2.3/${file}`,
      sha256: `${i}`.repeat(64),
    }, f.target);
  });
  assertStringIncludes(rb, 'version "1.2.3"');
  assertStringIncludes(rb, 'bin.install "waitcmd"');
  assertStringIncludes(rb, 'shell_output("#{bin}/waitcmd --version")');
  assertStringIncludes(rb, '"file", ready, "--contains", "up"');
  assert(!rb.includes("NOT BUILT"));
});

Deno.test("formula() marks artifacts that were not built with an unusable checksum", () => {
  const only = archiveName("x86_64-unknown-linux-gnu", "1.2.3");
  const rb = formula({
    version: "1.2.3",
    baseUrl: BASE,
    checksums: new Map([[only, "a".repeat(64)]]),
  });
  const got = platforms(rb);
  assertEquals(got.get("linux/intel")?.sha256, "a".repeat(64));
  for (const key of ["linux/arm", "macos/arm", "macos/intel"]) {
    assertEquals(got.get(key)?.sha256, NOT_BUILT, key);
  }
  assertEquals(rb.split("# NOT BUILT: ").length - 1, 3);
});

/** A release made by the real task from stand-in binaries; returns its directory. */
async function standInRelease(dist: string): Promise<string> {
  await writeStandIns(dist, version);
  const r = await run(DENO, [
    ...["run", "-A", `${repoRoot}/scripts/release.ts`, "--skip-compile", "--dist", dist],
    ...["--base-url", BASE, "--formula-out", "none"],
  ], {});
  assertEquals(r.code, 0, r.stderr);
  return `${dist}/release`;
}

Deno.test("release task's waitcmd.rb carries each artifact's real checksum", async () => {
  const dist = await Deno.makeTempDir({ prefix: "waitcmd-formula-test-" });
  try {
    const rel = await standInRelease(dist);
    const got = platforms(await Deno.readTextFile(`${rel}/waitcmd.rb`));
    const sums = parseSha256sums(await Deno.readTextFile(`${rel}/SHA256SUMS`));
    assertEquals(got.size, 4);
    for (const f of FORMULA_TARGETS) {
      const file = archiveName(f.target);
      const actual = await fileSha256(`${rel}/${file}`);
      assertEquals(got.get(`${f.os}/${f.cpu}`), { url: assetUrl(BASE, file), sha256: actual });
      assertEquals(sums.get(file), actual);
    }
  } finally {
    await Deno.remove(dist, { recursive: true });
  }
});

/**
 * Just enough of Homebrew's Formula DSL to load a formula for one platform
 * and run its `test do` block: url/sha256 are recorded for the platform asked
 * for (OS and CPU from the environment), `bin` is a directory given by the
 * caller, and the assertions raise like Minitest's.
 */
const RUBY_HARNESS = String.raw`
require "pathname"
require "json"
require "tmpdir"

class Formula
  class << self
    attr_reader :spec, :test_block
    def desc(_) = nil
    def homepage(_) = nil
    def license(_) = nil
    def version(v = nil) = (v ? (@version = v) : @version)
    def url(u) = (@spec ||= {})["url"] = u
    def sha256(s) = (@spec ||= {})["sha256"] = s
    def on_macos = (yield if ENV["HB_OS"] == "macos")
    def on_linux = (yield if ENV["HB_OS"] == "linux")
    def on_arm = (yield if ENV["HB_CPU"] == "arm")
    def on_intel = (yield if ENV["HB_CPU"] == "intel")
    def test(&block) = @test_block = block
  end

  def version = self.class.version
  def bin = Pathname(ENV.fetch("HB_BIN"))
  def testpath = @testpath ||= Pathname(Dir.mktmpdir)

  def shell_output(cmd, code = 0)
    out = IO.popen(cmd, &:read)
    raise "#{cmd}: exit #{$?.exitstatus}, expected #{code}" unless $?.exitstatus == code
    out
  end

  def system(*args)
    Kernel.system(*args.map(&:to_s)) or raise "failed: #{args.join(" ")}"
  end

  def assert_match(pattern, text)
    ok = pattern.is_a?(Regexp) ? pattern.match?(text) : text.include?(pattern)
    raise "expected #{text.inspect} to match #{pattern.inspect}" unless ok
  end

  def assert_path_exists(path) = (raise "#{path} does not exist" unless File.exist?(path))
end

load ARGV.fetch(0)
puts JSON.generate(Formula.subclasses.first.spec)
if ENV["HB_RUN_TEST"] == "1"
  f = Formula.subclasses.first.new
  f.instance_eval(&f.class.test_block)
  puts "TEST PASSED"
end
`;

Deno.test({
  name: "waitcmd.rb loads in Ruby, picks each platform's artifact and its test block passes",
  sanitizeResources: false,
  sanitizeOps: false,
  async fn(t) {
    const ruby = await run("sh", ["-c", "command -v ruby"], {});
    if (ruby.code !== 0) {
      requireService("ruby", "the formula is evaluated by Ruby (apt-get install ruby)");
      return;
    }
    const dist = await Deno.makeTempDir({ prefix: "waitcmd-formula-test-" });
    try {
      const rel = await standInRelease(dist);
      await Deno.writeTextFile(`${dist}/harness.rb`, RUBY_HARNESS);
      // `bin/waitcmd`: the real CLI under test (tests/e2e/_cli.ts), as the installed binary would be.
      await Deno.mkdir(`${dist}/bin`);
      await Deno.writeTextFile(
        `${dist}/bin/waitcmd`,
        `#!/bin/sh\nexec "${WAITCMD}" "$@"\n`,
        { mode: 0o755 },
      );
      const sums = parseSha256sums(await Deno.readTextFile(`${rel}/SHA256SUMS`));
      for (const f of FORMULA_TARGETS) {
        await t.step(`${f.os} ${f.cpu} -> ${f.target}`, async () => {
          const r = await run("ruby", [`${dist}/harness.rb`, `${rel}/waitcmd.rb`], {
            HB_OS: f.os,
            HB_CPU: f.cpu,
            HB_BIN: `${dist}/bin`,
          });
          assertEquals(r.code, 0, r.stderr);
          const file = archiveName(f.target);
          assertEquals(JSON.parse(r.stdout), { url: assetUrl(BASE, file), sha256: sums.get(file) });
        });
      }
      await t.step("test do: --version and a real wait on a file", async () => {
        const r = await run("ruby", [`${dist}/harness.rb`, `${rel}/waitcmd.rb`], {
          HB_OS: "linux",
          HB_CPU: "intel",
          HB_BIN: `${dist}/bin`,
          HB_RUN_TEST: "1",
          HOME: Deno.env.get("HOME") ?? "/root",
        });
        assertEquals(r.code, 0, r.stdout + r.stderr);
        assertStringIncludes(r.stdout, "TEST PASSED");
      });
    } finally {
      await Deno.remove(dist, { recursive: true });
    }
  },
});
