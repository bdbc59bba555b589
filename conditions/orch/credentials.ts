/**
 * orch's credentials as data: a kubeconfig user's, how they are described when the server
 * refuses them, what one request carries, and the secrets among them to redact
 * (docs/contract.md §9). Getting them from a kubeconfig is kubeconfig.ts's.
 *
 * @module
 */

/** A kubeconfig user's `exec:` credential plugin: what it runs, with what. */
export interface ExecPlugin {
  readonly command?: string;
  readonly args?: readonly string[] | null;
  readonly env?: readonly { readonly name?: string; readonly value?: string }[] | null;
}

/** A kubeconfig user: the parts of client-node's type that are used here. */
export interface KcUser {
  readonly name: string;
  readonly certData?: string;
  readonly certFile?: string;
  readonly keyData?: string | null;
  readonly password?: string | null;
  readonly exec?: ExecPlugin | null;
  readonly authProvider?: { name?: string; config?: Record<string, unknown> } | null;
  readonly token?: string;
  readonly username?: string;
  readonly impersonateUser?: string;
}

/** How the kubeconfig's user authenticates, as shown when the server refuses it. */
export function describeCredentials(user: KcUser | null | undefined): string {
  if (!user) return "no credentials";
  let how: string;
  if (user.exec?.command) how = `exec plugin ${JSON.stringify(user.exec.command)}`;
  else if (user.authProvider?.config?.tokenFile) how = "token file";
  else if (user.authProvider?.name) how = `auth provider ${JSON.stringify(user.authProvider.name)}`;
  else if (user.token) how = "bearer token";
  else if (user.certData || user.certFile) how = "client certificate";
  else if (user.username) how = `basic auth (user ${JSON.stringify(user.username)})`;
  else how = "no credentials";
  const as = user.impersonateUser ? `, impersonating ${JSON.stringify(user.impersonateUser)}` : "";
  return `${how} of user ${JSON.stringify(user.name)}${as}`;
}

/** Names of auth-provider settings that hold credentials (`access-token`, `client-secret`, ...). */
const SECRET_SETTING = /token|secret|passw|key/i;

/**
 * The credentials a kubeconfig user holds in the file: its token, password, client key (as
 * written, base64, and decoded) and the token-like settings of its auth provider
 * (docs/contract.md §9). Tokens from exec plugins and token files come with each request
 * ({@linkcode requestSecrets}).
 */
export function userSecrets(user: KcUser | null | undefined): string[] {
  if (!user) return [];
  const out: string[] = [];
  const add = (v: unknown) => {
    if (typeof v === "string" && v.trim() !== "") out.push(v, v.trim());
  };
  add(user.token);
  add(user.password);
  if (user.keyData) {
    add(user.keyData);
    try {
      add(new TextDecoder().decode(Uint8Array.from(atob(user.keyData), (c) => c.charCodeAt(0))));
    } catch {
      // not base64: client-node will fail to use it, and says so
    }
  }
  for (const [k, v] of Object.entries(user.authProvider?.config ?? {})) {
    if (SECRET_SETTING.test(k) && !/file|path/i.test(k)) add(v);
  }
  // An exec plugin's arguments and environment values are its credentials as far as anyone
  // can tell (a cluster name and a role, or a token); a failing plugin may echo them.
  const plugin = user.exec ?? (user.authProvider?.config?.exec as ExecPlugin | undefined);
  for (const arg of plugin?.args ?? []) add(arg);
  for (const variable of plugin?.env ?? []) add(variable?.value);
  return [...new Set(out)];
}

/**
 * The credentials one request carries: the Authorization header (whole, and its credential
 * without the scheme; for Basic, the decoded `user:password` and the password) and the client
 * key (docs/contract.md §9).
 */
export function requestSecrets(c: Credentials): string[] {
  const out: string[] = [];
  for (const [name, value] of Object.entries(c.headers)) {
    if (name.toLowerCase() !== "authorization" || !value) continue;
    out.push(value);
    const m = /^(\S+)\s+(.+)$/.exec(value);
    if (!m) continue;
    out.push(m[2]!);
    if (m[1]!.toLowerCase() === "basic") {
      try {
        const plain = atob(m[2]!);
        out.push(plain, plain.slice(plain.indexOf(":") + 1));
      } catch {
        // not base64
      }
    }
  }
  if (c.key) out.push(c.key, c.key.trim());
  return [...new Set(out.filter((v) => v.length >= 3))];
}

/** What one request sends: headers (authentication included) and TLS material. */
export interface Credentials {
  readonly headers: Record<string, string>;
  readonly ca: string | undefined;
  readonly cert: string | undefined;
  readonly key: string | undefined;
  /** The cluster skips certificate verification (`insecure-skip-tls-verify`). */
  readonly insecure: boolean;
  /** The cluster's `tls-server-name`. */
  readonly servername: string | undefined;
  /** The cluster's `proxy-url`. */
  readonly proxy: string | undefined;
}
