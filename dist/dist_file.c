/* dist_file.c — saving and loading the distributed index: one index file per shard (written and read
 * by harmonia_save / harmonia_load) and the manifest that binds them (ranks, splitters, each
 * shard's key count, size and whole-file XXH3, key width, version), written atomically by rank 0
 * and read by rank 0 for every rank. The format is written down in include/harmonia_dist.h. */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <xxhash.h>

#include "dist_internal.h"

#define MANIFEST_MAX_BYTES ((uint64_t)64 << 20)
#define PATH_BYTES 4096
#define NAME_BYTES 256
#define LIBRARY_BYTES 32

/* ---- paths ---------------------------------------------------------------------------------- */

/* folder (without the final '/', "." when none) and base name of path */
static void split_path(const char *path, char *folder, char *base)
{
    const char *slash = strrchr(path, '/');
    if (slash == NULL) {
        snprintf(folder, PATH_BYTES, ".");
        snprintf(base, PATH_BYTES, "%s", path);
    } else {
        size_t n = (size_t)(slash - path);
        if (n == 0)
            snprintf(folder, PATH_BYTES, "/");
        else
            snprintf(folder, PATH_BYTES, "%.*s", (int)n, path);
        snprintf(base, PATH_BYTES, "%s", slash + 1);
    }
}

static void join_path(const char *folder, const char *name, char *out)
{
    if (strcmp(folder, "/") == 0)
        snprintf(out, PATH_BYTES, "/%s", name);
    else
        snprintf(out, PATH_BYTES, "%s/%s", folder, name);
}

static void fsync_folder(const char *folder)
{
    int fd = open(folder, O_RDONLY | O_DIRECTORY);
    if (fd >= 0) {
        fsync(fd);
        close(fd);
    }
}

/* Size and XXH3_64bits of a whole file. */
static harmonia_status hash_file(const char *path, uint64_t *bytes_out, uint64_t *hash_out,
                                 dst_err *err)
{
    int fd = open(path, O_RDONLY);
    if (fd < 0)
        return dst_fail(err, errno == ENOENT ? HARMONIA_ERR_IO : HARMONIA_ERR_IO,
                        "%s: cannot open: %s", path, strerror(errno));
    const size_t chunk = (size_t)16 << 20;
    unsigned char *buffer = malloc(chunk);
    XXH3_state_t *state = XXH3_createState();
    harmonia_status status = HARMONIA_OK;
    uint64_t total = 0;
    if (buffer == NULL || state == NULL) {
        status = dst_fail(err, HARMONIA_ERR_NO_MEMORY, "%s: out of memory hashing the file", path);
    } else {
        XXH3_64bits_reset(state);
        for (;;) {
            ssize_t got = read(fd, buffer, chunk);
            if (got < 0) {
                if (errno == EINTR)
                    continue;
                status = dst_fail(err, HARMONIA_ERR_IO, "%s: read failed: %s", path, strerror(errno));
                break;
            }
            if (got == 0)
                break;
            XXH3_64bits_update(state, buffer, (size_t)got);
            total += (uint64_t)got;
        }
    }
    if (status == HARMONIA_OK) {
        *bytes_out = total;
        *hash_out = XXH3_64bits_digest(state);
    }
    XXH3_freeState(state);
    free(buffer);
    close(fd);
    return status;
}

/* ---- the manifest --------------------------------------------------------------------------- */

typedef struct manifest_shard {
    uint64_t keys, bytes, hash;
    char name[NAME_BYTES];
} manifest_shard;

typedef struct manifest {
    char library[LIBRARY_BYTES];
    int ranks;
    uint32_t key_bits;
    uint64_t keys;
    uint64_t generation;
    uint64_t *lower;        /* ranks entries, lower[0] = 0 */
    manifest_shard *shards; /* ranks entries */
} manifest;

static void manifest_free(manifest *m)
{
    free(m->lower);
    free(m->shards);
    memset(m, 0, sizeof *m);
}

/* A cursor over the manifest's lines. */
typedef struct line_reader {
    const char *text, *end, *path;
    uint64_t line;
} line_reader;

