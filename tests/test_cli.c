/* test_cli.c — runs the real `harmonia` binary (its path is argv[1]) in a fresh temporary folder
 * per test and checks its files, output and exit codes against a sorted-array model built here
 * from the generated data. It does not link the library: it sees only what a user sees. */
#include "tests/cli_fixture.h"

static int setup(void **state) { return fixture_setup(state, "harmonia-cli"); }

/* ---- the model ----------------------------------------------------------------------------- */

/* pair, model, compare_pairs, model_lower_bound, model_from_binary and model_from_text:
 * tests/cli_fixture.h */

static uint64_t *read_binary_keys(const char *path, int bits, size_t *n_out)
{
    size_t size;
    char *data = read_all(path, &size);
    assert_non_null(data);
    size_t width = (size_t)bits / 8;
    assert_int_equal(size % width, 0);
    size_t n = size / width;
    uint64_t *keys = malloc((n + 1) * sizeof *keys);
    assert_non_null(keys);
    for (size_t i = 0; i < n; i++) {
        if (bits == 32) {
            uint32_t k;
            memcpy(&k, data + i * 4, 4);
            keys[i] = k;
        } else {
            memcpy(&keys[i], data + i * 8, 8);
        }
    }
    free(data);
    *n_out = n;
    return keys;
}

/* Checks a text lookup result file against the model; returns the number of hits. */
static size_t check_lookup_text(const model *m, const uint64_t *queries, size_t n,
                                const char *results_path)
{
    FILE *file = fopen(results_path, "r");
    assert_non_null(file);
    char line[256];
    size_t i = 0, hits = 0;
    while (fgets(line, sizeof line, file) != NULL) {
        assert_true(i < n);
        unsigned long long key, value;
        char rest[64];
        size_t at = model_lower_bound(m, queries[i]);
        bool present = at < m->n && m->pairs[at].key == queries[i];
        if (present) {
            assert_int_equal(sscanf(line, "%llu\t%llu", &key, &value), 2);
            assert_int_equal(value, m->pairs[at].value);
            hits++;
        } else {
            assert_int_equal(sscanf(line, "%llu\t%63[^\n]", &key, rest), 2);
            assert_string_equal(rest, "NOT FOUND");
        }
        assert_int_equal(key, queries[i]);
        i++;
    }
    fclose(file);
    assert_int_equal(i, n);
    return hits;
}

/* ---- tests --------------------------------------------------------------------------------- */

