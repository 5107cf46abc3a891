# H100: the partition lab (scripts/partition_lab): merge-path partitions of 2^26 + 2^26 u32 by binary search against a search narrowed on gathered samples.
cd "$(dirname "$0")/.."
source .gpu/env.sh
log=$OUT/d61.log
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $log
nvcc -O3 -std=c++17 -arch=sm_90 -o /tmp/partition_lab .gpu/partition_lab.cu >> $log 2>&1 && timeout 200 /tmp/partition_lab >> $log 2>&1
echo "rc $?" >> $log
cat $log
