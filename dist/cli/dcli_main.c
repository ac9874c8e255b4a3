/* dcli_main.c — the entry of harmonia-dist (run under mpirun, one rank per GPU): MPI set-up, the
 * command table and help, and the run's shared machinery: messages printed once by rank 0, the
 * agreement of the ranks on a failure, the capture of the option parser's output. */
#include <errno.h>
#include <fcntl.h>
#include <omp.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dcli.h"

/* Sanitizer builds: what Open MPI allocates in its start and end is not this tool's to free. */
#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/lsan_interface.h>
#define LSAN_DISABLE() __lsan_disable()
#define LSAN_ENABLE() __lsan_enable()
#else
#define LSAN_DISABLE() ((void)0)
#define LSAN_ENABLE() ((void)0)
#endif

int dcli_rank = 0, dcli_ranks = 1;
const char *dcli_command = "";

/* ---- messages and agreement ----------------------------------------------------------------- */

static void print_prefixed(const char *message)
{
    fflush(stdout);
    fprintf(stderr, "harmonia-dist %s: %s\n", dcli_command, message);
}

int dcli_agree(cli_err *err)
{
    int failing = err->failed ? dcli_rank : dcli_ranks;
    MPI_Allreduce(MPI_IN_PLACE, &failing, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (failing == dcli_ranks)
        return 0;
    struct {
        int failed;
        char message[CLI_MESSAGE_BYTES];
    } shared;
    if (dcli_rank == failing) {
        shared.failed = err->failed;
        memcpy(shared.message, err->message, sizeof shared.message);
    }
    MPI_Bcast(&shared, (int)sizeof shared, MPI_BYTE, failing, MPI_COMM_WORLD);
    err->failed = shared.failed;
    memcpy(err->message, shared.message, sizeof err->message);
    if (dcli_rank == 0) {
        if (dcli_ranks > 1 && strstr(shared.message, "rank ") == NULL) {
            char named[CLI_MESSAGE_BYTES + 32];
            snprintf(named, sizeof named, "rank %d: %s", failing, shared.message);
            print_prefixed(named);
        } else {
            print_prefixed(shared.message);
        }
    }
    return err->failed;
}

int dcli_error0(const char *fmt, ...)
{
    if (dcli_rank == 0) {
        char message[CLI_MESSAGE_BYTES];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(message, sizeof message, fmt, ap);
        va_end(ap);
        print_prefixed(message);
    }
    return CLI_EXIT_FAIL;
}

int dcli_library_error0(harmonia_status status, const char *message, const char *context)
{
    if (message == NULL || message[0] == '\0')
        message = harmonia_strerror(status);
    if (context != NULL)
        return dcli_error0("%s: %s (%s)", context, message, harmonia_strerror(status));
    return dcli_error0("%s (%s)", message, harmonia_strerror(status));
}

double dcli_max_double(double x)
{
    MPI_Allreduce(MPI_IN_PLACE, &x, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return x;
}

uint64_t dcli_sum_u64(uint64_t x)
{
    MPI_Allreduce(MPI_IN_PLACE, &x, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
    return x;
}

/* ---- the option parser's output, captured ---------------------------------------------------- */

static int saved_out = -1, saved_err = -1;
static FILE *capture_file = NULL;

void dcli_capture_begin(void)
{
    fflush(stdout);
    fflush(stderr);
    capture_file = tmpfile();
    if (capture_file == NULL)
        return; /* no capture: every rank prints (still correct, only repeated) */
    saved_out = dup(STDOUT_FILENO);
    saved_err = dup(STDERR_FILENO);
    dup2(fileno(capture_file), STDOUT_FILENO);
    dup2(fileno(capture_file), STDERR_FILENO);
}

void dcli_capture_end(void)
{
    if (capture_file == NULL)
        return;
    fflush(stdout);
    fflush(stderr);
    dup2(saved_out, STDOUT_FILENO);
    dup2(saved_err, STDERR_FILENO);
    close(saved_out);
    close(saved_err);
    if (dcli_rank == 0) {
        /* "harmonia <cli_command>" is this tool's "harmonia-dist <command>" */
        char from[96], to[96];
        snprintf(from, sizeof from, "harmonia %s", cli_command);
        snprintf(to, sizeof to, "harmonia-dist %s", dcli_command);
        rewind(capture_file);
        char *line = NULL;
        size_t capacity = 0;
        ssize_t n;
        while ((n = getline(&line, &capacity, capture_file)) > 0) {
            bool help = strncmp(line, "Usage: harmonia ", 16) == 0;
            FILE *out = help || strncmp(line, "harmonia", 8) != 0 ? stdout : stderr;
            if (strncmp(line, "Try '", 5) == 0)
                out = stderr;
            char *at = strstr(line, from);
            if (help) {
                fprintf(out, "Usage: mpirun -np N harmonia-dist %s", line + 16);
            } else if (at != NULL) {
                fprintf(out, "%.*s%s%s", (int)(at - line), line, to, at + strlen(from));
            } else {
                fputs(line, out);
            }
        }
        free(line);
    }
    fclose(capture_file);
    capture_file = NULL;
}

/* ---- shared steps ----------------------------------------------------------------------------- */

int dcli_check_output(const char *option, const char *path, const cli_named_path *inputs, size_t n)
{
    int status = 0;
    dcli_capture_begin();
    if (dcli_rank == 0)
        status = cli_check_output(option, path, inputs, n);
    dcli_capture_end();
    MPI_Bcast(&status, 1, MPI_INT, 0, MPI_COMM_WORLD);
    return status;
}

int dcli_load(const char *manifest, bool verify, harmonia_dist **dist_out)
{
    harmonia_dist_config config;
    harmonia_dist_config_init(&config);
    config.verify = verify;
    harmonia_status status = harmonia_dist_load(MPI_COMM_WORLD, manifest, &config, dist_out);
    if (status != HARMONIA_OK)
        return dcli_library_error0(status, harmonia_dist_last_error(NULL), NULL);
    return 0;
}

int dcli_default_threads(const harmonia_dist *dist)
{
    harmonia_dist_info info;
    if (harmonia_dist_get_info(dist, &info) != HARMONIA_OK || info.local_ranks < 1)
        return 0;
    int threads = omp_get_num_procs() / info.local_ranks;
    return threads > 0 ? threads : 1;
}

/* ---- the command table ------------------------------------------------------------------------ */

static const cli_command_entry commands[] = {
    {"build", dcli_cmd_build, "build a sharded index from key,value pairs (each rank reads its part)"},
    {"lookup", dcli_cmd_lookup, "point lookups: the value of each query key"},
    {"lower-bound", dcli_cmd_lower_bound, "the smallest key >= each query, with its value"},
    {"range", dcli_cmd_range, "count (or collect) the keys in each [lo, hi]"},
    {"update", dcli_cmd_update, "apply a batch of inserts, updates and deletes, atomically on every shard"},
    {"info", dcli_cmd_info, "describe a sharded index: splitters, shards, their trees"},
    {"check", dcli_cmd_check, "verify a sharded index (manifest, checksums, every invariant)"},
};

static void print_help(FILE *out)
{
    fprintf(out,
            "Usage: mpirun -np N harmonia-dist <command> [options]\n"
            "\n"
            "Harmonia %s, distributed: one index range-sharded over the N ranks of an MPI job\n"
            "(one rank per GPU; each rank uses the GPU of its node-local rank, or the CPU).\n"
            "\n"
            "Commands:\n",
            HARMONIA_VERSION_STRING);
    cli_print_commands(out, commands, CLI_COUNT_OF(commands));
    fprintf(out,
            "\n"
            "'harmonia-dist <command> --help' shows the options of a command.\n"
            "Data files are those of the harmonia tool (binary records or text lines); each rank\n"
            "reads its part: binary files split by record, text files at line boundaries.\n"
            "Results come out in the order of the input. An index is a manifest (the name given)\n"
            "and one index file per shard beside it; load it on as many ranks as it has shards.\n"
            "Exit status: 0 success, 1 error, 2 bad usage (the same on every rank).\n"
            "\n"
            "Example:\n"
            "  harmonia generate keys --count 1e7 --out pairs.bin\n"
            "  mpirun -np 4 harmonia-dist build --input pairs.bin --out pairs.hdm\n"
            "  harmonia generate queries --keys pairs.bin --count 1e7 --out queries.bin\n"
            "  mpirun -np 4 harmonia-dist lookup --index pairs.hdm --queries queries.bin --out results.txt\n");
}

int main(int argc, char **argv)
{
    int provided = 0;
    LSAN_DISABLE();
    MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
    LSAN_ENABLE();
    MPI_Comm_rank(MPI_COMM_WORLD, &dcli_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &dcli_ranks);
    int status;
    if (argc < 2) {
        if (dcli_rank == 0)
            print_help(stderr);
        status = CLI_EXIT_USAGE;
    } else if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
               strcmp(argv[1], "help") == 0) {
        if (dcli_rank == 0)
            print_help(stdout);
        status = CLI_EXIT_OK;
    } else if (strcmp(argv[1], "--version") == 0) {
        if (dcli_rank == 0)
            printf("harmonia-dist %s\n", HARMONIA_VERSION_STRING);
        status = CLI_EXIT_OK;
    } else {
        const cli_command_entry *command = cli_find_command(commands, CLI_COUNT_OF(commands), argv[1]);
        if (command != NULL) {
            dcli_command = command->name;
            cli_command = command->name;
            status = command->run(argc - 2, argv + 2);
        } else {
            if (dcli_rank == 0)
                fprintf(stderr, "harmonia-dist: unknown command '%s'. Try 'harmonia-dist --help'.\n",
                        argv[1]);
            status = CLI_EXIT_USAGE;
        }
    }
    fflush(stdout);
    LSAN_DISABLE();
    MPI_Finalize();
    LSAN_ENABLE();
    return status;
}
