/* small_probe.cu — session 14 (session 18: the environment variable PROBE_SIZES, e.g. "18", limits
 * the batch sizes to those of its log2s it names): batches of 2^10 - 2^18 queries. Two questions, one process, the
 * suite's data, baselines and checks (bench/suite.h), the library through its public calls:
 *
 * 1. Does the order in which bench_versus times its methods favour or penalise one? bench_versus
 *    times a workload's methods one after another, each as a block (one warm-up, 51 runs, median),
 *    Harmonia's default call first, right after the CPU-side set-up of the workload. Here the same
 *    methods are timed three ways on the same data: blocks with Harmonia first (bench_versus's
 *    order), blocks with Harmonia last, and in rounds (after a warm-up of every method, each round
 *    runs every method once; median over the rounds). Each scheme twice, alternating.
 * 2. (`ncu` mode) The kernels alone: each method three times a batch size, for ncu --set full.
 * 3. (`launch` mode) Where a call's time goes, in rounds: an empty kernel with 16 bytes and with 2520 (the view before session 14)
 *    of parameters (the view's size), the Eytzinger kernel and the library's kernel launched bare
 *    (ntg_launch_lookup on the tree's view, G = the call's), the call with memory = DEVICE and the
 *    call with a NULL config; each launch + cudaStreamSynchronize(0).
 *
 * 4. (`stream` mode, session 19) Calls back to back on one stream: each timed sample is STREAM_CALLS
 *    calls of one method queued on the legacy stream (Harmonia: harmonia_lookup_async, NULL config
 *    and memory = DEVICE; the baselines: their launches) and one synchronisation at the end, events
 *    around the whole; µs a call = the sample / STREAM_CALLS. Beside them the same calls each
 *    synchronised (the synchronous rows of bench_versus). In rounds, median of 31.
 *
 * Methods: harmonia_lookup with a NULL config and with memory = DEVICE (synchronous calls); the
 * K-ary Eytzinger layout and the hash table of the suite, each launch + cudaStreamSynchronize(0),
 * as bench_versus times them. Every method's results checked against the CPU engine. */
#include <algorithm>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "bench/suite.h"
#include "harmonia/gpu_internal.h"

