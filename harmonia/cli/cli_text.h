/* cli_text.h — one line of a text data file and one record of a binary one, as both tools read
 * them: the harmonia tool whole files (cli_io.c), harmonia-dist each rank's part of a file
 * (dist/cli/dcli_io.c). The formats are in cli_io.h. Nothing here opens or reads a file: the
 * callers hand over the bytes. A failure goes to a cli_err (cli.h: printed at once by the harmonia
 * tool, kept until the ranks agree by harmonia-dist) and names file:line, or the record. */
#ifndef HARMONIA_CLI_TEXT_H
#define HARMONIA_CLI_TEXT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cli.h"

/* What a line of a text file must be, and how its failures are worded. */
typedef struct cli_text_rules {
    const char *path;       /* the file, named in every message */
    uint32_t key_bits;      /* 32 or 64: a wider number is refused */
    int min_fields;         /* records: the fields a line may hold, 1 .. 3 */
    int max_fields;
    const char *what;       /* records: one record in messages ("key", "range", "key,value pair") */
    const char *width_hint; /* records: after "N does not fit in B bits" (" (use --bits 64?)"), or "" */
    /* How a field that is no number is worded: false, the harmonia tool's "'1.5' is not a whole
     * number" (the problem named, a cut token followed by "..."); true, harmonia-dist's "'1.5' is
     * not an unsigned number that fits in 64 bits" ("is not an unsigned number" for a token
     * starting with '-'). */
    bool dist_number_words;
} cli_text_rules;

/* A little-endian number of key_bits width as the host holds it, and back (the same swap). */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
static inline uint64_t cli_le_to_host(uint64_t v, uint32_t key_bits)
{
    return key_bits == 32 ? __builtin_bswap32((uint32_t)v) : __builtin_bswap64(v);
}
#else
static inline uint64_t cli_le_to_host(uint64_t v, uint32_t key_bits)
{
    (void)key_bits;
    return v;
}
#endif

/* The blanks between fields: space, tab, CR, LF, VT, FF. */
bool cli_is_blank(char c);

/* One line of a records file: the length bytes at line (its '\n' may be among them), changed in
 * place (a '#' comment is cut off). Returns the number of fields stored in values, 0 for a blank
 * or comment line, or -1 after cli_fail naming path:line_no: a NUL byte, an empty field, more
 * than 3 fields, a field that is no number, a number wider than key_bits, or a count of fields
 * outside min_fields .. max_fields. line[length] must be '\0'. */
int cli_text_record_line(const cli_text_rules *rules, char *line, size_t length, uint64_t line_no,
                         uint64_t values[3], cli_err *err);

/* The failure of a data line whose field count differs from the file's first data line's (every
 * line of a file has the same number). Returns CLI_EXIT_FAIL. */
int cli_text_mixed_fields(const cli_text_rules *rules, uint64_t line_no, int fields,
                          uint64_t first_line, int first_fields, cli_err *err);

/* One line of an operations file ('+ key value', '= key value', '* key value', '- key'), as
 * cli_text_record_line (min_fields, max_fields, what and width_hint are not used: a number wider
 * than the keys is "... (the key width of the index)"). Returns 1 with *kind (a harmonia_op_kind),
 * *key and *value (0 for a delete), 0 for a blank or comment line, -1 after cli_fail. */
int cli_text_op_line(const cli_text_rules *rules, char *line, size_t length, uint64_t line_no,
                     int *kind, uint64_t *key, uint64_t *value, cli_err *err);

/* ---- binary records ------------------------------------------------------------------------- */

/* The fields numbers of the little-endian binary record at record, key_bits wide each. */
void cli_binary_words(const unsigned char *record, uint32_t key_bits, int fields, uint64_t *words);

/* "RECORD record (F x B-bit": the record's name in cli_binary_size_fail's message. */
const char *cli_binary_record_name(const char *what, int fields, uint32_t key_bits, char *buf,
                                   size_t buf_size);

/* The failure of a binary file whose size is no multiple of its record: "PATH: size S bytes is
 * not a multiple of the R-byte NAME, binary): a wrong key width or format?". */
int cli_binary_size_fail(const char *path, uint64_t size, size_t record_bytes,
                         const char *record_name, cli_err *err);

/* One kind,key,value record of a binary operations file, record number index of path (for the
 * message). Returns 0 with *kind, *key and *value (0 for a delete), or -1 after cli_fail when the
 * kind is no harmonia_op_kind. */
int cli_binary_op_record(const unsigned char *record, uint32_t key_bits, const char *path,
                         uint64_t index, int *kind, uint64_t *key, uint64_t *value, cli_err *err);

#endif /* HARMONIA_CLI_TEXT_H */
