#!/usr/bin/env bash
# Builds KWOK (sigs.k8s.io/kwok, "Kubernetes WithOut Kubelet") for waitcmd's
# Kubernetes tests from the Go module proxy: it plays the part of the kubelets
# of fake nodes, moving pods through their lifecycle by "stages" (see
# tests/services/kube.ts). KWOK's go.mod has no replace directives, so a plain
# `go install sigs.k8s.io/kwok/cmd/kwok@VERSION` works; it needs its own module
# graph (it pins newer k8s.io libraries than the control plane in
# tests/services/k8s), which go install keeps apart.
#
# Output: $CACHE/kwok-<version>/bin/kwok where CACHE is
# ${WAITCMD_CACHE:-$HOME/.cache/waitcmd}. GOMODCACHE and GOCACHE are shared
# with build-k8s.sh under $CACHE/go. When the binary exists and reports the
# version the script does nothing. The bin directory is the last line printed
# on stdout; progress and errors go to stderr.
#
# Knobs: WAITCMD_GO_P (go build -p, default 1), WAITCMD_KWOK_REBUILD=1 (force).
set -euo pipefail

KWOK_VERSION="v0.8.0"

die() {
  echo "build-kwok.sh: error: $*" >&2
  exit 1
}
log() { echo "build-kwok.sh: $*" >&2; }

cache="${WAITCMD_CACHE:-${HOME:-/tmp}/.cache/waitcmd}"
out="$cache/kwok-$KWOK_VERSION"
bin="$out/bin"

# `kwok --version` prints e.g. "kwok version v0.8.0 go1.26.8 (linux/amd64)".
have_bin() {
  local v
  [ -x "$bin/kwok" ] || return 1
  v=$("$bin/kwok" --version 2>/dev/null) || return 1
  grep -q -- "version v\?${KWOK_VERSION#v}\b" <<<"$v"
}

if [ "${WAITCMD_KWOK_REBUILD:-}" != "1" ] && have_bin; then
  echo "$bin"
  exit 0
fi

if ! command -v go >/dev/null 2>&1 && [ -x /usr/local/go/bin/go ]; then
  PATH="/usr/local/go/bin:$PATH"
fi
command -v go >/dev/null 2>&1 || die "the go toolchain is not on PATH (needed to build kwok $KWOK_VERSION)"

mkdir -p "$out" "$cache/go/mod" "$cache/go/build"
exec 9>"$out/.lock"
if command -v flock >/dev/null 2>&1; then
  flock 9 || die "could not lock $out/.lock"
fi
if [ "${WAITCMD_KWOK_REBUILD:-}" != "1" ] && have_bin; then
  echo "$bin"
  exit 0
fi

export GOMODCACHE="$cache/go/mod"
export GOCACHE="$cache/go/build"
export GOFLAGS="-buildvcs=false -p=${WAITCMD_GO_P:-1}"
export GOTOOLCHAIN=local
export CGO_ENABLED=0
export GOPROXY="${GOPROXY:-https://proxy.golang.org,direct}"

log "$(go version); building kwok $KWOK_VERSION into $bin (cold build measured at about 7 min on 2 cores, modules included)"
tmp="$out/tmp.$$"
rm -rf "$tmp"
mkdir -p "$tmp"
trap 'rm -rf "$tmp"' EXIT

start=$(date +%s)
# Outside any module, so that go install uses kwok's own go.mod alone.
(cd "$tmp" && GOBIN="$tmp" nice -n 10 go install -trimpath -ldflags "-s -w" \
  "sigs.k8s.io/kwok/cmd/kwok@$KWOK_VERSION") >&2 ||
  die "go install of kwok $KWOK_VERSION failed (see above; it needs the Go version its go.mod names)"
v=$("$tmp/kwok" --version 2>&1) || die "built kwok does not run: $v"
grep -q -- "${KWOK_VERSION#v}" <<<"$v" || die "built kwok does not report $KWOK_VERSION: $v"

mkdir -p "$bin"
mv -f "$tmp/kwok" "$bin/kwok"
have_bin || die "kwok in $bin does not report $KWOK_VERSION: $v"
log "done in $(($(date +%s) - start)) s"
echo "$bin"
