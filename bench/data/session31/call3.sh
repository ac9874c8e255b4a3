#!/bin/bash
# Session 31, call 3 (H200): the descent path's 64-bit bits, 7 (new) against 8 (d8, session 30's) and
# 6 (d6), alternating over the descent-path batches, three rounds; ncu of the new build's 2^23 calls.
set -u
tar -xJf .device-bin.tar.xz || { echo "tar failed"; exit 1; }
source .device-deps/setup.sh > /dev/null
SECONDS=0
nvidia-smi --query-gpu=name,memory.total,clocks.max.sm,driver_version --format=csv,noheader > $OUT/device.txt
cat .device-bin/.prebuilt >> $OUT/device.txt; cat $OUT/device.txt
mkdir -p $OUT/logs
logs=()
for w in new d8 d6 new d8 d6 new d8 d6; do
  B=.device-bin/bench/bench_versus; [ $w != new ] && B=.device-variants/bench_versus_$w
  OMP_NUM_THREADS=16 timeout 60 $B --only batch --batches 22,23,24 --out-dir /tmp/b-$w > $OUT/logs/b-$w-$SECONDS.log 2>&1
  echo "## batch $w rc $? ($SECONDS s)"; logs+=($(ls -t $OUT/logs/b-$w-*.log | head -1))
done
python3 bench/data/session13/summ.py "${logs[@]}"
python3 bench/data/session31/pos.py "${logs[@]}"
OMP_NUM_THREADS=16 timeout 150 ncu --cache-control none --clock-control none --csv \
  -k regex:"hist1|scan1|pass_kernel|lookup_multi|bsearch_kernel|Onesweep|RadixSortHistogram|hash_lookup" \
  --metrics gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,dram__sectors_read.sum \
  .device-bin/bench/bench_versus --only batch --batches 23 --runs 1 --out-dir /tmp/nc > $OUT/logs/ncu.csv 2> $OUT/logs/ncu-err.txt
echo "## ncu rc $? ($SECONDS s) $(wc -l < $OUT/logs/ncu.csv) lines"; tail -2 $OUT/logs/ncu-err.txt
gzip $OUT/logs/ncu.csv
tar -czf $OUT/logs.tar.gz -C $OUT logs && rm -rf $OUT/logs
echo "# elapsed $SECONDS s"
