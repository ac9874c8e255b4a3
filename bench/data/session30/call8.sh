#!/bin/bash
# Session 30, call 8 (H200): the bound of the two rows below 1.25x on the final code — ncu time, DRAM
# bytes and sectors of every kernel that matters in `bench_versus --only batch --batches 23,24 --runs 1`
# (Harmonia's partition and descent, the sort+bsearch baseline's sort and search, the hash table's
# probe as the random-gather rate of the same run).
set -u
tar -xJf .device-bin.tar.xz || { echo "tar failed"; exit 1; }
source .device-deps/setup.sh > /dev/null
SECONDS=0
nvidia-smi --query-gpu=name,memory.total,clocks.max.sm,driver_version --format=csv,noheader > $OUT/device.txt
cat .device-bin/.prebuilt >> $OUT/device.txt; cat $OUT/device.txt
mkdir -p $OUT/logs
OMP_NUM_THREADS=16 timeout 280 ncu --cache-control none --clock-control none --csv \
  -k regex:"hist1|scan1|pass_kernel|lookup_multi|lookup_kernel|search_kernel|bsearch_kernel|Onesweep|RadixSortHistogram|hash_lookup|restore" \
  --metrics gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,dram__sectors_read.sum \
  .device-bin/bench/bench_versus --only batch --batches 23,24 --runs 1 --out-dir /tmp/nc > $OUT/logs/ncu.csv 2> $OUT/logs/ncu-err.txt
echo "## ncu rc $? ($SECONDS s) $(wc -l < $OUT/logs/ncu.csv) lines"; tail -2 $OUT/logs/ncu-err.txt
gzip $OUT/logs/ncu.csv
tar -czf $OUT/logs.tar.gz -C $OUT logs && rm -rf $OUT/logs
echo "# elapsed $SECONDS s"
