/* gpu_tree.cu — the device copy of a tree: upload (with a memory check that names the bytes needed
 * and free), release, the __constant__ part and which tree owns it, the pipeline lanes and their
 * buffers, and the translation of CUDA errors into status codes. The pipelines are gpu_query.cu. */
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harmonia/gpu_internal.h"

extern "C" {
#include "prefix_sum/prefix_sum.h"
}

/* One GPU lock per process: the __constant__ array is one per process, so queries of different
 * trees take turns. */
static pthread_mutex_t gpu_lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t constant_owner = 0; /* upload_id whose entries __constant__ memory holds */
static uint64_t next_upload_id = 1;

harmonia_status hm_gpu_fail(harmonia_tree *tree, cudaError_t e, const char *what)
{
    cudaGetLastError(); /* clear a non-sticky error so later calls can proceed */
    if (e == cudaErrorMemoryAllocation) {
        size_t free_bytes = 0, total = 0;
        cudaMemGetInfo(&free_bytes, &total);
        return hm_fail(tree, HARMONIA_ERR_DEVICE_MEMORY, "out of GPU memory in %s (%zu bytes free)", what,
                       free_bytes);
    }
    if (e == cudaErrorNoDevice || e == cudaErrorInsufficientDriver)
        return hm_fail(tree, HARMONIA_ERR_NO_DEVICE, "%s: %s", what, cudaGetErrorString(e));
    return hm_fail(tree, HARMONIA_ERR_DEVICE, "%s: %s", what, cudaGetErrorString(e));
}

extern "C" bool hm_gpu_usable(void)
{
    static int usable = -1;
    if (usable < 0) {
        int count = 0;
        usable = cudaGetDeviceCount(&count) == cudaSuccess && count > 0;
        cudaGetLastError();
    }
    return usable == 1;
}

uint32_t hm_gpu_default_window(uint32_t key_bits)
{
    int l2 = 0;
    if (cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, 0) != cudaSuccess || l2 <= 0)
        l2 = 8 << 20;
    return (uint32_t)psa_default_window(key_bits, (uint64_t)l2);
}

static void free_lanes(hm_gpu *g)
{
    for (int i = 0; i < HM_LANES; i++) {
        hm_lane *lane = &g->lanes[i];
        if (lane->stream)
            cudaStreamSynchronize(lane->stream);
        for (int k = 0; k < HM_LANE_IN; k++) {
            cudaFree(lane->d_in[k]);
            cudaFreeHost(lane->h_in[k]);
        }
        for (int k = 0; k < HM_LANE_OUT; k++) {
            cudaFree(lane->d_out[k]);
            cudaFreeHost(lane->h_out[k]);
        }
        cudaFree(lane->psa_workspace);
        cudaFree(lane->d_slot_values);
        cudaFree(lane->d_slot_keys);
        cudaFree(lane->d_slot_found);
        if (lane->done)
            cudaEventDestroy(lane->done);
        if (lane->stream)
            cudaStreamDestroy(lane->stream);
        memset(lane, 0, sizeof *lane);
    }
    cudaFree(g->scan_temp);
    g->scan_temp = NULL;
    g->scan_temp_bytes = 0;
    cudaFree(g->scan_counts);
    g->scan_counts = NULL;
    g->scan_capacity = 0;
    if (g->fork)
        cudaEventDestroy(g->fork);
    g->fork = NULL;
    g->window = 0;
    g->lanes_staging = g->lanes_psa = false;
    g->work_bytes = 0;
    cudaGetLastError();
}

static void free_device_copy(hm_gpu *g)
{
    free_lanes(g);
    cudaFree(g->d_bucket_table);
    g->d_bucket_table = NULL;
    g->table_valid = false;
    cudaFree(g->d_keys);
    cudaFree(g->d_values);
    cudaFree(g->d_first_child);
    cudaFree(g->d_leaf_rank);
    free(g->h_constant);
    cudaGetLastError();
}

extern "C" void hm_gpu_release(harmonia_tree *tree)
{
    if (!tree || !tree->gpu)
        return;
    pthread_mutex_lock(&gpu_lock);
    free_device_copy(tree->gpu);
    if (constant_owner == tree->gpu->upload_id)
        constant_owner = 0;
    free(tree->gpu);
    tree->gpu = NULL;
    pthread_mutex_unlock(&gpu_lock);
}

