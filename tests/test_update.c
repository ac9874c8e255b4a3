/* test_update.c — the batch updater against a sorted-array model: thousands of random batches
 * (every kind, keys repeated within a batch, 0 and the maximum, batches that split many leaves,
 * that delete every key, empty batches), the integrity checker and lookups of every key after each;
 * strict policies naming the failing operation with the tree unchanged; failure injection (every
 * allocation of a batch made to fail in turn) leaving the tree bit for bit as it was; updates of a
 * tree loaded from a file; the GPU engine after updates when a GPU is present. Issue 15's paths:
 * large batches (parallel units, the MSD sort with skewed buckets, batches already in key order),
 * all-duplicate batches, keys 0 and the maximum at scale, failing batches of every policy and
 * allocation failures on the parallel path, the reuse of the previous layout's arrays, and what a
 * batch reports as changed (dirty leaves in place, runs of unchanged leaves after a re-layout). */
#include <unistd.h>

#include "cpu_update/cpu_update.h"

#include "harmonia/tree_internal.h"
#include "tests/test_util.h"

/* The model: sorted keys with values, applied one operation at a time in batch order. */
typedef struct model {
    uint32_t bits;
    uint64_t n, cap;
    uint64_t *keys, *values;
} model;

static uint64_t model_find(const model *m, uint64_t key, int *present)
{
    uint64_t lo = 0, hi = m->n;
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo) / 2;
        if (m->keys[mid] < key)
            lo = mid + 1;
        else
            hi = mid;
    }
    *present = lo < m->n && m->keys[lo] == key;
    return lo;
}

/* Applies one operation; returns 0, or the status it fails with under the policies. */
static harmonia_status model_apply(model *m, uint8_t kind, uint64_t key, uint64_t value, const harmonia_update_config *c,
                                   harmonia_update_stats *s)
{
    int present;
    uint64_t at = model_find(m, key, &present);
    switch (kind) {
    case HARMONIA_OP_INSERT:
        if (present && c->insert_existing == HARMONIA_INSERT_EXISTING_ERROR)
            return HARMONIA_ERR_KEY_EXISTS;
        break;
    case HARMONIA_OP_UPDATE:
        if (!present) {
            if (c->update_missing == HARMONIA_UPDATE_MISSING_ERROR)
                return HARMONIA_ERR_KEY_MISSING;
            s->missing++;
            return HARMONIA_OK;
        }
        break;
    case HARMONIA_OP_DELETE:
        if (!present) {
            s->missing++;
            return HARMONIA_OK;
        }
        memmove(m->keys + at, m->keys + at + 1, (m->n - at - 1) * 8);
        memmove(m->values + at, m->values + at + 1, (m->n - at - 1) * 8);
        m->n--;
        s->deleted++;
        return HARMONIA_OK;
    default:
        break;
    }
    if (present) {
        m->values[at] = value;
        s->updated++;
        return HARMONIA_OK;
    }
    if (m->n == m->cap) {
        m->cap = m->cap * 2 + 16;
        m->keys = realloc(m->keys, m->cap * 8);
        m->values = realloc(m->values, m->cap * 8);
    }
    memmove(m->keys + at + 1, m->keys + at, (m->n - at) * 8);
    memmove(m->values + at + 1, m->values + at, (m->n - at) * 8);
    m->keys[at] = key;
    m->values[at] = value;
    m->n++;
    s->inserted++;
    return HARMONIA_OK;
}

/* Every key of the model found with its value, and a few neighbours missing; the checker passes. */
static void expect_tree_equals_model(harmonia_tree *t, const model *m, const harmonia_query_config *q)
{
    if (harmonia_check(t) != HARMONIA_OK)
        fail_msg("check after update: %s", harmonia_last_error(t));
    harmonia_tree_info info;
    harmonia_info(t, &info);
    assert_int_equal(info.key_count, m->n);
    uint64_t n = m->n * 2 + 2;
    void *queries = malloc(n * 8), *values = malloc(n * 8);
    uint8_t *found = malloc(n);
    const uint64_t mask = tu_mask(m->bits);
    for (uint64_t i = 0; i < m->n; i++) {
        tu_set(queries, m->bits, 2 * i, m->keys[i]);
        tu_set(queries, m->bits, 2 * i + 1, (m->keys[i] + 1) & mask);
    }
    tu_set(queries, m->bits, n - 2, 0);
    tu_set(queries, m->bits, n - 1, mask);
    if (harmonia_lookup(t, q, queries, n, values, found) != HARMONIA_OK)
        fail_msg("lookup: %s", harmonia_last_error(t));
    for (uint64_t i = 0; i < n; i++) {
        uint64_t key = tu_get(queries, m->bits, i);
        int present;
        uint64_t at = model_find(m, key, &present);
        if (found[i] != present || (present && tu_get(values, m->bits, i) != m->values[at]))
            fail_msg("after update, lookup of %llu: found %d value %llu; model %d %llu", (unsigned long long)key, found[i],
                     (unsigned long long)tu_get(values, m->bits, i), present,
                     (unsigned long long)(present ? m->values[at] : 0));
    }
    free(queries);
    free(values);
    free(found);
}

static harmonia_tree *build_from_model(const model *m, uint32_t fanout, uint32_t leaf_size, double fill)
{
    void *k = malloc(m->n * 8 + 8), *v = malloc(m->n * 8 + 8);
    for (uint64_t i = 0; i < m->n; i++) {
        tu_set(k, m->bits, i, m->keys[i]);
        tu_set(v, m->bits, i, m->values[i]);
    }
    harmonia_build_config c;
    harmonia_build_config_init(&c);
    c.key_bits = m->bits;
    c.fanout = fanout;
    c.leaf_size = leaf_size;
    c.leaf_fill = fill;
    c.input_sorted = true;
    harmonia_tree *t = NULL;
    assert_int_equal(harmonia_build(&c, k, v, m->n, &t), HARMONIA_OK);
    free(k);
    free(v);
    return t;
}

static void make_model(model *m, uint32_t bits, uint64_t n, uint64_t *rng)
{
    tu_model tm;
    tu_model_make(&tm, bits, n, (tu_dist)(tu_next(rng) % TU_DIST_COUNT), rng);
    m->bits = bits;
    m->n = tm.n;
    m->cap = tm.n + 16;
    m->keys = realloc(tm.keys, m->cap * 8);
    m->values = realloc(tm.values, m->cap * 8);
}

/* A random batch: kinds by `mix`, keys drawn from the model (present), near them, repeated, 0 and the
 * maximum. */
