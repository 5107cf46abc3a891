# H200: the merge's tile loads through L2 only (__ldcg in load_tile; bench_cg, not committed) against the same build's loads (bench_gpu_merge, as in d103), CUB's DeviceMerge in the same command.
cd "$(dirname "$0")/.."
source .gpu/env.sh
log=$OUT/d104.log
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $log
nvcc -O3 -std=c++17 -arch=sm_90 .gpu/cub_merge.cu -o /tmp/cub_merge >> $log 2>&1
/tmp/cub_merge $OUT/cub_merge.txt > $OUT/d104_cub.log 2>&1
grep -E "copy rate|\| cub \| (u32|u64) " $OUT/d104_cub.log >> $log
export TWOPHASE_CUB_RESULTS=$OUT/cub_merge.txt
for b in bench_cg bench_gpu_merge; do
  echo "== $b" >> $log
  timeout 150 .gpu/$b > $OUT/d104_$b.log 2>&1
  echo "rc $?" >> $log
  grep -E "^\| twophase \| (u32|u64) \||^sweep (u32|u64)|panicked|copy rate" $OUT/d104_$b.log >> $log
done
cat $log
