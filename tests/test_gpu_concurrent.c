/* test_gpu_concurrent.c — queries during updates on the GPU engine (issue 15, item 2; the harness
 * is concurrent_harness.h): query threads on the GPU (synchronous host-array calls; device-array
 * calls, synchronous on the thread's stream and *_async with the results copied back on it) and
 * one on the CPU engine, against a tree with a device copy, while the main thread applies 14
 * batches; every call's results must be one version's. Then the caller's allocator with room for
 * one device copy but not two (the documented fallback: the sync replaces the copy in place,
 * stats.blocking_sync = 1, answers still one version's), and with room for none (the batch is
 * applied, the update says the device copy could not be synchronised and releases it; the next GPU
 * call fails with DEVICE_MEMORY; nothing crashes). Also seven device-array readers at once, whose
 * synchronous calls hold slots of the calls in flight while the writes on the tree's stream order
 * themselves after them. Skipped (77) without a GPU. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <cuda_runtime.h>

#include "tests/concurrent_harness.h"

#define CUDA_OK(call)                                                                             \
    do {                                                                                          \
        cudaError_t e_ = (call);                                                                  \
        if (e_ != cudaSuccess)                                                                    \
            fail_msg("%s: %s", #call, cudaGetErrorString(e_));                                   \
    } while (0)

/* A GPU query thread's own stream and device arrays. */
typedef struct gpu_reader {
    int mode;            /* 0 host arrays (sync), 1 device arrays (sync and async in turn), 2 CPU */
    cudaStream_t stream;
    uint64_t *d_queries, *d_lo, *d_hi, *d_a, *d_b;
    uint8_t *d_found;
    void *workspace;     /* mode 1, when given (reader_give_workspace): its calls allocate nothing */
    size_t workspace_bytes;
} gpu_reader;

/* A device-array reader's own workspace, as large as its calls need (every kind, PSA off and on),
 * outside any allocator of the tree: a call given one allocates nothing (include/harmonia.h). */
static void reader_give_workspace(gpu_reader *r, harmonia_tree *tree)
{
    if (r->mode != 1)
        return;
    const harmonia_query_kind kinds[3] = {HARMONIA_QUERY_LOOKUP, HARMONIA_QUERY_LOWER_BOUND,
                                          HARMONIA_QUERY_RANGE_COUNT};
    size_t most = 0;
    for (int k = 0; k < 3; k++)
        for (int psa = -1; psa <= 1; psa++) {
            harmonia_query_config c;
            harmonia_query_config_init(&c);
            c.backend = HARMONIA_BACKEND_GPU;
            c.memory = HARMONIA_MEMORY_DEVICE;
            c.psa = psa;
            size_t bytes = 0;
            assert_int_equal(harmonia_query_workspace_bytes(tree, &c, kinds[k], HC_QUERIES, &bytes, NULL),
                             HARMONIA_OK);
            most = bytes > most ? bytes : most;
        }
    r->workspace_bytes = most;
    CUDA_OK(cudaMalloc(&r->workspace, most ? most : 1));
}

static void reader_make(gpu_reader *r, int mode, const hc_world *w)
{
    memset(r, 0, sizeof *r);
    r->mode = mode;
    if (mode != 1)
        return;
    const size_t bytes = HC_QUERIES * sizeof(uint64_t);
    CUDA_OK(cudaStreamCreateWithFlags(&r->stream, cudaStreamNonBlocking));
    CUDA_OK(cudaMalloc((void **)&r->d_queries, bytes));
    CUDA_OK(cudaMalloc((void **)&r->d_lo, bytes));
    CUDA_OK(cudaMalloc((void **)&r->d_hi, bytes));
    CUDA_OK(cudaMalloc((void **)&r->d_a, bytes));
    CUDA_OK(cudaMalloc((void **)&r->d_b, bytes));
    CUDA_OK(cudaMalloc((void **)&r->d_found, HC_QUERIES));
    CUDA_OK(cudaMemcpy(r->d_queries, w->queries, bytes, cudaMemcpyHostToDevice));
    CUDA_OK(cudaMemcpy(r->d_lo, w->lo, bytes, cudaMemcpyHostToDevice));
    CUDA_OK(cudaMemcpy(r->d_hi, w->hi, bytes, cudaMemcpyHostToDevice));
}

