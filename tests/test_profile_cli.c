/* test_profile_cli.c — runs the real `harmonia profile-ntg` (the tool's path is argv[1]) in a
 * fresh temporary folder per test: the table with every G, the stored choice as `harmonia info`
 * reports it, --no-store, --json, the SVG plot, a queries file, and bad inputs with their exit
 * codes and messages. Without a GPU the command prints the model alone and says why; with one the
 * same checks hold with the measured best stored. It does not link the library. */
#include "tests/cli_fixture.h"

static bool have_gpu;

static int setup(void **state) { return fixture_setup(state, "harmonia-profile"); }

/* An index of count uniform 64-bit keys with the given fanout, at dir/name. */
static const char *make_index(fixture *f, const char *name, const char *count, const char *fanout)
{
    const char *keys = in_dir(f, "keys.bin");
    run(f, "generate", "keys", "--count", count, "--out", keys, NULL);
    expect_ok(f);
    const char *index = in_dir(f, name);
    run(f, "build", "--input", keys, "--fanout", fanout, "--out", index, NULL);
    expect_ok(f);
    return index;
}

/* The G that `harmonia info --json` reports as stored (0 = none). */
static unsigned stored_group_size(fixture *f, const char *index)
{
    run(f, "info", "--index", index, "--json", NULL);
    expect_ok(f);
    const char *at = strstr(f->out, "\"ntg_group_size\":");
    assert_non_null(at);
    return (unsigned)strtoul(at + strlen("\"ntg_group_size\":"), NULL, 10);
}

/* The G after "label G = " in the last output. */
static unsigned g_after(fixture *f, const char *label)
{
    const char *at = strstr(f->out, label);
    if (at == NULL)
        fprintf(stderr, "no '%s' in:\n%s\n", label, f->out);
    assert_non_null(at);
    at = strstr(at, "G = ");
    assert_non_null(at);
    return (unsigned)strtoul(at + 4, NULL, 10);
}

/* ---- tests --------------------------------------------------------------------------------- */

/* The whole run: a row for every G (F = 16: 16 .. 1), the model's choice, the stored G as info
 * sees it (the measured best with a GPU, the model's choice without), the plot. */
static void test_profile_and_store(void **state)
{
    fixture *f = *state;
    const char *index = make_index(f, "t.idx", "30000", "16");
    assert_int_equal(stored_group_size(f, index), 0);
    const char *plot = in_dir(f, "ntg.svg");
    run(f, "profile-ntg", "--index", index, "--count", "2e5", "--runs", "2", "--plot", plot, NULL);
    expect_ok(f);
    expect_stdout(f, "F = 16");
    expect_stdout(f, "model steps");
    expect_stdout(f, "992 queries in 31 runs of 32");
    const char *rows[5] = {"\n   16 ", "\n    8 ", "\n    4 ", "\n    2 ", "\n    1 "};
    for (int i = 0; i < 5; i++)
        expect_stdout(f, rows[i]);
    assert_null(strstr(f->out, "\n   32 "));
    unsigned model_choice = g_after(f, "model's choice:");
    unsigned stored = g_after(f, "stored:");
    assert_true(model_choice == 1 || model_choice == 2 || model_choice == 4 || model_choice == 8 ||
                model_choice == 16);
    if (have_gpu) {
        expect_stdout(f, "the measured best");
        assert_int_equal(stored, g_after(f, "measured best:"));
    } else {
        expect_stdout(f, "measured: no GPU: ");
        expect_stdout(f, "the model's choice, in");
        assert_int_equal(stored, model_choice);
    }
    assert_int_equal(stored_group_size(f, index), stored);
    run(f, "check", "--index", index, NULL);
    expect_ok(f);

    char *svg = read_all(plot, NULL);
    assert_non_null(svg);
    assert_true(strncmp(svg, "<?xml", 5) == 0);
    assert_non_null(strstr(svg, "<svg"));
    assert_non_null(strstr(svg, "</svg>"));
    char mark[64];
    snprintf(mark, sizeof mark, "model's choice G = %u", model_choice);
    assert_non_null(strstr(svg, mark));
    assert_non_null(strstr(svg, have_gpu ? "measured best G = " : "no measurement: no GPU: "));
    free(svg);
}

