/* ntg_model.c — the NTG model of ntg_model.h: keys examined per node on the CPU over the tree's
 * layout, the simulated PSA order of the first window, the runs of 32, the warp step counts per G
 * and the Eq. 4 narrowing rule. No GPU code, no defaults (harmonia/ntg_choice.c resolves them). */
#include <stdlib.h>
#include <string.h>

#include "ntg/ntg_model.h"

uint32_t ntg_group_sizes(uint32_t fanout, uint32_t *sizes)
{
    uint32_t n = 0;
    for (uint32_t g = 1; g <= NTG_MODEL_WARP && g <= fanout && n < HARMONIA_NTG_MAX_SIZES; g *= 2)
        sizes[n++] = g;
    return n;
}

bool ntg_group_size_valid(uint32_t group_size, uint32_t fanout)
{
    return group_size >= 1 && group_size <= NTG_MODEL_WARP && group_size <= fanout &&
           (group_size & (group_size - 1)) == 0;
}

/* Number of the first `slots` keys of a node (at slot offset base) that are <= q (or < q). Linear:
 * the model touches a few thousand nodes. */
static uint32_t count_keys(const kr_tree *t, uint64_t base, uint32_t slots, uint64_t q, bool strict)
{
    uint32_t n = 0;
    for (uint32_t s = 0; s < slots; s++) {
        uint64_t key = kr_load(t->keys, t->key_bits, base + s);
        if (strict ? key < q : key <= q)
            n++;
        else
            break; /* sorted: the rest are larger */
    }
    return n;
}

void ntg_examined_keys(const kr_tree *t, uint64_t q, uint32_t levels, uint16_t *examined)
{
    const uint32_t first_counted = t->height - levels;
    uint64_t node = 0;
    for (uint32_t level = 0; level + 1 < t->height; level++) {
        uint32_t first = t->first_child[node];
        uint32_t c = t->first_child[node + 1] - first;
        uint32_t j = count_keys(t, node * t->fanout, t->fanout, q, false);
        if (j > c - 1)
            j = c - 1; /* padding counts only when q is the maximum key */
        if (level >= first_counted) {
            uint32_t m = j + 1 < c - 1 ? j + 1 : c - 1;
            examined[level - first_counted] = (uint16_t)m;
        }
        node = first + j;
    }
    uint64_t leaf = node - t->n_internal;
    uint32_t n = (uint32_t)(t->leaf_rank[leaf + 1] - t->leaf_rank[leaf]);
    uint32_t pos = count_keys(t, kr_leaf_key_offset(t, leaf), n, q, true);
    uint32_t m = pos + 1 < n ? pos + 1 : n;
    examined[levels - 1] = (uint16_t)(m > 0 ? m : 1);
}

/* A window query and its place, sorted on the PSA bits with ties in query order. */
typedef struct psa_entry {
    uint64_t bucket;
    uint64_t position;
} psa_entry;

static int compare_psa_entries(const void *a, const void *b)
{
    const psa_entry *x = a, *y = b;
    if (x->bucket != y->bucket)
        return x->bucket < y->bucket ? -1 : 1;
    return x->position < y->position ? -1 : x->position > y->position;
}

/* The positions (in the batch) of the window's queries in the order the kernel sees them, for
 * the runs only: order_out[r * 32 + i] for run r, query i of the run (run_length queries a run). */
static harmonia_status pick_runs(const kr_tree *t, const ntg_model_params *p, const void *queries,
                                 uint64_t window, uint64_t runs, uint64_t run_length,
                                 uint64_t stride, uint64_t *order_out, kr_error *err)
{
    const bool sorting = p->psa && p->psa_end_bit > p->psa_begin_bit && window > 1;
    if (!sorting) {
        for (uint64_t r = 0; r < runs; r++)
            for (uint64_t i = 0; i < run_length; i++)
                order_out[r * run_length + i] = r * stride + i;
        return HARMONIA_OK;
    }
    psa_entry *entries = kr_malloc(window * sizeof *entries);
    if (!entries) {
        kr_set_error(err, "out of memory sorting a simulated PSA window of %llu queries",
                     (unsigned long long)window);
        return HARMONIA_ERR_NO_MEMORY;
    }
    const uint32_t width = p->psa_end_bit - p->psa_begin_bit;
    const uint64_t mask = width >= 64 ? UINT64_MAX : (((uint64_t)1 << width) - 1);
    for (uint64_t i = 0; i < window; i++) {
        entries[i].bucket = (kr_load(queries, t->key_bits, i) >> p->psa_begin_bit) & mask;
        entries[i].position = i;
    }
    qsort(entries, window, sizeof *entries, compare_psa_entries);
    for (uint64_t r = 0; r < runs; r++)
        for (uint64_t i = 0; i < run_length; i++)
            order_out[r * run_length + i] = entries[r * stride + i].position;
    free(entries);
    return HARMONIA_OK;
}

