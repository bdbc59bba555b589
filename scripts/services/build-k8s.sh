#!/usr/bin/env bash
# Builds a real Kubernetes control plane for waitcmd's Kubernetes tests from
# the Go module proxy (no container registry or release download is reachable
# on these machines), via the wrapper module in tests/services/k8s.
#
# Usage: build-k8s.sh [--cluster]
#   without arguments: etcd and kube-apiserver (enough for an API server whose
#   objects the tests drive by hand);
#   --cluster: also kube-controller-manager and kube-scheduler, all from the
#   same k8s.io/kubernetes module version (KWOK, the fake kubelet, comes from
#   build-kwok.sh).
#
# Output: $CACHE/k8s-<k8s version>-etcd-<etcd version>/bin/{etcd,kube-apiserver,
# kube-controller-manager,kube-scheduler} where CACHE is
# ${WAITCMD_CACHE:-$HOME/.cache/waitcmd}. GOMODCACHE and GOCACHE live under
# $CACHE/go too, so a rebuild after a version bump is incremental, and the
# binaries share most of their compiled packages. Each binary is built only
# when missing (or reporting another version); when all the requested ones
# exist the script does nothing. The bin directory is the last line printed
# on stdout; progress and errors go to stderr.
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

components=(etcd kube-apiserver)
case "${1:-}" in
"") ;;
--cluster) components+=(kube-controller-manager kube-scheduler) ;;
*) die "unknown argument $1 (usage: build-k8s.sh [--cluster])" ;;
esac

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

# have DIR NAME: DIR/NAME exists and reports the pinned version.
have() {
  [ -x "$1/$2" ] || return 1
  case "$2" in
  etcd) reports "$1/etcd" "etcd Version: ${ETCD_VERSION#v}" ;;
  *) reports "$1/$2" "^Kubernetes $K8S_VERSION\$" ;;
  esac
}

have_bins() {
  local c
  for c in "${components[@]}"; do have "$bin" "$c" || return 1; done
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

missing=()
for c in "${components[@]}"; do
  if [ "${WAITCMD_K8S_REBUILD:-}" = "1" ] || ! have "$bin" "$c"; then missing+=("$c"); fi
done
log "$(go version); building ${missing[*]} into $bin (cold build measured at about 6 min on 2 cores for etcd and kube-apiserver, modules included, and about 3.5 min more for kube-controller-manager and kube-scheduler, which share most packages; longer on a busy machine)"
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
mkdir -p "$bin"
for c in "${missing[@]}"; do
  t=$(date +%s)
  case "$c" in
  etcd)
    log "building etcd $ETCD_VERSION"
    nice -n 10 go build -trimpath -ldflags "-s -w" -o "$tmp/etcd" go.etcd.io/etcd/server/v3 >&2 ||
      die "go build of etcd $ETCD_VERSION failed (see above)"
    ;;
  *)
    log "building $c $K8S_VERSION"
    nice -n 10 go build -trimpath -ldflags "$ldflags" -o "$tmp/$c" "k8s.io/kubernetes/cmd/$c" >&2 ||
      die "go build of $c $K8S_VERSION failed (see above)"
    ;;
  esac
  have "$tmp" "$c" || die "built $c does not report its pinned version: $("$tmp/$c" --version 2>&1)"
  # Moved in one by one: an interrupted build keeps what it finished.
  mv -f "$tmp/$c" "$bin/$c"
  log "$c built in $(($(date +%s) - t)) s"
done
log "done in $(($(date +%s) - start)) s"
echo "$bin"
