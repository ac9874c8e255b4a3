/* suite_verify.cu — every measured configuration is checked against the CPU engine
 * (harmonia_lookup / harmonia_range_count / harmonia_range_collect with the CPU backend) on a fixed
 * sample of result slots (all of them for small batches): the device gathers the sampled results
 * and the queries they answer, the CPU engine answers the same queries, and every field must be
 * equal. Positions of unordered results must be a permutation (checked over the whole batch). */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <memory>

#include "bench/suite.h"

#define VERIFY_THREADS 256u

static unsigned verify_grid(uint64_t n)
{
    uint64_t blocks = (n + VERIFY_THREADS - 1) / VERIFY_THREADS;
    if (blocks > (1u << 20))
        blocks = 1u << 20;
    return blocks ? (unsigned)blocks : 1u;
}

static harmonia_query_config cpu_engine_config(void)
{
    harmonia_query_config c;
    harmonia_query_config_init(&c);
    c.backend = HARMONIA_BACKEND_CPU;
    c.threads = 0;
    return c;
}

void verifier_init(verifier *vf, harmonia_tree *tree, uint32_t bits, uint64_t n, uint64_t sample_max, bool device)
{
    vf->tree = tree;
    vf->bits = bits;
    vf->n = n;
    vf->sample = n < sample_max ? n : sample_max;
    vf->slots.resize(vf->sample);
    for (uint64_t j = 0; j < vf->sample; j++)
        vf->slots[j] = vf->sample == n ? j : sx_below(sx_hash(0x5eedc0ffeeull, j), n);
    vf->d_slots = NULL;
    vf->d_a = vf->d_b = vf->d_c = vf->d_d = NULL;
    vf->d_f = NULL;
    vf->d_bad = NULL;
    if (device) {
        vf->d_slots = (uint64_t *)suite_device_alloc(vf->sample * 8);
        CK(cudaMemcpy(vf->d_slots, vf->slots.data(), vf->sample * 8, cudaMemcpyHostToDevice));
        vf->d_a = suite_device_alloc(vf->sample * 8);
        vf->d_b = suite_device_alloc(vf->sample * 8);
        vf->d_c = suite_device_alloc(vf->sample * 8);
        vf->d_d = suite_device_alloc(vf->sample * 8);
        vf->d_f = (uint8_t *)suite_device_alloc(vf->sample);
        vf->d_bad = (unsigned long long *)suite_device_alloc(sizeof(unsigned long long));
    }
}

void verifier_free(verifier *vf)
{
    suite_device_free(vf->d_slots);
    suite_device_free(vf->d_a);
    suite_device_free(vf->d_b);
    suite_device_free(vf->d_c);
    suite_device_free(vf->d_d);
    suite_device_free(vf->d_f);
    suite_device_free(vf->d_bad);
    vf->d_slots = NULL;
    vf->d_a = vf->d_b = vf->d_c = vf->d_d = NULL;
    vf->d_f = NULL;
    vf->d_bad = NULL;
}

#define load_key util_load_width /* util/width.h */

/* Compares gathered lookup results (found 2 = a slot whose position was invalid) with the CPU
 * engine's answers to the same queries. */
static check_result compare_lookups(verifier *vf, const void *queries, const void *values, const uint8_t *found)
{
    const uint64_t s = vf->sample;
    const size_t kb = vf->bits / 8;
    check_result r = {true, s, 0, 0.0};
    std::vector<uint8_t> ref_values(s * kb), ref_found(s);
    harmonia_query_config cpu = cpu_engine_config();
    harmonia_status st = harmonia_lookup(vf->tree, &cpu, queries, s, ref_values.data(), ref_found.data());
    if (st != HARMONIA_OK) {
        fprintf(stderr, "bench_suite: verification: the CPU engine failed: %s\n", harmonia_last_error(vf->tree));
        r.ok = false;
        r.mismatches = s;
        return r;
    }
    uint64_t hits = 0;
    for (uint64_t j = 0; j < s; j++) {
        hits += ref_found[j];
        const uint64_t got = load_key(values, vf->bits, j), want = load_key(ref_values.data(), vf->bits, j);
        if (found[j] != ref_found[j] || got != want) {
            if (r.mismatches < 3)
                fprintf(stderr,
                        "bench_suite: MISMATCH at sampled slot %" PRIu64 ": query %" PRIu64 ": got found=%u value=%" PRIu64
                        ", the CPU engine says found=%u value=%" PRIu64 "\n",
                        vf->slots[j], load_key(queries, vf->bits, j), found[j], got, ref_found[j], want);
            r.mismatches++;
        }
    }
    r.ok = r.mismatches == 0;
    r.hit_rate = s ? (double)hits / (double)s : 0.0;
    return r;
}

