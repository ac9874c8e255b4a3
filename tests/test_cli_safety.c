/* test_cli_safety.c — runs the real `harmonia` binary (argv[1]) as a careless or hostile user
 * would and checks that nothing is lost: outputs that are not regular files or that name an input
 * are refused, links and modes survive, a failed write (EFBIG) leaves the old file, concurrent
 * updates are serialised by the index lock, a kill -9 at any moment of `update` or `build` leaves
 * the complete old or the complete new index (and the next run removes the temporary file),
 * --no-verify never crashes on forged files and never saves their damage, and the messages say
 * what is wrong. It links no library code: only xxHash, to forge checksums over damaged trees. */
#include "tests/cli_fixture.h"

#include <errno.h>
#include <sys/file.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <xxhash.h>

#include "harmonia/index_file.h" /* the byte offsets of the format (constants only) */

static int setup(void **state) { return fixture_setup(state, "harmonia-cli-safety"); }

/* ---- small helpers ------------------------------------------------------------------------- */

static const char *make_keys(fixture *f, const char *name, const char *count)
{
    const char *path = in_dir(f, name);
    run(f, "generate", "keys", "--count", count, "--out", path, "--quiet", NULL);
    expect_ok(f);
    return path;
}

static const char *make_index(fixture *f, const char *keys, const char *name)
{
    const char *path = in_dir(f, name);
    run(f, "build", "--input", keys, "--out", path, "--quiet", NULL);
    expect_ok(f);
    return path;
}

static bool is_symlink(const char *path)
{
    struct stat st;
    return lstat(path, &st) == 0 && S_ISLNK(st.st_mode);
}

static mode_t mode_of(const char *path)
{
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    return st.st_mode & 07777;
}

static void sleep_ms(long ms)
{
    struct timespec t = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&t, NULL);
}

