# H200: (1) each shipped sort at 2^20 and 2^24 timed as called and with its launches issued behind
# a copy (the host's time before the GPU starts), and the host's program lookup; (2) the block-sort
# VT of u32, u64 and u32 pairs at 2^21 and 2^22 times 1, 1.25, 1.5 and 1.75 (how the pass tiles fill
# the SMs).
cd "$(dirname "$0")/.."
source .gpu/env.sh
log=$OUT/d141.log
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $log
export TWOPHASE_BENCH_SHIPPED_ONLY=1
warm() { TWOPHASE_BENCH_KIND=$1 TWOPHASE_PROFILE_LOG2N=$2 TWOPHASE_BENCH_VTS=$3 timeout 300 .gpu/bench_gpu_mergesort --profile > $OUT/warm_$1_$2.log 2>&1; }
warm u32 21 19,21,23 & warm u32 20 "" & warm u32 24 "" &
warm u64 21 21 & warm u64 20 "" & warm u64 24 "" &
warm u32-pairs 21 9,13 & warm u32-pairs 20 "" & warm u32-pairs 24 "" &
warm f32 20 "" & warm f32 24 "" & warm f64 20 "" & warm f64 24 "" &
warm u32-top8 20 "" & warm u32-top8 24 "" & warm u32-user 20 "" & warm u32-user 24 "" &
wait
for f in $OUT/warm_*.log; do grep -HE "panicked|error" $f | head -3 >> $log; done
echo "== queued" >> $log
for kind in u32 f32 u64 f64 u32-pairs u32-top8 u32-user; do
  TWOPHASE_BENCH_KIND=$kind TWOPHASE_BENCH_SIZES=20,24 TWOPHASE_BENCH_QUEUED=1 timeout 90 .gpu/bench_gpu_mergesort > $OUT/q_$kind.log 2>&1
  echo "$kind rc $?" >> $log
  grep -hE "^\| twophase|^queued|^program lookup|^host enqueue|panicked" $OUT/q_$kind.log >> $log
done
echo "== fill" >> $log
for scale in 1.0 1.25 1.5 1.75; do
  # u32 past 2^22 x 1.45 takes the 1024-thread block sort, whose VT variants are not compiled here.
  sizes=21,22; [ $scale = 1.5 -o $scale = 1.75 ] && sizes=21
  TWOPHASE_BENCH_SCALE=$scale TWOPHASE_BENCH_SIZES=$sizes TWOPHASE_BENCH_KIND=u32 TWOPHASE_BENCH_VTS=17,19,21,23 timeout 90 .gpu/bench_gpu_mergesort > $OUT/f_u32_$scale.log 2>&1; echo "u32 $scale rc $?" >> $log
  TWOPHASE_BENCH_SCALE=$scale TWOPHASE_BENCH_SIZES=21,22 TWOPHASE_BENCH_KIND=u64 TWOPHASE_BENCH_VTS=19,21,23 timeout 90 .gpu/bench_gpu_mergesort > $OUT/f_u64_$scale.log 2>&1; echo "u64 $scale rc $?" >> $log
  TWOPHASE_BENCH_SCALE=$scale TWOPHASE_BENCH_SIZES=21,22 TWOPHASE_BENCH_KIND=u32-pairs TWOPHASE_BENCH_VTS=9,11,13 timeout 90 .gpu/bench_gpu_mergesort > $OUT/f_pairs_$scale.log 2>&1; echo "pairs $scale rc $?" >> $log
  grep -hE "^\| twophase|^vt |panicked" $OUT/f_u32_$scale.log $OUT/f_u64_$scale.log $OUT/f_pairs_$scale.log >> $log
done
cd $OUT && tar czf /tmp/d141.tgz . && mv /tmp/d141.tgz $OUT/all.tgz
cat $log
