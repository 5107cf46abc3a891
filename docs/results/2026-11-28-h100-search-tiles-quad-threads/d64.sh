# H100: four-way tiles of 128 threads from 2^25 u32 keys (MergesortTuning::for_launch): the u32 sweep at 2^25-2^27 (its first entry the 256-thread tiles), the top-8 comparator at 2^27 (its sweep's VT 37 entry the 256-thread tiles), then test_gpu_mergesort.
cd "$(dirname "$0")/.."
source .gpu/env.sh
log=$OUT/d64.log
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $log
echo "== u32 2^25-2^27" >> $log
TWOPHASE_BENCH_KIND=u32 TWOPHASE_BENCH_SIZES=25,26,27 timeout 200 .gpu/bench_gpu_mergesort > $OUT/d64_u32.log 2>&1
echo "rc $?" >> $log
grep -E "^\| twophase|^sweep|copy rate" $OUT/d64_u32.log | grep -v "quad nt=0\|quad nt=512\|vt=37\|vt=43\|lanes=1 " >> $log
echo "== u32-top8 2^27" >> $log
TWOPHASE_BENCH_KIND=u32-top8 TWOPHASE_BENCH_SIZES=27 timeout 120 .gpu/bench_gpu_mergesort > $OUT/d64_top8.log 2>&1
echo "rc $?" >> $log
grep -E "^\| twophase|^sweep|copy rate" $OUT/d64_top8.log >> $log
timeout 290 .gpu/test_gpu_mergesort --include-ignored --test-threads=1 > $OUT/d64_test_gpu_mergesort.log 2>&1
echo "tests rc $?: $(grep -E 'test result' $OUT/d64_test_gpu_mergesort.log)" >> $log
grep -E "FAILED|panicked" $OUT/d64_test_gpu_mergesort.log | head >> $log
cat $log