static double now_seconds(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static void expect_stderr_lacks(fixture *f, const char *text)
{
    if (strstr(f->err, text) != NULL)
        fprintf(stderr, "did not expect '%s' in stderr:\n%s\n", text, f->err);
    assert_null(strstr(f->err, text));
}

/* The value the index gives key (text lookup of one query), or -1 when absent. */
static long long lookup_value(fixture *f, const char *index, unsigned long long key)
{
    const char *q = in_dir(f, "one-query.txt"), *r = in_dir(f, "one-result.txt");
    char text[32];
    snprintf(text, sizeof text, "%llu\n", key);
    write_all(q, text);
    run(f, "lookup", "--index", index, "--queries", q, "--out", r, "--backend", "cpu", "--quiet", NULL);
    expect_ok(f);
    char *result = read_all(r, NULL);
    assert_non_null(result);
    unsigned long long k, v;
    long long value = sscanf(result, "%llu\t%llu", &k, &v) == 2 ? (long long)v : -1;
    free(result);
    return value;
}

/* ---- 1. outputs that are not regular files ------------------------------------------------- */

static void test_outputs_that_are_not_regular_files_are_refused(void **state)
{
    fixture *f = *state;
    const char *keys = make_keys(f, "keys.bin", "2000");
    const char *index = make_index(f, keys, "keys.idx");
    const char *queries = in_dir(f, "q.bin");
    run(f, "generate", "queries", "--keys", keys, "--count", "100", "--out", queries, "--quiet", NULL);
    expect_ok(f);

    const char *fifo = in_dir(f, "fifo");
    assert_int_equal(mkfifo(fifo, 0600), 0);
    const char *folder = in_dir(f, "folder");
    assert_int_equal(mkdir(folder, 0755), 0);
    const char *device = in_dir(f, "null-device");
    bool have_device = mknod(device, S_IFCHR | 0666, makedev(1, 3)) == 0;
    const char *targets[] = {fifo, folder, have_device ? device : NULL};
    const char *kinds[] = {"FIFO", "folder", "character device"};
    for (int t = 0; t < 3; t++) {
        if (targets[t] == NULL)
            continue;
        run(f, "build", "--input", keys, "--out", targets[t], NULL);
        expect_error(f, 1, kinds[t]);
        expect_stderr(f, targets[t]);
        run(f, "lookup", "--index", index, "--queries", queries, "--out", targets[t], NULL);
        expect_error(f, 1, kinds[t]);
        expect_stderr(f, "'--out -' writes to standard output");
        run(f, "generate", "keys", "--count", "10", "--out", targets[t], NULL);
        expect_error(f, 1, kinds[t]);
        run(f, "update", "--index", index, "--ops", queries, "--out", targets[t], NULL);
        expect_error(f, 1, kinds[t]);
    }
    struct stat st;
    assert_int_equal(lstat(fifo, &st), 0);
    assert_true(S_ISFIFO(st.st_mode));
    assert_int_equal(lstat(folder, &st), 0);
    assert_true(S_ISDIR(st.st_mode));
    if (have_device) {
        assert_int_equal(lstat(device, &st), 0);
        assert_true(S_ISCHR(st.st_mode));
    } else {
        print_message("no character device test: mknod: %s\n", strerror(errno));
    }

    /* build --out - is refused and creates no file named '-' */
    run_opts here = {.in_dir = true};
    run_with(f, &here, "build", "--input", keys, "--out", "-", NULL);
    expect_error(f, 2, "not standard output");
    assert_false(file_exists(in_dir(f, "-")));
    /* results to standard output stay fine */
    run(f, "lookup", "--index", index, "--queries", queries, "--out", "-", NULL);
    expect_ok(f);
    assert_true(strlen(f->out) > 0);
    assert_int_equal(count_temp_files(f), 0);
}

/* ---- 2. outputs that name an input --------------------------------------------------------- */

static void test_outputs_that_name_an_input_are_refused(void **state)
{
    fixture *f = *state;
    const char *keys = make_keys(f, "keys.bin", "2000");
    const char *index = make_index(f, keys, "keys.idx");
    const char *queries = in_dir(f, "q.bin"), *ranges = in_dir(f, "r.bin"), *ops = in_dir(f, "ops.bin");
    run(f, "generate", "queries", "--keys", keys, "--count", "100", "--out", queries, "--quiet", NULL);
    expect_ok(f);
    run(f, "generate", "ranges", "--keys", keys, "--count", "100", "--out", ranges, "--quiet", NULL);
    expect_ok(f);
    run(f, "generate", "ops", "--keys", keys, "--count", "100", "--out", ops, "--quiet", NULL);
    expect_ok(f);
    const char *index_link = in_dir(f, "index-link.idx"), *keys_hard = in_dir(f, "keys-hard.bin");
    assert_int_equal(symlink(index, index_link), 0);
    assert_int_equal(link(keys, keys_hard), 0);
    snapshot index_before = take_snapshot(index), keys_before = take_snapshot(keys);
    snapshot queries_before = take_snapshot(queries), ops_before = take_snapshot(ops);

    run(f, "lookup", "--index", index, "--queries", queries, "--out", index, NULL);
    expect_error(f, 2, "is the same file as --index");
    run(f, "lookup", "--index", index, "--queries", queries, "--out", index_link, NULL);
    expect_error(f, 2, "is the same file as --index");
    run(f, "lower-bound", "--index", index, "--queries", queries, "--out", queries, NULL);
    expect_error(f, 2, "is the same file as --queries");
    run(f, "range", "--index", index_link, "--ranges", ranges, "--out", index, NULL);
    expect_error(f, 2, "is the same file as --index");
    run(f, "build", "--input", keys, "--out", keys, NULL);
    expect_error(f, 2, "is the same file as --input");
    run(f, "build", "--input", keys, "--out", keys_hard, NULL);
    expect_error(f, 2, "is the same file as --input");
    run(f, "generate", "queries", "--keys", keys, "--count", "10", "--out", keys, NULL);
    expect_error(f, 2, "is the same file as --keys");
    run(f, "generate", "ops", "--keys", keys_hard, "--count", "10", "--out", keys, NULL);
    expect_error(f, 2, "is the same file as --keys");
    run(f, "generate", "ranges", "--keys", keys, "--count", "10", "--out", keys_hard, NULL);
    expect_error(f, 2, "is the same file as --keys");
    run(f, "update", "--index", index, "--ops", ops, "--out", ops, NULL);
    expect_error(f, 2, "is the same file as --ops");
    const char *svg_link = in_dir(f, "plot.svg");
    assert_int_equal(symlink(index, svg_link), 0);
    run(f, "profile-ntg", "--index", index, "--model-only", "--no-store", "--count", "1000",
        "--plot", svg_link, NULL);
    expect_error(f, 2, "is the same file as --index");

    assert_unchanged(&index_before, index);
    assert_unchanged(&keys_before, keys);
    assert_unchanged(&queries_before, queries);
    assert_unchanged(&ops_before, ops);
    assert_true(is_symlink(index_link));
    free(index_before.data);
    free(keys_before.data);
    free(queries_before.data);
    free(ops_before.data);
}

/* ---- 3. links and modes -------------------------------------------------------------------- */

static void test_links_and_modes_survive(void **state)
{
    fixture *f = *state;
    const char *keys = make_keys(f, "keys.bin", "3000");
    const char *sub = in_dir(f, "sub");
    assert_int_equal(mkdir(sub, 0755), 0);
    const char *real = in_dir(f, "sub/real.idx");
    run(f, "build", "--input", keys, "--out", real, "--quiet", NULL);
    expect_ok(f);
    const char *link_path = in_dir(f, "link.idx");
    assert_int_equal(symlink("sub/real.idx", link_path), 0);
    assert_int_equal(chmod(real, 0600), 0);

    const char *ops = in_dir(f, "ops.txt");
    write_all(ops, "+ 12345678901 7\n");
    run(f, "update", "--index", link_path, "--ops", ops, "--quiet", NULL);
    expect_ok(f);
    assert_true(is_symlink(link_path));
    assert_int_equal(lookup_value(f, real, 12345678901ull), 7);
    assert_int_equal(mode_of(real), 0600);

    /* build over an existing private index, through the link */
    run(f, "build", "--input", keys, "--out", link_path, "--quiet", NULL);
    expect_ok(f);
    assert_true(is_symlink(link_path));
    assert_int_equal(mode_of(real), 0600);
    assert_int_equal(lookup_value(f, real, 12345678901ull), -1);

    /* results written over an existing file keep its mode */
    const char *queries = in_dir(f, "q.txt"), *results = in_dir(f, "results.txt");
    write_all(queries, "1\n2\n");
    write_all(results, "old\n");
    assert_int_equal(chmod(results, 0640), 0);
    run(f, "lookup", "--index", real, "--queries", queries, "--out", results, NULL);
    expect_ok(f);
    assert_int_equal(mode_of(results), 0640);
    assert_int_equal(count_temp_files(f), 0);
}

/* ---- 4. failed writes ---------------------------------------------------------------------- */

static void test_a_failed_write_leaves_the_old_file(void **state)
{
    fixture *f = *state;
    const char *keys = make_keys(f, "keys.bin", "20000");
    const char *index = make_index(f, keys, "keys.idx");
    const char *queries = in_dir(f, "q.bin"), *results = in_dir(f, "results.txt");
    run(f, "generate", "queries", "--keys", keys, "--count", "20000", "--out", queries, "--quiet", NULL);
    expect_ok(f);
    write_all(results, "old results\n");
    snapshot results_before = take_snapshot(results), keys_before = take_snapshot(keys);
    snapshot index_before = take_snapshot(index);
    run_opts small = {.fsize_limit = 64 * 1024};

    run_with(f, &small, "lookup", "--index", index, "--queries", queries, "--out", results, NULL);
    expect_error(f, 1, strerror(EFBIG));
    expect_stderr(f, "results.txt");
    expect_stderr(f, "unchanged");
    assert_unchanged(&results_before, results);

    run_with(f, &small, "generate", "keys", "--count", "1e5", "--out", keys, "--quiet", NULL);
    expect_error(f, 1, strerror(EFBIG));
    assert_unchanged(&keys_before, keys);

    const char *more = in_dir(f, "more.bin");
    run(f, "generate", "keys", "--count", "1e5", "--seed", "9", "--out", more, "--quiet", NULL);
    expect_ok(f);
    run_with(f, &small, "build", "--input", more, "--out", index, "--quiet", NULL);
    expect_error(f, 1, strerror(EFBIG));
    assert_unchanged(&index_before, index);

    /* a new file that cannot be written completely is not left behind either */
    const char *fresh = in_dir(f, "fresh.txt");
    run_with(f, &small, "range", "--index", index, "--ranges", queries, "--ranges-format", "bin",
             "--collect", "--out", fresh, NULL);
    expect_error(f, 1, strerror(EFBIG));
    expect_stderr(f, "nothing was written");
    assert_false(file_exists(fresh));
    assert_int_equal(count_temp_files(f), 0);
    free(results_before.data);
    free(keys_before.data);
    free(index_before.data);
}

/* ---- 5. concurrent updates ----------------------------------------------------------------- */

/* An ops file inserting count new keys base, base + 1, ... (value = key + 1). */
static const char *insert_ops(fixture *f, const char *name, unsigned long long base, int count)
{
    const char *path = in_dir(f, name);
    FILE *file = fopen(path, "w");
    assert_non_null(file);
    for (int i = 0; i < count; i++)
        fprintf(file, "+ %llu %llu\n", base + (unsigned long long)i, base + (unsigned long long)i + 1);
    fclose(file);
    return path;
}

static void test_concurrent_updates_are_serialised(void **state)
{
    fixture *f = *state;
    const char *keys = in_dir(f, "keys.txt"), *index = in_dir(f, "k.idx");
    write_all(keys, "1\n2\n3\n");
    run(f, "build", "--input", keys, "--out", index, "--quiet", NULL);
    expect_ok(f);
    const char *ops_a = insert_ops(f, "a.txt", 1000000, 200);
    const char *ops_b = insert_ops(f, "b.txt", 2000000, 200);
    snapshot before = take_snapshot(index);

    /* another process holds the index's lock: refused at once, or waited for with --wait */
    int fd = open(index, O_RDONLY | O_CLOEXEC); /* not inherited: the lock stays ours alone */
    assert_true(fd >= 0);
    assert_int_equal(flock(fd, LOCK_EX), 0);
    run(f, "update", "--index", index, "--ops", ops_a, NULL);
    expect_error(f, 1, "index is being updated by another process");
    expect_stderr(f, "--wait");
    assert_unchanged(&before, index);
    const char *argv_wait[] = {"update", "--index", index, "--ops", ops_a, "--wait", "--quiet", NULL};
    pid_t waiting = spawn_opts(f, NULL, "waiting", argv_wait);
    sleep_ms(300);
    int wstatus;
    assert_int_equal(waitpid(waiting, &wstatus, WNOHANG), 0); /* still waiting */
    assert_unchanged(&before, index);
    close(fd);
    assert_int_equal(wait_run(f, waiting, "waiting", false), 0);
    assert_int_equal(lookup_value(f, index, 1000005), 1000006);

    /* two updates at once, both waiting: both batches are in the index */
    const char *ops_c = insert_ops(f, "c.txt", 3000000, 200);
    const char *argv_b[] = {"update", "--index", index, "--ops", ops_b, "--wait", "--quiet", NULL};
    const char *argv_c[] = {"update", "--index", index, "--ops", ops_c, "--wait", "--quiet", NULL};
    pid_t pb = spawn_opts(f, NULL, "b", argv_b), pc = spawn_opts(f, NULL, "c", argv_c);
    assert_int_equal(wait_run(f, pb, "b", false), 0);
    assert_int_equal(wait_run(f, pc, "c", false), 0);
    assert_int_equal(lookup_value(f, index, 2000199), 2000200);
    assert_int_equal(lookup_value(f, index, 3000199), 3000200);
    assert_int_equal(lookup_value(f, index, 1000000), 1000001);

    /* without --wait: each run applies its batch or says why not; no batch is lost silently */
    for (int round = 0; round < 3; round++) {
        unsigned long long base_d = 4000000 + 1000ull * (unsigned long long)round;
        unsigned long long base_e = 5000000 + 1000ull * (unsigned long long)round;
        const char *ops_d = insert_ops(f, "d.txt", base_d, 100);
        const char *ops_e = insert_ops(f, "e.txt", base_e, 100);
        const char *argv_d[] = {"update", "--index", index, "--ops", ops_d, "--quiet", NULL};
        const char *argv_e[] = {"update", "--index", index, "--ops", ops_e, "--quiet", NULL};
        pid_t pd = spawn_opts(f, NULL, "d", argv_d), pe = spawn_opts(f, NULL, "e", argv_e);
        int code_d = wait_run(f, pd, "d", false);
        if (code_d != 0)
            expect_stderr(f, "index is being updated by another process");
        int code_e = wait_run(f, pe, "e", false);
        if (code_e != 0)
            expect_stderr(f, "index is being updated by another process");
        assert_true(code_d == 0 || code_e == 0);
        assert_int_equal(lookup_value(f, index, base_d + 50) >= 0, code_d == 0);
        assert_int_equal(lookup_value(f, index, base_e + 50) >= 0, code_e == 0);
    }
    run(f, "check", "--index", index, NULL);
    expect_ok(f);
    assert_int_equal(count_temp_files(f), 0);
    free(before.data);
}

/* ---- 6. kill -9 at any moment -------------------------------------------------------------- */

/* Runs argv in the background and kills it with SIGKILL after delay_ms (or lets it finish first);
 * returns whether it was killed. */
static bool run_and_kill(fixture *f, const char *const *argv, long delay_ms)
{
    pid_t pid = spawn_opts(f, NULL, "victim", argv);
    sleep_ms(delay_ms);
    kill(pid, SIGKILL);
    return wait_run(f, pid, "victim", true) == -1;
}

static void test_kill_9_leaves_the_old_or_the_new_index(void **state)
{
    fixture *f = *state;
    const char *keys = make_keys(f, "keys.bin", "2e5");
    const char *index = make_index(f, keys, "k.idx");
    const int rounds = 12;
    /* ops i upserts the keys 7, 8, ..., 7 + 30000 - 1 with the value i (a whole-tree relayout) */
    char name[32];
    for (int i = 1; i <= rounds; i++) {
        snprintf(name, sizeof name, "ops%d.txt", i);
        const char *path = in_dir(f, name);
        FILE *file = fopen(path, "w");
        assert_non_null(file);
        for (int k = 0; k < 30000; k++)
            fprintf(file, "* %d %d\n", 7 + 10 * k, i);
        fclose(file);
    }
    /* how long one update takes here (sanitizers make it slower) */
    double t0 = now_seconds();
    const char *warm[] = {"update", "--index", index, "--ops", in_dir(f, "ops1.txt"), "--quiet", NULL};
    assert_int_equal(wait_run(f, spawn_opts(f, NULL, "victim", warm), "victim", false), 0);
    long full_ms = (long)((now_seconds() - t0) * 1000.0) + 1;
    long long current = 1;
    int killed = 0;
    uint64_t rng = 12345;
    for (int i = 2; i <= rounds; i++) {
        snprintf(name, sizeof name, "ops%d.txt", i);
        const char *argv[] = {"update", "--index", index, "--ops", in_dir(f, name), "--quiet", NULL};
        rng = rng * 6364136223846793005ull + 1442695040888963407ull;
        long delay = (long)((rng >> 33) % (uint64_t)(full_ms + full_ms / 4 + 1));
        killed += run_and_kill(f, argv, delay);
        run(f, "check", "--index", index, "--quiet", NULL); /* complete, checksums and all */
        expect_ok(f);
        long long value = lookup_value(f, index, 7 + 10 * 123);
        assert_true(value == current || value == i);
        current = value;
    }
    /* builds over the index, killed too: the old index or the complete new one */
    const char *other = in_dir(f, "other.bin");
    run(f, "generate", "keys", "--count", "2e5", "--seed", "77", "--values", "random", "--out",
        other, "--quiet", NULL);
    expect_ok(f);
    for (int i = 0; i < rounds; i++) {
        const char *input = i % 2 == 0 ? other : keys;
        const char *argv[] = {"build", "--input", input, "--out", index, "--quiet", NULL};
        rng = rng * 6364136223846793005ull + 1442695040888963407ull;
        long delay = (long)((rng >> 33) % (uint64_t)(full_ms + 1));
        killed += run_and_kill(f, argv, delay);
        run(f, "check", "--index", index, "--quiet", NULL);
        expect_ok(f);
    }
    print_message("kill -9: %d of %d runs killed before they finished (one update: %ld ms)\n",
                  killed, 2 * rounds - 1, full_ms);
    /* the next complete run removes what the killed ones left */
    run(f, "update", "--index", index, "--ops", in_dir(f, "ops1.txt"), "--quiet", NULL);
    expect_ok(f);
    int left = 0;
    {
        DIR *d = opendir(f->dir);
        assert_non_null(d);
        struct dirent *e;
        while ((e = readdir(d)) != NULL)
            if (strncmp(e->d_name, "k.idx.tmp.", 10) == 0) {
                /* an empty file younger than the grace period may stay (a writer between its
                 * open and its lock is indistinguishable from it) */
                struct stat st;
                char *p = malloc(strlen(f->dir) + strlen(e->d_name) + 2);
                sprintf(p, "%s/%s", f->dir, e->d_name);
                if (stat(p, &st) == 0 && st.st_size > 0)
                    left++;
                free(p);
            }
        closedir(d);
    }
    assert_int_equal(left, 0);
}

/* ---- 7. stale temporary files -------------------------------------------------------------- */

static void test_stale_temporary_files_are_reported_and_removed(void **state)
{
    fixture *f = *state;
    const char *keys = make_keys(f, "keys.bin", "1000");
    const char *index = make_index(f, keys, "k.idx");
    const char *stale = in_dir(f, "k.idx.tmp.Abc123");
    write_all(stale, "what a killed save left");
    run(f, "check", "--index", index, NULL);
    expect_ok(f);
    expect_stderr(f, "k.idx.tmp.Abc123");
    expect_stderr(f, "the next save removes it");
    assert_true(file_exists(stale));
    run(f, "check", "--index", index, "--json", NULL);
    expect_ok(f);
    assert_json_object(f->out);
    expect_stdout(f, "\"stale_temporary_files\":[{\"name\":\"k.idx.tmp.Abc123\"");
    run(f, "check", "--index", index, "--remove-stale", NULL);
    expect_ok(f);
    assert_false(file_exists(stale));

    write_all(stale, "what a killed save left");
    const char *ops = in_dir(f, "ops.txt");
    write_all(ops, "+ 99999999999 1\n");
    run(f, "update", "--index", index, "--ops", ops, "--quiet", NULL);
    expect_ok(f);
    assert_false(file_exists(stale));
    /* the same for results files */
    const char *results = in_dir(f, "r.txt"), *stale_results = in_dir(f, "r.txt.tmp.Zz9Zz9");
    write_all(stale_results, "half a result");
    write_all(in_dir(f, "q.txt"), "5\n");
    run(f, "lookup", "--index", index, "--queries", in_dir(f, "q.txt"), "--out", results, NULL);
    expect_ok(f);
    assert_false(file_exists(stale_results));
    assert_int_equal(count_temp_files(f), 0);
}

/* ---- 8. --no-verify on forged files -------------------------------------------------------- */

static uint64_t get_u64_at(const unsigned char *p)
{
    uint64_t v;
    memcpy(&v, p, 8);
    return v;
}

static uint64_t section_offset(const unsigned char *image, int section)
{
    return get_u64_at(image + IX_OFF_SECTIONS + IX_SECTION_ENTRY_BYTES * section + IX_SEC_OFF_OFFSET);
}

/* Recomputes every section checksum and the header checksum (XXH3, as the format says). */
static void refresh_checksums(unsigned char *image)
{
    for (int s = 0; s < (int)IX_SECTION_COUNT; s++) {
        unsigned char *entry = image + IX_OFF_SECTIONS + IX_SECTION_ENTRY_BYTES * s;
        uint64_t offset = get_u64_at(entry + IX_SEC_OFF_OFFSET), size = get_u64_at(entry + IX_SEC_OFF_SIZE);
        uint64_t sum = XXH3_64bits(image + offset, size);
        memcpy(entry + IX_SEC_OFF_CHECKSUM, &sum, 8);
    }
    uint64_t sum = XXH3_64bits(image, IX_OFF_HEADER_CHECKSUM);
    memcpy(image + IX_OFF_HEADER_CHECKSUM, &sum, 8);
}

typedef enum { FORGE_FIRST_CHILD, FORGE_LEAF_RANK, FORGE_KEYS, FORGE_VALUE_UNCHECKED } forge_kind;

/* Writes a damaged copy of index to path. */
static void forge(const char *index, const char *path, forge_kind kind)
{
    size_t size;
    unsigned char *image = (unsigned char *)read_all(index, &size);
    assert_non_null(image);
    switch (kind) {
    case FORGE_FIRST_CHILD: { /* the case: an entry of 0x7fffffff */
        uint32_t huge = 0x7fffffff;
        memcpy(image + section_offset(image, 2) + 4, &huge, 4);
        refresh_checksums(image);
        break;
    }
    case FORGE_LEAF_RANK: {
        uint64_t huge = (uint64_t)1 << 63;
        memcpy(image + section_offset(image, 3) + 8 * 3, &huge, 8);
        refresh_checksums(image);
        break;
    }
    case FORGE_KEYS: { /* every key slot 0 .. 4095 at random: order, separators, padding gone */
        uint64_t slots = (section_offset(image, 1) - section_offset(image, 0)) / 8, rng = 99;
        uint64_t size0 = get_u64_at(image + IX_OFF_SECTIONS + IX_SEC_OFF_SIZE) / 8;
        for (uint64_t i = 0; i < size0 && i < slots; i++) {
            rng = rng * 6364136223846793005ull + 1442695040888963407ull;
            uint64_t v = (rng >> 33) % 4096;
            memcpy(image + section_offset(image, 0) + 8 * i, &v, 8);
        }
        refresh_checksums(image);
        break;
    }
    case FORGE_VALUE_UNCHECKED: /* a leaf value changed, no checksum fixed: bit rot */
        image[section_offset(image, 1) + 8 * 5] ^= 0x10;
        break;
    }
    write_bytes(path, image, size);
    free(image);
}

static void test_no_verify_never_crashes_and_never_launders(void **state)
{
    fixture *f = *state;
    const char *keys = make_keys(f, "keys.bin", "5000");
    const char *good = in_dir(f, "good.idx");
    run(f, "build", "--input", keys, "--out", good, "--fanout", "8", "--leaf-size", "8", "--fill",
        "0.6", "--quiet", NULL);
    expect_ok(f);
    const char *queries = in_dir(f, "q.bin"), *ranges = in_dir(f, "r.bin"), *ops = in_dir(f, "ops.bin");
    run(f, "generate", "queries", "--keys", keys, "--count", "3000", "--out", queries, "--quiet", NULL);
    expect_ok(f);
    run(f, "generate", "ranges", "--keys", keys, "--count", "500", "--length", "50", "--out", ranges,
        "--quiet", NULL);
    expect_ok(f);
    run(f, "generate", "ops", "--keys", keys, "--count", "500", "--out", ops, "--quiet", NULL);
    expect_ok(f);
    const char *bad = in_dir(f, "bad.idx"), *out = in_dir(f, "out.txt");

    /* structure damage: every command refuses it in words, with or without --no-verify */
    forge_kind structural[] = {FORGE_FIRST_CHILD, FORGE_LEAF_RANK};
    for (int s = 0; s < 2; s++) {
        forge(good, bad, structural[s]);
        snapshot before = take_snapshot(bad);
        run(f, "lookup", "--index", bad, "--queries", queries, "--no-verify", "--out", out, NULL);
        expect_error(f, 1, "integrity check failed");
        run(f, "lower-bound", "--index", bad, "--queries", queries, "--no-verify", "--out", out, NULL);
        expect_error(f, 1, "integrity check failed");
        run(f, "range", "--index", bad, "--ranges", ranges, "--no-verify", "--out", out, NULL);
        expect_error(f, 1, "integrity check failed");
        run(f, "range", "--index", bad, "--ranges", ranges, "--collect", "--no-verify", "--out", out, NULL);
        expect_error(f, 1, "integrity check failed");
        run(f, "info", "--index", bad, "--no-verify", NULL);
        expect_error(f, 1, "integrity check failed");
        run(f, "update", "--index", bad, "--ops", ops, "--no-verify", NULL);
        expect_error(f, 1, "integrity check failed");
        run(f, "profile-ntg", "--index", bad, "--no-verify", "--model-only", "--count", "1000", NULL);
        expect_error(f, 1, "integrity check failed");
        run(f, "check", "--index", bad, NULL);
        expect_error(f, 1, "integrity check failed");
        assert_unchanged(&before, bad);
        free(before.data);
    }

    /* key damage behind valid checksums: queries answer (wrongly) without crashing; an update or
     * a stored profile refuses to save it */
    forge(good, bad, FORGE_KEYS);
    snapshot before = take_snapshot(bad);
    run(f, "lookup", "--index", bad, "--queries", queries, "--no-verify", "--out", out, NULL);
    expect_ok(f);
    run(f, "lower-bound", "--index", bad, "--queries", queries, "--no-verify", "--out", out, NULL);
    expect_ok(f);
    run(f, "range", "--index", bad, "--ranges", ranges, "--no-verify", "--out", out, NULL);
    expect_ok(f);
    run(f, "range", "--index", bad, "--ranges", ranges, "--collect", "--no-verify", "--out", out, NULL);
    expect_ok(f);
    run(f, "info", "--index", bad, "--no-verify", NULL);
    expect_ok(f);
    run(f, "update", "--index", bad, "--ops", ops, "--no-verify", NULL);
    expect_error(f, 1, "without verification");
    expect_stderr(f, "unchanged");
    run(f, "profile-ntg", "--index", bad, "--no-verify", "--model-only", "--count", "1000", NULL);
    expect_error(f, 1, "without verification");
    run(f, "check", "--index", bad, NULL);
    expect_error(f, 1, "integrity check failed");
    assert_unchanged(&before, bad);
    free(before.data);

    /* bit rot in a value (checksum not fixed): not laundered by update or profile-ntg */
    forge(good, bad, FORGE_VALUE_UNCHECKED);
    before = take_snapshot(bad);
    run(f, "update", "--index", bad, "--ops", ops, "--no-verify", NULL);
    expect_error(f, 1, "checksum mismatch");
    run(f, "profile-ntg", "--index", bad, "--no-verify", "--model-only", "--count", "1000", NULL);
    expect_error(f, 1, "checksum mismatch");
    run(f, "check", "--index", bad, NULL);
    expect_error(f, 1, "checksum mismatch");
    assert_unchanged(&before, bad);
    free(before.data);
    assert_int_equal(count_temp_files(f), 0);

    /* what --no-verify skips is in the help */
    const char *commands[] = {"lookup", "lower-bound", "range", "update", "info", "profile-ntg"};
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++) {
        run(f, commands[i], "--help", NULL);
        expect_ok(f);
        expect_stdout(f, "structure checks");
        expect_stdout(f, "never crash");
    }
}