/* generate -> build -> lookup / lower-bound -> check, 10^5 uniform 64-bit keys. */
static void test_end_to_end(void **state)
{
    fixture *f = *state;
    const char *keys = in_dir(f, "keys.bin"), *index = in_dir(f, "keys.idx");
    const char *queries = in_dir(f, "queries.bin"), *results = in_dir(f, "results.txt");
    run(f, "generate", "keys", "--count", "1e5", "--dist", "uniform", "--out", keys, NULL);
    expect_ok(f);
    run(f, "build", "--input", keys, "--out", index, NULL);
    expect_ok(f);
    assert_non_null(strstr(f->out, "100000 keys"));
    run(f, "generate", "queries", "--keys", keys, "--count", "20000", "--hit-rate", "0.5",
        "--out", queries, NULL);
    expect_ok(f);
    run(f, "lookup", "--index", index, "--queries", queries, "--out", results, NULL);
    expect_ok(f);

    model m = model_from_binary(keys, 64);
    assert_int_equal(m.n, 100000);
    size_t n;
    uint64_t *q = read_binary_keys(queries, 64, &n);
    assert_int_equal(n, 20000);
    assert_int_equal(check_lookup_text(&m, q, n, results), 10000);

    /* lower bound, text results "query\tkey\tvalue" or "query\tNONE" */
    run(f, "lower-bound", "--index", index, "--queries", queries, "--out", results, NULL);
    expect_ok(f);
    FILE *file = fopen(results, "r");
    assert_non_null(file);
    char line[256];
    size_t i = 0;
    while (fgets(line, sizeof line, file) != NULL) {
        unsigned long long query, key, value;
        size_t at = model_lower_bound(&m, q[i]);
        if (at < m.n) {
            assert_int_equal(sscanf(line, "%llu\t%llu\t%llu", &query, &key, &value), 3);
            assert_int_equal(key, m.pairs[at].key);
            assert_int_equal(value, m.pairs[at].value);
        } else {
            assert_non_null(strstr(line, "NONE"));
        }
        i++;
    }
    fclose(file);
    assert_int_equal(i, n);

    /* binary results: value,found records of the key width */
    const char *bin_results = in_dir(f, "results.bin");
    run(f, "lookup", "--index", index, "--queries", queries, "--format", "bin", "--out",
        bin_results, NULL);
    expect_ok(f);
    size_t size;
    char *data = read_all(bin_results, &size);
    assert_int_equal(size, n * 16);
    for (i = 0; i < n; i++) {
        uint64_t value, found;
        memcpy(&value, data + i * 16, 8);
        memcpy(&found, data + i * 16 + 8, 8);
        size_t at = model_lower_bound(&m, q[i]);
        bool present = at < m.n && m.pairs[at].key == q[i];
        assert_int_equal(found, present ? 1 : 0);
        assert_int_equal(value, present ? m.pairs[at].value : 0);
    }
    free(data);

    run(f, "check", "--index", index, NULL);
    expect_ok(f);
    assert_non_null(strstr(f->out, "OK"));
    run(f, "info", "--index", index, NULL);
    expect_ok(f);
    assert_non_null(strstr(f->out, "100000"));
    assert_non_null(strstr(f->out, "constant cut     1 internal level, 2 first-child entries"));
    run(f, "info", "--index", index, "--constant-levels", "0", NULL);
    expect_ok(f);
    assert_non_null(strstr(f->out, "constant cut     0 internal levels, 0 first-child entries"));
    run(f, "lookup", "--index", index, "--queries", queries, "--backend", "cpu", "--constant-levels", "all",
        "--out", in_dir(f, "r-constant.txt"), NULL);
    expect_ok(f);
    run(f, "info", "--index", index, "--constant-levels", "all", "--json", NULL);
    expect_ok(f);
    assert_non_null(strstr(f->out, "\"constant_prefix_levels\":"));
    assert_null(strstr(f->out, "\"constant_prefix_levels\":1,"));
    free(q);
    free(m.pairs);
}

/* Text files, 32-bit keys, every key distribution: build and look up every key and some misses. */
static void test_text_32bit_distributions(void **state)
{
    fixture *f = *state;
    const char *dists[] = {"dense", "normal", "zipf", "uniform"};
    for (size_t d = 0; d < 4; d++) {
        const char *keys = in_dir(f, "keys.txt"), *index = in_dir(f, "k.idx");
        const char *queries = in_dir(f, "q.txt"), *results = in_dir(f, "r.txt");
        run(f, "generate", "keys", "--count", "3000", "--bits", "32", "--dist", dists[d],
            "--values", "random", "--seed", "7", "--out", keys, NULL);
        expect_ok(f);
        run(f, "build", "--input", keys, "--bits", "32", "--fanout", "8", "--leaf-size", "8",
            "--out", index, NULL);
        expect_ok(f);
        run(f, "generate", "queries", "--keys", keys, "--bits", "32", "--count", "2000",
            "--hit-rate", "0.7", "--dist", "zipf", "--out", queries, NULL);
        expect_ok(f);
        run(f, "lookup", "--index", index, "--queries", queries, "--out", results, NULL);
        expect_ok(f);
        model m = model_from_text(keys);
        assert_int_equal(m.n, 3000);
        /* the queries, from the text file */
        FILE *file = fopen(queries, "r");
        assert_non_null(file);
        uint64_t q[2000];
        size_t n = 0;
        char line[128];
        while (fgets(line, sizeof line, file) != NULL) {
            if (line[0] == '#')
                continue;
            unsigned long long k;
            assert_int_equal(sscanf(line, "%llu", &k), 1);
            assert_true(k <= UINT32_MAX);
            assert_true(n < 2000);
            q[n++] = k;
        }
        fclose(file);
        assert_int_equal(n, 2000);
        assert_int_equal(check_lookup_text(&m, q, n, results), 1400);
        if (strcmp(dists[d], "dense") == 0) {
            for (size_t i = 1; i < m.n; i++)
                assert_int_equal(m.pairs[i].key, m.pairs[i - 1].key + 1);
        }
        free(m.pairs);
    }
}

