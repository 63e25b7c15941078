#!/usr/bin/env bash
# Fetch the JVM jars only the tests use (scripts/test-jars.lock: the S3Proxy server) into
# jars/ and check their sha256. Idempotent: a jar already there with the right checksum is not
# fetched again.
# Needs Maven (mvn) and Maven Central only when a jar is missing.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
lock="$root/scripts/test-jars.lock"
dest="${DELTA_JARS_DIR:-$root/jars}"
mkdir -p "$dest"

jar_name() {  # group:artifact:version[:type[:classifier]] -> artifact-version[-classifier].jar
  local artifact version classifier
  artifact="$(cut -d: -f2 <<<"$1")"
  version="$(cut -d: -f3 <<<"$1")"
  classifier="$(cut -d: -f5 -s <<<"$1")"
  echo "$artifact-$version${classifier:+-$classifier}.jar"
}

checksum_ok() {  # file sha256
  [ -f "$1" ] && [ "$(sha256sum "$1" | cut -d' ' -f1)" = "$2" ]
}

fetched=0
while read -r sha coordinate; do
  case "$sha" in ''|'#'*) continue ;; esac
  file="$dest/$(jar_name "$coordinate")"
  checksum_ok "$file" "$sha" && continue
  command -v mvn >/dev/null 2>&1 || {
    echo "fetch_test_jars: $coordinate is missing and Maven (mvn) is not installed;" \
      "install Maven 3.8+ or put the jar in $dest" >&2
    exit 1
  }
  echo "Fetching $coordinate from Maven Central ..." >&2
  rm -f "$file"
  if ! mvn -q -B dependency:copy -Dartifact="$coordinate" -DoutputDirectory="$dest" \
      >"$dest/.mvn.log" 2>&1; then
    tail -20 "$dest/.mvn.log" >&2
    echo "fetch_test_jars: Maven could not fetch $coordinate (log: $dest/.mvn.log)" >&2
    exit 1
  fi
  if ! checksum_ok "$file" "$sha"; then
    echo "fetch_test_jars: $file does not match the sha256 in $lock" \
      "(expected $sha, got $(sha256sum "$file" | cut -d' ' -f1)); removed it" >&2
    rm -f "$file"
    exit 1
  fi
  fetched=$((fetched + 1))
done <"$lock"
[ "$fetched" -eq 0 ] || echo "test jars ready in $dest ($fetched fetched)" >&2
