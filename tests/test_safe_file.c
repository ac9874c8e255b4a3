/* test_safe_file.c — cmocka tests of how harmonia_save replaces files and how index files are
 * locked (harmonia/safe_file.c, harmonia/index_file.c): non-regular targets refused, links
 * followed, mode and owner kept, a failed write (EFBIG) leaving the old file, stale temporary
 * files removed only when no live process holds them, the index lock between processes, the check
 * that a save replaces the file it loaded, and the verification of trees loaded without it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "harmonia.h"

/* ---- helpers ------------------------------------------------------------------------------- */

static char *make_temp_dir(void)
{
    char *dir = strdup("/tmp/harmonia-safe-test-XXXXXX");
    assert_non_null(dir);
    assert_non_null(mkdtemp(dir));
    return dir;
}

static void remove_tree(const char *path)
{
    char command[600];
    snprintf(command, sizeof command, "rm -rf '%s'", path);
    assert_int_equal(system(command), 0);
}

static char *join(const char *dir, const char *name)
{
    size_t n = strlen(dir) + strlen(name) + 2;
    char *path = malloc(n);
    assert_non_null(path);
    snprintf(path, n, "%s/%s", dir, name);
    return path;
}

/* Entries of dir whose name holds ".tmp.". */
static int count_temps(const char *dir)
{
    DIR *d = opendir(dir);
    assert_non_null(d);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        n += strstr(e->d_name, ".tmp.") != NULL;
    closedir(d);
    return n;
}

static unsigned char *read_whole(const char *path, size_t *size_out)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
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

/* A tree of n 64-bit keys 3i with values i + offset (F = L = 8). */
static harmonia_tree *build_tree(uint64_t n, uint64_t offset)
{
    uint64_t *keys = malloc(8 * (n ? n : 1)), *values = malloc(8 * (n ? n : 1));
    assert_true(keys && values);
    for (uint64_t i = 0; i < n; i++) {
        keys[i] = 3 * i;
        values[i] = i + offset;
    }
    harmonia_build_config config;
    harmonia_build_config_init(&config);
    config.fanout = 8;
    config.leaf_size = 8;
    harmonia_tree *tree = NULL;
    assert_int_equal(harmonia_build(&config, keys, values, n, &tree), HARMONIA_OK);
    free(keys);
    free(values);
    return tree;
}

static harmonia_tree *load(const char *path, bool verify, harmonia_lock_mode lock,
                           harmonia_status expected)
{
    harmonia_load_config config;
    harmonia_load_config_init(&config);
    config.verify = verify;
    config.lock = lock;
    harmonia_tree *tree = NULL;
    harmonia_status s = harmonia_load(path, &config, &tree);
    if (s != expected)
        fail_msg("load of %s: status %d (%s), expected %d", path, s, harmonia_last_error(NULL),
                 expected);
    return tree;
}

/* The value of key 3 in the index file at path (its offset + 1). */
static uint64_t value_of_key_3(const char *path)
{
    harmonia_tree *tree = load(path, true, HARMONIA_LOCK_NONE, HARMONIA_OK);
    harmonia_query_config q;
    harmonia_query_config_init(&q);
    q.backend = HARMONIA_BACKEND_CPU;
    uint64_t key = 3, value = 0;
    uint8_t found = 0;
    assert_int_equal(harmonia_lookup(tree, &q, &key, 1, &value, &found), HARMONIA_OK);
    assert_true(found);
    harmonia_free(tree);
    return value;
}

static void expect_message(const harmonia_tree *tree, const char *words)
{
    const char *message = harmonia_last_error(tree);
    if (strstr(message, words) == NULL)
        fail_msg("message lacks \"%s\": %s", words, message);
}

/* ---- targets that are not regular files ---------------------------------------------------- */

