# H200: pairs with an 8-byte key or value, u32 keys with u64 values and u64 keys with u32 and u64
# values, at 2^20, 2^24 and 2^27: bench_new (four-way tiles under a threads-only launch bound,
# the two-way tile at the compiler's registers), bench_new2 (the same with the two-way tile bound
# to 80 registers: this commit's shipped tuning) and bench_blk (bench_new2 with the 256-thread
# block sort of pairs bound to three blocks an SM, an experiment), one kind after another; the
# 24-byte records (four-way tiles at 123 registers against 127) in bench_old and bench_new2; CUB's
# merge and radix sorts of the same pairs built and run in the command.
cd "$(dirname "$0")/.."
source .gpu/env.sh
log=$OUT/d153.log
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $log
(nvcc -O3 -std=c++17 -arch=sm_90 .gpu/cub_mergesort.cu -o /tmp/cub_mergesort > $OUT/cub_build.log 2>&1 || echo "nvcc failed" >> $log) &
export TWOPHASE_BENCH_SHIPPED_ONLY=1
kinds="u32+u64 u64+u32 u64+u64"
bins="bench_new bench_new2 bench_blk"
warm() { TWOPHASE_BENCH_KIND=$2 TWOPHASE_PROFILE_LOG2N=$3 timeout 240 .gpu/$1 --profile > $OUT/warm_$1_${2//+/_}_$3.log 2>&1; }
for k in $kinds; do for n in 20 24 27; do for b in $bins; do warm $b $k $n & done; done; done
for n in 20 24 26; do warm bench_old event24-user $n & warm bench_new2 event24-user $n & done
wait
for f in $OUT/warm_*.log; do grep -HE "panicked|error" $f | head -3 >> $log; done
echo "warm done $(date +%T)" >> $log
export TWOPHASE_CUB_SORT_RESULTS=$OUT/cub_mergesort.txt
TWOPHASE_BENCH_SIZES=20,24,27 TWOPHASE_BENCH_KIND=u32+u64,u64+u32,u64+u64 timeout 150 /tmp/cub_mergesort $OUT/cub_pairs.txt > $OUT/cub.log 2>&1
echo "cub rc $?" >> $log
TWOPHASE_BENCH_KIND=event24-user timeout 100 /tmp/cub_mergesort $OUT/cub_event.txt > $OUT/cub_event.log 2>&1
echo "cub event rc $?" >> $log
cat $OUT/cub_pairs.txt $OUT/cub_event.txt > $TWOPHASE_CUB_SORT_RESULTS
grep -E " (20|24|26|27) " $TWOPHASE_CUB_SORT_RESULTS >> $log
for k in $kinds; do
  for b in $bins; do
    TWOPHASE_BENCH_SIZES=20,24,27 TWOPHASE_BENCH_KIND=$k timeout 100 .gpu/$b > $OUT/${b}_${k//+/_}.log 2>&1
    echo "$b $k rc $?" >> $log
    grep -hE "^\| twophase \| [a-z0-9+-]+ \||panicked" $OUT/${b}_${k//+/_}.log | sed "s/^/$b /" >> $log
  done
done
for b in bench_old bench_new2; do
  TWOPHASE_BENCH_KIND=event24-user timeout 100 .gpu/$b > $OUT/${b}_event.log 2>&1
  echo "$b event24-user rc $?" >> $log
  grep -hE "^\| twophase \| [a-z0-9+-]+ \||panicked" $OUT/${b}_event.log | sed "s/^/$b /" >> $log
done
cat $log
