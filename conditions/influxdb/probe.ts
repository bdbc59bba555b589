/**
 * influxdb's probe is the HTTP probe (conditions/_common/http_probe.ts): one GET of URL/ping per attempt (redirects
 * followed), judged against 2xx (docs/contract.md §5 influxdb). An answer
 * with another status names the path asked, which the condition's name (the
 * server's URL) does not show.
 *
 * @module
 */

import type { Probe, ProbeEnv } from "../../engine/types.ts";
import { createHttpProbe } from "../_common/http_probe.ts";
import type { HttpOptions } from "../_common/http_options.ts";

/** Makes the probe of one influxdb condition. */
export function create(o: HttpOptions, env: ProbeEnv): Probe {
  const http = createHttpProbe(o, env);
  const path = new URL(o.url).pathname;
  return {
    ...http,
    async check(ctx) {
      const r = await http.check(ctx);
      return r.status === "pending" && r.error.startsWith("status ")
        ? { ...r, error: `${path} answered ${r.error}` }
        : r;
    },
  };
}
