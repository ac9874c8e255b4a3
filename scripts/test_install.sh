#!/usr/bin/env bash
# test_install.sh BUILD — what a user of a fresh clone does with the library: installs the build
# into a temporary root (meson install --destdir), checks what was installed (the header and the
# generated version header, libharmonia.so.<major> and its soname links, libharmonia.a, harmonia.pc),
# then builds examples/olap_column.c against the installed copy through pkg-config twice — linked
# with the shared library (pkg-config --cflags --libs harmonia) and with the static one
# (pkg-config --static --libs harmonia, libharmonia.a named with -l:) — and runs both. scripts/test.sh
# runs it on its CUDA build (where nvcc is) and on a CPU-only build. Exit 0 when everything holds.
set -euo pipefail
build=$1
root=$(cd "$(dirname "$0")/.." && pwd)
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
meson install -C "$build" --destdir "$stage" --no-rebuild > "$stage/install.log" 2>&1 || {
    cat "$stage/install.log" >&2
    echo "test_install.sh: meson install failed" >&2
    exit 1
}
option() { meson introspect "$build" --buildoptions | python3 -c "import json,sys; print(next(o['value'] for o in json.load(sys.stdin) if o['name'] == '$1'))"; }
prefix=$(option prefix)
libdir=$(option libdir)
includedir=$(option includedir)
case "$libdir" in /*) ;; *) libdir="$prefix/$libdir" ;; esac
case "$includedir" in /*) ;; *) includedir="$prefix/$includedir" ;; esac
version=$(meson introspect "$build" --projectinfo | python3 -c 'import json,sys; print(json.load(sys.stdin)["version"])')
major=${version%%.*}
missing=0
for f in "$includedir/harmonia.h" "$includedir/harmonia_version.h" "$libdir/libharmonia.so.$version" \
         "$libdir/libharmonia.so.$major" "$libdir/libharmonia.so" "$libdir/libharmonia.a" "$libdir/pkgconfig/harmonia.pc"; do
    [ -e "$stage$f" ] || { echo "test_install.sh: not installed: $f" >&2; missing=1; }
done
[ $missing -eq 0 ] || exit 1
soname=$(objdump -p "$stage$libdir/libharmonia.so.$version" | awk '$1 == "SONAME" {print $2}')
[ "$soname" = "libharmonia.so.$major" ] || { echo "test_install.sh: soname '$soname', not libharmonia.so.$major" >&2; exit 1; }

# pkg-config on the staged copy: its prefix moved under the temporary root
export PKG_CONFIG_PATH="$stage$libdir/pkgconfig"
pc() { pkg-config --define-variable=prefix="$stage$prefix" "$@" harmonia; }
[ "$(pc --modversion)" = "$version" ] || { echo "test_install.sh: harmonia.pc says $(pc --modversion), not $version" >&2; exit 1; }
cc=${CC:-cc}
example="$root/examples/olap_column.c"
# shared
$cc -std=c11 -Wall -Wextra -Werror -o "$stage/olap_shared" "$example" $(pc --cflags) $(pc --libs)
readelf -d "$stage/olap_shared" | grep -q "libharmonia.so.$major" || {
    echo "test_install.sh: the shared example does not need libharmonia.so.$major" >&2
    exit 1
}
LD_LIBRARY_PATH="$stage$libdir" "$stage/olap_shared" 100000 > "$stage/shared.out" || {
    cat "$stage/shared.out" >&2
    echo "test_install.sh: the example linked with libharmonia.so failed" >&2
    exit 1
}
# static: libharmonia.a and what its Libs.private name
static_libs=$(pc --static --libs)
static_libs=${static_libs/-lharmonia/-l:libharmonia.a}
$cc -std=c11 -Wall -Wextra -Werror -o "$stage/olap_static" "$example" $(pc --cflags) $static_libs
if readelf -d "$stage/olap_static" | grep -q libharmonia; then
    echo "test_install.sh: the static example still needs libharmonia.so" >&2
    exit 1
fi
"$stage/olap_static" 100000 > "$stage/static.out" || {
    cat "$stage/static.out" >&2
    echo "test_install.sh: the example linked with libharmonia.a failed" >&2
    exit 1
}
echo "installed harmonia $version ($(basename "$build")): libharmonia.so.$major and libharmonia.a, harmonia.pc;" \
     "examples/olap_column built through pkg-config, shared and static: $(tail -1 "$stage/shared.out") / $(tail -1 "$stage/static.out")"
