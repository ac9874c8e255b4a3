/* ntg_model.h — the NTG model (Eq. 4 of the Harmonia paper, Section 4.2): from a sample of the
 * workload traversed on the CPU over the tree's own layout, the comparison steps a warp needs for
 * each thread-group size G, and the paper's narrowing rule. Host code only; it needs no GPU. The
 * public entry (argument checks, configuration defaults) is harmonia_ntg_model in
 * harmonia/ntg_choice.c; the measured sweep is harmonia/ntg_measure.c; the kernels are ntg_kernels.cu.
 *
 * ================================ THE MODEL (read before any code) ================================
 *
 * GROUP SIZES. G in {1, 2, 4, 8, 16, 32} with G <= F: the kernels exist for those (ntg.h), and a group
 *   never spans more than one warp, so F = 64 and F = 128 also stop at G = 32. G_max = min(F, 32).
 *
 * KEYS EXAMINED IN ONE NODE (m). The paper's NTG compares a node's keys G at a time, in slot order,
 *   and stops at the first step that decides the search. A node's decision needs its real keys up to
 *   and including the first one that ends the search:
 *     internal node with c children (c from the first-child array, which the traversal reads anyway),
 *       the search going to child j (0 <= j <= c-1; j = the number of separators <= q, clamped):
 *         m = min(j + 1, c - 1)
 *       (separators s_0 .. s_j are compared and s_j > q ends it; when q >= s_{c-2} all c - 1
 *       separators are compared and no padding slot is ever needed; so m <= F - 1.)
 *     leaf with n keys, the search ending at pos = the number of keys < q (0 <= pos <= n):
 *         m = max(1, min(pos + 1, n))
 *       (keys 0 .. pos are compared and the first key >= q ends it; when every key is < q, all n
 *       are compared; the empty tree's one empty leaf still costs one comparison; so m <= L.)
 * STEPS IN ONE NODE. steps(m, G) = ceil(m / G): G keys per step. So a node costs at most
 *   ceil((F - 1) / G) steps (internal) or ceil(L / G) (leaf).
 *
 * COUNTED LEVELS. With PSA the queries of a warp share the upper part of their paths; divergence is
 *   in the last levels (the paper's observation). The model counts the last `levels` levels of the
 *   tree: levels height - levels .. height - 1, leaves last. Default 2: the leaves' parents and the
 *   leaves. levels is clamped to [1, height] (a tree of height 1 is one leaf).
 *
 * SIMULATED WARPS. The sample is a set of RUNS of 32 consecutive queries in the order the GPU
 *   processes them (a run is one warp at G = 1). At size G a run splits into G warps of 32 / G
 *   consecutive queries, so every G sees the same queries, and warps line up with the kernel's
 *   (every warp starts at a multiple of 32 / G from its window's start).
 *   A warp executes a level in lockstep, as long as its slowest group:
 *     warp steps at level l  = max over the warp's queries of steps(m_l(q), G)
 *     warp steps S_w(G)      = sum over the counted levels of the warp steps at that level
 *     S(G)                   = the mean of S_w(G) over all simulated warps.
 *   level_steps[G][k] is the same mean for the k-th counted level alone (they add up to S(G)).
 *
 * THE ORDER OF THE QUERIES (which queries share a warp).
 *   PSA off: the kernel runs over the batch in query order; the "window" is the whole batch.
 *   PSA on: the engine sorts each window of W queries stably on the PSA bits [begin_bit, end_bit)
 *     (psa/psa.h) and runs the kernel over the sorted window. The model does exactly that to the
 *     batch's FIRST window: W as the engine takes it (the configured window, or the engine's default
 *     for the GPU's L2 size, clamped as the engine clamps it: at most the batch, at least 1024) and
 *     the same bits (psa_choose_bits over the span of the tree's keys, or the configured count of
 *     top bits), ties kept in query order as CUB's radix sort keeps them. Sorting a 1000-query
 *     sample instead would put its queries ~W/1000 times further apart than a real window's warps
 *     see them. To bound the CPU's work the simulated window is at most NTG_MODEL_MAX_WINDOW
 *     queries (the engine's default windows are smaller).
 *   Either way, with n_w queries in that window, R = max(1, min(sample, n_w) / 32) runs are taken
 *   at evenly spaced starts r * stride (stride = n_w / R rounded down to a multiple of 32). A window
 *   of fewer than 32 queries is one short run (its last warp at each G may be short: its max is
 *   over the queries it has).
 *
 * THE RULE (Eq. 4). Narrowing from 2G to G multiplies a warp's throughput by
 *     ratio(G) = S(2G) / S(G) × 2
 *   (the paper: TP_a / TP_b = S_b / S_a × GS_b / GS_a, with GS halved). Starting at G_max, keep
 *   halving while ratio > 1; the model's choice is the last G reached. The comparison is made
 *   exactly, in integers (2 × total(2G) × warps(G) > total(G) × warps(2G)), so that a ratio of
 *   exactly 1 (no gain) stops the narrowing whatever the rounding.
 *
 * WHAT THE MODEL LEAVES OUT (why the measurement exists). Memory latency, which the paper neglects
 *   (hidden by other warps, PSA coalescing); the cost of the ballot and shuffle per step; and the
 *   kernel itself: ntg_kernels.cu splits a node's slots into G contiguous chunks of F / G and does
 *   NOT exit early, so every node costs it F / G (or L / G) comparisons per thread whatever the
 *   query. The model is the paper's early-exit model; `harmonia profile-ntg` shows it beside the
 *   measured throughput so that the two can be compared on each GPU.
 * ============================================================================================== */
