import { assert, assertEquals, assertThrows } from "../../tests/_assert.ts";
import "./lazy_ajv.ts";
import { Ajv2020 } from "ajv/dist/2020.js";

const SCHEMA = {
  type: "object",
  properties: { port: { type: "integer", minimum: 1 } },
  required: ["port"],
  additionalProperties: false,
};

Deno.test("lazy ajv: a validator answers as ajv's own, its errors after each call", () => {
  const ajv = new Ajv2020({ allErrors: true, strict: true });
  const validate = ajv.compile(SCHEMA);
  assertEquals(validate({ port: 9092 }), true);
  assertEquals(validate.errors, null);
  assertEquals(validate({ port: 0, extra: 1 }), false);
  assertEquals(validate.errors?.map((e) => e.keyword).sort(), ["additionalProperties", "minimum"]);
  assert(ajv.errorsText(validate.errors).includes("must be >= 1"));
  assertEquals(validate({ port: 1 }), true);
  assertEquals(validate.errors, null);
});

Deno.test("lazy ajv: a schema is compiled at the validator's first call, not before", () => {
  const ajv = new Ajv2020({ strict: true });
  const validate = ajv.compile({ type: "object", notAKeyword: 1 });
  const e = assertThrows(() => validate({}), Error);
  assert(e.message.includes("notAKeyword"), e.message);
});
