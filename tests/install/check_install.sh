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
# The consumer is compiled and linked like the build (the asan preset's sanitizer flags: a
# static libdisttune.a made with them links only into a program made with them).
cached() { sed -n "s/^$1:[A-Z]*=//p" "$build/CMakeCache.txt"; }
cmake -S "$consumer" -B "$work/build" -DCMAKE_PREFIX_PATH="$work/prefix" \
  -DCMAKE_CXX_COMPILER="$(cached CMAKE_CXX_COMPILER)" -DCMAKE_CXX_FLAGS="$(cached CMAKE_CXX_FLAGS)" \
  -DCMAKE_EXE_LINKER_FLAGS="$(cached CMAKE_EXE_LINKER_FLAGS)" >/dev/null
cmake --build "$work/build" >/dev/null
"$work/build/consumer"
actual=$("$work/build/consumer_backends")
echo "$actual"
if [ "$actual" != "$expected" ]; then
  echo "check_install: the installed package gave '$actual', expected '$expected'" >&2
  exit 1
fi
