/**
 * The usage errors of kinds, written once for both levels: a kind's unit test checks every row
 * on parse and validation ({@link stepUsageErrors}), its e2e test runs the same rows through the
 * CLI (`assertKindUsageErrors` in tests/e2e/_cli.ts), where nothing may be probed.
 *
 * A row: the words (the condition first, under the name it is given), the text of the line
 * between `waitcmd: condition 1 (NAME): ` and ` (see: waitcmd help KIND)`, and the environment
 * the row needs, if any.
 *
 * @module
 */

import { assertEquals } from "./_assert.ts";
import { usageError } from "./_kit.ts";

/** One usage error: the words, the text of its line, the environment it needs. */
export type UsageRow = readonly [args: string[], text: string, env?: Record<string, string>];

/** Each kind's usage-error rows, by the kind's name. */
export const USAGE_ROWS = {
  container: [
    [["container", "a b"], 'expected a container name, id or compose service name, got "a b"'],
    [
      ["container", "my web"],
      'expected a container name, id or compose service name, got "my web"',
    ],
    [
      ["docker", "web", "--status", "up"],
      '--status: expected one of created, running, paused, restarting, removing, exited, dead, any, got "up"',
    ],
    [
      ["docker", "web", "--health", "ok"],
      '--health: expected one of healthy, unhealthy, starting, none, got "ok"',
    ],
    [
      ["docker", "web", "--health", "green"],
      '--health: expected one of healthy, unhealthy, starting, none, got "green"',
    ],
    [
      ["container", "web", "--status", "exited", "--health", "healthy"],
      "--health: cannot be combined with --status exited: health checks only run while a container runs",
    ],
    [
      ["container", "web", "--status", "removing", "--health", "healthy"],
      "--health: cannot be combined with --status removing: health checks only run while a container runs",
    ],
    [
      ["container", "web", "--status", "any", "--listening", "80"],
      "--listening: cannot be combined with --status any: ports are read from a running container",
    ],
    [
      ["container", "web", "--status", "any", "--exit-code", "0"],
      "--exit-code: cannot be combined with --status any: a container has an exit code once it has exited",
    ],
    [
      ["container", "web", "--project", "my project"],
      '--project: expected a compose project name like myapp, got "my project"',
    ],
    [
      ["container", "web", "--project", "a/b"],
      '--project: expected a compose project name like myapp, got "a/b"',
    ],
    [
      ["container", "web", "--listening", "http"],
      '--listening: expected PORT, PORT/tcp or PORT/udp (like 8080 or 53/udp), got "http"',
    ],
    [
      ["container", "web", "--listening", "0"],
      '--listening: expected a port from 1 to 65535, got "0"',
    ],
    [
      ["container", "web", "--listening", "70000"],
      '--listening: expected a port from 1 to 65535, got "70000"',
    ],
    [
      ["container", "web", "--listening", "80/sctp"],
      '--listening: expected the protocol tcp or udp after the port, got "80/sctp"',
    ],
    [
      ["container", "web", "--listening", "53/sctp"],
      '--listening: expected the protocol tcp or udp after the port, got "53/sctp"',
    ],
    [
      ["container", "web", "--listening", "80", "--status", "created"],
      "--listening: cannot be combined with --status created: ports are read from a running container",
    ],
    [
      ["container", "web", "--listening", "8080", "--status", "exited"],
      "--listening: cannot be combined with --status exited: ports are read from a running container",
    ],
    [
      ["container", "web", "--exit-code", "256"],
      '--exit-code: expected a whole number from 0 to 255, got "256"',
    ],
    [
      ["container", "web", "--exit-code", "-1"],
      '--exit-code: expected a whole number from 0 to 255, got "-1"',
    ],
    [
      ["container", "web", "--exit-code", "zero"],
      '--exit-code: expected a whole number from 0 to 255, got "zero"',
    ],
    [
      ["container", "web", "--exit-code", "0", "--status", "running"],
      "--exit-code: cannot be combined with --status running: a container has an exit code once it has exited",
    ],
    [
      ["container", "web", "--exit-code", "0", "--health", "none"],
      "--exit-code: cannot be combined with --health: an exited container has no health",
    ],
    [
      ["container", "web", "--exit-code", "0", "--health", "healthy"],
      "--exit-code: cannot be combined with --health: an exited container has no health",
    ],
    [
      ["container", "web", "--exit-code", "0", "--listening", "80"],
      "--exit-code: cannot be combined with --listening: an exited container has no ports",
    ],
    [
      ["container", "web", "--exit-code", "0", "--listening", "8080"],
      "--exit-code: cannot be combined with --listening: an exited container has no ports",
    ],
    [
      ["container", "web"],
      "DOCKER_HOST: ssh:// is not supported; use unix://PATH or tcp://HOST:PORT",
      { "DOCKER_HOST": "ssh://me@host" },
    ],
    [
      ["container", "web"],
      "DOCKER_HOST: ssh:// is not supported; use unix://PATH or tcp://HOST:PORT",
      { "DOCKER_HOST": "ssh://user@example" },
    ],
  ],
  objstore: [
    [["s3", "bkt/k"], 'expected objstore://BUCKET/KEY or s3://BUCKET/KEY, got "bkt/k"'],
    [["s3", "bucket/key"], 'expected objstore://BUCKET/KEY or s3://BUCKET/KEY, got "bucket/key"'],
    [
      ["objstore", "objstore://bkt", "--metadata", "a=b"],
      "--metadata: needs an object key in the target (objstore://BUCKET/KEY)",
    ],
    [
      ["s3", "s3://items", "--metadata", "a=b"],
      "--metadata: needs an object key in the target (objstore://BUCKET/KEY)",
    ],
    [
      ["objstore", "objstore://bkt", "--contains", "x"],
      "--contains: needs an object key in the target (objstore://BUCKET/KEY)",
    ],
    [
      ["s3", "s3://items", "--contains", "x"],
      "--contains: needs an object key in the target (objstore://BUCKET/KEY)",
    ],
    [
      ["s3", "s3://bkt/k", "--metadata", "novalue"],
      '--metadata: expected NAME=VALUE like build=42, got "novalue"',
    ],
    [
      ["s3", "s3://items/k", "--metadata", "nameonly"],
      '--metadata: expected NAME=VALUE like build=42, got "nameonly"',
    ],
    [
      ["s3", "s3://bkt/k", "--metadata", "a=1", "--metadata", "A=2"],
      '--metadata: "a" is given twice with different values',
    ],
    [["s3", "s3://bkt/k", "--contains", ""], "--contains: expected a text, got an empty string"],
    [
      ["s3", "s3://bkt/k", "--endpoint-url", "ftp://x"],
      '--endpoint-url: expected an http(s) URL like http://localhost:9000, got "ftp://x"',
    ],
    [
      ["s3", "s3://items/k", "--endpoint-url", "localhost:9000"],
      '--endpoint-url: expected an http(s) URL like http://localhost:9000, got "localhost:9000"',
    ],
    [
      ["s3", "s3://bkt/k"],
      'CLOUD_ENDPOINT_URL: expected an http(s) URL like http://localhost:9000, got "not a url"',
      { "CLOUD_ENDPOINT_URL": "not a url" },
    ],
    [
      ["s3", "s3://bkt/k", "--endpoint-url", "http://user:pw@host:9000"],
      "--endpoint-url: the endpoint URL must not carry credentials; use --access-key-id",
    ],
    [
      ["s3", "s3://bkt/k", "--virtual-hosted-style"],
      "--virtual-hosted-style: only applies with --endpoint-url or CLOUD_ENDPOINT_URL_S3, CLOUD_ENDPOINT_URL, S3_ENDPOINT_URL",
    ],
    [
      ["s3", "s3://bkt/k", "--region", "eu west"],
      '--region: expected a region like us-east-1, got "eu west"',
    ],
    [
      ["s3", "s3://bkt/k", "--access-key-id", "A"],
      "--access-key-id: needs a secret access key too (--secret-access-key or CLOUD_SECRET_ACCESS_KEY)",
    ],
    [
      ["s3", "s3://bkt/k"],
      "CLOUD_SECRET_ACCESS_KEY: needs an access key id too (--access-key-id or CLOUD_ACCESS_KEY_ID)",
      { "CLOUD_SECRET_ACCESS_KEY": "S" },
    ],
    [
      ["s3", "s3://items/k", "--secret-access-key", "s3cr3t-value"],
      "--secret-access-key: needs an access key id too (--access-key-id or CLOUD_ACCESS_KEY_ID)",
    ],
    [
      ["s3", "s3://bkt/k", "--session-token", "T"],
      "--session-token: needs an access key id and a secret access key too",
    ],
    [
      ["s3", "s3://bkt/k", "--profile", "ci", "--access-key-id", "A"],
      "--profile: cannot be combined with --access-key-id",
    ],
  ],
  orch: [
    [["k8s", "deploy"], 'expected KIND/NAME, or KIND with --selector or --all, got "deploy"'],
    [
      ["k8s", "deployment"],
      'expected KIND/NAME, or KIND with --selector or --all, got "deployment"',
    ],
    [
      ["k8s", "deploy/"],
      'expected KIND/NAME (deployment/web) or KIND with --selector, got "deploy/"',
    ],
    [["k8s", "/web"], 'expected KIND/NAME (deployment/web) or KIND with --selector, got "/web"'],
    [
      ["k8s", "deploy/a/b"],
      'expected KIND/NAME (deployment/web) or KIND with --selector, got "deploy/a/b"',
    ],
    [
      ["k8s", "deploy/web", "--selector", "app=web"],
      "--selector: cannot be combined with KIND/NAME",
    ],
    [["k8s", "deploy/web", "--all"], "--all: cannot be combined with KIND/NAME"],
    [
      ["k8s", "pods", "--selector", "app web"],
      '--selector: expected requirements like app=web, tier!=db, env in (a,b) or !key, got "app web"',
    ],
    [
      ["k8s", "pods", "--selector", "a b"],
      '--selector: expected requirements like app=web, tier!=db, env in (a,b) or !key, got "a b"',
    ],
    [
      ["k8s", "pod/p", "--namespace", "Bad_NS"],
      '--namespace: expected a namespace name like default, got "Bad_NS"',
    ],
    [
      ["k8s", "pod/p", "--for", "rollout"],
      "--for: rollout works with deployments, statefulsets and daemonsets, not pods",
    ],
    [
      ["k8s", "deployments.apps/web", "--for", "complete"],
      "--for: complete works with jobs, not deployments",
    ],
    [
      ["k8s", "pod/p", "--for", "ready", "--condition", "Ready"],
      "--condition: cannot be combined with --for; give one wait type",
    ],
    [
      ["k8s", "pod/p", "--condition", "Ready", "--jsonpath", ".a"],
      "--jsonpath: cannot be combined with --condition; give one wait type",
    ],
    [
      ["k8s", "job/j", "--for", "complete", "--jsonpath", ".a"],
      "--jsonpath: cannot be combined with --for; give one wait type",
    ],
    [
      ["k8s", "pod/p", "--jsonpath", ".status.phase =="],
      "--jsonpath: expected a value after .status.phase ==",
    ],
    [
      ["k8s", "pod/p", "--condition", "Ready=Not Yet"],
      '--condition: expected a condition type like Available or Ready=False, got "Ready=Not Yet"',
    ],
    [["k8s", "pod/p", "--context", ""], "--context: expected a value, got an empty string"],
    [
      ["k8s"],
      "missing target KIND/NAME (deployment/web), KIND with --selector or --all, or -f FILE for the objects of manifests",
    ],
    [
      ["k8s", "deploy/web", "-f", "app.yaml"],
      '--file: cannot be combined with a target ("deploy/web"); the manifests name the objects',
    ],
    [["k8s", "-f", ""], "--file: expected a file, a directory or - (standard input)"],
    [
      ["k8s", "-f", "app.yaml", "--selector", "app=web"],
      "--selector: cannot be combined with --file; each object waits for the readiness of its kind (or --for create, --for delete)",
    ],
    [
      ["k8s", "-f", "app.yaml", "--condition", "Ready"],
      "--condition: cannot be combined with --file; each object waits for the readiness of its kind (or --for create, --for delete)",
    ],
    [
      ["k8s", "-f", "app.yaml", "--for", "rollout"],
      "--for: rollout cannot be combined with --file; give create or delete, or none for the readiness of each object's kind",
    ],
  ],
  log: [
    [["log", "a.log"], "expected --contains TEXT, --matches REGEX or --jsonpath EXPR"],
    [
      ["log", "a.log", "--exclude", "x"],
      "expected --contains TEXT, --matches REGEX or --jsonpath EXPR",
    ],
    [["log", "", "--contains", "x"], "expected a path, got an empty string"],
    [["log", "a.log", "--contains", ""], "--contains: expected a text, got an empty string"],
    [
      ["log", "a.log", "--contains", "a\nb"],
      "--contains: cannot contain a line break: lines are matched one at a time",
    ],
    [
      ["log", "a.log", "--contains", "a", "--exclude", "b\r\n"],
      "--exclude: cannot contain a line break: lines are matched one at a time",
    ],
    [["log", "a.log", "--matches", ""], "--matches: expected a regular expression, got nothing"],
    [
      ["log", "a.log", "--contains", "x", "--exclude-matches", ""],
      "--exclude-matches: expected a regular expression, got nothing",
    ],
    [
      ["log", "a.log", "--contains", "x", "--exclude-matches", "(a"],
      "--exclude-matches: invalid regular expression /(a/: unterminated group",
    ],
    [
      ["log", "a.log", "--contains", "x", "--exclude-matches", "(?<=a)b"],
      "--exclude-matches: not supported by waitcmd's linear-time engine (RE2: no lookaround or backreferences): invalid named capture: (?<=a)b",
    ],
    [
      ["log", "a.log", "--jsonpath", "$.a =="],
      "--jsonpath: expected a value after $.a ==",
    ],
    [
      ["log", "a.log", "--jsonpath", " "],
      '--jsonpath: expected an expression like $.status == "ok", got nothing',
    ],
    [
      ["log", "a.log", "--matches", "(a"],
      "--matches: invalid regular expression /(a/: unterminated group",
    ],
    [
      ["log", "a.log", "--contains", "x", "--from-start", "--tail", "5"],
      "--tail: cannot be combined with --from-start",
    ],
    [
      ["log", "a.log", "--contains", "x", "--tail", "-1"],
      '--tail: expected a whole number of at least 0, got "-1"',
    ],
    [
      ["log", "a.log", "--contains", "x", "--min-matches", "0"],
      '--min-matches: expected a whole number of at least 1, got "0"',
    ],
  ],
  svcmgr: [
    [
      ["svcmgr", "a b"],
      'expected a unit name like nginx or nginx.service, got "a b" (allowed: letters, digits and :_.\\@-)',
    ],
    [["svcmgr", "x", "--active", "--failed"], "--failed: cannot be combined with --active"],
    [["systemd", "x", "--failed", "--inactive"], "--failed: cannot be combined with --inactive"],
  ],
  file: [
    [["file", ""], "expected a path, got an empty string"],
    [["file", "/x", "--contains", ""], "--contains: expected a text, got an empty string"],
    [["file", "/x", "--deleted", "--exists"], "--deleted: cannot be combined with --exists"],
    [["file", "/x", "--deleted", "--nonempty"], "--deleted: cannot be combined with --nonempty"],
    [
      ["file", "/x", "--contains", "a", "--deleted"],
      "--deleted: cannot be combined with --contains",
    ],
    [["file", "/x", "--deleted", "--exists=false"], "--deleted: cannot be combined with --exists"],
    [["file", "/x", "--contains"], "--contains: missing value TEXT"],
    [
      ["file", "/x", "--deleted", "--unchanged-for", "2s"],
      "--deleted: cannot be combined with --unchanged-for",
    ],
    [
      ["file", "/x", "--unchanged-for", "0s"],
      "--unchanged-for: expected a duration above 0, like 2s or 500ms",
    ],
    [
      ["file", "/x", "--unchanged-for", "soon"],
      '--unchanged-for: expected a duration like 30s, 2m or 1h30m, got "soon"',
    ],
    [["file"], "missing target PATH"],
  ],
  exec: [
    [["exec", "--"], "missing command: exec [flags] -- <command> [args...]"],
    [["exec", "--output-contains", "x"], "missing command: exec [flags] -- <command> [args...]"],
    [["exec", "echo"], 'unexpected argument "echo"; the command goes after "--": exec -- echo ...'],
    [
      ["exec", "--exit-code", "256", "--", "true"],
      '--exit-code: expected a whole number from 0 to 255, got "256"',
    ],
    [
      ["exec", "--exit-code", "-1", "--", "true"],
      '--exit-code: expected a whole number from 0 to 255, got "-1"',
    ],
    [
      ["exec", "--exit-code", "x", "--", "true"],
      '--exit-code: expected a whole number from 0 to 255, got "x"',
    ],
    [["exec", "--output-contains"], "--output-contains: missing value TEXT"],
    [["exec", "--cwd", "", "--", "true"], "--cwd: expected a directory, got an empty string"],
    [
      ["exec", "--env", "NOEQUALS", "--", "true"],
      '--env: expected NAME=VALUE with NAME made of letters, digits and _, got "NOEQUALS"',
    ],
    [
      ["exec", "--env", "BAD-NAME=s3cret", "--", "true"],
      '--env: expected NAME=VALUE with NAME made of letters, digits and _, got "BAD-NAME=…"',
    ],
    [
      ["exec", "--env", "=v", "--", "true"],
      '--env: expected NAME=VALUE with NAME made of letters, digits and _, got "=…"',
    ],
    [
      ["exec", "--jsonpath", "status == ok", "--", "true"],
      '--jsonpath: expected a path like $.status, .status or {.status}, got "status"',
    ],
  ],
  glob: [
    [["glob", ""], "expected a pattern, got an empty string"],
    [["glob"], "missing target PATTERN"],
    [["glob", "{a,b}".repeat(11)], "the pattern's {a,b} groups expand to more than 1024 patterns"],
    [
      ["glob", "*.x", "--absent", "--min-count", "1"],
      "--absent: cannot be combined with --min-count",
    ],
    [
      ["glob", "*.x", "--absent", "--max-count", "0"],
      "--absent: cannot be combined with --max-count",
    ],
    [
      ["glob", "*.x", "--absent", "--max-count", "1"],
      "--absent: cannot be combined with --max-count",
    ],
    [
      ["glob", "*.x", "--min-count", "5", "--max-count", "2"],
      "--min-count: 5 is more than --max-count 2",
    ],
    [
      ["glob", "*.x", "--min-count", "-1"],
      '--min-count: expected a whole number of at least 0, got "-1"',
    ],
    [
      ["glob", "*.x", "--max-count", "many"],
      '--max-count: expected a whole number of at least 0, got "many"',
    ],
    [
      ["glob", "*.x", "--min-count", "x"],
      '--min-count: expected a whole number of at least 0, got "x"',
    ],
  ],
  lockfile: [
    [
      ["lockfile", "x.lock", "--absent", "--present"],
      "--present: cannot be combined with --absent",
    ],
    [
      ["lockfile", "a.lock", "--absent", "--present"],
      "--present: cannot be combined with --absent",
    ],
    [
      ["lockfile", "x.lock", "--older-than", "5m"],
      "--older-than: needs --present (a stale lock is a present one)",
    ],
    [
      ["lockfile", "a.lock", "--older-than", "5m"],
      "--older-than: needs --present (a stale lock is a present one)",
    ],
    [
      ["lockfile", "x.lock", "--absent", "--older-than", "5m"],
      "--older-than: needs --present (a stale lock is a present one)",
    ],
    [
      ["lockfile", "x.lock", "--present", "--older-than", "0"],
      "--older-than: must be greater than 0",
    ],
    [
      ["lockfile", "a.lock", "--present", "--older-than", "soon"],
      '--older-than: expected a duration like 30s, 2m or 1h30m, got "soon"',
    ],
    [["lockfile"], "missing target PATH"],
  ],
  permission: [
    [
      ["permission", "/x"],
      "permission needs at least one of --mode, --mode-includes, --owner, --group, --type",
    ],
    [
      ["permission", "/x", "--mode", "0999"],
      '--mode: expected an octal mode like 0644, got "0999"',
    ],
    [
      ["perm", "/x", "--mode", "rw-r--r--"],
      '--mode: expected an octal mode like 0644, got "rw-r--r--"',
    ],
    [
      ["permission", "/x", "--mode", "644", "--mode-includes", "600"],
      "--mode-includes: cannot be combined with --mode",
    ],
    [
      ["permission", "/x", "--owner", ""],
      "--owner: expected a name or a numeric id, got an empty string",
    ],
    [["permission", "/x", "--group", "a:b"], '--group: expected a name or a numeric id, got "a:b"'],
    [
      ["perm", "/x", "--type", "pipe"],
      '--type: expected one of file, dir, symlink, socket, fifo, got "pipe"',
    ],
    [
      ["perm", "/x", "--owner", "no-such-user-zq9"],
      '--owner: no user named "no-such-user-zq9" on this system',
    ],
    [
      ["perm", "/x", "--group", "no-such-group-zq9"],
      '--group: no group named "no-such-group-zq9" on this system',
    ],
  ],
  checksum: [
    [["checksum", "f"], "--equals: checksum needs --equals [sha256:|sha512:|sha1:|md5:]HEX"],
    [["checksum", "f", "--equals", "xyz"], '--equals: expected a hex digest, got "xyz"'],
    [
      ["checksum", "f", "--equals", "sha256:abcd"],
      "--equals: a sha256 digest has 64 hex digits, got 4",
    ],
    [["checksum", "f", "--equals", "sha1:abc"], "--equals: a sha1 digest has 40 hex digits, got 3"],
    [
      ["checksum", "f", "--equals", "crc32:abcd"],
      '--equals: unknown algorithm "crc32" (expected md5, sha1, sha256, sha512)',
    ],
    [
      ["checksum", "f", "--equals", "abcd"],
      "--equals: cannot tell the algorithm from 4 hex digits (md5 32, sha1 40, sha256 64, sha512 128); add a prefix such as sha256:",
    ],
    [
      ["checksum", "f", "--equals", "12345"],
      "--equals: cannot tell the algorithm from 5 hex digits (md5 32, sha1 40, sha256 64, sha512 128); add a prefix such as sha256:",
    ],
    [["checksum", "--equals", "00000000000000000000000000000000"], "missing target PATH"],
  ],
  influxdb: [
    [["influxdb", "localhost:8086"], 'expected an http:// or https:// URL, got "localhost:8086"'],
    [["influxdb", "udp://h:8089"], 'expected an http:// or https:// URL, got "udp://h:8089"'],
    [
      ["influxdb", "http://h:8086/?db=metrics"],
      'expected the server\'s URL without a query or fragment (like http://localhost:8086), got "http://h:8086/?db=metrics"',
    ],
    [
      ["influxdb", "http://app:influx-pw-3@h:8086/#x"],
      'expected the server\'s URL without a query or fragment (like http://localhost:8086), got "http://app:***@h:8086/#x"',
    ],
    [["influxdb", "https://h:8086", "--client-cert", "c.pem"], "--client-cert: needs --client-key"],
    [
      ["influxdb", "https://h:8086", "--ca-file", "ca.pem", "--insecure"],
      "--insecure: cannot be combined with --ca-file",
    ],
    [["influxdb", "http://h:8086", "--status", "204"], "unknown flag --status"],
  ],
  nats: [
    [
      ["nats", "http://h:4222"],
      'expected nats://[user:password@|token@]host[:port][,nats://host[:port]...] or tls://..., got "http://h:4222"',
    ],
    [
      ["nats", "nats://a:4222,"],
      'expected nats://[user:password@|token@]host[:port][,nats://host[:port]...] or tls://..., got ""',
    ],
    [
      ["nats", "ws://h:8080"],
      'ws:// servers are not supported (NATS over TCP only), got "ws://h:8080"',
    ],
    [
      ["nats", "nats://u:p@a,nats://v:q@b"],
      "the servers' user-info differ: write the same on each, or on one",
    ],
    [["nats", "nats://"], 'the host is missing in "nats://"'],
    [["nats", "nats://h:0"], 'port must be from 1 to 65535, got "0"'],
    [["nats", "nats://h:x"], 'expected HOST[:PORT] or [IPv6]:PORT, got "h:x"'],
    [["nats", "nats://h/subject"], 'a NATS URL has no path, got "/subject"'],
    [
      ["nats", "nats://h?token=x"],
      'unknown URL parameter "token" (a NATS URL takes none: credentials go in its user-info or the flags)',
    ],
    [
      ["nats", "nats://:pw@h"],
      "the URL has a password but no user (a token is written token@host)",
    ],
    [
      ["nats", "nats://h", "--password-env", "PW"],
      "--password-env: needs a user in the URL (nats://USER@host)",
      { "PW": "x" },
    ],
    [
      ["nats", "nats://u:p@h", "--password-env", "PW"],
      "--password-env: cannot be combined with a password in the URL",
      { "PW": "x" },
    ],
    [
      ["nats", "nats://h", "--token-env", "NOPE"],
      "--token-env: environment variable NOPE is not set",
    ],
    [
      ["nats", "nats://h", "--token-env", "1X"],
      '--token-env: expected an environment variable name, got "1X"',
    ],
    [["nats", "nats://h", "--token-env", "E"], "--token-env: the variable is empty", { "E": "" }],
    [
      ["nats", "nats://u:p@h", "--token-env", "T"],
      "--token-env: cannot be combined with user-info in the URL",
      { "T": "tok" },
    ],
    [
      ["nats", "nats://u:p@h", "--creds-file", "a.creds"],
      "--creds-file: cannot be combined with user-info in the URL",
    ],
    [
      ["nats", "nats://h", "--token-env", "T", "--creds-file", "a.creds"],
      "--creds-file: cannot be combined with --token-env",
      { "T": "tok" },
    ],
    [
      ["nats", "nats://h", "--creds-file", ""],
      "--creds-file: expected a path, got an empty string",
    ],
    [["nats", "nats://h", "--ca-file", "ca.pem"], "--ca-file: needs a tls:// URL or --tls"],
    [["nats", "nats://h", "--insecure"], "--insecure: needs a tls:// URL or --tls"],
    [
      ["nats", "tls://h", "--insecure", "--ca-file", "c"],
      "--insecure: cannot be combined with --ca-file",
    ],
    [["nats", "nats://h", "--stream", ""], "--stream: expected a stream name, got an empty string"],
    [
      ["nats", "nats://h", "--stream", "orders.eu"],
      "--stream: a stream name cannot contain '.', '*', '>', '/', '\\' or white space, got \"orders.eu\"",
    ],
    [
      ["nats", "nats://h", "--stream", "a b"],
      "--stream: a stream name cannot contain '.', '*', '>', '/', '\\' or white space, got \"a b\"",
    ],
    [
      ["nats", "nats://h", "--stream", "a>"],
      "--stream: a stream name cannot contain '.', '*', '>', '/', '\\' or white space, got \"a>\"",
    ],
    [["nats", "nats://h", "--jetstream=yes"], '--jetstream: expected true or false, got "yes"'],
  ],
  rabbitmq: [
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
  mongodb: [
    [
      ["mongodb", "postgres://h"],
      'expected mongodb://[user[:password]@]host[:port][,host[:port]...][/db][?options] or mongodb+srv://..., got "postgres://h"',
    ],
    [["mongodb", "mongodb://"], 'the host is missing in "mongodb://"'],
    [["mongodb", "mongodb://a,,b"], 'the host is missing in "mongodb://a,,b"'],
    [
      ["mongodb", "mongodb+srv://a,b"],
      'mongodb+srv:// takes one host name without a port, got "mongodb+srv://a,b"',
    ],
    [
      ["mongodb", "mongodb+srv://c.example.net:27017"],
      'mongodb+srv:// takes one host name without a port, got "mongodb+srv://c.example.net:27017"',
    ],
    [["mongodb", "mongodb://:pw@h"], "the URI has a password but no user"],
    [
      ["mongodb", "mongodb://h", "--password-env", "PW"],
      "--password-env: needs a user in the URI (mongodb://USER@host/)",
      { "PW": "x" },
    ],
    [
      ["mongodb", "mongodb://u:p@h", "--password-file", "f"],
      "--password-file: cannot be combined with a password in the URI",
    ],
    [
      ["mongodb", "mongodb://h", "--ca-file", "ca.pem"],
      "--ca-file: needs --tls, tls=true in the URI or mongodb+srv://",
    ],
    [["mongodb", "mongodb://h/?tls=false", "--tls"], "--tls: cannot be combined with tls=false"],
    [
      ["mongodb", "mongodb://h", "--replica-set", ""],
      "--replica-set: expected a replica set name, got an empty string",
    ],
  ],
  kafka: [
    [
      ["kafka", "kafka://k:9092"],
      'expected HOST:PORT[,HOST:PORT...] (no scheme), got "kafka://k:9092"',
    ],
    [["kafka", "k1,,k2"], 'expected HOST:PORT[,HOST:PORT...], got "k1,,k2"'],
    [["kafka", "k:0"], 'port must be from 1 to 65535, got "0"'],
    [
      ["kafka", "k", "--sasl-mechanism", "gssapi"],
      '--sasl-mechanism: expected one of plain, scram-sha-256, scram-sha-512, got "gssapi"',
    ],
    [
      ["kafka", "k", "--sasl-mechanism", "plain", "--password-env", "PW"],
      "--sasl-mechanism: needs --user",
      { "PW": "x" },
    ],
    [
      ["kafka", "k", "--sasl-mechanism", "plain", "--user", "u"],
      "--sasl-mechanism: needs --password-env or --password-file",
    ],
    [["kafka", "k", "--user", "u"], "--user: needs --sasl-mechanism"],
    [["kafka", "k", "--password-env", "PW"], "--password-env: needs --sasl-mechanism and --user", {
      "PW": "x",
    }],
    [["kafka", "k", "--partitions", "3"], "--partitions: needs --topic"],
    [
      ["kafka", "k", "--topic", "a b"],
      "--topic: expected a topic name (letters, digits, '.', '_', '-'; at most 249), got \"a b\"",
    ],
    [
      ["kafka", "k", "--min-brokers", "0"],
      '--min-brokers: expected a whole number of at least 1, got "0"',
    ],
    [["kafka", "k", "--ca-file", "ca.pem"], "--ca-file: needs --tls"],
    [
      ["kafka", "kafka://h:9092"],
      'expected HOST:PORT[,HOST:PORT...] (no scheme), got "kafka://h:9092"',
    ],
    [
      ["kafka", "h", "--sasl-mechanism", "gssapi"],
      '--sasl-mechanism: expected one of plain, scram-sha-256, scram-sha-512, got "gssapi"',
    ],
    [
      ["kafka", "h", "--sasl-mechanism", "plain", "--password-env", "KPW"],
      "--sasl-mechanism: needs --user",
      { "KPW": "S3cr3t-kafka" },
    ],
    [["kafka", "h", "--partitions", "2"], "--partitions: needs --topic"],
  ],
  tls: [
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
  dns: [
    [["dns", "bad name"], 'expected a DNS name, got "bad name"'],
    [
      ["dns", "10.0.0.1"],
      'expected a DNS name, got the IP address "10.0.0.1" (use --type PTR for reverse lookups)',
    ],
    [
      ["dns", "a.test", "--type", "CNAM"],
      '--type: expected one of A, AAAA, CNAME, MX, NS, TXT, SRV, CAA, PTR, SOA, HTTPS, SVCB, ANY, got "CNAM" (did you mean CNAME?)',
    ],
    [
      ["dns", "a.test", "--server", "x_y!"],
      '--server: expected HOST[:PORT], IP[:PORT] or [IPv6]:PORT, got "x_y!"',
    ],
    [
      ["dns", "a.test", "--resolver", "system", "--server", "1.1.1.1"],
      "--server: needs --resolver wire (the system resolver uses the OS configuration)",
    ],
    [
      ["dns", "a.test", "--resolver", "system", "--rcode", "NXDOMAIN"],
      "--rcode: needs --resolver wire (the system resolver does not report rcodes)",
    ],
    [
      ["dns", "a.test", "--absent", "--equals", "1.1.1.1"],
      "--absent: cannot be combined with --equals",
    ],
    [
      ["dns", "a.test", "--rcode", "NXDOMAIN", "--min-count", "2"],
      "--rcode: NXDOMAIN has no records to check; cannot be combined with --min-count",
    ],
    [
      ["dns", "a.test", "--equals", "not-an-ip"],
      '--equals: expected an IPv4 address for --type A, got "not-an-ip"',
    ],
    [
      ["dns", "a.test", "--min-count", "0"],
      '--min-count: expected a whole number of at least 1, got "0"',
    ],
    [["dns", "bad_name!"], 'expected a DNS name, got "bad_name!"'],
    [
      ["dns", "127.0.0.1"],
      'expected a DNS name, got the IP address "127.0.0.1" (use --type PTR for reverse lookups)',
    ],
    [
      ["dns", "a.test", "--type", "AXFR"],
      '--type: expected one of A, AAAA, CNAME, MX, NS, TXT, SRV, CAA, PTR, SOA, HTTPS, SVCB, ANY, got "AXFR"',
    ],
    [
      ["dns", "a.test", "--type", "HTTPS", "--resolver", "system"],
      "--type: HTTPS needs --resolver wire (the system resolver cannot ask for it)",
    ],
    [
      ["dns", "a.test", "--type", "ANY", "--resolver", "system"],
      "--type: ANY needs --resolver wire (the system resolver cannot ask for it)",
    ],
    [
      ["dns", "a.test", "--transport", "tcp", "--resolver", "system"],
      "--transport: needs --resolver wire (the system resolver chooses its own)",
    ],
    [
      ["dns", "a.test", "--transport", "quic"],
      '--transport: expected one of udp, tcp, got "quic"',
    ],
    [
      ["dns", "a.test", "--server", "[dns.test]:53"],
      '--server: expected HOST[:PORT], IP[:PORT] or [IPv6]:PORT, got "[dns.test]:53"',
    ],
    [
      ["dns", "a.test", "--server", "ns.test:dns"],
      '--server: expected HOST[:PORT], IP[:PORT] or [IPv6]:PORT, got "ns.test:dns"',
    ],
    [
      ["dns", "a.test", "--type", "TXT", "--contains", "a", "--contains", ""],
      "--contains: expected a text, got an empty string",
    ],
    [
      ["dns", "a.test", "--min-count", "zero"],
      '--min-count: expected a whole number of at least 1, got "zero"',
    ],
    [["dns", "a.test", "--resolver", "dig"], '--resolver: expected one of system, wire, got "dig"'],
    [
      ["dns", "a.test", "--server", "127.0.0.1:99999"],
      '--server: port must be from 1 to 65535, got "127.0.0.1:99999"',
    ],
    [
      ["dns", "a.test", "--server", "[127.0.0.1]:53"],
      '--server: expected HOST[:PORT], IP[:PORT] or [IPv6]:PORT, got "[127.0.0.1]:53"',
    ],
    [
      ["dns", "a.test", "--rcode", "GONE"],
      '--rcode: expected one of NOERROR, NXDOMAIN, SERVFAIL, REFUSED, FORMERR, NOTIMP, got "GONE"',
    ],
    [
      ["dns", "a.test", "--resolver", "system", "--server", "127.0.0.1"],
      "--server: needs --resolver wire (the system resolver uses the OS configuration)",
    ],
    [
      ["dns", "a.test", "--absent", "--min-count", "2"],
      "--absent: cannot be combined with --min-count",
    ],
    [
      ["dns", "a.test", "--rcode", "SERVFAIL", "--equals", "1.2.3.4"],
      "--rcode: SERVFAIL has no records to check; cannot be combined with --equals",
    ],
    [
      ["dns", "a.test", "--type", "AAAA", "--equals", "10.0.0.1.5"],
      '--equals: expected an IPv6 address for --type AAAA, got "10.0.0.1.5"',
    ],
    [["dns", "a.test", "--contains", ""], "--contains: expected a text, got an empty string"],
  ],
  pidfile: [
    [["pidfile", "a", "--running", "--stopped"], "--stopped: cannot be combined with --running"],
    [
      ["pidfile", "a", "--name", "/usr/bin/x"],
      '--name: expected an executable name without a directory, got "/usr/bin/x"',
    ],
  ],
  ports: [
    [["ports", "h", "--range", "0-2"], '--range: ports must be from 1 to 65535, got "0-2"'],
    [["ports", "a/b", "--range", "1"], 'expected a host, got "a/b"'],
  ],
  ssh: [
    [["ssh", "h:99999"], 'port must be from 1 to 65535, got "99999"'],
    [
      ["ssh", "h", "--host-key-sha256", "abc"],
      '--host-key-sha256: expected SHA256: and 43 base64 characters, as ssh-keygen -lf prints it, got "abc"',
    ],
    [["ssh", "h", "--user", "u"], "--user: needs --password, --password-env or --password-file"],
    [["ssh", "h", "--password", "p"], "--password: needs --user"],
    [
      ["ssh", "h", "--user", "u", "--password", "p", "--password-file", "f"],
      "--password-file: cannot be combined with --password",
    ],
    [
      ["ssh", "h", "--user", "u", "--password-env", "NOPE_UNSET"],
      "--password-env: environment variable NOPE_UNSET is not set",
    ],
    [
      ["ssh", "h", "--user", "u", "--password-env", "1X"],
      '--password-env: expected an environment variable name, got "1X"',
    ],
    [
      ["ssh", "h", "--banner-contains", ""],
      "--banner-contains: expected a text, got an empty string",
    ],
    [
      ["ssh", "h", "--user", "", "--password", "p"],
      "--user: expected a user name, got an empty string",
    ],
  ],
} satisfies Record<string, readonly UsageRow[]>;

/**
 * One step a row of `kind`: the usage-error line of the row's words (with its environment) must be
 * exactly `waitcmd: condition 1 (NAME): TEXT (see: waitcmd help KIND)`.
 */
export async function stepUsageErrors(
  t: Deno.TestContext,
  kind: keyof typeof USAGE_ROWS,
): Promise<void> {
  for (const [args, text, env] of USAGE_ROWS[kind]) {
    const name = [...Object.entries(env ?? {}).map(([k, v]) => `${k}=${v}`), ...args].join(" ");
    const want = `waitcmd: condition 1 (${args[0]}): ${text} (see: waitcmd help ${kind})`;
    await t.step(name, async () => assertEquals(await usageError(args, env), want));
  }
}
