# H100 profile: the search benchmark's tile and partition kernels (LBS, interval expand, sorted search) under Nsight Compute's sections.
cd "$(dirname "$0")/.."
source .gpu/env.sh
log=$OUT/d60.log
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $log
for k in lbs_partition lbs_tile interval_expand search_partition search_tile; do
  echo "== ncu full $k" >> $log
  timeout 150 ncu --clock-control none --set full --import-source no -k regex:twophase_$k --launch-skip 4 --launch-count 1 --kill yes -o $OUT/full_$k .gpu/bench_gpu_search > $OUT/full_$k.out 2>&1
  echo "rc $?" >> $log
  ncu -i $OUT/full_$k.ncu-rep --page details --csv > $OUT/full_$k.csv 2>/dev/null
  grep -E '"(Duration|DRAM Throughput|Memory Throughput|Compute \(SM\) Throughput|Achieved Occupancy|Theoretical Occupancy|Registers Per Thread|Issue Slots Busy|Executed Ipc Active|No Eligible|Block Limit Registers|Block Limit Shared Mem|Static Shared Memory Per Block|Block Size|Grid Size|Executed Instructions|Elapsed Cycles|L2 Hit Rate|Mem Busy|Max Bandwidth|Warp Cycles Per Issued Instruction|Eligible Warps Per Scheduler|Active Warps Per Scheduler)"' $OUT/full_$k.csv | awk -F'","' '{print $(NF-2)": "$NF" "$(NF-1)}' | tr -d '"' >> $log
done
cat $log
