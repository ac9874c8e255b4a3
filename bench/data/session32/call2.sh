#!/bin/bash
# Session 32, call 2 (H200): PSA's descent path on finer two-pass plans (A/B: gpu_query.cu built with
# PSA_DESCENT_BITS_32/_64 = 16/14 (b16) and 18/16 (b18) against the library's 8/7 (new)), alternating
# over the descent-path batches; then ncu (speed of light, durations, DRAM and L2 sectors) of each
# build's partition and descent at 32-bit 2^28 keys, 2^24 queries.
set -u
tar -xJf .device-bin.tar.xz || { echo "tar failed"; exit 1; }
source .device-deps/setup.sh > /dev/null
SECONDS=0
nvidia-smi --query-gpu=name,memory.total,clocks.max.sm,driver_version --format=csv,noheader > $OUT/device.txt
cat .device-bin/.prebuilt >> $OUT/device.txt; cat $OUT/device.txt
mkdir -p $OUT/logs
logs=()
for w in new b16 b18 new b16 b18 new b16 b18; do
  B=.device-bin/bench/bench_versus; [ $w != new ] && B=.device-variants/bench_versus_$w
  OMP_NUM_THREADS=16 timeout 60 $B --only batch --batches 22,23,24 --out-dir /tmp/b-$w > $OUT/logs/b-$w-$SECONDS.log 2>&1
  echo "## batch $w rc $? ($SECONDS s)"; logs+=($(ls -t $OUT/logs/b-$w-*.log | head -1))
done
python3 bench/data/session13/summ.py "${logs[@]}"
python3 bench/data/session31/pos.py "${logs[@]}"
for w in new b18; do
  B=.device-bin/bench/bench_versus; [ $w != new ] && B=.device-variants/bench_versus_$w
  OMP_NUM_THREADS=16 timeout 120 ncu --cache-control none --clock-control none --csv \
    -k regex:"hist|scan1|pass_kernel|(^|[^_])lookup_kernel|lookup_multi|DeviceScan" -c 14 \
    --metrics gpu__time_duration.sum,dram__sectors_read.sum,dram__sectors_write.sum,lts__t_sectors.sum,lts__t_sectors_srcunit_tex.sum,lts__throughput.avg.pct_of_peak_sustained_elapsed,l1tex__t_sector_hit_rate.pct \
    $B --key-bits 32 --only batch --batches 24 --runs 1 --out-dir /tmp/n-$w > $OUT/logs/ncu-$w.csv 2> $OUT/logs/ncu-$w-err.txt
  echo "## ncu $w rc $? ($SECONDS s)"
  python3 - $OUT/logs/ncu-$w.csv <<'PY'
import csv, sys, collections
rows = [r for r in csv.reader(open(sys.argv[1])) if len(r) > 10]
h = rows[0]; i = {k: h.index(k) for k in ("ID", "Kernel Name", "Metric Name", "Metric Value")}
k = collections.OrderedDict()
for r in rows[1:]:
    k.setdefault(r[i["ID"]], [r[i["Kernel Name"]].split("(")[0][-34:], {}])[1][r[i["Metric Name"]]] = r[i["Metric Value"]]
for id_, (name, m) in k.items():
    print(id_, name, " ".join(f"{a.split('__')[1].split('.')[0][:18]}={m[a]}" for a in sorted(m)))
PY
done
tar -czf $OUT/logs.tar.gz -C $OUT logs && rm -rf $OUT/logs
echo "# elapsed $SECONDS s"
