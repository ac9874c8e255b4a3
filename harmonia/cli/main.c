/* main.c — the entry of the harmonia command-line tool: the command table, `harmonia --help`,
 * `--version`, and dispatch to the cli_cmd_* functions. Each command parses its own options. */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/* Set when a command returns. A runtime that exits the process on its own before that (libgomp
 * does, after "libgomp: Thread creation failed: ...", when the system refuses its threads) gets
 * a line of ours after its own, saying what to do. */
static bool command_returned;

static void explain_early_exit(void)
{
    if (command_returned)
        return;
    fflush(stdout);
    fprintf(stderr,
            "harmonia %s: stopped before finishing: the OpenMP runtime could not start its threads "
            "(its reason is above). Use fewer threads (--threads or OMP_NUM_THREADS) or a smaller "
            "OMP_STACKSIZE, or raise the limits on processes and memory (ulimit -u, ulimit -v)\n",
            cli_command[0] != '\0' ? cli_command : "");
}

static const cli_command_entry commands[] = {
    {"generate", cli_cmd_generate, "write synthetic keys, queries, ranges or update batches"},
    {"build", cli_cmd_build, "build an index file from key,value pairs"},
    {"lookup", cli_cmd_lookup, "point lookups: the value of each query key"},
    {"lower-bound", cli_cmd_lower_bound, "the smallest key >= each query, with its value"},
    {"range", cli_cmd_range, "count (or collect) the keys in each [lo, hi]"},
    {"update", cli_cmd_update, "apply a batch of inserts, updates and deletes to an index"},
    {"info", cli_cmd_info, "describe an index file, or the GPU (--device)"},
    {"check", cli_cmd_check, "verify an index file (checksums and every invariant)"},
    {"profile-ntg", cli_cmd_profile_ntg, "profile the NTG group size G (model and GPU), store the choice"},
    {"bench", cli_cmd_bench, "time Harmonia against binary search on generated data"},
};

static void print_help(FILE *out)
{
    fprintf(out,
            "Usage: harmonia <command> [options]\n"
            "\n"
            "Harmonia %s: a B+tree index for batched lookups on the GPU (and the CPU).\n"
            "\n"
            "Commands:\n",
            HARMONIA_VERSION_STRING);
    cli_print_commands(out, commands, CLI_COUNT_OF(commands));
    fprintf(out,
            "\n"
            "'harmonia <command> --help' shows the options of a command.\n"
            "Data files are raw little-endian binary records or text (one record per line,\n"
            "fields separated by ','); names ending in .txt/.csv/.tsv are read as text.\n"
            "Update batches are text lines '+ key value', '= key value', '* key value',\n"
            "'- key' (insert, update, upsert, delete) or binary kind,key,value records.\n"
            "Exit status: 0 success, 1 error, 2 bad usage.\n"
            "\n"
            "Example:\n"
            "  harmonia generate keys --count 1e6 --out pairs.bin\n"
            "  harmonia build --input pairs.bin --out pairs.idx\n"
            "  harmonia generate queries --keys pairs.bin --count 1e6 --out queries.bin\n"
            "  harmonia lookup --index pairs.idx --queries queries.bin --out results.txt\n"
            "  harmonia generate ops --keys pairs.bin --count 1e5 --mix paper --out ops.bin\n"
            "  harmonia update --index pairs.idx --ops ops.bin\n");
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        print_help(stderr);
        return CLI_EXIT_USAGE;
    }
    const char *name = argv[1];
    if (strcmp(name, "--help") == 0 || strcmp(name, "-h") == 0) {
        print_help(stdout);
        return CLI_EXIT_OK;
    }
    if (strcmp(name, "help") == 0) {
        if (argc < 3) {
            print_help(stdout);
            return CLI_EXIT_OK;
        }
        name = argv[2];
        char *help_argv[] = {"--help", NULL};
        const cli_command_entry *command = cli_find_command(commands, CLI_COUNT_OF(commands), name);
        if (command == NULL)
            return cli_usage_error("unknown command '%s'", name);
        cli_command = command->name;
        return command->run(1, help_argv);
    }
    if (strcmp(name, "--version") == 0 || strcmp(name, "version") == 0) {
        printf("harmonia %s\n", HARMONIA_VERSION_STRING);
        return CLI_EXIT_OK;
    }
    const cli_command_entry *command = cli_find_command(commands, CLI_COUNT_OF(commands), name);
    if (command == NULL)
        return cli_usage_error("unknown command '%s'", name);
    cli_command = command->name;
    atexit(explain_early_exit);
    int status = command->run(argc - 2, argv + 2);
    command_returned = true;
    if (fflush(stdout) != 0 && status == CLI_EXIT_OK)
        status = cli_error("standard output: write failed");
    return status;
}
