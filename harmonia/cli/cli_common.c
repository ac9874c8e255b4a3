/* cli_common.c — the shared machinery of the harmonia tool (and of harmonia-dist, which links it):
 * messages and exit codes, failures printed or kept (cli_err), the command table, the option parser
 * and --help printer, number parsing, clock, JSON strings. No command logic lives here. */
#include <errno.h>
#include <math.h>
#include <omp.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "cli.h"
#include "cli_progress.h"
#include "harmonia/safe_file.h"
#include "util/clock.h"

const char *cli_command = "";

static void print_prefix(void)
{
    if (cli_command[0] != '\0')
        fprintf(stderr, "harmonia %s: ", cli_command);
    else
        fprintf(stderr, "harmonia: ");
}

/* "harmonia <command>: <message>" on stderr, after whatever stdout holds. */
static void report(const char *fmt, va_list ap)
{
    fflush(stdout);
    print_prefix();
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
}

int cli_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    report(fmt, ap);
    va_end(ap);
    return CLI_EXIT_FAIL;
}

int cli_usage_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    report(fmt, ap);
    va_end(ap);
    if (cli_command[0] != '\0')
        fprintf(stderr, "Try 'harmonia %s --help'.\n", cli_command);
    else
        fprintf(stderr, "Try 'harmonia --help'.\n");
    return CLI_EXIT_USAGE;
}

void cli_err_init(cli_err *err, bool keep)
{
    err->failed = 0;
    err->keep = keep;
    err->message[0] = '\0';
}

int cli_fail(cli_err *err, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    if (!err->keep)
        report(fmt, ap);
    else if (!err->failed)
        vsnprintf(err->message, sizeof err->message, fmt, ap);
    va_end(ap);
    err->failed = CLI_EXIT_FAIL;
    return err->failed;
}

void cli_print_commands(FILE *out, const cli_command_entry *commands, size_t n)
{
    for (size_t i = 0; i < n; i++)
        fprintf(out, "  %-12s %s\n", commands[i].name, commands[i].summary);
}

const cli_command_entry *cli_find_command(const cli_command_entry *commands, size_t n,
                                          const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(commands[i].name, name) == 0)
            return &commands[i];
    return NULL;
}

int cli_library_error(const harmonia_tree *tree, harmonia_status status, const char *context)
{
    const char *message = harmonia_last_error(tree);
    /* the status in words adds to a message, except where the message holds the OS's reason
     * (IO: "No such file or directory") or says it all (CONFLICT) */
    char words[64] = "";
    if (status != HARMONIA_ERR_IO && status != HARMONIA_ERR_CONFLICT)
        snprintf(words, sizeof words, " (%s)", harmonia_strerror(status));
    if (context == NULL)
        return message[0] != '\0' ? cli_error("%s%s", message, words)
                                  : cli_error("%s", harmonia_strerror(status));
    size_t context_len = strlen(context);
    if (message[0] == '\0')
        return cli_error("%s: %s", context, harmonia_strerror(status));
    if (strncmp(message, context, context_len) == 0 && message[context_len] == ':')
        return cli_error("%s%s", message, words); /* names it already */
    return cli_error("%s: %s%s", context, message, words);
}

/* ---- options ------------------------------------------------------------------------------- */

static cli_opt *find_opt(const cli_spec *spec, const char *name, size_t name_len)
{
    for (size_t i = 0; i < spec->n_opts; i++) {
        if (strlen(spec->opts[i].name) == name_len &&
            strncmp(spec->opts[i].name, name, name_len) == 0)
            return &spec->opts[i];
    }
    return NULL;
}

void cli_print_help(const cli_spec *spec, FILE *out)
{
    fprintf(out, "Usage: harmonia %s\n\n%s\n", spec->usage, spec->description);
    if (spec->n_opts > 0)
        fprintf(out, "\nOptions:\n");
    for (size_t i = 0; i < spec->n_opts; i++) {
        const cli_opt *opt = &spec->opts[i];
        char left[64];
        if (opt->arg != NULL)
            snprintf(left, sizeof left, "--%s %s", opt->name, opt->arg);
        else
            snprintf(left, sizeof left, "--%s", opt->name);
        if (strlen(left) <= 24)
            fprintf(out, "  %-24s %s\n", left, opt->help);
        else
            fprintf(out, "  %s\n  %-24s %s\n", left, "", opt->help);
    }
    fprintf(out, "  %-24s %s\n", "--help", "show this help and exit");
    if (spec->notes != NULL)
        fprintf(out, "\n%s", spec->notes);
}

