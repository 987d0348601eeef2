#!/usr/bin/env bash
# Installs everything ampc needs on a fresh Debian 12 machine (run as root, or with sudo present).
# Usage: scripts/setup.sh [EXTRA-PACKAGE...] (the sanitizer build adds its compilers).
set -euo pipefail
packages=(
  cmake ninja-build ccache g++ pkg-config python3
  llvm-19-dev llvm-19-tools libmlir-19-dev mlir-19-tools
  nlohmann-json3-dev libgtest-dev libgmock-dev
  libopenblas-dev libopenblas-openmp-dev zlib1g-dev dataset-fashion-mnist
  openmpi-bin libopenmpi-dev
  libonnx-dev libprotobuf-dev libonnx-testdata python3-torchvision
  libicu-dev python3-regex
  "$@"
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  sudo_cmd=""
  [ "$(id -u)" -ne 0 ] && sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