static void make_batch(const model *m, uint64_t n, int mix, uint64_t *rng, uint8_t *kinds, void *keys, void *values)
{
    const uint64_t mask = tu_mask(m->bits);
    for (uint64_t i = 0; i < n; i++) {
        uint64_t r = tu_next(rng);
        uint8_t kind;
        switch (mix) {
        case 0: kind = (uint8_t)(r % 4); break;                              /* everything */
        case 1: kind = HARMONIA_OP_UPSERT; break;                             /* growth: many splits */
        case 2: kind = HARMONIA_OP_DELETE; break;                             /* shrinking */
        default: kind = r % 20 == 0 ? HARMONIA_OP_UPSERT : HARMONIA_OP_UPDATE; /* the paper's mix */
        }
        uint64_t key;
        switch ((r >> 8) % 8) {
        case 0: case 1: case 2: key = m->n ? m->keys[tu_next(rng) % m->n] : tu_next(rng) & mask; break;
        case 3: key = i > 0 ? tu_get(keys, m->bits, tu_next(rng) % i) : 0; break; /* repeated in the batch */
        case 4: key = (r >> 16) % 2 ? 0 : mask; break;
        case 5: key = m->n ? (m->keys[tu_next(rng) % m->n] + 1 + tu_next(rng) % 3) & mask : 1; break;
        default: key = tu_next(rng) & mask; break;
        }
        if (mix == 3 && kind == HARMONIA_OP_UPDATE && m->n)
            key = m->keys[tu_next(rng) % m->n];
        kinds[i] = kind;
        tu_set(keys, m->bits, i, key);
        tu_set(values, m->bits, i, tu_next(rng) & mask);
    }
}

static harmonia_query_config query_config(int gpu)
{
    harmonia_query_config q;
    harmonia_query_config_init(&q);
    q.backend = gpu ? HARMONIA_BACKEND_GPU : HARMONIA_BACKEND_CPU;
    return q;
}

/* The random differential test: many trees, many batches each, lenient policies (upsert, skip). */
static void run_random_batches(int with_gpu, unsigned trees, unsigned batches_per_tree, uint64_t seed)
{
    uint64_t rng = seed;
    static const uint32_t sizes[] = {8, 16, 32, 64, 128};
    harmonia_query_config q = query_config(with_gpu);
    for (unsigned ti = 0; ti < trees; ti++) {
        uint32_t bits = tu_next(&rng) % 2 ? 64 : 32;
        uint32_t F = sizes[tu_next(&rng) % 3], L = sizes[tu_next(&rng) % 3];
        model m;
        make_model(&m, bits, tu_next(&rng) % 4 ? tu_next(&rng) % 2000 : 0, &rng);
        harmonia_tree *t = build_from_model(&m, F, L, tu_next(&rng) % 2 ? 1.0 : 0.6);
        for (unsigned b = 0; b < batches_per_tree; b++) {
            uint64_t n = tu_next(&rng) % 5 == 0 ? tu_next(&rng) % 3 : tu_next(&rng) % 700;
            int mix = (int)(tu_next(&rng) % 4);
            if (b == batches_per_tree - 1 && ti % 4 == 0)
                mix = 2, n = m.n * 2 + 5; /* deletes every key (and some missing ones) */
            uint8_t *kinds = malloc(n + 1);
            void *keys = malloc(n * 8 + 8), *values = malloc(n * 8 + 8);
            make_batch(&m, n, mix, &rng, kinds, keys, values);
            if (mix == 2 && b == batches_per_tree - 1 && ti % 4 == 0)
                for (uint64_t i = 0; i < m.n; i++)
                    tu_set(keys, bits, i, m.keys[i]);
            harmonia_update_config c;
            harmonia_update_config_init(&c);
            c.insert_existing = HARMONIA_INSERT_EXISTING_UPSERT;
            c.update_missing = HARMONIA_UPDATE_MISSING_SKIP;
            c.split_fill = tu_next(&rng) % 2 ? 0.75 : 1.0;
            harmonia_update_stats expected, got;
            memset(&expected, 0, sizeof expected);
            for (uint64_t i = 0; i < n; i++)
                assert_int_equal(model_apply(&m, kinds[i], tu_get(keys, bits, i), tu_get(values, bits, i), &c, &expected),
                                 HARMONIA_OK);
            if (harmonia_update(t, &c, kinds, keys, values, n, &got) != HARMONIA_OK)
                fail_msg("update of %llu ops: %s", (unsigned long long)n, harmonia_last_error(t));
            assert_int_equal(got.operations, n);
            assert_int_equal(got.inserted, expected.inserted);
            assert_int_equal(got.updated, expected.updated);
            assert_int_equal(got.deleted, expected.deleted);
            assert_int_equal(got.missing, expected.missing);
            assert_int_equal(got.applied, expected.inserted + expected.updated + expected.deleted);
            expect_tree_equals_model(t, &m, &q);
            free(kinds);
            free(keys);
            free(values);
        }
        harmonia_free(t);
        free(m.keys);
        free(m.values);
    }
}

static void test_random_batches(void **state)
{
    (void)state;
    run_random_batches(0, 120, 25, 1);
}

/* Batches on a tree whose leaves are all full: every insert splits; statistics of the shape. */
static void test_splits_and_removals(void **state)
{
    (void)state;
    uint64_t rng = 2;
    model m;
    make_model(&m, 64, 5000, &rng);
    for (uint64_t i = 0; i < m.n; i++) /* even keys, so that odd ones are new */
        m.keys[i] = i * 2 + 10;
    harmonia_tree *t = build_from_model(&m, 8, 8, 1.0);
    harmonia_tree_info before;
    harmonia_info(t, &before);
    uint64_t n = 3000;
    uint8_t *kinds = malloc(n);
    uint64_t *keys = malloc(n * 8), *values = malloc(n * 8);
    for (uint64_t i = 0; i < n; i++) {
        kinds[i] = HARMONIA_OP_INSERT;
        keys[i] = i * 2 + 11;
        values[i] = i + 7;
    }
    harmonia_update_stats s;
    harmonia_update_config c;
    harmonia_update_config_init(&c);
    assert_int_equal(harmonia_update(t, &c, kinds, keys, values, n, &s), HARMONIA_OK);
    harmonia_query_config q = query_config(0);
    harmonia_update_stats ignored;
    for (uint64_t i = 0; i < n; i++)
        model_apply(&m, kinds[i], keys[i], values[i], &c, &ignored);
    expect_tree_equals_model(t, &m, &q);
    assert_true(s.shape_changed);
    assert_true(s.leaves_split > 300);
    assert_true(s.auxiliary_nodes >= s.leaves_split);
    assert_int_equal(s.inserted, n);
    harmonia_tree_info after;
    harmonia_info(t, &after);
    assert_int_equal(after.version, before.version + 1);
    assert_int_equal(after.leaf_count, before.leaf_count + s.auxiliary_nodes);
    /* delete whole leaves' worth of keys: leaves are removed */
    for (uint64_t i = 0; i < n; i++) {
        kinds[i] = HARMONIA_OP_DELETE;
        keys[i] = m.keys[i];
    }
    assert_int_equal(harmonia_update(t, &c, kinds, keys, NULL, n, &s), HARMONIA_OK);
    for (uint64_t i = 0; i < n; i++)
        model_apply(&m, kinds[i], keys[i], 0, &c, &ignored);
    expect_tree_equals_model(t, &m, &q);
    assert_true(s.leaves_removed > 100);
    /* an update-only batch: the shape stays, the update is in place */
    for (uint64_t i = 0; i < 100; i++) {
        kinds[i] = HARMONIA_OP_UPDATE;
        keys[i] = m.keys[i * 3];
        values[i] = 1000000 + i;
        model_apply(&m, kinds[i], keys[i], values[i], &c, &ignored);
    }
    assert_int_equal(harmonia_update(t, &c, kinds, keys, values, 100, &s), HARMONIA_OK);
    assert_false(s.shape_changed);
    assert_int_equal(s.updated, 100);
    expect_tree_equals_model(t, &m, &q);
    /* the empty batch */
    assert_int_equal(harmonia_update(t, &c, NULL, NULL, NULL, 0, &s), HARMONIA_OK);
    expect_tree_equals_model(t, &m, &q);
    free(kinds);
    free(keys);
    free(values);
    harmonia_free(t);
    free(m.keys);
    free(m.values);
}