static void test_save_refuses_what_is_not_a_regular_file(void **state)
{
    (void)state;
    char *dir = make_temp_dir();
    harmonia_tree *tree = build_tree(500, 0);

    char *fifo = join(dir, "fifo.hm"); /* a FIFO: refused at once, never opened (no hang) */
    assert_int_equal(mkfifo(fifo, 0600), 0);
    assert_int_equal(harmonia_save(tree, fifo), HARMONIA_ERR_IO);
    expect_message(tree, fifo);
    expect_message(tree, "FIFO");
    struct stat st;
    assert_int_equal(lstat(fifo, &st), 0);
    assert_true(S_ISFIFO(st.st_mode));

    char *folder = join(dir, "folder.hm");
    assert_int_equal(mkdir(folder, 0755), 0);
    assert_int_equal(harmonia_save(tree, folder), HARMONIA_ERR_IO);
    expect_message(tree, "folder");
    assert_int_equal(lstat(folder, &st), 0);
    assert_true(S_ISDIR(st.st_mode));

    /* a character device, where this process may make one (root; /dev/null's numbers) */
    char *device = join(dir, "null.hm");
    if (mknod(device, S_IFCHR | 0666, makedev(1, 3)) == 0) {
        assert_int_equal(harmonia_save(tree, device), HARMONIA_ERR_IO);
        expect_message(tree, "character device");
        assert_int_equal(lstat(device, &st), 0);
        assert_true(S_ISCHR(st.st_mode));
    } else {
        print_message("no character device test: mknod: %s\n", strerror(errno));
    }
    /* a link to a FIFO: the same */
    char *link = join(dir, "link-to-fifo.hm");
    assert_int_equal(symlink("fifo.hm", link), 0);
    assert_int_equal(harmonia_save(tree, link), HARMONIA_ERR_IO);
    expect_message(tree, "FIFO");
    assert_int_equal(count_temps(dir), 0);

    harmonia_free(tree);
    free(fifo);
    free(folder);
    free(device);
    free(link);
    remove_tree(dir);
    free(dir);
}

/* ---- links, mode and owner ----------------------------------------------------------------- */

static void test_save_follows_links_and_keeps_them(void **state)
{
    (void)state;
    char *dir = make_temp_dir();
    char *sub = join(dir, "sub");
    assert_int_equal(mkdir(sub, 0755), 0);
    char *real = join(sub, "real.hm"), *link = join(dir, "link.hm"), *chain = join(dir, "chain.hm");
    harmonia_tree *a = build_tree(300, 100), *b = build_tree(300, 200), *c = build_tree(300, 300);
    assert_int_equal(harmonia_save(a, real), HARMONIA_OK);
    assert_int_equal(symlink("sub/real.hm", link), 0); /* relative, from the link's folder */
    assert_int_equal(symlink(link, chain), 0);         /* absolute, to a link */
    assert_int_equal(harmonia_save(b, link), HARMONIA_OK);
    struct stat st;
    assert_int_equal(lstat(link, &st), 0);
    assert_true(S_ISLNK(st.st_mode));
    assert_int_equal(value_of_key_3(real), 201);
    assert_int_equal(harmonia_save(c, chain), HARMONIA_OK);
    assert_int_equal(lstat(chain, &st), 0);
    assert_true(S_ISLNK(st.st_mode));
    assert_int_equal(lstat(link, &st), 0);
    assert_true(S_ISLNK(st.st_mode));
    assert_int_equal(value_of_key_3(real), 301);
    assert_int_equal(count_temps(dir) + count_temps(sub), 0);

    /* a dangling link: the file it names is created, the link stays */
    char *dangling = join(dir, "dangling.hm"), *created = join(sub, "created.hm");
    assert_int_equal(symlink("sub/created.hm", dangling), 0);
    assert_int_equal(harmonia_save(a, dangling), HARMONIA_OK);
    assert_int_equal(lstat(dangling, &st), 0);
    assert_true(S_ISLNK(st.st_mode));
    assert_int_equal(value_of_key_3(created), 101);

    harmonia_free(a);
    harmonia_free(b);
    harmonia_free(c);
    free(real);
    free(link);
    free(chain);
    free(dangling);
    free(created);
    free(sub);
    remove_tree(dir);
    free(dir);
}

