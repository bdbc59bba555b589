#!/usr/bin/env bash
# Fetches Apache Kafka's jars (a KRaft broker, plus an slf4j binding) from
# Maven Central for waitcmd's kafka tests, through the small pom.xml in
# tests/services/kafka/ (`mvn dependency:copy-dependencies`). No Kafka
# distribution tarball can be downloaded on the test machines.
#
# Output: $CACHE/kafka-<version>/lib/*.jar, CACHE being
# ${WAITCMD_CACHE:-$HOME/.cache/waitcmd}; Maven's local repository lives in
# $CACHE/m2. When the jars exist the script does nothing. The lib directory
# is the last line printed on stdout; progress and errors go to stderr.
#
# Needs: mvn and a Java 17 runtime (scripts/install-test-deps.sh).
# Knob: WAITCMD_KAFKA_REBUILD=1.
set -euo pipefail

KAFKA_VERSION="3.9.1"

die() {
  echo "build-kafka.sh: error: $*" >&2
  exit 1
}
log() { echo "build-kafka.sh: $*" >&2; }

here=$(CDPATH= cd -- "$(dirname -- "$0")" && pwd)
pom="$here/../../tests/services/kafka/pom.xml"
cache="${WAITCMD_CACHE:-${HOME:-/tmp}/.cache/waitcmd}"
out="$cache/kafka-$KAFKA_VERSION"
lib="$out/lib"

done_marker() { [ -f "$out/.complete" ] && [ -f "$lib/kafka_2.13-$KAFKA_VERSION.jar" ]; }

if [ "${WAITCMD_KAFKA_REBUILD:-}" != "1" ] && done_marker; then
  echo "$lib"
  exit 0
fi

command -v mvn >/dev/null 2>&1 || die "mvn is not on PATH (run scripts/install-test-deps.sh)"
command -v java >/dev/null 2>&1 || die "java is not on PATH (run scripts/install-test-deps.sh)"
[ -f "$pom" ] || die "missing $pom"

mkdir -p "$out" "$cache/m2"
exec 9>"$out/.lock"
if command -v flock >/dev/null 2>&1; then
  flock 9 || die "could not lock $out/.lock"
fi
if [ "${WAITCMD_KAFKA_REBUILD:-}" != "1" ] && done_marker; then
  echo "$lib"
  exit 0
fi

# Copy into a temporary directory, then move into place, so an interrupted
# fetch never leaves a half-filled lib that later runs would trust.
tmp="$out/tmp.$$"
rm -rf "$tmp"
mkdir -p "$tmp"
trap 'rm -rf "$tmp"' EXIT

log "fetching org.apache.kafka:kafka_2.13:$KAFKA_VERSION and its dependencies from Maven Central"
start=$(date +%s)
mvn -B -q -Dstyle.color=never -f "$pom" -Dmaven.repo.local="$cache/m2" -Dkafka.version="$KAFKA_VERSION" \
  dependency:copy-dependencies -DincludeScope=runtime -DoutputDirectory="$tmp/lib" >&2 ||
  die "mvn dependency:copy-dependencies failed (see above)"
[ -f "$tmp/lib/kafka_2.13-$KAFKA_VERSION.jar" ] || die "no kafka_2.13-$KAFKA_VERSION.jar was fetched"
rm -rf "$lib"
mv "$tmp/lib" "$lib"
touch "$out/.complete"
log "fetched in $(($(date +%s) - start)) s"
echo "$lib"
