/* cli_common.c — the shared machinery of the harmonia tool: messages and exit codes, the option
 * parser and --help printer, number parsing, clock, JSON strings. No command logic lives here. */
#include <errno.h>
#include <math.h>
#include <omp.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "cli_progress.h"

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

int cli_library_error(const harmonia_tree *tree, harmonia_status status, const char *context)
{
    const char *message = harmonia_last_error(tree);
    if (context == NULL)
        return message[0] != '\0' ? cli_error("%s (%s)", message, harmonia_strerror(status))
                                  : cli_error("%s", harmonia_strerror(status));
    size_t context_len = strlen(context);
    if (message[0] == '\0')
        return cli_error("%s: %s", context, harmonia_strerror(status));
    if (strncmp(message, context, context_len) == 0 && message[context_len] == ':')
        return cli_error("%s (%s)", message, harmonia_strerror(status)); /* names it already */
    return cli_error("%s: %s (%s)", context, message, harmonia_strerror(status));
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

bool cli_parse_u64(const char *text, uint64_t max, uint64_t *out)
{
    uint64_t value = 0;
    const char *s = text;
    if (s[0] == '\0')
        return false;
    if (s[0] == '2' && s[1] == '^') {
        uint64_t exponent;
        if (!cli_parse_u64(s + 2, 63, &exponent) || strchr(s + 2, '^') != NULL)
            return false;
        value = (uint64_t)1 << exponent;
    } else if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
        if (s[2] == '\0')
            return false;
        for (s += 2; *s != '\0'; s++) {
            int digit;
            if (*s >= '0' && *s <= '9')
                digit = *s - '0';
            else if (*s >= 'a' && *s <= 'f')
                digit = *s - 'a' + 10;
            else if (*s >= 'A' && *s <= 'F')
                digit = *s - 'A' + 10;
            else
                return false;
            if (value > (UINT64_MAX >> 4))
                return false;
            value = (value << 4) | (uint64_t)digit;
        }
    } else {
        const char *e = strpbrk(s, "eE");
        const char *end = e != NULL ? e : s + strlen(s);
        if (end == s)
            return false;
        for (; s < end; s++) {
            if (*s < '0' || *s > '9')
                return false;
            uint64_t digit = (uint64_t)(*s - '0');
            if (value > (UINT64_MAX - digit) / 10)
                return false;
            value = value * 10 + digit;
        }
        if (e != NULL) {
            uint64_t exponent;
            if (!cli_parse_u64(e + 1, 19, &exponent) || strpbrk(e + 1, "eEx^") != NULL)
                return false;
            for (uint64_t k = 0; k < exponent; k++) {
                if (value > UINT64_MAX / 10)
                    return false;
                value *= 10;
            }
        }
    }
    if (value > max)
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
    if (!cli_parse_u64(opt->value, UINT64_MAX, &value))
        return cli_usage_error("--%s: '%s' is not a number", name, opt->value);
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

double cli_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void cli_json_string(FILE *out, const char *s)
{
    fputc('"', out);
    for (const unsigned char *c = (const unsigned char *)s; *c != '\0'; c++) {
        switch (*c) {
        case '"': fputs("\\\"", out); break;
        case '\\': fputs("\\\\", out); break;
        case '\n': fputs("\\n", out); break;
        case '\r': fputs("\\r", out); break;
        case '\t': fputs("\\t", out); break;
        default:
            if (*c < 0x20)
                fprintf(out, "\\u%04x", *c);
            else
                fputc(*c, out);
        }
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

int cli_thread_count(int threads)
{
    return threads > 0 ? threads : omp_get_max_threads();
}

/* ---- shared steps --------------------------------------------------------------------------- */

int cli_load_index(const char *path, bool verify, bool quiet, harmonia_tree **tree_out)
{
    cli_progress progress;
    cli_progress_init(&progress, quiet);
    harmonia_load_config config;
    harmonia_load_config_init(&config);
    config.verify = verify;
    config.progress = cli_progress_callback;
    config.progress_arg = &progress;
    harmonia_status status = harmonia_load(path, &config, tree_out);
    cli_progress_done(&progress);
    if (status != HARMONIA_OK) {
        *tree_out = NULL;
        return cli_library_error(NULL, status, path);
    }
    return 0;
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
