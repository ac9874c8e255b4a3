/* ntg_choice.c — the front of NTG profiling: configuration defaults, the profiling workload drawn
 * from the tree's keys, harmonia_ntg_model (checks and defaults around ntg/ntg_model.c), the choice
 * between model and measurement, and the tree's stored G. The measurement is ntg_measure.c. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "harmonia/gpu_engine.h"
#include "harmonia/tree_internal.h"
#include "ntg/ntg_model.h"
#include "psa/psa.h"
#include "util/mix.h"

static harmonia_ntg_config ntg_defaults(void)
{
    harmonia_ntg_config d;
    memset(&d, 0, sizeof d);
    d.size = sizeof d;
    d.query = NULL; /* the query defaults */
    d.unordered = false;
    d.sample = HARMONIA_NTG_DEFAULT_SAMPLE;
    d.levels = HARMONIA_NTG_DEFAULT_LEVELS;
    d.warmup = 1;
    d.runs = HARMONIA_NTG_DEFAULT_RUNS;
    return d;
}

void harmonia_ntg_config_init_sized(harmonia_ntg_config *config, size_t size)
{
    const harmonia_ntg_config d = ntg_defaults();
    hm_config_init(config, size, &d, sizeof d);
}

harmonia_status hm_ntg_config(harmonia_tree *tree, const harmonia_ntg_config *given, harmonia_ntg_config *out,
                              harmonia_query_config *query_out)
{
    *out = ntg_defaults();
    harmonia_status st = HARMONIA_OK;
    if (given)
        st = hm_config_read(tree, "harmonia_ntg_config", out, sizeof *out, sizeof *out, given);
    if (st == HARMONIA_OK)
        st = hm_query_config(tree, out->query, query_out);
    out->query = query_out;
    return st;
}

harmonia_status harmonia_sample_keys(harmonia_tree *tree, uint64_t count, uint64_t seed,
                                     void *queries_out)
{
    if (!tree)
        return hm_fail(NULL, HARMONIA_ERR_INVALID, "harmonia_sample_keys: tree is NULL");
    if (count == 0)
        return HARMONIA_OK;
    if (!queries_out)
        return hm_fail(tree, HARMONIA_ERR_INVALID, "harmonia_sample_keys: queries_out is NULL");
    const kr_tree *t = &tree->kr;
    if (t->n_keys == 0)
        return hm_fail(tree, HARMONIA_ERR_INVALID, "harmonia_sample_keys: the tree holds no keys");
    const uint64_t n = t->n_keys;
#pragma omp parallel for schedule(static) num_threads(kr_resolve_threads(0)) if (count > KR_PARALLEL_MIN)
    for (uint64_t i = 0; i < count; i++) {
        uint64_t rank = util_draw(seed, i) % n; /* modulo bias below n / 2^64: negligible */
        uint64_t key, value;
        kr_at_rank(t, rank, &key, &value);
        kr_store(queries_out, t->key_bits, i, key);
    }
    return HARMONIA_OK;
}

/* The PSA window the engine takes by default on the tree's device (psa_default_window on its L2,
 * or on the engine's 8 MiB fallback when there is no GPU). */
static uint64_t engine_default_window(harmonia_tree *tree)
{
    const uint64_t l2 = hm_gpu_l2_bytes(tree);
    return psa_default_window(tree->kr.key_bits, l2 ? l2 : 8u << 20);
}

harmonia_status harmonia_ntg_model(harmonia_tree *tree, const harmonia_ntg_config *given,
                                   const void *queries, uint64_t count,
                                   harmonia_ntg_model_result *result)
{
    if (!tree)
        return hm_fail(NULL, HARMONIA_ERR_INVALID, "harmonia_ntg_model: tree is NULL");
    if (!queries || !result)
        return hm_fail(tree, HARMONIA_ERR_INVALID, "harmonia_ntg_model: NULL queries or result");
    if (count == 0)
        return hm_fail(tree, HARMONIA_ERR_INVALID, "harmonia_ntg_model: no queries to model");
    harmonia_ntg_config own;
    harmonia_query_config query;
    harmonia_status st = hm_ntg_config(tree, given, &own, &query);
    if (st != HARMONIA_OK)
        return st;
    const harmonia_ntg_config *config = &own;
    const kr_tree *t = &tree->kr;
    ntg_model_params p;
    memset(&p, 0, sizeof p);
    p.sample = config->sample ? config->sample : HARMONIA_NTG_DEFAULT_SAMPLE;
    if (p.sample > NTG_MODEL_MAX_SAMPLE)
        p.sample = NTG_MODEL_MAX_SAMPLE;
    p.levels = config->levels ? config->levels : HARMONIA_NTG_DEFAULT_LEVELS;
    const int psa = config->query->psa;
    p.psa = psa < 0 ? config->unordered : psa != 0; /* as the engine resolves it for a lookup */
    if (p.psa) {
        p.window = config->query->psa_window ? config->query->psa_window
                                            : engine_default_window(tree);
        uint64_t min_key = 0, max_key = 0, ignored;
        if (t->n_keys > 0) {
            kr_at_rank(t, 0, &min_key, &ignored);
            kr_at_rank(t, t->n_keys - 1, &max_key, &ignored);
        }
        psa_bits bits = psa_choose_bits(t->n_keys, t->key_bits, min_key, max_key);
        if (config->query->psa_bits) { /* as the engine: the top psa_bits below the span's top */
            uint32_t end = bits.end_bit ? bits.end_bit : t->key_bits;
            uint32_t n = config->query->psa_bits < end ? config->query->psa_bits : end;
            bits.end_bit = end;
            bits.begin_bit = end - n;
        }
        p.psa_begin_bit = bits.begin_bit;
        p.psa_end_bit = bits.end_bit;
    }
    kr_error err;
    st = ntg_model_run(t, &p, queries, count, result, &err);
    if (st != HARMONIA_OK)
        return hm_fail(tree, st, "%s", err.message);
    return HARMONIA_OK;
}

uint32_t harmonia_ntg_choice(const harmonia_ntg_model_result *model,
                             const harmonia_ntg_measurement *measured)
{
    if (measured && measured->best != 0)
        return measured->best;
    return model ? model->choice : 0;
}

harmonia_status harmonia_set_group_size(harmonia_tree *tree, uint32_t group_size)
{
    if (!tree)
        return hm_fail(NULL, HARMONIA_ERR_INVALID, "harmonia_set_group_size: tree is NULL");
    if (group_size != 0 && !ntg_group_size_valid(group_size, tree->kr.fanout))
        return hm_fail(tree, HARMONIA_ERR_INVALID,
                       "NTG group size %" PRIu32 ": use 1, 2, 4, 8, 16 or 32, at most the fanout %" PRIu32
                       " (or 0 to clear)",
                       group_size, tree->kr.fanout);
    tree->ntg_group_size = group_size;
    return HARMONIA_OK;
}
