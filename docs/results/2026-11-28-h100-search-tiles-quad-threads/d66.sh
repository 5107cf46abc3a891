# H100: Nsight Compute's full set with SASS counters on one sorted search tile launch (shipped 256 x 23), details and the SASS page exported.
cd "$(dirname "$0")/.."
source .gpu/env.sh
log=$OUT/d66.log
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $log
timeout 150 ncu --clock-control none --set full --import-source no -k regex:twophase_search_tile --launch-skip 4 --launch-count 1 --kill yes -o /tmp/st .gpu/bench_gpu_search > /tmp/st.out 2>&1
echo "ncu rc $?" >> $log
ncu -i /tmp/st.ncu-rep --page details --csv > $OUT/d66_details.csv 2>/dev/null
ncu -i /tmp/st.ncu-rep --page source --print-source sass --csv > $OUT/d66_sass.csv 2>/dev/null
ls -la $OUT >> $log
cat $log
