/**
 * mongodb (alias mongo): a MongoDB deployment answers `hello` and `ping`,
 * and optionally a writable primary answers and the server belongs to the
 * named replica set (docs/contract.md §5 mongodb).
 *
 * The probe talks to the deployment with the official `npm:mongodb` driver,
 * imported only by probe.ts, which also lets the driver parse the URI in
 * `validate`, before anything is probed; `judge.ts` holds the decisions and
 * `errors.ts` the texts of failed attempts.
 *
 * @module
 */

import { defineKind, type KindInput } from "../../engine/types.ts";
import {
  SESSION_READ_MAX,
  TLS_FLAGS,
  type TlsChoice,
  tlsChoice,
  type UrlTls,
} from "../_common/datastore.ts";
import {
  maskUrlPassword,
  PASSWORD_FLAGS,
  passwordFlags,
  type PasswordSource,
} from "../_common/dsurl.ts";

/** What a mongodb condition needs. */
export interface MongodbOptions {
  /** The URI as typed (the driver's own form; its password is a registered secret). */
  readonly uri: string;
  /** The URI's user, decoded, if it has one (for error texts). */
  readonly user: string | undefined;
  /** A password from --password-env or --password-file, for the URI's user. */
  readonly password: PasswordSource | undefined;
  /** --primary: a writable primary must answer. */
  readonly primary: boolean;
  /** --replica-set: the server must be a member of this replica set. */
  readonly replicaSet: string | undefined;
  /** --tls, --ca-file, --insecure (the URI's own TLS options are the driver's). */
  readonly tls: TlsChoice;
  /** The names of the URI's options, lower-cased (the driver reads them case-insensitively). */
  readonly uriOptions: readonly string[];
}

/** The form of the target, for usage errors. */
const FORM =
  "mongodb://[user[:password]@]host[:port][,host[:port]...][/db][?options] or mongodb+srv://...";

/** The mongodb kind. */
export const mongodb = defineKind<MongodbOptions>({
  name: "mongodb",
  aliases: ["mongo"],
  summary: "a MongoDB deployment answers hello and ping, and a primary is writable",
  description:
    "Connects with the official driver on each attempt (the URI is the driver's own, mongodb+srv:// included; the client is closed after the attempt), sends hello and ping, and is satisfied when both answer and the flags hold: --primary needs a writable primary, --replica-set NAME needs the server to be a member of that replica set. Every URI option of the driver is passed on with its meaning (the attempt's own settings, such as appName=waitcmd and 2 s to select a server, apply only where the URI is silent); one the driver does not know is a usage error. The driver gives up selecting a server after 2 s (or the URI's serverSelectionTimeoutMS), so an attempt shows why (connection refused, no primary, ...) and the next one starts. Pending, with the server's own text: refused or reset connections, a server starting up or recovering, no primary (an election under way), wrong credentials or a user not created yet (\"authentication failed for user ...\"), another replica set, TLS failures. Nothing is fatal. The password comes from the URI, --password-env or --password-file and never shows; the display name keeps the user and masks only the password. --tls (or tls=true in the URI, or mongodb+srv://) connects with TLS, verified unless --insecure.",
  target: {
    shape: "required",
    placeholder: "URI",
    description:
      "mongodb://[user[:password]@]host[:port][,host...][/db][?options] (port 27017) or mongodb+srv://user@cluster.example.net",
  },
  flags: [
    {
      name: "primary",
      type: "boolean",
      description: "a writable primary answers (not only a secondary)",
    },
    {
      name: "replica-set",
      type: "string",
      placeholder: "NAME",
      description: "the server is a member of this replica set",
    },
    ...PASSWORD_FLAGS,
    ...TLS_FLAGS,
  ],
  examples: [
    {
      args: "mongodb mongodb://app@db:27017/app --password-env DB_PASSWORD",
      description: "wait until the app's user can log in and the server answers ping",
    },
    {
      args: "mongo mongodb://db-1,db-2,db-3/?replicaSet=rs0 --primary --replica-set rs0",
      description: "wait until replica set rs0 has elected a writable primary",
    },
    {
      args: "mongodb mongodb+srv://app@cluster0.example.net --password-file /run/secrets/mongo",
      description: "a DNS seed list (TLS on by default)",
    },
  ],
  parse(input) {
    const { display, options } = parseOptions(input);
    return { target: display, options };
  },
  // The driver parses the URI (probe.ts: the only module that imports it).
  validate: (options, fail) => import("./probe.ts").then((m) => m.validateUri(options, fail)),
  load: () => import("./probe.ts").then((m) => m.create),
  isolate: true,
  socketReadMax: SESSION_READ_MAX,
});

function parseOptions(input: KindInput): { display: string; options: MongodbOptions } {
  const uri = input.target ?? "";
  const masked = maskUrlPassword(uri);
  for (const s of masked.secrets) input.secret(s);
  const shown = JSON.stringify(masked.display);
  const m = /^(mongodb|mongodb\+srv):\/\/([^/?#]*)(\/[^?#]*)?(?:\?([^#]*))?$/i.exec(uri);
  if (!m) input.fail(undefined, `expected ${FORM}, got ${shown}`);
  const srv = m[1]!.toLowerCase() === "mongodb+srv";
  const authority = m[2]!;
  const hosts = authority.slice(authority.lastIndexOf("@") + 1);
  if (hosts === "" || hosts.split(",").some((h) => h === "")) {
    input.fail(undefined, `the host is missing in ${shown}`);
  }
  if (srv && (hosts.includes(",") || /:\d+$/.test(hosts))) {
    input.fail(undefined, `mongodb+srv:// takes one host name without a port, got ${shown}`);
  }
  if (!masked.user && masked.password !== undefined) {
    input.fail(undefined, "the URI has a password but no user");
  }
  const password = passwordFlags(input);
  const flag = input.has("password-env") ? "password-env" : "password-file";
  if (password !== undefined && masked.password !== undefined) {
    input.fail(flag, "cannot be combined with a password in the URI");
  }
  if (password !== undefined && !masked.user) {
    input.fail(flag, "needs a user in the URI (mongodb://USER@host/)");
  }
  // What the URI says about TLS: mongodb+srv:// turns it on, tls=/ssl= decide.
  let urlTls: UrlTls = srv ? { mode: "on", said: "mongodb+srv://" } : {};
  const uriOptions: string[] = [];
  for (const pair of (m[4] ?? "").split("&")) {
    const [name = "", value = ""] = pair.split("=");
    if (name !== "") uriOptions.push(decodeName(name).toLowerCase());
    if (/^(tls|ssl)$/i.test(name)) {
      urlTls = value.toLowerCase() === "false"
        ? { mode: "off", said: `${name}=${value}` }
        : { mode: "on", said: `${name}=${value}` };
    }
  }
  const replicaSet = input.string("replica-set");
  if (replicaSet === "") {
    input.fail("replica-set", "expected a replica set name, got an empty string");
  }
  return {
    display: masked.display,
    options: {
      uri,
      user: masked.user,
      password,
      primary: input.bool("primary"),
      replicaSet,
      tls: tlsChoice(input, urlTls, "--tls, tls=true in the URI or mongodb+srv://"),
      uriOptions,
    },
  };
}

function decodeName(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}
