/* suite_baselines.cu — what Harmonia is measured against, on the same data in the same process:
 * binary search over the sorted array (plain; sort + search + scatter on all bits or on the top
 * 16 bits of the keys' span, with a fused or a packed scatter or sorted results; search alone on sorted
 * queries), a GPU hash table (the point-lookup ceiling), the K-ary Eytzinger layout (K = 9,
 * 8 threads per query, one ballot per level), a regular pointer B+tree searched one node at a
 * time by a cooperative group (the HB+tree-style baseline of the paper), and range count/collect
 * over the sorted array. Device kernels and, for --quick, the same searches on the host. */
#include <stdlib.h>
#include <string.h>

#include <algorithm>

#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_scan.cuh>

#include "bench/suite.h"

#define BASE_THREADS 256u
#define FULL_MASK 0xffffffffu

static unsigned base_grid(uint64_t threads_needed)
{
    uint64_t blocks = (threads_needed + BASE_THREADS - 1) / BASE_THREADS;
    if (blocks > (1u << 20))
        blocks = 1u << 20;
    return blocks ? (unsigned)blocks : 1u;
}

/* Index of the first key >= q among n sorted keys (n when none): the branch-free form (a
 * conditional move per step), as harmonia/cli/cli_baselines.c. */
template <typename K> __device__ __forceinline__ uint64_t lower_bound_dev(const K *__restrict__ keys, uint64_t n, K q)
{
    if (n == 0)
        return 0;
    const K *base = keys;
    uint64_t len = n;
    while (len > 1) {
        const uint64_t half = len / 2;
        base = __ldg(base + half) < q ? base + half : base;
        len -= half;
    }
    return (uint64_t)(base - keys) + (__ldg(base) < q);
}

/* ------------------------------------------------------------------------------------------------
 * Binary search.
 * ---------------------------------------------------------------------------------------------- */
template <typename K>
__global__ void __launch_bounds__(BASE_THREADS)
bsearch_kernel(const K *__restrict__ keys, const K *__restrict__ values, uint64_t n_keys, const K *__restrict__ queries,
               uint64_t n, const uint32_t *__restrict__ positions, K *__restrict__ values_out,
               uint8_t *__restrict__ found_out)
{
    for (uint64_t i = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; i < n; i += (uint64_t)gridDim.x * blockDim.x) {
        const K q = queries[i];
        const uint64_t at = lower_bound_dev<K>(keys, n_keys, q);
        const bool hit = at < n_keys && __ldg(keys + at) == q;
        const uint64_t out = positions ? positions[i] : i;
        values_out[out] = hit ? __ldg(values + at) : (K)0;
        found_out[out] = hit;
    }
}

void bsearch_lookup_device(const sorted_array &a, const void *d_queries, uint64_t n, const uint32_t *d_positions,
                           void *d_values_out, uint8_t *d_found_out)
{
    if (a.bits == 32)
        bsearch_kernel<uint32_t><<<base_grid(n), BASE_THREADS>>>((const uint32_t *)a.keys, (const uint32_t *)a.values,
                                                                 a.n, (const uint32_t *)d_queries, n, d_positions,
                                                                 (uint32_t *)d_values_out, d_found_out);
    else
        bsearch_kernel<uint64_t><<<base_grid(n), BASE_THREADS>>>((const uint64_t *)a.keys, (const uint64_t *)a.values,
                                                                 a.n, (const uint64_t *)d_queries, n, d_positions,
                                                                 (uint64_t *)d_values_out, d_found_out);
    CK(cudaGetLastError());
}

template <typename K>
static cudaError_t sort_queries(void *temp, size_t &temp_bytes, const void *queries, void *sorted_queries,
                                const uint32_t *iota, uint32_t *sorted_positions, uint64_t n, uint32_t begin_bit,
                                uint32_t end_bit)
{
    return cub::DeviceRadixSort::SortPairs(temp, temp_bytes, (const K *)queries, (K *)sorted_queries, iota,
                                           sorted_positions, (int64_t)n, (int)begin_bit, (int)end_bit);
}

bool bsearch_pipeline_init(bsearch_pipeline *p, uint32_t bits, uint64_t capacity)
{
    memset(p, 0, sizeof *p);
    p->bits = bits;
    p->capacity = capacity;
    const size_t kb = bits / 8;
    p->temp_bytes = 0;
    CK(bits == 32 ? sort_queries<uint32_t>(NULL, p->temp_bytes, NULL, NULL, NULL, NULL, capacity, 0, 32)
                  : sort_queries<uint64_t>(NULL, p->temp_bytes, NULL, NULL, NULL, NULL, capacity, 0, 64));
    p->sorted_queries = suite_try_device_alloc(capacity * kb, "sorted queries");
    p->iota = (uint32_t *)suite_try_device_alloc(capacity * 4, "query positions");
    p->sorted_positions = (uint32_t *)suite_try_device_alloc(capacity * 4, "sorted query positions");
    p->temp = suite_try_device_alloc(p->temp_bytes, "the query sort's temporary storage");
    if (!p->sorted_queries || !p->iota || !p->sorted_positions || !p->temp) {
        bsearch_pipeline_free(p);
        return false;
    }
    fill_iota_device(p->iota, capacity);
    return true;
}

void bsearch_pipeline_sort(bsearch_pipeline *p, const void *d_queries, uint64_t n, uint32_t begin_bit,
                           uint32_t end_bit)
{
    if (end_bit <= begin_bit) { /* nothing to sort on: one bit, still a copy with positions */
        begin_bit = 0;
        end_bit = 1;
    }
    CK(p->bits == 32 ? sort_queries<uint32_t>(p->temp, p->temp_bytes, d_queries, p->sorted_queries, p->iota,
                                              p->sorted_positions, n, begin_bit, end_bit)
                     : sort_queries<uint64_t>(p->temp, p->temp_bytes, d_queries, p->sorted_queries, p->iota,
                                              p->sorted_positions, n, begin_bit, end_bit));
}

