import { assertEquals, assertRejects } from "../../tests/_assert.ts";
import { optionsOf } from "../../tests/_kit.ts";
import type { ExpandContext } from "../../engine/types.ts";
import { readBounded } from "../../engine/files.ts";
import { expandManifests, ManifestError, parseManifest } from "./manifest.ts";
import type { OrchOptions } from "./mod.ts";

const DEPLOY = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: prod
spec: {replicas: 2}
`;

Deno.test("parseManifest() reads documents, JSON and Lists", async (t) => {
  await t.step("several documents, empty ones skipped", async () => {
    const text =
      `---\n${DEPLOY}---\n# only a comment\n---\napiVersion: v1\nkind: Service\nmetadata: {name: web}\n`;
    assertEquals(await parseManifest("app.yaml", text), [
      { apiVersion: "apps/v1", kind: "Deployment", name: "web", namespace: "prod" },
      { apiVersion: "v1", kind: "Service", name: "web", namespace: undefined },
    ]);
  });
  await t.step("JSON", async () => {
    const text = JSON.stringify({ apiVersion: "batch/v1", kind: "Job", metadata: { name: "m" } });
    assertEquals(await parseManifest("job.json", text), [
      { apiVersion: "batch/v1", kind: "Job", name: "m", namespace: undefined },
    ]);
  });
  await t.step("a List expands to its items", async () => {
    const text = JSON.stringify({
      apiVersion: "v1",
      kind: "List",
      items: [
        { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "a" } },
        { apiVersion: "example.com/v1", kind: "Widget", metadata: { name: "w", namespace: "x" } },
      ],
    });
    assertEquals(await parseManifest("list.json", text), [
      { apiVersion: "v1", kind: "ConfigMap", name: "a", namespace: undefined },
      { apiVersion: "example.com/v1", kind: "Widget", name: "w", namespace: "x" },
    ]);
  });
  await t.step("nothing at all", async () => {
    assertEquals(await parseManifest("empty.yaml", ""), []);
  });
});

Deno.test("parseManifest() names the file and document of what it cannot use", async (t) => {
  const rows: [string, string][] = [
    [
      `${DEPLOY}---\nkind: [\n`,
      "app.yaml: document 2 (line 9): not valid YAML or JSON: ",
    ],
    [
      `${DEPLOY}---\napiVersion: v1\nmetadata: {name: x}\n`,
      "app.yaml: document 2 (line 7): has no kind; expected a Kubernetes object (a mapping with apiVersion, kind and metadata.name)",
    ],
    [
      "kind: Pod\nmetadata: {name: x}\n",
      "app.yaml: document 1 (line 1): Pod has no apiVersion; expected a Kubernetes object",
    ],
    [
      "apiVersion: v1\nkind: Pod\nmetadata: {generateName: x-}\n",
      "app.yaml: document 1 (line 1): Pod has no metadata.name (an object with generateName gets its name when created: wait for it by label)",
    ],
    [
      "apiVersion: v1\nkind: Pod\nmetadata: {name: a/b}\n",
      'app.yaml: document 1 (line 1): Pod has an invalid name "a/b"',
    ],
    [
      "apiVersion: v1\nkind: Pod\nmetadata: {name: a, namespace: Prod_1}\n",
      'app.yaml: document 1 (line 1): Pod a has an invalid namespace "Prod_1"',
    ],
    ["- a\n- b\n", "app.yaml: document 1 (line 1): expected a Kubernetes object"],
    [
      "apiVersion: v1\nkind: List\nitems: [{apiVersion: v1, kind: Pod}]\n",
      "app.yaml: document 1 (line 1), item 1: Pod has no metadata.name",
    ],
  ];
  for (const [text, want] of rows) {
    await t.step(want, async () => {
      const e = await assertRejects(() => parseManifest("app.yaml", text), ManifestError);
      assertEquals(e.message.slice(0, want.length), want);
    });
  }
  await t.step("an alias bomb is refused, not expanded", async () => {
    const bomb = [
      "a: &a [x, x, x, x, x, x, x, x, x, x]",
      "b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]",
      "c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]",
      "d: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]",
      "e: [*d, *d, *d, *d, *d, *d, *d, *d, *d, *d]",
    ].join("\n");
    const e = await assertRejects(() => parseManifest("bomb.yaml", bomb), ManifestError);
    assertEquals(
      e.message.startsWith("bomb.yaml: document 1 (line 1): not valid YAML or JSON: "),
      true,
      e.message,
    );
  });
});

/** The cap of the CLI's reads of files named on the command line (main.ts). */
const INPUT_MAX_BYTES = 4 << 20;

