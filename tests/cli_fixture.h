/* cli_fixture.h — the shared fixture of the CLI tests (test_cli, test_cli_update,
 * test_profile_cli, test_cli_safety): the path of the real `harmonia` binary, a fresh temporary
 * folder per test with a stable store of the paths named in it, running the tool there (fork and
 * exec, its stdout and stderr captured; optionally with a file-size limit, extra environment,
 * another user, or in the background to be waited for or killed), the expectations on a run's
 * exit code and output, whole-file reads, writes and snapshots, the JSON-object and UTF-8 checks,
 * and the sorted-pair model the tests check results against (with its readers of binary and text
 * key files). Header-only so that each test stays a small
 * standalone program; what is particular to one test's model stays in its own file. */
#ifndef HARMONIA_CLI_FIXTURE_H
#define HARMONIA_CLI_FIXTURE_H

#include <dirent.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

static const char *harmonia_path; /* argv[1] of the test program */

/* ---- the model of the CLI tests: (key, value) pairs sorted by key ------------------------------- */

typedef struct pair {
    uint64_t key, value;
} pair;

typedef struct model {
    pair *pairs; /* sorted by key */
    size_t n, capacity;
} model;

static inline int compare_pairs(const void *a, const void *b)
{
    const pair *x = a, *y = b;
    return x->key < y->key ? -1 : x->key > y->key;
}

/* Index of the first pair with key >= q. */
static inline size_t model_lower_bound(const model *m, uint64_t q)
{
    size_t lo = 0, hi = m->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (m->pairs[mid].key < q)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* Takes the tool's path from argv[1] (made absolute: some runs start in the test's folder);
 * false, after the usage line, when there is none. */
static inline bool fixture_take_tool(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s PATH-TO-harmonia\n", argv[0]);
        return false;
    }
    char *absolute = realpath(argv[1], NULL);
    harmonia_path = absolute != NULL ? absolute : argv[1];
    return true;
}

enum { FIXTURE_MAX_PATHS = 64, FIXTURE_MAX_NAME = 64, FIXTURE_MAX_PATH = 512 };

typedef struct fixture {
    char dir[256];
    char names[FIXTURE_MAX_PATHS][FIXTURE_MAX_NAME]; /* the names asked of in_dir, */
    char paths[FIXTURE_MAX_PATHS][FIXTURE_MAX_PATH]; /* and their paths (stable, never reused) */
    int n_paths;
    int exit_code;
    char *out, *err; /* what the last run printed */
} fixture;

/* The path of name in the test's folder; the same name gives the same string, valid for the
 * whole test. Fails the test (never overwrites) when the store is full or the path too long. */
static inline const char *in_dir(fixture *f, const char *name)
{
    for (int i = 0; i < f->n_paths; i++) {
        if (strcmp(f->names[i], name) == 0)
            return f->paths[i];
    }
    size_t dir_len = strlen(f->dir), name_len = strlen(name);
    assert_true(f->n_paths < FIXTURE_MAX_PATHS);
    assert_true(name_len < FIXTURE_MAX_NAME);
    assert_true(dir_len + 1 + name_len < FIXTURE_MAX_PATH);
    int i = f->n_paths++;
    memcpy(f->names[i], name, name_len + 1);
    char *p = f->paths[i];
    memcpy(p, f->dir, dir_len);
    p[dir_len] = '/';
    memcpy(p + dir_len + 1, name, name_len + 1);
    return p;
}

/* The whole file, NUL-terminated (size_out, when given, without the NUL); NULL (size 0) if it
 * cannot be opened. */
