#!/bin/bash
# Session 24, call 4 (H100): why the kernels below 1.25x wait — ncu's occupancy, launch and warp-state
# sections (stall reasons in the rules' text) for the library's own calls of session 23's
# bounds_probe (the code of session 23, c41736e): the 2^16 and 2^18 lookups (lookup_kernel), the
# partition's passes (pass_kernel) and the staged search (search_kernel) of the sorted 2^23-2^24
# windows. Caches flushed before each pass (--cache-control all): for the stall profile, not the rates.
set -u
tar -xJf .device-bin.tar.xz && source .device-deps/setup.sh > /dev/null
SECONDS=0
nvidia-smi --query-gpu=name,memory.total,clocks.max.sm,driver_version --format=csv,noheader > $OUT/device.txt
cat .device-bin/.prebuilt >> $OUT/device.txt; cat $OUT/device.txt
OMP_NUM_THREADS=16 timeout 400 ncu --profile-from-start off --cache-control all --clock-control none \
    --kernel-name regex:"^(pass_kernel|lookup_kernel|search_kernel)" --launch-count 9 \
    --section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats \
    --section MemoryWorkloadAnalysis --page details --print-units base \
    .device-variants/bounds_probe ncu > $OUT/ncu-details.txt 2>&1
echo "## ncu rc $? ($SECONDS s)"
grep -E "^  [a-z_]+.*\(|Duration|Achieved Occupancy|Theoretical Occupancy|Registers Per Thread|Block Limit (Registers|Shared Mem|Warps)|Warp Cycles Per Issued|DRAM Throughput|Dynamic Shared|spends" $OUT/ncu-details.txt | sed 's/  */ /g' | cut -c1-230
echo "# elapsed $SECONDS s"