/* The host copy of the __constant__ part for the tree's cut (hm_constant_entries), made when the
 * device copy has none or a different cut; a changed part is loaded again by hm_gpu_enter. Called
 * under the GPU lock. NO_MEMORY leaves the device copy's part as it was. */
static harmonia_status set_constant_part(harmonia_tree *tree, hm_gpu *g)
{
    uint32_t levels = 0;
    const uint32_t entries = (uint32_t)hm_constant_entries(tree, &levels);
    if (g->h_constant && entries == g->constant_entries)
        return HARMONIA_OK;
    uint32_t *part = (uint32_t *)malloc((entries + 1) * sizeof(uint32_t));
    if (!part)
        return hm_fail(tree, HARMONIA_ERR_NO_MEMORY, "out of memory copying the constant part");
    memcpy(part, tree->kr.first_child, entries * sizeof(uint32_t));
    free(g->h_constant);
    g->h_constant = part;
    g->constant_entries = entries;
    g->view.constant_entries = entries;
    if (constant_owner == g->upload_id)
        constant_owner = 0; /* loaded again by hm_gpu_enter, after the work in flight */
    return HARMONIA_OK;
}

static harmonia_status upload_locked(harmonia_tree *tree)
{
    if (!hm_gpu_usable())
        return hm_fail(tree, HARMONIA_ERR_NO_DEVICE, "no usable GPU: %s",
                       harmonia_device_probe(NULL) == HARMONIA_OK ? "device lost" : harmonia_last_error(NULL));
    const kr_tree *t = &tree->kr;
    const size_t kb = t->key_bits / 8;
    const uint64_t key_bytes = kr_key_slots(t) * kb, value_bytes = t->n_leaves * t->leaf_size * kb;
    const uint64_t fc_bytes = (t->n_internal + 1) * sizeof(uint32_t);
    const uint64_t rank_bytes = (t->n_leaves + 1) * sizeof(uint64_t);
    const uint64_t needed = key_bytes + value_bytes + fc_bytes + rank_bytes;

    /* the old copy goes first: its memory may be what the new one needs */
    if (tree->gpu) {
        free_device_copy(tree->gpu);
        if (constant_owner == tree->gpu->upload_id)
            constant_owner = 0;
        free(tree->gpu);
        tree->gpu = NULL;
    }
    size_t free_bytes = 0, total_bytes = 0;
    HM_CUDA(tree, cudaMemGetInfo(&free_bytes, &total_bytes));
    if (needed > free_bytes)
        return hm_fail(tree, HARMONIA_ERR_DEVICE_MEMORY,
                       "uploading the tree needs %" PRIu64 " bytes of GPU memory; %zu bytes are free (of %zu)",
                       needed, free_bytes, total_bytes);
    hm_gpu *g = (hm_gpu *)calloc(1, sizeof(hm_gpu));
    if (!g)
        return hm_fail(tree, HARMONIA_ERR_NO_MEMORY, "out of memory allocating the device copy's handle");
    cudaError_t e = cudaSuccess;
    if (e == cudaSuccess) e = cudaMalloc(&g->d_keys, key_bytes);
    if (e == cudaSuccess) e = cudaMalloc(&g->d_values, value_bytes);
    if (e == cudaSuccess) e = cudaMalloc((void **)&g->d_first_child, fc_bytes);
    if (e == cudaSuccess) e = cudaMalloc((void **)&g->d_leaf_rank, rank_bytes);
    if (e == cudaSuccess) e = cudaMemcpy(g->d_keys, t->keys, key_bytes, cudaMemcpyHostToDevice);
    if (e == cudaSuccess) e = cudaMemcpy(g->d_values, t->leaf_values, value_bytes, cudaMemcpyHostToDevice);
    if (e == cudaSuccess) e = cudaMemcpy(g->d_first_child, t->first_child, fc_bytes, cudaMemcpyHostToDevice);
    if (e == cudaSuccess) e = cudaMemcpy(g->d_leaf_rank, t->leaf_rank, rank_bytes, cudaMemcpyHostToDevice);
    if (e != cudaSuccess) {
        free_device_copy(g);
        free(g);
        if (e == cudaErrorMemoryAllocation) {
            cudaGetLastError();
            return hm_fail(tree, HARMONIA_ERR_DEVICE_MEMORY,
                           "uploading the tree needs %" PRIu64 " bytes of GPU memory; the allocation failed "
                           "with %zu bytes free", needed, free_bytes);
        }
        return hm_gpu_fail(tree, e, "uploading the tree");
    }
    if (set_constant_part(tree, g) != HARMONIA_OK) {
        free_device_copy(g);
        free(g);
        return HARMONIA_ERR_NO_MEMORY;
    }
    ntg_view *v = &g->view;
    v->keys = g->d_keys;
    v->leaf_values = g->d_values;
    v->first_child = g->d_first_child;
    v->leaf_rank = g->d_leaf_rank;
    v->n_internal = t->n_internal;
    v->n_leaves = t->n_leaves;
    v->n_keys = t->n_keys;
    v->leaf_key_base = t->n_internal * t->fanout;
    v->constant_entries = g->constant_entries;
    v->key_bits = t->key_bits;
    v->fanout = t->fanout;
    v->leaf_size = t->leaf_size;
    v->height = t->height;
    v->max_key_present = kr_max_key_present(t);
    g->tree_bytes = needed;
    g->version = tree->version;
    g->upload_id = next_upload_id++;
    uint64_t min_key = 0, max_key = 0, ignored;
    g->min_value = 0;
    if (t->n_keys > 0) {
        kr_at_rank(t, 0, &min_key, &g->min_value);
        kr_at_rank(t, t->n_keys - 1, &max_key, &ignored);
    }
    g->plan = psa_make_plan(min_key, max_key, t->n_leaves, 0);
    tree->gpu = g;
    return HARMONIA_OK;
}

