/**
 * The independent WebSocket server of the websocket kind's tests: Python's
 * `websockets` (PyPI) in a cached virtual environment made by
 * scripts/services/build-pyws.sh, running tests/services/pyws/server.py.
 * Paths: /echo echoes, /greet sends `hello from websockets`, /deny refuses
 * with 403; /close?code=N&reason=R&greet=T closes with that code (after sending T),
 * /closefile with the code written in `closeCodeFile`; the subprotocol `chat.v1`
 * is accepted when offered; pings are answered (by websockets itself).
 *
 * @module
 */

import { repoRoot, runBuildScript, startLogged } from "../../tests/services/_util.ts";

/** The `websockets` release installed (keep in step with build-pyws.sh). */
export const WEBSOCKETS_VERSION = "17.4";

/** Installs (or finds cached) the environment; resolves to its python. */
export function buildPyWs(): Promise<string> {
  return runBuildScript("build-pyws.sh", `websockets ${WEBSOCKETS_VERSION} from PyPI`);
}

/** A running Python WebSocket server. */
export interface PyWsServer {
  readonly port: number;
  readonly logFile: string;
  stop(): Promise<void>;
}

/** Options of {@link startPyWs}. */
export interface PyWsOptions {
  /** Port to listen on (default: any free one). */
  readonly port?: number;
  /** Serve wss:// with this certificate and key. */
  readonly tls?: { readonly certFile: string; readonly keyFile: string };
  /** Refuse upgrades (401) without this `Name: value` header. */
  readonly requireHeader?: string;
  /** /closefile closes with the code this file holds (1000 while it is missing or empty). */
  readonly closeCodeFile?: string;
}

/** Starts the server; resolves once it listens. */
export async function startPyWs(opts: PyWsOptions = {}): Promise<PyWsServer> {
  const args = [`${repoRoot}/tests/services/pyws/server.py`, "--port", String(opts.port ?? 0)];
  if (opts.tls) args.push("--cert", opts.tls.certFile, "--key", opts.tls.keyFile);
  if (opts.requireHeader) args.push("--require-header", opts.requireHeader);
  if (opts.closeCodeFile) args.push("--close-code-file", opts.closeCodeFile);
  let port = 0;
  const svc = await startLogged({
    prefix: "waitcmd-pyws-",
    log: "pyws.log",
    what: "the Python websockets server",
    cmd: await buildPyWs(),
    args,
    env: { PYTHONUNBUFFERED: "1" },
    async ready(logFile) {
      const m = /^ready (\d+)$/m.exec(await Deno.readTextFile(logFile));
      if (m) port = Number(m[1]);
      return m !== null;
    },
  });
  return { port, logFile: svc.logFile, stop: svc.stop };
}
