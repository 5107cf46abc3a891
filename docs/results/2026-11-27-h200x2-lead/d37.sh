# Issue 20: memcheck of the sharded tests that lead (NCCL, copy-engine transport as the sanitize mode runs it, small scale), then 2^28 and 2^24 with the lead and without.
cd "$(dirname "$0")/.."
log=$OUT/d37.log
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $log
source .gpu/env.sh
nccl_so=$(python3 -c 'import glob, site
for root in site.getsitepackages():
    for lib in glob.glob(root + "/nvidia/**/libnccl.so.2", recursive=True):
        print(lib); raise SystemExit' 2>/dev/null)
nccl_dir=$(mktemp -d /tmp/nccl.XXXXXX); ln -s "$nccl_so" "$nccl_dir/libnccl.so"
export LD_LIBRARY_PATH=$nccl_dir:$LD_LIBRARY_PATH
for filter in a_sort_that_leads pairs_are_stable; do
  t0=$SECONDS
  NCCL_P2P_USE_CUDA_MEMCPY=1 TWOPHASE_TEST_SCALE=small timeout 120 /usr/local/cuda/bin/compute-sanitizer --tool memcheck --error-exitcode 1 --report-api-errors no .gpu/test_gpu_sharded --include-ignored --test-threads=1 $filter > $OUT/d37_memcheck_$filter.log 2>&1
  echo "memcheck $filter: rc $? in $((SECONDS - t0)) s; $(grep -E 'ERROR SUMMARY|test result' $OUT/d37_memcheck_$filter.log | tr '\n' ' ')" >> $log
done
for l in 28 24; do
  lim=$([ $l = 28 ] && echo 150 || echo 80)
  TWOPHASE_BENCH_LOG2N=$l TWOPHASE_BENCH_LEAD_OFF=1 timeout $lim bash .gpu/run.sh bench_gpu_sharded > $OUT/d37_bench_$l.log 2>&1
  grep -E "^\| u|^devices|panicked" $OUT/d37_bench_$l.log >> $log
done
cat $log
