/**
 * ssh: an SSH server greets, shows the pinned host key, or accepts a password.
 *
 * Without credentials or pin the probe reads the identification banner over
 * a plain TCP connection (no SSH library). With `--host-key-sha256` or
 * `--user`, `npm:ssh2` (imported lazily, handshake.ts) runs the key exchange,
 * and with `--user` the password authentication.
 *
 * @module
 */

import { defineKind, type KindInput } from "../../engine/types.ts";
import { formatHostPort, type HostPort, hostPortTarget } from "../_common/net.ts";

const FINGERPRINT = /^SHA256:[A-Za-z0-9+/]{43}=?$/;

/** What an ssh condition needs. */
export interface SshOptions {
  /** The target, port 22 by default; a host name is tried on every address. */
  readonly hp: HostPort;
  readonly bannerContains: string | undefined;
  readonly user: string | undefined;
  /** The password, or the --password-file to read it from at each attempt. */
  readonly password: { readonly value: string } | { readonly file: string } | undefined;
  /** --host-key-sha256. */
  readonly pin: string | undefined;
}

/** The ssh kind. */
export const ssh = defineKind<SshOptions>({
  name: "ssh",
  aliases: [],
  summary: "an SSH server greets, shows the expected host key, or accepts a login",
  description:
    "Without credentials, satisfied once the server sends a valid identification banner (SSH-2.0- or SSH-1.99-); anything else, or silence, is a failed attempt (use --attempt-timeout for silent servers). --host-key-sha256 runs the key exchange and requires that host key (no login is attempted; a different key stays pending and the error shows the key seen). With --user and a password (--password, --password-env or --password-file, read at each attempt, at most 4 MiB), satisfied once password authentication succeeds. The password never appears in any output. A host name is tried on every address it resolves to, IPv4 and IPv6; the first that accepts the connection decides.",
  target: {
    shape: "required",
    placeholder: "HOST[:PORT]",
    description: "host name or IP address, port 22 by default; IPv6 as [::1]:22",
  },
  flags: [
    {
      name: "banner-contains",
      type: "string",
      placeholder: "TEXT",
      description: "the identification banner includes TEXT (e.g. OpenSSH_9)",
    },
    {
      name: "host-key-sha256",
      type: "string",
      placeholder: "SHA256:...",
      description: "expected host key fingerprint, as ssh-keygen -lf prints it",
    },
    { name: "user", type: "string", placeholder: "NAME", description: "log in as NAME" },
    {
      name: "password",
      type: "string",
      placeholder: "TEXT",
      secret: true,
      description: "password for --user (prefer --password-env or --password-file)",
    },
    {
      name: "password-env",
      type: "string",
      placeholder: "ENVVAR",
      description: "read the password for --user from an environment variable",
    },
    {
      name: "password-file",
      type: "string",
      placeholder: "PATH",
      complete: "file",
      description: "read the password for --user from a file (first line)",
    },
  ],
  examples: [
    { args: "ssh db:22", description: "wait until sshd greets" },
    {
      args: "ssh 10.0.0.7 --host-key-sha256 SHA256:uNiVztksCsDhcc0u9e8BujQXVUpKZIDTMczCvj3tD2s",
      description: "wait until the new host shows its expected host key",
    },
    {
      args: "ssh vm:2222 --user ci --password-env VM_PASSWORD --banner-contains OpenSSH",
      description: "wait until a login with the password works",
    },
  ],
  parse(input) {
    const options = parseOptions(input);
    return { target: formatHostPort(options.hp), options };
  },
  load: () => import("./probe.ts").then((m) => m.create),
  isolate: true,
});

function parseOptions(input: KindInput): SshOptions {
  const hp = hostPortTarget(input, 22);
  const bannerContains = input.string("banner-contains");
  if (bannerContains === "") input.fail("banner-contains", "expected a text, got an empty string");
  const pin = input.string("host-key-sha256");
  if (pin !== undefined && !FINGERPRINT.test(pin)) {
    input.fail(
      "host-key-sha256",
      `expected SHA256: and 43 base64 characters, as ssh-keygen -lf prints it, got ${
        JSON.stringify(pin)
      }`,
    );
  }
  const sources = ["password", "password-env", "password-file"].filter((f) => input.has(f));
  if (sources.length > 1) {
    input.fail(sources[1], `cannot be combined with --${sources[0]}`);
  }
  const user = input.string("user");
  if (user === "") input.fail("user", "expected a user name, got an empty string");
  if (user !== undefined && sources.length === 0) {
    input.fail("user", "needs --password, --password-env or --password-file");
  }
  if (user === undefined && sources.length > 0) input.fail(sources[0], "needs --user");
  let password: SshOptions["password"];
  if (input.has("password")) password = { value: input.string("password")! };
  const envName = input.string("password-env");
  if (envName !== undefined) {
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(envName)) {
      input.fail(
        "password-env",
        `expected an environment variable name, got ${JSON.stringify(envName)}`,
      );
    }
    const value = input.env[envName];
    if (value === undefined) {
      input.fail("password-env", `environment variable ${envName} is not set`);
    }
    input.secret(value!);
    password = { value: value! };
  }
  const file = input.string("password-file");
  if (file !== undefined) {
    if (file === "") input.fail("password-file", "expected a path, got an empty string");
    password = { file };
  }
  return { hp, bannerContains, user, password, pin };
}