static void reader_free(gpu_reader *r)
{
    if (r->mode != 1)
        return;
    cudaFree(r->d_queries);
    cudaFree(r->d_lo);
    cudaFree(r->d_hi);
    cudaFree(r->d_a);
    cudaFree(r->d_b);
    cudaFree(r->d_found);
    cudaFree(r->workspace);
    cudaStreamDestroy(r->stream);
}

static harmonia_status run_gpu(void *context, harmonia_tree *tree, const hc_world *w, hc_kind kind, unsigned call,
                               hc_results *res)
{
    gpu_reader *r = context;
    harmonia_query_config c;
    harmonia_query_config_init(&c);
    c.backend = r->mode == 2 ? HARMONIA_BACKEND_CPU : HARMONIA_BACKEND_GPU;
    c.threads = 1;
    c.psa = (int)(call % 3) - 1; /* auto, off, on in turn */
    if (r->mode != 1) {
        c.memory = r->mode == 2 ? HARMONIA_MEMORY_AUTO : HARMONIA_MEMORY_HOST;
        switch (kind) {
        case HC_LOOKUP: return harmonia_lookup(tree, &c, w->queries, HC_QUERIES, res->a, res->found);
        case HC_LOWER_BOUND: return harmonia_lower_bound(tree, &c, w->queries, HC_QUERIES, res->a, res->b, res->found);
        default: return harmonia_range_count(tree, &c, w->lo, w->hi, HC_QUERIES, res->a);
        }
    }
    c.memory = HARMONIA_MEMORY_DEVICE;
    c.stream = r->stream;
    c.workspace = r->workspace;
    c.workspace_bytes = r->workspace_bytes;
    const bool async = (call / HC_KINDS) % 2 == 0;
    harmonia_status st;
    switch (kind) {
    case HC_LOOKUP:
        st = async ? harmonia_lookup_async(tree, &c, r->d_queries, HC_QUERIES, r->d_a, r->d_found, r->stream)
                   : harmonia_lookup(tree, &c, r->d_queries, HC_QUERIES, r->d_a, r->d_found);
        break;
    case HC_LOWER_BOUND:
        st = async ? harmonia_lower_bound_async(tree, &c, r->d_queries, HC_QUERIES, r->d_a, r->d_b, r->d_found,
                                                r->stream)
                   : harmonia_lower_bound(tree, &c, r->d_queries, HC_QUERIES, r->d_a, r->d_b, r->d_found);
        break;
    default:
        st = async ? harmonia_range_count_async(tree, &c, r->d_lo, r->d_hi, HC_QUERIES, r->d_a, r->stream)
                   : harmonia_range_count(tree, &c, r->d_lo, r->d_hi, HC_QUERIES, r->d_a);
    }
    if (st != HARMONIA_OK)
        return st;
    const size_t bytes = HC_QUERIES * sizeof(uint64_t);
    if (cudaMemcpyAsync(res->a, r->d_a, bytes, cudaMemcpyDeviceToHost, r->stream) != cudaSuccess ||
        (kind == HC_LOWER_BOUND &&
         cudaMemcpyAsync(res->b, r->d_b, bytes, cudaMemcpyDeviceToHost, r->stream) != cudaSuccess) ||
        (kind != HC_RANGE_COUNT &&
         cudaMemcpyAsync(res->found, r->d_found, HC_QUERIES, cudaMemcpyDeviceToHost, r->stream) != cudaSuccess) ||
        cudaStreamSynchronize(r->stream) != cudaSuccess)
        return HARMONIA_ERR_DEVICE;
    return HARMONIA_OK;
}

/* A caller's allocator with a byte budget (cudaMalloc beneath). */
typedef struct budget {
    pthread_mutex_t lock;
    uint64_t limit, live, refused;
} budget;

