/* gpu_tree.cu — the device copy of a tree: its device scope, its memory (the caller's allocator or
 * the stream-ordered default), upload (with a memory check that names the bytes needed and free),
 * the incremental sync after an update, release, the ordering against queries in flight (events,
 * no device synchronisation), the pipeline lanes and scratch, and the translation of CUDA errors
 * into status codes. The pipelines are gpu_query.cu. */
#include <assert.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harmonia/gpu_internal.h"
#include "util/clock.h"

extern "C" {
#include "ntg/ntg_policy.h"
#include "prefix_sum/prefix_sum.h"
}

static_assert(NTG_MAX_LEVELS == HARMONIA_MAX_LEVELS, "ntg.h and harmonia.h disagree on the most levels");

/* --- errors ------------------------------------------------------------------------------------ */

extern "C" harmonia_status hm_gpu_fail(harmonia_tree *tree, int cuda_error, const char *what)
{
    const cudaError_t e = (cudaError_t)cuda_error;
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

static pthread_once_t usable_once = PTHREAD_ONCE_INIT;
static bool usable_answer = false; /* written once, under pthread_once */

static void probe_usable(void)
{
    int count = 0;
    usable_answer = cudaGetDeviceCount(&count) == cudaSuccess && count > 0;
    cudaGetLastError();
}

extern "C" bool hm_gpu_usable(void)
{
    pthread_once(&usable_once, probe_usable);
    return usable_answer;
}

/* --- the device scope -------------------------------------------------------------------------- */

cudaError_t hm_device_enter(hm_device_scope *scope, int device)
{
    scope->switched = false;
    cudaError_t e = cudaGetDevice(&scope->saved);
    if (e == cudaSuccess && scope->saved != device) {
        /* an ordinal past the devices is refused before cudaSetDevice sees it: no failed CUDA call
         * (nothing for the caller's error checks or a sanitizer to trip on), the same error */
        int count = 0;
        e = cudaGetDeviceCount(&count);
        if (e == cudaSuccess && (device < 0 || device >= count))
            return cudaErrorInvalidDevice;
    }
    if (e == cudaSuccess && scope->saved != device) {
        e = cudaSetDevice(device);
        scope->switched = e == cudaSuccess;
    }
    return e;
}

void hm_device_leave(const hm_device_scope *scope)
{
    if (scope->switched)
        cudaSetDevice(scope->saved);
}

/* The device a tree's copy goes to: its setting, or the caller's current device. */
static cudaError_t resolve_device(const harmonia_tree *tree, int *device_out)
{
    if (tree->device != HARMONIA_DEVICE_CURRENT) {
        *device_out = tree->device;
        return cudaSuccess;
    }
    return cudaGetDevice(device_out);
}

/* --- memory ------------------------------------------------------------------------------------ */

/* Device memory usable on any stream once `stream` reaches this point. */
static cudaError_t alloc_on(hm_gpu *g, void **pointer, size_t bytes, cudaStream_t stream)
{
    *pointer = NULL;
    if (bytes == 0)
        bytes = 1;
    if (g->has_allocator && g->allocator.device_alloc) {
        *pointer = g->allocator.device_alloc(g->allocator.context, bytes, (void *)stream);
        return *pointer ? cudaSuccess : cudaErrorMemoryAllocation;
    }
    if (g->stream_ordered)
        return cudaMallocAsync(pointer, bytes, stream);
    return cudaMalloc(pointer, bytes);
}

cudaError_t hm_gpu_alloc_on(hm_gpu *g, void **pointer, size_t bytes, cudaStream_t stream)
{
    return alloc_on(g, pointer, bytes, stream);
}

void hm_gpu_free_on(hm_gpu *g, void *pointer, size_t bytes, cudaStream_t stream)
{
    if (!pointer)
        return;
    if (g->has_allocator && g->allocator.device_free) {
        cudaStreamSynchronize(stream); /* the caller's free may be immediate */
        g->allocator.device_free(g->allocator.context, pointer, bytes ? bytes : 1, (void *)stream);
    } else if (g->stream_ordered) {
        cudaFreeAsync(pointer, stream);
    } else {
        cudaStreamSynchronize(stream);
        cudaFree(pointer);
    }
}

cudaError_t hm_gpu_alloc(hm_gpu *g, void **pointer, size_t bytes)
{
    return alloc_on(g, pointer, bytes, g->stream);
}

void hm_gpu_free(hm_gpu *g, void *pointer, size_t bytes)
{
    if (!pointer)
        return;
    hm_gpu_order_after_calls(g); /* after the synchronous calls in flight too */
    if (bytes == 0)
        bytes = 1;
    if (g->has_allocator && g->allocator.device_free) {
        /* the caller's free may be immediate: the work queued on the copy's stream (and through
         * query_done every query already queued) finishes first */
        cudaStreamSynchronize(g->stream);
        g->allocator.device_free(g->allocator.context, pointer, bytes, (void *)g->stream);
        return;
    }
    if (g->stream_ordered) {
        cudaFreeAsync(pointer, g->stream);
        return;
    }
    cudaStreamSynchronize(g->stream);
    cudaFree(pointer);
}

cudaError_t hm_gpu_alloc_pinned(hm_gpu *g, void **pointer, size_t bytes)
{
    *pointer = NULL;
    if (bytes == 0)
        bytes = 1;
    if (g->has_allocator && g->allocator.host_alloc) {
        *pointer = g->allocator.host_alloc(g->allocator.context, bytes);
        return *pointer ? cudaSuccess : cudaErrorMemoryAllocation;
    }
    return cudaHostAlloc(pointer, bytes, cudaHostAllocDefault);
}

void hm_gpu_free_pinned(hm_gpu *g, void *pointer, size_t bytes)
{
    if (!pointer)
        return;
    if (g->has_allocator && g->allocator.host_free)
        g->allocator.host_free(g->allocator.context, pointer, bytes ? bytes : 1);
    else
        cudaFreeHost(pointer);
}

cudaError_t hm_gpu_announce(hm_gpu *g)
{
    cudaError_t e = cudaEventRecord(g->ready, g->stream);
    g->ready_done = false;
    return e;
}

cudaError_t hm_gpu_wait_ready(hm_gpu *g, cudaStream_t stream)
{
    if (g->ready_done)
        return cudaSuccess;
    cudaError_t e = cudaEventQuery(g->ready);
    if (e == cudaSuccess) {
        g->ready_done = true;
        return cudaSuccess;
    }
    if (e != cudaErrorNotReady)
        return e;
    return cudaStreamWaitEvent(stream, g->ready, 0);
}

cudaError_t hm_gpu_order_after(hm_gpu *g, cudaStream_t stream)
{
    cudaError_t e = cudaEventRecord(g->query_done, stream);
    if (e == cudaSuccess)
        e = cudaStreamWaitEvent(g->stream, g->query_done, 0);
    return e;
}

/* --- calls in flight -----------------------------------------------------------------------------
 * hm_gpu_order_after costs a device-array call two API calls (about 1-2 us: bench/NOTES.md, "Small
 * batches") so that work queued later on the copy's stream runs after it. A synchronous call waits
 * for its own stream before it returns, so that order matters only while it is in flight: it
 * leaves its stream in a slot of the tree's instead (after its work is queued, under gpu_lock) and
 * takes it back once the stream is done. Whoever queues on the copy's stream work the queries
 * must precede (holding gpu_lock, so no call can begin meanwhile) first calls
 * hm_gpu_order_after_calls, which records query_done on each stream still in a slot and makes the
 * copy's stream wait for it: the same order, paid by the rare writer. A slot's stream is recorded
 * on only under calls_lock while the slot is busy, so never after its call returned (its caller
 * may destroy it then). cudaStreamPerThread names another stream on another thread: such calls
 * take the ordering at once, as do calls that find every slot busy. A call in flight was queued on
 * the copy that was the tree's then; a copy made later needs no order after it (it never reads the
 * new copy's memory), so call_ordered_by remembers which copy's stream already waits for it. */
int hm_gpu_call_begin(harmonia_tree *tree, cudaStream_t stream)
{
    if (stream == cudaStreamPerThread)
        return -1;
    int slot = -1;
    pthread_mutex_lock(&tree->calls_lock);
    for (int i = 0; i < HM_CALLS_IN_FLIGHT && slot < 0; i++)
        if (!tree->call_busy[i])
            slot = i;
    if (slot >= 0) {
        tree->call_busy[slot] = true;
        tree->call_stream[slot] = (void *)stream;
        tree->call_ordered_by[slot] = NULL;
    }
    pthread_mutex_unlock(&tree->calls_lock);
    return slot;
}

void hm_gpu_call_end(harmonia_tree *tree, int slot)
{
    assert(slot >= 0 && slot < HM_CALLS_IN_FLIGHT);
    pthread_mutex_lock(&tree->calls_lock);
    tree->call_busy[slot] = false;
    pthread_mutex_unlock(&tree->calls_lock);
}

/* --- completion signals ---------------------------------------------------------------------------
 * A synchronous call that runs as one launch (gpu_query.cu) learns of its end from the kernel
 * rather than from its stream: it takes its slot of the calls in flight before the launch, and the
 * launch's last block writes the slot's next sequence number to the slot's word of host memory
 * (ntg_signal, ntg.h) once every result is written and every read of the tree done; the caller,
 * without the tree's lock, spins on that word, then leaves the slot. Until then the slot keeps
 * writers ordered after the call's stream, as for any synchronous call. The words live as long as
 * the tree (a call may still spin on one while another thread releases the copy); the block
 * counters live with the copy (the launch reads them, and a copy's memory is freed after the calls
 * in flight on it). Anything unexpected — a launch that failed, a stream done with no signal —
 * turns the tree's signals off for good: its calls then wait for their streams. */
static const size_t call_flags_bytes = HM_CALLS_IN_FLIGHT * HM_SIGNAL_STRIDE * sizeof(unsigned int);
static const size_t blocks_done_bytes = HM_CALLS_IN_FLIGHT * sizeof(unsigned int);

/* Whether the tree's words come from its allocator (else cudaHostAlloc): the allocator that made
 * them is the tree's until they are freed (hm_set_placement frees them before it changes). */
static bool flags_by_allocator(const harmonia_tree *tree)
{
    return tree->has_allocator && tree->allocator.host_alloc;
}

static void free_call_flags(harmonia_tree *tree)
{
    if (!tree->call_flags)
        return;
    if (flags_by_allocator(tree))
        tree->allocator.host_free(tree->allocator.context, tree->call_flags, call_flags_bytes);
    else
        cudaFreeHost(tree->call_flags);
    tree->call_flags = tree->call_flags_device = NULL;
}

/* The tree's signal words (under gpu_lock): pinned host memory from the tree's allocator, else
 * cudaHostAlloc, which the device can write (its address there from cudaHostGetDevicePointer). */
static bool make_call_flags(harmonia_tree *tree)
{
    void *host = NULL, *device = NULL;
    if (flags_by_allocator(tree))
        host = tree->allocator.host_alloc(tree->allocator.context, call_flags_bytes);
    else if (cudaHostAlloc(&host, call_flags_bytes, cudaHostAllocMapped | cudaHostAllocPortable) != cudaSuccess)
        host = NULL;
    cudaGetLastError();
    if (!host)
        return false;
    tree->call_flags = (unsigned int *)host;
    if (cudaHostGetDevicePointer(&device, host, 0) != cudaSuccess || !device) {
        cudaGetLastError(); /* not memory the device can write: no signals */
        free_call_flags(tree);
        return false;
    }
    memset(host, 0, call_flags_bytes);
    tree->call_flags_device = (unsigned int *)device;
    memset(tree->call_sequence, 0, sizeof tree->call_sequence);
    return true;
}

void hm_gpu_signals_off(harmonia_tree *tree)
{
    __atomic_store_n(&tree->signals_off, true, __ATOMIC_RELAXED);
}

extern "C" void hm_gpu_forget(harmonia_tree *tree)
{
    if (!tree)
        return;
    free_call_flags(tree);
    __atomic_store_n(&tree->signals_off, false, __ATOMIC_RELAXED); /* the next words may serve */
}

bool hm_gpu_signal_begin(harmonia_tree *tree, cudaStream_t stream, int *slot_out, ntg_signal *signal)
{
    hm_gpu *g = tree->gpu;
    *slot_out = -1;
    if (!g->signals || __atomic_load_n(&tree->signals_off, __ATOMIC_RELAXED))
        return false;
    if (!tree->call_flags && !make_call_flags(tree)) {
        hm_gpu_signals_off(tree);
        return false;
    }
    if (!g->d_blocks_done) { /* zeroed on the copy's stream; the call waits for it (hm_gpu_wait_ready) */
        void *counters = NULL;
        cudaError_t e = hm_gpu_alloc(g, &counters, blocks_done_bytes);
        if (e == cudaSuccess) {
            g->d_blocks_done = (unsigned int *)counters;
            e = cudaMemsetAsync(counters, 0, blocks_done_bytes, g->stream);
            if (e == cudaSuccess)
                e = hm_gpu_announce(g);
        }
        if (e != cudaSuccess) { /* (an allocation the next copy may try again) */
            cudaGetLastError();
            if (g->d_blocks_done)
                hm_gpu_free(g, g->d_blocks_done, blocks_done_bytes);
            g->d_blocks_done = NULL;
            g->signals = false;
            return false;
        }
    }
    const int slot = hm_gpu_call_begin(tree, stream);
    if (slot < 0)
        return false;
    unsigned int sequence = tree->call_sequence[slot] + 1;
    if (sequence == 0) /* (the words start at 0) */
        sequence = 1;
    tree->call_sequence[slot] = sequence;
    signal->blocks_done = g->d_blocks_done + slot;
    signal->flag = tree->call_flags_device + slot * HM_SIGNAL_STRIDE;
    signal->sequence = sequence;
    *slot_out = slot;
    return true;
}

/* The word's value, read with acquire order (what the kernel wrote before it is seen after it, on
 * hosts weaker than x86's too). */
static unsigned int signal_word(const harmonia_tree *tree, int slot)
{
    return __atomic_load_n(tree->call_flags + slot * HM_SIGNAL_STRIDE, __ATOMIC_ACQUIRE);
}

cudaError_t hm_gpu_signal_wait(harmonia_tree *tree, cudaStream_t stream, int slot, const ntg_signal *signal)
{
    const double every = HM_SIGNAL_CHECK_US * 1e-6;
    double check = util_now_seconds() + every;
    for (uint32_t spin = 1;; spin++) {
        if (signal_word(tree, slot) == signal->sequence)
            return cudaSuccess;
        if (spin % 64 != 0 || util_now_seconds() < check)
            continue;
        const cudaError_t e = cudaStreamQuery(stream);
        if (e == cudaErrorNotReady) {
            check = util_now_seconds() + every;
            continue;
        }
        if (e == cudaSuccess && signal_word(tree, slot) == signal->sequence) /* (it came meanwhile) */
            return cudaSuccess;
        /* the launch failed, or the stream is done with no signal: the kernel is waited for before
         * the slot (and its counter) is given back, and the tree's signals are off from now on —
         * but for a stream being captured into a graph, where nothing ran (a synchronous call is
         * the caller's error there, as cudaStreamSynchronize would say) */
        cudaStreamSynchronize(stream);
        if (e != cudaErrorStreamCaptureUnsupported && e != cudaErrorStreamCaptureInvalidated)
            hm_gpu_signals_off(tree);
        return e; /* cudaSuccess: the stream is done, so are the results */
    }
}

void hm_gpu_order_after_calls(hm_gpu *g)
{
    harmonia_tree *tree = g->owner;
    if (!tree || !g->stream)
        return;
    pthread_mutex_lock(&tree->calls_lock);
    for (int i = 0; i < HM_CALLS_IN_FLIGHT; i++) {
        if (!tree->call_busy[i] || tree->call_ordered_by[i] == (void *)g)
            continue;
        const cudaStream_t stream = (cudaStream_t)tree->call_stream[i];
        if (hm_gpu_order_after(g, stream) != cudaSuccess) {
            /* only a broken context fails here: wait for the call's stream itself rather than
             * free or overwrite what it may still read */
            cudaGetLastError();
            cudaStreamSynchronize(stream);
            cudaGetLastError();
        }
        tree->call_ordered_by[i] = (void *)g;
    }
    pthread_mutex_unlock(&tree->calls_lock);
}

/* --- the lanes and the scratch ------------------------------------------------------------------- */

static size_t align_256(size_t x) { return (x + 255) & ~(size_t)255; }

cudaError_t hm_scan_scratch_bytes(uint64_t count, size_t *bytes_out, size_t *scan_bytes_out)
{
    size_t scan = 0;
    cudaError_t e = psa_scan_temp_bytes(count, &scan);
    if (e != cudaSuccess)
        return e;
    *scan_bytes_out = scan;
    *bytes_out = 255 + align_256((count + 1) * sizeof(uint64_t)) + align_256(scan);
    return cudaSuccess;
}

uint32_t hm_gpu_default_window(const hm_gpu *g, uint32_t key_bits)
{
    const uint64_t l2 = g->l2_bytes ? g->l2_bytes : 8u << 20;
    return (uint32_t)psa_default_window(key_bits, l2);
}

static void free_lanes(hm_gpu *g)
{
    for (int i = 0; i < HM_LANES; i++) {
        hm_lane *lane = &g->lanes[i];
        if (lane->stream) { /* the copy's stream frees after the lane's work */
            if (lane->done && cudaEventRecord(lane->done, lane->stream) == cudaSuccess)
                cudaStreamWaitEvent(g->stream, lane->done, 0);
            cudaStreamSynchronize(lane->stream); /* pinned buffers are freed at once */
        }
        const size_t bytes = (size_t)g->window * 8;
        for (int k = 0; k < HM_LANE_IN; k++) {
            hm_gpu_free(g, lane->d_in[k], bytes);
            hm_gpu_free_pinned(g, lane->h_in[k], bytes);
        }
        for (int k = 0; k < HM_LANE_OUT; k++) {
            hm_gpu_free(g, lane->d_out[k], bytes);
            hm_gpu_free_pinned(g, lane->h_out[k], bytes);
        }
        hm_gpu_free(g, lane->psa_scratch, lane->psa_scratch_bytes);
        if (lane->done)
            cudaEventDestroy(lane->done);
        if (lane->stream)
            cudaStreamDestroy(lane->stream);
        memset(lane, 0, sizeof *lane);
    }
    g->window = 0;
    g->lanes_staging = g->lanes_psa = false;
    g->lane_bytes = 0;
    g->pinned_bytes = 0;
    cudaGetLastError();
}

static void free_scan(hm_gpu *g)
{
    hm_gpu_free(g, g->scan_scratch, g->scan_scratch_bytes);
    g->scan_scratch = NULL;
    g->scan_scratch_bytes = 0;
    g->scan_capacity = 0;
}

/* Everything of a copy, in stream order after the work queued on it; then its stream and events
 * (destroying a stream with work queued lets that work finish first). wait: return once the frees
 * are done (the memory is back), which waits for the tree's queries in flight, nothing else. */
static void free_device_copy(hm_gpu *g, bool wait)
{
    hm_gpu_order_after_calls(g); /* its stream, waited for or destroyed, after every call in flight */
    hm_upload_staging_free(g); /* waits for its own DMA, if any is left */
    free_lanes(g);
    free_scan(g);
    for (int i = 0; i < HM_BUCKET_TABLES; i++) {
        hm_gpu_free(g, g->tables[i].d, g->tables[i].bytes);
        g->tables[i].d = NULL;
        g->tables[i].bytes = 0;
        g->tables[i].valid = false;
    }
    hm_gpu_free(g, g->d_start, g->start_bytes);
    g->d_start = NULL;
    g->view.start = NULL;
    hm_gpu_free(g, g->d_start_fine, g->start_fine_bytes);
    g->d_start_fine = NULL;
    g->start_fine = NULL;
    g->start_done = false;
    hm_gpu_free(g, g->d_keys, g->key_bytes);
    hm_gpu_free(g, g->d_values, g->value_bytes);
    hm_gpu_free(g, g->d_first_child, g->first_child_bytes);
    hm_gpu_free(g, g->d_leaf_rank, g->rank_bytes);
    hm_gpu_free(g, g->d_blocks_done, blocks_done_bytes);
    g->d_blocks_done = NULL;
    if (wait && g->stream)
        cudaStreamSynchronize(g->stream);
    if (wait && g->update_stream)
        cudaStreamSynchronize(g->update_stream);
    if (g->update_stream)
        cudaStreamDestroy(g->update_stream);
    if (g->retired)
        cudaEventDestroy(g->retired);
    if (g->fork)
        cudaEventDestroy(g->fork);
    if (g->scan_done)
        cudaEventDestroy(g->scan_done);
    if (g->query_done)
        cudaEventDestroy(g->query_done);
    if (g->ready)
        cudaEventDestroy(g->ready);
    if (g->stream)
        cudaStreamDestroy(g->stream);
    cudaGetLastError();
}

/* Releases the copy of a tree whose lock is held (its device current). */
static void release_locked(harmonia_tree *tree)
{
    if (!tree->gpu)
        return;
    free_device_copy(tree->gpu, false);
    free(tree->gpu);
    tree->gpu = NULL;
}

extern "C" void hm_gpu_release(harmonia_tree *tree)
{
    if (!tree)
        return;
    pthread_mutex_lock(&tree->gpu_lock);
    if (tree->gpu) {
        hm_device_scope scope;
        hm_device_enter(&scope, tree->gpu->device);
        release_locked(tree);
        hm_device_leave(&scope);
    }
    pthread_mutex_unlock(&tree->gpu_lock);
}

/* The top cut of the first-child array, for the tree's constant-levels setting
 * (hm_constant_entries): what the launches that read it pass as parameters. */
static void set_top_cut(harmonia_tree *tree, hm_gpu *g)
{
    uint32_t levels = 0;
    const uint32_t entries = (uint32_t)hm_constant_entries(tree, &levels);
    assert(entries <= PS_TOP_MAX_ENTRIES);
    if (entries == g->cut.entries)
        return;
    memcpy(g->cut.first_child, tree->kr.first_child, entries * sizeof(uint32_t));
    g->cut.entries = entries;
    g->cut.levels = levels;
}

/* The copy's view of its arrays (g->d_*) for the tree's published version (tree->kr), and what goes
 * with it: the top cut, the sizes, the version, the smallest and largest keys' values, the PSA
 * plans (the tree's and its unordered lookups'); the bucket tables are stale. Under the tree's lock. */
static void set_version(harmonia_tree *tree, hm_gpu *g)
{
    const kr_tree *t = &tree->kr;
    ntg_view *v = &g->view;
    v->keys = g->d_keys;
    v->leaf_values = g->d_values;
    v->leaf_rank = g->d_leaf_rank;
    v->n_internal = t->n_internal;
    v->n_leaves = t->n_leaves;
    v->n_keys = t->n_keys;
    v->leaf_key_base = t->n_internal * t->fanout;
    v->key_bits = t->key_bits;
    v->fanout = t->fanout;
    v->leaf_size = t->leaf_size;
    v->height = t->height;
    v->max_key_present = kr_max_key_present(t);
    memset(v->levels, 0, sizeof v->levels);
    ps_levels(t->level_start, t->height, v->levels);
    g->cut.entries = UINT32_MAX; /* set_top_cut fills it */
    set_top_cut(tree, g);
    g->tree_bytes = hm_device_copy_bytes(t);
    g->version = tree->version;
    uint64_t min_key = 0, max_key = 0;
    g->min_value = g->max_value = 0;
    if (t->n_keys > 0) {
        kr_at_rank(t, 0, &min_key, &g->min_value);
        kr_at_rank(t, t->n_keys - 1, &max_key, &g->max_value);
    }
    const uint32_t leaf_bytes = t->leaf_size * (t->key_bits / 8);
    g->plan = psa_make_plan(min_key, max_key, t->n_leaves, leaf_bytes, 0);
    g->plan_unordered = psa_unordered_plan(&g->plan, t->key_bits, t->n_leaves, leaf_bytes);
    for (int i = 0; i < HM_BUCKET_TABLES; i++)
        g->tables[i].valid = false;
    v->start = NULL; /* until prepare_start builds this version's */
    g->start_fine = NULL;
    g->start_done = false;
}

/* The plan of a start table of at most 2^bits buckets of the copy's version (fewer where the keys'
 * span is narrower: psa_make_plan). */
static psa_plan start_plan_of(const hm_gpu *g, const kr_tree *t, unsigned bits)
{
    return psa_make_plan(g->plan.key_min, g->plan.key_max, t->n_leaves, t->leaf_size * (t->key_bits / 8), bits);
}

/* One start table of plan's buckets in *table (grown as needed, kept across versions); false when
 * there is none this version: no memory for it, or its launch failed (no error: it only saves time;
 * an error that breaks the context fails the call's next CUDA step). */
static_assert(NTG_START_FINE_MAX_BITS <= PSA_MAX_BITS && NTG_START_MAX_BITS < NTG_START_FINE_MAX_BITS,
              "a start table's buckets are a psa_plan's (at most PSA_MAX_BITS bits)");

static bool build_start(hm_gpu *g, const psa_plan *plan, ntg_start_entry **table, uint64_t *table_bytes)
{
    if (plan->bits == 0) /* one key value: nothing to tell apart */
        return false;
    const uint64_t bytes = ((uint64_t)1 << plan->bits) * sizeof(ntg_start_entry);
    if (bytes > *table_bytes) {
        hm_gpu_free(g, *table, *table_bytes); /* after its readers */
        *table = NULL;
        *table_bytes = 0;
        if (hm_gpu_alloc(g, (void **)table, bytes) != cudaSuccess) {
            cudaGetLastError();
            *table = NULL;
            return false;
        }
        *table_bytes = bytes;
    }
    cudaError_t e = ntg_build_start_table(&g->view, plan, *table, g->stream);
    if (e != cudaSuccess) {
        cudaGetLastError();
        return false;
    }
    return true;
}

/* The start tables of the copy's version (ntg.h; the coarse and the fine, ntg_policy.h), once a
 * version: queued on the copy's stream after the calls in flight (which may read the last
 * version's), announced to the calls that follow, and then in the view (the coarse) and in
 * start_fine. A tree of one level or no keys has none; a tree of at most 2^(NTG_START_MAX_BITS - 1)
 * leaves, or whose keys' span is too narrow for more buckets, no fine one (the coarse one is as
 * fine); a table without the memory for it (1 and 8 MiB at most) or whose launch fails is left out,
 * and its descents start from the other or the root. */
static harmonia_status prepare_start(harmonia_tree *tree, hm_gpu *g)
{
    if (g->start_done)
        return HARMONIA_OK;
    g->start_done = true;
    const kr_tree *t = &tree->kr;
    if (t->n_keys == 0 || t->height < 2 || t->height > NTG_MAX_LEVELS)
        return HARMONIA_OK;
    /* the plans, not the bits asked for, decide: a narrow span caps both (psa_make_plan) */
    const psa_plan plan = start_plan_of(g, t, ntg_start_bits(t->n_leaves, NTG_START_MAX_BITS)),
                   fine_plan = start_plan_of(g, t, ntg_start_bits(t->n_leaves, NTG_START_FINE_MAX_BITS));
    hm_gpu_order_after_calls(g);
    const bool coarse = build_start(g, &plan, &g->d_start, &g->start_bytes);
    const bool fine = fine_plan.bits > plan.bits && build_start(g, &fine_plan, &g->d_start_fine, &g->start_fine_bytes);
    if ((coarse || fine) && hm_gpu_announce(g) != cudaSuccess) {
        cudaGetLastError();
        return HARMONIA_OK;
    }
    if (coarse) {
        g->view.start = g->d_start;
        g->view.start_plan = plan;
    }
    if (fine) {
        g->start_fine = g->d_start_fine;
        g->start_fine_plan = fine_plan;
    }
    return HARMONIA_OK;
}

harmonia_status hm_gpu_new_copy(harmonia_tree *tree, int device, const char *what, hm_gpu **copy_out)
{
    *copy_out = NULL;
    if (!hm_gpu_usable())
        return hm_fail(tree, HARMONIA_ERR_NO_DEVICE, "no usable GPU: %s",
                       harmonia_device_probe(NULL) == HARMONIA_OK ? "device lost" : harmonia_last_error(NULL));
    const kr_tree *t = &tree->kr;
    const size_t kb = t->key_bits / 8;
    const uint64_t key_bytes = kr_key_slots(t) * kb, value_bytes = t->n_leaves * t->leaf_size * kb;
    const uint64_t fc_bytes = (t->n_internal + 1) * sizeof(uint32_t);
    const uint64_t rank_bytes = (t->n_leaves + 1) * sizeof(uint64_t);
    const uint64_t needed = hm_device_copy_bytes(t);
    assert(needed == key_bytes + value_bytes + fc_bytes + rank_bytes);

    /* the old copy goes first, once the queries it serves are done: its memory may be what the new
     * one needs (its stream waited for them; this waits for that stream alone) */
    hm_upload_staging staging;
    memset(&staging, 0, sizeof staging);
    if (tree->gpu) {
        if (tree->gpu->device == device) { /* the pinned staging stays with the tree */
            staging = tree->gpu->upload;
            memset(&tree->gpu->upload, 0, sizeof tree->gpu->upload);
        }
        free_device_copy(tree->gpu, true);
        free(tree->gpu);
        tree->gpu = NULL;
    }
    size_t free_bytes = 0, total_bytes = 0;
    HM_CUDA(tree, cudaMemGetInfo(&free_bytes, &total_bytes));
    if (needed > free_bytes) { /* memory a pool holds unused (copies freed in stream order) goes back */
        cudaMemPool_t pool;
        if (cudaDeviceGetDefaultMemPool(&pool, device) == cudaSuccess && cudaMemPoolTrimTo(pool, 0) == cudaSuccess)
            HM_CUDA(tree, cudaMemGetInfo(&free_bytes, &total_bytes));
        cudaGetLastError();
    }
    if (needed > free_bytes)
        return hm_fail(tree, HARMONIA_ERR_DEVICE_MEMORY,
                       "%s needs %" PRIu64 " bytes of GPU memory on device %d; %zu bytes are free (of %zu)", what, needed, device, free_bytes, total_bytes);
    hm_gpu *g = (hm_gpu *)calloc(1, sizeof(hm_gpu));
    if (!g) {
        hm_gpu tmp;
        memset(&tmp, 0, sizeof tmp);
        tmp.has_allocator = tree->has_allocator;
        tmp.allocator = tree->allocator;
        tmp.upload = staging;
        hm_upload_staging_free(&tmp);
        return hm_fail(tree, HARMONIA_ERR_NO_MEMORY, "out of memory allocating the device copy's handle");
    }
    g->device = device;
    g->has_allocator = tree->has_allocator;
    g->allocator = tree->allocator;
    g->upload = staging;
    int pools = 0, l2 = 0;
    if (cudaDeviceGetAttribute(&pools, cudaDevAttrMemoryPoolsSupported, device) != cudaSuccess)
        pools = 0;
    g->stream_ordered = pools != 0;
    if (cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, device) == cudaSuccess && l2 > 0)
        g->l2_bytes = (uint64_t)l2;
    g->key_bytes = key_bytes;
    g->value_bytes = value_bytes;
    g->first_child_bytes = fc_bytes;
    g->rank_bytes = rank_bytes;
    /* completion signals where the device spins while waiting (its schedule flags, as set now) */
    unsigned int flags = 0;
    const unsigned int schedule = cudaGetDeviceFlags(&flags) == cudaSuccess ? flags & cudaDeviceScheduleMask
                                                                            : cudaDeviceScheduleBlockingSync;
    /* ... and where the host may touch managed results while the kernel's grid is still resident */
    int concurrent_managed = 0;
    if (cudaDeviceGetAttribute(&concurrent_managed, cudaDevAttrConcurrentManagedAccess, device) != cudaSuccess)
        concurrent_managed = 0;
    g->signals = HM_SIGNALS && schedule != cudaDeviceScheduleBlockingSync && schedule != cudaDeviceScheduleYield &&
                 concurrent_managed;
    cudaGetLastError();
    cudaError_t e = cudaStreamCreateWithFlags(&g->stream, cudaStreamNonBlocking);
    if (e == cudaSuccess) e = cudaEventCreateWithFlags(&g->query_done, cudaEventDisableTiming);
    if (e == cudaSuccess) e = cudaEventCreateWithFlags(&g->ready, cudaEventDisableTiming);
    if (e == cudaSuccess) e = hm_gpu_alloc(g, &g->d_keys, key_bytes);
    if (e == cudaSuccess) e = hm_gpu_alloc(g, &g->d_values, value_bytes);
    if (e == cudaSuccess) e = hm_gpu_alloc(g, (void **)&g->d_first_child, fc_bytes);
    if (e == cudaSuccess) e = hm_gpu_alloc(g, (void **)&g->d_leaf_rank, rank_bytes);
    if (e != cudaSuccess) {
        cudaGetLastError();
        free_device_copy(g, true);
        free(g);
        if (e == cudaErrorMemoryAllocation)
            return hm_fail(tree, HARMONIA_ERR_DEVICE_MEMORY,
                           "%s needs %" PRIu64 " bytes of GPU memory on device %d; the allocation failed "
                           "with %zu bytes free", what, needed, device, free_bytes);
        return hm_gpu_fail(tree, e, what);
    }
    g->tree_bytes = needed;
    *copy_out = g;
    return HARMONIA_OK;
}

