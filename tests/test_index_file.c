/* test_index_file.c — cmocka tests of the index file (harmonia/index_file.c): round trips over key
 * widths, node sizes and tree sizes; atomic saves; and a damaged-file corpus (truncations, flipped
 * bytes, absurd header fields, random mutations) that the loader must reject without crashing.
 * The format itself is documented in harmonia/index_file.h. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include "harmonia.h"
#include "harmonia/index_file.h"
#include "harmonia/tree_internal.h"
#include "util/mix.h"
#include "util/width.h"

/* ------------------------------------------------------------------------------------------- */
/* Helpers                                                                                     */
/* ------------------------------------------------------------------------------------------- */

/* A deterministic generator (splitmix64, util/mix.h), so that every failure reproduces. */
static uint64_t rng_state;
static uint64_t rng_next(void) { return util_splitmix64(&rng_state); }

static char *make_temp_dir(void)
{
    char *dir = strdup("/tmp/harmonia-index-test-XXXXXX");
    assert_non_null(dir);
    assert_non_null(mkdtemp(dir));
    return dir;
}

static void remove_temp_dir(char *dir)
{
    DIR *d = opendir(dir);
    assert_non_null(d);
    struct dirent *e;
    char path[4096];
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        struct stat st;
        if (lstat(path, &st) == 0 && S_ISDIR(st.st_mode))
            rmdir(path);
        else
            unlink(path);
    }
    closedir(d);
    assert_int_equal(rmdir(dir), 0);
    free(dir);
}

/* Number of entries in dir (not . and ..); *temp_files gets those whose name holds ".tmp.". */
static int count_entries(const char *dir, int *temp_files)
{
    DIR *d = opendir(dir);
    assert_non_null(d);
    int n = 0, temps = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        n++;
        if (strstr(e->d_name, ".tmp.") != NULL)
            temps++;
    }
    closedir(d);
    if (temp_files)
        *temp_files = temps;
    return n;
}

static unsigned char *read_whole(const char *path, size_t *size_out)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    assert_int_equal(fseek(f, 0, SEEK_END), 0);
    long size = ftell(f);
    assert_true(size >= 0);
    rewind(f);
    unsigned char *buf = malloc((size_t)size + 1);
    assert_non_null(buf);
    assert_int_equal(fread(buf, 1, (size_t)size, f), (size_t)size);
    fclose(f);
    *size_out = (size_t)size;
    return buf;
}

static void write_whole(const char *path, const void *data, size_t size)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    if (size > 0)
        assert_int_equal(fwrite(data, 1, size, f), size);
    assert_int_equal(fclose(f), 0);
}

static uint64_t get_u64(const unsigned char *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = (v << 8) | p[i];
    return v;
}

static uint32_t get_u32(const unsigned char *p)
{
    uint32_t v = 0;
    for (int i = 3; i >= 0; i--)
        v = (v << 8) | p[i];
    return v;
}

static void put_u64(unsigned char *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}

static void put_u32(unsigned char *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}

static void fix_header_checksum(unsigned char *image)
{
    put_u64(image + IX_OFF_HEADER_CHECKSUM, ix_header_checksum(image));
}

static uint64_t section_field(const unsigned char *image, unsigned section, unsigned field)
{
    return get_u64(image + IX_OFF_SECTIONS + IX_SECTION_ENTRY_BYTES * section + field);
}

static void set_section_field(unsigned char *image, unsigned section, unsigned field, uint64_t v)
{
    put_u64(image + IX_OFF_SECTIONS + IX_SECTION_ENTRY_BYTES * section + field, v);
}

/* count distinct keys of the given width: 0, an odd multiple of i for the middle, the maximum last
 * (for count 1, the one key is the maximum). values: each key's value, or NULL for positions. */
typedef struct pairs {
    uint32_t key_bits;
    uint64_t count;
    void *keys;     /* key_bits-wide */
    void *values;   /* key_bits-wide, NULL = positions */
    uint64_t *expected; /* the value each key must have */
} pairs;

/* width-generic access: util/width.h's */
#define width_max util_max_of_width
#define store util_store_width
#define load util_load_width

static pairs make_pairs(uint32_t key_bits, uint64_t count, bool with_values)
{
    pairs p = {key_bits, count, NULL, NULL, NULL};
    size_t w = key_bits / 8;
    p.keys = malloc(w * (count ? count : 1));
    p.expected = malloc(sizeof(uint64_t) * (count ? count : 1));
    assert_non_null(p.keys);
    assert_non_null(p.expected);
    if (with_values) {
        p.values = malloc(w * (count ? count : 1));
        assert_non_null(p.values);
    }
    const uint64_t mul = key_bits == 32 ? 0x9E3779B1ull : 0x9E3779B97F4A7C15ull;
    const uint64_t max = width_max(key_bits);
    for (uint64_t i = 0; i < count; i++) {
        uint64_t key = i + 1 == count ? max : (i * mul) & max;
        assert_true(i + 1 == count || key != max);
        store(p.keys, key_bits, i, key);
        uint64_t value = with_values ? (key ^ 0x5A5A5A5A5A5A5A5Aull) & max : i;
        if (with_values)
            store(p.values, key_bits, i, value);
        p.expected[i] = value;
    }
    return p;
}

static void free_pairs(pairs *p)
{
    free(p->keys);
    free(p->values);
    free(p->expected);
}

static harmonia_tree *build_tree(const pairs *p, uint32_t fanout, uint32_t leaf_size)
{
    harmonia_build_config config;
    harmonia_build_config_init(&config);
    config.key_bits = p->key_bits;
    config.fanout = fanout;
    config.leaf_size = leaf_size;
    harmonia_tree *tree = NULL;
    harmonia_status s = harmonia_build(&config, p->keys, p->values, p->count, &tree);
    if (s != HARMONIA_OK)
        fail_msg("build failed: %s", harmonia_last_error(NULL));
    assert_non_null(tree);
    return tree;
}

static harmonia_query_config cpu_config(void)
{
    harmonia_query_config q;
    harmonia_query_config_init(&q);
    q.backend = HARMONIA_BACKEND_CPU;
    return q;
}

/* The loaded tree must describe and answer exactly as the original. */
static void expect_same_tree(harmonia_tree *original, harmonia_tree *loaded, const pairs *p)
{
    harmonia_tree_info a, b;
    assert_int_equal(harmonia_info(original, &a), HARMONIA_OK);
    assert_int_equal(harmonia_info(loaded, &b), HARMONIA_OK);
    assert_false(a.mapped);
    assert_true(b.mapped);
    b.mapped = a.mapped;
    assert_int_equal(a.key_bits, b.key_bits);
    assert_int_equal(a.fanout, b.fanout);
    assert_int_equal(a.leaf_size, b.leaf_size);
    assert_int_equal(a.height, b.height);
    assert_int_equal(a.key_count, b.key_count);
    assert_int_equal(a.internal_nodes, b.internal_nodes);
    assert_int_equal(a.leaf_count, b.leaf_count);
    assert_memory_equal(a.level_nodes, b.level_nodes, sizeof a.level_nodes);
    assert_int_equal(a.total_bytes, b.total_bytes);
    assert_int_equal(a.version, b.version);
    assert_int_equal(a.ntg_group_size, b.ntg_group_size);
    if (a.key_count > 0) {
        assert_int_equal(a.min_key, b.min_key);
        assert_int_equal(a.max_key, b.max_key);
    }
    assert_memory_equal(&a, &b, sizeof a); /* everything else, padding included (memset) */

    if (harmonia_check(loaded) != HARMONIA_OK)
        fail_msg("check of the loaded tree: %s", harmonia_last_error(loaded));

    harmonia_query_config q = cpu_config();
    uint64_t n = p->count, w = p->key_bits / 8, max = width_max(p->key_bits);
    void *values = malloc(w * (n ? n : 1));
    uint8_t *found = malloc(n ? n : 1);
    assert_non_null(values);
    assert_non_null(found);
    assert_int_equal(harmonia_lookup(loaded, &q, p->keys, n, values, found), HARMONIA_OK);
    for (uint64_t i = 0; i < n; i++) {
        if (!found[i] || load(values, p->key_bits, i) != p->expected[i])
            fail_msg("key %" PRIu64 " (#%" PRIu64 "): found %d value %" PRIu64 ", expected %" PRIu64,
                     load(p->keys, p->key_bits, i), i, found[i], load(values, p->key_bits, i),
                     p->expected[i]);
    }
    free(values);
    free(found);

    /* neighbours of the keys (mostly misses) and random queries: both trees agree */
    uint64_t m = 2 * (n < 2000 ? n : 2000) + 64;
    void *queries = malloc(w * m);
    void *va = malloc(w * m), *vb = malloc(w * m), *ka = malloc(w * m), *kb = malloc(w * m);
    uint8_t *fa = malloc(m), *fb = malloc(m);
    assert_true(queries && va && vb && ka && kb && fa && fb);
    for (uint64_t i = 0; i < m; i++) {
        uint64_t q_key;
        if (i < 64 || n == 0)
            q_key = rng_next() & max;
        else {
            uint64_t k = load(p->keys, p->key_bits, rng_next() % n);
            q_key = ((i & 1) ? k + 1 : k - 1) & max;
        }
        store(queries, p->key_bits, i, q_key);
    }
    assert_int_equal(harmonia_lookup(original, &q, queries, m, va, fa), HARMONIA_OK);
    assert_int_equal(harmonia_lookup(loaded, &q, queries, m, vb, fb), HARMONIA_OK);
    assert_memory_equal(fa, fb, m);
    assert_memory_equal(va, vb, w * m);
    assert_int_equal(harmonia_lower_bound(original, &q, queries, m, ka, va, fa), HARMONIA_OK);
    assert_int_equal(harmonia_lower_bound(loaded, &q, queries, m, kb, vb, fb), HARMONIA_OK);
    assert_memory_equal(fa, fb, m);
    assert_memory_equal(ka, kb, w * m);
    assert_memory_equal(va, vb, w * m);
    free(queries);
    free(va);
    free(vb);
    free(ka);
    free(kb);
    free(fa);
    free(fb);
}