static void *budget_alloc(void *context, size_t bytes, void *stream)
{
    (void)stream;
    budget *b = context;
    pthread_mutex_lock(&b->lock);
    const bool room = b->live + bytes <= b->limit;
    if (room)
        b->live += bytes;
    else
        b->refused++;
    if (!room) /* which allocation met the limit: the test's record of where the memory went */
        fprintf(stderr, "budget: refused %zu bytes (live %llu of %llu)\n", bytes, (unsigned long long)b->live,
                (unsigned long long)b->limit);
    pthread_mutex_unlock(&b->lock);
    void *p = NULL;
    if (!room)
        return NULL;
    if (cudaMalloc(&p, bytes) != cudaSuccess) {
        pthread_mutex_lock(&b->lock);
        b->live -= bytes;
        pthread_mutex_unlock(&b->lock);
        return NULL;
    }
    return p;
}

static void budget_free(void *context, void *pointer, size_t bytes, void *stream)
{
    (void)stream;
    budget *b = context;
    cudaFree(pointer);
    pthread_mutex_lock(&b->lock);
    b->live -= bytes;
    pthread_mutex_unlock(&b->lock);
}

static harmonia_tree *build_initial(const hc_world *w)
{
    harmonia_build_config bc;
    harmonia_build_config_init(&bc);
    bc.leaf_fill = 0.7;
    bc.input_sorted = true;
    bc.threads = 2;
    harmonia_tree *tree = NULL;
    if (harmonia_build(&bc, w->versions[0].keys, w->versions[0].values, w->versions[0].n, &tree) != HARMONIA_OK)
        fail_msg("build: %s", harmonia_last_error(NULL));
    return tree;
}

/* The initial tree with its device copy made through a budget allocator (b, no limit yet: the
 * test sets one under b->lock once it knows what the copy takes). The library copies the
 * allocator struct; b must outlive the tree. */
static harmonia_tree *build_on_budget(const hc_world *w, budget *b)
{
    harmonia_tree *tree = build_initial(w);
    memset(b, 0, sizeof *b);
    pthread_mutex_init(&b->lock, NULL);
    b->limit = UINT64_MAX;
    harmonia_allocator alloc;
    harmonia_allocator_init(&alloc);
    alloc.context = b;
    alloc.device_alloc = budget_alloc;
    alloc.device_free = budget_free;
    assert_int_equal(harmonia_set_device(tree, HARMONIA_DEVICE_CURRENT, &alloc), HARMONIA_OK);
    assert_int_equal(harmonia_device_upload(tree), HARMONIA_OK);
    return tree;
}

/* Frees a tree of build_on_budget: every byte it drew on the budget must be back. */
static void free_on_budget(harmonia_tree *tree, budget *b)
{
    harmonia_free(tree);
    assert_int_equal(b->live, 0);
    pthread_mutex_destroy(&b->lock);
}

/* Runs every query kind once in every reader mode (the scratch and staging made before a budget is
 * measured). */
static void warm_up(harmonia_tree *tree, const hc_world *w, gpu_reader *readers, int n)
{
    hc_results *r = malloc(sizeof *r);
    for (int i = 0; i < n; i++)
        for (unsigned call = 0; call < 2 * HC_KINDS * 3; call++) {
            const hc_kind kind = (hc_kind)(call % HC_KINDS);
            if (run_gpu(&readers[i], tree, w, kind, call, r) != HARMONIA_OK)
                fail_msg("warm-up: %s", harmonia_last_error(tree));
            assert_true(hc_matches(w, kind, r, 0));
        }
    free(r);
}

