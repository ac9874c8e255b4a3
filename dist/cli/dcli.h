/* dcli.h — what the commands of the harmonia-dist tool share: the run (MPI ranks, messages printed
 * once by rank 0 with the failing rank named, agreement on failures), reading each rank's part of
 * a data file (binary records split by record, text split at line boundaries, line numbers of the
 * whole file), and writing results in query order (each rank's bytes at their offset in one file,
 * or gathered by rank 0 to standard output). Internal prefix dcli_. The option parser, number
 * parsing, file formats, the rules of a text line or binary record, the kept failures (cli_err) and
 * the command table are the harmonia tool's (harmonia/cli/cli.h, cli_io.h, cli_text.h: the library
 * cli_support, which both tools link). */
#ifndef HARMONIA_DCLI_H
#define HARMONIA_DCLI_H

#include <mpi.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "harmonia/cli/cli.h"
#include "harmonia/cli/cli_io.h"
#include "harmonia_dist.h"

/* ---- the run -------------------------------------------------------------------------------- */
extern int dcli_rank, dcli_ranks;
extern const char *dcli_command; /* "build", "lookup", ... */

/* A step's outcome on this rank is a cli_err that keeps its first failure (harmonia/cli/cli.h:
 * cli_err_init(&err, true), cli_fail), agreed by dcli_agree. */

/* Collective: when any rank failed, rank 0 prints "harmonia-dist <command>: <message>" of the
 * lowest failing rank (with "rank R: " when the message does not name a rank already and there is
 * more than one rank) and every rank gets that rank's exit code; else 0. */
int dcli_agree(cli_err *err);

/* Prints "harmonia-dist <command>: <message>" on rank 0 (for what every rank knows alike). */
int dcli_error0(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* A library failure known alike on every rank: "<context>: <message> (<strerror>)" on rank 0. */
int dcli_library_error0(harmonia_status status, const char *message, const char *context);

/* Option parsing with the harmonia tool's parser: its output (help, usage errors) is captured and
 * printed by rank 0 with "harmonia <command>" written "harmonia-dist <command>". Every rank parses
 * the same words and reaches the same verdict. */
void dcli_capture_begin(void);
void dcli_capture_end(void);

/* Collective: rank 0 checks an output before any work (cli_check_output: a target that is not a
 * regular file, or that is the same file as one of the inputs, is refused with its message);
 * returns 0, CLI_EXIT_FAIL or CLI_EXIT_USAGE on every rank. */
int dcli_check_output(const char *option, const char *path, const cli_named_path *inputs, size_t n);

/* The largest value of x over the ranks; the sum. */
double dcli_max_double(double x);
uint64_t dcli_sum_u64(uint64_t x);

/* ---- reading this rank's part of a data file ------------------------------------------------- */

/* Records of up to 3 fields of key_bits width: rank r holds records base .. base + count - 1 of the
 * whole file. lines (text only, may be NULL otherwise) holds each record's line in the file. */
typedef struct dcli_part {
    uint32_t key_bits;
    uint64_t count, base, total;
    int fields;
    void *column[3];
    uint8_t *kinds;  /* operations files: the kind of each operation (column[0] = keys, [1] = values) */
    uint64_t *lines; /* text: 1-based line numbers in the whole file */
} dcli_part;

void dcli_part_free(dcli_part *part);

/* Collective. Reads this rank's part of a records file (formats as the harmonia tool's: binary
 * records of binary_fields numbers; text lines of min_fields .. max_fields, the same number on
 * every line of the file). Binary files are split by record, text files at line boundaries (a
 * line belongs to the rank whose byte range holds its first byte). Returns 0 or CLI_EXIT_FAIL,
 * agreed, after rank 0 printed the first error (file:line: what, with the rank). */
int dcli_read_records(const char *path, cli_format format, uint32_t key_bits, int min_fields,
                      int max_fields, int binary_fields, const char *what, dcli_part *out);

/* Collective. This rank's part of an operations file (text '+ k v', '= k v', '* k v', '- k'
 * lines or binary kind,key,value records): kinds, column[0] keys, column[1] values. */
int dcli_read_ops(const char *path, cli_format format, uint32_t key_bits, dcli_part *out);

/* Where record i of this rank's part is: "FILE:LINE" (text) or "FILE: record R (byte offset B)". */
const char *dcli_part_location(const char *path, const dcli_part *part, uint64_t i, int record_words,
                               char *buf, size_t size);

/* ---- writing results in query order --------------------------------------------------------- */

/* A growing byte buffer (results formatted in memory by each rank). */
typedef struct dcli_buf {
    char *data;
    size_t used, capacity;
    bool failed; /* out of memory: everything after is dropped */
} dcli_buf;

void dcli_buf_free(dcli_buf *b);
void dcli_put(dcli_buf *b, const void *bytes, size_t n);
void dcli_put_str(dcli_buf *b, const char *s);
void dcli_put_char(dcli_buf *b, char c);
void dcli_put_u64(dcli_buf *b, uint64_t v);               /* decimal */
void dcli_put_bin(dcli_buf *b, uint32_t key_bits, uint64_t v); /* little-endian, key width */
void dcli_printf(dcli_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Collective. The output is segment 0 of rank 0, of rank 1, ..., then segment 1 of every rank in
 * rank order, and so on (n_segments <= 4). To a file (path not NULL or "-"): every rank writes its
 * bytes at their offset into a temporary file beside path, which rank 0 renames over path once
 * every rank has written (removed on failure). To standard output: rank 0 writes its bytes and
 * those it receives from each rank in turn. Returns 0 or CLI_EXIT_FAIL, agreed. */
int dcli_write_ordered(const char *path, dcli_buf *segments, int n_segments);

/* ---- the commands --------------------------------------------------------------------------- */
int dcli_cmd_build(int argc, char **argv);
int dcli_cmd_lookup(int argc, char **argv);
int dcli_cmd_lower_bound(int argc, char **argv);
int dcli_cmd_range(int argc, char **argv);
int dcli_cmd_update(int argc, char **argv);
int dcli_cmd_info(int argc, char **argv);
int dcli_cmd_check(int argc, char **argv);

/* Shared by the commands: loads the index (collective), with the GPU by local rank; prints the
 * failure on rank 0. */
int dcli_load(const char *manifest, bool verify, harmonia_dist **dist_out);

/* OpenMP threads per rank when the user gave none: the cores of the node shared by its ranks. */
int dcli_default_threads(const harmonia_dist *dist);

#endif /* HARMONIA_DCLI_H */