#ifndef HARMONIA_NTG_MODEL_H
#define HARMONIA_NTG_MODEL_H

#include <stdbool.h>
#include <stdint.h>

#include "harmonia.h"
#include "key_region/key_region.h"

#define NTG_MODEL_WARP 32u
/* The largest first window the model sorts on the CPU (the engine's default windows are at most
 * 2^24 queries: hm_gpu_default_window). */
#define NTG_MODEL_MAX_WINDOW (1u << 24)
/* The largest sample (keeps the exact integer rule of ntg_model_run far from overflow). */
#define NTG_MODEL_MAX_SAMPLE (1u << 24)

/* What the model is asked (resolved: no zeros meaning "default" here; harmonia_ntg_model resolves
 * them). */
typedef struct ntg_model_params {
    uint64_t sample;     /* >= 1: queries wanted (rounded down to runs of 32) */
    uint32_t levels;     /* >= 1: last levels counted (clamped to the height) */
    bool psa;            /* simulate the PSA sort of the first window */
    uint64_t window;     /* PSA on: the engine's window (queries), before clamping to the batch */
    uint32_t psa_begin_bit, psa_end_bit; /* PSA on: the sort bits; begin == end: nothing sorted */
} ntg_model_params;

/* The valid group sizes of a tree of fanout F: fills sizes[] ascending (1, 2, 4, ..., min(F, 32))
 * and returns how many (at most HARMONIA_NTG_MAX_SIZES). */
uint32_t ntg_group_sizes(uint32_t fanout, uint32_t *sizes);

/* Whether G is a size the kernels offer for fanout F (1..32, a power of two, <= F). */
bool ntg_group_size_valid(uint32_t group_size, uint32_t fanout);

/* steps(m, G) = ceil(m / G). */
static inline uint32_t ntg_steps(uint32_t examined, uint32_t group_size)
{
    return (examined + group_size - 1) / group_size;
}

/* The keys examined (m, see above) by the search for q at each of the last `levels` levels of t
 * (levels already clamped to [1, height]): examined[k] for level height - levels + k. */
void ntg_examined_keys(const kr_tree *t, uint64_t q, uint32_t levels, uint16_t *examined);

/* Runs the model over count queries (t's key width, host memory, count >= 1) and fills the
 * model fields of *result (every field of harmonia_ntg_model_result). NO_MEMORY when the sample
 * or the simulated window cannot be allocated; nothing else fails. Synchronous, read-only. */
harmonia_status ntg_model_run(const kr_tree *t, const ntg_model_params *params, const void *queries,
                              uint64_t count, harmonia_ntg_model_result *result, kr_error *err);

#endif /* HARMONIA_NTG_MODEL_H */
