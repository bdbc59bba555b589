#!/usr/bin/env bash
# Builds a real kube-apiserver and etcd for waitcmd's Kubernetes tests from the
# Go module proxy (no container registry or release download is reachable on
# these machines), via the wrapper module in tests/services/k8s.
#
# Output: $CACHE/k8s-<k8s version>-etcd-<etcd version>/bin/{kube-apiserver,etcd}
# where CACHE is ${WAITCMD_CACHE:-$HOME/.cache/waitcmd}. GOMODCACHE and GOCACHE
# live under $CACHE/go too, so a rebuild after a version bump is incremental.
# When both binaries exist the script does nothing. The bin directory is the
# last line printed on stdout; progress and errors go to stderr.
#
# Knobs: WAITCMD_GO_P (go build -p, default 1: the compiler backend still uses
# both cores, and the machine stays usable), WAITCMD_K8S_REBUILD=1 (force).
set -euo pipefail

# Keep in step with tests/services/k8s/go.mod (Kubernetes pins this etcd).
K8S_VERSION="v1.33.13"
ETCD_VERSION="v3.5.21"

die() {
  echo "build-k8s.sh: error: $*" >&2
  exit 1
}
log() { echo "build-k8s.sh: $*" >&2; }

here=$(CDPATH='' cd -- "$(dirname -- "$0")" && pwd)
root=$(dirname -- "$(dirname -- "$here")")
wrapper="$root/tests/services/k8s"
[ -f "$wrapper/go.mod" ] || die "wrapper module not found at $wrapper"

cache="${WAITCMD_CACHE:-${HOME:-/tmp}/.cache/waitcmd}"
out="$cache/k8s-$K8S_VERSION-etcd-$ETCD_VERSION"
bin="$out/bin"

# Versions are read into a variable before grep: `cmd | grep -q` under pipefail fails at random
# when grep exits at the first match and cmd dies of SIGPIPE writing its next line.
reports() { # reports BINARY PATTERN: BINARY --version prints a line matching PATTERN
  local v
  v=$("$1" --version 2>/dev/null) || return 1
  grep -q -- "$2" <<<"$v"
}

have_bins() {
  [ -x "$bin/kube-apiserver" ] && [ -x "$bin/etcd" ] &&
    reports "$bin/kube-apiserver" "^Kubernetes $K8S_VERSION\$" &&
    reports "$bin/etcd" "etcd Version: ${ETCD_VERSION#v}"
}

if [ "${WAITCMD_K8S_REBUILD:-}" != "1" ] && have_bins; then
  echo "$bin"
  exit 0
fi

# The machines install Go under /usr/local/go; accept it even when not on PATH.
if ! command -v go >/dev/null 2>&1 && [ -x /usr/local/go/bin/go ]; then
  PATH="/usr/local/go/bin:$PATH"
fi
command -v go >/dev/null 2>&1 || die "the go toolchain is not on PATH (needed to build kube-apiserver $K8S_VERSION and etcd $ETCD_VERSION)"

mkdir -p "$out" "$cache/go/mod" "$cache/go/build"
# One build at a time per cache (parallel test processes may all ask for it).
exec 9>"$out/.lock"
if command -v flock >/dev/null 2>&1; then
  flock 9 || die "could not lock $out/.lock"
fi
if [ "${WAITCMD_K8S_REBUILD:-}" != "1" ] && have_bins; then
  echo "$bin"
  exit 0
fi

export GOMODCACHE="$cache/go/mod"
export GOCACHE="$cache/go/build"
export GOFLAGS="-buildvcs=false -mod=readonly -p=${WAITCMD_GO_P:-1}"
export GOTOOLCHAIN=local
export CGO_ENABLED=0
export GOPROXY="${GOPROXY:-https://proxy.golang.org,direct}"

log "$(go version); building into $bin (cold build measured at about 6 min on 2 cores, modules included; longer on a busy machine)"
tmp="$out/tmp.$$"
rm -rf "$tmp"
mkdir -p "$tmp"
trap 'rm -rf "$tmp"' EXIT

ldflags="-s -w -X k8s.io/component-base/version.gitVersion=$K8S_VERSION"
minor=${K8S_VERSION#v1.}
minor=${minor%%.*}
ldflags="$ldflags -X k8s.io/component-base/version.gitMajor=1"
ldflags="$ldflags -X k8s.io/component-base/version.gitMinor=$minor"
ldflags="$ldflags -X k8s.io/component-base/version.gitTreeState=clean"

cd "$wrapper"
start=$(date +%s)
log "building etcd $ETCD_VERSION"
nice -n 10 go build -trimpath -ldflags "-s -w" -o "$tmp/etcd" go.etcd.io/etcd/server/v3 >&2 ||
  die "go build of etcd $ETCD_VERSION failed (see above)"
log "etcd built in $(($(date +%s) - start)) s; building kube-apiserver $K8S_VERSION"
start2=$(date +%s)
nice -n 10 go build -trimpath -ldflags "$ldflags" -o "$tmp/kube-apiserver" \
  k8s.io/kubernetes/cmd/kube-apiserver >&2 ||
  die "go build of kube-apiserver $K8S_VERSION failed (see above)"
log "kube-apiserver built in $(($(date +%s) - start2)) s"

reports "$tmp/kube-apiserver" "^Kubernetes $K8S_VERSION\$" ||
  die "built kube-apiserver does not report $K8S_VERSION: $("$tmp/kube-apiserver" --version 2>&1)"
reports "$tmp/etcd" "etcd Version: ${ETCD_VERSION#v}" ||
  die "built etcd does not report $ETCD_VERSION: $("$tmp/etcd" --version 2>&1)"

mkdir -p "$bin"
mv -f "$tmp/etcd" "$bin/etcd"
mv -f "$tmp/kube-apiserver" "$bin/kube-apiserver"
log "done in $(($(date +%s) - start)) s"
echo "$bin"