harmonia_status ntg_model_run(const kr_tree *t, const ntg_model_params *p, const void *queries,
                              uint64_t count, harmonia_ntg_model_result *result, kr_error *err)
{
    memset(result, 0, sizeof *result);
    const uint32_t levels = p->levels < 1 ? 1 : p->levels > t->height ? t->height : p->levels;
    result->size_count = ntg_group_sizes(t->fanout, result->group_sizes);
    result->levels = levels;
    result->first_level = t->height - levels;
    result->psa = p->psa;
    if (p->psa) {
        result->psa_begin_bit = p->psa_begin_bit;
        result->psa_end_bit = p->psa_end_bit;
    }

    /* the window the runs come from, then the runs */
    uint64_t window = count;
    if (p->psa) {
        window = p->window < 1024 ? 1024 : p->window; /* the engine's clamps */
        if (window > ((uint64_t)1 << 30))
            window = (uint64_t)1 << 30;
        if (window > count)
            window = count;
        if (window > NTG_MODEL_MAX_WINDOW)
            window = NTG_MODEL_MAX_WINDOW;
    }
    uint64_t runs = 1, run_length = window, stride = 0;
    if (window >= NTG_MODEL_WARP) {
        uint64_t wanted = p->sample < window ? p->sample : window;
        runs = wanted / NTG_MODEL_WARP;
        if (runs < 1)
            runs = 1;
        run_length = NTG_MODEL_WARP;
        stride = window / runs / NTG_MODEL_WARP * NTG_MODEL_WARP;
    }
    result->window = window;
    result->runs = runs;
    const uint64_t n = runs * run_length;
    result->sample_queries = n;

    uint64_t *order = kr_malloc(n * sizeof *order);
    uint16_t *examined = kr_malloc(n * levels * sizeof *examined);
    if (!order || !examined) {
        free(order);
        free(examined);
        kr_set_error(err, "out of memory for a model sample of %llu queries", (unsigned long long)n);
        return HARMONIA_ERR_NO_MEMORY;
    }
    harmonia_status st = pick_runs(t, p, queries, window, runs, run_length, stride, order, err);
    if (st != HARMONIA_OK) {
        free(order);
        free(examined);
        return st;
    }
    for (uint64_t i = 0; i < n; i++)
        ntg_examined_keys(t, kr_load(queries, t->key_bits, order[i]), levels, examined + i * levels);
    free(order);

    /* the warps of every G: totals of steps (integers, for the exact rule) and warp counts */
    uint64_t total[HARMONIA_NTG_MAX_SIZES] = {0}, warps[HARMONIA_NTG_MAX_SIZES] = {0};
    for (uint32_t s = 0; s < result->size_count; s++) {
        const uint32_t g = result->group_sizes[s];
        const uint64_t per_warp = NTG_MODEL_WARP / g;
        uint64_t level_total[HARMONIA_MAX_LEVELS] = {0};
        for (uint64_t r = 0; r < runs; r++) {
            for (uint64_t begin = 0; begin < run_length; begin += per_warp) {
                const uint64_t end = begin + per_warp < run_length ? begin + per_warp : run_length;
                for (uint32_t k = 0; k < levels; k++) {
                    uint32_t most = 0;
                    for (uint64_t i = begin; i < end; i++) {
                        uint32_t steps = ntg_steps(examined[(r * run_length + i) * levels + k], g);
                        most = steps > most ? steps : most;
                    }
                    level_total[k] += most;
                    total[s] += most;
                }
                warps[s]++;
            }
        }
        result->steps[s] = (double)total[s] / (double)warps[s];
        for (uint32_t k = 0; k < levels; k++)
            result->level_steps[s][k] = (double)level_total[k] / (double)warps[s];
    }
    free(examined);

    /* Eq. 4, from the widest G down */
    uint32_t choice = result->size_count - 1;
    bool narrowing = true;
    for (uint32_t s = result->size_count - 1; s-- > 0;) {
        result->ratio[s] = result->steps[s + 1] / result->steps[s] * 2.0;
        /* ratio > 1  <=>  2 * total(2G) * warps(G) > total(G) * warps(2G); with at most 2^24
         * sample queries (harmonia_ntg_model's bound) both sides stay below 2^62 */
        bool gain = 2 * total[s + 1] * warps[s] > total[s] * warps[s + 1];
        if (narrowing && gain)
            choice = s;
        else
            narrowing = false;
    }
    result->choice = result->group_sizes[choice];
    return HARMONIA_OK;
}
