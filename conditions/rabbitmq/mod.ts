/**
 * rabbitmq (alias amqp): an AMQP 0-9-1 broker opens a connection for the
 * user on the vhost, and optionally a queue exists and holds messages
 * (docs/contract.md §5 rabbitmq).
 *
 * The probe talks to the broker with `npm:amqplib`, imported only by
 * probe.ts; `errors.ts` turns the driver's failures into pending texts.
 *
 * @module
 */

import { defineKind, type KindInput } from "../../engine/types.ts";
import {
  dataStoreUrl,
  passwordSource,
  SESSION_READ_MAX,
  TLS_FLAGS,
  tlsChoice,
} from "../_common/datastore.ts";
import type { ReachOptions } from "../_common/datastore.ts";
import { PASSWORD_FLAGS } from "../_common/dsurl.ts";

/** What a rabbitmq condition needs. */
export interface RabbitmqOptions extends ReachOptions<string> {
  /** The user to log in as: the URL's, else RabbitMQ's default `guest`. */
  readonly user: string;
  /**
   * The password: the URL's or a flag's; undefined means `guest` for the
   * default user and an empty password for a user written without one.
   */
  /** The virtual host, decoded (`/` when the URL has no path). */
  readonly vhost: string;
  /** --queue: the queue must exist (passive declare). */
  readonly queue: string | undefined;
  /** --min-messages: the queue holds at least this many ready messages. */
  readonly minMessages: number | undefined;
  /** The URL's query parameters, passed on to amqplib with their meaning. */
  readonly tuning: AmqpTuning;
}

/** The form of the target, for usage errors. */
const FORM = "amqp:// or amqps://[user[:password]@]host[:port][/vhost][?options]";

/**
 * The URL's query parameters amqplib reads (its `connect`, `openFrames`):
 * the tuning it proposes to the broker and the locale. Numbers are whole
 * numbers, as its `parseInt` takes them.
 */
const AMQPLIB_PARAMS = {
  frameMax: "number",
  channelMax: "number",
  heartbeat: "number",
  maxFrameSize: "number",
  locale: "text",
} as const;

/** AMQP 0-9-1's smallest frame (amqplib's `FRAME_MIN_SIZE`). */
const FRAME_MIN_SIZE = 4096;

/** What the URL's parameters tell amqplib (absent: amqplib's defaults). */
export interface AmqpTuning {
  readonly frameMax?: number;
  readonly channelMax?: number;
  /** Seconds; absent: 0 (no heartbeats: each connection lives one attempt). */
  readonly heartbeat?: number;
  readonly maxFrameSize?: number;
  readonly locale?: string;
}

/** The rabbitmq kind. */
export const rabbitmq = defineKind<RabbitmqOptions>({
  name: "rabbitmq",
  isolate: true,
  socketReadMax: SESSION_READ_MAX,
  parse: parseOptions,
  aliases: ["amqp"],
  summary: "a RabbitMQ (AMQP 0-9-1) broker opens a connection, and a queue exists",
  description:
    "Opens one AMQP 0-9-1 connection per attempt (closed after it): the TCP or TLS connection, the login and the vhost must all succeed. With --queue, the queue must exist (a passive declare, which creates nothing); with --min-messages, it must hold at least N ready messages. Pending, with the broker's own text: refused or reset connections, a broker starting or restarting, wrong credentials or a user not created yet (\"authentication failed for user ...\"), a vhost that does not exist yet or that the user may not use, a missing queue, TLS failures. Nothing is fatal. Without user-info the login is guest/guest, as RabbitMQ's own default. The password comes from the URL, --password-env or --password-file and never shows; the display name keeps the user and masks only the password. amqps:// or --tls connects with TLS (port 5671 unless given), verified against the host name unless --insecure. A host name is tried on every address it resolves to.",
  target: {
    shape: "required",
    placeholder: "URL",
    description:
      "amqp://[user[:password]@]host[:port][/vhost][?options] (port 5672) or amqps://... (port 5671); vhost percent-encoded, / when omitted; options: frameMax, channelMax, heartbeat, maxFrameSize, locale",
  },
  flags: [
    {
      name: "queue",
      type: "string",
      placeholder: "NAME",
      description: "the queue exists in the vhost (passive declare: nothing is created)",
    },
    {
      name: "min-messages",
      type: "integer",
      min: 0,
      placeholder: "N",
      description: "with --queue: the queue holds at least N ready messages",
    },
    ...PASSWORD_FLAGS,
    ...TLS_FLAGS,
  ],
  examples: [
    {
      args: "rabbitmq amqp://app@mq:5672/prod --password-env PASSWORD",
      description: "wait until the broker lets the app's user open vhost prod",
    },
    {
      args: "amqp amqp://guest:guest@localhost --queue jobs --min-messages 1",
      description: "wait until the jobs queue exists and holds a message",
    },
    {
      args:
        "rabbitmq amqps://app@mq.internal/prod --password-file /run/secrets/mq --ca-file ca.pem",
      description: "the same over verified TLS (port 5671)",
    },
  ],
  load: () => import("./probe.ts").then((m) => m.create),
});