/* ---- 9. messages --------------------------------------------------------------------------- */

static void test_numbers_say_what_is_wrong(void **state)
{
    fixture *f = *state;
    const char *bad = in_dir(f, "bad.txt"), *idx = in_dir(f, "x.idx");
    struct {
        const char *line, *words;
    } cases[] = {
        {"abc,1\n", "'abc' is not a number"},
        {"+5,1\n", "'+5' has a sign"},
        {"-5,1\n", "'-5' has a sign"},
        {"1e3,1\n", "'1e3' has an exponent"},
        {"1.5,1\n", "'1.5' is not a whole number"},
        {"99999999999999999999,1\n", "is too large for 64 bits"},
        {"0x1ffffffffffffffff,1\n", "is too large for 64 bits"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        write_all(bad, cases[i].line);
        run(f, "build", "--input", bad, "--out", idx, NULL);
        expect_error(f, 1, cases[i].words);
        expect_stderr(f, "bad.txt:1:");
    }
    struct {
        const char *value, *words;
    } options[] = {
        {"abc", "'abc' is not a number"},
        {"1e20", "is too large for 64 bits"},
        {"+5", "has a sign"},
        {"1.5", "is not a whole number"},
        {"2^64", "is too large for 64 bits"},
    };
    for (size_t i = 0; i < sizeof options / sizeof options[0]; i++) {
        run(f, "generate", "keys", "--count", options[i].value, "--out", in_dir(f, "k.bin"), NULL);
        expect_error(f, 2, options[i].words);
    }
    /* a 32-bit index: lookup has no --bits, so it must not suggest one */
    write_all(in_dir(f, "k32.txt"), "1\n2\n3\n");
    run(f, "build", "--bits", "32", "--input", in_dir(f, "k32.txt"), "--out", idx, "--quiet", NULL);
    expect_ok(f);
    write_all(in_dir(f, "q.txt"), "1\n4294967296\n");
    run(f, "lookup", "--index", idx, "--queries", in_dir(f, "q.txt"), NULL);
    expect_error(f, 1, "q.txt:2: 4294967296 does not fit in 32 bits");
    expect_stderr(f, "the index holds 32-bit keys");
    expect_stderr_lacks(f, "--bits");
    write_all(bad, "4294967296\n");
    run(f, "build", "--bits", "32", "--input", bad, "--out", idx, NULL);
    expect_error(f, 1, "use --bits 64");
    /* update batches: the same words */
    write_all(in_dir(f, "ops.txt"), "+ 1e3 5\n");
    run(f, "update", "--index", idx, "--ops", in_dir(f, "ops.txt"), NULL);
    expect_error(f, 1, "'1e3' has an exponent");
}

static void test_os_errors_are_shown_as_they_are(void **state)
{
    fixture *f = *state;
    const char *missing = in_dir(f, "missing.idx");
    write_all(in_dir(f, "q.txt"), "1\n");
    run(f, "lookup", "--index", missing, "--queries", in_dir(f, "q.txt"), NULL);
    expect_error(f, 1, strerror(ENOENT));
    expect_stderr_lacks(f, "(input/output error)");
    run(f, "info", "--index", missing, NULL);
    expect_error(f, 1, strerror(ENOENT));
    expect_stderr_lacks(f, "(input/output error)");
    const char *folder = in_dir(f, "folder.idx");
    assert_int_equal(mkdir(folder, 0755), 0);
    run(f, "lookup", "--index", folder, "--queries", in_dir(f, "q.txt"), NULL);
    expect_error(f, 1, "folder");
    expect_stderr_lacks(f, "(input/output error)");
    run(f, "update", "--index", folder, "--ops", in_dir(f, "q.txt"), NULL);
    expect_error(f, 1, "folder");
    expect_stderr_lacks(f, "(input/output error)");

    /* EACCES: an unreadable index, read by another user when we are root */
    const char *keys = make_keys(f, "keys.bin", "100");
    const char *index = make_index(f, keys, "k.idx");
    assert_int_equal(chmod(index, 0), 0);
    run_opts other = {0};
    if (geteuid() == 0) {
        assert_int_equal(chmod(f->dir, 0755), 0);
        assert_int_equal(chmod(in_dir(f, "q.txt"), 0644), 0);
        other.uid = 65534;
    }
    run_with(f, &other, "lookup", "--index", index, "--queries", in_dir(f, "q.txt"), NULL);
    expect_error(f, 1, strerror(EACCES));
    expect_stderr_lacks(f, "(input/output error)");
}

static void test_json_is_valid_for_any_file_name(void **state)
{
    fixture *f = *state;
    const char *keys = make_keys(f, "keys.bin", "100");
    const char *index = in_dir(f, "caf\xe9-\xff.idx"); /* Latin-1 and a byte no encoding uses */
    run(f, "build", "--input", keys, "--out", index, "--json", NULL);
    expect_ok(f);
    assert_json_object(f->out);
    assert_valid_utf8(f->out);
    expect_stdout(f, "caf\\u00e9-\\u00ff.idx");
    const char *commands[][3] = {{"info", "--index", index}, {"check", "--index", index}};
    for (int i = 0; i < 2; i++) {
        run(f, commands[i][0], commands[i][1], commands[i][2], "--json", NULL);
        expect_ok(f);
        assert_json_object(f->out);
        assert_valid_utf8(f->out);
    }
    write_all(in_dir(f, "q.txt"), "1\n");
    run(f, "lookup", "--index", index, "--queries", in_dir(f, "q.txt"), "--json", "--out",
        in_dir(f, "r\xe9.json"), NULL);
    expect_ok(f);
    assert_json_object(f->out);
    assert_valid_utf8(f->out);
    char *doc = read_all(in_dir(f, "r\xe9.json"), NULL);
    assert_non_null(doc);
    assert_json_object(doc);
    assert_valid_utf8(doc);
    free(doc);
    /* valid UTF-8 passes as it is */
    const char *utf8 = in_dir(f, "caf\xc3\xa9.idx");
    run(f, "build", "--input", keys, "--out", utf8, "--json", NULL);
    expect_ok(f);
    expect_stdout(f, "caf\xc3\xa9.idx");
}

static void test_group_size_is_checked_on_every_backend(void **state)
{
    fixture *f = *state;
    const char *keys = in_dir(f, "keys.txt"), *index = in_dir(f, "k.idx");
    write_all(keys, "1\n2\n3\n");
    run(f, "build", "--input", keys, "--out", index, "--fanout", "8", "--quiet", NULL);
    expect_ok(f);
    const char *sizes[] = {"3", "64", "33", "1e20"};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        run(f, "lookup", "--index", index, "--queries", keys, "--backend", "cpu", "--group-size",
            sizes[i], NULL);
        expect_error(f, 2, "--group-size");
    }
    run(f, "lookup", "--index", index, "--queries", keys, "--backend", "cpu", "--group-size", "3", NULL);
    expect_stderr(f, "must be 1, 2, 4, 8, 16 or 32");
    run(f, "range", "--index", index, "--ranges", in_dir(f, "none.txt"), "--backend", "cpu",
        "--group-size", "16", NULL); /* F = 8: checked after the load, before the input */
    expect_error(f, 2, "larger than the index's fanout");
    run(f, "lookup", "--index", index, "--queries", keys, "--backend", "cpu", "--group-size", "8", NULL);
    expect_ok(f);
}

