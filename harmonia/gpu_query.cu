/* gpu_query.cu — the GPU query pipelines: where the arrays live (device arrays used in place on the
 * caller's stream, host arrays streamed through pinned staging over several lanes), whether a
 * window goes through PSA (partition, search of the partitioned keys, restore of the order; psa/
 * and ntg/ do each step) or straight to the descent kernels, and range counts and two-phase range
 * collects. The kernels are ntg/, the partition and the restore psa/. */
#include <inttypes.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "harmonia/gpu_internal.h"

extern "C" {
#include "ntg/ntg_policy.h"
}

typedef enum hm_op { OP_LOOKUP, OP_LOWER_BOUND, OP_RANGE_COUNT } hm_op;

/* One query call: its arrays (host or device, as the call's memory says) and its options.
 * Outputs by op: LOOKUP 0 values, 1 found, 2 positions (unordered); LOWER_BOUND 0 keys, 1 values,
 * 2 found; RANGE_COUNT 0 counts. A NULL output is not wanted. */
typedef struct hm_call {
    hm_op op;
    const void *in[HM_LANE_IN];
    size_t in_elem[HM_LANE_IN];
    int n_in;
    void *out[HM_LANE_OUT];
    size_t out_elem[HM_LANE_OUT];
    uint64_t count;
    bool device_memory;
    int psa_option;        /* the config's psa: 1 on, 0 off, -1 auto */
    bool psa;              /* windows go through PSA by partition (psa.h) */
    bool unordered;
    uint32_t group_size;
    uint32_t window;
    uint32_t lanes;        /* lanes used: windows in flight */
    psa_plan plan;
    cudaStream_t stream;
    bool async;
} hm_call;

/* --- policy: when PSA pays (measured on the H100, bench/NOTES.md "PSA by partition") -------------
 * A window goes through PSA when it is large (below HM_PSA_MIN_QUERIES the launches of the passes
 * cost more than the search saves) and dense enough that its search tiles stage leaves rather than
 * descend: at least HM_PSA_MIN_QUERIES_PER_LEAF queries per leaf (2^24 queries over 2^22 leaves:
 * 1.50 ms with PSA, 2.21 ms without). Device-array windows hold at most PSA_MAX_WINDOW queries and
 * use at most half the free GPU memory for their scratch. */
#define HM_PSA_MIN_QUERIES (1u << 18)
#define HM_PSA_MIN_QUERIES_PER_LEAF 2

static bool psa_pays(const harmonia_tree *tree, uint64_t window)
{
    return window >= HM_PSA_MIN_QUERIES && window >= HM_PSA_MIN_QUERIES_PER_LEAF * tree->kr.n_leaves;
}

/* --- options ---------------------------------------------------------------------------------- */

static bool is_device_pointer(const void *p)
{
    if (!p)
        return false;
    cudaPointerAttributes a;
    if (cudaPointerGetAttributes(&a, p) != cudaSuccess) {
        cudaGetLastError();
        return false;
    }
    return a.type == cudaMemoryTypeDevice || a.type == cudaMemoryTypeManaged;
}

static bool is_pinned_host_pointer(const void *p)
{
    cudaPointerAttributes a;
    if (!p || cudaPointerGetAttributes(&a, p) != cudaSuccess) {
        cudaGetLastError();
        return false;
    }
    return a.type == cudaMemoryTypeHost;
}

/* The group size G of a call: the config's, else the tree's stored choice, else the policy's. */
static harmonia_status choose_group_size(harmonia_tree *tree, const harmonia_query_config *config, uint32_t *g_out)
{
    uint32_t g = config && config->group_size ? config->group_size : tree->ntg_group_size;
    if (g == 0) { /* policy: 64 bytes of a node per thread, at least 2 threads — the best G measured
                     on the H100 at F = 16, 32, 64 for 64-bit keys and F = 32 for 32-bit keys
                     (bench/RESULTS.md); harmonia profile-ntg measures and stores a better one */
        g = tree->kr.fanout * (tree->kr.key_bits / 8) / 64;
        g = g < 2 ? 2 : g > 32 ? 32 : g;
    }
    if (!ntg_valid_group_size(g) || g > tree->kr.fanout)
        return hm_fail(tree, HARMONIA_ERR_INVALID,
                       "NTG group size %" PRIu32 ": use 1, 2, 4, 8, 16 or 32, at most the fanout %" PRIu32, g,
                       tree->kr.fanout);
    *g_out = g;
    return HARMONIA_OK;
}