void hm_gpu_discard_copy(hm_gpu *g)
{
    if (!g)
        return;
    free_device_copy(g, true);
    free(g);
}

void hm_gpu_adopt_copy(harmonia_tree *tree, hm_gpu *g)
{
    g->ready_done = true; /* nothing is pending on the copy's stream */
    set_version(tree, g);
    g->owner = tree;
    tree->gpu = g;
}

static harmonia_status upload_locked(harmonia_tree *tree, int device)
{
    hm_gpu *g = NULL;
    harmonia_status st = hm_gpu_new_copy(tree, device, "uploading the tree", &g);
    if (st != HARMONIA_OK)
        return st;
    const kr_tree *t = &tree->kr;
    /* through the pinned staging where the arrays are pageable (gpu_upload.cu) */
    cudaError_t e = hm_upload(g, g->d_keys, t->keys, g->key_bytes, g->stream, 0);
    if (e == cudaSuccess) e = hm_upload(g, g->d_values, t->leaf_values, g->value_bytes, g->stream, 0);
    if (e == cudaSuccess) e = hm_upload(g, g->d_first_child, t->first_child, g->first_child_bytes, g->stream, 0);
    if (e == cudaSuccess) e = hm_upload(g, g->d_leaf_rank, t->leaf_rank, g->rank_bytes, g->stream, 0);
    if (e == cudaSuccess) /* the host arrays may change once this returns: the copies end first */
        e = cudaStreamSynchronize(g->stream);
    if (e != cudaSuccess) {
        cudaGetLastError();
        hm_gpu_discard_copy(g);
        return hm_gpu_fail(tree, e, "uploading the tree");
    }
    hm_gpu_adopt_copy(tree, g);
    return HARMONIA_OK;
}

