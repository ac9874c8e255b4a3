/* gpu_query.cu — the GPU query pipelines: where the arrays live (device arrays used in place on the
 * caller's stream, host arrays streamed through pinned staging over several lanes), whether a
 * window goes through PSA (partition, search of the partitioned keys, restore of the order; psa/
 * and ntg/ do each step, psa_policy.h says when it pays) or straight to the descent kernels, range
 * counts and two-phase range collects, synchronous and asynchronous calls, the caller's workspace
 * or the tree's scratch. The kernels are ntg/, the partition and the restore psa/, the device copy
 * and its ordering against queries gpu_tree.cu. */
#include <assert.h>
#include <inttypes.h>
#include <omp.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "harmonia/gpu_internal.h"

extern "C" {
#include "ntg/ntg_policy.h"
}

/* The default tree shape is the one the descent kernels are compiled for (ntg_policy.h). */
static_assert(NTG_FIXED_FANOUT_64 == HARMONIA_DEFAULT_FANOUT(64) && NTG_FIXED_FANOUT_32 == HARMONIA_DEFAULT_FANOUT(32) &&
                  NTG_FIXED_LEAF == HARMONIA_DEFAULT_LEAF_SIZE,
              "the kernels' fixed shape is the library's default tree shape");

typedef enum hm_op { OP_LOOKUP, OP_LOWER_BOUND, OP_RANGE_COUNT } hm_op;

/* One query call: its arrays (host or device, as the call's memory says) and its options.
 * Outputs by op: LOOKUP 0 values, 1 found, 2 positions (unordered); LOWER_BOUND 0 keys, 1 values,
 * 2 found; RANGE_COUNT 0 counts. A NULL output is not wanted. */
typedef struct hm_call {
    const char *name;      /* the public call, for messages */
    hm_op op;
    const void *in[HM_LANE_IN];
    size_t in_elem[HM_LANE_IN];
    int n_in;
    void *out[HM_LANE_OUT];
    size_t out_elem[HM_LANE_OUT];
    uint64_t count;
    bool device_memory;
    int psa_option;        /* the config's psa: 1 on, 0 off, -1 auto */
    bool psa;              /* windows go through PSA (psa.h), with its scratch: by partition, or ... */
    bool psa_descent;      /* ... by a one-pass partition, then the plain descent (sparse windows:
                              lookups psa_descent_pays, lower bounds psa_descent_lower_bound_pays) */
    bool unordered;
    bool positions32;      /* unordered: 32-bit positions (harmonia_lookup_unordered32) */
    uint32_t group_size;
    uint32_t queries_per_group; /* the descent path's point lookups: queries a group at once */
    uint32_t window;
    uint32_t lanes;        /* lanes used: windows in flight */
    psa_plan plan;
    const uint32_t *table;  /* the staged search's bucket table of plan (hm_gpu_prepare_table) */
    cudaStream_t stream;
    bool async;            /* return once queued (device arrays only) */
    void *workspace;       /* the caller's scratch (device arrays), or NULL: the tree's */
    size_t workspace_bytes;
    int threads;           /* OpenMP team of the host-side copies */
    bool signalled;        /* a synchronous one-launch call with a completion signal (gpu_tree.cu): */
    int slot;              /* its slot of the calls in flight, taken before the launch, */
    ntg_signal signal;     /* and the launch's signal */
} hm_call;

/* --- options ---------------------------------------------------------------------------------- */

/* Where an array lives: 1 device memory of `device`, 2 device memory of another device, 0 host
 * memory (pageable or pinned). */
static int device_residency(const void *p, int device)
{
    int where = -1;
    switch (hm_pointer_where(p, &where)) {
    case HM_POINTER_MANAGED:
        return 1;
    case HM_POINTER_DEVICE:
        return where == device ? 1 : 2;
    default:
        return 0;
    }
}

/* The group size G of a call of `count` queries: the config's, else the tree's stored choice, else
 * the policy's for the batch and the kernel that runs (point: a lookup or a lower bound, whose
 * kernels have a fixed-shape build for the default F and L; sorted: the queries reach the descent
 * grouped by PSA's descent path). */
static harmonia_status choose_group_size(harmonia_tree *tree, const harmonia_query_config *config, uint64_t count,
                                         bool point, bool sorted, uint32_t *g_out)
{
    uint32_t g = config->group_size ? config->group_size : tree->ntg_group_size;
    if (g == 0)
        g = ntg_default_group_size(tree->kr.fanout, tree->kr.key_bits, count,
                                   point && ntg_fixed_shape(tree->kr.fanout, tree->kr.leaf_size, tree->kr.key_bits),
                                   sorted);
    if (!ntg_valid_group_size(g) || g > tree->kr.fanout)
        return hm_fail(tree, HARMONIA_ERR_INVALID,
                       "NTG group size %" PRIu32 ": use 1, 2, 4, 8, 16 or 32, at most the fanout %" PRIu32, g,
                       tree->kr.fanout);
    *g_out = g;
    return HARMONIA_OK;
}

/* Whether every array of the call lives where the first query array says (device arrays: on the
 * tree's device), and the residency of the call. */
