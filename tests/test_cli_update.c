/* test_cli_update.c — runs the real `harmonia` binary (its path is argv[1]) through `generate ops`
 * and `update`, and checks every updated index against a sorted-array model to which the test
 * applies the same operations file itself; also the errors (file:line, index left byte for byte
 * as it was). Like test_cli.c it does not link the library: it sees only what a user sees. */
#include "tests/cli_fixture.h"

static int setup(void **state) { return fixture_setup(state, "harmonia-cli-update"); }

/* snapshot, take_snapshot, assert_unchanged: cli_fixture.h */

/* ---- the model: sorted pairs, and the operations applied to them in file order --------------- */

/* pair, model (sorted by key, distinct here), compare_pairs, model_lower_bound: cli_fixture.h */

enum { OP_INSERT = 0, OP_UPDATE = 1, OP_UPSERT = 2, OP_DELETE = 3 };

typedef struct op {
    int kind;
    uint64_t key, value;
    unsigned line; /* text files: the line; binary: the record */
} op;

typedef struct op_list {
    op *ops;
    size_t n;
} op_list;

static int compare_keys(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static model model_copy(const model *m)
{
    model c = {malloc((m->n + 1) * sizeof(pair)), m->n, m->n + 1};
    assert_non_null(c.pairs);
    memcpy(c.pairs, m->pairs, m->n * sizeof(pair));
    return c;
}

/* Reads an operations file as the test understands the format (text: "+ k v", "= k v", "* k v",
 * "- k", comments; binary: kind,key,value words). */
static op_list read_ops(const char *path, int bits, bool text)
{
    op_list list = {NULL, 0};
    size_t capacity = 0;
    if (text) {
        FILE *file = fopen(path, "r");
        assert_non_null(file);
        char line[256];
        unsigned line_no = 0;
        while (fgets(line, sizeof line, file) != NULL) {
            line_no++;
            if (line[0] == '#' || line[0] == '\n')
                continue;
            if (list.n == capacity) {
                capacity = capacity ? capacity * 2 : 1024;
                list.ops = realloc(list.ops, capacity * sizeof(op));
                assert_non_null(list.ops);
            }
            const char *symbols = "+=*-";
            const char *at = strchr(symbols, line[0]);
            assert_non_null(at);
            op o = {(int)(at - symbols), 0, 0, line_no};
            unsigned long long k, v = 0;
            if (o.kind == OP_DELETE)
                assert_int_equal(sscanf(line + 1, "%llu", &k), 1);
            else
                assert_int_equal(sscanf(line + 1, "%llu %llu", &k, &v), 2);
            o.key = k;
            o.value = v;
            list.ops[list.n++] = o;
        }
        fclose(file);
    } else {
        size_t size;
        char *data = read_all(path, &size);
        assert_non_null(data);
        size_t record = 3 * (size_t)bits / 8;
        assert_int_equal(size % record, 0);
        list.n = size / record;
        list.ops = malloc((list.n + 1) * sizeof(op));
        assert_non_null(list.ops);
        for (size_t i = 0; i < list.n; i++) {
            list.ops[i] = (op){(int)get_word(data, bits, 3 * i), get_word(data, bits, 3 * i + 1),
                               get_word(data, bits, 3 * i + 2), (unsigned)i};
            assert_true(list.ops[i].kind >= 0 && list.ops[i].kind <= 3);
        }
        free(data);
    }
    return list;
}

typedef struct expected_stats {
    size_t inserted, updated, deleted, missing;
} expected_stats;

/* Applies ops to m in order under the policies. Returns the index of the first failing
 * operation (m is then half-applied: throw it away), or SIZE_MAX when all applied. */
static size_t model_apply(model *m, const op_list *ops, bool insert_upserts, bool update_skips,
                          expected_stats *stats)
{
    memset(stats, 0, sizeof *stats);
    for (size_t i = 0; i < ops->n; i++) {
        const op *o = &ops->ops[i];
        size_t at = model_lower_bound(m, o->key);
        bool present = at < m->n && m->pairs[at].key == o->key;
        int kind = o->kind;
        if (kind == OP_INSERT && present) {
            if (!insert_upserts)
                return i;
            kind = OP_UPSERT;
        }
        if (kind == OP_UPDATE && !present) {
            if (!update_skips)
                return i;
            stats->missing++;
            continue;
        }
        if (kind == OP_DELETE) {
            if (!present) {
                stats->missing++;
                continue;
            }
            memmove(&m->pairs[at], &m->pairs[at + 1], (m->n - at - 1) * sizeof(pair));
            m->n--;
            stats->deleted++;
            continue;
        }
        if (present) { /* update, upsert, insert under upsert */
            m->pairs[at].value = o->value;
            stats->updated++;
            continue;
        }
        if (m->n == m->capacity) {
            m->capacity = m->capacity * 2 + 16;
            m->pairs = realloc(m->pairs, m->capacity * sizeof(pair));
            assert_non_null(m->pairs);
        }
        memmove(&m->pairs[at + 1], &m->pairs[at], (m->n - at) * sizeof(pair));
        m->pairs[at] = (pair){o->key, o->value};
        m->n++;
        stats->inserted++;
    }
    return SIZE_MAX;
}

/* Checks an index against the model: `check`, every pair by a range --collect over the whole
 * domain, and a lookup of every key the operations named (present or deleted). */
static void verify_index(fixture *f, const char *index, const model *m, const op_list *ops,
                         int bits)
{
    run(f, "check", "--index", index, NULL);
    expect_ok(f);

    const char *ranges = in_dir(f, "all.txt"), *pairs = in_dir(f, "all-pairs.txt");
    write_all(ranges, bits == 32 ? "0,4294967295\n" : "0,18446744073709551615\n");
    run(f, "range", "--index", index, "--ranges", ranges, "--collect", "--out", pairs, NULL);
    expect_ok(f);
    FILE *file = fopen(pairs, "r");
    assert_non_null(file);
    char line[256];
    size_t next = 0;
    bool header = false;
    while (fgets(line, sizeof line, file) != NULL) {
        if (line[0] == '#') {
            unsigned long long count;
            assert_non_null(strstr(line, "]: "));
            assert_int_equal(sscanf(strstr(line, "]: ") + 3, "%llu", &count), 1);
            assert_int_equal(count, m->n);
            header = true;
            continue;
        }
        unsigned long long k, v;
        assert_int_equal(sscanf(line, "%llu\t%llu", &k, &v), 2);
        assert_true(next < m->n);
        assert_int_equal(k, m->pairs[next].key);
        assert_int_equal(v, m->pairs[next].value);
        next++;
    }
    fclose(file);
    assert_true(header);
    assert_int_equal(next, m->n);

    const char *queries = in_dir(f, "op-keys.txt"), *results = in_dir(f, "op-results.txt");
    file = fopen(queries, "w");
    assert_non_null(file);
    for (size_t i = 0; i < ops->n; i++)
        fprintf(file, "%llu\n", (unsigned long long)ops->ops[i].key);
    fclose(file);
    run(f, "lookup", "--index", index, "--queries", queries, "--out", results, NULL);
    expect_ok(f);
    file = fopen(results, "r");
    assert_non_null(file);
    size_t i = 0;
    while (fgets(line, sizeof line, file) != NULL) {
        assert_true(i < ops->n);
        size_t at = model_lower_bound(m, ops->ops[i].key);
        unsigned long long k, v;
        if (at < m->n && m->pairs[at].key == ops->ops[i].key) {
            assert_int_equal(sscanf(line, "%llu\t%llu", &k, &v), 2);
            assert_int_equal(v, m->pairs[at].value);
        } else {
            assert_int_equal(sscanf(line, "%llu\t", &k), 1);
            assert_non_null(strstr(line, "NOT FOUND"));
        }
        assert_int_equal(k, ops->ops[i].key);
        i++;
    }
    fclose(file);
    assert_int_equal(i, ops->n);
}

/* Writes the model's pairs as a binary key,value file (for the next `generate ops`). */
static void write_model(const char *path, const model *m, int bits)
{
    size_t width = (size_t)bits / 8;
    char *data = malloc(m->n * 2 * width + 1);
    assert_non_null(data);
    for (size_t i = 0; i < m->n; i++) {
        if (bits == 32) {
            uint32_t k = (uint32_t)m->pairs[i].key, v = (uint32_t)m->pairs[i].value;
            memcpy(data + i * 8, &k, 4);
            memcpy(data + i * 8 + 4, &v, 4);
        } else {
            memcpy(data + i * 16, &m->pairs[i].key, 8);
            memcpy(data + i * 16 + 8, &m->pairs[i].value, 8);
        }
    }
    write_bytes(path, data, m->n * 2 * width);
    free(data);
}

/* The number after "\"name\":" in a JSON text. */
static unsigned long long json_number(const char *text, const char *name)
{
    char key[64];
    snprintf(key, sizeof key, "\"%s\":", name);
    const char *at = strstr(text, key);
    if (at == NULL)
        fprintf(stderr, "no %s in %s\n", key, text);
    assert_non_null(at);
    unsigned long long value;
    assert_int_equal(sscanf(at + strlen(key), "%llu", &value), 1);
    return value;
}

/* ---- tests --------------------------------------------------------------------------------- */

/* Each mix, binary ops, 64-bit keys: generate -> update --out -> the model; the input index is
 * left as it was. */
static void test_each_mix(void **state)
{
    fixture *f = *state;
    const char *keys = in_dir(f, "keys.bin"), *base = in_dir(f, "base.idx");
    run(f, "generate", "keys", "--count", "20000", "--seed", "3", "--out", keys, NULL);
    expect_ok(f);
    run(f, "build", "--input", keys, "--out", base, NULL);
    expect_ok(f);
    snapshot before = take_snapshot(base);
    model original = model_from_binary(keys, 64);
    const char *mixes[] = {"paper", "insert", "delete", "mixed"};
    for (int mix = 0; mix < 4; mix++) {
        const char *ops_path = in_dir(f, "ops.bin"), *updated = in_dir(f, "updated.idx");
        run(f, "generate", "ops", "--keys", keys, "--count", "4000", "--mix", mixes[mix],
            "--seed", "11", "--out", ops_path, NULL);
        expect_ok(f);
        bool mixed = mix == 3;
        if (mixed)
            run(f, "update", "--index", base, "--ops", ops_path, "--out", updated,
                "--insert-existing", "upsert", "--update-missing", "skip", "--json", NULL);
        else
            run(f, "update", "--index", base, "--ops", ops_path, "--out", updated, "--json",
                NULL);
        expect_ok(f);
        assert_json_object(f->out);
        assert_unchanged(&before, base);

        op_list ops = read_ops(ops_path, 64, false);
        assert_int_equal(ops.n, 4000);
        model m = model_copy(&original);
        expected_stats expected;
        assert_int_equal(model_apply(&m, &ops, mixed, mixed, &expected), SIZE_MAX);
        assert_int_equal(json_number(f->out, "operations"), 4000);
        assert_int_equal(json_number(f->out, "keys_after"), m.n);
        assert_int_equal(json_number(f->out, "inserted"), expected.inserted);
        assert_int_equal(json_number(f->out, "deleted"), expected.deleted);
        assert_int_equal(json_number(f->out, "missing"), expected.missing);
        assert_int_equal(json_number(f->out, "updated"), expected.updated);
        assert_int_equal(json_number(f->out, "applied"),
                         expected.inserted + expected.updated + expected.deleted);
        if (mix == 0) {
            assert_int_equal(expected.inserted, 200);
            assert_int_equal(expected.updated, 3800);
        } else if (mix == 1) {
            assert_int_equal(expected.inserted, 4000);
        } else if (mix == 2) {
            assert_int_equal(expected.deleted, 4000);
        } else {
            assert_true(expected.inserted > 0 && expected.updated > 0 && expected.deleted > 0);
            assert_true(expected.missing > 0);
            assert_true(json_number(f->out, "duplicates") > 0);
        }
        verify_index(f, updated, &m, &ops, 64);
        free(ops.ops);
        free(m.pairs);
    }
    free(original.pairs);
    free(before.data);
}

/* 32-bit keys, text ops, updated in place twice (the second batch against the first's result);
 * the table names each statistic. */
static void test_text_in_place(void **state)
{
    fixture *f = *state;
    const char *keys = in_dir(f, "keys.txt"), *index = in_dir(f, "k.idx");
    run(f, "generate", "keys", "--count", "5000", "--bits", "32", "--dist", "normal",
        "--values", "random", "--out", keys, NULL);
    expect_ok(f);
    run(f, "build", "--input", keys, "--bits", "32", "--fanout", "8", "--leaf-size", "8",
        "--out", index, NULL);
    expect_ok(f);
    model m = model_from_text(keys);
    assert_int_equal(m.n, 5000);

    const char *ops_path = in_dir(f, "ops.txt");
    run(f, "generate", "ops", "--keys", keys, "--bits", "32", "--count", "3000", "--mix",
        "mixed", "--seed", "5", "--out", ops_path, NULL);
    expect_ok(f);
    op_list ops = read_ops(ops_path, 32, true);
    assert_int_equal(ops.n, 3000);
    expected_stats expected;
    assert_int_equal(model_apply(&m, &ops, true, true, &expected), SIZE_MAX);
    run(f, "update", "--index", index, "--ops", ops_path, "--insert-existing", "upsert",
        "--update-missing", "skip", "--threads", "2", NULL);
    expect_ok(f);
    const char *rows[] = {"operations", "applied", "inserted", "updated", "deleted", "missing",
                          "duplicates", "leaves touched", "leaves split", "leaves removed",
                          "auxiliary nodes", "shape changed", "sort", "apply", "relayout",
                          "upload", "save"};
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
        expect_stdout(f, rows[i]);
    verify_index(f, index, &m, &ops, 32);
    free(ops.ops);

    /* the second batch, drawn from the keys the index holds now */
    const char *now = in_dir(f, "now.bin"), *ops2 = in_dir(f, "ops2.txt");
    write_model(now, &m, 32);
    run(f, "generate", "ops", "--keys", now, "--bits", "32", "--count", "1000", "--mix",
        "paper", "--format", "text", "--out", ops2, NULL);
    expect_ok(f);
    ops = read_ops(ops2, 32, true);
    assert_int_equal(model_apply(&m, &ops, false, false, &expected), SIZE_MAX);
    run(f, "update", "--index", index, "--ops", ops2, "--split-fill", "0.5", NULL);
    expect_ok(f);
    verify_index(f, index, &m, &ops, 32);
    free(ops.ops);
    free(m.pairs);
}

/* Every malformed line is named by file:line and leaves the index as it was, --out not made. */
static void test_malformed_ops(void **state)
{
    fixture *f = *state;
    const char *pairs = in_dir(f, "pairs.txt"), *index = in_dir(f, "p.idx");
    write_all(pairs, "1,10\n2,20\n3,30\n");
    run(f, "build", "--input", pairs, "--bits", "32", "--out", index, NULL);
    expect_ok(f);
    snapshot before = take_snapshot(index);
    static const struct {
        const char *text, *where, *what;
    } cases[] = {
        {"+ 5 50\n? 6 60\n", "ops.txt:2:", "unknown operation '?'"},
        {"+ 5 50\ninsert 6 60\n", "ops.txt:2:", "unknown operation 'insert'"},
        {"# a comment\n\n+ 5\n", "ops.txt:3:", "a key but no value"},
        {"= 1 10 7\n", "ops.txt:1:", "an extra field"},
        {"- 1 10\n", "ops.txt:1:", "takes a key only, found a value too"},
        {"+ 7 70\n-\n", "ops.txt:2:", "no key"},
        {"* 4294967296 1\n", "ops.txt:1:", "does not fit in 32 bits"},
        {"+ 5 4294967296\n", "ops.txt:1:", "does not fit in 32 bits"},
        {"+ 0x 5\n", "ops.txt:1:", "'0x'"},
        {"+ -5 5\n", "ops.txt:1:", "'-5'"},
        {"+ 5, 50\n+ 6,\n", "ops.txt:2:", "empty field"},
        {"+ 5 50 # fine\n- 2 # fine\n= 3 0x1e\n* 9 9 9 9\n", "ops.txt:4:", "too many fields"},
    };
    const char *ops_path = in_dir(f, "ops.txt"), *out = in_dir(f, "out.idx");
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        write_all(ops_path, cases[i].text);
        run(f, "update", "--index", index, "--ops", ops_path, "--out", out, NULL);
        expect_error(f, 1, cases[i].where);
        expect_stderr(f, cases[i].what);
        expect_stderr(f, "harmonia update: ");
        assert_false(file_exists(out));
        run(f, "update", "--index", index, "--ops", ops_path, NULL);
        expect_error(f, 1, cases[i].where);
        assert_unchanged(&before, index);
    }
    /* binary: an unknown kind names the record, a short file its size */
    const char *ops_bin = in_dir(f, "ops.bin");
    uint32_t records[6] = {0, 5, 50, 4, 6, 60};
    write_bytes(ops_bin, records, sizeof records);
    run(f, "update", "--index", index, "--ops", ops_bin, NULL);
    expect_error(f, 1, "ops.bin: record 1 (byte offset 12)");
    expect_stderr(f, "kind 4");
    write_bytes(ops_bin, records, 10);
    run(f, "update", "--index", index, "--ops", ops_bin, NULL);
    expect_error(f, 1, "ops.bin: size 10 bytes");
    assert_unchanged(&before, index);
    /* the good lines of the last case apply: comments, hex, commas */
    write_all(ops_path, "+ 5, 50 # fine\n- 2 # fine\n\n= 3 0x1e\n*9 90\n");
    run(f, "update", "--index", index, "--ops", ops_path, NULL);
    expect_ok(f);
    const char *queries = in_dir(f, "q.txt");
    write_all(queries, "1\n2\n3\n5\n9\n");
    run(f, "lookup", "--index", index, "--queries", queries, NULL);
    expect_ok(f);
    assert_string_equal(f->out, "1\t10\n2\tNOT FOUND\n3\t30\n5\t50\n9\t90\n");
    free(before.data);
}