/* Fills the options of a call and checks that all its arrays live where the call says. */
static harmonia_status setup_call(harmonia_tree *tree, const harmonia_query_config *config, hm_call *c)
{
    harmonia_status st = choose_group_size(tree, config, &c->group_size);
    if (st != HARMONIA_OK)
        return st;
    harmonia_memory memory = config ? config->memory : HARMONIA_MEMORY_AUTO;
    if ((unsigned)memory > HARMONIA_MEMORY_DEVICE)
        return hm_fail(tree, HARMONIA_ERR_INVALID, "unknown memory kind %d", (int)memory);
    if (memory == HARMONIA_MEMORY_AUTO)
        c->device_memory = is_device_pointer(c->in[0]);
    else
        c->device_memory = memory == HARMONIA_MEMORY_DEVICE;
    if (memory == HARMONIA_MEMORY_AUTO && c->count > 0) {
        for (int k = 1; k < c->n_in; k++) /* in[0] decided device_memory */
            if (is_device_pointer(c->in[k]) != c->device_memory)
                return hm_fail(tree, HARMONIA_ERR_INVALID, "query arrays are partly in device and partly in host memory");
        for (int k = 0; k < HM_LANE_OUT; k++)
            if (c->out[k] && is_device_pointer(c->out[k]) != c->device_memory)
                return hm_fail(tree, HARMONIA_ERR_INVALID, "the queries are in %s memory but result array %d is not",
                               c->device_memory ? "device" : "host", k);
    }
    /* PSA applies to point lookups and lower bounds of a non-empty tree */
    c->psa_option = config ? config->psa : -1;
    const bool psa_applies = (c->op == OP_LOOKUP || c->op == OP_LOWER_BOUND) && tree->kr.n_keys > 0;
    c->plan = tree->gpu->plan;
    if (config && config->psa_bits)
        c->plan = psa_make_plan(c->plan.key_min, c->plan.key_max, tree->kr.n_leaves, config->psa_bits);
    uint64_t window;
    if (c->device_memory) /* device arrays: windows only bound the PSA scratch */
        window = config && config->psa_window ? config->psa_window : PSA_MAX_WINDOW;
    else
        window = config && config->psa_window ? config->psa_window : hm_gpu_default_window(tree->kr.key_bits);
    if (window > c->count) /* small batches get small buffers */
        window = c->count;
    if (window < 1024)
        window = 1024;
    if (window > PSA_MAX_WINDOW)
        window = PSA_MAX_WINDOW;
    c->window = (uint32_t)window;
    c->psa = psa_applies && (c->psa_option > 0 || (c->psa_option < 0 && psa_pays(tree, c->window)));
    c->lanes = config && config->pipeline_depth ? config->pipeline_depth : HM_LANES;
    if (c->lanes > HM_LANES)
        return hm_fail(tree, HARMONIA_ERR_INVALID, "pipeline depth %" PRIu32 ": use 1 to %d", c->lanes, HM_LANES);
    c->stream = config ? (cudaStream_t)config->stream : 0;
    c->async = config && config->async && c->device_memory;
    return HARMONIA_OK;
}

/* --- one window ------------------------------------------------------------------------------- */

/* Searches n queries whose device arrays are d_in, writing device results to d_out;
 * position_base is the window's first query in the whole call. With PSA: partition (psa/), search
 * of the partitioned keys into the lane's slot-order buffers (ntg/), restore into d_out (psa/);
 * unordered lookups take the slot order as it is, with each slot's position. */