/* The next line (without '\n') in [*start, *stop). false at the end or for a line without '\n'. */
static bool next_line(line_reader *r, const char **start, const char **stop)
{
    if (r->text >= r->end)
        return false;
    const char *nl = memchr(r->text, '\n', (size_t)(r->end - r->text));
    if (nl == NULL)
        return false;
    *start = r->text;
    *stop = nl;
    r->text = nl + 1;
    r->line++;
    return true;
}

/* Takes the word at *p (up to a blank or stop) into word (NUL-terminated, at most size-1 chars).
 * false when empty or too long. Skips one following space. */
static bool take_word(const char **p, const char *stop, char *word, size_t size)
{
    const char *q = *p;
    while (q < stop && *q != ' ')
        q++;
    size_t n = (size_t)(q - *p);
    if (n == 0 || n >= size)
        return false;
    memcpy(word, *p, n);
    word[n] = '\0';
    *p = q < stop ? q + 1 : q;
    return true;
}

static bool decimal(const char *word, uint64_t *out)
{
    if (word[0] == '\0' || (word[0] == '0' && word[1] != '\0'))
        return false;
    uint64_t v = 0;
    for (const char *c = word; *c; c++) {
        if (*c < '0' || *c > '9')
            return false;
        uint64_t digit = (uint64_t)(*c - '0');
        if (v > (UINT64_MAX - digit) / 10)
            return false;
        v = v * 10 + digit;
    }
    *out = v;
    return true;
}

static bool hex16(const char *word, uint64_t *out)
{
    if (strlen(word) != 16)
        return false;
    uint64_t v = 0;
    for (const char *c = word; *c; c++) {
        int d = *c >= '0' && *c <= '9' ? *c - '0' : *c >= 'a' && *c <= 'f' ? *c - 'a' + 10 : -1;
        if (d < 0)
            return false;
        v = v << 4 | (uint64_t)d;
    }
    *out = v;
    return true;
}

static bool good_name(const char *name)
{
    if (name[0] == '\0' || name[0] == '.')
        return false;
    for (const char *c = name; *c; c++)
        if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') ||
              *c == '.' || *c == '_' || *c == '-'))
            return false;
    return true;
}

#define BAD(...)                                                                                  \
    do {                                                                                          \
        dst_fail(err, HARMONIA_ERR_CORRUPT, __VA_ARGS__);                                         \
        goto bad;                                                                                 \
    } while (0)

/* Reads "<field> <value...>" lines in the manifest's order into m. Deterministic: every rank
 * parsing the same bytes reaches the same verdict and message. */
