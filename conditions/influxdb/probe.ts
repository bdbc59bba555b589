/**
 * influxdb's probe is http's: one GET of URL/ping per attempt (redirects
 * followed), judged against 2xx (docs/contract.md §5 influxdb).
 *
 * @module
 */

export { create } from "../http/probe.ts";