/* range count and range --collect agree with the model. */
static void test_ranges(void **state)
{
    fixture *f = *state;
    const char *keys = in_dir(f, "keys.bin"), *index = in_dir(f, "keys.idx");
    const char *ranges = in_dir(f, "ranges.txt"), *results = in_dir(f, "counts.txt");
    run(f, "generate", "keys", "--count", "50000", "--dist", "normal", "--out", keys, NULL);
    expect_ok(f);
    run(f, "build", "--input", keys, "--out", index, NULL);
    expect_ok(f);
    run(f, "generate", "ranges", "--keys", keys, "--count", "300", "--length", "40", "--out",
        ranges, NULL);
    expect_ok(f);
    /* add an empty range (lo > hi) and the whole domain by hand */
    FILE *extra = fopen(ranges, "a");
    assert_non_null(extra);
    fprintf(extra, "# by hand\n100, 5\n0,18446744073709551615\n");
    fclose(extra);
    run(f, "range", "--index", index, "--ranges", ranges, "--out", results, NULL);
    expect_ok(f);
    model m = model_from_binary(keys, 64);

    FILE *file = fopen(results, "r");
    assert_non_null(file);
    char line[256];
    size_t n = 0;
    unsigned long long lo[302], hi[302];
    while (fgets(line, sizeof line, file) != NULL) {
        unsigned long long count;
        assert_true(n < 302);
        assert_int_equal(sscanf(line, "%llu\t%llu\t%llu", &lo[n], &hi[n], &count), 3);
        uint64_t expected = 0;
        if (lo[n] <= hi[n]) {
            size_t first = model_lower_bound(&m, lo[n]);
            size_t end = hi[n] == UINT64_MAX ? m.n : model_lower_bound(&m, hi[n] + 1);
            expected = end - first;
        }
        assert_int_equal(count, expected);
        if (n < 300)
            assert_true(count == 40 || count < 40); /* 40 keys unless at the end */
        n++;
    }
    fclose(file);
    assert_int_equal(n, 302);

    const char *pairs = in_dir(f, "pairs.txt");
    run(f, "range", "--index", index, "--ranges", ranges, "--collect", "--out", pairs, NULL);
    expect_ok(f);
    file = fopen(pairs, "r");
    assert_non_null(file);
    long range = -1;
    size_t next = 0, end = 0;
    while (fgets(line, sizeof line, file) != NULL) {
        unsigned long long a, b, c;
        long index_in_file;
        if (sscanf(line, "# range %ld [%llu, %llu]: %llu", &index_in_file, &a, &b, &c) == 4) {
            if (range >= 0)
                assert_int_equal(next, end); /* the previous range was complete */
            range++;
            assert_int_equal(index_in_file, range);
            assert_int_equal(a, lo[range]);
            assert_int_equal(b, hi[range]);
            next = a <= b ? model_lower_bound(&m, a) : 0;
            end = a <= b ? (b == UINT64_MAX ? m.n : model_lower_bound(&m, b + 1)) : 0;
            assert_int_equal(c, end - next);
            continue;
        }
        assert_int_equal(sscanf(line, "%llu\t%llu", &a, &b), 2);
        assert_true(next < end);
        assert_int_equal(a, m.pairs[next].key);
        assert_int_equal(b, m.pairs[next].value);
        next++;
    }
    fclose(file);
    assert_int_equal(range, 301);
    assert_int_equal(next, end);
    free(m.pairs);
}

