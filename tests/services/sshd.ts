/**
 * A real OpenSSH server for the ssh kind's tests, plus a TCP server that never
 * sends a banner (for banner/handshake timeouts).
 *
 * `startSshd()` runs Debian's `/usr/sbin/sshd -D` with its own config, a fresh
 * ed25519 host key and PID file in a temporary directory, listening on
 * 127.0.0.1 on a free port. The throwaway user `waittest` / `s3cret` (made by
 * scripts/install-test-deps.sh) can log in with its password or with the
 * client key generated for this server.
 */

import { freePort, sh, spawnService, waitUntil } from "./_util.ts";

/** A running sshd. */
export interface Sshd {
  /** Always "127.0.0.1". */
  host: string;
  /** The port it listens on. */
  port: number;
  /** The user that can log in. */
  user: "waittest";
  /** Its password. */
  password: "s3cret";
  /** Host key fingerprint as `ssh-keygen -lf` prints it: "SHA256:<base64 without padding>". */
  fingerprint: string;
  /** The host public key line, e.g. "ssh-ed25519 AAAA... " (no comment). */
  hostPublicKey: string;
  /** A known_hosts line for this server: "[127.0.0.1]:PORT ssh-ed25519 AAAA...". */
  knownHostsLine: string;
  /** Path of an unencrypted ed25519 client private key (OpenSSH format) authorised for `user`. */
  clientKeyFile: string;
  /** The same client private key as text. */
  clientKey: string;
  /** The temporary directory (config, keys, log). */
  dir: string;
  /** sshd's log (`-E`). */
  logFile: string;
  /** Stops sshd and removes `dir`. */
  stop(): Promise<void>;
}

/** Path of the OpenSSH server binary. */
export const SSHD_BIN = "/usr/sbin/sshd";

/** Fingerprint of a public key file as "SHA256:..." (via `ssh-keygen -lf`). */
export async function sshFingerprint(pubKeyFile: string): Promise<string> {
  const out = await sh("ssh-keygen", ["-lf", pubKeyFile]);
  const fp = out.split(/\s+/)[1];
  if (!fp?.startsWith("SHA256:")) throw new Error(`unexpected ssh-keygen -lf output: ${out}`);
  return fp;
}

/** Reads up to `max` bytes of what a TCP server sends first, waiting at most `timeoutMs`. */
export async function readBanner(
  host: string,
  port: number,
  { timeoutMs = 2000, max = 255 }: { timeoutMs?: number; max?: number } = {},
): Promise<string> {
  const conn = await Deno.connect({ hostname: host, port });
  const timer = setTimeout(() => conn.close(), timeoutMs);
  try {
    const buf = new Uint8Array(max);
    let got = 0;
    while (got < max) {
      const n = await conn.read(buf.subarray(got));
      if (n === null) break;
      got += n;
      if (buf.subarray(0, got).includes(10)) break; // banner line ends with \n
    }
    return new TextDecoder().decode(buf.subarray(0, got));
  } catch {
    return ""; // closed by the timer
  } finally {
    clearTimeout(timer);
    try {
      conn.close();
    } catch {
      // already closed
    }
  }
}