int cli_parse(const cli_spec *spec, int argc, char **argv, const char **positional,
              int max_positional, int *n_positional)
{
    int n_pos = 0;
    for (size_t i = 0; i < spec->n_opts; i++)
        spec->opts[i].value = NULL;
    for (int i = 0; i < argc; i++) {
        const char *word = argv[i];
        if (strcmp(word, "--help") == 0 || strcmp(word, "-h") == 0) {
            cli_print_help(spec, stdout);
            return CLI_HELP_SHOWN;
        }
        if (strncmp(word, "--", 2) != 0 || word[2] == '\0') {
            if (word[0] == '-' && word[1] != '\0' && strcmp(word, "--") != 0)
                return cli_usage_error("unknown option '%s'", word);
            if (n_pos >= max_positional)
                return cli_usage_error("unexpected argument '%s'", word);
            positional[n_pos++] = word;
            continue;
        }
        const char *name = word + 2;
        const char *equals = strchr(name, '=');
        size_t name_len = equals != NULL ? (size_t)(equals - name) : strlen(name);
        cli_opt *opt = find_opt(spec, name, name_len);
        if (opt == NULL)
            return cli_usage_error("unknown option '--%.*s'", (int)name_len, name);
        if (opt->value != NULL)
            return cli_usage_error("option '--%s' given twice", opt->name);
        if (opt->arg == NULL) {
            if (equals != NULL)
                return cli_usage_error("option '--%s' takes no value", opt->name);
            opt->value = "";
        } else if (equals != NULL) {
            opt->value = equals + 1;
        } else {
            if (i + 1 >= argc)
                return cli_usage_error("option '--%s' needs a value (%s)", opt->name, opt->arg);
            opt->value = argv[++i];
        }
        if (opt->arg != NULL && opt->value[0] == '\0')
            return cli_usage_error("option '--%s' has an empty value", opt->name);
    }
    if (n_positional != NULL)
        *n_positional = n_pos;
    return 0;
}

static const cli_opt *must_find(const cli_spec *spec, const char *name)
{
    const cli_opt *opt = find_opt(spec, name, strlen(name));
    if (opt == NULL) { /* a programming error: the command asked for an option it lacks */
        fprintf(stderr, "harmonia %s: internal error: no option --%s\n", spec->command, name);
        abort();
    }
    return opt;
}

bool cli_opt_given(const cli_spec *spec, const char *name)
{
    return must_find(spec, name)->value != NULL;
}

const char *cli_opt_str(const cli_spec *spec, const char *name, const char *default_value)
{
    const cli_opt *opt = must_find(spec, name);
    return opt->value != NULL ? opt->value : default_value;
}

int cli_opt_required(const cli_spec *spec, const char *name, const char **out)
{
    const cli_opt *opt = must_find(spec, name);
    if (opt->value == NULL)
        return cli_usage_error("missing --%s", name);
    *out = opt->value;
    return 0;
}

static bool is_digit(char c) { return c >= '0' && c <= '9'; }