void bsearch_pipeline_run(bsearch_pipeline *p, const sorted_array &a, const void *d_queries, uint64_t n,
                          uint32_t begin_bit, uint32_t end_bit, void *d_values_out, uint8_t *d_found_out)
{
    bsearch_pipeline_sort(p, d_queries, n, begin_bit, end_bit);
    bsearch_lookup_device(a, p->sorted_queries, n, p->sorted_positions, d_values_out, d_found_out);
}

void bsearch_pipeline_free(bsearch_pipeline *p)
{
    suite_device_free(p->sorted_queries);
    suite_device_free(p->iota);
    suite_device_free(p->sorted_positions);
    suite_device_free(p->temp);
    memset(p, 0, sizeof *p);
}

/* The sort + search pipeline's other ways of handing back results (suite.h, bs_restore). */
template <typename K> struct packed_result {
    K value, found;
};

template <typename K>
__global__ void __launch_bounds__(BASE_THREADS)
bsearch_packed_kernel(const K *__restrict__ keys, const K *__restrict__ values, uint64_t n_keys,
                      const K *__restrict__ queries, uint64_t n, const uint32_t *__restrict__ positions,
                      packed_result<K> *__restrict__ packed)
{
    for (uint64_t i = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; i < n; i += (uint64_t)gridDim.x * blockDim.x) {
        const K q = queries[i];
        const uint64_t at = lower_bound_dev<K>(keys, n_keys, q);
        const bool hit = at < n_keys && __ldg(keys + at) == q;
        packed_result<K> r;
        r.value = hit ? __ldg(values + at) : (K)0;
        r.found = hit;
        packed[positions[i]] = r;
    }
}

template <typename K>
__global__ void __launch_bounds__(BASE_THREADS)
split_packed_kernel(const packed_result<K> *__restrict__ packed, uint64_t n, K *__restrict__ values_out,
                    uint8_t *__restrict__ found_out)
{
    for (uint64_t i = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; i < n; i += (uint64_t)gridDim.x * blockDim.x) {
        const packed_result<K> r = packed[i];
        values_out[i] = r.value;
        found_out[i] = (uint8_t)r.found;
    }
}

template <typename K>
__global__ void __launch_bounds__(BASE_THREADS)
bsearch_bitmap_kernel(const K *__restrict__ keys, const K *__restrict__ values, uint64_t n_keys,
                      const K *__restrict__ queries, uint64_t n, const uint32_t *__restrict__ positions,
                      K *__restrict__ values_out, uint32_t *__restrict__ found_bits)
{
    for (uint64_t i = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; i < n; i += (uint64_t)gridDim.x * blockDim.x) {
        const K q = queries[i];
        const uint64_t at = lower_bound_dev<K>(keys, n_keys, q);
        const bool hit = at < n_keys && __ldg(keys + at) == q;
        const uint32_t p = positions[i];
        values_out[p] = hit ? __ldg(values + at) : (K)0;
        if (hit)
            atomicOr(found_bits + (p >> 5), 1u << (p & 31));
    }
}

__global__ void __launch_bounds__(BASE_THREADS)
bits_to_flags_kernel(const uint32_t *__restrict__ found_bits, uint64_t n, uint8_t *__restrict__ found_out)
{
    for (uint64_t i = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; i < n; i += (uint64_t)gridDim.x * blockDim.x)
        found_out[i] = (uint8_t)((found_bits[i >> 5] >> (i & 31)) & 1u);
}

const char *bs_restore_name(bs_restore how)
{
    return how == BS_FUSED_SCATTER    ? "fused scatter"
           : how == BS_PACKED_SCATTER ? "packed scatter"
           : how == BS_BITMAP_SCATTER ? "value scatter + found bitmap"
                                      : "sorted results";
}

size_t bs_packed_bytes(uint32_t bits, uint64_t n) { return n * (bits == 32 ? 8 : 16); }

void bsearch_pipeline_run_as(bsearch_pipeline *p, const sorted_array &a, const void *d_queries, uint64_t n,
                             uint32_t begin_bit, uint32_t end_bit, bs_restore how, void *d_packed,
                             void *d_values_out, uint8_t *d_found_out)
{
    bsearch_pipeline_sort(p, d_queries, n, begin_bit, end_bit);
    if (how == BS_FUSED_SCATTER) {
        bsearch_lookup_device(a, p->sorted_queries, n, p->sorted_positions, d_values_out, d_found_out);
    } else if (how == BS_SORTED) {
        bsearch_lookup_device(a, p->sorted_queries, n, NULL, d_values_out, d_found_out);
    } else if (how == BS_BITMAP_SCATTER) {
        uint32_t *bits = (uint32_t *)d_packed;
        CK(cudaMemsetAsync(bits, 0, (n + 31) / 32 * 4, 0));
        if (a.bits == 32)
            bsearch_bitmap_kernel<uint32_t><<<base_grid(n), BASE_THREADS>>>(
                (const uint32_t *)a.keys, (const uint32_t *)a.values, a.n, (const uint32_t *)p->sorted_queries, n,
                p->sorted_positions, (uint32_t *)d_values_out, bits);
        else
            bsearch_bitmap_kernel<uint64_t><<<base_grid(n), BASE_THREADS>>>(
                (const uint64_t *)a.keys, (const uint64_t *)a.values, a.n, (const uint64_t *)p->sorted_queries, n,
                p->sorted_positions, (uint64_t *)d_values_out, bits);
        bits_to_flags_kernel<<<base_grid(n), BASE_THREADS>>>(bits, n, d_found_out);
    } else if (a.bits == 32) {
        bsearch_packed_kernel<uint32_t><<<base_grid(n), BASE_THREADS>>>(
            (const uint32_t *)a.keys, (const uint32_t *)a.values, a.n, (const uint32_t *)p->sorted_queries, n,
            p->sorted_positions, (packed_result<uint32_t> *)d_packed);
        split_packed_kernel<uint32_t><<<base_grid(n), BASE_THREADS>>>((const packed_result<uint32_t> *)d_packed, n,
                                                                       (uint32_t *)d_values_out, d_found_out);
    } else {
        bsearch_packed_kernel<uint64_t><<<base_grid(n), BASE_THREADS>>>(
            (const uint64_t *)a.keys, (const uint64_t *)a.values, a.n, (const uint64_t *)p->sorted_queries, n,
            p->sorted_positions, (packed_result<uint64_t> *)d_packed);
        split_packed_kernel<uint64_t><<<base_grid(n), BASE_THREADS>>>((const packed_result<uint64_t> *)d_packed, n,
                                                                       (uint64_t *)d_values_out, d_found_out);
    }
    CK(cudaGetLastError());
}

