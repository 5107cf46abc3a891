# H200: where the load-balancing tile's warps stall (HEAD): warp states, occupancy and the sampled stall locations.
cd "$(dirname "$0")/.."
source .gpu/env.sh
log=$OUT/d93.log
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $log
TWOPHASE_BENCH_SHIPPED_ONLY=1 timeout 200 ncu --clock-control none --section WarpStateStats --section SourceCounters --section Occupancy --import-source no --print-details all -k regex:twophase_lbs_tile -s 3 -c 1 .gpu/bench_head_gpu_search > $OUT/d93_lbs.txt 2>&1
echo "rc $?" >> $log
timeout 200 ncu --clock-control none --metrics smsp__pcsamp_warps_issue_stalled_long_scoreboard,smsp__pcsamp_warps_issue_stalled_barrier,smsp__pcsamp_warps_issue_stalled_short_scoreboard,smsp__pcsamp_warps_issue_stalled_mio_throttle,smsp__pcsamp_warps_issue_stalled_selected,smsp__pcsamp_warps_issue_stalled_not_selected,smsp__pcsamp_warps_issue_stalled_wait,smsp__pcsamp_warps_issue_stalled_lg_throttle,smsp__pcsamp_warps_issue_stalled_math_pipe_throttle,smsp__pcsamp_warps_issue_stalled_dispatch_stall,smsp__pcsamp_warps_issue_stalled_no_instructions,smsp__pcsamp_warps_issue_stalled_drain,smsp__pcsamp_warps_issue_stalled_membar -k regex:twophase_lbs_tile -s 3 -c 1 env TWOPHASE_BENCH_SHIPPED_ONLY=1 .gpu/bench_head_gpu_search > $OUT/d93_samples.txt 2>&1
echo "rc $?" >> $log
grep -E "Stall|stall|Warp Cycles|Occupancy|Active Warps|Eligible|Block Limit" $OUT/d93_lbs.txt | head -60 >> $log
grep -E "pcsamp" $OUT/d93_samples.txt >> $log
cat $log