static int hex_digit(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* Whether [p, end) is made of what numbers in any notation are made of (digits, '.', 'e'/'E',
 * signs, 'x', hex digits): then a problem is named (sign, fraction, exponent) instead of "not a
 * number". */
static bool looks_numeric(const char *p, const char *end)
{
    bool digit = false;
    for (; p < end; p++) {
        if (is_digit(*p))
            digit = true;
        else if (!(*p == '.' || *p == 'e' || *p == 'E' || *p == '+' || *p == '-' || *p == '^' ||
                   *p == 'x' || *p == 'X' || hex_digit(*p) >= 0))
            return false;
    }
    return digit;
}

cli_number_problem cli_parse_number(const char *text, size_t length, bool option_syntax,
                                    uint64_t *out)
{
    const char *p = text, *end = text + length;
    if (length == 0)
        return CLI_NUMBER_EMPTY;
    if (*p == '+' || *p == '-')
        return looks_numeric(p + 1, end) ? CLI_NUMBER_SIGN : CLI_NUMBER_NOT_A_NUMBER;
    uint64_t value = 0;
    if (length > 2 && p[0] == '0' && (p[1] == 'x' || p[1] == 'X')) {
        bool overflow = false;
        for (p += 2; p < end; p++) {
            int digit = hex_digit(*p);
            if (digit < 0)
                return CLI_NUMBER_NOT_A_NUMBER;
            if (value > (UINT64_MAX >> 4))
                overflow = true;
            value = (value << 4) | (uint64_t)digit;
        }
        if (overflow)
            return CLI_NUMBER_TOO_LARGE;
        *out = value;
        return CLI_NUMBER_OK;
    }
    if (length > 2 && p[0] == '2' && p[1] == '^') {
        if (!option_syntax)
            return CLI_NUMBER_NOT_A_NUMBER;
        uint64_t exponent = 0;
        for (p += 2; p < end; p++) {
            if (!is_digit(*p))
                return looks_numeric(p, end) && *p == '-' ? CLI_NUMBER_FRACTION
                                                          : CLI_NUMBER_NOT_A_NUMBER;
            exponent = exponent > 1000 ? exponent : exponent * 10 + (uint64_t)(*p - '0');
        }
        if (exponent > 63)
            return CLI_NUMBER_TOO_LARGE;
        *out = (uint64_t)1 << exponent;
        return CLI_NUMBER_OK;
    }
    /* decimal digits, then maybe a fraction or an exponent */
    bool overflow = false;
    const char *digits_end = p;
    while (digits_end < end && is_digit(*digits_end)) {
        uint64_t digit = (uint64_t)(*digits_end - '0');
        if (value > (UINT64_MAX - digit) / 10)
            overflow = true;
        value = value * 10 + digit;
        digits_end++;
    }
    if (digits_end == end) {
        if (overflow)
            return CLI_NUMBER_TOO_LARGE;
        *out = value;
        return CLI_NUMBER_OK;
    }
    if (!looks_numeric(p, end))
        return CLI_NUMBER_NOT_A_NUMBER;
    if (*digits_end == '.')
        return CLI_NUMBER_FRACTION;
    if (digits_end == p || (*digits_end != 'e' && *digits_end != 'E'))
        return CLI_NUMBER_NOT_A_NUMBER;
    /* an exponent: MeE */
    const char *e = digits_end + 1;
    if (e < end && *e == '-')
        return CLI_NUMBER_FRACTION;
    if (e < end && *e == '+')
        e++;
    if (e == end)
        return CLI_NUMBER_NOT_A_NUMBER;
    uint64_t exponent = 0;
    for (const char *q = e; q < end; q++) {
        if (!is_digit(*q))
            return CLI_NUMBER_NOT_A_NUMBER;
        exponent = exponent > 1000 ? exponent : exponent * 10 + (uint64_t)(*q - '0');
    }
    if (!option_syntax)
        return CLI_NUMBER_EXPONENT;
    if (overflow)
        return CLI_NUMBER_TOO_LARGE;
    for (uint64_t k = 0; k < exponent; k++) {
        if (value == 0)
            break;
        if (value > UINT64_MAX / 10)
            return CLI_NUMBER_TOO_LARGE;
        value *= 10;
    }
    *out = value;
    return CLI_NUMBER_OK;
}

const char *cli_number_problem_text(cli_number_problem problem, bool option_syntax)
{
    switch (problem) {
    case CLI_NUMBER_OK: return "is a number";
    case CLI_NUMBER_EMPTY: return "is empty, not a number";
    case CLI_NUMBER_NOT_A_NUMBER:
        return option_syntax ? "is not a number (decimal, 0x hex, 2^N or an exact MeE such as 1e6)"
                             : "is not a number (decimal or 0x hex)";
    case CLI_NUMBER_SIGN: return "has a sign: numbers here are unsigned, write them without '+' or '-'";
    case CLI_NUMBER_FRACTION: return "is not a whole number";
    case CLI_NUMBER_EXPONENT:
        return "has an exponent, which data files do not take: write the digits (decimal or 0x hex)";
    case CLI_NUMBER_TOO_LARGE: return "is too large for 64 bits (the largest is 18446744073709551615)";
    }
    return "is not a number";
}

bool cli_parse_u64(const char *text, uint64_t max, uint64_t *out)
{
    uint64_t value;
    if (cli_parse_number(text, strlen(text), true, &value) != CLI_NUMBER_OK || value > max)
        return false;
    *out = value;
    return true;
}

int cli_opt_u64(const cli_spec *spec, const char *name, uint64_t default_value, uint64_t min,
                uint64_t max, uint64_t *out)
{
    const cli_opt *opt = must_find(spec, name);
    if (opt->value == NULL) {
        *out = default_value;
        return 0;
    }
    uint64_t value;
    cli_number_problem problem = cli_parse_number(opt->value, strlen(opt->value), true, &value);
    if (problem != CLI_NUMBER_OK)
        return cli_usage_error("--%s: '%s' %s", name, opt->value, cli_number_problem_text(problem, true));
    if (value < min || value > max)
        return cli_usage_error("--%s: %s is out of range [%llu, %llu]", name, opt->value,
                               (unsigned long long)min, (unsigned long long)max);
    *out = value;
    return 0;
}

int cli_opt_double(const cli_spec *spec, const char *name, double default_value, double min,
                   double max, double *out)
{
    const cli_opt *opt = must_find(spec, name);
    if (opt->value == NULL) {
        *out = default_value;
        return 0;
    }
    char *end;
    errno = 0;
    double value = strtod(opt->value, &end);
    if (end == opt->value || *end != '\0' || errno != 0 || !isfinite(value))
        return cli_usage_error("--%s: '%s' is not a number", name, opt->value);
    if (value < min || value > max)
        return cli_usage_error("--%s: %s is out of range [%g, %g]", name, opt->value, min, max);
    *out = value;
    return 0;
}

int cli_opt_choice(const cli_spec *spec, const char *name, const char *const *choices,
                   int default_index, int *out)
{
    const cli_opt *opt = must_find(spec, name);
    if (opt->value == NULL) {
        *out = default_index;
        return 0;
    }
    for (int i = 0; choices[i] != NULL; i++) {
        if (strcmp(choices[i], opt->value) == 0) {
            *out = i;
            return 0;
        }
    }
    char list[256] = "";
    for (int i = 0; choices[i] != NULL; i++) {
        if (i > 0)
            strncat(list, ", ", sizeof list - strlen(list) - 1);
        strncat(list, choices[i], sizeof list - strlen(list) - 1);
    }
    return cli_usage_error("--%s: '%s' is not one of %s", name, opt->value, list);
}

/* ---- small things -------------------------------------------------------------------------- */

double cli_now(void) { return util_now_seconds(); }

/* The length of the valid UTF-8 sequence at s (1 to 4), or 0 when the bytes there are not one
 * (overlong forms, surrogates and code points above U+10FFFF are not valid). */
static int utf8_sequence(const unsigned char *s)
{
    unsigned char c = s[0];
    if (c < 0x80)
        return 1;
    int n;
    uint32_t cp;
    if (c >= 0xC2 && c <= 0xDF) {
        n = 2;
        cp = c & 0x1F;
    } else if (c >= 0xE0 && c <= 0xEF) {
        n = 3;
        cp = c & 0x0F;
    } else if (c >= 0xF0 && c <= 0xF4) {
        n = 4;
        cp = c & 0x07;
    } else {
        return 0;
    }
    for (int i = 1; i < n; i++) {
        if ((s[i] & 0xC0) != 0x80) /* also stops at the terminating NUL */
            return 0;
        cp = (cp << 6) | (s[i] & 0x3F);
    }
    if ((n == 3 && (cp < 0x800 || (cp >= 0xD800 && cp <= 0xDFFF))) || (n == 4 && (cp < 0x10000 || cp > 0x10FFFF)))
        return 0;
    return n;
}

void cli_json_string(FILE *out, const char *s)
{
    fputc('"', out);
    for (const unsigned char *c = (const unsigned char *)s; *c != '\0';) {
        switch (*c) {
        case '"': fputs("\\\"", out); c++; continue;
        case '\\': fputs("\\\\", out); c++; continue;
        case '\n': fputs("\\n", out); c++; continue;
        case '\r': fputs("\\r", out); c++; continue;
        case '\t': fputs("\\t", out); c++; continue;
        default: break;
        }
        if (*c < 0x20 || *c == 0x7F) {
            fprintf(out, "\\u%04x", *c);
            c++;
            continue;
        }
        int n = utf8_sequence(c);
        if (n == 0) { /* not UTF-8: the byte's Latin-1 reading */
            fprintf(out, "\\u%04x", *c);
            c++;
            continue;
        }
        fwrite(c, 1, (size_t)n, out);
        c += n;
    }
    fputc('"', out);
}

const char *cli_format_bytes(uint64_t bytes, char *buf)
{
    static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    double value = (double)bytes;
    int unit = 0;
    while (value >= 1024.0 && unit < 4) {
        value /= 1024.0;
        unit++;
    }
    if (unit == 0)
        snprintf(buf, 32, "%llu B", (unsigned long long)bytes);
    else
        snprintf(buf, 32, "%.1f %s", value, units[unit]);
    return buf;
}

size_t cli_u64_digits(uint64_t value, char text[24])
{
    char reversed[24];
    size_t n = 0;
    do {
        reversed[n++] = (char)('0' + value % 10);
        value /= 10;
    } while (value != 0);
    for (size_t i = 0; i < n; i++)
        text[i] = reversed[n - 1 - i];
    return n;
}

int cli_thread_count(int threads)
{
    return threads > 0 ? threads : omp_get_max_threads();
}

/* ---- shared steps --------------------------------------------------------------------------- */

int cli_load_index(const char *path, bool verify, harmonia_lock_mode lock, bool quiet,
                   harmonia_tree **tree_out)
{
    cli_progress progress;
    cli_progress_init(&progress, quiet);
    harmonia_load_config config;
    harmonia_load_config_init(&config);
    config.verify = verify;
    config.lock = lock;
    config.progress = cli_progress_callback;
    config.progress_arg = &progress;
    harmonia_status status = harmonia_load(path, &config, tree_out);
    cli_progress_done(&progress);
    if (status != HARMONIA_OK) {
        *tree_out = NULL;
        int code = cli_library_error(NULL, status, path);
        if (status == HARMONIA_ERR_CONFLICT && lock == HARMONIA_LOCK_TRY)
            fprintf(stderr, "Try again when it is done%s.\n",
                    strcmp(cli_command, "update") == 0 ? ", or give --wait to wait for it" : "");
        return code;
    }
    return 0;
}

int cli_opt_key_bits(const cli_spec *spec, uint32_t *key_bits)
{
    static const char *const names[] = {"32", "64", NULL};
    int index = 1;
    int status = cli_opt_choice(spec, "bits", names, 1, &index);
    *key_bits = index == 0 ? 32 : 64;
    return status;
}

int cli_opt_duplicates(const cli_spec *spec, harmonia_duplicates *out)
{
    static const char *const names[] = {"reject", "first", "last", NULL};
    int index = 0;
    int status = cli_opt_choice(spec, "duplicates", names, 0, &index);
    *out = index == 0   ? HARMONIA_DUPLICATES_REJECT
           : index == 1 ? HARMONIA_DUPLICATES_KEEP_FIRST
                        : HARMONIA_DUPLICATES_KEEP_LAST;
    return status;
}

int cli_opt_insert_existing(const cli_spec *spec, harmonia_insert_policy *out)
{
    static const char *const names[] = {"error", "upsert", NULL};
    int index = 0;
    int status = cli_opt_choice(spec, "insert-existing", names, 0, &index);
    *out = index == 1 ? HARMONIA_INSERT_EXISTING_UPSERT : HARMONIA_INSERT_EXISTING_ERROR;
    return status;
}

int cli_opt_update_missing(const cli_spec *spec, harmonia_update_policy *out)
{
    static const char *const names[] = {"error", "skip", NULL};
    int index = 0;
    int status = cli_opt_choice(spec, "update-missing", names, 0, &index);
    *out = index == 1 ? HARMONIA_UPDATE_MISSING_SKIP : HARMONIA_UPDATE_MISSING_ERROR;
    return status;
}

int cli_opt_psa(const cli_spec *spec, int *psa)
{
    static const char *const names[] = {"auto", "on", "off", NULL};
    int index = 0;
    int status = cli_opt_choice(spec, "psa", names, 0, &index);
    *psa = index == 0 ? -1 : index == 1 ? 1 : 0;
    return status;
}

int cli_opt_results_format(const cli_spec *spec, bool *binary)
{
    static const char *const names[] = {"text", "bin", NULL};
    int index = 0;
    int status = cli_opt_choice(spec, "format", names, 0, &index);
    *binary = index == 1;
    return status;
}

int cli_opt_node_size(const cli_spec *spec, const char *name, uint64_t *out)
{
    int status = cli_opt_u64(spec, name, 0, 0, UINT64_MAX, out);
    if (status != 0 || *out == 0)
        return status;
    if (*out < 8 || *out > 128 || (*out & (*out - 1)) != 0)
        return cli_usage_error("--%s: %llu is not one of 8, 16, 32, 64, 128", name,
                               (unsigned long long)*out);
    return 0;
}

int cli_opt_constant_levels(const cli_spec *spec, int32_t *out)
{
    *out = HARMONIA_CONSTANT_LEVELS_DEFAULT;
    const char *text = cli_opt_str(spec, "constant-levels", NULL);
    if (!text)
        return 0;
    char *end = NULL;
    unsigned long n = strtoul(text, &end, 10);
    if (!strcmp(text, "all"))
        *out = HARMONIA_CONSTANT_LEVELS_ALL;
    else if (text[0] >= '0' && text[0] <= '9' && end && !*end && n <= 64)
        *out = (int32_t)n;
    else
        return cli_usage_error("--constant-levels takes a number of levels (0..64) or all, not '%s'", text);
    return 0;
}

const char *const cli_backend_names[] = {"auto", "cpu", "gpu", NULL};

harmonia_backend cli_backend_of(int choice_index)
{
    return choice_index == 1   ? HARMONIA_BACKEND_CPU
           : choice_index == 2 ? HARMONIA_BACKEND_GPU
                               : HARMONIA_BACKEND_AUTO;
}

/* ---- outputs against inputs ---------------------------------------------------------------- */

int cli_check_output(const char *option, const char *path, const cli_named_path *inputs, size_t n)
{
    if (path == NULL || strcmp(path, "-") == 0)
        return 0;
    char why[1024];
    char *real;
    bool exists;
    struct stat out_st;
    harmonia_status status = hm_resolve_output(path, &real, &exists, &out_st, why, sizeof why);
    if (status != HARMONIA_OK) {
        if (status == HARMONIA_ERR_IO && strstr(why, "not a regular file") != NULL)
            return cli_error("%s %s; outputs are written to regular files only (replaced "
                             "safely, so a device, FIFO or folder is never written%s)",
                             option, why,
                             strcmp(option, "--out") == 0 && strcmp(cli_command, "build") != 0 &&
                                     strcmp(cli_command, "update") != 0
                                 ? "; '--out -' writes to standard output"
                                 : "");
        return cli_error("%s %s", option, why);
    }
    free(real);
    if (!exists)
        return 0;
    for (size_t i = 0; i < n; i++) {
        struct stat in_st;
        if (inputs[i].path == NULL || stat(inputs[i].path, &in_st) != 0)
            continue;
        if (in_st.st_dev == out_st.st_dev && in_st.st_ino == out_st.st_ino)
            return cli_usage_error("%s %s is the same file as %s %s: refusing to overwrite an "
                                   "input (give another %s)",
                                   option, path, inputs[i].option, inputs[i].path, option);
    }
    return 0;
}

typedef struct stale_report {
    FILE *json;
    const char *path;
    uint64_t found;
} stale_report;

static void report_stale(void *arg, const char *name, uint64_t bytes, bool removable, bool removed)
{
    stale_report *r = arg;
    char size[32];
    cli_format_bytes(bytes, size);
    if (r->json != NULL) {
        fputs(r->found == 0 ? "{\"name\":" : ",{\"name\":", r->json);
        cli_json_string(r->json, name);
        fprintf(r->json, ",\"bytes\":%llu,\"removed\":%s}", (unsigned long long)bytes,
                removed ? "true" : "false");
    } else if (removed) {
        fprintf(stderr, "note: removed %s (%s), a temporary file of a killed save of %s\n", name,
                size, r->path);
    } else {
        fprintf(stderr, "note: %s (%s) is a temporary file of a %s save of %s%s\n", name, size,
                removable ? "killed" : "running or killed",
                r->path,
                removable ? "; the next save removes it (or harmonia check --remove-stale)"
                          : "; it is locked by a running process or not yours, so it stays");
    }
    r->found++;
}

uint64_t cli_report_stale_temps(const char *path, bool remove, FILE *json_out)
{
    stale_report r = {json_out, path, 0};
    if (json_out != NULL)
        fputs(",\"stale_temporary_files\":[", json_out);
    hm_stale_temps(path, remove, report_stale, &r);
    if (json_out != NULL)
        fputs("]", json_out);
    return r.found;
}
