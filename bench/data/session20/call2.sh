#!/bin/bash
# Session 20, call 2 (the command as run, on the H200 of call 1): multi_probe with the start tables
# (the views taken after the library's first call), G 2 and 4, the sparse sizes, two rounds.
set -u; source .device-deps/setup.sh >/dev/null; SECONDS=0; OMP_NUM_THREADS=16 timeout 300 .device-variants/multi_probe 2 narrow > $OUT/multi2.txt 2>&1; echo "rc $? ($SECONDS s) WRONG: $(grep -c WRONG $OUT/multi2.txt)"; grep -E "start tables|round 2|library|Q=" $OUT/multi2.txt | sed 's/  */ /g; s/partition 8 bits + descent, sorted/(b) part+desc sorted/; s/partition + descent + restore/part+desc+restore/; s/descent, query order/desc qorder/' | awk '/round 2/{r=1} r||/start tables/' | cut -c1-80
