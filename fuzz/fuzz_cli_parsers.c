/* fuzz_cli_parsers.c — libFuzzer harness of the tools' input parsers (harmonia/cli/cli_io.c,
 * cli_text.c, cli_common.c: the library cli_support, which harmonia-dist shares): the first byte
 * picks the parser and the key width, the rest is the file (a memfd read through /proc/self/fd):
 * text and binary records of 1 or 2 fields (keys, pairs, queries, ranges), text and binary
 * operations files; and, on the same bytes, the number parser in both syntaxes and the JSON string
 * writer; the text lines also as harmonia-dist reads them (the shared line rules of cli_text.h
 * with its wording, failures kept). A crash, a leak, a hang, a number parsed differently from
 * strtoull, a record count that disagrees with the file size, or JSON that is not valid UTF-8 is a
 * finding. */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "harmonia/cli/cli.h"
#include "harmonia/cli/cli_io.h"
#include "harmonia/cli/cli_text.h"

static int memfd = -1;
static char path[64];

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    memfd = memfd_create("harmonia-fuzz-parsers", 0);
    if (memfd < 0) {
        perror("memfd_create");
        abort();
    }
    snprintf(path, sizeof path, "/proc/self/fd/%d", memfd);
    /* the parsers' messages (one per bad input) would drown libFuzzer's; its own output and the
     * sanitizers' reports do not go through this stream */
    FILE *null = fopen("/dev/null", "w");
    if (null != NULL)
        stderr = null;
    cli_command = "fuzz";
    return 0;
}

/* Valid UTF-8 (the writer's promise for JSON strings). */
static bool valid_utf8(const unsigned char *s, size_t n)
{
    for (size_t i = 0; i < n;) {
        unsigned char c = s[i];
        size_t len = c < 0x80 ? 1 : (c & 0xE0) == 0xC0 && c >= 0xC2 ? 2 : (c & 0xF0) == 0xE0 ? 3
                               : (c & 0xF8) == 0xF0 && c <= 0xF4 ? 4 : 0;
        if (len == 0 || i + len > n)
            return false;
        for (size_t k = 1; k < len; k++)
            if ((s[i + k] & 0xC0) != 0x80)
                return false;
        i += len;
    }
    return true;
}

static void check_numbers(const uint8_t *data, size_t size)
{
    size_t n = size < 40 ? size : 40;
    char token[41];
    memcpy(token, data, n);
    token[n] = '\0';
    n = strlen(token);
    uint64_t a = 0, b = 0;
    cli_number_problem pa = cli_parse_number(token, n, false, &a);
    cli_number_problem pb = cli_parse_number(token, n, true, &b);
    if (pa == CLI_NUMBER_OK && (pb != CLI_NUMBER_OK || a != b))
        abort(); /* the option syntax is a superset of the data syntax */
    bool digits = n > 0;
    for (size_t i = 0; i < n; i++)
        digits &= token[i] >= '0' && token[i] <= '9';
    if (digits) { /* plain decimals: exactly strtoull's value, or too large exactly when it says */
        errno = 0;
        unsigned long long expected = strtoull(token, NULL, 10);
        bool too_large = errno == ERANGE;
        if (too_large != (pa == CLI_NUMBER_TOO_LARGE) || (!too_large && (pa != CLI_NUMBER_OK || a != expected)))
            abort();
    }
    if (cli_number_problem_text(pa, false) == NULL || cli_number_problem_text(pb, true) == NULL)
        abort();
}

static void check_json(const uint8_t *data, size_t size)
{
    char *s = malloc(size + 1);
    if (s == NULL)
        return;
    memcpy(s, data, size);
    s[size] = '\0';
    char *out = NULL;
    size_t out_size = 0;
    FILE *stream = open_memstream(&out, &out_size);
    if (stream != NULL) {
        cli_json_string(stream, s);
        fclose(stream);
        if (!valid_utf8((const unsigned char *)out, out_size) || out_size < 2 || out[0] != '"' ||
            out[out_size - 1] != '"')
            abort();
        for (size_t i = 0; i < out_size; i++)
            if ((unsigned char)out[i] < 0x20)
                abort(); /* control characters are escaped */
        free(out);
    }
    free(s);
}