/* Strict policies: an insert of a present key and an update of a missing one fail, named by
 * line and operation index, the index unchanged; the lenient policies apply the same files. */
static void test_strict_policies(void **state)
{
    fixture *f = *state;
    const char *pairs = in_dir(f, "pairs.txt"), *index = in_dir(f, "p.idx");
    write_all(pairs, "10,1\n20,2\n30,3\n");
    run(f, "build", "--input", pairs, "--out", index, NULL);
    expect_ok(f);
    snapshot before = take_snapshot(index);
    const char *ops_path = in_dir(f, "ops.txt"), *queries = in_dir(f, "q.txt");
    write_all(queries, "10\n15\n20\n25\n40\n");

    write_all(ops_path, "# insert 20, present\n+ 15 150\n\n+ 20 200\n- 30\n");
    run(f, "update", "--index", index, "--ops", ops_path, NULL);
    expect_error(f, 1, "ops.txt:4:");
    expect_stderr(f, "operation 1");
    expect_stderr(f, "--insert-existing upsert");
    assert_unchanged(&before, index);
    const char *copy = in_dir(f, "copy.idx");
    run(f, "update", "--index", index, "--ops", ops_path, "--insert-existing", "upsert", "--out",
        copy, NULL);
    expect_ok(f);
    assert_unchanged(&before, index);
    run(f, "lookup", "--index", copy, "--queries", queries, NULL);
    expect_ok(f);
    assert_string_equal(f->out, "10\t1\n15\t150\n20\t200\n25\tNOT FOUND\n40\tNOT FOUND\n");

    write_all(ops_path, "= 10 100\n= 25 250\n- 99\n");
    run(f, "update", "--index", index, "--ops", ops_path, NULL);
    expect_error(f, 1, "ops.txt:2:");
    expect_stderr(f, "operation 1");
    expect_stderr(f, "--update-missing skip");
    assert_unchanged(&before, index);
    run(f, "update", "--index", index, "--ops", ops_path, "--update-missing", "skip", "--json",
        NULL);
    expect_ok(f);
    assert_int_equal(json_number(f->out, "updated"), 1);
    assert_int_equal(json_number(f->out, "missing"), 2);
    run(f, "lookup", "--index", index, "--queries", queries, NULL);
    expect_ok(f);
    assert_string_equal(f->out, "10\t100\n15\tNOT FOUND\n20\t2\n25\tNOT FOUND\n40\tNOT FOUND\n");

    /* within one batch: an insert after an insert of the same key fails; after a delete not */
    free(before.data);
    before = take_snapshot(index);
    write_all(ops_path, "+ 40 1\n+ 40 2\n");
    run(f, "update", "--index", index, "--ops", ops_path, NULL);
    expect_error(f, 1, "ops.txt:2:");
    assert_unchanged(&before, index);
    write_all(ops_path, "+ 40 1\n- 40\n+ 40 2\n= 40 3\n- 20\n= 20 5\n");
    run(f, "update", "--index", index, "--ops", ops_path, NULL);
    expect_error(f, 1, "ops.txt:6:");
    expect_stderr(f, "operation 5");
    assert_unchanged(&before, index);
    write_all(ops_path, "+ 40 1\n- 40\n+ 40 2\n= 40 3\n- 20\n* 20 5\n");
    run(f, "update", "--index", index, "--ops", ops_path, NULL);
    expect_ok(f);
    run(f, "lookup", "--index", index, "--queries", queries, NULL);
    expect_ok(f);
    assert_string_equal(f->out, "10\t100\n15\tNOT FOUND\n20\t5\n25\tNOT FOUND\n40\t3\n");

    /* binary ops name the record */
    free(before.data);
    before = take_snapshot(index);
    const char *ops_bin = in_dir(f, "ops.bin");
    uint64_t records[9] = {3, 10, 0, 1, 77, 7, 0, 20, 2};
    write_bytes(ops_bin, records, sizeof records);
    run(f, "update", "--index", index, "--ops", ops_bin, NULL);
    expect_error(f, 1, "ops.bin: record 1 (byte offset 24)");
    assert_unchanged(&before, index);
    run(f, "update", "--index", index, "--ops", ops_bin, "--update-missing", "skip",
        "--insert-existing", "upsert", NULL);
    expect_ok(f);
    run(f, "lookup", "--index", index, "--queries", queries, NULL);
    expect_ok(f);
    assert_string_equal(f->out, "10\tNOT FOUND\n15\tNOT FOUND\n20\t2\n25\tNOT FOUND\n40\t3\n");
    /* a binary ops file that is not a whole number of records applies nothing */
    free(before.data);
    before = take_snapshot(index);
    write_bytes(ops_bin, records, sizeof records - 4);
    run(f, "update", "--index", index, "--ops", ops_bin, NULL);
    expect_error(f, 1, "ops.bin: size 68 bytes is not a multiple of the 24-byte operation record "
                       "(kind,key,value x 64-bit, binary)");
    assert_unchanged(&before, index);
    free(before.data);
}

