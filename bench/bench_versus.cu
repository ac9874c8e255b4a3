/* bench_versus.cu — Harmonia with its defaults (a NULL query config: the library picks the path for
 * the tree and the batch) against the strongest baselines, on the same data in the same process,
 * for every workload of issue 11: tree sizes of both key widths, results in query order and in
 * sorted order, hit rates, query distributions (uniform, Zipf, clustered, mostly outside the keys'
 * span), dense keys, batch sizes 2^10 .. 2^30, and range count / collect at lengths 8 .. 16384.
 * Baselines (suite_baselines.cu): plain binary search; CUB sort of (query, position) on the top B
 * bits of the keys' span, B swept, + binary search + fused or packed scatter (query order) or no
 * scatter (sorted order); binary search of fully sorted queries (sort not timed); K-ary Eytzinger;
 * a GPU hash table at 50 % load (the point-lookup ceiling, not an ordered index); the sorted array's
 * range count and collect. Every configuration's results are checked against the CPU engine on a
 * sample (2^20 slots or all); the program exits 1 after its tables when one differs.
 * Every method is timed as a whole call (its launches and a synchronisation), CUDA events around it,
 * median of R runs after a warm-up (batches of up to SMALL_BATCH_RUNS_MAX queries: at least
 * SMALL_BATCH_RUNS runs, their tens of microseconds vary by more than a few runs settle). Every
 * batch's methods (and each range length's two) are timed in rounds (time_gpu_rounds, suite.h),
 * every method once a round in a rotating order, so that a drift of the GPU's or the host's state
 * falls on every method alike rather than on one method's block of runs: at the launch floor it
 * moved whole blocks by more than the methods differ (bench/NOTES.md, "Session 17"), and at
 * 2^20-2^24 queries single blocks came out 10-40 % slow (session 18). The informational search of
 * pre-sorted queries (bsearch_sorted) is timed apart, before the rounds: the pipelines in them reuse
 * its sorted array.
 * Output: a line per measurement, a summary per workload (Harmonia / strongest ordered baseline),
 * and versus.csv / versus-summary.csv in --out-dir.
 * Usage: bench_versus [--runs R (5)] [--queries-log2 Q (27)] [--only LIST] [--batches SIZES] [--fanout F]
 *                     [--leaf-size L] [--key-bits 32|64] [--out-dir DIR]
 *   LIST: comma list of groups: sizes,hits,queries,keys,batch,ranges (default all).
 *   SIZES: comma list of the batch group's sizes as powers of two, 10 .. 30 (default
 *   10,14,16,18,20,22,23,24,26,30; 30 runs for 64-bit keys only). F, L: every tree's fanout and
 *   leaf size (harmonia_build_config; default the library's); one the build refuses (not 8, 16, 32,
 *   64 or 128) fails the run's trees with the build's message. --key-bits: only the trees of that
 *   key width (default both; a profiler's run of one width's kernels). */
#include <inttypes.h>
#include <omp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <algorithm>
#include <functional>
#include <string>
#include <vector>

#include "bench/suite.h"

