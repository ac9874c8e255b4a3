/* cli_io.c — reading and writing the tool's data files (binary records and text lines, and the
 * operations files of `update`; see cli_io.h for the formats), whole files at a time, with messages
 * that name file and line. The rules of one line or record are cli_text.c's (harmonia-dist reads by
 * them too). Index files are not here. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "cli_io.h"
#include "cli_text.h"
#include "harmonia.h"

const char *const cli_format_names[] = {"auto", "bin", "text", NULL};

#define IO_CHUNK_BYTES ((size_t)1 << 24)
#define WRITE_BUFFER_BYTES ((size_t)1 << 20)

static bool ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcasecmp(s + n - m, suffix) == 0;
}

cli_format cli_format_for_path(cli_format requested, const char *path)
{
    if (requested != CLI_FORMAT_AUTO)
        return requested;
    if (path != NULL && (ends_with(path, ".txt") || ends_with(path, ".csv") ||
                         ends_with(path, ".tsv")))
        return CLI_FORMAT_TEXT;
    return CLI_FORMAT_BIN;
}

void cli_records_free(cli_records *records)
{
    free(records->column[0]);
    free(records->column[1]);
    memset(records, 0, sizeof *records);
}

/* ---- binary -------------------------------------------------------------------------------- */

/* Opens a binary file of fixed-size records: a regular file whose size is a multiple of
 * record_bytes. record_name describes one record for the message, e.g. "query record (1 x 64-bit)".
 * Returns 0 with the open file and the record count, else the error status (file closed). */
static int open_binary_records(const char *path, size_t record_bytes, const char *record_name, FILE **file_out,
                               uint64_t *count_out)
{
    FILE *file = fopen(path, "rb");
    if (file == NULL)
        return cli_error("%s: cannot open: %s", path, strerror(errno));
    struct stat st;
    if (fstat(fileno(file), &st) != 0) {
        int err = errno;
        fclose(file);
        return cli_error("%s: cannot stat: %s", path, strerror(err));
    }
    if (!S_ISREG(st.st_mode)) {
        fclose(file);
        return cli_error("%s: %s, not a regular file", path, hm_file_kind(st.st_mode));
    }
    uint64_t size = (uint64_t)st.st_size;
    if (size % record_bytes != 0) {
        fclose(file);
        cli_err err;
        cli_err_init(&err, false);
        return cli_binary_size_fail(path, size, record_bytes, record_name, &err);
    }
    *file_out = file;
    *count_out = size / record_bytes;
    return 0;
}

static int read_binary(const char *path, uint32_t key_bits, int fields, const char *what,
                       cli_records *out, cli_progress *progress)
{
    size_t width = key_bits / 8;
    size_t record_bytes = width * (size_t)fields;
    char record_name[96];
    cli_binary_record_name(what, fields, key_bits, record_name, sizeof record_name);
    FILE *file;
    uint64_t count;
    int opened = open_binary_records(path, record_bytes, record_name, &file, &count);
    if (opened != 0)
        return opened;
    out->key_bits = key_bits;
    out->count = count;
    out->fields = fields;
    for (int f = 0; f < fields; f++) {
        out->column[f] = malloc(count > 0 ? count * width : 1);
        if (out->column[f] == NULL) {
            fclose(file);
            cli_records_free(out);
            return cli_error("%s: out of memory for %llu records", path,
                             (unsigned long long)count);
        }
    }
    unsigned char *chunk = NULL;
    if (fields > 1 || cli_le_to_host(1, key_bits) != 1) {
        chunk = malloc(IO_CHUNK_BYTES);
        if (chunk == NULL) {
            fclose(file);
            cli_records_free(out);
            return cli_error("%s: out of memory", path);
        }
    }
    size_t records_per_chunk = IO_CHUNK_BYTES / record_bytes;
    for (uint64_t done = 0; done < count;) {
        uint64_t n = count - done < records_per_chunk ? count - done : records_per_chunk;
        unsigned char *target =
            chunk != NULL ? chunk : (unsigned char *)out->column[0] + done * width;
        size_t got = fread(target, record_bytes, (size_t)n, file);
        if (got != n) {
            int err = ferror(file) ? errno : 0;
            fclose(file);
            free(chunk);
            cli_records_free(out);
            return cli_error("%s: read failed: %s", path,
                             err != 0 ? strerror(err) : "the file shrank while reading");
        }
        if (chunk != NULL) {
            for (uint64_t r = 0; r < n; r++) {
                uint64_t words[2];
                cli_binary_words(chunk + r * record_bytes, key_bits, fields, words);
                for (int f = 0; f < fields; f++)
                    cli_set(out->column[f], key_bits, done + r, words[f]);
            }
        }
        done += n;
        cli_progress_update(progress, "reading", (double)done / (double)count);
    }
    free(chunk);
    fclose(file);
    return 0;
}

