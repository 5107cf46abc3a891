#!/usr/bin/env bash
#! Build every CUB peer of benches/peers/ as the device does (nvcc, sm_90), without a GPU: the device's CUDA 13.0 compiler and CUB from PyPI.
#
# The device builds the peers inside a timed command, so a peer that does not compile costs device
# time and leaves its benchmark without CUB columns. This builds them here first. The wheels are
# pinned to what the device has: nvcc and NVVM 13.0.88, CCCL 13.0.85 (CUB 3.0.1), installed once
# into $TWOPHASE_PEER_TOOLKIT (default target/peer-toolkit). The executables go to
# target/peers/ and are not run (there is no GPU here).
set -euo pipefail
cd "$(dirname "$0")/.."

NVCC_VERSION=13.0.88
CCCL_VERSION=13.0.85
RUNTIME_VERSION=13.0.96
TOOLKIT=${TWOPHASE_PEER_TOOLKIT:-target/peer-toolkit}
CUDA=$TOOLKIT/nvidia/cu13
if [ ! -x "$CUDA/bin/nvcc" ]; then
  python3 -m pip install --quiet --disable-pip-version-check --target "$TOOLKIT" \
    "nvidia-cuda-nvcc==${NVCC_VERSION}" "nvidia-nvvm==${NVCC_VERSION}" "nvidia-cuda-crt==${NVCC_VERSION}" \
    "nvidia-cuda-runtime==${RUNTIME_VERSION}" "nvidia-cuda-cccl==${CCCL_VERSION}"
fi

mkdir -p target/peers
for peer in benches/peers/*.cu; do
  name=$(basename "$peer" .cu)
  "$CUDA/bin/nvcc" -O3 -std=c++17 -arch=sm_90 -I"$CUDA/include/cccl" -I"$CUDA/include" "$peer" \
    -L"$CUDA/lib" -o "target/peers/$name"
  echo "peer built: $name"
done
