# H200: load-balancing hand-out batches (3 or 5 rounds of slots in flight) against HEAD, alternating twice.
cd "$(dirname "$0")/.."
source .gpu/env.sh
log=$OUT/d90.log
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $log
for r in 1 2; do
  for b in bench_head_gpu_search bench_lbs3 bench_lbs5; do
    echo "== $b run $r" >> $log
    TWOPHASE_BENCH_SHIPPED_ONLY=1 timeout 120 .gpu/$b > $OUT/d90_${b}_$r.txt 2>&1
    grep -E "copy rate|256x15 \(shipped\)|interval expand" $OUT/d90_${b}_$r.txt >> $log
  done
done
cat $log
