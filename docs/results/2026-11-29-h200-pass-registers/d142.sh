# H200: (1) test_gpu_mergesort in full and memcheck of its u64 differential test (the mid-size
# VT); (2) the program lookup and the host's time before the GPU starts at 2^20, the build before
# (bench_base) and after alternating, u32 and f32 (and u64, f64), three rounds; (3) u64 and f64
# sorts from 1.3 to 3.7 million keys at the shipped tuning (VT 21 from 2^21 where it adds no
# pass) beside VT 21 and 23, CUB's merge sort in the same command at 2^21 and 2^22.
cd "$(dirname "$0")/.."
source .gpu/env.sh
log=$OUT/d142.log
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $log
(nvcc -O3 -std=c++17 -arch=sm_90 .gpu/cub_mergesort.cu -o /tmp/cub_mergesort > $OUT/cub_build.log 2>&1 || echo "nvcc failed" >> $log) &
export TWOPHASE_BENCH_SHIPPED_ONLY=1
warm() { TWOPHASE_BENCH_KIND=$1 TWOPHASE_PROFILE_LOG2N=$2 TWOPHASE_BENCH_VTS=$3 timeout 300 $4 --profile > $OUT/warm_$1_$2_$(basename $4).log 2>&1; }
for b in .gpu/bench_gpu_mergesort .gpu/bench_base; do
  warm u32 20 "" $b & warm f32 20 "" $b & warm u64 20 "" $b & warm f64 20 "" $b &
done
warm u64 21 21,23 .gpu/bench_gpu_mergesort & warm f64 21 21,23 .gpu/bench_gpu_mergesort &
timeout 400 .gpu/test_gpu_mergesort --include-ignored --test-threads 1 > $OUT/test_gpu_mergesort.log 2>&1; echo "test_gpu_mergesort rc $?" >> $log
wait
grep -E "^test result|FAILED|panicked" $OUT/test_gpu_mergesort.log >> $log
for f in $OUT/warm_*.log; do grep -HE "panicked|error" $f | head -3 >> $log; done
timeout 300 compute-sanitizer --tool memcheck --print-limit 20 .gpu/test_gpu_mergesort --include-ignored --exact mergesort_u64 > $OUT/memcheck_u64.log 2>&1
echo "memcheck rc $?" >> $log
grep -E "ERROR SUMMARY|^test result" $OUT/memcheck_u64.log >> $log
echo "== lookup and host time before the GPU starts (2^20)" >> $log
for round in 1 2 3; do
  for kind in u32 f32 u64 f64; do
    for b in bench_base bench_gpu_mergesort; do
      TWOPHASE_BENCH_KIND=$kind TWOPHASE_BENCH_SIZES=20 TWOPHASE_BENCH_QUEUED=1 timeout 60 .gpu/$b > $OUT/q_${kind}_${b}_$round.log 2>&1
      echo "$b $kind round $round rc $?" >> $log
      grep -hE "^\| twophase \| [a-z0-9]+ \||^queued|^program lookup" $OUT/q_${kind}_${b}_$round.log >> $log
    done
  done
done
echo "== u64 and f64 mid sizes" >> $log
export TWOPHASE_CUB_SORT_RESULTS=$OUT/cub_mergesort.txt
TWOPHASE_BENCH_SIZES=21,22 TWOPHASE_BENCH_KIND=u64 timeout 60 /tmp/cub_mergesort $OUT/cub_u64.txt > /dev/null 2>&1
TWOPHASE_BENCH_SIZES=21,22 TWOPHASE_BENCH_KIND=f64 timeout 60 /tmp/cub_mergesort $OUT/cub_f64.txt > /dev/null 2>&1
cat $OUT/cub_u64.txt $OUT/cub_f64.txt > $TWOPHASE_CUB_SORT_RESULTS 2>/dev/null
cat $TWOPHASE_CUB_SORT_RESULTS >> $log
for scale in 1.0 1.25 1.5 1.75; do
  for kind in u64 f64; do
    sizes=20,21; [ $scale = 1.0 ] && sizes=21,22
    TWOPHASE_BENCH_SCALE=$scale TWOPHASE_BENCH_SIZES=$sizes TWOPHASE_BENCH_KIND=$kind TWOPHASE_BENCH_VTS=21,23 timeout 90 .gpu/bench_gpu_mergesort > $OUT/m_${kind}_$scale.log 2>&1
    echo "$kind $scale rc $?" >> $log
    grep -hE "^\| twophase|^vt |panicked" $OUT/m_${kind}_$scale.log >> $log
  done
done
cd $OUT && tar czf /tmp/d142.tgz . && mv /tmp/d142.tgz $OUT/all.tgz
cat $log
