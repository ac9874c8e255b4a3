#!/usr/bin/env bash
# test.sh — the whole test suite on a fresh Debian machine: installs the packages, builds (with CUDA
# where nvcc is found) and runs every test, installs that build into a temporary root and builds the
# example against it through pkg-config (shared and static; scripts/test_install.sh), does the same
# with a CPU-only build of the library, then the Python package's (pip install . into a virtual
# environment in build-py/, python -m pytest, the OLAP example), then runs the tests of a CPU-only build under
# AddressSanitizer and UndefinedBehaviorSanitizer, then (where clang is installed) runs each
# libFuzzer harness of fuzz/ for HARMONIA_FUZZ_SECONDS (default 25) from its seed corpus; a
# finding fails the run; then (where clang's libarcher.so is installed) the OpenMP library tests
# of a CPU-only build under ThreadSanitizer. GPU tests report skipped without a GPU.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/deps.sh
harmonia_install_deps
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-$(nproc)}
# each stage's wall time, printed when the next one starts and at the end (CI's budget is 15 minutes)
stage_name="" stage_t0=$SECONDS
stage() {
    [ -n "$stage_name" ] && echo "-- $stage_name: $((SECONDS - stage_t0)) s (total $SECONDS s)"
    stage_name=$1 stage_t0=$SECONDS
    [ -n "$1" ] && echo "== $1 =="
    return 0
}

stage "build and test (release)"
[ -d build-test ] || meson setup build-test -Dbuildtype=release
ninja -C build-test
# CUDA objects must carry their header dependencies (root meson.build: meson 1.0 gives nvcc none,
# the build names the depfiles itself); a silent mismatch would link stale objects after a change
if grep -q "cuda_COMPILER" build-test/build.ninja; then
    ninja -C build-test -t deps harmonia/libcu_harmonia_gpu_query_cu.a.p/gpu_query.cu.o | grep "harmonia/tree_internal.h" > /dev/null || { # not -q: an early exit would SIGPIPE ninja under pipefail
        echo "test.sh: the CUDA objects have no header dependencies (depfile path mismatch in meson.build)" >&2
        exit 1
    }
fi
meson test -C build-test --print-errorlogs --num-processes 1

stage "the installed library: meson install, then the example through pkg-config (shared and static)"
bash scripts/test_install.sh build-test
# where CUDA is absent the CPU-only library must install and link too
[ -d build-cpu ] || meson setup build-cpu -Dcuda=disabled -Dtests=false -Dbuildtype=release > /dev/null
ninja -C build-cpu > /dev/null
bash scripts/test_install.sh build-cpu

stage "Python package: pip install . into a venv, python -m pytest, the example"
# The build dir is kept (build-py/build), so a second run compiles only what changed; CUDA (where
# nvcc is found) for sm_90 alone: CI has no GPU, this checks that the GPU engine builds and links.
harmonia_install_python_deps
py_started=$SECONDS
[ -x build-py/venv/bin/python ] || python3 -m venv build-py/venv
build-py/venv/bin/python -m pip install -q --upgrade pip
build-py/venv/bin/python -m pip install -q numpy pyarrow pytest
build-py/venv/bin/python -m pip install -q . -Cbuild-dir=build-py/build -Csetup-args=-Dgpu_arch=90
build-py/venv/bin/python -m pytest -q -rs -p no:cacheprovider python/tests
py_example=$(mktemp -d)
build-py/venv/bin/python examples/olap_join.py --dimension "$py_example/customers.parquet" --customers 200000 \
    --orders 1000000 | tail -3
rm -rf "$py_example"
echo "Python package: $((SECONDS - py_started)) s"

stage "CPU-only build under AddressSanitizer + UndefinedBehaviorSanitizer"
[ -d build-asan ] || meson setup build-asan -Dcuda=disabled -Dbuildtype=debug -Doptimization=1 \
    -Db_sanitize=address,undefined -Db_lundef=false
ninja -C build-asan
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
    meson test -C build-asan --print-errorlogs --num-processes 1 --timeout-multiplier 4