/* A snapshot of everything a tree holds, to compare bit for bit. */
typedef struct snapshot {
    kr_tree shape;
    void *keys, *values, *first_child, *leaf_rank;
    size_t key_bytes, value_bytes, fc_bytes, rank_bytes;
    uint64_t version;
} snapshot;

static void take_snapshot(const harmonia_tree *t, snapshot *s)
{
    const kr_tree *k = &t->kr;
    s->shape = *k;
    s->key_bytes = kr_key_slots(k) * kr_key_bytes(k);
    s->value_bytes = k->n_leaves * k->leaf_size * kr_key_bytes(k);
    s->fc_bytes = (k->n_internal + 1) * 4;
    s->rank_bytes = (k->n_leaves + 1) * 8;
    s->keys = malloc(s->key_bytes);
    s->values = malloc(s->value_bytes);
    s->first_child = malloc(s->fc_bytes);
    s->leaf_rank = malloc(s->rank_bytes);
    memcpy(s->keys, k->keys, s->key_bytes);
    memcpy(s->values, k->leaf_values, s->value_bytes);
    memcpy(s->first_child, k->first_child, s->fc_bytes);
    memcpy(s->leaf_rank, k->leaf_rank, s->rank_bytes);
    s->version = t->version;
}

static void expect_unchanged(const harmonia_tree *t, const snapshot *s)
{
    const kr_tree *k = &t->kr;
    assert_int_equal(k->n_keys, s->shape.n_keys);
    assert_int_equal(k->n_leaves, s->shape.n_leaves);
    assert_int_equal(k->n_internal, s->shape.n_internal);
    assert_int_equal(k->height, s->shape.height);
    assert_ptr_equal(k->keys, s->shape.keys);
    assert_int_equal(t->version, s->version);
    assert_memory_equal(k->keys, s->keys, s->key_bytes);
    assert_memory_equal(k->leaf_values, s->values, s->value_bytes);
    assert_memory_equal(k->first_child, s->first_child, s->fc_bytes);
    assert_memory_equal(k->leaf_rank, s->leaf_rank, s->rank_bytes);
}

static void free_snapshot(snapshot *s)
{
    free(s->keys);
    free(s->values);
    free(s->first_child);
    free(s->leaf_rank);
}

/* Strict policies: the failing operation is named, nothing is applied. */
static void test_strict_policies(void **state)
{
    (void)state;
    uint64_t keys0[6] = {10, 20, 30, 40, 50, 60};
    harmonia_build_config bc;
    harmonia_build_config_init(&bc);
    bc.leaf_size = 8;
    bc.fanout = 8;
    harmonia_tree *t = NULL;
    assert_int_equal(harmonia_build(&bc, keys0, NULL, 6, &t), HARMONIA_OK);
    snapshot s;
    take_snapshot(t, &s);
    harmonia_update_config c;
    harmonia_update_config_init(&c);
    uint8_t kinds[5] = {HARMONIA_OP_INSERT, HARMONIA_OP_DELETE, HARMONIA_OP_UPDATE, HARMONIA_OP_INSERT, HARMONIA_OP_INSERT};
    uint64_t keys[5] = {15, 20, 25, 30, 35}, values[5] = {1, 2, 3, 4, 5};
    /* op 2 updates the missing key 25, op 3 inserts the present key 30: the first failure is op 2 */
    harmonia_update_stats failed;
    assert_int_equal(harmonia_update(t, &c, kinds, keys, values, 5, &failed), HARMONIA_ERR_KEY_MISSING);
    assert_non_null(strstr(harmonia_last_error(t), "operation 2"));
    assert_int_equal(failed.failed_operation, 2);
    expect_unchanged(t, &s);
    c.update_missing = HARMONIA_UPDATE_MISSING_SKIP;
    assert_int_equal(harmonia_update(t, &c, kinds, keys, values, 5, &failed), HARMONIA_ERR_KEY_EXISTS);
    assert_non_null(strstr(harmonia_last_error(t), "operation 3"));
    assert_int_equal(failed.failed_operation, 3);
    assert_non_null(strstr(harmonia_last_error(t), "key 30"));
    expect_unchanged(t, &s);
    /* a key inserted, deleted and inserted again in one batch is fine: batch order */
    uint8_t k2[3] = {HARMONIA_OP_DELETE, HARMONIA_OP_INSERT, HARMONIA_OP_UPDATE};
    uint64_t key2[3] = {30, 30, 30}, v2[3] = {0, 77, 78};
    harmonia_update_stats st;
    assert_int_equal(harmonia_update(t, &c, k2, key2, v2, 3, &st), HARMONIA_OK);
    assert_int_equal(st.duplicates, 2);
    uint64_t v;
    uint8_t f;
    assert_int_equal(harmonia_lookup(t, NULL, &key2[0], 1, &v, &f), HARMONIA_OK);
    assert_int_equal(f, 1);
    assert_int_equal(v, 78);
    /* bad kinds and missing values are INVALID and name the operation */
    uint8_t bad[2] = {HARMONIA_OP_DELETE, 9};
    assert_int_equal(harmonia_update(t, &c, bad, keys, values, 2, &failed), HARMONIA_ERR_INVALID);
    assert_non_null(strstr(harmonia_last_error(t), "operation 1"));
    assert_int_equal(failed.failed_operation, 1);
    assert_int_equal(harmonia_update(t, &c, kinds, keys, NULL, 1, NULL), HARMONIA_ERR_INVALID);
    c.split_fill = 2.0;
    assert_int_equal(harmonia_update(t, &c, kinds, keys, values, 1, NULL), HARMONIA_ERR_INVALID);
    free_snapshot(&s);
    harmonia_free(t);
}

/* Every allocation of a batch made to fail in turn: NO_MEMORY and the tree bit for bit as before;
 * then the same batch succeeds. Both the in-place and the re-layout paths. */
