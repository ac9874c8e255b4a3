/* cli.h — what the commands of the harmonia tool share: exit codes, messages in the
 * "harmonia <command>: <where>: <what>" form, the table-driven option parser, number parsing,
 * clocks and JSON string output. File formats live in cli_io.h, the progress bar in cli_progress.h. */
#ifndef HARMONIA_CLI_H
#define HARMONIA_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "harmonia.h"

/* Exit codes of every command. */
#define CLI_EXIT_OK 0
#define CLI_EXIT_FAIL 1  /* bad input, a failing library call, a failed check */
#define CLI_EXIT_USAGE 2 /* an unknown command or option, a missing or malformed argument */

/* cli_parse's answer when --help was asked for and printed: the command returns CLI_EXIT_OK. */
#define CLI_HELP_SHOWN (-1)

#if defined(__GNUC__)
#define CLI_PRINTF(fmt_index, first_arg) __attribute__((format(printf, fmt_index, first_arg)))
#else
#define CLI_PRINTF(fmt_index, first_arg)
#endif

/* The command being run ("build", ...), named in every message. Set by main. */
extern const char *cli_command;

/* Prints "harmonia <command>: <message>" to stderr and returns CLI_EXIT_FAIL. */
int cli_error(const char *fmt, ...) CLI_PRINTF(1, 2);

/* Prints "harmonia <command>: <message>" and a pointer to --help, returns CLI_EXIT_USAGE. */
int cli_usage_error(const char *fmt, ...) CLI_PRINTF(1, 2);

/* Reports a failed library call: "harmonia <command>: <context>: <last error> (<strerror>)", the
 * last error of tree, or of the thread when tree is NULL. The context is left out when it is NULL
 * or the message starts with it already (the loader names the file itself). Returns
 * CLI_EXIT_FAIL. */
int cli_library_error(const harmonia_tree *tree, harmonia_status status, const char *context);

/* ---- options --------------------------------------------------------------------------------
 * Each command describes its options in a table; cli_parse fills in what the command line gave.
 * Options are "--name value", "--name=value" or, for flags (arg == NULL), "--name". */
typedef struct cli_opt {
    const char *name;  /* without the leading "--" */
    const char *arg;   /* placeholder of the value in --help ("N", "FILE"); NULL for a flag */
    const char *help;  /* one line */
    const char *value; /* set by cli_parse: the value given, or "" for a flag that was given */
} cli_opt;

typedef struct cli_spec {
    const char *command;     /* "lookup", "generate keys" ... */
    const char *usage;       /* the synopsis after "harmonia " */
    const char *description; /* what the command does, a few lines */
    cli_opt *opts;
    size_t n_opts;
    const char *notes;       /* printed after the options (formats, examples); may be NULL */
} cli_spec;

#define CLI_COUNT_OF(array) (sizeof(array) / sizeof((array)[0]))

/* Parses argv[0 .. argc-1] (the words after the command) against spec->opts. Words that are not
 * options go to positional[0 .. max_positional-1] (their number in *n_positional). Returns 0, or
 * CLI_HELP_SHOWN after printing help for --help / -h, or CLI_EXIT_USAGE after printing what was
 * wrong (unknown option, missing value, repeated option, too many positional words). */
int cli_parse(const cli_spec *spec, int argc, char **argv, const char **positional,
              int max_positional, int *n_positional);

void cli_print_help(const cli_spec *spec, FILE *out);

/* Typed access to parsed options. The getters that validate return 0 or CLI_EXIT_USAGE (after a
 * message naming the option); when the option was not given they store the default. */
bool cli_opt_given(const cli_spec *spec, const char *name);
const char *cli_opt_str(const cli_spec *spec, const char *name, const char *default_value);
int cli_opt_u64(const cli_spec *spec, const char *name, uint64_t default_value, uint64_t min,
                uint64_t max, uint64_t *out);
int cli_opt_double(const cli_spec *spec, const char *name, double default_value, double min,
                   double max, double *out);
/* choices is a NULL-terminated list; *out is the index of the value given. */
int cli_opt_choice(const cli_spec *spec, const char *name, const char *const *choices,
                   int default_index, int *out);
/* A required option: CLI_EXIT_USAGE with "missing --name" when absent. */
int cli_opt_required(const cli_spec *spec, const char *name, const char **out);

/* Parses an unsigned number: decimal, 0x hexadecimal, 2^N, or an exact MeE such as 1e6.
 * Returns false when text is not one of those or exceeds max. */
bool cli_parse_u64(const char *text, uint64_t max, uint64_t *out);

/* ---- small things ------------------------------------------------------------------------- */
double cli_now(void); /* seconds of a monotonic clock */

/* Writes s as a JSON string, quotes and escapes included. */
void cli_json_string(FILE *out, const char *s);

/* Formats a byte count as "12.3 MiB". buf needs 32 bytes. */
const char *cli_format_bytes(uint64_t bytes, char *buf);

/* The number of OpenMP threads a parallel region started now would get with threads (0 = the
 * default). */
int cli_thread_count(int threads);

/* ---- shared steps of several commands ------------------------------------------------------ */

/* Loads an index file (with a progress bar unless quiet), verified unless verify is false.
 * Returns 0, or CLI_EXIT_FAIL after "harmonia <command>: <path>: <reason>". */
int cli_load_index(const char *path, bool verify, bool quiet, harmonia_tree **tree_out);

/* Reads --NAME as a node size: 0 when not given, else a power of two in [8, 128]
 * (CLI_EXIT_USAGE otherwise). */
int cli_opt_node_size(const cli_spec *spec, const char *name, uint64_t *out);

/* Reads --constant-levels: a count of levels (0..64) or "all"; HARMONIA_CONSTANT_LEVELS_DEFAULT
 * when not given (CLI_EXIT_USAGE otherwise). */
int cli_opt_constant_levels(const cli_spec *spec, int32_t *out);

/* "auto", "cpu", "gpu", NULL — indexes are NOT harmonia_backend values; see cli_backend_of. */
extern const char *const cli_backend_names[];
harmonia_backend cli_backend_of(int choice_index);

/* ---- the commands ------------------------------------------------------------------------- */
int cli_cmd_generate(int argc, char **argv);
int cli_cmd_build(int argc, char **argv);
int cli_cmd_lookup(int argc, char **argv);
int cli_cmd_lower_bound(int argc, char **argv);
int cli_cmd_range(int argc, char **argv);
int cli_cmd_update(int argc, char **argv);
int cli_cmd_info(int argc, char **argv);
int cli_cmd_check(int argc, char **argv);
int cli_cmd_bench(int argc, char **argv);
int cli_cmd_profile_ntg(int argc, char **argv);

#endif /* HARMONIA_CLI_H */