/** Starts sshd on 127.0.0.1 on `opts.port` or a free one; resolves once it sends its SSH-2.0 banner. */
export async function startSshd(opts: { port?: number } = {}): Promise<Sshd> {
  const dir = await Deno.makeTempDir({ prefix: "waitcmd-sshd-" });
  // sshd reads authorized_keys as the user: let it traverse the directory.
  await Deno.chmod(dir, 0o711);
  const hostKey = `${dir}/hostkey`;
  const clientKeyFile = `${dir}/client_ed25519`;
  const authDir = `${dir}/authorized`;
  const logFile = `${dir}/sshd.log`;
  await sh("ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-C", "", "-f", hostKey]);
  await sh("ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-C", "waittest", "-f", clientKeyFile]);
  await Deno.mkdir(authDir, { mode: 0o755 });
  await Deno.chmod(authDir, 0o755);
  await Deno.copyFile(`${clientKeyFile}.pub`, `${authDir}/waittest`);
  await Deno.chmod(`${authDir}/waittest`, 0o644);
  await Deno.mkdir("/run/sshd", { recursive: true }); // privilege separation dir

  const fingerprint = await sshFingerprint(`${hostKey}.pub`);
  const hostPublicKey = (await Deno.readTextFile(`${hostKey}.pub`)).trim().split(/\s+/)
    .slice(0, 2).join(" ");
  const clientKey = await Deno.readTextFile(clientKeyFile);

  let lastErr: unknown;
  // A free port can be taken before sshd binds it: try another (not when the port is given).
  for (let attempt = 0; attempt < (opts.port ? 1 : 3); attempt++) {
    const port = opts.port ?? freePort();
    const config = `${dir}/sshd_config`;
    await Deno.writeTextFile(
      config,
      [
        `Port ${port}`,
        "ListenAddress 127.0.0.1",
        `HostKey ${hostKey}`,
        `PidFile ${dir}/sshd.pid`,
        "PasswordAuthentication yes",
        "PubkeyAuthentication yes",
        `AuthorizedKeysFile ${authDir}/%u`,
        "StrictModes no",
        "KbdInteractiveAuthentication no",
        "UsePAM yes",
        "PermitRootLogin no",
        "AllowUsers waittest",
        "UseDNS no",
        "LogLevel VERBOSE",
        "",
      ].join("\n"),
    );
    const svc = spawnService(SSHD_BIN, ["-D", "-f", config, "-E", logFile], {
      logFile: `${dir}/sshd.out`,
    });
    try {
      await waitUntil(
        `sshd on 127.0.0.1:${port}`,
        async () =>
          (await readBanner("127.0.0.1", port, { timeoutMs: 1000 })).startsWith("SSH-2.0-"),
        { timeoutMs: 10_000, everyMs: 50, logFile },
      );
    } catch (e) {
      lastErr = e;
      await svc.stop();
      continue;
    }
    return {
      host: "127.0.0.1",
      port,
      user: "waittest",
      password: "s3cret",
      fingerprint,
      hostPublicKey,
      knownHostsLine: `[127.0.0.1]:${port} ${hostPublicKey}`,
      clientKeyFile,
      clientKey,
      dir,
      logFile,
      async stop() {
        await svc.stop();
        await Deno.remove(dir, { recursive: true }).catch(() => {});
      },
    };
  }
  await Deno.remove(dir, { recursive: true }).catch(() => {});
  throw lastErr;
}

/** A TCP server that accepts connections and never sends a byte. */
export interface SilentTcp {
  /** Always "127.0.0.1". */
  host: string;
  /** The port it listens on. */
  port: number;
  /** How many connections it has accepted so far. */
  readonly accepted: number;
  /** Closes the listener and every accepted connection. */
  stop(): Promise<void>;
}

/**
 * Starts a TCP server on 127.0.0.1 (free port) that accepts, reads and
 * discards whatever the client sends, and never answers: an SSH client waiting
 * for the server's banner times out against it.
 */
export function startSilentTcp(): Promise<SilentTcp> {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const conns = new Set<Deno.Conn>();
  let accepted = 0;
  const loop = (async () => {
    try {
      for await (const conn of listener) {
        accepted++;
        conns.add(conn);
        (async () => {
          const buf = new Uint8Array(4096);
          try {
            while ((await conn.read(buf)) !== null) {
              // discard
            }
          } catch {
            // closed
          } finally {
            conns.delete(conn);
            try {
              conn.close();
            } catch {
              // already closed
            }
          }
        })();
      }
    } catch {
      // listener closed
    }
  })();
  return Promise.resolve({
    host: "127.0.0.1",
    port: (listener.addr as Deno.NetAddr).port,
    get accepted() {
      return accepted;
    },
    async stop() {
      try {
        listener.close();
      } catch {
        // already closed
      }
      for (const c of conns) {
        try {
          c.close();
        } catch {
          // already closed
        }
      }
      conns.clear();
      await loop;
    },
  });
}
