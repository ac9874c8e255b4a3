/* cli_io.h — the data files of the harmonia tool: reading and writing keys, key-value pairs,
 * ranges and update operations as raw little-endian binary records or as text lines, with errors
 * that name the file and line. It knows nothing of trees; the index files are the library's
 * (harmonia_save/load).
 *
 * FORMATS
 *   binary: a record is 1 or 2 unsigned integers of the key width (32 or 64 bits), little-endian,
 *     no header: keys / queries = one key per record; pairs = key,value; ranges = lo,hi.
 *     The file size must be a multiple of the record size.
 *   text: one record per line, its fields separated by a comma and/or blanks (spaces, tabs):
 *     "key", "key,value", "lo,hi". Numbers are decimal or 0x hexadecimal. Blank lines and '#'
 *     comments (to the end of the line) are allowed. Every line of a file has the same number of
 *     fields. A malformed line is an error naming file:line.
 *   auto: text when the file name ends in .txt, .csv or .tsv, else binary.
 *
 * OPERATIONS FILES (the update batches of `harmonia update`)
 *   text: one operation per line: "+ key value" insert, "= key value" update, "* key value"
 *     upsert, "- key" delete. Key and value are separated by blanks and/or a comma; numbers,
 *     blank lines and '#' comments as above. A line that is not one of these (an unknown symbol,
 *     a missing value, an extra field, a value on a delete, a number wider than the keys) is an
 *     error naming file:line.
 *   binary: records of three unsigned integers of the key width, little-endian, no header:
 *     kind,key,value with kind a harmonia_op_kind (0 insert, 1 update, 2 upsert, 3 delete); the
 *     value of a delete is ignored (written as 0). Another kind is an error naming the record. */
#ifndef HARMONIA_CLI_IO_H
#define HARMONIA_CLI_IO_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "cli_progress.h"
#include "harmonia/safe_file.h"
#include "util/width.h"

typedef enum cli_format { CLI_FORMAT_AUTO = 0, CLI_FORMAT_BIN, CLI_FORMAT_TEXT } cli_format;

/* "auto", "bin", "text", NULL — for cli_opt_choice (index = cli_format). */
extern const char *const cli_format_names[];

/* Resolves CLI_FORMAT_AUTO by the extension of path; other values are returned as they are. */
cli_format cli_format_for_path(cli_format requested, const char *path);

/* Records of up to two fields, kept as columns of key_bits-wide unsigned integers. */
typedef struct cli_records {
    uint32_t key_bits;
    uint64_t count;
    int fields;       /* fields per record: 1 or 2 */
    void *column[2];  /* column[f] holds field f of every record; column[1] is NULL if fields == 1 */
} cli_records;

void cli_records_free(cli_records *records);

/* Reads path. Text: every line holds min_fields .. max_fields fields (the same number on every
 * line). Binary: every record holds binary_fields fields. what names one record in messages
 * ("key", "key,value pair", "range"); width_hint follows the message of a number wider than
 * key_bits (" (use --bits 64?)" where the command has --bits; NULL for none). On failure prints
 * the error (file:line: what) and returns CLI_EXIT_FAIL with *out empty; returns 0 on success.
 * progress may be NULL. */
int cli_read_records(const char *path, cli_format format, uint32_t key_bits, int min_fields,
                     int max_fields, int binary_fields, const char *what, const char *width_hint,
                     cli_records *out, cli_progress *progress);

/* The width hint of files read against an index of key_bits-wide keys. */
#define CLI_INDEX_WIDTH_HINT(key_bits) ((key_bits) == 32 ? " (the index holds 32-bit keys)" : "")

/* Where record index record of a file read by cli_read_records is: "FILE:LINE" for text (the file
 * is read again to count), "FILE: record R (byte offset B)" for binary. Writes into buf. */
const char *cli_record_location(const char *path, cli_format format, uint32_t key_bits,
                                int fields, uint64_t record, char *buf, size_t buf_size);

/* ---- operations files ---------------------------------------------------------------------
 * An update batch as the arrays harmonia_update takes, plus where each operation came from. */
