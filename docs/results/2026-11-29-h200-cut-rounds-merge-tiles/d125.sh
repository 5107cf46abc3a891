# H200: where the u32 sort's four-way cut kernel waits (Nsight Compute, 2^24), and the u32 merge's
# tile shapes at 2^25-2^27 beside CUB's DeviceMerge.
cd "$(dirname "$0")/.."
source .gpu/env.sh
log=$OUT/d125.log
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $log
(nvcc -O3 -std=c++17 -arch=sm_90 .gpu/cub_merge.cu -o /tmp/cub_merge > /tmp/cub_build2.log 2>&1 || echo "nvcc merge failed" >> $log) &
echo "== ncu cuts 2^24" >> $log
export TWOPHASE_BENCH_SHIPPED_ONLY=1
TWOPHASE_BENCH_KIND=u32 TWOPHASE_PROFILE_LOG2N=24 timeout 150 ncu --clock-control none \
  --section SpeedOfLight --section LaunchStats --section Occupancy --section WarpStateStats --section SchedulerStats \
  --section SourceCounters --section MemoryWorkloadAnalysis \
  -k regex:"twophase_mergesort_(quad_)?partition" --launch-skip 10 --launch-count 3 --kill yes \
  -o $OUT/cuts24 .gpu/bench_gpu_mergesort --profile > $OUT/ncu_cuts.out 2>&1
echo "ncu rc $?" >> $log
ncu --import $OUT/cuts24.ncu-rep --page details > $OUT/cuts24_details.txt 2>&1
ncu --import $OUT/cuts24.ncu-rep --page source --csv --print-source sass > $OUT/cuts24_sass.csv 2>&1
grep -E "twophase_|Duration|Warp Cycles Per Issued|Issued Warp Per Scheduler|Achieved Occupancy|Stall|Registers" $OUT/cuts24_details.txt | head -60 >> $log
unset TWOPHASE_BENCH_SHIPPED_ONLY
wait
timeout 60 /tmp/cub_merge $OUT/cub_merge.txt | grep "u32 " >> $log 2>&1
echo "== merge shapes" >> $log
TWOPHASE_BENCH_KIND=u32 TWOPHASE_CUB_RESULTS=$OUT/cub_merge.txt TWOPHASE_BENCH_SIZES=25,26,27 timeout 240 .gpu/bench_gpu_merge > $OUT/d125_merge.log 2>&1
echo "merge rc $?" >> $log
grep -E "^\| twophase|^sweep|panicked|copy rate" $OUT/d125_merge.log >> $log
cat $log
