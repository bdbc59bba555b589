/**
 * User and group names to ids: /etc/passwd and /etc/group first, then
 * `getent` (NSS: LDAP, systemd-homed, ...) when it exists.
 *
 * @module
 */

/** An owner or group as given: a numeric id or a name. */
export type IdSpec = { readonly id: number } | { readonly name: string };

/** Which database an id lives in. */
export type IdDb = "passwd" | "group";

/** The id of `name` in `db`, or undefined when no such user or group is known. */
export async function lookupId(db: IdDb, name: string): Promise<number | undefined> {
  try {
    const text = await Deno.readTextFile(`/etc/${db}`);
    const found = idIn(text, name);
    if (found !== undefined) return found;
  } catch {
    // No such file here (Windows, a minimal image): ask getent.
  }
  try {
    const out = await new Deno.Command("getent", {
      args: [db, name],
      stdout: "piped",
      stderr: "null",
    }).output();
    if (out.success) return idIn(new TextDecoder().decode(out.stdout), name);
  } catch {
    // No getent.
  }
  return undefined;
}

/** The id field of `name`'s line in a passwd or group file's text. */
export function idIn(text: string, name: string): number | undefined {
  for (const line of text.split("\n")) {
    const f = line.split(":");
    if (f[0] === name && f[2] !== undefined && /^\d+$/.test(f[2])) return Number(f[2]);
  }
  return undefined;
}

/** The id an `IdSpec` stands for, or undefined for an unknown name. */
export function resolveId(db: IdDb, spec: IdSpec): Promise<number | undefined> {
  return "id" in spec ? Promise.resolve(spec.id) : lookupId(db, spec.name);
}
