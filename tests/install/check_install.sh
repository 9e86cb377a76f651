#!/usr/bin/env bash
# Installs the build tree into a temporary prefix, then configures, builds and runs a
# project outside disttune that finds it with find_package(disttune).
# Usage: check_install.sh <build dir> <consumer source dir>
set -euo pipefail
build=$1
consumer=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cmake --install "$build" --prefix "$work/prefix" >/dev/null
cmake -S "$consumer" -B "$work/build" -DCMAKE_PREFIX_PATH="$work/prefix" >/dev/null
cmake --build "$work/build" >/dev/null
"$work/build/consumer"
