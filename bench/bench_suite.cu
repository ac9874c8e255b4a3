/* bench_suite.cu — the benchmark suite of issue 5 in one program: the machine's ceilings, point
 * lookups over tree sizes, key widths, G, F, PSA windows, key and query distributions (end to end
 * on the device, results in query order or sorted), host-to-host streaming, the baselines in the
 * same process on the same data (binary search pipelines, K-ary Eytzinger, a pointer B+tree, the
 * CPU engine), the paper's ablation, range count/collect, and the bulk build step by step. Every
 * configuration is verified against the CPU engine; CSV tables go to --out-dir; a time budget
 * orders the work by priority and names what it skipped. --quick runs small sizes (the CPU paths
 * alone on a machine without a GPU). Usage: bench_suite --help. */
#include <inttypes.h>
#include <omp.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <algorithm>
#include <string>
#include <vector>

#include "bench/suite.h"

extern "C" {
#include "harmonia/cli/cli_baselines.h"
}

static std::string strf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static std::string strf(const char *fmt, ...)
{
    char buffer[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buffer, sizeof buffer, fmt, ap);
    va_end(ap);
    return buffer;
}

/* ================================================================================================
 * Options and sizes.
 * ============================================================================================== */
struct suite_scale {
    uint32_t queries_log2;      /* lookups per batch on the device */
    uint32_t cpu_queries_log2;  /* lookups per batch of the CPU engine baseline */
    uint32_t h2h_log2;          /* host-to-host streamed lookups */
    uint32_t range_pairs_log2;  /* pairs per range-collect batch */
    uint64_t copy_bytes, gather_loads, scatter_n, l2_gather_bytes, big_gather_bytes;
    uint64_t sample;            /* verification sample */
};

struct suite_options {
    bool quick = false, cpu_only = false;
    double budget_seconds = 420;
    std::string out_dir = "bench/out";
    uint32_t runs = 5, sweep_runs = 3, cpu_runs = 3;
    int queries_log2 = -1;
    std::string tasks = "all";
    std::string commit, command;
};

struct suite_state {
    suite_options o;
    suite_scale sc;
    suite_tables t;
    suite_budget b;
    harmonia_device_info dev;
    bool gpu = false;
    int failures = 0;
    std::vector<std::string> failed;
    uint32_t best_group64 = 2; /* best G in query order at the 64-bit 2^26 point (for later tasks) */
};

static bool want_task(const suite_state &S, const char *name)
{
    if (S.o.tasks == "all")
        return true;
    const std::string list = "," + S.o.tasks + ",";
    return list.find(std::string(",") + name + ",") != std::string::npos;
}

static std::string csv_clean(const std::string &s)
{
    std::string r = s;
    for (char &c : r)
        if (c == ',' || c == '\n' || c == '"')
            c = ';';
    return r;
}

/* ================================================================================================
 * A point: one tree (key width, size, distribution, F, L) with its data, the baselines' structures
 * and the query batch, and the list of what to run on it.
 * ============================================================================================== */
struct point_spec {
    uint32_t bits, keys_log2;
    key_dist dist;
    uint32_t fanout, leaf;
    uint32_t runs;
    bool full;            /* every baseline and every Harmonia configuration (priority points) */
    bool brief;           /* the sweep's set: G in order / unordered, main baselines */
    bool ablation;
    bool build_steps;     /* build from unsorted input, timed step by step */
    bool ranges, h2h, windows, variants;
};

static point_spec spec_of(uint32_t bits, uint32_t keys_log2, uint32_t runs)
{
    point_spec s;
    memset(&s, 0, sizeof s);
    s.bits = bits;
    s.keys_log2 = keys_log2;
    s.dist = KEYS_UNIFORM;
    s.fanout = HARMONIA_DEFAULT_FANOUT(bits); /* the library's defaults: F = 32 for 32-bit keys */
    s.leaf = HARMONIA_DEFAULT_LEAF_SIZE;
    s.runs = runs;
    return s;
}

struct result_entry {
    std::string method, order;
    uint32_t group;
    int psa;
    uint64_t window;
    uint32_t pipeline;
    double gqps;
};

struct point_ctx {
    point_spec s;
    std::string name;
    uint64_t n, nq;
    size_t kb;
    void *d_keys = NULL, *d_values = NULL; /* sorted, device */
    void *h_keys = NULL, *h_values = NULL; /* sorted, host */
    sorted_array arr;
    harmonia_tree *tree = NULL;
    harmonia_tree_info info;
    double gather_gps = 0;                 /* random 8-byte loads/s over an array the tree's size */
    query_spec qs;
    void *d_q = NULL, *d_out = NULL;
    uint8_t *d_found = NULL;
    uint64_t *d_pos = NULL;
    void *h_q = NULL, *h_out = NULL;       /* host mode (quick / CPU engine) */
    uint8_t *h_found = NULL;
    verifier vf;
    bool have_vf = false;
    bsearch_pipeline pipe;
    bool have_pipe = false;
    eyt_tree eyt;
    bool have_eyt = false;
    hbt_tree hbt;
    bool have_hbt = false;
    std::vector<result_entry> results;
};

/* ================================================================================================
 * Rows.
 * ============================================================================================== */
static void lookup_row(suite_state &S, point_ctx &P, const char *method, uint32_t group, int psa, uint64_t window,
                       uint32_t pipeline, const char *order, const char *memory, uint64_t count, uint32_t runs,
                       const timing &t, const check_result *chk, const char *verified_override,
                       const std::string &note)
{
    const double gqps = t.median_ms > 0 ? count / t.median_ms / 1e6 : 0.0;
    const double frac = P.gather_gps > 0 ? gqps / P.gather_gps : 0.0;
    const char *verified = verified_override ? verified_override : chk && chk->ok ? "yes" : "NO";
    csv_row(&S.t.lookup,
            "%s,%u,%u,%s,%s,%.2f,%" PRIu64 ",%u,%u,%s,%u,%d,%" PRIu64 ",%u,%s,%s,%u,%.4f,%.4f,%.4f,%.6g,%.6g,%.4f,%s,%"
            PRIu64 ",%" PRIu64 ",%.4f,%s",
            P.name.c_str(), P.s.bits, P.s.keys_log2, key_dist_name(P.s.dist), query_dist_name(P.qs.dist),
            P.qs.hit_rate, count, P.s.fanout, P.s.leaf, method, group, psa, window, pipeline, order, memory, runs,
            t.median_ms, t.min_ms, t.max_ms, gqps, P.gather_gps, frac, verified, chk ? chk->sample : 0,
            chk ? chk->mismatches : 0, chk ? chk->hit_rate : 0.0, csv_clean(note).c_str());
    std::string label = method;
    if (group)
        label += strf(" G=%u", group);
    if (psa >= 0)
        label += strf(" psa=%d", psa);
    if (window)
        label += strf(" w=2^%u", sx_bit_width(window) - 1);
    if (pipeline)
        label += strf(" depth=%u", pipeline);
    printf("  %-36s %-9s %-11s %10.3f ms %8.3f G/s  %4.2f of gather  %s%s%s\n", label.c_str(), order, memory,
           t.median_ms, gqps, frac, verified, note.empty() ? "" : "  # ", note.c_str());
    fflush(stdout);
    if (chk && !chk->ok) {
        S.failures++;
        S.failed.push_back(P.name + " " + label + " " + order);
    }
    if (!verified_override || strcmp(verified_override, "reference") == 0)
        P.results.push_back({method, order, group, psa, window, pipeline, gqps});
}

static void error_row(suite_state &S, point_ctx &P, const char *method, uint32_t group, int psa, uint64_t window,
                      uint32_t pipeline, const char *order, const char *memory, const std::string &message,
                      bool count_as_failure)
{
    timing none = {0, 0, 0, 0};
    lookup_row(S, P, method, group, psa, window, pipeline, order, memory, P.nq, 0, none, NULL,
               count_as_failure ? "error" : "skipped", message);
    if (count_as_failure) {
        S.failures++;
        S.failed.push_back(P.name + " " + method + ": " + message);
    }
}

static void build_row(suite_state &S, uint32_t bits, uint32_t keys_log2, key_dist dist, uint32_t fanout, uint32_t leaf,
                      const char *method, const char *step, double seconds, uint64_t pairs, const std::string &note)
{
    csv_row(&S.t.build, "%u,%u,%s,%u,%u,%s,%s,%.4f,%.6g,%s", bits, keys_log2, key_dist_name(dist), fanout, leaf,
            method, step, seconds, seconds > 0 ? pairs / seconds / 1e6 : 0.0, csv_clean(note).c_str());
    printf("  build %-26s %-34s %9.3f s  %s\n", method, step, seconds, note.c_str());
    fflush(stdout);
}

static void ceiling_row(suite_state &S, const char *what, const std::string &point, uint64_t bytes, uint64_t count,
                        const timing &t, double gbps, double gops, const std::string &note)
{
    csv_row(&S.t.ceilings, "%s,%s,%" PRIu64 ",%" PRIu64 ",%u,%.4f,%.4f,%.4f,%.6g,%.6g,%s", what, point.c_str(), bytes,
            count, t.runs, t.median_ms, t.min_ms, t.max_ms, gbps, gops, csv_clean(note).c_str());
    printf("  ceiling %-22s %-24s %10.3f ms %9.1f GB/s %8.2f G/s  %s\n", what, point.c_str(), t.median_ms, gbps, gops,
           note.c_str());
    fflush(stdout);
}

