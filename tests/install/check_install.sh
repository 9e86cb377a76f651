#!/usr/bin/env bash
# Installs the build tree into a temporary prefix, then configures, builds and runs a
# project outside disttune that finds it with find_package(disttune) and links each backend
# target the build made.
# Usage: check_install.sh <build dir> <consumer source dir> "<expected backends, e.g. cuda mpi>"
set -euo pipefail
build=$1
consumer=$2
expected="backends:${3:+ $3}"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cmake --install "$build" --prefix "$work/prefix" >/dev/null
cmake -S "$consumer" -B "$work/build" -DCMAKE_PREFIX_PATH="$work/prefix" >/dev/null
cmake --build "$work/build" >/dev/null
"$work/build/consumer"
actual=$("$work/build/consumer_backends")
echo "$actual"
if [ "$actual" != "$expected" ]; then
  echo "check_install: the installed package gave '$actual', expected '$expected'" >&2
  exit 1
fi