/* ------------------------------------------------------------------------------------------------
 * Hash table: open addressing, linear probing, at most half full.
 * ---------------------------------------------------------------------------------------------- */
template <typename K> __device__ __forceinline__ uint64_t hash_slot(K key, uint64_t mask)
{
    return (sizeof(K) == 8 ? sx_mix64((uint64_t)key) : (uint64_t)sx_mix32((uint32_t)key)) & mask;
}

template <typename K> struct atomic_word;
template <> struct atomic_word<uint32_t> {
    static __device__ __forceinline__ uint32_t cas(uint32_t *p, uint32_t expected, uint32_t desired)
    {
        return atomicCAS(p, expected, desired);
    }
};
template <> struct atomic_word<uint64_t> {
    static __device__ __forceinline__ uint64_t cas(uint64_t *p, uint64_t expected, uint64_t desired)
    {
        return atomicCAS((unsigned long long *)p, (unsigned long long)expected, (unsigned long long)desired);
    }
};

template <typename K> __global__ void hash_fill_kernel(K *slots, uint64_t capacity, K empty)
{
    for (uint64_t i = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; i < capacity;
         i += (uint64_t)gridDim.x * blockDim.x) {
        slots[2 * i] = empty;
        slots[2 * i + 1] = 0;
    }
}

template <typename K>
__global__ void hash_insert_kernel(const K *__restrict__ keys, const K *__restrict__ values, uint64_t n, K *slots,
                                   uint64_t mask, K empty)
{
    for (uint64_t i = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; i < n; i += (uint64_t)gridDim.x * blockDim.x) {
        const K key = keys[i];
        for (uint64_t h = hash_slot<K>(key, mask);; h = (h + 1) & mask) {
            const K prev = atomic_word<K>::cas(slots + 2 * h, empty, key);
            if (prev == empty || prev == key) {
                slots[2 * h + 1] = values[i];
                break;
            }
        }
    }
}

/* One load per probe: the slot's key and value together (16 or 8 bytes). */
template <typename K> struct slot_pair {
    K key, value;
};

template <typename K>
__global__ void __launch_bounds__(BASE_THREADS)
hash_lookup_kernel(const slot_pair<K> *__restrict__ slots, uint64_t mask, K empty, const K *__restrict__ queries,
                   uint64_t n, K *__restrict__ values_out, uint8_t *__restrict__ found_out)
{
    for (uint64_t i = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; i < n; i += (uint64_t)gridDim.x * blockDim.x) {
        const K q = queries[i];
        K value = 0;
        bool hit = false;
        if (q != empty) {
            for (uint64_t h = hash_slot<K>(q, mask);; h = (h + 1) & mask) {
                const slot_pair<K> s = slots[h];
                if (s.key == q) {
                    value = s.value;
                    hit = true;
                    break;
                }
                if (s.key == empty)
                    break;
            }
        }
        values_out[i] = value;
        found_out[i] = hit;
    }
}

/* A key value the sorted keys lack: the smallest one above a gap, or one past the ends. */
template <typename K> __global__ void absent_key_kernel(const K *keys, uint64_t n, unsigned long long *best)
{
    for (uint64_t i = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; i + 1 < n; i += (uint64_t)gridDim.x * blockDim.x)
        if (keys[i + 1] - keys[i] > 1)
            atomicMin(best, (unsigned long long)keys[i] + 1);
}

