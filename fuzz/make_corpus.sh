#!/usr/bin/env bash
# make_corpus.sh — writes the seed corpora of the fuzz harnesses into fuzz/corpus/ (checked in;
# run again after a change of the index format or of the parsers' syntax). Usage:
#   bash fuzz/make_corpus.sh BUILD/harmonia/cli/harmonia
set -euo pipefail
tool=${1:?usage: make_corpus.sh PATH-TO-harmonia}
cd "$(dirname "$0")"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
out=corpus/index_load
rm -f "$out"/*
# index files: a tiny tree, an empty one, a 32-bit tree of three levels, a 64-bit tree of four
# levels with half-full leaves (padding everywhere); all of a few pages
printf '1\n2\n3\n' > "$work/tiny.txt"
: > "$work/empty.txt"
seq 0 7 1400 > "$work/k200.txt"
seq 0 3 1500 > "$work/k500.txt"
"$tool" build --input "$work/tiny.txt" --out "$out/tiny-64.idx" --quiet
"$tool" build --input "$work/empty.txt" --out "$out/empty.idx" --quiet
"$tool" build --input "$work/k200.txt" --bits 32 --fanout 8 --leaf-size 8 --out "$out/levels3-32.idx" --quiet
"$tool" build --input "$work/k500.txt" --fanout 8 --leaf-size 8 --fill 0.5 --out "$out/levels4-64.idx" --quiet
# parser inputs: the first byte picks the parser (bit 0: 32-bit keys; bit 1: two fields;
# bits 2-3: text records, binary records, text operations, binary operations)
out=corpus/cli_parsers
rm -f "$out"/*
printf '\000# keys\n1\n2 # two\n\n0x10\n' > "$out/text-keys"
printf '\002key,value\n1,10\n2 20\n0xFF,\t3\n' > "$out/text-pairs"
printf '\003 4294967295,1\n0,0\n' > "$out/text-pairs-32"
printf '\001abc\n+5\n1e3\n1.5\n99999999999999999999\n' > "$out/text-bad-numbers"
printf '\004\001\000\000\000\000\000\000\000\377\377\377\377\377\377\377\377' > "$out/bin-keys"
printf '\007\001\000\000\000\002\000\000\000\003\000\000\000\004\000\000\000' > "$out/bin-pairs-32"
printf '\010+ 1 2\n- 3\n= 4,5\n* 6 7 # upsert\n\n' > "$out/text-ops"
printf '\011+ 4294967296 1\n- 1 2\n? 3\n' > "$out/text-ops-bad"
printf '\014\000\000\000\000\000\000\000\000\005\000\000\000\000\000\000\000\006\000\000\000\000\000\000\000\003\000\000\000\000\000\000\000\007\000\000\000\000\000\000\000\000\000\000\000\000\000\000\000' > "$out/bin-ops"
ls -l corpus/*
