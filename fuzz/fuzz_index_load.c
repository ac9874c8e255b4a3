/* fuzz_index_load.c — libFuzzer harness of the index file loader: the input is an index file's
 * bytes (written to a memfd, loaded through /proc/self/fd), loaded with and without verification,
 * as it is and with its checksums recomputed (so that mutations reach the structure checks, the
 * integrity checker and the readers instead of stopping at a checksum).
 * Whatever loads is queried by every CPU reader, checked and updated; a crash, a read outside the
 * arrays (ASan), a hang, a verified load of a tree that fails its own check, or an unverified tree
 * that gets past an update although the verified load refused the file, is a finding. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <xxhash.h>

#include "harmonia.h"
#include "harmonia/index_file.h"

static int memfd = -1;
static char path[64];

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    memfd = memfd_create("harmonia-fuzz-index", 0);
    if (memfd < 0) {
        perror("memfd_create");
        abort();
    }
    snprintf(path, sizeof path, "/proc/self/fd/%d", memfd);
    return 0;
}

/* Every CPU reader on queries taken from the input and the extremes. */
static void exercise(harmonia_tree *tree, const uint8_t *data, size_t size)
{
    harmonia_tree_info info;
    if (harmonia_info(tree, &info) != HARMONIA_OK)
        abort();
    enum { N = 48 };
    uint64_t q[N], hi[N], values[N], keys[N], offsets[N + 1], pair_keys[256], pair_values[256];
    uint8_t found[N];
    for (int i = 0; i < N; i++) {
        uint64_t v = 0;
        size_t at = (size_t)i * 8 % (size > 8 ? size - 8 : 1);
        if (size >= 8)
            memcpy(&v, data + at, 8);
        q[i] = i == 0 ? 0 : i == 1 ? UINT64_MAX : i < 8 ? (uint64_t)i : v;
        hi[i] = i % 3 == 0 ? UINT64_MAX : q[i] + (v & 0xffff);
    }
    if (info.key_bits == 32)
        for (int i = 0; i < N; i++) {
            q[i] &= UINT32_MAX;
            hi[i] &= UINT32_MAX;
        }
    /* 32-bit trees read the first N/2 slots as 32-bit words: the arrays are large enough */
    harmonia_query_config config;
    harmonia_query_config_init(&config);
    config.backend = HARMONIA_BACKEND_CPU;
    const void *queries = q, *upper = hi;
    uint32_t q32[N], hi32[N];
    if (info.key_bits == 32) {
        for (int i = 0; i < N; i++) {
            q32[i] = (uint32_t)q[i];
            hi32[i] = (uint32_t)hi[i];
        }
        queries = q32;
        upper = hi32;
    }
    if (harmonia_lookup(tree, &config, queries, N, values, found) != HARMONIA_OK ||
        harmonia_lower_bound(tree, &config, queries, N, keys, values, found) != HARMONIA_OK ||
        harmonia_range_count(tree, &config, queries, upper, N, offsets) != HARMONIA_OK ||
        harmonia_range_collect(tree, &config, queries, upper, N, offsets, NULL, NULL) != HARMONIA_OK)
        abort();
    for (int i = 0; i < N; i++)
        if (offsets[i + 1] < offsets[i] || offsets[i + 1] - offsets[i] > info.key_count)
            abort();
    if (offsets[N] <= 256 && harmonia_range_collect(tree, &config, queries, upper, N, offsets,
                                                    pair_keys, pair_values) != HARMONIA_OK)
        abort();
    if (info.key_count > 0 && harmonia_sample_keys(tree, N, 1, values) != HARMONIA_OK)
        abort();
}

static uint64_t get_u64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = (v << 8) | p[i];
    return v;
}

static void put_u64(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

/* Recomputes the section checksums (of the sections that lie inside the data) and the header
 * checksum of an image. */
static void refresh_checksums(uint8_t *image, size_t size)
{
    if (size < IX_HEADER_BYTES)
        return;
    for (unsigned s = 0; s < IX_SECTION_COUNT; s++) {
        uint8_t *entry = image + IX_OFF_SECTIONS + IX_SECTION_ENTRY_BYTES * s;
        uint64_t offset = get_u64(entry + IX_SEC_OFF_OFFSET), bytes = get_u64(entry + IX_SEC_OFF_SIZE);
        if (offset <= size && bytes <= size - offset)
            put_u64(entry + IX_SEC_OFF_CHECKSUM, XXH3_64bits(image + offset, (size_t)bytes));
    }
    put_u64(image + IX_OFF_HEADER_CHECKSUM, XXH3_64bits(image, IX_OFF_HEADER_CHECKSUM));
}

static void load_all_ways(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    load_all_ways(data, size);
    uint8_t *fixed = malloc(size > 0 ? size : 1);
    if (fixed == NULL)
        return 0;
    memcpy(fixed, data, size);
    refresh_checksums(fixed, size);
    if (size < IX_HEADER_BYTES || memcmp(fixed, data, size) != 0)
        load_all_ways(fixed, size);
    free(fixed);
    return 0;
}

static void load_all_ways(const uint8_t *data, size_t size)
{
    if (ftruncate(memfd, 0) != 0 || (size > 0 && pwrite(memfd, data, size, 0) != (ssize_t)size))
        abort();
    harmonia_status verified_status = HARMONIA_OK;
    for (int verify = 1; verify >= 0; verify--) {
        harmonia_load_config config;
        harmonia_load_config_init(&config);
        config.verify = verify;
        harmonia_tree *tree = NULL;
        harmonia_status s = harmonia_load(path, &config, &tree);
        if (verify)
            verified_status = s;
        if (s != HARMONIA_OK) {
            if (tree != NULL || harmonia_last_error(NULL)[0] == '\0')
                abort(); /* a failure leaves no tree and says why */
            continue;
        }
        if (verify && verified_status == HARMONIA_OK && harmonia_check(tree) != HARMONIA_OK)
            abort(); /* a false accept: a verified file whose tree fails the checker */
        exercise(tree, data, size);
        /* an update verifies an unverified tree first: it applies only where the verified load
         * accepted the file */
        uint8_t kind = HARMONIA_OP_UPSERT;
        uint64_t key = 5, value = 6;
        harmonia_update_config update;
        harmonia_update_config_init(&update);
        update.skip_upload = true;
        harmonia_status u = harmonia_update(tree, &update, &kind, &key, &value, 1, NULL);
        if (u == HARMONIA_OK && verified_status != HARMONIA_OK)
            abort(); /* damage laundered */
        if (u == HARMONIA_OK) {
            if (harmonia_check(tree) != HARMONIA_OK)
                abort();
            exercise(tree, data, size);
        }
        harmonia_free(tree);
    }
}