template <typename K> static bool hash_build_typed(hash_table *h, const sorted_array &a)
{
    K first = 0, last = 0;
    CK(cudaMemcpy(&first, a.keys, sizeof(K), cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(&last, (const K *)a.keys + a.n - 1, sizeof(K), cudaMemcpyDeviceToHost));
    K empty;
    if (last < sx_max_key<K>()) {
        empty = sx_max_key<K>();
    } else if (first > 0) {
        empty = 0;
    } else {
        unsigned long long *d_best = (unsigned long long *)suite_device_alloc(8), best = ~0ull;
        CK(cudaMemcpy(d_best, &best, 8, cudaMemcpyHostToDevice));
        absent_key_kernel<K><<<base_grid(a.n), BASE_THREADS>>>((const K *)a.keys, a.n, d_best);
        CK(cudaGetLastError());
        CK(cudaMemcpy(&best, d_best, 8, cudaMemcpyDeviceToHost));
        suite_device_free(d_best);
        if (best == ~0ull)
            return false; /* every key value present: no marker */
        empty = (K)best;
    }
    h->empty = empty;
    h->capacity = 1;
    while (h->capacity < 2 * a.n)
        h->capacity *= 2;
    h->slots = suite_try_device_alloc(h->capacity * 2 * sizeof(K), "hash table slots");
    if (!h->slots)
        return false;
    hash_fill_kernel<K><<<base_grid(h->capacity), BASE_THREADS>>>((K *)h->slots, h->capacity, empty);
    hash_insert_kernel<K><<<base_grid(a.n), BASE_THREADS>>>((const K *)a.keys, (const K *)a.values, a.n, (K *)h->slots,
                                                            h->capacity - 1, empty);
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    return true;
}

bool hash_build_device(hash_table *h, const sorted_array &a)
{
    memset(h, 0, sizeof *h);
    h->bits = a.bits;
    h->n = a.n;
    if (a.n == 0)
        return false;
    return a.bits == 32 ? hash_build_typed<uint32_t>(h, a) : hash_build_typed<uint64_t>(h, a);
}

void hash_lookup_device(const hash_table &h, const void *d_queries, uint64_t n, void *d_values_out,
                        uint8_t *d_found_out)
{
    if (h.bits == 32)
        hash_lookup_kernel<uint32_t><<<base_grid(n), BASE_THREADS>>>((const slot_pair<uint32_t> *)h.slots,
                                                                      h.capacity - 1, (uint32_t)h.empty,
                                                                      (const uint32_t *)d_queries, n,
                                                                      (uint32_t *)d_values_out, d_found_out);
    else
        hash_lookup_kernel<uint64_t><<<base_grid(n), BASE_THREADS>>>((const slot_pair<uint64_t> *)h.slots,
                                                                      h.capacity - 1, h.empty,
                                                                      (const uint64_t *)d_queries, n,
                                                                      (uint64_t *)d_values_out, d_found_out);
    CK(cudaGetLastError());
}

void hash_free(hash_table *h)
{
    suite_device_free(h->slots);
    memset(h, 0, sizeof *h);
}

/* ------------------------------------------------------------------------------------------------
 * K-ary Eytzinger, K = 9.
 * ---------------------------------------------------------------------------------------------- */
template <typename K>
__global__ void eyt_build_kernel(uint64_t m, const K *sorted_keys, const K *sorted_values, uint64_t n, K *keys,
                                 K *values)
{
    for (uint64_t x = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; x < m; x += (uint64_t)gridDim.x * blockDim.x)
        eyt_fill_node<K>(x, m, sorted_keys, sorted_values, n, keys, values);
}

static bool last_key_is_max(uint32_t bits, const void *keys, uint64_t n, bool device)
{
    if (n == 0)
        return false;
    uint64_t last = 0;
    const size_t kb = bits / 8;
    if (device)
        CK(cudaMemcpy(&last, (const char *)keys + (n - 1) * kb, kb, cudaMemcpyDeviceToHost));
    else
        memcpy(&last, (const char *)keys + (n - 1) * kb, kb);
    return bits == 32 ? (uint32_t)last == UINT32_MAX : last == UINT64_MAX;
}

bool eyt_build_device(eyt_tree *t, const sorted_array &a)
{
    memset(t, 0, sizeof *t);
    t->bits = a.bits;
    t->n = a.n;
    t->m = (a.n + EYT_KEYS - 1) / EYT_KEYS;
    if (t->m == 0)
        t->m = 1;
    t->height = eyt_height(t->m);
    t->on_device = true;
    const size_t kb = a.bits / 8;
    t->keys = suite_try_device_alloc(t->m * EYT_KEYS * kb, "Eytzinger keys");
    t->values = suite_try_device_alloc(t->m * EYT_KEYS * kb, "Eytzinger values");
    if (!t->keys || !t->values) {
        eyt_free(t);
        return false;
    }
    if (a.bits == 32)
        eyt_build_kernel<uint32_t><<<base_grid(t->m), BASE_THREADS>>>(t->m, (const uint32_t *)a.keys,
                                                                      (const uint32_t *)a.values, a.n,
                                                                      (uint32_t *)t->keys, (uint32_t *)t->values);
    else
        eyt_build_kernel<uint64_t><<<base_grid(t->m), BASE_THREADS>>>(t->m, (const uint64_t *)a.keys,
                                                                      (const uint64_t *)a.values, a.n,
                                                                      (uint64_t *)t->keys, (uint64_t *)t->values);
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    t->max_key_present = last_key_is_max(a.bits, a.keys, a.n, true);
    return true;
}

void eyt_build_host(eyt_tree *t, uint32_t bits, const void *sorted_keys, const void *sorted_values, uint64_t n)
{
    memset(t, 0, sizeof *t);
    t->bits = bits;
    t->n = n;
    t->m = (n + EYT_KEYS - 1) / EYT_KEYS;
    if (t->m == 0)
        t->m = 1;
    t->height = eyt_height(t->m);
    const size_t kb = bits / 8;
    t->keys = malloc(t->m * EYT_KEYS * kb);
    t->values = malloc(t->m * EYT_KEYS * kb);
#pragma omp parallel for schedule(static)
    for (int64_t x = 0; x < (int64_t)t->m; x++) {
        if (bits == 32)
            eyt_fill_node<uint32_t>((uint64_t)x, t->m, (const uint32_t *)sorted_keys, (const uint32_t *)sorted_values,
                                    n, (uint32_t *)t->keys, (uint32_t *)t->values);
        else
            eyt_fill_node<uint64_t>((uint64_t)x, t->m, (const uint64_t *)sorted_keys, (const uint64_t *)sorted_values,
                                    n, (uint64_t *)t->keys, (uint64_t *)t->values);
    }
    t->max_key_present = last_key_is_max(bits, sorted_keys, n, false);
}

/* 8 threads per query (4 queries per warp). Each level: the group loads the node's 8 keys (one
 * 32-byte sector of 32-bit keys), one ballot counts the keys < q, c, which picks the child; the
 * key in slot c (if c < 8) is the best lower-bound candidate so far. No early exit: every query
 * descends all levels (warp-uniform loop), and the value is fetched once at the end. */
template <typename K>
__global__ void __launch_bounds__(BASE_THREADS)
eyt_lookup_kernel(const K *__restrict__ keys, const K *__restrict__ values, uint64_t m, uint32_t height,
                  bool max_key_present, const K *__restrict__ queries, uint64_t n, K *__restrict__ values_out,
                  uint8_t *__restrict__ found_out)
{
    const uint32_t lane = threadIdx.x & 31u, sub = lane & 7u, shift = lane & ~7u;
    const uint64_t warp = (blockIdx.x * (uint64_t)blockDim.x + threadIdx.x) >> 5;
    const uint64_t warps = ((uint64_t)gridDim.x * blockDim.x) >> 5;
    for (uint64_t base = warp * 4; base < n; base += warps * 4) {
        const uint64_t i = base + (lane >> 3);
        const bool active = i < n;
        const K q = queries[active ? i : base];
        uint64_t node = 0, candidate = UINT64_MAX;
        K candidate_key = 0;
        for (uint32_t level = 0; level < height; level++) {
            const bool valid = node < m;
            const K key = valid ? __ldg(keys + node * EYT_KEYS + sub) : (K)0;
            const uint32_t less = (__ballot_sync(FULL_MASK, valid && key < q) >> shift) & 0xffu;
            const uint32_t c = __popc(less);
            const K key_c = __shfl_sync(FULL_MASK, key, shift + (c & 7u));
            if (valid) {
                if (c < EYT_KEYS) {
                    candidate = node * EYT_KEYS + c;
                    candidate_key = key_c;
                }
                node = node * EYT_K + 1 + c;
            }
        }
        if (active && sub == 0) {
            const bool hit = candidate != UINT64_MAX && candidate_key == q && (q != sx_max_key<K>() || max_key_present);
            values_out[i] = hit ? __ldg(values + candidate) : (K)0;
            found_out[i] = hit;
        }
    }
}

void eyt_lookup_device(const eyt_tree &t, const void *d_queries, uint64_t n, void *d_values_out, uint8_t *d_found_out)
{
    const unsigned grid = base_grid((n + 3) / 4 * 32);
    if (t.bits == 32)
        eyt_lookup_kernel<uint32_t><<<grid, BASE_THREADS>>>((const uint32_t *)t.keys, (const uint32_t *)t.values, t.m,
                                                            t.height, t.max_key_present, (const uint32_t *)d_queries, n,
                                                            (uint32_t *)d_values_out, d_found_out);
    else
        eyt_lookup_kernel<uint64_t><<<grid, BASE_THREADS>>>((const uint64_t *)t.keys, (const uint64_t *)t.values, t.m,
                                                            t.height, t.max_key_present, (const uint64_t *)d_queries, n,
                                                            (uint64_t *)d_values_out, d_found_out);
    CK(cudaGetLastError());
}

template <typename K>
static void eyt_lookup_host_typed(const eyt_tree &t, const K *queries, uint64_t n, K *values_out, uint8_t *found_out)
{
    const K *keys = (const K *)t.keys, *values = (const K *)t.values;
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < (int64_t)n; i++) {
        const K q = queries[i];
        uint64_t node = 0, candidate = UINT64_MAX;
        while (node < t.m) {
            uint32_t c = 0;
            for (uint32_t s = 0; s < EYT_KEYS; s++)
                c += keys[node * EYT_KEYS + s] < q;
            if (c < EYT_KEYS)
                candidate = node * EYT_KEYS + c;
            node = node * EYT_K + 1 + c;
        }
        const bool hit = candidate != UINT64_MAX && keys[candidate] == q && (q != sx_max_key<K>() || t.max_key_present);
        values_out[i] = hit ? values[candidate] : (K)0;
        found_out[i] = hit;
    }
}

