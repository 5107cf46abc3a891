# H200: how evenly the SMs are busy in the u32 sort's kernels (Nsight Compute, per-SM active cycles).
cd "$(dirname "$0")/.."
source .gpu/env.sh
log=$OUT/d119.log
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $log
export TWOPHASE_BENCH_SHIPPED_ONLY=1 TWOPHASE_BENCH_KIND=u32
M=gpu__time_duration.sum,sm__cycles_active.min,sm__cycles_active.max,sm__cycles_active.avg,sm__cycles_elapsed.max,smsp__warps_launched.sum,sm__ctas_launched.min,sm__ctas_launched.max
for n in 24 27; do
  echo "== ncu 2^$n sort 3" >> $log
  TWOPHASE_PROFILE_LOG2N=$n timeout 200 ncu --clock-control none --metrics $M --csv -k "regex:twophase_(blocksort|mergesort)" \
    --launch-skip $([ $n = 24 ] && echo 45 || echo 57) --launch-count $([ $n = 24 ] && echo 15 || echo 19) \
    .gpu/bench_gpu_mergesort --profile > $OUT/ncu_$n.csv 2> $OUT/ncu_$n.err
  echo "ncu rc $?" >> $log
  python3 - $OUT/ncu_$n.csv >> $log <<'PY'
import csv, sys
lines = open(sys.argv[1]).read().splitlines()
start = next(i for i, l in enumerate(lines) if l.startswith('"ID"'))
rows = {}
for r in csv.DictReader(lines[start:]):
    k = (r["ID"], r["Kernel Name"], r["Grid Size"], r["Block Size"])
    rows.setdefault(k, {})[r["Metric Name"]] = r["Metric Value"] + " " + r["Metric Unit"]
for k, m in rows.items():
    print(k[0], k[1][:40], k[2], k[3], " | ".join(f"{n.split('.')[0].replace('sm__','')}.{n.split('.')[-1]}={v}" for n, v in sorted(m.items())))
PY
done
cat $log