/* Locks the tree and enters the device of its copy (made if missing): the device a new copy goes
 * to is resolved first, with the caller's device still current. */
static harmonia_status lock_and_enter(harmonia_tree *tree, hm_device_scope *scope)
{
    pthread_mutex_lock(&tree->gpu_lock);
    int device = 0;
    cudaError_t e = tree->gpu ? cudaSuccess : resolve_device(tree, &device);
    if (tree->gpu)
        device = tree->gpu->device;
    if (e == cudaSuccess)
        e = hm_device_enter(scope, device);
    if (e != cudaSuccess) {
        pthread_mutex_unlock(&tree->gpu_lock);
        return hm_gpu_fail(tree, e, tree->device == HARMONIA_DEVICE_CURRENT ? "selecting the current device"
                                                                            : "selecting the tree's device");
    }
    return HARMONIA_OK;
}

extern "C" harmonia_status hm_gpu_upload(harmonia_tree *tree)
{
    hm_device_scope scope;
    harmonia_status st = lock_and_enter(tree, &scope);
    if (st != HARMONIA_OK)
        return st;
    int device = 0;
    cudaGetDevice(&device);
    st = upload_locked(tree, device);
    hm_device_leave(&scope);
    pthread_mutex_unlock(&tree->gpu_lock);
    return st;
}