/* generate ops: the mixes hold what they promise, in random order, seeded, not all zero. */
static void test_generate_ops(void **state)
{
    fixture *f = *state;
    const char *keys = in_dir(f, "keys.bin");
    run(f, "generate", "keys", "--count", "10000", "--dist", "dense", "--out", keys, NULL);
    expect_ok(f);
    model m = model_from_binary(keys, 64);
    const char *a = in_dir(f, "a.bin"), *b = in_dir(f, "b.bin"), *c = in_dir(f, "c.bin");
    run(f, "generate", "ops", "--keys", keys, "--count", "2000", "--seed", "1", "--out", a, NULL);
    expect_ok(f);
    expect_stdout(f, "100 inserts, 1900 updates");
    run(f, "generate", "ops", "--keys", keys, "--count", "2000", "--seed", "1", "--out", b, NULL);
    expect_ok(f);
    run(f, "generate", "ops", "--keys", keys, "--count", "2000", "--seed", "2", "--out", c, NULL);
    expect_ok(f);
    size_t size_a, size_b, size_c;
    char *da = read_all(a, &size_a), *db = read_all(b, &size_b), *dc = read_all(c, &size_c);
    assert_int_equal(size_a, 2000 * 24);
    assert_int_equal(size_b, size_a);
    assert_memory_equal(da, db, size_a);
    assert_int_equal(size_c, size_a);
    assert_memory_not_equal(da, dc, size_a);
    free(da);
    free(db);
    free(dc);

    const char *mixes[] = {"paper", "insert", "delete"};
    for (int mix = 0; mix < 3; mix++) {
        const char *ops_path = in_dir(f, "ops.txt");
        run(f, "generate", "ops", "--keys", keys, "--count", "2000", "--mix", mixes[mix],
            "--out", ops_path, NULL);
        expect_ok(f);
        op_list ops = read_ops(ops_path, 64, true);
        assert_int_equal(ops.n, 2000);
        size_t per_kind[4] = {0, 0, 0, 0}, first_insert = SIZE_MAX, last_insert = 0;
        uint64_t *named = malloc(ops.n * sizeof *named);
        assert_non_null(named);
        for (size_t i = 0; i < ops.n; i++) {
            per_kind[ops.ops[i].kind]++;
            size_t at = model_lower_bound(&m, ops.ops[i].key);
            bool present = at < m.n && m.pairs[at].key == ops.ops[i].key;
            assert_true(ops.ops[i].kind == OP_INSERT ? !present : present);
            if (ops.ops[i].kind == OP_INSERT) {
                first_insert = first_insert == SIZE_MAX ? i : first_insert;
                last_insert = i;
            }
            named[i] = ops.ops[i].key;
        }
        qsort(named, ops.n, sizeof *named, compare_keys);
        for (size_t i = 1; i < ops.n; i++)
            assert_true(named[i - 1] < named[i]); /* no key named twice */
        free(named);
        if (mix == 0) {
            assert_int_equal(per_kind[OP_INSERT], 100);
            assert_int_equal(per_kind[OP_UPDATE], 1900);
            assert_true(last_insert - first_insert > 1000); /* spread out, not in a block */
        } else if (mix == 1) {
            assert_int_equal(per_kind[OP_INSERT], 2000);
        } else {
            assert_int_equal(per_kind[OP_DELETE], 2000);
        }
        free(ops.ops);
    }
    /* more distinct deletes than keys */
    run(f, "generate", "ops", "--keys", keys, "--count", "10001", "--mix", "delete", "--out",
        in_dir(f, "x.bin"), NULL);
    expect_error(f, 1, "harmonia generate ops: ");
    free(m.pairs);
}

