#!/bin/bash
# Session 30, call 3 (H200): unordered windows of 2 (64-bit) or 1 (32-bit) queries a leaf on the
# staged search (`stg`: -DPSA_DESCENT_MAX_HALVES_PER_LEAF_64=4 -DPSA_DESCENT_MAX_HALVES_PER_LEAF_32=2,
# harmonia/gpu_query.cu only) against the defaults (.device-bin, the descent path), alternating.
set -u
tar -xJf .device-bin.tar.xz || { echo "tar failed"; exit 1; }
source .device-deps/setup.sh > /dev/null
SECONDS=0
nvidia-smi --query-gpu=name,memory.total,clocks.max.sm,driver_version --format=csv,noheader > $OUT/device.txt
cat .device-bin/.prebuilt >> $OUT/device.txt; cat $OUT/device.txt
mkdir -p $OUT/logs
logs=()
for w in new stg new stg new stg; do
  [ $SECONDS -gt 150 ] && break
  B=.device-bin/bench/bench_versus; [ $w = stg ] && B=.device-variants/bench_versus_stg
  OMP_NUM_THREADS=16 timeout 60 $B --only batch --batches 23,24 --out-dir /tmp/b-$w > $OUT/logs/b-$w-$SECONDS.log 2>&1
  echo "## batch $w rc $? ($SECONDS s)"; logs+=($(ls -t $OUT/logs/b-$w-*.log | head -1))
done
python3 bench/data/session13/summ.py "${logs[@]}"
tar -czf $OUT/logs.tar.gz -C $OUT logs && rm -rf $OUT/logs
echo "# elapsed $SECONDS s"