static harmonia_status parse_manifest(const char *text, uint64_t size, const char *path, manifest *m,
                                      dst_err *err)
{
    memset(m, 0, sizeof *m);
    line_reader r = {text, text + size, path, 0};
    const char *a, *b, *p;
    char word[NAME_BYTES + 8], field[32];
    uint64_t v;
    /* magic and version first: another version may checksum differently */
    if (!next_line(&r, &a, &b) || (size_t)(b - a) < 24 ||
        memcmp(a, "harmonia-dist-manifest ", 23) != 0)
        BAD("%s: not a harmonia-dist manifest (the first line is not 'harmonia-dist-manifest 1')",
            path);
    p = a + 23;
    if (!take_word(&p, b, word, sizeof word) || !decimal(word, &v) || p != b)
        BAD("%s:1: malformed version", path);
    if (v != HARMONIA_DIST_MANIFEST_VERSION) {
        dst_fail(err, HARMONIA_ERR_UNSUPPORTED,
                 "%s: manifest version %" PRIu64 " (this library reads version %d)", path, v,
                 HARMONIA_DIST_MANIFEST_VERSION);
        goto bad;
    }
    /* the checksum line ends the file and covers every byte before it */
    {
        if (size < 26 || text[size - 1] != '\n')
            BAD("%s: truncated manifest (no final checksum line)", path);
        const char *last = text + size - 1;
        while (last > text && last[-1] != '\n')
            last--;
        if ((size_t)(text + size - 1 - last) != 25 || memcmp(last, "checksum ", 9) != 0)
            BAD("%s: truncated or damaged manifest (the last line is not 'checksum <16 hex "
                "digits>')", path);
        char hex[17];
        memcpy(hex, last + 9, 16);
        hex[16] = '\0';
        uint64_t stored;
        if (!hex16(hex, &stored))
            BAD("%s: damaged manifest (malformed checksum)", path);
        uint64_t actual = XXH3_64bits(text, (size_t)(last - text));
        if (actual != stored)
            BAD("%s: damaged manifest: checksum %016" PRIx64 " does not match its contents (%016"
                PRIx64 ")", path, stored, actual);
        r.end = last; /* the fields end where the checksum line starts */
    }
#define FIELD(name_)                                                                              \
    do {                                                                                          \
        if (!next_line(&r, &a, &b))                                                               \
            BAD("%s:%" PRIu64 ": missing field '%s'", path, r.line + 1, name_);                   \
        p = a;                                                                                    \
        if (!take_word(&p, b, field, sizeof field) || strcmp(field, name_) != 0)                  \
            BAD("%s:%" PRIu64 ": expected field '%s'", path, r.line, name_);                      \
    } while (0)
#define NUMBER(out_, what_)                                                                       \
    do {                                                                                          \
        if (!take_word(&p, b, word, sizeof word) || !decimal(word, &(out_)))                      \
            BAD("%s:%" PRIu64 ": malformed %s", path, r.line, what_);                             \
    } while (0)
#define END_OF_LINE()                                                                             \
    do {                                                                                          \
        if (p != b)                                                                               \
            BAD("%s:%" PRIu64 ": unexpected text at the end of the line", path, r.line);          \
    } while (0)
    FIELD("library");
    if (!take_word(&p, b, m->library, sizeof m->library))
        BAD("%s:%" PRIu64 ": malformed library version", path, r.line);
    END_OF_LINE();
    FIELD("ranks");
    NUMBER(v, "rank count");
    END_OF_LINE();
    if (v < 1 || v > (1u << 24))
        BAD("%s:%" PRIu64 ": %" PRIu64 " ranks is out of range", path, r.line, v);
    m->ranks = (int)v;
    FIELD("key_bits");
    NUMBER(v, "key width");
    END_OF_LINE();
    if (v != 32 && v != 64)
        BAD("%s:%" PRIu64 ": key width %" PRIu64 " (32 or 64)", path, r.line, v);
    m->key_bits = (uint32_t)v;
    FIELD("keys");
    NUMBER(m->keys, "key count");
    END_OF_LINE();
    FIELD("generation");
    if (!take_word(&p, b, word, sizeof word) || !hex16(word, &m->generation))
        BAD("%s:%" PRIu64 ": malformed generation", path, r.line);
    END_OF_LINE();
    m->lower = calloc((size_t)m->ranks, sizeof *m->lower);
    m->shards = calloc((size_t)m->ranks, sizeof *m->shards);
    if (m->lower == NULL || m->shards == NULL) {
        dst_fail(err, HARMONIA_ERR_NO_MEMORY, "%s: out of memory for %d shards", path, m->ranks);
        goto bad;
    }
    const uint64_t max_key = dst_max_key(m->key_bits);
    for (int s = 1; s < m->ranks; s++) {
        FIELD("splitter");
        NUMBER(v, "shard number");
        if (v != (uint64_t)s)
            BAD("%s:%" PRIu64 ": splitter %" PRIu64 " where splitter %d belongs", path, r.line, v, s);
        NUMBER(m->lower[s], "splitter");
        END_OF_LINE();
        if (m->lower[s] > max_key || m->lower[s] < m->lower[s - 1])
            BAD("%s:%" PRIu64 ": splitter %d (%" PRIu64 ") is out of order or wider than the keys",
                path, r.line, s, m->lower[s]);
    }
    uint64_t sum = 0;
    for (int s = 0; s < m->ranks; s++) {
        manifest_shard *sh = &m->shards[s];
        FIELD("shard");
        NUMBER(v, "shard number");
        if (v != (uint64_t)s)
            BAD("%s:%" PRIu64 ": shard %" PRIu64 " where shard %d belongs", path, r.line, v, s);
        NUMBER(sh->keys, "key count");
        NUMBER(sh->bytes, "file size");
        if (!take_word(&p, b, word, sizeof word) || !hex16(word, &sh->hash))
            BAD("%s:%" PRIu64 ": malformed checksum", path, r.line);
        if (!take_word(&p, b, sh->name, sizeof sh->name) || !good_name(sh->name))
            BAD("%s:%" PRIu64 ": malformed shard file name (letters, digits, '.', '_', '-')", path,
                r.line);
        END_OF_LINE();
        if (sh->keys > UINT64_MAX - sum)
            BAD("%s:%" PRIu64 ": key counts overflow", path, r.line);
        sum += sh->keys;
    }
    if (sum != m->keys)
        BAD("%s: the shards hold %" PRIu64 " keys, the manifest says %" PRIu64, path, sum, m->keys);
    if (next_line(&r, &a, &b) || r.text != r.end)
        BAD("%s:%" PRIu64 ": unexpected line before the checksum", path, r.line);
#undef FIELD
#undef NUMBER
#undef END_OF_LINE
    return HARMONIA_OK;
bad:
    manifest_free(m);
    return err->status;
}
#undef BAD

