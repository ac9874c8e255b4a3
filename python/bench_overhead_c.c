/* bench_overhead_c.c — the C side of bench/python_overhead.py: the same point lookups as the Python
 * call, from C, through the same data. Reads the keys and queries the Python script wrote (raw
 * little-endian arrays of the key width), builds the tree with the same configuration (values =
 * row ids), and times harmonia_lookup over the whole batch with preallocated results: host arrays,
 * or (--device) arrays in GPU memory on the default stream, synchronous.
 * One-shot: warm-up calls, then one line per timed run and a summary line:
 *   result median_s=<s> min_s=<s> found=<hits> value_sum=<sum of values mod 2^64>
 * --serve: after the warm-up prints "ready", then for each line "N" read from stdin times N calls and
 * prints "times <s> ... found=<hits> value_sum=<sum>" (so that the script can alternate C and Python
 * call by call on a noisy machine); ends at EOF.
 * Usage: bench_overhead_c --bits 32|64 --keys FILE --queries FILE [--runs R] [--warmup W]
 *                         [--backend auto|cpu|gpu] [--threads T] [--device] [--serve] [--cpu-time] */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "harmonia.h"
#ifdef HARMONIA_HAVE_CUDA
#include <cuda_runtime.h>
#endif

/* Memory as NumPy allocates it on Linux: malloc, and transparent huge pages asked for (madvise) over
 * the aligned part of blocks of 4 MiB and more, so that both sides' arrays sit on the same pages. */
static void *alloc_like_numpy(size_t bytes)
{
    char *p = malloc(bytes ? bytes : 1);
    if (p && bytes >= (4u << 20)) {
        const uintptr_t huge = 2u << 20;
        uintptr_t start = ((uintptr_t)p + huge - 1) & ~(huge - 1);
        if (start < (uintptr_t)p + bytes)
            madvise((void *)start, (uintptr_t)p + bytes - start, MADV_HUGEPAGE);
    }
    return p;
}

static void *read_file(const char *path, size_t *bytes_out)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        perror(path);
        return NULL;
    }
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fseek(f, 0, SEEK_SET);
    void *data = alloc_like_numpy(size > 0 ? (size_t)size : 1);
    if (!data || (size > 0 && fread(data, 1, (size_t)size, f) != (size_t)size)) {
        fprintf(stderr, "%s: read failed\n", path);
        fclose(f);
        free(data);
        return NULL;
    }
    fclose(f);
    *bytes_out = (size_t)size;
    return data;
}

/* Wall-clock time, or (--cpu-time) the process's CPU time: on a machine others load, the CPU time of
 * a single-threaded call (--threads 1: no OpenMP thread spins) is its work alone. */
static clockid_t timer = CLOCK_MONOTONIC;