namespace {

bool g_ncu = false, g_launch = false, g_stream = false;

struct small_args {
    const void *p;
    uint64_t n;
};
struct big_args {
    const void *p;
    uint64_t n;
    char pad[2520 - 16]; /* the view's size before session 14 (the top cut inside it) */
};
__global__ void empty_small(small_args a)
{
    if (a.n == 12345 && threadIdx.x == 999)
        printf("%p\n", a.p);
}
__global__ void empty_big(const __grid_constant__ big_args a)
{
    if (a.n == 12345 && threadIdx.x == 999)
        printf("%p %d\n", a.p, a.pad[7]);
}

struct method {
    const char *name;
    std::function<void()> run;
};

double median(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

/* one timed run of m: events on the legacy stream around the call (bench_versus's time_gpu) */
double timed(const method &m, cudaEvent_t a, cudaEvent_t b)
{
    CK(cudaEventRecord(a, 0));
    m.run();
    CK(cudaGetLastError());
    CK(cudaEventRecord(b, 0));
    CK(cudaEventSynchronize(b));
    float ms = 0;
    CK(cudaEventElapsedTime(&ms, a, b));
    return ms * 1e3; /* µs */
}

/* blocks: each method one warm-up then `runs` runs, in the order given; returns µs per method */
std::vector<double> blocks(const std::vector<method> &ms, const std::vector<int> &order, int runs, cudaEvent_t a,
                           cudaEvent_t b, const std::function<void()> &pause)
{
    std::vector<double> out(ms.size());
    for (int i : order) {
        pause();
        ms[i].run();
        CK(cudaDeviceSynchronize());
        std::vector<double> t;
        for (int r = 0; r < runs; r++)
            t.push_back(timed(ms[i], a, b));
        out[i] = median(t);
    }
    return out;
}

std::vector<double> rounds(const std::vector<method> &ms, int runs, cudaEvent_t a, cudaEvent_t b,
                           const std::function<void()> &pause)
{
    pause();
    for (const method &m : ms)
        m.run();
    CK(cudaDeviceSynchronize());
    std::vector<std::vector<double>> t(ms.size());
    for (int r = 0; r < runs; r++)
        for (size_t i = 0; i < ms.size(); i++)
            t[i].push_back(timed(ms[i], a, b));
    std::vector<double> out;
    for (auto &v : t)
        out.push_back(median(v));
    return out;
}

int run_tree(uint32_t bits, uint32_t keys_log2)
{
    const uint64_t n = 1ull << keys_log2;
    const size_t kb = bits / 8;
    void *d_keys = suite_device_alloc(n * kb), *d_values = suite_device_alloc(n * kb);
    void *h_keys = malloc(n * kb), *h_values = malloc(n * kb);
    /* bench_versus's seed for this tree, so the data is the same */
    const uint64_t seed = 0x5eed0000ull + keys_log2 * 131 + bits + (uint64_t)KEYS_UNIFORM * 7919;
    if (!gen_sorted_device(bits, KEYS_UNIFORM, n, seed, d_keys, d_values))
        return 1;
    CK(cudaMemcpy(h_keys, d_keys, n * kb, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(h_values, d_values, n * kb, cudaMemcpyDeviceToHost));
    harmonia_build_config bc;
    harmonia_build_config_init(&bc);
    bc.key_bits = bits;
    bc.input_sorted = true;
    harmonia_tree *tree = NULL;
    if (harmonia_build(&bc, h_keys, h_values, n, &tree) != HARMONIA_OK || harmonia_device_upload(tree) != HARMONIA_OK) {
        printf("build: %s\n", harmonia_last_error(tree));
        return 1;
    }
    uint64_t first = 0, last = 0;
    memcpy(&first, h_keys, kb);
    memcpy(&last, (char *)h_keys + (n - 1) * kb, kb);
    sorted_array arr;
    arr.bits = bits;
    arr.n = n;
    arr.keys = d_keys;
    arr.values = d_values;
    arr.span_bits = sx_bit_width(first ^ last);
    eyt_tree eyt;
    hash_table hash;
    if (!eyt_build_device(&eyt, arr) || !hash_build_device(&hash, arr))
        return 1;
    harmonia_query_config qc;
    harmonia_query_config_init(&qc);
    qc.backend = HARMONIA_BACKEND_GPU;
    qc.memory = HARMONIA_MEMORY_DEVICE;
    cudaEvent_t ea, eb;
    CK(cudaEventCreate(&ea));
    CK(cudaEventCreate(&eb));
    int bad = 0;
    for (uint32_t b : {10u, 14u, 18u}) {
        if (g_launch && b == 18)
            continue;
        if (getenv("PROBE_SIZES") && !strstr(getenv("PROBE_SIZES"), std::to_string(b).c_str()))
            continue;
        const uint64_t nq = 1ull << b;
        query_spec qs;
        qs.dist = QUERIES_UNIFORM;
        qs.hit_rate = 1.0;
        qs.zipf_s = 0.99;
        qs.seed = 0x9e3779b9ull + keys_log2 + (uint64_t)QUERIES_UNIFORM * 17 + 1000 + nq; /* bench_versus's */
        void *d_q = suite_device_alloc(nq * kb), *d_out = suite_device_alloc(nq * kb);
        uint8_t *d_found = (uint8_t *)suite_device_alloc(nq);
        gen_queries_device(bits, d_keys, n, qs, 0, nq, d_q);
        verifier vf;
        verifier_init(&vf, tree, bits, nq, 1u << 20, true);
        harmonia_status st = HARMONIA_OK;
        std::vector<method> ms = {
            {"harmonia (NULL config)", [&] { st = st ? st : harmonia_lookup(tree, NULL, d_q, nq, d_out, d_found); }},
            {"harmonia (memory device)", [&] { st = st ? st : harmonia_lookup(tree, &qc, d_q, nq, d_out, d_found); }},
            {"eytzinger_k9", [&] { eyt_lookup_device(eyt, d_q, nq, d_out, d_found); CK(cudaStreamSynchronize(0)); }},
            {"hash_table", [&] { hash_lookup_device(hash, d_q, nq, d_out, d_found); CK(cudaStreamSynchronize(0)); }},
        };
        /* every method's results checked once */
        for (size_t i = 0; i < ms.size(); i++) {
            CK(cudaMemset(d_out, 0xA5, nq * kb));
            CK(cudaMemset(d_found, 0xA5, nq));
            ms[i].run();
            CK(cudaDeviceSynchronize());
            const check_result c = verify_lookup_device(&vf, d_q, d_out, d_found, NULL, NULL);
            if (!c.ok || st != HARMONIA_OK) {
                printf("  %s: MISMATCH (%s)\n", ms[i].name, st ? harmonia_last_error(tree) : "results");
                bad = 1;
            }
        }
        if (g_stream) {
            const int calls = 64;
            auto many = [&](std::function<void()> f, bool sync_each) {
                return [f, sync_each, calls] {
                    for (int k = 0; k < calls; k++) {
                        f();
                        if (sync_each)
                            CK(cudaStreamSynchronize(0));
                    }
                    CK(cudaStreamSynchronize(0));
                };
            };
            harmonia_status sa = HARMONIA_OK;
            std::vector<method> sm = {
                {"harmonia_lookup_async, NULL config",
                 many([&] { sa = sa ? sa : harmonia_lookup_async(tree, NULL, d_q, nq, d_out, d_found, NULL); }, false)},
                {"harmonia_lookup_async, memory device",
                 many([&] { sa = sa ? sa : harmonia_lookup_async(tree, &qc, d_q, nq, d_out, d_found, NULL); }, false)},
                {"eytzinger_k9, launches", many([&] { eyt_lookup_device(eyt, d_q, nq, d_out, d_found); }, false)},
                {"binary search, launches", many([&] { bsearch_lookup_device(arr, d_q, nq, NULL, d_out, d_found); }, false)},
                {"hash_table, launches", many([&] { hash_lookup_device(hash, d_q, nq, d_out, d_found); }, false)},
                {"harmonia_lookup (sync), NULL config",
                 many([&] { sa = sa ? sa : harmonia_lookup(tree, NULL, d_q, nq, d_out, d_found); }, false)},
                {"eytzinger_k9, each synchronised", many([&] { eyt_lookup_device(eyt, d_q, nq, d_out, d_found); }, true)},
            };
            for (size_t i = 0; i < sm.size(); i++) { /* every stream method's results checked once */
                CK(cudaMemset(d_out, 0xA5, nq * kb));
                CK(cudaMemset(d_found, 0xA5, nq));
                sm[i].run();
                CK(cudaDeviceSynchronize());
                const check_result c = verify_lookup_device(&vf, d_q, d_out, d_found, NULL, NULL);
                if (!c.ok || sa != HARMONIA_OK) {
                    printf("  %s: MISMATCH (%s)\n", sm[i].name, sa ? harmonia_last_error(tree) : "results");
                    bad = 1;
                }
            }
            auto pause = [&] {};
            printf("\n%u-bit 2^%u keys, 2^%u queries: µs a call, %d calls a sample, median of 31 rounds\n", bits,
                   keys_log2, b, calls);
            for (int rep = 0; rep < 2; rep++) {
                const std::vector<double> r = rounds(sm, 31, ea, eb, pause);
                for (size_t i = 0; i < sm.size(); i++)
                    printf("  %-40s %8.2f\n", sm[i].name, r[i] / calls);
                printf("  stream: NULL config / best baseline = %.3fx; synchronous: %.3fx\n",
                       std::min(r[2], std::min(r[3], r[4])) / r[0], r[6] / r[5]);
            }
        } else if (g_launch) {
            small_args sa = {d_q, nq};
            big_args ba;
            memset(&ba, 0, sizeof ba);
            ba.p = d_q;
            ba.n = nq;
            const unsigned grid = (unsigned)((nq * 8 + 255) / 256); /* G = 8: the small batches' grid */
            const ntg_view *view = &tree->gpu->view;
            std::vector<method> lm = {
                {"empty kernel, 16 B of parameters", [&] { empty_small<<<grid, 256>>>(sa); CK(cudaStreamSynchronize(0)); }},
                {"empty kernel, 2520 B of parameters", [&] { empty_big<<<grid, 256>>>(ba); CK(cudaStreamSynchronize(0)); }},
                {"eytzinger_k9 kernel", ms[2].run},
                {"the library's kernel, bare (G = 8)", [&] {
                     CK(ntg_launch_lookup(view, &tree->gpu->cut, 8, d_q, NULL, nq, d_out, d_found, NULL, 0, 0));
                     CK(cudaStreamSynchronize(0)); }},
                {"harmonia_lookup, memory device", ms[1].run},
                {"harmonia_lookup, NULL config", ms[0].run},
            };
            auto pause = [&] {};
            printf("\n%u-bit 2^%u keys, 2^%u queries: median µs of 201 rounds (events around each call; %zu-byte view)\n",
                   bits, keys_log2, b, sizeof(ntg_view));
            for (int rep = 0; rep < 3; rep++) {
                const std::vector<double> r = rounds(lm, 201, ea, eb, pause);
                for (size_t i = 0; i < lm.size(); i++)
                    printf("  %-40s %8.2f%s", lm[i].name, r[i], i + 1 < lm.size() ? "\n" : "\n  --\n");
            }
        } else if (g_ncu) {
            for (const method &m : ms)
                for (int r = 0; r < 3; r++)
                    m.run();
            CK(cudaDeviceSynchronize());
        } else {
            /* the pause a method sees before its block in bench_versus: the previous method's check
             * (a CPU-side comparison of the sample); here the same check, so each block starts after
             * the same CPU-side pause */
            auto pause = [&] { (void)verify_lookup_device(&vf, d_q, d_out, d_found, NULL, NULL); };
            const int runs = 51;
            std::vector<std::vector<double>> res; /* scheme x method */
            std::vector<std::string> names;
            for (int rep = 0; rep < 2; rep++) {
                res.push_back(blocks(ms, {0, 1, 2, 3}, runs, ea, eb, pause));
                names.push_back("blocks, Harmonia first");
                res.push_back(blocks(ms, {2, 3, 1, 0}, runs, ea, eb, pause));
                names.push_back("blocks, Harmonia last");
                res.push_back(rounds(ms, runs, ea, eb, pause));
                names.push_back("rounds");
            }
            printf("\n%u-bit 2^%u keys, 2^%u queries: median µs of %d runs (events around each call)\n", bits, keys_log2,
                   b, runs);
            printf("  %-24s", "scheme");
            for (const method &m : ms)
                printf(" | %24s", m.name);
            printf(" | default / eytzinger\n");
            for (size_t s = 0; s < res.size(); s++) {
                printf("  %-24s", names[s].c_str());
                for (double x : res[s])
                    printf(" | %24.2f", x);
                printf(" | %.3fx\n", res[s][2] / res[s][0]);
            }
        }
        verifier_free(&vf);
        suite_device_free(d_q);
        suite_device_free(d_out);
        suite_device_free(d_found);
    }
    eyt_free(&eyt);
    hash_free(&hash);
    harmonia_free(tree);
    suite_device_free(d_keys);
    suite_device_free(d_values);
    free(h_keys);
    free(h_values);
    return bad;
}

} /* namespace */

int main(int argc, char **argv)
{
    g_ncu = argc > 1 && !strcmp(argv[1], "ncu");
    g_launch = argc > 1 && !strcmp(argv[1], "launch");
    g_stream = argc > 1 && !strcmp(argv[1], "stream");
    int rc = run_tree(64, 26);
    rc |= run_tree(32, 28);
    printf(rc ? "FAILED\n" : "OK\n");
    return rc;
}
