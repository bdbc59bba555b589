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

/**
 * What one attempt's client uses where the URI does not say: one connection,
 * no retries of its own, timeouts that end an attempt by itself.
 */
export const ATTEMPT_DEFAULTS: Readonly<MongoClientOptions> = {
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

/** The MongoClient options for `options`, with the password and CA text read for this attempt. */
export function driverOptions(
  options: MongodbOptions,
  password: string | undefined,
  ca: string | undefined,
): MongoClientOptions {
  const out: MongoClientOptions = {};
  // The URI's own options are passed on with their meaning (the driver lets an options
  // object override the URI, so a default goes in only where the URI is silent).
  for (const [name, value] of Object.entries(ATTEMPT_DEFAULTS)) {
    if (!options.uriOptions.includes(name.toLowerCase())) {
      (out as Record<string, unknown>)[name] = value;
    }
  }
  if (options.password !== undefined && options.user !== undefined) {
    out.auth = { username: options.user, password };
  }
  if (options.tls.mode === "on") out.tls = true;
  if (ca !== undefined) out.ca = ca;
  if (options.tls.verify === "none") out.tlsInsecure = true;
  return out;
}