void eyt_lookup_host(const eyt_tree &t, const void *queries, uint64_t n, void *values_out, uint8_t *found_out)
{
    if (t.bits == 32)
        eyt_lookup_host_typed<uint32_t>(t, (const uint32_t *)queries, n, (uint32_t *)values_out, found_out);
    else
        eyt_lookup_host_typed<uint64_t>(t, (const uint64_t *)queries, n, (uint64_t *)values_out, found_out);
}

void eyt_free(eyt_tree *t)
{
    if (t->on_device) {
        suite_device_free(t->keys);
        suite_device_free(t->values);
    } else {
        free(t->keys);
        free(t->values);
    }
    t->keys = t->values = NULL;
}

uint64_t eyt_bytes(const eyt_tree &t) { return t.m * EYT_KEYS * (t.bits / 8) * 2; }

/* ------------------------------------------------------------------------------------------------
 * Pointer B+tree (HB+tree style).
 * ---------------------------------------------------------------------------------------------- */
template <typename K>
__global__ void hbt_leaf_kernel(uint64_t leaves, const K *sorted_keys, const K *sorted_values, uint64_t n,
                                uint32_t fanout, uint8_t *leaf_base, K *first_keys)
{
    for (uint64_t l = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; l < leaves; l += (uint64_t)gridDim.x * blockDim.x)
        hbt_fill_leaf<K>(l, sorted_keys, sorted_values, n, fanout, leaf_base, first_keys);
}

template <typename K>
__global__ void hbt_internal_kernel(uint64_t nodes, uint64_t n_below, const K *first_below, uint64_t below_base,
                                    uint64_t below_bytes, uint32_t fanout, uint8_t *node_base, K *first_keys)
{
    for (uint64_t j = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; j < nodes; j += (uint64_t)gridDim.x * blockDim.x)
        hbt_fill_internal<K>(j, n_below, first_below, below_base, below_bytes, fanout, node_base, first_keys);
}

