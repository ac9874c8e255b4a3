/* gpu_build.cu — the GPU bulk build's plumbing (harmonia.h, harmonia_build, says what it does): the
 * device, the memory check, the pinned chunked transfers (host arrays) or the reading in place
 * (device arrays), the order of the device-wide steps of key_region/kr_build_gpu.h on two streams
 * (the values' upload overlaps the sort), the host tree filled from the result, and the result kept
 * as the tree's device copy. The steps themselves (sort, checks, layout) are key_region's. */
#include <inttypes.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "harmonia/gpu_internal.h"

extern "C" {
#include "key_region/kr_build_gpu.h"
#include "prefix_sum/prefix_sum.h"
}

extern "C" bool hm_gpu_is_device_pointer(const void *p, int *device_out)
{
    *device_out = -1;
    if (!p || !hm_gpu_usable())
        return false;
    const hm_pointer_kind kind = hm_pointer_where(p, device_out);
    return kind == HM_POINTER_DEVICE || kind == HM_POINTER_MANAGED;
}

/* --- pinned staging ------------------------------------------------------------------------------
 * HM_BUILD_STAGING_BUFFERS buffers used in turn: buffer b is refilled (up) or emptied (down) on the
 * host once its last DMA is done, while the DMAs of the other buffers run. */
typedef struct staging {
    void *pinned[HM_BUILD_STAGING_BUFFERS];
    cudaEvent_t done[HM_BUILD_STAGING_BUFFERS];
    void *pending_dst[HM_BUILD_STAGING_BUFFERS]; /* down: where buffer b's chunk goes, NULL = none */
    size_t pending_bytes[HM_BUILD_STAGING_BUFFERS];
    uint64_t next;
    int threads;
} staging;

static cudaError_t staging_make(hm_gpu *work, staging *s, int threads)
{
    memset(s, 0, sizeof *s);
    s->threads = threads;
    for (int b = 0; b < HM_BUILD_STAGING_BUFFERS; b++) {
        cudaError_t e = hm_gpu_alloc_pinned(work, &s->pinned[b], HM_BUILD_STAGING_CHUNK);
        if (e == cudaSuccess)
            e = cudaEventCreateWithFlags(&s->done[b], cudaEventDisableTiming);
        if (e != cudaSuccess)
            return e;
    }
    return cudaSuccess;
}

static void staging_free(hm_gpu *work, staging *s)
{
    for (int b = 0; b < HM_BUILD_STAGING_BUFFERS; b++) {
        if (s->done[b]) {
            cudaEventSynchronize(s->done[b]);
            cudaEventDestroy(s->done[b]);
        }
        hm_gpu_free_pinned(work, s->pinned[b], HM_BUILD_STAGING_CHUNK);
    }
    memset(s, 0, sizeof *s);
}

/* host (pageable or pinned) -> device, queued on stream; returns once the last chunk is queued. */
static cudaError_t stage_up(staging *s, void *dst, const void *src, size_t bytes, cudaStream_t stream)
{
    if (hm_is_pinned_host(src))
        return cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, stream);
    for (size_t off = 0; off < bytes; off += HM_BUILD_STAGING_CHUNK) {
        const int b = (int)(s->next++ % HM_BUILD_STAGING_BUFFERS);
        const size_t n = bytes - off < HM_BUILD_STAGING_CHUNK ? bytes - off : HM_BUILD_STAGING_CHUNK;
        cudaError_t e = cudaEventSynchronize(s->done[b]); /* its previous DMA has read it */
        if (e != cudaSuccess)
            return e;
        kr_parallel_copy(s->pinned[b], (const char *)src + off, n, s->threads);
        e = cudaMemcpyAsync((char *)dst + off, s->pinned[b], n, cudaMemcpyHostToDevice, stream);
        if (e == cudaSuccess)
            e = cudaEventRecord(s->done[b], stream);
        if (e != cudaSuccess)
            return e;
    }
    return cudaSuccess;
}

