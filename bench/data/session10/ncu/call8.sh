#!/bin/bash
# Session 10, call 8 (code of f9b6cf7): ncu of each kernel of the sorted-results pipeline (pass 1 into
# chunks, scan1, pass-2 count, CUB scan, pass 2, search with positions), 64-bit 2^26 and 32-bit 2^28
# keys, 2^27 queries; the copy rate of the same GPU from bench_phases (its first row).
set -u
tar -xJf .device-bin.tar.xz && source .device-deps/setup.sh
B=.device-bin
M=gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,sm__warps_active.avg.pct_of_peak_sustained_active,smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio,smsp__inst_executed.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed
for w in "64 26" "32 28"; do
    set -- $w
    timeout 100 $B/bench/bench_phases --bits $1 --keys-log2 $2 --runs 5 2>&1 | grep "copy of" | sed "s/^/$1-bit: /" | tee -a $OUT/copy.txt
    timeout 200 ncu --clock-control none --cache-control all -k regex:"hist2|pass_kernel|search|scan1|Scan" \
        --launch-count 7 --metrics $M --csv \
        $B/bench/bench_phases --bits $1 --keys-log2 $2 --unordered-only --runs 1 > $OUT/ncu-$1.csv 2> $OUT/ncu-$1.err
    echo "ncu $1: rc $?, $(wc -l < $OUT/ncu-$1.csv) lines"
done
