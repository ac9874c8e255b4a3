/* cli_text.c — the rules of one text line and one binary record of the tools' data files (see
 * cli_text.h), with their messages: the one copy that the harmonia tool's readers (cli_io.c) and
 * harmonia-dist's (dist/cli/dcli_io.c) share. Files, buffers and progress are the callers'. */
#include <inttypes.h>
#include <string.h>

#include "cli.h"
#include "cli_io.h"
#include "cli_text.h"

bool cli_is_blank(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\v' || c == '\f';
}

/* The failure of the token [start, end) that is no number (problem says why). */
static int number_fail(const cli_text_rules *rules, uint64_t line_no, const char *start,
                       const char *end, cli_number_problem problem, cli_err *err)
{
    const int length = (int)(end - start > 40 ? 40 : end - start);
    if (rules->dist_number_words)
        return cli_fail(err, "%s:%" PRIu64 ": '%.*s' is not %s", rules->path, line_no, length, start,
                        start[0] == '-' ? "an unsigned number" : "an unsigned number that fits in 64 bits");
    return cli_fail(err, "%s:%" PRIu64 ": '%.*s%s' %s", rules->path, line_no, length, start,
                    end - start > 40 ? "..." : "", cli_number_problem_text(problem, false));
}

/* Splits the text at p (a comment already cut off) into at most 3 numbers: decimal or 0x hex
 * (cli_parse_number, data syntax) of key_bits width. Returns the number of fields (0 = nothing
 * but blanks), or -1 after a failure; width_hint follows the message of a number too wide. */
static int parse_fields(const cli_text_rules *rules, char *p, uint64_t line_no, const char *width_hint,
                        uint64_t values[3], cli_err *err)
{
    const char *path = rules->path;
    int n = 0;
    while (cli_is_blank(*p))
        p++;
    if (*p == '\0')
        return 0;
    for (;;) {
        char *start = p;
        while (*p != '\0' && *p != ',' && !cli_is_blank(*p))
            p++;
        if (p == start) {
            cli_fail(err, "%s:%" PRIu64 ": empty field", path, line_no);
            return -1;
        }
        if (n == 3) {
            cli_fail(err, "%s:%" PRIu64 ": too many fields", path, line_no);
            return -1;
        }
        uint64_t v;
        cli_number_problem problem = cli_parse_number(start, (size_t)(p - start), false, &v);
        if (problem != CLI_NUMBER_OK) {
            number_fail(rules, line_no, start, p, problem, err);
            return -1;
        }
        if (v > cli_max_key(rules->key_bits)) {
            cli_fail(err, "%s:%" PRIu64 ": %" PRIu64 " does not fit in %u bits%s", path, line_no, v,
                     rules->key_bits, width_hint);
            return -1;
        }
        values[n++] = v;
        while (cli_is_blank(*p))
            p++;
        if (*p == ',') {
            p++;
            while (cli_is_blank(*p))
                p++;
            if (*p == '\0') {
                cli_fail(err, "%s:%" PRIu64 ": empty field after ','", path, line_no);
                return -1;
            }
        }
        if (*p == '\0')
            return n;
    }
}

/* A NUL byte refused, a '#' comment cut off: 0, or -1 after a failure. */
static int prepare_line(const cli_text_rules *rules, char *line, size_t length, uint64_t line_no,
                        cli_err *err)
{
    if (memchr(line, '\0', length) != NULL) {
        cli_fail(err, "%s:%" PRIu64 ": a NUL byte in a text file (is it binary? try --format bin)",
                 rules->path, line_no);
        return -1;
    }
    char *hash = strchr(line, '#');
    if (hash != NULL)
        *hash = '\0';
    return 0;
}

int cli_text_record_line(const cli_text_rules *rules, char *line, size_t length, uint64_t line_no,
                         uint64_t values[3], cli_err *err)
{
    if (prepare_line(rules, line, length, line_no, err) != 0)
        return -1;
    int n = parse_fields(rules, line, line_no, rules->width_hint != NULL ? rules->width_hint : "",
                         values, err);
    if (n <= 0)
        return n;
    const int min = rules->min_fields, max = rules->max_fields;
    if (n < min || n > max) {
        if (min == max)
            cli_fail(err, "%s:%" PRIu64 ": expected %d field%s (%s), found %d", rules->path, line_no,
                     min, min == 1 ? "" : "s", rules->what, n);
        else
            cli_fail(err, "%s:%" PRIu64 ": expected %d to %d fields (%s), found %d", rules->path,
                     line_no, min, max, rules->what, n);
        return -1;
    }
    return n;
}

