/* ntg_measure.c — the measured NTG sweep (harmonia_ntg_measure): the workload copied to the tree's
 * GPU once, then harmonia_lookup_async (the public call, device arrays, a stream of its own) timed
 * with CUDA events for every G, median of several runs after warm-ups, and every G's results
 * checked equal. Uses the CUDA runtime's C API only where CUDA is built; elsewhere it answers
 * NO_DEVICE with the probe's reason. The model is ntg/ntg_model.c, the choice and the stored G
 * ntg_choice.c. The front's code: it drives the public calls on a tree. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <xxhash.h>

#ifdef HARMONIA_HAVE_CUDA
#include <cuda_runtime.h>
#endif

#include "harmonia/gpu_engine.h"
#include "harmonia/tree_internal.h"
#include "ntg/ntg_model.h"

#ifdef HARMONIA_HAVE_CUDA

static int compare_floats(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return x < y ? -1 : x > y;
}

/* The device side of one measurement: arrays, stream, events, and the host copies for the check. */
typedef struct sweep {
    void *d_queries, *d_values;
    uint8_t *d_found;
    void *d_positions;         /* unordered results only: 32-bit words (the fast path,
                                  harmonia_lookup_unordered32) up to 2^32 queries, else 64-bit */
    size_t position_bytes;
    void *h_values;
    uint8_t *h_found;
    void *h_positions;
    cudaStream_t stream;
    cudaEvent_t start, stop;
    float *times;              /* ms of the timed runs of one G */
} sweep;

static void sweep_free(sweep *s)
{
    if (s->stream) /* after a failure, work queued before it may still run */
        cudaStreamSynchronize(s->stream);
    cudaFree(s->d_queries);
    cudaFree(s->d_values);
    cudaFree(s->d_found);
    cudaFree(s->d_positions);
    if (s->stream)
        cudaStreamDestroy(s->stream);
    if (s->start)
        cudaEventDestroy(s->start);
    if (s->stop)
        cudaEventDestroy(s->stop);
    free(s->h_values);
    free(s->h_found);
    free(s->h_positions);
    free(s->times);
}

static harmonia_status call_once(harmonia_tree *tree, const harmonia_query_config *q, bool unordered,
                                 const sweep *s, uint64_t count)
{
    if (!unordered)
        return harmonia_lookup_async(tree, q, s->d_queries, count, s->d_values, s->d_found, s->stream);
    return s->position_bytes == 4 ? harmonia_lookup_unordered32_async(tree, q, s->d_queries, count, s->d_values,
                                                                      s->d_found, s->d_positions, s->stream)
                                  : harmonia_lookup_unordered_async(tree, q, s->d_queries, count, s->d_values,
                                                                    s->d_found, s->d_positions, s->stream);
}

/* Copies one G's results back; hashes them and counts the hits. */
static harmonia_status fetch_results(harmonia_tree *tree, sweep *s, uint64_t count, size_t key_bytes,
                                     bool unordered, uint64_t *hash_out, uint64_t *found_out)
{
    cudaError_t e = cudaMemcpyAsync(s->h_values, s->d_values, count * key_bytes, cudaMemcpyDeviceToHost, s->stream);
    if (e == cudaSuccess)
        e = cudaMemcpyAsync(s->h_found, s->d_found, count, cudaMemcpyDeviceToHost, s->stream);
    if (e == cudaSuccess && unordered)
        e = cudaMemcpyAsync(s->h_positions, s->d_positions, count * s->position_bytes, cudaMemcpyDeviceToHost,
                            s->stream);
    if (e == cudaSuccess)
        e = cudaStreamSynchronize(s->stream);
    if (e != cudaSuccess)
        return hm_gpu_fail(tree, e, "NTG measurement: copying the results back");
    XXH3_state_t *state = XXH3_createState();
    if (!state)
        return hm_fail(tree, HARMONIA_ERR_NO_MEMORY, "NTG measurement: out of memory for a hash state");
    XXH3_64bits_reset(state);
    XXH3_64bits_update(state, s->h_values, count * key_bytes);
    XXH3_64bits_update(state, s->h_found, count);
    if (unordered)
        XXH3_64bits_update(state, s->h_positions, count * s->position_bytes);
    *hash_out = XXH3_64bits_digest(state);
    XXH3_freeState(state);
    uint64_t found = 0;
    for (uint64_t i = 0; i < count; i++)
        found += s->h_found[i] != 0;
    *found_out = found;
    return HARMONIA_OK;
}