/* ---- text ---------------------------------------------------------------------------------- */

typedef struct growing_column {
    void *data;
    uint64_t capacity;
} growing_column;

static bool grow(growing_column *column, uint64_t needed, size_t width)
{
    if (needed <= column->capacity)
        return true;
    uint64_t capacity = column->capacity < 1024 ? 1024 : column->capacity * 2;
    while (capacity < needed)
        capacity *= 2;
    void *data = realloc(column->data, capacity * width);
    if (data == NULL)
        return false;
    column->data = data;
    column->capacity = capacity;
    return true;
}

/* Opens a text file; *size_out is its size in bytes for the progress bar (1 when unknown).
 * Returns 0, or CLI_EXIT_FAIL after a message. */
static int open_text(const char *path, FILE **file_out, double *size_out)
{
    FILE *file = fopen(path, "r");
    if (file == NULL)
        return cli_error("%s: cannot open: %s", path, strerror(errno));
    struct stat st;
    *size_out = fstat(fileno(file), &st) == 0 && st.st_size > 0 ? (double)st.st_size : 1.0;
    *file_out = file;
    return 0;
}

static int read_text(const char *path, uint32_t key_bits, int min_fields, int max_fields,
                     const char *what, const char *width_hint, cli_records *out,
                     cli_progress *progress)
{
    FILE *file = NULL;
    double size = 1.0;
    if (open_text(path, &file, &size) != 0)
        return CLI_EXIT_FAIL;
    size_t width = key_bits / 8;
    growing_column columns[2] = {{NULL, 0}, {NULL, 0}};
    char *line = NULL;
    size_t line_capacity = 0;
    uint64_t line_no = 0, count = 0, first_data_line = 0;
    int fields = 0;
    int status = 0;
    ssize_t length;
    const cli_text_rules rules = {path, key_bits, min_fields, max_fields, what, width_hint, false};
    cli_err err;
    cli_err_init(&err, false);
    errno = 0;
    while ((length = getline(&line, &line_capacity, file)) >= 0) {
        line_no++;
        uint64_t values[3];
        int n = cli_text_record_line(&rules, line, (size_t)length, line_no, values, &err);
        if (n < 0) {
            status = CLI_EXIT_FAIL;
            break;
        }
        if (n == 0)
            continue;
        if (fields == 0) {
            fields = n;
            first_data_line = line_no;
        } else if (n != fields) {
            status = cli_text_mixed_fields(&rules, line_no, n, first_data_line, fields, &err);
            break;
        }
        for (int f = 0; f < n; f++) {
            if (!grow(&columns[f], count + 1, width)) {
                status = cli_error("%s:%llu: out of memory", path, (unsigned long long)line_no);
                break;
            }
            cli_set(columns[f].data, key_bits, count, values[f]);
        }
        if (status != 0)
            break;
        count++;
        if ((count & 0xffff) == 0 && progress != NULL)
            cli_progress_update(progress, "reading", (double)ftello(file) / size);
    }
    if (status == 0 && ferror(file))
        status = cli_error("%s: read failed: %s", path, strerror(errno));
    free(line);
    fclose(file);
    if (status != 0) {
        free(columns[0].data);
        free(columns[1].data);
        return status;
    }
    out->key_bits = key_bits;
    out->count = count;
    out->fields = fields == 0 ? min_fields : fields;
    for (int f = 0; f < out->fields; f++) {
        out->column[f] = columns[f].data != NULL ? columns[f].data : malloc(width);
        columns[f].data = NULL;
        if (out->column[f] == NULL) {
            cli_records_free(out);
            return cli_error("%s: out of memory", path);
        }
    }
    free(columns[0].data);
    free(columns[1].data);
    cli_progress_update(progress, "reading", 1.0);
    return 0;
}

