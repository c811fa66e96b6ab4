#!/bin/sh
# Builds bench/peers/peers-bench: cuCollections at dc0f9fc in ./cuco, BGHT at 7584547 in ./bght (see
# README.md), CCCL 3.0.1 of the CUDA 13.0 toolkit, sm_90. Not part of the CMake build or of CI.
set -e
cd "$(dirname "$0")"
nvcc -O3 -std=c++17 -arch=sm_90 --expt-extended-lambda --expt-relaxed-constexpr \
  -include cccl3_compat.cuh -Icuco/include -Ibght/include \
  peers_bench.cu -o peers-bench