static void test_json(void **state)
{
    fixture *f = *state;
    const char *keys = in_dir(f, "keys.csv"), *index = in_dir(f, "keys.idx");
    const char *queries = in_dir(f, "q.bin"), *ranges = in_dir(f, "r.bin");
    run(f, "generate", "keys", "--count", "1000", "--out", keys, NULL);
    expect_ok(f);
    run(f, "build", "--input", keys, "--json", "--out", index, NULL);
    expect_ok(f);
    assert_json_object(f->out);
    assert_non_null(strstr(f->out, "\"keys\":1000"));
    run(f, "generate", "queries", "--keys", keys, "--count", "50", "--out", queries, NULL);
    expect_ok(f);
    run(f, "generate", "ranges", "--keys", keys, "--count", "20", "--length", "3", "--out",
        ranges, NULL);
    expect_ok(f);
    run(f, "lookup", "--index", index, "--queries", queries, "--json", NULL);
    expect_ok(f);
    assert_json_object(f->out);
    assert_non_null(strstr(f->out, "\"results\":["));
    assert_non_null(strstr(f->out, "\"found\":25"));
    run(f, "lower-bound", "--index", index, "--queries", queries, "--json", NULL);
    expect_ok(f);
    assert_json_object(f->out);
    run(f, "range", "--index", index, "--ranges", ranges, "--json", NULL);
    expect_ok(f);
    assert_json_object(f->out);
    run(f, "range", "--index", index, "--ranges", ranges, "--collect", "--json", NULL);
    expect_ok(f);
    assert_json_object(f->out);
    assert_non_null(strstr(f->out, "\"pairs\":[["));
    run(f, "info", "--index", index, "--json", NULL);
    expect_ok(f);
    assert_json_object(f->out);
    assert_non_null(strstr(f->out, "\"level_nodes\":["));
    run(f, "info", "--device", "--json", NULL);
    expect_ok(f);
    assert_json_object(f->out);
    run(f, "check", "--index", index, "--json", NULL);
    expect_ok(f);
    assert_json_object(f->out);
    assert_non_null(strstr(f->out, "\"ok\":true"));
    /* with --out, the file gets the document and standard output a JSON summary */
    const char *out = in_dir(f, "out.json");
    run(f, "lookup", "--index", index, "--queries", queries, "--json", "--out", out, NULL);
    expect_ok(f);
    assert_json_object(f->out);
    char *doc = read_all(out, NULL);
    assert_non_null(doc);
    assert_json_object(doc);
    free(doc);
    run(f, "bench", "--keys", "5000", "--queries", "5000", "--runs", "1", "--json", NULL);
    expect_ok(f);
    assert_json_object(f->out);
    assert_non_null(strstr(f->out, "\"verified\":true"));
}

static void test_missing_file(void **state)
{
    fixture *f = *state;
    const char *missing = in_dir(f, "no-such-file.txt");
    run(f, "build", "--input", missing, "--out", in_dir(f, "x.idx"), NULL);
    expect_error(f, 1, "harmonia build: ");
    assert_non_null(strstr(f->err, "no-such-file.txt: cannot open"));
    run(f, "lookup", "--index", in_dir(f, "missing.idx"), "--queries", missing, NULL);
    expect_error(f, 1, "missing.idx");
    run(f, "check", "--index", in_dir(f, "missing.idx"), NULL);
    expect_error(f, 1, "missing.idx");
}

static void test_malformed_line(void **state)
{
    fixture *f = *state;
    const char *bad = in_dir(f, "bad.txt");
    write_all(bad, "# pairs\n1,10\n2,20\nabc,30\n4,40\n");
    run(f, "build", "--input", bad, "--out", in_dir(f, "x.idx"), NULL);
    expect_error(f, 1, "bad.txt:4: 'abc'");
    write_all(bad, "1,10\n\n  2 , 20  # a comment\n3,30,7\n");
    run(f, "build", "--input", bad, "--out", in_dir(f, "x.idx"), NULL);
    expect_error(f, 1, "bad.txt:4:");
    write_all(bad, "1,10\n4294967296,20\n");
    run(f, "build", "--bits", "32", "--input", bad, "--out", in_dir(f, "x.idx"), NULL);
    expect_error(f, 1, "bad.txt:2:");
    assert_non_null(strstr(f->err, "32 bits"));
    write_all(bad, "1,10\n2\n");
    run(f, "build", "--input", bad, "--out", in_dir(f, "x.idx"), NULL);
    expect_error(f, 1, "bad.txt:2:");
    write_all(bad, "1,\n");
    run(f, "build", "--input", bad, "--out", in_dir(f, "x.idx"), NULL);
    expect_error(f, 1, "bad.txt:1:");
    /* a binary file whose size is not a whole number of records */
    const char *odd = in_dir(f, "odd.bin");
    write_all(odd, "0123456789");
    run(f, "build", "--input", odd, "--out", in_dir(f, "x.idx"), NULL);
    expect_error(f, 1, "odd.bin: size 10 bytes is not a multiple of the 16-byte key or key,value record (2 x 64-bit, binary)");
    /* the good lines parse: comments, blanks, spaces, hex */
    const char *good = in_dir(f, "good.txt");
    write_all(good, "# header\n\n 0x10 , 1\n2\t2\n3,3 # three\n");
    run(f, "build", "--input", good, "--out", in_dir(f, "good.idx"), NULL);
    expect_ok(f);
    assert_non_null(strstr(f->out, "3 keys"));
}