/* Empties buffer b into its destination once its DMA is done. */
static cudaError_t stage_drain(staging *s, int b)
{
    if (!s->pending_dst[b])
        return cudaSuccess;
    cudaError_t e = cudaEventSynchronize(s->done[b]);
    if (e == cudaSuccess)
        kr_parallel_copy(s->pending_dst[b], s->pinned[b], s->pending_bytes[b], s->threads);
    s->pending_dst[b] = NULL;
    return e;
}

/* device -> host, queued on stream after the work queued there; the last chunks stay pending until
 * stage_finish. */
static cudaError_t stage_down(staging *s, void *dst, const void *src, size_t bytes, cudaStream_t stream)
{
    for (size_t off = 0; off < bytes; off += HM_BUILD_STAGING_CHUNK) {
        const int b = (int)(s->next++ % HM_BUILD_STAGING_BUFFERS);
        const size_t n = bytes - off < HM_BUILD_STAGING_CHUNK ? bytes - off : HM_BUILD_STAGING_CHUNK;
        cudaError_t e = stage_drain(s, b);
        if (e == cudaSuccess)
            e = cudaMemcpyAsync(s->pinned[b], (const char *)src + off, n, cudaMemcpyDeviceToHost, stream);
        if (e == cudaSuccess)
            e = cudaEventRecord(s->done[b], stream);
        if (e != cudaSuccess)
            return e;
        s->pending_dst[b] = (char *)dst + off;
        s->pending_bytes[b] = n;
    }
    return cudaSuccess;
}

static cudaError_t stage_finish(staging *s)
{
    cudaError_t e = cudaSuccess;
    for (uint64_t k = 0; k < HM_BUILD_STAGING_BUFFERS; k++) { /* in the order they were queued */
        cudaError_t f = stage_drain(s, (int)((s->next + k) % HM_BUILD_STAGING_BUFFERS));
        if (e == cudaSuccess)
            e = f;
    }
    return e;
}

/* --- the build ------------------------------------------------------------------------------------ */

/* The build's scratch (device memory from the tree's allocator, on the work stream). */
typedef struct build_buffers {
    void *keys[2];
    uint32_t *positions[2]; /* count + 1 entries each: the second serves as the dedupe's offsets */
    void *values_in, *values;
    void *temp;
    size_t temp_bytes;
    unsigned long long *order; /* 2 words: kr_gpu_find_order */
    uint64_t *node_min;
    uint64_t node_min_words;
} build_buffers;

static void progress(const kr_build_params *p, const char *phase, double fraction)
{
    if (p->progress)
        p->progress(p->progress_arg, phase, fraction);
}

/* A key array's word i, read back (a few words, for the messages). */
static cudaError_t read_word(uint32_t key_bits, const void *array, uint64_t i, uint64_t *out, cudaStream_t stream)
{
    *out = 0;
    cudaError_t e = cudaMemcpyAsync(out, (const char *)array + i * (key_bits / 8), key_bits / 8,
                                    cudaMemcpyDeviceToHost, stream);
    if (e == cudaSuccess)
        e = cudaStreamSynchronize(stream);
    return e; /* little-endian: a 32-bit word lands in the low half */
}

#define CUDA_STEP(call, what)                                                                      \
    do {                                                                                           \
        cudaError_t e_ = (call);                                                                   \
        if (e_ != cudaSuccess) {                                                                   \
            st = hm_gpu_fail(tree, e_, (what));                                                    \
            goto done;                                                                             \
        }                                                                                          \
    } while (0)