static harmonia_status check_residency(harmonia_tree *tree, hm_call *c, harmonia_memory memory, int device)
{
    if (memory == HARMONIA_MEMORY_AUTO) {
        const int first = device_residency(c->in[0], device);
        if (first == 2)
            return hm_fail(tree, HARMONIA_ERR_INVALID, "%s: the queries are in the memory of another device than the "
                           "tree's (device %d)", c->name, device);
        c->device_memory = first == 1;
        if (c->count > 0) {
            for (int k = 1; k < c->n_in; k++) /* in[0] decided device_memory */
                if (device_residency(c->in[k], device) != first)
                    return hm_fail(tree, HARMONIA_ERR_INVALID,
                                   "%s: the query arrays are not all in the same memory (host, or device %d)", c->name,
                                   device);
            for (int k = 0; k < HM_LANE_OUT; k++)
                if (c->out[k] && device_residency(c->out[k], device) != first)
                    return hm_fail(tree, HARMONIA_ERR_INVALID, "%s: the queries are in %s memory but result array %d "
                                   "is not", c->name, c->device_memory ? "the tree's device" : "host", k);
        }
    } else {
        c->device_memory = memory == HARMONIA_MEMORY_DEVICE;
    }
    if (c->async && !c->device_memory && c->count > 0)
        return hm_fail(tree, HARMONIA_ERR_INVALID,
                       "%s: the arrays are in host memory; the asynchronous calls take device arrays (the "
                       "synchronous call stages host arrays and returns when done)", c->name);
    return HARMONIA_OK;
}

/* Whether a point-query window of a device-array call with PSA auto takes PSA's descent path
 * (psa_policy.h): lookups in either order when psa_descent_pays, lower bounds when
 * psa_descent_lower_bound_pays. setup_call and hm_gpu_workspace_bytes both ask here. */
static bool takes_descent_path(const harmonia_tree *tree, bool lower_bound, bool unordered, uint64_t window)
{
    return lower_bound ? psa_descent_lower_bound_pays(window, tree->kr.n_leaves, tree->kr.key_bits)
                       : psa_descent_pays(window, tree->kr.n_leaves, tree->kr.key_bits, unordered);
}

/* Fills the options of a call and checks that all its arrays live where the call says. */
static harmonia_status setup_call(harmonia_tree *tree, const harmonia_query_config *config, hm_call *c)
{
    const hm_gpu *g = tree->gpu;
    harmonia_status st = check_residency(tree, c, config->memory, g->device);
    if (st != HARMONIA_OK)
        return st;
    /* PSA applies to point lookups and lower bounds of a non-empty tree */
    c->psa_option = config->psa;
    const bool point = c->op == OP_LOOKUP || c->op == OP_LOWER_BOUND;
    const bool psa_applies = point && tree->kr.n_keys > 0;
    /* unordered lookups of device arrays: the tree's plan, or one bit fewer on large 64-bit trees
     * (psa_unordered_plan); a config's psa_bits decides for itself */
    c->plan = c->unordered && c->device_memory ? g->plan_unordered : g->plan;
    if (config->psa_bits)
        c->plan = psa_make_plan(c->plan.key_min, c->plan.key_max, tree->kr.n_leaves,
                                tree->kr.leaf_size * (tree->kr.key_bits / 8), config->psa_bits);
    uint64_t window;
    if (c->device_memory) /* device arrays: windows only bound the PSA scratch */
        window = config->psa_window ? config->psa_window : PSA_MAX_WINDOW;
    else
        window = config->psa_window ? config->psa_window : hm_gpu_default_window(g, tree->kr.key_bits);
    if (window > c->count) /* small batches get small buffers */
        window = c->count;
    if (window < PSA_MIN_WINDOW)
        window = PSA_MIN_WINDOW;
    if (window > PSA_MAX_WINDOW)
        window = PSA_MAX_WINDOW;
    c->window = (uint32_t)window;
    c->psa = psa_applies && (c->psa_option > 0 || (c->psa_option < 0 && psa_pays(c->window, tree->kr.n_leaves)));
    /* lookups of large device-array windows too sparse for the partition's staged search: PSA's
     * descent path, a one-pass partition on a coarse plan, then the descent (and, for results in
     * query order, the restore) */
    c->psa_descent = psa_applies && c->psa_option < 0 && c->device_memory &&
                     takes_descent_path(tree, c->op == OP_LOWER_BOUND, c->unordered, c->window);
    if (c->psa_descent) {
        c->psa = true; /* its scratch is PSA's */
        /* always its own one-pass plan (a config's psa_bits shape the staged search's buckets): the
         * descent reads slots 0 .. n - 1, which only a one-pass partition fills without gaps */
        c->plan = psa_descent_plan(&g->plan, tree->kr.key_bits, tree->kr.n_leaves,
                                   tree->kr.leaf_size * (tree->kr.key_bits / 8));
    }
    /* results restored to query order: queries on the smallest or largest key are answered by the
     * restore, as those outside the span (psa.h, plan.edges) */
    c->plan.edges = c->psa && !c->unordered;
    st = choose_group_size(tree, config, c->count, point, c->psa_descent, &c->group_size);
    if (st != HARMONIA_OK)
        return st;
    c->queries_per_group = ntg_default_queries_per_group(tree->kr.key_bits, c->psa_descent);
    c->lanes = config->pipeline_depth ? config->pipeline_depth : HM_LANES;
    c->stream = (cudaStream_t)config->stream;
    c->workspace = config->workspace;
    c->workspace_bytes = config->workspace_bytes;
    c->threads = config->threads;
    return HARMONIA_OK;
}

/* --- one window ------------------------------------------------------------------------------- */

/* What the restore answers without a search (psa_gpu.h): below the smallest key a lookup finds
 * nothing and a lower bound the smallest key; the smallest and largest keys themselves (plan.edges)
 * are found, with their values. */
static psa_known_answers known_answers(const hm_gpu *g, const psa_plan *plan, bool lower_bound)
{
    psa_known_answers k;
    k.below = {plan->key_min, g->min_value, lower_bound};
    k.at_min = {plan->key_min, g->min_value, true};
    k.at_max = {plan->key_max, g->max_value, true};
    return k;
}

/* Where an unordered window's positions go (psa.h): d_out[2], 64- or 32-bit words from
 * position_base on; nowhere for results in query order. */
static psa_positions window_positions(const hm_call *c, void *const *d_out, uint64_t position_base)
{
    psa_positions p = {c->unordered ? d_out[2] : NULL, position_base, !c->positions32};
    return p;
}

