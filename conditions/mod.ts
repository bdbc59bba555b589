/**
 * The registry: the only list of condition kinds. Adding a kind means one
 * file in conditions/ and one line here.
 *
 * @module
 */

import { createRegistry, type Registry } from "../engine/registry.ts";
import { container } from "./container.ts";
import { dns } from "./dns.ts";
import { exec } from "./exec.ts";
import { file } from "./file.ts";
import { glob } from "./glob.ts";
import { http } from "./http.ts";
import { log } from "./log.ts";
import { objstore } from "./objstore.ts";
import { orch } from "./orch.ts";
import { ports } from "./ports.ts";
import { process } from "./process.ts";
import { ssh } from "./ssh.ts";
import { svcmgr } from "./svcmgr.ts";
import { tcp } from "./tcp.ts";
import { tls } from "./tls.ts";
import { unix } from "./unix.ts";

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
]);