static harmonia_status build_locked(harmonia_tree *tree, int device, const kr_build_params *p, const void *keys,
                                    const void *values, uint64_t count, bool device_arrays,
                                    cudaStream_t caller_stream, kr_error *err)
{
    const uint32_t key_bits = p->key_bits, kb = key_bits / 8;
    harmonia_status st = HARMONIA_OK;
    hm_gpu *g = NULL;
    staging stage;
    memset(&stage, 0, sizeof stage);
    build_buffers buf;
    memset(&buf, 0, sizeof buf);
    cudaStream_t upload = NULL;
    cudaEvent_t keys_in = NULL, values_in = NULL, ready = NULL;
    uint64_t order[2] = {count, count}, unique = count;
    int current = 0; /* the half of the double buffers holding the sorted pairs */

    /* the work handle: the tree's allocator, a stream of its own (the device copy gets its own) */
    hm_gpu work;
    memset(&work, 0, sizeof work);
    work.device = device;
    work.has_allocator = tree->has_allocator;
    work.allocator = tree->allocator;
    int pools = 0;
    if (cudaDeviceGetAttribute(&pools, cudaDevAttrMemoryPoolsSupported, device) != cudaSuccess)
        pools = 0;
    work.stream_ordered = pools != 0;
    cudaGetLastError();

    /* the memory check: the sort's buffers, the estimate of the device copy (the shape of count
     * keys: duplicates dropped can only shrink it) and the first levels' scratch */
    kr_tree shape;
    st = kr_plan_even(&shape, key_bits, p->fanout, p->leaf_size, p->leaf_fill, count, err);
    if (st != HARMONIA_OK)
        return hm_fail(tree, st, "%s", err->message);
    size_t temp_bytes = 0;
    {
        cudaError_t e = kr_gpu_temp_bytes(key_bits, count, &temp_bytes);
        if (e != cudaSuccess)
            return hm_gpu_fail(tree, e, "sizing the GPU build's sort");
    }
    const uint64_t scratch = 4 * count * kb + 2 * (count + 1) * sizeof(uint32_t) + temp_bytes +
                             shape.n_internal * sizeof(uint64_t) + HM_BUILD_STAGING_BUFFERS * 256;
    const uint64_t needed = scratch + hm_device_copy_bytes(&shape);
    size_t free_bytes = 0, total_bytes = 0;
    HM_CUDA(tree, cudaMemGetInfo(&free_bytes, &total_bytes));
    if (needed > free_bytes) {
        cudaMemPool_t pool;
        if (cudaDeviceGetDefaultMemPool(&pool, device) == cudaSuccess && cudaMemPoolTrimTo(pool, 0) == cudaSuccess)
            HM_CUDA(tree, cudaMemGetInfo(&free_bytes, &total_bytes));
        cudaGetLastError();
    }
    if (needed > free_bytes)
        return hm_fail(tree, HARMONIA_ERR_DEVICE_MEMORY,
                       "building %" PRIu64 " pairs on the GPU needs %" PRIu64 " bytes of GPU memory on device %d; "
                       "%zu bytes are free (of %zu)", count, needed, device, free_bytes, total_bytes);

    CUDA_STEP(cudaStreamCreateWithFlags(&work.stream, cudaStreamNonBlocking), "the GPU build's stream");
    CUDA_STEP(cudaStreamCreateWithFlags(&upload, cudaStreamNonBlocking), "the GPU build's upload stream");
    CUDA_STEP(cudaEventCreateWithFlags(&keys_in, cudaEventDisableTiming), "the GPU build's events");
    CUDA_STEP(cudaEventCreateWithFlags(&values_in, cudaEventDisableTiming), "the GPU build's events");
    CUDA_STEP(cudaEventCreateWithFlags(&ready, cudaEventDisableTiming), "the GPU build's events");
    for (int h = 0; h < 2; h++) {
        CUDA_STEP(hm_gpu_alloc(&work, &buf.keys[h], count * kb), "allocating the GPU build's keys");
        CUDA_STEP(hm_gpu_alloc(&work, (void **)&buf.positions[h], (count + 1) * sizeof(uint32_t)),
                  "allocating the GPU build's positions");
    }
    CUDA_STEP(hm_gpu_alloc(&work, &buf.values_in, count * kb), "allocating the GPU build's values");
    CUDA_STEP(hm_gpu_alloc(&work, &buf.values, count * kb), "allocating the GPU build's values");
    CUDA_STEP(hm_gpu_alloc(&work, &buf.temp, temp_bytes), "allocating the GPU build's sort scratch");
    buf.temp_bytes = temp_bytes;
    CUDA_STEP(hm_gpu_alloc(&work, (void **)&buf.order, 2 * sizeof(unsigned long long)),
              "allocating the GPU build's scratch");
    /* the upload stream and the caller's arrays: after the allocations, after the caller's work */
    CUDA_STEP(cudaEventRecord(ready, work.stream), "ordering the GPU build");
    CUDA_STEP(cudaStreamWaitEvent(upload, ready, 0), "ordering the GPU build");
    if (device_arrays) {
        CUDA_STEP(cudaEventRecord(ready, caller_stream), "waiting for the caller's stream");
        CUDA_STEP(cudaStreamWaitEvent(upload, ready, 0), "waiting for the caller's stream");
    } else {
        CUDA_STEP(staging_make(&work, &stage, p->threads), "allocating the GPU build's pinned staging");
    }

    /* 1. keys up, then (key, position) sorted on the work stream while the values follow */
    progress(p, "upload", 0.0);
    CUDA_STEP(kr_gpu_iota32(buf.positions[0], count, work.stream), "the GPU build's positions");
    if (count > 0)
        CUDA_STEP(device_arrays ? cudaMemcpyAsync(buf.keys[0], keys, count * kb, cudaMemcpyDeviceToDevice, upload)
                                : stage_up(&stage, buf.keys[0], keys, count * kb, upload),
                  "copying the keys to the GPU");
    CUDA_STEP(cudaEventRecord(keys_in, upload), "ordering the GPU build");
    CUDA_STEP(cudaStreamWaitEvent(work.stream, keys_in, 0), "ordering the GPU build");
    if (p->input_sorted)
        CUDA_STEP(kr_gpu_find_order(key_bits, buf.keys[0], count, buf.order, work.stream), "checking the order");
    else
        CUDA_STEP(kr_gpu_sort_pairs(key_bits, buf.keys, buf.positions, count, buf.temp, buf.temp_bytes, &current,
                                    work.stream),
                  "sorting the pairs on the GPU");
    if (values && count > 0)
        CUDA_STEP(device_arrays ? cudaMemcpyAsync(buf.values_in, values, count * kb, cudaMemcpyDeviceToDevice, upload)
                                : stage_up(&stage, buf.values_in, values, count * kb, upload),
                  "copying the values to the GPU");
    CUDA_STEP(cudaEventRecord(values_in, upload), "ordering the GPU build");
    CUDA_STEP(cudaStreamWaitEvent(work.stream, values_in, 0), "ordering the GPU build");
    progress(p, "upload", 1.0);

    /* 2. the values in sorted order; the order checked (an input promised sorted) and the
     *    duplicate policy, as kr_build does it */
    progress(p, "sort", 0.0);
    CUDA_STEP(kr_gpu_gather_values(key_bits, values ? buf.values_in : NULL, buf.positions[current], buf.values, count,
                                   work.stream),
              "gathering the values");
    if (!p->input_sorted)
        CUDA_STEP(kr_gpu_find_order(key_bits, buf.keys[current], count, buf.order, work.stream),
                  "looking for duplicates");
    {
        unsigned long long words[2] = {count, count};
        CUDA_STEP(cudaMemcpyAsync(words, buf.order, sizeof words, cudaMemcpyDeviceToHost, work.stream),
                  "looking for duplicates");
        CUDA_STEP(cudaStreamSynchronize(work.stream), "sorting the pairs on the GPU");
        order[0] = words[0];
        order[1] = words[1];
    }
    if (p->input_sorted && order[0] < count) {
        uint64_t key = 0, previous = 0;
        CUDA_STEP(read_word(key_bits, buf.keys[current], order[0], &key, work.stream), "reading a key back");
        CUDA_STEP(read_word(key_bits, buf.keys[current], order[0] - 1, &previous, work.stream), "reading a key back");
        kr_error_unsorted(err, key, order[0], previous);
        st = HARMONIA_ERR_UNSORTED;
        goto done;
    }
    if (order[1] < count) {
        const uint64_t rep = order[1];
        if (p->duplicates == HARMONIA_DUPLICATES_REJECT) {
            uint64_t key = 0, first = rep - 1, second = rep;
            CUDA_STEP(read_word(key_bits, buf.keys[current], rep, &key, work.stream), "reading a key back");
            if (!p->input_sorted && !values) { /* the values are the input positions */
                CUDA_STEP(read_word(key_bits, buf.values, rep - 1, &first, work.stream), "reading a value back");
                CUDA_STEP(read_word(key_bits, buf.values, rep, &second, work.stream), "reading a value back");
            }
            kr_error_duplicate(err, key, p->input_sorted, values != NULL, first, second);
            st = HARMONIA_ERR_DUPLICATE_KEY;
            goto done;
        }
        uint32_t kept = 0;
        CUDA_STEP(kr_gpu_dedupe(key_bits, buf.keys[current], buf.values, count,
                                p->duplicates == HARMONIA_DUPLICATES_KEEP_LAST, buf.positions[1 - current], buf.temp,
                                buf.temp_bytes, buf.keys[1 - current], buf.values_in, work.stream),
                  "removing duplicates on the GPU");
        CUDA_STEP(cudaMemcpyAsync(&kept, buf.positions[1 - current] + count, sizeof kept, cudaMemcpyDeviceToHost,
                                  work.stream),
                  "removing duplicates on the GPU");
        CUDA_STEP(cudaStreamSynchronize(work.stream), "removing duplicates on the GPU");
        unique = kept;
        current = 1 - current;
        void *swap = buf.values;
        buf.values = buf.values_in;
        buf.values_in = swap;
    }
    progress(p, "sort", 1.0);

    /* 3. the host tree's shape and arrays, the device copy, the layout into it */
    progress(p, "layout", 0.0);
    st = kr_plan_even(&tree->kr, key_bits, p->fanout, p->leaf_size, p->leaf_fill, unique, err);
    if (st == HARMONIA_OK)
        st = kr_alloc_built_arrays(&tree->kr, err);
    if (st != HARMONIA_OK) {
        hm_fail(tree, st, "%s", err->message);
        err->message[0] = '\0';
        goto done;
    }
    ps_build(tree->kr.first_child, tree->kr.level_start, tree->kr.height);
    st = hm_gpu_new_copy(tree, device, "building the tree on the GPU", &g);
    if (st != HARMONIA_OK)
        goto done;
    buf.node_min_words = tree->kr.n_internal ? tree->kr.n_internal : 1;
    CUDA_STEP(hm_gpu_alloc(&work, (void **)&buf.node_min, buf.node_min_words * sizeof(uint64_t)),
              "allocating the GPU build's scratch");
    CUDA_STEP(cudaEventRecord(ready, g->stream), "ordering the GPU build"); /* the copy's allocations */
    CUDA_STEP(cudaStreamWaitEvent(work.stream, ready, 0), "ordering the GPU build");
    CUDA_STEP(cudaMemcpyAsync(g->d_first_child, tree->kr.first_child, g->first_child_bytes, cudaMemcpyHostToDevice,
                              work.stream),
              "copying the first-child array to the GPU");
    CUDA_STEP(kr_gpu_layout(&tree->kr, buf.keys[current], buf.values, g->d_keys, g->d_values, g->d_first_child,
                            g->d_leaf_rank, buf.node_min, work.stream),
              "laying the tree out on the GPU");
    CUDA_STEP(cudaStreamSynchronize(work.stream), "laying the tree out on the GPU");
    progress(p, "layout", 1.0);

    /* 4. the host tree from the device copy */
    progress(p, "download", 0.0);
    if (device_arrays && !stage.pinned[0])
        CUDA_STEP(staging_make(&work, &stage, p->threads), "allocating the GPU build's pinned staging");
    CUDA_STEP(stage_down(&stage, tree->kr.keys, g->d_keys, g->key_bytes, work.stream), "copying the tree back");
    CUDA_STEP(stage_down(&stage, tree->kr.leaf_values, g->d_values, g->value_bytes, work.stream),
              "copying the tree back");
    CUDA_STEP(stage_down(&stage, tree->kr.leaf_rank, g->d_leaf_rank, g->rank_bytes, work.stream),
              "copying the tree back");
    CUDA_STEP(stage_finish(&stage), "copying the tree back");
    progress(p, "download", 1.0);

done:
    if (work.stream) { /* the scratch goes back after the work queued on it */
        cudaStreamSynchronize(upload ? upload : work.stream);
        for (int h = 0; h < 2; h++) {
            hm_gpu_free(&work, buf.keys[h], count * kb);
            hm_gpu_free(&work, buf.positions[h], (count + 1) * sizeof(uint32_t));
        }
        hm_gpu_free(&work, buf.values_in, count * kb);
        hm_gpu_free(&work, buf.values, count * kb);
        hm_gpu_free(&work, buf.temp, buf.temp_bytes);
        hm_gpu_free(&work, buf.order, 2 * sizeof(unsigned long long));
        hm_gpu_free(&work, buf.node_min, buf.node_min_words * sizeof(uint64_t));
        cudaStreamSynchronize(work.stream);
    }
    staging_free(&work, &stage);
    if (upload)
        cudaStreamDestroy(upload);
    if (work.stream)
        cudaStreamDestroy(work.stream);
    if (keys_in)
        cudaEventDestroy(keys_in);
    if (values_in)
        cudaEventDestroy(values_in);
    if (ready)
        cudaEventDestroy(ready);
    cudaGetLastError();
    if (st == HARMONIA_OK) {
        hm_gpu_adopt_copy(tree, g); /* the host arrays are filled: the view reads them */
        return HARMONIA_OK;
    }
    hm_gpu_discard_copy(g);
    kr_tree_free_arrays(&tree->kr);
    memset(&tree->kr, 0, sizeof tree->kr);
    return st;
}

