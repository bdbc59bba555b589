/**
 * Smoke tests of the real services the suite starts (tests/services/*.ts):
 * each one is started, shown to work the way waitcmd's tests will use it,
 * and torn down. Run `bash scripts/install-test-deps.sh` first; a test whose
 * service is not installed is ignored with the reason outside CI and fails in
 * CI (ignoreWithout); a service that is installed but does not start fails.
 */

import assert from "node:assert/strict";
import { sh } from "./_util.ts";
import { daysFromNow, makePki } from "./tls.ts";
import { readBanner, sshFingerprint, startSilentTcp, startSshd } from "./sshd.ts";
import { dnsQuery, startDnsmasq } from "./dnsmasq.ts";
import { startDnsFake } from "./dnsfake.ts";
import { ignoreWithout } from "../_kit.ts";
import { startDocker, writeBusyboxCompose } from "./docker.ts";
import { startSystemdUser } from "../../conditions/svcmgr/_service.ts";

/** Why `bin` cannot run here (not on PATH nor at its path), or undefined. */
async function missing(bin: string): Promise<string | undefined> {
  const out = await new Deno.Command("sh", {
    args: ["-c", `command -v "$0" || test -x "$0"`, bin],
    stdout: "null",
    stderr: "null",
  }).output().catch(() => undefined);
  return out?.success ? undefined : `${bin} is not installed (scripts/install-test-deps.sh)`;
}

// Outside CI a test whose service cannot be had is ignored with the reason; in CI it runs and
// fails on the missing service (tests/_kit.ts).
const NO = {
  openssl: await missing("openssl"),
  sshd: await missing("/usr/sbin/sshd"),
  dnsmasq: await missing("dnsmasq"),
  dockerd: await missing("dockerd"),
  systemd: await missing("/lib/systemd/systemd"),
};

/**
 * A smoke test of a service: ignored (with the reason) where it is not installed; `start` makes
 * it, `fn` checks it, and `stop` tears it down (and checks that it did) whatever happened.
 */
function smokeTest<S>(
  name: string,
  service: {
    need: keyof typeof NO;
    start: () => Promise<S>;
    stop: (s: S) => Promise<unknown>;
  },
  fn: (s: S) => Promise<void>,
): void {
  Deno.test({
    name,
    ignore: ignoreWithout(service.need, NO[service.need]),
    fn: async () => {
      const s = await service.start();
      try {
        await fn(s);
      } finally {
        await service.stop(s);
      }
    },
  });
}