static char *join(const char *dir, const char *name)
{
    size_t n = strlen(dir) + strlen(name) + 2;
    char *path = malloc(n);
    assert_non_null(path);
    snprintf(path, n, "%s/%s", dir, name);
    return path;
}

static harmonia_tree *load_ok(const char *path)
{
    harmonia_tree *tree = NULL;
    harmonia_status s = harmonia_load(path, NULL, &tree);
    if (s != HARMONIA_OK)
        fail_msg("load of %s failed: %s", path, harmonia_last_error(NULL));
    assert_non_null(tree);
    return tree;
}

/* ------------------------------------------------------------------------------------------- */
/* Round trips                                                                                 */
/* ------------------------------------------------------------------------------------------- */

static void test_round_trip_matrix(void **state)
{
    (void)state;
    static const uint32_t node_sizes[][2] = {{8, 8}, {16, 16}, {64, 32}, {128, 128}, {8, 128}};
    static const uint64_t sizes[] = {0, 1, 1000, 100000};
    char *dir = make_temp_dir();
    char *path = join(dir, "tree.hm");
    rng_state = 1;
    for (uint32_t key_bits = 32; key_bits <= 64; key_bits += 32)
        for (size_t ns = 0; ns < sizeof node_sizes / sizeof node_sizes[0]; ns++)
            for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
                pairs p = make_pairs(key_bits, sizes[si], (si + ns) % 2 == 0);
                harmonia_tree *tree = build_tree(&p, node_sizes[ns][0], node_sizes[ns][1]);
                if (harmonia_save(tree, path) != HARMONIA_OK)
                    fail_msg("save: %s", harmonia_last_error(tree));
                harmonia_tree *loaded = load_ok(path);
                expect_same_tree(tree, loaded, &p);
                /* the mapped tree may outlive the file's name */
                unlink(path);
                harmonia_tree_info info;
                assert_int_equal(harmonia_info(loaded, &info), HARMONIA_OK);
                harmonia_free(loaded);
                harmonia_free(tree);
                free_pairs(&p);
            }
    int temps;
    assert_int_equal(count_entries(dir, &temps), 0);
    free(path);
    remove_temp_dir(dir);
}

static void test_version_and_ntg_choice_are_kept(void **state)
{
    (void)state;
    char *dir = make_temp_dir();
    char *path = join(dir, "tree.hm");
    pairs p = make_pairs(64, 5000, true);
    harmonia_tree *tree = build_tree(&p, 32, 16);
    tree->version = 0x123456789ull;
    tree->ntg_group_size = 8;
    assert_int_equal(harmonia_save(tree, path), HARMONIA_OK);
    harmonia_tree *loaded = load_ok(path);
    harmonia_tree_info info;
    assert_int_equal(harmonia_info(loaded, &info), HARMONIA_OK);
    assert_int_equal(info.version, 0x123456789ull);
    assert_int_equal(info.ntg_group_size, 8);
    expect_same_tree(tree, loaded, &p);
    harmonia_free(loaded);
    harmonia_free(tree);
    free_pairs(&p);
    free(path);
    remove_temp_dir(dir);
}

static void test_file_layout_is_page_aligned(void **state)
{
    (void)state;
    char *dir = make_temp_dir();
    char *path = join(dir, "tree.hm");
    pairs p = make_pairs(32, 3000, true);
    harmonia_tree *tree = build_tree(&p, 16, 32);
    assert_int_equal(harmonia_save(tree, path), HARMONIA_OK);
    size_t size;
    unsigned char *image = read_whole(path, &size);
    assert_memory_equal(image, "HARMONIA", 8);
    assert_int_equal(get_u32(image + IX_OFF_FORMAT_VERSION), IX_FORMAT_VERSION);
    assert_int_equal(get_u64(image + IX_OFF_FILE_BYTES), size);
    assert_int_equal(size % IX_ALIGN, 0);
    harmonia_tree_info info;
    assert_int_equal(harmonia_info(tree, &info), HARMONIA_OK);
    const uint64_t sizes[4] = {info.key_region_bytes, info.leaf_value_bytes, info.prefix_sum_bytes,
                               info.leaf_rank_bytes};
    const void *arrays[4] = {tree->kr.keys, tree->kr.leaf_values, tree->kr.first_child,
                             tree->kr.leaf_rank};
    for (unsigned i = 0; i < IX_SECTION_COUNT; i++) {
        uint64_t offset = section_field(image, i, IX_SEC_OFF_OFFSET);
        assert_int_equal(offset % IX_ALIGN, 0);
        assert_int_equal(section_field(image, i, IX_SEC_OFF_SIZE), sizes[i]);
        assert_int_equal(section_field(image, i, IX_SEC_OFF_CHECKSUM),
                         XXH3_64bits(image + offset, sizes[i]));
        assert_memory_equal(image + offset, arrays[i], sizes[i]);
    }
    assert_int_equal(get_u64(image + IX_OFF_HEADER_CHECKSUM), ix_header_checksum(image));
    free(image);
    harmonia_free(tree);
    free_pairs(&p);
    free(path);
    remove_temp_dir(dir);
}

/* ------------------------------------------------------------------------------------------- */
/* Saving                                                                                      */
/* ------------------------------------------------------------------------------------------- */

static void test_save_replaces_existing_file(void **state)
{
    (void)state;
    char *dir = make_temp_dir();
    char *path = join(dir, "tree.hm");
    pairs p1 = make_pairs(64, 1000, true), p2 = make_pairs(32, 20000, false);
    harmonia_tree *t1 = build_tree(&p1, 8, 8), *t2 = build_tree(&p2, 64, 64);
    write_whole(path, "old contents", 12);
    assert_int_equal(harmonia_save(t1, path), HARMONIA_OK);
    assert_int_equal(harmonia_save(t2, path), HARMONIA_OK);
    int temps;
    assert_int_equal(count_entries(dir, &temps), 1);
    assert_int_equal(temps, 0);
    harmonia_tree *loaded = load_ok(path);
    expect_same_tree(t2, loaded, &p2);
    harmonia_free(loaded);
    harmonia_free(t1);
    harmonia_free(t2);
    free_pairs(&p1);
    free_pairs(&p2);
    free(path);
    remove_temp_dir(dir);
}