extern "C" harmonia_status hm_gpu_build(harmonia_tree *tree, const struct kr_build_params *p, const void *keys,
                                        const void *values, uint64_t count, bool device_arrays, void *stream,
                                        struct kr_error *err)
{
    memset(&tree->kr, 0, sizeof tree->kr);
    if (!hm_gpu_usable())
        return hm_fail(tree, HARMONIA_ERR_NO_DEVICE, "the GPU build was asked for, but no GPU is usable: %s",
                       harmonia_device_probe(NULL) == HARMONIA_OK ? "device lost" : harmonia_last_error(NULL));
    if (count > KR_GPU_MAX_PAIRS)
        return hm_fail(tree, HARMONIA_ERR_CAPACITY,
                       "the GPU build takes at most %llu pairs, not %" PRIu64 " (build on the CPU)",
                       (unsigned long long)KR_GPU_MAX_PAIRS, count);
    pthread_mutex_lock(&tree->gpu_lock);
    int device = tree->device;
    cudaError_t e = device == HARMONIA_DEVICE_CURRENT ? cudaGetDevice(&device) : cudaSuccess;
    hm_device_scope scope;
    if (e == cudaSuccess)
        e = hm_device_enter(&scope, device);
    if (e != cudaSuccess) {
        pthread_mutex_unlock(&tree->gpu_lock);
        return hm_gpu_fail(tree, e, tree->device == HARMONIA_DEVICE_CURRENT ? "selecting the current device"
                                                                            : "selecting the tree's device");
    }
    harmonia_status st = HARMONIA_OK;
    int where = -1;
    if (device_arrays && ((count > 0 && !hm_gpu_is_device_pointer(keys, &where)) ||
                          (count > 0 && values && !hm_gpu_is_device_pointer(values, &where)) ||
                          (count > 0 && where != device)))
        st = hm_fail(tree, HARMONIA_ERR_INVALID,
                     "the GPU build from device arrays needs keys%s in device memory of the tree's device %d%s",
                     values ? " and values" : "", device,
                     where >= 0 && where != device ? " (they live on another device)" : "");
    if (st == HARMONIA_OK)
        st = build_locked(tree, device, p, keys, values, count, device_arrays, (cudaStream_t)stream, err);
    hm_device_leave(&scope);
    pthread_mutex_unlock(&tree->gpu_lock);
    return st;
}