typedef struct cli_ops {
    uint32_t key_bits;
    uint64_t count;
    uint8_t *kinds;  /* harmonia_op_kind values */
    void *keys;      /* key_bits wide */
    void *values;    /* key_bits wide; 0 for deletes */
    uint64_t *lines; /* text files: the line of each operation; NULL for binary files */
} cli_ops;

/* '+', '=', '*', '-' and "insert", "update", "upsert", "delete" (NULL-terminated), indexed by
 * harmonia_op_kind. */
extern const char cli_op_symbols[4];
extern const char *const cli_op_names[];

void cli_ops_free(cli_ops *ops);

/* Reads an operations file of key_bits-wide numbers (format as cli_read_records). Every
 * operation is checked before any is returned: on failure prints the error (file:line: what, or
 * file: record R for binary) and returns CLI_EXIT_FAIL with *out empty; 0 on success (the
 * arrays are allocated even for an empty batch). progress may be NULL. */
int cli_read_ops(const char *path, cli_format format, uint32_t key_bits, cli_ops *out,
                 cli_progress *progress);

/* Where operation index of ops (read from path by cli_read_ops) is: "FILE:LINE" for text,
 * "FILE: record R (byte offset B)" for binary. Writes into buf. */
const char *cli_op_location(const char *path, const cli_ops *ops, uint64_t index, char *buf,
                            size_t buf_size);

/* Writes ops to path in format (text: "+ key value" / "- key" lines, with an optional header
 * comment; binary: kind,key,value records). Returns 0 or CLI_EXIT_FAIL after a message. */
int cli_write_ops(const char *path, cli_format format, const cli_ops *ops,
                  const char *text_header, cli_progress *progress);

/* ---- output ------------------------------------------------------------------------------ */
/* Every file the tool writes goes through a writer, and so through hm_output
 * (harmonia/safe_file.h): a temporary file beside the real target (links followed, regular files
 * only, mode and owner kept), renamed over it only when everything was written and synced. A
 * failed or abandoned write leaves the old file as it was and no temporary file behind. */
typedef struct cli_writer {
    FILE *file;
    const char *path; /* for messages; "standard output" for stdout */
    bool is_stdout;
    char *buffer;
    hm_output output; /* the temporary file (not for standard output) */
} cli_writer;

/* Whether path names standard output (NULL or "-"). */
bool cli_is_stdout(const char *path);

/* Opens path for writing (NULL or "-" = standard output). Returns 0 or CLI_EXIT_FAIL after a
 * message (a target that is not a regular file, a folder that cannot take the temporary file). */
int cli_writer_open(cli_writer *writer, const char *path);

/* Flushes, syncs and renames into place; returns 0 or CLI_EXIT_FAIL after a message naming the
 * file when any write failed (then the old file is unchanged and the temporary file removed). */
int cli_writer_close(cli_writer *writer);

/* Closes after a failure elsewhere and removes the temporary file (not standard output); the old
 * file, if any, is unchanged. */
void cli_writer_abandon(cli_writer *writer);

void cli_write_str(cli_writer *writer, const char *s);
void cli_write_char(cli_writer *writer, char c);
void cli_write_u64(cli_writer *writer, uint64_t value); /* decimal text */
/* A little-endian binary integer of key_bits width. */
void cli_write_bin(cli_writer *writer, uint32_t key_bits, uint64_t value);

/* Writes count records of fields columns to path in format (text: "a,b" lines; binary: interleaved
 * records) with an optional header comment for text (NULL for none). Returns 0 or CLI_EXIT_FAIL. */
int cli_write_records(const char *path, cli_format format, uint32_t key_bits, uint64_t count,
                      int fields, void *const *columns, const char *text_header,
                      cli_progress *progress);

/* Key-width-generic access to columns: util/width.h's, under the tool's names. */
#define cli_get util_load_width
#define cli_set util_store_width
#define cli_max_key util_max_of_width

#endif /* HARMONIA_CLI_IO_H */
