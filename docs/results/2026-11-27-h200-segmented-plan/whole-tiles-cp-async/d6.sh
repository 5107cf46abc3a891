# Full-size segmented tests, then memcheck, racecheck and synccheck on them (reduced sizes).
source .gpu/env.sh
(cd .gpu && timeout 300 ./test_gpu_segmented_sort --include-ignored 2>&1 | tail -4 | tee $OUT/test_full.log)
timeout 280 bash .gpu/run.sh sanitize memcheck racecheck synccheck test_gpu_segmented_sort 2>&1 | tail -12
cat $OUT/sanitizer_summary.txt
