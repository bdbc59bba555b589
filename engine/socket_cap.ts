/**
 * The read cap of an isolated kind's sockets (docs/reliability.md, "No driver can crash the
 * process"): inside the kind's worker, every `node:net` socket (TLS sockets included) counts
 * the bytes its server sends before any listener, the driver's included, sees them. A socket
 * past the kind's cap is destroyed with an error that names the cap, which the driver reports
 * as its connection's failure: a pending attempt. So a hostile server's 300 MB bulk string or
 * error message is never handed to a parser that would hold it all, however the driver
 * buffers.
 *
 * It patches `Socket.prototype.emit` of the worker it runs in: a worker serves one kind, so
 * the cap is the worker's, set once when its probes are made (engine/isolate_serve.ts).
 *
 * @module
 */

import { Socket } from "node:net";
import { formatCap } from "./memory.ts";

/** What a socket has read so far, kept on the socket itself. */
const READ = Symbol("waitcmd.socketRead");

type Emit = (this: Socket, event: string | symbol, ...args: unknown[]) => boolean;
type Counted = Socket & { [READ]?: number };

/** The cap in force in this worker, once set. */
let installed: number | undefined;

/** The error a socket past `max` is destroyed with. */
export function capError(max: number): Error {
  return new Error(`the server sent more than ${formatCap(max)} in one session (not kept)`);
}

/**
 * Caps what each socket of this thread reads at `max` bytes. Called once per worker; a second
 * call with another cap is ignored (the first kind's declaration stands).
 */
export function capSocketReads(max: number): void {
  if (installed !== undefined) return;
  installed = max;
  const proto = Socket.prototype as unknown as { emit: Emit };
  const emit = proto.emit;
  proto.emit = function (this: Counted, event, ...args) {
    if (event !== "data") return emit.call(this, event, ...args);
    const chunk = args[0] as { readonly length: number } | undefined;
    const read = (this[READ] ?? 0) + (chunk?.length ?? 0);
    this[READ] = read;
    if (read <= max) return emit.call(this, event, ...args);
    if (!this.destroyed) this.destroy(capError(max));
    return false;
  };
}
