/* cli_info.c — `harmonia info` (an index's shape and sizes from harmonia_info, the GPU from
 * harmonia_device_probe) and `harmonia check` (load with verification, then harmonia_check).
 * The checking itself is the library's one integrity checker. */
#include <string.h>

#include "cli.h"
#include "cli_progress.h"

static void print_device_text(void)
{
    harmonia_device_info device;
    memset(&device, 0, sizeof device);
    harmonia_status status = harmonia_device_probe(&device);
    if (status != HARMONIA_OK) {
        const char *reason = harmonia_last_error(NULL);
        printf("no GPU: %s\n", reason[0] != '\0' ? reason : harmonia_strerror(status));
        return;
    }
    char b1[32], b2[32], b3[32], b4[32];
    printf("device           %s\n", device.name);
    printf("compute          %d.%d\n", device.compute_major, device.compute_minor);
    printf("SMs              %d\n", device.sm_count);
    printf("L2 cache         %s\n", cli_format_bytes(device.l2_bytes, b1));
    printf("global memory    %s (%s free)\n", cli_format_bytes(device.global_memory_bytes, b2),
           cli_format_bytes(device.free_memory_bytes, b3));
    printf("constant memory  %s\n", cli_format_bytes(device.constant_memory_bytes, b4));
}

static void print_device_json(void)
{
    harmonia_device_info device;
    memset(&device, 0, sizeof device);
    harmonia_status status = harmonia_device_probe(&device);
    if (status != HARMONIA_OK) {
        const char *reason = harmonia_last_error(NULL);
        printf("\"device\":null,\"no_device_reason\":");
        cli_json_string(stdout, reason[0] != '\0' ? reason : harmonia_strerror(status));
        return;
    }
    printf("\"device\":{\"name\":");
    cli_json_string(stdout, device.name);
    printf(",\"compute_capability\":\"%d.%d\",\"sm_count\":%d,\"l2_bytes\":%llu,"
           "\"global_memory_bytes\":%llu,\"free_memory_bytes\":%llu,"
           "\"constant_memory_bytes\":%llu}",
           device.compute_major, device.compute_minor, device.sm_count,
           (unsigned long long)device.l2_bytes, (unsigned long long)device.global_memory_bytes,
           (unsigned long long)device.free_memory_bytes,
           (unsigned long long)device.constant_memory_bytes);
}

static void print_index_text(const char *path, const harmonia_tree_info *info)
{
    char b[32];
    printf("index            %s\n", path);
    printf("key width        %u bits (values too)\n", info->key_bits);
    printf("fanout F         %u\n", info->fanout);
    printf("leaf size L      %u\n", info->leaf_size);
    printf("height           %u level%s\n", info->height, info->height == 1 ? "" : "s");
    printf("keys             %llu\n", (unsigned long long)info->key_count);
    if (info->key_count > 0) {
        printf("min key          %llu\n", (unsigned long long)info->min_key);
        printf("max key          %llu\n", (unsigned long long)info->max_key);
    }
    printf("leaves           %llu (fill %.3f)\n", (unsigned long long)info->leaf_count,
           info->leaf_fill);
    printf("internal nodes   %llu\n", (unsigned long long)info->internal_nodes);
    printf("nodes per level ");
    for (uint32_t l = 0; l < info->height && l < HARMONIA_MAX_LEVELS; l++)
        printf(" %llu", (unsigned long long)info->level_nodes[l]);
    printf("  (root first)\n");
    printf("key region       %s (%llu bytes)\n", cli_format_bytes(info->key_region_bytes, b),
           (unsigned long long)info->key_region_bytes);
    printf("leaf values      %s (%llu bytes)\n", cli_format_bytes(info->leaf_value_bytes, b),
           (unsigned long long)info->leaf_value_bytes);
    printf("prefix sums      %s (%llu bytes)\n", cli_format_bytes(info->prefix_sum_bytes, b),
           (unsigned long long)info->prefix_sum_bytes);
    printf("leaf ranks       %s (%llu bytes)\n", cli_format_bytes(info->leaf_rank_bytes, b),
           (unsigned long long)info->leaf_rank_bytes);
    printf("total            %s (%llu bytes)\n", cli_format_bytes(info->total_bytes, b),
           (unsigned long long)info->total_bytes);
    printf("version          %llu\n", (unsigned long long)info->version);
    if (info->ntg_group_size != 0)
        printf("NTG group size   %u\n", info->ntg_group_size);
    else
        printf("NTG group size   none stored\n");
    printf("storage          %s\n", info->mapped ? "mapped index file" : "host memory");
    printf("constant cut     %u internal level%s, %llu first-child entries in GPU constant memory "
           "(of %u internal levels)\n", info->constant_prefix_levels, info->constant_prefix_levels == 1 ? "" : "s",
           (unsigned long long)info->constant_prefix_entries, info->height > 0 ? info->height - 1 : 0);
}