static cudaError_t run_window(const hm_gpu *g, const hm_call *c, hm_lane *lane, void *const *d_in, void *const *d_out,
                              uint32_t n, uint64_t position_base)
{
    const ntg_view *v = &g->view;
    if (c->psa) {
        psa_partitioned part;
        cudaError_t e = psa_partition(v->key_bits, &c->plan, d_in[0], n, c->unordered, lane->psa_workspace,
                                      lane->psa_workspace_bytes, &part, lane->stream);
        if (e != cudaSuccess)
            return e;
        const bool lower_bound = c->op == OP_LOWER_BOUND;
        if (c->unordered)
            return ntg_launch_search_partitioned(v, &c->plan, g->d_bucket_table, false, part.keys, n, part.in_span,
                                                 d_out[0], NULL, (uint8_t *)d_out[1], part.positions,
                                                 part.outside_positions, (uint64_t *)d_out[2], position_base,
                                                 lane->stream);
        /* outputs: lookup 0 values, 1 found; lower bound 0 keys, 1 values, 2 found */
        void *values_out = lower_bound ? d_out[1] : d_out[0];
        void *keys_out = lower_bound ? d_out[0] : NULL;
        uint8_t *found_out = (uint8_t *)(lower_bound ? d_out[2] : d_out[1]);
        e = ntg_launch_search_partitioned(v, &c->plan, g->d_bucket_table, lower_bound, part.keys, n, part.in_span,
                                          values_out ? lane->d_slot_values : NULL, keys_out ? lane->d_slot_keys : NULL,
                                          lane->d_slot_found, NULL, NULL, NULL, 0, lane->stream);
        /* queries below the smallest key: a lower bound finds it */
        const psa_outside_answer below = {c->plan.key_min, g->min_value, lower_bound};
        if (e == cudaSuccess)
            e = psa_restore(v->key_bits, &part, lane->d_slot_values, keys_out ? lane->d_slot_keys : NULL,
                            lane->d_slot_found, values_out, keys_out, found_out, &below, lane->stream);
        return e;
    }
    switch (c->op) {
    case OP_LOOKUP:
        return ntg_launch_lookup(v, c->group_size, d_in[0], NULL, n, d_out[0], (uint8_t *)d_out[1],
                                 c->unordered ? (uint64_t *)d_out[2] : NULL, position_base, lane->stream);
    case OP_LOWER_BOUND:
        return ntg_launch_lower_bound(v, c->group_size, d_in[0], NULL, n, d_out[0], d_out[1],
                                      (uint8_t *)d_out[2], lane->stream);
    default:
        return ntg_launch_range_count(v, c->group_size, d_in[0], d_in[1], n, (uint64_t *)d_out[0], lane->stream);
    }
}

/* The PSA scratch of device-array windows, with the window cut until it takes at most half the
 * free GPU memory; PSA is left out (auto) or the call fails (on) when even 2^20 queries do not fit. */
static harmonia_status prepare_device_psa(harmonia_tree *tree, hm_call *c)
{
    const size_t kb = tree->kr.key_bits / 8;
    size_t free_bytes = 0, total = 0;
    HM_CUDA(tree, cudaMemGetInfo(&free_bytes, &total));
    free_bytes += tree->gpu->work_bytes; /* the lanes' own buffers may be given back */
    for (;;) {
        size_t ws = 0;
        HM_CUDA(tree, psa_workspace_bytes(tree->kr.key_bits, c->window, NULL, &ws));
        if (ws + (size_t)c->window * (2 * kb + 1) <= free_bytes / 2 || c->window <= (1u << 20))
            break;
        c->window /= 2;
    }
    harmonia_status st = hm_gpu_prepare_lanes(tree, c->window, false, true, 1);
    if (st == HARMONIA_ERR_DEVICE_MEMORY && c->psa_option < 0) {
        c->psa = false; /* documented fallback: no room for the scratch, search without PSA */
        return HARMONIA_OK;
    }
    return st;
}

/* --- device arrays: in place, forked from and joined back to the caller's stream ---------------- */

