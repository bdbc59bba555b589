import { assertEquals } from "../tests/_assert.ts";
import { describeError } from "./errors.ts";

Deno.test("describeError() says what node's and Deno's system errors mean, in short texts", () => {
  const rows: [string, string][] = [
    ["connect EMFILE 127.0.0.1:80", "too many open files"],
    ["127.0.0.1:123: bind EMFILE 0.0.0.0", "127.0.0.1:123: too many open files"],
    ["write EPIPE", "connection closed by peer"],
    ["read ECONNRESET", "connection reset by peer"],
    ["getaddrinfo ENOTFOUND db.example", "cannot resolve host: db.example"],
    ["connect ENOENT /run/app.sock", "no such file or directory: /run/app.sock"],
    ["connect EWEIRD x", "connect EWEIRD x"],
    [
      "failed to spawn '/usr/bin/ping': Too many open files (os error 24)",
      "cannot start /usr/bin/ping: too many open files",
    ],
    ['Permission denied (os error 13) about ["/srv/app"]', "permission denied"],
    [
      "The first argument must be of type string or an instance of Buffer, ArrayBuffer, or " +
      "Array or an Array-like Object. Received undefined",
      "a library was given a value it cannot take (ERR_INVALID_ARG_TYPE)",
    ],
    ["connection to postgres://app:pw@db failed", "connection to postgres://app:***@db failed"],
  ];
  for (const [message, text] of rows) assertEquals(describeError(new Error(message)), text);
});
