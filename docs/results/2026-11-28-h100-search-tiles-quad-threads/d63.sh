# H100: u32 mergesort sweep (four-way tiles of 128, 256 and 512 threads at VT 45 among them) three times, to settle the 128-thread four-way tile at 2^27.
cd "$(dirname "$0")/.."
source .gpu/env.sh
log=$OUT/d63.log
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $log
for run in 1 2 3; do
  echo "== bench_gpu_mergesort u32 run $run" >> $log
  TWOPHASE_BENCH_KIND=u32 timeout 170 .gpu/bench_gpu_mergesort > $OUT/d63_run$run.log 2>&1
  echo "rc $?" >> $log
  grep -E "^\| twophase|^sweep|copy rate|programmatic" $OUT/d63_run$run.log >> $log
done
cat $log
