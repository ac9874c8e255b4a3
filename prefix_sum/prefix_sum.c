/* prefix_sum.c — builds and checks the first-child array and computes its top cut for the GPU's
 * constant memory (prefix_sum.h). The kernels that read the cut are ntg/; the device copy that
 * carries it is harmonia/gpu_tree.cu. */
#include "prefix_sum/prefix_sum.h"

#include <assert.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>

/* Level l's closed form (prefix_sum.h, THE EVEN SHARE). */
static void ps_levels_one(const uint64_t *level_start, uint32_t l, ps_level *lv)
{
    const uint64_t parents = level_start[l + 1] - level_start[l];
    const uint64_t children = level_start[l + 2] - level_start[l + 1];
    const uint32_t start = (uint32_t)level_start[l], share = parents ? (uint32_t)(children / parents) : 0;
    lv->share = share;
    lv->extra_end = start + (parents ? (uint32_t)(children % parents) : 0);
    lv->base = (uint32_t)level_start[l + 1] - start * (share + 1u); /* modulo 2^32 */
}

void ps_levels(const uint64_t *level_start, uint32_t height, ps_level *levels)
{
    for (uint32_t l = 0; l + 1 < height; l++)
        ps_levels_one(level_start, l, &levels[l]);
}

void ps_build(uint32_t *first_child, const uint64_t *level_start, uint32_t height)
{
    assert(height >= 1);
    uint64_t next = 1;
    for (uint32_t l = 0; l + 1 < height; l++) {
        const uint64_t parents = level_start[l + 1] - level_start[l];
        const uint64_t children = level_start[l + 2] - level_start[l + 1];
        assert(parents >= 1 && children >= parents);
        for (uint64_t p = 0; p < parents; p++) {
            first_child[level_start[l] + p] = (uint32_t)next;
            next += ps_even_share(children, parents, p);
        }
    }
    assert(next == level_start[height]);
    first_child[level_start[height - 1]] = (uint32_t)next;
}

static bool fail(char *message, size_t bytes, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

static bool fail(char *message, size_t bytes, const char *fmt, ...)
{
    if (message && bytes) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(message, bytes, fmt, ap);
        va_end(ap);
    }
    return false;
}

bool ps_check(const uint32_t *fc, const uint64_t *level_start, uint32_t height, uint32_t fanout,
              char *message, size_t bytes)
{
    const uint64_t n_internal = level_start[height - 1], n_nodes = level_start[height];
    if (n_internal == 0)
        return true;
    if (fc[0] != 1)
        return fail(message, bytes, "prefix sums: first_child[0] is %" PRIu32 ", not 1", fc[0]);
    for (uint64_t i = 0; i < n_internal; i++) {
        uint64_t c = (uint64_t)fc[i + 1] - fc[i];
        if (fc[i + 1] <= fc[i] || c < 2 || c > fanout)
            return fail(message, bytes,
                        "prefix sums: internal node %" PRIu64 " has %" PRId64
                        " children (first_child %" PRIu32 " -> %" PRIu32 "), not in [2, %" PRIu32 "]",
                        i, (int64_t)fc[i + 1] - (int64_t)fc[i], fc[i], fc[i + 1], fanout);
    }
    /* the even share: every entry equals its level's closed form (what the GPU kernels compute);
     * for a level's first node that is the next level's first node */
    for (uint32_t l = 0; l + 1 < height; l++) {
        ps_level lv;
        ps_levels_one(level_start, l, &lv);
        for (uint64_t i = level_start[l]; i < level_start[l + 1]; i++) {
            uint32_t last;
            const uint32_t expect = ps_level_children(&lv, (uint32_t)i, &last);
            if (fc[i] != expect)
                return fail(message, bytes,
                            "prefix sums: internal node %" PRIu64 " of level %" PRIu32 " has first child %" PRIu32
                            ", not %" PRIu32 " (level %" PRIu32 "'s %" PRIu64 " nodes share level %" PRIu32
                            "'s %" PRIu64 " evenly)",
                            i, l, fc[i], expect, l, level_start[l + 1] - level_start[l], l + 1,
                            level_start[l + 2] - level_start[l + 1]);
        }
    }
    if (fc[n_internal] != n_nodes)
        return fail(message, bytes, "prefix sums: first_child[n_internal] is %" PRIu32 ", not n_nodes %" PRIu64,
                    fc[n_internal], n_nodes);
    return true;
}

uint64_t ps_top_entries(const uint64_t *level_start, uint32_t height, uint64_t max_entries, uint32_t *levels_out)
{
    if (max_entries > PS_TOP_MAX_ENTRIES)
        max_entries = PS_TOP_MAX_ENTRIES;
    uint32_t levels = 0;
    uint64_t entries = 0;
    /* internal levels are 0 .. height-2; a level fits when its entries plus the sentinel do */
    for (uint32_t l = 0; l + 1 < height; l++) {
        const uint64_t end = level_start[l + 1];
        if (end + 1 > max_entries)
            break;
        entries = end + 1;
        levels = l + 1;
    }
    if (levels_out)
        *levels_out = levels;
    return entries;
}
