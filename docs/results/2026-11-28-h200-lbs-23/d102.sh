# H200: the benchmark at HEAD (its load-balancing cases built by one constructor), once: the shipped rows and the sweeps.
cd "$(dirname "$0")/.."
source .gpu/env.sh
log=$OUT/d102.log
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $log
timeout 240 .gpu/bench_gpu_search > $OUT/d102.txt 2>&1
echo "rc $?" >> $log
grep -E "copy rate|load-balancing|interval expand|sorted search|summary" $OUT/d102.txt | grep -v lanes >> $log
cat $log
