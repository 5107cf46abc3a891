# 2^20 rows only, six rounds, the order alternating (base first in odd rounds): new = exp/segsort-own-batches 3296bea, base = main b7ff41b.
source .gpu/env.sh
cd .gpu
for round in 1 2 3 4 5 6; do
  if [ $((round % 2)) = 1 ]; then order="base new"; else order="new base"; fi
  for b in $order; do
    TWOPHASE_BENCH_LOG2N=20 timeout 100 ./bench_${b}_gpu_segmented_sort 2>&1 | grep -E "^\| seg" | sed "s/^/$b r$round: /" >> $OUT/ab20.log
  done
done
python3 - $OUT/ab20.log <<'PY'
import sys, statistics, collections
rows = collections.defaultdict(list)
for line in open(sys.argv[1]):
    who, rest = line.split(':', 1)
    b = who.split()[0]; f = [x.strip() for x in rest.split('|')]
    rows[(f[1], f[2], b)].append(float(f[5]))
for (kind, dist, b) in sorted(rows):
    if b != 'base': continue
    base = rows[(kind, dist, 'base')]; new = rows[(kind, dist, 'new')]
    mb, mn = statistics.median(base), statistics.median(new)
    print(f"{kind:9s} {dist:12s} base {mb:.4f} new {mn:.4f} {100*(mn/mb-1):+.1f}%  base {base} new {new}")
PY
