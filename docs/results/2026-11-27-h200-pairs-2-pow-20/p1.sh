#!/usr/bin/env bash
# u32 pairs: the shipped tuning beside two-way-only block sorts of other shapes (sweep rows).
set -u
cd "$(dirname "$0")"
source ./env.sh
TWOPHASE_BENCH_KIND=u32-pairs ./bench_gpu_mergesort 2>&1 | grep -E "^\| twophase|^sweep|copy rate|panick|rror|programmatic" | tee $OUT/pairs_sweep.log
