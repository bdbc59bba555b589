/**
 * One copy of each string of data that many conditions repeat. In a worker, a structured clone
 * gives every condition its own copy of each string of its options (`ConfigMap`, `v1`, a
 * collection's path) and its objects in V8's slow dictionary form; on the main thread, each
 * document of a manifest has its own copy of its kind and version. A manifest of tens of
 * thousands of objects paid for both (docs/reliability.md, large manifests).
 *
 * @module
 */

/** Interns the strings of plain data: equal strings become one, plain objects are rebuilt. */
export class Interner {
  readonly #strings = new Map<string, string>();

  /**
   * `value` with each string replaced by the first equal one this interner saw, and its plain
   * objects and arrays rebuilt (fast properties); anything else (a typed array) kept as it is.
   * Not recursive: data nested deeper than the stack is rebuilt as well.
   */
  value<T>(value: T): T {
    const root = { value: value as unknown };
    const todo: [Record<string, unknown> | unknown[], string | number][] = [[root, "value"]];
    while (todo.length > 0) {
      const [holder, key] = todo.pop()!;
      const v = (holder as Record<string, unknown>)[key];
      if (typeof v === "string") {
        (holder as Record<string, unknown>)[key] = this.#string(v);
      } else if (Array.isArray(v)) {
        const copy = v.slice();
        (holder as Record<string, unknown>)[key] = copy;
        for (let i = 0; i < copy.length; i++) todo.push([copy, i]);
      } else if (isPlainObject(v)) {
        const copy: Record<string, unknown> = Object.getPrototypeOf(v) === null
          ? Object.create(null)
          : {};
        for (const k of Object.keys(v)) {
          copy[k] = v[k];
          todo.push([copy, k]);
        }
        (holder as Record<string, unknown>)[key] = copy;
      }
    }
    return root.value as T;
  }

  #string(s: string): string {
    const known = this.#strings.get(s);
    if (known !== undefined) return known;
    this.#strings.set(s, s);
    return s;
  }
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  if (typeof v !== "object" || v === null) return false;
  const proto = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null;
}
