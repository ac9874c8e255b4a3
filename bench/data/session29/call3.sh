#!/bin/bash
# Session 29, call 3 (H200): the prefetch without a first bucket the tile before began (new =
# .device-bin, 0f72aca), against pf1 (a93b67c), nopf (a93b67c without the prefetch) and wide0 (new,
# unordered lookups on the tree's 16-bit plan), alternating over batches of 2^23, 2^24, 2^26; test_gpu
# on new; ncu's speed of light of the staged search at 2^24.
set -u
tar -xJf .device-bin.tar.xz && source .device-deps/setup.sh > /dev/null
SECONDS=0
nvidia-smi --query-gpu=name,memory.total,clocks.max.sm,driver_version --format=csv,noheader > $OUT/device.txt
cat .device-bin/.prebuilt >> $OUT/device.txt; cat $OUT/device.txt
mkdir -p $OUT/logs
(cd .device-bin && timeout 300 tests/test_gpu > $OUT/logs/test_gpu.log 2>&1; echo "## test_gpu rc $? ($SECONDS s) $(grep -E '^\[  (PASSED|FAILED)' $OUT/logs/test_gpu.log | tail -1)")
blogs=()
for w in new pf1 nopf wide0 new pf1 nopf wide0; do
  [ $SECONDS -gt 330 ] && break
  B=.device-variants/bench_versus_$w; [ $w = new ] && B=.device-bin/bench/bench_versus
  OMP_NUM_THREADS=16 timeout 60 $B --only batch --batches 23,24,26 --out-dir /tmp/b-$w > $OUT/logs/b-$w-$SECONDS.log 2>&1
  echo "## batch $w rc $? ($SECONDS s)"; blogs+=($(ls -t $OUT/logs/b-$w-*.log | head -1))
done
python3 bench/data/session13/summ.py "${blogs[@]}"
OMP_NUM_THREADS=16 timeout 120 ncu --cache-control none --clock-control none -k regex:search_kernel -c 1 --section SpeedOfLight \
  .device-bin/bench/bench_versus --only batch --batches 24 --runs 1 --out-dir /tmp/nc > $OUT/logs/ncu.txt 2> $OUT/logs/ncu-err.txt
echo "## ncu rc $? ($SECONDS s)"
grep -E "search_kernel|Duration|Throughput" $OUT/logs/ncu.txt | head -12
tar -czf $OUT/logs.tar.gz -C $OUT logs && rm -rf $OUT/logs
echo "# elapsed $SECONDS s"
