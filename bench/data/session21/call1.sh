#!/bin/bash
# Session 21, call 1 (H100): (a) test_psa_bits and test_gpu on the working tree (warp-aggregated
# ranks in the partition, PSA_RANK_AGGREGATE 1; test_sparse_unordered's G = 2 line of e6efb89 first
# run on a GPU); (b) outside_probe timing, 32-bit 2^28 and 64-bit 2^26 keys, uniform / Zipf / outside
# 2^27 queries, base (e6efb89) / aggregate 1 / aggregate 2; (c) ncu, every kernel's duration and DRAM
# bytes of one unordered and one ordered call on each, base and aggregate 1, 32-bit; (d) bench_versus
# --only queries, old (e6efb89) and new, two alternating rounds.
set -u
tar -xJf .device-bin.tar.xz && source .device-deps/setup.sh > /dev/null
SECONDS=0
nvidia-smi --query-gpu=name,memory.total,clocks.max.sm,driver_version --format=csv,noheader > $OUT/device.txt
cat .device-bin/.prebuilt >> $OUT/device.txt; cat $OUT/device.txt
for t in test_psa_bits test_gpu; do
  timeout 200 .device-bin/tests/$t > $OUT/$t.log 2>&1
  echo "## $t rc $? ($SECONDS s) $(grep -E '^\[  (PASSED|FAILED)' $OUT/$t.log | tr '\n' ' ')"
done
grep -E "FAILED|ERROR" $OUT/test_gpu.log | head -5
for b in 32 64; do
  for v in base agg1 agg2; do
    OMP_NUM_THREADS=16 timeout 150 .device-variants/outside_probe_$v time $b 2 > $OUT/probe-$b-$v.txt 2>&1
    echo "## probe $b $v rc $? ($SECONDS s)"; grep -E "queries|FAIL|error" $OUT/probe-$b-$v.txt | sed 's/queries: /: /'
  done
done
for v in base agg1; do
  OMP_NUM_THREADS=16 timeout 200 ncu --profile-from-start off --cache-control none --clock-control none \
      --metrics gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum \
      --csv --page raw .device-variants/outside_probe_$v ncu 32 > $OUT/ncu-32-$v.csv 2> $OUT/ncu-32-$v.err
  echo "## ncu 32 $v rc $? ($SECONDS s)"; tail -1 $OUT/ncu-32-$v.err
  python3 - $OUT/ncu-32-$v.csv <<'PY'
import csv, sys
lines = [l for l in open(sys.argv[1]) if l.startswith('"')]
rows = list(csv.reader(lines))
h = rows[0]; idx = {n: i for i, n in enumerate(h)}
for r in rows[2:]:
    name = r[idx['Kernel Name']].split('(')[0][:40]
    print("%-40s %9.1f us rd %7.1f MB wr %7.1f MB" % (name, float(r[idx['gpu__time_duration.sum']]) / 1e3,
          float(r[idx['dram__bytes_read.sum']]) / 1e6, float(r[idx['dram__bytes_write.sum']]) / 1e6))
PY
done
logs=()
for r in 1 2; do
  for w in old new; do
    B=.device-bin/bench/bench_versus; [ $w = old ] && B=.device-variants/bench_versus_old
    OMP_NUM_THREADS=16 timeout 120 $B --only queries --out-dir /tmp/q-$w-$r > $OUT/q-$w-$r.log 2>&1
    echo "## $w round $r rc $? ($SECONDS s)"
    logs+=($OUT/q-$w-$r.log)
  done
done
python3 bench/data/session13/summ.py "${logs[@]}"
grep -h "MISMATCH\|FAIL" "${logs[@]}" | head -5
echo "# elapsed $SECONDS s"
