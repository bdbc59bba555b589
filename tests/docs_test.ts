/**
 * The docs against the code: each kind's page (conditions/<kind>/README.md,
 * its part of docs/contract.md §5) and help description against its declared
 * flags; what `deno task docs` generates (the pages' heads, the kinds tables of
 * README.md and docs/contract.md, conditions/mod.ts's list) against the declarations; every
 * `docs/contract.md §N` a comment cites and every relative link of the docs;
 * the environment variables the product reads; and docs/development.md's
 * list of the files a new kind touches, against where each kind is named.
 */

import { assert, assertEquals } from "./_assert.ts";
import { registry } from "../conditions/all.ts";
import { COMMON_CONDITION_FLAGS, ENV_DEFAULTS, GLOBAL_FLAGS } from "../engine/options.ts";
import { helpText } from "../output/help.ts";
import { declarations, generated, handPart, TABLE_FILES, withoutTable } from "../scripts/docs.ts";
import { repoRootDir } from "./_kit.ts";

const read = (path: string) => Deno.readTextFile(`${repoRootDir}/${path}`);
const CONTRACT = await read("docs/contract.md");

/** Every file of the repository (tracked or new, not ignored), relative to its root. */
async function repoFiles(): Promise<string[]> {
  const out = await new Deno.Command("git", {
    args: ["ls-files", "--cached", "--others", "--exclude-standard"],
    cwd: repoRootDir,
    stdout: "piped",
  }).output();
  assert(out.success, "git ls-files");
  const files = new TextDecoder().decode(out.stdout).split("\n").filter(Boolean);
  const present = await Promise.all(
    files.map((f) => Deno.stat(`${repoRootDir}/${f}`).then((s) => s.isFile, () => false)),
  );
  return files.filter((_, i) => present[i]);
}

/** A file's text, or undefined for one that is not UTF-8 text. */
async function textOf(path: string): Promise<string | undefined> {
  const bytes = await Deno.readFile(`${repoRootDir}/${path}`);
  if (bytes.includes(0)) return undefined;
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    return undefined;
  }
}

/** `--name` words of a text. */
function flagsIn(text: string): Set<string> {
  return new Set([...text.matchAll(/(?<![\w-])--([a-z][a-z0-9-]*)/g)].map((m) => m[1]!));
}

const SHARED_FLAGS = new Set([
  ...COMMON_CONDITION_FLAGS.map((f) => f.name),
  ...GLOBAL_FLAGS.map((f) => f.name),
  "help",
]);

/** Flags a page quotes that are not the kind's own: another program's or another kind's. */
const QUOTED_FLAGS: Readonly<Record<string, readonly string[]>> = {
  container: ["network", "rm"], // docker run --network container:OTHER, docker run --rm
  glob: ["deleted"], // as file --deleted
  exec: ["check"], // an example command's own flag
  // wait4x temporal's flags, and what stands for them
  grpc: [
    "insecure-transport",
    "insecure-skip-tls-verify",
    "connection-timeout",
    "namespace",
    "task-queue",
    "expect-worker-identity-regex",
  ],
};

