#!/usr/bin/env bash
# run-gpu-tests.sh — the Python package on the GPU machine (no network; Python 3.12 with NumPy, CuPy,
# PyArrow, PyTorch and pytest already there). What it runs, by argument (default: all = wheel tests
# example bench):
#   wheel    install .whl/harmonia-*.whl (built on the development machine by
#            python/stage-gpu-wheels.sh: CUDA for sm_90, abi3, so it loads in 3.12) into /tmp/site
#   source   instead, `pip install .` here from this checkout through meson-python (wheels carried in
#            .whl/, xxHash's headers from .device-deps/): the build from source, as a user runs it
#   tests    python -m pytest python/tests (the GPU tests run; the others run their default backend,
#            which is the GPU engine here)
#   example  examples/olap_join.py on CuPy arrays, then with --cpu
#   bench    bench/python_overhead.py: 2^24 lookups from CuPy (device arrays) and from NumPy (host
#            arrays: GPU engine, then CPU engine) against the same call from C (.whl/bin/bench_overhead_c)
# Logs go to $OUT (the device tool brings them back); a summary is printed.
# Usage (device tool, from the repo root, carry [".whl"], and ".device-deps" for `source`):
#   bash python/run-gpu-tests.sh                # = wheel tests example bench
#   bash python/run-gpu-tests.sh source tests   # build from source instead of the staged wheel
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-python/out}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
what=("$@")
[ ${#what[@]} -eq 0 ] && what=(all)
want() {
    for w in "${what[@]}"; do
        [ "$w" = "$1" ] && return 0
        [ "$w" = all ] && case "$1" in wheel|tests|example|bench) return 0 ;; esac
    done
    return 1
}
PY=${PYTHON:-python3}
status=0
SITE=${SITE:-/tmp/site}
{
    nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
    git log -1 --format='commit %H %s' 2>/dev/null
    $PY -c 'import sys, numpy, cupy, pyarrow, pytest; print("python", sys.version.split()[0], "numpy", numpy.__version__, "cupy", cupy.__version__, "pyarrow", pyarrow.__version__, "pytest", pytest.__version__)'
} 2>&1 | tee "$OUT/device.txt"

# the carried wheels (meson-python and what it needs, the harmonia wheel): once, into $SITE
$PY -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target "$SITE" .whl/*.whl \
    > "$OUT/install.log" 2>&1 || { cat "$OUT/install.log"; exit 1; }
export PYTHONPATH="$SITE${PYTHONPATH:+:$PYTHONPATH}"
export PATH="$SITE/bin:$PATH"

if want source; then
    # xxHash's headers (the library's checksums) from the staged Debian package, as bench/run-gpu.sh
    hd=/opt/hdeps
    if [ ! -f "$hd/usr/include/xxhash.h" ]; then
        mkdir -p "$hd"
        for f in .device-deps/libxxhash*.deb; do dpkg -x "$f" "$hd"; done
        sed -i "s#-L/usr/#-L$hd/usr/#g; s#-I/usr/#-I$hd/usr/#g; s#=/usr#=$hd/usr#g" \
            "$hd"/usr/lib/x86_64-linux-gnu/pkgconfig/libxxhash.pc
    fi
    export PKG_CONFIG_PATH="$hd/usr/lib/x86_64-linux-gnu/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
    rm -rf "$SITE/harmonia" "$SITE"/harmonia-*.dist-info
    t0=$SECONDS
    # no network: the build requirements come from $SITE (no build isolation)
    if $PY -m pip install --no-index --no-deps --no-build-isolation --target "$SITE" --upgrade . \
        -Cbuild-dir=build-py-gpu -Csetup-args=-Dgpu_arch=90 > "$OUT/source-build.log" 2>&1; then
        echo "pip install . (from source, CUDA sm_90): OK in $((SECONDS - t0)) s"
        ninja -C build-py-gpu python/bench_overhead_c >> "$OUT/source-build.log" 2>&1 || echo "bench_overhead_c: build failed"
    else
        tail -40 "$OUT/source-build.log"
        echo "pip install . (from source): FAILED"
        exit 1
    fi
fi
$PY -c 'import harmonia; print("harmonia", harmonia.__version__, "from", harmonia.__file__, "built_with_cuda", harmonia.built_with_cuda, "GPU", harmonia.device_probe())' \
    2>&1 | tee -a "$OUT/device.txt"

if want tests; then
    t0=$SECONDS
    $PY -m pytest -q -rs -p no:cacheprovider python/tests > "$OUT/pytest.log" 2>&1
    rc=$?
    tail -25 "$OUT/pytest.log"
    echo "pytest: exit $rc in $((SECONDS - t0)) s"
    [ $rc -eq 0 ] || status=1
fi

if want example; then
    work=$(mktemp -d)
    {
        $PY examples/olap_join.py --dimension "$work/customers.parquet" --customers 2000000 --orders 16000000 &&
        $PY examples/olap_join.py --dimension "$work/customers.parquet" --customers 2000000 --orders 16000000 --cpu
    } > "$OUT/example.log" 2>&1
    rc=$?
    cat "$OUT/example.log"
    echo "example: exit $rc"
    [ $rc -eq 0 ] || status=1
    rm -rf "$work"
fi

if want bench; then
    C=.whl/bin/bench_overhead_c
    want source && [ -x build-py-gpu/python/bench_overhead_c ] && C=build-py-gpu/python/bench_overhead_c
    chmod +x "$C" 2>/dev/null
    {
        echo "== device arrays (CuPy) against C on device arrays"
        $PY bench/python_overhead.py --c-program "$C" --device --runs 15
        echo "== host arrays (NumPy), GPU engine"
        $PY bench/python_overhead.py --c-program "$C" --backend gpu --runs 5
        echo "== host arrays (NumPy), CPU engine"
        $PY bench/python_overhead.py --c-program "$C" --backend cpu --runs 3
        echo "== device arrays (CuPy) in one process: the wrapper against the extension's C call alone"
        $PY bench/python_overhead_inprocess.py
    } > "$OUT/bench-overhead.txt" 2>&1
    rc=$?
    cat "$OUT/bench-overhead.txt"
    echo "bench_overhead: exit $rc"
    [ $rc -eq 0 ] || status=1
fi
exit $status