/* Searches n queries whose device arrays are d_in, writing device results to d_out, on stream;
 * position_base is the window's first query in the whole call. With PSA (scratch: the window's):
 * partition (psa/), search of the partitioned keys into the scratch's slot-order buffers (ntg/),
 * restore into d_out (psa/); unordered lookups take the slot order as it is, with each slot's
 * position. */
static cudaError_t run_window(const hm_gpu *g, const hm_call *c, cudaStream_t stream, const psa_scratch *scratch,
                              void *const *d_in, void *const *d_out, uint32_t n, uint64_t position_base)
{
    const ntg_signal *signal = c->signalled ? &c->signal : NULL; /* (one-launch calls only: run_device) */
    /* the descents of grouped queries (PSA's descent path) and of small windows searched without PSA
     * start from the fine start table, the others from the view's coarse one (ntg_policy.h) */
    ntg_view fine;
    const ntg_view *v = &g->view;
    if (g->start_fine && ((c->psa && c->psa_descent) || (!c->psa && n < NTG_START_FINE_BATCH))) {
        fine = g->view;
        fine.start = g->start_fine;
        fine.start_plan = g->start_fine_plan;
        v = &fine;
    }
    assert(n > 0 && (!c->psa || (scratch && scratch->workspace)));
    const psa_positions positions = window_positions(c, d_out, position_base), no_positions = {NULL, 0, true};
    if (c->psa && c->psa_descent) {
        /* unordered, the pass writes the caller's positions and the descent the values and flags of
         * the slots (those outside the span too: it finds nothing for them); in query order the
         * descent writes the slot-order buffers and the restore brings them back */
        psa_partitioned part;
        cudaError_t e = psa_partition(v->key_bits, &c->plan, d_in[0], n, positions, scratch->workspace,
                                      scratch->workspace_bytes, &part, stream);
        if (e != cudaSuccess)
            return e;
        if (c->unordered)
            return ntg_launch_lookup_q(v, &g->cut, c->group_size, c->queries_per_group, part.keys, NULL, n, d_out[0],
                                       (uint8_t *)d_out[1], no_positions, stream);
        /* outputs: lookup 0 values, 1 found; lower bound 0 keys, 1 values, 2 found (keys and values
         * may be NULL) */
        const bool lower_bound = c->op == OP_LOWER_BOUND;
        void *values_out = lower_bound ? d_out[1] : d_out[0];
        void *keys_out = lower_bound ? d_out[0] : NULL;
        uint8_t *found_out = (uint8_t *)(lower_bound ? d_out[2] : d_out[1]);
        void *slot_values = values_out ? scratch->slot_values : NULL, *slot_keys = keys_out ? scratch->slot_keys : NULL;
        e = lower_bound ? ntg_launch_lower_bound(v, &g->cut, c->group_size, part.keys, NULL, n, slot_keys, slot_values,
                                                 scratch->slot_found, NULL, stream)
                        : ntg_launch_lookup_q(v, &g->cut, c->group_size, c->queries_per_group, part.keys, NULL, n,
                                              slot_values, scratch->slot_found, no_positions, stream);
        const psa_known_answers known = known_answers(g, &c->plan, lower_bound);
        if (e == cudaSuccess)
            e = psa_restore(v->key_bits, &part, slot_values, slot_keys, scratch->slot_found, values_out, keys_out,
                            found_out, &known, stream);
        return e;
    }
    if (c->psa) {
        psa_partitioned part;
        /* unordered: the passes write the caller's positions themselves */
        cudaError_t e = psa_partition(v->key_bits, &c->plan, d_in[0], n, positions, scratch->workspace,
                                      scratch->workspace_bytes, &part, stream);
        if (e != cudaSuccess)
            return e;
        const bool lower_bound = c->op == OP_LOWER_BOUND;
        if (c->unordered)
            return ntg_launch_search_partitioned(v, &c->plan, c->table, false, part.keys, n, part.in_span,
                                                 d_out[0], NULL, (uint8_t *)d_out[1], true, stream);
        /* outputs: lookup 0 values, 1 found; lower bound 0 keys, 1 values, 2 found */
        void *values_out = lower_bound ? d_out[1] : d_out[0];
        void *keys_out = lower_bound ? d_out[0] : NULL;
        uint8_t *found_out = (uint8_t *)(lower_bound ? d_out[2] : d_out[1]);
        e = ntg_launch_search_partitioned(v, &c->plan, c->table, lower_bound, part.keys, n, part.in_span,
                                          values_out ? scratch->slot_values : NULL,
                                          keys_out ? scratch->slot_keys : NULL, scratch->slot_found, false, stream);
        const psa_known_answers known = known_answers(g, &c->plan, lower_bound);
        if (e == cudaSuccess)
            e = psa_restore(v->key_bits, &part, scratch->slot_values, keys_out ? scratch->slot_keys : NULL,
                            scratch->slot_found, values_out, keys_out, found_out, &known, stream);
        return e;
    }
    switch (c->op) {
    case OP_LOOKUP:
        return ntg_launch_lookup(v, &g->cut, c->group_size, d_in[0], NULL, n, d_out[0], (uint8_t *)d_out[1], positions,
                                 signal, stream);
    case OP_LOWER_BOUND:
        return ntg_launch_lower_bound(v, &g->cut, c->group_size, d_in[0], NULL, n, d_out[0], d_out[1], (uint8_t *)d_out[2],
                                      signal, stream);
    default:
        return ntg_launch_range_count(v, c->group_size, d_in[0], d_in[1], n, (uint64_t *)d_out[0], stream);
    }
}

/* The PSA scratch of device-array windows from the tree: the window cut until it takes at most
 * 1 / PSA_DEVICE_MEMORY_SHARE of the free GPU memory; PSA is left out (auto) or the call fails (on)
 * when even PSA_MIN_DEVICE_WINDOW queries do not fit. */
