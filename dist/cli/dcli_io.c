/* dcli_io.c — the data files of harmonia-dist, in the harmonia tool's formats (harmonia/cli/cli_io.h),
 * read in parts: binary files split by record, text files at line boundaries, each rank parsing
 * its own lines with the line numbers of the whole file; and results written in query order, each
 * rank's bytes at their offset of one file (or gathered to standard output by rank 0).
 * The rules of one text line or binary record, and their messages, are the harmonia tool's
 * (harmonia/cli/cli_text.h); what is here is the splitting, the reading and the agreement. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dcli.h"
#include "harmonia/cli/cli_text.h"
#include "harmonia/safe_file.h"

#define READ_CHUNK ((size_t)1 << 24)
#define SEND_CHUNK ((uint64_t)1 << 30)

void dcli_part_free(dcli_part *part)
{
    for (int f = 0; f < 3; f++)
        free(part->column[f]);
    free(part->kinds);
    free(part->lines);
    memset(part, 0, sizeof *part);
}

/* ---- files ------------------------------------------------------------------------------------ */

static int open_regular(const char *path, int *fd_out, uint64_t *size_out, cli_err *err)
{
    int fd = open(path, O_RDONLY);
    if (fd < 0)
        return cli_fail(err, "%s: cannot open: %s", path, strerror(errno));
    struct stat st;
    if (fstat(fd, &st) != 0) {
        int e = errno;
        close(fd);
        return cli_fail(err, "%s: cannot stat: %s", path, strerror(e));
    }
    if (!S_ISREG(st.st_mode)) {
        close(fd);
        return cli_fail(err, "%s: not a regular file", path);
    }
    *fd_out = fd;
    *size_out = (uint64_t)st.st_size;
    return 0;
}

static int read_at(int fd, void *buffer, uint64_t bytes, uint64_t offset, const char *path,
                   cli_err *err)
{
    char *at = buffer;
    while (bytes > 0) {
        size_t want = bytes < READ_CHUNK ? (size_t)bytes : READ_CHUNK;
        ssize_t got = pread(fd, at, want, (off_t)offset);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0)
            return cli_fail(err, "%s: read failed: %s", path,
                            got < 0 ? strerror(errno) : "the file shrank while reading");
        at += got;
        offset += (uint64_t)got;
        bytes -= (uint64_t)got;
    }
    return 0;
}

