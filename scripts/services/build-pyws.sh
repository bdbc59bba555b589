#!/usr/bin/env bash
# Installs Python's `websockets` (PyPI) into a cached virtual environment: the
# independent WebSocket server of waitcmd's websocket tests
# (tests/services/pyws/server.py runs under it).
#
# Output: $CACHE/pyws-<websockets version>/bin/python, CACHE being
# ${WAITCMD_CACHE:-$HOME/.cache/waitcmd}. When the environment exists the
# script does nothing. The interpreter's path is the last line printed on
# stdout; progress and errors go to stderr.
#
# Knobs: WAITCMD_PYTHON (default python3), WAITCMD_PYWS_REBUILD=1.
set -euo pipefail

WEBSOCKETS_VERSION="17.4"

die() {
  echo "build-pyws.sh: error: $*" >&2
  exit 1
}
log() { echo "build-pyws.sh: $*" >&2; }

cache="${WAITCMD_CACHE:-${HOME:-/tmp}/.cache/waitcmd}"
out="$cache/pyws-$WEBSOCKETS_VERSION"
py="$out/bin/python"
marker="$out/.installed"

if [ "${WAITCMD_PYWS_REBUILD:-}" != "1" ] && [ -f "$marker" ] && [ -x "$py" ]; then
  echo "$py"
  exit 0
fi

python="${WAITCMD_PYTHON:-python3}"
command -v "$python" >/dev/null 2>&1 || die "$python is not on PATH (needed for the websockets test server)"

mkdir -p "$cache"
exec 9>"$cache/.pyws-$WEBSOCKETS_VERSION.lock"
if command -v flock >/dev/null 2>&1; then
  flock 9 || die "could not lock $cache/.pyws-$WEBSOCKETS_VERSION.lock"
fi
if [ "${WAITCMD_PYWS_REBUILD:-}" != "1" ] && [ -f "$marker" ] && [ -x "$py" ]; then
  echo "$py"
  exit 0
fi

# A fresh environment each time, so a failed install never looks finished.
rm -rf "$out"
log "$("$python" --version 2>&1); installing websockets==$WEBSOCKETS_VERSION into $out"
"$python" -m venv "$out" >&2 || die "$python -m venv failed (Debian: apt-get install python3-venv)"
"$out/bin/python" -m pip install --quiet --disable-pip-version-check --no-input \
  "websockets==$WEBSOCKETS_VERSION" >&2 || die "pip install websockets==$WEBSOCKETS_VERSION failed"
"$py" -c 'import websockets' || die "websockets does not import"
touch "$marker"
echo "$py"
