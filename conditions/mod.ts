/**
 * The registry: the list of condition kinds. A kind is a folder
 * (`conditions/<kind>/mod.ts` declares it, `probe.ts` implements it and is
 * loaded only when a condition of the kind runs).
 *
 * The list is generated from the declarations by `deno task docs`
 * (scripts/docs.ts), and tests/docs_test.ts checks it is current: a kind's
 * name and aliases are written once, in its declaration. The list repeats
 * them so that a command line loads the declarations of the kinds it names
 * and no others (docs/performance.md); `loadRegistry()` still checks each
 * line against the declaration it loads.
 *
 * @module
 */

import { createRegistry, type Registry } from "../engine/registry.ts";
import type { ConditionKind } from "../engine/types.ts";

/** One kind: the words that name it and how to load its declaration. */
export interface KindEntry {
  readonly name: string;
  readonly aliases: readonly string[];
  readonly load: () => Promise<ConditionKind>;
}

// generated from each kind's mod.ts by deno task docs: do not edit
/** Every condition kind waitcmd knows, in the order help lists them (new kinds go last). */
export const KINDS: readonly KindEntry[] = [
  { name: "http", aliases: [], load: () => import("./http/mod.ts").then((m) => m.http) },
  { name: "tcp", aliases: [], load: () => import("./tcp/mod.ts").then((m) => m.tcp) },
  { name: "file", aliases: [], load: () => import("./file/mod.ts").then((m) => m.file) },
  { name: "log", aliases: [], load: () => import("./log/mod.ts").then((m) => m.log) },
  { name: "dns", aliases: [], load: () => import("./dns/mod.ts").then((m) => m.dns) },
  { name: "tls", aliases: [], load: () => import("./tls/mod.ts").then((m) => m.tls) },
  { name: "ssh", aliases: [], load: () => import("./ssh/mod.ts").then((m) => m.ssh) },
  {
    name: "objstore",
    aliases: ["s3"],
    load: () => import("./objstore/mod.ts").then((m) => m.objstore),
  },
  { name: "glob", aliases: [], load: () => import("./glob/mod.ts").then((m) => m.glob) },
  { name: "ports", aliases: [], load: () => import("./ports/mod.ts").then((m) => m.ports) },
  {
    name: "orch",
    aliases: ["k8s", "kubernetes"],
    load: () => import("./orch/mod.ts").then((m) => m.orch),
  },
  {
    name: "container",
    aliases: ["docker"],
    load: () => import("./container/mod.ts").then((m) => m.container),
  },
  { name: "process", aliases: [], load: () => import("./process/mod.ts").then((m) => m.process) },
  {
    name: "svcmgr",
    aliases: ["systemd"],
    load: () => import("./svcmgr/mod.ts").then((m) => m.svcmgr),
  },
  { name: "exec", aliases: [], load: () => import("./exec/mod.ts").then((m) => m.exec) },
  { name: "unix", aliases: [], load: () => import("./unix/mod.ts").then((m) => m.unix) },
  {
    name: "postgres",
    aliases: ["postgresql", "pg"],
    load: () => import("./postgres/mod.ts").then((m) => m.postgres),
  },
  {
    name: "mysql",
    aliases: ["mariadb"],
    load: () => import("./mysql/mod.ts").then((m) => m.mysql),
  },
  { name: "redis", aliases: ["valkey"], load: () => import("./redis/mod.ts").then((m) => m.redis) },
  {
    name: "mongodb",
    aliases: ["mongo"],
    load: () => import("./mongodb/mod.ts").then((m) => m.mongodb),
  },
  {
    name: "rabbitmq",
    aliases: ["amqp"],
    load: () => import("./rabbitmq/mod.ts").then((m) => m.rabbitmq),
  },
  { name: "kafka", aliases: [], load: () => import("./kafka/mod.ts").then((m) => m.kafka) },
  { name: "nats", aliases: [], load: () => import("./nats/mod.ts").then((m) => m.nats) },
  {
    name: "influxdb",
    aliases: [],
    load: () => import("./influxdb/mod.ts").then((m) => m.influxdb),
  },
  { name: "pidfile", aliases: [], load: () => import("./pidfile/mod.ts").then((m) => m.pidfile) },
  {
    name: "lockfile",
    aliases: [],
    load: () => import("./lockfile/mod.ts").then((m) => m.lockfile),
  },
  {
    name: "permission",
    aliases: ["perm"],
    load: () => import("./permission/mod.ts").then((m) => m.permission),
  },
  {
    name: "checksum",
    aliases: [],
    load: () => import("./checksum/mod.ts").then((m) => m.checksum),
  },
  { name: "archive", aliases: [], load: () => import("./archive/mod.ts").then((m) => m.archive) },
  { name: "cosign", aliases: [], load: () => import("./cosign/mod.ts").then((m) => m.cosign) },
  { name: "grpc", aliases: [], load: () => import("./grpc/mod.ts").then((m) => m.grpc) },
  {
    name: "websocket",
    aliases: ["ws"],
    load: () => import("./websocket/mod.ts").then((m) => m.websocket),
  },
  { name: "udp", aliases: [], load: () => import("./udp/mod.ts").then((m) => m.udp) },
  { name: "ntp", aliases: [], load: () => import("./ntp/mod.ts").then((m) => m.ntp) },
  { name: "icmp", aliases: ["ping"], load: () => import("./icmp/mod.ts").then((m) => m.icmp) },
];
// end generated

/**
 * The registry of the kinds named by any of `words` (a command line's), or
 * of every kind when `words` is undefined. A line of KINDS that disagrees
 * with the declaration it loads is a bug of ours and throws.
 */
export async function loadRegistry(words?: readonly string[]): Promise<Registry> {
  const wanted = words === undefined ? undefined : new Set(words);
  const entries = wanted === undefined
    ? KINDS
    : KINDS.filter((e) => wanted.has(e.name) || e.aliases.some((a) => wanted.has(a)));
  const kinds = await Promise.all(entries.map(async (e) => {
    const kind = await e.load();
    if (kind.name !== e.name || kind.aliases.join() !== e.aliases.join()) {
      throw new Error(`Cannot register kind '${e.name}': conditions/mod.ts names it otherwise`);
    }
    return kind;
  }));
  return createRegistry(kinds, wanted !== undefined);
}
