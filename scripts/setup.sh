#!/usr/bin/env bash
# Installs what cp-mlir needs (Debian packages), configures and builds.
# Fast when everything is already there. Usage: scripts/setup.sh [build-dir]
# CP_CMAKE_ARGS adds options to a new configuration (e.g. the sanitizers).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${1:-$root/build}

# MPICH is the pinned MPI: it runs as root without extra flags, oversubscribes
# by default, and its MPI_Comm is a plain int (see docs/Building.md).
packages=(
  libmlir-22-dev mlir-22-tools llvm-22-dev llvm-22-tools
  cmake ninja-build ccache g++
  mpich libmpich-dev libomp-22-dev
  python3-dev python3-numpy python3-pytest pybind11-dev
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
    missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo=sudo
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
fi

launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)

if [ ! -f "$build/build.ninja" ]; then
  cmake -G Ninja -S "$root" -B "$build" \
    -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_C_COMPILER=gcc -DCMAKE_CXX_COMPILER=g++ \
    -DMLIR_DIR=/usr/lib/llvm-22/lib/cmake/mlir \
    -DMLIR_LINK_MLIR_DYLIB=ON \
    -DLLVM_EXTERNAL_LIT=/usr/lib/llvm-22/bin/lit \
    "${launcher[@]}" ${CP_CMAKE_ARGS:-}
fi
cmake --build "$build" -j "${CP_JOBS:-2}"
