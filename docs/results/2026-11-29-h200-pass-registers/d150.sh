# H200: the tests at ba12eb8: test_gpu_mergesort in full, and the adversarial host sorts under
# inconsistent comparators and of floats under `<` (shipped tunings at every bound).
cd "$(dirname "$0")/.."
source .gpu/env.sh
log=$OUT/d150.log
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $log
(timeout 280 .gpu/test_adversarial --include-ignored inconsistent_comparators_sorts_keep floats_partial_order_sorts > $OUT/test_adversarial.log 2>&1; echo "test_adversarial rc $?" >> $log) &
timeout 280 .gpu/test_gpu_mergesort --include-ignored > $OUT/test_gpu_mergesort.log 2>&1; echo "test_gpu_mergesort rc $?" >> $log
wait
grep -hE "^test |^test result|panicked" $OUT/test_gpu_mergesort.log $OUT/test_adversarial.log >> $log
cat $log