static void test_unsorted_input(void **state)
{
    fixture *f = *state;
    const char *input = in_dir(f, "unsorted.txt");
    write_all(input, "# sorted, supposedly\n1,1\n5,2\n\n3,3\n9,4\n");
    run(f, "build", "--input", input, "--sorted", "--out", in_dir(f, "x.idx"), NULL);
    expect_error(f, 1, "unsorted.txt:5:");
    assert_non_null(strstr(f->err, "key 3"));
    /* without --sorted the same input builds */
    run(f, "build", "--input", input, "--out", in_dir(f, "x.idx"), NULL);
    expect_ok(f);
    /* sorted input with --sorted builds too, 32-bit, binary written by generate --sorted */
    const char *sorted = in_dir(f, "sorted.bin");
    run(f, "generate", "keys", "--count", "5000", "--bits", "32", "--sorted", "--out", sorted,
        NULL);
    expect_ok(f);
    run(f, "build", "--input", sorted, "--bits", "32", "--sorted", "--out", in_dir(f, "s.idx"),
        NULL);
    expect_ok(f);
}

static void test_duplicates(void **state)
{
    fixture *f = *state;
    const char *input = in_dir(f, "dup.txt"), *index = in_dir(f, "dup.idx");
    const char *queries = in_dir(f, "q.txt");
    write_all(input, "7,1\n3,2\n7,3\n9,4\n3,5\n");
    write_all(queries, "7\n3\n9\n4\n");
    run(f, "build", "--input", input, "--out", index, NULL);
    expect_error(f, 1, "dup.txt:3:");
    assert_non_null(strstr(f->err, "duplicate key 7"));
    run(f, "build", "--input", input, "--duplicates", "first", "--out", index, NULL);
    expect_ok(f);
    run(f, "lookup", "--index", index, "--queries", queries, NULL);
    expect_ok(f);
    assert_string_equal(f->out, "7\t1\n3\t2\n9\t4\n4\tNOT FOUND\n");
    run(f, "build", "--input", input, "--duplicates", "last", "--out", index, NULL);
    expect_ok(f);
    run(f, "lookup", "--index", index, "--queries", queries, NULL);
    expect_ok(f);
    assert_string_equal(f->out, "7\t3\n3\t5\n9\t4\n4\tNOT FOUND\n");
    /* keys only: the value is the row id */
    write_all(input, "30\n10\n20\n");
    run(f, "build", "--input", input, "--out", index, NULL);
    expect_ok(f);
    write_all(queries, "10\n20\n30\n");
    run(f, "lookup", "--index", index, "--queries", queries, NULL);
    expect_ok(f);
    assert_string_equal(f->out, "10\t1\n20\t2\n30\t0\n");
}

