#!/bin/bash
# Session 25, call 1 (H100): where a partition tile's instructions and stalls go, by SASS instruction
# and source line — ncu's SourceCounters and WarpStateStats of pass_kernel in the library's own calls
# (pass_probe_li: the library of f403e1e with psa/psa_partition.cu built with -lineinfo), 64-bit 2^26
# keys: the one-pass partition of the sorted 2^23 window (PSA's descent path) and pass 1 (chunked)
# and pass 2 of the sorted 2^24 window. Caches and clocks as in a run (--cache-control none).
set -u
tar -xJf .device-bin.tar.xz && source .device-deps/setup.sh > /dev/null
SECONDS=0
nvidia-smi --query-gpu=name,memory.total,clocks.max.sm,driver_version --format=csv,noheader > $OUT/device.txt
cat .device-bin/.prebuilt >> $OUT/device.txt; cat $OUT/device.txt
ncu --version | tail -1
OMP_NUM_THREADS=16 timeout 300 ncu --profile-from-start off --cache-control none --clock-control none \
    --kernel-name regex:"pass_kernel" --launch-count 3 \
    --section SourceCounters --section WarpStateStats --section LaunchStats --import-source yes \
    -o $OUT/pk .device-variants/pass_probe_li ncu 64 > $OUT/probe.txt 2> $OUT/ncu-stderr.txt
echo "## ncu rc $? ($SECONDS s)"; tail -3 $OUT/ncu-stderr.txt
timeout 120 ncu -i $OUT/pk.ncu-rep --page source --csv --print-source sass > $OUT/src-sass.csv 2> $OUT/src-err.txt
echo "## sass rc $? $(wc -c < $OUT/src-sass.csv) bytes"; head -c 600 $OUT/src-err.txt
timeout 120 ncu -i $OUT/pk.ncu-rep --page source --csv --print-source cuda > $OUT/src-cuda.csv 2>> $OUT/src-err.txt
echo "## cuda rc $? $(wc -c < $OUT/src-cuda.csv) bytes"
timeout 60 ncu -i $OUT/pk.ncu-rep --page details --print-units base > $OUT/details.txt 2>&1
grep -E "pass_kernel|Duration|Warp Cycles Per Issued|Executed Ipc|Issue Slots|Registers|Avg. Active Threads|Branch" $OUT/details.txt | sed 's/  */ /g' | cut -c1-160 | head -40
head -3 $OUT/src-sass.csv | cut -c1-600
echo "# elapsed $SECONDS s"