static void test_save_over_the_mapped_file_it_was_loaded_from(void **state)
{
    (void)state;
    char *dir = make_temp_dir();
    char *path = join(dir, "tree.hm");
    pairs p = make_pairs(64, 30000, true);
    harmonia_tree *tree = build_tree(&p, 16, 16);
    tree->version = 7;
    assert_int_equal(harmonia_save(tree, path), HARMONIA_OK);
    harmonia_tree *loaded = load_ok(path);
    assert_int_equal(harmonia_save(loaded, path), HARMONIA_OK);
    expect_same_tree(tree, loaded, &p); /* the old mapping is still intact */
    harmonia_tree *again = load_ok(path);
    expect_same_tree(tree, again, &p);
    int temps;
    assert_int_equal(count_entries(dir, &temps), 1);
    assert_int_equal(temps, 0);
    harmonia_free(again);
    harmonia_free(loaded);
    harmonia_free(tree);
    free_pairs(&p);
    free(path);
    remove_temp_dir(dir);
}

static void test_save_to_missing_folder_fails_cleanly(void **state)
{
    (void)state;
    char *dir = make_temp_dir();
    char *path = join(dir, "no/such/folder/tree.hm");
    pairs p = make_pairs(64, 100, true);
    harmonia_tree *tree = build_tree(&p, 8, 8);
    assert_int_equal(harmonia_save(tree, path), HARMONIA_ERR_IO);
    const char *message = harmonia_last_error(tree);
    assert_non_null(strstr(message, path));
    assert_non_null(strstr(message, strerror(ENOENT)));
    assert_int_equal(count_entries(dir, NULL), 0);
    harmonia_free(tree);
    free_pairs(&p);
    free(path);
    remove_temp_dir(dir);
}

static void test_save_onto_a_folder_fails_and_leaves_no_temp_file(void **state)
{
    (void)state;
    char *dir = make_temp_dir();
    char *path = join(dir, "sub");
    assert_int_equal(mkdir(path, 0755), 0);
    pairs p = make_pairs(32, 100, true);
    harmonia_tree *tree = build_tree(&p, 8, 8);
    assert_int_equal(harmonia_save(tree, path), HARMONIA_ERR_IO);
    assert_true(harmonia_last_error(tree)[0] != '\0');
    int temps;
    assert_int_equal(count_entries(dir, &temps), 1);
    assert_int_equal(temps, 0);
    harmonia_free(tree);
    free_pairs(&p);
    free(path);
    remove_temp_dir(dir);
}

static void test_save_and_load_reject_null_arguments(void **state)
{
    (void)state;
    pairs p = make_pairs(64, 10, true);
    harmonia_tree *tree = build_tree(&p, 8, 8);
    assert_int_equal(harmonia_save(NULL, "/tmp/x.hm"), HARMONIA_ERR_INVALID);
    assert_true(harmonia_last_error(NULL)[0] != '\0');
    assert_int_equal(harmonia_save(tree, NULL), HARMONIA_ERR_INVALID);
    assert_int_equal(harmonia_save(tree, ""), HARMONIA_ERR_INVALID);
    harmonia_tree *out = (harmonia_tree *)1;
    assert_int_equal(harmonia_load(NULL, NULL, &out), HARMONIA_ERR_INVALID);
    assert_null(out);
    assert_int_equal(harmonia_load("/tmp/x.hm", NULL, NULL), HARMONIA_ERR_INVALID);
    harmonia_load_config_init(NULL); /* a no-op */
    harmonia_free(tree);
    free_pairs(&p);
}

/* ------------------------------------------------------------------------------------------- */
/* Loading what is not an index                                                                */
/* ------------------------------------------------------------------------------------------- */

/* Loads path and expects a failure (status expected, or any non-OK when expected is OK) with a
 * message naming the path and holding words (when not NULL). */
static void expect_load_fails(const char *path, bool verify, harmonia_status expected,
                              const char *words)
{
    harmonia_load_config config;
    harmonia_load_config_init(&config);
    config.verify = verify;
    harmonia_tree *tree = (harmonia_tree *)1;
    harmonia_status s = harmonia_load(path, &config, &tree);
    const char *message = harmonia_last_error(NULL);
    if (s == HARMONIA_OK) {
        harmonia_free(tree);
        fail_msg("%s loaded, but should have failed%s%s", path, words ? " with " : "",
                 words ? words : "");
    }
    assert_null(tree);
    if (expected != HARMONIA_OK && s != expected)
        fail_msg("status %d (%s), expected %d: %s", s, message, expected, harmonia_strerror(expected));
    assert_true(message[0] != '\0');
    if (strstr(message, path) == NULL)
        fail_msg("message does not name the file: %s", message);
    if (words && strstr(message, words) == NULL)
        fail_msg("message lacks \"%s\": %s", words, message);
}

static void test_load_rejects_missing_empty_folder_and_foreign_files(void **state)
{
    (void)state;
    char *dir = make_temp_dir();
    char *missing = join(dir, "missing.hm");
    expect_load_fails(missing, true, HARMONIA_ERR_IO, strerror(ENOENT));
    expect_load_fails(dir, true, HARMONIA_ERR_IO, "folder");
    char *empty = join(dir, "empty.hm");
    write_whole(empty, "", 0);
    expect_load_fails(empty, true, HARMONIA_ERR_CORRUPT, "empty");
    char *text = join(dir, "text.hm");
    write_whole(text, "key,value\n1,2\n", 14);
    expect_load_fails(text, true, HARMONIA_ERR_CORRUPT, "not a Harmonia index file");
    write_whole(text, "HARM", 4);
    expect_load_fails(text, true, HARMONIA_ERR_CORRUPT, "truncated");
    char *fifo = join(dir, "fifo.hm");
    assert_int_equal(mkfifo(fifo, 0600), 0);
    expect_load_fails(fifo, true, HARMONIA_ERR_IO, "regular");
    free(missing);
    free(empty);
    free(text);
    free(fifo);
    remove_temp_dir(dir);
}

/* ------------------------------------------------------------------------------------------- */
/* The damaged corpus                                                                          */
/* ------------------------------------------------------------------------------------------- */

typedef struct corpus {
    char *dir;
    char *good_path;    /* the valid file */
    char *damaged_path; /* rewritten for each case */
    unsigned char *image;
    size_t size;
    pairs p;
    harmonia_tree *tree;
} corpus;

static int corpus_setup(void **state)
{
    corpus *c = calloc(1, sizeof *c);
    if (c == NULL)
        return -1;
    c->dir = make_temp_dir();
    c->good_path = join(c->dir, "good.hm");
    c->damaged_path = join(c->dir, "damaged.hm");
    /* 64-bit keys, F = L = 8: three internal levels and sections of several pages */
    c->p = make_pairs(64, 3000, true);
    c->tree = build_tree(&c->p, 8, 8);
    c->tree->version = 3;
    c->tree->ntg_group_size = 4;
    if (harmonia_save(c->tree, c->good_path) != HARMONIA_OK)
        return -1;
    c->image = read_whole(c->good_path, &c->size);
    *state = c;
    return 0;
}

static int corpus_teardown(void **state)
{
    corpus *c = *state;
    harmonia_free(c->tree);
    free_pairs(&c->p);
    free(c->image);
    free(c->good_path);
    free(c->damaged_path);
    remove_temp_dir(c->dir);
    free(c);
    return 0;
}

static unsigned char *copy_image(const corpus *c)
{
    unsigned char *copy = malloc(c->size);
    assert_non_null(copy);
    memcpy(copy, c->image, c->size);
    return copy;
}

static void expect_image_fails(const corpus *c, const unsigned char *image, size_t size,
                               bool verify, harmonia_status expected, const char *words)
{
    write_whole(c->damaged_path, image, size);
    expect_load_fails(c->damaged_path, verify, expected, words);
}

static void test_valid_corpus_file_loads(void **state)
{
    corpus *c = *state;
    harmonia_tree *loaded = load_ok(c->good_path);
    expect_same_tree(c->tree, loaded, &c->p);
    harmonia_free(loaded);
    /* without verification too */
    harmonia_load_config config;
    harmonia_load_config_init(&config);
    config.verify = false;
    assert_int_equal(harmonia_load(c->good_path, &config, &loaded), HARMONIA_OK);
    expect_same_tree(c->tree, loaded, &c->p);
    harmonia_free(loaded);
}