static void range_row(suite_state &S, point_ctx &P, uint64_t length, const char *op, const char *method,
                      uint32_t group, uint64_t ranges, uint64_t pairs, uint32_t runs, const timing &t,
                      const check_result *chk, const char *verified_override, const std::string &note)
{
    const double granges = t.median_ms > 0 ? ranges / t.median_ms / 1e6 : 0.0;
    const double gpairs = t.median_ms > 0 ? pairs / t.median_ms / 1e6 : 0.0;
    const char *verified = verified_override ? verified_override : chk && chk->ok ? "yes" : "NO";
    csv_row(&S.t.range,
            "%s,%u,%u,%u,%u,%" PRIu64 ",%s,%s,%u,%" PRIu64 ",%" PRIu64 ",%u,%.4f,%.4f,%.4f,%.6g,%.6g,%s,%" PRIu64 ",%"
            PRIu64 ",%s",
            P.name.c_str(), P.s.bits, P.s.keys_log2, P.s.fanout, P.s.leaf, length, op, method, group, ranges, pairs,
            runs, t.median_ms, t.min_ms, t.max_ms, granges, gpairs, verified, chk ? chk->sample : 0,
            chk ? chk->mismatches : 0, csv_clean(note).c_str());
    printf("  range %-7s len %-6" PRIu64 " %-22s G=%-2u %10.3f ms %8.3f G ranges/s %8.3f G pairs/s  %s%s%s\n", op,
           length, method, group, t.median_ms, granges, gpairs, verified, note.empty() ? "" : "  # ", note.c_str());
    fflush(stdout);
    if (chk && !chk->ok) {
        S.failures++;
        S.failed.push_back(P.name + strf(" range %s length %" PRIu64 " %s G=%u", op, length, method, group));
    }
}

/* ================================================================================================
 * Harmonia and the baselines on one batch in device memory.
 * ============================================================================================== */
static void poison_outputs(point_ctx &P)
{
    CK(cudaMemset(P.d_out, 0xA5, P.nq * P.kb));
    CK(cudaMemset(P.d_found, 0xA5, P.nq));
    CK(cudaMemset(P.d_pos, 0xFF, P.nq * 8));
}

static harmonia_query_config gpu_config(uint32_t group, int psa, uint64_t window, uint32_t depth)
{
    harmonia_query_config q;
    harmonia_query_config_init(&q);
    q.backend = HARMONIA_BACKEND_GPU;
    q.memory = HARMONIA_MEMORY_DEVICE;
    q.group_size = group;
    q.psa = psa;
    q.psa_window = window;
    q.pipeline_depth = depth;
    return q;
}

static double measure_harmonia(suite_state &S, point_ctx &P, uint32_t group, int psa, uint64_t window, uint32_t depth,
                               bool unordered, const std::string &note = "")
{
    if (group > P.s.fanout || group > 32)
        return 0;
    const char *order = unordered ? "unordered" : "ordered";
    harmonia_query_config q = gpu_config(group, psa, window, depth);
    poison_outputs(P);
    harmonia_status st = HARMONIA_OK;
    std::string message;
    timing t = time_gpu(P.s.runs, [&] {
        harmonia_status s2 = unordered ? harmonia_lookup_unordered(P.tree, &q, P.d_q, P.nq, P.d_out, P.d_found, P.d_pos)
                                       : harmonia_lookup(P.tree, &q, P.d_q, P.nq, P.d_out, P.d_found);
        if (s2 != HARMONIA_OK && st == HARMONIA_OK) {
            st = s2;
            message = harmonia_last_error(P.tree);
        }
    });
    if (st != HARMONIA_OK) {
        error_row(S, P, "harmonia", group, psa, window, depth, order, "device", message,
                  st != HARMONIA_ERR_DEVICE_MEMORY);
        return 0;
    }
    check_result c = verify_lookup_device(&P.vf, P.d_q, P.d_out, P.d_found, unordered ? P.d_pos : NULL, NULL);
    lookup_row(S, P, "harmonia", group, psa, window, depth, order, "device", P.nq, P.s.runs, t, &c, NULL, note);
    return P.results.back().gqps;
}

/* A baseline whose results land in d_out / d_found in query order (or, with pos32, in slot order). */
template <typename F>
static double measure_baseline(suite_state &S, point_ctx &P, const char *method, const char *order, F &&launch,
                               const uint32_t *pos32 = NULL, const std::string &note = "")
{
    poison_outputs(P);
    timing t = time_gpu(P.s.runs, launch);
    check_result c = verify_lookup_device(&P.vf, P.d_q, P.d_out, P.d_found, NULL, pos32);
    lookup_row(S, P, method, 0, -1, 0, 0, order, "device", P.nq, P.s.runs, t, &c, NULL, note);
    return P.results.back().gqps;
}

/* The CPU engine on all cores: the first 2^cpu_queries_log2 queries of the batch, host arrays. */
static void measure_cpu_engine(suite_state &S, point_ctx &P, uint32_t runs)
{
    const uint64_t count = std::min<uint64_t>(P.nq, 1ull << S.sc.cpu_queries_log2);
    std::vector<uint8_t> q(count * P.kb), v(count * P.kb), f(count);
    CK(cudaMemcpy(q.data(), P.d_q, count * P.kb, cudaMemcpyDeviceToHost));
    harmonia_query_config cpu;
    harmonia_query_config_init(&cpu);
    cpu.backend = HARMONIA_BACKEND_CPU;
    harmonia_status st = HARMONIA_OK;
    timing t = time_host(runs, [&] {
        harmonia_status s2 = harmonia_lookup(P.tree, &cpu, q.data(), count, v.data(), f.data());
        if (s2 != HARMONIA_OK)
            st = s2;
    });
    if (st != HARMONIA_OK) {
        error_row(S, P, "cpu_engine", 0, -1, 0, 0, "ordered", "host", harmonia_last_error(P.tree), true);
        return;
    }
    lookup_row(S, P, "cpu_engine", 0, -1, 0, 0, "ordered", "host", count, runs, t, NULL, "reference",
               strf("%d threads; the reference of every check", omp_get_max_threads()));
}

static const result_entry *find_result(const point_ctx &P, const char *method, uint32_t group, int psa,
                                       const char *order)
{
    for (const result_entry &r : P.results)
        if (r.method == method && r.group == group && r.psa == psa && r.order == order && r.window == 0 &&
            r.pipeline == 0)
            return &r;
    return NULL;
}

/* The paper's Fig. 13 as ratios: regular B+tree -> Harmonia layout (G = min(F, 32), no PSA) ->
 * + PSA -> + NTG (best G with PSA); then, beyond the paper, the best in query order and with
 * sorted results. All results in query order except the last. */
static void write_ablation(suite_state &S, point_ctx &P, const char *regular_method)
{
    const uint32_t full_group = P.s.fanout < 32 ? P.s.fanout : 32;
    const result_entry *regular = NULL;
    for (const result_entry &r : P.results)
        if (r.method == regular_method)
            regular = &r;
    const result_entry *layout = find_result(P, "harmonia", full_group, 0, "ordered");
    const result_entry *with_psa = find_result(P, "harmonia", full_group, 1, "ordered");
    const result_entry *ntg = NULL, *best_ordered = NULL, *best_unordered = NULL;
    for (const result_entry &r : P.results) {
        if (r.method != "harmonia" || r.window != 0 || r.pipeline != 0)
            continue;
        if (r.order == "ordered" && r.psa == 1 && (!ntg || r.gqps > ntg->gqps))
            ntg = &r;
        if (r.order == "ordered" && (!best_ordered || r.gqps > best_ordered->gqps))
            best_ordered = &r;
        if (r.order == "unordered" && (!best_unordered || r.gqps > best_unordered->gqps))
            best_unordered = &r;
    }
    if (!regular || regular->gqps <= 0) {
        printf("  (no ablation: the regular B+tree was not measured)\n");
        return;
    }
    struct step {
        const char *label;
        const result_entry *r;
    } steps[] = {
        {"regular B+tree (pointers)", regular},
        {"Harmonia layout (G=F)", layout},
        {"+ PSA", with_psa},
        {"+ NTG (best G; PSA)", ntg},
        {"best in query order", best_ordered},
        {"sorted results (unordered)", best_unordered},
    };
    double previous = 0;
    printf("  ablation (Fig. 13):");
    for (int i = 0; i < 6; i++) {
        const result_entry *r = steps[i].r;
        if (!r || r->gqps <= 0)
            continue;
        csv_row(&S.t.ablation, "%s,%u,%u,%u,%d,%s,%s,%u,%d,%.6g,%.4f,%.4f", P.name.c_str(), P.s.bits, P.s.keys_log2,
                P.s.fanout, i + 1, steps[i].label, r->method.c_str(), r->group, r->psa, r->gqps,
                r->gqps / regular->gqps, previous > 0 ? r->gqps / previous : 1.0);
        printf("  %s %.2fx", steps[i].label, r->gqps / regular->gqps);
        if (i < 4)
            previous = r->gqps;
    }
    printf("\n");
}

/* ================================================================================================
 * Estimates (seconds) for the budget: generous, from the sizes.
 * ============================================================================================== */
static double estimate_point(const suite_state &S, const point_spec &s)
{
    const double n = (double)(1ull << s.keys_log2), kb = s.bits / 8.0;
    const double nq = (double)(1ull << S.sc.queries_log2);
    double e = 1.0 + n * kb * 2 * 3.5e-9; /* generate, copy down, build from sorted, upload */
    const double per_config = (s.runs + 1) * nq / 2.5e9 + 0.08;
    int configs = 0;
    if (s.full)
        configs += 32;
    if (s.brief)
        configs += s.ablation ? 22 : 16;
    e += configs * per_config;
    if (s.full || s.brief)
        e += (S.o.cpu_runs + 1) * (double)(1ull << S.sc.cpu_queries_log2) / 5e7 + 0.5;
    if (s.build_steps)
        e += 2.0 + n * kb * 2 * 6e-9;
    if (s.ranges)
        e += 3 * (7 * per_config + 4 * 1.5);
    if (s.h2h) /* pinning the host arrays, then about 17 passes over them at ~20 GB/s */
        e += 8.0 + (double)(1ull << S.sc.h2h_log2) * (2 * kb + 1) * 17 / 20e9;
    if (s.windows)
        e += 13 * per_config;
    if (s.variants)
        e += 3 * 10 * per_config;
    return e;
}

/* Device bytes a point needs (without the optional whole-batch PSA window). */
static double device_bytes_of(const suite_state &S, const point_spec &s)
{
    const double n = (double)(1ull << s.keys_log2), kb = s.bits / 8.0;
    const double nq = (double)(1ull << S.sc.queries_log2);
    double bytes = n * kb * 2 * 4.5;           /* sorted arrays, tree, Eytzinger, pointer tree */
    bytes += nq * (2 * kb + 1 + 8);            /* queries, values, found, positions */
    bytes += nq * (2 * kb + 8) + 64e6;         /* the binary-search pipeline */
    if (s.ranges)
        bytes += nq * (2 * kb + 8) + (double)(1ull << S.sc.range_pairs_log2) * kb * 2;
    return bytes;
}