extern "C" harmonia_status hm_gpu_device_of(harmonia_tree *tree, int *device_out)
{
    hm_device_scope scope;
    harmonia_status st = hm_gpu_enter(tree, &scope);
    if (st != HARMONIA_OK)
        return st;
    *device_out = tree->gpu->device;
    hm_gpu_leave(tree, &scope);
    return HARMONIA_OK;
}

extern "C" harmonia_status hm_gpu_start_table(harmonia_tree *tree, bool fine, void *entries_out, uint64_t capacity,
                                              uint64_t *count_out, psa_plan *plan_out)
{
    *count_out = 0;
    hm_device_scope scope;
    harmonia_status st = hm_gpu_enter(tree, &scope);
    if (st != HARMONIA_OK)
        return st;
    const hm_gpu *g = tree->gpu;
    const ntg_start_entry *table = fine ? g->start_fine : g->view.start;
    if (table) {
        const psa_plan *plan = fine ? &g->start_fine_plan : &g->view.start_plan;
        const uint64_t n = (uint64_t)1 << plan->bits;
        *count_out = n;
        *plan_out = *plan;
        cudaError_t e = cudaSuccess;
        if (n <= capacity) {
            e = cudaStreamSynchronize(g->stream);
            if (e == cudaSuccess)
                e = cudaMemcpy(entries_out, table, n * sizeof(ntg_start_entry), cudaMemcpyDeviceToHost);
        }
        if (e != cudaSuccess)
            st = hm_gpu_fail(tree, e, "copying the start table");
    }
    hm_gpu_leave(tree, &scope);
    return st;
}