static void test_save_keeps_mode_and_owner(void **state)
{
    (void)state;
    char *dir = make_temp_dir();
    char *path = join(dir, "private.hm");
    harmonia_tree *a = build_tree(300, 0), *b = build_tree(400, 0);
    assert_int_equal(harmonia_save(a, path), HARMONIA_OK);
    assert_int_equal(chmod(path, 0600), 0);
    assert_int_equal(harmonia_save(b, path), HARMONIA_OK);
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(st.st_mode & 07777, 0600);
    assert_int_equal(chmod(path, 0640), 0);
    bool root = geteuid() == 0;
    if (root)
        assert_int_equal(chown(path, 1234, 2345), 0);
    /* b saved the file last (a's save before it would be refused: the file was replaced since) */
    assert_int_equal(harmonia_save(b, path), HARMONIA_OK);
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(st.st_mode & 07777, 0640);
    if (root) {
        assert_int_equal(st.st_uid, 1234);
        assert_int_equal(st.st_gid, 2345);
    }
    /* a new file: 0666 & ~umask */
    char *fresh = join(dir, "fresh.hm");
    mode_t old_mask = umask(027);
    assert_int_equal(harmonia_save(a, fresh), HARMONIA_OK);
    umask(old_mask);
    assert_int_equal(stat(fresh, &st), 0);
    assert_int_equal(st.st_mode & 07777, 0640);
    harmonia_free(a);
    harmonia_free(b);
    free(path);
    free(fresh);
    remove_tree(dir);
    free(dir);
}

/* ---- a failing write ----------------------------------------------------------------------- */

/* A save that runs out of room (EFBIG from RLIMIT_FSIZE, SIGXFSZ ignored, in a child) fails with
 * the OS's reason, removes its temporary file and leaves the old file byte for byte. */
static void test_failed_write_leaves_the_old_file(void **state)
{
    (void)state;
    char *dir = make_temp_dir();
    char *path = join(dir, "index.hm");
    harmonia_tree *small = build_tree(100, 7);
    assert_int_equal(harmonia_save(small, path), HARMONIA_OK);
    size_t before_size;
    unsigned char *before = read_whole(path, &before_size);
    harmonia_tree *big = build_tree(20000, 9); /* about 600 KiB */
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        signal(SIGXFSZ, SIG_IGN);
        struct rlimit limit = {64 * 1024, 64 * 1024};
        setrlimit(RLIMIT_FSIZE, &limit);
        harmonia_status s = harmonia_save(big, path);
        const char *message = harmonia_last_error(big);
        bool ok = s == HARMONIA_ERR_IO && strstr(message, strerror(EFBIG)) != NULL &&
                  strstr(message, "unchanged") != NULL;
        if (!ok)
            fprintf(stderr, "child: status %d: %s\n", s, message);
        _exit(ok ? 0 : 1);
    }
    int wstatus;
    assert_int_equal(waitpid(pid, &wstatus, 0), pid);
    assert_true(WIFEXITED(wstatus));
    assert_int_equal(WEXITSTATUS(wstatus), 0);
    size_t after_size;
    unsigned char *after = read_whole(path, &after_size);
    assert_int_equal(after_size, before_size);
    assert_memory_equal(after, before, before_size);
    assert_int_equal(count_temps(dir), 0);
    free(before);
    free(after);
    harmonia_free(small);
    harmonia_free(big);
    free(path);
    remove_tree(dir);
    free(dir);
}

/* ---- stale temporary files ----------------------------------------------------------------- */

static void make_file(const char *dir, const char *name, const char *contents, time_t age)
{
    char *path = join(dir, name);
    write_whole(path, contents, strlen(contents));
    if (age > 0) {
        struct timespec times[2];
        clock_gettime(CLOCK_REALTIME, &times[0]);
        times[0].tv_sec -= age;
        times[1] = times[0];
        assert_int_equal(utimensat(AT_FDCWD, path, times, 0), 0);
    }
    free(path);
}