int cli_read_records(const char *path, cli_format format, uint32_t key_bits, int min_fields,
                     int max_fields, int binary_fields, const char *what, const char *width_hint,
                     cli_records *out, cli_progress *progress)
{
    memset(out, 0, sizeof *out);
    if (cli_format_for_path(format, path) == CLI_FORMAT_TEXT)
        return read_text(path, key_bits, min_fields, max_fields, what,
                         width_hint != NULL ? width_hint : "", out, progress);
    return read_binary(path, key_bits, binary_fields, what, out, progress);
}

const char *cli_record_location(const char *path, cli_format format, uint32_t key_bits,
                                int fields, uint64_t record, char *buf, size_t buf_size)
{
    if (cli_format_for_path(format, path) != CLI_FORMAT_TEXT) {
        snprintf(buf, buf_size, "%s: record %llu (byte offset %llu)", path,
                 (unsigned long long)record,
                 (unsigned long long)(record * (uint64_t)fields * (key_bits / 8)));
        return buf;
    }
    /* Count data lines again; the same rules as read_text, without storing. */
    snprintf(buf, buf_size, "%s: record %llu", path, (unsigned long long)record);
    FILE *file = fopen(path, "r");
    if (file == NULL)
        return buf;
    char *line = NULL;
    size_t capacity = 0;
    uint64_t line_no = 0, data_lines = 0;
    while (getline(&line, &capacity, file) >= 0) {
        line_no++;
        char *hash = strchr(line, '#');
        if (hash != NULL)
            *hash = '\0';
        char *p = line;
        while (cli_is_blank(*p))
            p++;
        if (*p == '\0')
            continue;
        if (data_lines == record) {
            snprintf(buf, buf_size, "%s:%llu", path, (unsigned long long)line_no);
            break;
        }
        data_lines++;
    }
    free(line);
    fclose(file);
    return buf;
}

/* ---- update operations --------------------------------------------------------------------- */

const char cli_op_symbols[4] = {'+', '=', '*', '-'};
const char *const cli_op_names[] = {"insert", "update", "upsert", "delete", NULL};

_Static_assert(HARMONIA_OP_INSERT == 0 && HARMONIA_OP_UPDATE == 1 && HARMONIA_OP_UPSERT == 2 &&
                   HARMONIA_OP_DELETE == 3,
               "cli_op_symbols and the binary ops format are indexed by harmonia_op_kind");

void cli_ops_free(cli_ops *ops)
{
    free(ops->kinds);
    free(ops->keys);
    free(ops->values);
    free(ops->lines);
    memset(ops, 0, sizeof *ops);
}