extern "C" uint64_t hm_gpu_l2_bytes(harmonia_tree *tree)
{
    if (!hm_gpu_usable())
        return 0;
    pthread_mutex_lock(&tree->gpu_lock);
    uint64_t l2 = tree->gpu ? tree->gpu->l2_bytes : 0;
    if (!tree->gpu) {
        int device = 0, bytes = 0;
        if (resolve_device(tree, &device) == cudaSuccess &&
            cudaDeviceGetAttribute(&bytes, cudaDevAttrL2CacheSize, device) == cudaSuccess && bytes > 0)
            l2 = (uint64_t)bytes;
        cudaGetLastError();
    }
    pthread_mutex_unlock(&tree->gpu_lock);
    return l2;
}

/* Copies the dirty leaves' keys and values (runs of nearby leaves together, gaps of clean leaves
 * bridged, or one span when the runs are too many; gathered into one DMA and scattered by a kernel
 * instead when they are at most 1 / HM_SYNC_GATHER_RATIO of what those copies send and those are
 * large enough to go through the staging anyway) and the leaf ranks
 * (when ranks_changed) of t from the host into device arrays of t's shape, on `stream`; *bytes
 * grows by what was sent. */
static cudaError_t copy_dirty(hm_gpu *g, const kr_tree *t, void *d_keys, void *d_values, uint64_t *d_leaf_rank,
                              const uint64_t *dirty_leaves, uint64_t n_dirty, bool ranks_changed,
                              cudaStream_t stream, uint64_t *bytes)
{
    const size_t kb = t->key_bits / 8, leaf_bytes = (size_t)t->leaf_size * kb;
    const uint64_t leaf_base = kr_leaf_key_offset(t, 0);
    uint64_t runs = 0, covered = 0; /* the leaves the runs span, gaps bridged */
    cudaError_t e = cudaSuccess;
    for (uint64_t i = 0; i < n_dirty; i++) {
        const bool starts = i == 0 || dirty_leaves[i] > dirty_leaves[i - 1] + HM_SYNC_GAP;
        runs += starts;
        covered += starts ? 1 : dirty_leaves[i] - dirty_leaves[i - 1];
    }
    if (runs > HM_SYNC_MAX_RUNS) /* one span from the first to the last */
        covered = n_dirty ? dirty_leaves[n_dirty - 1] - dirty_leaves[0] + 1 : 0;
    bool gathered = false;
    if (n_dirty > 0 && n_dirty * HM_SYNC_GATHER_RATIO <= covered && 2 * covered * leaf_bytes >= HM_UPLOAD_STAGED_MIN)
        /* the dirty leaves are a small part of what the copies would send: gathered, one DMA */
        e = hm_scatter_dirty_leaves(g, t, d_keys, d_values, dirty_leaves, n_dirty, stream, bytes, &gathered);
    for (uint64_t i = gathered ? n_dirty : 0; i < n_dirty && e == cudaSuccess;) {
        uint64_t first = dirty_leaves[i], last = first;
        if (runs > HM_SYNC_MAX_RUNS) {
            last = dirty_leaves[n_dirty - 1];
            i = n_dirty;
        } else {
            while (i + 1 < n_dirty && dirty_leaves[i + 1] <= last + HM_SYNC_GAP)
                last = dirty_leaves[++i];
            i++;
        }
        assert(last < t->n_leaves);
        const size_t span = (size_t)(last - first + 1) * leaf_bytes;
        e = hm_upload(g, (char *)d_keys + (leaf_base + first * t->leaf_size) * kb,
                      (const char *)t->keys + (leaf_base + first * t->leaf_size) * kb, span, stream, 0);
        if (e == cudaSuccess)
            e = hm_upload(g, (char *)d_values + first * leaf_bytes, (const char *)t->leaf_values + first * leaf_bytes,
                          span, stream, 0);
        *bytes += 2 * span;
    }
    if (e == cudaSuccess && ranks_changed) {
        e = hm_upload(g, d_leaf_rank, t->leaf_rank, (t->n_leaves + 1) * sizeof(uint64_t), stream, 0);
        *bytes += (t->n_leaves + 1) * sizeof(uint64_t);
    }
    return e;
}