/* --- lookups on the device ------------------------------------------------------------------------ */

__global__ void permutation_kernel(const uint64_t *pos64, const uint32_t *pos32, uint64_t n, uint32_t *bitmap,
                                   unsigned long long *bad)
{
    for (uint64_t i = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; i < n; i += (uint64_t)gridDim.x * blockDim.x) {
        const uint64_t p = pos64 ? pos64[i] : pos32[i];
        if (p >= n) {
            atomicAdd(bad, 1ull);
            continue;
        }
        const uint32_t bit = 1u << (p & 31);
        if (atomicOr(bitmap + (p >> 5), bit) & bit)
            atomicAdd(bad, 1ull);
    }
}

template <typename K>
__global__ void gather_lookup_kernel(const uint64_t *slots, uint64_t s, const K *queries, const K *values,
                                     const uint8_t *found, const uint64_t *pos64, const uint32_t *pos32, uint64_t n,
                                     K *q_out, K *v_out, uint8_t *f_out)
{
    for (uint64_t j = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; j < s; j += (uint64_t)gridDim.x * blockDim.x) {
        const uint64_t slot = slots[j];
        const uint64_t pos = pos64 ? pos64[slot] : pos32 ? (uint64_t)pos32[slot] : slot;
        v_out[j] = values[slot];
        if (pos < n) {
            q_out[j] = queries[pos];
            f_out[j] = found[slot];
        } else {
            q_out[j] = 0;
            f_out[j] = 2;
        }
    }
}