/* ================================================================================================
 * The steps of a point.
 * ============================================================================================== */
struct build_timer {
    double last = 0, sort_start = 0, sort_end = 0, layout_start = 0, layout_end = 0;
};

static void build_progress(void *arg, const char *phase, double fraction)
{
    build_timer *b = (build_timer *)arg;
    const double now = suite_now();
    if (!strcmp(phase, "sort"))
        (fraction <= 0.0 ? b->sort_start : b->sort_end) = now;
    else if (!strcmp(phase, "layout"))
        (fraction <= 0.0 ? b->layout_start : b->layout_end) = now;
}

static harmonia_tree *build_tree(const point_spec &s, const void *keys, const void *values, uint64_t n, bool sorted,
                                 build_timer *timer, double *seconds)
{
    harmonia_build_config bc;
    harmonia_build_config_init(&bc);
    bc.key_bits = s.bits;
    bc.fanout = s.fanout;
    bc.leaf_size = s.leaf;
    bc.input_sorted = sorted;
    bc.progress = timer ? build_progress : NULL;
    bc.progress_arg = timer;
    harmonia_tree *tree = NULL;
    const double t0 = suite_now();
    harmonia_status st = harmonia_build(&bc, keys, values, n, &tree);
    *seconds = suite_now() - t0;
    if (st != HARMONIA_OK) {
        fprintf(stderr, "bench_suite: harmonia_build: %s\n", harmonia_last_error(NULL));
        return NULL;
    }
    return tree;
}

/* Keys and values: sorted on the device (and, with build_steps, the bulk build from unsorted input
 * timed step by step, on the CPU and with a GPU sort), copied to the host, the Harmonia tree built
 * from them and uploaded. False when the point cannot run. */
static bool point_data(suite_state &S, point_ctx &P)
{
    const point_spec &s = P.s;
    const uint64_t seed = 0x5eed0000ull + s.keys_log2 * 131 + s.bits + (uint64_t)s.dist * 7919;
    P.d_keys = suite_try_device_alloc(P.n * P.kb, "sorted keys");
    P.d_values = suite_try_device_alloc(P.n * P.kb, "sorted values");
    P.h_keys = malloc(P.n * P.kb);
    P.h_values = malloc(P.n * P.kb);
    if (!P.d_keys || !P.d_values || !P.h_keys || !P.h_values)
        return false;
    void *h_unsorted_keys = NULL, *h_unsorted_values = NULL;
    if (s.build_steps && s.dist == KEYS_UNIFORM) {
        void *d_uk = suite_device_alloc(P.n * P.kb), *d_uv = suite_device_alloc(P.n * P.kb);
        gen_uniform_unsorted_device(s.bits, P.n, seed, d_uk, d_uv);
        h_unsorted_keys = malloc(P.n * P.kb);
        h_unsorted_values = malloc(P.n * P.kb);
        CK(cudaMemcpy(h_unsorted_keys, d_uk, P.n * P.kb, cudaMemcpyDeviceToHost));
        CK(cudaMemcpy(h_unsorted_values, d_uv, P.n * P.kb, cudaMemcpyDeviceToHost));
        /* the GPU path of a bulk build: unsorted pairs up, CUB sort, sorted pairs down, CPU layout */
        double t0 = suite_now();
        CK(cudaMemcpy(d_uk, h_unsorted_keys, P.n * P.kb, cudaMemcpyHostToDevice));
        CK(cudaMemcpy(d_uv, h_unsorted_values, P.n * P.kb, cudaMemcpyHostToDevice));
        const double up = suite_now() - t0;
        t0 = suite_now();
        sort_pairs_device(s.bits, P.n, d_uk, d_uv, P.d_keys, P.d_values);
        const double sort = suite_now() - t0;
        t0 = suite_now();
        CK(cudaMemcpy(P.h_keys, P.d_keys, P.n * P.kb, cudaMemcpyDeviceToHost));
        CK(cudaMemcpy(P.h_values, P.d_values, P.n * P.kb, cudaMemcpyDeviceToHost));
        const double down = suite_now() - t0;
        suite_device_free(d_uk);
        suite_device_free(d_uv);
        double layout = 0;
        P.tree = build_tree(s, P.h_keys, P.h_values, P.n, true, NULL, &layout);
        const char *m = "gpu_sort+cpu_layout";
        build_row(S, s.bits, s.keys_log2, s.dist, s.fanout, s.leaf, m, "copy unsorted pairs up (pageable)", up, P.n, "");
        build_row(S, s.bits, s.keys_log2, s.dist, s.fanout, s.leaf, m, "sort (CUB radix; incl. temp alloc)", sort, P.n, "");
        build_row(S, s.bits, s.keys_log2, s.dist, s.fanout, s.leaf, m, "copy sorted pairs down (pageable)", down, P.n, "");
        build_row(S, s.bits, s.keys_log2, s.dist, s.fanout, s.leaf, m, "layout from sorted (harmonia_build)", layout,
                  P.n, strf("%d threads", omp_get_max_threads()));
        build_row(S, s.bits, s.keys_log2, s.dist, s.fanout, s.leaf, m, "total", up + sort + down + layout, P.n, "");
        /* the CPU path: harmonia_build from the unsorted pairs */
        build_timer timer;
        double total = 0;
        harmonia_tree *unsorted_tree = build_tree(s, h_unsorted_keys, h_unsorted_values, P.n, false, &timer, &total);
        if (unsorted_tree) {
            harmonia_tree_info a, b;
            harmonia_info(unsorted_tree, &a);
            if (P.tree)
                harmonia_info(P.tree, &b);
            const bool same = P.tree && a.key_count == b.key_count && a.total_bytes == b.total_bytes &&
                              harmonia_check(unsorted_tree) == HARMONIA_OK;
            m = "cpu_unsorted";
            build_row(S, s.bits, s.keys_log2, s.dist, s.fanout, s.leaf, m, "copy + radix sort",
                      timer.sort_end - timer.sort_start, P.n, "");
            build_row(S, s.bits, s.keys_log2, s.dist, s.fanout, s.leaf, m, "duplicate check",
                      timer.layout_start - timer.sort_end, P.n, "");
            build_row(S, s.bits, s.keys_log2, s.dist, s.fanout, s.leaf, m, "layout", timer.layout_end - timer.layout_start,
                      P.n, "");
            build_row(S, s.bits, s.keys_log2, s.dist, s.fanout, s.leaf, m, "total", total, P.n,
                      strf("%d threads; tree %s the sorted build's", omp_get_max_threads(),
                           same ? "checked and equal in shape to" : "DIFFERS from"));
            if (!same) {
                S.failures++;
                S.failed.push_back(P.name + " build from unsorted input");
            }
            harmonia_free(unsorted_tree);
        }
        free(h_unsorted_keys);
        free(h_unsorted_values);
    } else {
        if (!gen_sorted_device(s.bits, s.dist, P.n, seed, P.d_keys, P.d_values))
            return false;
        CK(cudaMemcpy(P.h_keys, P.d_keys, P.n * P.kb, cudaMemcpyDeviceToHost));
        CK(cudaMemcpy(P.h_values, P.d_values, P.n * P.kb, cudaMemcpyDeviceToHost));
        double layout = 0;
        P.tree = build_tree(s, P.h_keys, P.h_values, P.n, true, NULL, &layout);
    }
    if (!P.tree)
        return false;
    harmonia_info(P.tree, &P.info);
    const double t0 = suite_now();
    if (harmonia_device_upload(P.tree) != HARMONIA_OK) {
        fprintf(stderr, "bench_suite: upload: %s\n", harmonia_last_error(P.tree));
        return false;
    }
    if (s.build_steps)
        build_row(S, s.bits, s.keys_log2, s.dist, s.fanout, s.leaf, "upload", "harmonia_device_upload (pageable)",
                  suite_now() - t0, P.n, strf("%.2f GB", P.info.total_bytes / 1e9));
    uint64_t first = 0, last = 0;
    memcpy(&first, P.h_keys, P.kb);
    memcpy(&last, (char *)P.h_keys + (P.n - 1) * P.kb, P.kb);
    P.arr.bits = s.bits;
    P.arr.n = P.n;
    P.arr.keys = P.d_keys;
    P.arr.values = P.d_values;
    P.arr.span_bits = sx_bit_width(first ^ last);
    return true;
}

static void point_gather_ceiling(suite_state &S, point_ctx &P)
{
    const uint64_t bytes = P.info.total_bytes;
    if ((double)bytes * 1.2 > (double)suite_device_free_bytes()) {
        printf("  (no gather ceiling for this point: not enough free GPU memory)\n");
        return;
    }
    timing t = ceiling_gather(bytes, S.sc.gather_loads, 3);
    P.gather_gps = S.sc.gather_loads / t.median_ms / 1e6;
    ceiling_row(S, "gather_8B_tree_size", P.name, bytes, S.sc.gather_loads, t, P.gather_gps * 8, P.gather_gps,
                "random 8-byte loads over an array the size of the Harmonia tree");
}

static void point_queries(point_ctx &P, query_dist dist, double hit_rate)
{
    P.qs.dist = dist;
    P.qs.hit_rate = hit_rate;
    P.qs.zipf_s = 0.99;
    P.qs.seed = 0x9e3779b9ull + P.s.keys_log2 + (uint64_t)dist * 17 + (uint64_t)(hit_rate * 1000);
    gen_queries_device(P.s.bits, P.d_keys, P.n, P.qs, 0, P.nq, P.d_q);
}