static int read_ops_text(const char *path, uint32_t key_bits, cli_ops *out,
                         cli_progress *progress)
{
    FILE *file = NULL;
    double size = 1.0;
    if (open_text(path, &file, &size) != 0)
        return CLI_EXIT_FAIL;
    size_t width = key_bits / 8;
    growing_column kinds = {NULL, 0}, keys = {NULL, 0}, values = {NULL, 0}, lines = {NULL, 0};
    char *line = NULL;
    size_t line_capacity = 0;
    uint64_t line_no = 0, count = 0;
    int status = 0;
    ssize_t length;
    const cli_text_rules rules = {path, key_bits, 0, 0, NULL, NULL, false};
    cli_err err;
    cli_err_init(&err, false);
    errno = 0;
    while ((length = getline(&line, &line_capacity, file)) >= 0) {
        line_no++;
        int kind;
        uint64_t key, value;
        int n = cli_text_op_line(&rules, line, (size_t)length, line_no, &kind, &key, &value, &err);
        if (n < 0) {
            status = CLI_EXIT_FAIL;
            break;
        }
        if (n == 0)
            continue;
        if (!grow(&kinds, count + 1, 1) || !grow(&keys, count + 1, width) ||
            !grow(&values, count + 1, width) || !grow(&lines, count + 1, sizeof(uint64_t))) {
            status = cli_error("%s:%llu: out of memory", path, (unsigned long long)line_no);
            break;
        }
        ((uint8_t *)kinds.data)[count] = (uint8_t)kind;
        cli_set(keys.data, key_bits, count, key);
        cli_set(values.data, key_bits, count, value);
        ((uint64_t *)lines.data)[count] = line_no;
        count++;
        if ((count & 0xffff) == 0 && progress != NULL)
            cli_progress_update(progress, "reading", (double)ftello(file) / size);
    }
    if (status == 0 && ferror(file))
        status = cli_error("%s: read failed: %s", path, strerror(errno));
    free(line);
    fclose(file);
    if (status == 0 && count == 0) { /* an empty batch still gets arrays to point at */
        if (!grow(&kinds, 1, 1) || !grow(&keys, 1, width) || !grow(&values, 1, width) ||
            !grow(&lines, 1, sizeof(uint64_t)))
            status = cli_error("%s: out of memory", path);
    }
    out->key_bits = key_bits;
    out->count = count;
    out->kinds = kinds.data;
    out->keys = keys.data;
    out->values = values.data;
    out->lines = lines.data;
    if (status != 0) {
        cli_ops_free(out);
        return status;
    }
    cli_progress_update(progress, "reading", 1.0);
    return 0;
}

static int read_ops_binary(const char *path, uint32_t key_bits, cli_ops *out,
                           cli_progress *progress)
{
    size_t width = key_bits / 8;
    size_t record_bytes = 3 * width;
    char record_name[96];
    snprintf(record_name, sizeof record_name, "operation record (kind,key,value x %u-bit", key_bits);
    FILE *file;
    uint64_t count;
    int opened = open_binary_records(path, record_bytes, record_name, &file, &count);
    if (opened != 0)
        return opened;
    out->key_bits = key_bits;
    out->count = count;
    out->kinds = malloc(count > 0 ? count : 1);
    out->keys = malloc(count > 0 ? count * width : width);
    out->values = malloc(count > 0 ? count * width : width);
    unsigned char *chunk = malloc(IO_CHUNK_BYTES);
    if (out->kinds == NULL || out->keys == NULL || out->values == NULL || chunk == NULL) {
        fclose(file);
        free(chunk);
        cli_ops_free(out);
        return cli_error("%s: out of memory for %llu operations", path,
                         (unsigned long long)count);
    }
    size_t records_per_chunk = IO_CHUNK_BYTES / record_bytes;
    int status = 0;
    cli_err err;
    cli_err_init(&err, false);
    for (uint64_t done = 0; done < count && status == 0;) {
        uint64_t n = count - done < records_per_chunk ? count - done : records_per_chunk;
        if (fread(chunk, record_bytes, (size_t)n, file) != n) {
            int err = ferror(file) ? errno : 0;
            status = cli_error("%s: read failed: %s", path,
                               err != 0 ? strerror(err) : "the file shrank while reading");
            break;
        }
        for (uint64_t r = 0; r < n; r++) {
            uint64_t i = done + r, key, value;
            int kind;
            if (cli_binary_op_record(chunk + r * record_bytes, key_bits, path, i, &kind, &key, &value,
                                     &err) != 0) {
                status = CLI_EXIT_FAIL;
                break;
            }
            out->kinds[i] = (uint8_t)kind;
            cli_set(out->keys, key_bits, i, key);
            cli_set(out->values, key_bits, i, value);
        }
        done += n;
        cli_progress_update(progress, "reading", (double)done / (double)count);
    }
    free(chunk);
    fclose(file);
    if (status != 0)
        cli_ops_free(out);
    return status;
}