static void test_help_and_usage(void **state)
{
    fixture *f = *state;
    run(f, "--help", NULL);
    expect_ok(f);
    expect_stdout(f, "update");
    run(f, "update", "--help", NULL);
    expect_ok(f);
    expect_stdout(f, "Usage: harmonia update");
    expect_stdout(f, "--insert-existing");
    run(f, "help", "update", NULL);
    expect_ok(f);
    run(f, "generate", "ops", "--help", NULL);
    expect_ok(f);
    expect_stdout(f, "--mix");
    run(f, "generate", "--help", NULL);
    expect_ok(f);
    expect_stdout(f, "ops");
    assert_int_equal(run(f, "update", "--index", "i.idx", NULL), 2);
    expect_stderr(f, "missing --ops");
    assert_int_equal(run(f, "update", "--ops", "o.txt", NULL), 2);
    expect_stderr(f, "missing --index");
    assert_int_equal(run(f, "update", "--index", "i", "--ops", "o", "--insert-existing", "maybe",
                         NULL), 2);
    assert_int_equal(run(f, "update", "--index", "i", "--ops", "o", "--update-missing", "ignore",
                         NULL), 2);
    assert_int_equal(run(f, "update", "--index", "i", "--ops", "o", "--split-fill", "0", NULL),
                     2);
    assert_int_equal(run(f, "update", "--index", "i", "--ops", "o", "--split-fill", "1.5", NULL),
                     2);
    assert_int_equal(run(f, "update", "--index", "i", "--ops", "o", "--out", "-", NULL), 2);
    assert_int_equal(run(f, "generate", "ops", "--keys", "k", "--count", "5", "--mix", "most",
                         "--out", "x", NULL), 2);
    assert_int_equal(run(f, "generate", "ops", "--keys", "k", "--out", "x", NULL), 2);
    /* files that are not there */
    run(f, "update", "--index", in_dir(f, "missing.idx"), "--ops", in_dir(f, "o.txt"), NULL);
    expect_error(f, 1, "missing.idx");
}

int main(int argc, char **argv)
{
    if (!fixture_take_tool(argc, argv))
        return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_each_mix, setup, teardown),
        cmocka_unit_test_setup_teardown(test_text_in_place, setup, teardown),
        cmocka_unit_test_setup_teardown(test_malformed_ops, setup, teardown),
        cmocka_unit_test_setup_teardown(test_strict_policies, setup, teardown),
        cmocka_unit_test_setup_teardown(test_generate_ops, setup, teardown),
        cmocka_unit_test_setup_teardown(test_help_and_usage, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