/* The blocking sync, with the tree's lock held and the new version published: the copy brought to
 * it in place. Incremental when the copy is exactly one version behind and has the same shape (a
 * batch applied with skip_upload in between, or a changed shape, needs everything again): the
 * copies go on the copy's stream, which waited for every query already queued on any stream
 * (query_done), so none of them reads a half-written leaf. */
static harmonia_status sync_in_place(harmonia_tree *tree, const uint64_t *dirty_leaves, uint64_t n_dirty,
                                     bool ranks_changed, uint64_t *bytes_out, bool *incremental_out)
{
    hm_gpu *g = tree->gpu;
    const bool same_shape = g->view.n_leaves == tree->kr.n_leaves && g->view.n_internal == tree->kr.n_internal;
    if (!dirty_leaves || g->version + 1 != tree->version || !same_shape) {
        harmonia_status st = upload_locked(tree, g->device);
        if (st == HARMONIA_OK)
            *bytes_out = tree->gpu->tree_bytes;
        return st;
    }
    uint64_t bytes = 0;
    hm_gpu_order_after_calls(g); /* the leaves are overwritten after the calls still reading them */
    cudaError_t e = copy_dirty(g, &tree->kr, g->d_keys, g->d_values, g->d_leaf_rank, dirty_leaves, n_dirty, ranks_changed,
                               g->stream, &bytes);
    if (e == cudaSuccess) /* the host arrays may change once this returns: the copies end first */
        e = cudaStreamSynchronize(g->stream);
    if (e != cudaSuccess)
        return hm_gpu_fail(tree, e, "synchronising the device copy after an update");
    set_version(tree, g);
    *bytes_out = bytes;
    *incremental_out = true;
    return HARMONIA_OK;
}

/* Device arrays of one version of the tree. */
typedef struct hm_version_arrays {
    void *keys, *values;
    uint32_t *first_child;
    uint64_t *leaf_rank;
    uint64_t key_bytes, value_bytes, first_child_bytes, rank_bytes;
} hm_version_arrays;

static void version_sizes(const kr_tree *t, hm_version_arrays *a)
{
    const size_t kb = t->key_bits / 8;
    a->key_bytes = kr_key_slots(t) * kb;
    a->value_bytes = t->n_leaves * t->leaf_size * kb;
    a->first_child_bytes = (t->n_internal + 1) * sizeof(uint32_t);
    a->rank_bytes = (t->n_leaves + 1) * sizeof(uint64_t);
}

/* Frees arrays no work uses (or will use once `stream` gets there, for stream-ordered memory). */
static void free_version_arrays(hm_gpu *g, hm_version_arrays *a, cudaStream_t stream)
{
    void *pointers[4] = {a->keys, a->values, a->first_child, a->leaf_rank};
    const uint64_t bytes[4] = {a->key_bytes, a->value_bytes, a->first_child_bytes, a->rank_bytes};
    for (int i = 0; i < 4; i++) {
        if (!pointers[i])
            continue;
        if (g->has_allocator && g->allocator.device_free)
            g->allocator.device_free(g->allocator.context, pointers[i], bytes[i] ? bytes[i] : 1, (void *)stream);
        else if (g->stream_ordered)
            cudaFreeAsync(pointers[i], stream);
        else
            cudaFree(pointers[i]);
    }
    memset(a, 0, sizeof *a);
    cudaGetLastError();
}