static void test_allocation_failures(void **state)
{
    (void)state;
    uint64_t rng = 3;
    for (int path = 0; path < 2; path++) {
        model m;
        make_model(&m, 64, 3000, &rng);
        harmonia_tree *t = build_from_model(&m, 8, 16, 0.5);
        uint64_t n = 400;
        uint8_t *kinds = malloc(n);
        uint64_t *keys = malloc(n * 8), *values = malloc(n * 8);
        make_batch(&m, n, path == 0 ? 3 : 1, &rng, kinds, keys, values);
        if (path == 0) /* updates of present keys only: in place */
            for (uint64_t i = 0; i < n; i++)
                kinds[i] = HARMONIA_OP_UPDATE, keys[i] = m.keys[tu_next(&rng) % m.n];
        harmonia_update_config c;
        harmonia_update_config_init(&c);
        c.insert_existing = HARMONIA_INSERT_EXISTING_UPSERT;
        snapshot s;
        take_snapshot(t, &s);
        int failures = 0;
        for (long k = 0; k < 64; k++) {
            kr_test_fail_allocation_after(k);
            harmonia_status st = harmonia_update(t, &c, kinds, keys, values, n, NULL);
            kr_test_fail_allocation_after(-1);
            if (st == HARMONIA_OK)
                break; /* k is past the batch's last allocation */
            assert_int_equal(st, HARMONIA_ERR_NO_MEMORY);
            assert_non_null(strstr(harmonia_last_error(t), "out of memory"));
            expect_unchanged(t, &s);
            failures++;
        }
        assert_true(failures >= 5);
        harmonia_update_stats ignored;
        for (uint64_t i = 0; i < n; i++)
            model_apply(&m, kinds[i], keys[i], values[i], &c, &ignored);
        harmonia_query_config q = query_config(0);
        expect_tree_equals_model(t, &m, &q);
        free_snapshot(&s);
        free(kinds);
        free(keys);
        free(values);
        harmonia_free(t);
        free(m.keys);
        free(m.values);
    }
}

/* A tree loaded from a file (read-only mapping) is copied by its first update; the file is not
 * touched. */
static void test_update_of_loaded_tree(void **state)
{
    (void)state;
    uint64_t rng = 4;
    model m;
    make_model(&m, 32, 4000, &rng);
    harmonia_tree *t = build_from_model(&m, 16, 16, 1.0);
    char dir[] = "/tmp/harmonia-update-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char path[256];
    snprintf(path, sizeof path, "%s/t.idx", dir);
    assert_int_equal(harmonia_save(t, path), HARMONIA_OK);
    harmonia_free(t);
    assert_int_equal(harmonia_load(path, NULL, &t), HARMONIA_OK);
    for (int mix = 3; mix >= 0; mix--) { /* the first batch keeps the shape: copied anyway */
        uint64_t n = 500;
        uint8_t *kinds = malloc(n);
        void *keys = malloc(n * 8), *values = malloc(n * 8);
        make_batch(&m, n, mix, &rng, kinds, keys, values);
        if (mix == 3)
            for (uint64_t i = 0; i < n; i++)
                kinds[i] = HARMONIA_OP_UPDATE, tu_set(keys, 32, i, m.keys[tu_next(&rng) % m.n]);
        harmonia_update_config c;
        harmonia_update_config_init(&c);
        c.insert_existing = HARMONIA_INSERT_EXISTING_UPSERT;
        c.update_missing = HARMONIA_UPDATE_MISSING_SKIP;
        harmonia_update_stats ignored;
        for (uint64_t i = 0; i < n; i++)
            model_apply(&m, kinds[i], tu_get(keys, 32, i), tu_get(values, 32, i), &c, &ignored);
        assert_int_equal(harmonia_update(t, &c, kinds, keys, values, n, NULL), HARMONIA_OK);
        harmonia_tree_info info;
        harmonia_info(t, &info);
        assert_false(info.mapped);
        harmonia_query_config q = query_config(0);
        expect_tree_equals_model(t, &m, &q);
        free(kinds);
        free(keys);
        free(values);
    }
    /* the saved file still holds the old tree */
    harmonia_tree *old = NULL;
    assert_int_equal(harmonia_load(path, NULL, &old), HARMONIA_OK);
    assert_int_equal(harmonia_check(old), HARMONIA_OK);
    harmonia_free(old);
    harmonia_free(t);
    unlink(path);
    rmdir(dir);
    free(m.keys);
    free(m.values);
}

/* With a GPU: the same random batches, checked through the GPU engine (device copy synchronised
 * incrementally or fully after each batch). */
static void test_gpu_after_updates(void **state)
{
    (void)state;
    harmonia_device_info info;
    if (harmonia_device_probe(&info) != HARMONIA_OK) {
        skip();
        return;
    }
    run_random_batches(1, 12, 12, 5);
    /* a batch applied with skip_upload, then one synchronised in place: the device copy must not
     * take the incremental path from two versions behind (nor onto another shape) */
    uint64_t rng = 6;
    model m;
    make_model(&m, 64, 20000, &rng);
    harmonia_tree *t = build_from_model(&m, 16, 16, 0.75);
    harmonia_query_config q = query_config(1);
    expect_tree_equals_model(t, &m, &q); /* uploads */
    harmonia_update_config c;
    harmonia_update_config_init(&c);
    c.insert_existing = HARMONIA_INSERT_EXISTING_UPSERT;
    c.update_missing = HARMONIA_UPDATE_MISSING_SKIP;
    harmonia_update_stats ignored, s;
    for (int round = 0; round < 2; round++) {
        uint64_t n = 3000;
        uint8_t *kinds = malloc(n);
        void *keys = malloc(n * 8), *values = malloc(n * 8);
        make_batch(&m, n, round == 0 ? 1 : 3, &rng, kinds, keys, values); /* growth, then updates */
        for (uint64_t i = 0; i < n; i++)
            model_apply(&m, kinds[i], tu_get(keys, 64, i), tu_get(values, 64, i), &c, &ignored);
        c.skip_upload = round == 0;
        assert_int_equal(harmonia_update(t, &c, kinds, keys, values, n, &s), HARMONIA_OK);
        if (round == 1)
            assert_false(s.incremental_upload);
        free(kinds);
        free(keys);
        free(values);
    }
    expect_tree_equals_model(t, &m, &q);
    harmonia_free(t);
    free(m.keys);
    free(m.values);
}

/* The empty tree keeps its one empty leaf: deletes and insert-then-delete do not change its shape;
 * a long run of appends to the last leaf splits it into many auxiliary nodes. */
static void test_empty_tree_and_appends(void **state)
{
    (void)state;
    harmonia_tree *t = NULL;
    harmonia_build_config bc;
    harmonia_build_config_init(&bc);
    bc.fanout = 8;
    bc.leaf_size = 8;
    assert_int_equal(harmonia_build(&bc, NULL, NULL, 0, &t), HARMONIA_OK);
    uint8_t kinds[2] = {HARMONIA_OP_INSERT, HARMONIA_OP_DELETE};
    uint64_t keys[2] = {5, 5}, values[2] = {1, 0};
    harmonia_update_stats s;
    assert_int_equal(harmonia_update(t, NULL, kinds + 1, keys, NULL, 1, &s), HARMONIA_OK);
    assert_false(s.shape_changed);
    assert_int_equal(s.leaves_removed, 0);
    assert_int_equal(s.missing, 1);
    assert_int_equal(harmonia_update(t, NULL, kinds, keys, values, 2, &s), HARMONIA_OK);
    assert_false(s.shape_changed);
    assert_int_equal(harmonia_check(t), HARMONIA_OK);
    /* appends: every key above the last, all into the last leaf */
    const uint64_t n = 100000;
    uint8_t *k = malloc(n);
    uint64_t *key = malloc(n * 8), *value = malloc(n * 8);
    for (uint64_t i = 0; i < n; i++) {
        k[i] = HARMONIA_OP_INSERT;
        key[i] = UINT64_MAX - n + i; /* up to the maximum key - 1 */
        value[i] = i;
    }
    assert_int_equal(harmonia_update(t, NULL, k, key, value, n, &s), HARMONIA_OK);
    assert_int_equal(s.leaves_touched, 1);
    assert_true(s.auxiliary_nodes >= n / 8);
    assert_int_equal(harmonia_check(t), HARMONIA_OK);
    harmonia_query_config q = query_config(0);
    uint64_t *got = malloc(n * 8);
    uint8_t *found = malloc(n);
    assert_int_equal(harmonia_lookup(t, &q, key, n, got, found), HARMONIA_OK);
    for (uint64_t i = 0; i < n; i++) {
        assert_int_equal(found[i], 1);
        assert_int_equal(got[i], i);
    }
    free(k);
    free(key);
    free(value);
    free(got);
    free(found);
    harmonia_free(t);
}

