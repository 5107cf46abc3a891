# H200: load-balancing tile with output-order slots, predicated hand-out from per-thread pointers: tests, sanitizers, then HEAD vs change benches alternating.
cd "$(dirname "$0")/.."
source .gpu/env.sh
log=$OUT/d92.log
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $log
t0=$SECONDS
.gpu/test_gpu_search --include-ignored --test-threads=1 > $OUT/d92_test_search.txt 2>&1; echo "test_gpu_search rc $? $((SECONDS-t0))s: $(grep 'test result' $OUT/d92_test_search.txt)" >> $log
t0=$SECONDS
.gpu/test_adversarial --include-ignored --test-threads=1 scan load_balance interval > $OUT/d92_test_adv.txt 2>&1; echo "test_adversarial rc $? $((SECONDS-t0))s: $(grep 'test result' $OUT/d92_test_adv.txt)" >> $log
grep "^test " $OUT/d92_test_adv.txt $OUT/d92_test_search.txt >> $log
t0=$SECONDS
.gpu/test_gpu_graph --include-ignored --test-threads=1 > $OUT/d92_test_graph.txt 2>&1; echo "test_gpu_graph rc $? $((SECONDS-t0))s: $(grep 'test result' $OUT/d92_test_graph.txt)" >> $log
for tool in memcheck; do
  t0=$SECONDS
  TWOPHASE_TEST_SCALE=small timeout 120 compute-sanitizer --tool $tool --error-exitcode 1 .gpu/test_adversarial --include-ignored --test-threads=1 tiles_load_balance bad_scans > $OUT/d92_$tool.txt 2>&1
  echo "$tool rc $? $((SECONDS-t0))s: $(grep -E 'SUMMARY' $OUT/d92_$tool.txt | tail -1) $(grep 'test result' $OUT/d92_$tool.txt)" >> $log
done
t0=$SECONDS
TWOPHASE_TEST_SCALE=small timeout 150 compute-sanitizer --tool memcheck --error-exitcode 1 .gpu/test_gpu_search --include-ignored --test-threads=1 --skip 2_pow_2 --skip past_ > $OUT/d92_memcheck_search.txt 2>&1
echo "memcheck test_gpu_search rc $? $((SECONDS-t0))s: $(grep -E 'SUMMARY' $OUT/d92_memcheck_search.txt | tail -1) $(grep 'test result' $OUT/d92_memcheck_search.txt)" >> $log
for r in 1 2; do
  for b in bench_head_gpu_search bench_gpu_search; do
    echo "== $b run $r" >> $log
    TWOPHASE_BENCH_SHIPPED_ONLY=1 timeout 120 .gpu/$b > $OUT/d92_${b}_$r.txt 2>&1
    grep -E "copy rate|shipped\)|interval expand|summary" $OUT/d92_${b}_$r.txt >> $log
  done
done
M="gpu__time_duration.sum,smsp__inst_executed.sum,l1tex__data_pipe_lsu_wavefronts.sum,l1tex__throughput.avg.pct_of_peak_sustained_elapsed,sm__throughput.avg.pct_of_peak_sustained_elapsed,dram__throughput.avg.pct_of_peak_sustained_elapsed"
for k in twophase_lbs_tile twophase_interval_expand; do
  echo "== ncu $k" >> $log
  TWOPHASE_BENCH_SHIPPED_ONLY=1 timeout 100 ncu --clock-control none --metrics $M -k regex:$k -s 3 -c 1 .gpu/bench_gpu_search > $OUT/d92_ncu_$k.txt 2>&1
  grep -E "^\s+(l1tex|smsp|gpu|dram|sm)__" $OUT/d92_ncu_$k.txt >> $log
done
cat $log