stage "Python tests against the extension under AddressSanitizer + UndefinedBehaviorSanitizer"
# the extension and the library objects in it instrumented (CPU engine), preloaded runtimes; Python
# itself is not instrumented, so leaks are not checked
py_started=$SECONDS
rm -rf build-py/asan-site
build-py/venv/bin/python -m pip install -q --no-deps --target build-py/asan-site . -Cbuild-dir=build-py/asan \
    -Csetup-args=-Dcuda=disabled -Csetup-args=-Dbuildtype=debug -Csetup-args=-Doptimization=1 \
    -Csetup-args=-Db_sanitize=address,undefined -Csetup-args=-Db_lundef=false
asan_python() {
    LD_PRELOAD="$(gcc -print-file-name=libasan.so) $(gcc -print-file-name=libubsan.so)" \
        ASAN_OPTIONS=detect_leaks=0:abort_on_error=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
        PYTHONPATH=build-py/asan-site build-py/venv/bin/python "$@"
}
asan_python -c 'import harmonia, sys; sys.exit("asan-site" not in harmonia.__file__)'
asan_python -m pytest -q -p no:cacheprovider python/tests
echo "Python tests under the sanitizers: $((SECONDS - py_started)) s"

stage "fuzzing: libFuzzer harnesses, ${HARMONIA_FUZZ_SECONDS:-25} s each (clang)"
if harmonia_install_fuzz_deps; then
    [ -d build-fuzz ] || CC=clang meson setup build-fuzz -Dfuzz=true -Dcuda=disabled -Dtests=false \
        -Dbuildtype=debug -Doptimization=1 -Db_sanitize=address,undefined -Db_lundef=false
    ninja -C build-fuzz fuzz/fuzz_index_load fuzz/fuzz_cli_parsers
    for harness in index_load:65536 cli_parsers:4096; do
        name=${harness%%:*}
        work=$(mktemp -d)   # new inputs go here; the checked-in seeds stay as they are
        status=0
        ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
            ./build-fuzz/fuzz/fuzz_$name -max_total_time="${HARMONIA_FUZZ_SECONDS:-25}" -timeout=10 \
            -rss_limit_mb=2048 -max_len="${harness##*:}" -print_final_stats=1 \
            -artifact_prefix=build-fuzz/finding-$name- "$work" fuzz/corpus/$name \
            > build-fuzz/fuzz_$name.log 2>&1 || status=$?
        rm -rf "$work"
        grep -E "^(stat::number_of_executed_units|stat::peak_rss_mb|Done)" build-fuzz/fuzz_$name.log || true
        if [ "$status" -ne 0 ]; then
            tail -n 60 build-fuzz/fuzz_$name.log >&2
            echo "test.sh: fuzz_$name found a problem (exit $status); the input is build-fuzz/finding-$name-*," \
                 "the log build-fuzz/fuzz_$name.log" >&2
            exit 1
        fi
    done
else
    echo "no clang: fuzzing skipped (install clang to run it)"
fi

# ThreadSanitizer needs an instrumented OpenMP runtime: gcc's libgomp is not, so a gcc -fsanitize=thread
# build reports libgomp's own barriers, criticals and singles as races (seen in issue 15). clang's
# LLVM OpenMP with the Archer tool (libarcher.so, in libomp-dev) tells TSan what OpenMP synchronises;
# the runtime's own internals are not instrumented (ignore_noninstrumented_modules). The CLI tests
# stay out: they run the tool under resource limits (file size, threads) that TSan's shadow
# memory and libomp's messages do not fit.
stage "CPU-only build under ThreadSanitizer (clang, LLVM OpenMP + Archer): the OpenMP library tests"
archer=""
if command -v clang >/dev/null 2>&1 && harmonia_install_fuzz_deps; then
    archer="$(dirname "$(readlink -f "$(command -v clang)")")/../lib/libarcher.so"
fi
if [ -n "$archer" ] && [ -f "$archer" ]; then
    [ -d build-tsan ] || CC=clang meson setup build-tsan -Dcuda=disabled -Dbuildtype=debug -Doptimization=1 \
        -Db_sanitize=thread -Db_lundef=false
    ninja -C build-tsan
    OMP_TOOL_LIBRARIES="$archer" TSAN_OPTIONS="halt_on_error=1 ignore_noninstrumented_modules=1" \
        meson test -C build-tsan --print-errorlogs --num-processes 1 --timeout-multiplier 4 \
        differential build update checker index_file concurrent
else
    echo "no clang with libarcher.so: ThreadSanitizer skipped (install clang and libomp-dev to run it)"
fi
stage ""