static uint64_t exscan_u64(uint64_t x)
{
    uint64_t before = 0;
    MPI_Exscan(&x, &before, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
    return dcli_rank == 0 ? 0 : before;
}

static bool alloc_columns(dcli_part *out, int fields, uint64_t capacity, bool ops)
{
    size_t width = out->key_bits / 8;
    for (int f = 0; f < fields; f++)
        if ((out->column[f] = malloc(capacity > 0 ? capacity * width : width)) == NULL)
            return false;
    if (ops && (out->kinds = malloc(capacity > 0 ? capacity : 1)) == NULL)
        return false;
    return true;
}

/* ---- binary parts ----------------------------------------------------------------------------- */

static int read_binary_part(const char *path, uint32_t key_bits, int fields, const char *what,
                            bool ops, dcli_part *out, cli_err *err)
{
    const size_t width = key_bits / 8, record = width * (size_t)fields;
    int fd;
    uint64_t size;
    if (open_regular(path, &fd, &size, err) != 0)
        return err->failed;
    if (size % record != 0) {
        close(fd);
        char record_name[96];
        return cli_binary_size_fail(path, size, record,
                                    cli_binary_record_name(what, fields, key_bits, record_name,
                                                           sizeof record_name), err);
    }
    const uint64_t records = size / record;
    const uint64_t first = (uint64_t)(((unsigned __int128)records * (unsigned)dcli_rank) / (unsigned)dcli_ranks);
    const uint64_t last = (uint64_t)(((unsigned __int128)records * (unsigned)(dcli_rank + 1)) / (unsigned)dcli_ranks);
    out->count = last - first;
    out->base = first;
    out->total = records;
    out->fields = ops ? 2 : fields;
    unsigned char *chunk = malloc(READ_CHUNK);
    if (chunk == NULL || !alloc_columns(out, ops ? 2 : fields, out->count, ops)) {
        free(chunk);
        close(fd);
        return cli_fail(err, "%s: out of memory for %" PRIu64 " records", path, out->count);
    }
    const uint64_t per_chunk = READ_CHUNK / record;
    for (uint64_t done = 0; done < out->count && !err->failed;) {
        uint64_t n = out->count - done < per_chunk ? out->count - done : per_chunk;
        if (read_at(fd, chunk, n * record, (first + done) * record, path, err) != 0)
            break;
        for (uint64_t r = 0; r < n; r++) {
            const unsigned char *at = chunk + r * record;
            const uint64_t i = done + r;
            if (ops) {
                int kind;
                uint64_t key, value;
                if (cli_binary_op_record(at, key_bits, path, first + i, &kind, &key, &value, err) != 0)
                    break;
                out->kinds[i] = (uint8_t)kind;
                cli_set(out->column[0], key_bits, i, key);
                cli_set(out->column[1], key_bits, i, value);
            } else {
                uint64_t word[3];
                cli_binary_words(at, key_bits, fields, word);
                for (int f = 0; f < fields; f++)
                    cli_set(out->column[f], key_bits, i, word[f]);
            }
        }
        done += n;
    }
    free(chunk);
    close(fd);
    return err->failed;
}

/* ---- text parts ------------------------------------------------------------------------------- */

/* The first line start at or after byte b: 0 for b == 0, else the byte after the first '\n' at or
 * after b - 1 (the file's size when none). */
static int line_start(int fd, uint64_t size, uint64_t b, const char *path, uint64_t *out, cli_err *err)
{
    if (b == 0) {
        *out = 0;
        return 0;
    }
    char buffer[65536];
    for (uint64_t at = b - 1; at < size; at += sizeof buffer) {
        uint64_t n = size - at < sizeof buffer ? size - at : sizeof buffer;
        if (read_at(fd, buffer, n, at, path, err) != 0)
            return err->failed;
        char *nl = memchr(buffer, '\n', (size_t)n);
        if (nl != NULL) {
            *out = at + (uint64_t)(nl - buffer) + 1;
            return 0;
        }
    }
    *out = size;
    return 0;
}

/* This rank's lines [start, end) of a text file, parsed. Collective (line numbers, field counts). */
static int read_text_part(const char *path, uint32_t key_bits, int min_fields, int max_fields,
                          const char *what, bool ops, dcli_part *out, cli_err *err)
{
    int fd = -1;
    uint64_t size = 0, start = 0, end = 0;
    char *text = NULL, *line = NULL;
    uint8_t *field_counts = NULL;
    const cli_text_rules rules = {path, key_bits, min_fields, max_fields, what, " (use --bits 64?)", true};
    if (open_regular(path, &fd, &size, err) == 0) {
        uint64_t b0 = (uint64_t)(((unsigned __int128)size * (unsigned)dcli_rank) / (unsigned)dcli_ranks);
        uint64_t b1 = (uint64_t)(((unsigned __int128)size * (unsigned)(dcli_rank + 1)) / (unsigned)dcli_ranks);
        if (line_start(fd, size, b0, path, &start, err) == 0 &&
            (dcli_rank + 1 == dcli_ranks ? (end = size, 0) : line_start(fd, size, b1, path, &end, err)) == 0) {
            if (end < start)
                end = start;
            text = malloc(end - start + 1);
            if (text == NULL)
                cli_fail(err, "%s: out of memory for %" PRIu64 " bytes", path, end - start);
            else if (read_at(fd, text, end - start, start, path, err) == 0)
                text[end - start] = '\0';
        }
        close(fd);
    }
    /* line numbers of the whole file: the newlines before this rank's part */
    uint64_t newlines = 0;
    if (!err->failed)
        for (uint64_t i = 0; i < end - start; i++)
            newlines += text[i] == '\n';
    uint64_t first_line = 1 + exscan_u64(err->failed ? 0 : newlines);
    uint64_t capacity = newlines + 1;
    out->fields = ops ? 2 : max_fields;
    if (!err->failed && (!alloc_columns(out, ops ? 2 : max_fields, capacity, ops) ||
                         (out->lines = malloc(capacity * sizeof(uint64_t))) == NULL ||
                         (field_counts = malloc(capacity)) == NULL))
        cli_fail(err, "%s: out of memory", path);
    uint64_t count = 0, line_no = first_line - 1;
    size_t line_capacity = 0;
    for (uint64_t at = 0; !err->failed && at < end - start;) {
        const char *p = text + at;
        const char *nl = memchr(p, '\n', (size_t)(end - start - at));
        size_t length = nl != NULL ? (size_t)(nl - p) : (size_t)(end - start - at);
        at += length + (nl != NULL);
        line_no++;
        if (length + 1 > line_capacity) {
            char *grown = realloc(line, length + 1);
            if (grown == NULL) {
                cli_fail(err, "%s:%" PRIu64 ": out of memory", path, line_no);
                break;
            }
            line = grown;
            line_capacity = length + 1;
        }
        memcpy(line, p, length);
        line[length] = '\0';
        if (ops) {
            int kind;
            uint64_t key, value;
            int n = cli_text_op_line(&rules, line, length, line_no, &kind, &key, &value, err);
            if (n < 0)
                break;
            if (n == 0)
                continue;
            out->kinds[count] = (uint8_t)kind;
            cli_set(out->column[0], key_bits, count, key);
            cli_set(out->column[1], key_bits, count, value);
            out->lines[count++] = line_no;
            continue;
        }
        uint64_t values[3];
        int n = cli_text_record_line(&rules, line, length, line_no, values, err);
        if (n < 0)
            break;
        if (n == 0)
            continue;
        for (int f = 0; f < n; f++)
            cli_set(out->column[f], key_bits, count, values[f]);
        field_counts[count] = (uint8_t)n;
        out->lines[count++] = line_no;
    }
    free(text);
    free(line);
    out->count = count;
    /* the same number of fields on every line of the file: the first data line's decides */
    if (!ops) {
        uint64_t mine_line = count > 0 && !err->failed ? out->lines[0] : UINT64_MAX;
        uint64_t first = mine_line;
        MPI_Allreduce(MPI_IN_PLACE, &first, 1, MPI_UINT64_T, MPI_MIN, MPI_COMM_WORLD);
        uint64_t fields = mine_line == first && first != UINT64_MAX ? field_counts[0] : 0;
        MPI_Allreduce(MPI_IN_PLACE, &fields, 1, MPI_UINT64_T, MPI_MAX, MPI_COMM_WORLD);
        for (uint64_t i = 0; i < count && !err->failed; i++)
            if (field_counts[i] != fields)
                cli_text_mixed_fields(&rules, out->lines[i], field_counts[i], first, (int)fields, err);
        out->fields = fields != 0 ? (int)fields : min_fields;
    }
    free(field_counts);
    out->base = exscan_u64(count);
    return err->failed;
}

/* ---- reading parts ---------------------------------------------------------------------------- */

static int read_part(const char *path, cli_format format, uint32_t key_bits, int min_fields,
                     int max_fields, int binary_fields, const char *what, bool ops, dcli_part *out)
{
    memset(out, 0, sizeof *out);
    out->key_bits = key_bits;
    cli_err err;
    cli_err_init(&err, true);
    if (cli_format_for_path(format, path) == CLI_FORMAT_TEXT) {
        read_text_part(path, key_bits, min_fields, max_fields, what, ops, out, &err);
        out->total = dcli_sum_u64(out->count);
    } else {
        read_binary_part(path, key_bits, ops ? 3 : binary_fields, what, ops, out, &err);
    }
    int status = dcli_agree(&err);
    if (status != 0)
        dcli_part_free(out);
    return status;
}

int dcli_read_records(const char *path, cli_format format, uint32_t key_bits, int min_fields,
                      int max_fields, int binary_fields, const char *what, dcli_part *out)
{
    return read_part(path, format, key_bits, min_fields, max_fields, binary_fields, what, false, out);
}

int dcli_read_ops(const char *path, cli_format format, uint32_t key_bits, dcli_part *out)
{
    return read_part(path, format, key_bits, 1, 2, 3, "operation", true, out);
}

const char *dcli_part_location(const char *path, const dcli_part *part, uint64_t i, int record_words,
                               char *buf, size_t size)
{
    if (part->lines != NULL && i < part->count)
        snprintf(buf, size, "%s:%" PRIu64, path, part->lines[i]);
    else
        snprintf(buf, size, "%s: record %" PRIu64 " (byte offset %" PRIu64 ")", path, part->base + i,
                 (part->base + i) * (uint64_t)record_words * (part->key_bits / 8));
    return buf;
}

/* ---- buffers ---------------------------------------------------------------------------------- */

void dcli_buf_free(dcli_buf *b)
{
    free(b->data);
    memset(b, 0, sizeof *b);
}

static bool reserve(dcli_buf *b, size_t more)
{
    if (b->failed)
        return false;
    if (b->used + more <= b->capacity)
        return true;
    size_t capacity = b->capacity < 4096 ? 4096 : b->capacity;
    while (capacity < b->used + more)
        capacity *= 2;
    char *data = realloc(b->data, capacity);
    if (data == NULL) {
        b->failed = true;
        return false;
    }
    b->data = data;
    b->capacity = capacity;
    return true;
}

void dcli_put(dcli_buf *b, const void *bytes, size_t n)
{
    if (reserve(b, n)) {
        memcpy(b->data + b->used, bytes, n);
        b->used += n;
    }
}

void dcli_put_str(dcli_buf *b, const char *s)
{
    dcli_put(b, s, strlen(s));
}

void dcli_put_char(dcli_buf *b, char c)
{
    if (reserve(b, 1))
        b->data[b->used++] = c;
}

void dcli_put_u64(dcli_buf *b, uint64_t v)
{
    char text[24];
    dcli_put(b, text, cli_u64_digits(v, text));
}

void dcli_put_bin(dcli_buf *b, uint32_t key_bits, uint64_t v)
{
    if (key_bits == 32) {
        uint32_t v32 = (uint32_t)v;
        dcli_put(b, &v32, 4);
    } else {
        dcli_put(b, &v, 8);
    }
}

void dcli_printf(dcli_buf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0 || !reserve(b, (size_t)n + 1))
        return;
    va_start(ap, fmt);
    vsnprintf(b->data + b->used, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->used += (size_t)n;
}

/* ---- ordered output --------------------------------------------------------------------------- */

static int write_all(int fd, const char *data, uint64_t bytes, uint64_t offset, bool positioned)
{
    while (bytes > 0) {
        size_t want = bytes < READ_CHUNK ? (size_t)bytes : READ_CHUNK;
        ssize_t n = positioned ? pwrite(fd, data, want, (off_t)offset) : write(fd, data, want);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return errno != 0 ? errno : EIO;
        data += n;
        offset += (uint64_t)n;
        bytes -= (uint64_t)n;
    }
    return 0;
}

int dcli_write_ordered(const char *path, dcli_buf *segments, int n_segments)
{
    const int P = dcli_ranks, me = dcli_rank;
    cli_err err;
    cli_err_init(&err, true);
    uint64_t mine[4] = {0, 0, 0, 0};
    bool failed = false;
    for (int k = 0; k < n_segments; k++) {
        mine[k] = segments[k].used;
        failed |= segments[k].failed;
    }
    uint64_t *sizes = malloc((size_t)P * 4 * sizeof(uint64_t));
    if (failed || sizes == NULL)
        cli_fail(&err, "out of memory formatting the results");
    if (dcli_agree(&err) != 0) {
        free(sizes);
        return CLI_EXIT_FAIL;
    }
    MPI_Allgather(mine, 4, MPI_UINT64_T, sizes, 4, MPI_UINT64_T, MPI_COMM_WORLD);

    if (cli_is_stdout(path)) {
        /* rank 0 writes, segment by segment, its bytes and each rank's in turn */
        int write_error = 0;
        for (int k = 0; k < n_segments; k++) {
            for (int r = 0; r < P; r++) {
                uint64_t bytes = sizes[(size_t)r * 4 + (size_t)k];
                if (me == 0 && r == 0) {
                    if (!write_error && bytes > 0 && fwrite(segments[k].data, 1, bytes, stdout) != bytes)
                        write_error = errno != 0 ? errno : EIO;
                } else if (me == 0) {
                    char *incoming = malloc(bytes < SEND_CHUNK ? (size_t)bytes + 1 : SEND_CHUNK);
                    for (uint64_t done = 0; done < bytes;) {
                        uint64_t n = bytes - done < SEND_CHUNK ? bytes - done : SEND_CHUNK;
                        /* without a buffer, receive into nowhere: a count of 0 is not allowed
                         * to mismatch, so abort the job (rank 0 out of memory here is fatal) */
                        if (incoming == NULL)
                            MPI_Abort(MPI_COMM_WORLD, CLI_EXIT_FAIL);
                        MPI_Recv(incoming, (int)n, MPI_CHAR, r, k, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                        if (!write_error && fwrite(incoming, 1, n, stdout) != n)
                            write_error = errno != 0 ? errno : EIO;
                        done += n;
                    }
                    free(incoming);
                } else if (me == r) {
                    for (uint64_t done = 0; done < bytes;) {
                        uint64_t n = bytes - done < SEND_CHUNK ? bytes - done : SEND_CHUNK;
                        MPI_Send(segments[k].data + done, (int)n, MPI_CHAR, 0, k, MPI_COMM_WORLD);
                        done += n;
                    }
                }
            }
        }
        if (me == 0 && (fflush(stdout) != 0 || ferror(stdout)) && !write_error)
            write_error = errno != 0 ? errno : EIO;
        if (write_error)
            cli_fail(&err, "standard output: write failed: %s", strerror(write_error));
        free(sizes);
        return dcli_agree(&err);
    }

    /* to a file: rank 0 resolves where it lands as the harmonia tool's outputs do (links followed
     * to the real file, anything but a regular file refused: harmonia/safe_file.h) and makes a
     * temporary file beside it, named like the library's ("<real>.tmp.XXXXXX", so a killed run's
     * leftover is found as stale), with the old file's mode (or 0666 & ~umask); every rank writes
     * its bytes at their offsets; rank 0 renames it over the real file. Several processes write,
     * so the temporary file has a name from the start and no flock is held. */
    char temp[4096 + 16], real[4096];
    memset(temp, 0, sizeof temp);
    memset(real, 0, sizeof real);
    if (me == 0) {
        char why[1024], *resolved = NULL;
        bool exists = false;
        struct stat st;
        if (hm_resolve_output(path, &resolved, &exists, &st, why, sizeof why) != HARMONIA_OK) {
            cli_fail(&err, "%s", why);
        } else if (strlen(resolved) >= sizeof real) {
            cli_fail(&err, "%s: path too long", path);
        } else {
            snprintf(real, sizeof real, "%s", resolved);
            snprintf(temp, sizeof temp, "%s" HM_TEMP_INFIX "XXXXXX", real);
            int fd = mkstemp(temp);
            if (fd < 0) {
                cli_fail(&err, "%s: cannot create: %s", path, strerror(errno));
            } else {
                mode_t mask = umask(0);
                umask(mask);
                if (fchmod(fd, exists ? (st.st_mode & 07777) : (0666 & ~mask)) != 0)
                    cli_fail(&err, "%s: chmod failed: %s", temp, strerror(errno));
                close(fd);
                if (err.failed)
                    unlink(temp);
            }
        }
        free(resolved);
    }
    if (dcli_agree(&err) != 0) {
        free(sizes);
        return CLI_EXIT_FAIL;
    }
    MPI_Bcast(temp, (int)sizeof temp, MPI_CHAR, 0, MPI_COMM_WORLD);
    int fd = open(temp, O_WRONLY);
    if (fd < 0) {
        cli_fail(&err, "%s: cannot open for writing: %s", temp, strerror(errno));
    } else {
        uint64_t offset = 0;
        for (int k = 0; k < n_segments && !err.failed; k++) {
            uint64_t at = offset;
            for (int r = 0; r < P; r++) {
                uint64_t bytes = sizes[(size_t)r * 4 + (size_t)k];
                if (r == me) {
                    int e = write_all(fd, segments[k].data, bytes, at, true);
                    if (e != 0) {
                        cli_fail(&err, "%s: write failed: %s", path, strerror(e));
                        break;
                    }
                }
                at += bytes;
            }
            offset = at;
        }
        if (!err.failed && fsync(fd) != 0)
            cli_fail(&err, "%s: fsync failed: %s", path, strerror(errno));
        if (close(fd) != 0 && !err.failed)
            cli_fail(&err, "%s: close failed: %s", path, strerror(errno));
    }
    free(sizes);
    if (dcli_agree(&err) != 0) {
        if (me == 0)
            unlink(temp);
        return CLI_EXIT_FAIL;
    }
    if (me == 0) {
        if (rename(temp, real) != 0) {
            cli_fail(&err, "%s: cannot rename the written file over it: %s", path, strerror(errno));
            unlink(temp);
        } else {
            char folder[4096];
            const char *slash = strrchr(real, '/');
            snprintf(folder, sizeof folder, "%.*s", slash == NULL ? 1 : (int)(slash - real + (slash == real)),
                     slash == NULL ? "." : real);
            int dfd = open(folder, O_RDONLY | O_DIRECTORY);
            if (dfd >= 0) {
                fsync(dfd);
                close(dfd);
            }
        }
    }
    return dcli_agree(&err);
}
