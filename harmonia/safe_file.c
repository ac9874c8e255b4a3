/* safe_file.c — safe replacement of files and advisory locks (the guarantees are written in
 * safe_file.h): link resolution, regular-file checks, temporary files with the target's mode and
 * owner, fsync + rename + folder fsync, removal of stale temporary files. It does not know what
 * the files hold; index_file.c and the CLI's writers use it. */
#include "harmonia/safe_file.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <time.h>
#include <unistd.h>
#include <xxhash.h>

#define HM_MAX_LINK_HOPS 40
#define HM_MAX_LOCK_ATTEMPTS 1000

static const char hm_temp_digits[] =
    "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";

/* flock's answer on a filesystem that has no locks (some FUSE and network filesystems): then no
 * lock is taken, and what the locks protect rests on the other checks. */
static bool locks_unsupported(int err)
{
    return err == ENOLCK || err == EOPNOTSUPP || err == ENOSYS || err == EINVAL;
}

/* ---- identities ---------------------------------------------------------------------------- */

void hm_file_id_of(const struct stat *st, hm_file_id *id)
{
    id->dev = (uint64_t)st->st_dev;
    id->ino = (uint64_t)st->st_ino;
    id->size = (uint64_t)st->st_size;
    id->mtime_sec = (int64_t)st->st_mtim.tv_sec;
    id->mtime_nsec = (int64_t)st->st_mtim.tv_nsec;
}

bool hm_file_id_same_file(const hm_file_id *a, const hm_file_id *b)
{
    return a->dev == b->dev && a->ino == b->ino;
}

bool hm_file_id_equal(const hm_file_id *a, const hm_file_id *b)
{
    return hm_file_id_same_file(a, b) && a->size == b->size && a->mtime_sec == b->mtime_sec &&
           a->mtime_nsec == b->mtime_nsec;
}

const char *hm_file_kind(mode_t mode)
{
    if (S_ISREG(mode))
        return "a regular file";
    if (S_ISDIR(mode))
        return "a folder";
    if (S_ISFIFO(mode))
        return "a FIFO (named pipe)";
    if (S_ISCHR(mode))
        return "a character device";
    if (S_ISBLK(mode))
        return "a block device";
    if (S_ISSOCK(mode))
        return "a socket";
    if (S_ISLNK(mode))
        return "a symbolic link";
    return "not a file";
}

/* ---- names --------------------------------------------------------------------------------- */

/* The folder part of path ("." when there is none, "/" for a name in the root). */
static char *folder_of(const char *path)
{
    const char *slash = strrchr(path, '/');
    if (slash == NULL)
        return strdup(".");
    if (slash == path)
        return strdup("/");
    return strndup(path, (size_t)(slash - path));
}

static const char *base_of(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash != NULL ? slash + 1 : path;
}

harmonia_status hm_resolve_output(const char *path, char **real_out, bool *exists_out,
                                  struct stat *st_out, char *why, size_t why_size)
{
    *real_out = NULL;
    *exists_out = false;
    char *current = strdup(path);
    if (current == NULL) {
        snprintf(why, why_size, "%s: out of memory", path);
        return HARMONIA_ERR_NO_MEMORY;
    }
    for (int hop = 0; hop <= HM_MAX_LINK_HOPS; hop++) {
        struct stat st;
        if (lstat(current, &st) != 0) {
            if (errno == ENOENT) { /* a new file (its folder is checked when the file is made) */
                *real_out = current;
                return HARMONIA_OK;
            }
            int saved = errno;
            if (strcmp(current, path) == 0)
                snprintf(why, why_size, "%s: cannot stat: %s", path, strerror(saved));
            else
                snprintf(why, why_size, "%s: cannot stat %s (where its link points): %s", path,
                         current, strerror(saved));
            free(current);
            return HARMONIA_ERR_IO;
        }
        if (!S_ISLNK(st.st_mode)) {
            if (!S_ISREG(st.st_mode)) {
                if (strcmp(current, path) == 0)
                    snprintf(why, why_size, "%s: %s, not a regular file", path,
                             hm_file_kind(st.st_mode));
                else
                    snprintf(why, why_size, "%s: links to %s, %s, not a regular file", path,
                             current, hm_file_kind(st.st_mode));
                free(current);
                return HARMONIA_ERR_IO;
            }
            *real_out = current;
            *exists_out = true;
            if (st_out != NULL)
                *st_out = st;
            return HARMONIA_OK;
        }
        /* a link: read where it points; a relative target is relative to the link's folder */
        char target[PATH_MAX];
        ssize_t n = readlink(current, target, sizeof target - 1);
        if (n < 0) {
            int saved = errno;
            snprintf(why, why_size, "%s: cannot read the symbolic link %s: %s", path, current,
                     strerror(saved));
            free(current);
            return HARMONIA_ERR_IO;
        }
        target[n] = '\0';
        char *next;
        if (target[0] == '/' || strchr(current, '/') == NULL) {
            next = strdup(target);
        } else {
            char *folder = folder_of(current);
            next = folder != NULL ? malloc(strlen(folder) + 1 + (size_t)n + 1) : NULL;
            if (next != NULL)
                sprintf(next, "%s/%s", folder, target);
            free(folder);
        }
        free(current);
        if (next == NULL) {
            snprintf(why, why_size, "%s: out of memory", path);
            return HARMONIA_ERR_NO_MEMORY;
        }
        current = next;
    }
    snprintf(why, why_size, "%s: more than %d symbolic links in a row (a loop?)", path,
             HM_MAX_LINK_HOPS);
    free(current);
    return HARMONIA_ERR_IO;
}

