/* test_psa_bits.c — the PSA bit choice (Eq. 2 adapted to the keys' span) on hand-computed cases. */
#include "tests/test_util.h"
#include "psa/psa.h"

static void test_paper_example(void **state)
{
    (void)state;
    /* the paper: 64-bit keys over the whole domain, T = 2^23, K = 16 per 128-byte line: N = 19 */
    psa_bits b = psa_choose_bits(1ull << 23, 64, 0, UINT64_MAX);
    assert_int_equal(b.end_bit, 64);
    assert_int_equal(b.end_bit - b.begin_bit, 19);
    /* 32-bit keys: K = 32 per line, T = 2^28: N = 23 */
    b = psa_choose_bits(1ull << 28, 32, 0, UINT32_MAX);
    assert_int_equal(b.end_bit, 32);
    assert_int_equal(b.begin_bit, 9);
}

static void test_dense_span(void **state)
{
    (void)state;
    /* dense ids 1000 .. 1000 + 2^20: the span's top bit is bit 20, N = log2(2^20 / 16) = 16 */
    psa_bits b = psa_choose_bits(1ull << 20, 64, 1000, 1000 + (1ull << 20) - 1);
    assert_int_equal(b.end_bit, 21);
    assert_int_equal(b.end_bit - b.begin_bit, 16);
    /* top bits all equal: keys 0xFFFF0000_00000000 + small */
    b = psa_choose_bits(4096, 64, 0xFFFF000000000000ull, 0xFFFF000000000FFFull);
    assert_int_equal(b.end_bit, 12);
    assert_int_equal(b.begin_bit, 4);
}

static void test_degenerate(void **state)
{
    (void)state;
    psa_bits b = psa_choose_bits(0, 64, 0, 0);
    assert_int_equal(b.end_bit, 0);
    b = psa_choose_bits(1, 32, 7, 7);
    assert_int_equal(b.end_bit, 0);
    b = psa_choose_bits(2, 64, 6, 7); /* two keys in one line: still one bit */
    assert_int_equal(b.end_bit, 1);
    assert_int_equal(b.begin_bit, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_paper_example),
        cmocka_unit_test(test_dense_span),
        cmocka_unit_test(test_degenerate),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
