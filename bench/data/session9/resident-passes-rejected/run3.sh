#!/bin/bash
# Session 9, third call: the resident-block passes with the GPU's real residency (occupancy query,
# largest shared-memory carveout) and pass 2's tile places found by the whole block; against the
# old kernel; ncu of the new passes.
set -u
B=.device-bin
echo "## tests" | tee $OUT/tests.txt
( cd $B && ./tests/test_gpu > $OUT/test_gpu.log 2>&1; echo "test_gpu rc $?" ) | tee -a $OUT/tests.txt
HARMONIA_GPU_TEST_QUICK=1 compute-sanitizer --tool memcheck --error-exitcode 9 $B/tests/test_gpu > $OUT/memcheck.log 2>&1; echo "memcheck rc $? $(grep -h 'ERROR SUMMARY' $OUT/memcheck.log)" | tee -a $OUT/tests.txt
HARMONIA_GPU_TEST_QUICK=1 compute-sanitizer --tool racecheck --error-exitcode 9 $B/tests/test_gpu > $OUT/racecheck.log 2>&1; echo "racecheck rc $? $(grep -h 'RACECHECK SUMMARY' $OUT/racecheck.log)" | tee -a $OUT/tests.txt
for w in "64 26 16" "32 28 17"; do
    set -- $w
    for bin in .device-old9/bench_phases-base $B/bench/bench_phases; do
        echo "## $bin $1-bit 2^$2"
        $bin --bits $1 --keys-log2 $2 --unordered-only --runs 9 --psa-bits $3 2>&1 | grep -v "^# bench\|^step"
    done
done 2>&1 | tee $OUT/phases.txt
M=gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,sm__warps_active.avg.pct_of_peak_sustained_active,launch__registers_per_thread,launch__occupancy_limit_registers,launch__occupancy_limit_shared_mem,launch__grid_size,launch__shared_mem_per_block_dynamic,smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio,smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_short_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_mio_throttle_per_issue_active.ratio,smsp__average_warps_issue_stalled_lg_throttle_per_issue_active.ratio,smsp__average_warps_issue_stalled_wait_per_issue_active.ratio,smsp__inst_executed.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed
for w in "64 26" "32 28"; do
    set -- $w
    timeout 200 ncu --clock-control none --cache-control all -k regex:"pass_kernel" --launch-count 2 --metrics $M --csv \
        $B/bench/bench_phases --bits $1 --keys-log2 $2 --unordered-only --runs 1 > $OUT/ncu-$1.csv 2> $OUT/ncu-$1.err
    echo "ncu $1: rc $?"
done
