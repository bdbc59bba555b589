#!/usr/bin/env bash
# Builds versitygw (a real S3 gateway that verifies SigV4 and keeps custom
# metadata) for waitcmd's object-store tests, from the Go module proxy.
#
# Output: $CACHE/versitygw-<tag>/bin/versitygw, CACHE being
# ${WAITCMD_CACHE:-$HOME/.cache/waitcmd}; GOMODCACHE and GOCACHE live under
# $CACHE/go. When the binary exists the script does nothing. The binary's path
# is the last line printed on stdout; progress and errors go to stderr.
#
# Knobs: WAITCMD_GO_P (go build -p, default 1), WAITCMD_VERSITYGW_REBUILD=1.
set -euo pipefail

VERSITYGW_VERSION="v1.8.0"

die() {
  echo "build-versitygw.sh: error: $*" >&2
  exit 1
}
log() { echo "build-versitygw.sh: $*" >&2; }

cache="${WAITCMD_CACHE:-${HOME:-/tmp}/.cache/waitcmd}"
out="$cache/versitygw-$VERSITYGW_VERSION"
bin="$out/bin/versitygw"

if [ "${WAITCMD_VERSITYGW_REBUILD:-}" != "1" ] && [ -x "$bin" ]; then
  echo "$bin"
  exit 0
fi

# The machines install Go under /usr/local/go; accept it even when not on PATH.
if ! command -v go >/dev/null 2>&1 && [ -x /usr/local/go/bin/go ]; then
  PATH="/usr/local/go/bin:$PATH"
fi
command -v go >/dev/null 2>&1 || die "the go toolchain is not on PATH (needed to build versitygw $VERSITYGW_VERSION)"

mkdir -p "$out" "$cache/go/mod" "$cache/go/build"
exec 9>"$out/.lock"
if command -v flock >/dev/null 2>&1; then
  flock 9 || die "could not lock $out/.lock"
fi
if [ "${WAITCMD_VERSITYGW_REBUILD:-}" != "1" ] && [ -x "$bin" ]; then
  echo "$bin"
  exit 0
fi

export GOMODCACHE="$cache/go/mod"
export GOCACHE="$cache/go/build"
export GOFLAGS="-buildvcs=false -p=${WAITCMD_GO_P:-1}"
export GOTOOLCHAIN=local
export CGO_ENABLED=0
export GOPROXY="${GOPROXY:-https://proxy.golang.org,direct}"

# Install into a temporary GOBIN, then move into place, so an interrupted
# build never leaves a half-written binary that later runs would trust.
tmp="$out/tmp.$$"
rm -rf "$tmp"
mkdir -p "$tmp"
trap 'rm -rf "$tmp"' EXIT

log "$(go version); installing github.com/versity/versitygw/cmd/versitygw@$VERSITYGW_VERSION"
start=$(date +%s)
(cd "$tmp" && GOBIN="$tmp" nice -n 10 go install -trimpath -ldflags "-s -w" \
  "github.com/versity/versitygw/cmd/versitygw@$VERSITYGW_VERSION" >&2) ||
  die "go install of versitygw $VERSITYGW_VERSION failed (see above)"
[ -x "$tmp/versitygw" ] || die "go install produced no versitygw binary in $tmp"
mkdir -p "$out/bin"
mv -f "$tmp/versitygw" "$bin"
log "built in $(($(date +%s) - start)) s"
echo "$bin"
