#!/usr/bin/env bash
# Builds and runs README.md's C++ library recipe as written (its CMakeLists.txt and main.cpp,
# the fenced blocks after the "README recipe" markers) against this build tree, installed
# into a temporary prefix.
# Usage: check_readme_recipe.sh <build dir> <README.md>
set -euo pipefail
build=$1
readme=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# The fenced block that follows the marker naming `file`, without its fences.
snippet() {
  awk -v marker="<!-- README recipe: $1," '
    index($0, marker) == 1 { found = 1; next }
    found && /^```/ { if (inside) exit; inside = 1; next }
    inside { print }' "$readme"
}
mkdir -p "$work/app"
for file in CMakeLists.txt main.cpp; do
  snippet "$file" >"$work/app/$file"
  [[ -s $work/app/$file ]] || { echo "check_readme_recipe: README.md has no $file recipe" >&2; exit 1; }
done
cmake --install "$build" --prefix "$work/prefix" >/dev/null
# Compiled and linked like the build (the asan preset's sanitizer flags), as check_install.sh.
cached() { sed -n "s/^$1:[A-Z]*=//p" "$build/CMakeCache.txt"; }
cmake -S "$work/app" -B "$work/build" -DCMAKE_PREFIX_PATH="$work/prefix" \
  -DCMAKE_CXX_COMPILER="$(cached CMAKE_CXX_COMPILER)" -DCMAKE_CXX_FLAGS="$(cached CMAKE_CXX_FLAGS)" \
  -DCMAKE_EXE_LINKER_FLAGS="$(cached CMAKE_EXE_LINKER_FLAGS)" -DCMAKE_EXPORT_COMPILE_COMMANDS=ON >/dev/null
grep -q -- "-O3 -DNDEBUG" "$work/build/compile_commands.json" ||
  { echo "check_readme_recipe: the recipe does not compile optimised (no build type)" >&2; exit 1; }
cmake --build "$work/build" >/dev/null
table=$(TRITON_DIST_AUTOTUNE_CACHE_DIR="$work/cache" "$work/build/app")
echo "$table"
grep -q "^disttune: scale key 1048576" <<<"$table" ||
  { echo "check_readme_recipe: the recipe did not print the tuning's table" >&2; exit 1; }
ls "$work/cache/scale/"*.json >/dev/null
echo "check_readme_recipe: README.md's recipe builds and tunes"
