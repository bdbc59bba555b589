/**
 * The JSON Schemas of docs/ (report and recipe), compiled once with ajv
 * (draft 2020-12), for the tests that read reports and recipes.
 *
 * @module
 */

/** Directory of the repository. */
const repoRootDir = new URL("../", import.meta.url).pathname.replace(/\/$/, "");

type Validate = ((data: unknown) => boolean) & {
  errors?: { instancePath: string; message?: string }[] | null;
};

const compiled = new Map<string, Promise<Validate>>();

function validator(file: string): Promise<Validate> {
  let v = compiled.get(file);
  if (!v) {
    v = (async () => {
      const mod = await import("ajv/dist/2020.js");
      const Ajv =
        (mod as unknown as { Ajv2020: new (o: object) => { compile(s: unknown): Validate } })
          .Ajv2020;
      const ajv = new Ajv({ allErrors: true, strict: false });
      const schema = JSON.parse(await Deno.readTextFile(`${repoRootDir}/docs/${file}`));
      return ajv.compile(schema);
    })();
    compiled.set(file, v);
  }
  return v;
}

async function check(file: string, data: unknown): Promise<void> {
  const validate = await validator(file);
  if (!validate(data)) {
    const why = (validate.errors ?? []).map((e) => `${e.instancePath || "/"} ${e.message}`);
    throw new Error(`does not match docs/${file}: ${why.join("; ")}\n${JSON.stringify(data)}`);
  }
}

/** Throws unless `report` matches docs/report.schema.json. */
export function assertReportSchema(report: unknown): Promise<void> {
  return check("report.schema.json", report);
}

/** Throws unless `recipe` (already parsed) matches docs/recipe.schema.json. */
export function assertRecipeSchema(recipe: unknown): Promise<void> {
  return check("recipe.schema.json", recipe);
}