namespace {

struct options {
    uint32_t runs = 5, queries_log2 = 27;
    std::string out_dir = "bench/out";
    std::vector<std::string> only;
    std::vector<uint32_t> batches = {10u, 14u, 16u, 18u, 20u, 22u, 23u, 24u, 26u, 30u}; /* log2 */
    uint32_t key_bits = 0; /* 0: both widths */
};

/* The shape of every tree make_tree builds (--fanout, --leaf-size); 0 = the library's default. */
uint32_t tree_fanout = 0, tree_leaf_size = 0;

/* A comma list of numbers (false for anything else, or one outside [lo, hi]). */
bool parse_list(const char *text, uint32_t lo, uint32_t hi, std::vector<uint32_t> *out)
{
    out->clear();
    for (const char *p = text;;) {
        char *end = NULL;
        const unsigned long x = strtoul(p, &end, 10);
        if (end == p || x < lo || x > hi || (*end != ',' && *end != '\0'))
            return false;
        out->push_back((uint32_t)x);
        if (*end == '\0')
            return true;
        p = end + 1;
    }
}

/* One number in [lo, hi] (false for anything else). */
bool parse_one(const char *text, uint32_t lo, uint32_t hi, uint32_t *out)
{
    std::vector<uint32_t> list;
    if (!parse_list(text, lo, hi, &list) || list.size() != 1)
        return false;
    *out = list[0];
    return true;
}

bool wanted(const options &o, const char *group)
{
    if (o.only.empty())
        return true;
    for (const std::string &g : o.only)
        if (g == group)
            return true;
    return false;
}

std::string strf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
std::string strf(const char *fmt, ...)
{
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    return buf;
}

/* One measured configuration. */
struct result {
    std::string method, config, order; /* order: "query" or "sorted" */
    double ms, gqps;
    bool ok;
    bool ordered_index; /* counts as an ordered baseline (the hash table does not) */
};

struct tree_ctx {
    uint32_t bits, keys_log2;
    key_dist dist;
    uint64_t n;
    size_t kb;
    void *d_keys = NULL, *d_values = NULL, *h_keys = NULL, *h_values = NULL;
    sorted_array arr;
    harmonia_tree *tree = NULL;
    eyt_tree eyt;
    bool have_eyt = false;
    hash_table hash;
    bool have_hash = false;
    std::string name;
};

struct run_state {
    options o;
    csv_table rows, summary;
    int failures = 0;
    std::vector<std::string> failed;
};

bool make_tree(tree_ctx &T, uint32_t bits, uint32_t keys_log2, key_dist dist)
{
    T.bits = bits;
    T.keys_log2 = keys_log2;
    T.dist = dist;
    T.n = 1ull << keys_log2;
    T.kb = bits / 8;
    T.name = strf("u%u-2^%u-%s", bits, keys_log2, key_dist_name(dist));
    const uint64_t seed = 0x5eed0000ull + keys_log2 * 131 + bits + (uint64_t)dist * 7919;
    T.d_keys = suite_try_device_alloc(T.n * T.kb, "sorted keys");
    T.d_values = suite_try_device_alloc(T.n * T.kb, "sorted values");
    T.h_keys = malloc(T.n * T.kb);
    T.h_values = malloc(T.n * T.kb);
    if (!T.d_keys || !T.d_values || !T.h_keys || !T.h_values)
        return false;
    if (!gen_sorted_device(bits, dist, T.n, seed, T.d_keys, T.d_values))
        return false;
    CK(cudaMemcpy(T.h_keys, T.d_keys, T.n * T.kb, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(T.h_values, T.d_values, T.n * T.kb, cudaMemcpyDeviceToHost));
    harmonia_build_config bc;
    harmonia_build_config_init(&bc); /* the library's defaults: F, L, fill (unless --fanout, --leaf-size) */
    bc.key_bits = bits;
    bc.fanout = tree_fanout;
    bc.leaf_size = tree_leaf_size;
    bc.input_sorted = true;
    const double t0 = suite_now();
    if (harmonia_build(&bc, T.h_keys, T.h_values, T.n, &T.tree) != HARMONIA_OK) {
        fprintf(stderr, "bench_versus: build: %s\n", harmonia_last_error(NULL));
        return false;
    }
    if (harmonia_device_upload(T.tree) != HARMONIA_OK) {
        fprintf(stderr, "bench_versus: upload: %s\n", harmonia_last_error(T.tree));
        return false;
    }
    uint64_t first = 0, last = 0;
    memcpy(&first, T.h_keys, T.kb);
    memcpy(&last, (char *)T.h_keys + (T.n - 1) * T.kb, T.kb);
    T.arr.bits = bits;
    T.arr.n = T.n;
    T.arr.keys = T.d_keys;
    T.arr.values = T.d_values;
    T.arr.span_bits = sx_bit_width(first ^ last);
    T.have_eyt = eyt_build_device(&T.eyt, T.arr);
    T.have_hash = hash_build_device(&T.hash, T.arr);
    harmonia_tree_info info;
    harmonia_info(T.tree, &info);
    printf("\n# tree %s: F=%u L=%u height %u, %.2f GB; built and uploaded in %.1f s\n", T.name.c_str(), info.fanout,
           info.leaf_size, info.height, info.total_bytes / 1e9, suite_now() - t0);
    fflush(stdout);
    return true;
}

void free_tree(tree_ctx &T)
{
    if (T.have_eyt)
        eyt_free(&T.eyt);
    if (T.have_hash)
        hash_free(&T.hash);
    T.have_eyt = T.have_hash = false;
    harmonia_free(T.tree);
    T.tree = NULL;
    suite_device_free(T.d_keys);
    suite_device_free(T.d_values);
    free(T.h_keys);
    free(T.h_values);
    T.d_keys = T.d_values = T.h_keys = T.h_values = NULL;
}

/* A method verified and waiting for its timing in rounds (time_rounds). */
struct pending_method {
    std::string method, config;
    const char *order;
    bool ordered_index, synchronous;
    check_result check;
    std::function<void()> launch;
    const uint64_t *pos64; /* the positions its check reads (sorted-order methods), or NULL */
    const uint32_t *pos32;
};

/* A workload: a query set over a tree. */
struct batch_ctx {
    std::string name;
    query_spec qs;
    uint64_t nq;
    void *d_q = NULL, *d_out = NULL;
    uint8_t *d_found = NULL;
    uint64_t *d_pos = NULL;
    verifier vf;
    std::vector<result> results;
    std::vector<pending_method> pending;
};

void poison(const tree_ctx &T, batch_ctx &B)
{
    CK(cudaMemset(B.d_out, 0xA5, B.nq * T.kb));
    CK(cudaMemset(B.d_found, 0xA5, B.nq));
    if (B.d_pos)
        CK(cudaMemset(B.d_pos, 0xFF, B.nq * 8));
}

/* A free-text CSV field: commas become semicolons. */
std::string field(const std::string &text)
{
    std::string out = text;
    std::replace(out.begin(), out.end(), ',', ';');
    return out;
}

void add_result(run_state &R, const tree_ctx &T, batch_ctx &B, const char *method, const std::string &config,
                const char *order, const timing &t, const check_result &c, bool ordered_index)
{
    const double gqps = B.nq / t.median_ms / 1e6;
    B.results.push_back({method, config, order, t.median_ms, gqps, c.ok, ordered_index});
    csv_row(&R.rows, "%s,%s,%u,%u,%s,%s,%.2f,%" PRIu64 ",%s,%s,%s,%.5f,%.5f,%.5f,%.4f,%s,%" PRIu64 ",%.4f",
            B.name.c_str(), T.name.c_str(), T.bits, T.keys_log2, key_dist_name(T.dist), query_dist_name(B.qs.dist),
            B.qs.hit_rate, B.nq, method, field(config).c_str(), order, t.median_ms, t.min_ms, t.max_ms, gqps,
            c.ok ? "yes" : "NO", c.sample, c.hit_rate);
    printf("  %-16s %-34s %-6s %10.5f ms %8.3f G/s  %s\n", method, config.c_str(), order, t.median_ms, gqps,
           c.ok ? "verified" : "MISMATCH");
    fflush(stdout);
    if (!c.ok) {
        R.failures++;
        R.failed.push_back(B.name + " " + method + " " + config);
    }
}

/* Small batches: more runs (a call of 2^10 queries takes ~15 us, and its run-to-run spread is
 * ~10 %, bench/NOTES.md). */
#define SMALL_BATCH_RUNS 51u
#define SMALL_BATCH_RUNS_MAX (1ull << 20)
static uint32_t runs_for(const run_state &R, uint64_t nq)
{
    return nq <= SMALL_BATCH_RUNS_MAX && R.o.runs < SMALL_BATCH_RUNS ? SMALL_BATCH_RUNS : R.o.runs;
}

/* Every method of a batch is verified when measure() is called, timed later in rounds
 * (time_rounds) and verified again after its timed runs, so that the drift of the GPU's clocks and
 * the host's state over a block of runs falls on every method alike. */
template <typename F>
void measure(const tree_ctx &T, batch_ctx &B, const char *method, const std::string &config,
             const char *order, F &&launch, const uint64_t *pos64, const uint32_t *pos32, bool ordered_index = true)
{
    poison(T, B);
    /* every method timed as a whole call: its launches and one synchronisation, as a caller who needs
     * the results sees it (Harmonia's calls are synchronous: they synchronise themselves) */
    const bool synchronous = strncmp(method, "harmonia", 8) == 0;
    launch();
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    check_result c = verify_lookup_device(&B.vf, B.d_q, B.d_out, B.d_found, pos64, pos32);
    B.pending.push_back(
        {method, config, order, ordered_index, synchronous, c, std::function<void()>(launch), pos64, pos32});
}

/* The pending methods of a batch, timed in rounds (time_gpu_rounds, suite.h: each timed call after an
 * untimed call of the same method — without it the default call, which came after the hash
 * table's, measured 2.2-2.7 us above the same kernel's explicit call at 2^14 queries, and 4 us at
 * 2^18; bench/NOTES.md, "Session 17" and "Session 18"), then verified again and reported. */
void time_rounds(run_state &R, const tree_ctx &T, batch_ctx &B)
{
    const size_t m = B.pending.size();
    if (m == 0)
        return;
    std::vector<gpu_call> calls;
    for (const pending_method &p : B.pending)
        calls.push_back({p.launch, p.synchronous});
    const std::vector<timing> t = time_gpu_rounds(runs_for(R, B.nq), calls);
    for (size_t k = 0; k < m; k++) {
        pending_method &p = B.pending[k];
        /* verified again after its timed runs (a fault of repeated calls would show here) */
        poison(T, B);
        calls[k].run();
        CK(cudaGetLastError());
        CK(cudaDeviceSynchronize());
        const check_result again = verify_lookup_device(&B.vf, B.d_q, B.d_out, B.d_found, p.pos64, p.pos32);
        if (!again.ok)
            p.check = again;
        add_result(R, T, B, p.method.c_str(), p.config, p.order, t[k], p.check, p.ordered_index);
    }
    B.pending.clear();
}

/* The top-B-bit sort sweep: B from 8 to the span in steps of 4 (plus the full key), every restore. */
std::vector<uint32_t> sort_bits(const tree_ctx &T, uint64_t nq)
{
    std::vector<uint32_t> list;
    const uint32_t span = T.arr.span_bits;
    for (uint32_t b = 8; b <= span && b <= 28; b += 4)
        list.push_back(b);
    if (nq <= (1ull << 27) && (list.empty() || list.back() != span))
        list.push_back(span); /* all bits of the span: a full sort */
    return list;
}

/* Whether the device is large enough for a batch of more than 2^28 queries with every measurement
 * (sorted results too: the caller's positions, 8 bytes a query, beside the batch's arrays, the tree,
 * the baselines' structures and the sort pipelines' buffers): 96 bytes a query of device memory in
 * all — a 141 GB H200 runs 2^30 queries, an 80 GB H100 does not (it runs the 64-bit 2^30 batch in
 * query order only, as before). Batches up to 2^28 queries always run whole. */
static bool batch_fits(uint64_t nq)
{
    if (nq <= (1ull << 28))
        return true;
    size_t free_bytes = 0, total_bytes = 0;
    return cudaMemGetInfo(&free_bytes, &total_bytes) == cudaSuccess && total_bytes / 96 >= nq;
}

void run_batch(run_state &R, tree_ctx &T, const std::string &name, query_dist dist, double hits, uint64_t nq,
               bool full_sweep)
{
    batch_ctx B;
    B.name = name;
    B.nq = nq;
    B.qs.dist = dist;
    B.qs.hit_rate = hits;
    B.qs.zipf_s = 0.99;
    B.qs.seed = 0x9e3779b9ull + T.keys_log2 + (uint64_t)dist * 17 + (uint64_t)(hits * 1000) + nq;
    B.d_q = suite_try_device_alloc(nq * T.kb, "queries");
    B.d_out = suite_try_device_alloc(nq * T.kb, "values out");
    B.d_found = (uint8_t *)suite_try_device_alloc(nq, "found flags");
    if (batch_fits(nq))
        B.d_pos = (uint64_t *)suite_try_device_alloc(nq * 8, "positions");
    if (!B.d_q || !B.d_out || !B.d_found) {
        R.failures++;
        R.failed.push_back(name + ": no GPU memory for the batch");
        suite_device_free(B.d_q);
        suite_device_free(B.d_out);
        suite_device_free(B.d_found);
        suite_device_free(B.d_pos);
        return;
    }
    gen_queries_device(T.bits, T.d_keys, T.n, B.qs, 0, nq, B.d_q);
    verifier_init(&B.vf, T.tree, T.bits, nq, 1u << 20, true);
    printf("\n## %s: %s, 2^%u queries (%s, %.0f %% hits)\n", name.c_str(), T.name.c_str(), sx_bit_width(nq) - 1,
           query_dist_name(dist), hits * 100);

    /* Harmonia: the library's defaults, query order and sorted order */
    harmonia_status st = HARMONIA_OK;
    std::string message;
    auto note_error = [&](harmonia_status s2) {
        if (s2 != HARMONIA_OK && st == HARMONIA_OK) {
            st = s2;
            message = harmonia_last_error(T.tree);
        }
    };
    measure(T, B, "harmonia", "defaults (NULL config)", "query",
            [&] { note_error(harmonia_lookup(T.tree, NULL, B.d_q, nq, B.d_out, B.d_found)); }, NULL, NULL);
    /* sorted results: the engine's order with 32-bit positions (harmonia_lookup_unordered32), as the
     * sort pipelines' own; the 64-bit positions of harmonia_lookup_unordered beside it, informational */
    uint32_t *pos32 = (uint32_t *)B.d_pos;
    if (B.d_pos && nq <= HARMONIA_POSITIONS32_MAX_COUNT)
        measure(T, B, "harmonia", "defaults (NULL config), 32-bit positions", "sorted",
                [&] { note_error(harmonia_lookup_unordered32(T.tree, NULL, B.d_q, nq, B.d_out, B.d_found, pos32)); },
                NULL, pos32);
    if (B.d_pos)
        measure(T, B, "harmonia_pos64", "defaults (NULL config), 64-bit positions (informational)", "sorted",
                [&] { note_error(harmonia_lookup_unordered(T.tree, NULL, B.d_q, nq, B.d_out, B.d_found, B.d_pos)); },
                B.d_pos, NULL, false);
    harmonia_query_config qc; /* (the lambdas of a batch timed in rounds outlive their blocks) */
    harmonia_query_config_init(&qc);
    qc.backend = HARMONIA_BACKEND_GPU;
    qc.memory = HARMONIA_MEMORY_DEVICE;
    if (nq <= (1u << 18)) { /* small batches: what the call's own bookkeeping costs (no pointer checks) */
        measure(T, B, "harmonia_explicit", "backend GPU, memory device (informational)", "query",
                [&] { note_error(harmonia_lookup(T.tree, &qc, B.d_q, nq, B.d_out, B.d_found)); }, NULL, NULL, false);
    }
    /* batches of up to 2^18 queries: the explicit call at each G the tree's fanout allows, beside
     * the default's choice (ntg_policy.h), in the same rounds; informational */
    harmonia_query_config qg[6];
    harmonia_tree_info info;
    if (nq <= (1u << 18) && harmonia_info(T.tree, &info) == HARMONIA_OK)
        for (uint32_t i = 0, g = 1; i < 6 && g <= info.fanout && g <= 32; i++, g *= 2) {
            qg[i] = qc;
            qg[i].group_size = g;
            const harmonia_query_config *c = &qg[i];
            measure(T, B, "harmonia_g", strf("G = %u, memory device (informational)", g), "query",
                    [&, c] { note_error(harmonia_lookup(T.tree, c, B.d_q, nq, B.d_out, B.d_found)); }, NULL, NULL,
                    false);
        }

    /* the baselines */
    measure(T, B, "binary_search", "one thread per query", "query",
            [&] { bsearch_lookup_device(T.arr, B.d_q, nq, NULL, B.d_out, B.d_found); }, NULL, NULL);
    bsearch_pipeline pipe;
    const bool have_pipe = bsearch_pipeline_init(&pipe, T.bits, nq);
    void *d_packed = NULL; /* the pipelines' buffers live until time_rounds has run */
    if (have_pipe) {
        d_packed = suite_try_device_alloc(bs_packed_bytes(T.bits, nq), "packed results");
        const uint32_t span = T.arr.span_bits;
        std::vector<uint32_t> bits_list = full_sweep ? sort_bits(T, nq) : std::vector<uint32_t>{16};
        for (uint32_t b : bits_list) {
            const uint32_t end = span, begin = end > b ? end - b : 0;
            const std::string cfg = strf("sort top %u bits [%u,%u)", end - begin, begin, end);
            measure(T, B, "sort+bsearch", cfg + " + fused scatter", "query", [&, begin, end] {
                bsearch_pipeline_run_as(&pipe, T.arr, B.d_q, nq, begin, end, BS_FUSED_SCATTER, NULL, B.d_out,
                                        B.d_found);
            }, NULL, NULL);
            if (d_packed)
                measure(T, B, "sort+bsearch", cfg + " + packed scatter", "query", [&, begin, end] {
                    bsearch_pipeline_run_as(&pipe, T.arr, B.d_q, nq, begin, end, BS_PACKED_SCATTER, d_packed,
                                            B.d_out, B.d_found);
                }, NULL, NULL);
            if (d_packed)
                measure(T, B, "sort+bsearch", cfg + " + value scatter, found bitmap", "query", [&, begin, end] {
                    bsearch_pipeline_run_as(&pipe, T.arr, B.d_q, nq, begin, end, BS_BITMAP_SCATTER, d_packed,
                                            B.d_out, B.d_found);
                }, NULL, NULL);
            measure(T, B, "sort+bsearch", cfg + ", sorted results", "sorted", [&, begin, end] {
                bsearch_pipeline_run_as(&pipe, T.arr, B.d_q, nq, begin, end, BS_SORTED, NULL, B.d_out, B.d_found);
            }, NULL, pipe.sorted_positions);
        }
        /* the search alone on fully sorted queries: not a pipeline (the sort is not timed) */
        bsearch_pipeline_sort(&pipe, B.d_q, nq, 0, T.bits);
        CK(cudaDeviceSynchronize());
        poison(T, B);
        timing t = time_gpu(runs_for(R, nq), [&] { bsearch_lookup_device(T.arr, pipe.sorted_queries, nq, NULL, B.d_out, B.d_found); });
        check_result c = verify_lookup_device(&B.vf, B.d_q, B.d_out, B.d_found, NULL, pipe.sorted_positions);
        add_result(R, T, B, "bsearch_sorted", "search only, queries pre-sorted (sort not timed)", "sorted", t, c,
                   false);
    } else {
        printf("  (no GPU memory for the sort pipelines)\n");
    }
    if (T.have_eyt)
        measure(T, B, "eytzinger_k9", "K=9, 8 threads per query", "query",
                [&] { eyt_lookup_device(T.eyt, B.d_q, nq, B.d_out, B.d_found); }, NULL, NULL);
    if (T.have_hash)
        measure(T, B, "hash_table", "open addressing, 50% load (not ordered)", "query",
                [&] { hash_lookup_device(T.hash, B.d_q, nq, B.d_out, B.d_found); }, NULL, NULL, false);
    time_rounds(R, T, B);
    if (st != HARMONIA_OK) {
        R.failures++;
        R.failed.push_back(name + " harmonia: " + message);
        printf("  harmonia: ERROR %s\n", message.c_str());
    }
    if (have_pipe) {
        suite_device_free(d_packed);
        bsearch_pipeline_free(&pipe);
    }

    /* the summary: Harmonia against the strongest ordered baseline of each order (a baseline in
     * query order also serves a caller who takes sorted results) */
    for (const char *order : {"query", "sorted"}) {
        const result *h = NULL, *best = NULL;
        for (const result &r : B.results) {
            if (r.method == "harmonia" && r.order == order)
                h = &r;
            else if (r.method != "harmonia" && r.ordered_index && r.ok &&
                     (r.order == std::string(order) || r.order == std::string("query")) &&
                     (!best || r.gqps > best->gqps))
                best = &r;
        }
        if (!h || !best)
            continue;
        const result *hash = NULL;
        for (const result &r : B.results)
            if (r.method == "hash_table")
                hash = &r;
        const double ratio = h->gqps / best->gqps;
        printf("  => %s order: harmonia %.3f G/s, strongest ordered baseline %.3f G/s (%s, %s): %.2fx%s\n", order,
               h->gqps, best->gqps, best->method.c_str(), best->config.c_str(), ratio,
               hash ? strf("; hash table %.2f G/s", hash->gqps).c_str() : "");
        csv_row(&R.summary, "%s,%s,%u,%u,%s,%s,%.2f,%" PRIu64 ",%s,%.4f,%.4f,%s,%s,%.4f,%.4f,%s", B.name.c_str(),
                T.name.c_str(), T.bits, T.keys_log2, key_dist_name(T.dist), query_dist_name(B.qs.dist),
                B.qs.hit_rate, nq, order, h->ms, h->gqps, best->method.c_str(), field(best->config).c_str(), best->gqps, ratio,
                h->ok ? "yes" : "NO");
    }
    verifier_free(&B.vf);
    suite_device_free(B.d_q);
    suite_device_free(B.d_out);
    suite_device_free(B.d_found);
    suite_device_free(B.d_pos);
}

/* Range count and collect at lengths 8 .. 16384 against the sorted array. */
void run_ranges(run_state &R, tree_ctx &T, uint64_t nr)
{
    void *d_lo = suite_device_alloc(nr * T.kb), *d_hi = suite_device_alloc(nr * T.kb);
    uint64_t *d_counts = (uint64_t *)suite_device_alloc((nr + 1) * 8);
    verifier vf;
    verifier_init(&vf, T.tree, T.bits, nr, 1u << 20, true);
    printf("\n## ranges: %s, 2^%u ranges\n", T.name.c_str(), sx_bit_width(nr) - 1);
    for (uint64_t length : {8ull, 64ull, 1024ull, 16384ull}) {
        gen_ranges_device(T.bits, T.d_keys, T.n, length, 0xa11ce + length, nr, d_lo, d_hi);
        /* the sorted array and Harmonia timed in rounds (time_gpu_rounds), each verified after */
        harmonia_status st = HARMONIA_OK;
        auto count_base = [&] { range_count_device(T.arr, d_lo, d_hi, nr, d_counts); };
        auto count_ours = [&] {
            harmonia_status s2 = harmonia_range_count(T.tree, NULL, d_lo, d_hi, nr, d_counts);
            if (s2 != HARMONIA_OK)
                st = s2;
        };
        std::vector<timing> t = time_gpu_rounds(R.o.runs, {{count_base, false}, {count_ours, true}});
        timing ts = t[0], th = t[1];
        CK(cudaMemset(d_counts, 0xFF, nr * 8));
        count_base();
        CK(cudaDeviceSynchronize());
        check_result cs = verify_range_count_device(&vf, d_lo, d_hi, d_counts);
        CK(cudaMemset(d_counts, 0xFF, nr * 8));
        count_ours();
        CK(cudaDeviceSynchronize());
        check_result ch = verify_range_count_device(&vf, d_lo, d_hi, d_counts);
        const bool ok_count = cs.ok && ch.ok && st == HARMONIA_OK;
        printf("  count   len %-6" PRIu64 " harmonia %8.3f ms %8.2f G/s | sorted array %8.3f ms %8.2f G/s | %.2fx %s\n",
               length, th.median_ms, nr / th.median_ms / 1e6, ts.median_ms, nr / ts.median_ms / 1e6,
               ts.median_ms / th.median_ms, ok_count ? "verified" : "MISMATCH");
        csv_row(&R.summary, "range count %" PRIu64 ",%s,%u,%u,%s,-,1.00,%" PRIu64 ",count,%.4f,%.4f,sorted_array,two binary searches,%.4f,%.4f,%s",
                length, T.name.c_str(), T.bits, T.keys_log2, key_dist_name(T.dist), nr, th.median_ms,
                nr / th.median_ms / 1e6, nr / ts.median_ms / 1e6, ts.median_ms / th.median_ms, ok_count ? "yes" : "NO");
        if (!ok_count) {
            R.failures++;
            R.failed.push_back(strf("range count length %" PRIu64, length));
        }
        /* collect: about 2^26 pairs (both phases timed: offsets, then the pairs) */
        const uint64_t nc = std::max<uint64_t>(1, std::min<uint64_t>(nr, (1ull << 26) / length)), pairs = nc * length;
        uint64_t *d_offsets = (uint64_t *)suite_device_alloc((nc + 1) * 8);
        void *d_keys_out = suite_device_alloc(pairs * T.kb), *d_values_out = suite_device_alloc(pairs * T.kb);
        const size_t temp_bytes = range_scan_temp_bytes(nc);
        void *d_temp = suite_device_alloc(temp_bytes);
        verifier cv;
        verifier_init(&cv, T.tree, T.bits, nc, 1u << 20, true);
        st = HARMONIA_OK;
        auto collect_base = [&] {
            range_offsets_device(T.arr, d_lo, d_hi, nc, d_counts, d_temp, temp_bytes, d_offsets);
            range_collect_device(T.arr, d_lo, nc, d_offsets, length, d_keys_out, d_values_out);
        };
        auto collect_ours = [&] {
            harmonia_status s2 = harmonia_range_collect(T.tree, NULL, d_lo, d_hi, nc, d_offsets, NULL, NULL);
            if (s2 == HARMONIA_OK)
                s2 = harmonia_range_collect(T.tree, NULL, d_lo, d_hi, nc, d_offsets, d_keys_out, d_values_out);
            if (s2 != HARMONIA_OK)
                st = s2;
        };
        t = time_gpu_rounds(R.o.runs, {{collect_base, false}, {collect_ours, true}});
        ts = t[0];
        th = t[1];
        auto poison_collect = [&] { /* each method's check sees only what that method wrote */
            CK(cudaMemset(d_offsets, 0xFF, (nc + 1) * 8));
            CK(cudaMemset(d_keys_out, 0xA5, pairs * T.kb));
            CK(cudaMemset(d_values_out, 0xA5, pairs * T.kb));
        };
        poison_collect();
        collect_base();
        CK(cudaDeviceSynchronize());
        cs = verify_range_collect_device(&cv, d_lo, d_hi, d_offsets, d_keys_out, d_values_out, pairs);
        poison_collect();
        collect_ours();
        CK(cudaDeviceSynchronize());
        ch = verify_range_collect_device(&cv, d_lo, d_hi, d_offsets, d_keys_out, d_values_out, pairs);
        const bool ok_collect = cs.ok && ch.ok && st == HARMONIA_OK;
        printf("  collect len %-6" PRIu64 " harmonia %8.3f ms %8.2f G pairs/s | sorted array %8.3f ms %8.2f G pairs/s | "
               "%.2fx %s\n",
               length, th.median_ms, pairs / th.median_ms / 1e6, ts.median_ms, pairs / ts.median_ms / 1e6,
               ts.median_ms / th.median_ms, ok_collect ? "verified" : "MISMATCH");
        csv_row(&R.summary, "range collect %" PRIu64 ",%s,%u,%u,%s,-,1.00,%" PRIu64 ",collect,%.4f,%.4f,sorted_array,counts + scan + copy,%.4f,%.4f,%s",
                length, T.name.c_str(), T.bits, T.keys_log2, key_dist_name(T.dist), nc, th.median_ms,
                pairs / th.median_ms / 1e6, pairs / ts.median_ms / 1e6, ts.median_ms / th.median_ms,
                ok_collect ? "yes" : "NO");
        if (!ok_collect) {
            R.failures++;
            R.failed.push_back(strf("range collect length %" PRIu64 "%s", length,
                                    st != HARMONIA_OK ? (std::string(": ") + harmonia_last_error(T.tree)).c_str() : ""));
        }
        verifier_free(&cv);
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

} /* namespace */

int main(int argc, char **argv)
{
    run_state R;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : "";
        if (!strcmp(a, "--runs")) R.o.runs = (uint32_t)atoi(v), i++;
        else if (!strcmp(a, "--queries-log2")) R.o.queries_log2 = (uint32_t)atoi(v), i++;
        else if (!strcmp(a, "--out-dir")) R.o.out_dir = v, i++;
        else if (!strcmp(a, "--batches") && parse_list(v, 10, 30, &R.o.batches)) i++;
        else if (!strcmp(a, "--fanout") && parse_one(v, 2, 1024, &tree_fanout)) i++;
        else if (!strcmp(a, "--leaf-size") && parse_one(v, 2, 1024, &tree_leaf_size)) i++;
        else if (!strcmp(a, "--key-bits") && (!strcmp(v, "32") || !strcmp(v, "64")))
            R.o.key_bits = (uint32_t)atoi(v), i++;
        else if (!strcmp(a, "--only")) {
            for (const char *p = v; *p;) {
                const char *c = strchr(p, ',');
                R.o.only.push_back(c ? std::string(p, c - p) : std::string(p));
                p = c ? c + 1 : p + strlen(p);
            }
            i++;
        } else {
            printf("usage: bench_versus [--runs R] [--queries-log2 Q] [--only sizes,hits,queries,keys,batch,ranges] "
                   "[--batches 10,14,... (log2 sizes, 10 to 30)] [--fanout F] [--leaf-size L] [--key-bits 32|64] "
                   "[--out-dir DIR]\n");
            return 2;
        }
    }
    harmonia_device_info dev;
    if (harmonia_device_probe(&dev) != HARMONIA_OK) {
        printf("bench_versus: no GPU (%s)\n", harmonia_last_error(NULL));
        return 77;
    }
    mkdir(R.o.out_dir.c_str(), 0755); /* one level; an existing folder is fine */
    if (!csv_open(&R.rows, R.o.out_dir, "versus.csv",
                  "workload,tree,key_bits,keys_log2,key_dist,query_dist,hit_rate,queries,method,config,order,"
                  "median_ms,min_ms,max_ms,gqps,verified,sample,hits_measured") ||
        !csv_open(&R.summary, R.o.out_dir, "versus-summary.csv",
                  "workload,tree,key_bits,keys_log2,key_dist,query_dist,hit_rate,queries,order,harmonia_ms,"
                  "harmonia_gqps,baseline,baseline_config,baseline_gqps,ratio,verified"))
        return 1;
    printf("# bench_versus on %s; %u runs (median after a warm-up; batches of 2^20 queries or fewer: at least %u); "
           "every result checked against the CPU engine\n",
           dev.name, R.o.runs, SMALL_BATCH_RUNS);
    const uint64_t nq = 1ull << R.o.queries_log2;
    struct tree_spec {
        uint32_t bits, log2;
    };
    if (wanted(R.o, "sizes")) {
        for (const tree_spec &s : {tree_spec{64, 20}, tree_spec{64, 23}, tree_spec{64, 26}, tree_spec{64, 27},
                                   tree_spec{32, 20}, tree_spec{32, 23}, tree_spec{32, 26}, tree_spec{32, 28}}) {
            if (R.o.key_bits && s.bits != R.o.key_bits)
                continue;
            tree_ctx T;
            if (make_tree(T, s.bits, s.log2, KEYS_UNIFORM))
                run_batch(R, T, strf("size u%u 2^%u", s.bits, s.log2), QUERIES_UNIFORM, 1.0, nq,
                          (s.bits == 64 && s.log2 == 26) || (s.bits == 32 && s.log2 == 28));
            else
                R.failures++, R.failed.push_back(strf("tree u%u 2^%u", s.bits, s.log2));
            free_tree(T);
        }
    }
    const bool per_tree = wanted(R.o, "hits") || wanted(R.o, "queries") || wanted(R.o, "batch") || wanted(R.o, "ranges");
    for (const tree_spec &s : {tree_spec{64, 26}, tree_spec{32, 28}}) {
        if (!per_tree)
            break;
        if (R.o.key_bits && s.bits != R.o.key_bits)
            continue;
        tree_ctx T;
        if (!make_tree(T, s.bits, s.log2, KEYS_UNIFORM)) {
            R.failures++, R.failed.push_back(strf("tree u%u 2^%u", s.bits, s.log2));
            free_tree(T);
            continue;
        }
        const std::string tn = strf("u%u 2^%u", s.bits, s.log2);
        if (wanted(R.o, "hits"))
            for (double h : {0.5, 0.0})
                run_batch(R, T, strf("hits %.0f%% %s", h * 100, tn.c_str()), QUERIES_UNIFORM, h, nq, false);
        if (wanted(R.o, "queries"))
            for (query_dist d : {QUERIES_ZIPF, QUERIES_CLUSTERED, QUERIES_OUTSIDE})
                run_batch(R, T, strf("queries %s %s", query_dist_name(d), tn.c_str()), d, 1.0, nq, false);
        if (wanted(R.o, "batch"))
            for (uint32_t b : R.o.batches) {
                if (s.bits == 32 && b == 30 && !batch_fits(1ull << b))
                    continue;
                run_batch(R, T, strf("batch 2^%u %s", b, tn.c_str()), QUERIES_UNIFORM, 1.0, 1ull << b, false);
            }
        if (wanted(R.o, "ranges") && s.bits == 64)
            run_ranges(R, T, 1ull << 24);
        free_tree(T);
    }
    if (wanted(R.o, "keys")) {
        for (const tree_spec &s : {tree_spec{64, 26}, tree_spec{32, 28}}) {
            if (R.o.key_bits && s.bits != R.o.key_bits)
                continue;
            tree_ctx T;
            if (make_tree(T, s.bits, s.log2, KEYS_DENSE))
                run_batch(R, T, strf("keys dense u%u 2^%u", s.bits, s.log2), QUERIES_UNIFORM, 1.0, nq, false);
            else
                R.failures++, R.failed.push_back(strf("dense tree u%u 2^%u", s.bits, s.log2));
            free_tree(T);
        }
    }
    csv_close(&R.rows);
    csv_close(&R.summary);
    if (R.failures) {
        printf("\n# FAILED (%d):\n", R.failures);
        for (const std::string &f : R.failed)
            printf("#   %s\n", f.c_str());
        return 1;
    }
    printf("\n# done: every measured configuration verified\n");
    return 0;
}