static bool exists_in(const char *dir, const char *name)
{
    char *path = join(dir, name);
    struct stat st;
    bool there = lstat(path, &st) == 0;
    free(path);
    return there;
}

static void test_stale_temps_go_only_when_no_live_process_holds_them(void **state)
{
    (void)state;
    char *dir = make_temp_dir();
    char *path = join(dir, "t.hm");
    harmonia_tree *tree = build_tree(200, 0);
    assert_int_equal(harmonia_save(tree, path), HARMONIA_OK);
    make_file(dir, "t.hm.tmp.Abc123", "left by a killed save", 0);  /* stale: goes */
    make_file(dir, "t.hm.tmp.Old000", "", 3600);                     /* empty, old: goes */
    make_file(dir, "t.hm.tmp.New000", "", 0);                        /* empty, new: stays */
    make_file(dir, "t.hm.tmp.Live00", "a running save", 0);          /* locked below: stays */
    make_file(dir, "u.hm.tmp.Abc123", "another file's", 0);          /* another target: stays */
    make_file(dir, "t.hm.tmp.Abc1234", "not the pattern", 0);        /* 7 characters: stays */
    make_file(dir, "t.hm.tmp.Ab-123", "not the pattern", 0);         /* '-': stays */
    char *link = join(dir, "t.hm.tmp.Link00");
    assert_int_equal(symlink("t.hm", link), 0);                      /* a link: stays */

    /* a live writer: a child holding the flock of Live00 */
    int ready[2], release[2];
    assert_int_equal(pipe(ready), 0);
    assert_int_equal(pipe(release), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        char *live = join(dir, "t.hm.tmp.Live00");
        int fd = open(live, O_RDONLY);
        char byte = fd >= 0 && flock(fd, LOCK_EX) == 0 ? 'y' : 'n';
        (void)!write(ready[1], &byte, 1);
        (void)!read(release[0], &byte, 1);
        _exit(0);
    }
    char byte = 0;
    assert_int_equal(read(ready[0], &byte, 1), 1);
    assert_int_equal(byte, 'y');

    assert_int_equal(harmonia_save(tree, path), HARMONIA_OK);
    assert_false(exists_in(dir, "t.hm.tmp.Abc123"));
    assert_false(exists_in(dir, "t.hm.tmp.Old000"));
    assert_true(exists_in(dir, "t.hm.tmp.New000"));
    assert_true(exists_in(dir, "t.hm.tmp.Live00"));
    assert_true(exists_in(dir, "u.hm.tmp.Abc123"));
    assert_true(exists_in(dir, "t.hm.tmp.Abc1234"));
    assert_true(exists_in(dir, "t.hm.tmp.Ab-123"));
    assert_true(exists_in(dir, "t.hm.tmp.Link00"));

    /* the writer is gone: its file goes at the next save */
    assert_int_equal(write(release[1], "x", 1), 1);
    int wstatus;
    assert_int_equal(waitpid(pid, &wstatus, 0), pid);
    assert_int_equal(harmonia_save(tree, path), HARMONIA_OK);
    assert_false(exists_in(dir, "t.hm.tmp.Live00"));
    close(ready[0]);
    close(ready[1]);
    close(release[0]);
    close(release[1]);
    harmonia_free(tree);
    free(link);
    free(path);
    remove_tree(dir);
    free(dir);
}

/* ---- locks between processes --------------------------------------------------------------- */

/* A helper process, forked before the parent takes any lock (a forked copy of a locked descriptor
 * would share the lock), that runs one command at a time for the parent. */
typedef struct helper {
    pid_t pid;
    int to_child, from_child;
} helper;

enum { CMD_LOAD_TRY = 'T', CMD_LOAD_WAIT = 'W', CMD_SAVE_NEW = 'S', CMD_QUIT = 'Q' };

