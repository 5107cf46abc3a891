# H200: the four-way tile's partial last tile first. SASS of the shipped u32 program's four-way tile
# (where its stack is used); per-SM active cycles of the new build at 2^24; then HEAD's benchmark
# (bench_gpu_mergesort) and the new one (bench_new) alternating, CUB merge sort in the same command.
cd "$(dirname "$0")/.."
source .gpu/env.sh
log=$OUT/d120.log
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $log
(nvcc -O3 -std=c++17 -arch=sm_90 .gpu/cub_mergesort.cu -o /tmp/cub_mergesort > /tmp/cub_build.log 2>&1 || echo "nvcc failed" >> $log) &
cuobjdump -sass -fun twophase_mergesort_quad_tile .gpu/quad.cubin > $OUT/quad_tile.sass 2>&1
echo "quad tile SASS lines $(wc -l < $OUT/quad_tile.sass), STL $(grep -c STL $OUT/quad_tile.sass), LDL $(grep -c LDL $OUT/quad_tile.sass)" >> $log
export TWOPHASE_BENCH_SHIPPED_ONLY=1
M=gpu__time_duration.sum,sm__cycles_active.min,sm__cycles_active.max,sm__cycles_active.avg,sm__cycles_elapsed.max
for b in bench_gpu_mergesort bench_new; do
  echo "== ncu $b u32 2^24 sort 3" >> $log
  TWOPHASE_BENCH_KIND=u32 TWOPHASE_PROFILE_LOG2N=24 timeout 100 ncu --clock-control none --metrics $M --csv -k "regex:quad_tile" \
    --launch-skip 12 --launch-count 4 .gpu/$b --profile > $OUT/ncu_$b.csv 2> $OUT/ncu_$b.err
  echo "ncu rc $?" >> $log
  python3 - $OUT/ncu_$b.csv >> $log <<'PY'
import csv, sys
lines = open(sys.argv[1]).read().splitlines()
start = next(i for i, l in enumerate(lines) if l.startswith('"ID"'))
rows = {}
for r in csv.DictReader(lines[start:]):
    rows.setdefault((r["ID"], r["Kernel Name"]), {})[r["Metric Name"]] = r["Metric Value"]
for k, m in rows.items():
    print(k[0], k[1][:30], " ".join(f"{n}={v}" for n, v in sorted(m.items())))
PY
done
wait
export TWOPHASE_CUB_SORT_RESULTS=$OUT/cub_mergesort.txt
for kind in u32 u64 u32-pairs; do
  TWOPHASE_BENCH_KIND=$kind timeout 100 /tmp/cub_mergesort $OUT/cub_$kind.txt >> $log 2>&1
done
cat $OUT/cub_u32.txt $OUT/cub_u64.txt $OUT/cub_u32-pairs.txt > $TWOPHASE_CUB_SORT_RESULTS 2>/dev/null
export TWOPHASE_BENCH_SIZES=20,22,24,27
for round in 1 2; do
  for b in bench_gpu_mergesort bench_new; do
    for kind in u32 u64 u32-pairs; do
      echo "== round $round $b $kind" >> $log
      TWOPHASE_BENCH_KIND=$kind timeout 100 .gpu/$b > $OUT/d120_b.log 2>&1
      echo "rc $?" >> $log
      grep -E "^\| twophase|panicked|copy rate" $OUT/d120_b.log >> $log
    done
  done
done
cat $log
