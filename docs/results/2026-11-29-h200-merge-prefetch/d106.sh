# H200: the merge tile that loads ahead by 16-byte cp.async.cg copies into a staging buffer (prefetch, 256 x 21, 5 blocks, for u32 keys on fast memory): merge tests, adversarial merges, sanitizers on the prefetching tile, then CUB and the merge benchmark with its sweep, twice.
cd "$(dirname "$0")/.."
source .gpu/env.sh
log=$OUT/d106.log
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $log
step() {  # name, timeout, command...
  local name=$1 limit=$2; shift 2
  local start=$SECONDS
  timeout $limit "$@" > $OUT/d106_$name.log 2>&1
  local rc=$?
  echo "$name rc $rc $((SECONDS - start))s: $(grep -E '^test result|ERROR SUMMARY|RACECHECK SUMMARY' $OUT/d106_$name.log | tr '\n' ' ')" >> $log
  grep -E "panicked|FAILED|^seed" $OUT/d106_$name.log | head -20 >> $log
}
step test_gpu_merge 150 .gpu/test_gpu_merge --include-ignored --test-threads=1
step adversarial_merges 150 .gpu/test_adversarial --include-ignored --test-threads=1 merges unsorted_merge checks_catch
S=/usr/local/cuda/bin/compute-sanitizer
step memcheck 120 $S --tool memcheck .gpu/test_gpu_merge --include-ignored --test-threads=1 prefetching_tiles
step racecheck 150 $S --tool racecheck .gpu/test_gpu_merge --include-ignored --test-threads=1 prefetching_tiles
step synccheck 90 $S --tool synccheck .gpu/test_gpu_merge --include-ignored --test-threads=1 prefetching_tiles
nvcc -O3 -std=c++17 -arch=sm_90 .gpu/cub_merge.cu -o /tmp/cub_merge >> $log 2>&1
/tmp/cub_merge $OUT/cub_merge.txt > $OUT/d106_cub.log 2>&1
grep -E "copy rate|\| cub \| (u32|u64|u32-pairs) " $OUT/d106_cub.log >> $log
export TWOPHASE_CUB_RESULTS=$OUT/cub_merge.txt
for run in 1 2; do
  echo "== bench run $run" >> $log
  timeout 150 .gpu/bench_gpu_merge > $OUT/d106_bench_$run.log 2>&1
  echo "bench rc $?" >> $log
  grep -E "^\| twophase \| (u32|u64|u32-pairs) \||^sweep (u32|u64)|panicked|copy rate" $OUT/d106_bench_$run.log >> $log
done
cat $log