/* The baselines' structures, built on the device from the sorted arrays (build times recorded). */
static void point_structures(suite_state &S, point_ctx &P, bool eyt, bool hbt, bool pipe)
{
    const point_spec &s = P.s;
    if (pipe && !P.have_pipe)
        P.have_pipe = bsearch_pipeline_init(&P.pipe, s.bits, P.nq);
    if (eyt && !P.have_eyt) {
        const double t0 = suite_now();
        P.have_eyt = eyt_build_device(&P.eyt, P.arr);
        if (P.have_eyt)
            build_row(S, s.bits, s.keys_log2, s.dist, s.fanout, s.leaf, "eytzinger_k9 (GPU)", "build from sorted",
                      suite_now() - t0, P.n, strf("%.2f GB; height %u", eyt_bytes(P.eyt) / 1e9, P.eyt.height));
    }
    if (hbt && !P.have_hbt) {
        const double t0 = suite_now();
        P.have_hbt = hbt_build_device(&P.hbt, P.arr, s.fanout);
        if (P.have_hbt)
            build_row(S, s.bits, s.keys_log2, s.dist, s.fanout, s.leaf, "hbtree (GPU)", "build from sorted",
                      suite_now() - t0, P.n, strf("%.2f GB; height %u", hbt_bytes(P.hbt) / 1e9, P.hbt.shape.height));
    }
}

/* The baselines on the current query batch; `all` adds the full-sort pipeline and the search of
 * pre-sorted queries. */
static void point_baselines(suite_state &S, point_ctx &P, bool all, bool cpu)
{
    const uint32_t bits = P.s.bits;
    measure_baseline(S, P, "bs_plain", "ordered",
                     [&] { bsearch_lookup_device(P.arr, P.d_q, P.nq, NULL, P.d_out, P.d_found); });
    if (P.have_pipe) {
        if (all)
            measure_baseline(S, P, "bs_fullsort", "ordered", [&] {
                bsearch_pipeline_run(&P.pipe, P.arr, P.d_q, P.nq, 0, bits, P.d_out, P.d_found);
            });
        const uint32_t end = P.arr.span_bits, begin = end > 16 ? end - 16 : 0;
        measure_baseline(
            S, P, "bs_top16", "ordered",
            [&] { bsearch_pipeline_run(&P.pipe, P.arr, P.d_q, P.nq, begin, end, P.d_out, P.d_found); }, NULL,
            strf("sorted on key bits [%u, %u)", begin, end));
        if (all) {
            bsearch_pipeline_sort(&P.pipe, P.d_q, P.nq, 0, bits);
            CK(cudaDeviceSynchronize());
            measure_baseline(
                S, P, "bs_sorted_only", "sorted",
                [&] { bsearch_lookup_device(P.arr, P.pipe.sorted_queries, P.nq, NULL, P.d_out, P.d_found); },
                P.pipe.sorted_positions, "search alone on fully sorted queries; sort not timed");
        }
    } else {
        error_row(S, P, "bs_top16", 0, -1, 0, 0, "ordered", "device", "no GPU memory for the sort pipeline", false);
    }
    if (P.have_eyt)
        measure_baseline(S, P, "eytzinger_k9", "ordered",
                         [&] { eyt_lookup_device(P.eyt, P.d_q, P.nq, P.d_out, P.d_found); }, NULL,
                         "K=9; 8 threads per query; one ballot per level");
    if (P.have_hbt)
        measure_baseline(S, P, "hbtree", "ordered", [&] { hbt_lookup_device(P.hbt, P.d_q, P.nq, P.d_out, P.d_found); },
                         NULL, strf("pointer B+tree F=%u; group of %u per node", P.s.fanout, std::min(P.s.fanout, 32u)));
    if (cpu)
        measure_cpu_engine(S, P, S.o.cpu_runs);
}

static const uint32_t all_groups[] = {1, 2, 4, 8, 16, 32};

/* Every G in query order without PSA and with sorted results; with psa_ordered also PSA in query
 * order (the ablation needs it); with full the whole-batch window too. */
static void point_harmonia(suite_state &S, point_ctx &P, bool psa_ordered, bool full)
{
    for (uint32_t g : all_groups)
        measure_harmonia(S, P, g, 0, 0, 0, false);
    if (psa_ordered)
        for (uint32_t g : all_groups)
            measure_harmonia(S, P, g, 1, 0, 0, false);
    for (uint32_t g : all_groups)
        measure_harmonia(S, P, g, 1, 0, 0, true);
    if (full) {
        /* sorted results with one window over the whole batch (NOTES.md, prediction 1): the lanes
         * grow to the batch, so the device copy is re-uploaded afterwards to give that memory back */
        for (uint32_t g : {1u, 2u, 4u})
            measure_harmonia(S, P, g, 1, P.nq, 1, true, "one PSA window over the whole batch");
        harmonia_device_release(P.tree);
        if (harmonia_device_upload(P.tree) != HARMONIA_OK) {
            fprintf(stderr, "bench_suite: re-upload: %s\n", harmonia_last_error(P.tree));
            S.failures++;
        }
    }
}

static uint32_t best_group(const point_ctx &P, const char *order)
{
    double best = 0;
    uint32_t g = 2;
    for (const result_entry &r : P.results)
        if (r.method == "harmonia" && r.order == order && r.window == 0 && r.pipeline == 0 && r.gqps > best) {
            best = r.gqps;
            g = r.group;
        }
    return g;
}

/* PSA windows and pipeline depth. */
static void point_windows(suite_state &S, point_ctx &P, uint32_t g)
{
    for (uint32_t w_log2 : {16u, 18u, 20u, 22u, 24u})
        if ((1ull << w_log2) <= P.nq)
            measure_harmonia(S, P, g, 1, 1ull << w_log2, 0, false);
    for (uint32_t depth : {1u, 2u, 3u})
        measure_harmonia(S, P, g, 1, 0, depth, false);
    for (uint32_t depth : {1u, 2u})
        measure_harmonia(S, P, g, 0, 0, depth, false);
    for (uint32_t w_log2 : {20u, 22u, 24u})
        if ((1ull << w_log2) < P.nq)
            measure_harmonia(S, P, g, 1, 1ull << w_log2, 0, true);
    harmonia_device_release(P.tree);
    if (harmonia_device_upload(P.tree) != HARMONIA_OK) {
        fprintf(stderr, "bench_suite: re-upload: %s\n", harmonia_last_error(P.tree));
        S.failures++;
    }
}

/* Other query sets on the same tree: 50 % hits, Zipf-popular queries. */
static void point_variants(suite_state &S, point_ctx &P)
{
    const struct {
        query_dist dist;
        double hits;
    } variants[] = {{QUERIES_UNIFORM, 0.5}, {QUERIES_ZIPF, 1.0}, {QUERIES_ZIPF, 0.5}};
    for (const auto &v : variants) {
        point_queries(P, v.dist, v.hits);
        printf(" queries: %s, %.0f %% hits\n", query_dist_name(v.dist), v.hits * 100);
        point_baselines(S, P, false, false);
        for (uint32_t g : {1u, 2u, 4u, 8u})
            measure_harmonia(S, P, g, 0, 0, 0, false);
        for (uint32_t g : {2u, 4u})
            measure_harmonia(S, P, g, 1, 0, 0, true);
    }
    point_queries(P, QUERIES_UNIFORM, 1.0);
}

/* Host-to-host: 2^h2h_log2 queries in pinned host memory streamed through the library's lanes,
 * beside the PCIe copy time of the same queries in and results out. */
static void point_h2h(suite_state &S, point_ctx &P, uint32_t g)
{
    const uint64_t nh = 1ull << S.sc.h2h_log2, kb = P.kb;
    void *h_q = NULL, *h_v = NULL;
    uint8_t *h_f = NULL;
    const double t_alloc = suite_now();
    if (cudaHostAlloc(&h_q, nh * kb, cudaHostAllocDefault) != cudaSuccess ||
        cudaHostAlloc(&h_v, nh * kb, cudaHostAllocDefault) != cudaSuccess ||
        cudaHostAlloc((void **)&h_f, nh, cudaHostAllocDefault) != cudaSuccess) {
        cudaGetLastError();
        error_row(S, P, "harmonia", g, -1, 0, 0, "ordered", "host_pinned",
                  strf("cannot pin %.1f GiB of host memory", nh * (2 * kb + 1) / 1073741824.0), false);
        if (h_q)
            CK(cudaFreeHost(h_q));
        if (h_v)
            CK(cudaFreeHost(h_v));
        return;
    }
    printf("  pinned %.1f GiB in %.1f s\n", nh * (2 * kb + 1) / 1073741824.0, suite_now() - t_alloc);
    /* the queries, generated on the device chunk by chunk (the same query set as the device batch
     * for its first nq queries) */
    const uint64_t chunk = P.nq;
    for (uint64_t first = 0; first < nh; first += chunk) {
        const uint64_t c = std::min(chunk, nh - first);
        gen_queries_device(P.s.bits, P.d_keys, P.n, P.qs, first, c, P.d_q);
        CK(cudaMemcpy((char *)h_q + first * kb, P.d_q, c * kb, cudaMemcpyDeviceToHost));
    }
    /* PCIe alone: queries in, results out, and both at once on two streams */
    cudaStream_t up, down;
    CK(cudaStreamCreateWithFlags(&up, cudaStreamNonBlocking));
    CK(cudaStreamCreateWithFlags(&down, cudaStreamNonBlocking));
    auto copy_in = [&](cudaStream_t st) {
        for (uint64_t first = 0; first < nh; first += chunk)
            CK(cudaMemcpyAsync(P.d_q, (char *)h_q + first * kb, std::min(chunk, nh - first) * kb,
                               cudaMemcpyHostToDevice, st));
    };
    auto copy_out = [&](cudaStream_t st) {
        for (uint64_t first = 0; first < nh; first += chunk) {
            const uint64_t c = std::min(chunk, nh - first);
            CK(cudaMemcpyAsync((char *)h_v + first * kb, P.d_out, c * kb, cudaMemcpyDeviceToHost, st));
            CK(cudaMemcpyAsync(h_f + first, P.d_found, c, cudaMemcpyDeviceToHost, st));
        }
    };
    const uint64_t in_bytes = nh * kb, out_bytes = nh * (kb + 1);
    timing t_in = time_host(3, [&] { copy_in(up); CK(cudaStreamSynchronize(up)); });
    timing t_out = time_host(3, [&] { copy_out(down); CK(cudaStreamSynchronize(down)); });
    timing t_both = time_host(3, [&] {
        copy_in(up);
        copy_out(down);
        CK(cudaStreamSynchronize(up));
        CK(cudaStreamSynchronize(down));
    });
    CK(cudaStreamDestroy(up));
    CK(cudaStreamDestroy(down));
    ceiling_row(S, "pcie_h2d_pinned", P.name, in_bytes, nh, t_in, in_bytes / t_in.median_ms / 1e6, 0, "queries in");
    ceiling_row(S, "pcie_d2h_pinned", P.name, out_bytes, nh, t_out, out_bytes / t_out.median_ms / 1e6, 0,
                "values + found flags out");
    ceiling_row(S, "pcie_duplex_pinned", P.name, in_bytes + out_bytes, nh, t_both,
                (in_bytes + out_bytes) / t_both.median_ms / 1e6, 0, "both at once on two streams");
    /* the library, host arrays (pinned by the caller: copied to and from directly) */
    for (uint64_t window : {(uint64_t)0, (uint64_t)1 << 22}) {
        harmonia_query_config q = gpu_config(g, -1, window, 0);
        q.memory = HARMONIA_MEMORY_HOST;
        memset(h_f, 0xA5, nh);
        harmonia_status st = HARMONIA_OK;
        timing t = time_host(3, [&] {
            harmonia_status s2 = harmonia_lookup(P.tree, &q, h_q, nh, h_v, h_f);
            if (s2 != HARMONIA_OK)
                st = s2;
        });
        if (st != HARMONIA_OK) {
            error_row(S, P, "harmonia", g, -1, window, 0, "ordered", "host_pinned", harmonia_last_error(P.tree), true);
            continue;
        }
        verifier hv;
        verifier_init(&hv, P.tree, P.s.bits, nh, S.sc.sample, false);
        check_result c = verify_lookup_host(&hv, h_q, h_v, h_f);
        const std::string note = strf("%.0f%% of the PCIe copy time alone (%.1f ms duplex; in %.1f + out %.1f ms)",
                                      100.0 * t.median_ms / t_both.median_ms, t_both.median_ms, t_in.median_ms,
                                      t_out.median_ms);
        lookup_row(S, P, "harmonia", g, -1, window, 0, "ordered", "host_pinned", nh, 3, t, &c, NULL, note);
    }
    CK(cudaFreeHost(h_q));
    CK(cudaFreeHost(h_v));
    CK(cudaFreeHost(h_f));
    point_queries(P, P.qs.dist, P.qs.hit_rate); /* the device batch again (the chunks overwrote it) */
}

