/**
 * Makes docs/recipe.schema.json: the recipe's shape (conditions, guards,
 * groups, then) is written here, and its run-level keys come from the
 * run-level flags' declarations (`RUN_FLAGS` in engine/options.ts), so a new
 * flag is a recipe key of the schema without a second list. Run
 * `deno task schema` after changing a run-level flag; tests/recipe_schema_test.ts
 * checks that the file is what this makes.
 *
 * @module
 */

import { RUN_FLAGS, type RunFlag } from "../engine/options.ts";

/** Where the schema is written, from the repository's root. */
export const RECIPE_SCHEMA_PATH = "docs/recipe.schema.json";

/** What a recipe is, and the shapes its entries take (docs/recipe.md). */
const HEAD = {
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "$id": "https://waitcmd.dev/schemas/recipe.schema.json",
  "title": "waitcmd recipe",
  "description":
    "A file read by `waitcmd --config FILE` (`-f FILE`, `-f -` for stdin), in YAML or JSON (docs/recipe.md). Global options by their long names; conditions and guards; a command to run after the wait.",
  "type": "object",
  "additionalProperties": false,
};

/** A duration, a flag's value, a condition, a group, and a member of a group. */
const DEFS = {
  "duration": {
    "description": "500ms, 30s, 2m, 1h30m, 30d; a bare number is seconds",
    "type": [
      "string",
      "number",
    ],
    "pattern": "^([0-9]+(\\.[0-9]+)?(ms|s|m|h|d)?)+$",
  },
  "flagValue": {
    "type": [
      "string",
      "number",
      "boolean",
    ],
  },
  "condition": {
    "type": "object",
    "required": [
      "kind",
    ],
    "additionalProperties": false,
    "properties": {
      "kind": {
        "type": "string",
        "minLength": 1,
        "description": "a condition kind or alias: tcp, http, k8s, ...",
      },
      "target": {
        "type": [
          "string",
          "number",
        ],
        "description": "the kind's target (URL, host:port, path, ...)",
      },
      "label": {
        "type": "string",
        "description": "display name in every output",
      },
      "not": {
        "type": "boolean",
        "description": "hold while the condition does not",
      },
      "flags": {
        "type": "object",
        "description":
          "the kind's flags by their long names without dashes; a list repeats a repeatable flag",
        "additionalProperties": {
          "anyOf": [
            {
              "$ref": "#/$defs/flagValue",
            },
            {
              "type": "array",
              "items": {
                "$ref": "#/$defs/flagValue",
              },
              "minItems": 1,
            },
          ],
        },
      },
      "command": {
        "type": "array",
        "items": {
          "type": "string",
        },
        "minItems": 1,
        "description": "the command of an exec condition",
      },
      "attempt-timeout": {
        "description":
          "this condition's own cap on one attempt; wins over the global attempt-timeout",
        "$ref": "#/$defs/duration",
      },
      "attempt_timeout": {
        "description": "the same as attempt-timeout",
        "$ref": "#/$defs/duration",
      },
    },
  },
  "group": {
    "description":
      "any: one member must hold; all: every member must hold. Takes the place of a condition (docs/recipe.md)",
    "type": "object",
    "additionalProperties": false,
    "minProperties": 1,
    "oneOf": [
      {
        "required": [
          "any",
        ],
      },
      {
        "required": [
          "all",
        ],
      },
    ],
    "properties": {
      "any": {
        "type": "array",
        "minItems": 1,
        "items": {
          "$ref": "#/$defs/member",
        },
      },
      "all": {
        "type": "array",
        "minItems": 1,
        "items": {
          "$ref": "#/$defs/member",
        },
      },
      "label": {
        "type": "string",
        "description": "display name of the group in every output",
      },
    },
  },
  "member": {
    "anyOf": [
      {
        "$ref": "#/$defs/condition",
      },
      {
        "$ref": "#/$defs/group",
      },
    ],
  },
};

/** The recipe's sections besides its run-level options. */
const SECTIONS = {
  "conditions": {
    "type": "array",
    "items": {
      "$ref": "#/$defs/member",
    },
  },
  "guards": {
    "type": "array",
    "items": {
      "$ref": "#/$defs/condition",
    },
  },
  "then": {
    "description":
      "the command to run once the wait succeeds, as a list of words (no shell): [npm, test]",
    "type": "array",
    "items": {
      "type": "string",
    },
    "minItems": 1,
  },
};

/** The recipe's JSON Schema: the run-level flags a recipe may set, then its sections. */
export function recipeSchema(): Record<string, unknown> {
  const options = RUN_FLAGS.filter((f) => !f.cliOnly).map((f) => [f.name, optionSchema(f)]);
  return {
    ...HEAD,
    $defs: DEFS,
    properties: { ...Object.fromEntries(options), ...SECTIONS },
  };
}

/** A run-level flag's recipe key: its description, and what its type (or its declaration) takes. */
export function optionSchema(flag: RunFlag): Record<string, unknown> {
  return { description: flag.description, ...(flag.recipeSchema ?? typeSchema(flag)) };
}

/** The values a flag's type takes in a recipe (a list of them for a repeatable flag). */
function typeSchema(flag: RunFlag): Record<string, unknown> {
  switch (flag.type) {
    case "duration":
      return { $ref: "#/$defs/duration" };
    case "enum":
      return { enum: [...(flag.values ?? [])] };
    case "boolean":
      return { type: "boolean" };
    case "integer":
      return integerSchema(flag);
    default: {
      const one = { type: "string", minLength: 1 };
      return flag.repeatable ? { oneOf: [one, { type: "array", items: one, minItems: 1 }] } : one;
    }
  }
}

/** An integer flag's range, less its reserved values. */
function integerSchema(flag: RunFlag): Record<string, unknown> {
  const reserved = Object.keys(flag.reserved ?? {}).map(Number);
  return {
    type: "integer",
    ...(flag.min === undefined ? {} : { minimum: flag.min }),
    ...(flag.max === undefined ? {} : { maximum: flag.max }),
    ...(reserved.length > 0 ? { not: { enum: reserved } } : {}),
  };
}

/** The schema as the file holds it (`deno fmt` then lays it out). */
export function recipeSchemaText(): string {
  return JSON.stringify(recipeSchema(), null, 2) + "\n";
}

if (import.meta.main) {
  const root = new URL("../", import.meta.url).pathname;
  await Deno.writeTextFile(`${root}${RECIPE_SCHEMA_PATH}`, recipeSchemaText());
}