/* Replies: the status byte, then 8 bytes (the loaded tree's value of key 3, or 0). */
static void helper_main(const char *path, int in, int out)
{
    char command;
    while (read(in, &command, 1) == 1 && command != CMD_QUIT) {
        harmonia_status s = HARMONIA_OK;
        uint64_t value = 0;
        if (command == CMD_LOAD_TRY || command == CMD_LOAD_WAIT) {
            harmonia_load_config config;
            harmonia_load_config_init(&config);
            config.lock = command == CMD_LOAD_TRY ? HARMONIA_LOCK_TRY : HARMONIA_LOCK_WAIT;
            harmonia_tree *tree = NULL;
            s = harmonia_load(path, &config, &tree);
            if (s == HARMONIA_OK) {
                harmonia_query_config q;
                harmonia_query_config_init(&q);
                q.backend = HARMONIA_BACKEND_CPU;
                uint64_t key = 3;
                uint8_t found;
                harmonia_lookup(tree, &q, &key, 1, &value, &found);
                harmonia_free(tree);
            } else if (s == HARMONIA_ERR_CONFLICT &&
                       strstr(harmonia_last_error(NULL), "index is being updated by another process") == NULL) {
                s = HARMONIA_ERR_INVALID; /* the wrong words */
            }
        } else if (command == CMD_SAVE_NEW) {
            harmonia_tree *tree = build_tree(50, 5000);
            s = harmonia_save(tree, path);
            harmonia_free(tree);
        }
        unsigned char reply[9];
        reply[0] = (unsigned char)s;
        memcpy(reply + 1, &value, 8);
        if (write(out, reply, sizeof reply) != (ssize_t)sizeof reply)
            break;
    }
    _exit(0);
}

static helper helper_start(const char *path)
{
    int down[2], up[2];
    assert_int_equal(pipe(down), 0);
    assert_int_equal(pipe(up), 0);
    helper h;
    h.pid = fork();
    assert_true(h.pid >= 0);
    if (h.pid == 0) {
        close(down[1]);
        close(up[0]);
        helper_main(path, down[0], up[1]);
    }
    close(down[0]);
    close(up[1]);
    h.to_child = down[1];
    h.from_child = up[0];
    return h;
}

static void helper_send(helper *h, char command)
{
    assert_int_equal(write(h->to_child, &command, 1), 1);
}

static harmonia_status helper_reply(helper *h, uint64_t *value)
{
    unsigned char reply[9];
    assert_int_equal(read(h->from_child, reply, sizeof reply), (ssize_t)sizeof reply);
    if (value != NULL)
        memcpy(value, reply + 1, 8);
    return (harmonia_status)reply[0];
}

static harmonia_status helper_run(helper *h, char command, uint64_t *value)
{
    helper_send(h, command);
    return helper_reply(h, value);
}

static void helper_stop(helper *h)
{
    helper_send(h, CMD_QUIT);
    int wstatus;
    assert_int_equal(waitpid(h->pid, &wstatus, 0), h->pid);
    close(h->to_child);
    close(h->from_child);
}

