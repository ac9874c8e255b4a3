#!/usr/bin/env bash
# plot-versus.sh — renders bench_versus's tables (versus.csv, versus-summary.csv) as SVG plots with
# gnuplot (Debian: apt-get install gnuplot-nox): point lookups against tree size and against batch
# size, Harmonia's defaults beside the strongest ordered baseline of the same run (query order and
# sorted order) and the hash table. Runs on the development machine from the CSVs the device returned.
# Usage: bash bench/plot-versus.sh [CSV_DIR (default bench/data/session4/versus-final)] [PLOT_DIR (bench/plots)]
set -euo pipefail
csv_dir=${1:-bench/data/session4/versus-final}
plot_dir=${2:-bench/plots}
command -v gnuplot > /dev/null || { echo "plot-versus.sh: gnuplot is missing (apt-get install gnuplot-nox)" >&2; exit 1; }
for f in versus.csv versus-summary.csv; do
    [ -f "$csv_dir/$f" ] || { echo "plot-versus.sh: $csv_dir/$f is missing" >&2; exit 1; }
done
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
set title "Point lookups, ${bits}-bit keys, 2^27 uniform queries in device memory (H100; bench_versus)" noenhanced
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
set title "Point lookups against batch size, ${bits}-bit keys (H100; bench_versus)" noenhanced
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
