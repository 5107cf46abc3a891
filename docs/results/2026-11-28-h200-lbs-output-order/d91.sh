# H200: LSU, L2 and DRAM counters of the load-balancing tile, HEAD against output-order slots (5 rounds in flight).
cd "$(dirname "$0")/.."
source .gpu/env.sh
log=$OUT/d91.log
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $log
M="gpu__time_duration.sum,l1tex__data_pipe_lsu_wavefronts.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum,l1tex__t_requests_pipe_lsu_mem_global_op_st.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum,l1tex__m_xbar2l1tex_read_sectors.sum,l1tex__m_l1tex2xbar_write_sectors.sum,lts__t_sectors_op_write.sum,lts__t_sectors_op_read.sum,dram__bytes_read.sum,dram__bytes_write.sum,smsp__inst_executed.sum,l1tex__throughput.avg.pct_of_peak_sustained_elapsed,dram__throughput.avg.pct_of_peak_sustained_elapsed,lts__throughput.avg.pct_of_peak_sustained_elapsed,sm__throughput.avg.pct_of_peak_sustained_elapsed,smsp__warp_issue_stalled_lg_throttle_per_warp_active.pct,smsp__warp_issue_stalled_mio_throttle_per_warp_active.pct,smsp__warp_issue_stalled_long_scoreboard_per_warp_active.pct,smsp__warp_issue_stalled_short_scoreboard_per_warp_active.pct,smsp__warp_issue_stalled_barrier_per_warp_active.pct"
for b in bench_head_gpu_search bench_gpu_search; do
  echo "== $b" >> $log
  TWOPHASE_BENCH_SHIPPED_ONLY=1 timeout 150 ncu --clock-control none --metrics $M -k regex:twophase_lbs_tile -s 3 -c 1 .gpu/$b > $OUT/d91_$b.txt 2>&1
  echo "rc $?" >> $log
  grep -E "^\s+(l1tex|smsp|gpu|lts|dram|sm)__" $OUT/d91_$b.txt >> $log
done
cat $log