int cli_read_ops(const char *path, cli_format format, uint32_t key_bits, cli_ops *out,
                 cli_progress *progress)
{
    memset(out, 0, sizeof *out);
    if (cli_format_for_path(format, path) == CLI_FORMAT_TEXT)
        return read_ops_text(path, key_bits, out, progress);
    return read_ops_binary(path, key_bits, out, progress);
}

const char *cli_op_location(const char *path, const cli_ops *ops, uint64_t index, char *buf,
                            size_t buf_size)
{
    if (ops->lines != NULL && index < ops->count)
        snprintf(buf, buf_size, "%s:%llu", path, (unsigned long long)ops->lines[index]);
    else
        snprintf(buf, buf_size, "%s: record %llu (byte offset %llu)", path,
                 (unsigned long long)index,
                 (unsigned long long)(index * 3 * (uint64_t)(ops->key_bits / 8)));
    return buf;
}

/* ---- output -------------------------------------------------------------------------------- */

bool cli_is_stdout(const char *path)
{
    return path == NULL || strcmp(path, "-") == 0;
}

int cli_writer_open(cli_writer *writer, const char *path)
{
    memset(writer, 0, sizeof *writer);
    writer->output.fd = -1;
    if (cli_is_stdout(path)) {
        writer->file = stdout;
        writer->path = "standard output";
        writer->is_stdout = true;
        return 0;
    }
    writer->path = path;
    char why[1024];
    if (hm_output_open(&writer->output, path, why, sizeof why) != HARMONIA_OK)
        return cli_error("%s", why);
    /* stdio writes through a second descriptor of the temporary file, closed by fclose; the
     * first one stays with the output for the fsync and the rename */
    int fd = dup(writer->output.fd);
    writer->file = fd >= 0 ? fdopen(fd, "wb") : NULL;
    if (writer->file == NULL) {
        int err = errno;
        if (fd >= 0)
            close(fd);
        hm_output_abort(&writer->output);
        return cli_error("%s: cannot write: %s", path, strerror(err));
    }
    writer->buffer = malloc(WRITE_BUFFER_BYTES);
    if (writer->buffer != NULL)
        setvbuf(writer->file, writer->buffer, _IOFBF, WRITE_BUFFER_BYTES);
    return 0;
}

int cli_writer_close(cli_writer *writer)
{
    int status = 0;
    if (writer->file == NULL)
        return 0;
    bool failed = ferror(writer->file) != 0;
    int err = errno;
    if (fflush(writer->file) != 0) {
        failed = true;
        err = errno;
    }
    if (writer->is_stdout) {
        if (failed)
            status = cli_error("%s: write failed: %s", writer->path, strerror(err));
    } else {
        if (fclose(writer->file) != 0 && !failed) {
            failed = true;
            err = errno;
        }
        if (failed) {
            bool replaces = writer->output.replaces;
            hm_output_abort(&writer->output);
            status = cli_error("%s: write failed: %s; %s", writer->path, strerror(err),
                               replaces ? "the old file is unchanged" : "nothing was written");
        } else {
            char why[1024];
            if (hm_output_commit(&writer->output, false, why, sizeof why) != HARMONIA_OK)
                status = cli_error("%s", why);
        }
    }
    free(writer->buffer);
    writer->file = NULL;
    writer->buffer = NULL;
    return status;
}

void cli_writer_abandon(cli_writer *writer)
{
    if (writer->file == NULL)
        return;
    if (writer->is_stdout) {
        fflush(stdout);
    } else {
        fclose(writer->file);
        hm_output_abort(&writer->output); /* the old file, if any, stays as it was */
    }
    free(writer->buffer);
    writer->file = NULL;
    writer->buffer = NULL;
}

