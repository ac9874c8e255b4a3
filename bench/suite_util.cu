/* suite_util.cu — the suite's plumbing: loud CUDA failures, device allocation, the clock and the
 * median, the time budget, the CSV tables, and the shape plan of the pointer B+tree baseline.
 * No measurement happens here. */
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>

#include "bench/suite.h"

static suite_tables *open_tables = NULL; /* where a fatal failure is recorded */

void suite_cuda_fail(const char *call, cudaError_t e, const char *file, int line)
{
    fprintf(stderr, "bench_suite: FATAL: %s failed at %s:%d: %s\n", call, file, line, cudaGetErrorString(e));
    fflush(stdout);
    if (open_tables) {
        char message[512];
        snprintf(message, sizeof message, "aborted: %s at %s:%d: %s", call, file, line, cudaGetErrorString(e));
        meta_row(open_tables, "status", message);
        tables_close(open_tables);
    }
    exit(1);
}

void *suite_try_device_alloc(size_t bytes, const char *what)
{
    void *p = NULL;
    cudaError_t e = cudaMalloc(&p, bytes ? bytes : 1);
    if (e != cudaSuccess) {
        cudaGetLastError();
        fprintf(stderr, "bench_suite: cannot allocate %.2f GiB of GPU memory for %s: %s (%.2f GiB free)\n",
                bytes / 1073741824.0, what, cudaGetErrorString(e), suite_device_free_bytes() / 1073741824.0);
        return NULL;
    }
    return p;
}

void *suite_device_alloc(size_t bytes)
{
    void *p = NULL;
    CK(cudaMalloc(&p, bytes ? bytes : 1));
    return p;
}

void suite_device_free(void *p)
{
    if (p)
        CK(cudaFree(p));
}

uint64_t suite_device_free_bytes(void)
{
    size_t free_bytes = 0, total = 0;
    if (cudaMemGetInfo(&free_bytes, &total) != cudaSuccess) {
        cudaGetLastError();
        return 0;
    }
    return free_bytes;
}

const char *key_dist_name(key_dist d)
{
    return d == KEYS_DENSE ? "dense" : d == KEYS_ZIPF ? "zipf" : "uniform";
}

const char *query_dist_name(query_dist d)
{
    return d == QUERIES_ZIPF ? "zipf" : d == QUERIES_CLUSTERED ? "clustered" : d == QUERIES_OUTSIDE ? "outside" : "uniform";
}

/* --- clock, median ------------------------------------------------------------------------------ */

double suite_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

timing timing_of(std::vector<double> ms)
{
    timing t = {0, 0, 0, (uint32_t)ms.size()};
    if (ms.empty())
        return t;
    std::sort(ms.begin(), ms.end());
    t.median_ms = ms[ms.size() / 2];
    t.min_ms = ms.front();
    t.max_ms = ms.back();
    return t;
}

std::vector<timing> time_gpu_rounds(uint32_t runs, const std::vector<gpu_call> &calls)
{
    auto call = [](const gpu_call &c) { /* one whole call */
        c.run();
        CK(cudaGetLastError());
        if (!c.synchronous)
            CK(cudaStreamSynchronize(0));
    };
    const size_t m = calls.size();
    for (const gpu_call &c : calls)
        call(c);
    CK(cudaDeviceSynchronize());
    cudaEvent_t start, stop;
    CK(cudaEventCreate(&start));
    CK(cudaEventCreate(&stop));
    std::vector<std::vector<double>> ms(m);
    for (uint32_t r = 0; r < runs; r++)
        for (size_t j = 0; j < m; j++) {
            const size_t k = (j + r) % m;
            call(calls[k]); /* untimed: its own caches and TLB warm again, whatever ran before */
            CK(cudaEventRecord(start, 0));
            call(calls[k]);
            CK(cudaEventRecord(stop, 0));
            CK(cudaEventSynchronize(stop));
            float t = 0;
            CK(cudaEventElapsedTime(&t, start, stop));
            ms[k].push_back(t);
        }
    CK(cudaEventDestroy(start));
    CK(cudaEventDestroy(stop));
    std::vector<timing> out;
    for (size_t k = 0; k < m; k++)
        out.push_back(timing_of(ms[k]));
    return out;
}

/* --- budget ------------------------------------------------------------------------------------- */

void budget_init(suite_budget *b, double seconds)
{
    b->start = suite_now();
    b->deadline = b->start + seconds;
    b->skipped.clear();
}

double budget_left(const suite_budget *b)
{
    return b->deadline - suite_now();
}

bool budget_allows(suite_budget *b, const std::string &what, double estimate, double reserve)
{
    const double left = budget_left(b);
    if (estimate + reserve <= left)
        return true;
    char line[512];
    snprintf(line, sizeof line, "%s (needs ~%.0f s%s, %.0f s left)", what.c_str(), estimate,
             reserve > 0 ? " + reserve" : "", left > 0 ? left : 0.0);
    b->skipped.push_back(line);
    printf("# SKIPPED (budget): %s\n", line);
    fflush(stdout);
    return false;
}

/* --- CSV tables --------------------------------------------------------------------------------- */

static bool make_dirs(const std::string &dir)
{
    std::string partial;
    for (size_t i = 0; i <= dir.size(); i++) {
        if (i == dir.size() || dir[i] == '/') {
            if (!partial.empty() && mkdir(partial.c_str(), 0777) != 0 && errno != EEXIST)
                return false;
        }
        if (i < dir.size())
            partial += dir[i];
    }
    return true;
}