Deno.test("every kind's folder has its page: its part of docs/contract.md §5", async () => {
  const folders: string[] = [];
  for await (const e of Deno.readDir(`${repoRootDir}/conditions`)) {
    if (e.isDirectory && !e.name.startsWith("_")) folders.push(e.name);
  }
  assertEquals(folders.sort(), registry.kinds.map((k) => k.name).sort());
  for (const k of registry.kinds) {
    const page = await read(`conditions/${k.name}/README.md`);
    assertEquals(page.split("\n")[0], `# §5 ${k.name}`, `conditions/${k.name}/README.md`);
  }
  for (const m of CONTRACT.matchAll(/^### §5 (\S+)/gm)) {
    throw new Error(
      `docs/contract.md has a section of its own for ${m[1]}: it belongs in its folder`,
    );
  }
});

Deno.test("a kind's page and help description name its declared flags and no others", async (t) => {
  for (const k of registry.kinds) {
    await t.step(k.name, async () => {
      const own = new Set(k.flags.map((f) => f.name));
      const known = new Set([...own, ...SHARED_FLAGS, ...(QUOTED_FLAGS[k.name] ?? [])]);
      const page = await read(`conditions/${k.name}/README.md`);
      const inPage = flagsIn(page);
      assertEquals([...own].filter((f) => !inPage.has(f)), [], "declared but not on its page");
      assertEquals([...inPage].filter((f) => !known.has(f)), [], "on its page but not declared");
      const inHelp = flagsIn(k.description);
      assertEquals([...inHelp].filter((f) => !known.has(f)), [], "in its description only");
    });
  }
});

Deno.test("every generated part is what deno task docs writes now", async () => {
  // The kinds' pages' heads, the kinds tables of README.md and docs/contract.md, conditions/mod.ts.
  const kinds = await declarations();
  assertEquals(kinds.map((k) => k.name), registry.kinds.map((k) => k.name));
  const stale: string[] = [];
  for (const [path, text] of await generated(kinds)) {
    if (await read(path) !== text) stale.push(path);
  }
  assertEquals(stale, [], "not what the declarations make: run deno task docs");
});

Deno.test("deno task docs writes a changed declaration into the page head and conditions/mod.ts", async () => {
  // The check above can fail: a declaration edited without running the task differs from the files.
  const kinds = await declarations();
  const [first, ...rest] = kinds;
  const edited = { ...first!, aliases: [...first!.aliases, "zz-alias"], description: "Changed." };
  const files = await generated([edited, ...rest]);
  const page = files.get(`conditions/${first!.name}/README.md`)!;
  assert(page.includes("- **Ready when:** Changed.") && page.includes("`zz-alias`"), page);
  assert(
    page.endsWith(handPart(await read(`conditions/${first!.name}/README.md`))),
    "hand part kept",
  );
  assert(files.get("conditions/mod.ts")!.includes('"zz-alias"'), "KINDS line");
  assert(files.get("README.md") !== (await read("README.md")), "kinds table");
});

/** The files where citations and links are checked. */
async function docsAndCode(): Promise<string[]> {
  return (await repoFiles()).filter((f) => /\.(ts|md|sh)$/.test(f) || f.startsWith("scripts/"));
}

Deno.test("every docs/contract.md §N cited exists, and §5 <kind> names a kind", async () => {
  const sections = new Set([...CONTRACT.matchAll(/^## §(\d+) /gm)].map((m) => m[1]!));
  const bad: string[] = [];
  for (const path of await docsAndCode()) {
    const text = await textOf(path);
    if (text === undefined) continue;
    const cites = text.matchAll(/docs\/contract\.md(?:[\s*/]|\n)*§(\d+)(?: ([a-z]+)\b)?/g);
    for (const m of cites) {
      if (!sections.has(m[1]!)) bad.push(`${path}: §${m[1]} does not exist`);
      const word = m[2];
      if (m[1] === "5" && word !== undefined && !registry.lookup(word)) {
        bad.push(`${path}: §5 ${word} is no kind`);
      }
    }
  }
  assertEquals(bad, []);
});

/** GitHub's anchor of a Markdown heading. */
function slug(heading: string): string {
  return heading.trim().toLowerCase().replace(/[^\p{L}\p{N} _-]/gu, "").replaceAll(" ", "-");
}

Deno.test("every relative link of the docs leads to a file and a heading that exist", async () => {
  const md = (await repoFiles()).filter((f) => f.endsWith(".md"));
  const bad: string[] = [];
  const anchors = new Map<string, Set<string>>();
  const anchorsOf = async (path: string) => {
    if (!anchors.has(path)) {
      const text = await read(path);
      anchors.set(path, new Set([...text.matchAll(/^#+ (.+)$/gm)].map((m) => slug(m[1]!))));
    }
    return anchors.get(path)!;
  };
  for (const path of md) {
    const text = await read(path);
    for (const m of text.matchAll(/\]\(([^)\s]+)\)/g)) {
      const href = m[1]!;
      if (/^[a-z]+:/.test(href)) continue;
      const [file, anchor] = href.split("#");
      const dir = path.includes("/") ? path.slice(0, path.lastIndexOf("/") + 1) : "";
      const target = file
        ? new URL(file, `file:///${dir}`).pathname.slice(1).replace(/\/$/, "")
        : path;
      const exists = await Deno.stat(`${repoRootDir}/${target}`).then(() => true, () => false);
      if (!exists) {
        bad.push(`${path}: ${href}: no such file`);
        continue;
      }
      if (anchor && target.endsWith(".md") && !(await anchorsOf(target)).has(anchor)) {
        bad.push(`${path}: ${href}: no such heading`);
      }
    }
  }
  assertEquals(bad, []);
});

Deno.test("the WAITCMD_* variables the product reads are in help environment and the contract", async () => {
  const vars: string[] = Object.keys(ENV_DEFAULTS);
  const sources = (await repoFiles()).filter((f) =>
    /^(main\.ts|engine\/|output\/|conditions\/)/.test(f) && f.endsWith(".ts") &&
    // Tests and a kind's test material (its suite rows, its test server's starter) ship not.
    !/_test\.ts$|\/_suite\.ts$|\/_service\.ts$/.test(f)
  );
  for (const path of sources) {
    const text = await read(path);
    // A literal name in code (`env.WAITCMD_CI`, `"WAITCMD_DEBUG"`), not one of then's outputs.
    for (const m of text.matchAll(/(?:\.|["'`])(WAITCMD_[A-Z][A-Z0-9_]*[A-Z0-9])\b(?!_)/g)) {
      if (!vars.includes(m[1]!)) vars.push(m[1]!);
    }
  }
  const help = helpText("environment", registry);
  const missing = vars.filter((v) => !help.includes(v) || !CONTRACT.includes(v));
  assertEquals(missing, [], "read by the product, not documented in help environment and §1");
  assert(vars.includes("WAITCMD_CI") && vars.includes("WAITCMD_DEBUG"), vars.join(" "));
});

// --- Adding a kind: docs/development.md's list against where each kind is named. ---

/**
 * Kinds whose name is also an ordinary word (a file, a log, a process, deno.lock's lockfile):
 * a text search cannot tell where they are named as a kind, so the check below leaves them out.
 */
const ORDINARY_WORDS = new Set([
  "http",
  "tcp",
  "file",
  "log",
  "dns",
  "tls",
  "ssh",
  "glob",
  "ports",
  "container",
  "process",
  "exec",
  "unix",
  "udp",
  "permission",
  "checksum",
  "archive",
  "lockfile",
]);

/** Shared helpers, each naming the kinds it serves (its users). */
const SHARED_HELPERS: Readonly<Record<string, readonly string[]>> = {
  "conditions/_common/datastore.ts": ["postgres", "mysql", "redis"],
  "conditions/_common/sql.ts": ["postgres", "mysql"],
  "conditions/_common/driver.ts": [
    "postgres",
    "mysql",
    "redis",
    "mongodb",
    "rabbitmq",
    "kafka",
    "nats",
  ],
  "conditions/_common/procs.ts": ["pidfile"],
  "tests/faults/_garbage.ts": ["objstore", "orch", "websocket"],
  "conditions/_common/headers.ts": ["grpc", "websocket"],
  "conditions/_common/textmatch.ts": ["websocket"],
  "conditions/_common/httpx.ts": ["orch"],
  "conditions/_common/jsonpath.ts": ["orch"],
  "conditions/_common/nodeerr.ts": ["orch"],
  "conditions/_common/filestamp.ts": ["cosign"],
};

/**
 * Files outside the list that name a kind as an example or as a user of something shared; each
 * entry is checked to still name those kinds.
 */
const EXAMPLES: Readonly<Record<string, { kinds: readonly string[]; why: string }>> = {
  ...Object.fromEntries(
    Object.entries(SHARED_HELPERS).map((
      [path, kinds],
    ) => [path, { kinds, why: "a shared helper names the kinds it serves" }]),
  ),
  "README.md": { kinds: ["postgres"], why: "example 5 waits for a database" },
  "conditions/exec/display.ts": {
    kinds: ["mysql"],
    why: "exec's name masks the MySQL clients' -pPASSWORD, a form no credential name covers",
  },
  "docs/contract.md": {
    kinds: [
      "orch",
      "objstore",
      "postgres",
      "mysql",
      "redis",
      "websocket",
      "grpc",
      "svcmgr",
      "icmp",
      "mongodb",
      "rabbitmq",
      "kafka",
      "nats",
      "cosign",
    ],
    why:
      "what several kinds share (doctor's checks, captures, limits, the kinds run in workers) and examples (orch -f, URLs)",
  },
  "conditions/http/README.md": { kinds: ["orch"], why: "orch --jsonpath uses http's expressions" },
  "docs/migration.md": {
    kinds: [
      "svcmgr",
      "postgres",
      "mysql",
      "redis",
      "mongodb",
      "rabbitmq",
      "kafka",
      "pidfile",
      "cosign",
      "grpc",
      "websocket",
      "ntp",
      "icmp",
      "influxdb",
    ],
    why: "the peers' flags mapped to every kind's form",
  },
  "conditions/mysql/README.md": { kinds: ["postgres"], why: "satisfied as postgres is" },
  "conditions/mongodb/_suite.ts": {
    kinds: ["postgres"],
    why: "a usage row: another database's URL is not a mongodb URL",
  },
  "conditions/udp/README.md": { kinds: ["icmp"], why: "ICMP the protocol" },
  "docs/development.md": {
    kinds: ["orch", "objstore", "kafka", "nats", "postgres", "mysql", "redis", "mongodb", "grpc"],
    why: "the bundle's chunks of the kinds' libraries, and examples of lazy imports",
  },
  "scripts/bundle_fixups.ts": {
    kinds: ["kafka", "orch", "svcmgr"],
    why: "the packages the bundle treats apart, with the kinds that use them",
  },
  "conditions/_common/udp.ts": {
    kinds: ["ntp", "icmp"],
    why: "a shared helper names the kinds it serves; ICMP the protocol",
  },
  "conditions/_common/doctor.ts": {
    kinds: ["orch", "objstore", "icmp"],
    why: "doctor's shared checks name the kinds they serve",
  },
  "conditions/tcp/mod.ts": { kinds: ["redis"], why: "an example of tcp's help" },
  "conditions/tcp/README.md": { kinds: ["redis"], why: "its head shows tcp's help examples" },
  "conditions/udp/mod.ts": { kinds: ["icmp"], why: "ICMP the protocol" },
  "conditions/process/mod.ts": { kinds: ["postgres"], why: "an example process name" },
  "conditions/process/README.md": { kinds: ["postgres"], why: "its head's example process name" },
  "engine/leaf.ts": { kinds: ["postgres"], why: "a comment's example (process postgres)" },
  "engine/typed_secrets.ts": { kinds: ["postgres"], why: "a comment's example URL" },
  "engine/masking.ts": { kinds: ["postgres"], why: "comments' example URLs and words" },
  "engine/types.ts": { kinds: ["objstore", "orch"], why: "comments' examples" },
  "engine/prepare.ts": { kinds: ["orch"], why: "a comment's example of a kind that expands" },
  "cli/command.ts": { kinds: ["orch"], why: "a comment's example of a kind that expands" },
  "output/help.ts": {
    kinds: ["orch", "websocket", "postgres"],
    why:
      "the captures topic names the kinds with --matches and --jsonpath; the start topic's CI example waits for a database",
  },
  "scripts/test": {
    kinds: ["orch", "svcmgr", "container", "http"],
    why: "the k8s build also builds what the orch tests run; the e2e files that run alone",
  },
};

/**
 * The tests under tests/ that name kinds as samples of something else (a fault, redaction, the
 * CLI's surface), by path or folder: a kind's own tests and its rows of the shared suites are in its
 * folder (tests/_suite.ts finds them through the registry), so adding a kind touches none of these.
 */
const SAMPLE_TESTS: readonly { path: string; why: string }[] = [
  { path: "tests/docs_test.ts", why: "these lists" },
  {
    path: "tests/e2e/",
    why: "a feature of the CLI shown on kinds (redaction, completions, peers' forms)",
  },
  { path: "tests/faults/", why: "a fault injected into the kinds it concerns" },
  {
    path: "tests/engine/linear_test.ts",
    why: "a command line with a secret, for the redaction's cost",
  },
  { path: "tests/release/bundle_test.ts", why: "the bundle waits for a real server once" },
  { path: "tests/services/", why: "the shared starters' own tests" },
];

/** Files under tests/ and scripts/ named after a kind or an alias that stay out of its folder. */
const NAMED_FILES: readonly { path: string; why: string }[] = [
  {
    path: "tests/services/grpc/",
    why: "a server built from sources: scripts/services/build-grpc.sh builds it there",
  },
  { path: "tests/services/kafka/", why: "Kafka's Maven build, run by build-kafka.sh" },
  { path: "tests/services/k8s/", why: "kube-apiserver's Go module, built by build-k8s.sh" },
  {
    path: "tests/services/mongo",
    why:
      "a MongoDB stand-in the benchmarks start (scripts/bench/queue_bench.ts), not a kind's test",
  },
  {
    path: "tests/services/docker.ts",
    why: "dockerd: the container kind, http over a socket, the release image",
  },
  {
    path: "tests/services/http_servers.ts",
    why: "HTTP servers for http, tls, redaction and the peers' forms",
  },
  { path: "tests/services/tls.ts", why: "the certificates every TLS test makes" },
  { path: "scripts/services/build-", why: "scripts/test runs every build script of the folder" },
  { path: "scripts/bench/", why: "the benchmarks, by module" },
  { path: "tests/release/docker_test.ts", why: "the release's container image, not the kind" },
  {
    path: "tests/faults/exec_test.ts",
    why: "exec's commands killed at waitcmd's end: a fault test, run with tests/faults/",
  },
];

/** The file patterns of docs/development.md's "Adding a kind" table, for `kind`. */
function listedPatterns(development: string, kind: string): RegExp[] {
  const section = development.split("### Adding a kind")[1]?.split("\n#")[0] ?? "";
  const rows = section.split("\n").filter((l) => /^\| `/.test(l));
  assert(rows.length >= 5, "docs/development.md: the Adding a kind table");
  return rows.flatMap((row) =>
    [...row.split("|")[1]!.matchAll(/`([^`]+)`/g)].map((m) => {
      const re = m[1]!.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")
        .replaceAll("<kind>", kind)
        .replace(/<[a-z]+>/g, "[A-Za-z0-9_.-]+");
      return new RegExp(`^${re}${m[1]!.endsWith("/") ? "" : "$"}`);
    })
  );
}

Deno.test("a kind is named only in the files docs/development.md lists for adding one", async () => {
  const development = await read("docs/development.md");
  const tableFiles = new Set(TABLE_FILES.map((f) => f.path));
  const texts = new Map<string, string>();
  for (const path of await repoFiles()) {
    // A unit test of engine/, output/ or cli/ uses kinds as sample input; the tests under tests/
    // are checked below, against SAMPLE_TESTS.
    if (path.endsWith("_test.ts") && !path.startsWith("tests/")) continue;
    const text = await textOf(path);
    if (text !== undefined) texts.set(path, tableFiles.has(path) ? withoutTable(text) : text);
  }
  const stray: string[] = [];
  const stale: string[] = [];
  const used = new Set<string>();
  for (const k of registry.kinds.filter((k) => !ORDINARY_WORDS.has(k.name))) {
    const word = new RegExp(`(?<![A-Za-z0-9_])${k.name}(?![A-Za-z0-9_])`, "i");
    const listed = listedPatterns(development, k.name);
    for (const [path, text] of texts) {
      const named = word.test(text);
      const sample = path.endsWith("_test.ts")
        ? SAMPLE_TESTS.find((t) => path.startsWith(t.path))
        : undefined;
      if (sample && named) used.add(sample.path);
      if (sample) continue;
      if (EXAMPLES[path]?.kinds.includes(k.name)) {
        if (!named) stale.push(`${path} no longer names ${k.name}`);
        continue;
      }
      if (!named || path.startsWith(`conditions/${k.name}/`)) continue;
      if (listed.some((p) => p.test(path)) && !tableFiles.has(path)) continue;
      stray.push(`${path} names ${k.name}`);
    }
  }
  stale.push(
    ...SAMPLE_TESTS.filter((t) => !used.has(t.path)).map((t) => `${t.path} names no kind now`),
  );
  assertEquals(stale, [], "EXAMPLES or SAMPLE_TESTS lists a mention that is gone");
  assertEquals(stray, [], "a kind named outside docs/development.md's list (or EXAMPLES)");
});

Deno.test("no file outside a kind's folder is named after the kind (its tests, rows and server are in it)", async () => {
  // The first word of a file's or folder's name: `tests/e2e/postgres_test.ts` gives postgres.
  const words = new Map(
    registry.kinds.flatMap((k) => [k.name, ...k.aliases].map((w) => [w, k.name])),
  );
  const named: string[] = [];
  for (const path of await repoFiles()) {
    if (!/^(tests|scripts)\//.test(path)) continue;
    for (const part of path.split("/").slice(1)) {
      const kind = words.get(part.split(/[_.-]/)[0]!);
      if (kind && !NAMED_FILES.some((f) => path.startsWith(f.path))) {
        named.push(`${path} (${kind})`);
      }
    }
  }
  assertEquals(
    [...new Set(named)],
    [],
    "move it into conditions/<kind>/, or list it in NAMED_FILES",
  );
});