/* Builds every level bottom-up; `device` says where the arrays live (and which fill runs). */
template <typename K>
static bool hbt_build_typed(hbt_tree *t, const K *sorted_keys, const K *sorted_values, uint64_t n, uint32_t fanout,
                            bool device)
{
    hbt_shape *s = &t->shape;
    const size_t kb = sizeof(K);
    t->on_device = device;
    const uint64_t internal_bytes = s->n_internal * s->internal_node_bytes;
    const uint64_t leaf_bytes = s->n_leaves * s->leaf_node_bytes;
    K *first_below = NULL, *first_here = NULL;
    if (device) {
        t->internal = (uint8_t *)suite_try_device_alloc(internal_bytes, "B+tree internal nodes");
        t->leaves = (uint8_t *)suite_try_device_alloc(leaf_bytes, "B+tree leaves");
        first_below = (K *)suite_try_device_alloc(s->n_leaves * kb, "B+tree first keys");
        first_here = (K *)suite_try_device_alloc(((s->n_leaves + fanout - 1) / fanout) * kb + kb, "B+tree first keys");
    } else {
        t->internal = (uint8_t *)malloc(internal_bytes ? internal_bytes : 1);
        t->leaves = (uint8_t *)malloc(leaf_bytes);
        first_below = (K *)malloc(s->n_leaves * kb);
        first_here = (K *)malloc(((s->n_leaves + fanout - 1) / fanout) * kb + kb);
    }
    if (!t->internal || !t->leaves || !first_below || !first_here) {
        if (device) {
            suite_device_free(first_below);
            suite_device_free(first_here);
        } else {
            free(first_below);
            free(first_here);
        }
        hbt_free(t);
        return false;
    }
    if (device) {
        hbt_leaf_kernel<K><<<base_grid(s->n_leaves), BASE_THREADS>>>(s->n_leaves, sorted_keys, sorted_values, n, fanout,
                                                                     t->leaves, first_below);
        CK(cudaGetLastError());
    } else {
#pragma omp parallel for schedule(static)
        for (int64_t l = 0; l < (int64_t)s->n_leaves; l++)
            hbt_fill_leaf<K>((uint64_t)l, sorted_keys, sorted_values, n, fanout, t->leaves, first_below);
    }
    uint64_t below_base = (uint64_t)(uintptr_t)t->leaves, below_bytes = s->leaf_node_bytes;
    for (uint32_t level = 1; level < s->height; level++) {
        const uint64_t nodes = s->level_nodes[level], n_below = s->level_nodes[level - 1];
        uint8_t *node_base = t->internal + s->level_first[level] * s->internal_node_bytes;
        if (device) {
            hbt_internal_kernel<K><<<base_grid(nodes), BASE_THREADS>>>(nodes, n_below, first_below, below_base,
                                                                       below_bytes, fanout, node_base, first_here);
            CK(cudaGetLastError());
        } else {
#pragma omp parallel for schedule(static)
            for (int64_t j = 0; j < (int64_t)nodes; j++)
                hbt_fill_internal<K>((uint64_t)j, n_below, first_below, below_base, below_bytes, fanout, node_base,
                                     first_here);
        }
        K *swap = first_below;
        first_below = first_here;
        first_here = swap;
        below_base = (uint64_t)(uintptr_t)node_base;
        below_bytes = s->internal_node_bytes;
    }
    t->root = below_base; /* the last level built: the root (the only leaf when height is 1) */
    if (device) {
        CK(cudaDeviceSynchronize());
        suite_device_free(first_below);
        suite_device_free(first_here);
    } else {
        free(first_below);
        free(first_here);
    }
    t->max_key_present = last_key_is_max(sizeof(K) * 8, sorted_keys, n, device);
    return true;
}

bool hbt_build_device(hbt_tree *t, const sorted_array &a, uint32_t fanout)
{
    memset(t, 0, sizeof *t);
    hbt_plan(&t->shape, a.bits, fanout, a.n);
    return a.bits == 32 ? hbt_build_typed<uint32_t>(t, (const uint32_t *)a.keys, (const uint32_t *)a.values, a.n,
                                                    fanout, true)
                        : hbt_build_typed<uint64_t>(t, (const uint64_t *)a.keys, (const uint64_t *)a.values, a.n,
                                                    fanout, true);
}

void hbt_build_host(hbt_tree *t, uint32_t bits, const void *sorted_keys, const void *sorted_values, uint64_t n,
                    uint32_t fanout)
{
    memset(t, 0, sizeof *t);
    hbt_plan(&t->shape, bits, fanout, n);
    if (bits == 32)
        hbt_build_typed<uint32_t>(t, (const uint32_t *)sorted_keys, (const uint32_t *)sorted_values, n, fanout, false);
    else
        hbt_build_typed<uint64_t>(t, (const uint64_t *)sorted_keys, (const uint64_t *)sorted_values, n, fanout, false);
}

/* Count of the node keys in this thread's chunk that are <= q (STRICT: < q), summed over the
 * group with shuffles. */
template <typename K, int G, bool STRICT>
__device__ __forceinline__ uint32_t hbt_group_count(const K *__restrict__ keys, uint32_t per, uint32_t sub, K q)
{
    uint32_t count = 0;
    for (uint32_t k = 0; k < per; k++) {
        const K key = __ldg(keys + sub * per + k);
        count += STRICT ? key < q : key <= q;
    }
#pragma unroll
    for (int offset = G / 2; offset > 0; offset >>= 1)
        count += __shfl_xor_sync(FULL_MASK, count, offset, G);
    return count;
}