/* Range count and collect against the sorted array, lengths 8, 64 and 16384. */
static void point_ranges(suite_state &S, point_ctx &P)
{
    const uint64_t nr = P.nq, kb = P.kb;
    void *d_lo = suite_try_device_alloc(nr * kb, "range lows");
    void *d_hi = suite_try_device_alloc(nr * kb, "range highs");
    uint64_t *d_counts = (uint64_t *)suite_try_device_alloc((nr + 1) * 8, "range counts");
    if (!d_lo || !d_hi || !d_counts) {
        suite_device_free(d_lo);
        suite_device_free(d_hi);
        suite_device_free(d_counts);
        S.b.skipped.push_back(P.name + " ranges (GPU memory)");
        return;
    }
    verifier vf;
    verifier_init(&vf, P.tree, P.s.bits, nr, S.sc.sample, true);
    const uint32_t full_group = std::min(P.s.fanout, 32u);
    for (uint64_t length : {8ull, 64ull, 16384ull}) {
        if (length > P.n)
            continue;
        gen_ranges_device(P.s.bits, P.d_keys, P.n, length, 0xa11ce + length, nr, d_lo, d_hi);
        /* counts */
        CK(cudaMemset(d_counts, 0xFF, nr * 8));
        timing t = time_gpu(P.s.runs, [&] { range_count_device(P.arr, d_lo, d_hi, nr, d_counts); });
        check_result c = verify_range_count_device(&vf, d_lo, d_hi, d_counts);
        range_row(S, P, length, "count", "sorted_array", 0, nr, nr * length, P.s.runs, t, &c, NULL,
                  "two binary searches per range");
        for (uint32_t g : all_groups) {
            if (g > full_group)
                continue;
            harmonia_query_config q = gpu_config(g, -1, 0, 0);
            CK(cudaMemset(d_counts, 0xFF, nr * 8));
            harmonia_status st = HARMONIA_OK;
            t = time_gpu(P.s.runs, [&] {
                harmonia_status s2 = harmonia_range_count(P.tree, &q, d_lo, d_hi, nr, d_counts);
                if (s2 != HARMONIA_OK)
                    st = s2;
            });
            if (st != HARMONIA_OK) {
                fprintf(stderr, "bench_suite: range count G=%u: %s\n", g, harmonia_last_error(P.tree));
                S.failures++;
                S.failed.push_back(P.name + strf(" range count G=%u: error", g));
                continue;
            }
            c = verify_range_count_device(&vf, d_lo, d_hi, d_counts);
            range_row(S, P, length, "count", "harmonia", g, nr, nr * length, P.s.runs, t, &c, NULL, "");
        }
        /* collect: the first nc ranges of the same set, about 2^range_pairs_log2 pairs */
        const uint64_t nc = std::max<uint64_t>(1, std::min<uint64_t>(nr, (1ull << S.sc.range_pairs_log2) / length));
        const uint64_t pairs = nc * length;
        uint64_t *d_offsets = (uint64_t *)suite_try_device_alloc((nc + 1) * 8, "range offsets");
        void *d_keys_out = suite_try_device_alloc(pairs * kb, "collected keys");
        void *d_values_out = suite_try_device_alloc(pairs * kb, "collected values");
        const size_t temp_bytes = range_scan_temp_bytes(nc);
        void *d_temp = suite_try_device_alloc(temp_bytes, "scan temporary storage");
        if (d_offsets && d_keys_out && d_values_out && d_temp) {
            verifier cv;
            verifier_init(&cv, P.tree, P.s.bits, nc, S.sc.sample, true);
            CK(cudaMemset(d_keys_out, 0xA5, pairs * kb));
            t = time_gpu(P.s.runs, [&] {
                range_offsets_device(P.arr, d_lo, d_hi, nc, d_counts, d_temp, temp_bytes, d_offsets);
                range_collect_device(P.arr, d_lo, nc, d_offsets, length, d_keys_out, d_values_out);
            });
            c = verify_range_collect_device(&cv, d_lo, d_hi, d_offsets, d_keys_out, d_values_out, pairs);
            range_row(S, P, length, "collect", "sorted_array", length >= 256 ? 32 : 8, nc, pairs, P.s.runs, t, &c, NULL,
                      "counts + CUB scan + group copy");
            std::vector<uint32_t> groups = {2u, 8u, full_group};
            std::sort(groups.begin(), groups.end());
            groups.erase(std::unique(groups.begin(), groups.end()), groups.end());
            for (uint32_t g : groups) {
                harmonia_query_config q = gpu_config(g, -1, 0, 0);
                CK(cudaMemset(d_keys_out, 0xA5, pairs * kb));
                harmonia_status st = HARMONIA_OK;
                t = time_gpu(P.s.runs, [&] {
                    harmonia_status s2 = harmonia_range_collect(P.tree, &q, d_lo, d_hi, nc, d_offsets, NULL, NULL);
                    if (s2 == HARMONIA_OK)
                        s2 = harmonia_range_collect(P.tree, &q, d_lo, d_hi, nc, d_offsets, d_keys_out, d_values_out);
                    if (s2 != HARMONIA_OK)
                        st = s2;
                });
                if (st != HARMONIA_OK) {
                    fprintf(stderr, "bench_suite: range collect G=%u: %s\n", g, harmonia_last_error(P.tree));
                    S.failures++;
                    S.failed.push_back(P.name + strf(" range collect G=%u: error", g));
                    continue;
                }
                c = verify_range_collect_device(&cv, d_lo, d_hi, d_offsets, d_keys_out, d_values_out, pairs);
                range_row(S, P, length, "collect", "harmonia", g, nc, pairs, P.s.runs, t, &c, NULL,
                          "both phases (offsets; pairs)");
            }
            verifier_free(&cv);
        } else {
            S.b.skipped.push_back(P.name + strf(" range collect length %" PRIu64 " (GPU memory)", length));
        }
        suite_device_free(d_offsets);
        suite_device_free(d_keys_out);
        suite_device_free(d_values_out);
        suite_device_free(d_temp);
    }
    verifier_free(&vf);
    suite_device_free(d_lo);
    suite_device_free(d_hi);
    suite_device_free(d_counts);
}

static void point_free(point_ctx &P)
{
    if (P.have_vf)
        verifier_free(&P.vf);
    if (P.have_pipe)
        bsearch_pipeline_free(&P.pipe);
    if (P.have_eyt)
        eyt_free(&P.eyt);
    if (P.have_hbt)
        hbt_free(&P.hbt);
    P.have_vf = P.have_pipe = P.have_eyt = P.have_hbt = false;
    harmonia_free(P.tree);
    P.tree = NULL;
    suite_device_free(P.d_keys);
    suite_device_free(P.d_values);
    suite_device_free(P.d_q);
    suite_device_free(P.d_out);
    suite_device_free(P.d_found);
    suite_device_free(P.d_pos);
    P.d_keys = P.d_values = P.d_q = P.d_out = NULL;
    P.d_found = NULL;
    P.d_pos = NULL;
    free(P.h_keys);
    free(P.h_values);
    P.h_keys = P.h_values = NULL;
}