/** The bits of an ssh2 exec stream the test uses. */
interface SshStream {
  on(ev: "data", f: (d: Uint8Array) => void): void;
  on(ev: "close", f: () => void): void;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function poll<T>(what: string, f: () => Promise<T>, ok: (v: T) => boolean, ms = 15_000) {
  const deadline = Date.now() + ms;
  let last: T | undefined;
  while (Date.now() < deadline) {
    last = await f();
    if (ok(last)) return last;
    await sleep(100);
  }
  throw new Error(`timed out waiting for ${what}; last: ${JSON.stringify(last)}`);
}

smokeTest(
  "tls: CA, server, client, short-lived and expired leaves",
  { need: "openssl", start: () => makePki(), stop: (pki) => pki.cleanup() },
  async (pki) => {
    const short = await pki.issue("short", { dnsNames: ["localhost"], validDays: 2 });
    const expired = await pki.issue("expired", {
      dnsNames: ["localhost"],
      notBefore: daysFromNow(-10),
      notAfter: daysFromNow(-1),
    });
    const left = (short.notAfter.getTime() - Date.now()) / 86_400_000;
    assert.ok(left > 1.99 && left <= 2, `short leaf has ${left} days left`);
    assert.ok(expired.notAfter.getTime() < Date.now(), "expired leaf is expired");
    assert.ok(pki.client !== undefined);

    const serve = (leaf: { certPem: string; keyPem: string }) => {
      const l = Deno.listenTls({
        hostname: "127.0.0.1",
        port: 0,
        cert: leaf.certPem,
        key: leaf.keyPem,
      });
      // Serves one connection, then closes the listener.
      const accepted = (async () => {
        try {
          const c = await l.accept();
          await c.handshake().catch(() => {});
          await c.write(new TextEncoder().encode("hi")).catch(() => {});
          c.close();
        } finally {
          l.close();
        }
      })();
      return { port: (l.addr as Deno.NetAddr).port, done: () => accepted };
    };
    // The server leaf verifies against the CA, by name and by IP.
    for (const hostname of ["localhost", "127.0.0.1"]) {
      const s = serve(pki.server);
      const c = await Deno.connectTls({ hostname, port: s.port, caCerts: [pki.ca.certPem] });
      const buf = new Uint8Array(2);
      await c.read(buf);
      assert.deepEqual(new TextDecoder().decode(buf), "hi");
      c.close();
      await s.done();
    }
    // The expired leaf is refused.
    const s = serve(expired);
    let refused = false;
    try {
      const c = await Deno.connectTls({
        hostname: "localhost",
        port: s.port,
        caCerts: [pki.ca.certPem],
      });
      await c.handshake();
      c.close();
    } catch (e) {
      refused = /expired|NotValidYet|Expired/i.test(String(e));
      if (!refused) throw e;
    }
    await s.done();
    assert.ok(refused, "expired certificate was accepted");

    // Mutual TLS with node:tls: the server requires the client leaf.
    const tls = await import("node:tls");
    const client = pki.client!;
    const server = tls.createServer({
      cert: pki.server.certPem,
      key: pki.server.keyPem,
      ca: pki.ca.certPem,
      requestCert: true,
      rejectUnauthorized: true,
    }, (sock) => {
      const cn = sock.getPeerCertificate().subject?.CN ?? "";
      sock.end(String(cn));
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
    try {
      const port = (server.address() as { port: number }).port;
      const got = await new Promise<string>((resolve, reject) => {
        const c = tls.connect({
          host: "127.0.0.1",
          port,
          servername: "localhost",
          ca: pki.ca.certPem,
          cert: client.certPem,
          key: client.keyPem,
        });
        let out = "";
        c.on("data", (d) => out += d.toString());
        c.on("end", () => resolve(out));
        c.on("error", reject);
      });
      assert.equal(got, "waitcmd-client");
    } finally {
      await new Promise((r) => server.close(r));
    }
  },
);

Deno.test({
  name: "sshd: banner, fingerprint, password and key login; silent TCP",
  ignore: ignoreWithout("sshd", NO.sshd),
  fn: async () => {
    const sshd = await startSshd();
    try {
      const banner = await readBanner(sshd.host, sshd.port);
      assert.match(banner, /^SSH-2\.0-OpenSSH/);
      assert.match(sshd.fingerprint, /^SHA256:[A-Za-z0-9+/]{43}$/);
      await Deno.writeTextFile(`${sshd.dir}/check.pub`, sshd.hostPublicKey + "\n");
      assert.deepEqual(await sshFingerprint(`${sshd.dir}/check.pub`), sshd.fingerprint);

      // Password login with npm:ssh2, pinning the host key by SHA256 fingerprint.
      const { default: ssh2 } = await import("ssh2");
      const seen = await new Promise<string>((resolve, reject) => {
        const conn = new ssh2.Client();
        let fp = "";
        conn.on("ready", () => {
          conn.exec("id -un", (err: Error | undefined, stream: SshStream) => {
            if (err) return reject(err);
            let out = "";
            stream.on("data", (d: Uint8Array) => out += new TextDecoder().decode(d));
            stream.on("close", () => {
              conn.end();
              resolve(`${fp} ${out.trim()}`);
            });
          });
        });
        conn.on("error", reject);
        conn.connect({
          host: sshd.host,
          port: sshd.port,
          username: sshd.user,
          password: sshd.password,
          hostHash: "sha256",
          hostVerifier: (hex: string) => {
            const b64 = btoa(String.fromCharCode(...hex.match(/../g)!.map((h) => parseInt(h, 16))));
            fp = "SHA256:" + b64.replace(/=+$/, "");
            return fp === sshd.fingerprint;
          },
          readyTimeout: 10_000,
        });
      });
      assert.deepEqual(seen, `${sshd.fingerprint} waittest`);

      // Key login with the OpenSSH client, checking the host key against a known_hosts line.
      await Deno.writeTextFile(`${sshd.dir}/known_hosts`, sshd.knownHostsLine + "\n");
      const who = await sh("ssh", [
        "-i",
        sshd.clientKeyFile,
        "-p",
        String(sshd.port),
        "-o",
        "BatchMode=yes",
        "-o",
        `UserKnownHostsFile=${sshd.dir}/known_hosts`,
        "-o",
        "StrictHostKeyChecking=yes",
        `waittest@${sshd.host}`,
        "id -un",
      ]);
      assert.deepEqual(who, "waittest");
    } finally {
      await sshd.stop();
    }

    const silent = await startSilentTcp();
    try {
      assert.deepEqual(await readBanner(silent.host, silent.port, { timeoutMs: 300 }), "");
      assert.deepEqual(silent.accepted, 1);
    } finally {
      await silent.stop();
    }
  },
});

smokeTest(
  "dnsmasq: A, several A, CNAME, TXT, MX, SRV, NXDOMAIN, late records",
  {
    need: "dnsmasq",
    start: () =>
      startDnsmasq({
        a: { "app.test": "127.0.0.10", "multi.test": ["127.0.0.11", "127.0.0.12", "127.0.0.13"] },
        cname: { "www.test": "app.test" },
        txt: { "app.test": ["hello, world", "v=2"] },
        mx: { "mail.test": [{ exchange: "mx1.test", preference: 5 }] },
        srv: [{ name: "_http._tcp.app.test", target: "app.test", port: 8080 }],
      }),
    stop: (dns) => dns.stop(),
  },
  async (dns) => {
    const a = await dnsQuery(dns.server, "app.test", "A");
    assert.deepEqual([a.rcode, a.authoritative, a.answers.map((r) => r.data)], ["NOERROR", true, [
      "127.0.0.10",
    ]]);
    const multi = await dnsQuery(dns.server, "multi.test", "A");
    assert.deepEqual(multi.answers.map((r) => r.data).sort(), [
      "127.0.0.11",
      "127.0.0.12",
      "127.0.0.13",
    ]);
    const www = await dnsQuery(dns.server, "www.test", "A");
    assert.deepEqual(www.answers.map((r) => `${r.type} ${r.data}`), [
      "CNAME app.test",
      "A 127.0.0.10",
    ]);
    const txt = await dnsQuery(dns.server, "app.test", "TXT");
    assert.deepEqual(
      txt.answers.map((r) =>
        (r.data as Uint8Array[]).map((b) => new TextDecoder().decode(b)).join("")
      ).sort(),
      ["hello, world", "v=2"],
    );
    const mx = await dnsQuery(dns.server, "mail.test", "MX");
    assert.deepEqual(mx.answers.map((r) => r.data), [{ preference: 5, exchange: "mx1.test" }]);
    const srv = await dnsQuery(dns.server, "_http._tcp.app.test", "SRV", { tcp: true });
    assert.deepEqual(srv.answers.map((r) => r.data), [{
      priority: 0,
      weight: 0,
      port: 8080,
      target: "app.test",
    }]);
    assert.deepEqual((await dnsQuery(dns.server, "missing.test", "A")).rcode, "NXDOMAIN");

    // A host written into the hostsdir resolves shortly after, without a restart.
    assert.deepEqual((await dnsQuery(dns.server, "late.test", "A")).rcode, "NXDOMAIN");
    await dns.addHost("late.test", "127.0.0.20");
    const late = await poll(
      "late.test to resolve",
      () => dnsQuery(dns.server, "late.test", "A"),
      (r) => r.rcode === "NOERROR",
      5000,
    );
    assert.deepEqual(late.answers.map((r) => r.data), ["127.0.0.20"]);
  },
);

Deno.test("dnsfake: truncated over UDP then full over TCP, SERVFAIL, slow", async () => {
  const fake = await startDnsFake({ slowMs: 600 });
  try {
    const udp = await dnsQuery(fake.server, fake.names.truncated, "A");
    assert.deepEqual([udp.truncated, udp.answers.length], [true, 0]);
    const tcp = await dnsQuery(fake.server, fake.names.truncated, "A", { tcp: true });
    assert.deepEqual([tcp.truncated, tcp.rcode, tcp.answers.length], [false, "NOERROR", 40]);
    assert.ok(tcp.size > 512, `TCP answer is only ${tcp.size} bytes`);
    assert.deepEqual((await dnsQuery(fake.server, fake.names.servfail, "A")).rcode, "SERVFAIL");
    assert.deepEqual((await dnsQuery(fake.server, fake.names.nxdomain, "A")).rcode, "NXDOMAIN");
    const t0 = performance.now();
    const slow = await dnsQuery(fake.server, fake.names.slow, "A", { timeoutMs: 3000 });
    const took = performance.now() - t0;
    assert.deepEqual(slow.answers.map((r) => r.data), ["127.0.0.2"]);
    assert.ok(took >= 550, `slow name answered after ${took} ms`);
    const log = await fake.queries();
    assert.ok(log.some((l) => l.startsWith(`query tcp ${fake.names.truncated} A`)), log.join("\n"));
  } finally {
    await fake.stop();
  }
});

smokeTest(
  "docker: busybox image, container health, compose with two services",
  {
    need: "dockerd",
    start: () => startDocker(),
    stop: async (d) => {
      await d.stop();
      // Teardown leaves nothing behind.
      const gone = await Deno.stat(d.dir).then(() => false, () => true);
      assert.ok(gone, `${d.dir} still exists`);
    },
  },
  async (d) => {
    const image = await d.buildBusyboxImage();
    await d.runContainer("smoke");
    // Without /tmp/healthy the check fails (retries=1): unhealthy; touching it makes it healthy.
    const health = () => d.docker(["inspect", "-f", "{{.State.Health.Status}}", "smoke"]);
    await poll("unhealthy", health, (s) => s === "unhealthy");
    await d.docker(["exec", "smoke", "touch", "/tmp/healthy"]);
    await poll("healthy", health, (s) => s === "healthy");
    assert.deepEqual(
      await d.docker(["inspect", "-f", "{{.HostConfig.NetworkMode}}", "smoke"]),
      "none",
    );
    // The default command stops promptly and cleanly on SIGTERM.
    await d.docker(["stop", "-t", "5", "smoke"]);
    assert.deepEqual(
      await d.docker(["inspect", "-f", "{{.State.Status}} {{.State.ExitCode}}", "smoke"]),
      "exited 0",
    );

    const proj = `${d.dir}/compose-smoke`;
    await writeBusyboxCompose(proj, {
      web: null,
      worker: ["/bin/sh", "-c", "touch /tmp/healthy; exec sleep 100000"],
    }, image);
    await d.composeUp(proj, "smoke");
    const ps = await d.docker([
      "ps",
      "--filter",
      "label=com.docker.compose.project=smoke",
      "--format",
      '{{.Label "com.docker.compose.service"}}',
    ]);
    assert.deepEqual(ps.split("\n").sort(), ["web", "worker"]);
    await poll(
      "worker healthy",
      () => d.docker(["inspect", "-f", "{{.State.Health.Status}}", "smoke_worker_1"]),
      (s) => s === "healthy",
    );
    await d.composeDown(proj, "smoke");
    assert.deepEqual(
      await d.docker(["ps", "-q", "--filter", "label=com.docker.compose.project=smoke"]),
      "",
    );
  },
);

smokeTest(
  "systemd: user manager starts, fails and restarts units; user bus",
  { need: "systemd", start: () => startSystemdUser(), stop: (sd) => sd.stop() },
  async (sd) => {
    await sd.writeUnit("smoke-ok.service", "[Service]\nExecStart=/bin/sleep 1000\n");
    await sd.writeUnit("smoke-bad.service", "[Service]\nExecStart=/bin/false\n");
    await sd.writeUnit(
      "smoke-flap.service",
      "[Unit]\nStartLimitIntervalSec=0\n[Service]\nExecStart=/bin/sh -c 'sleep 0.3; exit 1'\nRestart=always\nRestartSec=100ms\n",
    );
    await sd.systemctl(["start", "smoke-ok.service", "smoke-bad.service", "smoke-flap.service"]);
    assert.deepEqual(await sd.show("smoke-ok.service", ["ActiveState", "SubState"]), {
      ActiveState: "active",
      SubState: "running",
    });
    await poll(
      "smoke-bad failed",
      () => sd.show("smoke-bad.service"),
      (r) => r.ActiveState === "failed",
    );
    assert.deepEqual((await sd.show("smoke-bad.service")).Result, "exit-code");
    assert.deepEqual((await sd.show("nonexistent.service")).ActiveState, "inactive");
    await poll(
      "smoke-flap restarting",
      () => sd.show("smoke-flap.service", ["NRestarts"]),
      (r) => Number(r.NRestarts) >= 2,
    );

    // The user bus answers D-Bus clients (what waitcmd's svcmgr kind uses).
    const { default: dbus } = await import("dbus-next");
    const bus = dbus.sessionBus({ busAddress: sd.env.DBUS_SESSION_BUS_ADDRESS });
    try {
      const obj = await bus.getProxyObject(
        "org.freedesktop.systemd1",
        "/org/freedesktop/systemd1",
      );
      const mgr = obj.getInterface("org.freedesktop.systemd1.Manager") as unknown as {
        LoadUnit(name: string): Promise<string>;
      };
      const path: string = await mgr.LoadUnit("smoke-ok.service");
      const unit = await bus.getProxyObject("org.freedesktop.systemd1", path);
      const props = unit.getInterface("org.freedesktop.DBus.Properties") as unknown as {
        Get(iface: string, prop: string): Promise<{ value: unknown }>;
      };
      const v = await props.Get("org.freedesktop.systemd1.Unit", "ActiveState");
      assert.deepEqual(v.value, "active");
    } finally {
      bus.disconnect();
    }
  },
);
