# H200: per-kernel time (Nsight Compute) at 2^24 of the user-comparator sorts with the partition kernels' cross-block check removed (check_pairs_across_blocks returns at once: a timing build, bench_nocheck, not committed) beside the shipped build (bench_gpu_mergesort, as in d107).
cd "$(dirname "$0")/.."
source .gpu/env.sh
log=$OUT/d108.log
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $log
for b in bench_nocheck bench_gpu_mergesort; do
  for kn in u32-user:24 u32-top8:24; do
    kind=${kn%%:*}; n=${kn##*:}
    echo "== $b $kind 2^$n" >> $log
    TWOPHASE_BENCH_SHIPPED_ONLY=1 TWOPHASE_BENCH_KIND=$kind TWOPHASE_PROFILE_LOG2N=$n timeout 100 \
      ncu --clock-control none --metrics gpu__time_duration.sum --csv .gpu/$b --profile > $OUT/ncu_${b}_${kind}_$n.csv 2> $OUT/ncu_${b}_${kind}_$n.err
    echo "ncu rc $?" >> $log
    python3 .gpu/ncu_mergesort.py $OUT/ncu_${b}_${kind}_$n.csv >> $log 2>&1
  done
done
cat $log
