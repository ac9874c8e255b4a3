/* test_dist_cli.c — the harmonia-dist tool under mpirun against the harmonia tool on the same files:
 * the outputs of lookup, lower-bound and range (text, binary, collect; to a file and to standard
 * output) must be byte for byte those of one tree; update batches give the same index; errors name
 * the file line of the whole file (a malformed line or a failing operation in another rank's part)
 * and leave the index unchanged; info and check; a damaged manifest and a wrong rank count fail.
 * Arguments: PATH-TO-harmonia PATH-TO-mpi_run.sh PATH-TO-harmonia-dist RANKS [full]. */
#include "cli_fixture.h"

static const char *tool_harmonia, *tool_mpi_run, *tool_dist, *ranks_text;
static bool full;

/* Runs `harmonia ARGS...` */
#define HARMONIA(f, ...) (harmonia_path = tool_harmonia, run((f), __VA_ARGS__, NULL))
/* Runs `mpirun -np RANKS harmonia-dist ARGS...` (RANKS of the test, or given) */
#define DIST_N(f, n, ...) (harmonia_path = tool_mpi_run, run((f), (n), tool_dist, __VA_ARGS__, NULL))
#define DIST(f, ...) DIST_N((f), ranks_text, __VA_ARGS__)

static int setup(void **state)
{
    return fixture_setup(state, "harmonia-dist-cli");
}

static void expect_same_file(const char *a, const char *b)
{
    size_t na, nb;
    char *x = read_all(a, &na), *y = read_all(b, &nb);
    assert_non_null(x);
    assert_non_null(y);
    if (na != nb || memcmp(x, y, na) != 0) {
        size_t i = 0;
        while (i < na && i < nb && x[i] == y[i])
            i++;
        fprintf(stderr, "%s (%zu bytes) and %s (%zu bytes) differ from byte %zu\n", a, na, b, nb, i);
        fail();
    }
    free(x);
    free(y);
}

/* Key files (binary and text), queries, ranges and operations, and both indexes. */
static void make_data(fixture *f)
{
    HARMONIA(f, "generate", "keys", "--count", "20000", "--dist", "zipf", "--seed", "3", "--out",
             in_dir(f, "pairs.bin"));
    expect_ok(f);
    HARMONIA(f, "generate", "keys", "--count", "5000", "--seed", "4", "--out", in_dir(f, "pairs.txt"));
    expect_ok(f);
    HARMONIA(f, "generate", "queries", "--keys", in_dir(f, "pairs.bin"), "--count", "4000", "--hit-rate",
             "0.6", "--out", in_dir(f, "q.bin"));
    expect_ok(f);
    HARMONIA(f, "generate", "queries", "--keys", in_dir(f, "pairs.bin"), "--count", "1000", "--out",
             in_dir(f, "q.txt"));
    expect_ok(f);
    HARMONIA(f, "generate", "ranges", "--keys", in_dir(f, "pairs.bin"), "--count", "300", "--length", "40",
             "--out", in_dir(f, "r.bin"));
    expect_ok(f);
    /* ranges over many keys (several shards) and edge ranges, as text */
    write_all(in_dir(f, "r.txt"),
              "# lo,hi\n0,18446744073709551615\n0,0\n18446744073709551615,18446744073709551615\n"
              "5,4\n1000,9223372036854775807\n9223372036854775807,18446744073709551615\n"
              "0x100,0xffffffffffff\n");
    HARMONIA(f, "generate", "ops", "--keys", in_dir(f, "pairs.bin"), "--count", "3000", "--mix", "mixed",
             "--format", "text", "--out", in_dir(f, "ops.txt"));
    expect_ok(f);
    HARMONIA(f, "build", "--input", in_dir(f, "pairs.bin"), "--out", in_dir(f, "one.idx"));
    expect_ok(f);
    DIST(f, "build", "--input", in_dir(f, "pairs.bin"), "--out", in_dir(f, "many.hdm"));
    expect_ok(f);
    expect_stdout(f, "keys in");
}