static void test_a_locked_tree_keeps_other_processes_out(void **state)
{
    (void)state;
    char *dir = make_temp_dir();
    char *path = join(dir, "locked.hm");
    harmonia_tree *first = build_tree(300, 10);
    assert_int_equal(harmonia_save(first, path), HARMONIA_OK);
    helper h = helper_start(path);
    uint64_t value;

    /* unlocked: the helper locks and lets go */
    assert_int_equal(helper_run(&h, CMD_LOAD_TRY, &value), HARMONIA_OK);
    assert_int_equal(value, 11);

    harmonia_tree *mine = load(path, true, HARMONIA_LOCK_TRY, HARMONIA_OK);
    assert_int_equal(helper_run(&h, CMD_LOAD_TRY, NULL), HARMONIA_ERR_CONFLICT);
    assert_int_equal(helper_run(&h, CMD_SAVE_NEW, NULL), HARMONIA_ERR_CONFLICT);
    assert_int_equal(value_of_key_3(path), 11); /* readers without a lock still read */

    /* an update and a save under the lock: the lock moves to the new file */
    uint8_t kind = HARMONIA_OP_UPDATE;
    uint64_t key = 3, new_value = 77;
    assert_int_equal(harmonia_update(mine, NULL, &kind, &key, &new_value, 1, NULL), HARMONIA_OK);
    assert_int_equal(harmonia_save(mine, path), HARMONIA_OK);
    assert_int_equal(helper_run(&h, CMD_LOAD_TRY, NULL), HARMONIA_ERR_CONFLICT);
    assert_int_equal(helper_run(&h, CMD_SAVE_NEW, NULL), HARMONIA_ERR_CONFLICT);
    assert_int_equal(value_of_key_3(path), 77);
    /* a second save under the same lock works too */
    assert_int_equal(harmonia_save(mine, path), HARMONIA_OK);

    /* a waiting helper gets the lock when the tree is freed, and reads the new version */
    helper_send(&h, CMD_LOAD_WAIT);
    struct timespec pause = {0, 200 * 1000 * 1000};
    nanosleep(&pause, NULL);
    harmonia_free(mine);
    assert_int_equal(helper_reply(&h, &value), HARMONIA_OK);
    assert_int_equal(value, 77);
    assert_int_equal(helper_run(&h, CMD_SAVE_NEW, NULL), HARMONIA_OK);
    assert_int_equal(value_of_key_3(path), 5001);
    helper_stop(&h);
    assert_int_equal(count_temps(dir), 0);
    harmonia_free(first);
    free(path);
    remove_tree(dir);
    free(dir);
}

/* Two unlocked loads of one file, both saved back: the second save finds the file replaced and
 * refuses, so the first one's change is not lost silently. */
static void test_a_save_refuses_a_file_changed_since_it_was_loaded(void **state)
{
    (void)state;
    char *dir = make_temp_dir();
    char *path = join(dir, "shared.hm"), *other = join(dir, "other.hm");
    harmonia_tree *base = build_tree(300, 0);
    assert_int_equal(harmonia_save(base, path), HARMONIA_OK);
    harmonia_tree *a = load(path, true, HARMONIA_LOCK_NONE, HARMONIA_OK);
    harmonia_tree *b = load(path, true, HARMONIA_LOCK_NONE, HARMONIA_OK);
    uint8_t kind = HARMONIA_OP_UPDATE;
    uint64_t key = 3, va = 111, vb = 222;
    assert_int_equal(harmonia_update(a, NULL, &kind, &key, &va, 1, NULL), HARMONIA_OK);
    assert_int_equal(harmonia_update(b, NULL, &kind, &key, &vb, 1, NULL), HARMONIA_OK);
    assert_int_equal(harmonia_save(a, path), HARMONIA_OK);
    assert_int_equal(harmonia_save(b, path), HARMONIA_ERR_CONFLICT);
    expect_message(b, "replaced");
    expect_message(b, "nothing was written");
    assert_int_equal(value_of_key_3(path), 111);
    /* b may go elsewhere, and a may save again over its own file */
    assert_int_equal(harmonia_save(b, other), HARMONIA_OK);
    assert_int_equal(harmonia_save(a, path), HARMONIA_OK);

    /* changed in place (its time moves): refused as well */
    harmonia_tree *c = load(path, true, HARMONIA_LOCK_NONE, HARMONIA_OK);
    struct timespec times[2] = {{0, UTIME_OMIT}, {12345, 0}};
    assert_int_equal(utimensat(AT_FDCWD, path, times, 0), 0);
    assert_int_equal(harmonia_save(c, path), HARMONIA_ERR_CONFLICT);
    expect_message(c, "changed");
    assert_int_equal(count_temps(dir), 0);
    harmonia_free(a);
    harmonia_free(b);
    harmonia_free(c);
    harmonia_free(base);
    free(path);
    free(other);
    remove_tree(dir);
    free(dir);
}

