/* test_profile_cli.c — runs the real `harmonia profile-ntg` (the tool's path is argv[1]) in a
 * fresh temporary folder per test: the table with every G, the stored choice as `harmonia info`
 * reports it, --no-store, --json, the SVG plot, a queries file, and bad inputs with their exit
 * codes and messages. Without a GPU the command prints the model alone and says why; with one the
 * same checks hold with the measured best stored. It does not link the library. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

extern char **environ;

static const char *harmonia_path;
static bool have_gpu;

typedef struct fixture {
    char dir[256];
    char path[8][512]; /* scratch for file names (rotating) */
    int next_path;
    int exit_code;
    char *out, *err;
} fixture;

static const char *in_dir(fixture *f, const char *name)
{
    char *p = f->path[f->next_path++ % 8];
    size_t dir_len = strlen(f->dir), name_len = strlen(name);
    assert_true(dir_len + 1 + name_len < sizeof f->path[0]);
    memcpy(p, f->dir, dir_len);
    p[dir_len] = '/';
    memcpy(p + dir_len + 1, name, name_len + 1);
    return p;
}

static char *read_all(const char *path, size_t *size_out)
{
    FILE *file = fopen(path, "rb");
    if (file == NULL)
        return NULL;
    fseek(file, 0, SEEK_END);
    long size = ftell(file);
    fseek(file, 0, SEEK_SET);
    char *data = malloc((size_t)size + 1);
    assert_non_null(data);
    size_t got = fread(data, 1, (size_t)size, file);
    fclose(file);
    data[got] = '\0';
    if (size_out != NULL)
        *size_out = got;
    return data;
}

static void write_all(const char *path, const char *text)
{
    FILE *file = fopen(path, "wb");
    assert_non_null(file);
    fputs(text, file);
    fclose(file);
}

/* Runs the tool with argv (NULL-terminated, without the program); keeps its output. */
static int run_argv(fixture *f, const char *const *argv)
{
    const char *args[64];
    int n = 0;
    args[n++] = harmonia_path;
    for (; *argv != NULL; argv++) {
        assert_true(n < 63);
        args[n++] = *argv;
    }
    args[n] = NULL;
    char out_path[512], err_path[512];
    snprintf(out_path, sizeof out_path, "%s/.stdout", f->dir);
    snprintf(err_path, sizeof err_path, "%s/.stderr", f->dir);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 1, out_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_addopen(&actions, 2, err_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    pid_t pid;
    int rc = posix_spawn(&pid, harmonia_path, &actions, NULL, (char *const *)args, environ);
    posix_spawn_file_actions_destroy(&actions);
    assert_int_equal(rc, 0);
    int wstatus;
    assert_int_equal(waitpid(pid, &wstatus, 0), pid);
    free(f->out);
    free(f->err);
    f->out = read_all(out_path, NULL);
    f->err = read_all(err_path, NULL);
    assert_non_null(f->out);
    assert_non_null(f->err);
    if (!WIFEXITED(wstatus)) {
        fprintf(stderr, "harmonia %s died (signal %d)\nstderr: %s\n", args[1],
                WIFSIGNALED(wstatus) ? WTERMSIG(wstatus) : 0, f->err);
        fail();
    }
    f->exit_code = WEXITSTATUS(wstatus);
    return f->exit_code;
}

static int run(fixture *f, ...)
{
    const char *argv[64];
    int n = 0;
    va_list ap;
    va_start(ap, f);
    const char *a;
    while ((a = va_arg(ap, const char *)) != NULL) {
        assert_true(n < 63);
        argv[n++] = a;
    }
    va_end(ap);
    argv[n] = NULL;
    return run_argv(f, argv);
}

static void expect_ok(fixture *f)
{
    if (f->exit_code != 0)
        fprintf(stderr, "unexpected exit %d; stderr:\n%s\n", f->exit_code, f->err);
    assert_int_equal(f->exit_code, 0);
}

static void expect_error(fixture *f, int code, const char *in_stderr)
{
    if (f->exit_code != code || (in_stderr != NULL && strstr(f->err, in_stderr) == NULL))
        fprintf(stderr, "expected exit %d with '%s' in stderr; got %d:\n%s\n", code,
                in_stderr != NULL ? in_stderr : "", f->exit_code, f->err);
    assert_int_equal(f->exit_code, code);
    if (in_stderr != NULL)
        assert_non_null(strstr(f->err, in_stderr));
}

static void expect_out(fixture *f, const char *text)
{
    if (strstr(f->out, text) == NULL)
        fprintf(stderr, "expected '%s' in stdout:\n%s\n", text, f->out);
    assert_non_null(strstr(f->out, text));
}

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    if (f == NULL)
        return -1;
    const char *tmp = getenv("TMPDIR");
    snprintf(f->dir, sizeof f->dir, "%s/harmonia-profile-XXXXXX", tmp != NULL ? tmp : "/tmp");
    if (mkdtemp(f->dir) == NULL) {
        free(f);
        return -1;
    }
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    char command[600];
    snprintf(command, sizeof command, "rm -rf '%s'", f->dir);
    if (system(command) != 0)
        fprintf(stderr, "could not remove %s\n", f->dir);
    free(f->out);
    free(f->err);
    free(f);
    return 0;
}

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
    expect_out(f, "F = 16");
    expect_out(f, "model steps");
    expect_out(f, "992 queries in 31 runs of 32");
    const char *rows[5] = {"\n   16 ", "\n    8 ", "\n    4 ", "\n    2 ", "\n    1 "};
    for (int i = 0; i < 5; i++)
        expect_out(f, rows[i]);
    assert_null(strstr(f->out, "\n   32 "));
    unsigned model_choice = g_after(f, "model's choice:");
    unsigned stored = g_after(f, "stored:");
    assert_true(model_choice == 1 || model_choice == 2 || model_choice == 4 || model_choice == 8 ||
                model_choice == 16);
    if (have_gpu) {
        expect_out(f, "the measured best");
        assert_int_equal(stored, g_after(f, "measured best:"));
    } else {
        expect_out(f, "measured: no GPU: ");
        expect_out(f, "the model's choice, in");
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
    expect_out(f, "stored:         nothing (--no-store)");
    expect_out(f, "measured: skipped (--model-only)");
    expect_out(f, "\n   32 ");
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
    expect_out(f, "workload: 200 queries from");
    expect_out(f, "64 queries in 2 runs of 32");

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
    expect_out(f, "Usage: harmonia profile-ntg");
    expect_out(f, "--no-store");
    run(f, "--help", NULL);
    expect_ok(f);
    expect_out(f, "profile-ntg");
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s PATH-TO-harmonia\n", argv[0]);
        return 1;
    }
    harmonia_path = argv[1];
    fixture probe;
    memset(&probe, 0, sizeof probe);
    snprintf(probe.dir, sizeof probe.dir, "%s/harmonia-profile-XXXXXX",
             getenv("TMPDIR") != NULL ? getenv("TMPDIR") : "/tmp");
    if (mkdtemp(probe.dir) == NULL)
        return 1;
    run(&probe, "info", "--device", NULL);
    have_gpu = probe.exit_code == 0 && strstr(probe.out, "no GPU") == NULL;
    unlink(in_dir(&probe, ".stdout"));
    unlink(in_dir(&probe, ".stderr"));
    rmdir(probe.dir);
    free(probe.out);
    free(probe.err);
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
