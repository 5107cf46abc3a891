# H100: u32 pairs with the 1024 x 11 block sort below their four-way passes: mergesort GPU tests, then HEAD (a595b89) and the rule alternating at 2^20-2^22 with CUB 3.0.1 in the same command.
cd "$(dirname "$0")/.."
source .gpu/env.sh
log=$OUT/d72.log
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $log
timeout 150 .gpu/test_gpu_mergesort --include-ignored --test-threads=1 --skip past_i32_max --skip 2_pow_27 > $OUT/d72_test.log 2>&1
echo "test_gpu_mergesort rc $?: $(grep -E '^test result' $OUT/d72_test.log)" >> $log
export TWOPHASE_BENCH_SHIPPED_ONLY=1 TWOPHASE_BENCH_SIZES=20,21,22 TWOPHASE_BENCH_KIND=u32-pairs
timeout 300 bash .gpu/run.sh bench_head_gpu_mergesort bench_gpu_mergesort bench_head_gpu_mergesort bench_gpu_mergesort bench_head_gpu_mergesort bench_gpu_mergesort > $OUT/d72_bench.log 2>&1
echo "run.sh rc $?" >> $log
grep -E "^== |^\| twophase|^\| cub-merge \| u32-pairs \| 2\^20|copy rate|panicked" $OUT/d72_bench.log >> $log
cat $log
