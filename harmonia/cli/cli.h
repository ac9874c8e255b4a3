/* cli.h — what the commands of the harmonia tool share, and with them harmonia-dist's (dist/cli/:
 * both link the library cli_support, harmonia/cli/meson.build): exit codes, messages in the
 * "harmonia <command>: <where>: <what>" form and the failures kept for later (cli_err), the command
 * table, the table-driven option parser, number parsing, clocks and JSON string output. File
 * formats live in cli_io.h (one line or record of them in cli_text.h), the progress bar in
 * cli_progress.h. */
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

/* ---- failures printed or kept -----------------------------------------------------------------
 * The steps both tools share (the parsers of cli_text.h) report into a cli_err: the harmonia tool
 * prints each failure at once, as cli_error does; harmonia-dist keeps a rank's first one until the
 * ranks agree on it (dist/cli/dcli.h: dcli_agree) and rank 0 prints it. */
#define CLI_MESSAGE_BYTES 1024

typedef struct cli_err {
    int failed; /* 0 or CLI_EXIT_FAIL */
    bool keep;  /* true: the first message is kept in message, nothing printed */
    char message[CLI_MESSAGE_BYTES];
} cli_err;

/* No failure yet; keep as above. */
void cli_err_init(cli_err *err, bool keep);

/* Records a failure: printed at once ("harmonia <command>: <message>", as cli_error), or kept in
 * err->message when keep is set and it is the first. Returns err->failed (CLI_EXIT_FAIL). */
int cli_fail(cli_err *err, const char *fmt, ...) CLI_PRINTF(2, 3);

/* ---- the command table ----------------------------------------------------------------------- */
typedef struct cli_command_entry {
    const char *name;
    int (*run)(int argc, char **argv); /* the words after the command's name */
    const char *summary;               /* one line of the tool's --help */
} cli_command_entry;

/* The "  <name> <summary>" lines of a tool's --help, one per command. */
void cli_print_commands(FILE *out, const cli_command_entry *commands, size_t n);

/* The entry of commands[0 .. n-1] named name, or NULL. */
const cli_command_entry *cli_find_command(const cli_command_entry *commands, size_t n,
                                          const char *name);

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

/* The entries of the options both tools spell alike (their --help lines included), for the
 * commands' tables; cli_opt_key_bits and the readers below read them. */
#define CLI_OPT_BITS \
    {"bits", "B", "key and value width: 32 or 64 (default 64)", NULL}
#define CLI_OPT_KEYS_ONLY \
    {"keys-only", NULL, "the binary input holds keys only; values are row ids", NULL}
#define CLI_OPT_LEAF_SIZE \
    {"leaf-size", "L", "keys per leaf: 8, 16, 32, 64, 128 (default: library's)", NULL}
#define CLI_OPT_FILL \
    {"fill", "X", "fraction of each leaf filled, in (0, 1] (default: library's)", NULL}
#define CLI_OPT_INSERT_EXISTING \
    {"insert-existing", "P", "an insert of a present key: error (default) or upsert", NULL}
#define CLI_OPT_UPDATE_MISSING \
    {"update-missing", "P", "an update of a missing key: error (default) or skip", NULL}
#define CLI_OPT_RESULTS_FORMAT \
    {"format", "F", "results as text (default) or bin", NULL}
#define CLI_OPT_PSA \
    {"psa", "MODE", "GPU: partially-sorted aggregation auto (default), on or off", NULL}
#define CLI_OPT_WINDOW \
    {"window", "W", "GPU: queries per PSA window (default: sized to the L2)", NULL}
#define CLI_OPT_PIPELINE_DEPTH \
    {"pipeline-depth", "D", "GPU: windows in flight, 1..3 (default 3)", NULL}
#define CLI_OPT_COLLECT \
    {"collect", NULL, "write the key,value pairs of each range, not only its count", NULL}
#define CLI_OPT_QUERY_BACKEND \
    {"backend", "B", "auto (default: the GPU when usable), cpu or gpu", NULL}

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

/* What is wrong with a number, for messages that say which. */
typedef enum cli_number_problem {
    CLI_NUMBER_OK = 0,
    CLI_NUMBER_EMPTY,
    CLI_NUMBER_NOT_A_NUMBER, /* characters that make no number: 'abc', '12x' */
    CLI_NUMBER_SIGN,         /* '+5', '-5': numbers are unsigned */
    CLI_NUMBER_FRACTION,     /* '1.5', '1e-3' */
    CLI_NUMBER_EXPONENT,     /* '1e3' where exponents are not taken (data files) */
    CLI_NUMBER_TOO_LARGE,    /* above 2^64 - 1 */
} cli_number_problem;