static harmonia_status run_device(harmonia_tree *tree, hm_call *c)
{
    hm_gpu *g = tree->gpu;
    harmonia_status st = HARMONIA_OK;
    if (c->psa)
        st = prepare_device_psa(tree, c);
    if (st == HARMONIA_OK && c->psa)
        st = hm_gpu_prepare_table(tree, &c->plan, c->stream);
    if (st != HARMONIA_OK)
        return st;
    if (!c->psa && c->count <= (1u << 30)) {
        /* no partition: one launch on the caller's stream, nothing else (small batches pay no
         * pipeline bookkeeping) */
        hm_lane direct;
        memset(&direct, 0, sizeof direct);
        direct.stream = c->stream;
        void *d_in[HM_LANE_IN] = {0}, *d_out[HM_LANE_OUT] = {0};
        for (int k = 0; k < c->n_in; k++)
            d_in[k] = (void *)c->in[k];
        for (int k = 0; k < HM_LANE_OUT; k++)
            d_out[k] = c->out[k];
        cudaError_t e = run_window(g, c, &direct, d_in, d_out, (uint32_t)c->count, 0);
        if (e == cudaSuccess && !c->async)
            e = cudaStreamSynchronize(c->stream);
        if (e != cudaSuccess) {
            cudaStreamSynchronize(c->stream);
            return hm_gpu_fail(tree, e, "the device-array query");
        }
        return HARMONIA_OK;
    }
    uint32_t window = c->window;
    if (!c->psa) /* no partition: launches of 2^30 queries */
        window = 1u << 30;
    const uint64_t windows = (c->count + window - 1) / window;
    /* PSA windows run one after another on one lane: their scratch is large */
    const uint32_t lanes = c->psa ? 1 : windows < c->lanes ? (uint32_t)windows : c->lanes;
    st = hm_gpu_prepare_lanes(tree, c->psa ? window : 1024, false, false, lanes);
    if (st != HARMONIA_OK)
        return st;
    if (!g->fork)
        HM_CUDA(tree, cudaEventCreateWithFlags(&g->fork, cudaEventDisableTiming));
    cudaError_t e = cudaEventRecord(g->fork, c->stream);
    for (uint32_t i = 0; i < lanes && e == cudaSuccess; i++)
        e = cudaStreamWaitEvent(g->lanes[i].stream, g->fork, 0);
    for (uint64_t w = 0; w < windows && e == cudaSuccess; w++) {
        hm_lane *lane = &g->lanes[w % lanes];
        uint64_t start = w * window;
        uint32_t n = (uint32_t)(c->count - start < window ? c->count - start : window);
        void *d_in[HM_LANE_IN] = {0}, *d_out[HM_LANE_OUT] = {0};
        for (int k = 0; k < c->n_in; k++)
            d_in[k] = (char *)c->in[k] + start * c->in_elem[k];
        for (int k = 0; k < HM_LANE_OUT; k++)
            if (c->out[k])
                d_out[k] = (char *)c->out[k] + start * c->out_elem[k];
        e = run_window(g, c, lane, d_in, d_out, n, start);
    }
    for (uint32_t i = 0; i < lanes && e == cudaSuccess; i++) {
        e = cudaEventRecord(g->lanes[i].done, g->lanes[i].stream);
        if (e == cudaSuccess)
            e = cudaStreamWaitEvent(c->stream, g->lanes[i].done, 0);
    }
    if (e == cudaSuccess && !c->async)
        e = cudaStreamSynchronize(c->stream);
    if (e != cudaSuccess) {
        /* nothing may go on writing the caller's arrays after the error is returned */
        for (uint32_t i = 0; i < lanes; i++)
            cudaStreamSynchronize(g->lanes[i].stream);
        cudaStreamSynchronize(c->stream);
        return hm_gpu_fail(tree, e, "the device-array query pipeline");
    }
    return HARMONIA_OK;
}

/* --- host arrays: streamed through pinned staging over the lanes -------------------------------- */

static void parallel_copy(void *dst, const void *src, size_t bytes)
{
    const size_t chunk = 1u << 20;
    if (bytes < 4 * chunk) {
        memcpy(dst, src, bytes);
        return;
    }
    const int64_t chunks = (int64_t)((bytes + chunk - 1) / chunk);
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < chunks; i++) {
        size_t off = (size_t)i * chunk;
        memcpy((char *)dst + off, (const char *)src + off, bytes - off < chunk ? bytes - off : chunk);
    }
}

/* Copies a finished window's results from the lane's pinned buffers to the caller's arrays. */
static harmonia_status finish_lane_window(harmonia_tree *tree, const hm_call *c, hm_lane *lane, const bool *pinned_out)
{
    if (!lane->pending)
        return HARMONIA_OK;
    lane->pending = false;
    HM_CUDA(tree, cudaEventSynchronize(lane->done));
    for (int k = 0; k < HM_LANE_OUT; k++)
        if (c->out[k] && !pinned_out[k])
            parallel_copy((char *)c->out[k] + lane->pending_start * c->out_elem[k], lane->h_out[k],
                          lane->pending_count * c->out_elem[k]);
    return HARMONIA_OK;
}