/* Appends printf text to a growing buffer. */
typedef struct text_buffer {
    char *data;
    size_t used, capacity;
    bool failed;
} text_buffer;

static void append(text_buffer *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void append(text_buffer *t, const char *fmt, ...)
{
    if (t->failed)
        return;
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(t->data + t->used, t->capacity - t->used, fmt, ap);
        va_end(ap);
        if (n < 0) {
            t->failed = true;
            return;
        }
        if ((size_t)n < t->capacity - t->used) {
            t->used += (size_t)n;
            return;
        }
        size_t capacity = t->capacity * 2 + (size_t)n + 64;
        char *data = realloc(t->data, capacity);
        if (data == NULL) {
            t->failed = true;
            return;
        }
        t->data = data;
        t->capacity = capacity;
    }
}

/* Writes the bytes to path atomically: a temporary file in the same folder, fsync, rename over
 * path, fsync of the folder. The temporary file is removed on failure. */
static harmonia_status write_atomically(const char *path, const char *folder, const char *bytes,
                                        size_t size, dst_err *err)
{
    char temp[PATH_BYTES + 16];
    snprintf(temp, sizeof temp, "%s.tmp.XXXXXX", path);
    int fd = mkstemp(temp);
    if (fd < 0)
        return dst_fail(err, HARMONIA_ERR_IO, "%s: cannot create a temporary file beside it: %s",
                        path, strerror(errno));
    harmonia_status status = HARMONIA_OK;
    size_t done = 0;
    while (done < size) {
        ssize_t n = write(fd, bytes + done, size - done);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            status = dst_fail(err, HARMONIA_ERR_IO, "%s: write failed: %s", temp, strerror(errno));
            break;
        }
        done += (size_t)n;
    }
    if (status == HARMONIA_OK && fchmod(fd, 0644) != 0)
        status = dst_fail(err, HARMONIA_ERR_IO, "%s: chmod failed: %s", temp, strerror(errno));
    if (status == HARMONIA_OK && fsync(fd) != 0)
        status = dst_fail(err, HARMONIA_ERR_IO, "%s: fsync failed: %s", temp, strerror(errno));
    if (close(fd) != 0 && status == HARMONIA_OK)
        status = dst_fail(err, HARMONIA_ERR_IO, "%s: close failed: %s", temp, strerror(errno));
    if (status == HARMONIA_OK && rename(temp, path) != 0)
        status = dst_fail(err, HARMONIA_ERR_IO, "%s: rename over it failed: %s", path,
                          strerror(errno));
    if (status != HARMONIA_OK) {
        unlink(temp);
        return status;
    }
    fsync_folder(folder);
    return HARMONIA_OK;
}