static void test_truncations_are_rejected(void **state)
{
    corpus *c = *state;
    uint64_t cuts[256];
    size_t n = 0;
    static const uint64_t header_cuts[] = {0, 1, 7, 8, 11, 12, 16, 100, 360, 487, 488, 495, 496,
                                           2048, 4095, 4096, 4097};
    for (size_t i = 0; i < sizeof header_cuts / sizeof header_cuts[0]; i++)
        cuts[n++] = header_cuts[i];
    for (unsigned s = 0; s < IX_SECTION_COUNT; s++) {
        uint64_t offset = section_field(c->image, s, IX_SEC_OFF_OFFSET);
        uint64_t size = section_field(c->image, s, IX_SEC_OFF_SIZE);
        uint64_t inside[] = {offset, offset + 1, offset + size / 3, offset + size / 2,
                             offset + size - 8, offset + size - 1, offset + size,
                             offset + size + 1};
        for (size_t i = 0; i < sizeof inside / sizeof inside[0]; i++)
            cuts[n++] = inside[i];
    }
    cuts[n++] = c->size - 4096;
    cuts[n++] = c->size - 1;
    for (size_t i = 0; i < n; i++) {
        assert_true(cuts[i] < c->size);
        for (int verify = 0; verify <= 1; verify++)
            expect_image_fails(c, c->image, (size_t)cuts[i], verify, HARMONIA_OK, NULL);
    }
    /* one byte too many */
    unsigned char *longer = malloc(c->size + 4096);
    assert_non_null(longer);
    memcpy(longer, c->image, c->size);
    memset(longer + c->size, 0, 4096);
    expect_image_fails(c, longer, c->size + 1, true, HARMONIA_ERR_CORRUPT, "unexpected bytes");
    expect_image_fails(c, longer, c->size + 4096, false, HARMONIA_ERR_CORRUPT, "unexpected bytes");
    free(longer);
    /* the message of a cut inside a section */
    uint64_t offset = section_field(c->image, 2, IX_SEC_OFF_OFFSET);
    expect_image_fails(c, c->image, (size_t)offset + 4, true, HARMONIA_ERR_CORRUPT,
                       "file truncated: section 'first child' ends at byte");
}

static void test_flipped_bytes_are_rejected(void **state)
{
    corpus *c = *state;
    unsigned char *image = copy_image(c);
    uint64_t positions[2048];
    size_t n = 0;
    for (uint64_t at = 0; at < IX_HEADER_BYTES; at++) /* every header byte */
        positions[n++] = at;
    for (uint64_t at = IX_HEADER_BYTES; at < IX_ALIGN; at += 97) /* the header page's padding */
        positions[n++] = at;
    positions[n++] = IX_ALIGN - 1;
    for (unsigned s = 0; s < IX_SECTION_COUNT; s++) {
        uint64_t offset = section_field(c->image, s, IX_SEC_OFF_OFFSET);
        uint64_t size = section_field(c->image, s, IX_SEC_OFF_SIZE);
        uint64_t end = offset + size;
        uint64_t next = s + 1 < IX_SECTION_COUNT
                            ? section_field(c->image, s + 1, IX_SEC_OFF_OFFSET)
                            : c->size;
        positions[n++] = offset;
        positions[n++] = offset + size / 2;
        positions[n++] = end - 1;
        for (int i = 0; i < 16; i++)
            positions[n++] = offset + rng_next() % size;
        if (next > end) { /* the padding after the section */
            positions[n++] = end;
            positions[n++] = next - 1;
        }
    }
    const unsigned char flips[] = {0x01, 0x80, 0xFF};
    for (size_t i = 0; i < n; i++) {
        unsigned char flip = flips[i % 3];
        image[positions[i]] ^= flip;
        expect_image_fails(c, image, c->size, true, HARMONIA_OK, NULL);
        /* without verification, everything but the sections' contents is still checked */
        bool in_section = false;
        for (unsigned s = 0; s < IX_SECTION_COUNT; s++) {
            uint64_t offset = section_field(c->image, s, IX_SEC_OFF_OFFSET);
            uint64_t size = section_field(c->image, s, IX_SEC_OFF_SIZE);
            in_section |= positions[i] >= offset && positions[i] < offset + size;
        }
        if (!in_section)
            expect_image_fails(c, image, c->size, false, HARMONIA_OK, NULL);
        image[positions[i]] ^= flip;
    }
    /* the messages */
    uint64_t values_offset = section_field(c->image, 1, IX_SEC_OFF_OFFSET);
    image[values_offset + 5] ^= 0x10;
    expect_image_fails(c, image, c->size, true, HARMONIA_ERR_CORRUPT,
                       "section 'leaf values' checksum mismatch (stored 0x");
    /* verify = false skips the section checksums (documented): this one loads */
    write_whole(c->damaged_path, image, c->size);
    harmonia_load_config config;
    harmonia_load_config_init(&config);
    config.verify = false;
    harmonia_tree *loaded = NULL;
    assert_int_equal(harmonia_load(c->damaged_path, &config, &loaded), HARMONIA_OK);
    harmonia_free(loaded);
    image[values_offset + 5] ^= 0x10;
    image[IX_OFF_N_KEYS] ^= 0x01;
    expect_image_fails(c, image, c->size, true, HARMONIA_ERR_CORRUPT, "header checksum mismatch");
    image[IX_OFF_N_KEYS] ^= 0x01;
    image[IX_HEADER_BYTES + 10] = 0x33;
    expect_image_fails(c, image, c->size, false, HARMONIA_ERR_CORRUPT, "padding");
    free(image);
}

static void test_wrong_magic_and_version(void **state)
{
    corpus *c = *state;
    unsigned char *image = copy_image(c);
    memcpy(image, "HARMONIB", 8);
    expect_image_fails(c, image, c->size, true, HARMONIA_ERR_CORRUPT, "not a Harmonia index file");
    memcpy(image, "\0\0\0\0\0\0\0\0", 8);
    expect_image_fails(c, image, c->size, true, HARMONIA_ERR_CORRUPT, "not a Harmonia index file");
    memcpy(image, c->image, c->size);
    put_u32(image + IX_OFF_FORMAT_VERSION, 2);
    fix_header_checksum(image);
    expect_image_fails(c, image, c->size, true, HARMONIA_ERR_UNSUPPORTED,
                       "format version 2, but this library reads version 1");
    put_u32(image + IX_OFF_FORMAT_VERSION, 0);
    expect_image_fails(c, image, c->size, false, HARMONIA_ERR_UNSUPPORTED, "version 0");
    free(image);
}

/* One header edit: a field (by offset and width) set to a value, the header checksum fixed up so
 * that the semantic validation is what must reject it. */
typedef struct header_edit {
    const char *what;
    unsigned offset;
    unsigned width; /* 4 or 8 */
    uint64_t value;
    harmonia_status expected;
    const char *words;
} header_edit;

static void apply_edits(corpus *c, const header_edit *edits, size_t n)
{
    unsigned char *image = copy_image(c);
    for (size_t i = 0; i < n; i++) {
        memcpy(image, c->image, IX_HEADER_BYTES);
        if (edits[i].width == 4)
            put_u32(image + edits[i].offset, (uint32_t)edits[i].value);
        else
            put_u64(image + edits[i].offset, edits[i].value);
        fix_header_checksum(image);
        for (int verify = 1; verify >= 0; verify--) {
            write_whole(c->damaged_path, image, c->size);
            harmonia_load_config config;
            harmonia_load_config_init(&config);
            config.verify = verify;
            harmonia_tree *tree = NULL;
            harmonia_status s = harmonia_load(c->damaged_path, &config, &tree);
            const char *message = harmonia_last_error(NULL);
            if (s == HARMONIA_OK) {
                harmonia_free(tree);
                fail_msg("edit '%s' loaded (verify %d)", edits[i].what, verify);
            }
            if (edits[i].expected != HARMONIA_OK && s != edits[i].expected)
                fail_msg("edit '%s': status %d, expected %d: %s", edits[i].what, s,
                         edits[i].expected, message);
            if (message[0] == '\0' || strstr(message, c->damaged_path) == NULL)
                fail_msg("edit '%s': message does not name the file: '%s'", edits[i].what, message);
            if (edits[i].words && strstr(message, edits[i].words) == NULL)
                fail_msg("edit '%s': message lacks \"%s\": %s", edits[i].what, edits[i].words,
                         message);
        }
    }
    free(image);
}

