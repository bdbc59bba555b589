/**
 * The tls kind's part of the shared suites (tests/_suite.ts): its dead target for
 * tests/conformance/conformance_test.ts, its live row for tests/conformance/live_test.ts, and its
 * usage errors (its unit test checks them on parse, its e2e test through the CLI).
 *
 * @module
 */

import { freePort } from "../../tests/services/_util.ts";
import { makePki } from "../../tests/services/tls.ts";
import { type KindSuite, tcpServer } from "../../tests/_suite.ts";

/** What the shared suites run for this kind. */
export const suite: KindSuite = {
  dead: (d) => ({ args: ["tls", `127.0.0.1:${d.silentTcp}`] }),
  live: {
    needs: "a TLS listener (Deno.listenTls) with a CA made for the run",
    async make() {
      const pki = await makePki({});
      const other = await makePki({});
      const port = freePort();
      const server = tcpServer(port, () =>
        Deno.listenTls({
          hostname: "127.0.0.1",
          port,
          cert: Deno.readTextFileSync(pki.server.certFile),
          key: Deno.readTextFileSync(pki.server.keyFile),
        }));
      const target = `127.0.0.1:${port}`;
      return {
        satisfied: ["tls", target, "--ca-file", pki.ca.certFile],
        detail: /certificate for 127\.0\.0\.1 valid until .*/,
        pending: ["tls", target, "--ca-file", other.ca.certFile],
        pendingError: "certificate chain not trusted",
        up: () => server.start(),
        down: () => server.stop(),
        downError: "connection refused",
        remove: async () => {
          await server.stop();
          await pki.cleanup();
          await other.cleanup();
        },
      };
    },
    na: {
      credential: "tls has no credentials (client certificates are http's)",
      secret: "tls takes no secret",
    },
  },
  usage: [
    [["tls", "h:0"], 'port must be from 1 to 65535, got "0"'],
    [
      ["tls", "h:443", "--valid-for", "soon"],
      '--valid-for: expected a duration like 30s, 2m or 1h30m, got "soon"',
    ],
    [
      ["tls", "h:443", "--servername", "bad name"],
      '--servername: expected a DNS name, got "bad name"',
    ],
    [["tls", "h:443", "--ca-file", ""], "--ca-file: expected a path, got an empty string"],
    [["tls", "h:https"], 'expected HOST:PORT or [IPv6]:PORT, got "h:https"'],
    [
      ["tls", "h:443", "--valid-for", "30 days"],
      '--valid-for: expected a duration like 30s, 2m or 1h30m, got "30 days"',
    ],
    [["tls", "h:443", "--servername", "a/b"], '--servername: expected a DNS name, got "a/b"'],
    [
      ["tls", "h:443", "--extra-ca-file", ""],
      "--extra-ca-file: expected a path, got an empty string",
    ],
    [
      ["tls", "h:443", "--extra-ca-file", "corp.pem", "--ca-file", "ca.pem"],
      "--extra-ca-file: cannot be combined with --ca-file, which trusts only its own CAs",
    ],
  ],
};
