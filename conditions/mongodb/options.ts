/**
 * mongodb: the driver options of one attempt (docs/contract.md §5 mongodb).
 * One client per attempt with one connection, no retries of its own, and
 * timeouts small enough that an attempt ends by itself well before a
 * typical --attempt-timeout.
 *
 * @module
 */

import type { MongoClientOptions } from "mongodb";
import type { MongodbOptions } from "./mod.ts";

/** How long the driver looks for a suitable server before the attempt fails with its reason. */
export const SERVER_SELECTION_TIMEOUT_MS = 2_000;
/** How long opening one connection (TCP, TLS, handshake) may take. */
export const CONNECT_TIMEOUT_MS = 2_000;
/** How long one command may wait for its answer. */
export const SOCKET_TIMEOUT_MS = 10_000;

/** The MongoClient options for `options`, with the password and CA text read for this attempt. */
export function driverOptions(
  options: MongodbOptions,
  password: string | undefined,
  ca: string | undefined,
): MongoClientOptions {
  const out: MongoClientOptions = {
    appName: "waitcmd",
    serverSelectionTimeoutMS: SERVER_SELECTION_TIMEOUT_MS,
    connectTimeoutMS: CONNECT_TIMEOUT_MS,
    socketTimeoutMS: SOCKET_TIMEOUT_MS,
    maxPoolSize: 1,
    minPoolSize: 0,
    maxConnecting: 1,
    retryReads: false,
    retryWrites: false,
    monitorCommands: false,
  };
  if (options.password !== undefined && options.user !== undefined) {
    out.auth = { username: options.user, password };
  }
  if (options.tls.mode === "on") out.tls = true;
  if (ca !== undefined) out.ca = ca;
  if (options.tls.verify === "none") out.tlsInsecure = true;
  return out;
}