static harmonia_status prepare_device_psa(harmonia_tree *tree, hm_call *c)
{
    const hm_gpu *g = tree->gpu;
    /* the lane's scratch already serves windows of c->window: nothing to allocate, so no need to ask
     * the driver what is free (cudaMemGetInfo costs tens of microseconds a call, before the first
     * launch: bench/NOTES.md, "What the library's sorted call adds") */
    if (g->lanes_psa && g->window >= c->window && g->lanes[0].psa_scratch)
        return HARMONIA_OK;
    size_t free_bytes = 0, total = 0;
    HM_CUDA(tree, cudaMemGetInfo(&free_bytes, &total));
    free_bytes += tree->gpu->lane_bytes; /* the lanes' own buffers may be given back */
    for (;;) {
        size_t bytes = 0;
        HM_CUDA(tree, psa_scratch_bytes(tree->kr.key_bits, c->window, &bytes));
        if (bytes <= free_bytes / PSA_DEVICE_MEMORY_SHARE || c->window <= PSA_MIN_DEVICE_WINDOW)
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

/* The window of PSA windows in the caller's workspace: the largest (halving from c->window) whose
 * scratch fits. PSA is left out (auto) or the call fails (on) when not even PSA_MIN_WINDOW fits. */
static harmonia_status fit_workspace(harmonia_tree *tree, hm_call *c)
{
    for (;;) {
        size_t bytes = 0;
        HM_CUDA(tree, psa_scratch_bytes(tree->kr.key_bits, c->window, &bytes));
        if (bytes <= c->workspace_bytes)
            return HARMONIA_OK;
        if (c->window <= PSA_MIN_WINDOW)
            break;
        c->window /= 2;
    }
    if (c->psa_option < 0) {
        c->psa = false;
        return HARMONIA_OK;
    }
    size_t needed = 0;
    HM_CUDA(tree, psa_scratch_bytes(tree->kr.key_bits, PSA_MIN_WINDOW, &needed));
    return hm_fail(tree, HARMONIA_ERR_INVALID,
                   "%s: the workspace of %zu bytes is too small for PSA (at least %zu bytes; "
                   "harmonia_query_workspace_bytes says how much a call needs)",
                   c->name, c->workspace_bytes, needed);
}

/* The device arrays of the call's window from query `start` on (NULL where the call has none), and
 * its queries. */
static uint32_t window_arrays(const hm_call *c, uint64_t start, uint32_t window, void **d_in, void **d_out)
{
    for (int k = 0; k < HM_LANE_IN; k++)
        d_in[k] = k < c->n_in ? (char *)c->in[k] + start * c->in_elem[k] : NULL;
    for (int k = 0; k < HM_LANE_OUT; k++)
        d_out[k] = c->out[k] ? (char *)c->out[k] + start * c->out_elem[k] : NULL;
    return (uint32_t)(c->count - start < window ? c->count - start : window);
}

/* --- device arrays: in place, queued on the caller's stream ---------------------------------------
 * Called with the tree locked; queues the call's work on c->stream (forking to the tree's lanes and
 * joining back when the tree's scratch serves PSA windows) and returns without waiting. On an error
 * it waits for the streams involved, so that nothing goes on writing the caller's arrays. */
static harmonia_status run_device(harmonia_tree *tree, hm_call *c)
{
    hm_gpu *g = tree->gpu;
    harmonia_status st = HARMONIA_OK;
    if (c->psa)
        st = c->workspace ? fit_workspace(tree, c) : prepare_device_psa(tree, c);
    if (st == HARMONIA_OK && c->psa && !c->psa_descent) /* (the descent path's plan needs no bucket table) */
        st = hm_gpu_prepare_table(tree, &c->plan, &c->table);
    if (st != HARMONIA_OK)
        return st;
    /* a synchronous point query that runs as one launch waits for its completion signal, if it gets
     * one (before the wait below: the signal's counters may be new, queued on the tree's stream) */
    if (!c->async && !c->psa && c->count <= HM_SIGNAL_MAX_BATCH && c->op != OP_RANGE_COUNT)
        c->signalled = hm_gpu_signal_begin(tree, c->stream, &c->slot, &c->signal);
    cudaError_t e = hm_gpu_wait_ready(g, c->stream); /* a new table or scratch, queued on the tree's stream */
    if (e != cudaSuccess) /* (nothing of the call is queued yet) */
        return hm_gpu_fail(tree, e, "ordering the call after the tree's stream");
    if ((!c->psa && c->count <= (1u << 30)) || (c->psa && c->workspace)) {
        /* on the caller's stream alone: one launch (no partition: small batches pay no pipeline
         * bookkeeping), or the PSA windows one after another in the caller's workspace */
        const uint32_t window = c->psa ? c->window : (uint32_t)c->count;
        const psa_scratch scratch = c->psa ? psa_scratch_carve(c->workspace, c->workspace_bytes, tree->kr.key_bits,
                                                               window)
                                           : psa_scratch{};
        for (uint64_t start = 0; start < c->count && e == cudaSuccess; start += window) {
            void *d_in[HM_LANE_IN], *d_out[HM_LANE_OUT];
            const uint32_t n = window_arrays(c, start, window, d_in, d_out);
            e = run_window(g, c, c->stream, &scratch, d_in, d_out, n, start);
        }
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
    st = hm_gpu_prepare_lanes(tree, c->psa ? window : PSA_MIN_WINDOW, false, false, lanes);
    if (st != HARMONIA_OK)
        return st;
    if (!g->fork)
        HM_CUDA(tree, cudaEventCreateWithFlags(&g->fork, cudaEventDisableTiming));
    e = hm_gpu_wait_ready(g, c->stream); /* the lanes' buffers too, through the fork */
    if (e == cudaSuccess)
        e = cudaEventRecord(g->fork, c->stream);
    for (uint32_t i = 0; i < lanes && e == cudaSuccess; i++)
        e = cudaStreamWaitEvent(g->lanes[i].stream, g->fork, 0);
    for (uint64_t w = 0; w < windows && e == cudaSuccess; w++) {
        hm_lane *lane = &g->lanes[w % lanes];
        const uint64_t start = w * window;
        void *d_in[HM_LANE_IN], *d_out[HM_LANE_OUT];
        const uint32_t n = window_arrays(c, start, window, d_in, d_out);
        const psa_scratch scratch = c->psa ? psa_scratch_carve(lane->psa_scratch, lane->psa_scratch_bytes, tree->kr.key_bits,
                                                               g->window)
                                           : psa_scratch{};
        e = run_window(g, c, lane->stream, &scratch, d_in, d_out, n, start);
    }
    for (uint32_t i = 0; i < lanes && e == cudaSuccess; i++) {
        e = cudaEventRecord(g->lanes[i].done, g->lanes[i].stream);
        if (e == cudaSuccess)
            e = cudaStreamWaitEvent(c->stream, g->lanes[i].done, 0);
    }
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

/* Copies a finished window's results from the lane's pinned buffers to the caller's arrays. */
static harmonia_status finish_lane_window(harmonia_tree *tree, const hm_call *c, hm_lane *lane, const bool *pinned_out)
{
    if (!lane->pending)
        return HARMONIA_OK;
    lane->pending = false;
    HM_CUDA(tree, cudaEventSynchronize(lane->done));
    for (int k = 0; k < HM_LANE_OUT; k++)
        if (c->out[k] && !pinned_out[k])
            kr_parallel_copy((char *)c->out[k] + lane->pending_start * c->out_elem[k], lane->h_out[k],
                          lane->pending_count * c->out_elem[k], c->threads);
    return HARMONIA_OK;
}

/* Called with the tree locked, for the whole call: the lanes' staging is the tree's. Returns with
 * the results in place. */
static harmonia_status run_host(harmonia_tree *tree, hm_call *c)
{
    hm_gpu *g = tree->gpu;
    const uint32_t window = c->window;
    const uint64_t windows = (c->count + window - 1) / window;
    const uint32_t lanes = windows < c->lanes ? (uint32_t)windows : c->lanes;
    harmonia_status st = hm_gpu_prepare_lanes(tree, window, true, c->psa, lanes);
    if (st == HARMONIA_OK && c->psa) /* built once per tree version and plan on the tree's stream */
        st = hm_gpu_prepare_table(tree, &c->plan, &c->table);
    if (st != HARMONIA_OK)
        return st;
    cudaError_t e = cudaSuccess;
    for (uint32_t i = 0; i < lanes && e == cudaSuccess; i++) /* the lanes wait for the tree's stream */
        e = hm_gpu_wait_ready(g, g->lanes[i].stream);
    if (e != cudaSuccess)
        return hm_gpu_fail(tree, e, "the host-array query pipeline");
    /* arrays the caller pinned are copied to and from directly */
    bool pinned_in[HM_LANE_IN] = {0}, pinned_out[HM_LANE_OUT] = {0};
    for (int k = 0; k < c->n_in; k++)
        pinned_in[k] = hm_is_pinned_host(c->in[k]);
    for (int k = 0; k < HM_LANE_OUT; k++)
        pinned_out[k] = c->out[k] && hm_is_pinned_host(c->out[k]);
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
                kr_parallel_copy(lane->h_in[k], src, n * c->in_elem[k], c->threads);
                src = lane->h_in[k];
            }
            e = cudaMemcpyAsync(lane->d_in[k], src, n * c->in_elem[k], cudaMemcpyHostToDevice, lane->stream);
        }
        const psa_scratch scratch = c->psa ? psa_scratch_carve(lane->psa_scratch, lane->psa_scratch_bytes, tree->kr.key_bits,
                                                               g->window)
                                           : psa_scratch{};
        if (e == cudaSuccess)
            e = run_window(g, c, lane->stream, &scratch, lane->d_in, lane->d_out, n, start);
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
    harmonia_status st = choose_group_size(tree, config, 0, false, false, &g);
    if (st != HARMONIA_OK)
        return st;
    if ((unsigned)config->memory > HARMONIA_MEMORY_DEVICE)
        return hm_fail(tree, HARMONIA_ERR_INVALID, "unknown memory kind %d", (int)config->memory);
    if (config->pipeline_depth > HM_LANES)
        return hm_fail(tree, HARMONIA_ERR_INVALID, "pipeline depth %" PRIu32 ": use 1 to %d",
                       config->pipeline_depth, HM_LANES);
    if (config->workspace && config->workspace_bytes == 0)
        return hm_fail(tree, HARMONIA_ERR_INVALID, "a workspace of 0 bytes: give its size, or no workspace");
    return HARMONIA_OK;
}

/* Every further array of a call must live where its queries do. */
static harmonia_status check_array(harmonia_tree *tree, const hm_call *c, const void *array, const char *name)
{
    if (array && c->count > 0 && (device_residency(array, tree->gpu->device) == 1) != c->device_memory)
        return hm_fail(tree, HARMONIA_ERR_INVALID, "%s: the ranges are in %s memory but %s is not", c->name,
                       c->device_memory ? "the tree's device" : "host", name);
    return HARMONIA_OK;
}

/* After a device-array call is queued: the tree's stream ordered after it (an asynchronous call:
 * query_done; a synchronous one: a slot of the calls in flight, gpu_tree.cu, held until its stream
 * is done, or query_done when none is free), the lock given back, and a synchronous call waits for
 * its stream (alone). */
static harmonia_status finish_device_call(harmonia_tree *tree, hm_call *c, hm_device_scope *scope,
                                          harmonia_status st)
{
    int slot = c->signalled ? c->slot : -1; /* (a signalled call took its slot before the launch) */
    if (st == HARMONIA_OK && c->count > 0) {
        if (!c->async && slot < 0)
            slot = hm_gpu_call_begin(tree, c->stream);
        cudaError_t e = slot < 0 ? hm_gpu_order_after(tree->gpu, c->stream) : cudaSuccess;
        if (e != cudaSuccess)
            st = hm_gpu_fail(tree, e, "ordering the tree's stream after the call");
    }
    pthread_mutex_unlock(&tree->gpu_lock);
    if (st == HARMONIA_OK && !c->async && c->count > 0) {
        cudaError_t e = c->signalled ? hm_gpu_signal_wait(tree, c->stream, c->slot, &c->signal)
                                     : cudaStreamSynchronize(c->stream);
        if (e != cudaSuccess)
            st = hm_gpu_fail(tree, e, c->name);
    } else if (c->signalled) {
        hm_gpu_signals_off(tree); /* its launch may not have run, or run only in part */
    }
    if (slot >= 0)
        hm_gpu_call_end(tree, slot);
    hm_device_leave(scope);
    return st;
}

static harmonia_status run_call(harmonia_tree *tree, const harmonia_query_config *config, hm_call *c)
{
    harmonia_status st = check_config(tree, config);
    if (st != HARMONIA_OK)
        return st;
    hm_device_scope scope;
    st = hm_gpu_enter(tree, &scope);
    if (st != HARMONIA_OK)
        return st;
    st = setup_call(tree, config, c);
    if (st == HARMONIA_OK && c->device_memory) {
        if (c->count > 0)
            st = run_device(tree, c);
        return finish_device_call(tree, c, &scope, st);
    }
    if (st == HARMONIA_OK && c->count > 0)
        st = run_host(tree, c);
    hm_gpu_leave(tree, &scope);
    return st;
}

/* --- the operations ----------------------------------------------------------------------------- */

extern "C" harmonia_status hm_gpu_lookup(harmonia_tree *tree, const harmonia_query_config *config, bool async,
                                         const void *queries, uint64_t count, void *values_out,
                                         uint8_t *found_out, void *positions_out, bool positions32)
{
    const size_t kb = tree->kr.key_bits / 8;
    hm_call c;
    memset(&c, 0, sizeof c);
    c.name = !positions_out ? (async ? "harmonia_lookup_async" : "harmonia_lookup")
             : positions32  ? (async ? "harmonia_lookup_unordered32_async" : "harmonia_lookup_unordered32")
                            : (async ? "harmonia_lookup_unordered_async" : "harmonia_lookup_unordered");
    c.op = OP_LOOKUP;
    c.in[0] = queries;
    c.in_elem[0] = kb;
    c.n_in = 1;
    c.out[0] = values_out;
    c.out_elem[0] = kb;
    c.out[1] = found_out;
    c.out_elem[1] = 1;
    c.out[2] = positions_out;
    c.out_elem[2] = positions32 ? sizeof(uint32_t) : sizeof(uint64_t);
    c.unordered = positions_out != NULL;
    c.positions32 = positions32;
    c.count = count;
    c.async = async;
    return run_call(tree, config, &c);
}

extern "C" harmonia_status hm_gpu_lower_bound(harmonia_tree *tree, const harmonia_query_config *config, bool async,
                                              const void *queries, uint64_t count, void *keys_out,
                                              void *values_out, uint8_t *found_out)
{
    const size_t kb = tree->kr.key_bits / 8;
    hm_call c;
    memset(&c, 0, sizeof c);
    c.name = async ? "harmonia_lower_bound_async" : "harmonia_lower_bound";
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
    c.async = async;
    return run_call(tree, config, &c);
}

extern "C" harmonia_status hm_gpu_range_count(harmonia_tree *tree, const harmonia_query_config *config, bool async,
                                              const void *lo, const void *hi, uint64_t count,
                                              uint64_t *counts_out)
{
    const size_t kb = tree->kr.key_bits / 8;
    hm_call c;
    memset(&c, 0, sizeof c);
    c.name = async ? "harmonia_range_count_async" : "harmonia_range_count";
    c.op = OP_RANGE_COUNT;
    c.in[0] = lo;
    c.in[1] = hi;
    c.in_elem[0] = c.in_elem[1] = kb;
    c.n_in = 2;
    c.out[0] = counts_out;
    c.out_elem[0] = sizeof(uint64_t);
    c.count = count;
    c.async = async;
    return run_call(tree, config, &c);
}

/* Range offsets on device arrays: counts into scratch with a trailing zero, then CUB's exclusive
 * scan into offsets, on the caller's stream. The scratch is the caller's workspace or the tree's,
 * whose users on any stream are ordered among themselves by the event scan_done. */
static harmonia_status offsets_on_device(harmonia_tree *tree, hm_call *c, const void *lo, const void *hi,
                                         uint64_t *offsets)
{
    hm_gpu *g = tree->gpu;
    size_t bytes = 0, scan_bytes = 0;
    HM_CUDA(tree, hm_scan_scratch_bytes(c->count, &bytes, &scan_bytes));
    void *block = c->workspace;
    if (block && c->workspace_bytes < bytes)
        return hm_fail(tree, HARMONIA_ERR_INVALID,
                       "%s: the workspace of %zu bytes is too small for the offsets of %" PRIu64 " ranges (%zu bytes; "
                       "harmonia_query_workspace_bytes says how much)", c->name, c->workspace_bytes, c->count, bytes);
    if (!block) {
        harmonia_status st = hm_gpu_prepare_scan(tree, c->count);
        if (st != HARMONIA_OK)
            return st;
        block = g->scan_scratch;
    }
    uint64_t *counts = (uint64_t *)(((uintptr_t)block + 255) & ~(uintptr_t)255);
    void *scan = (char *)counts + (((c->count + 1) * sizeof(uint64_t) + 255) & ~(size_t)255);
    cudaError_t e = hm_gpu_wait_ready(g, c->stream);
    /* the tree's scratch: after its previous user on any stream (the event is re-recorded below) */
    if (e == cudaSuccess && !c->workspace && g->scan_used)
        e = cudaStreamWaitEvent(c->stream, g->scan_done, 0);
    if (e == cudaSuccess)
        e = cudaMemsetAsync(counts + c->count, 0, sizeof(uint64_t), c->stream);
    if (e == cudaSuccess)
        e = ntg_launch_range_count(&g->view, c->group_size, lo, hi, c->count, counts, c->stream);
    if (e == cudaSuccess)
        e = psa_exclusive_scan(scan, scan_bytes, counts, offsets, c->count, c->stream);
    if (e == cudaSuccess && !c->workspace) {
        if (!g->scan_done)
            e = cudaEventCreateWithFlags(&g->scan_done, cudaEventDisableTiming);
        if (e == cudaSuccess)
            e = cudaEventRecord(g->scan_done, c->stream);
        g->scan_used = e == cudaSuccess;
    }
    if (e != cudaSuccess) {
        cudaStreamSynchronize(c->stream);
        return hm_gpu_fail(tree, e, "range offsets on device arrays");
    }
    return HARMONIA_OK;
}

extern "C" harmonia_status hm_gpu_range_offsets(harmonia_tree *tree, const harmonia_query_config *config, bool async,
                                                const void *lo, const void *hi, uint64_t count,
                                                uint64_t *offsets)
{
    harmonia_status st = check_config(tree, config);
    if (st != HARMONIA_OK)
        return st;
    hm_device_scope scope;
    st = hm_gpu_enter(tree, &scope);
    if (st != HARMONIA_OK)
        return st;
    const size_t kb = tree->kr.key_bits / 8;
    hm_call c;
    memset(&c, 0, sizeof c);
    c.name = async ? "harmonia_range_collect_async" : "harmonia_range_collect";
    c.op = OP_RANGE_COUNT;
    c.in[0] = lo;
    c.in[1] = hi;
    c.in_elem[0] = c.in_elem[1] = kb;
    c.n_in = 2;
    c.out_elem[0] = sizeof(uint64_t);
    c.count = count;
    c.async = async;
    st = setup_call(tree, config, &c);
    if (st == HARMONIA_OK)
        st = check_array(tree, &c, offsets, "offsets");
    if (st == HARMONIA_OK && c.device_memory) {
        st = offsets_on_device(tree, &c, lo, hi, offsets);
        c.count = c.count ? c.count : 1; /* count 0 still wrote offsets[0]: wait for it when synchronous */
        return finish_device_call(tree, &c, &scope, st);
    }
    if (st == HARMONIA_OK) {
        /* host arrays: counts streamed into offsets[1 ..], then a parallel scan on the host */
        c.out[0] = offsets + 1;
        if (count > 0)
            st = run_host(tree, &c);
        if (st == HARMONIA_OK) {
            offsets[0] = 0;
            kr_inclusive_scan(offsets + 1, count, config->threads);
        }
    }
    hm_gpu_leave(tree, &scope);
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
    if (window < PSA_MIN_WINDOW)
        window = PSA_MIN_WINDOW;
    if (window > HM_COLLECT_MAX_PAIRS)
        window = HM_COLLECT_MAX_PAIRS;
    harmonia_status st = hm_gpu_prepare_lanes(tree, (uint32_t)window, true, false, 1);
    if (st != HARMONIA_OK)
        return st;
    hm_lane *lane = &g->lanes[0];
    HM_CUDA(tree, hm_gpu_wait_ready(g, lane->stream));
    const uint64_t budget = window;
    const uint64_t max_pieces = window - 1;
    const uint64_t max_piece_pairs = HM_COLLECT_PIECE_PAIRS;
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
            kr_parallel_copy((char *)keys_out + chunk_start * kb, lane->h_out[0], pairs * kb, c->threads);
        if (values_out)
            kr_parallel_copy((char *)values_out + chunk_start * kb, lane->h_out[1], pairs * kb, c->threads);
    }
    return HARMONIA_OK;
}

extern "C" harmonia_status hm_gpu_range_collect(harmonia_tree *tree, const harmonia_query_config *config, bool async,
                                                const void *lo, uint64_t count, const uint64_t *offsets,
                                                void *keys_out, void *values_out)
{
    harmonia_status st = check_config(tree, config);
    if (st != HARMONIA_OK)
        return st;
    hm_device_scope scope;
    st = hm_gpu_enter(tree, &scope);
    if (st != HARMONIA_OK)
        return st;
    const size_t kb = tree->kr.key_bits / 8;
    hm_call c;
    memset(&c, 0, sizeof c);
    c.name = async ? "harmonia_range_collect_async" : "harmonia_range_collect";
    c.op = OP_RANGE_COUNT;
    c.in[0] = lo;
    c.in_elem[0] = kb;
    c.n_in = 1;
    c.out[0] = keys_out ? keys_out : values_out;
    c.out_elem[0] = kb;
    c.count = count;
    c.async = async;
    st = setup_call(tree, config, &c);
    if (st == HARMONIA_OK)
        st = check_array(tree, &c, offsets, "offsets");
    if (st == HARMONIA_OK)
        st = check_array(tree, &c, keys_out, "keys_out");
    if (st == HARMONIA_OK)
        st = check_array(tree, &c, values_out, "values_out");
    if (st != HARMONIA_OK || count == 0) {
        hm_gpu_leave(tree, &scope);
        return st;
    }
    if (!c.device_memory) {
        if (!config->group_size) /* G from the ranges' mean length (ntg_policy.h) */
            c.group_size = ntg_collect_group_size(offsets[count] >= offsets[0] ? offsets[count] - offsets[0] : 0, count,
                                                  c.group_size, tree->kr.fanout);
        st = collect_host(tree, &c, lo, offsets, keys_out, values_out);
        hm_gpu_leave(tree, &scope);
        return st;
    }
    hm_gpu *g = tree->gpu;
    cudaError_t e = hm_gpu_wait_ready(g, c.stream);
    /* no G in the config: the kernel picks it from the ranges' mean length, reading offsets[0] and
     * offsets[count] on the device (no read-back, no wait: synchronous and asynchronous alike) */
    if (e == cudaSuccess)
        e = config->group_size ? ntg_launch_range_collect(&g->view, c.group_size, lo, NULL, count, offsets, 0,
                                                          keys_out, values_out, c.stream)
                               : ntg_launch_range_collect_auto(&g->view, c.group_size, lo, count, offsets, keys_out,
                                                               values_out, c.stream);
    if (e != cudaSuccess) {
        cudaStreamSynchronize(c.stream);
        st = hm_gpu_fail(tree, e, "range collect on device arrays");
    }
    return finish_device_call(tree, &c, &scope, st);
}

/* --- what a call needs -------------------------------------------------------------------------- */

extern "C" harmonia_status hm_gpu_workspace_bytes(harmonia_tree *tree, const harmonia_query_config *config,
                                                  harmonia_query_kind kind, uint64_t count, size_t *device_bytes,
                                                  size_t *pinned_bytes)
{
    *device_bytes = *pinned_bytes = 0;
    harmonia_status st = check_config(tree, config);
    if (st != HARMONIA_OK)
        return st;
    if (!hm_gpu_usable())
        return hm_fail(tree, HARMONIA_ERR_NO_DEVICE, "harmonia_query_workspace_bytes: no usable GPU");
    /* on the tree's device (its copy's, else its setting or the current one), without making a copy */
    pthread_mutex_lock(&tree->gpu_lock);
    int device = 0;
    uint64_t l2 = 0;
    cudaError_t e = cudaSuccess;
    if (tree->gpu) {
        device = tree->gpu->device;
        l2 = tree->gpu->l2_bytes;
    } else if (tree->device != HARMONIA_DEVICE_CURRENT) {
        device = tree->device;
    } else {
        e = cudaGetDevice(&device);
    }
    pthread_mutex_unlock(&tree->gpu_lock);
    hm_device_scope scope;
    if (e == cudaSuccess)
        e = hm_device_enter(&scope, device);
    if (e != cudaSuccess)
        return hm_gpu_fail(tree, e, "harmonia_query_workspace_bytes: selecting the tree's device");
    if (!l2) {
        int bytes = 0;
        if (cudaDeviceGetAttribute(&bytes, cudaDevAttrL2CacheSize, device) == cudaSuccess && bytes > 0)
            l2 = (uint64_t)bytes;
        cudaGetLastError();
    }
    const uint32_t key_bits = tree->kr.key_bits;
    const bool host = config->memory == HARMONIA_MEMORY_HOST;
    const bool point = kind == HARMONIA_QUERY_LOOKUP || kind == HARMONIA_QUERY_LOOKUP_UNORDERED ||
                       kind == HARMONIA_QUERY_LOWER_BOUND;
    /* the window, as setup_call takes it */
    uint64_t window = config->psa_window ? config->psa_window
                      : host            ? psa_default_window(key_bits, l2 ? l2 : 8u << 20)
                                        : PSA_MAX_WINDOW;
    if (window > count)
        window = count;
    if (window < PSA_MIN_WINDOW)
        window = PSA_MIN_WINDOW;
    if (window > PSA_MAX_WINDOW)
        window = PSA_MAX_WINDOW;
    /* the staged search's plan, or (lookups of device arrays) the descent path's: the same scratch */
    const bool unordered = kind == HARMONIA_QUERY_LOOKUP_UNORDERED;
    const bool sorted = point && !host && config->psa < 0 &&
                        takes_descent_path(tree, kind == HARMONIA_QUERY_LOWER_BOUND, unordered, window);
    const bool psa = point && tree->kr.n_keys > 0 && count > 0 &&
                     (config->psa > 0 || (config->psa < 0 && psa_pays(window, tree->kr.n_leaves)) || sorted);
    size_t psa_bytes = 0;
    if (psa)
        e = psa_scratch_bytes(key_bits, (uint32_t)window, &psa_bytes);
    if (e == cudaSuccess && host && count > 0) {
        if (kind == HARMONIA_QUERY_RANGE_COLLECT) { /* one lane, sized by the pairs (unknown here: the most) */
            *pinned_bytes = (size_t)HM_COLLECT_MAX_PAIRS * 8 * (HM_LANE_IN + HM_LANE_OUT);
            *device_bytes = *pinned_bytes;
        } else {
            const uint64_t windows = (count + window - 1) / window;
            const uint32_t depth = config->pipeline_depth ? config->pipeline_depth : HM_LANES;
            const uint64_t lanes = windows < depth ? windows : depth;
            *pinned_bytes = (size_t)(lanes * window * 8 * (HM_LANE_IN + HM_LANE_OUT));
            *device_bytes = *pinned_bytes + (size_t)lanes * psa_bytes;
        }
    } else if (e == cudaSuccess && !host) {
        if (psa) {
            *device_bytes = psa_bytes;
        } else if (kind == HARMONIA_QUERY_RANGE_OFFSETS) {
            size_t scan = 0;
            e = hm_scan_scratch_bytes(count, device_bytes, &scan);
        }
    }
    hm_device_leave(&scope);
    if (e != cudaSuccess)
        return hm_gpu_fail(tree, e, "harmonia_query_workspace_bytes");
    return HARMONIA_OK;
}