/* ---- locks --------------------------------------------------------------------------------- */

harmonia_status hm_lock_existing(const char *path, bool wait, int *fd_out, struct stat *st_out,
                                 char *why, size_t why_size)
{
    *fd_out = -1;
    for (int attempt = 0; attempt < HM_MAX_LOCK_ATTEMPTS; attempt++) {
        char *real;
        bool exists;
        struct stat st;
        harmonia_status status = hm_resolve_output(path, &real, &exists, &st, why, why_size);
        if (status != HARMONIA_OK)
            return status;
        if (!exists) {
            free(real);
            return HARMONIA_OK;
        }
        /* O_NONBLOCK: a FIFO swapped in meanwhile must not block the open; it fails below */
        int fd = open(real, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOFOLLOW);
        if (fd < 0) {
            int saved = errno;
            free(real);
            if (saved == ENOENT || saved == ELOOP)
                continue; /* renamed or replaced by a link since: look again */
            snprintf(why, why_size, "%s: cannot open to lock: %s", path, strerror(saved));
            return HARMONIA_ERR_IO;
        }
        struct stat locked;
        if (fstat(fd, &locked) != 0 || !S_ISREG(locked.st_mode)) {
            close(fd);
            free(real);
            continue;
        }
        if (flock(fd, LOCK_EX | LOCK_NB) != 0 && !locks_unsupported(errno)) {
            int saved = errno;
            if (saved != EWOULDBLOCK) {
                close(fd);
                free(real);
                snprintf(why, why_size, "%s: cannot lock: %s", path, strerror(saved));
                return HARMONIA_ERR_IO;
            }
            if (!wait) {
                close(fd);
                free(real);
                snprintf(why, why_size,
                         "%s: index is being updated by another process (it holds the file's "
                         "lock); nothing was written",
                         path);
                return HARMONIA_ERR_CONFLICT;
            }
            int r;
            while ((r = flock(fd, LOCK_EX)) != 0 && errno == EINTR)
                ;
            if (r != 0) {
                saved = errno;
                close(fd);
                free(real);
                snprintf(why, why_size, "%s: cannot lock: %s", path, strerror(saved));
                return HARMONIA_ERR_IO;
            }
        }
        /* The lock is on the file the descriptor names; the holder before us may have renamed a
         * new file over the path. Then lock that one instead. */
        struct stat now;
        bool same = lstat(real, &now) == 0 && now.st_dev == locked.st_dev &&
                    now.st_ino == locked.st_ino;
        free(real);
        if (!same) {
            close(fd);
            continue;
        }
        if (fstat(fd, &locked) != 0) { /* its size and time after the last writer */
            int saved = errno;
            close(fd);
            snprintf(why, why_size, "%s: cannot stat: %s", path, strerror(saved));
            return HARMONIA_ERR_IO;
        }
        *fd_out = fd;
        if (st_out != NULL)
            *st_out = locked;
        return HARMONIA_OK;
    }
    snprintf(why, why_size, "%s: the file kept changing while its lock was taken", path);
    return HARMONIA_ERR_CONFLICT;
}

/* ---- stale temporary files ----------------------------------------------------------------- */