/* Reads a whole (regular, not too large) file into a malloc'd buffer. */
static harmonia_status read_small_file(const char *path, char **data_out, uint64_t *size_out,
                                       dst_err *err)
{
    *data_out = NULL;
    *size_out = 0;
    int fd = open(path, O_RDONLY);
    if (fd < 0)
        return dst_fail(err, HARMONIA_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
    struct stat st;
    harmonia_status status = HARMONIA_OK;
    if (fstat(fd, &st) != 0)
        status = dst_fail(err, HARMONIA_ERR_IO, "%s: cannot stat: %s", path, strerror(errno));
    else if (!S_ISREG(st.st_mode))
        status = dst_fail(err, HARMONIA_ERR_IO, "%s: not a regular file", path);
    else if ((uint64_t)st.st_size > MANIFEST_MAX_BYTES)
        status = dst_fail(err, HARMONIA_ERR_CORRUPT, "%s: %lld bytes is too large for a manifest",
                          path, (long long)st.st_size);
    char *data = NULL;
    uint64_t size = status == HARMONIA_OK ? (uint64_t)st.st_size : 0;
    if (status == HARMONIA_OK && (data = malloc(size + 1)) == NULL)
        status = dst_fail(err, HARMONIA_ERR_NO_MEMORY, "%s: out of memory", path);
    uint64_t done = 0;
    while (status == HARMONIA_OK && done < size) {
        ssize_t n = read(fd, data + done, size - done);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            status = dst_fail(err, HARMONIA_ERR_IO, "%s: read failed: %s", path,
                              n < 0 ? strerror(errno) : "the file shrank while reading");
            break;
        }
        done += (uint64_t)n;
    }
    close(fd);
    if (status != HARMONIA_OK) {
        free(data);
        return status;
    }
    data[size] = '\0';
    *data_out = data;
    *size_out = size;
    return HARMONIA_OK;
}

/* Collective: rank 0 reads the manifest at path and every rank receives its bytes and parses them.
 * The verdict is the same everywhere. */
static harmonia_status load_manifest(const dst_ctx *ctx, const char *path, manifest *m, dst_err *err)
{
    char *data = NULL;
    uint64_t size = 0;
    if (ctx->rank == 0)
        read_small_file(path, &data, &size, err);
    uint64_t words[1] = {size};
    if (dst_agree_max(ctx, err, words, 1) != HARMONIA_OK) {
        free(data);
        return err->status;
    }
    size = words[0];
    if (ctx->rank != 0) {
        data = malloc(size + 1);
        if (data == NULL)
            dst_fail(err, HARMONIA_ERR_NO_MEMORY, "out of memory for the manifest");
    }
    if (dst_agree(ctx, err) != HARMONIA_OK) {
        free(data);
        return err->status;
    }
    MPI_Bcast(data, (int)size, MPI_CHAR, 0, ctx->comm); /* size <= 64 MiB */
    data[size] = '\0';
    parse_manifest(data, size, path, m, err);
    free(data);
    return dst_agree(ctx, err); /* the same verdict everywhere; named as rank 0's */
}

/* ---- save ----------------------------------------------------------------------------------- */

typedef struct shard_record {
    uint64_t keys, bytes, hash;
} shard_record;

static uint64_t fresh_generation(void)
{
    uint64_t g = 0;
    int fd = open("/dev/urandom", O_RDONLY);
    if (fd >= 0) {
        if (read(fd, &g, sizeof g) != (ssize_t)sizeof g)
            g = 0;
        close(fd);
    }
    if (g == 0) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        g = ((uint64_t)ts.tv_sec * 1000000007ull) ^ (uint64_t)ts.tv_nsec ^ ((uint64_t)getpid() << 32);
    }
    return g;
}

static void shard_name(char *out, const char *base, uint64_t generation, int rank, int ranks)
{
    snprintf(out, PATH_BYTES, "%s.%016" PRIx64 ".%d-of-%d", base, generation, rank, ranks);
}