static void print_index_json(const char *path, const harmonia_tree_info *info)
{
    printf("\"index\":");
    cli_json_string(stdout, path);
    printf(",\"key_bits\":%u,\"fanout\":%u,\"leaf_size\":%u,\"height\":%u,\"keys\":%llu,",
           info->key_bits, info->fanout, info->leaf_size, info->height,
           (unsigned long long)info->key_count);
    if (info->key_count > 0)
        printf("\"min_key\":%llu,\"max_key\":%llu,", (unsigned long long)info->min_key,
               (unsigned long long)info->max_key);
    printf("\"leaves\":%llu,\"internal_nodes\":%llu,\"leaf_fill\":%.6f,\"level_nodes\":[",
           (unsigned long long)info->leaf_count, (unsigned long long)info->internal_nodes,
           info->leaf_fill);
    for (uint32_t l = 0; l < info->height && l < HARMONIA_MAX_LEVELS; l++)
        printf("%s%llu", l == 0 ? "" : ",", (unsigned long long)info->level_nodes[l]);
    printf("],\"key_region_bytes\":%llu,\"leaf_value_bytes\":%llu,\"prefix_sum_bytes\":%llu,"
           "\"leaf_rank_bytes\":%llu,\"total_bytes\":%llu,\"version\":%llu,"
           "\"ntg_group_size\":%u,\"mapped\":%s,\"constant_prefix_levels\":%u,"
           "\"constant_prefix_entries\":%llu",
           (unsigned long long)info->key_region_bytes,
           (unsigned long long)info->leaf_value_bytes,
           (unsigned long long)info->prefix_sum_bytes, (unsigned long long)info->leaf_rank_bytes,
           (unsigned long long)info->total_bytes, (unsigned long long)info->version,
           info->ntg_group_size, info->mapped ? "true" : "false", info->constant_prefix_levels,
           (unsigned long long)info->constant_prefix_entries);
}

int cli_cmd_info(int argc, char **argv)
{
    cli_opt opts[] = {
        {"index", "INDEX", "the index file to describe", NULL},
        {"device", NULL, "describe the GPU (or say why there is none)", NULL},
        {"json", NULL, "print JSON", NULL},
        {"no-verify", NULL, CLI_NO_VERIFY_HELP, NULL},
        {"quiet", NULL, "no progress bar", NULL},
        {"constant-levels", "N", "report the constant cut for N internal levels or all "
                                 "(default 1: the root)", NULL},
    };
    cli_spec spec = {
        "info", "info --index INDEX [--json] | info --device [--json]",
        "Describes an index file (key width, F, L, height, keys, nodes per level, bytes per\n"
        "part, leaf fill) or, with --device, the GPU the library would use. Without a GPU,\n"
        "--device prints 'no GPU: <reason>' and succeeds.",
        opts, CLI_COUNT_OF(opts), NULL};
    int status = cli_parse(&spec, argc, argv, NULL, 0, NULL);
    if (status != 0)
        return status == CLI_HELP_SHOWN ? CLI_EXIT_OK : status;
    const char *index = cli_opt_str(&spec, "index", NULL);
    bool device = cli_opt_given(&spec, "device");
    bool json = cli_opt_given(&spec, "json");
    if (index == NULL && !device)
        return cli_usage_error("give --index INDEX or --device");
    int32_t constant_levels;
    if ((status = cli_opt_constant_levels(&spec, &constant_levels)) != 0)
        return status;
    if (index == NULL && cli_opt_given(&spec, "constant-levels"))
        return cli_usage_error("--constant-levels describes an index: give --index INDEX");

    harmonia_tree *tree = NULL;
    harmonia_tree_info info;
    if (index != NULL) {
        if ((status = cli_load_index(index, !cli_opt_given(&spec, "no-verify"), HARMONIA_LOCK_NONE,
                                     cli_opt_given(&spec, "quiet"), &tree)) != 0)
            return status;
        harmonia_status hs = harmonia_set_constant_levels(tree, constant_levels);
        if (hs == HARMONIA_OK)
            hs = harmonia_info(tree, &info);
        if (hs != HARMONIA_OK) {
            status = cli_library_error(tree, hs, index);
            harmonia_free(tree);
            return status;
        }
        harmonia_free(tree);
    }
    if (json) {
        printf("{");
        if (index != NULL)
            print_index_json(index, &info);
        if (index != NULL && device)
            printf(",");
        if (device)
            print_device_json();
        printf("}\n");
    } else {
        if (index != NULL)
            print_index_text(index, &info);
        if (index != NULL && device)
            printf("\n");
        if (device)
            print_device_text();
    }
    return CLI_EXIT_OK;
}