/* --- issue 15: the parallel paths ------------------------------------------------------------ */

typedef struct batch_op {
    uint64_t key, index;
} batch_op;

static int batch_op_order(const void *a, const void *b)
{
    const batch_op *x = a, *y = b;
    if (x->key != y->key)
        return x->key < y->key ? -1 : 1;
    return x->index < y->index ? -1 : x->index > y->index;
}

/* The model for large batches: operations grouped by key (in batch order within a key) and merged
 * with the sorted model at once. Returns OK, or the status of the smallest failing operation
 * (*failed = its index; the model then unchanged). */
static harmonia_status model_apply_batch(model *m, const uint8_t *kinds, const void *keys, const void *values,
                                         uint64_t n, const harmonia_update_config *c, harmonia_update_stats *s,
                                         uint64_t *failed)
{
    batch_op *ops = malloc((n + 1) * sizeof *ops);
    for (uint64_t i = 0; i < n; i++)
        ops[i] = (batch_op){tu_get(keys, m->bits, i), i};
    qsort(ops, n, sizeof *ops, batch_op_order);
    uint64_t cap = m->n + n + 1, out = 0, j = 0, first_fail = UINT64_MAX;
    harmonia_status fail_status = HARMONIA_OK;
    uint64_t *nk = malloc(cap * 8), *nv = malloc(cap * 8);
    harmonia_update_stats local;
    memset(&local, 0, sizeof local);
    for (uint64_t i = 0; i < n;) {
        const uint64_t key = ops[i].key;
        while (j < m->n && m->keys[j] < key) {
            nk[out] = m->keys[j];
            nv[out++] = m->values[j++];
        }
        bool present = j < m->n && m->keys[j] == key;
        uint64_t value = present ? m->values[j] : 0;
        if (present)
            j++;
        for (; i < n && ops[i].key == key; i++) {
            const uint64_t op = ops[i].index;
            const uint64_t v = values ? tu_get(values, m->bits, op) : 0;
            switch (kinds[op]) {
            case HARMONIA_OP_INSERT:
                if (present && c->insert_existing == HARMONIA_INSERT_EXISTING_ERROR) {
                    if (op < first_fail)
                        first_fail = op, fail_status = HARMONIA_ERR_KEY_EXISTS;
                    while (i + 1 < n && ops[i + 1].key == key)
                        i++;
                    continue;
                }
                local.updated += present, local.inserted += !present;
                present = true, value = v;
                break;
            case HARMONIA_OP_UPDATE:
                if (!present) {
                    if (c->update_missing == HARMONIA_UPDATE_MISSING_ERROR) {
                        if (op < first_fail)
                            first_fail = op, fail_status = HARMONIA_ERR_KEY_MISSING;
                        while (i + 1 < n && ops[i + 1].key == key)
                            i++;
                        continue;
                    }
                    local.missing++;
                    break;
                }
                local.updated++;
                value = v;
                break;
            case HARMONIA_OP_UPSERT:
                local.updated += present, local.inserted += !present;
                present = true, value = v;
                break;
            default:
                local.deleted += present, local.missing += !present;
                present = false;
                break;
            }
        }
        if (present) {
            nk[out] = key;
            nv[out++] = value;
        }
    }
    while (j < m->n) {
        nk[out] = m->keys[j];
        nv[out++] = m->values[j++];
    }
    free(ops);
    if (first_fail != UINT64_MAX) {
        free(nk);
        free(nv);
        *failed = first_fail;
        return fail_status;
    }
    free(m->keys);
    free(m->values);
    m->keys = nk, m->values = nv, m->n = out, m->cap = cap;
    s->inserted += local.inserted, s->updated += local.updated, s->deleted += local.deleted;
    s->missing += local.missing;
    return HARMONIA_OK;
}

/* Every key of the model found, a sample of others missing, counts equal; faster than
 * expect_tree_equals_model for large trees (one lookup call, no per-key model search). */
static void expect_tree_holds_model(harmonia_tree *t, const model *m)
{
    if (harmonia_check(t) != HARMONIA_OK)
        fail_msg("check after update: %s", harmonia_last_error(t));
    harmonia_tree_info info;
    harmonia_info(t, &info);
    assert_int_equal(info.key_count, m->n);
    void *q = malloc(m->n * 8 + 8), *v = malloc(m->n * 8 + 8);
    uint8_t *f = malloc(m->n + 1);
    for (uint64_t i = 0; i < m->n; i++)
        tu_set(q, m->bits, i, m->keys[i]);
    harmonia_query_config qc = query_config(0);
    assert_int_equal(harmonia_lookup(t, &qc, q, m->n, v, f), HARMONIA_OK);
    for (uint64_t i = 0; i < m->n; i++)
        if (!f[i] || tu_get(v, m->bits, i) != m->values[i])
            fail_msg("key %llu: found %d value %llu, model %llu", (unsigned long long)m->keys[i], f[i],
                     (unsigned long long)tu_get(v, m->bits, i), (unsigned long long)m->values[i]);
    /* neighbours that are not keys */
    uint64_t absent = 0;
    for (uint64_t i = 0; i + 1 < m->n && absent < m->n; i++)
        if (m->keys[i] + 1 != m->keys[i + 1])
            tu_set(q, m->bits, absent++, m->keys[i] + 1);
    assert_int_equal(harmonia_lookup(t, &qc, q, absent, v, f), HARMONIA_OK);
    for (uint64_t i = 0; i < absent; i++)
        assert_int_equal(f[i], 0);
    free(q);
    free(v);
    free(f);
}

/* A large batch: kinds by mix, keys present (half), new, 0 / maximum, or clustered in a narrow
 * range (skewed buckets for the sort). */
static void make_large_batch(const model *m, uint64_t n, int mix, uint64_t *rng, uint8_t *kinds, void *keys,
                             void *values)
{
    const uint64_t mask = tu_mask(m->bits);
    const uint64_t cluster = tu_next(rng) & mask;
    for (uint64_t i = 0; i < n; i++) {
        uint64_t r = tu_next(rng), key;
        uint8_t kind = mix == 0 ? (uint8_t)(r % 4) : mix == 1 ? HARMONIA_OP_UPSERT : mix == 2 ? HARMONIA_OP_DELETE
                                                                  : (r % 20 == 0 ? HARMONIA_OP_UPSERT : HARMONIA_OP_UPDATE);
        switch ((r >> 8) % 8) {
        case 0: case 1: case 2: case 3: key = m->n ? m->keys[tu_next(rng) % m->n] : tu_next(rng) & mask; break;
        case 4: key = (r >> 20) % 2 ? 0 : mask; break;
        case 5: key = (cluster + tu_next(rng) % 4096) & mask; break;
        default: key = tu_next(rng) & mask; break;
        }
        kinds[i] = kind;
        tu_set(keys, m->bits, i, key);
        tu_set(values, m->bits, i, tu_next(rng) & mask);
    }
}