static void test_thread_creation_failure_gets_our_message(void **state)
{
    fixture *f = *state;
    const char *keys = make_keys(f, "keys.bin", "2e5");
    /* a stack no system gives: libgomp cannot create its threads and exits */
    static const char *const env[] = {"OMP_STACKSIZE=900G", "OMP_NUM_THREADS=4", NULL};
    run_opts opts = {.env = env};
    run_with(f, &opts, "build", "--input", keys, "--out", in_dir(f, "k.idx"), "--quiet", NULL);
    if (f->exit_code == 0) { /* a system that gave the threads: nothing to test */
        print_message("the system created 4 threads of 900 GiB stack; skipped\n");
        return;
    }
    expect_error(f, 1, "harmonia build: stopped before finishing: the OpenMP runtime could not "
                       "start its threads");
    expect_stderr(f, "--threads");
}

int main(int argc, char **argv)
{
    if (!fixture_take_tool(argc, argv))
        return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_outputs_that_are_not_regular_files_are_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(test_outputs_that_name_an_input_are_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(test_links_and_modes_survive, setup, teardown),
        cmocka_unit_test_setup_teardown(test_a_failed_write_leaves_the_old_file, setup, teardown),
        cmocka_unit_test_setup_teardown(test_concurrent_updates_are_serialised, setup, teardown),
        cmocka_unit_test_setup_teardown(test_kill_9_leaves_the_old_or_the_new_index, setup, teardown),
        cmocka_unit_test_setup_teardown(test_stale_temporary_files_are_reported_and_removed, setup, teardown),
        cmocka_unit_test_setup_teardown(test_no_verify_never_crashes_and_never_launders, setup, teardown),
        cmocka_unit_test_setup_teardown(test_numbers_say_what_is_wrong, setup, teardown),
        cmocka_unit_test_setup_teardown(test_os_errors_are_shown_as_they_are, setup, teardown),
        cmocka_unit_test_setup_teardown(test_json_is_valid_for_any_file_name, setup, teardown),
        cmocka_unit_test_setup_teardown(test_group_size_is_checked_on_every_backend, setup, teardown),
        cmocka_unit_test_setup_teardown(test_thread_creation_failure_gets_our_message, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