/* The writers are used from one thread: the _unlocked stdio calls skip a lock per call. */
void cli_write_str(cli_writer *writer, const char *s)
{
    fputs_unlocked(s, writer->file);
}

void cli_write_char(cli_writer *writer, char c)
{
    putc_unlocked(c, writer->file);
}

void cli_write_u64(cli_writer *writer, uint64_t value)
{
    char text[24];
    fwrite_unlocked(text, 1, cli_u64_digits(value, text), writer->file);
}

void cli_write_bin(cli_writer *writer, uint32_t key_bits, uint64_t value)
{
    value = cli_le_to_host(value, key_bits);
    if (key_bits == 32) {
        uint32_t v32 = (uint32_t)value;
        fwrite_unlocked(&v32, 4, 1, writer->file);
    } else {
        fwrite_unlocked(&value, 8, 1, writer->file);
    }
}

/* Opens a record file for writing (text or binary by format and path; binary never to a
 * terminal) and writes the text header where the format is text. */
static int open_record_writer(cli_writer *writer, const char *path, cli_format format, const char *text_header,
                              bool *text_out)
{
    int status = cli_writer_open(writer, path);
    if (status != 0)
        return status;
    const bool text = cli_format_for_path(format, path) == CLI_FORMAT_TEXT;
    if (!text && writer->is_stdout && isatty(STDOUT_FILENO)) {
        cli_writer_abandon(writer);
        return cli_error("binary data to a terminal: give --out FILE or --format text");
    }
    if (text && text_header != NULL)
        cli_write_str(writer, text_header);
    *text_out = text;
    return 0;
}

int cli_write_records(const char *path, cli_format format, uint32_t key_bits, uint64_t count,
                      int fields, void *const *columns, const char *text_header,
                      cli_progress *progress)
{
    cli_writer writer;
    bool text;
    int status = open_record_writer(&writer, path, format, text_header, &text);
    if (status != 0)
        return status;
    for (uint64_t i = 0; i < count; i++) {
        for (int f = 0; f < fields; f++) {
            uint64_t v = cli_get(columns[f], key_bits, i);
            if (text) {
                if (f > 0)
                    cli_write_char(&writer, ',');
                cli_write_u64(&writer, v);
            } else {
                cli_write_bin(&writer, key_bits, v);
            }
        }
        if (text)
            cli_write_char(&writer, '\n');
        if ((i & 0xfffff) == 0xfffff)
            cli_progress_update(progress, "writing", (double)(i + 1) / (double)count);
    }
    cli_progress_update(progress, "writing", 1.0);
    return cli_writer_close(&writer);
}

int cli_write_ops(const char *path, cli_format format, const cli_ops *ops,
                  const char *text_header, cli_progress *progress)
{
    cli_writer writer;
    bool text;
    int status = open_record_writer(&writer, path, format, text_header, &text);
    if (status != 0)
        return status;
    uint32_t key_bits = ops->key_bits;
    for (uint64_t i = 0; i < ops->count; i++) {
        int kind = ops->kinds[i];
        uint64_t key = cli_get(ops->keys, key_bits, i);
        uint64_t value = kind == HARMONIA_OP_DELETE ? 0 : cli_get(ops->values, key_bits, i);
        if (text) {
            cli_write_char(&writer, cli_op_symbols[kind]);
            cli_write_char(&writer, ' ');
            cli_write_u64(&writer, key);
            if (kind != HARMONIA_OP_DELETE) {
                cli_write_char(&writer, ' ');
                cli_write_u64(&writer, value);
            }
            cli_write_char(&writer, '\n');
        } else {
            cli_write_bin(&writer, key_bits, (uint64_t)kind);
            cli_write_bin(&writer, key_bits, key);
            cli_write_bin(&writer, key_bits, value);
        }
        if ((i & 0xfffff) == 0xfffff)
            cli_progress_update(progress, "writing", (double)(i + 1) / (double)ops->count);
    }
    cli_progress_update(progress, "writing", 1.0);
    return cli_writer_close(&writer);
}