/* One group of G = min(F, 32) threads per query, F / G keys per thread per node. */
template <typename K, int G>
__global__ void __launch_bounds__(BASE_THREADS)
hbt_lookup_kernel(uint64_t root, uint32_t height, uint32_t fanout, bool max_key_present, const K *__restrict__ queries,
                  uint64_t n, K *__restrict__ values_out, uint8_t *__restrict__ found_out)
{
    const uint32_t lane = threadIdx.x & 31u, sub = lane % G, group = lane / G;
    const uint64_t per_warp = 32 / G;
    const uint64_t warp = (blockIdx.x * (uint64_t)blockDim.x + threadIdx.x) >> 5;
    const uint64_t warps = ((uint64_t)gridDim.x * blockDim.x) >> 5;
    const uint32_t per = fanout / G;
    for (uint64_t base = warp * per_warp; base < n; base += warps * per_warp) {
        const uint64_t i = base + group;
        const bool active = i < n;
        const K q = queries[active ? i : base];
        uint64_t node = root;
        for (uint32_t level = height - 1; level >= 1; level--) {
            const K *keys = (const K *)node;
            const uint32_t c = hbt_group_count<K, G, false>(keys, per, sub, q);
            const unsigned long long *child = (const unsigned long long *)(keys + fanout);
            node = __ldg(child + (c < fanout ? c : fanout - 1));
        }
        const K *keys = (const K *)node;
        const uint32_t slot = hbt_group_count<K, G, true>(keys, per, sub, q);
        if (active && sub == 0) {
            const bool hit = slot < fanout && __ldg(keys + slot) == q && (q != sx_max_key<K>() || max_key_present);
            values_out[i] = hit ? __ldg(keys + fanout + slot) : (K)0;
            found_out[i] = hit;
        }
    }
}

template <typename K>
static void hbt_launch(const hbt_tree &t, const K *queries, uint64_t n, K *values_out, uint8_t *found_out)
{
    const uint32_t f = t.shape.fanout;
    const uint32_t g = f < 32 ? f : 32;
    const unsigned grid = base_grid((n * g + 31) / 32 * 32);
    switch (g) {
    case 8:
        hbt_lookup_kernel<K, 8><<<grid, BASE_THREADS>>>(t.root, t.shape.height, f, t.max_key_present, queries, n,
                                                        values_out, found_out);
        break;
    case 16:
        hbt_lookup_kernel<K, 16><<<grid, BASE_THREADS>>>(t.root, t.shape.height, f, t.max_key_present, queries, n,
                                                         values_out, found_out);
        break;
    default:
        hbt_lookup_kernel<K, 32><<<grid, BASE_THREADS>>>(t.root, t.shape.height, f, t.max_key_present, queries, n,
                                                         values_out, found_out);
        break;
    }
    CK(cudaGetLastError());
}

void hbt_lookup_device(const hbt_tree &t, const void *d_queries, uint64_t n, void *d_values_out, uint8_t *d_found_out)
{
    if (t.shape.key_bits == 32)
        hbt_launch<uint32_t>(t, (const uint32_t *)d_queries, n, (uint32_t *)d_values_out, d_found_out);
    else
        hbt_launch<uint64_t>(t, (const uint64_t *)d_queries, n, (uint64_t *)d_values_out, d_found_out);
}

template <typename K>
static void hbt_lookup_host_typed(const hbt_tree &t, const K *queries, uint64_t n, K *values_out, uint8_t *found_out)
{
    const uint32_t f = t.shape.fanout;
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < (int64_t)n; i++) {
        const K q = queries[i];
        uint64_t node = t.root;
        for (uint32_t level = t.shape.height - 1; level >= 1; level--) {
            const K *keys = (const K *)(uintptr_t)node;
            uint32_t c = 0;
            for (uint32_t s = 0; s < f; s++)
                c += keys[s] <= q;
            node = ((const uint64_t *)(keys + f))[c < f ? c : f - 1];
        }
        const K *keys = (const K *)(uintptr_t)node;
        uint32_t slot = 0;
        for (uint32_t s = 0; s < f; s++)
            slot += keys[s] < q;
        const bool hit = slot < f && keys[slot] == q && (q != sx_max_key<K>() || t.max_key_present);
        values_out[i] = hit ? keys[f + slot] : (K)0;
        found_out[i] = hit;
    }
}

void hbt_lookup_host(const hbt_tree &t, const void *queries, uint64_t n, void *values_out, uint8_t *found_out)
{
    if (t.shape.key_bits == 32)
        hbt_lookup_host_typed<uint32_t>(t, (const uint32_t *)queries, n, (uint32_t *)values_out, found_out);
    else
        hbt_lookup_host_typed<uint64_t>(t, (const uint64_t *)queries, n, (uint64_t *)values_out, found_out);
}

void hbt_free(hbt_tree *t)
{
    if (t->on_device) {
        suite_device_free(t->internal);
        suite_device_free(t->leaves);
    } else {
        free(t->internal);
        free(t->leaves);
    }
    t->internal = t->leaves = NULL;
}

uint64_t hbt_bytes(const hbt_tree &t)
{
    return t.shape.n_internal * t.shape.internal_node_bytes + t.shape.n_leaves * t.shape.leaf_node_bytes;
}

/* ------------------------------------------------------------------------------------------------
 * Ranges over the sorted array.
 * ---------------------------------------------------------------------------------------------- */
template <typename K>
__global__ void __launch_bounds__(BASE_THREADS)
range_count_kernel(const K *__restrict__ keys, uint64_t n_keys, const K *__restrict__ lo, const K *__restrict__ hi,
                   uint64_t n, uint64_t *__restrict__ counts)
{
    for (uint64_t i = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; i < n; i += (uint64_t)gridDim.x * blockDim.x) {
        const K a = lo[i], b = hi[i];
        uint64_t count = 0;
        if (a <= b) {
            const uint64_t first = lower_bound_dev<K>(keys, n_keys, a);
            const uint64_t end = b == sx_max_key<K>() ? n_keys : lower_bound_dev<K>(keys, n_keys, (K)(b + 1));
            count = end - first;
        }
        counts[i] = count;
    }
}

