#!/bin/bash
# Session 11, call 2: test_gpu in full and memcheck of the quick test_gpu on the fine-bins library
# (1732d14); api_gap (the library's sorted and query-order calls, events and host clock) beside
# bench_phases of the same tree shape; then ncu of one api_gap call of each kind (kernel durations).
set -u
tar -xJf .device-bin.tar.xz && source .device-deps/setup.sh
B=.device-bin V=.device-variants
SECONDS=0
( cd $B && timeout 300 ./tests/test_gpu > /tmp/test_gpu.log 2>&1; echo "test_gpu rc $? $(grep -c '\[       OK \]' /tmp/test_gpu.log) OK" ) | tee $OUT/tests.txt
grep -E "FAILED|Error|error" /tmp/test_gpu.log | head -5
HARMONIA_GPU_TEST_QUICK=1 timeout 200 compute-sanitizer --tool memcheck --error-exitcode 9 $B/tests/test_gpu > /tmp/mc.log 2>&1
echo "memcheck rc $? $(grep -h 'ERROR SUMMARY' /tmp/mc.log)" | tee -a $OUT/tests.txt
echo "# elapsed $SECONDS s"
timeout 120 $V/api_gap 9 26 | tee $OUT/api_gap.txt
timeout 100 $B/bench/bench_phases --bits 64 --keys-log2 26 --runs 9 2>&1 | grep -E "sorted results|of which|and the search|total|every" | grep -v "9 bits" | tee -a $OUT/api_gap.txt
echo "# elapsed $SECONDS s"
timeout 200 ncu --metrics gpu__time_duration.sum --csv $V/api_gap 1 26 > $OUT/ncu-api-gap.csv 2> /tmp/ncu.err
echo "ncu rc $?"; tail -3 /tmp/ncu.err
python3 - $OUT/ncu-api-gap.csv <<'PY'
import csv, sys
rows = [r for r in csv.reader(open(sys.argv[1])) if len(r) > 10]
hdr = rows[0]; rows = rows[1:]
ki = hdr.index("Kernel Name"); vi = hdr.index("Metric Value"); ui = hdr.index("Metric Unit")
for r in rows:
    v = float(r[vi].replace(",", "")); u = r[ui]
    us = v / 1000 if u == "nsecond" else v if u == "usecond" else v * 1000
    print(f"{us:10.1f} us  {r[ki][:110]}")
PY
echo "# elapsed $SECONDS s"