#define SEC(i, field) (IX_OFF_SECTIONS + IX_SECTION_ENTRY_BYTES * (i) + (field))

static void test_absurd_header_fields_are_rejected(void **state)
{
    corpus *c = *state;
    const unsigned char *h = c->image;
    uint32_t height = get_u32(h + IX_OFF_HEIGHT);
    uint64_t n_leaves = get_u64(h + IX_OFF_N_LEAVES);
    uint64_t n_internal = get_u64(h + IX_OFF_N_INTERNAL);
    uint64_t n_nodes = get_u64(h + IX_OFF_N_NODES);
    uint64_t file_bytes = get_u64(h + IX_OFF_FILE_BYTES);
    uint64_t off1 = section_field(h, 1, IX_SEC_OFF_OFFSET);
    uint64_t off0 = section_field(h, 0, IX_SEC_OFF_OFFSET);
    uint64_t size2 = section_field(h, 2, IX_SEC_OFF_SIZE);
    assert_true(height >= 3);
    const unsigned ls = IX_OFF_LEVEL_START;
    const header_edit edits[] = {
        {"huge n_keys", IX_OFF_N_KEYS, 8, UINT64_MAX, HARMONIA_ERR_CORRUPT, "n_keys"},
        {"n_keys one past capacity", IX_OFF_N_KEYS, 8, n_leaves * 8 + 1, HARMONIA_ERR_CORRUPT,
         "n_keys"},
        {"height 0", IX_OFF_HEIGHT, 4, 0, HARMONIA_ERR_CORRUPT, "height 0"},
        {"height 99", IX_OFF_HEIGHT, 4, 99, HARMONIA_ERR_CORRUPT, "height 99"},
        {"height 33", IX_OFF_HEIGHT, 4, HARMONIA_MAX_LEVELS + 1, HARMONIA_ERR_CORRUPT, "height"},
        {"height one less", IX_OFF_HEIGHT, 4, height - 1, HARMONIA_ERR_CORRUPT, NULL},
        {"height one more", IX_OFF_HEIGHT, 4, height + 1, HARMONIA_ERR_CORRUPT, NULL},
        {"key width 48", IX_OFF_KEY_BITS, 4, 48, HARMONIA_ERR_UNSUPPORTED, "key width 48"},
        {"key width 0", IX_OFF_KEY_BITS, 4, 0, HARMONIA_ERR_UNSUPPORTED, NULL},
        {"key width 32", IX_OFF_KEY_BITS, 4, 32, HARMONIA_ERR_CORRUPT, NULL},
        {"fanout 12", IX_OFF_FANOUT, 4, 12, HARMONIA_ERR_CORRUPT, "fanout"},
        {"fanout 256", IX_OFF_FANOUT, 4, 256, HARMONIA_ERR_CORRUPT, "fanout"},
        {"fanout 16", IX_OFF_FANOUT, 4, 16, HARMONIA_ERR_CORRUPT, NULL},
        {"leaf size 0", IX_OFF_LEAF_SIZE, 4, 0, HARMONIA_ERR_CORRUPT, "leaf size"},
        {"leaf size 4", IX_OFF_LEAF_SIZE, 4, 4, HARMONIA_ERR_CORRUPT, "leaf size"},
        {"no leaves", IX_OFF_N_LEAVES, 8, 0, HARMONIA_ERR_CORRUPT, NULL},
        {"huge n_internal", IX_OFF_N_INTERNAL, 8, (uint64_t)1 << 40, HARMONIA_ERR_CORRUPT, NULL},
        {"n_internal + n_leaves wrapping to 1", IX_OFF_N_INTERNAL, 8, UINT64_MAX - n_leaves + 2,
         HARMONIA_ERR_CORRUPT, "n_nodes"},
        {"n_nodes 2^32", IX_OFF_N_NODES, 8, (uint64_t)1 << 32, HARMONIA_ERR_CORRUPT, NULL},
        {"n_nodes off by one", IX_OFF_N_NODES, 8, n_nodes + 1, HARMONIA_ERR_CORRUPT, "n_nodes"},
        {"level_start[0] = 1", ls, 8, 1, HARMONIA_ERR_CORRUPT, "level_start"},
        {"two roots", ls + 8, 8, 2, HARMONIA_ERR_CORRUPT, "root"},
        {"level_start not monotone", ls + 8 * 2, 8, 1, HARMONIA_ERR_CORRUPT, "not increasing"},
        {"level_start decreasing", ls + 8 * (height - 1), 8, 0, HARMONIA_ERR_CORRUPT, NULL},
        {"level_start[height] wrong", ls + 8 * height, 8, n_nodes - 1, HARMONIA_ERR_CORRUPT, NULL},
        {"level_start beyond height", ls + 8 * (height + 1), 8, n_nodes + 5, HARMONIA_ERR_CORRUPT,
         "beyond the height"},
        {"leaf level not at n_internal", ls + 8 * (height - 1), 8, n_internal - 1,
         HARMONIA_ERR_CORRUPT, NULL},
        {"ntg group size 3", IX_OFF_NTG_GROUP_SIZE, 4, 3, HARMONIA_ERR_CORRUPT, "NTG"},
        {"ntg group size 2^31", IX_OFF_NTG_GROUP_SIZE, 4, (uint64_t)1 << 31, HARMONIA_ERR_CORRUPT,
         "NTG"},
        {"ntg group size above F = 8", IX_OFF_NTG_GROUP_SIZE, 4, 16, HARMONIA_ERR_CORRUPT, "NTG"},
        {"ntg group size above 32", IX_OFF_NTG_GROUP_SIZE, 4, 64, HARMONIA_ERR_CORRUPT, "NTG"},
        {"unknown flag", IX_OFF_FLAGS, 4, 1, HARMONIA_ERR_UNSUPPORTED, "flags"},
        {"five sections", IX_OFF_SECTION_COUNT, 4, 5, HARMONIA_ERR_CORRUPT, "section count"},
        {"reserved field", IX_OFF_RESERVED, 4, 0xdead, HARMONIA_ERR_CORRUPT, NULL},
        {"header size 4096", IX_OFF_HEADER_BYTES, 4, 4096, HARMONIA_ERR_CORRUPT, "header size"},
        {"file size + 4096", IX_OFF_FILE_BYTES, 8, file_bytes + 4096, HARMONIA_ERR_CORRUPT, NULL},
        {"file size - 4096", IX_OFF_FILE_BYTES, 8, file_bytes - 4096, HARMONIA_ERR_CORRUPT, NULL},
        {"file size huge", IX_OFF_FILE_BYTES, 8, UINT64_MAX, HARMONIA_ERR_CORRUPT, NULL},
        {"offset past EOF", SEC(1, IX_SEC_OFF_OFFSET), 8, file_bytes + 40960, HARMONIA_ERR_CORRUPT,
         "file truncated: section 'leaf values' ends at byte"},
        {"offset + size overflows", SEC(1, IX_SEC_OFF_OFFSET), 8, UINT64_MAX - 4095,
         HARMONIA_ERR_CORRUPT, "overflows"},
        {"size overflows", SEC(3, IX_SEC_OFF_SIZE), 8, UINT64_MAX, HARMONIA_ERR_CORRUPT, "overflows"},
        {"misaligned offset", SEC(2, IX_SEC_OFF_OFFSET), 8,
         section_field(h, 2, IX_SEC_OFF_OFFSET) + 8, HARMONIA_ERR_CORRUPT, "not a multiple of 4096"},
        {"overlapping sections", SEC(1, IX_SEC_OFF_OFFSET), 8, off0, HARMONIA_ERR_CORRUPT, NULL},
        {"section in the header page", SEC(0, IX_SEC_OFF_OFFSET), 8, 0, HARMONIA_ERR_CORRUPT, NULL},
        {"section moved one page", SEC(1, IX_SEC_OFF_OFFSET), 8, off1 + 4096, HARMONIA_ERR_CORRUPT,
         NULL},
        {"size too small", SEC(2, IX_SEC_OFF_SIZE), 8, size2 - 4, HARMONIA_ERR_CORRUPT,
         "the counts imply"},
        {"size too big", SEC(2, IX_SEC_OFF_SIZE), 8, size2 + 4, HARMONIA_ERR_CORRUPT, NULL},
        {"size zero", SEC(0, IX_SEC_OFF_SIZE), 8, 0, HARMONIA_ERR_CORRUPT, NULL},
        {"section id swapped", SEC(0, IX_SEC_OFF_ID), 4, 2, HARMONIA_ERR_CORRUPT, "id"},
        {"section reserved", SEC(3, IX_SEC_OFF_RESERVED), 4, 1, HARMONIA_ERR_CORRUPT, NULL},
    };
    apply_edits(c, edits, sizeof edits / sizeof edits[0]);
}