/* One query command on both tools; the outputs must be equal. extra = more options (or NULL). */
static void same_results(fixture *f, const char *command, const char *input_option, const char *input,
                         const char *format, const char *extra)
{
    char one[64], many[64];
    snprintf(one, sizeof one, "one-%s-%s%s.out", command, format, extra ? "-x" : "");
    snprintf(many, sizeof many, "many-%s-%s%s.out", command, format, extra ? "-x" : "");
    const char *o = in_dir(f, one), *m = in_dir(f, many);
    if (extra != NULL) {
        HARMONIA(f, command, "--index", in_dir(f, "one.idx"), input_option, in_dir(f, input), "--format",
                 format, extra, "--out", o);
        expect_ok(f);
        DIST(f, command, "--index", in_dir(f, "many.hdm"), input_option, in_dir(f, input), "--format", format,
             extra, "--out", m);
    } else {
        HARMONIA(f, command, "--index", in_dir(f, "one.idx"), input_option, in_dir(f, input), "--format",
                 format, "--out", o);
        expect_ok(f);
        DIST(f, command, "--index", in_dir(f, "many.hdm"), input_option, in_dir(f, input), "--format", format,
             "--out", m);
    }
    expect_ok(f);
    expect_same_file(o, m);
}

static void test_queries(void **state)
{
    fixture *f = *state;
    make_data(f);
    same_results(f, "lookup", "--queries", "q.bin", "text", NULL);
    same_results(f, "range", "--ranges", "r.bin", "bin", "--collect");
    if (!full)
        return;
    same_results(f, "lookup", "--queries", "q.bin", "bin", NULL);
    same_results(f, "lookup", "--queries", "q.txt", "text", NULL);
    same_results(f, "lower-bound", "--queries", "q.bin", "text", NULL);
    same_results(f, "lower-bound", "--queries", "q.txt", "bin", NULL);
    same_results(f, "range", "--ranges", "r.bin", "text", NULL);
    same_results(f, "range", "--ranges", "r.txt", "text", "--collect");
    same_results(f, "range", "--ranges", "r.txt", "bin", NULL);
    /* to standard output: rank 0 gathers */
    HARMONIA(f, "lookup", "--index", in_dir(f, "one.idx"), "--queries", in_dir(f, "q.txt"));
    expect_ok(f);
    char *single = strdup(f->out);
    DIST(f, "lookup", "--index", in_dir(f, "many.hdm"), "--queries", in_dir(f, "q.txt"));
    expect_ok(f);
    assert_string_equal(f->out, single);
    free(single);
    /* JSON: one valid document with the same results */
    DIST(f, "range", "--index", in_dir(f, "many.hdm"), "--ranges", in_dir(f, "r.txt"), "--collect", "--json");
    expect_ok(f);
    assert_json_object(f->out);
    assert_non_null(strstr(f->out, "\"results\":["));
    DIST(f, "lookup", "--index", in_dir(f, "many.hdm"), "--queries", in_dir(f, "q.bin"), "--json", "--out",
         in_dir(f, "j.json"));
    expect_ok(f);
    char *doc = read_all(in_dir(f, "j.json"), NULL);
    assert_json_object(doc);
    free(doc);
    assert_json_object(f->out); /* the summary */
    /* a text index built from a text file, keys only (values = row ids) */
    HARMONIA(f, "build", "--input", in_dir(f, "pairs.txt"), "--out", in_dir(f, "one.idx"));
    expect_ok(f);
    DIST(f, "build", "--input", in_dir(f, "pairs.txt"), "--out", in_dir(f, "many.hdm"), "--json");
    expect_ok(f);
    assert_json_object(f->out);
    same_results(f, "lookup", "--queries", "q.bin", "text", NULL);
}

static void test_duplicates_in_file_order(void **state)
{
    fixture *f = *state;
    /* key 7 on lines 1, 40 and 80 (three ranks' parts): first / last in file order */
    char text[8192];
    size_t n = 0;
    for (int i = 0; i < 90; i++)
        n += (size_t)snprintf(text + n, sizeof text - n, "%d,%d\n", i % 40 == 0 ? 7 : 1000 + i, 500 + i);
    write_all(in_dir(f, "dup.txt"), text);
    write_all(in_dir(f, "q7.txt"), "7\n1001\n");
    for (int p = 0; p < 2; p++) {
        const char *policy = p == 0 ? "first" : "last";
        HARMONIA(f, "build", "--input", in_dir(f, "dup.txt"), "--duplicates", policy, "--out", in_dir(f, "one.idx"));
        expect_ok(f);
        DIST(f, "build", "--input", in_dir(f, "dup.txt"), "--duplicates", policy, "--out", in_dir(f, "many.hdm"));
        expect_ok(f);
        same_results(f, "lookup", "--queries", "q7.txt", "text", NULL);
    }
    DIST(f, "build", "--input", in_dir(f, "dup.txt"), "--out", in_dir(f, "many.hdm"));
    expect_error(f, 1, "duplicate key 7");
}

