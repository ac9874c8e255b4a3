#!/bin/bash
# Session 10, device call 3 (pass 1 into chunks, chunks taken one ahead): test_gpu in full, then
# memcheck, racecheck and synccheck of the quick test_gpu (test_psa_chunked's one case among them);
# bench_phases of the library's plans.
set -u
tar -xJf .device-bin.tar.xz && source .device-deps/setup.sh
B=.device-bin
( cd $B && timeout 300 ./tests/test_gpu > $OUT/test_gpu.log 2>&1; echo "test_gpu rc $? $(grep -c '\[       OK \]' $OUT/test_gpu.log) OK" ) | tee $OUT/tests.txt
for tool in memcheck racecheck; do
    start=$(date +%s)
    HARMONIA_GPU_TEST_QUICK=1 timeout 230 compute-sanitizer --tool $tool --error-exitcode 9 $B/tests/test_gpu > /tmp/$tool.log 2>&1
    rc=$?
    echo "$tool rc $rc ($(( $(date +%s) - start )) s) $(grep -h 'ERROR SUMMARY\|RACECHECK SUMMARY' /tmp/$tool.log)" | tee -a $OUT/tests.txt
    [ $rc -ne 0 ] && tail -60 /tmp/$tool.log > $OUT/$tool.log
done
