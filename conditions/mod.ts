/**
 * The registry: the only list of condition kinds. A kind is a folder
 * (`conditions/<kind>/mod.ts` declares it, `probe.ts` implements it and is
 * loaded only when a condition of the kind runs); adding one means that
 * folder and one line here.
 *
 * @module
 */

import { createRegistry, type Registry } from "../engine/registry.ts";
import { container } from "./container/mod.ts";
import { dns } from "./dns/mod.ts";
import { exec } from "./exec/mod.ts";
import { file } from "./file/mod.ts";
import { glob } from "./glob/mod.ts";
import { http } from "./http/mod.ts";
import { log } from "./log/mod.ts";
import { objstore } from "./objstore/mod.ts";
import { orch } from "./orch/mod.ts";
import { ports } from "./ports/mod.ts";
import { process } from "./process/mod.ts";
import { ssh } from "./ssh/mod.ts";
import { svcmgr } from "./svcmgr/mod.ts";
import { tcp } from "./tcp/mod.ts";
import { tls } from "./tls/mod.ts";
import { unix } from "./unix/mod.ts";
import { postgres } from "./postgres/mod.ts";
import { mysql } from "./mysql/mod.ts";
import { redis } from "./redis/mod.ts";
import { mongodb } from "./mongodb/mod.ts";
import { rabbitmq } from "./rabbitmq/mod.ts";
import { kafka } from "./kafka/mod.ts";
import { pidfile } from "./pidfile/mod.ts";
import { lockfile } from "./lockfile/mod.ts";
import { permission } from "./permission/mod.ts";
import { checksum } from "./checksum/mod.ts";
import { archive } from "./archive/mod.ts";
import { cosign } from "./cosign/mod.ts";
import { grpc } from "./grpc/mod.ts";
import { websocket } from "./websocket/mod.ts";
import { udp } from "./udp/mod.ts";
import { ntp } from "./ntp/mod.ts";
import { icmp } from "./icmp/mod.ts";

/** Every condition kind waitcmd knows, in the order help lists them. */
export const registry: Registry = createRegistry([
  http,
  tcp,
  file,
  log,
  dns,
  tls,
  ssh,
  objstore,
  glob,
  ports,
  orch,
  container,
  process,
  svcmgr,
  exec,
  unix,
  postgres,
  mysql,
  redis,
  mongodb,
  rabbitmq,
  kafka,
  pidfile,
  lockfile,
  permission,
  checksum,
  archive,
  cosign,
  grpc,
  websocket,
  udp,
  ntp,
  icmp,
]);
