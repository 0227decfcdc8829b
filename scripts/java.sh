#!/usr/bin/env bash
# Makes sure a Java 17+ runtime is on PATH for pyspark's local Spark (the conformance tests),
# installing Debian's openjdk-17-jre-headless when none is there.
set -euo pipefail
if command -v java >/dev/null; then
  exit 0
fi
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq openjdk-17-jre-headless) >&2
  command -v java >/dev/null
else
  echo "java.sh: no Java runtime and no way to install one" >&2
  exit 1
fi