static harmonia_status run_host(harmonia_tree *tree, hm_call *c)
{
    hm_gpu *g = tree->gpu;
    const uint32_t window = c->window;
    const uint64_t windows = (c->count + window - 1) / window;
    const uint32_t lanes = windows < c->lanes ? (uint32_t)windows : c->lanes;
    harmonia_status st = hm_gpu_prepare_lanes(tree, window, true, c->psa, lanes);
    if (st == HARMONIA_OK && c->psa) { /* built once per tree version and plan; the lanes wait for it */
        st = hm_gpu_prepare_table(tree, &c->plan, g->lanes[0].stream);
        if (st == HARMONIA_OK && cudaStreamSynchronize(g->lanes[0].stream) != cudaSuccess)
            st = hm_gpu_fail(tree, cudaGetLastError(), "building the PSA bucket table");
    }
    if (st != HARMONIA_OK)
        return st;
    /* arrays the caller pinned are copied to and from directly */
    bool pinned_in[HM_LANE_IN] = {0}, pinned_out[HM_LANE_OUT] = {0};
    for (int k = 0; k < c->n_in; k++)
        pinned_in[k] = is_pinned_host_pointer(c->in[k]);
    for (int k = 0; k < HM_LANE_OUT; k++)
        pinned_out[k] = c->out[k] && is_pinned_host_pointer(c->out[k]);
    st = HARMONIA_OK;
    cudaError_t e = cudaSuccess;
    for (uint64_t w = 0; w < windows && st == HARMONIA_OK && e == cudaSuccess; w++) {
        hm_lane *lane = &g->lanes[w % lanes];
        st = finish_lane_window(tree, c, lane, pinned_out);
        if (st != HARMONIA_OK)
            break;
        const uint64_t start = w * window;
        const uint32_t n = (uint32_t)(c->count - start < window ? c->count - start : window);
        for (int k = 0; k < c->n_in && e == cudaSuccess; k++) {
            const void *src = (const char *)c->in[k] + start * c->in_elem[k];
            if (!pinned_in[k]) {
                parallel_copy(lane->h_in[k], src, n * c->in_elem[k]);
                src = lane->h_in[k];
            }
            e = cudaMemcpyAsync(lane->d_in[k], src, n * c->in_elem[k], cudaMemcpyHostToDevice, lane->stream);
        }
        if (e == cudaSuccess)
            e = run_window(g, c, lane, lane->d_in, lane->d_out, n, start);
        for (int k = 0; k < HM_LANE_OUT && e == cudaSuccess; k++) {
            if (!c->out[k])
                continue;
            void *dst = pinned_out[k] ? (char *)c->out[k] + start * c->out_elem[k] : lane->h_out[k];
            e = cudaMemcpyAsync(dst, lane->d_out[k], n * c->out_elem[k], cudaMemcpyDeviceToHost, lane->stream);
        }
        if (e == cudaSuccess)
            e = cudaEventRecord(lane->done, lane->stream);
        if (e == cudaSuccess) {
            lane->pending = true;
            lane->pending_start = start;
            lane->pending_count = n;
        }
    }
    /* drain every lane, also after a failure, so that no copy into the caller's arrays is left running */
    for (uint32_t i = 0; i < lanes; i++) {
        harmonia_status drained = HARMONIA_OK;
        if (e == cudaSuccess && st == HARMONIA_OK)
            drained = finish_lane_window(tree, c, &g->lanes[i], pinned_out);
        else {
            cudaStreamSynchronize(g->lanes[i].stream);
            g->lanes[i].pending = false;
        }
        if (st == HARMONIA_OK)
            st = drained;
    }
    if (e != cudaSuccess)
        return hm_gpu_fail(tree, e, "the host-array query pipeline");
    return st;
}

/* The checks of a config that need no device copy: done before hm_gpu_enter, so that a bad config
 * costs no upload. */
static harmonia_status check_config(harmonia_tree *tree, const harmonia_query_config *config)
{
    uint32_t g;
    harmonia_status st = choose_group_size(tree, config, &g);
    if (st != HARMONIA_OK)
        return st;
    if (config && (unsigned)config->memory > HARMONIA_MEMORY_DEVICE)
        return hm_fail(tree, HARMONIA_ERR_INVALID, "unknown memory kind %d", (int)config->memory);
    if (config && config->pipeline_depth > HM_LANES)
        return hm_fail(tree, HARMONIA_ERR_INVALID, "pipeline depth %" PRIu32 ": use 1 to %d",
                       config->pipeline_depth, HM_LANES);
    return HARMONIA_OK;
}

/* Every result array must live where the queries do. */
static harmonia_status check_array(harmonia_tree *tree, const hm_call *c, const void *array, const char *name)
{
    if (array && c->count > 0 && is_device_pointer(array) != c->device_memory)
        return hm_fail(tree, HARMONIA_ERR_INVALID, "the ranges are in %s memory but %s is not",
                       c->device_memory ? "device" : "host", name);
    return HARMONIA_OK;
}