extern "C" harmonia_status hm_gpu_upload(harmonia_tree *tree)
{
    pthread_mutex_lock(&gpu_lock);
    harmonia_status st = upload_locked(tree);
    pthread_mutex_unlock(&gpu_lock);
    return st;
}

/* The parts of the view that an in-place update batch can change. */
static void refresh_view_counts(harmonia_tree *tree)
{
    const kr_tree *t = &tree->kr;
    hm_gpu *g = tree->gpu;
    g->view.n_keys = t->n_keys;
    g->view.max_key_present = kr_max_key_present(t);
    uint64_t min_key = 0, max_key = 0, ignored;
    g->min_value = 0;
    if (t->n_keys > 0) {
        kr_at_rank(t, 0, &min_key, &g->min_value);
        kr_at_rank(t, t->n_keys - 1, &max_key, &ignored);
    }
    g->plan = psa_make_plan(min_key, max_key, t->n_leaves, 0);
    g->table_valid = false; /* the leaves' first keys may have changed */
}

extern "C" harmonia_status hm_gpu_sync(harmonia_tree *tree, const uint64_t *dirty_leaves, uint64_t n_dirty,
                                       bool ranks_changed, uint64_t *bytes_out, bool *incremental_out)
{
    *bytes_out = 0;
    *incremental_out = false;
    pthread_mutex_lock(&gpu_lock);
    harmonia_status st = HARMONIA_OK;
    hm_gpu *g = tree->gpu;
    if (!g) {
        pthread_mutex_unlock(&gpu_lock);
        return HARMONIA_OK;
    }
    /* incremental only when the copy is exactly one version behind and has the same shape (a batch
     * applied with skip_upload in between, or a changed shape, needs everything again) */
    const bool same_shape = g->view.n_leaves == tree->kr.n_leaves && g->view.n_internal == tree->kr.n_internal;
    if (!dirty_leaves || g->version + 1 != tree->version || !same_shape) {
        st = upload_locked(tree);
        if (st == HARMONIA_OK)
            *bytes_out = tree->gpu->tree_bytes;
        pthread_mutex_unlock(&gpu_lock);
        return st;
    }
    /* incremental: queries wait on the lock, so none sees a half-synchronised copy */
    const kr_tree *t = &tree->kr;
    const size_t kb = t->key_bits / 8, leaf_bytes = (size_t)t->leaf_size * kb;
    const uint64_t leaf_base = kr_leaf_key_offset(t, 0);
    cudaError_t e = cudaDeviceSynchronize(); /* no query in flight reads what is overwritten */
    uint64_t bytes = 0;
    /* runs of dirty leaves, bridging gaps of up to SYNC_GAP clean leaves (they are copied unchanged);
     * with too many runs, one span from the first to the last dirty leaf */
    const uint64_t SYNC_GAP = 64, SYNC_MAX_RUNS = 1024;
    uint64_t runs = 0;
    for (uint64_t i = 0; i < n_dirty; i++)
        runs += i == 0 || dirty_leaves[i] > dirty_leaves[i - 1] + SYNC_GAP;
    for (uint64_t i = 0; i < n_dirty && e == cudaSuccess;) {
        uint64_t first = dirty_leaves[i], last = first;
        if (runs > SYNC_MAX_RUNS) {
            last = dirty_leaves[n_dirty - 1];
            i = n_dirty;
        } else {
            while (i + 1 < n_dirty && dirty_leaves[i + 1] <= last + SYNC_GAP)
                last = dirty_leaves[++i];
            i++;
        }
        const size_t span = (size_t)(last - first + 1) * leaf_bytes;
        e = cudaMemcpy((char *)g->d_keys + (leaf_base + first * t->leaf_size) * kb,
                       (const char *)t->keys + (leaf_base + first * t->leaf_size) * kb, span, cudaMemcpyHostToDevice);
        if (e == cudaSuccess)
            e = cudaMemcpy((char *)g->d_values + first * leaf_bytes, (const char *)t->leaf_values + first * leaf_bytes,
                           span, cudaMemcpyHostToDevice);
        bytes += 2 * span;
    }
    if (e == cudaSuccess && ranks_changed) {
        e = cudaMemcpy(g->d_leaf_rank, t->leaf_rank, (t->n_leaves + 1) * sizeof(uint64_t), cudaMemcpyHostToDevice);
        bytes += (t->n_leaves + 1) * sizeof(uint64_t);
    }
    if (e != cudaSuccess) {
        st = hm_gpu_fail(tree, e, "synchronising the device copy after an update");
    } else {
        refresh_view_counts(tree);
        g->version = tree->version;
        *bytes_out = bytes;
        *incremental_out = true;
    }
    pthread_mutex_unlock(&gpu_lock);
    return st;
}

