#!/usr/bin/env bash
# Builds the MongoDB protocol stand-in for waitcmd's mongodb tests:
# mongo-java-server with its in-memory backend (Maven Central, through the
# pom.xml in tests/services/mongo/) and MongoStandIn.java, compiled with
# javac. No real MongoDB server can be installed on the test machines; the
# stand-in speaks the wire protocol (reporting MongoDB 7.0.0, wire version
# 21) without authentication or replica sets.
#
# Output: $CACHE/mongo-standin-<version>-<source hash>/ with lib/*.jar and
# classes/, CACHE being ${WAITCMD_CACHE:-$HOME/.cache/waitcmd}; Maven's local
# repository lives in $CACHE/m2. When the build exists the script does
# nothing. The directory is the last line printed on stdout (run it as
# `java -cp 'DIR/lib/*:DIR/classes' MongoStandIn HOST PORT`); progress and
# errors go to stderr.
#
# Needs: mvn, javac (scripts/install-test-deps.sh). Knob: WAITCMD_MONGO_REBUILD=1.
set -euo pipefail

MONGO_JAVA_SERVER_VERSION="1.47.0"

die() {
  echo "build-mongo.sh: error: $*" >&2
  exit 1
}
log() { echo "build-mongo.sh: $*" >&2; }

here=$(CDPATH= cd -- "$(dirname -- "$0")" && pwd)
src="$here/../../tests/services/mongo"
[ -f "$src/pom.xml" ] && [ -f "$src/MongoStandIn.java" ] || die "missing $src/pom.xml or MongoStandIn.java"
hash=$(cat "$src/pom.xml" "$src/MongoStandIn.java" | sha256sum | cut -c1-12)
cache="${WAITCMD_CACHE:-${HOME:-/tmp}/.cache/waitcmd}"
out="$cache/mongo-standin-$MONGO_JAVA_SERVER_VERSION-$hash"

done_marker() { [ -f "$out/.complete" ] && [ -f "$out/classes/MongoStandIn.class" ]; }

if [ "${WAITCMD_MONGO_REBUILD:-}" != "1" ] && done_marker; then
  echo "$out"
  exit 0
fi

command -v mvn >/dev/null 2>&1 || die "mvn is not on PATH (run scripts/install-test-deps.sh)"
command -v javac >/dev/null 2>&1 || die "javac is not on PATH (run scripts/install-test-deps.sh)"

mkdir -p "$out" "$cache/m2"
exec 9>"$out/.lock"
if command -v flock >/dev/null 2>&1; then
  flock 9 || die "could not lock $out/.lock"
fi
if [ "${WAITCMD_MONGO_REBUILD:-}" != "1" ] && done_marker; then
  echo "$out"
  exit 0
fi

tmp="$out/tmp.$$"
rm -rf "$tmp"
mkdir -p "$tmp"
trap 'rm -rf "$tmp"' EXIT

log "fetching de.bwaldvogel:mongo-java-server-memory-backend:$MONGO_JAVA_SERVER_VERSION from Maven Central"
start=$(date +%s)
mvn -B -q -Dstyle.color=never -f "$src/pom.xml" -Dmaven.repo.local="$cache/m2" \
  -Dmongo-java-server.version="$MONGO_JAVA_SERVER_VERSION" \
  dependency:copy-dependencies -DincludeScope=runtime -DoutputDirectory="$tmp/lib" >&2 ||
  die "mvn dependency:copy-dependencies failed (see above)"
mkdir -p "$tmp/classes"
javac -nowarn -d "$tmp/classes" -cp "$tmp/lib/*" "$src/MongoStandIn.java" >&2 ||
  die "javac MongoStandIn.java failed (see above)"
rm -rf "$out/lib" "$out/classes"
mv "$tmp/lib" "$out/lib"
mv "$tmp/classes" "$out/classes"
touch "$out/.complete"
log "built in $(($(date +%s) - start)) s"
echo "$out"
