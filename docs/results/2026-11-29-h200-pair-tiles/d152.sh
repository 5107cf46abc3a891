# H200: the mergesort tests with the four-way and eight-way tiles under a threads-only launch
# bound where their register setting is 0, and the two-way tile of pairs with an 8-byte key or
# value bound to 80 registers: test_gpu_mergesort in full (every shipped pair layout through its
# four-way passes), and memcheck of the pair and pass-plan tests at the small test scale.
cd "$(dirname "$0")/.."
source .gpu/env.sh
log=$OUT/d152.log
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $log
(TWOPHASE_TEST_SCALE=small timeout 420 compute-sanitizer --tool memcheck --print-limit 20 .gpu/test_gpu_mergesort --include-ignored --test-threads=1 mergesort_pairs_prove_stability mergesort_two_four_and_eight_way_pass_plans > $OUT/memcheck.log 2>&1; echo "memcheck rc $?" >> $log) &
timeout 400 .gpu/test_gpu_mergesort --include-ignored > $OUT/test_gpu_mergesort.log 2>&1
echo "test_gpu_mergesort rc $?" >> $log
grep -E "^test result|panicked|FAILED|failed" $OUT/test_gpu_mergesort.log >> $log
wait
grep -E "ERROR SUMMARY|^test result|panicked" $OUT/memcheck.log >> $log
cat $log
