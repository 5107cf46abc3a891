# H200: the load-balancing search and interval expand swept over launch shapes (16-bit tile), twice.
cd "$(dirname "$0")/.."
source .gpu/env.sh
log=$OUT/d95.log
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $log
for r in 1 2; do
  echo "== bench_gpu_search run $r" >> $log
  timeout 200 .gpu/bench_gpu_search > $OUT/d95_$r.txt 2>&1
  grep -E "copy rate|load-balancing|interval expand|summary" $OUT/d95_$r.txt >> $log
done
cat $log
