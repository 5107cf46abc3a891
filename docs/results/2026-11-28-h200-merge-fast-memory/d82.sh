# H200: the merge's tuning for fast memory (256x25x5 for 2/4-byte keys, 256x19x4 for 8-byte keys): GPU merge tests, then HEAD's bench and the change alternating twice with CUB's merge in the same command.
cd "$(dirname "$0")/.."
source .gpu/env.sh
log=$OUT/d82.log
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $log
start=$SECONDS
timeout 200 .gpu/test_gpu_merge --include-ignored --test-threads=1 > $OUT/d82_test_gpu_merge.log 2>&1
echo "test_gpu_merge rc $? in $((SECONDS - start)) s: $(grep -E '^test result' $OUT/d82_test_gpu_merge.log)" >> $log
grep -E "panicked|FAILED" $OUT/d82_test_gpu_merge.log >> $log
nvcc -O3 -std=c++17 -arch=sm_90 .gpu/cub_merge.cu -o /tmp/cub_merge >> $log 2>&1
/tmp/cub_merge $OUT/cub_merge.txt > $OUT/d82_cub.log 2>&1
grep -E "copy rate|\| cub \| (u32|u64|u32-pairs) " $OUT/d82_cub.log >> $log
export TWOPHASE_CUB_RESULTS=$OUT/cub_merge.txt TWOPHASE_BENCH_SHIPPED_ONLY=1
for b in bench_head_gpu_merge bench_gpu_merge bench_head_gpu_merge bench_gpu_merge; do
  echo "== $b" >> $log
  timeout 100 .gpu/$b > $OUT/d82_$b.log 2>&1
  grep -E "^\| twophase \| (u32|u64|u32-pairs) \||panicked|copy rate" $OUT/d82_$b.log >> $log
done
cat $log
