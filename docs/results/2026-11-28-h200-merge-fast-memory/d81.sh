# H200: Nsight Compute sections of the tile kernels: merge u32 2^27 (the demo), sorted search and load-balancing search (bench), mergesort quad tile u32 2^24.
cd "$(dirname "$0")/.."
source .gpu/env.sh
log=$OUT/d81.log
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $log
S="--section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats --section SchedulerStats --section MemoryWorkloadAnalysis --section InstructionStats --section ComputeWorkloadAnalysis"
prof() {  # name kernel skip cmd...
  local name=$1 k=$2 skip=$3; shift 3
  echo "== $name" >> $log
  timeout 150 ncu --clock-control none $S -k regex:$k -s $skip -c 1 "$@" > $OUT/d81_$name.txt 2>&1
  echo "rc $?" >> $log
}
prof merge_u32 twophase_merge_tile 0 .gpu/main_twophase -n 134217728
TWOPHASE_BENCH_SHIPPED_ONLY=1 prof search twophase_search_tile 4 .gpu/bench_gpu_search
TWOPHASE_BENCH_SHIPPED_ONLY=1 prof lbs twophase_lbs_tile 4 .gpu/bench_gpu_search
TWOPHASE_BENCH_SHIPPED_ONLY=1 TWOPHASE_BENCH_KIND=u32 TWOPHASE_PROFILE_LOG2N=27 prof quad_u32_27 twophase_mergesort_quad_tile 8 .gpu/bench_gpu_mergesort --profile
cat $log
