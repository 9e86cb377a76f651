#!/usr/bin/env bash
# Installs what disttune needs to build and test on a fresh Debian/Ubuntu machine.
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config
  nlohmann-json3-dev libssl-dev libgtest-dev libgmock-dev libbenchmark-dev libcli11-dev
  libopenmpi-dev openmpi-bin
  python3-dev python3-venv python3-pip python3-pytest python3-torch
  clang-14 libclang-rt-14-dev  # tests/fuzz: libFuzzer, ASan, UBSan (scripts/fuzz.sh)
  chromium                     # renders `disttune report` in the Python tests
)
missing=()
for package in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" ||
    missing+=("$package")
done
if ((${#missing[@]})); then
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  echo "setup: installing ${missing[*]}"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
echo "setup: build dependencies present"
