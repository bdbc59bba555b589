/**
 * Loopback listeners and closed ports for many-condition rows, and raising
 * the open-file limit a child may need for them.
 *
 * Benchmarks measure; nothing here asserts a timing.
 *
 * @module
 */

/** `n` TCP listeners on 127.0.0.1 that accept and close every connection. */
export function listenMany(n: number): { ports: number[]; close(): Promise<void> } {
  const listeners: Deno.Listener[] = [];
  const loops: Promise<void>[] = [];
  try {
    for (let i = 0; i < n; i++) {
      const l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
      listeners.push(l);
      loops.push((async () => {
        try {
          for await (const conn of l) conn.close();
        } catch {
          // Closed.
        }
      })());
    }
  } catch (e) {
    for (const l of listeners) l.close();
    throw e;
  }
  return {
    ports: listeners.map((l) => (l.addr as Deno.NetAddr).port),
    async close() {
      for (const l of listeners) {
        try {
          l.close();
        } catch {
          // Already closed.
        }
      }
      await Promise.allSettled(loops);
    },
  };
}

/** `n` distinct loopback ports that nothing listens on (a moment ago). */
export function closedPorts(n: number): number[] {
  const ls = Array.from({ length: n }, () => Deno.listen({ hostname: "127.0.0.1", port: 0 }));
  const ports = ls.map((l) => (l.addr as Deno.NetAddr).port);
  for (const l of ls) l.close();
  return ports;
}

/** The soft limit of open files (`ulimit -n`), or undefined where unknown. */
export async function openFileLimit(): Promise<number | undefined> {
  try {
    const out = await new Deno.Command("sh", { args: ["-c", "ulimit -n"], stdout: "piped" })
      .output();
    const n = Number(new TextDecoder().decode(out.stdout).trim());
    return Number.isFinite(n) ? n : undefined; // "unlimited" -> NaN -> undefined
  } catch {
    return undefined;
  }
}

/**
 * `cmd` wrapped so that it runs with at least `n` open files allowed: the
 * soft limit is raised with `ulimit -n` (up to the hard limit) in a shell
 * that then `exec`s the command (same PID, no extra process left).
 */
export function withOpenFiles(n: number, cmd: readonly string[]): string[] {
  return [
    "sh",
    "-c",
    `cur=$(ulimit -n); if [ "$cur" != unlimited ] && [ "$cur" -lt ${n} ]; then ulimit -n ${n} 2>/dev/null || ulimit -n "$(ulimit -Hn)"; fi; exec "$@"`,
    "sh",
    ...cmd,
  ];
}