harmonia_status hm_gpu_enter(harmonia_tree *tree)
{
    pthread_mutex_lock(&gpu_lock);
    harmonia_status st = HARMONIA_OK;
    if (!tree->gpu || tree->gpu->version != tree->version)
        st = upload_locked(tree);
    if (st == HARMONIA_OK) /* harmonia_set_constant_levels may have changed the cut since the upload */
        st = set_constant_part(tree, tree->gpu);
    if (st == HARMONIA_OK && constant_owner != tree->gpu->upload_id) {
        /* work of another tree may still read the old constants: wait for it first */
        cudaError_t e = cudaDeviceSynchronize();
        if (e == cudaSuccess)
            e = ntg_upload_constant(tree->gpu->h_constant, tree->gpu->constant_entries, 0);
        if (e == cudaSuccess)
            e = cudaStreamSynchronize(0);
        if (e == cudaSuccess)
            constant_owner = tree->gpu->upload_id;
        else
            st = hm_gpu_fail(tree, e, "loading the __constant__ part of the first-child array");
    }
    if (st != HARMONIA_OK)
        pthread_mutex_unlock(&gpu_lock);
    return st;
}

void hm_gpu_leave(void) { pthread_mutex_unlock(&gpu_lock); }

/* The buffers of one lane for windows of `window` queries (those of the kinds asked and missing). */
static cudaError_t alloc_lane(hm_gpu *g, hm_lane *lane, uint32_t window, bool host_staging, bool psa,
                              size_t psa_bytes)
{
    const size_t bytes = (size_t)window * 8, kb = g->view.key_bits / 8;
    cudaError_t e = cudaSuccess;
    if (!lane->stream) {
        e = cudaStreamCreateWithFlags(&lane->stream, cudaStreamNonBlocking);
        if (e == cudaSuccess)
            e = cudaEventCreateWithFlags(&lane->done, cudaEventDisableTiming);
    }
    if (e == cudaSuccess && host_staging && !lane->h_in[0]) {
        for (int k = 0; k < HM_LANE_IN && e == cudaSuccess; k++)
            e = cudaMalloc(&lane->d_in[k], bytes);
        for (int k = 0; k < HM_LANE_OUT && e == cudaSuccess; k++)
            e = cudaMalloc(&lane->d_out[k], bytes);
        for (int k = 0; k < HM_LANE_IN && e == cudaSuccess; k++)
            e = cudaHostAlloc(&lane->h_in[k], bytes, cudaHostAllocDefault);
        for (int k = 0; k < HM_LANE_OUT && e == cudaSuccess; k++)
            e = cudaHostAlloc(&lane->h_out[k], bytes, cudaHostAllocDefault);
        if (e == cudaSuccess)
            g->work_bytes += bytes * (HM_LANE_IN + HM_LANE_OUT);
    }
    if (e == cudaSuccess && psa && !lane->psa_workspace) {
        e = cudaMalloc(&lane->psa_workspace, psa_bytes);
        lane->psa_workspace_bytes = psa_bytes;
        if (e == cudaSuccess)
            e = cudaMalloc(&lane->d_slot_values, (size_t)window * kb);
        if (e == cudaSuccess)
            e = cudaMalloc(&lane->d_slot_keys, (size_t)window * kb);
        if (e == cudaSuccess)
            e = cudaMalloc((void **)&lane->d_slot_found, window);
        if (e == cudaSuccess)
            g->work_bytes += psa_bytes + (size_t)window * (2 * kb + 1);
    }
    return e;
}

