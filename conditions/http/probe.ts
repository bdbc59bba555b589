/**
 * http's probe: the HTTP probe of conditions/_common/http_probe.ts, which
 * sends the request (following redirects) and judges the answer
 * (docs/contract.md §5 http).
 *
 * @module
 */

import type { Probe, ProbeEnv } from "../../engine/types.ts";
import { createHttpProbe } from "../_common/http_probe.ts";
import type { HttpOptions } from "../_common/http_options.ts";

/** Makes the probe of one http condition. */
export function create(o: HttpOptions, env: ProbeEnv): Probe {
  return createHttpProbe(o, env);
}
