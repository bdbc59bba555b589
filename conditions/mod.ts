/**
 * The registry: the only list of condition kinds. Adding a kind means one
 * file in conditions/ and one line here.
 *
 * @module
 */

import { createRegistry, type Registry } from "../engine/registry.ts";
import { exec } from "./exec.ts";
import { file } from "./file.ts";
import { glob } from "./glob.ts";
import { ports } from "./ports.ts";
import { process } from "./process.ts";
import { tcp } from "./tcp.ts";
import { unix } from "./unix.ts";

/** Every condition kind waitcmd knows. */
export const registry: Registry = createRegistry([
  tcp,
  unix,
  ports,
  file,
  glob,
  exec,
  process,
]);