/* ---- trees loaded without verification ----------------------------------------------------- */

/* A leaf value changed on disk (its checksum not fixed): the unverified load takes it, but an
 * update, a save (over the file or elsewhere) and a check verify first and refuse, so the damage
 * is never saved under fresh checksums. */
static void test_an_unverified_tree_is_verified_before_it_is_saved(void **state)
{
    (void)state;
    char *dir = make_temp_dir();
    char *path = join(dir, "damaged.hm"), *copy = join(dir, "copy.hm");
    harmonia_tree *tree = build_tree(3000, 0);
    assert_int_equal(harmonia_save(tree, path), HARMONIA_OK);
    harmonia_free(tree);
    size_t size;
    unsigned char *image = read_whole(path, &size);
    /* the leaf values section is the second; its offset is in the section table (entry 1) */
    uint64_t values_offset;
    memcpy(&values_offset, image + 360 + 32 + 8, 8);
    image[values_offset + 8] ^= 0x40;
    write_whole(path, image, size);
    load(path, true, HARMONIA_LOCK_NONE, HARMONIA_ERR_CORRUPT);

    harmonia_tree *unverified = load(path, false, HARMONIA_LOCK_NONE, HARMONIA_OK);
    assert_int_equal(harmonia_save(unverified, copy), HARMONIA_ERR_CORRUPT);
    expect_message(unverified, "without verification");
    expect_message(unverified, "checksum mismatch");
    struct stat st;
    assert_int_equal(stat(copy, &st), -1);
    assert_int_equal(harmonia_set_group_size(unverified, 2), HARMONIA_OK);
    assert_int_equal(harmonia_save(unverified, path), HARMONIA_ERR_CORRUPT);
    uint8_t kind = HARMONIA_OP_INSERT;
    uint64_t key = 1, value = 1;
    harmonia_update_stats stats;
    assert_int_equal(harmonia_update(unverified, NULL, &kind, &key, &value, 1, &stats),
                     HARMONIA_ERR_CORRUPT);
    assert_int_equal(stats.applied, 0);
    assert_int_equal(harmonia_check(unverified), HARMONIA_ERR_CORRUPT);
    size_t after_size;
    unsigned char *after = read_whole(path, &after_size);
    assert_int_equal(after_size, size);
    assert_memory_equal(after, image, size);
    assert_int_equal(count_temps(dir), 0);
    harmonia_free(unverified);

    /* a sound file loaded without verification updates and saves (verified on the way) */
    image[values_offset + 8] ^= 0x40;
    write_whole(path, image, size);
    unverified = load(path, false, HARMONIA_LOCK_NONE, HARMONIA_OK);
    assert_int_equal(harmonia_update(unverified, NULL, &kind, &key, &value, 1, NULL), HARMONIA_OK);
    assert_int_equal(harmonia_save(unverified, path), HARMONIA_OK);
    harmonia_free(unverified);
    harmonia_tree *again = load(path, true, HARMONIA_LOCK_NONE, HARMONIA_OK);
    assert_int_equal(harmonia_check(again), HARMONIA_OK);
    harmonia_free(again);
    free(image);
    free(after);
    free(path);
    free(copy);
    remove_tree(dir);
    free(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_save_refuses_what_is_not_a_regular_file),
        cmocka_unit_test(test_save_follows_links_and_keeps_them),
        cmocka_unit_test(test_save_keeps_mode_and_owner),
        cmocka_unit_test(test_failed_write_leaves_the_old_file),
        cmocka_unit_test(test_stale_temps_go_only_when_no_live_process_holds_them),
        cmocka_unit_test(test_a_locked_tree_keeps_other_processes_out),
        cmocka_unit_test(test_a_save_refuses_a_file_changed_since_it_was_loaded),
        cmocka_unit_test(test_an_unverified_tree_is_verified_before_it_is_saved),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