/* Batches far past the parallel thresholds, both widths, every mix, lenient policies; some batches
 * in key order (the sort skipped); the spare arrays kept or freed. */
static void test_large_batches(void **state)
{
    (void)state;
    uint64_t rng = 15;
    for (int round = 0; round < 8; round++) {
        model m;
        make_model(&m, round % 2 ? 32 : 64, 60000 + tu_next(&rng) % 100000, &rng);
        harmonia_tree *t = build_from_model(&m, 16, 16, round % 3 ? 1.0 : 0.8);
        for (int b = 0; b < 5; b++) {
            uint64_t n = 40000 + tu_next(&rng) % 200000;
            int mix = (round + b) % 4;
            uint8_t *kinds = malloc(n);
            void *keys = malloc(n * 8), *values = malloc(n * 8);
            make_large_batch(&m, n, mix, &rng, kinds, keys, values);
            if (b == 3) { /* in key order: every key's operations stay in batch order */
                batch_op *o = malloc(n * sizeof *o);
                for (uint64_t i = 0; i < n; i++)
                    o[i] = (batch_op){tu_get(keys, m.bits, i), i};
                qsort(o, n, sizeof *o, batch_op_order);
                uint8_t *k2 = malloc(n);
                void *v2 = malloc(n * 8);
                for (uint64_t i = 0; i < n; i++) {
                    tu_set(keys, m.bits, i, o[i].key);
                    k2[i] = kinds[o[i].index];
                    tu_set(v2, m.bits, i, tu_get(values, m.bits, o[i].index));
                }
                memcpy(kinds, k2, n);
                memcpy(values, v2, n * 8);
                free(o);
                free(k2);
                free(v2);
            }
            harmonia_update_config c;
            harmonia_update_config_init(&c);
            c.insert_existing = HARMONIA_INSERT_EXISTING_UPSERT;
            c.update_missing = HARMONIA_UPDATE_MISSING_SKIP;
            c.free_previous_layout = b == 2;
            harmonia_update_stats expected, got;
            memset(&expected, 0, sizeof expected);
            uint64_t failed;
            assert_int_equal(model_apply_batch(&m, kinds, keys, values, n, &c, &expected, &failed), HARMONIA_OK);
            if (harmonia_update(t, &c, kinds, keys, values, n, &got) != HARMONIA_OK)
                fail_msg("update of %llu ops: %s", (unsigned long long)n, harmonia_last_error(t));
            assert_int_equal(got.inserted, expected.inserted);
            assert_int_equal(got.updated, expected.updated);
            assert_int_equal(got.deleted, expected.deleted);
            assert_int_equal(got.missing, expected.missing);
            if (c.free_previous_layout && got.shape_changed) /* no arrays kept */
                assert_null(t->spare.keys);
            else if (got.shape_changed)
                assert_non_null(t->spare.keys);
            expect_tree_holds_model(t, &m);
            free(kinds);
            free(keys);
            free(values);
        }
        /* the empty batch on a tree past the parallel thresholds: nothing changes */
        snapshot before;
        take_snapshot(t, &before);
        harmonia_update_stats st;
        assert_int_equal(harmonia_update(t, NULL, NULL, NULL, NULL, 0, &st), HARMONIA_OK);
        assert_int_equal(st.leaves_touched, 0);
        assert_false(st.shape_changed);
        before.version++; /* an applied batch, if an empty one */
        expect_unchanged(t, &before);
        free_snapshot(&before);
        harmonia_free(t);
        free(m.keys);
        free(m.values);
    }
}

/* All operations on one key (the sort's all-equal case, one run, one leaf), and on three keys. */
static void test_all_duplicates(void **state)
{
    (void)state;
    uint64_t rng = 16;
    for (int bits = 32; bits <= 64; bits += 32) {
        model m;
        make_model(&m, (uint32_t)bits, 50000, &rng);
        harmonia_tree *t = build_from_model(&m, 8, 16, 1.0);
        for (int distinct = 1; distinct <= 3; distinct += 2) {
            const uint64_t n = 120000, mask = tu_mask((uint32_t)bits);
            uint64_t k[3] = {m.keys[m.n / 2], tu_next(&rng) & mask, mask};
            uint8_t *kinds = malloc(n);
            void *keys = malloc(n * 8), *values = malloc(n * 8);
            for (uint64_t i = 0; i < n; i++) {
                kinds[i] = (uint8_t)(tu_next(&rng) % 4);
                tu_set(keys, (uint32_t)bits, i, k[tu_next(&rng) % (uint64_t)distinct]);
                tu_set(values, (uint32_t)bits, i, i);
            }
            harmonia_update_config c;
            harmonia_update_config_init(&c);
            c.insert_existing = HARMONIA_INSERT_EXISTING_UPSERT;
            c.update_missing = HARMONIA_UPDATE_MISSING_SKIP;
            harmonia_update_stats expected, got;
            memset(&expected, 0, sizeof expected);
            uint64_t failed;
            assert_int_equal(model_apply_batch(&m, kinds, keys, values, n, &c, &expected, &failed), HARMONIA_OK);
            assert_int_equal(harmonia_update(t, &c, kinds, keys, values, n, &got), HARMONIA_OK);
            assert_int_equal(got.duplicates, n - (uint64_t)distinct);
            assert_int_equal(got.inserted, expected.inserted);
            assert_int_equal(got.deleted, expected.deleted);
            expect_tree_holds_model(t, &m);
            free(kinds);
            free(keys);
            free(values);
        }
        harmonia_free(t);
        free(m.keys);
        free(m.values);
    }
}

/* Keys 0 and the maximum inserted, updated and deleted in large batches, at both ends of the tree. */
static void test_extreme_keys_large(void **state)
{
    (void)state;
    uint64_t rng = 17;
    for (int bits = 32; bits <= 64; bits += 32) {
        const uint64_t mask = tu_mask((uint32_t)bits);
        model m;
        make_model(&m, (uint32_t)bits, 80000, &rng);
        harmonia_tree *t = build_from_model(&m, 16, 8, 1.0);
        for (int round = 0; round < 4; round++) {
            const uint64_t n = 70000;
            uint8_t *kinds = malloc(n);
            void *keys = malloc(n * 8), *values = malloc(n * 8);
            for (uint64_t i = 0; i < n; i++) {
                uint64_t r = tu_next(&rng);
                uint64_t key = r % 4 == 0 ? 0 : r % 4 == 1 ? mask : r % 4 == 2 ? r % 1000 : mask - r % 1000;
                kinds[i] = round == 3 ? HARMONIA_OP_DELETE : (uint8_t)((r >> 10) % 4);
                tu_set(keys, (uint32_t)bits, i, key & mask);
                tu_set(values, (uint32_t)bits, i, tu_next(&rng));
            }
            harmonia_update_config c;
            harmonia_update_config_init(&c);
            c.insert_existing = HARMONIA_INSERT_EXISTING_UPSERT;
            c.update_missing = HARMONIA_UPDATE_MISSING_SKIP;
            harmonia_update_stats expected, got;
            memset(&expected, 0, sizeof expected);
            uint64_t failed;
            assert_int_equal(model_apply_batch(&m, kinds, keys, values, n, &c, &expected, &failed), HARMONIA_OK);
            assert_int_equal(harmonia_update(t, &c, kinds, keys, values, n, &got), HARMONIA_OK);
            assert_int_equal(got.deleted, expected.deleted);
            expect_tree_holds_model(t, &m);
            free(kinds);
            free(keys);
            free(values);
        }
        harmonia_free(t);
        free(m.keys);
        free(m.values);
    }
}