/* --no-store leaves the file byte for byte; --model-only says so; wide trees stop at G = 32. */
static void test_no_store_and_wide_tree(void **state)
{
    fixture *f = *state;
    const char *index = make_index(f, "w.idx", "30000", "128");
    size_t before_size, after_size;
    char *before = read_all(index, &before_size);
    run(f, "profile-ntg", "--index", index, "--count", "5e4", "--no-store", "--model-only", NULL);
    expect_ok(f);
    expect_stdout(f, "stored:         nothing (--no-store)");
    expect_stdout(f, "measured: skipped (--model-only)");
    expect_stdout(f, "\n   32 ");
    assert_null(strstr(f->out, "\n   64 "));
    char *after = read_all(index, &after_size);
    assert_int_equal(before_size, after_size);
    assert_memory_equal(before, after, before_size);
    free(before);
    free(after);
    assert_int_equal(stored_group_size(f, index), 0);
}

/* JSON: one object with the model's rows, no measurement (--model-only), the stored choice. */
static void test_json(void **state)
{
    fixture *f = *state;
    const char *index = make_index(f, "j.idx", "20000", "32");
    run(f, "profile-ntg", "--index", index, "--count", "5e4", "--model-only", "--json", "--levels", "3",
        "--psa", "on", "--psa-window", "4096", NULL);
    expect_ok(f);
    assert_true(strncmp(f->out, "{\"command\":\"profile-ntg\"", 24) == 0);
    assert_non_null(strstr(f->out, "\"fanout\":32"));
    assert_non_null(strstr(f->out, "\"source\":\"generated\",\"seed\":1"));
    assert_non_null(strstr(f->out, "\"levels\":3"));
    assert_non_null(strstr(f->out, "\"psa\":true"));
    assert_non_null(strstr(f->out, "\"window\":4096"));
    assert_non_null(strstr(f->out, "{\"group_size\":32,"));
    assert_non_null(strstr(f->out, "\"ratio\":null"));
    assert_non_null(strstr(f->out, "\"measurement\":null,\"no_measurement_reason\":\"skipped (--model-only)\""));
    assert_non_null(strstr(f->out, "\"choice_from\":\"model\",\"stored\":true,\"plot\":null}"));
    const char *at = strstr(f->out, "\"model\":");
    assert_non_null(at);
    at = strstr(at, "\"choice\":");
    assert_non_null(at);
    unsigned choice = (unsigned)strtoul(at + 9, NULL, 10);
    assert_int_equal(stored_group_size(f, index), choice);
}

/* A queries file (text), the sample option, and what is wrong with bad files. */
static void test_queries_file(void **state)
{
    fixture *f = *state;
    const char *index = make_index(f, "q.idx", "5000", "16");
    const char *queries = in_dir(f, "q.txt");
    FILE *file = fopen(queries, "w");
    assert_non_null(file);
    fprintf(file, "# a workload\n");
    for (int i = 0; i < 200; i++)
        fprintf(file, "%d\n", i * 7919);
    fclose(file);
    run(f, "profile-ntg", "--index", index, "--queries", queries, "--sample", "64", "--model-only",
        "--no-store", NULL);
    expect_ok(f);
    expect_stdout(f, "workload: 200 queries from");
    expect_stdout(f, "64 queries in 2 runs of 32");

    const char *bad = in_dir(f, "bad.txt");
    write_all(bad, "1\n2\nthree\n");
    run(f, "profile-ntg", "--index", index, "--queries", bad, NULL);
    expect_error(f, 1, "bad.txt:3");
    const char *empty = in_dir(f, "empty.txt");
    write_all(empty, "# nothing\n");
    run(f, "profile-ntg", "--index", index, "--queries", empty, NULL);
    expect_error(f, 1, "no queries");
    run(f, "profile-ntg", "--index", index, "--queries", in_dir(f, "absent.bin"), NULL);
    expect_error(f, 1, "absent.bin");
    const char *odd = in_dir(f, "odd.bin");
    write_all(odd, "12345"); /* not a multiple of 8 bytes */
    run(f, "profile-ntg", "--index", index, "--queries", odd, NULL);
    expect_error(f, 1, "odd.bin");
    assert_int_equal(stored_group_size(f, index), 0); /* failures store nothing */
}

