/**
 * A throwaway PKI for TLS tests, made with the openssl CLI in a temporary
 * directory: a CA, a server leaf with the DNS names and IPs asked for, a
 * client leaf for mutual TLS, and any number of extra leaves with chosen
 * validity windows (short-lived for `--valid-for`, already expired, not yet
 * valid). Keys are EC P-256 (fast to make, accepted by rustls and node:tls).
 *
 * ```ts
 * const pki = await makePki({ server: { dnsNames: ["localhost"], ips: ["127.0.0.1"] } });
 * const shortLived = await pki.issue("short", { dnsNames: ["localhost"], validDays: 2 });
 * const expired = await pki.issue("old", { notBefore: daysFromNow(-10), notAfter: daysFromNow(-1) });
 * // ... Deno.listenTls({ cert: pki.server.certPem, key: pki.server.keyPem, ... })
 * await pki.cleanup();
 * ```
 */

import { sh } from "./_util.ts";

/** Writes a new P-256 private key to `out` (PEM). */
function ecKey(out: string): Promise<string> {
  const args = ["genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", out];
  return sh("openssl", args);
}

/** What a leaf certificate is for; sets extendedKeyUsage. */
export type LeafUsage = "server" | "client" | "both";

/** How to make one leaf certificate. */
export interface LeafSpec {
  /** Subject CN. Defaults to the first DNS name, else the leaf's name. */
  commonName?: string;
  /** Subject O (e.g. a Kubernetes group such as `system:masters`). Default none. */
  organization?: string;
  /** subjectAltName DNS entries. Defaults to none (a client leaf needs none). */
  dnsNames?: string[];
  /** subjectAltName IP entries (IPv4 or IPv6). Defaults to none. */
  ips?: string[];
  /** Validity length from `notBefore`, in days (may be fractional). Default 30. Ignored if `notAfter` is set. */
  validDays?: number;
  /** Start of validity. Default one hour ago (tolerates small clock skew). */
  notBefore?: Date;
  /** End of validity. Overrides `validDays`; may be in the past for an expired leaf. */
  notAfter?: Date;
  /** extendedKeyUsage. Default "server". */
  usage?: LeafUsage;
}

/** A certificate and its private key, both as files and as PEM text. */
export interface CertKeyPair {
  /** Path of the PEM certificate. */
  certFile: string;
  /** Path of the PEM private key (PKCS#8, unencrypted). */
  keyFile: string;
  /** Path of the certificate followed by the CA certificate (for servers sending the chain). */
  chainFile: string;
  /** The certificate as PEM. */
  certPem: string;
  /** The private key as PEM. */
  keyPem: string;
  /** The certificate followed by the CA certificate, as PEM. */
  chainPem: string;
  /** Start of validity as written in the certificate (second precision). */
  notBefore: Date;
  /** End of validity as written in the certificate (second precision). */
  notAfter: Date;
  /** SHA-256 fingerprint of the DER certificate, lower-case hex without colons. */
  sha256: string;
}

/** The CA of a {@link Pki}. */
export interface CaFiles {
  /** Path of the self-signed CA certificate (PEM). */
  certFile: string;
  /** Path of the CA private key (PEM). */
  keyFile: string;
  /** The CA certificate as PEM (pass to `caCerts` / `--ca`). */
  certPem: string;
}

/** Options of {@link makePki}. */
export interface PkiOptions {
  /** Directory to work in; created if missing. Default: a new temporary directory. */
  dir?: string;
  /** CN of the CA. Default "waitcmd test CA". */
  caCommonName?: string;
  /** CA validity in days. Default 3650. */
  caValidDays?: number;
  /** The server leaf. Default: DNS "localhost", IPs "127.0.0.1" and "::1", 30 days. */
  server?: LeafSpec;
  /** The client leaf, or false for none. Default: CN "waitcmd-client", usage "client", 30 days. */
  client?: LeafSpec | false;
}

/** A CA and the leaves it issued, all in `dir`. */
export interface Pki {
  /** Directory holding every file of this PKI. */
  dir: string;
  /** The CA. */
  ca: CaFiles;
  /** The server leaf. */
  server: CertKeyPair;
  /** The client leaf (undefined when `client: false`). */
  client: CertKeyPair | undefined;
  /** Issues another leaf signed by this CA; `name` names its files (`name.crt`, `name.key`). */
  issue(name: string, spec?: LeafSpec): Promise<CertKeyPair>;
  /** Removes `dir` (only if makePki created it). */
  cleanup(): Promise<void>;
}

/** A Date `days` from now (negative for the past). */
export function daysFromNow(days: number): Date {
  return new Date(Date.now() + days * 86_400_000);
}

/** openssl `ca -startdate/-enddate` format: YYYYMMDDHHMMSSZ (GeneralizedTime). */
function asn1Time(d: Date): string {
  return d.toISOString().replace(/[-:T]/g, "").replace(/\.\d+Z$/, "Z");
}

const OPENSSL_CNF = (dir: string) => `
[ ca ]
default_ca = CA_default

[ CA_default ]
dir = ${dir}
database = ${dir}/index.txt
new_certs_dir = ${dir}/newcerts
serial = ${dir}/serial
default_md = sha256
policy = policy_any
unique_subject = no
copy_extensions = none
email_in_dn = no

[ policy_any ]
commonName = supplied

[ req ]
distinguished_name = req_dn
prompt = no
default_md = sha256

[ req_dn ]
CN = placeholder

[ v3_ca ]
basicConstraints = critical, CA:TRUE
keyUsage = critical, keyCertSign, cRLSign
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid:always
`;