/* Whether name is base + ".tmp." + HM_TEMP_RANDOM_CHARS characters of hm_temp_digits. */
static bool is_temp_name_of(const char *name, const char *base)
{
    size_t base_len = strlen(base), infix_len = strlen(HM_TEMP_INFIX);
    if (strlen(name) != base_len + infix_len + HM_TEMP_RANDOM_CHARS)
        return false;
    if (strncmp(name, base, base_len) != 0 || strncmp(name + base_len, HM_TEMP_INFIX, infix_len) != 0)
        return false;
    for (const char *c = name + base_len + infix_len; *c != '\0'; c++)
        if (strchr(hm_temp_digits, *c) == NULL)
            return false;
    return true;
}

static uint64_t stale_temps_of_real(const char *real, bool remove, hm_stale_visit visit, void *arg)
{
    char *folder = folder_of(real);
    if (folder == NULL)
        return 0;
    const char *base = base_of(real);
    DIR *dir = opendir(folder);
    free(folder);
    if (dir == NULL)
        return 0;
    int dir_fd = dirfd(dir);
    uint64_t found = 0;
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    struct dirent *entry;
    while ((entry = readdir(dir)) != NULL) {
        if (!is_temp_name_of(entry->d_name, base))
            continue;
        struct stat named;
        if (fstatat(dir_fd, entry->d_name, &named, AT_SYMLINK_NOFOLLOW) != 0 ||
            !S_ISREG(named.st_mode))
            continue;
        int fd = openat(dir_fd, entry->d_name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
        if (fd < 0)
            continue;
        struct stat opened;
        if (fstat(fd, &opened) != 0 || opened.st_ino != named.st_ino ||
            opened.st_dev != named.st_dev) {
            close(fd);
            continue;
        }
        found++;
        /* a live writer holds the lock from just after creating the file to its rename; where
         * the filesystem has no locks, nothing tells, and the file stays */
        bool locked = flock(fd, LOCK_EX | LOCK_NB) != 0;
        bool own = geteuid() == 0 || opened.st_uid == geteuid();
        bool young_empty = opened.st_size == 0 &&
                           now.tv_sec - opened.st_mtim.tv_sec < HM_STALE_EMPTY_SECONDS;
        bool removable = !locked && own && !young_empty;
        bool removed = false;
        if (remove && removable) {
            struct stat again;
            if (fstatat(dir_fd, entry->d_name, &again, AT_SYMLINK_NOFOLLOW) == 0 &&
                again.st_ino == opened.st_ino && again.st_dev == opened.st_dev)
                removed = unlinkat(dir_fd, entry->d_name, 0) == 0;
        }
        close(fd);
        if (visit != NULL)
            visit(arg, entry->d_name, (uint64_t)opened.st_size, removable, removed);
    }
    closedir(dir);
    return found;
}

uint64_t hm_stale_temps(const char *path, bool remove, hm_stale_visit visit, void *arg)
{
    char *real;
    bool exists;
    char why[64];
    struct stat st;
    if (path == NULL || hm_resolve_output(path, &real, &exists, &st, why, sizeof why) != HARMONIA_OK)
        return 0;
    uint64_t found = stale_temps_of_real(real, remove, visit, arg);
    free(real);
    return found;
}

/* ---- writing ------------------------------------------------------------------------------- */

bool hm_write_all(int fd, const void *data, uint64_t n)
{
    const unsigned char *p = data;
    const uint64_t chunk = (uint64_t)1 << 30; /* Linux moves at most ~2 GiB per write() */
    while (n > 0) {
        size_t step = n < chunk ? (size_t)n : (size_t)chunk;
        ssize_t w = write(fd, p, step);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return false;
        }
        if (w == 0) {
            errno = EIO;
            return false;
        }
        p += w;
        n -= (uint64_t)w;
    }
    return true;
}

/* Writes target + ".tmp.XXXXXX" (random characters) into temp, which has room for it. */
static void make_temp_name(const char *target, char *temp)
{
    static atomic_uint_fast64_t counter;
    size_t len = strlen(target), infix = strlen(HM_TEMP_INFIX);
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    uint64_t seed = ((uint64_t)getpid() << 32) ^ (uint64_t)now.tv_nsec ^
                    ((uint64_t)now.tv_sec << 20) ^ (uintptr_t)temp;
    uint64_t x = XXH3_64bits_withSeed(&seed, sizeof seed, atomic_fetch_add(&counter, 1));
    memcpy(temp, target, len);
    memcpy(temp + len, HM_TEMP_INFIX, infix);
    for (int i = 0; i < HM_TEMP_RANDOM_CHARS; i++) {
        temp[len + infix + (size_t)i] = hm_temp_digits[x % 62];
        x /= 62;
    }
    temp[len + infix + HM_TEMP_RANDOM_CHARS] = '\0';
}