static harmonia_status run_call(harmonia_tree *tree, const harmonia_query_config *config, hm_call *c)
{
    harmonia_status st = check_config(tree, config);
    if (st != HARMONIA_OK)
        return st;
    st = hm_gpu_enter(tree);
    if (st != HARMONIA_OK)
        return st;
    st = setup_call(tree, config, c);
    if (st == HARMONIA_OK && c->count > 0)
        st = c->device_memory ? run_device(tree, c) : run_host(tree, c);
    hm_gpu_leave();
    return st;
}

/* --- the operations ----------------------------------------------------------------------------- */

extern "C" harmonia_status hm_gpu_lookup(harmonia_tree *tree, const harmonia_query_config *config,
                                         const void *queries, uint64_t count, void *values_out,
                                         uint8_t *found_out, uint64_t *positions_out)
{
    const size_t kb = tree->kr.key_bits / 8;
    hm_call c;
    memset(&c, 0, sizeof c);
    c.op = OP_LOOKUP;
    c.in[0] = queries;
    c.in_elem[0] = kb;
    c.n_in = 1;
    c.out[0] = values_out;
    c.out_elem[0] = kb;
    c.out[1] = found_out;
    c.out_elem[1] = 1;
    c.out[2] = positions_out;
    c.out_elem[2] = sizeof(uint64_t);
    c.unordered = positions_out != NULL;
    c.count = count;
    return run_call(tree, config, &c);
}

extern "C" harmonia_status hm_gpu_lower_bound(harmonia_tree *tree, const harmonia_query_config *config,
                                              const void *queries, uint64_t count, void *keys_out,
                                              void *values_out, uint8_t *found_out)
{
    const size_t kb = tree->kr.key_bits / 8;
    hm_call c;
    memset(&c, 0, sizeof c);
    c.op = OP_LOWER_BOUND;
    c.in[0] = queries;
    c.in_elem[0] = kb;
    c.n_in = 1;
    c.out[0] = keys_out;
    c.out_elem[0] = kb;
    c.out[1] = values_out;
    c.out_elem[1] = kb;
    c.out[2] = found_out;
    c.out_elem[2] = 1;
    c.count = count;
    return run_call(tree, config, &c);
}

extern "C" harmonia_status hm_gpu_range_count(harmonia_tree *tree, const harmonia_query_config *config,
                                              const void *lo, const void *hi, uint64_t count,
                                              uint64_t *counts_out)
{
    const size_t kb = tree->kr.key_bits / 8;
    hm_call c;
    memset(&c, 0, sizeof c);
    c.op = OP_RANGE_COUNT;
    c.in[0] = lo;
    c.in[1] = hi;
    c.in_elem[0] = c.in_elem[1] = kb;
    c.n_in = 2;
    c.out[0] = counts_out;
    c.out_elem[0] = sizeof(uint64_t);
    c.count = count;
    return run_call(tree, config, &c);
}

extern "C" harmonia_status hm_gpu_range_offsets(harmonia_tree *tree, const harmonia_query_config *config,
                                                const void *lo, const void *hi, uint64_t count,
                                                uint64_t *offsets)
{
    harmonia_status st = check_config(tree, config);
    if (st != HARMONIA_OK)
        return st;
    st = hm_gpu_enter(tree);
    if (st != HARMONIA_OK)
        return st;
    const size_t kb = tree->kr.key_bits / 8;
    hm_call c;
    memset(&c, 0, sizeof c);
    c.op = OP_RANGE_COUNT;
    c.in[0] = lo;
    c.in[1] = hi;
    c.in_elem[0] = c.in_elem[1] = kb;
    c.n_in = 2;
    c.out_elem[0] = sizeof(uint64_t);
    c.count = count;
    st = setup_call(tree, config, &c);
    if (st == HARMONIA_OK)
        st = check_array(tree, &c, offsets, "offsets");
    if (st == HARMONIA_OK && c.device_memory) {
        /* counts into a scratch array with a trailing zero, then CUB's exclusive scan into offsets;
         * the scratch is kept with the device copy and grows as needed */
        hm_gpu *g = tree->gpu;
        cudaError_t e = cudaSuccess;
        if (g->scan_capacity < count + 1) {
            cudaFree(g->scan_counts);
            cudaFree(g->scan_temp);
            g->scan_counts = NULL;
            g->scan_temp = NULL;
            g->scan_capacity = 0;
            e = cudaMalloc((void **)&g->scan_counts, (count + 1) * sizeof(uint64_t));
            if (e == cudaSuccess)
                e = psa_scan_temp_bytes(count, &g->scan_temp_bytes);
            if (e == cudaSuccess)
                e = cudaMalloc(&g->scan_temp, g->scan_temp_bytes);
            if (e == cudaSuccess)
                g->scan_capacity = count + 1;
        }
        if (e == cudaSuccess)
            e = cudaMemsetAsync(g->scan_counts + count, 0, sizeof(uint64_t), c.stream);
        if (e == cudaSuccess)
            e = ntg_launch_range_count(&g->view, c.group_size, lo, hi, count, g->scan_counts, c.stream);
        if (e == cudaSuccess)
            e = psa_exclusive_scan(g->scan_temp, g->scan_temp_bytes, g->scan_counts, offsets, count, c.stream);
        if (e == cudaSuccess)
            e = cudaStreamSynchronize(c.stream);
        if (e != cudaSuccess)
            st = hm_gpu_fail(tree, e, "range offsets on device arrays");
    } else if (st == HARMONIA_OK) {
        /* host arrays: counts streamed into offsets[1 ..], then a parallel scan on the host */
        c.out[0] = offsets + 1;
        if (count > 0)
            st = run_host(tree, &c);
        if (st == HARMONIA_OK) {
            offsets[0] = 0;
            kr_inclusive_scan(offsets + 1, count);
        }
    }
    hm_gpu_leave();
    return st;
}