static inline char *read_all(const char *path, size_t *size_out)
{
    if (size_out != NULL)
        *size_out = 0;
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

static inline void write_all(const char *path, const char *text)
{
    FILE *file = fopen(path, "wb");
    assert_non_null(file);
    fputs(text, file);
    fclose(file);
}

static inline void write_bytes(const char *path, const void *data, size_t size)
{
    FILE *file = fopen(path, "wb");
    assert_non_null(file);
    assert_int_equal(fwrite(data, 1, size, file), size);
    fclose(file);
}

static inline bool file_exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

/* Word `index` of a little-endian array of 32- or 64-bit words. */
static inline uint64_t get_word(const char *data, int bits, size_t index)
{
    if (bits == 32) {
        uint32_t v;
        memcpy(&v, data + index * 4, 4);
        return v;
    }
    uint64_t v;
    memcpy(&v, data + index * 8, 8);
    return v;
}

/* A binary key,value file of 32- or 64-bit records into a sorted model; the keys must be distinct
 * (generate writes distinct keys). */
static inline model model_from_binary(const char *path, int bits)
{
    size_t size;
    char *data = read_all(path, &size);
    assert_non_null(data);
    size_t width = (size_t)bits / 8;
    assert_int_equal(size % (2 * width), 0);
    size_t n = size / (2 * width);
    model m = {malloc((n + 1) * sizeof(pair)), n, n + 1};
    assert_non_null(m.pairs);
    for (size_t i = 0; i < n; i++)
        m.pairs[i] = (pair){get_word(data, bits, 2 * i), get_word(data, bits, 2 * i + 1)};
    free(data);
    qsort(m.pairs, m.n, sizeof(pair), compare_pairs);
    for (size_t i = 1; i < m.n; i++)
        assert_true(m.pairs[i - 1].key < m.pairs[i].key);
    return m;
}

/* A text key,value file ("key,value" lines, '#' comments) into a sorted model. */
static inline model model_from_text(const char *path)
{
    FILE *file = fopen(path, "r");
    assert_non_null(file);
    model m = {NULL, 0, 0};
    char line[256];
    while (fgets(line, sizeof line, file) != NULL) {
        if (line[0] == '#' || line[0] == '\n')
            continue;
        unsigned long long k, v;
        assert_int_equal(sscanf(line, "%llu,%llu", &k, &v), 2);
        if (m.n == m.capacity) {
            m.capacity = m.capacity ? m.capacity * 2 : 1024;
            m.pairs = realloc(m.pairs, m.capacity * sizeof(pair));
            assert_non_null(m.pairs);
        }
        m.pairs[m.n++] = (pair){k, v};
    }
    fclose(file);
    qsort(m.pairs, m.n, sizeof(pair), compare_pairs);
    return m;
}

/* How a run differs from a plain one (all zero: a plain run). */
typedef struct run_opts {
    unsigned long long fsize_limit; /* RLIMIT_FSIZE in bytes (SIGXFSZ ignored: writes get EFBIG) */
    const char *const *env;         /* NAME=VALUE strings added to the environment, NULL-ended */
    unsigned uid;                   /* run as this user and group (from root); 0 = as we are */
    bool in_dir;                    /* run in the test's folder (relative names land there) */
} run_opts;

/* Starts harmonia with argv (NULL-terminated, without the program) and opts (may be NULL), its
 * stdout and stderr going to <dir>/.<tag>.out and .err. Returns the child's pid. */
static inline pid_t spawn_opts(fixture *f, const run_opts *opts, const char *tag,
                               const char *const *argv)
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
    snprintf(out_path, sizeof out_path, "%s/.%s.out", f->dir, tag);
    snprintf(err_path, sizeof err_path, "%s/.%s.err", f->dir, tag);
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        int out = open(out_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        int err = open(err_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (out < 0 || err < 0 || dup2(out, 1) < 0 || dup2(err, 2) < 0)
            _exit(126);
        if (opts != NULL) {
            if (opts->in_dir && chdir(f->dir) != 0)
                _exit(126);
            if (opts->fsize_limit > 0) {
                signal(SIGXFSZ, SIG_IGN);
                struct rlimit limit = {(rlim_t)opts->fsize_limit, (rlim_t)opts->fsize_limit};
                if (setrlimit(RLIMIT_FSIZE, &limit) != 0)
                    _exit(126);
            }
            for (const char *const *e = opts->env; e != NULL && *e != NULL; e++)
                putenv((char *)*e);
            if (opts->uid != 0 && (setgid(opts->uid) != 0 || setuid(opts->uid) != 0))
                _exit(126);
        }
        execv(harmonia_path, (char *const *)args);
        _exit(127);
    }
    return pid;
}

/* Waits for a spawned run; returns its exit code and keeps its output in f->out and f->err. A
 * crash (a signal) fails the test, unless killed_ok and the signal is SIGKILL (then -1). */
static inline int wait_run(fixture *f, pid_t pid, const char *tag, bool killed_ok)
{
    int wstatus;
    assert_int_equal(waitpid(pid, &wstatus, 0), pid);
    char out_path[512], err_path[512];
    snprintf(out_path, sizeof out_path, "%s/.%s.out", f->dir, tag);
    snprintf(err_path, sizeof err_path, "%s/.%s.err", f->dir, tag);
    free(f->out);
    free(f->err);
    f->out = read_all(out_path, NULL);
    f->err = read_all(err_path, NULL);
    assert_non_null(f->out);
    assert_non_null(f->err);
    if (WIFSIGNALED(wstatus) && killed_ok && WTERMSIG(wstatus) == SIGKILL)
        return f->exit_code = -1;
    if (!WIFEXITED(wstatus)) {
        fprintf(stderr, "harmonia died (signal %d)\nstderr: %s\n",
                WIFSIGNALED(wstatus) ? WTERMSIG(wstatus) : 0, f->err);
        fail();
    }
    f->exit_code = WEXITSTATUS(wstatus);
    assert_true(f->exit_code != 126 && f->exit_code != 127); /* the child's own setup failed */
    return f->exit_code;
}

/* Runs harmonia in the fixture with argv (NULL-terminated, without the program) and opts (NULL
 * for a plain run); returns its exit code and keeps its output in f->out and f->err. A crash fails
 * the test. */
static inline int run_argv_opts(fixture *f, const run_opts *opts, const char *const *argv)
{
    return wait_run(f, spawn_opts(f, opts, "run", argv), "run", false);
}

static inline int run_argv(fixture *f, const char *const *argv)
{
    return run_argv_opts(f, NULL, argv);
}

/* run_argv_opts with the NULL-terminated arguments. */
static inline int run_with(fixture *f, const run_opts *opts, ...)
{
    const char *argv[64];
    int n = 0;
    va_list ap;
    va_start(ap, opts);
    const char *a;
    while ((a = va_arg(ap, const char *)) != NULL) {
        assert_true(n < 63);
        argv[n++] = a;
    }
    va_end(ap);
    argv[n] = NULL;
    return run_argv_opts(f, opts, argv);
}

/* run_argv with the NULL-terminated arguments. */
static inline int run(fixture *f, ...)
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

/* Asserts that the last run succeeded, showing its stderr otherwise. */
static inline void expect_ok(fixture *f)
{
    if (f->exit_code != 0)
        fprintf(stderr, "unexpected exit %d; stderr:\n%s\n", f->exit_code, f->err);
    assert_int_equal(f->exit_code, 0);
}

/* Asserts the last run's exit code and, unless in_stderr is NULL, that its stderr holds it. */
static inline void expect_error(fixture *f, int code, const char *in_stderr)
{
    if (f->exit_code != code || (in_stderr != NULL && strstr(f->err, in_stderr) == NULL))
        fprintf(stderr, "expected exit %d with '%s' in stderr; got %d:\n%s\n", code,
                in_stderr != NULL ? in_stderr : "", f->exit_code, f->err);
    assert_int_equal(f->exit_code, code);
    if (in_stderr != NULL)
        assert_non_null(strstr(f->err, in_stderr));
}

/* Asserts that the last run's stderr holds text (after expect_error for the first part). */
static inline void expect_stderr(fixture *f, const char *text)
{
    if (strstr(f->err, text) == NULL)
        fprintf(stderr, "expected '%s' in stderr:\n%s\n", text, f->err);
    assert_non_null(strstr(f->err, text));
}

static inline void expect_stdout(fixture *f, const char *text)
{
    if (strstr(f->out, text) == NULL)
        fprintf(stderr, "expected '%s' in stdout:\n%s\n", text, f->out);
    assert_non_null(strstr(f->out, text));
}

/* A JSON document: an object, brackets balanced outside strings, nothing after it. */
static inline void assert_json_object(const char *text)
{
    const char *p = text;
    while (*p == ' ' || *p == '\n')
        p++;
    assert_int_equal(*p, '{');
    int depth = 0;
    bool in_string = false;
    for (; *p != '\0'; p++) {
        if (in_string) {
            if (*p == '\\')
                p++;
            else if (*p == '"')
                in_string = false;
            continue;
        }
        if (*p == '"')
            in_string = true;
        else if (*p == '{' || *p == '[')
            depth++;
        else if (*p == '}' || *p == ']') {
            depth--;
            assert_true(depth >= 0);
            if (depth == 0)
                break;
        }
    }
    assert_int_equal(depth, 0);
    assert_false(in_string);
    for (p++; *p != '\0'; p++)
        assert_true(*p == '\n' || *p == ' ');
    assert_null(strstr(text, ",]"));
    assert_null(strstr(text, ",}"));
}

/* A file's bytes, to compare before and after a command that must not change it. */
typedef struct snapshot {
    char *data;
    size_t size;
} snapshot;

static inline snapshot take_snapshot(const char *path)
{
    snapshot s;
    s.data = read_all(path, &s.size);
    assert_non_null(s.data);
    return s;
}

static inline void assert_unchanged(const snapshot *s, const char *path)
{
    size_t size;
    char *now = read_all(path, &size);
    assert_non_null(now);
    assert_int_equal(size, s->size);
    assert_memory_equal(now, s->data, size);
    free(now);
}

/* Entries of the test's folder whose name holds ".tmp." (temporary files of saves). */
static inline int count_temp_files(const fixture *f)
{
    DIR *d = opendir(f->dir);
    assert_non_null(d);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        n += strstr(e->d_name, ".tmp.") != NULL;
    closedir(d);
    return n;
}

/* Fails the test unless text is valid UTF-8 (what a JSON document must be). */
static inline void assert_valid_utf8(const char *text)
{
    const unsigned char *s = (const unsigned char *)text;
    while (*s != '\0') {
        int n = *s < 0x80 ? 1 : (*s & 0xE0) == 0xC0 && *s >= 0xC2 ? 2 : (*s & 0xF0) == 0xE0 ? 3
                              : (*s & 0xF8) == 0xF0 && *s <= 0xF4 ? 4 : 0;
        if (n == 0)
            fail_msg("not UTF-8: byte 0x%02x at %zu", *s, (size_t)(s - (const unsigned char *)text));
        for (int i = 1; i < n; i++)
            if ((s[i] & 0xC0) != 0x80)
                fail_msg("not UTF-8: a broken sequence at %zu", (size_t)(s - (const unsigned char *)text));
        s += n;
    }
}

/* A fresh folder $TMPDIR/<prefix>-XXXXXX (or under /tmp) for one test; the fixture is *state.
 * Each test program wraps it as its cmocka setup with its own prefix. */
static inline int fixture_setup(void **state, const char *prefix)
{
    fixture *f = calloc(1, sizeof *f);
    if (f == NULL)
        return -1;
    const char *tmp = getenv("TMPDIR");
    snprintf(f->dir, sizeof f->dir, "%s/%s-XXXXXX", tmp != NULL ? tmp : "/tmp", prefix);
    if (mkdtemp(f->dir) == NULL) {
        free(f);
        return -1;
    }
    *state = f;
    return 0;
}

/* Removes the test's folder with all in it and frees the fixture. */
static inline int teardown(void **state)
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

#endif