extern "C" harmonia_status hm_gpu_sync(harmonia_tree *tree, const kr_tree *next, const uint64_t *dirty_leaves,
                                       uint64_t n_dirty, bool ranks_changed, bool skip, void (*publish)(void *context),
                                       void *context, uint64_t *bytes_out, bool *incremental_out, bool *blocking_out)
{
    *bytes_out = 0;
    *incremental_out = false;
    *blocking_out = false;
    pthread_mutex_lock(&tree->gpu_lock);
    hm_gpu *g = tree->gpu;
    if (!g || skip) {
        publish(context);
        pthread_mutex_unlock(&tree->gpu_lock);
        return HARMONIA_OK;
    }
    hm_device_scope scope;
    cudaError_t e = hm_device_enter(&scope, g->device);
    if (e != cudaSuccess) {
        publish(context);
        pthread_mutex_unlock(&tree->gpu_lock);
        return hm_gpu_fail(tree, e, "selecting the tree's device");
    }
    if (g->version != tree->version) {
        /* a copy older than N (a batch with skip_upload before): a query may replace it as soon as
         * the lock is given back, so it is not worked on without the lock: uploaded again under it */
        publish(context);
        *blocking_out = true;
        harmonia_status st = sync_in_place(tree, NULL, 0, false, bytes_out, incremental_out);
        hm_device_leave(&scope);
        pthread_mutex_unlock(&tree->gpu_lock);
        return st;
    }
    if (!g->update_stream)
        e = cudaStreamCreateWithFlags(&g->update_stream, cudaStreamNonBlocking);
    if (e == cudaSuccess && !g->retired)
        e = cudaEventCreateWithFlags(&g->retired, cudaEventDisableTiming);
    /* from N's device arrays when N+1 has N's shape: nothing else frees or writes them before the
     * publish (uploads and releases do not run during an update, and a query uploads only a copy
     * of another version than the tree's) */
    const bool from_device = dirty_leaves && g->view.n_leaves == next->n_leaves &&
                             g->view.n_internal == next->n_internal;
    hm_version_arrays old = {g->d_keys, g->d_values, g->d_first_child, g->d_leaf_rank,
                             g->key_bytes, g->value_bytes, g->first_child_bytes, g->rank_bytes};
    const cudaStream_t us = g->update_stream;
    pthread_mutex_unlock(&tree->gpu_lock); /* GPU queries go on with N meanwhile */

    /* --- N+1's arrays beside N's, if they fit --- */
    hm_version_arrays fresh;
    memset(&fresh, 0, sizeof fresh);
    version_sizes(next, &fresh);
    const uint64_t needed = hm_device_copy_bytes(next);
    bool fits = e == cudaSuccess;
    e = cudaSuccess;
    if (fits && !(g->has_allocator && g->allocator.device_alloc)) {
        size_t free_bytes = 0, total_bytes = 0;
        fits = cudaMemGetInfo(&free_bytes, &total_bytes) == cudaSuccess;
        if (fits && needed > free_bytes) { /* memory a pool holds unused goes back first */
            cudaMemPool_t pool;
            if (cudaDeviceGetDefaultMemPool(&pool, g->device) == cudaSuccess && cudaMemPoolTrimTo(pool, 0) == cudaSuccess)
                fits = cudaMemGetInfo(&free_bytes, &total_bytes) == cudaSuccess;
        }
        fits = fits && needed <= free_bytes;
        cudaGetLastError();
    }
    if (fits) { /* the caller's allocator answers for itself: NULL = no room */
        void *pointers[4] = {NULL, NULL, NULL, NULL};
        const uint64_t sizes[4] = {fresh.key_bytes, fresh.value_bytes, fresh.first_child_bytes, fresh.rank_bytes};
        for (int i = 0; i < 4 && fits; i++)
            fits = alloc_on(g, &pointers[i], sizes[i], us) == cudaSuccess;
        fresh.keys = pointers[0];
        fresh.values = pointers[1];
        fresh.first_child = (uint32_t *)pointers[2];
        fresh.leaf_rank = (uint64_t *)pointers[3];
        if (!fits) {
            cudaStreamSynchronize(us);
            free_version_arrays(g, &fresh, us);
            cudaStreamSynchronize(us);
        }
        cudaGetLastError();
    }
    if (!fits) { /* the documented fallback: the copy replaced in place, GPU queries waiting */
        pthread_mutex_lock(&tree->gpu_lock);
        publish(context);
        *blocking_out = true;
        harmonia_status st = sync_in_place(tree, dirty_leaves, n_dirty, ranks_changed, bytes_out, incremental_out);
        hm_device_leave(&scope);
        pthread_mutex_unlock(&tree->gpu_lock);
        return st;
    }
    uint64_t bytes = 0;
    if (from_device) { /* N's arrays on the device, then what the batch changed */
        e = cudaMemcpyAsync(fresh.keys, old.keys, fresh.key_bytes, cudaMemcpyDeviceToDevice, us);
        if (e == cudaSuccess)
            e = cudaMemcpyAsync(fresh.values, old.values, fresh.value_bytes, cudaMemcpyDeviceToDevice, us);
        if (e == cudaSuccess)
            e = cudaMemcpyAsync(fresh.first_child, old.first_child, fresh.first_child_bytes, cudaMemcpyDeviceToDevice, us);
        if (e == cudaSuccess)
            e = cudaMemcpyAsync(fresh.leaf_rank, old.leaf_rank, fresh.rank_bytes, cudaMemcpyDeviceToDevice, us);
        if (e == cudaSuccess)
            e = copy_dirty(g, next, fresh.keys, fresh.values, fresh.leaf_rank, dirty_leaves, n_dirty, ranks_changed, us,
                           &bytes);
    } else {
        /* through the pinned staging (gpu_upload.cu): only the updater uses it now (one update at a
         * time; uploads and releases do not run during an update) */
        e = hm_upload(g, fresh.keys, next->keys, fresh.key_bytes, us, 0);
        if (e == cudaSuccess) e = hm_upload(g, fresh.values, next->leaf_values, fresh.value_bytes, us, 0);
        if (e == cudaSuccess) e = hm_upload(g, fresh.first_child, next->first_child, fresh.first_child_bytes, us, 0);
        if (e == cudaSuccess) e = hm_upload(g, fresh.leaf_rank, next->leaf_rank, fresh.rank_bytes, us, 0);
        bytes = needed;
    }
    if (e == cudaSuccess) /* complete before any query may see it */
        e = cudaStreamSynchronize(us);
    if (e != cudaSuccess) {
        harmonia_status st = hm_gpu_fail(tree, e, "making the device copy of the new version");
        cudaStreamSynchronize(us);
        free_version_arrays(g, &fresh, us);
        pthread_mutex_lock(&tree->gpu_lock);
        publish(context);
        hm_device_leave(&scope);
        pthread_mutex_unlock(&tree->gpu_lock);
        return st;
    }

    /* --- the publish point: host and device switch to N+1 together --- */
    pthread_mutex_lock(&tree->gpu_lock);
    publish(context);
    g->d_keys = fresh.keys;
    g->d_values = fresh.values;
    g->d_first_child = fresh.first_child;
    g->d_leaf_rank = fresh.leaf_rank;
    g->key_bytes = fresh.key_bytes;
    g->value_bytes = fresh.value_bytes;
    g->first_child_bytes = fresh.first_child_bytes;
    g->rank_bytes = fresh.rank_bytes;
    set_version(tree, g);
    /* N's arrays go after the queries queued on them: the copy's stream waited for each (query_done;
     * the synchronous calls still in flight now) */
    hm_gpu_order_after_calls(g);
    const bool stream_ordered_free = !(g->has_allocator && g->allocator.device_free) && g->stream_ordered;
    if (stream_ordered_free)
        free_version_arrays(g, &old, g->stream);
    else
        e = cudaEventRecord(g->retired, g->stream);
    pthread_mutex_unlock(&tree->gpu_lock);
    if (!stream_ordered_free) { /* the caller's free may be immediate: wait for those queries alone */
        if (e == cudaSuccess)
            e = cudaEventSynchronize(g->retired);
        if (e != cudaSuccess)
            cudaStreamSynchronize(g->stream);
        free_version_arrays(g, &old, g->stream);
    }
    hm_device_leave(&scope);
    *bytes_out = bytes;
    *incremental_out = from_device;
    return HARMONIA_OK;
}

