# H100: the probe rounds' binary search over each run's probes (base 72c4547: a compare with every probe). u32 base vs new alternating twice with CUB in the same command, ncu per-kernel time at 2^24, then test_gpu_mergesort and memcheck (small scale) on the pass-plan and wide-record tests.
cd "$(dirname "$0")/.."
source .gpu/env.sh
log=$OUT/d59.log
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $log
TWOPHASE_BENCH_SHIPPED_ONLY=1 TWOPHASE_BENCH_KIND=u32 timeout 200 bash .gpu/run.sh bench_base_gpu_mergesort bench_gpu_mergesort bench_base_gpu_mergesort bench_gpu_mergesort > $OUT/d59_run.log 2>&1
echo "run.sh rc $?" >> $log
grep -E "^== |^\| twophase|^\| cub|copy rate|^device|panicked|CUB" $OUT/d59_run.log >> $log
echo "== ncu u32 2^24" >> $log
TWOPHASE_BENCH_SHIPPED_ONLY=1 TWOPHASE_BENCH_KIND=u32 TWOPHASE_PROFILE_LOG2N=24 timeout 50 \
  ncu --clock-control none --metrics gpu__time_duration.sum --csv .gpu/bench_gpu_mergesort --profile > $OUT/ncu_u32_24.csv 2> $OUT/ncu_u32_24.err
python3 .gpu/ncu_mergesort.py $OUT/ncu_u32_24.csv >> $log 2>&1
timeout 280 .gpu/test_gpu_mergesort --include-ignored --test-threads=1 > $OUT/d59_test_gpu_mergesort.log 2>&1
echo "tests rc $?: $(grep -E 'test result' $OUT/d59_test_gpu_mergesort.log)" >> $log
grep -E "^test .*(FAILED|ok)$" $OUT/d59_test_gpu_mergesort.log >> $log
for t in pass_plans wide_records; do
  TWOPHASE_TEST_SCALE=small timeout 60 /usr/local/cuda/bin/compute-sanitizer --tool memcheck --error-exitcode 1 .gpu/test_gpu_mergesort --include-ignored --test-threads=1 $t > $OUT/d59_memcheck_$t.log 2>&1
  echo "memcheck $t rc $?: $(grep -E 'SUMMARY|test result' $OUT/d59_memcheck_$t.log | tr '\n' ' ')" >> $log
done
cat $log