/* Strict policies on the parallel path: a batch with one failing operation somewhere (an insert of
 * a present key, an update of a missing one) fails naming it, and the tree is bit for bit as
 * before, spare arrays or not; then the batch without it applies. Both in-place and re-layout
 * batches. */
static void test_failing_batches_large(void **state)
{
    (void)state;
    uint64_t rng = 18;
    for (int round = 0; round < 8; round++) {
        model m;
        make_model(&m, round % 2 ? 64 : 32, 100000, &rng);
        harmonia_tree *t = build_from_model(&m, 16, 16, round < 4 ? 0.75 : 1.0);
        if (round % 3 == 0) { /* give the tree spare arrays first: a re-layout batch */
            const uint8_t kind = HARMONIA_OP_UPSERT;
            harmonia_update_config c;
            harmonia_update_config_init(&c);
            harmonia_update_stats ignored;
            uint64_t failed;
            /* many inserts: some leaf splits */
            uint64_t n0 = 30000;
            uint8_t *kk = malloc(n0);
            void *kv = malloc(n0 * 8), *vv = malloc(n0 * 8);
            for (uint64_t i = 0; i < n0; i++) {
                kk[i] = kind;
                tu_set(kv, m.bits, i, tu_next(&rng) & tu_mask(m.bits));
                tu_set(vv, m.bits, i, i);
            }
            assert_int_equal(model_apply_batch(&m, kk, kv, vv, n0, &c, &ignored, &failed), HARMONIA_OK);
            assert_int_equal(harmonia_update(t, &c, kk, kv, vv, n0, NULL), HARMONIA_OK);
            assert_non_null(t->spare.keys);
            free(kk);
            free(kv);
            free(vv);
        }
        const uint64_t n = 150000;
        uint8_t *kinds = malloc(n);
        void *keys = malloc(n * 8), *values = malloc(n * 8);
        for (uint64_t i = 0; i < n; i++) { /* updates of present keys, upserts of new ones */
            bool insert = tu_next(&rng) % (round < 4 ? 50 : 5) == 0;
            uint64_t key = insert ? (m.keys[tu_next(&rng) % m.n] + 1) & tu_mask(m.bits) : m.keys[tu_next(&rng) % m.n];
            int present;
            model_find(&m, key, &present);
            kinds[i] = insert && !present ? HARMONIA_OP_UPSERT : HARMONIA_OP_UPDATE;
            tu_set(keys, m.bits, i, insert && !present ? key : m.keys[tu_next(&rng) % m.n]);
            tu_set(values, m.bits, i, tu_next(&rng));
        }
        const uint64_t bad = tu_next(&rng) % n;
        const bool missing = round % 2;
        uint64_t saved_key = tu_get(keys, m.bits, bad);
        uint8_t saved_kind = kinds[bad];
        if (missing) { /* an update of a key not in the tree */
            uint64_t key;
            int present = 1;
            do {
                key = tu_next(&rng) & tu_mask(m.bits);
                model_find(&m, key, &present);
            } while (present);
            kinds[bad] = HARMONIA_OP_UPDATE;
            tu_set(keys, m.bits, bad, key);
        } else { /* an insert of a key in the tree */
            kinds[bad] = HARMONIA_OP_INSERT;
            tu_set(keys, m.bits, bad, m.keys[tu_next(&rng) % m.n]);
        }
        harmonia_update_config c;
        harmonia_update_config_init(&c);
        snapshot s;
        take_snapshot(t, &s);
        void *spare_before = t->spare.keys;
        harmonia_update_stats st;
        harmonia_status status = harmonia_update(t, &c, kinds, keys, values, n, &st);
        /* only operation `bad` can fail: the others update present keys or upsert */
        assert_int_equal(status, missing ? HARMONIA_ERR_KEY_MISSING : HARMONIA_ERR_KEY_EXISTS);
        assert_int_equal(st.failed_operation, bad);
        char expected_op[64];
        snprintf(expected_op, sizeof expected_op, "operation %llu ", (unsigned long long)bad);
        assert_non_null(strstr(harmonia_last_error(t), expected_op));
        expect_unchanged(t, &s);
        assert_ptr_equal(t->spare.keys, spare_before);
        free_snapshot(&s);
        /* without the failing operation the batch applies */
        kinds[bad] = saved_kind;
        tu_set(keys, m.bits, bad, saved_key);
        harmonia_update_stats expected;
        memset(&expected, 0, sizeof expected);
        uint64_t failed;
        assert_int_equal(model_apply_batch(&m, kinds, keys, values, n, &c, &expected, &failed), HARMONIA_OK);
        assert_int_equal(harmonia_update(t, &c, kinds, keys, values, n, &st), HARMONIA_OK);
        expect_tree_holds_model(t, &m);
        free(kinds);
        free(keys);
        free(values);
        harmonia_free(t);
        free(m.keys);
        free(m.values);
    }
}

/* Every allocation of a large batch (parallel units, the partition's histograms, the new layout,
 * the spare taken or not) made to fail in turn: NO_MEMORY, the tree bit for bit as before. */
static void test_allocation_failures_large(void **state)
{
    (void)state;
    uint64_t rng = 19;
    for (int path = 0; path < 3; path++) {
        model m;
        make_model(&m, 64, 80000, &rng);
        harmonia_tree *t = build_from_model(&m, 16, 16, path == 0 ? 0.5 : 1.0);
        const uint64_t n = 100000;
        uint8_t *kinds = malloc(n);
        uint64_t *keys = malloc(n * 8), *values = malloc(n * 8);
        make_large_batch(&m, n, path == 0 ? 3 : 1, &rng, kinds, keys, values);
        if (path == 0) /* updates of present keys: in place */
            for (uint64_t i = 0; i < n; i++)
                kinds[i] = HARMONIA_OP_UPDATE, keys[i] = m.keys[tu_next(&rng) % m.n];
        harmonia_update_config c;
        harmonia_update_config_init(&c);
        c.insert_existing = HARMONIA_INSERT_EXISTING_UPSERT;
        c.update_missing = HARMONIA_UPDATE_MISSING_SKIP;
        if (path == 2) { /* a first re-layout batch leaves spare arrays */
            harmonia_update_stats ignored;
            uint64_t failed;
            assert_int_equal(model_apply_batch(&m, kinds, keys, values, n / 10, &c, &ignored, &failed), HARMONIA_OK);
            assert_int_equal(harmonia_update(t, &c, kinds, keys, values, n / 10, NULL), HARMONIA_OK);
            make_large_batch(&m, n, 1, &rng, kinds, keys, values);
        }
        snapshot s;
        take_snapshot(t, &s);
        int failures = 0;
        for (long k = 0; k < 64; k++) {
            kr_test_fail_allocation_after(k);
            harmonia_status st = harmonia_update(t, &c, kinds, keys, values, n, NULL);
            kr_test_fail_allocation_after(-1);
            if (st == HARMONIA_OK)
                break;
            assert_int_equal(st, HARMONIA_ERR_NO_MEMORY);
            expect_unchanged(t, &s);
            failures++;
        }
        assert_true(failures >= 6);
        harmonia_update_stats ignored;
        uint64_t failed;
        assert_int_equal(model_apply_batch(&m, kinds, keys, values, n, &c, &ignored, &failed), HARMONIA_OK);
        expect_tree_holds_model(t, &m);
        free_snapshot(&s);
        free(kinds);
        free(keys);
        free(values);
        harmonia_free(t);
        free(m.keys);
        free(m.values);
    }
}