harmonia_status hm_gpu_prepare_lanes(harmonia_tree *tree, uint32_t window, bool host_staging, bool psa,
                                     uint32_t lanes)
{
    hm_gpu *g = tree->gpu;
    if (lanes > HM_LANES)
        lanes = HM_LANES;
    if (window > g->window) {
        /* every buffer grows: start again, keeping the kinds the lanes had */
        host_staging = host_staging || g->lanes_staging;
        psa = psa || g->lanes_psa;
        free_lanes(g);
    } else {
        window = g->window;
    }
    size_t psa_bytes = 0;
    if (psa)
        HM_CUDA(tree, psa_workspace_bytes(g->view.key_bits, window, NULL, &psa_bytes));
    for (uint32_t i = 0; i < lanes; i++) {
        cudaError_t e = alloc_lane(g, &g->lanes[i], window, host_staging, psa, psa_bytes);
        if (e != cudaSuccess) {
            free_lanes(g);
            return hm_gpu_fail(tree, e, "allocating the query pipeline's buffers");
        }
    }
    g->window = window;
    g->lanes_staging = g->lanes_staging || host_staging;
    g->lanes_psa = g->lanes_psa || psa;
    return HARMONIA_OK;
}

harmonia_status hm_gpu_prepare_table(harmonia_tree *tree, const psa_plan *plan, cudaStream_t stream)
{
    hm_gpu *g = tree->gpu;
    if (g->table_valid && !memcmp(&g->table_plan, plan, sizeof *plan))
        return HARMONIA_OK;
    const uint64_t bytes = (((uint64_t)1 << plan->bits) + 1) * sizeof(uint32_t);
    if (bytes > g->table_bytes) {
        cudaFree(g->d_bucket_table);
        g->d_bucket_table = NULL;
        g->table_bytes = 0;
        HM_CUDA(tree, cudaMalloc((void **)&g->d_bucket_table, bytes));
        g->table_bytes = bytes;
    }
    HM_CUDA(tree, ntg_build_bucket_table(&g->view, plan, g->d_bucket_table, stream));
    g->table_plan = *plan;
    g->table_valid = true;
    return HARMONIA_OK;
}

extern "C" void hm_gpu_fill_info(const harmonia_tree *tree, harmonia_tree_info *info)
{
    if (!tree->gpu)
        return;
    info->device_resident = true;
    info->device_version = tree->gpu->version;
    info->device_bytes = tree->gpu->tree_bytes + tree->gpu->work_bytes;
}
