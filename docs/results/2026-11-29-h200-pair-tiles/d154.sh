# H200: this commit's mergesort (bench_fin: the pairs' 256-thread block sort bound to 80 registers,
# the two-way tile of pairs with 8-byte values to 80, four-way and eight-way tiles at a register
# setting of 0 under a threads-only launch bound) against bench_new (the launch bound change
# alone), u32 keys with u64 values and u64 keys with u32 and u64 values at 2^20, 2^24 and 2^27; u64
# keys with the four-way tile at the compiler's registers and at 128 beside the shipped 96; CUB's
# merge and radix sorts built and run in the command. First test_gpu_mergesort in full and
# memcheck of the pair and pass-plan tests at the small test scale.
cd "$(dirname "$0")/.."
source .gpu/env.sh
log=$OUT/d154.log
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $log
(nvcc -O3 -std=c++17 -arch=sm_90 .gpu/cub_mergesort.cu -o /tmp/cub_mergesort > $OUT/cub_build.log 2>&1 || echo "nvcc failed" >> $log) &
(TWOPHASE_TEST_SCALE=small timeout 300 compute-sanitizer --tool memcheck --print-limit 20 .gpu/test_gpu_mergesort --include-ignored --test-threads=1 mergesort_pairs_prove_stability mergesort_two_four_and_eight_way_pass_plans > $OUT/memcheck.log 2>&1; echo "memcheck rc $?" >> $log) &
timeout 300 .gpu/test_gpu_mergesort --include-ignored > $OUT/test_gpu_mergesort.log 2>&1
echo "test_gpu_mergesort rc $?" >> $log
grep -E "^test result|panicked|FAILED|failed" $OUT/test_gpu_mergesort.log >> $log
wait
grep -E "ERROR SUMMARY|^test result|panicked" $OUT/memcheck.log >> $log
export TWOPHASE_BENCH_SHIPPED_ONLY=1
kinds="u32+u64 u64+u32 u64+u64"
warm() { TWOPHASE_BENCH_KIND=$2 TWOPHASE_PROFILE_LOG2N=$3 timeout 240 .gpu/$1 --profile > $OUT/warm_$1_${2//+/_}_$3.log 2>&1; }
for k in $kinds; do for n in 20 24 27; do warm bench_new $k $n & warm bench_fin $k $n & done; done
for n in 24 27; do TWOPHASE_BENCH_QUAD_REGISTERS=0,128 warm bench_fin u64 $n & done
wait
for f in $OUT/warm_*.log; do grep -HE "panicked|error" $f | head -3 >> $log; done
echo "warm done $(date +%T)" >> $log
export TWOPHASE_CUB_SORT_RESULTS=$OUT/cub_mergesort.txt
TWOPHASE_BENCH_SIZES=20,24,27 TWOPHASE_BENCH_KIND=u64,u32+u64,u64+u32,u64+u64 timeout 150 /tmp/cub_mergesort $TWOPHASE_CUB_SORT_RESULTS > $OUT/cub.log 2>&1
echo "cub rc $?" >> $log
grep -E " (20|24|27) " $TWOPHASE_CUB_SORT_RESULTS >> $log
for k in $kinds; do
  for b in bench_new bench_fin; do
    TWOPHASE_BENCH_SIZES=20,24,27 TWOPHASE_BENCH_KIND=$k timeout 100 .gpu/$b > $OUT/${b}_${k//+/_}.log 2>&1
    echo "$b $k rc $?" >> $log
    grep -hE "^device|^\| twophase \| [a-z0-9+-]+ \||panicked" $OUT/${b}_${k//+/_}.log | sed "s/^/$b /" >> $log
  done
done
TWOPHASE_BENCH_SIZES=24,27 TWOPHASE_BENCH_KIND=u64 TWOPHASE_BENCH_QUAD_REGISTERS=0,128 timeout 100 .gpu/bench_fin > $OUT/bench_fin_u64.log 2>&1
echo "bench_fin u64 rc $?" >> $log
grep -hE "^\| twophase \| [a-z0-9+-]+ \||^quad registers|panicked" $OUT/bench_fin_u64.log >> $log
(cd $OUT && tar czf /tmp/all.tgz *.log *.txt && find . -type f ! -name d154.log -delete && mv /tmp/all.tgz .)
cat $log
