#!/usr/bin/env bash
# Builds the gRPC health server of waitcmd's grpc tests (tests/services/grpc:
# the reference google.golang.org/grpc/health service over h2c and TLS, with
# an HTTP control endpoint that flips statuses), from the Go module proxy.
#
# Output: $CACHE/grpchealth-<grpc version>-<source hash>/bin/grpchealth, CACHE
# being ${WAITCMD_CACHE:-$HOME/.cache/waitcmd}; GOMODCACHE and GOCACHE live
# under $CACHE/go. When the binary exists the script does nothing. The
# binary's path is the last line printed on stdout; progress and errors go to
# stderr.
#
# Knobs: WAITCMD_GO_P (go build -p, default 1), WAITCMD_GRPC_REBUILD=1.
set -euo pipefail

GRPC_VERSION="v1.85.0"

die() {
  echo "build-grpc.sh: error: $*" >&2
  exit 1
}
log() { echo "build-grpc.sh: $*" >&2; }

src="$(cd "$(dirname "$0")/../../tests/services/grpc" && pwd)"
grep -q "google.golang.org/grpc $GRPC_VERSION" "$src/go.mod" ||
  die "$src/go.mod does not require google.golang.org/grpc $GRPC_VERSION"
hash=$(cat "$src/go.mod" "$src/go.sum" "$src"/*.go | sha256sum | cut -c1-12)

cache="${WAITCMD_CACHE:-${HOME:-/tmp}/.cache/waitcmd}"
out="$cache/grpchealth-$GRPC_VERSION-$hash"
bin="$out/bin/grpchealth"

if [ "${WAITCMD_GRPC_REBUILD:-}" != "1" ] && [ -x "$bin" ]; then
  echo "$bin"
  exit 0
fi

# The machines install Go under /usr/local/go; accept it even when not on PATH.
if ! command -v go >/dev/null 2>&1 && [ -x /usr/local/go/bin/go ]; then
  PATH="/usr/local/go/bin:$PATH"
fi
command -v go >/dev/null 2>&1 || die "the go toolchain is not on PATH (needed to build the gRPC health server)"

mkdir -p "$out" "$cache/go/mod" "$cache/go/build"
exec 9>"$out/.lock"
if command -v flock >/dev/null 2>&1; then
  flock 9 || die "could not lock $out/.lock"
fi
if [ "${WAITCMD_GRPC_REBUILD:-}" != "1" ] && [ -x "$bin" ]; then
  echo "$bin"
  exit 0
fi

export GOMODCACHE="$cache/go/mod"
export GOCACHE="$cache/go/build"
export GOFLAGS="-buildvcs=false -mod=readonly -p=${WAITCMD_GO_P:-1}"
export GOTOOLCHAIN=local
export CGO_ENABLED=0
export GOPROXY="${GOPROXY:-https://proxy.golang.org,direct}"

# Build into a temporary file, then move into place, so an interrupted build
# never leaves a half-written binary that later runs would trust.
tmp="$out/grpchealth.tmp.$$"
trap 'rm -f "$tmp"' EXIT

log "$(go version); building grpchealth with google.golang.org/grpc $GRPC_VERSION"
start=$(date +%s)
(cd "$src" && nice -n 10 go build -trimpath -ldflags "-s -w" -o "$tmp" . >&2) ||
  die "go build of the gRPC health server failed (see above)"
mkdir -p "$out/bin"
mv -f "$tmp" "$bin"
log "built in $(($(date +%s) - start)) s"
echo "$bin"
