#!/bin/bash
# Session 15, call 4: dense search tiles that do not fit, searched in chunks (chunked_search).
# (a) tests.list on the new binaries; (b) zipf_probe (new library) timing and ncu of the 32-bit
# calls; (c) bench_versus --only queries,hits,sizes, old (c08f339) and new, two alternating rounds.
set -u
tar -xJf .device-bin.tar.xz && source .device-deps/setup.sh
SECONDS=0
BUILD=.device-bin timeout 230 bash bench/run-gpu.sh tests > $OUT/run-tests.txt 2>&1
echo "## tests rc $? ($SECONDS s)"; tail -24 $OUT/run-tests.txt | grep -v "OK  "; grep -c "  OK  " $OUT/run-tests.txt
OMP_NUM_THREADS=16 timeout 60 .device-variants/zipf_probe time 32 > $OUT/probe-32.txt 2>&1
echo "## zipf_probe 32 rc $? ($SECONDS s)"; cat $OUT/probe-32.txt
OMP_NUM_THREADS=16 timeout 100 ncu --profile-from-start off --cache-control none --clock-control none \
    --metrics gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,launch__grid_size \
    --csv --page raw .device-variants/zipf_probe ncu 32 > $OUT/ncu-32.csv 2> $OUT/ncu-32.err
echo "## ncu 32 rc $? ($SECONDS s)"
python3 - $OUT/ncu-32.csv <<'PY'
import csv, sys
lines = [l for l in open(sys.argv[1]) if l.startswith('"')]
rows = list(csv.reader(lines))
h = rows[0]; idx = {n: i for i, n in enumerate(h)}
for r in rows[2:]:
    print("%-60s %10s ns" % (r[idx['Kernel Name']][:60], r[idx['gpu__time_duration.sum']]))
PY
logs=()
for round in 1 2; do
    for which in old new; do
        B=.device-bin/bench/bench_versus; [ $which = old ] && B=.device-variants/bench_versus-old
        OMP_NUM_THREADS=16 timeout 90 $B --only queries,hits,sizes --out-dir $OUT/versus-$which-$round > $OUT/versus-$which-$round.log 2>&1
        echo "## $which round $round rc $? ($SECONDS s)"
        logs+=($OUT/versus-$which-$round.log)
    done
done
python3 bench/data/session13/summ.py "${logs[@]}"
grep -h "MISMATCH\|FAIL" "${logs[@]}" | head -5
rm -rf $OUT/versus-*/
echo "# elapsed $SECONDS s"