bool csv_open(csv_table *t, const std::string &dir, const char *name, const char *header)
{
    t->path = dir + "/" + name;
    t->file = fopen(t->path.c_str(), "w");
    if (!t->file) {
        fprintf(stderr, "bench_suite: cannot write %s: %s\n", t->path.c_str(), strerror(errno));
        return false;
    }
    fprintf(t->file, "%s\n", header);
    fflush(t->file);
    return true;
}

void csv_row(csv_table *t, const char *fmt, ...)
{
    if (!t->file)
        return;
    va_list ap;
    va_start(ap, fmt);
    vfprintf(t->file, fmt, ap);
    va_end(ap);
    fputc('\n', t->file);
    fflush(t->file);
}

void csv_close(csv_table *t)
{
    if (t->file)
        fclose(t->file);
    t->file = NULL;
}

/* Column lists: one row per measurement, every parameter in its own column (bench/plot.sh and
 * bench/summarize.py read them by name). */
static const char *const lookup_header =
    "point,key_bits,keys_log2,key_dist,query_dist,hit_rate,queries,fanout,leaf_size,method,group_size,psa,"
    "psa_window,pipeline,order,memory,runs,ms_median,ms_min,ms_max,gqps,gather_gps,frac_gather,verified,sample,"
    "mismatches,hits_measured,note";
static const char *const ablation_header =
    "point,key_bits,keys_log2,fanout,step,label,method,group_size,psa,gqps,ratio_to_regular,ratio_to_previous";
static const char *const range_header =
    "point,key_bits,keys_log2,fanout,leaf_size,length,op,method,group_size,ranges,pairs,runs,ms_median,ms_min,"
    "ms_max,granges_per_s,gpairs_per_s,verified,sample,mismatches,note";
static const char *const build_header = "key_bits,keys_log2,key_dist,fanout,leaf_size,method,step,seconds,"
                                        "mpairs_per_s,note";
static const char *const ceilings_header = "what,point,bytes,count,runs,ms_median,ms_min,ms_max,gbps,gops,note";

/* The device call's hard stop (timeout --signal=INT): the rows written so far are on disk; say in
 * meta.csv that the run was stopped, then leave. */
static void on_stop_signal(int sig)
{
    if (open_tables && open_tables->meta.file) {
        fprintf(open_tables->meta.file, "status,\"stopped by signal %d (the time limit): tables incomplete\"\n", sig);
        fflush(open_tables->meta.file);
    }
    _exit(124);
}

bool tables_open(suite_tables *t, const std::string &dir)
{
    if (!make_dirs(dir)) {
        fprintf(stderr, "bench_suite: cannot create %s: %s\n", dir.c_str(), strerror(errno));
        return false;
    }
    bool ok = csv_open(&t->ceilings, dir, "ceilings.csv", ceilings_header) &&
              csv_open(&t->lookup, dir, "lookup.csv", lookup_header) &&
              csv_open(&t->ablation, dir, "ablation.csv", ablation_header) &&
              csv_open(&t->range, dir, "range.csv", range_header) &&
              csv_open(&t->build, dir, "build.csv", build_header) &&
              csv_open(&t->meta, dir, "meta.csv", "key,value");
    if (ok) {
        open_tables = t;
        signal(SIGINT, on_stop_signal);
        signal(SIGTERM, on_stop_signal);
    }
    return ok;
}

void tables_close(suite_tables *t)
{
    if (open_tables == t)
        open_tables = NULL;
    csv_close(&t->ceilings);
    csv_close(&t->lookup);
    csv_close(&t->ablation);
    csv_close(&t->range);
    csv_close(&t->build);
    csv_close(&t->meta);
}

/* A value with commas or quotes is quoted, CSV style. */
void meta_row(suite_tables *t, const char *key, const std::string &value)
{
    std::string quoted = "\"";
    for (char c : value)
        quoted += c == '"' ? std::string("\"\"") : std::string(1, c == '\n' ? ' ' : c);
    quoted += "\"";
    csv_row(&t->meta, "%s,%s", key, quoted.c_str());
}

/* --- pointer B+tree shape ------------------------------------------------------------------------ */

void hbt_plan(hbt_shape *s, uint32_t key_bits, uint32_t fanout, uint64_t n_keys)
{
    memset(s, 0, sizeof *s);
    s->key_bits = key_bits;
    s->fanout = fanout;
    s->n_keys = n_keys;
    const uint64_t kb = key_bits / 8;
    s->internal_node_bytes = fanout * (kb + 8);
    s->leaf_node_bytes = fanout * 2 * kb;
    uint64_t nodes = (n_keys + fanout - 1) / fanout;
    if (nodes == 0)
        nodes = 1;
    s->level_nodes[0] = nodes;
    s->n_leaves = nodes;
    s->height = 1;
    while (nodes > 1 && s->height < HBT_MAX_LEVELS) {
        nodes = (nodes + fanout - 1) / fanout;
        s->level_nodes[s->height++] = nodes;
    }
    /* internal levels root first: the root (level height-1) at index 0 */
    uint64_t at = 0;
    for (int l = (int)s->height - 1; l >= 1; l--) {
        s->level_first[l] = at;
        at += s->level_nodes[l];
    }
    s->n_internal = at;
}
