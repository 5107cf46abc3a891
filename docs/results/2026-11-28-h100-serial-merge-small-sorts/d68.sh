# H100 profile: the u32 block sort (2^24) and four-way tile (2^27) under Nsight Compute's full set, details and SASS pages.
cd "$(dirname "$0")/.."
source .gpu/env.sh
log=$OUT/d68.log
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $log
export TWOPHASE_BENCH_SHIPPED_ONLY=1 TWOPHASE_BENCH_KIND=u32
for spec in "blocksort 24 1" "mergesort_quad_tile 27 6"; do
  set -- $spec
  echo "== ncu full $1 2^$2" >> $log
  TWOPHASE_PROFILE_LOG2N=$2 timeout 200 ncu --clock-control none --set full --import-source no -k regex:twophase_$1 --launch-skip $3 --launch-count 1 --kill yes -o /tmp/p_$1 .gpu/bench_gpu_mergesort --profile > /tmp/p_$1.out 2>&1
  echo "rc $?" >> $log; tail -3 /tmp/p_$1.out >> $log
  ncu -i /tmp/p_$1.ncu-rep --page details --csv > $OUT/d68_$1_details.csv 2>/dev/null
  ncu -i /tmp/p_$1.ncu-rep --page source --print-source sass --csv > $OUT/d68_$1_sass.csv 2>/dev/null
done
ls -la $OUT >> $log
cat $log
