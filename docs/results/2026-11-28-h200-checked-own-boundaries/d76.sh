# H200: the adversarial GPU tests under inconsistent comparators on the branch, then HEAD (main) and the branch alternating for the user comparators at 2^20-2^22, with CUB's merge sort under the same top-8-bit functor.
cd "$(dirname "$0")/.."
source .gpu/env.sh
log=$OUT/d76.log
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $log
(nvcc -O3 -std=c++17 -arch=sm_90 .gpu/cub_mergesort.cu -o /tmp/cub_mergesort > /tmp/cub_build.log 2>&1 || echo "nvcc failed" >> $log) &
start=$SECONDS
timeout 330 .gpu/test_adversarial --include-ignored --test-threads=1 inconsistent_comparators_ > $OUT/d76_adversarial.log 2>&1
echo "test_adversarial inconsistent_comparators_ rc $? in $((SECONDS - start)) s: $(grep -E '^test result' $OUT/d76_adversarial.log)" >> $log
grep -E "^test |panicked" $OUT/d76_adversarial.log >> $log
wait
TWOPHASE_BENCH_KIND=u32-top8 timeout 60 /tmp/cub_mergesort $OUT/cub_top8.txt >> $log 2>&1
export TWOPHASE_BENCH_SHIPPED_ONLY=1 TWOPHASE_BENCH_SIZES=20,21,22
for kind in u32-top8 u32-user; do
  for b in bench_head_gpu_mergesort bench_gpu_mergesort bench_head_gpu_mergesort bench_gpu_mergesort; do
    echo "== $b $kind" >> $log
    TWOPHASE_BENCH_KIND=$kind timeout 40 .gpu/$b > $OUT/d76_b.log 2>&1
    grep -E "^\| twophase|panicked" $OUT/d76_b.log >> $log
  done
done
cat $log