static void run_point(suite_state &S, const point_spec &spec, const char *task)
{
    point_ctx P;
    P.s = spec;
    P.n = 1ull << spec.keys_log2;
    P.nq = 1ull << S.sc.queries_log2;
    P.kb = spec.bits / 8;
    P.name = strf("u%u-2^%u-%s-F%uL%u", spec.bits, spec.keys_log2, key_dist_name(spec.dist), spec.fanout, spec.leaf);
    const double estimate = estimate_point(S, spec);
    if (!budget_allows(&S.b, std::string(task) + " " + P.name, estimate))
        return;
    const double need = device_bytes_of(S, spec), free_bytes = (double)suite_device_free_bytes();
    if (need > free_bytes) {
        S.b.skipped.push_back(strf("%s %s (needs ~%.1f GB of GPU memory, %.1f GB free)", task, P.name.c_str(),
                                   need / 1e9, free_bytes / 1e9));
        printf("# SKIPPED (memory): %s\n", S.b.skipped.back().c_str());
        return;
    }
    const double t0 = suite_now();
    printf("\n# %s: %s (estimate %.0f s, %.0f s of budget left)\n", task, P.name.c_str(), estimate, budget_left(&S.b));
    fflush(stdout);
    if (!point_data(S, P)) {
        S.failures++;
        S.failed.push_back(P.name + ": data or build failed");
        point_free(P);
        return;
    }
    printf("  tree: height %u, %.2f GB; %u constant levels\n", P.info.height, P.info.total_bytes / 1e9,
           P.info.constant_prefix_levels);
    const bool lookups = spec.full || spec.brief || spec.h2h || spec.windows || spec.variants || spec.ranges;
    if (lookups) {
        P.d_q = suite_device_alloc(P.nq * P.kb);
        P.d_out = suite_device_alloc(P.nq * P.kb);
        P.d_found = (uint8_t *)suite_device_alloc(P.nq);
        P.d_pos = (uint64_t *)suite_device_alloc(P.nq * 8);
        verifier_init(&P.vf, P.tree, spec.bits, P.nq, S.sc.sample, true);
        P.have_vf = true;
        point_gather_ceiling(S, P);
        point_queries(P, QUERIES_UNIFORM, 1.0);
    }
    if (spec.full || spec.brief) {
        point_structures(S, P, true, true, true);
        point_baselines(S, P, spec.full, true);
        point_harmonia(S, P, spec.full || spec.ablation, spec.full);
        if (spec.ablation)
            write_ablation(S, P, "hbtree");
    }
    if (spec.ranges)
        point_ranges(S, P);
    if (spec.h2h)
        point_h2h(S, P, S.best_group64);
    if (spec.windows)
        point_windows(S, P, S.best_group64);
    if (spec.variants) {
        point_structures(S, P, true, true, true);
        point_variants(S, P);
    }
    if (spec.full && spec.bits == 64 && spec.keys_log2 == 26 && spec.fanout == 16 && spec.leaf == 16)
        S.best_group64 = best_group(P, "ordered");
    point_free(P);
    printf("# %s done in %.1f s\n", P.name.c_str(), suite_now() - t0);
    fflush(stdout);
}

/* ================================================================================================
 * Ceilings.
 * ============================================================================================== */
static void run_ceilings(suite_state &S)
{
    if (!budget_allows(&S.b, "ceilings", 10))
        return;
    printf("\n# ceilings\n");
    const uint32_t runs = 5;
    timing t = ceiling_copy(S.sc.copy_bytes, runs);
    ceiling_row(S, "d2d_copy", "-", S.sc.copy_bytes, 1, t, 2.0 * S.sc.copy_bytes / t.median_ms / 1e6, 0,
                "cudaMemcpy device to device; read + write bytes");
    t = ceiling_gather(S.sc.l2_gather_bytes, S.sc.gather_loads, runs);
    double g = S.sc.gather_loads / t.median_ms / 1e6;
    ceiling_row(S, "gather_8B_l2", "-", S.sc.l2_gather_bytes, S.sc.gather_loads, t, g * 8, g,
                "random 8-byte loads over an L2-sized array");
    t = ceiling_gather(S.sc.big_gather_bytes, S.sc.gather_loads, runs);
    g = S.sc.gather_loads / t.median_ms / 1e6;
    ceiling_row(S, "gather_8B_big", "-", S.sc.big_gather_bytes, S.sc.gather_loads, t, g * 8, g,
                "random 8-byte loads over a large array");
    t = ceiling_scatter(S.sc.scatter_n, runs);
    g = S.sc.scatter_n / t.median_ms / 1e6;
    ceiling_row(S, "scatter_8B", "-", S.sc.scatter_n * 16, S.sc.scatter_n, t, g * 16, g,
                "8-byte values to a random permutation of their positions");
}

/* ================================================================================================
 * --quick on the CPU: the same data generators, layouts and checks, the CPU engine against the CPU
 * baselines (binary search, K-ary Eytzinger, pointer B+tree), ranges and the build, CSV tables.
 * ============================================================================================== */
static void cpu_point(suite_state &S, uint32_t bits, uint32_t keys_log2, key_dist dist, query_dist qd, double hits,
                      bool ablation)
{
    point_ctx P;
    P.s = spec_of(bits, keys_log2, S.o.runs);
    P.s.dist = dist;
    P.n = 1ull << keys_log2;
    P.nq = 1ull << S.sc.cpu_queries_log2;
    P.kb = bits / 8;
    P.name = strf("u%u-2^%u-%s-F%uL%u", bits, keys_log2, key_dist_name(dist), P.s.fanout, P.s.leaf);
    printf("\n# quick (CPU): %s, %s queries, %.0f %% hits\n", P.name.c_str(), query_dist_name(qd), hits * 100);
    P.h_keys = malloc(P.n * P.kb);
    P.h_values = malloc(P.n * P.kb);
    if (!gen_sorted_host(bits, dist, P.n, 0x5eed0000ull + keys_log2 * 131 + bits + (uint64_t)dist * 7919, P.h_keys,
                         P.h_values)) {
        S.failures++;
        point_free(P);
        return;
    }
    double seconds = 0;
    P.tree = build_tree(P.s, P.h_keys, P.h_values, P.n, true, NULL, &seconds);
    if (!P.tree) {
        S.failures++;
        S.failed.push_back(P.name + ": build failed");
        point_free(P);
        return;
    }
    harmonia_info(P.tree, &P.info);
    timing tg = ceiling_gather_host(P.info.total_bytes, 1ull << 22, 3);
    P.gather_gps = (1ull << 22) / tg.median_ms / 1e6;
    ceiling_row(S, "gather_8B_tree_size_cpu", P.name, P.info.total_bytes, 1ull << 22, tg, P.gather_gps * 8,
                P.gather_gps, "CPU: random 8-byte loads over an array the size of the tree");
    P.qs = {qd, hits, 0.99, 0x9e3779b9ull + keys_log2 + (uint64_t)qd * 17 + (uint64_t)(hits * 1000)};
    std::vector<uint8_t> q(P.nq * P.kb), v(P.nq * P.kb), f(P.nq);
    gen_queries_host(bits, P.h_keys, P.n, P.qs, 0, P.nq, q.data());
    verifier vf;
    verifier_init(&vf, P.tree, bits, P.nq, S.sc.sample, false);
    harmonia_query_config cpu;
    harmonia_query_config_init(&cpu);
    cpu.backend = HARMONIA_BACKEND_CPU;
    auto measure = [&](const char *method, const std::string &note, auto &&fn) {
        memset(f.data(), 0xA5, P.nq);
        memset(v.data(), 0xA5, P.nq * P.kb);
        timing t = time_host(S.o.runs, fn);
        check_result c = verify_lookup_host(&vf, q.data(), v.data(), f.data());
        lookup_row(S, P, method, 0, -1, 0, 0, "ordered", "host", P.nq, S.o.runs, t, &c, NULL, note);
    };
    measure("cpu_engine", strf("%d threads", omp_get_max_threads()),
            [&] { harmonia_lookup(P.tree, &cpu, q.data(), P.nq, v.data(), f.data()); });
    measure("cpu_binary_search", "cli_baselines.c",
            [&] { bl_lookup(bits, P.h_keys, P.h_values, P.n, q.data(), P.nq, v.data(), f.data(), 0); });
    double t0 = suite_now();
    eyt_build_host(&P.eyt, bits, P.h_keys, P.h_values, P.n);
    P.have_eyt = true;
    build_row(S, bits, keys_log2, dist, P.s.fanout, P.s.leaf, "eytzinger_k9 (CPU)", "build from sorted", suite_now() - t0, P.n,
              strf("height %u", P.eyt.height));
    measure("eytzinger_k9_cpu", "the layout the GPU baseline builds", [&] {
        eyt_lookup_host(P.eyt, q.data(), P.nq, v.data(), f.data());
    });
    t0 = suite_now();
    hbt_build_host(&P.hbt, bits, P.h_keys, P.h_values, P.n, P.s.fanout);
    P.have_hbt = true;
    build_row(S, bits, keys_log2, dist, P.s.fanout, P.s.leaf, "hbtree (CPU)", "build from sorted", suite_now() - t0, P.n,
              strf("height %u", P.hbt.shape.height));
    measure("hbtree_cpu", "the pointer B+tree the GPU baseline builds", [&] {
        hbt_lookup_host(P.hbt, q.data(), P.nq, v.data(), f.data());
    });
    if (ablation) {
        /* on the CPU only the first two steps exist: the pointer tree and the Harmonia layout */
        const result_entry *regular = NULL, *engine = NULL;
        for (const result_entry &r : P.results) {
            if (r.method == "hbtree_cpu")
                regular = &r;
            if (r.method == "cpu_engine")
                engine = &r;
        }
        if (regular && engine && regular->gqps > 0) {
            csv_row(&S.t.ablation, "%s,%u,%u,%u,1,regular B+tree (pointers; CPU),hbtree_cpu,0,-1,%.6g,1.0000,1.0000",
                    P.name.c_str(), bits, keys_log2, P.s.fanout, regular->gqps);
            csv_row(&S.t.ablation, "%s,%u,%u,%u,2,Harmonia layout (CPU engine),cpu_engine,0,-1,%.6g,%.4f,%.4f",
                    P.name.c_str(), bits, keys_log2, P.s.fanout, engine->gqps, engine->gqps / regular->gqps,
                    engine->gqps / regular->gqps);
        }
    }
    verifier_free(&vf);
    point_free(P);
}