/* A file whose every checksum holds but whose tree breaks an invariant: the integrity checker is
 * what rejects it (only with verify). */
static void test_integrity_checker_runs_on_load(void **state)
{
    corpus *c = *state;
    unsigned char *image = copy_image(c);
    uint64_t offset = section_field(image, 0, IX_SEC_OFF_OFFSET);
    uint64_t size = section_field(image, 0, IX_SEC_OFF_SIZE);
    /* swap the first two keys of the last leaf (64-bit keys, L = 8) */
    uint64_t leaf = offset + size - 8 * 8;
    uint64_t a = get_u64(image + leaf), b = get_u64(image + leaf + 8);
    assert_true(a < b);
    put_u64(image + leaf, b);
    put_u64(image + leaf + 8, a);
    set_section_field(image, 0, IX_SEC_OFF_CHECKSUM, XXH3_64bits(image + offset, size));
    fix_header_checksum(image);
    expect_image_fails(c, image, c->size, true, HARMONIA_ERR_CORRUPT, "integrity check failed");
    /* a key count that the header alone cannot refute (it fits the leaves) */
    memcpy(image, c->image, c->size);
    put_u64(image + IX_OFF_N_KEYS, c->p.count - 1);
    fix_header_checksum(image);
    expect_image_fails(c, image, c->size, true, HARMONIA_ERR_CORRUPT, "integrity check failed");
    free(image);
}

static void test_random_mutations_never_crash(void **state)
{
    corpus *big = *state;
    (void)big;
    /* a small file, so that thousands of loads stay fast */
    char *dir = make_temp_dir();
    char *path = join(dir, "small.hm");
    char *damaged = join(dir, "fuzz.hm");
    pairs p = make_pairs(32, 300, true);
    harmonia_tree *tree = build_tree(&p, 8, 8);
    assert_int_equal(harmonia_save(tree, path), HARMONIA_OK);
    size_t size;
    unsigned char *good = read_whole(path, &size);
    unsigned char *image = malloc(size);
    assert_non_null(image);
    rng_state = 0xC0FFEE;
    /* HARMONIA_FUZZ_ITERATIONS=N runs a longer campaign by hand */
    const char *env = getenv("HARMONIA_FUZZ_ITERATIONS");
    int iterations = env ? atoi(env) : 4000;
    int rejected = 0, accepted = 0;
    for (int iteration = 0; iteration < iterations; iteration++) {
        memcpy(image, good, size);
        int bytes = 1 + (int)(rng_next() % 4);
        bool header_touched = false;
        for (int k = 0; k < bytes; k++) {
            uint64_t r = rng_next();
            size_t at = (r & 3) != 0 ? (size_t)((r >> 8) % IX_OFF_HEADER_CHECKSUM)
                                     : (size_t)((r >> 8) % size);
            unsigned char flip = (unsigned char)(1 + (r >> 40) % 255);
            image[at] ^= flip;
            header_touched |= at < IX_OFF_HEADER_CHECKSUM;
        }
        if (header_touched && rng_next() % 8 != 0)
            fix_header_checksum(image);
        size_t length = size;
        if (rng_next() % 16 == 0)
            length = (size_t)(rng_next() % size);
        write_whole(damaged, image, length);
        bool verify = rng_next() % 4 != 0;
        harmonia_load_config config;
        harmonia_load_config_init(&config);
        config.verify = verify;
        harmonia_tree *loaded = NULL;
        harmonia_status s = harmonia_load(damaged, &config, &loaded);
        if (s != HARMONIA_OK) {
            assert_null(loaded);
            assert_true(harmonia_last_error(NULL)[0] != '\0');
            rejected++;
            continue;
        }
        /* Only a change the format does not constrain (tree version, NTG choice) can load; with
         * verify off, also changed section contents, which are not queried here. */
        accepted++;
        if (verify) {
            if (harmonia_check(loaded) != HARMONIA_OK)
                fail_msg("iteration %d loaded a tree that fails its check: %s", iteration,
                         harmonia_last_error(loaded));
            harmonia_tree_info a, b;
            assert_int_equal(harmonia_info(tree, &a), HARMONIA_OK);
            assert_int_equal(harmonia_info(loaded, &b), HARMONIA_OK);
            assert_int_equal(a.key_count, b.key_count);
            assert_int_equal(a.height, b.height);
            uint32_t *values = malloc(4 * p.count);
            uint8_t *found = malloc(p.count);
            assert_non_null(values);
            assert_non_null(found);
            harmonia_query_config q = cpu_config();
            assert_int_equal(harmonia_lookup(loaded, &q, p.keys, p.count, values, found),
                             HARMONIA_OK);
            for (uint64_t i = 0; i < p.count; i++) {
                assert_true(found[i]);
                assert_int_equal(values[i], p.expected[i]);
            }
            free(values);
            free(found);
        }
        harmonia_free(loaded);
    }
    print_message("random mutations: %d rejected, %d accepted (header fields without constraint "
                  "or unverified section bytes)\n",
                  rejected, accepted);
    assert_true(rejected >= iterations * 3 / 4);
    free(good);
    free(image);
    harmonia_free(tree);
    free_pairs(&p);
    free(path);
    free(damaged);
    remove_temp_dir(dir);
}


/* Random changes inside the sections with every checksum fixed up: what reaches the integrity
 * checker is garbage it must reject in words, or a different but valid tree (e.g. changed leaf
 * values) that then passes harmonia_check and answers queries without crashing. */
static void test_checksummed_garbage_reaches_the_checker(void **state)
{
    (void)state;
    char *dir = make_temp_dir();
    char *path = join(dir, "small.hm");
    char *damaged = join(dir, "garbage.hm");
    pairs p = make_pairs(64, 500, true);
    harmonia_tree *tree = build_tree(&p, 8, 8);
    assert_int_equal(harmonia_save(tree, path), HARMONIA_OK);
    size_t size;
    unsigned char *good = read_whole(path, &size);
    unsigned char *image = malloc(size);
    assert_non_null(image);
    const char *env = getenv("HARMONIA_FUZZ_ITERATIONS");
    int iterations = env ? atoi(env) : 3000;
    rng_state = 0xBADC0DE;
    int rejected = 0, accepted = 0;
    uint64_t *values = malloc(8 * p.count), *keys_out = malloc(8 * p.count);
    uint8_t *found = malloc(p.count);
    assert_true(values && keys_out && found);
    for (int iteration = 0; iteration < iterations; iteration++) {
        memcpy(image, good, size);
        int bytes = 1 + (int)(rng_next() % 3);
        for (int k = 0; k < bytes; k++) {
            unsigned s = (unsigned)(rng_next() % IX_SECTION_COUNT);
            uint64_t offset = section_field(good, s, IX_SEC_OFF_OFFSET);
            uint64_t section_size = section_field(good, s, IX_SEC_OFF_SIZE);
            uint64_t r = rng_next();
            uint64_t at = offset + r % section_size;
            /* small changes to whole words keep values plausible; random bytes do not */
            if ((r >> 60) & 1)
                image[at] ^= (unsigned char)(1 + (r >> 40) % 255);
            else
                image[at] += (r >> 61) & 1 ? 1 : 0xFF;
        }
        for (unsigned s = 0; s < IX_SECTION_COUNT; s++) {
            uint64_t offset = section_field(image, s, IX_SEC_OFF_OFFSET);
            uint64_t section_size = section_field(image, s, IX_SEC_OFF_SIZE);
            set_section_field(image, s, IX_SEC_OFF_CHECKSUM,
                              XXH3_64bits(image + offset, section_size));
        }
        fix_header_checksum(image);
        write_whole(damaged, image, size);
        harmonia_tree *loaded = NULL;
        harmonia_status s = harmonia_load(damaged, NULL, &loaded);
        if (s != HARMONIA_OK) {
            assert_int_equal(s, HARMONIA_ERR_CORRUPT);
            assert_non_null(strstr(harmonia_last_error(NULL), "integrity check failed"));
            rejected++;
            continue;
        }
        accepted++;
        if (harmonia_check(loaded) != HARMONIA_OK)
            fail_msg("iteration %d loaded a tree that fails its check: %s", iteration,
                     harmonia_last_error(loaded));
        harmonia_query_config q = cpu_config();
        assert_int_equal(harmonia_lookup(loaded, &q, p.keys, p.count, values, found), HARMONIA_OK);
        assert_int_equal(
            harmonia_lower_bound(loaded, &q, p.keys, p.count, keys_out, values, found),
            HARMONIA_OK);
        harmonia_free(loaded);
    }
    print_message("checksummed garbage: %d rejected by the integrity checker, %d valid trees\n",
                  rejected, accepted);
    assert_true(rejected > 0);
    free(values);
    free(keys_out);
    free(found);
    free(good);
    free(image);
    harmonia_free(tree);
    free_pairs(&p);
    free(path);
    free(damaged);
    remove_temp_dir(dir);
}