function parseOptions(input: KindInput): { target: string; options: RabbitmqOptions } {
  const text = input.target ?? "";
  const tlsScheme = /^amqps:\/\//i.test(text);
  const tlsWanted = tlsScheme || input.bool("tls");
  const url = dataStoreUrl(input, {
    schemes: ["amqp", "amqps"],
    defaultPort: tlsWanted ? 5671 : 5672,
    form: FORM,
  });
  const tuning = amqpTuning(input, url.params);
  if (url.user === undefined && url.password !== undefined) {
    input.fail(undefined, "the URL has a password but no user");
  }
  const password = passwordSource(input, url);
  if (password !== undefined && url.user === undefined) {
    input.fail(
      input.has("password-env") ? "password-env" : "password-file",
      "needs a user in the URL (amqp://USER@host/vhost)",
    );
  }
  const tls = tlsChoice(
    input,
    tlsScheme ? { mode: "on", said: "amqps://" } : {},
    "amqps:// or --tls",
  );
  const queue = input.string("queue");
  if (queue === "") input.fail("queue", "expected a queue name, got an empty string");
  if (queue !== undefined && queue.length > 255) {
    input.fail("queue", "a queue name is at most 255 characters long");
  }
  const minMessages = input.integer("min-messages");
  if (minMessages !== undefined && queue === undefined) input.fail("min-messages", "needs --queue");
  return {
    target: url.display,
    options: {
      hp: url.hp,
      user: url.user ?? "guest",
      password: password ??
        (url.user === undefined ? { value: "guest" } : undefined),
      vhost: url.path ?? "/",
      tls,
      queue,
      minMessages,
      tuning,
    },
  };
}

/**
 * The URL's query parameters as amqplib reads them; one it does not read,
 * or a number that is not a whole number, is a usage error naming it.
 */
function amqpTuning(input: KindInput, params: ReadonlyMap<string, string>): AmqpTuning {
  const out: Record<string, string | number> = {};
  const known = Object.keys(AMQPLIB_PARAMS);
  for (const [name, value] of params) {
    const type = AMQPLIB_PARAMS[name as keyof typeof AMQPLIB_PARAMS];
    if (type === undefined) {
      input.fail(
        undefined,
        `unknown URL parameter ${JSON.stringify(name)} (amqplib reads ${known.join(", ")})`,
      );
    }
    if (type === "number" && !/^\d{1,10}$/.test(value)) {
      input.fail(
        undefined,
        `URL parameter ${name}: expected a whole number, got ${JSON.stringify(value)}`,
      );
    }
    // amqplib's own check at connect (lib/connection.js): 0 (no limit) or the protocol's minimum.
    if (name === "maxFrameSize" && value !== "0" && Number(value) < FRAME_MIN_SIZE) {
      input.fail(
        undefined,
        `URL parameter maxFrameSize: amqplib takes 0 (no limit) or at least ${FRAME_MIN_SIZE}, got ${value}`,
      );
    }
    if (type === "text" && value === "") {
      input.fail(undefined, `URL parameter ${name}: expected a value, got an empty string`);
    }
    out[name] = type === "number" ? Number(value) : value;
  }
  return out as AmqpTuning;
}
