#!/usr/bin/env bash
# The main job: sets up, builds, and tunes the spec's `scale` example on the best device
# present (CUDA if there is a GPU, else the CPU), showing the configs, the choice and the
# cache record it wrote; then runs it again, which reads the record instead of tuning.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
export TRITON_DIST_AUTOTUNE_CACHE_DIR="${TRITON_DIST_AUTOTUNE_CACHE_DIR:-$PWD/build/demo-cache}"

if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1 &&
   command -v nvcc >/dev/null 2>&1; then
  device=cuda
  cmake --preset dev -DCMAKE_CUDA_ARCHITECTURES=native >/dev/null
  cmake --build --preset dev -j "$(nproc)" --target scale_cuda
  demo=(build/dev/examples/cuda/scale_cuda)
else
  device=cpu
  cmake --preset dev >/dev/null
  cmake --build --preset dev -j "$(nproc)" --target scale_cpu
  demo=(build/dev/examples/cpu/scale_cpu)
fi

echo "== disttune demo on the $device; cache root: $TRITON_DIST_AUTOTUNE_CACHE_DIR"
echo "== first run (tunes unless a record is already there)"
"${demo[@]}"
echo
echo "== second run, a new process: the disk record answers"
"${demo[@]}"
echo
echo "== the cache it wrote"
find "$TRITON_DIST_AUTOTUNE_CACHE_DIR" -type f | sort
record=$(find "$TRITON_DIST_AUTOTUNE_CACHE_DIR/scale" -name '*.json' | head -n 1)
echo "== $record"
# sed reads to the end (head would close the pipe early, and json.tool then fails).
python3 -m json.tool "$record" | sed -n '1,40p'
