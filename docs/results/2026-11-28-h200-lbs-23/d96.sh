# H200: the load-balancing tile kernels with their launch bound's minimum blocks set to 7 and 6 (36 and 40 registers), swept.
cd "$(dirname "$0")/.."
source .gpu/env.sh
log=$OUT/d96.log
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $log
for b in bench_mb7 bench_mb6; do
  echo "== $b" >> $log
  timeout 200 .gpu/$b > $OUT/d96_$b.txt 2>&1
  grep -E "copy rate|load-balancing search.*x[0-9]+( |$)|load-balancing.*shipped\)|interval expand|summary" $OUT/d96_$b.txt | grep -v lanes >> $log
done
cat $log