static void test_gpu_queries_during_updates(void **state)
{
    (void)state;
    hc_world *w = hc_world_make(25);
    harmonia_tree *tree = build_initial(w);
    assert_int_equal(harmonia_device_upload(tree), HARMONIA_OK);
    gpu_reader readers[4];
    void *contexts[4];
    const int modes[4] = {0, 1, 1, 2};
    for (int i = 0; i < 4; i++) {
        reader_make(&readers[i], modes[i], w);
        contexts[i] = &readers[i];
    }
    warm_up(tree, w, readers, 4);
    harmonia_update_config uc;
    harmonia_update_config_init(&uc);
    uc.threads = 2;
    bool in_place, relayout, blocking;
    hc_run_updates(tree, w, run_gpu, contexts, 4, &uc, &in_place, &relayout, &blocking);
    assert_true(in_place);
    assert_true(relayout);
    assert_false(blocking); /* two copies of this small tree fit */
    harmonia_tree_info info;
    assert_int_equal(harmonia_info(tree, &info), HARMONIA_OK);
    assert_true(info.device_resident);
    assert_int_equal(info.device_version, info.version);
    for (int i = 0; i < 4; i++)
        reader_free(&readers[i]);
    harmonia_free(tree);
    hc_world_free(w);
}

/* Seven device-array readers (synchronous and asynchronous calls in turn, the tree's scratch: their
 * PSA windows grow and rebuild the lanes and tables while the others' calls are in flight) and one
 * host-array reader during the batches: the synchronous calls hold a slot of the calls in flight
 * instead of ordering the tree's stream after themselves (gpu_tree.cu), so every write on the
 * tree's stream — a freed buffer, leaves overwritten, a version's arrays freed at the publish —
 * must order itself after them; the answers stay one version's. */
static void test_many_device_readers(void **state)
{
    (void)state;
    hc_world *w = hc_world_make(28);
    harmonia_tree *tree = build_initial(w);
    assert_int_equal(harmonia_device_upload(tree), HARMONIA_OK);
    enum { READERS = 8 };
    gpu_reader readers[READERS];
    void *contexts[READERS];
    for (int i = 0; i < READERS; i++) {
        reader_make(&readers[i], i == READERS - 1 ? 0 : 1, w);
        contexts[i] = &readers[i];
    }
    warm_up(tree, w, readers, READERS);
    harmonia_update_config uc;
    harmonia_update_config_init(&uc);
    uc.threads = 2;
    bool in_place, relayout, blocking;
    hc_run_updates(tree, w, run_gpu, contexts, READERS, &uc, &in_place, &relayout, &blocking);
    assert_true(in_place);
    assert_true(relayout);
    harmonia_tree_info info;
    assert_int_equal(harmonia_info(tree, &info), HARMONIA_OK);
    assert_int_equal(info.device_version, info.version);
    for (int i = 0; i < READERS; i++)
        reader_free(&readers[i]);
    harmonia_free(tree);
    hc_world_free(w);
}

/* Room for one device copy and the scratch, not for two: the fallback blocks GPU queries during
 * the sync and the answers stay one version's. */
static void test_two_copies_do_not_fit(void **state)
{
    (void)state;
    hc_world *w = hc_world_make(26);
    budget b;
    harmonia_tree *tree = build_on_budget(w, &b);
    gpu_reader readers[3];
    void *contexts[3];
    const int modes[3] = {0, 1, 2};
    for (int i = 0; i < 3; i++) {
        reader_make(&readers[i], modes[i], w);
        contexts[i] = &readers[i];
    }
    /* the device-array reader brings its own workspace: its calls, which may each want scratch of
     * their own while another reader's call holds the tree's (several megabytes against a copy of
     * 0.6 MB here), do not draw on the budget; the budget is then the updater's alone */
    for (int i = 0; i < 3; i++)
        reader_give_workspace(&readers[i], tree);
    warm_up(tree, w, readers, 3);
    uint64_t copy_bytes = 0;
    assert_int_equal(harmonia_device_bytes(tree, &copy_bytes), HARMONIA_OK);
    pthread_mutex_lock(&b.lock);
    b.limit = b.live + copy_bytes * 3 / 4; /* the tree grows a little over the batches */
    fprintf(stderr, "budget: %llu live after the warm-up, a copy %llu, limit %llu\n", (unsigned long long)b.live,
            (unsigned long long)copy_bytes, (unsigned long long)b.limit);
    pthread_mutex_unlock(&b.lock);
    harmonia_update_config uc;
    harmonia_update_config_init(&uc);
    uc.threads = 2;
    bool in_place, relayout, blocking;
    hc_run_updates(tree, w, run_gpu, contexts, 3, &uc, &in_place, &relayout, &blocking);
    assert_true(blocking);
    assert_true(b.refused > 0);
    harmonia_tree_info info;
    assert_int_equal(harmonia_info(tree, &info), HARMONIA_OK);
    assert_true(info.device_resident);
    assert_int_equal(info.device_version, info.version);
    for (int i = 0; i < 3; i++)
        reader_free(&readers[i]);
    free_on_budget(tree, &b);
    hc_world_free(w);
}