int cli_text_mixed_fields(const cli_text_rules *rules, uint64_t line_no, int fields,
                          uint64_t first_line, int first_fields, cli_err *err)
{
    return cli_fail(err, "%s:%" PRIu64 ": %d field%s, but line %" PRIu64 " has %d; every line must "
                    "have the same number", rules->path, line_no, fields, fields == 1 ? "" : "s",
                    first_line, first_fields);
}

int cli_text_op_line(const cli_text_rules *rules, char *line, size_t length, uint64_t line_no,
                     int *kind_out, uint64_t *key_out, uint64_t *value_out, cli_err *err)
{
    if (prepare_line(rules, line, length, line_no, err) != 0)
        return -1;
    const char *path = rules->path;
    char *p = line;
    while (cli_is_blank(*p))
        p++;
    if (*p == '\0')
        return 0;
    int kind = -1;
    for (int k = 0; k < 4 && kind < 0; k++)
        if (cli_op_symbols[k] == *p)
            kind = k;
    if (kind < 0) {
        const char *end = p;
        while (*end != '\0' && *end != ',' && !cli_is_blank(*end))
            end++;
        cli_fail(err, "%s:%" PRIu64 ": unknown operation '%.*s' (lines are '+ key value' insert, "
                 "'= key value' update, '* key value' upsert or '- key' delete)",
                 path, line_no, (int)(end - p > 40 ? 40 : end - p), p);
        return -1;
    }
    char symbol = *p++;
    uint64_t fields[3];
    int n = parse_fields(rules, p, line_no, " (the key width of the index)", fields, err);
    if (n < 0)
        return -1;
    int wanted = kind == HARMONIA_OP_DELETE ? 1 : 2;
    if (n != wanted) {
        const char *what = n == 0                                 ? "no key"
                           : n < wanted                             ? "a key but no value"
                           : kind == HARMONIA_OP_DELETE && n == 2 ? "a value too"
                                                                    : "an extra field";
        if (kind == HARMONIA_OP_DELETE)
            cli_fail(err, "%s:%" PRIu64 ": '%c' (delete) takes a key only, found %s", path, line_no,
                     symbol, what);
        else
            cli_fail(err, "%s:%" PRIu64 ": '%c' (%s) takes a key and a value, found %s", path,
                     line_no, symbol, cli_op_names[kind], what);
        return -1;
    }
    *kind_out = kind;
    *key_out = fields[0];
    *value_out = n == 2 ? fields[1] : 0;
    return 1;
}

/* ---- binary records ------------------------------------------------------------------------- */

void cli_binary_words(const unsigned char *record, uint32_t key_bits, int fields, uint64_t *words)
{
    const size_t width = key_bits / 8;
    for (int f = 0; f < fields; f++) {
        const unsigned char *at = record + (size_t)f * width;
        if (key_bits == 32) {
            uint32_t v32;
            memcpy(&v32, at, 4);
            words[f] = cli_le_to_host(v32, 32);
        } else {
            memcpy(&words[f], at, 8);
            words[f] = cli_le_to_host(words[f], 64);
        }
    }
}

const char *cli_binary_record_name(const char *what, int fields, uint32_t key_bits, char *buf,
                                   size_t buf_size)
{
    snprintf(buf, buf_size, "%s record (%d x %u-bit", what, fields, key_bits);
    return buf;
}

int cli_binary_size_fail(const char *path, uint64_t size, size_t record_bytes,
                         const char *record_name, cli_err *err)
{
    return cli_fail(err, "%s: size %" PRIu64 " bytes is not a multiple of the %zu-byte %s, binary): a "
                    "wrong key width or format?", path, size, record_bytes, record_name);
}

int cli_binary_op_record(const unsigned char *record, uint32_t key_bits, const char *path,
                         uint64_t index, int *kind, uint64_t *key, uint64_t *value, cli_err *err)
{
    uint64_t word[3];
    cli_binary_words(record, key_bits, 3, word);
    if (word[0] > HARMONIA_OP_DELETE) {
        cli_fail(err, "%s: record %" PRIu64 " (byte offset %" PRIu64 "): kind %" PRIu64
                 " is not an operation (0 insert, 1 update, 2 upsert, 3 delete)",
                 path, index, index * 3 * (uint64_t)(key_bits / 8), word[0]);
        return -1;
    }
    *kind = (int)word[0];
    *key = word[1];
    *value = word[0] == HARMONIA_OP_DELETE ? 0 : word[2];
    return 0;
}
