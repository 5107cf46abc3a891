# H200, at e99c9b9 (with the benchmark's register variants for the records): u64 and f64 keys with
# the block sort bound to 64 registers (four blocks an SM; TWOPHASE_BENCH_BLOCK_REGISTERS=64)
# beside the shipped 80 at 2^20, 2^24 and 2^27; the 24-byte records under their user comparator
# with the two-way tile bound to 96 and 80 registers, the four-way tile to 96 and 80 and the block
# sort to 80, beside the compiler's registers (shipped), at 2^20, 2^24 and 2^26; CUB's merge sorts
# of the same keys built and run in the command.
cd "$(dirname "$0")/.."
source .gpu/env.sh
log=$OUT/d155.log
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $log
(nvcc -O3 -std=c++17 -arch=sm_90 .gpu/cub_mergesort.cu -o /tmp/cub_mergesort > $OUT/cub_build.log 2>&1 || echo "nvcc failed" >> $log) &
export TWOPHASE_BENCH_SHIPPED_ONLY=1
for k in u64 f64; do for n in 20 24 27; do TWOPHASE_BENCH_BLOCK_REGISTERS=64 TWOPHASE_BENCH_KIND=$k TWOPHASE_PROFILE_LOG2N=$n timeout 200 .gpu/bench_fin --profile > $OUT/warm_${k}_$n.log 2>&1 & done; done
TWOPHASE_BENCH_KIND=event24-user TWOPHASE_BENCH_PASS_REGISTERS=96 timeout 300 .gpu/bench_fin > $OUT/warm_e1.log 2>&1 &
TWOPHASE_BENCH_KIND=event24-user TWOPHASE_BENCH_PASS_REGISTERS=80 timeout 300 .gpu/bench_fin > $OUT/warm_e2.log 2>&1 &
TWOPHASE_BENCH_KIND=event24-user TWOPHASE_BENCH_QUAD_REGISTERS=96 timeout 300 .gpu/bench_fin > $OUT/warm_e3.log 2>&1 &
TWOPHASE_BENCH_KIND=event24-user TWOPHASE_BENCH_QUAD_REGISTERS=80 timeout 300 .gpu/bench_fin > $OUT/warm_e4.log 2>&1 &
TWOPHASE_BENCH_KIND=event24-user TWOPHASE_BENCH_BLOCK_REGISTERS=80 timeout 300 .gpu/bench_fin > $OUT/warm_e5.log 2>&1 &
wait
for f in $OUT/warm_*.log; do grep -HE "panicked|error" $f | head -3 >> $log; done
echo "warm done $(date +%T)" >> $log
export TWOPHASE_CUB_SORT_RESULTS=$OUT/cub_mergesort.txt
TWOPHASE_BENCH_SIZES=20,24,27 TWOPHASE_BENCH_KIND=u64,f64 timeout 150 /tmp/cub_mergesort $OUT/cub_keys.txt > $OUT/cub.log 2>&1
echo "cub rc $?" >> $log
TWOPHASE_BENCH_KIND=event24-user timeout 100 /tmp/cub_mergesort $OUT/cub_event.txt > $OUT/cub_event.log 2>&1
echo "cub event rc $?" >> $log
cat $OUT/cub_keys.txt $OUT/cub_event.txt > $TWOPHASE_CUB_SORT_RESULTS
grep -E " (20|24|26|27) " $TWOPHASE_CUB_SORT_RESULTS >> $log
for k in u64 f64; do
  TWOPHASE_BENCH_SIZES=20,24,27 TWOPHASE_BENCH_KIND=$k TWOPHASE_BENCH_BLOCK_REGISTERS=64 timeout 120 .gpu/bench_fin > $OUT/bench_$k.log 2>&1
  echo "$k rc $?" >> $log
  grep -hE "^device|^\| twophase \| [a-z0-9+-]+ \||^block registers|panicked" $OUT/bench_$k.log >> $log
done
TWOPHASE_BENCH_KIND=event24-user TWOPHASE_BENCH_PASS_REGISTERS=96,80 TWOPHASE_BENCH_QUAD_REGISTERS=96,80 TWOPHASE_BENCH_BLOCK_REGISTERS=80 timeout 200 .gpu/bench_fin > $OUT/bench_event.log 2>&1
echo "event24-user rc $?" >> $log
grep -hE "^\| twophase \| [a-z0-9+-]+ \||^sweep|panicked" $OUT/bench_event.log >> $log
(cd $OUT && tar czf /tmp/all.tgz *.log *.txt && find . -type f ! -name d155.log -delete && mv /tmp/all.tgz .)
cat $log