void range_count_device(const sorted_array &a, const void *d_lo, const void *d_hi, uint64_t n, uint64_t *d_counts)
{
    if (a.bits == 32)
        range_count_kernel<uint32_t><<<base_grid(n), BASE_THREADS>>>((const uint32_t *)a.keys, a.n,
                                                                     (const uint32_t *)d_lo, (const uint32_t *)d_hi, n,
                                                                     d_counts);
    else
        range_count_kernel<uint64_t><<<base_grid(n), BASE_THREADS>>>((const uint64_t *)a.keys, a.n,
                                                                     (const uint64_t *)d_lo, (const uint64_t *)d_hi, n,
                                                                     d_counts);
    CK(cudaGetLastError());
}

size_t range_scan_temp_bytes(uint64_t n)
{
    size_t bytes = 0;
    CK(cub::DeviceScan::ExclusiveSum(NULL, bytes, (const uint64_t *)NULL, (uint64_t *)NULL, (int64_t)(n + 1)));
    return bytes;
}

void range_offsets_device(const sorted_array &a, const void *d_lo, const void *d_hi, uint64_t n, uint64_t *d_counts,
                          void *d_temp, size_t temp_bytes, uint64_t *d_offsets)
{
    range_count_device(a, d_lo, d_hi, n, d_counts);
    CK(cudaMemsetAsync(d_counts + n, 0, sizeof(uint64_t), 0));
    CK(cub::DeviceScan::ExclusiveSum(d_temp, temp_bytes, (const uint64_t *)d_counts, d_offsets, (int64_t)(n + 1)));
}

/* A group of T threads per range: each finds the range's first key (the same binary search, the
 * same addresses: one transaction per step), then the group copies its pairs, coalesced. */
template <typename K, int T>
__global__ void __launch_bounds__(BASE_THREADS)
range_collect_kernel(const K *__restrict__ keys, const K *__restrict__ values, uint64_t n_keys,
                     const K *__restrict__ lo, uint64_t n, const uint64_t *__restrict__ offsets,
                     K *__restrict__ keys_out, K *__restrict__ values_out)
{
    const uint64_t thread = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x;
    const uint64_t threads = (uint64_t)gridDim.x * blockDim.x;
    const uint32_t sub = (uint32_t)(thread % T);
    for (uint64_t i = thread / T; i < n; i += threads / T) {
        const uint64_t out = offsets[i], count = offsets[i + 1] - out;
        if (count == 0)
            continue;
        const uint64_t first = lower_bound_dev<K>(keys, n_keys, lo[i]);
        for (uint64_t k = sub; k < count; k += T) {
            if (keys_out)
                keys_out[out + k] = __ldg(keys + first + k);
            if (values_out)
                values_out[out + k] = __ldg(values + first + k);
        }
    }
}

template <typename K>
static void range_collect_typed(const sorted_array &a, const K *lo, uint64_t n, const uint64_t *offsets,
                                uint64_t expected_length, K *keys_out, K *values_out)
{
    if (expected_length >= 256) {
        range_collect_kernel<K, 32><<<base_grid(n * 32), BASE_THREADS>>>((const K *)a.keys, (const K *)a.values, a.n,
                                                                         lo, n, offsets, keys_out, values_out);
    } else {
        range_collect_kernel<K, 8><<<base_grid(n * 8), BASE_THREADS>>>((const K *)a.keys, (const K *)a.values, a.n, lo,
                                                                       n, offsets, keys_out, values_out);
    }
    CK(cudaGetLastError());
}

void range_collect_device(const sorted_array &a, const void *d_lo, uint64_t n, const uint64_t *d_offsets,
                          uint64_t expected_length, void *d_keys_out, void *d_values_out)
{
    if (a.bits == 32)
        range_collect_typed<uint32_t>(a, (const uint32_t *)d_lo, n, d_offsets, expected_length, (uint32_t *)d_keys_out,
                                      (uint32_t *)d_values_out);
    else
        range_collect_typed<uint64_t>(a, (const uint64_t *)d_lo, n, d_offsets, expected_length, (uint64_t *)d_keys_out,
                                      (uint64_t *)d_values_out);
}

template <typename K>
static void range_collect_host_typed(const K *keys, const K *values, uint64_t n_keys, const K *lo, uint64_t n,
                                     const uint64_t *offsets, K *keys_out, K *values_out)
{
#pragma omp parallel for schedule(dynamic, 64)
    for (int64_t i = 0; i < (int64_t)n; i++) {
        const uint64_t count = offsets[i + 1] - offsets[i];
        const uint64_t first = (uint64_t)(std::lower_bound(keys, keys + n_keys, lo[i]) - keys);
        for (uint64_t k = 0; k < count; k++) {
            if (keys_out)
                keys_out[offsets[i] + k] = keys[first + k];
            if (values_out)
                values_out[offsets[i] + k] = values[first + k];
        }
    }
}

void range_collect_host(uint32_t bits, const void *sorted_keys, const void *sorted_values, uint64_t n_keys,
                        const void *lo, uint64_t n, const uint64_t *offsets, void *keys_out, void *values_out)
{
    if (bits == 32)
        range_collect_host_typed<uint32_t>((const uint32_t *)sorted_keys, (const uint32_t *)sorted_values, n_keys,
                                           (const uint32_t *)lo, n, offsets, (uint32_t *)keys_out,
                                           (uint32_t *)values_out);
    else
        range_collect_host_typed<uint64_t>((const uint64_t *)sorted_keys, (const uint64_t *)sorted_values, n_keys,
                                           (const uint64_t *)lo, n, offsets, (uint64_t *)keys_out,
                                           (uint64_t *)values_out);
}
