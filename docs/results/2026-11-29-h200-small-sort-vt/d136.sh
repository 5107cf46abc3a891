# H200: the other GPU test binaries at 8525f36 (small sorts at a shorter VT), side by side: the
# segmented sort (its one-segment path is the mergesort), sort across handles (one device),
# graph capture, recovery, comparator, search, merge and the textbook variants.
cd "$(dirname "$0")/.."
source .gpu/env.sh
log=$OUT/d136.log
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $log
for t in gpu_segmented_sort gpu_sharded gpu_graph gpu_recovery gpu_comparator gpu_search gpu_merge gpu_variants; do
  timeout 520 .gpu/test_$t --include-ignored > $OUT/test_$t.log 2>&1 &
done
wait
for t in gpu_segmented_sort gpu_sharded gpu_graph gpu_recovery gpu_comparator gpu_search gpu_merge gpu_variants; do
  echo "-- $t" >> $log; grep -E "^test result|panicked|FAILED|failed" $OUT/test_$t.log | head -8 >> $log
done
cd $OUT && tar czf /tmp/d136.tgz . && mv /tmp/d136.tgz $OUT/all.tgz
cat $log
