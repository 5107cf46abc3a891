# H100: u32 sweep with four-way tiles of 128 and 512 threads (bench_gpu_mergesort, u32 rows with their sweep, CUB in the same command); then the stall profile (Nsight Compute full set, SASS) of the four-way cut kernel with probe rounds at 2^24.
cd "$(dirname "$0")/.."
source .gpu/env.sh
log=$OUT/d58.log
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $log
TWOPHASE_BENCH_KIND=u32 timeout 330 bash .gpu/run.sh bench_gpu_mergesort > $OUT/d58_run.log 2>&1
echo "run.sh rc $?" >> $log
grep -E "^== |^\| twophase|^\| cub|copy rate|^device|panicked|^sweep|^programmatic" $OUT/d58_run.log >> $log
TWOPHASE_BENCH_SHIPPED_ONLY=1 TWOPHASE_BENCH_KIND=u32 TWOPHASE_PROFILE_LOG2N=24 timeout 120 \
  ncu --set full --import-source no -k regex:quad_partition --launch-skip 8 --launch-count 2 -f -o /tmp/qp_u32 \
  .gpu/bench_gpu_mergesort --profile > $OUT/d58_ncu.log 2>&1
echo "ncu rc $?" >> $log
ncu -i /tmp/qp_u32.ncu-rep --page details --csv > $OUT/qp_u32_details.csv 2>&1
ncu -i /tmp/qp_u32.ncu-rep --page source --print-source sass --csv > $OUT/qp_u32_sass.csv 2>&1
cat $log
