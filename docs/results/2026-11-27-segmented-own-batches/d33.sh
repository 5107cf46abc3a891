# The compiled-apart batched search, four-way tiles left unsearched (new) against main (base):
# 2^20 six rounds alternating, 2^24 rows and the long rows at 2^24 and 2^25 once; then tests and sanitizers.
source .gpu/env.sh
cd .gpu
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $OUT/tests.log
for round in 1 2 3 4 5 6; do
  if [ $((round % 2)) = 1 ]; then order="base new"; else order="new base"; fi
  for b in $order; do
    TWOPHASE_BENCH_LOG2N=20 timeout 100 ./bench_${b}_gpu_segmented_sort 2>&1 | grep -E "^\| seg" | sed "s/^/$b r$round: /" >> $OUT/ab20.log
  done
done
for l in 24 25; do
  for b in new base; do
    [ $l = 24 ] && TWOPHASE_BENCH_LOG2N=$l timeout 100 ./bench_${b}_gpu_segmented_sort 2>&1 | grep -E "^\| seg|^device" | sed "s/^/$b r1: /" >> $OUT/ab.log
    TWOPHASE_BENCH_LOG2N=$l TWOPHASE_BENCH_LONG=1 timeout 60 ./bench_${b}_gpu_segmented_sort 2>&1 | grep -E "^long" | sed "s/^/$b r1: /" >> $OUT/ab.log
  done
done
python3 - $OUT/ab20.log <<'PY' | tee -a $OUT/ab20.log
import sys, statistics, collections
rows = collections.defaultdict(list)
for line in open(sys.argv[1]):
    who, rest = line.split(':', 1)
    b = who.split()[0]; f = [x.strip() for x in rest.split('|')]
    rows[(f[1], f[2], b)].append(float(f[5]))
print("# medians")
for (kind, dist, b) in sorted(rows):
    if b != 'base': continue
    mb, mn = statistics.median(rows[(kind, dist, 'base')]), statistics.median(rows[(kind, dist, 'new')])
    print(f"{kind:9s} {dist:12s} base {mb:.4f} new {mn:.4f} {100*(mn/mb-1):+.1f}%")
PY
(timeout 150 ./test_gpu_segmented_sort --include-ignored 2>&1 | tail -3; timeout 60 ./test_gpu_graph --include-ignored 2>&1 | tail -2) >> $OUT/tests.log 2>&1
cd ..
timeout 280 bash .gpu/run.sh sanitize memcheck racecheck synccheck test_gpu_segmented_sort > $OUT/sanitize_stdout.txt 2>&1
cat $OUT/tests.log $OUT/sanitizer_summary.txt; grep -v device $OUT/ab.log | cut -d'|' -f1-7 | cut -c1-150