static harmonia_status measure_on_device(harmonia_tree *tree, const harmonia_ntg_config *config,
                                         const void *queries, uint64_t count,
                                         harmonia_ntg_measurement *result)
{
    const size_t key_bytes = tree->kr.key_bits / 8;
    const bool unordered = config->unordered;
    sweep s;
    memset(&s, 0, sizeof s);
    harmonia_status st = HARMONIA_OK;
#define SWEEP_CUDA(call, what) HM_CUDA_OR_GOTO(tree, st, call, "NTG measurement: " what, done)
    s.times = malloc(result->runs * sizeof *s.times);
    s.h_values = malloc(count * key_bytes);
    s.h_found = malloc(count);
    s.position_bytes = count <= HARMONIA_POSITIONS32_MAX_COUNT ? sizeof(uint32_t) : sizeof(uint64_t);
    s.h_positions = unordered ? malloc(count * s.position_bytes) : NULL;
    if (!s.times || !s.h_values || !s.h_found || (unordered && !s.h_positions)) {
        st = hm_fail(tree, HARMONIA_ERR_NO_MEMORY, "NTG measurement: out of host memory for %llu results",
                     (unsigned long long)count);
        goto done;
    }
    SWEEP_CUDA(cudaMalloc(&s.d_queries, count * key_bytes), "allocating the queries");
    SWEEP_CUDA(cudaMalloc(&s.d_values, count * key_bytes), "allocating the values");
    SWEEP_CUDA(cudaMalloc((void **)&s.d_found, count), "allocating the found flags");
    if (unordered)
        SWEEP_CUDA(cudaMalloc(&s.d_positions, count * s.position_bytes), "allocating the positions");
    SWEEP_CUDA(cudaStreamCreateWithFlags(&s.stream, cudaStreamNonBlocking), "creating a stream");
    SWEEP_CUDA(cudaMemcpyAsync(s.d_queries, queries, count * key_bytes, cudaMemcpyHostToDevice, s.stream),
               "copying the queries");
    SWEEP_CUDA(cudaStreamSynchronize(s.stream), "copying the queries");
    SWEEP_CUDA(cudaEventCreate(&s.start), "creating an event");
    SWEEP_CUDA(cudaEventCreate(&s.stop), "creating an event");

    uint64_t first_hash = 0;
    for (uint32_t k = 0; k < result->size_count; k++) {
        /* widest first: the order the model narrows in */
        const uint32_t idx = result->size_count - 1 - k;
        harmonia_query_config q = *config->query;
        q.backend = HARMONIA_BACKEND_GPU;
        q.memory = HARMONIA_MEMORY_DEVICE;
        q.group_size = result->group_sizes[idx];
        for (uint32_t w = 0; w < result->warmup; w++) {
            if ((st = call_once(tree, &q, unordered, &s, count)) != HARMONIA_OK)
                goto done;
            SWEEP_CUDA(cudaStreamSynchronize(s.stream), "a warm-up call");
        }
        for (uint32_t r = 0; r < result->runs; r++) {
            SWEEP_CUDA(cudaEventRecord(s.start, s.stream), "recording an event");
            if ((st = call_once(tree, &q, unordered, &s, count)) != HARMONIA_OK)
                goto done;
            SWEEP_CUDA(cudaEventRecord(s.stop, s.stream), "recording an event");
            SWEEP_CUDA(cudaEventSynchronize(s.stop), "a timed call");
            SWEEP_CUDA(cudaEventElapsedTime(&s.times[r], s.start, s.stop), "reading an event");
        }
        qsort(s.times, result->runs, sizeof *s.times, compare_floats);
        const uint32_t mid = result->runs / 2;
        const double ms = result->runs % 2 ? s.times[mid] : 0.5 * ((double)s.times[mid - 1] + s.times[mid]);
        result->seconds[idx] = ms * 1e-3;
        result->queries_per_second[idx] = ms > 0 ? (double)count / (ms * 1e-3) : 0.0;

        uint64_t hash = 0, found = 0;
        if ((st = fetch_results(tree, &s, count, key_bytes, unordered, &hash, &found)) != HARMONIA_OK)
            goto done;
        if (k == 0) {
            first_hash = hash;
            result->found = found;
        } else if (hash != first_hash || found != result->found) {
            st = hm_fail(tree, HARMONIA_ERR_DEVICE,
                         "NTG measurement: the results with G = %u differ from those with G = %u "
                         "(%llu and %llu hits)",
                         result->group_sizes[idx], result->group_sizes[result->size_count - 1],
                         (unsigned long long)found, (unsigned long long)result->found);
            goto done;
        }
    }
#undef SWEEP_CUDA
    /* the best: the highest throughput, the smaller G on a tie */
    uint32_t best = 0;
    for (uint32_t k = 1; k < result->size_count; k++) /* ascending G: a tie keeps the smaller */
        if (result->queries_per_second[k] > result->queries_per_second[best])
            best = k;
    result->best = result->group_sizes[best];
done:
    sweep_free(&s);
    return st;
}