check_result verify_lookup_device(verifier *vf, const void *d_queries, const void *d_values, const uint8_t *d_found,
                                  const uint64_t *d_pos64, const uint32_t *d_pos32)
{
    const uint64_t s = vf->sample;
    const size_t kb = vf->bits / 8;
    uint64_t bad_positions = 0;
    if (d_pos64 || d_pos32) {
        uint32_t *bitmap = (uint32_t *)suite_device_alloc((vf->n + 31) / 32 * 4);
        CK(cudaMemset(bitmap, 0, (vf->n + 31) / 32 * 4));
        CK(cudaMemset(vf->d_bad, 0, sizeof(unsigned long long)));
        permutation_kernel<<<verify_grid(vf->n), VERIFY_THREADS>>>(d_pos64, d_pos32, vf->n, bitmap, vf->d_bad);
        CK(cudaGetLastError());
        CK(cudaMemcpy(&bad_positions, vf->d_bad, 8, cudaMemcpyDeviceToHost));
        suite_device_free(bitmap);
        if (bad_positions)
            fprintf(stderr, "bench_suite: MISMATCH: %" PRIu64 " result positions are out of range or repeated\n",
                    bad_positions);
    }
    if (vf->bits == 32)
        gather_lookup_kernel<uint32_t><<<verify_grid(s), VERIFY_THREADS>>>(
            vf->d_slots, s, (const uint32_t *)d_queries, (const uint32_t *)d_values, d_found, d_pos64, d_pos32, vf->n,
            (uint32_t *)vf->d_a, (uint32_t *)vf->d_b, vf->d_f);
    else
        gather_lookup_kernel<uint64_t><<<verify_grid(s), VERIFY_THREADS>>>(
            vf->d_slots, s, (const uint64_t *)d_queries, (const uint64_t *)d_values, d_found, d_pos64, d_pos32, vf->n,
            (uint64_t *)vf->d_a, (uint64_t *)vf->d_b, vf->d_f);
    CK(cudaGetLastError());
    std::vector<uint8_t> q(s * kb), v(s * kb), f(s);
    CK(cudaMemcpy(q.data(), vf->d_a, s * kb, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(v.data(), vf->d_b, s * kb, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(f.data(), vf->d_f, s, cudaMemcpyDeviceToHost));
    check_result r = compare_lookups(vf, q.data(), v.data(), f.data());
    r.mismatches += bad_positions;
    r.ok = r.mismatches == 0;
    return r;
}

check_result verify_lookup_host(verifier *vf, const void *queries, const void *values, const uint8_t *found)
{
    const uint64_t s = vf->sample;
    const size_t kb = vf->bits / 8;
    std::vector<uint8_t> q(s * kb), v(s * kb), f(s);
    for (uint64_t j = 0; j < s; j++) {
        const uint64_t slot = vf->slots[j];
        memcpy(&q[j * kb], (const char *)queries + slot * kb, kb);
        memcpy(&v[j * kb], (const char *)values + slot * kb, kb);
        f[j] = found[slot];
    }
    return compare_lookups(vf, q.data(), v.data(), f.data());
}

/* --- ranges on the device ----------------------------------------------------------------------- */

template <typename K>
__global__ void gather_ranges_kernel(const uint64_t *slots, uint64_t s, const K *lo, const K *hi,
                                     const uint64_t *counts_or_offsets, bool offsets, K *lo_out, K *hi_out,
                                     uint64_t *start_out, uint64_t *count_out)
{
    for (uint64_t j = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; j < s; j += (uint64_t)gridDim.x * blockDim.x) {
        const uint64_t slot = slots[j];
        lo_out[j] = lo[slot];
        hi_out[j] = hi[slot];
        if (offsets) {
            start_out[j] = counts_or_offsets[slot];
            count_out[j] = counts_or_offsets[slot + 1] - counts_or_offsets[slot];
        } else {
            count_out[j] = counts_or_offsets[slot];
        }
    }
}

static void gather_ranges(verifier *vf, const void *d_lo, const void *d_hi, const uint64_t *d_counts_or_offsets,
                          bool offsets)
{
    const uint64_t s = vf->sample;
    if (vf->bits == 32)
        gather_ranges_kernel<uint32_t><<<verify_grid(s), VERIFY_THREADS>>>(
            vf->d_slots, s, (const uint32_t *)d_lo, (const uint32_t *)d_hi, d_counts_or_offsets, offsets,
            (uint32_t *)vf->d_a, (uint32_t *)vf->d_b, (uint64_t *)vf->d_c, (uint64_t *)vf->d_d);
    else
        gather_ranges_kernel<uint64_t><<<verify_grid(s), VERIFY_THREADS>>>(
            vf->d_slots, s, (const uint64_t *)d_lo, (const uint64_t *)d_hi, d_counts_or_offsets, offsets,
            (uint64_t *)vf->d_a, (uint64_t *)vf->d_b, (uint64_t *)vf->d_c, (uint64_t *)vf->d_d);
    CK(cudaGetLastError());
}

check_result verify_range_count_device(verifier *vf, const void *d_lo, const void *d_hi, const uint64_t *d_counts)
{
    const uint64_t s = vf->sample;
    const size_t kb = vf->bits / 8;
    gather_ranges(vf, d_lo, d_hi, d_counts, false);
    std::vector<uint8_t> lo(s * kb), hi(s * kb);
    std::vector<uint64_t> got(s), want(s);
    CK(cudaMemcpy(lo.data(), vf->d_a, s * kb, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(hi.data(), vf->d_b, s * kb, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(got.data(), vf->d_d, s * 8, cudaMemcpyDeviceToHost));
    check_result r = {true, s, 0, 0.0};
    harmonia_query_config cpu = cpu_engine_config();
    if (harmonia_range_count(vf->tree, &cpu, lo.data(), hi.data(), s, want.data()) != HARMONIA_OK) {
        fprintf(stderr, "bench_suite: verification: the CPU engine failed: %s\n", harmonia_last_error(vf->tree));
        r.ok = false;
        r.mismatches = s;
        return r;
    }
    for (uint64_t j = 0; j < s; j++)
        if (got[j] != want[j]) {
            if (r.mismatches < 3)
                fprintf(stderr, "bench_suite: MISMATCH: range %" PRIu64 " [%" PRIu64 ", %" PRIu64 "]: count %" PRIu64
                        ", the CPU engine says %" PRIu64 "\n", vf->slots[j], load_key(lo.data(), vf->bits, j),
                        load_key(hi.data(), vf->bits, j), got[j], want[j]);
            r.mismatches++;
        }
    r.ok = r.mismatches == 0;
    return r;
}

/* The device pairs of the sampled ranges, packed at the CPU engine's offsets. */
template <typename K>
__global__ void pack_pairs_kernel(uint64_t s, const uint64_t *start, const uint64_t *count,
                                  const uint64_t *packed_offsets, const K *keys, const K *values, uint64_t limit,
                                  K *keys_out, K *values_out, unsigned long long *bad)
{
    const uint64_t warp = (blockIdx.x * (uint64_t)blockDim.x + threadIdx.x) >> 5;
    const uint64_t warps = ((uint64_t)gridDim.x * blockDim.x) >> 5;
    const uint32_t lane = threadIdx.x & 31u;
    for (uint64_t j = warp; j < s; j += warps) {
        if (start[j] > limit || count[j] > limit - start[j]) { /* offsets outside the output array */
            if (lane == 0)
                atomicAdd(bad, 1ull);
            continue;
        }
        for (uint64_t k = lane; k < count[j]; k += 32) {
            keys_out[packed_offsets[j] + k] = keys[start[j] + k];
            values_out[packed_offsets[j] + k] = values[start[j] + k];
        }
    }
}

check_result verify_range_collect_device(verifier *vf, const void *d_lo, const void *d_hi, const uint64_t *d_offsets,
                                         const void *d_keys, const void *d_values, uint64_t expected_total)
{
    const uint64_t s = vf->sample;
    const size_t kb = vf->bits / 8;
    check_result r = {true, s, 0, 0.0};
    gather_ranges(vf, d_lo, d_hi, d_offsets, true);
    std::vector<uint8_t> lo(s * kb), hi(s * kb);
    std::vector<uint64_t> got_count(s), ref_offsets(s + 1);
    CK(cudaMemcpy(lo.data(), vf->d_a, s * kb, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(hi.data(), vf->d_b, s * kb, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(got_count.data(), vf->d_d, s * 8, cudaMemcpyDeviceToHost));
    uint64_t total = 0;
    CK(cudaMemcpy(&total, d_offsets + vf->n, 8, cudaMemcpyDeviceToHost));
    if (expected_total != UINT64_MAX && total != expected_total) {
        fprintf(stderr, "bench_suite: MISMATCH: %" PRIu64 " pairs in all, expected %" PRIu64 "\n", total,
                expected_total);
        r.mismatches++;
    }
    harmonia_query_config cpu = cpu_engine_config();
    if (harmonia_range_collect(vf->tree, &cpu, lo.data(), hi.data(), s, ref_offsets.data(), NULL, NULL) !=
        HARMONIA_OK) {
        fprintf(stderr, "bench_suite: verification: the CPU engine failed: %s\n", harmonia_last_error(vf->tree));
        r.ok = false;
        r.mismatches = s;
        return r;
    }
    for (uint64_t j = 0; j < s; j++)
        if (got_count[j] != ref_offsets[j + 1] - ref_offsets[j]) {
            if (r.mismatches < 3)
                fprintf(stderr, "bench_suite: MISMATCH: range %" PRIu64 " holds %" PRIu64 " pairs, the CPU engine says %"
                        PRIu64 "\n", vf->slots[j], got_count[j], ref_offsets[j + 1] - ref_offsets[j]);
            r.mismatches++;
        }
    if (r.mismatches) {
        r.ok = false;
        return r;
    }
    const uint64_t pairs = ref_offsets[s];
    /* uninitialised buffers (the sample may hold 2^26 pairs: zeroing them would cost more than the check) */
    std::unique_ptr<uint8_t[]> want_keys(new uint8_t[pairs * kb + 1]), want_values(new uint8_t[pairs * kb + 1]),
        got_keys(new uint8_t[pairs * kb + 1]), got_values(new uint8_t[pairs * kb + 1]);
    if (harmonia_range_collect(vf->tree, &cpu, lo.data(), hi.data(), s, ref_offsets.data(), want_keys.get(),
                               want_values.get()) != HARMONIA_OK) {
        fprintf(stderr, "bench_suite: verification: the CPU engine failed: %s\n", harmonia_last_error(vf->tree));
        r.ok = false;
        r.mismatches = s;
        return r;
    }
    uint64_t *d_packed_offsets = (uint64_t *)suite_device_alloc((s + 1) * 8);
    void *d_packed_keys = suite_device_alloc(pairs * kb + 1), *d_packed_values = suite_device_alloc(pairs * kb + 1);
    CK(cudaMemcpy(d_packed_offsets, ref_offsets.data(), (s + 1) * 8, cudaMemcpyHostToDevice));
    CK(cudaMemset(vf->d_bad, 0, sizeof(unsigned long long)));
    const uint64_t limit = expected_total != UINT64_MAX ? expected_total : total; /* pairs the output holds */
    if (vf->bits == 32)
        pack_pairs_kernel<uint32_t><<<verify_grid(s * 32), VERIFY_THREADS>>>(
            s, (const uint64_t *)vf->d_c, (const uint64_t *)vf->d_d, d_packed_offsets, (const uint32_t *)d_keys,
            (const uint32_t *)d_values, limit, (uint32_t *)d_packed_keys, (uint32_t *)d_packed_values, vf->d_bad);
    else
        pack_pairs_kernel<uint64_t><<<verify_grid(s * 32), VERIFY_THREADS>>>(
            s, (const uint64_t *)vf->d_c, (const uint64_t *)vf->d_d, d_packed_offsets, (const uint64_t *)d_keys,
            (const uint64_t *)d_values, limit, (uint64_t *)d_packed_keys, (uint64_t *)d_packed_values, vf->d_bad);
    CK(cudaGetLastError());
    uint64_t out_of_bounds = 0;
    CK(cudaMemcpy(&out_of_bounds, vf->d_bad, 8, cudaMemcpyDeviceToHost));
    if (out_of_bounds) {
        fprintf(stderr, "bench_suite: MISMATCH: %" PRIu64 " sampled ranges have offsets outside the output\n",
                out_of_bounds);
        r.mismatches += out_of_bounds;
    }
    CK(cudaMemcpy(got_keys.get(), d_packed_keys, pairs * kb, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(got_values.get(), d_packed_values, pairs * kb, cudaMemcpyDeviceToHost));
    suite_device_free(d_packed_offsets);
    suite_device_free(d_packed_keys);
    suite_device_free(d_packed_values);
    if (memcmp(got_keys.get(), want_keys.get(), pairs * kb) != 0 ||
        memcmp(got_values.get(), want_values.get(), pairs * kb) != 0)
        for (uint64_t p = 0; p < pairs; p++)
            if (load_key(got_keys.get(), vf->bits, p) != load_key(want_keys.get(), vf->bits, p) ||
                load_key(got_values.get(), vf->bits, p) != load_key(want_values.get(), vf->bits, p)) {
                if (r.mismatches < 3)
                    fprintf(stderr, "bench_suite: MISMATCH: collected pair %" PRIu64 " of the sample: (%" PRIu64 ", %"
                            PRIu64 "), the CPU engine says (%" PRIu64 ", %" PRIu64 ")\n", p,
                            load_key(got_keys.get(), vf->bits, p), load_key(got_values.get(), vf->bits, p),
                            load_key(want_keys.get(), vf->bits, p), load_key(want_values.get(), vf->bits, p));
                r.mismatches++;
            }
    r.ok = r.mismatches == 0;
    return r;
}
