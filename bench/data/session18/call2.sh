#!/bin/bash
# Session 18, call 2: the point lookups' leaves, values and queries loaded evict-first
# (NTG_STREAM_LEAVES). (a) bench_versus --only batch of the A/B build with -DNTG_STREAM_LEAVES=0
# ("keep") and the new, alternating, two rounds each; (b) ncu of the new 2^18 kernels (small_probe);
# (c) bench_versus --only sizes of the new.
set -u
tar -xJf .device-bin.tar.xz && source .device-deps/setup.sh
SECONDS=0
bin() { [ $1 = new ] && echo .device-bin/bench/bench_versus || echo .device-variants/bench_versus-$1; }
logs=()
for round in 1 2; do
    for which in keep new; do
        OMP_NUM_THREADS=16 timeout 70 $(bin $which) --only batch > $OUT/b-$which-$round.log 2>&1
        echo "## batch $which round $round rc $? ($SECONDS s)"
        logs+=($OUT/b-$which-$round.log)
    done
done
python3 bench/data/session17/small.py "${logs[@]}" | grep -v "2^10\|2^14"
python3 bench/data/session13/summ.py "${logs[@]}"
grep -h "MISMATCH\|FAIL" "${logs[@]}" | head -5
PROBE_SIZES=18 OMP_NUM_THREADS=16 timeout 200 ncu --cache-control none --clock-control none \
    -k regex:"^lookup_kernel|eyt_lookup_kernel" --section SpeedOfLight --section MemoryWorkloadAnalysis --csv --page details \
    .device-variants/small_probe ncu > $OUT/ncu-18.csv 2> $OUT/ncu-18.err
echo "## ncu 2^18 rc $? ($SECONDS s)"; tail -2 $OUT/ncu-18.err
python3 - $OUT/ncu-18.csv <<'PY'
import csv, sys, collections
lines = [l for l in open(sys.argv[1]) if l.startswith('"')]
rows = list(csv.reader(lines)); h = rows[0]; ix = {n: i for i, n in enumerate(h)}
k = collections.OrderedDict()
for r in rows[1:]:
    d = k.setdefault(int(r[ix['ID']]), {'name': r[ix['Kernel Name']][:30]})
    d[r[ix['Metric Name']]] = r[ix['Metric Value']]
want = ['Duration', 'DRAM Throughput', 'L1/TEX Hit Rate', 'L2 Hit Rate', 'Memory Throughput']
print('id | name | ' + ' | '.join(want))
for i, d in k.items():
    print(i, '|', d['name'], '|', ' | '.join(d.get(w, '-') for w in want))
PY
OMP_NUM_THREADS=16 timeout 80 $(bin new) --only sizes > $OUT/sizes-new.log 2>&1
echo "## sizes new rc $? ($SECONDS s)"
python3 bench/data/session13/summ.py $OUT/sizes-new.log
grep -h "MISMATCH\|FAIL" $OUT/sizes-new.log | head -5
echo "# elapsed $SECONDS s"