/* Creates the temporary file of target with the given mode (umask applies). Where the system
 * allows, the file has no name until commit (O_TMPFILE, named through /proc/self/fd then): a
 * killed writer leaves nothing behind. Elsewhere it is "<target>.tmp.XXXXXX", created with
 * O_EXCL. Returns the fd, the name reserved for it in *temp_out (malloc'd) and whether it is
 * linked yet, or -1 with errno set. */
static int create_temp(const char *target, mode_t mode, char **temp_out, bool *linked_out)
{
    size_t len = strlen(target) + strlen(HM_TEMP_INFIX) + HM_TEMP_RANDOM_CHARS + 1;
    if (strlen(base_of(target)) + strlen(HM_TEMP_INFIX) + HM_TEMP_RANDOM_CHARS > NAME_MAX) {
        errno = ENAMETOOLONG; /* known now, not after all the data is written */
        return -1;
    }
    char *temp = malloc(len);
    if (temp == NULL) {
        errno = ENOMEM;
        return -1;
    }
    make_temp_name(target, temp);
#ifdef O_TMPFILE
    if (access("/proc/self/fd", X_OK) == 0) {
        char *folder = folder_of(target);
        int fd = folder != NULL ? open(folder, O_TMPFILE | O_WRONLY | O_CLOEXEC, mode) : -1;
        int saved = errno;
        free(folder);
        if (fd >= 0) {
            *temp_out = temp;
            *linked_out = false;
            return fd;
        }
        /* a filesystem without O_TMPFILE says so with one of these; other errors are real */
        if (saved != EOPNOTSUPP && saved != EISDIR && saved != EINVAL && saved != ENOENT) {
            free(temp);
            errno = saved;
            return -1;
        }
    }
#endif
    for (int attempt = 0; attempt < 100; attempt++) {
        if (attempt > 0)
            make_temp_name(target, temp);
        int fd = open(temp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, mode);
        if (fd >= 0) {
            *temp_out = temp;
            *linked_out = true;
            return fd;
        }
        if (errno != EEXIST)
            break;
    }
    int saved = errno;
    free(temp);
    errno = saved;
    return -1;
}

/* Gives an unnamed temporary file its name (a fresh one if the reserved name is taken). */
static bool link_temp(hm_output *out)
{
    char proc[64];
    snprintf(proc, sizeof proc, "/proc/self/fd/%d", out->fd);
    for (int attempt = 0; attempt < 100; attempt++) {
        if (attempt > 0)
            make_temp_name(out->target, out->temp);
        if (linkat(AT_FDCWD, proc, AT_FDCWD, out->temp, AT_SYMLINK_FOLLOW) == 0) {
            out->linked = true;
            return true;
        }
        if (errno != EEXIST)
            return false;
    }
    return false;
}

static void output_free_names(hm_output *out)
{
    free(out->path);
    free(out->target);
    free(out->temp);
    out->path = out->target = out->temp = NULL;
}