harmonia_status hm_gpu_enter(harmonia_tree *tree, hm_device_scope *scope)
{
    harmonia_status st = lock_and_enter(tree, scope);
    if (st != HARMONIA_OK)
        return st;
    if (!tree->gpu || tree->gpu->version != tree->version) {
        int device = 0;
        cudaGetDevice(&device);
        st = upload_locked(tree, device);
    }
    if (st == HARMONIA_OK) /* harmonia_set_constant_levels may have changed the cut since the upload */
        set_top_cut(tree, tree->gpu);
    if (st == HARMONIA_OK)
        st = prepare_start(tree, tree->gpu);
    if (st != HARMONIA_OK) {
        hm_device_leave(scope);
        pthread_mutex_unlock(&tree->gpu_lock);
    }
    return st;
}

void hm_gpu_leave(harmonia_tree *tree, const hm_device_scope *scope)
{
    hm_device_leave(scope);
    pthread_mutex_unlock(&tree->gpu_lock);
}

/* The buffers of one lane for windows of `window` queries (those of the kinds asked and missing). */
static cudaError_t alloc_lane(hm_gpu *g, hm_lane *lane, uint32_t window, bool host_staging, bool psa,
                              size_t psa_bytes)
{
    const size_t bytes = (size_t)window * 8;
    cudaError_t e = cudaSuccess;
    if (!lane->stream) {
        e = cudaStreamCreateWithFlags(&lane->stream, cudaStreamNonBlocking);
        if (e == cudaSuccess)
            e = cudaEventCreateWithFlags(&lane->done, cudaEventDisableTiming);
    }
    if (e == cudaSuccess && host_staging && !lane->h_in[0]) {
        for (int k = 0; k < HM_LANE_IN && e == cudaSuccess; k++)
            e = hm_gpu_alloc(g, &lane->d_in[k], bytes);
        for (int k = 0; k < HM_LANE_OUT && e == cudaSuccess; k++)
            e = hm_gpu_alloc(g, &lane->d_out[k], bytes);
        const bool device_ok = e == cudaSuccess;
        for (int k = 0; k < HM_LANE_IN && e == cudaSuccess; k++)
            e = hm_gpu_alloc_pinned(g, &lane->h_in[k], bytes);
        for (int k = 0; k < HM_LANE_OUT && e == cudaSuccess; k++)
            e = hm_gpu_alloc_pinned(g, &lane->h_out[k], bytes);
        if (device_ok && e == cudaErrorMemoryAllocation)
            e = cudaErrorHostMemoryAlreadyRegistered; /* the pinned part: prepare_lanes says so */
        if (e == cudaSuccess) {
            g->lane_bytes += bytes * (HM_LANE_IN + HM_LANE_OUT);
            g->pinned_bytes += bytes * (HM_LANE_IN + HM_LANE_OUT);
        }
    }
    if (e == cudaSuccess && psa && !lane->psa_scratch) {
        e = hm_gpu_alloc(g, &lane->psa_scratch, psa_bytes);
        if (e == cudaSuccess) {
            lane->psa_scratch_bytes = psa_bytes;
            g->lane_bytes += psa_bytes;
        }
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
    /* the scratch's size only where a lane lacks one (sizing asks CUB twice, ≈ 0.4 µs) */
    bool need_scratch = false;
    for (uint32_t i = 0; psa && i < lanes; i++)
        need_scratch = need_scratch || !g->lanes[i].psa_scratch;
    size_t psa_bytes = 0;
    if (need_scratch)
        HM_CUDA(tree, psa_scratch_bytes(g->view.key_bits, window, &psa_bytes));
    g->window = window; /* the buffers' size, for their frees */
    bool allocated = false;
    for (uint32_t i = 0; i < lanes; i++) {
        hm_lane *lane = &g->lanes[i];
        const bool had = lane->stream && (!host_staging || lane->h_in[0]) && (!psa || lane->psa_scratch);
        cudaError_t e = alloc_lane(g, lane, window, host_staging, psa, psa_bytes);
        if (e == cudaErrorHostMemoryAlreadyRegistered) { /* alloc_lane's mark of the pinned part */
            free_lanes(g);
            cudaGetLastError();
            return hm_fail(tree, HARMONIA_ERR_NO_MEMORY,
                           "out of pinned host memory for the staging of host-array queries (%zu bytes a "
                           "buffer, from the tree's allocator or cudaHostAlloc); device arrays need none",
                           (size_t)window * 8);
        }
        if (e != cudaSuccess) {
            free_lanes(g);
            return hm_gpu_fail(tree, e, "allocating the query pipeline's buffers");
        }
        allocated = allocated || !had;
    }
    g->lanes_staging = g->lanes_staging || host_staging;
    g->lanes_psa = g->lanes_psa || psa;
    if (allocated) /* stream-ordered allocations: the lanes (through their callers) wait for them */
        HM_CUDA(tree, hm_gpu_announce(g));
    return HARMONIA_OK;
}

harmonia_status hm_gpu_prepare_table(harmonia_tree *tree, const psa_plan *plan, const uint32_t **table_out)
{
    hm_gpu *g = tree->gpu;
    *table_out = NULL;
    int slot = -1;
    for (int i = 0; i < HM_BUCKET_TABLES; i++)
        if (g->tables[i].valid && psa_same_buckets(&g->tables[i].plan, plan)) {
            *table_out = g->tables[i].d;
            return HARMONIA_OK;
        }
    for (int i = 0; i < HM_BUCKET_TABLES && slot < 0; i++)
        if (!g->tables[i].valid)
            slot = i;
    if (slot < 0) /* every table holds another plan: the one built longest ago gives way */
        slot = (int)g->table_next;
    g->table_next = (uint32_t)(slot + 1) % HM_BUCKET_TABLES;
    hm_bucket_table *b = &g->tables[slot];
    b->valid = false; /* until rebuilt: a failure below leaves no table claiming the old plan */
    const uint64_t bytes = (((uint64_t)1 << plan->bits) + 1) * sizeof(uint32_t);
    if (bytes > b->bytes) {
        hm_gpu_free(g, b->d, b->bytes); /* after the calls that may still read it */
        b->d = NULL;
        b->bytes = 0;
        HM_CUDA(tree, hm_gpu_alloc(g, (void **)&b->d, bytes));
        b->bytes = bytes;
    }
    /* on the copy's stream: after the queries already queued (which may read the old table), before
     * the ones that wait for the announcement */
    hm_gpu_order_after_calls(g);
    HM_CUDA(tree, ntg_build_bucket_table(&g->view, plan, b->d, g->stream));
    HM_CUDA(tree, hm_gpu_announce(g));
    b->plan = *plan;
    b->valid = true;
    *table_out = b->d;
    return HARMONIA_OK;
}

harmonia_status hm_gpu_prepare_scan(harmonia_tree *tree, uint64_t count)
{
    hm_gpu *g = tree->gpu;
    if (g->scan_capacity >= count + 1)
        return HARMONIA_OK;
    free_scan(g);
    size_t bytes = 0, scan = 0;
    HM_CUDA(tree, hm_scan_scratch_bytes(count, &bytes, &scan));
    HM_CUDA(tree, hm_gpu_alloc(g, &g->scan_scratch, bytes));
    g->scan_scratch_bytes = bytes;
    g->scan_capacity = count + 1;
    HM_CUDA(tree, hm_gpu_announce(g));
    return HARMONIA_OK;
}

extern "C" void hm_gpu_fill_info(const harmonia_tree *tree, harmonia_tree_info *info)
{
    harmonia_tree *t = (harmonia_tree *)tree; /* the lock is the tree's, not part of its value */
    pthread_mutex_lock(&t->gpu_lock);
    if (t->gpu) {
        info->device_resident = true;
        info->device_version = t->gpu->version;
        info->device_bytes = t->gpu->tree_bytes + t->gpu->lane_bytes + t->gpu->scan_scratch_bytes +
                             t->gpu->start_bytes + t->gpu->start_fine_bytes;
        for (int i = 0; i < HM_BUCKET_TABLES; i++)
            info->device_bytes += t->gpu->tables[i].bytes;
        info->device = t->gpu->device;
    }
    pthread_mutex_unlock(&t->gpu_lock);
}
