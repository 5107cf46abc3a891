# H200: where the u32 sort's four-way tiles lose at 2^24. Nsight Compute sections of one
# four-way tile launch at 2^24 and at 2^27, the 2^24 two-way tile and block sort; then timed
# 2^24-2^25 with two-way passes below 128 and 256 MiB beside the shipped tuning.
cd "$(dirname "$0")/.."
source .gpu/env.sh
log=$OUT/d118.log
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $log
SECTIONS="--section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats --section SchedulerStats --section MemoryWorkloadAnalysis --section ComputeWorkloadAnalysis"
export TWOPHASE_BENCH_SHIPPED_ONLY=1 TWOPHASE_BENCH_KIND=u32
prof() {  # name log2n kernel-regex skip
  echo "== ncu $1" >> $log
  TWOPHASE_PROFILE_LOG2N=$2 timeout 150 ncu --clock-control none $SECTIONS -k "regex:$3" --launch-skip $4 --launch-count 1 \
    .gpu/bench_gpu_mergesort --profile > $OUT/ncu_$1.txt 2>&1
  echo "ncu rc $?" >> $log
  grep -v "^profiled\|^==PROF==" $OUT/ncu_$1.txt | sed -n '/twophase_/,$p' >> $log
}
prof quad24 24 quad_tile 13
prof quad27 27 quad_tile 20
prof tile24 24 '^twophase_mergesort_tile$' 3
prof block24 24 blocksort 3
export TWOPHASE_BENCH_SIZES=24,25 TWOPHASE_BENCH_FOUR_WAY_BYTES=134217728,268435456
for round in 1 2; do
  echo "== round $round" >> $log
  timeout 150 .gpu/bench_gpu_mergesort > $OUT/d118_b.log 2>&1
  echo "rc $?" >> $log
  grep -E "^\| twophase|^four-way|panicked|copy rate" $OUT/d118_b.log >> $log
done
cat $log
