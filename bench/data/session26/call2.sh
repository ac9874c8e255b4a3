#!/bin/bash
# Session 26, call 2 (H100): L2 eviction hints for a descent's loads — base (574bc66, NTG_L2_HINTS=0)
# against hints1 (internal nodes evict_last) and hints3 (and leaves/values evict_first), alternating,
# three rounds of bench_versus --only batch --batches 16,18,20,22,23,24; then ncu of lookup_kernel at
# 2^18 (L2 hit rate, DRAM bytes) on base and hints3.
set -u
tar -xJf .device-bin.tar.xz && source .device-deps/setup.sh > /dev/null
SECONDS=0
nvidia-smi --query-gpu=name,memory.total,clocks.max.sm,driver_version --format=csv,noheader > $OUT/device.txt
cat .device-bin/.prebuilt >> $OUT/device.txt; cat $OUT/device.txt
mkdir -p $OUT/logs
OMP_NUM_THREADS=16 timeout 40 .device-variants/bench_versus_hints3 --only batch --batches 18 --out-dir /tmp/v0 > $OUT/logs/sanity.log 2>&1
rc=$?; echo "## sanity rc $rc ($SECONDS s)"; grep -c verified $OUT/logs/sanity.log; grep -c MISMATCH $OUT/logs/sanity.log
[ $rc = 0 ] || { tar -czf $OUT/logs.tar.gz -C $OUT logs; exit 1; }
logs=()
for r in 1 2 3; do
  for w in base hints1 hints3; do
    B=.device-bin/bench/bench_versus; [ $w != base ] && B=.device-variants/bench_versus_$w
    OMP_NUM_THREADS=16 timeout 60 $B --only batch --batches 16,18,20,22,23,24 --out-dir /tmp/v-$w-$r > $OUT/logs/v-$w-$r.log 2>&1
    echo "## versus $w $r rc $? ($SECONDS s)"
    logs+=($OUT/logs/v-$w-$r.log)
  done
done
python3 bench/data/session13/summ.py "${logs[@]}"
grep -h "MISMATCH\|FAIL" "${logs[@]}" | head -5
for w in base hints3; do
  B=.device-bin/bench/bench_versus; [ $w != base ] && B=.device-variants/bench_versus_$w
  OMP_NUM_THREADS=16 timeout 100 ncu --cache-control none --clock-control none --kernel-name regex:"^lookup_kernel|eyt_lookup" \
      --launch-skip 12 --launch-count 12 --metrics gpu__time_duration.sum,lts__t_sector_hit_rate.pct,dram__bytes_read.sum,dram__bytes_write.sum \
      --csv $B --only batch --batches 18 --out-dir /tmp/n-$w > $OUT/logs/ncu-$w.csv 2>$OUT/logs/ncu-$w.err
  echo "## ncu $w rc $? ($SECONDS s)"
  python3 - $OUT/logs/ncu-$w.csv <<'PY'
import csv, sys, re
rows = [r for r in csv.reader(open(sys.argv[1])) if len(r) > 10]
hdr = rows[0]; ki = hdr.index('Kernel Name'); mi = hdr.index('Metric Name'); vi = hdr.index('Metric Value'); ii = hdr.index('ID')
by = {}
for r in rows[1:]:
    by.setdefault((r[ii], r[ki][:60]), {})[r[mi]] = r[vi]
for (i, k), m in by.items():
    print(i, k, ' '.join(f"{n.split('__')[1][:22]}={v}" for n, v in m.items()))
PY
done
tar -czf $OUT/logs.tar.gz -C $OUT logs && rm -rf $OUT/logs
echo "# elapsed $SECONDS s"
