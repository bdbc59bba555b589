/**
 * The rabbitmq kind's part of the shared suites (tests/_suite.ts): its dead target for
 * tests/conformance/conformance_test.ts, its live row for tests/conformance/live_test.ts, and its
 * usage errors (its unit test checks them on parse, its e2e test through the CLI).
 *
 * @module
 */

import { rabbitmqMissing, startRabbitmq } from "./_service.ts";
import { DEAD_MARK, type KindSuite, MARK } from "../../tests/_suite.ts";

/** What the shared suites run for this kind. */
export const suite: KindSuite = {
  // Its probes run a third-party protocol or parser: in a worker of their own.
  isolated: true,
  dead: (d) => ({
    args: ["rabbitmq", `amqp://app:${DEAD_MARK}@127.0.0.1:${d.silentTcp}/prod`, "--queue", "jobs"],
  }),
  live: {
    needs: "RabbitMQ",
    missing: rabbitmqMissing,
    async make() {
      const mq = await startRabbitmq();
      await mq.stopApp();
      let up = false;
      return {
        satisfied: ["rabbitmq", mq.url("admin", mq.adminPassword)],
        detail: /.*as "admin".*/,
        pending: ["rabbitmq", mq.url("admin", mq.adminPassword), "--queue", "none"],
        pendingError: "NOT_FOUND - no queue 'none'",
        up: async () => {
          if (!up) await mq.startApp();
          up = true;
        },
        down: async () => {
          await mq.stopApp();
          up = false;
        },
        downError: /connection (refused|reset|closed)/,
        wrong: {
          args: ["rabbitmq", mq.url("admin", MARK)],
          error: 'authentication failed for user "admin": ACCESS_REFUSED',
        },
        grant: {
          args: ["rabbitmq", mq.url("late1", "late-pw-1")],
          add: () => mq.addUser("late1", "late-pw-1"),
        },
        passwordFlags: {
          bare: ["rabbitmq", `amqp://admin@127.0.0.1:${mq.port}/`],
          password: mq.adminPassword,
        },
        secrets: [MARK, mq.adminPassword, "late-pw-1"],
        usage: ["rabbitmq", mq.url("admin", MARK), "--min-messages", "1"],
        deadline: "2s",
        remove: () => mq.stop(),
      };
    },
  },
  usage: [
    [
      ["rabbitmq", "http://h"],
      'expected amqp:// or amqps://[user[:password]@]host[:port][/vhost][?options], got "http://h"',
    ],
    [["rabbitmq", "amqp://"], 'the host is missing in "amqp://"'],
    [["rabbitmq", "amqp://h:99999"], 'port must be from 1 to 65535, got "99999"'],
    [
      ["rabbitmq", "amqp://h?verify=none"],
      'unknown URL parameter "verify" (amqplib reads frameMax, channelMax, heartbeat, maxFrameSize, locale)',
    ],
    [["rabbitmq", "amqp://:pw@h"], "the URL has a password but no user"],
    [
      ["rabbitmq", "amqp://h", "--password-env", "PW"],
      "--password-env: needs a user in the URL (amqp://USER@host/vhost)",
      { "PW": "x" },
    ],
    [
      ["rabbitmq", "amqp://u:p@h", "--password-env", "PW"],
      "--password-env: cannot be combined with a password in the URL",
      { "PW": "x" },
    ],
    [
      ["rabbitmq", "amqp://u@h", "--password-env", "NOPE"],
      "--password-env: environment variable NOPE is not set",
    ],
    [
      ["rabbitmq", "amqp://u@h", "--password-env", "A", "--password-file", "f"],
      "--password-file: cannot be combined with --password-env",
      { "A": "x" },
    ],
    [["rabbitmq", "amqp://h", "--ca-file", "ca.pem"], "--ca-file: needs amqps:// or --tls"],
    [["rabbitmq", "amqp://h", "--insecure"], "--insecure: needs amqps:// or --tls"],
    [
      ["rabbitmq", "amqps://h", "--insecure", "--ca-file", "c"],
      "--insecure: cannot be combined with --ca-file",
    ],
    [["rabbitmq", "amqp://h", "--min-messages", "1"], "--min-messages: needs --queue"],
    [
      ["rabbitmq", "amqp://h", "--queue", ""],
      "--queue: expected a queue name, got an empty string",
    ],
    [
      ["rabbitmq", "amqp://h", "--queue", "q", "--min-messages", "-1"],
      '--min-messages: expected a whole number of at least 0, got "-1"',
    ],
    [
      ["rabbitmq", "http://app:S3cr3t-pw@h/"],
      'expected amqp:// or amqps://[user[:password]@]host[:port][/vhost][?options], got "http://app:***@h/"',
    ],
    [
      ["rabbitmq", "amqp://app:S3cr3t-pw@h/", "--min-messages", "1"],
      "--min-messages: needs --queue",
    ],
    [
      ["amqp", "amqp://app:S3cr3t-pw@h/", "--ca-file", "ca.pem"],
      "--ca-file: needs amqps:// or --tls",
    ],
    [
      ["rabbitmq", "amqp://app:S3cr3t-pw@h/", "--password-env", "X"],
      "--password-env: cannot be combined with a password in the URL",
      { "X": "other-secret" },
    ],
  ],
};
