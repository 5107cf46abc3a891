# H200: the shipped 256 x 23 load-balancing tile and interval expand tile under Nsight Compute: speed of light, occupancy, warp states and sampled stalls.
cd "$(dirname "$0")/.."
source .gpu/env.sh
log=$OUT/d100.log
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $log
stalls=smsp__pcsamp_warps_issue_stalled_long_scoreboard,smsp__pcsamp_warps_issue_stalled_barrier,smsp__pcsamp_warps_issue_stalled_short_scoreboard,smsp__pcsamp_warps_issue_stalled_mio_throttle,smsp__pcsamp_warps_issue_stalled_selected,smsp__pcsamp_warps_issue_stalled_not_selected,smsp__pcsamp_warps_issue_stalled_wait,smsp__pcsamp_warps_issue_stalled_lg_throttle,smsp__pcsamp_warps_issue_stalled_math_pipe_throttle,smsp__pcsamp_warps_issue_stalled_dispatch_stall,smsp__pcsamp_warps_issue_stalled_no_instructions,smsp__pcsamp_warps_issue_stalled_drain,smsp__pcsamp_warps_issue_stalled_membar
for k in twophase_lbs_tile twophase_interval_expand; do
  echo "== $k" >> $log
  timeout 250 ncu --clock-control none --section SpeedOfLight --section Occupancy --section WarpStateStats --metrics $stalls -k regex:$k -s 3 -c 1 .gpu/bench_gpu_search > $OUT/d100_$k.txt 2>&1
  echo "rc $?" >> $log
  grep -E "Duration|DRAM Throughput|Memory Throughput|Compute \(SM\)|Achieved Occupancy|Theoretical Occupancy|Registers Per|Block Limit|Warp Cycles Per Issued|pcsamp" $OUT/d100_$k.txt >> $log
done
cat $log