/** An expand context over real files, read as the CLI reads them (bounded). */
function context(stdin = ""): ExpandContext & { failed: string[] } {
  const failed: string[] = [];
  return {
    failed,
    readText: (path) => path === "-" ? Promise.resolve(stdin) : readBounded(path, INPUT_MAX_BYTES),
    async readDir(path) {
      const out = [];
      for await (const e of Deno.readDir(path)) {
        out.push({ name: e.name, isFile: e.isFile, isDirectory: e.isDirectory });
      }
      return out.sort((a, b) => a.name < b.name ? -1 : 1);
    },
    isDirectory: (path) => Deno.stat(path).then((i) => i.isDirectory, () => false),
    fail(flag, message): never {
      failed.push(`--${flag}: ${message}`);
      throw new Error(message);
    },
  };
}

Deno.test("expandManifests() makes one condition per object, named KIND/[NAMESPACE/]NAME", async () => {
  const dir = await Deno.makeTempDir({ prefix: "waitcmd-manifest-" });
  try {
    await Deno.writeTextFile(`${dir}/b.yaml`, DEPLOY);
    await Deno.writeTextFile(
      `${dir}/a.json`,
      JSON.stringify({
        apiVersion: "v1",
        kind: "PersistentVolumeClaim",
        metadata: { name: "data" },
      }),
    );
    await Deno.writeTextFile(`${dir}/c.yml`, `${DEPLOY}---\n${DEPLOY}`);
    await Deno.writeTextFile(`${dir}/README.md`, "not a manifest");
    await Deno.mkdir(`${dir}/sub.yaml`);
    const o = optionsOf<OrchOptions>(["k8s", "-f", dir, "--namespace", "shop"]);
    const leaves = await expandManifests(o, dir, context());
    assertEquals(leaves.map((l) => l.target), [
      "persistentvolumeclaim/data",
      "deployment/prod/web",
    ]);
    assertEquals(leaves[0]!.options, {
      resource: "PersistentVolumeClaim",
      apiVersion: "v1",
      selection: { by: "name", name: "data" },
      want: { type: "readiness" },
      namespace: "shop",
    });
    assertEquals(leaves[1]!.options.namespace, "prod");
    const deleted = optionsOf<OrchOptions>(["k8s", "-f", "-", "--for", "delete"]);
    const fromStdin = await expandManifests(deleted, "-", context(DEPLOY));
    assertEquals(fromStdin.map((l) => [l.target, l.options.want]), [
      ["deployment/prod/web", { type: "delete" }],
    ]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("expandManifests() fails at --file for files it cannot use", async (t) => {
  const dir = await Deno.makeTempDir({ prefix: "waitcmd-manifest-" });
  const o = optionsOf<OrchOptions>(["k8s", "-f", "x"]);
  const failure = async (file: string, stdin = "") => {
    const ctx = context(stdin);
    await expandManifests(o, file, ctx).catch(() => {});
    return ctx.failed[0];
  };
  try {
    await Deno.mkdir(`${dir}/empty`);
    await Deno.writeTextFile(`${dir}/empty/notes.txt`, "");
    await Deno.writeTextFile(`${dir}/blank.yaml`, "---\n# nothing\n");
    await new Deno.Command("mkfifo", { args: [`${dir}/pipe`] }).output();
    const big = await Deno.open(`${dir}/big.yaml`, { write: true, create: true });
    await big.truncate(INPUT_MAX_BYTES + 1);
    big.close();
    const rows: [string, string, string][] = [
      ["a missing file", `${dir}/nope.yaml`, `--file: ${dir}/nope.yaml: no such file or directory`],
      [
        "a directory without manifests",
        `${dir}/empty`,
        `--file: ${dir}/empty is a directory without .yaml, .yml or .json files`,
      ],
      [
        "a manifest without objects",
        `${dir}/blank.yaml`,
        `--file: no Kubernetes objects in ${dir}/blank.yaml`,
      ],
      [
        "a named pipe (it would block)",
        `${dir}/pipe`,
        `--file: ${dir}/pipe is not a regular file (a named pipe); give a file, a directory, or - to read standard input`,
      ],
      [
        "a device (it would never end)",
        "/dev/zero",
        "--file: /dev/zero is not a regular file (a character device); give a file, a directory, or - to read standard input",
      ],
      [
        "a file over the cap",
        `${dir}/big.yaml`,
        `--file: cannot read ${dir}/big.yaml: larger than 4 MiB`,
      ],
    ];
    for (const [name, file, want] of rows) {
      await t.step(name, async () => assertEquals(await failure(file), want));
    }
    await t.step("empty standard input", async () => {
      assertEquals(await failure("-", "\n"), "--file: no Kubernetes objects in standard input");
    });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