/* ------------------------------------------------------------------------------------------- */
/* Forged files: valid checksums over an invalid tree                                         */
/* ------------------------------------------------------------------------------------------- */

/* Recomputes every section checksum and the header checksum of an image. */
static void refresh_checksums(unsigned char *image)
{
    for (unsigned s = 0; s < IX_SECTION_COUNT; s++) {
        uint64_t offset = section_field(image, s, IX_SEC_OFF_OFFSET);
        uint64_t size = section_field(image, s, IX_SEC_OFF_SIZE);
        set_section_field(image, s, IX_SEC_OFF_CHECKSUM, XXH3_64bits(image + offset, size));
    }
    fix_header_checksum(image);
}

static unsigned char *section_at(unsigned char *image, unsigned section)
{
    return image + section_field(image, section, IX_SEC_OFF_OFFSET);
}

typedef struct forged_shape {
    uint64_t n_internal, n_leaves;
    uint32_t fanout, leaf_size;
} forged_shape;

typedef struct forgery {
    const char *name;
    bool structural; /* the structure checks (always run) catch it */
    void (*forge)(unsigned char *image, const forged_shape *shape);
} forgery;

/* 64-bit keys: the key region is section 0, leaf values 1, first child 2 (uint32), leaf rank 3. */
static void forge_first_child_huge(unsigned char *image, const forged_shape *shape)
{
    (void)shape;
    put_u32(section_at(image, 2) + 4 * 1, 0x7fffffff);
}

static void forge_first_child_decreasing(unsigned char *image, const forged_shape *shape)
{
    (void)shape;
    unsigned char *fc = section_at(image, 2);
    uint32_t a = get_u32(fc + 4 * 2), b = get_u32(fc + 4 * 3);
    put_u32(fc + 4 * 2, b);
    put_u32(fc + 4 * 3, a);
}

static void forge_first_child_end(unsigned char *image, const forged_shape *shape)
{
    put_u32(section_at(image, 2) + 4 * shape->n_internal, 0xfffffff0u);
}

static void forge_leaf_rank_huge(unsigned char *image, const forged_shape *shape)
{
    (void)shape;
    put_u64(section_at(image, 3) + 8 * 5, (uint64_t)1 << 62);
}

static void forge_leaf_rank_decreasing(unsigned char *image, const forged_shape *shape)
{
    (void)shape;
    unsigned char *r = section_at(image, 3);
    uint64_t a = get_u64(r + 8 * 3), b = get_u64(r + 8 * 4);
    put_u64(r + 8 * 3, b);
    put_u64(r + 8 * 4, a);
}

static void forge_leaf_overfull(unsigned char *image, const forged_shape *shape)
{
    unsigned char *r = section_at(image, 3);
    put_u64(r + 8 * 1, get_u64(r) + shape->leaf_size + 1);
}

static void forge_level_sizes(unsigned char *image, const forged_shape *shape)
{
    (void)shape; /* a level one node longer, the next one shorter: the header alone agrees */
    put_u64(image + IX_OFF_LEVEL_START + 8 * 2, get_u64(image + IX_OFF_LEVEL_START + 8 * 2) + 1);
}

static unsigned char *leaf_keys(unsigned char *image, const forged_shape *shape, uint64_t leaf)
{
    return section_at(image, 0) + 8 * (shape->n_internal * shape->fanout + leaf * shape->leaf_size);
}

static void forge_leaf_unsorted(unsigned char *image, const forged_shape *shape)
{
    unsigned char *k = leaf_keys(image, shape, 10);
    uint64_t a = get_u64(k), b = get_u64(k + 8);
    put_u64(k, b);
    put_u64(k + 8, a);
}

static void forge_leaves_out_of_order(unsigned char *image, const forged_shape *shape)
{
    for (uint64_t leaf = 20; leaf < 30; leaf++) /* ten leaves start below everything */
        put_u64(leaf_keys(image, shape, leaf), leaf);
    put_u64(leaf_keys(image, shape, shape->n_leaves - 1), 0); /* and the last leaf too */
}

static void forge_padding_below_max(unsigned char *image, const forged_shape *shape)
{
    for (uint64_t leaf = 0; leaf < shape->n_leaves; leaf += 7) /* the last slot of many leaves */
        put_u64(leaf_keys(image, shape, leaf) + 8 * (shape->leaf_size - 1), 1000 + leaf);
    put_u64(leaf_keys(image, shape, shape->n_leaves - 1) + 8 * (shape->leaf_size - 1), 5);
}

static void forge_separators_reversed(unsigned char *image, const forged_shape *shape)
{
    unsigned char *keys = section_at(image, 0);
    for (uint64_t node = 0; node < shape->n_internal; node++) {
        unsigned char *n = keys + 8 * node * shape->fanout;
        for (uint32_t i = 0; i < shape->fanout / 2; i++) {
            uint64_t a = get_u64(n + 8 * i), b = get_u64(n + 8 * (shape->fanout - 1 - i));
            put_u64(n + 8 * i, b);
            put_u64(n + 8 * (shape->fanout - 1 - i), a);
        }
    }
}

static void forge_separators_zero(unsigned char *image, const forged_shape *shape)
{
    memset(section_at(image, 0), 0, 8 * shape->n_internal * shape->fanout);
}

static void forge_all_keys_random(unsigned char *image, const forged_shape *shape)
{
    unsigned char *keys = section_at(image, 0);
    uint64_t slots = shape->n_internal * shape->fanout + shape->n_leaves * shape->leaf_size;
    for (uint64_t i = 0; i < slots; i++)
        put_u64(keys + 8 * i, rng_next() % 4096);
}

/* Every CPU reader of a tree on queries around its keys: no crash, no read outside the arrays
 * (ASan in the sanitizer build), whatever the answers. */
static void query_everything(harmonia_tree *tree)
{
    enum { M = 2048 };
    uint64_t *queries = malloc(8 * M), *hi = malloc(8 * M), *values = malloc(8 * M),
             *keys_out = malloc(8 * M), *offsets = malloc(8 * (M + 1));
    uint8_t *found = malloc(M);
    assert_true(queries && hi && values && keys_out && offsets && found);
    for (uint64_t i = 0; i < M; i++) {
        uint64_t r = rng_next();
        queries[i] = i < 64 ? (i < 32 ? i : UINT64_MAX - (i - 32)) : r % (1u << 16);
        hi[i] = i % 5 == 0 ? UINT64_MAX : queries[i] + (rng_next() % 3000);
    }
    harmonia_query_config q = cpu_config();
    assert_int_equal(harmonia_lookup(tree, &q, queries, M, values, found), HARMONIA_OK);
    assert_int_equal(harmonia_lower_bound(tree, &q, queries, M, keys_out, values, found), HARMONIA_OK);
    assert_int_equal(harmonia_range_count(tree, &q, queries, hi, M, offsets), HARMONIA_OK);
    harmonia_tree_info info;
    assert_int_equal(harmonia_info(tree, &info), HARMONIA_OK);
    for (uint64_t i = 0; i < M; i++)
        assert_true(offsets[i] <= info.key_count);
    assert_int_equal(harmonia_range_collect(tree, &q, queries, hi, M, offsets, NULL, NULL), HARMONIA_OK);
    uint64_t total = offsets[M];
    assert_true(total <= (uint64_t)M * info.key_count);
    uint64_t *pair_keys = malloc(8 * (total ? total : 1)), *pair_values = malloc(8 * (total ? total : 1));
    assert_true(pair_keys && pair_values);
    assert_int_equal(harmonia_range_collect(tree, &q, queries, hi, M, offsets, pair_keys, pair_values),
                     HARMONIA_OK);
    assert_int_equal(harmonia_sample_keys(tree, 100, 1, queries), HARMONIA_OK);
    harmonia_ntg_model_result model;
    assert_int_equal(harmonia_ntg_model(tree, NULL, queries, M, &model), HARMONIA_OK);
    free(pair_keys);
    free(pair_values);
    free(queries);
    free(hi);
    free(values);
    free(keys_out);
    free(offsets);
    free(found);
}

