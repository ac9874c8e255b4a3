#!/usr/bin/env bash
# check_exports.sh LIB.so LIB.a SONAME — the installed libraries export the public API only:
# every dynamic symbol libharmonia.so defines is harmonia_* (or the version script's node), every
# global symbol libharmonia.a defines is harmonia_*, the soname is SONAME, and the allocation test
# hook (tests only) is in neither.
set -euo pipefail
so=$1 a=$2 soname=$3
status=0
# the API: every function the public header declares HARMONIA_API
header=$(dirname "$0")/../include/harmonia.h
api=$(grep -o -E '^HARMONIA_API [^(]*\bharmonia_[a-z0-9_]+\(' "$header" | grep -o -E 'harmonia_[a-z0-9_]+\($' | tr -d '(' | sort -u)
exported=$(nm -D --defined-only "$so" | awk '{print $NF}' | sed 's/@.*//' | grep -v -E '^HARMONIA_[0-9_.]+$' | sort -u)
bad=$(comm -13 <(echo "$api") <(echo "$exported"))
if [ -n "$bad" ]; then
    echo "$so exports symbols outside the public API:" >&2
    echo "$bad" | head -40 >&2
    status=1
fi
missing=$(comm -23 <(echo "$api") <(echo "$exported"))
if [ -n "$missing" ]; then
    echo "$so does not export what include/harmonia.h declares:" >&2
    echo "$missing" >&2
    status=1
fi
count=$(echo "$exported" | grep -c . || true)
defined=$(nm -g --defined-only "$a" | awk 'NF >= 3 {print $3}' | sort -u)
bad=$(comm -13 <(echo "$api") <(echo "$defined"))
if [ -n "$bad" ]; then
    echo "$a defines global symbols outside the public API:" >&2
    echo "$bad" | head -40 >&2
    status=1
fi
if nm "$a" 2>/dev/null | grep -q kr_test_fail_allocation_after || nm -D "$so" | grep -q kr_test_fail_allocation_after; then
    echo "the test hook kr_test_fail_allocation_after is in the installed library" >&2
    status=1
fi
actual=$(objdump -p "$so" | awk '$1 == "SONAME" {print $2}')
if [ "$actual" != "$soname" ]; then
    echo "$so has soname '$actual', not '$soname'" >&2
    status=1
fi
[ $status -eq 0 ] && echo "OK: the $count functions of include/harmonia.h exported, soname $actual, nothing else defined globally"
exit $status