/* Phase 2 with host arrays: ranges cut into pieces of at most `budget` pairs, pieces gathered into
 * chunks of at most budget pairs and window - 1 pieces, each chunk collected on the GPU and copied
 * to the caller's arrays. */
static harmonia_status collect_host(harmonia_tree *tree, const hm_call *c, const void *lo, const uint64_t *offsets,
                                    void *keys_out, void *values_out)
{
    hm_gpu *g = tree->gpu;
    const size_t kb = tree->kr.key_bits / 8;
    for (uint64_t i = 0; i < c->count; i++)
        if (offsets[i + 1] < offsets[i])
            return hm_fail(tree, HARMONIA_ERR_INVALID,
                           "harmonia_range_collect: offsets decrease at %" PRIu64 " (not from phase 1?)", i);
    /* the lanes hold a chunk: up to `window` pairs (d_out[0], d_out[1]) and window - 1 pieces
     * (d_in[0], d_in[1], d_out[2]); sized by the pairs and the ranges, whichever is larger */
    const uint64_t total = offsets[c->count] - offsets[0];
    uint64_t window = total > c->count + 1 ? total : c->count + 1;
    if (window < 1024)
        window = 1024;
    if (window > (1u << 24))
        window = 1u << 24;
    harmonia_status st = hm_gpu_prepare_lanes(tree, (uint32_t)window, true, false, 1);
    if (st != HARMONIA_OK)
        return st;
    hm_lane *lane = &g->lanes[0];
    const uint64_t budget = window;
    const uint64_t max_pieces = window - 1;
    /* long ranges are cut into pieces of at most this many pairs, each copied by its own warp */
    const uint64_t max_piece_pairs = 4096;
    char *h_lo = (char *)lane->h_in[0];
    uint64_t *h_skip = (uint64_t *)lane->h_in[1];
    uint64_t *h_offsets = (uint64_t *)lane->h_out[2];
    uint64_t range = 0, skipped = 0; /* the next piece starts `skipped` pairs into `range` */
    while (range < c->count) {
        /* gather a chunk */
        uint64_t pieces = 0, pairs = 0, chunk_start = offsets[range] + skipped;
        h_offsets[0] = 0;
        while (range < c->count && pieces < max_pieces && pairs < budget) {
            uint64_t left = offsets[range + 1] - offsets[range] - skipped;
            if (left == 0) {
                range++;
                skipped = 0;
                continue;
            }
            uint64_t take = left < budget - pairs ? left : budget - pairs;
            if (take > max_piece_pairs)
                take = max_piece_pairs;
            memcpy(h_lo + pieces * kb, (const char *)lo + range * kb, kb);
            h_skip[pieces] = skipped;
            pairs += take;
            h_offsets[++pieces] = pairs;
            if (take == left) {
                range++;
                skipped = 0;
            } else {
                skipped += take;
            }
        }
        if (pieces == 0)
            break;
        cudaError_t e = cudaMemcpyAsync(lane->d_in[0], h_lo, pieces * kb, cudaMemcpyHostToDevice, lane->stream);
        if (e == cudaSuccess)
            e = cudaMemcpyAsync(lane->d_in[1], h_skip, pieces * 8, cudaMemcpyHostToDevice, lane->stream);
        if (e == cudaSuccess)
            e = cudaMemcpyAsync(lane->d_out[2], h_offsets, (pieces + 1) * 8, cudaMemcpyHostToDevice, lane->stream);
        if (e == cudaSuccess)
            e = ntg_launch_range_collect(&g->view, c->group_size, lane->d_in[0], (const uint64_t *)lane->d_in[1],
                                         pieces, (const uint64_t *)lane->d_out[2], 0,
                                         keys_out ? lane->d_out[0] : NULL, values_out ? lane->d_out[1] : NULL,
                                         lane->stream);
        if (e == cudaSuccess && keys_out)
            e = cudaMemcpyAsync(lane->h_out[0], lane->d_out[0], pairs * kb, cudaMemcpyDeviceToHost, lane->stream);
        if (e == cudaSuccess && values_out)
            e = cudaMemcpyAsync(lane->h_out[1], lane->d_out[1], pairs * kb, cudaMemcpyDeviceToHost, lane->stream);
        if (e == cudaSuccess)
            e = cudaStreamSynchronize(lane->stream);
        if (e != cudaSuccess)
            return hm_gpu_fail(tree, e, "range collect on host arrays");
        if (keys_out)
            parallel_copy((char *)keys_out + chunk_start * kb, lane->h_out[0], pairs * kb);
        if (values_out)
            parallel_copy((char *)values_out + chunk_start * kb, lane->h_out[1], pairs * kb);
    }
    return HARMONIA_OK;
}

