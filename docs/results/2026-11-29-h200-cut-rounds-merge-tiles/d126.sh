# H200: the four-way cuts' probe rounds with fewer instructions (bench_new) against HEAD's
# (bench_old): per kernel at 2^24 (Nsight Compute), then the sorts alternating with CUB's merge
# sort in the same command; and the u32 merge's narrow tile shapes at 2^20-2^27.
cd "$(dirname "$0")/.."
source .gpu/env.sh
log=$OUT/d126.log
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $log
(nvcc -O3 -std=c++17 -arch=sm_90 .gpu/cub_mergesort.cu -o /tmp/cub_mergesort > /tmp/cub_build.log 2>&1 || echo "nvcc sort failed" >> $log
 nvcc -O3 -std=c++17 -arch=sm_90 .gpu/cub_merge.cu -o /tmp/cub_merge > /tmp/cub_build2.log 2>&1 || echo "nvcc merge failed" >> $log) &
export TWOPHASE_BENCH_SHIPPED_ONLY=1
for b in bench_old bench_new; do
  echo "== ncu $b u32 2^24" >> $log
  TWOPHASE_BENCH_KIND=u32 TWOPHASE_PROFILE_LOG2N=24 timeout 80 ncu --clock-control none --metrics gpu__time_duration.sum,smsp__inst_executed.sum --csv \
    -k regex:"twophase_mergesort_(quad_)?partition" .gpu/$b --profile > $OUT/ncu_$b.csv 2> $OUT/ncu_$b.err
  echo "ncu rc $?" >> $log
  python3 - $OUT/ncu_$b.csv >> $log <<'PY'
import csv, sys, collections
lines = open(sys.argv[1]).read().splitlines()
start = next(i for i, l in enumerate(lines) if l.startswith('"ID"'))
rows = collections.OrderedDict()
for r in csv.DictReader(lines[start:]):
    rows.setdefault((int(r["ID"]), r["Kernel Name"]), {})[r["Metric Name"]] = r["Metric Value"]
ids = sorted(rows)
last = ids[-9:]  # the profiled sort's partitions: two-way, then samples and cuts of four passes
for k in last:
    m = rows[k]
    print(k[0], k[1][:36], "us", m.get("gpu__time_duration.sum"), "warp insts", m.get("smsp__inst_executed.sum"))
PY
done
wait
export TWOPHASE_CUB_SORT_RESULTS=$OUT/cub_mergesort.txt
for kind in u32 u64 u32-top8; do
  TWOPHASE_BENCH_KIND=$kind timeout 60 /tmp/cub_mergesort $OUT/cub_$kind.txt >> $log 2>&1
done
cat $OUT/cub_u32.txt $OUT/cub_u64.txt $OUT/cub_u32-top8.txt > $TWOPHASE_CUB_SORT_RESULTS 2>/dev/null
export TWOPHASE_BENCH_SIZES=22,24,27
for round in 1 2; do
  for b in bench_old bench_new; do
    for kind in u32 u64 u32-top8; do
      echo "== round $round $b $kind" >> $log
      TWOPHASE_BENCH_KIND=$kind timeout 100 .gpu/$b > $OUT/d126_b.log 2>&1
      echo "rc $?" >> $log
      grep -E "^\| twophase|panicked|copy rate" $OUT/d126_b.log >> $log
    done
  done
done
unset TWOPHASE_BENCH_SHIPPED_ONLY
echo "== merge shapes" >> $log
timeout 60 /tmp/cub_merge $OUT/cub_merge.txt | grep "u32 " >> $log 2>&1
TWOPHASE_BENCH_KIND=u32 TWOPHASE_CUB_RESULTS=$OUT/cub_merge.txt TWOPHASE_BENCH_SIZES=20,22,24,25,26,27 timeout 150 .gpu/bench_gpu_merge > $OUT/d126_merge.log 2>&1
echo "merge rc $?" >> $log
grep -E "^\| twophase|^sweep|panicked|copy rate" $OUT/d126_merge.log >> $log
cat $log
