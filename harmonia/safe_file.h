/* safe_file.h — the one place where Harmonia creates, replaces and locks files: the library's index
 * saves (index_file.c) and the CLI's outputs (results, generated data, plots) both write through
 * it. It knows nothing of what the files hold. Internal (hm_ prefix), not part of the public API.
 *
 * WHAT A WRITE THROUGH hm_output GUARANTEES
 *   - Only regular files are written: a target that exists and is a folder, FIFO, device or socket
 *     is an error naming it (never replaced, never opened for writing, so a FIFO never blocks).
 *   - Symbolic links are followed (chains and dangling links too): the real file is replaced and
 *     the link stays a link.
 *   - The new file gets the old file's permission bits and, where the process may (root, or the
 *     group of a member), its owner and group; a new file gets 0666 & ~umask. The temporary file is
 *     private (0600) until then, so data never shows with wider permissions than the target's.
 *   - The data goes to a temporary file in the real target's folder, which this process holds an
 *     exclusive flock(2) on. Where the system allows (O_TMPFILE and /proc), the file has no name
 *     while it is written, so a writer killed then leaves nothing at all; at commit it is fsynced,
 *     named "<real target>.tmp.XXXXXX" (X: [0-9A-Za-z]), renamed over the target and the folder
 *     fsynced. Elsewhere it carries that name from its creation. Any failure (ENOSPC, EFBIG, an
 *     error of any step) removes the temporary file and leaves the old target byte for byte as
 *     it was.
 *   - Stale temporary files of killed writers of the same target (the name pattern above, a
 *     regular file, owned by this user or any user for root, and not flock'ed: the kernel drops
 *     a dead process's locks) are removed when the next output to that target is opened. An empty
 *     one is left for HM_STALE_EMPTY_SECONDS, so that a writer between its open and its flock is
 *     never touched.
 *
 * LOCKS. hm_lock_existing takes an exclusive flock on an existing file and makes sure the path
 * still names the locked file (a writer may have renamed a new file over it meanwhile). Index
 * saves lock the file they replace; a tree loaded with a lock keeps it, and after its own save
 * keeps the lock on the new file through the temporary file's descriptor (locked since creation).
 * On a filesystem without flock (ENOLCK, EOPNOTSUPP) no lock is taken and the writes go on: the
 * check that a save replaces the file it loaded still runs, and no temporary file there is ever
 * taken for stale.
 * ============================================================================================ */
#ifndef HARMONIA_SAFE_FILE_H
#define HARMONIA_SAFE_FILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

#include "harmonia.h"

#define HM_TEMP_INFIX ".tmp."
#define HM_TEMP_RANDOM_CHARS 6
/* An empty, unlocked temporary file younger than this may be a writer's between open and flock. */
#define HM_STALE_EMPTY_SECONDS 10

/* What identifies a file's contents without reading them: device, inode, size, modification
 * time. Two ids of one path that differ mean another writer changed or replaced the file. */
typedef struct hm_file_id {
    uint64_t dev, ino, size;
    int64_t mtime_sec;
    int64_t mtime_nsec;
} hm_file_id;

void hm_file_id_of(const struct stat *st, hm_file_id *id);
/* Same device and inode (the same file, whatever its name). */
bool hm_file_id_same_file(const hm_file_id *a, const hm_file_id *b);
/* The same file with the same size and modification time. */
bool hm_file_id_equal(const hm_file_id *a, const hm_file_id *b);

/* "a folder", "a FIFO", "a character device", ... for a stat mode that is not a regular file. */
const char *hm_file_kind(mode_t mode);

/* Resolves where a write to path would land: follows symbolic links (up to 40, dangling ones
 * too, relative links from their own folder) to the real name. *real_out (malloc'd) gets it;
 * *exists_out whether a file is there and *st_out its stat. A target that exists and is not a
 * regular file fails with HARMONIA_ERR_IO and "<path>: <kind>, not a regular file". Errors: IO,
 * NO_MEMORY; the message (naming path) in why. */
harmonia_status hm_resolve_output(const char *path, char **real_out, bool *exists_out,
                                  struct stat *st_out, char *why, size_t why_size);

/* Takes an exclusive flock on the existing file at path (following links). wait: block until it
 * is free; else a held lock fails with HARMONIA_ERR_CONFLICT. On success *fd_out is a read-only
 * descriptor holding the lock (close it to release) and *st_out the locked file's stat; when path
 * does not exist *fd_out is -1 (OK: nothing to lock). Errors: CONFLICT, IO (a non-regular file,
 * open/flock failures), with the message in why. */
harmonia_status hm_lock_existing(const char *path, bool wait, int *fd_out, struct stat *st_out,
                                 char *why, size_t why_size);

/* A file being written (see the guarantees above). */
typedef struct hm_output {
    int fd;               /* the temporary file, open for writing, flock'ed */
    char *path;           /* the name given (for messages) */
    char *target;         /* the real file that commit replaces (links resolved) */
    char *temp;           /* target + ".tmp.XXXXXX": its name, or the name it gets at commit */
    bool linked;          /* the temporary file has that name (else it is unnamed, O_TMPFILE) */
    bool replaces;        /* a file was at target when opened */
    hm_file_id replaced;  /* its identity then */
    bool check_unchanged; /* commit fails (CONFLICT) if target no longer is that file */
} hm_output;

/* Resolves path, removes stale temporary files of the target, creates the temporary file and
 * gives it the target's mode (and owner where permitted). Errors: IO, NO_MEMORY (message in
 * why). On failure nothing is left behind and *out needs no cleanup. */
harmonia_status hm_output_open(hm_output *out, const char *path, char *why, size_t why_size);

/* fsyncs the temporary file, renames it over the target and fsyncs the folder. keep_fd: out->fd
 * stays open (the new file's descriptor, still locked) and the caller closes it; else it is
 * closed. On failure the temporary file is removed and the target is as it was (except when only
 * the final folder fsync failed: then the new file is in place and the message says so; the
 * return is IO in both cases). Frees the names either way. */
harmonia_status hm_output_commit(hm_output *out, bool keep_fd, char *why, size_t why_size);

/* Removes the temporary file and frees everything (the target is untouched). fd is closed unless
 * it is -1 (a caller that closed it through stdio sets it to -1 first). */
void hm_output_abort(hm_output *out);

/* Writes n bytes to fd, retrying short writes and EINTR. false with errno set on failure. */
bool hm_write_all(int fd, const void *data, uint64_t n);

/* Stale temporary files of the target that path resolves to (see above): visit is called for
 * each, with its name, its size and whether it was removed (remove = true removes those that are
 * safe to remove: unlocked, this user's, not a just-created empty file; remove = false only
 * reports them, with removable telling which would go). Returns the number found. */
typedef void (*hm_stale_visit)(void *arg, const char *name, uint64_t bytes, bool removable,
                               bool removed);
uint64_t hm_stale_temps(const char *path, bool remove, hm_stale_visit visit, void *arg);

#endif /* HARMONIA_SAFE_FILE_H */
