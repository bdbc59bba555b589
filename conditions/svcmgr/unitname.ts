/**
 * Unit names as svcmgr accepts them: `nginx` means `nginx.service`.
 * Pure, for the kind's parse.
 *
 * @module
 */

/** Unit types systemd knows; a name without one of these suffixes gets `.service`. */
export const UNIT_TYPES: readonly string[] = [
  "service",
  "socket",
  "device",
  "mount",
  "automount",
  "swap",
  "target",
  "path",
  "timer",
  "slice",
  "scope",
];

const UNIT_NAME_CHARS = /^[A-Za-z0-9:_.\\@-]+$/;
const EXPECTED = "expected a unit name like nginx or nginx.service";

/**
 * The full unit name for `text` (`.service` appended when it has no
 * unit-type suffix). Throws an Error saying what is wrong with `text`.
 */
export function normalizeUnitName(text: string): string {
  if (text === "") throw new Error(`${EXPECTED}, got an empty string`);
  if (!UNIT_NAME_CHARS.test(text)) {
    throw new Error(
      `${EXPECTED}, got ${JSON.stringify(text)} (allowed: letters, digits and :_.\\@-)`,
    );
  }
  const dot = text.lastIndexOf(".");
  const suffix = dot >= 0 ? text.slice(dot + 1) : "";
  const name = UNIT_TYPES.includes(suffix) ? text : `${text}.service`;
  const prefix = name.slice(0, name.lastIndexOf("."));
  if (prefix === "" || prefix.startsWith("@") || prefix.startsWith(".")) {
    throw new Error(`${EXPECTED}, got ${JSON.stringify(text)}`);
  }
  if (prefix.endsWith("@")) {
    throw new Error(
      `${JSON.stringify(text)} is a template; name an instance like ${prefix.slice(0, -1)}@1.${
        name.slice(name.lastIndexOf(".") + 1)
      }`,
    );
  }
  if (name.length > 255) throw new Error("unit name is longer than 255 characters");
  return name;
}