/* Room for no new copy at all: the batch is applied, the device copy released with a message, the
 * next GPU call fails with DEVICE_MEMORY, the CPU engine answers the new version; with room again
 * the GPU answers it too. */
static void test_no_room_for_the_new_copy(void **state)
{
    (void)state;
    hc_world *w = hc_world_make(27);
    budget b;
    harmonia_tree *tree = build_on_budget(w, &b);
    uint64_t copy_bytes = 0;
    assert_int_equal(harmonia_device_bytes(tree, &copy_bytes), HARMONIA_OK);
    pthread_mutex_lock(&b.lock);
    b.limit = copy_bytes / 2; /* less than the copy that exists */
    pthread_mutex_unlock(&b.lock);
    const hc_batch *batch = &w->batches[2]; /* dense inserts: a re-layout, the whole copy again */
    harmonia_update_stats stats;
    assert_int_equal(harmonia_update(tree, NULL, batch->kinds, batch->keys, batch->values, batch->count, &stats),
                     HARMONIA_ERR_DEVICE_MEMORY);
    assert_non_null(strstr(harmonia_last_error(tree), "the batch was applied"));
    harmonia_tree_info info;
    assert_int_equal(harmonia_info(tree, &info), HARMONIA_OK);
    assert_false(info.device_resident);
    gpu_reader gpu, cpu;
    reader_make(&gpu, 0, w);
    reader_make(&cpu, 2, w);
    hc_results *r = malloc(sizeof *r);
    /* version 1's batch was skipped: compare with a model of version 0 + batch 2 */
    tu_model m;
    hc_copy_model(&m, &w->versions[0], batch->count + 1);
    for (uint64_t i = 0; i < batch->count; i++)
        hc_apply_op(&m, batch->kinds[i], batch->keys[i], batch->values[i]);
    hc_answers *expect = malloc(sizeof *expect);
    hc_answer(&m, w, expect);
    assert_int_equal(run_gpu(&cpu, tree, w, HC_LOOKUP, 0, r), HARMONIA_OK);
    assert_memory_equal(r->a, expect->values, sizeof expect->values);
    assert_memory_equal(r->found, expect->found, sizeof expect->found);
    assert_int_equal(run_gpu(&gpu, tree, w, HC_LOOKUP, 0, r), HARMONIA_ERR_DEVICE_MEMORY);
    pthread_mutex_lock(&b.lock);
    b.limit = UINT64_MAX;
    pthread_mutex_unlock(&b.lock);
    assert_int_equal(run_gpu(&gpu, tree, w, HC_LOOKUP, 1, r), HARMONIA_OK);
    assert_memory_equal(r->a, expect->values, sizeof expect->values);
    assert_memory_equal(r->found, expect->found, sizeof expect->found);
    free(expect);
    free(m.keys);
    free(m.values);
    free(r);
    free_on_budget(tree, &b);
    hc_world_free(w);
}

int main(void)
{
    harmonia_device_info info;
    if (harmonia_device_probe(&info) != HARMONIA_OK) {
        printf("no usable GPU (%s): skipped\n", harmonia_last_error(NULL));
        return 77;
    }
    printf("GPU: %s (device %d), harmonia %s\n", info.name, info.device, harmonia_version());
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_gpu_queries_during_updates),
        cmocka_unit_test(test_many_device_readers),
        cmocka_unit_test(test_two_copies_do_not_fit),
        cmocka_unit_test(test_no_room_for_the_new_copy),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