harmonia_status harmonia_dist_save(harmonia_dist *dist, const char *manifest_path)
{
    dst_err err;
    dst_err_clear(&err);
    if (dst_check_usable(dist, &err) != HARMONIA_OK)
        return dist != NULL ? dst_finish(dist, &err) : err.status;
    const dst_ctx *ctx = &dist->ctx;
    const int P = ctx->ranks, me = ctx->rank;
    char *path = calloc(PATH_BYTES, 1), *folder = malloc(PATH_BYTES), *base = malloc(PATH_BYTES);
    char *name = malloc(PATH_BYTES), *shard_path = malloc(PATH_BYTES);
    shard_record *records = me == 0 ? calloc((size_t)P, sizeof *records) : NULL;
    text_buffer text = {NULL, 0, 0, false};
    char *old_names = NULL;
    uint64_t old_names_bytes = 0;
    bool shard_written = false;
    if (!path || !folder || !base || !name || !shard_path || (me == 0 && !records))
        dst_fail(&err, HARMONIA_ERR_NO_MEMORY, "out of memory");
    else if (me == 0 && (manifest_path == NULL || manifest_path[0] == '\0' ||
                         strlen(manifest_path) >= PATH_BYTES - 64))
        dst_fail(&err, HARMONIA_ERR_INVALID, "harmonia_dist_save: %s manifest path",
                 manifest_path == NULL ? "NULL" : "an empty or too long");
    else if (me == 0)
        snprintf(path, PATH_BYTES, "%s", manifest_path);
    /* rank 0's path and a fresh generation, for everyone */
    uint64_t generation = me == 0 ? fresh_generation() : 0;
    if (dst_agree_max(ctx, &err, &generation, 1) != HARMONIA_OK)
        goto done;
    MPI_Bcast(path, PATH_BYTES, MPI_CHAR, 0, ctx->comm);
    split_path(path, folder, base);
    if (strcmp(base, "") == 0 || strcmp(base, ".") == 0 || strcmp(base, "..") == 0 ||
        !good_name(base)) {
        dst_fail(&err, HARMONIA_ERR_INVALID,
                 "%s: the manifest's file name must be letters, digits, '.', '_' or '-' and not "
                 "start with '.'", path);
        dst_agree(ctx, &err);
        goto done;
    }

    /* every shard: harmonia_save, then its size and checksum as written */
    shard_name(name, base, generation, me, P);
    join_path(folder, name, shard_path);
    shard_record mine = {dist->shards[me].keys, 0, 0};
    harmonia_status status = harmonia_save(dist->tree, shard_path);
    if (status != HARMONIA_OK)
        dst_fail_tree(&err, status, dist->tree, "saving the shard");
    else {
        shard_written = true;
        hash_file(shard_path, &mine.bytes, &mine.hash, &err);
    }
    if (dst_agree(ctx, &err) != HARMONIA_OK)
        goto done;
    MPI_Gather(&mine, 3, MPI_UINT64_T, records, 3, MPI_UINT64_T, 0, ctx->comm);

    /* the files the manifest being replaced names (rank 0 reads it), for everyone: each removes
     * its share once the new manifest is in place */
    if (me == 0) {
        manifest old;
        dst_err ignored;
        dst_err_clear(&ignored);
        char *old_data = NULL;
        uint64_t old_size = 0;
        if (access(path, F_OK) == 0 &&
            read_small_file(path, &old_data, &old_size, &ignored) == HARMONIA_OK &&
            parse_manifest(old_data, old_size, path, &old, &ignored) == HARMONIA_OK) {
            text_buffer names = {NULL, 0, 0, false};
            for (int s = 0; s < old.ranks; s++)
                append(&names, "%s\n", old.shards[s].name);
            if (!names.failed && names.used < ((size_t)1 << 30)) {
                old_names = names.data;
                old_names_bytes = names.used;
            } else {
                free(names.data);
            }
            manifest_free(&old);
        }
        free(old_data);
    }
    MPI_Bcast(&old_names_bytes, 1, MPI_UINT64_T, 0, ctx->comm);
    if (me != 0 && old_names_bytes > 0 && (old_names = malloc(old_names_bytes + 1)) == NULL)
        dst_fail(&err, HARMONIA_ERR_NO_MEMORY, "out of memory");
    if (dst_agree(ctx, &err) != HARMONIA_OK)
        goto done;
    if (old_names_bytes > 0) {
        MPI_Bcast(old_names, (int)old_names_bytes, MPI_CHAR, 0, ctx->comm);
        old_names[old_names_bytes] = '\0';
    }

    /* rank 0: the manifest, atomically over the old one: the commit point */
    if (me == 0) {
        append(&text, "harmonia-dist-manifest %d\n", HARMONIA_DIST_MANIFEST_VERSION);
        append(&text, "library %s\n", HARMONIA_VERSION_STRING);
        append(&text, "ranks %d\n", P);
        append(&text, "key_bits %u\n", dist->key_bits);
        append(&text, "keys %" PRIu64 "\n", dist->total_keys);
        append(&text, "generation %016" PRIx64 "\n", generation);
        for (int s = 1; s < P; s++)
            append(&text, "splitter %d %" PRIu64 "\n", s, dist->lower[s]);
        for (int s = 0; s < P; s++) {
            shard_name(name, base, generation, s, P);
            append(&text, "shard %d %" PRIu64 " %" PRIu64 " %016" PRIx64 " %s\n", s, records[s].keys,
                   records[s].bytes, records[s].hash, name);
        }
        if (!text.failed)
            append(&text, "checksum %016" PRIx64 "\n", (uint64_t)XXH3_64bits(text.data, text.used));
        if (text.failed)
            dst_fail(&err, HARMONIA_ERR_NO_MEMORY, "out of memory writing the manifest");
        else if (dst_injected(DST_HOOK_MANIFEST, me))
            dst_fail(&err, HARMONIA_ERR_IO, "%s: write failed: injected", path);
        else
            write_atomically(path, folder, text.data, text.used, &err);
    }
    if (dst_agree(ctx, &err) != HARMONIA_OK)
        goto done;

    /* committed: the old shard files go (rank s % P removes old shard s, on its own host) */
    {
        bool removed = false;
        int s = 0;
        for (char *line = old_names; line != NULL && *line != '\0'; s++) {
            char *nl = strchr(line, '\n');
            if (nl == NULL)
                break;
            *nl = '\0';
            char fresh[PATH_BYTES];
            shard_name(fresh, base, generation, s % P, P);
            if (s % P == me && strcmp(line, fresh) != 0 && good_name(line)) {
                join_path(folder, line, shard_path);
                removed |= unlink(shard_path) == 0;
            }
            line = nl + 1;
        }
        if (removed)
            fsync_folder(folder);
    }
done:
    if (err.status != HARMONIA_OK && shard_written) {
        shard_name(name, base, generation, me, P);
        join_path(folder, name, shard_path);
        unlink(shard_path);
    }
    free(path);
    free(folder);
    free(base);
    free(name);
    free(shard_path);
    free(records);
    free(text.data);
    free(old_names);
    return dst_finish(dist, &err);
}

