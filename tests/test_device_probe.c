/* test_device_probe.c — the GPU probe: skipped (exit 77) without a usable GPU, otherwise the
 * reported name, SM count, L2 and memory must be plausible. */
#include "tests/test_util.h"

static harmonia_device_info probed;

static void test_probe_fields(void **state)
{
    (void)state;
    assert_true(strlen(probed.name) > 0);
    assert_true(probed.sm_count > 0);
    assert_true(probed.l2_bytes >= (1u << 20));
    assert_true(probed.global_memory_bytes >= probed.free_memory_bytes);
    assert_true(probed.free_memory_bytes > 0);
    assert_true(probed.constant_memory_bytes >= 64 * 1024);
}

int main(void)
{
    if (harmonia_device_probe(&probed) != HARMONIA_OK) {
        printf("SKIP: no GPU: %s\n", harmonia_last_error(NULL));
        return 77;
    }
    printf("GPU: %s, %d SMs\n", probed.name, probed.sm_count);
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_probe_fields)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
