#!/bin/bash
# Session 9, first call: the sorted-results pipeline (partition with positions + search) of the
# library's plan, with the partition passes compiled in other tile shapes (build-variants.sh), on
# 64-bit 2^26 and 32-bit 2^28 keys, 2^27 queries; ncu of each kernel of the library's shape; a sweep
# of bucket bits. Output under $OUT.
set -u
V=.device-variants
vs="base t512i8b3 t512i16b2 t256i16b3 t1024i8b2 t256i32b2"
for v in $vs; do
    for w in "64 26" "32 28"; do
        set -- $w
        echo "## $v $1-bit 2^$2"
        $V/bench_phases-$v --bits $1 --keys-log2 $2 --unordered-only --runs 9 2>&1 | grep -v "^#" | tail -3
    done
done 2>&1 | tee $OUT/shapes.txt
echo "## bucket bits sweep (base)" | tee $OUT/bits.txt
$V/bench_phases-base --bits 64 --keys-log2 26 --unordered-only --runs 9 --psa-bits 16,18 2>&1 | tee -a $OUT/bits.txt
$V/bench_phases-base --bits 32 --keys-log2 28 --unordered-only --runs 9 --psa-bits 17,18 2>&1 | tee -a $OUT/bits.txt
M=gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sectors_op_read.sum,lts__t_sectors_op_write.sum,lts__t_sectors_op_atom.sum,lts__t_sectors_op_red.sum,sm__warps_active.avg.pct_of_peak_sustained_active,launch__registers_per_thread,launch__occupancy_limit_registers,launch__occupancy_limit_shared_mem,launch__grid_size,smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio,smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_lg_throttle_per_issue_active.ratio,smsp__average_warps_issue_stalled_short_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_mio_throttle_per_issue_active.ratio,smsp__average_warps_issue_stalled_membar_per_issue_active.ratio,smsp__average_warps_issue_stalled_drain_per_issue_active.ratio,smsp__average_warps_issue_stalled_wait_per_issue_active.ratio,smsp__inst_executed.sum,sm__throughput.avg.pct_of_peak_sustained_elapsed,dram__throughput.avg.pct_of_peak_sustained_elapsed
for w in "64 26" "32 28"; do
    set -- $w
    timeout 240 ncu --clock-control none --cache-control all -k regex:"hist1|hist2|pass_kernel|search_kernel|scan1|Scan" \
        --launch-count 8 --metrics $M --csv \
        $V/bench_phases-base --bits $1 --keys-log2 $2 --unordered-only --runs 1 > $OUT/ncu-$1.csv 2> $OUT/ncu-$1.err
    echo "ncu $1: rc $?, $(wc -l < $OUT/ncu-$1.csv) lines"
done
