/**
 * tcp's probe: one connection per attempt, closed at once.
 *
 * @module
 */

import { settle } from "../../engine/settle.ts";
import type { Probe } from "../../engine/types.ts";
import { formatHostPort, tryConnect } from "../_common/net.ts";
import type { TcpOptions } from "./mod.ts";

/** Makes the probe of one tcp condition. */
export function create(hp: TcpOptions): Probe {
  const target = formatHostPort(hp);
  return {
    check: ({ signal }) =>
      settle(
        signal,
        () =>
          tryConnect(hp, signal).then(() => ({
            status: "satisfied",
            detail: `connected to ${target}`,
          })),
      ),
  };
}
