#!/usr/bin/env bash
# plot-versus.sh — renders bench_versus's tables (versus.csv, versus-summary.csv) as SVG plots with
# gnuplot (Debian: apt-get install gnuplot-nox): point lookups against tree size and against batch
# size, Harmonia's defaults beside the strongest ordered baseline of the same run (query order and
# sorted order) and the hash table. Runs on the development machine from the CSVs the device returned.
# Usage: bash bench/plot-versus.sh [CSV_DIR (default bench/data/session4/versus-final)] [PLOT_DIR (bench/plots)]
# The titles name the GPU: $DEVICE, else the first line of CSV_DIR/../device.txt (what the device
# calls write: "NVIDIA H200, ..."), else "GPU".
set -euo pipefail
csv_dir=${1:-bench/data/session4/versus-final}
plot_dir=${2:-bench/plots}
command -v gnuplot > /dev/null || { echo "plot-versus.sh: gnuplot is missing (apt-get install gnuplot-nox)" >&2; exit 1; }
for f in versus.csv versus-summary.csv; do
    [ -f "$csv_dir/$f" ] || { echo "plot-versus.sh: $csv_dir/$f is missing" >&2; exit 1; }
done
device=${DEVICE:-$(sed -n '1{s/^NVIDIA //;s/,.*//;s/ [0-9]*GB.*//;p}' "$csv_dir/../device.txt" 2>/dev/null || true)}
device=${device:-GPU}
mkdir -p "$plot_dir"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
term="set terminal svg size 960,600 dynamic enhanced font 'Helvetica,13' background rgb 'white'"

# series per workload group: x, harmonia query, baseline query, harmonia sorted, baseline sorted, hash
# (free-text fields use ';' for commas, so plain comma splitting is safe)
series() { # pattern-of-workload x-expression out
    awk -F, -v pat="$1" '
        NR == 1 { next }
        $1 ~ pat {
            key = $1
            if ($9 == "query") { hq[key] = $11; bq[key] = $14 } else { hs[key] = $11; bs[key] = $14 }
            x[key] = $2 " " $4 " " $8
            seen[key] = 1
        }
        END { for (k in seen) print k "|" hq[k] "|" bq[k] "|" hs[k] "|" bs[k] }' "$csv_dir/versus-summary.csv"
}
hash_of() { # workload
    awk -F, -v w="$1" '$1 == w && $9 == "hash_table" { print $15; exit }' "$csv_dir/versus.csv"
}

for bits in 64 32; do
    out="$work/sizes$bits.dat"
    : > "$out"
    series "^size u$bits " | while IFS='|' read -r w hq bq hs bs; do
        log2=${w##*2^}
        echo "$log2 $hq $bq ${hs:-NaN} ${bs:-NaN} $(hash_of "$w")" >> "$out"
    done
    sort -n "$out" -o "$out"
    gnuplot <<GP
$term
set output "$plot_dir/versus_sizes_${bits}bit.svg"
set title "Point lookups, ${bits}-bit keys, 2^27 uniform queries in device memory (${device}; bench_versus)" noenhanced
set xlabel "tree keys (log2)"
set ylabel "G lookups/s"
set key top right
set grid
set yrange [0:*]
plot "$out" using 1:2 with linespoints lw 2 pt 7 title "Harmonia defaults, query order", \
     "$out" using 1:3 with linespoints lw 2 pt 6 dt 2 title "strongest ordered baseline, query order", \
     "$out" using 1:4 with linespoints lw 2 pt 5 title "Harmonia defaults, sorted order", \
     "$out" using 1:5 with linespoints lw 2 pt 4 dt 2 title "strongest ordered baseline, sorted order", \
     "$out" using 1:6 with linespoints lw 1 pt 1 dt 3 title "hash table, 50% load (not ordered)"
GP
    echo "wrote $plot_dir/versus_sizes_${bits}bit.svg"
done

for bits in 64 32; do
    out="$work/batch$bits.dat"
    : > "$out"
    series "^batch 2\\^[0-9]+ u$bits " | while IFS='|' read -r w hq bq hs bs; do
        b=${w#batch 2^}
        b=${b%% *}
        echo "$b $hq $bq ${hs:-NaN} ${bs:-NaN} $(hash_of "$w")" >> "$out"
    done
    sort -n "$out" -o "$out"
    [ -s "$out" ] || continue
    gnuplot <<GP
$term
set output "$plot_dir/versus_batch_${bits}bit.svg"
set title "Point lookups against batch size, ${bits}-bit keys (${device}; bench_versus)" noenhanced
set xlabel "queries in the batch (log2)"
set ylabel "G lookups/s"
set key top left
set grid
set logscale y
plot "$out" using 1:2 with linespoints lw 2 pt 7 title "Harmonia defaults, query order", \
     "$out" using 1:3 with linespoints lw 2 pt 6 dt 2 title "strongest ordered baseline, query order", \
     "$out" using 1:4 with linespoints lw 2 pt 5 title "Harmonia defaults, sorted order", \
     "$out" using 1:5 with linespoints lw 2 pt 4 dt 2 title "strongest ordered baseline, sorted order", \
     "$out" using 1:6 with linespoints lw 1 pt 1 dt 3 title "hash table, 50% load (not ordered)"
GP
    echo "wrote $plot_dir/versus_batch_${bits}bit.svg"
done

# every point-lookup workload of the run (sizes, hit rates, query distributions, dense keys, batch
# sizes): Harmonia's defaults over the strongest ordered baseline, query order and sorted order, with
# the 1.0 and 1.25 lines of issue 11
out="$work/ratios.dat"
awk -F, 'NR > 1 && ($9 == "query" || $9 == "sorted") {
        key = $1
        if (!(key in seen)) { seen[key] = ++n; name[n] = key }
        if ($9 == "query") q[key] = $15; else s[key] = $15
    }
    END { for (i = 1; i <= n; i++) { k = name[i]; gsub(/ /, "_", name[i]);
          printf "%d \"%s\" %s %s\n", i - 1, k, (k in q) ? q[k] : "NaN", (k in s) ? s[k] : "NaN" } }' \
    "$csv_dir/versus-summary.csv" > "$out"
if [ -s "$out" ]; then
    gnuplot <<GP
$term
set terminal svg size 1400,760 dynamic enhanced font 'Helvetica,12' background rgb 'white'
set output "$plot_dir/versus_ratios.svg"
set title "Point lookups: Harmonia's defaults / strongest ordered baseline of the same run (${device}; bench_versus)" noenhanced
set ylabel "ratio"
set key top right
set grid ytics
set yrange [0:*]
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set boxwidth 0.9
set xtics rotate by -60 left noenhanced font ',10'
set bmargin 12
set arrow from graph 0, first 1.0 to graph 1, first 1.0 nohead lw 2 lc rgb 'black'
set arrow from graph 0, first 1.25 to graph 1, first 1.25 nohead lw 1 dt 2 lc rgb 'black'
plot "$out" using 3:xtic(2) title "query order", "" using 4 title "sorted order"
GP
    echo "wrote $plot_dir/versus_ratios.svg"
fi
