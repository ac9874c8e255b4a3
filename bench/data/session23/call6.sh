#!/bin/bash
# Session 23, call 6 (H100): 32-bit keys take the values beside the leaf up to 2^21 queries. (a) test_psa_bits,
# test_gpu, memcheck of test_gpu (quick); (b) bench_versus --only batch --batches
# 14,16,18,20,22 of the old binary (ae462ad) and the new, alternating,
# three rounds (every result verified).
set -u
tar -xJf .device-bin.tar.xz && source .device-deps/setup.sh > /dev/null
SECONDS=0
nvidia-smi --query-gpu=name,memory.total,clocks.max.sm,driver_version --format=csv,noheader > $OUT/device.txt
cat .device-bin/.prebuilt >> $OUT/device.txt; cat $OUT/device.txt
mkdir -p $OUT/logs
for t in test_psa_bits test_gpu; do
  timeout 240 .device-bin/tests/$t > $OUT/logs/$t.log 2>&1
  echo "## $t rc $? ($SECONDS s) $(grep -E '^\[  (PASSED|FAILED)' $OUT/logs/$t.log | tr '\n' ' ')"
done
grep -E "FAILED|ERROR|fail" $OUT/logs/test_gpu.log | head -5
HARMONIA_GPU_TEST_QUICK=1 timeout 200 compute-sanitizer --tool memcheck --error-exitcode 9 .device-bin/tests/test_gpu \
    > $OUT/logs/sanitize-memcheck.log 2>&1
echo "## memcheck test_gpu: exit $? ($SECONDS s); $(grep -E 'ERROR SUMMARY' $OUT/logs/sanitize-memcheck.log | tail -1)"
logs=()
for r in 1 2 3; do
  [ $SECONDS -gt 420 ] && { echo "## round $r skipped ($SECONDS s)"; break; }
  for w in old new; do
    B=.device-bin/bench/bench_versus; [ $w != new ] && B=.device-variants/bench_versus_$w
    OMP_NUM_THREADS=16 timeout 100 $B --only batch --batches 14,16,18,20,22 --out-dir /tmp/v-$w-$r > $OUT/logs/v-$w-$r.log 2>&1
    echo "## versus $w $r rc $? ($SECONDS s)"
    logs+=($OUT/logs/v-$w-$r.log)
  done
done
python3 bench/data/session13/summ.py "${logs[@]}"
for f in "${logs[@]}"; do echo "$(basename $f): $(grep -E 'harmonia_explicit|defaults \(NULL config\) +query' $f | awk '{for(i=1;i<=NF;i++) if($i=="ms") printf "%s ", $(i-1)}')"; done
grep -h "MISMATCH\|FAIL" "${logs[@]}" | head -5
tar -czf $OUT/logs.tar.gz -C $OUT logs && rm -rf $OUT/logs
echo "# elapsed $SECONDS s"