int cli_cmd_check(int argc, char **argv)
{
    cli_opt opts[] = {
        {"index", "INDEX", "the index file to check (required)", NULL},
        {"json", NULL, "print the verdict as JSON", NULL},
        {"quiet", NULL, "no progress bar; print only failures", NULL},
        {"remove-stale", NULL, "remove the temporary files of killed saves beside the index "
                               "(only unlocked ones: never a running save's)", NULL},
    };
    cli_spec spec = {
        "check", "check --index INDEX [--json] [--remove-stale]",
        "Loads an index file with full verification (sizes, checksums, the integrity\n"
        "checker), then runs the integrity checker on the loaded tree. Prints OK, or the\n"
        "first problem found and exits with status 1. Also reports temporary files of\n"
        "killed saves beside the index (INDEX.tmp.XXXXXX; the next save removes them, or\n"
        "--remove-stale now); they do not change the verdict.",
        opts, CLI_COUNT_OF(opts), NULL};
    int status = cli_parse(&spec, argc, argv, NULL, 0, NULL);
    if (status != 0)
        return status == CLI_HELP_SHOWN ? CLI_EXIT_OK : status;
    const char *index;
    if ((status = cli_opt_required(&spec, "index", &index)) != 0)
        return status;
    bool json = cli_opt_given(&spec, "json");
    bool quiet = cli_opt_given(&spec, "quiet");

    harmonia_tree *tree = NULL;
    harmonia_load_config config;
    harmonia_load_config_init(&config);
    config.verify = true;
    cli_progress progress;
    cli_progress_init(&progress, quiet);
    config.progress = cli_progress_callback;
    config.progress_arg = &progress;
    harmonia_status hs = harmonia_load(index, &config, &tree);
    cli_progress_done(&progress);
    const char *stage = "load";
    char message[1024] = "";
    if (hs != HARMONIA_OK) {
        snprintf(message, sizeof message, "%s", harmonia_last_error(NULL));
    } else {
        stage = "check";
        hs = harmonia_check(tree);
        if (hs != HARMONIA_OK)
            snprintf(message, sizeof message, "%s", harmonia_last_error(tree));
    }
    harmonia_tree_info info;
    memset(&info, 0, sizeof info);
    if (hs == HARMONIA_OK && harmonia_info(tree, &info) != HARMONIA_OK)
        memset(&info, 0, sizeof info);
    harmonia_free(tree);
    bool remove_stale = cli_opt_given(&spec, "remove-stale");

    if (json) {
        printf("{\"command\":\"check\",\"index\":");
        cli_json_string(stdout, index);
        if (hs == HARMONIA_OK) {
            printf(",\"ok\":true,\"keys\":%llu,\"height\":%u",
                   (unsigned long long)info.key_count, info.height);
        } else {
            printf(",\"ok\":false,\"stage\":\"%s\",\"status\":", stage);
            cli_json_string(stdout, harmonia_strerror(hs));
            printf(",\"error\":");
            cli_json_string(stdout, message);
        }
        cli_report_stale_temps(index, remove_stale, stdout);
        printf("}\n");
    } else {
        cli_report_stale_temps(index, remove_stale, NULL);
    }
    if (hs != HARMONIA_OK) {
        size_t len = strlen(index);
        if (message[0] == '\0')
            return cli_error("%s: %s", index, harmonia_strerror(hs));
        if (strncmp(message, index, len) == 0 && message[len] == ':')
            return cli_error("%s (%s)", message, harmonia_strerror(hs));
        return cli_error("%s: %s (%s)", index, message, harmonia_strerror(hs));
    }
    if (!json && !quiet)
        printf("OK: %s: %llu keys, %u-bit, F=%u L=%u, height %u\n", index,
               (unsigned long long)info.key_count, info.key_bits, info.fanout, info.leaf_size,
               info.height);
    return CLI_EXIT_OK;
}