/* ---- load ----------------------------------------------------------------------------------- */

harmonia_status harmonia_dist_load(MPI_Comm comm, const char *manifest_path,
                                   const harmonia_dist_config *config_in, harmonia_dist **dist_out)
{
    harmonia_dist_config config;
    if (config_in != NULL)
        config = *config_in;
    else
        harmonia_dist_config_init(&config);
    dst_err err;
    dst_err_clear(&err);
    if (dist_out != NULL)
        *dist_out = NULL;
    harmonia_dist *dist = dst_new(comm, &config);
    dst_ctx caller = {comm, 0, 0, 0};
    MPI_Comm_rank(comm, &caller.rank);
    MPI_Comm_size(comm, &caller.ranks);
    if (dist == NULL)
        dst_fail(&err, HARMONIA_ERR_NO_MEMORY, "out of memory for the index object");
    else if (dist_out == NULL)
        dst_fail(&err, HARMONIA_ERR_INVALID, "harmonia_dist_load: NULL dist_out");
    else if (caller.rank == 0 && (manifest_path == NULL || manifest_path[0] == '\0' ||
                                  strlen(manifest_path) >= PATH_BYTES - 64))
        dst_fail(&err, HARMONIA_ERR_INVALID, "harmonia_dist_load: %s manifest path",
                 manifest_path == NULL ? "NULL" : "an empty or too long");
    if (dst_agree(&caller, &err) != HARMONIA_OK) {
        dst_delete(dist);
        return dst_finish_global(&err);
    }
    dst_attach(dist, comm);
    const dst_ctx *ctx = &dist->ctx;
    const int P = ctx->ranks, me = ctx->rank;
    char path[PATH_BYTES], folder[PATH_BYTES], base[PATH_BYTES], shard_path[PATH_BYTES];
    memset(path, 0, sizeof path);
    if (me == 0)
        snprintf(path, sizeof path, "%s", manifest_path);
    MPI_Bcast(path, PATH_BYTES, MPI_CHAR, 0, ctx->comm);
    split_path(path, folder, base);
    manifest m;
    memset(&m, 0, sizeof m);
    dst_choose_device(config.device, dist->local_rank, &dist->device, &err);
    if (dst_agree(ctx, &err) != HARMONIA_OK || load_manifest(ctx, path, &m, &err) != HARMONIA_OK)
        goto fail;
    if (m.ranks != P) {
        /* the same on every rank */
        err.status = HARMONIA_ERR_INVALID;
        snprintf(err.message, sizeof err.message,
                 "%s: the index has %d shard%s; load it on %d rank%s, not %d", path, m.ranks,
                 m.ranks == 1 ? "" : "s", m.ranks, m.ranks == 1 ? "" : "s", P);
        goto fail;
    }
    dist->key_bits = m.key_bits;
    dist->build.key_bits = m.key_bits;
    memcpy(dist->lower, m.lower, (size_t)P * sizeof *dist->lower);
    dist->lower[0] = 0;

    /* my shard: the file as the manifest knows it, then the loader's own checks */
    const manifest_shard *sh = &m.shards[me];
    join_path(folder, sh->name, shard_path);
    struct stat st;
    if (stat(shard_path, &st) != 0) {
        dst_fail(&err, HARMONIA_ERR_IO, "shard file %s: %s", shard_path, strerror(errno));
    } else if (!S_ISREG(st.st_mode)) {
        dst_fail(&err, HARMONIA_ERR_IO, "shard file %s: not a regular file", shard_path);
    } else if ((uint64_t)st.st_size != sh->bytes) {
        dst_fail(&err, HARMONIA_ERR_CORRUPT,
                 "shard file %s: %lld bytes, the manifest says %" PRIu64 " (damaged or replaced)",
                 shard_path, (long long)st.st_size, sh->bytes);
    } else if (config.verify) {
        uint64_t bytes = 0, hash = 0;
        if (hash_file(shard_path, &bytes, &hash, &err) == HARMONIA_OK &&
            (bytes != sh->bytes || hash != sh->hash))
            dst_fail(&err, HARMONIA_ERR_CORRUPT,
                     "shard file %s: checksum %016" PRIx64 " does not match the manifest's %016"
                     PRIx64 " (damaged or replaced)", shard_path, hash, sh->hash);
    }
    if (err.status == HARMONIA_OK) {
        harmonia_load_config lc;
        harmonia_load_config_init(&lc);
        lc.verify = config.verify;
        harmonia_status status = harmonia_load(shard_path, &lc, &dist->tree);
        if (status != HARMONIA_OK)
            dst_fail_tree(&err, status, NULL, "loading the shard");
    }
    if (err.status == HARMONIA_OK) {
        harmonia_tree_info info;
        harmonia_status status = harmonia_info(dist->tree, &info);
        if (status != HARMONIA_OK)
            dst_fail_tree(&err, status, dist->tree, "reading the shard's information");
        else if (info.key_bits != m.key_bits)
            dst_fail(&err, HARMONIA_ERR_CORRUPT, "shard file %s: %u-bit keys, the manifest says %u",
                     shard_path, info.key_bits, m.key_bits);
        else if (info.key_count != sh->keys)
            dst_fail(&err, HARMONIA_ERR_CORRUPT,
                     "shard file %s: %" PRIu64 " keys, the manifest says %" PRIu64, shard_path,
                     info.key_count, sh->keys);
        else if (info.key_count > 0 &&
                 (info.min_key < dist->lower[me] || (me + 1 < P && info.max_key >= dist->lower[me + 1])))
            dst_fail(&err, HARMONIA_ERR_CORRUPT,
                     "shard file %s: keys [%" PRIu64 ", %" PRIu64 "] outside the shard's splitters",
                     shard_path, info.min_key, info.max_key);
        else {
            dist->build.fanout = info.fanout;
            dist->build.leaf_size = info.leaf_size;
        }
    }
    if (dst_agree(ctx, &err) != HARMONIA_OK)
        goto fail;
    dst_refresh_table(dist, &err);
    if (dst_agree(ctx, &err) != HARMONIA_OK)
        goto fail;
    manifest_free(&m);
    *dist_out = dist;
    return HARMONIA_OK;
fail:
    manifest_free(&m);
    dst_finish_global(&err);
    dst_delete(dist);
    return err.status;
}