static void test_bad_usage(void **state)
{
    fixture *f = *state;
    const char *index = make_index(f, "u.idx", "1000", "16");
    run(f, "profile-ntg", NULL);
    expect_error(f, 2, "missing --index");
    run(f, "profile-ntg", "--index", index, "--sample", "0", NULL);
    expect_error(f, 2, "--sample");
    run(f, "profile-ntg", "--index", index, "--sample", "31", NULL);
    expect_error(f, 2, "--sample");
    run(f, "profile-ntg", "--index", index, "--levels", "0", NULL);
    expect_error(f, 2, "--levels");
    run(f, "profile-ntg", "--index", index, "--psa", "maybe", NULL);
    expect_error(f, 2, "--psa");
    run(f, "profile-ntg", "--index", index, "--runs", "0", NULL);
    expect_error(f, 2, "--runs");
    run(f, "profile-ntg", "--index", index, "--count", "lots", NULL);
    expect_error(f, 2, "--count");
    run(f, "profile-ntg", "--index", index, "--psa-window", "100", NULL);
    expect_error(f, 2, "--psa-window");
    run(f, "profile-ntg", "--index", index, "--plot", in_dir(f, "p.png"), NULL);
    expect_error(f, 2, "SVG");
    run(f, "profile-ntg", "--index", index, "--queries", "q.bin", "--count", "10", NULL);
    expect_error(f, 2, "--count");
    run(f, "profile-ntg", "--index", index, "--queries-format", "text", NULL);
    expect_error(f, 2, "--queries-format needs --queries");
    run(f, "profile-ntg", "--index", index, "--frobnicate", NULL);
    expect_error(f, 2, "unknown option '--frobnicate'");
    run(f, "profile-ntg", "--index", in_dir(f, "absent.idx"), NULL);
    expect_error(f, 1, "absent.idx");
    const char *junk = in_dir(f, "junk.idx");
    write_all(junk, "this is not an index file, not even close to one...........................");
    run(f, "profile-ntg", "--index", junk, NULL);
    expect_error(f, 1, "junk.idx");
    /* an empty index has no keys to draw queries from */
    const char *none = in_dir(f, "none.txt");
    write_all(none, "# no keys\n");
    const char *empty_index = in_dir(f, "empty.idx");
    run(f, "build", "--input", none, "--out", empty_index, NULL);
    expect_ok(f);
    run(f, "profile-ntg", "--index", empty_index, NULL);
    expect_error(f, 1, "no keys");
    assert_int_equal(stored_group_size(f, index), 0);
}

static void test_help(void **state)
{
    fixture *f = *state;
    run(f, "profile-ntg", "--help", NULL);
    expect_ok(f);
    expect_stdout(f, "Usage: harmonia profile-ntg");
    expect_stdout(f, "--no-store");
    run(f, "--help", NULL);
    expect_ok(f);
    expect_stdout(f, "profile-ntg");
}

int main(int argc, char **argv)
{
    if (!fixture_take_tool(argc, argv))
        return 1;
    void *probe_state; /* a GPU or not, as the tool sees it, in a folder of its own */
    if (setup(&probe_state) != 0)
        return 1;
    fixture *probe = probe_state;
    run(probe, "info", "--device", NULL);
    have_gpu = probe->exit_code == 0 && strstr(probe->out, "no GPU") == NULL;
    teardown(&probe_state);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_profile_and_store, setup, teardown),
        cmocka_unit_test_setup_teardown(test_no_store_and_wide_tree, setup, teardown),
        cmocka_unit_test_setup_teardown(test_json, setup, teardown),
        cmocka_unit_test_setup_teardown(test_queries_file, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bad_usage, setup, teardown),
        cmocka_unit_test_setup_teardown(test_help, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
