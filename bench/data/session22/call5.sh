#!/bin/bash
# Session 22, call 5 (H100): the code-byte form of the unordered edges (pass 1 writes each
# set-apart query's class, the search answers it). (a) test_gpu, memcheck of test_gpu (quick);
# (b) outside_probe base (61ed200, call 4's code) / new, alternating, both widths; (c) bench_versus
# --only queries,sizes,hits,dense,batch of the new code (call 4 is the base's full run).
set -u
tar -xJf .device-bin.tar.xz && source .device-deps/setup.sh > /dev/null
SECONDS=0
nvidia-smi --query-gpu=name,memory.total,clocks.max.sm,driver_version --format=csv,noheader > $OUT/device.txt
cat .device-bin/.prebuilt >> $OUT/device.txt; cat $OUT/device.txt
mkdir -p $OUT/logs
for bits in 64 32; do
  for v in base new; do
    OMP_NUM_THREADS=16 timeout 100 .device-variants/outside_probe_$v time $bits 2 > $OUT/logs/probe-$bits-$v.txt 2>&1
    echo "## probe $bits $v rc $? ($SECONDS s)"
    grep -E "queries|FAIL|WRONG|error" $OUT/logs/probe-$bits-$v.txt | sed 's/queries: /: /; s/ (100 % of the sample found)//; s/2^27 //; s/sample verified/ok/'
  done
done
timeout 200 .device-bin/tests/test_gpu > $OUT/logs/test_gpu.log 2>&1
echo "## test_gpu rc $? ($SECONDS s) $(grep -E '^\[  (PASSED|FAILED)' $OUT/logs/test_gpu.log | tr '\n' ' ')"
grep -E "FAILED|ERROR|fail" $OUT/logs/test_gpu.log | head -5
HARMONIA_GPU_TEST_QUICK=1 timeout 200 compute-sanitizer --tool memcheck --error-exitcode 9 .device-bin/tests/test_gpu \
    > $OUT/logs/sanitize-memcheck.log 2>&1
echo "## memcheck test_gpu: exit $? ($SECONDS s); $(grep -E 'ERROR SUMMARY' $OUT/logs/sanitize-memcheck.log | tail -1)"
OMP_NUM_THREADS=16 timeout 160 .device-bin/bench/bench_versus --only queries,sizes,hits,dense,batch --out-dir $OUT/logs/versus > $OUT/logs/versus.log 2>&1
echo "## bench_versus rc $? ($SECONDS s)"
python3 bench/data/session13/summ.py $OUT/logs/versus.log
grep -h "MISMATCH\|FAIL" $OUT/logs/versus.log | head -5
tar -czf $OUT/logs.tar.gz -C $OUT logs && rm -rf $OUT/logs
echo "# elapsed $SECONDS s"