extern "C" harmonia_status hm_gpu_range_collect(harmonia_tree *tree, const harmonia_query_config *config,
                                                const void *lo, uint64_t count, const uint64_t *offsets,
                                                void *keys_out, void *values_out)
{
    harmonia_status st = check_config(tree, config);
    if (st != HARMONIA_OK)
        return st;
    st = hm_gpu_enter(tree);
    if (st != HARMONIA_OK)
        return st;
    const size_t kb = tree->kr.key_bits / 8;
    hm_call c;
    memset(&c, 0, sizeof c);
    c.op = OP_RANGE_COUNT;
    c.in[0] = lo;
    c.in_elem[0] = kb;
    c.n_in = 1;
    c.out[0] = keys_out ? keys_out : values_out;
    c.out_elem[0] = kb;
    c.count = count;
    st = setup_call(tree, config, &c);
    if (st == HARMONIA_OK)
        st = check_array(tree, &c, offsets, "offsets");
    if (st == HARMONIA_OK)
        st = check_array(tree, &c, keys_out, "keys_out");
    if (st == HARMONIA_OK)
        st = check_array(tree, &c, values_out, "values_out");
    if (st == HARMONIA_OK && count > 0 && !(config && config->group_size)) {
        /* G from the ranges' mean length (ntg_policy.h), at most the fanout */
        uint64_t first = 0, total = 0;
        if (c.device_memory) {
            cudaError_t e = cudaMemcpyAsync(&first, offsets, 8, cudaMemcpyDeviceToHost, c.stream);
            if (e == cudaSuccess)
                e = cudaMemcpyAsync(&total, offsets + count, 8, cudaMemcpyDeviceToHost, c.stream);
            if (e == cudaSuccess)
                e = cudaStreamSynchronize(c.stream);
            if (e != cudaSuccess)
                st = hm_gpu_fail(tree, e, "reading the range offsets");
        } else {
            first = offsets[0];
            total = offsets[count];
        }
        const uint32_t g = ntg_collect_group_size(total >= first ? (double)(total - first) / count : 0, c.group_size);
        c.group_size = g <= tree->kr.fanout ? g : tree->kr.fanout < 32 ? tree->kr.fanout : 32;
    }
    if (st == HARMONIA_OK && count > 0) {
        if (c.device_memory) {
            cudaError_t e = ntg_launch_range_collect(&tree->gpu->view, c.group_size, lo, NULL, count, offsets, 0,
                                                     keys_out, values_out, c.stream);
            if (e == cudaSuccess && !c.async)
                e = cudaStreamSynchronize(c.stream);
            if (e != cudaSuccess)
                st = hm_gpu_fail(tree, e, "range collect on device arrays");
        } else {
            st = collect_host(tree, &c, lo, offsets, keys_out, values_out);
        }
    }
    hm_gpu_leave();
    return st;
}
