/* ntg_choice.c — the front of NTG profiling: configuration defaults, the profiling workload drawn
 * from the tree's keys, harmonia_ntg_model (checks and defaults around ntg/ntg_model.c), the choice
 * between model and measurement, and the tree's stored G. The measurement is ntg/ntg_profile.c. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "harmonia/tree_internal.h"
#include "ntg/ntg_model.h"
#include "psa/psa.h"

void harmonia_ntg_config_init(harmonia_ntg_config *config)
{
    memset(config, 0, sizeof *config);
    harmonia_query_config_init(&config->query);
    config->unordered = false;
    config->sample = HARMONIA_NTG_DEFAULT_SAMPLE;
    config->levels = HARMONIA_NTG_DEFAULT_LEVELS;
    config->warmup = 1;
    config->runs = HARMONIA_NTG_DEFAULT_RUNS;
}

/* splitmix64 of a counter: draw i of a seed, the same whatever thread draws it. */
static uint64_t draw(uint64_t seed, uint64_t i)
{
    uint64_t z = seed + (i + 1) * 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
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
#pragma omp parallel for schedule(static) if (count > KR_PARALLEL_MIN)
    for (uint64_t i = 0; i < count; i++) {
        uint64_t rank = draw(seed, i) % n; /* modulo bias below n / 2^64: negligible */
        uint64_t key, value;
        kr_at_rank(t, rank, &key, &value);
        kr_store(queries_out, t->key_bits, i, key);
    }
    return HARMONIA_OK;
}

/* The PSA window the engine takes by default on GPU 0 (psa_default_window on the device's L2, or on
 * the engine's 8 MiB fallback when there is no GPU). */
static uint64_t engine_default_window(uint32_t key_bits)
{
    char saved[512]; /* the probe may record a reason as the thread's last error: keep the old one */
    snprintf(saved, sizeof saved, "%s", harmonia_last_error(NULL));
    harmonia_device_info device;
    uint64_t l2 = 8u << 20;
    if (harmonia_device_probe(&device) == HARMONIA_OK && device.l2_bytes > 0)
        l2 = device.l2_bytes;
    hm_fail(NULL, HARMONIA_OK, "%s", saved);
    return psa_default_window(key_bits, l2);
}

harmonia_status harmonia_ntg_model(harmonia_tree *tree, const harmonia_ntg_config *config,
                                   const void *queries, uint64_t count,
                                   harmonia_ntg_model_result *result)
{
    if (!tree)
        return hm_fail(NULL, HARMONIA_ERR_INVALID, "harmonia_ntg_model: tree is NULL");
    if (!queries || !result)
        return hm_fail(tree, HARMONIA_ERR_INVALID, "harmonia_ntg_model: NULL queries or result");
    if (count == 0)
        return hm_fail(tree, HARMONIA_ERR_INVALID, "harmonia_ntg_model: no queries to model");
    harmonia_ntg_config defaults;
    if (!config) {
        harmonia_ntg_config_init(&defaults);
        config = &defaults;
    }
    const kr_tree *t = &tree->kr;
    ntg_model_params p;
    memset(&p, 0, sizeof p);
    p.sample = config->sample ? config->sample : HARMONIA_NTG_DEFAULT_SAMPLE;
    if (p.sample > NTG_MODEL_MAX_SAMPLE)
        p.sample = NTG_MODEL_MAX_SAMPLE;
    p.levels = config->levels ? config->levels : HARMONIA_NTG_DEFAULT_LEVELS;
    const int psa = config->query.psa;
    p.psa = psa < 0 ? config->unordered : psa != 0; /* as the engine resolves it for a lookup */
    if (p.psa) {
        p.window = config->query.psa_window ? config->query.psa_window
                                            : engine_default_window(t->key_bits);
        uint64_t min_key = 0, max_key = 0, ignored;
        if (t->n_keys > 0) {
            kr_at_rank(t, 0, &min_key, &ignored);
            kr_at_rank(t, t->n_keys - 1, &max_key, &ignored);
        }
        psa_bits bits = psa_choose_bits(t->n_keys, t->key_bits, min_key, max_key);
        if (config->query.psa_bits) { /* as the engine: the top psa_bits below the span's top */
            uint32_t end = bits.end_bit ? bits.end_bit : t->key_bits;
            uint32_t n = config->query.psa_bits < end ? config->query.psa_bits : end;
            bits.end_bit = end;
            bits.begin_bit = end - n;
        }
        p.psa_begin_bit = bits.begin_bit;
        p.psa_end_bit = bits.end_bit;
    }
    kr_error err;
    harmonia_status st = ntg_model_run(t, &p, queries, count, result, &err);
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