static void test_usage_errors(void **state)
{
    fixture *f = *state;
    assert_int_equal(run(f, "frobnicate", NULL), 2);
    assert_non_null(strstr(f->err, "unknown command 'frobnicate'"));
    assert_int_equal(run(f, NULL), 2);
    assert_int_equal(run(f, "build", "--bogus", NULL), 2);
    assert_non_null(strstr(f->err, "unknown option '--bogus'"));
    assert_int_equal(run(f, "build", "--out", "x.idx", NULL), 2);
    assert_non_null(strstr(f->err, "missing --input"));
    assert_int_equal(run(f, "lookup", "--index", NULL), 2);
    assert_int_equal(run(f, "generate", "keys", "--count", "many", "--out", "x", NULL), 2);
    assert_int_equal(run(f, "generate", "keys", "--count", "10", "--dist", "cauchy", "--out", "x",
                         NULL), 2);
    assert_int_equal(run(f, "generate", "shapes", NULL), 2);
    assert_int_equal(run(f, "info", NULL), 2);
    assert_int_equal(run(f, "info", "--device", "--constant-levels", "-1", NULL), 2);
    assert_non_null(strstr(f->err, "--constant-levels takes a number of levels"));
    assert_int_equal(run(f, "info", "--device", "--constant-levels", "2", NULL), 2);
    assert_non_null(strstr(f->err, "give --index INDEX"));
    assert_int_equal(run(f, "lookup", "--index", "i", "--queries", "q", "--constant-levels", "some", NULL), 2);
    assert_non_null(strstr(f->err, "not 'some'"));
    assert_int_equal(run(f, "build", "--input", "a", "--input", "b", "--out", "c", NULL), 2);
    assert_int_equal(run(f, "bench", "--runs", "0", NULL), 2);
    assert_int_equal(run(f, "build", "--input", "a", "--fanout", "12", "--out", "c", NULL), 2);
    assert_non_null(strstr(f->err, "--fanout: 12"));
    assert_int_equal(run(f, "lookup", "--index", "i", "--queries", "q", "--backend", "tpu", NULL),
                     2);
    assert_int_equal(run(f, "lookup", "--index", "i", "--queries", "q", "--group-size", "64", NULL), 2);
    assert_int_equal(run(f, "lookup", "--index", "i", "--queries", "q", "--psa", "maybe", NULL), 2);
    assert_int_equal(run(f, "range", "--index", "i", "--ranges", "q", "--pipeline-depth", "4", NULL), 2);
}

static void test_help(void **state)
{
    fixture *f = *state;
    run(f, "--help", NULL);
    expect_ok(f);
    const char *commands[] = {"generate", "build", "lookup", "lower-bound", "range", "info",
                              "check", "bench"};
    for (size_t i = 0; i < 8; i++)
        assert_non_null(strstr(f->out, commands[i]));
    for (size_t i = 0; i < 8; i++) {
        run(f, commands[i], "--help", NULL);
        expect_ok(f);
        assert_non_null(strstr(f->out, "Usage: harmonia"));
    }
    const char *kinds[] = {"keys", "queries", "ranges"};
    for (size_t i = 0; i < 3; i++) {
        run(f, "generate", kinds[i], "--help", NULL);
        expect_ok(f);
        assert_non_null(strstr(f->out, "--out"));
    }
}

static void test_info_device(void **state)
{
    fixture *f = *state;
    run(f, "info", "--device", NULL);
    expect_ok(f);
    assert_true(strstr(f->out, "no GPU: ") != NULL || strstr(f->out, "SMs") != NULL);
}

static void flip_byte(const char *path, long offset)
{
    FILE *file = fopen(path, "r+b");
    assert_non_null(file);
    assert_int_equal(fseek(file, offset, SEEK_SET), 0);
    int c = fgetc(file);
    assert_true(c != EOF);
    fseek(file, offset, SEEK_SET);
    fputc(c ^ 0x5a, file);
    fclose(file);
}

static void test_check_damaged(void **state)
{
    fixture *f = *state;
    const char *keys = in_dir(f, "keys.bin"), *index = in_dir(f, "keys.idx");
    run(f, "generate", "keys", "--count", "20000", "--out", keys, NULL);
    expect_ok(f);
    run(f, "build", "--input", keys, "--out", index, NULL);
    expect_ok(f);
    run(f, "check", "--index", index, NULL);
    expect_ok(f);
    size_t size;
    char *data = read_all(index, &size);
    assert_non_null(data);
    assert_true(size > 4096);
    /* damage the middle, the end and the header of copies */
    long offsets[] = {(long)size / 2, (long)size - 8, 8};
    for (int i = 0; i < 3; i++) {
        const char *damaged = in_dir(f, "damaged.idx");
        FILE *copy = fopen(damaged, "wb");
        assert_non_null(copy);
        fwrite(data, 1, size, copy);
        fclose(copy);
        flip_byte(damaged, offsets[i]);
        run(f, "check", "--index", damaged, NULL);
        expect_error(f, 1, "harmonia check: ");
        assert_non_null(strstr(f->err, "damaged.idx"));
        assert_true(strlen(f->err) > strlen("harmonia check: ") + strlen(damaged) + 4);
    }
    /* truncated */
    const char *truncated = in_dir(f, "truncated.idx");
    FILE *copy = fopen(truncated, "wb");
    assert_non_null(copy);
    fwrite(data, 1, size / 3, copy);
    fclose(copy);
    run(f, "check", "--index", truncated, NULL);
    expect_error(f, 1, "truncated.idx");
    /* not an index at all */
    run(f, "check", "--index", keys, NULL);
    expect_error(f, 1, "keys.bin");
    free(data);
}