#endif /* HARMONIA_HAVE_CUDA */

harmonia_status harmonia_ntg_measure(harmonia_tree *tree, const harmonia_ntg_config *given,
                                     const void *queries, uint64_t count,
                                     harmonia_ntg_measurement *result)
{
    if (!tree)
        return hm_fail(NULL, HARMONIA_ERR_INVALID, "harmonia_ntg_measure: tree is NULL");
    if (!queries || !result)
        return hm_fail(tree, HARMONIA_ERR_INVALID, "harmonia_ntg_measure: NULL queries or result");
    if (count == 0)
        return hm_fail(tree, HARMONIA_ERR_INVALID, "harmonia_ntg_measure: no queries to measure");
    harmonia_ntg_config own;
    harmonia_query_config query;
    harmonia_status st = hm_ntg_config(tree, given, &own, &query);
    if (st != HARMONIA_OK)
        return st;
    const harmonia_ntg_config *config = &own;
    memset(result, 0, sizeof *result);
    result->size_count = ntg_group_sizes(tree->kr.fanout, result->group_sizes);
    result->queries = count;
    result->warmup = config->warmup ? config->warmup : 1;
    result->runs = config->runs ? config->runs : HARMONIA_NTG_DEFAULT_RUNS;
    result->psa = config->query->psa < 0 ? config->unordered : config->query->psa != 0;
    if (!hm_gpu_usable()) {
        harmonia_device_probe(NULL); /* the reason, as the thread's message */
        return hm_fail(tree, HARMONIA_ERR_NO_DEVICE, "%s", harmonia_last_error(NULL));
    }
#ifdef HARMONIA_HAVE_CUDA
    /* on the tree's device (its copy made first), the caller's current device given back after */
    int device = 0, saved = 0;
    if ((st = hm_gpu_device_of(tree, &device)) != HARMONIA_OK)
        return st;
    cudaError_t e = cudaGetDevice(&saved);
    if (e == cudaSuccess && saved != device)
        e = cudaSetDevice(device);
    if (e != cudaSuccess)
        return hm_gpu_fail(tree, e, "NTG measurement: selecting the tree's device");
    struct cudaDeviceProp prop;
    if (cudaGetDeviceProperties(&prop, device) == cudaSuccess)
        snprintf(result->device, sizeof result->device, "%s", prop.name);
    st = measure_on_device(tree, config, queries, count, result);
    if (saved != device)
        cudaSetDevice(saved);
    if (st != HARMONIA_OK) {
        result->best = 0;
        return st;
    }
    return HARMONIA_OK;
#else
    return hm_fail(tree, HARMONIA_ERR_NO_DEVICE, "built without CUDA");
#endif
}