/* Files whose every checksum holds over a tree that breaks an invariant. With verification the
 * loader rejects each in words. Without it, the structure checks (which always run) reject what
 * would make a reader leave the arrays (first-child, leaf-rank and level damage); what they let
 * through (keys, separators and padding out of order) answers queries without crashing, and an
 * update, a save and a check of it refuse with CORRUPT instead of laundering it. */
static void test_forged_checksummed_files(void **state)
{
    (void)state;
    char *dir = make_temp_dir();
    char *good = join(dir, "good.hm"), *forged = join(dir, "forged.hm"), *out = join(dir, "out.hm");
    /* 64-bit keys, F = L = 8, leaves 60 % full (padding in every leaf): four levels */
    pairs p = make_pairs(64, 3000, true);
    harmonia_build_config config;
    harmonia_build_config_init(&config);
    config.key_bits = 64;
    config.fanout = 8;
    config.leaf_size = 8;
    config.leaf_fill = 0.6;
    harmonia_tree *tree = NULL;
    assert_int_equal(harmonia_build(&config, p.keys, p.values, p.count, &tree), HARMONIA_OK);
    harmonia_tree_info info;
    assert_int_equal(harmonia_info(tree, &info), HARMONIA_OK);
    assert_true(info.height >= 4);
    forged_shape shape = {info.internal_nodes, info.leaf_count, info.fanout, info.leaf_size};
    assert_int_equal(harmonia_save(tree, good), HARMONIA_OK);
    size_t size;
    unsigned char *image = read_whole(good, &size);
    unsigned char *copy = malloc(size);
    assert_non_null(copy);

    static const forgery forgeries[] = {
        {"first_child entry 0x7fffffff", true, forge_first_child_huge},
        {"first_child not increasing", true, forge_first_child_decreasing},
        {"first_child past the last node", true, forge_first_child_end},
        {"leaf rank 2^62", true, forge_leaf_rank_huge},
        {"leaf ranks not increasing", true, forge_leaf_rank_decreasing},
        {"a leaf with L + 1 keys", true, forge_leaf_overfull},
        {"level sizes off by one", true, forge_level_sizes},
        {"unsorted keys in a leaf", false, forge_leaf_unsorted},
        {"leaves out of order", false, forge_leaves_out_of_order},
        {"leaf padding below the maximum key", false, forge_padding_below_max},
        {"separators reversed", false, forge_separators_reversed},
        {"separators all zero", false, forge_separators_zero},
        {"every key random", false, forge_all_keys_random},
    };
    rng_state = 0xF0E6ED;
    for (size_t i = 0; i < sizeof forgeries / sizeof forgeries[0]; i++) {
        const forgery *f = &forgeries[i];
        memcpy(copy, image, size);
        f->forge(copy, &shape);
        refresh_checksums(copy);
        write_whole(forged, copy, size);
        print_message("forged: %s\n", f->name);
        expect_load_fails(forged, true, HARMONIA_ERR_CORRUPT, "integrity check failed");
        if (f->structural) {
            expect_load_fails(forged, false, HARMONIA_ERR_CORRUPT, "integrity check failed");
            continue;
        }
        harmonia_load_config load_config;
        harmonia_load_config_init(&load_config);
        load_config.verify = false;
        harmonia_tree *loaded = NULL;
        if (harmonia_load(forged, &load_config, &loaded) != HARMONIA_OK)
            fail_msg("%s: the unverified load failed: %s", f->name, harmonia_last_error(NULL));
        query_everything(loaded);
        uint8_t kind = HARMONIA_OP_UPSERT;
        uint64_t key = 12345, value = 1;
        assert_int_equal(harmonia_update(loaded, NULL, &kind, &key, &value, 1, NULL), HARMONIA_ERR_CORRUPT);
        assert_int_equal(harmonia_save(loaded, out), HARMONIA_ERR_CORRUPT);
        assert_int_equal(harmonia_save(loaded, forged), HARMONIA_ERR_CORRUPT);
        struct stat st;
        assert_int_equal(stat(out, &st), -1);
        assert_int_equal(harmonia_check(loaded), HARMONIA_ERR_CORRUPT);
        query_everything(loaded); /* still usable after the refusals */
        harmonia_free(loaded);
        size_t after_size;
        unsigned char *after = read_whole(forged, &after_size);
        assert_int_equal(after_size, size);
        assert_memory_equal(after, copy, size);
        free(after);
    }
    free(image);
    free(copy);
    harmonia_free(tree);
    free_pairs(&p);
    free(good);
    free(forged);
    free(out);
    remove_temp_dir(dir);
}

/* ------------------------------------------------------------------------------------------- */
/* Progress                                                                                    */
/* ------------------------------------------------------------------------------------------- */

typedef struct progress_log {
    int calls;
    int bad;
    bool saw_done;
} progress_log;

static void record_progress(void *arg, const char *phase, double fraction)
{
    progress_log *log = arg;
    log->calls++;
    if (phase == NULL || phase[0] == '\0' || !(fraction >= 0.0 && fraction <= 1.0))
        log->bad++;
    if (fraction == 1.0)
        log->saw_done = true;
}

static void test_load_reports_progress(void **state)
{
    corpus *c = *state;
    progress_log log = {0, 0, false};
    harmonia_load_config config;
    harmonia_load_config_init(&config);
    assert_true(config.verify);
    config.progress = record_progress;
    config.progress_arg = &log;
    harmonia_tree *loaded = NULL;
    assert_int_equal(harmonia_load(c->good_path, &config, &loaded), HARMONIA_OK);
    assert_true(log.calls >= 2);
    assert_int_equal(log.bad, 0);
    assert_true(log.saw_done);
    harmonia_free(loaded);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trip_matrix),
        cmocka_unit_test(test_version_and_ntg_choice_are_kept),
        cmocka_unit_test(test_file_layout_is_page_aligned),
        cmocka_unit_test(test_save_replaces_existing_file),
        cmocka_unit_test(test_save_over_the_mapped_file_it_was_loaded_from),
        cmocka_unit_test(test_save_to_missing_folder_fails_cleanly),
        cmocka_unit_test(test_save_onto_a_folder_fails_and_leaves_no_temp_file),
        cmocka_unit_test(test_save_and_load_reject_null_arguments),
        cmocka_unit_test(test_load_rejects_missing_empty_folder_and_foreign_files),
        cmocka_unit_test_setup_teardown(test_valid_corpus_file_loads, corpus_setup,
                                        corpus_teardown),
        cmocka_unit_test_setup_teardown(test_truncations_are_rejected, corpus_setup,
                                        corpus_teardown),
        cmocka_unit_test_setup_teardown(test_flipped_bytes_are_rejected, corpus_setup,
                                        corpus_teardown),
        cmocka_unit_test_setup_teardown(test_wrong_magic_and_version, corpus_setup,
                                        corpus_teardown),
        cmocka_unit_test_setup_teardown(test_absurd_header_fields_are_rejected, corpus_setup,
                                        corpus_teardown),
        cmocka_unit_test_setup_teardown(test_integrity_checker_runs_on_load, corpus_setup,
                                        corpus_teardown),
        cmocka_unit_test_setup_teardown(test_random_mutations_never_crash, corpus_setup,
                                        corpus_teardown),
        cmocka_unit_test(test_checksummed_garbage_reaches_the_checker),
        cmocka_unit_test(test_forged_checksummed_files),
        cmocka_unit_test_setup_teardown(test_load_reports_progress, corpus_setup,
                                        corpus_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