static double now(void)
{
    struct timespec ts;
    clock_gettime(timer, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int compare_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The hits and the sum of the values of the last call (results copied from the device first). */
static void checksum(int device, unsigned bits, uint64_t n, void *values, uint8_t *found, void *v_arg, uint8_t *f_arg,
                     uint64_t *hits_out, uint64_t *sum_out)
{
#ifdef HARMONIA_HAVE_CUDA
    if (device) {
        cudaMemcpy(values, v_arg, n * (bits / 8), cudaMemcpyDeviceToHost);
        cudaMemcpy(found, f_arg, n, cudaMemcpyDeviceToHost);
    }
#else
    (void)device; (void)v_arg; (void)f_arg;
#endif
    uint64_t hits = 0, sum = 0;
    for (uint64_t i = 0; i < n; i++) {
        hits += found[i] != 0;
        sum += bits == 32 ? ((const uint32_t *)values)[i] : ((const uint64_t *)values)[i];
    }
    *hits_out = hits;
    *sum_out = sum;
}

int main(int argc, char **argv)
{
    const char *keys_path = NULL, *queries_path = NULL, *backend = "auto";
    unsigned bits = 64;
    int runs = 10, warmup = 2, threads = 0, device = 0, serve = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *next = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--bits") && next) bits = (unsigned)atoi(argv[++i]);
        else if (!strcmp(a, "--keys") && next) keys_path = argv[++i];
        else if (!strcmp(a, "--queries") && next) queries_path = argv[++i];
        else if (!strcmp(a, "--runs") && next) runs = atoi(argv[++i]);
        else if (!strcmp(a, "--warmup") && next) warmup = atoi(argv[++i]);
        else if (!strcmp(a, "--backend") && next) backend = argv[++i];
        else if (!strcmp(a, "--threads") && next) threads = atoi(argv[++i]);
        else if (!strcmp(a, "--device")) device = 1;
        else if (!strcmp(a, "--serve")) serve = 1;
        else if (!strcmp(a, "--cpu-time")) timer = CLOCK_PROCESS_CPUTIME_ID;
        else {
            fprintf(stderr, "usage: %s --bits 32|64 --keys FILE --queries FILE [--runs R] [--warmup W] "
                            "[--backend auto|cpu|gpu] [--threads T] [--device] [--serve] [--cpu-time]\n", argv[0]);
            return 2;
        }
    }
    if (!keys_path || !queries_path || (bits != 32 && bits != 64) || runs < 1) {
        fprintf(stderr, "%s: --bits 32|64, --keys and --queries are required (--help)\n", argv[0]);
        return 2;
    }
    const size_t kb = bits / 8;
    size_t key_bytes = 0, query_bytes = 0;
    void *keys = read_file(keys_path, &key_bytes), *queries = read_file(queries_path, &query_bytes);
    if (!keys || !queries)
        return 1;
    const uint64_t n_keys = key_bytes / kb, n = query_bytes / kb;

    harmonia_build_config bc;
    harmonia_build_config_init(&bc);
    bc.key_bits = bits;
    harmonia_tree *tree = NULL;
    if (harmonia_build(&bc, keys, NULL, n_keys, &tree) != HARMONIA_OK) {
        fprintf(stderr, "build: %s\n", harmonia_last_error(NULL));
        return 1;
    }
    harmonia_query_config qc;
    harmonia_query_config_init(&qc);
    qc.backend = !strcmp(backend, "cpu") ? HARMONIA_BACKEND_CPU
               : !strcmp(backend, "gpu") ? HARMONIA_BACKEND_GPU : HARMONIA_BACKEND_AUTO;
    qc.threads = threads;
    qc.memory = device ? HARMONIA_MEMORY_DEVICE : HARMONIA_MEMORY_HOST;

    void *values = alloc_like_numpy(n * kb + 1);
    uint8_t *found = alloc_like_numpy(n + 1);
    void *q_arg = queries, *v_arg = values;
    uint8_t *f_arg = found;
    if (!values || !found)
        return 1;
    if (device) {
#ifdef HARMONIA_HAVE_CUDA
        if (cudaMalloc(&q_arg, n * kb + 1) != cudaSuccess || cudaMalloc(&v_arg, n * kb + 1) != cudaSuccess ||
            cudaMalloc((void **)&f_arg, n + 1) != cudaSuccess ||
            cudaMemcpy(q_arg, queries, n * kb, cudaMemcpyHostToDevice) != cudaSuccess) {
            fprintf(stderr, "device arrays: %s\n", cudaGetErrorString(cudaGetLastError()));
            return 1;
        }
#else
        fprintf(stderr, "--device: this build has no CUDA\n");
        return 77;
#endif
    }
    if (serve) {
        for (int r = 0; r < warmup; r++)
            if (harmonia_lookup(tree, &qc, q_arg, n, v_arg, f_arg) != HARMONIA_OK) {
                fprintf(stderr, "lookup: %s\n", harmonia_last_error(tree));
                return 1;
            }
        printf("ready\n");
        fflush(stdout);
        char line[64];
        while (fgets(line, sizeof line, stdin)) {
            const int calls = atoi(line);
            printf("times");
            for (int r = 0; r < calls; r++) {
                const double t0 = now();
                if (harmonia_lookup(tree, &qc, q_arg, n, v_arg, f_arg) != HARMONIA_OK) {
                    fprintf(stderr, "lookup: %s\n", harmonia_last_error(tree));
                    return 1;
                }
                printf(" %.6f", now() - t0);
            }
            uint64_t hits = 0, sum = 0;
            checksum(device, bits, n, values, found, v_arg, f_arg, &hits, &sum);
            printf(" found=%" PRIu64 " value_sum=%" PRIu64 "\n", hits, sum);
            fflush(stdout);
        }
        harmonia_free(tree);
        return 0;
    }
    double *seconds = calloc((size_t)runs, sizeof(double));
    for (int r = -warmup; r < runs; r++) {
        const double t0 = now();
        if (harmonia_lookup(tree, &qc, q_arg, n, v_arg, f_arg) != HARMONIA_OK) {
            fprintf(stderr, "lookup: %s\n", harmonia_last_error(tree));
            return 1;
        }
        const double t = now() - t0;
        if (r >= 0) {
            seconds[r] = t;
            printf("run %d %.6f s\n", r, t);
        }
    }
    uint64_t hits = 0, sum = 0;
    checksum(device, bits, n, values, found, v_arg, f_arg, &hits, &sum);
    qsort(seconds, (size_t)runs, sizeof(double), compare_double);
    const double median = runs % 2 ? seconds[runs / 2] : (seconds[runs / 2 - 1] + seconds[runs / 2]) / 2;
    printf("result median_s=%.6f min_s=%.6f found=%" PRIu64 " value_sum=%" PRIu64 "\n", median, seconds[0], hits, sum);
    harmonia_free(tree);
    return 0;
}