static void cpu_ranges(suite_state &S, uint32_t bits, uint32_t keys_log2)
{
    point_ctx P;
    P.s = spec_of(bits, keys_log2, S.o.runs);
    P.n = 1ull << keys_log2;
    P.kb = bits / 8;
    P.name = strf("u%u-2^%u-uniform-F16L16", bits, keys_log2);
    printf("\n# quick (CPU): ranges on %s\n", P.name.c_str());
    P.h_keys = malloc(P.n * P.kb);
    P.h_values = malloc(P.n * P.kb);
    gen_sorted_host(bits, KEYS_UNIFORM, P.n, 77, P.h_keys, P.h_values);
    double seconds = 0;
    P.tree = build_tree(P.s, P.h_keys, P.h_values, P.n, true, NULL, &seconds);
    if (!P.tree) {
        S.failures++;
        point_free(P);
        return;
    }
    harmonia_query_config cpu;
    harmonia_query_config_init(&cpu);
    cpu.backend = HARMONIA_BACKEND_CPU;
    const uint64_t nr = 1ull << 14;
    std::vector<uint8_t> lo(nr * P.kb), hi(nr * P.kb);
    std::vector<uint64_t> counts(nr), ref(nr), offsets(nr + 1), ref_offsets(nr + 1);
    for (uint64_t length : {8ull, 64ull, 16384ull}) {
        if (length > P.n)
            continue;
        gen_ranges_host(bits, P.h_keys, P.n, length, 0xa11ce + length, nr, lo.data(), hi.data());
        timing t = time_host(S.o.runs, [&] { harmonia_range_count(P.tree, &cpu, lo.data(), hi.data(), nr, ref.data()); });
        uint64_t bad = 0;
        for (uint64_t i = 0; i < nr; i++)
            bad += ref[i] != length;
        check_result c = {bad == 0, nr, bad, 0};
        range_row(S, P, length, "count", "cpu_engine", 0, nr, nr * length, S.o.runs, t, &c, NULL,
                  "every range holds exactly `length` keys");
        t = time_host(S.o.runs, [&] { bl_range_count(bits, P.h_keys, P.n, lo.data(), hi.data(), nr, counts.data(), 0); });
        bad = 0;
        for (uint64_t i = 0; i < nr; i++)
            bad += counts[i] != ref[i];
        c = {bad == 0, nr, bad, 0};
        range_row(S, P, length, "count", "cpu_sorted_array", 0, nr, nr * length, S.o.runs, t, &c, NULL, "");
        /* collect: both phases, against each other pair by pair */
        const uint64_t nc = std::min<uint64_t>(nr, (1ull << 22) / length), pairs = nc * length;
        std::vector<uint8_t> k1(pairs * P.kb), v1(pairs * P.kb), k2(pairs * P.kb), v2(pairs * P.kb);
        t = time_host(S.o.runs, [&] {
            harmonia_range_collect(P.tree, &cpu, lo.data(), hi.data(), nc, ref_offsets.data(), NULL, NULL);
            harmonia_range_collect(P.tree, &cpu, lo.data(), hi.data(), nc, ref_offsets.data(), k1.data(), v1.data());
        });
        c = {ref_offsets[nc] == pairs, nc, ref_offsets[nc] == pairs ? 0u : 1u, 0};
        range_row(S, P, length, "collect", "cpu_engine", 0, nc, pairs, S.o.runs, t, &c, NULL, "both phases");
        t = time_host(S.o.runs, [&] {
            bl_range_count(bits, P.h_keys, P.n, lo.data(), hi.data(), nc, offsets.data() + 1, 0);
            offsets[0] = 0;
            for (uint64_t i = 1; i <= nc; i++)
                offsets[i] += offsets[i - 1];
            range_collect_host(bits, P.h_keys, P.h_values, P.n, lo.data(), nc, offsets.data(), k2.data(), v2.data());
        });
        bad = memcmp(offsets.data(), ref_offsets.data(), (nc + 1) * 8) != 0;
        for (uint64_t p = 0; p < pairs * P.kb && !bad; p += P.kb)
            bad += memcmp(&k1[p], &k2[p], P.kb) != 0 || memcmp(&v1[p], &v2[p], P.kb) != 0;
        c = {bad == 0, nc, bad, 0};
        range_row(S, P, length, "collect", "cpu_sorted_array", 0, nc, pairs, S.o.runs, t, &c, NULL,
                  "checked pair by pair against the CPU engine");
    }
    point_free(P);
}

static void cpu_build(suite_state &S, uint32_t bits, uint32_t keys_log2)
{
    const uint64_t n = 1ull << keys_log2, kb = bits / 8;
    printf("\n# quick (CPU): build of 2^%u %u-bit pairs from unsorted input\n", keys_log2, bits);
    std::vector<uint8_t> keys(n * kb), values(n * kb);
    gen_uniform_unsorted_host(bits, n, 99, keys.data(), values.data());
    point_spec s = spec_of(bits, keys_log2, 1);
    build_timer timer;
    double total = 0;
    harmonia_tree *tree = build_tree(s, keys.data(), values.data(), n, false, &timer, &total);
    if (!tree || harmonia_check(tree) != HARMONIA_OK) {
        S.failures++;
        S.failed.push_back(strf("build of 2^%u %u-bit pairs", keys_log2, bits));
        harmonia_free(tree);
        return;
    }
    const char *m = "cpu_unsorted";
    build_row(S, bits, keys_log2, KEYS_UNIFORM, s.fanout, s.leaf, m, "copy + radix sort", timer.sort_end - timer.sort_start, n, "");
    build_row(S, bits, keys_log2, KEYS_UNIFORM, s.fanout, s.leaf, m, "duplicate check", timer.layout_start - timer.sort_end, n, "");
    build_row(S, bits, keys_log2, KEYS_UNIFORM, s.fanout, s.leaf, m, "layout", timer.layout_end - timer.layout_start, n, "");
    build_row(S, bits, keys_log2, KEYS_UNIFORM, s.fanout, s.leaf, m, "total", total, n,
              strf("%d threads; tree checked", omp_get_max_threads()));
    harmonia_free(tree);
}

static void run_quick_cpu(suite_state &S)
{
    printf("\n# host ceilings\n");
    timing t = ceiling_copy_host(1ull << 28, 3);
    ceiling_row(S, "host_copy_cpu", "-", 1ull << 28, 1, t, 2.0 * (1ull << 28) / t.median_ms / 1e6, 0,
                "CPU memcpy (OpenMP); read + write bytes");
    for (uint64_t bytes : {32ull << 20, 256ull << 20}) {
        t = ceiling_gather_host(bytes, 1ull << 24, 3);
        const double g = (1ull << 24) / t.median_ms / 1e6;
        ceiling_row(S, bytes == (32ull << 20) ? "gather_8B_l2_cpu" : "gather_8B_big_cpu", "-", bytes, 1ull << 24, t,
                    g * 8, g, "CPU: random 8-byte loads");
    }
    for (uint32_t bits : {64u, 32u})
        for (uint32_t keys_log2 : {12u, 14u, 16u, 18u})
            cpu_point(S, bits, keys_log2, KEYS_UNIFORM, QUERIES_UNIFORM, 1.0, keys_log2 == 16);
    cpu_point(S, 64, 16, KEYS_DENSE, QUERIES_UNIFORM, 1.0, false);
    cpu_point(S, 64, 16, KEYS_ZIPF, QUERIES_UNIFORM, 1.0, false);
    cpu_point(S, 32, 16, KEYS_ZIPF, QUERIES_UNIFORM, 0.5, false);
    cpu_point(S, 64, 16, KEYS_UNIFORM, QUERIES_ZIPF, 1.0, false);
    cpu_point(S, 64, 16, KEYS_UNIFORM, QUERIES_UNIFORM, 0.5, false);
    cpu_point(S, 32, 14, KEYS_DENSE, QUERIES_UNIFORM, 0.5, false);
    cpu_ranges(S, 64, 16);
    cpu_ranges(S, 32, 16);
    cpu_build(S, 64, 20);
    cpu_build(S, 32, 20);
}

/* ================================================================================================
 * The GPU plan, by priority.
 * ============================================================================================== */
static void run_gpu(suite_state &S)
{
    const bool quick = S.o.quick;
    const uint32_t runs = S.o.runs, sweep_runs = S.o.sweep_runs;
    /* sizes of the priority points (quick: small) */
    const uint32_t big64 = quick ? 20 : 26, small64 = quick ? 18 : 23, big32 = quick ? 20 : 28;
    if (want_task(S, "ceilings"))
        run_ceilings(S);
    if (want_task(S, "main")) {
        point_spec a = spec_of(64, big64, runs);
        a.full = a.ablation = true;
        run_point(S, a, "main");
        point_spec b = spec_of(32, big32, runs);
        b.full = b.ablation = b.build_steps = true;
        run_point(S, b, "main");
        point_spec c = spec_of(64, small64, runs);
        c.full = c.ablation = true;
        run_point(S, c, "main");
    }
    if (want_task(S, "ranges")) { /* range count and collect on the 2^26 tree */
        point_spec a = spec_of(64, big64, runs);
        a.ranges = true;
        run_point(S, a, "ranges");
    }
    if (want_task(S, "host")) { /* 2^30 queries streamed from host memory, beside the PCIe copy time */
        point_spec a = spec_of(64, big64, runs);
        a.h2h = true;
        run_point(S, a, "host");
    }
    if (want_task(S, "build64")) {
        point_spec b = spec_of(64, quick ? 20 : 28, 1);
        b.build_steps = true;
        run_point(S, b, "build64");
    }
    if (want_task(S, "extra")) { /* PSA windows and depth, 50 % hits and Zipf queries */
        point_spec a = spec_of(64, big64, sweep_runs);
        a.windows = a.variants = true;
        run_point(S, a, "extra");
        point_spec b = spec_of(32, big32, sweep_runs);
        b.variants = true;
        run_point(S, b, "extra");
    }
    if (want_task(S, "fanout")) { /* F and L, with the ablation at each F (F = 64: the paper's) */
        const uint32_t shapes[][2] = {{64, 16}, {32, 16}, {8, 16}, {16, 8}, {16, 32}, {64, 64}};
        for (const auto &shape : shapes) {
            point_spec s = spec_of(64, big64, sweep_runs);
            s.fanout = shape[0];
            s.leaf = shape[1];
            s.brief = s.ablation = true;
            run_point(S, s, "fanout");
        }
    }
    if (want_task(S, "dists")) {
        for (key_dist d : {KEYS_DENSE, KEYS_ZIPF})
            for (uint32_t bits : {64u, 32u}) {
                point_spec s = spec_of(bits, bits == 64 ? big64 : big32, sweep_runs);
                s.dist = d;
                s.brief = true;
                run_point(S, s, "dists");
            }
    }
    if (want_task(S, "sweep")) {
        const uint32_t sizes[][2] = {{64, 20}, {32, 20}, {64, 24}, {32, 24}, {64, 28}, {32, 26}, {64, 22}, {32, 22},
                                     {64, 27}, {32, 27}, {64, 21}, {32, 21}, {64, 25}, {32, 25}, {32, 23}};
        for (const auto &size : sizes) {
            uint32_t log2 = size[1];
            if (quick) {
                if (log2 > 22)
                    continue;
                log2 -= 6;
            }
            point_spec s = spec_of(size[0], log2, sweep_runs);
            s.brief = true;
            run_point(S, s, "sweep");
        }
    }
}

