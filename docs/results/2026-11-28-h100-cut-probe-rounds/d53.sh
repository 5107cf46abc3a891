# H100: where the four-way cut kernel stalls at 2^24 (u32, u64): Nsight Compute full set with SASS source counters.
cd "$(dirname "$0")/.."
source .gpu/env.sh
log=$OUT/d53.log
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $log
for kind in u32 u64; do
  TWOPHASE_BENCH_SHIPPED_ONLY=1 TWOPHASE_BENCH_KIND=$kind TWOPHASE_PROFILE_LOG2N=24 timeout 250 \
    ncu --set full --import-source no -k regex:quad_partition --launch-skip 8 --launch-count 2 -f -o /tmp/qp_$kind \
    .gpu/bench_gpu_mergesort --profile > $OUT/d53_${kind}_run.log 2>&1
  echo "$kind ncu rc $?" >> $log
  ncu -i /tmp/qp_$kind.ncu-rep --page details --csv > $OUT/qp_${kind}_details.csv 2>&1
  ncu -i /tmp/qp_$kind.ncu-rep --page source --print-source sass --csv > $OUT/qp_${kind}_sass.csv 2>&1
  echo "$kind import rc $?" >> $log
  ls -la $OUT >> $log
done
cat $log