/* Parses the length bytes at text as an unsigned number. Data files (option_syntax false) take
 * decimal and 0x hexadecimal; options (true) also 2^N and an exact MeE such as 1e6. */
cli_number_problem cli_parse_number(const char *text, size_t length, bool option_syntax,
                                    uint64_t *out);

/* The words after "'<text>' " in a message: "is not a number (decimal or 0x hex)", ... */
const char *cli_number_problem_text(cli_number_problem problem, bool option_syntax);

/* cli_parse_number of a whole option value with option syntax; false when it is not a number or
 * exceeds max. */
bool cli_parse_u64(const char *text, uint64_t max, uint64_t *out);

/* ---- small things ------------------------------------------------------------------------- */
double cli_now(void); /* seconds of a monotonic clock */

/* Writes s as a JSON string, quotes and escapes included. Valid UTF-8 passes as it is; a byte
 * that is not part of a valid UTF-8 sequence (a file name in Latin-1, say) becomes the character
 * of the same number, \u00XX (its Latin-1 reading), so the document is always valid JSON. */
void cli_json_string(FILE *out, const char *s);

/* Writes value's decimal digits to text (no '\0'; 20 at the most) and returns how many: the
 * results writers' formatter (cli_write_u64, harmonia-dist's dcli_put_u64), faster than printf. */
size_t cli_u64_digits(uint64_t value, char text[24]);

/* Formats a byte count as "12.3 MiB". buf needs 32 bytes. */
const char *cli_format_bytes(uint64_t bytes, char *buf);

/* The number of OpenMP threads a parallel region started now would get with threads (0 = the
 * default). */
int cli_thread_count(int threads);

/* ---- shared steps of several commands ------------------------------------------------------ */

/* Loads an index file (with a progress bar unless quiet), verified unless verify is false, with
 * the file's lock when lock is not HARMONIA_LOCK_NONE (held until harmonia_free). Returns 0, or
 * CLI_EXIT_FAIL after "harmonia <command>: <path>: <reason>". */
int cli_load_index(const char *path, bool verify, harmonia_lock_mode lock, bool quiet,
                   harmonia_tree **tree_out);

/* The help line of --no-verify, the same for every command that loads an index. */
#define CLI_NO_VERIFY_HELP                                                                        \
    "load without the checksums and the full integrity check (the O(nodes) structure checks "    \
    "still run: a damaged file may answer wrongly, never crash; an update or a save verifies "   \
    "in full first)"

/* An option naming a file, for the same-file check. */
typedef struct cli_named_path {
    const char *option; /* "--index" */
    const char *path;   /* NULL when the option was not given */
} cli_named_path;

/* Checks an output before any work is done: standard output ("-" or NULL) passes; an existing
 * target that is not a regular file (also at the end of links) is refused with CLI_EXIT_FAIL
 * after a message naming it; a target that is the same file as one of the n inputs (same device
 * and inode: also through symbolic or hard links) is refused with CLI_EXIT_USAGE after a message
 * naming both. Returns 0 when the output may be written. */
int cli_check_output(const char *option, const char *path, const cli_named_path *inputs, size_t n);

/* Finds the temporary files of killed saves beside path (harmonia/safe_file.h), removing those
 * that are safe to remove when remove is set. Reports them as "note:" lines on stderr, or, when
 * json_out is not NULL, as ,"stale_temporary_files":[{"name","bytes","removed"}...] there.
 * Returns how many were found. */
uint64_t cli_report_stale_temps(const char *path, bool remove, FILE *json_out);

/* Reads --NAME as a node size: 0 when not given, else a power of two in [8, 128]
 * (CLI_EXIT_USAGE otherwise). */
int cli_opt_node_size(const cli_spec *spec, const char *name, uint64_t *out);

/* The options both tools spell alike, read into what the library takes (CLI_EXIT_USAGE, after
 * cli_opt_choice's message, for another value):
 *   --bits: 32 or 64 (default 64), a key width;
 *   --duplicates: reject (default), first or last;
 *   --insert-existing: error (default) or upsert; --update-missing: error (default) or skip;
 *   --psa: auto (default, -1), on (1) or off (0), as harmonia_query_config.psa;
 *   --format of query results: text (default) or bin (*binary true). */
int cli_opt_key_bits(const cli_spec *spec, uint32_t *key_bits);
int cli_opt_duplicates(const cli_spec *spec, harmonia_duplicates *out);
int cli_opt_insert_existing(const cli_spec *spec, harmonia_insert_policy *out);
int cli_opt_update_missing(const cli_spec *spec, harmonia_update_policy *out);
int cli_opt_psa(const cli_spec *spec, int *psa);
int cli_opt_results_format(const cli_spec *spec, bool *binary);

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
