/**
 * tcp's probe: one connection per attempt, closed at once.
 *
 * @module
 */

import type { Probe } from "../../engine/types.ts";
import { Connector, formatHostPort } from "../_common/net.ts";
import type { TcpOptions } from "./mod.ts";

/** Makes the probe of one tcp condition. */
export function create(hp: TcpOptions): Probe {
  const target = formatHostPort(hp);
  const connector = new Connector();
  return {
    check: ({ signal }) =>
      connector.connect(hp, signal).then(() => ({
        status: "satisfied",
        detail: `connected to ${target}`,
      })),
  };
}
