# H200: the GPU mergesort and segmented-sort tests with the partial tile first, then memcheck
# (the adversarial suite, both test binaries at reduced sizes) and racecheck / synccheck of the tiles.
cd "$(dirname "$0")/.."
source .gpu/env.sh
log=$OUT/d121.log
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $log
for t in test_gpu_mergesort test_gpu_segmented_sort; do
  echo "== $t" >> $log
  timeout 200 .gpu/$t --include-ignored --test-threads=1 > $OUT/$t.log 2>&1
  echo "rc $?" >> $log
  grep -E "^test result|panicked|FAILED|failed" $OUT/$t.log >> $log
done
TWOPHASE_SANITIZE_BUDGET_S=330 bash .gpu/run.sh sanitize memcheck racecheck synccheck test_adversarial test_gpu_mergesort test_gpu_segmented_sort >> $log 2>&1
cat $OUT/sanitizer_summary.txt >> $log
cat $log
