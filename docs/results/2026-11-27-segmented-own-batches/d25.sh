# 2^20: the batch search (new, 16 tiles a batch), the same code with one tile a batch (v1), base.
source .gpu/env.sh
cd .gpu
for round in 1 2; do
  for b in v1 new base; do
    TWOPHASE_BENCH_LOG2N=20 timeout 100 ./bench_${b}_gpu_segmented_sort 2>&1 | grep -E "^\| seg" | sed "s/^/$b r$round: /" >> $OUT/ab20v.log
  done
done
cut -d'|' -f1-7 $OUT/ab20v.log
