#!/usr/bin/env bash
# Creates .venv (seeing Debian's python3-torch), builds and installs the disttune package into
# it with its test needs (pytest, Triton for the interpreter tests). Re-running reuses the
# build directory build/python/.
set -euo pipefail
cd "$(dirname "$0")/.."
python="${DISTTUNE_PYTHON:-/usr/bin/python3}"
if [ ! -x .venv/bin/python ]; then
  "$python" -m venv --system-site-packages .venv
fi
pip=(.venv/bin/python -m pip install -q --disable-pip-version-check)
"${pip[@]}" "nanobind>=2.0" "scikit-build-core>=0.10" pytest "triton==3.6.0"
# File by file (no unity batches): a change rebuilds its own file only.
"${pip[@]}" --no-build-isolation --no-deps --config-settings=cmake.define.CMAKE_UNITY_BUILD=OFF .
.venv/bin/python -c "import disttune; print('python_setup: disttune', disttune.__version__, 'installed in .venv')"
