# H200: the load-balancing tile's 32-bit start loads in flight capped at 12 or 8 rounds (against all VT), swept, beside HEAD.
cd "$(dirname "$0")/.."
source .gpu/env.sh
log=$OUT/d98.log
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $log
for b in bench_r12 bench_r8 bench_gpu_search; do
  echo "== $b" >> $log
  timeout 200 .gpu/$b > $OUT/d98_$b.txt 2>&1
  grep -E "copy rate|load-balancing search.*x[0-9]+( |$)|shipped\)|interval expand|summary" $OUT/d98_$b.txt >> $log
done
cat $log