/* What a batch reports as changed, through the updater itself: in place, exactly the touched leaves
 * are dirty and every other leaf keeps its bytes; after a re-layout, each reported run of leaves
 * equals the old leaves byte for byte, the runs are disjoint and ascending, and the leaves outside
 * them are exactly the new leaves the touched ones became. The spare is taken when large enough. */
static void test_reported_changes(void **state)
{
    (void)state;
    uint64_t rng = 20;
    for (int round = 0; round < 12; round++) {
        model m;
        make_model(&m, round % 2 ? 32 : 64, 20000 + tu_next(&rng) % 80000, &rng);
        harmonia_tree *t = build_from_model(&m, 16, 16, round % 3 == 0 ? 0.5 : 1.0);
        kr_tree *k = &t->kr;
        const size_t kb = kr_key_bytes(k), L = k->leaf_size;
        const uint64_t n = round < 6 ? 500 + tu_next(&rng) % 3000 : 50000;
        uint8_t *kinds = malloc(n);
        void *keys = malloc(n * 8), *values = malloc(n * 8);
        make_batch(&m, n, round % 3 == 0 ? 3 : (int)(tu_next(&rng) % 4), &rng, kinds, keys, values);
        if (round % 3 == 0) /* updates only: in place */
            for (uint64_t i = 0; i < n; i++)
                kinds[i] = HARMONIA_OP_UPDATE, tu_set(keys, m.bits, i, m.keys[tu_next(&rng) % m.n]);
        snapshot before;
        take_snapshot(t, &before);
        kr_tree spare;
        memset(&spare, 0, sizeof spare);
        if (round % 2) { /* a spare large enough for anything this batch makes */
            spare.keys = malloc(before.key_bytes * 2 + 4096);
            spare.leaf_values = malloc(before.value_bytes * 2 + 4096);
            spare.first_child = malloc(before.fc_bytes * 2 + 4096);
            spare.leaf_rank = malloc(before.rank_bytes * 2 + 4096);
        }
        void *spare_keys = spare.keys;
        upd_params p = {.insert_existing = HARMONIA_INSERT_EXISTING_UPSERT,
                        .update_missing = HARMONIA_UPDATE_MISSING_SKIP,
                        .split_fill = 0.75,
                        .in_place_allowed = true,
                        .report_moves = true,
                        .spare = &spare,
                        .threads = 0};
        harmonia_update_stats st;
        memset(&st, 0, sizeof st);
        upd_result r;
        kr_error err;
        assert_int_equal(upd_apply_batch(k, &p, kinds, keys, values, n, &st, &r, &err), HARMONIA_OK);
        if (r.in_place) {
            assert_int_equal(r.n_dirty, st.leaves_touched);
            uint64_t d = 0;
            for (uint64_t li = 0; li < k->n_leaves; li++) {
                bool dirty = d < r.n_dirty && r.dirty_leaves[d] == li;
                if (d > 0 && d < r.n_dirty)
                    assert_true(r.dirty_leaves[d] > r.dirty_leaves[d - 1]);
                d += dirty;
                if (!dirty) {
                    assert_memory_equal((char *)k->keys + kr_leaf_key_offset(k, li) * kb,
                                        (char *)before.keys + kr_leaf_key_offset(&before.shape, li) * kb, L * kb);
                    assert_memory_equal((char *)k->leaf_values + li * L * kb, (char *)before.values + li * L * kb,
                                        L * kb);
                }
            }
            assert_int_equal(d, r.n_dirty);
            assert_non_null(spare.keys == spare_keys ? (void *)1 : NULL); /* untouched in place */
        } else {
            kr_tree *nt = &r.new_tree;
            if (spare_keys)
                assert_ptr_equal(nt->keys, spare_keys);
            assert_null(spare.keys);
            uint64_t covered = 0, prev_old = 0, prev_new = 0;
            for (uint64_t x = 0; x < r.n_moves; x++) {
                upd_leaf_move mv = r.moves[x];
                assert_true(mv.count > 0);
                assert_true(mv.old_first >= prev_old && mv.new_first >= prev_new);
                prev_old = mv.old_first + mv.count, prev_new = mv.new_first + mv.count;
                assert_memory_equal((char *)nt->keys + kr_leaf_key_offset(nt, mv.new_first) * kb,
                                    (char *)before.keys + kr_leaf_key_offset(&before.shape, mv.old_first) * kb,
                                    mv.count * L * kb);
                assert_memory_equal((char *)nt->leaf_values + mv.new_first * L * kb,
                                    (char *)before.values + mv.old_first * L * kb, mv.count * L * kb);
                covered += mv.count;
            }
            /* untouched old leaves = moved ones; the rest of the new level came from touched leaves */
            assert_int_equal(covered, before.shape.n_leaves - st.leaves_touched);
            assert_int_equal(nt->n_leaves - covered,
                             st.leaves_touched - st.leaves_removed + st.auxiliary_nodes);
            kr_error e2;
            assert_int_equal(kr_check_tree(nt, &e2), HARMONIA_OK);
            expect_unchanged(t, &before); /* the old layout is untouched by a re-layout */
            kr_tree_free_arrays(nt);
        }
        free(r.dirty_leaves);
        free(r.moves);
        kr_tree_free_arrays(&spare);
        free_snapshot(&before);
        free(kinds);
        free(keys);
        free(values);
        harmonia_free(t);
        free(m.keys);
        free(m.values);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_random_batches),
        cmocka_unit_test(test_splits_and_removals),
        cmocka_unit_test(test_strict_policies),
        cmocka_unit_test(test_allocation_failures),
        cmocka_unit_test(test_update_of_loaded_tree),
        cmocka_unit_test(test_empty_tree_and_appends),
        cmocka_unit_test(test_gpu_after_updates),
        cmocka_unit_test(test_large_batches),
        cmocka_unit_test(test_all_duplicates),
        cmocka_unit_test(test_extreme_keys_large),
        cmocka_unit_test(test_failing_batches_large),
        cmocka_unit_test(test_allocation_failures_large),
        cmocka_unit_test(test_reported_changes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