static void test_update(void **state)
{
    fixture *f = *state;
    make_data(f);
    HARMONIA(f, "update", "--index", in_dir(f, "one.idx"), "--ops", in_dir(f, "ops.txt"), "--insert-existing",
             "upsert", "--update-missing", "skip");
    expect_ok(f);
    DIST(f, "update", "--index", in_dir(f, "many.hdm"), "--ops", in_dir(f, "ops.txt"), "--insert-existing",
         "upsert", "--update-missing", "skip");
    expect_ok(f);
    expect_stdout(f, "operations       3000");
    same_results(f, "lookup", "--queries", "q.bin", "text", NULL);
    same_results(f, "range", "--ranges", "r.bin", "text", "--collect");

    /* a failing operation late in the file (another rank's part): its line, nothing applied */
    char text[65536];
    size_t n = 0;
    for (int i = 0; i < 300; i++)
        n += (size_t)snprintf(text + n, sizeof text - n, "+ %llu %d\n", 1000000000000ull + (unsigned long long)i, i);
    /* line 290 inserts a key the index holds: the smallest key, by a lower bound of 0 */
    write_all(in_dir(f, "zero.txt"), "0\n");
    HARMONIA(f, "lower-bound", "--index", in_dir(f, "one.idx"), "--queries", in_dir(f, "zero.txt"));
    expect_ok(f);
    unsigned long long q, smallest;
    assert_int_equal(sscanf(f->out, "%llu\t%llu", &q, &smallest), 2);
    char line[64];
    snprintf(line, sizeof line, "+ %llu 1\n", smallest);
    char *at = text;
    for (int i = 0; i < 289; i++)
        at = strchr(at, '\n') + 1;
    char *next = strchr(at, '\n') + 1;
    char rebuilt[65536];
    snprintf(rebuilt, sizeof rebuilt, "%.*s%s%s", (int)(at - text), text, line, next);
    write_all(in_dir(f, "bad-ops.txt"), rebuilt);
    DIST(f, "update", "--index", in_dir(f, "many.hdm"), "--ops", in_dir(f, "bad-ops.txt"));
    expect_error(f, 1, "bad-ops.txt:290:");
    expect_stderr(f, "already present");
    expect_stderr(f, "is unchanged");
    same_results(f, "lookup", "--queries", "q.bin", "text", NULL);
    /* a malformed line in the last rank's part */
    write_all(in_dir(f, "bad-q.txt"), "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\nabc\n");
    DIST(f, "lookup", "--index", in_dir(f, "many.hdm"), "--queries", in_dir(f, "bad-q.txt"));
    expect_error(f, 1, "bad-q.txt:12: 'abc' is not an unsigned number");
}

static void test_info_check_and_damage(void **state)
{
    fixture *f = *state;
    make_data(f);
    DIST(f, "info", "--index", in_dir(f, "many.hdm"));
    expect_ok(f);
    expect_stdout(f, "keys         20000");
    DIST(f, "info", "--index", in_dir(f, "many.hdm"), "--json");
    expect_ok(f);
    assert_json_object(f->out);
    DIST(f, "check", "--index", in_dir(f, "many.hdm"));
    expect_ok(f);
    expect_stdout(f, "OK: ");
    /* another number of ranks */
    char more[16];
    snprintf(more, sizeof more, "%d", atoi(ranks_text) + 1);
    DIST_N(f, more, "lookup", "--index", in_dir(f, "many.hdm"), "--queries", in_dir(f, "q.bin"), "--out",
           in_dir(f, "x.txt"));
    expect_error(f, 1, "load it on");
    assert_false(file_exists(in_dir(f, "x.txt")));
    /* a damaged manifest */
    size_t size;
    char *manifest = read_all(in_dir(f, "many.hdm"), &size);
    manifest[30] ^= 1;
    write_bytes(in_dir(f, "many.hdm"), manifest, size);
    free(manifest);
    DIST(f, "check", "--index", in_dir(f, "many.hdm"));
    expect_error(f, 1, "damaged manifest");
    /* bad usage: one message, from rank 0, naming this tool */
    DIST(f, "lookup", "--index", in_dir(f, "many.hdm"), "--bogus");
    expect_error(f, 2, "harmonia-dist lookup: unknown option '--bogus'");
    assert_null(strstr(strstr(f->err, "--bogus") + 1, "unknown option"));
}