static void test_generate(void **state)
{
    fixture *f = *state;
    const char *a = in_dir(f, "a.bin"), *b = in_dir(f, "b.bin"), *c = in_dir(f, "c.bin");
    run(f, "generate", "keys", "--count", "10000", "--dist", "zipf", "--seed", "5", "--out", a,
        NULL);
    expect_ok(f);
    run(f, "generate", "keys", "--count", "10000", "--dist", "zipf", "--seed", "5", "--out", b,
        NULL);
    expect_ok(f);
    run(f, "generate", "keys", "--count", "10000", "--dist", "zipf", "--seed", "6", "--out", c,
        NULL);
    expect_ok(f);
    size_t size_a, size_b, size_c;
    char *da = read_all(a, &size_a), *db = read_all(b, &size_b), *dc = read_all(c, &size_c);
    assert_int_equal(size_a, 10000 * 16);
    assert_int_equal(size_a, size_b);
    assert_memory_equal(da, db, size_a);
    assert_int_equal(size_a, size_c);
    assert_memory_not_equal(da, dc, size_a);
    size_t zeros = 0;
    for (size_t i = 0; i < size_a; i++)
        zeros += da[i] == 0;
    assert_true(zeros < size_a / 2);
    free(da);
    free(db);
    free(dc);
    model m = model_from_binary(a, 64); /* asserts distinct keys */
    assert_int_equal(m.n, 10000);
    free(m.pairs);
    /* all hits and all misses */
    const char *q = in_dir(f, "q.bin");
    run(f, "generate", "queries", "--keys", a, "--count", "1000", "--hit-rate", "0", "--out", q,
        NULL);
    expect_ok(f);
    m = model_from_binary(a, 64);
    size_t n;
    uint64_t *queries = read_binary_keys(q, 64, &n);
    assert_int_equal(n, 1000);
    for (size_t i = 0; i < n; i++) {
        size_t at = model_lower_bound(&m, queries[i]);
        assert_false(at < m.n && m.pairs[at].key == queries[i]);
    }
    free(queries);
    free(m.pairs);
}

static void test_bench_small(void **state)
{
    fixture *f = *state;
    run(f, "bench", "--keys", "30000", "--queries", "20000", "--runs", "3", "--threads", "2",
        "--quiet", NULL);
    expect_ok(f);
    assert_non_null(strstr(f->out, "verified"));
    assert_non_null(strstr(f->out, "lookup"));
    assert_non_null(strstr(f->out, "range-count"));
    run(f, "bench", "--keys", "20000", "--queries", "10000", "--bits", "32", "--dist", "dense",
        "--hit-rate", "0.5", "--runs", "1", "--fanout", "32", "--leaf-size", "64", NULL);
    expect_ok(f);
    assert_non_null(strstr(f->out, "verified"));
}

int main(int argc, char **argv)
{
    if (!fixture_take_tool(argc, argv))
        return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_end_to_end, setup, teardown),
        cmocka_unit_test_setup_teardown(test_text_32bit_distributions, setup, teardown),
        cmocka_unit_test_setup_teardown(test_ranges, setup, teardown),
        cmocka_unit_test_setup_teardown(test_json, setup, teardown),
        cmocka_unit_test_setup_teardown(test_missing_file, setup, teardown),
        cmocka_unit_test_setup_teardown(test_malformed_line, setup, teardown),
        cmocka_unit_test_setup_teardown(test_unsorted_input, setup, teardown),
        cmocka_unit_test_setup_teardown(test_duplicates, setup, teardown),
        cmocka_unit_test_setup_teardown(test_usage_errors, setup, teardown),
        cmocka_unit_test_setup_teardown(test_help, setup, teardown),
        cmocka_unit_test_setup_teardown(test_info_device, setup, teardown),
        cmocka_unit_test_setup_teardown(test_check_damaged, setup, teardown),
        cmocka_unit_test_setup_teardown(test_generate, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bench_small, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
