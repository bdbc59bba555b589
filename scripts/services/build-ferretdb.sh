#!/usr/bin/env bash
# Builds FerretDB, a MongoDB-wire-compatible server with SCRAM authentication
# and TLS, for waitcmd's mongodb tests (conditions/mongodb/_service.ts), from the
# Go module proxy. It serves what the protocol stand-in of build-mongo.sh
# cannot: users, wrong passwords, authSource and TLS. Its sqlite handler
# keeps the data in a directory, so no other database is needed.
#
# FerretDB's main package reads build/version/version.txt through go:embed,
# which the module zip leaves empty (a plain `go install` panics at start), so
# the module's source is copied out of the module cache, made writable, given
# the version file and built from there.
#
# Output: $CACHE/ferretdb-<version>/bin/ferretdb, CACHE being
# ${WAITCMD_CACHE:-$HOME/.cache/waitcmd}; GOMODCACHE and GOCACHE live under
# $CACHE/go (shared with the other Go builds). When the binary exists and
# reports the pinned version the script does nothing. The binary's path is the
# last line printed on stdout; progress and errors go to stderr.
#
# Knobs: WAITCMD_GO_P (go build -p, default 1), WAITCMD_FERRETDB_REBUILD=1.
set -euo pipefail

FERRETDB_VERSION="v1.24.2"

die() {
  echo "build-ferretdb.sh: error: $*" >&2
  exit 1
}
log() { echo "build-ferretdb.sh: $*" >&2; }

cache="${WAITCMD_CACHE:-${HOME:-/tmp}/.cache/waitcmd}"
out="$cache/ferretdb-$FERRETDB_VERSION"
bin="$out/bin/ferretdb"

# have FILE: FILE is a ferretdb binary reporting the pinned version. The
# output is read into a variable before grep (a `cmd | grep -q` pipe under
# pipefail fails at random when cmd dies of SIGPIPE).
have() {
  local v
  [ -x "$1" ] || return 1
  v=$("$1" --version 2>/dev/null) || return 1
  grep -q -- "version: $FERRETDB_VERSION" <<<"$v"
}

if [ "${WAITCMD_FERRETDB_REBUILD:-}" != "1" ] && have "$bin"; then
  echo "$bin"
  exit 0
fi

# The machines install Go under /usr/local/go; accept it even when not on PATH.
if ! command -v go >/dev/null 2>&1 && [ -x /usr/local/go/bin/go ]; then
  PATH="/usr/local/go/bin:$PATH"
fi
command -v go >/dev/null 2>&1 || die "the go toolchain is not on PATH (needed to build FerretDB $FERRETDB_VERSION)"

mkdir -p "$out" "$cache/go/mod" "$cache/go/build"
# One build at a time per cache (parallel test processes may all ask for it).
exec 9>"$out/.lock"
if command -v flock >/dev/null 2>&1; then
  flock 9 || die "could not lock $out/.lock"
fi
if [ "${WAITCMD_FERRETDB_REBUILD:-}" != "1" ] && have "$bin"; then
  echo "$bin"
  exit 0
fi

export GOMODCACHE="$cache/go/mod"
export GOCACHE="$cache/go/build"
export GOFLAGS="-buildvcs=false -mod=readonly -p=${WAITCMD_GO_P:-1}"
export GOTOOLCHAIN=local
# FerretDB's sqlite handler uses a pure-Go SQLite (modernc.org/sqlite).
export CGO_ENABLED=0
export GOPROXY="${GOPROXY:-https://proxy.golang.org,direct}"

tmp="$out/tmp.$$"
rm -rf "$tmp"
mkdir -p "$tmp"
trap 'chmod -R u+w "$tmp" 2>/dev/null; rm -rf "$tmp"' EXIT

log "$(go version); building FerretDB $FERRETDB_VERSION (measured at 4.3 min cold on 2 cores busy with other builds, modules downloaded included; about 1 min on an idle machine with the modules cached)"
start=$(date +%s)
dir=$(cd "$tmp" && go mod download -json "github.com/FerretDB/FerretDB@$FERRETDB_VERSION" |
  sed -n 's/^[[:space:]]*"Dir": "\(.*\)",\{0,1\}$/\1/p') ||
  die "go mod download github.com/FerretDB/FerretDB@$FERRETDB_VERSION failed (see above)"
if [ -z "$dir" ] || [ ! -f "$dir/go.mod" ]; then
  die "go mod download did not name the module's directory"
fi
cp -R "$dir" "$tmp/src"
chmod -R u+w "$tmp/src"
printf '%s\n' "$FERRETDB_VERSION" >"$tmp/src/build/version/version.txt"
(cd "$tmp/src" && nice -n 10 go build -trimpath -ldflags "-s -w" -o "$tmp/ferretdb" ./cmd/ferretdb >&2) ||
  die "go build of FerretDB $FERRETDB_VERSION failed (see above)"
have "$tmp/ferretdb" || die "built ferretdb does not report $FERRETDB_VERSION: $("$tmp/ferretdb" --version 2>&1 | head -3)"
mkdir -p "$out/bin"
mv -f "$tmp/ferretdb" "$bin"
log "built in $(($(date +%s) - start)) s"
echo "$bin"