/* Outputs as the harmonia tool writes them: an output naming an input refused, a link followed to
 * the real file (whose mode is kept), a FIFO refused, nothing left behind. */
static void test_outputs(void **state)
{
    fixture *f = *state;
    make_data(f);
    DIST(f, "lookup", "--index", in_dir(f, "many.hdm"), "--queries", in_dir(f, "q.bin"), "--out",
         in_dir(f, "q.bin"));
    expect_error(f, 2, "is the same file as --queries");
    DIST(f, "build", "--input", in_dir(f, "pairs.bin"), "--out", in_dir(f, "pairs.bin"));
    expect_error(f, 2, "is the same file as --input");
    write_all(in_dir(f, "real.txt"), "old\n");
    assert_int_equal(chmod(in_dir(f, "real.txt"), 0600), 0);
    assert_int_equal(symlink(in_dir(f, "real.txt"), in_dir(f, "link.txt")), 0);
    DIST(f, "lookup", "--index", in_dir(f, "many.hdm"), "--queries", in_dir(f, "q.bin"), "--out",
         in_dir(f, "link.txt"));
    expect_ok(f);
    struct stat st;
    assert_int_equal(lstat(in_dir(f, "link.txt"), &st), 0);
    assert_true(S_ISLNK(st.st_mode));
    assert_int_equal(stat(in_dir(f, "real.txt"), &st), 0);
    assert_int_equal(st.st_mode & 0777, 0600);
    HARMONIA(f, "lookup", "--index", in_dir(f, "one.idx"), "--queries", in_dir(f, "q.bin"), "--out",
             in_dir(f, "one.txt"));
    expect_ok(f);
    expect_same_file(in_dir(f, "real.txt"), in_dir(f, "one.txt"));
    assert_int_equal(mkfifo(in_dir(f, "fifo"), 0600), 0);
    DIST(f, "lookup", "--index", in_dir(f, "many.hdm"), "--queries", in_dir(f, "q.bin"), "--out",
         in_dir(f, "fifo"));
    expect_error(f, 1, "not a regular file");
    /* no temporary file of ours is left in the folder */
    char command[700];
    snprintf(command, sizeof command, "ls '%s' | grep -q '\\.tmp\\.'", f->dir);
    assert_int_not_equal(system(command), 0);
}

int main(int argc, char **argv)
{
    if (argc < 5) {
        fprintf(stderr, "usage: %s harmonia mpi_run.sh harmonia-dist RANKS [full]\n", argv[0]);
        return 1;
    }
    tool_harmonia = argv[1];
    tool_mpi_run = argv[2];
    tool_dist = argv[3];
    ranks_text = argv[4];
    full = argc > 5 && strcmp(argv[5], "full") == 0;
    harmonia_path = tool_mpi_run;
    const struct CMUnitTest core[] = {
        cmocka_unit_test_setup_teardown(test_queries, setup, teardown),
        cmocka_unit_test_setup_teardown(test_update, setup, teardown),
    };
    const struct CMUnitTest all[] = {
        cmocka_unit_test_setup_teardown(test_queries, setup, teardown),
        cmocka_unit_test_setup_teardown(test_duplicates_in_file_order, setup, teardown),
        cmocka_unit_test_setup_teardown(test_update, setup, teardown),
        cmocka_unit_test_setup_teardown(test_info_check_and_damage, setup, teardown),
        cmocka_unit_test_setup_teardown(test_outputs, setup, teardown),
    };
    return full ? cmocka_run_group_tests(all, NULL, NULL) : cmocka_run_group_tests(core, NULL, NULL);
}
