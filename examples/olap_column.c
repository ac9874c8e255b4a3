/* olap_column.c — Harmonia as an OLAP engine uses it: an index over a column of unique 64-bit keys
 * (order ids, row id = position), a batch of point lookups (a join probe: which rows hold these
 * ids?) and a batch of range counts (how many orders fall in each id range?), every answer checked
 * against the column itself. Uses the installed library and its public header only:
 *
 *     cc olap_column.c $(pkg-config --cflags --libs harmonia) -o olap_column
 *     ./olap_column [rows]
 *
 * The backend is automatic: the GPU when one is usable, else the CPU engine; the results are the
 * same. Exit status 0 when every answer checks, 1 otherwise. */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <harmonia.h>

/* Order ids in an order the engine does not know: the top 44 bits of a bijective mix of the row
 * number (a few ids repeat; the index keeps each id's first row). */
static uint64_t order_id_of_row(uint64_t row)
{
    uint64_t z = row * 0x9E3779B97F4A7C15ull + 12345;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return (z ^ (z >> 31)) >> 20;
}

static int fail(const char *what, const harmonia_tree *tree)
{
    fprintf(stderr, "olap_column: %s: %s\n", what, harmonia_last_error(tree));
    return 1;
}

static int compare_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
    const uint64_t rows = argc > 1 ? strtoull(argv[1], NULL, 10) : 1000000;
    if (rows < 16) {
        fprintf(stderr, "usage: olap_column [rows >= 16]\n");
        return 2;
    }
    printf("harmonia %s (headers %s)\n", harmonia_version(), HARMONIA_VERSION_STRING);

    /* the column */
    uint64_t *column = malloc(rows * sizeof *column);
    if (!column)
        return 1;
    for (uint64_t r = 0; r < rows; r++)
        column[r] = order_id_of_row(r);

    /* 1. the index over the column: key = order id, value = row id (values NULL = positions) */
    harmonia_build_config build;
    harmonia_build_config_init(&build);
    build.key_bits = 64;
    build.duplicates = HARMONIA_DUPLICATES_KEEP_FIRST;
    harmonia_tree *index = NULL;
    if (harmonia_build(&build, column, NULL, rows, &index) != HARMONIA_OK)
        return fail("build", NULL);
    harmonia_tree_info info;
    harmonia_info(index, &info);
    printf("index: %" PRIu64 " keys, height %u, F = %u, L = %u, %" PRIu64 " bytes\n", info.key_count,
           info.height, info.fanout, info.leaf_size, info.total_bytes);

    /* 2. a join probe: every 3rd row's id (hits) and as many ids that are not in the column */
    const uint64_t probes = rows / 3 * 2;
    uint64_t *queries = malloc(probes * sizeof *queries), *row_ids = malloc(probes * sizeof *row_ids);
    uint8_t *found = malloc(probes);
    if (!queries || !row_ids || !found)
        return 1;
    for (uint64_t i = 0; i < probes; i++)
        queries[i] = i % 2 == 0 ? column[(i / 2) * 3 % rows] : (uint64_t)1 << 50 | i; /* ids >= 2^50: misses */
    harmonia_query_config query;
    harmonia_query_config_init(&query); /* backend auto: the GPU when one is usable */
    if (harmonia_lookup(index, &query, queries, probes, row_ids, found) != HARMONIA_OK)
        return fail("lookup", index);
    uint64_t hits = 0;
    for (uint64_t i = 0; i < probes; i++) {
        const int hit = i % 2 == 0;
        if (found[i] != hit || (hit && column[row_ids[i]] != queries[i])) {
            fprintf(stderr, "olap_column: probe %" PRIu64 " (id %" PRIu64 ") answered found %u row %" PRIu64 "\n", i,
                    queries[i], found[i], row_ids[i]);
            return 1;
        }
        hits += found[i];
    }
    printf("join probe: %" PRIu64 " ids, %" PRIu64 " found, every row id checked\n", probes, hits);

    /* 3. range counts: the id space cut into 64 ranges, and a few empty or reversed ones */
    enum { RANGES = 68 };
    uint64_t lo[RANGES], hi[RANGES], counts[RANGES];
    const uint64_t span = ((uint64_t)1 << 44) / 64;
    for (int r = 0; r < 64; r++) {
        lo[r] = (uint64_t)r * span;
        hi[r] = lo[r] + span - 1;
    }
    lo[64] = 5, hi[64] = 4;                          /* lo > hi: empty, not an error */
    lo[65] = 0, hi[65] = UINT64_MAX;                 /* everything */
    lo[66] = (uint64_t)1 << 50, hi[66] = UINT64_MAX; /* above every id */
    lo[67] = hi[67] = column[rows / 2];              /* one key */
    if (harmonia_range_count(index, &query, lo, hi, RANGES, counts) != HARMONIA_OK)
        return fail("range count", index);
    /* the reference: the distinct ids, sorted */
    uint64_t *sorted = malloc(rows * sizeof *sorted);
    if (!sorted)
        return 1;
    memcpy(sorted, column, rows * sizeof *sorted);
    qsort(sorted, rows, sizeof *sorted, compare_u64);
    uint64_t distinct = 0;
    for (uint64_t i = 0; i < rows; i++)
        if (distinct == 0 || sorted[i] != sorted[distinct - 1])
            sorted[distinct++] = sorted[i];
    uint64_t total = 0;
    for (int r = 0; r < RANGES; r++) {
        uint64_t expected = 0;
        for (uint64_t i = 0; i < distinct && lo[r] <= hi[r]; i++)
            expected += sorted[i] >= lo[r] && sorted[i] <= hi[r];
        if (counts[r] != expected) {
            fprintf(stderr, "olap_column: range %d [%" PRIu64 ", %" PRIu64 "] counted %" PRIu64 ", the column has %" PRIu64 "\n",
                    r, lo[r], hi[r], counts[r], expected);
            return 1;
        }
        total += r < 64 ? counts[r] : 0;
    }
    printf("range counts: %d ranges, the 64 partitions hold %" PRIu64 " ids (of %" PRIu64 " distinct), every count checked\n",
           RANGES, total, distinct);

    harmonia_free(index);
    free(column);
    free(queries);
    free(row_ids);
    free(found);
    free(sorted);
    printf("OK\n");
    return 0;
}
