#!/bin/bash
# Session 16, call 4 (the final code's binaries): (a) sort_sweep small: the library's call at 2^10-2^18
# queries, NULL config (three pointer classifications, now by the driver) against memory DEVICE at
# each G, two rounds; (b) the full bench_versus (the closing table; CSVs for the plots); (c)
# compute-sanitizer racecheck of test_gpu (quick mode).
set -u
tar -xJf .device-bin.tar.xz && source .device-deps/setup.sh
SECONDS=0
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $OUT/device.txt 2>&1
OMP_NUM_THREADS=16 timeout 150 .device-variants/sort_sweep small > $OUT/small.txt 2>&1
echo "## sort_sweep small rc $? ($SECONDS s)"; grep -E "bits|queries, query order|OK|FAIL" $OUT/small.txt
OMP_NUM_THREADS=16 timeout 120 .device-bin/bench/bench_versus --out-dir $OUT/versus > $OUT/versus.log 2>&1
echo "## full bench_versus rc $? ($SECONDS s)"
python3 bench/data/session13/summ.py $OUT/versus.log > $OUT/table.txt; cat $OUT/table.txt
grep -h "MISMATCH\|FAIL" $OUT/versus.log | head -5
HARMONIA_GPU_TEST_QUICK=1 timeout 200 compute-sanitizer --tool racecheck --error-exitcode 9 .device-bin/tests/test_gpu \
    > $OUT/sanitize-racecheck.log 2>&1
echo "## racecheck test_gpu: exit $? ($SECONDS s); $(grep -E 'RACECHECK SUMMARY|ERROR SUMMARY' $OUT/sanitize-racecheck.log | tail -1)"
echo "# elapsed $SECONDS s"
