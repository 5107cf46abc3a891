# H200: shared-memory wavefronts and bank conflicts of the load-balancing, interval expand and sorted search tiles (HEAD).
cd "$(dirname "$0")/.."
source .gpu/env.sh
log=$OUT/d88.log
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $log
M="l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum,smsp__inst_executed_op_shared_ld.sum,smsp__inst_executed_op_shared_st.sum,smsp__inst_executed_op_global_ld.sum,smsp__inst_executed_op_global_st.sum,l1tex__data_pipe_lsu_wavefronts_mem_global_op_ld.sum,l1tex__data_pipe_lsu_wavefronts_mem_global_op_st.sum,l1tex__data_pipe_lsu_wavefronts.sum,l1tex__lsu_writeback_active.sum,smsp__inst_executed.sum,gpu__time_duration.sum,l1tex__throughput.avg.pct_of_peak_sustained_elapsed,l1tex__data_pipe_lsu_wavefronts.avg.pct_of_peak_sustained_elapsed,l1tex__lsu_writeback_active.avg.pct_of_peak_sustained_elapsed,l1tex__data_bank_reads.avg.pct_of_peak_sustained_elapsed,l1tex__data_bank_writes.avg.pct_of_peak_sustained_elapsed"
for k in twophase_lbs_tile twophase_interval_expand twophase_search_tile; do
  echo "== $k" >> $log
  TWOPHASE_BENCH_SHIPPED_ONLY=1 timeout 150 ncu --clock-control none --metrics $M -k regex:$k -s 3 -c 1 .gpu/bench_gpu_search > $OUT/d88_$k.txt 2>&1
  echo "rc $?" >> $log
  grep -E "^\s+(l1tex|smsp|gpu)__" $OUT/d88_$k.txt >> $log
done
cat $log
