/**
 * unix's probe: one connection per attempt, closed at once.
 *
 * @module
 */

import { withHint } from "../../engine/errors.ts";
import type { Probe, ProbeResult } from "../../engine/types.ts";
import { missingSocketHint } from "../_common/hints.ts";
import type { UnixOptions } from "./mod.ts";

/** Makes the probe of one unix condition. */
export function create({ path }: UnixOptions): Probe {
  return {
    check: async ({ signal }): Promise<ProbeResult> => {
      if (Deno.build.os === "windows") {
        return { status: "fatal", error: "unix sockets are not supported on Windows" };
      }
      signal.throwIfAborted();
      // Deno.connect takes no signal for unix sockets: an abort stops the wait instead.
      let onAbort = () => {};
      const aborted = new Promise<never>((_, reject) => {
        onAbort = () => reject(signal.reason);
        signal.addEventListener("abort", onAbort, { once: true });
      });
      const connecting = Deno.connect({ transport: "unix", path });
      try {
        const conn = await Promise.race([connecting, aborted]);
        conn.close();
      } catch (e) {
        // A connection that opens after the abort is closed, not leaked.
        connecting.then((c) => c.close(), () => {});
        throw e instanceof Deno.errors.NotFound ? withHint(e, missingSocketHint(path)) : e;
      } finally {
        signal.removeEventListener("abort", onAbort);
      }
      return { status: "satisfied", detail: `connected to ${path}` };
    },
  };
}
