#!/usr/bin/env bash
# u32 under the top-8-bit comparator: the shipped tuning beside smaller block-sort VT (sweep rows).
set -u
cd "$(dirname "$0")"
source ./env.sh
TWOPHASE_BENCH_KIND=u32-top8 ./bench_gpu_mergesort 2>&1 | grep -E "^\| twophase|^sweep|copy rate|panick|rror" | tee $OUT/top8_sweep.log
