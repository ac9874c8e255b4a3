#!/bin/bash
# Session 24, call 2 (H100): the last internal level and the leaves read by halves (NTG_HALVES).
# test_gpu (test_halves among them); bench_versus --only batch --batches 16,18,20 of the defaults
# (halves) and an A/B build with -DNTG_HALVES=0 (off), alternating, two rounds; then ncu of the
# library's calls (session 23's bounds_probe, built against this commit) for the bytes a lookup.
set -u
# (call 1 hung: a shuffle of the whole warp inside a branch of some groups; fixed in the commit this call runs)
tar -xJf .device-bin.tar.xz && source .device-deps/setup.sh > /dev/null
SECONDS=0
nvidia-smi --query-gpu=name,memory.total,clocks.max.sm,driver_version --format=csv,noheader > $OUT/device.txt
cat .device-bin/.prebuilt >> $OUT/device.txt; cat $OUT/device.txt
mkdir -p $OUT/logs
OMP_NUM_THREADS=16 timeout 40 .device-bin/bench/bench_versus --only batch --batches 18 --out-dir /tmp/v0 > $OUT/logs/sanity.log 2>&1
rc=$?; echo "## sanity rc $rc ($SECONDS s)"; grep "=>" $OUT/logs/sanity.log
[ $rc = 0 ] || { tar -czf $OUT/logs.tar.gz -C $OUT logs; exit 1; }
timeout 240 .device-bin/tests/test_gpu > $OUT/logs/test_gpu.log 2>&1
echo "## test_gpu rc $? ($SECONDS s) $(grep -E '^\[  (PASSED|FAILED)' $OUT/logs/test_gpu.log | tr '\n' ' ')"
grep -E "FAILED|error|halves" $OUT/logs/test_gpu.log | head -5
logs=()
for r in 1 2; do
  for w in base off; do
    B=.device-bin/bench/bench_versus; [ $w != base ] && B=.device-variants/bench_versus_$w
    OMP_NUM_THREADS=16 timeout 60 $B --only batch --batches 16,18,20 --out-dir /tmp/v-$w-$r > $OUT/logs/v-$w-$r.log 2>&1
    echo "## versus $w $r rc $? ($SECONDS s)"
    logs+=($OUT/logs/v-$w-$r.log)
  done
done
python3 bench/data/session13/summ.py "${logs[@]}"
grep -h "MISMATCH\|FAIL" "${logs[@]}" | head -5
if [ $SECONDS -lt 420 ]; then
  OMP_NUM_THREADS=16 timeout 150 ncu --csv --log-file $OUT/ncu.csv --profile-from-start off --cache-control none \
      --clock-control none --metrics gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed \
      .device-variants/bounds_probe ncu > $OUT/ncu-stdout.txt 2>&1
  echo "## bounds_probe ncu rc $? ($SECONDS s)"; tail -2 $OUT/ncu-stdout.txt
  python3 bench/data/session23/bounds-probe/parse_ncu.py $OUT/ncu.csv $OUT/ncu-stdout.txt > $OUT/bounds.md; head -6 $OUT/bounds.md
fi
tar -czf $OUT/logs.tar.gz -C $OUT logs && rm -rf $OUT/logs
echo "# elapsed $SECONDS s"