function leafExtensions(spec: LeafSpec): string {
  const sans = [
    ...(spec.dnsNames ?? []).map((n) => `DNS:${n}`),
    ...(spec.ips ?? []).map((ip) => `IP:${ip}`),
  ];
  const eku = { server: "serverAuth", client: "clientAuth", both: "serverAuth, clientAuth" }[
    spec.usage ?? "server"
  ];
  return [
    "[ leaf ]",
    "basicConstraints = critical, CA:FALSE",
    "keyUsage = critical, digitalSignature",
    `extendedKeyUsage = ${eku}`,
    "subjectKeyIdentifier = hash",
    "authorityKeyIdentifier = keyid, issuer",
    ...(sans.length ? [`subjectAltName = ${sans.join(", ")}`] : []),
    "",
  ].join("\n");
}

async function readDates(
  certFile: string,
): Promise<{ notBefore: Date; notAfter: Date; sha256: string }> {
  const out = await sh("openssl", [
    ...["x509", "-in", certFile, "-noout", "-startdate", "-enddate", "-fingerprint", "-sha256"],
  ]);
  const field = (k: string) => {
    const line = out.split("\n").find((l) => l.startsWith(k + "="));
    if (!line) throw new Error(`openssl x509: no ${k} in ${out}`);
    return line.slice(k.length + 1);
  };
  return {
    notBefore: new Date(field("notBefore")),
    notAfter: new Date(field("notAfter")),
    sha256: field("sha256 Fingerprint").replaceAll(":", "").toLowerCase(),
  };
}

/**
 * Makes a CA, a server leaf and (unless `client: false`) a client leaf with the
 * openssl CLI. More leaves can be issued later with {@link Pki.issue}.
 */
export async function makePki(opts: PkiOptions = {}): Promise<Pki> {
  const created = opts.dir === undefined;
  const dir = opts.dir ?? await Deno.makeTempDir({ prefix: "waitcmd-pki-" });
  await Deno.mkdir(`${dir}/newcerts`, { recursive: true });
  await Deno.writeTextFile(`${dir}/index.txt`, "");
  await Deno.writeTextFile(`${dir}/serial`, "1000\n");
  const cnf = `${dir}/openssl.cnf`;
  await Deno.writeTextFile(cnf, OPENSSL_CNF(dir));

  const ca: CaFiles = { certFile: `${dir}/ca.crt`, keyFile: `${dir}/ca.key`, certPem: "" };
  await ecKey(ca.keyFile);
  await sh("openssl", [
    ...["req", "-config", cnf, "-new", "-x509", "-key", ca.keyFile],
    ...["-subj", `/CN=${opts.caCommonName ?? "waitcmd test CA"}`],
    ...["-days", String(opts.caValidDays ?? 3650), "-extensions", "v3_ca", "-out", ca.certFile],
  ]);
  ca.certPem = await Deno.readTextFile(ca.certFile);

  // `openssl ca` keeps a database: serialise issuing.
  let queue: Promise<unknown> = Promise.resolve();
  const issueNow = async (name: string, spec: LeafSpec): Promise<CertKeyPair> => {
    if (!/^[A-Za-z0-9._-]+$/.test(name)) throw new Error(`bad leaf name ${name}`);
    const keyFile = `${dir}/${name}.key`;
    const certFile = `${dir}/${name}.crt`;
    const csr = `${dir}/${name}.csr`;
    const ext = `${dir}/${name}.ext`;
    const notBefore = spec.notBefore ?? new Date(Date.now() - 3_600_000);
    // validDays counts from now when notBefore is the default (an hour ago).
    const notAfter = spec.notAfter ??
      new Date(
        (spec.notBefore ? notBefore.getTime() : Date.now()) + (spec.validDays ?? 30) * 86_400_000,
      );
    const cn = spec.commonName ?? spec.dnsNames?.[0] ?? name;
    await Deno.writeTextFile(ext, leafExtensions(spec));
    await ecKey(keyFile);
    await sh("openssl", [
      "req",
      "-config",
      cnf,
      "-new",
      "-key",
      keyFile,
      "-subj",
      `${spec.organization ? `/O=${spec.organization}` : ""}/CN=${cn}`,
      "-out",
      csr,
    ]);
    await sh("openssl", [
      ...["ca", "-config", cnf, "-batch", "-notext", "-preserveDN", "-cert", ca.certFile],
      ...["-keyfile", ca.keyFile, "-startdate", asn1Time(notBefore)],
      ...["-enddate", asn1Time(notAfter), "-extfile", ext, "-extensions", "leaf", "-in", csr],
      ...["-out", certFile],
    ]);
    const certPem = await Deno.readTextFile(certFile);
    const keyPem = await Deno.readTextFile(keyFile);
    const chainPem = certPem + ca.certPem;
    const chainFile = `${dir}/${name}.chain.crt`;
    await Deno.writeTextFile(chainFile, chainPem);
    return {
      certFile,
      keyFile,
      chainFile,
      certPem,
      keyPem,
      chainPem,
      ...(await readDates(certFile)),
    };
  };
  const issue = (name: string, spec: LeafSpec = {}): Promise<CertKeyPair> => {
    const p = queue.then(() => issueNow(name, spec));
    queue = p.catch(() => {});
    return p;
  };

  const server = await issue(
    "server",
    opts.server ?? { dnsNames: ["localhost"], ips: ["127.0.0.1", "::1"] },
  );
  const client = opts.client === false
    ? undefined
    : await issue("client", { commonName: "waitcmd-client", usage: "client", ...opts.client });

  return {
    dir,
    ca,
    server,
    client,
    issue,
    async cleanup() {
      if (created) await Deno.remove(dir, { recursive: true }).catch(() => {});
    },
  };
}