/* ================================================================================================
 * main.
 * ============================================================================================== */
static void usage(void)
{
    printf("usage: bench_suite [--quick] [--cpu-only] [--budget-seconds S] [--out-dir DIR] [--runs R]\n"
           "                   [--sweep-runs R] [--cpu-runs R] [--queries-log2 N] [--tasks LIST]\n"
           "                   [--commit TEXT] [--command TEXT]\n"
           "  --quick           small sizes; on a machine without a GPU the CPU paths alone (exit 0)\n"
           "  --cpu-only        the CPU paths of --quick even where a GPU is usable\n"
           "  --budget-seconds  start no work whose estimate no longer fits (default 420); what is\n"
           "                    skipped is printed and written to meta.csv\n"
           "  --out-dir         where the CSV tables go (default bench/out)\n"
           "  --tasks           comma list, in priority order: ceilings,main,ranges,host,build64,\n"
           "                    extra,fanout,dists,sweep (default all)\n"
           "Tables: ceilings.csv lookup.csv ablation.csv range.csv build.csv meta.csv.\n"
           "Exit: 0 all verified; 1 a mismatch or an error (after finishing the tables); 77 no GPU\n"
           "without --quick.\n");
}

static std::string run_command(const char *cmd)
{
    std::string out;
    FILE *p = popen(cmd, "r");
    if (!p)
        return out;
    char line[512];
    while (fgets(line, sizeof line, p))
        out += line;
    pclose(p);
    while (!out.empty() && (out.back() == '\n' || out.back() == ' '))
        out.pop_back();
    return out;
}

int main(int argc, char **argv)
{
    suite_state S;
    std::string command = "bench_suite";
    for (int i = 1; i < argc; i++)
        command += std::string(" ") + argv[i];
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const bool has_value = i + 1 < argc;
        if (!strcmp(a, "--quick"))
            S.o.quick = true;
        else if (!strcmp(a, "--cpu-only"))
            S.o.cpu_only = S.o.quick = true;
        else if (!strcmp(a, "--budget-seconds") && has_value)
            S.o.budget_seconds = atof(argv[++i]);
        else if (!strcmp(a, "--out-dir") && has_value)
            S.o.out_dir = argv[++i];
        else if (!strcmp(a, "--runs") && has_value)
            S.o.runs = (uint32_t)atoi(argv[++i]);
        else if (!strcmp(a, "--sweep-runs") && has_value)
            S.o.sweep_runs = (uint32_t)atoi(argv[++i]);
        else if (!strcmp(a, "--cpu-runs") && has_value)
            S.o.cpu_runs = (uint32_t)atoi(argv[++i]);
        else if (!strcmp(a, "--queries-log2") && has_value)
            S.o.queries_log2 = atoi(argv[++i]);
        else if (!strcmp(a, "--tasks") && has_value)
            S.o.tasks = argv[++i];
        else if (!strcmp(a, "--commit") && has_value)
            S.o.commit = argv[++i];
        else if (!strcmp(a, "--command") && has_value)
            S.o.command = argv[++i];
        else if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            usage();
            return 0;
        } else {
            fprintf(stderr, "bench_suite: unknown or incomplete option %s\n", a);
            usage();
            return 2;
        }
    }
    if (S.o.runs < 1 || S.o.sweep_runs < 1 || S.o.cpu_runs < 1) {
        fprintf(stderr, "bench_suite: --runs, --sweep-runs and --cpu-runs must be at least 1\n");
        return 2;
    }
    if (S.o.runs < 3)
        printf("# note: fewer than 3 runs per configuration; medians of 3 or more are the rule\n");
    budget_init(&S.b, S.o.budget_seconds);
    S.gpu = !S.o.cpu_only && harmonia_device_probe(&S.dev) == HARMONIA_OK;
    const std::string no_gpu_reason = S.gpu ? "" : S.o.cpu_only ? "--cpu-only" : harmonia_last_error(NULL);
    if (!S.gpu && !S.o.quick) {
        printf("bench_suite: no GPU (%s); --quick runs the CPU paths\n", no_gpu_reason.c_str());
        return 77;
    }
    /* sizes */
    suite_scale &sc = S.sc;
    sc.queries_log2 = S.o.quick ? 20 : 27;
    if (S.o.queries_log2 > 0)
        sc.queries_log2 = (uint32_t)S.o.queries_log2;
    sc.cpu_queries_log2 = S.o.quick ? 18 : 24;
    sc.h2h_log2 = S.o.quick ? 23 : 30;
    sc.range_pairs_log2 = S.o.quick ? 20 : 26;
    sc.copy_bytes = S.o.quick ? 256ull << 20 : 4ull << 30;
    sc.gather_loads = S.o.quick ? 1ull << 24 : 1ull << 28;
    sc.scatter_n = S.o.quick ? 1ull << 22 : 1ull << 27;
    sc.l2_gather_bytes = 32ull << 20;
    sc.big_gather_bytes = S.o.quick ? 256ull << 20 : 4ull << 30;
    sc.sample = 1ull << 20;
    if (!tables_open(&S.t, S.o.out_dir))
        return 1;
    /* the run's facts */
    char date[64];
    time_t now = time(NULL);
    strftime(date, sizeof date, "%Y-%m-%d %H:%M:%S UTC", gmtime(&now));
    std::string commit = S.o.commit;
    if (commit.empty()) {
        commit = run_command("git rev-parse --short HEAD 2>/dev/null");
        const std::string dirty = run_command("git status --porcelain --untracked-files=no 2>/dev/null | head -1");
        if (!dirty.empty())
            commit += " (with uncommitted changes)";
    }
    meta_row(&S.t, "date", date);
    meta_row(&S.t, "commit", commit);
    meta_row(&S.t, "command", S.o.command.empty() ? command : S.o.command);
    meta_row(&S.t, "mode", S.o.quick ? (S.gpu ? "quick (GPU, small sizes)" : "quick (CPU only)") : "full");
    meta_row(&S.t, "budget_seconds", strf("%.0f", S.o.budget_seconds));
    meta_row(&S.t, "cpu_threads", strf("%d", omp_get_max_threads()));
    meta_row(&S.t, "queries", S.gpu ? strf("2^%u per device batch; CPU engine 2^%u", sc.queries_log2,
                                           sc.cpu_queries_log2)
                                      : strf("2^%u per batch (CPU)", sc.cpu_queries_log2));
    meta_row(&S.t, "runs", strf("median of %u after one warm-up (sweep %u; CPU engine %u)", S.o.runs, S.o.sweep_runs,
                                S.o.cpu_runs));
    meta_row(&S.t, "verification_sample", strf("%" PRIu64 " results per configuration (all when fewer)", sc.sample));
    if (S.gpu) {
        int driver = 0, runtime = 0;
        cudaDriverGetVersion(&driver);
        cudaRuntimeGetVersion(&runtime);
        meta_row(&S.t, "device", S.dev.name);
        meta_row(&S.t, "device_detail",
                 strf("%d SMs; L2 %.0f MiB; %.1f GiB; compute %d.%d; driver %d; runtime %d", S.dev.sm_count,
                      S.dev.l2_bytes / 1048576.0, S.dev.global_memory_bytes / 1073741824.0, S.dev.compute_major,
                      S.dev.compute_minor, driver, runtime));
        printf("# %s, %d SMs, L2 %.0f MiB, %.1f GiB; %d CPU threads; budget %.0f s\n", S.dev.name, S.dev.sm_count,
               S.dev.l2_bytes / 1048576.0, S.dev.global_memory_bytes / 1073741824.0, omp_get_max_threads(),
               S.o.budget_seconds);
    } else {
        meta_row(&S.t, "device", strf("none (%s)", no_gpu_reason.c_str()));
        printf("# no GPU (%s): the CPU paths of the suite; %d CPU threads\n", no_gpu_reason.c_str(),
               omp_get_max_threads());
    }
    fflush(stdout);
    if (S.gpu)
        run_gpu(S);
    else
        run_quick_cpu(S);
    /* the end: what was skipped, what failed */
    for (const std::string &s : S.b.skipped)
        meta_row(&S.t, "skipped", s);
    for (const std::string &f : S.failed)
        meta_row(&S.t, "failed", f);
    const double elapsed = suite_now() - S.b.start;
    meta_row(&S.t, "elapsed_seconds", strf("%.1f", elapsed));
    meta_row(&S.t, "status", S.failures ? strf("FAILED: %d mismatches or errors", S.failures) : "all verified");
    printf("\n# done in %.1f s; tables in %s\n", elapsed, S.o.out_dir.c_str());
    if (!S.b.skipped.empty()) {
        printf("# skipped (%zu):\n", S.b.skipped.size());
        for (const std::string &s : S.b.skipped)
            printf("#   %s\n", s.c_str());
    }
    if (S.failures) {
        printf("# FAILED: %d mismatches or errors against the CPU engine:\n", S.failures);
        for (const std::string &f : S.failed)
            printf("#   %s\n", f.c_str());
    } else {
        printf("# every measured configuration matched the CPU engine on its sample\n");
    }
    tables_close(&S.t);
    return S.failures ? 1 : 0;
}
