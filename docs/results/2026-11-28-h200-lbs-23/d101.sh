# H200: interval expand with its segment values staged in the starts' shared memory, against b610ef4, once each; tests, sanitizers.
cd "$(dirname "$0")/.."
source .gpu/env.sh
log=$OUT/d101.log
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $log
for r in 1; do
  for b in bench_head_gpu_search bench_gpu_search; do
    echo "== $b run $r" >> $log
    timeout 240 .gpu/$b > $OUT/d101_${b}_$r.txt 2>&1
    grep -E "copy rate|shipped\)|summary" $OUT/d101_${b}_$r.txt >> $log
  done
done
t0=$SECONDS
.gpu/test_gpu_search --include-ignored --test-threads=1 > $OUT/d101_test_search.txt 2>&1; echo "test_gpu_search rc $? $((SECONDS-t0))s: $(grep 'test result' $OUT/d101_test_search.txt)" >> $log
t0=$SECONDS
.gpu/test_adversarial --include-ignored --test-threads=1 scan load_balance interval bad_positions > $OUT/d101_test_adv.txt 2>&1; echo "test_adversarial rc $? $((SECONDS-t0))s: $(grep 'test result' $OUT/d101_test_adv.txt)" >> $log
grep "^test " $OUT/d101_test_adv.txt $OUT/d101_test_search.txt >> $log
t0=$SECONDS
.gpu/test_gpu_graph --include-ignored --test-threads=1 > $OUT/d101_test_graph.txt 2>&1; echo "test_gpu_graph rc $? $((SECONDS-t0))s: $(grep 'test result' $OUT/d101_test_graph.txt)" >> $log
for tool in racecheck synccheck memcheck; do
  tests="tiles_load_balance"; [ $tool = memcheck ] && tests="tiles_load_balance bad_scans bad_positions"
  t0=$SECONDS
  TWOPHASE_TEST_SCALE=small timeout 120 compute-sanitizer --tool $tool --error-exitcode 1 .gpu/test_adversarial --include-ignored --test-threads=1 $tests > $OUT/d101_$tool.txt 2>&1
  echo "$tool rc $? $((SECONDS-t0))s: $(grep -E 'SUMMARY' $OUT/d101_$tool.txt | tail -1) $(grep 'test result' $OUT/d101_$tool.txt)" >> $log
done
t0=$SECONDS
TWOPHASE_TEST_SCALE=small timeout 150 compute-sanitizer --tool memcheck --error-exitcode 1 .gpu/test_gpu_search --include-ignored --test-threads=1 --skip 2_pow_2 --skip past_ > $OUT/d101_memcheck_search.txt 2>&1
echo "memcheck test_gpu_search rc $? $((SECONDS-t0))s: $(grep -E 'SUMMARY' $OUT/d101_memcheck_search.txt | tail -1) $(grep 'test result' $OUT/d101_memcheck_search.txt)" >> $log
cat $log