/* harmonia-dist's reading of the same text (dist/cli/dcli_io.c): each line through the shared line
 * rules with its wording and its failures kept, not printed. A line's verdict must agree with the
 * kept failure, and what it returns must fit the rules. */
static void check_dist_lines(const uint8_t *body, size_t size, uint32_t key_bits, int fields, bool ops)
{
    char *text = malloc(size + 1);
    if (text == NULL)
        return;
    memcpy(text, body, size);
    text[size] = '\0';
    const cli_text_rules rules = {"fuzz", key_bits, 1, fields, "record", " (use --bits 64?)", true};
    uint64_t line_no = 0;
    for (size_t at = 0; at < size;) {
        const char *nl = memchr(text + at, '\n', size - at);
        size_t length = nl != NULL ? (size_t)(nl - (text + at)) : size - at;
        char *line = text + at;
        line[length] = '\0';
        cli_err err;
        cli_err_init(&err, true);
        uint64_t values[3] = {0, 0, 0};
        int kind = 0, n;
        if (ops)
            n = cli_text_op_line(&rules, line, length, ++line_no, &kind, &values[0], &values[1], &err);
        else
            n = cli_text_record_line(&rules, line, length, ++line_no, values, &err);
        if ((n < 0) != (err.failed != 0) || (n < 0 && err.message[0] == '\0') || n > (ops ? 1 : fields) ||
            kind < 0 || kind > HARMONIA_OP_DELETE)
            abort();
        for (int f = 0; f < 3; f++)
            if (values[f] > cli_max_key(key_bits))
                abort();
        at += length + 1;
    }
    free(text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    uint8_t selector = data[0];
    const uint8_t *body = data + 1;
    size_t body_size = size - 1;
    check_numbers(body, body_size);
    check_json(body, body_size);
    if (ftruncate(memfd, 0) != 0 ||
        (body_size > 0 && pwrite(memfd, body, body_size, 0) != (ssize_t)body_size))
        abort();
    uint32_t key_bits = selector & 1 ? 32 : 64;
    int fields = selector & 2 ? 2 : 1;
    switch ((selector >> 2) & 3) {
    case 0: { /* text records: keys or pairs/ranges */
        cli_records records;
        if (cli_read_records(path, CLI_FORMAT_TEXT, key_bits, 1, fields, fields, "record",
                             " (hint)", &records, NULL) == 0) {
            if (records.fields < 1 || records.fields > fields)
                abort();
            cli_records_free(&records);
        }
        check_dist_lines(body, body_size, key_bits, fields, false);
        break;
    }
    case 1: { /* binary records */
        cli_records records;
        int status = cli_read_records(path, CLI_FORMAT_BIN, key_bits, fields, fields, fields,
                                      "record", NULL, &records, NULL);
        size_t record_bytes = (size_t)fields * key_bits / 8;
        if ((status == 0) != (body_size % record_bytes == 0))
            abort();
        if (status == 0) {
            if (records.count != body_size / record_bytes)
                abort();
            cli_records_free(&records);
        }
        break;
    }
    case 2: { /* text operations */
        cli_ops ops;
        if (cli_read_ops(path, CLI_FORMAT_TEXT, key_bits, &ops, NULL) == 0) {
            for (uint64_t i = 0; i < ops.count; i++)
                if (ops.kinds[i] > HARMONIA_OP_DELETE || ops.lines[i] == 0)
                    abort();
            cli_ops_free(&ops);
        }
        check_dist_lines(body, body_size, key_bits, fields, true);
        break;
    }
    default: { /* binary operations */
        cli_ops ops;
        if (cli_read_ops(path, CLI_FORMAT_BIN, key_bits, &ops, NULL) == 0) {
            if (ops.count != body_size / (3 * key_bits / 8))
                abort();
            cli_ops_free(&ops);
        }
        break;
    }
    }
    return 0;
}