harmonia_status hm_output_open(hm_output *out, const char *path, char *why, size_t why_size)
{
    memset(out, 0, sizeof *out);
    out->fd = -1;
    struct stat st;
    harmonia_status status = hm_resolve_output(path, &out->target, &out->replaces, &st, why, why_size);
    if (status != HARMONIA_OK)
        return status;
    out->path = strdup(path);
    if (out->path == NULL) {
        output_free_names(out);
        snprintf(why, why_size, "%s: out of memory", path);
        return HARMONIA_ERR_NO_MEMORY;
    }
    if (out->replaces)
        hm_file_id_of(&st, &out->replaced);
    stale_temps_of_real(out->target, true, NULL, NULL);

    /* A replacement is private until it has the old file's owner and mode; a new file gets the
     * usual 0666 & ~umask from the start. */
    out->fd = create_temp(out->target, out->replaces ? 0600 : 0666, &out->temp, &out->linked);
    if (out->fd < 0) {
        int saved = errno;
        if (strcmp(out->target, path) == 0)
            snprintf(why, why_size, "%s: cannot create a temporary file beside it: %s", path,
                     strerror(saved));
        else
            snprintf(why, why_size, "%s: cannot create a temporary file beside %s (where it "
                     "links): %s", path, out->target, strerror(saved));
        output_free_names(out);
        return HARMONIA_ERR_IO;
    }
    const char *step = NULL;
    int saved = 0;
    /* held until the rename (and after it where the caller keeps the descriptor): marks the
     * file as a live writer's for the stale-file cleanup */
    if (flock(out->fd, LOCK_EX | LOCK_NB) != 0 && !locks_unsupported(errno)) {
        step = "lock";
        saved = errno;
    }
    if (step == NULL && out->replaces) {
        if ((st.st_uid != geteuid() || st.st_gid != getegid()) &&
            fchown(out->fd, st.st_uid, st.st_gid) != 0)
            (void)(fchown(out->fd, (uid_t)-1, st.st_gid) != 0); /* the group alone, if allowed */
        if (fchmod(out->fd, st.st_mode & 07777) != 0) {
            step = "chmod";
            saved = errno;
        }
    }
    if (step != NULL) {
        snprintf(why, why_size, "%s: cannot %s the temporary file %s: %s", path, step, out->temp,
                 strerror(saved));
        hm_output_abort(out);
        return HARMONIA_ERR_IO;
    }
    return HARMONIA_OK;
}

void hm_output_abort(hm_output *out)
{
    if (out->temp != NULL && out->linked)
        unlink(out->temp);
    if (out->fd >= 0)
        close(out->fd);
    out->fd = -1;
    output_free_names(out);
}

/* fsyncs the folder that holds path, so that the rename is durable. Filesystems that cannot sync a
 * folder (EINVAL) are accepted: there is nothing more to do on them. false with errno set. */
static bool sync_folder(const char *path)
{
    char *folder = folder_of(path);
    if (folder == NULL) {
        errno = ENOMEM;
        return false;
    }
    int fd = open(folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    int saved = errno;
    free(folder);
    if (fd < 0) {
        errno = saved;
        return false;
    }
    bool ok = fsync(fd) == 0 || errno == EINVAL;
    saved = errno;
    close(fd);
    errno = saved;
    return ok;
}

harmonia_status hm_output_commit(hm_output *out, bool keep_fd, char *why, size_t why_size)
{
    if (fsync(out->fd) != 0) {
        int saved = errno;
        snprintf(why, why_size, "%s: fsync of the temporary file %s failed: %s; %s is unchanged",
                 out->path, out->temp, strerror(saved), out->path);
        hm_output_abort(out);
        return HARMONIA_ERR_IO;
    }
    if (out->check_unchanged) {
        struct stat now;
        bool there = lstat(out->target, &now) == 0;
        hm_file_id id;
        if (there)
            hm_file_id_of(&now, &id);
        bool changed = out->replaces ? !there || !hm_file_id_equal(&id, &out->replaced) : there;
        if (changed) {
            snprintf(why, why_size,
                     "%s: changed by another process while it was being written; not replaced",
                     out->path);
            hm_output_abort(out);
            return HARMONIA_ERR_CONFLICT;
        }
    }
    if (!out->linked && !link_temp(out)) {
        int saved = errno;
        snprintf(why, why_size, "%s: cannot give the temporary file a name beside it: %s; %s is unchanged",
                 out->path, strerror(saved), out->path);
        hm_output_abort(out);
        return HARMONIA_ERR_IO;
    }
    if (rename(out->temp, out->target) != 0) {
        int saved = errno;
        snprintf(why, why_size, "%s: cannot rename the temporary file %s over it: %s; %s is unchanged",
                 out->path, out->temp, strerror(saved), out->path);
        hm_output_abort(out);
        return HARMONIA_ERR_IO;
    }
    free(out->temp); /* renamed: nothing to remove any more */
    out->temp = NULL;
    harmonia_status status = HARMONIA_OK;
    if (!sync_folder(out->target)) {
        int saved = errno;
        snprintf(why, why_size,
                 "%s: written, but its folder could not be synced, so the new file may not "
                 "survive a crash: %s",
                 out->path, strerror(saved));
        status = HARMONIA_ERR_IO;
    }
    if (!keep_fd) {
        close(out->fd);
        out->fd = -1;
    }
    output_free_names(out);
    return status;
}
