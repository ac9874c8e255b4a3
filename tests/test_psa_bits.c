/* test_psa_bits.c — the PSA bit choice (Eq. 2 adapted to the keys' span) on hand-computed cases,
 * and the plan of PSA by partition: its shape and the bucket function's order properties, which
 * the GPU search relies on (psa.h), over random spans of both widths. */
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

/* The plan's shape: bits within the span and the cap, passes within their bin limits. */
static void test_plan_shape(void **state)
{
    (void)state;
    /* 2^22 leaves of 16 64-bit keys over the whole 64-bit domain: buckets of PSA_BUCKET_BYTES of
     * keys (64 leaves), 16 bits, two passes */
    psa_plan p = psa_make_plan(0, UINT64_MAX, 1u << 22, 128, 0);
    assert_int_equal(PSA_BUCKET_BYTES, 8192);
    assert_int_equal(p.bits, 16);
    assert_int_equal(p.edges, 0); /* a call sets it (results in query order) */
    /* the same buckets whatever the passes' split and the edges (a bucket table serves both) */
    psa_plan q = p;
    q.edges = 1;
    q.bits1 = p.bits2;
    q.bits2 = p.bits1;
    assert_true(psa_same_buckets(&p, &q));
    q = psa_make_plan(0, UINT64_MAX, 1u << 22, 128, 15);
    assert_false(psa_same_buckets(&p, &q));
    q = psa_make_plan(1, UINT64_MAX, 1u << 22, 128, 0);
    assert_false(psa_same_buckets(&p, &q));
    q = psa_make_plan(0, UINT64_MAX - 1, 1u << 22, 128, 0);
    assert_false(psa_same_buckets(&p, &q));
    assert_int_equal(p.shift, 64 - 16);
    assert_int_equal(p.bits1 + p.bits2, 16);
    assert_true(p.bits1 <= PSA_MAX_PASS_BITS && p.bits2 <= PSA_MAX_PASS_BITS);
    /* few leaves: one pass */
    /* 2^24 leaves of 16 32-bit keys: 128 leaves a bucket, 17 bits; leaves wider than a bucket: one a
     * bucket */
    p = psa_make_plan(0, UINT32_MAX, 1u << 24, 64, 0);
    assert_int_equal(p.bits, 17);
    p = psa_make_plan(0, UINT64_MAX, 1u << 10, 2 * PSA_BUCKET_BYTES, 0);
    assert_int_equal(p.bits, 10);
    p = psa_make_plan(0, UINT64_MAX, 1u << 10, 0, 0);
    assert_int_equal(p.bits, 10);
    p = psa_make_plan(5, 5000000, 1000, 128, 0);
    assert_int_equal(p.bits, 4);
    assert_int_equal(p.bits2, 0);
    /* asked-for bits, capped by PSA_MAX_BITS and by the span's width (a span of 2^8 keys) */
    p = psa_make_plan(0, UINT64_MAX, 1u << 22, 128, 40);
    assert_int_equal(p.bits, PSA_MAX_BITS);
    p = psa_make_plan(1000, 1255, 1u << 22, 128, 0);
    assert_int_equal(p.bits, 8);
    assert_int_equal(p.shift, 0);
    /* one key, or none: no buckets */
    p = psa_make_plan(7, 7, 1, 128, 0);
    assert_int_equal(p.bits, 0);
    assert_int_equal(psa_bucket(&p, 0), 0);
    assert_int_equal(psa_bucket(&p, UINT64_MAX), 0);
}

/* The unordered lookups' plan (psa_unordered_plan, psa_policy.h's PSA_UNORDERED_WIDER_MIN_BITS):
 * one bit fewer — the same span, buckets twice as wide, passes within their limits — for 64-bit
 * plans of that many bits or more; the tree's plan itself for smaller 64-bit plans and for 32-bit
 * keys. */
static void test_unordered_plan(void **state)
{
    (void)state;
    assert_int_equal(PSA_UNORDERED_WIDER_MIN_BITS, 17);
    const struct { uint64_t min, max, leaves; uint32_t leaf_bytes, key_bits, bits, unordered_bits; } cases[] = {
        {0, UINT64_MAX, 1u << 23, 128, 64, 17, 16},  /* 2^27 64-bit keys */
        {0, UINT64_MAX, 1u << 24, 64, 64, 17, 16},   /* 2^27 in leaves of 8 */
        {0, UINT64_MAX, (1u << 22) + 1, 128, 64, 17, 16}, /* one leaf more than 2^22: 17 bits */
        {0, UINT64_MAX, 1u << 25, 128, 64, 19, 18},  /* the cap */
        {0, UINT64_MAX, 1u << 22, 128, 64, 16, 16},  /* below the bound (2^26 keys): the tree's plan */
        {0, UINT64_MAX, 1u << 21, 128, 64, 15, 15},
        {0, UINT64_MAX, 1u << 19, 128, 64, 13, 13},
        {0, UINT32_MAX, 1u << 24, 64, 32, 17, 17},   /* 32-bit keys keep the tree's plan */
        {7, 7, 1, 128, 64, 0, 0},                     /* one key: no buckets either way */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const psa_plan p = psa_make_plan(cases[i].min, cases[i].max, cases[i].leaves, cases[i].leaf_bytes, 0);
        assert_int_equal(p.bits, cases[i].bits);
        const psa_plan u = psa_unordered_plan(&p, cases[i].key_bits, cases[i].leaves, cases[i].leaf_bytes);
        assert_int_equal(u.bits, cases[i].unordered_bits);
        assert_true(u.key_min == p.key_min && u.key_max == p.key_max);
        assert_int_equal(u.bits1 + u.bits2, u.bits);
        assert_true(u.bits1 <= PSA_MAX_PASS1_BITS && u.bits2 <= PSA_MAX_PASS_BITS);
        assert_int_equal(psa_same_buckets(&p, &u), u.bits == p.bits);
        assert_int_equal(psa_unordered_wider(cases[i].key_bits, p.bits), u.bits != p.bits);
        if (u.bits && u.bits != p.bits) { /* bucket b of the wider plan = buckets 2b and 2b + 1 */
            assert_int_equal(u.shift, p.shift + 1);
            const uint64_t probes[] = {0, 1, cases[i].max / 3, cases[i].max / 2 + 12345, cases[i].max - 1, cases[i].max};
            for (size_t k = 0; k < sizeof probes / sizeof probes[0]; k++)
                assert_int_equal(psa_bucket(&u, probes[k]), psa_bucket(&p, probes[k]) / 2);
        }
    }
}

/* The auto policy's choice between the staged search (psa_pays) and the descent path
 * (psa_descent_pays) for lookups, unordered and in query order, at the bounds psa_policy.h gives,
 * and the descent path's plan: one pass on psa_descent_bits(width) bits of the span (fewer where it is
 * narrower). */
static void test_descent_or_partition(void **state)
{
    (void)state;
    const uint64_t leaves = 1u << 22; /* 2^26 keys in leaves of 16 */
    for (unsigned bits = 32; bits <= 64; bits += 32) {
        /* sparse windows: the descent path, from PSA_DESCENT_MIN_WINDOW on */
        assert_true(psa_descent_pays(leaves, leaves, bits, true));
        assert_false(psa_pays(leaves, leaves));
        assert_false(psa_descent_pays(PSA_DESCENT_MIN_WINDOW - 1, leaves, bits, true));
        assert_true(psa_descent_pays(PSA_DESCENT_MIN_WINDOW, leaves, bits, true));
        /* dense windows: the staged search */
        assert_true(psa_pays(4 * leaves, leaves));
        assert_false(psa_descent_pays(4 * leaves, leaves, bits, true));
        assert_false(psa_descent_pays(5 * leaves, leaves, bits, false));
    }
    assert_false(psa_descent_pays(3 * leaves, leaves, 32, true));
    /* from 2 to 4 queries a leaf: the descent path for 64-bit keys, the staged search for 32-bit */
    assert_true(psa_pays(2 * leaves, leaves));
    assert_true(psa_descent_pays(2 * leaves, leaves, 64, true));
    assert_false(psa_descent_pays(2 * leaves, leaves, 32, true));
    assert_true(psa_descent_pays(4 * leaves - 1, leaves, 64, true));
    assert_false(psa_descent_pays(4 * leaves, leaves, 64, true));
    assert_true(psa_descent_pays(2 * leaves - 1, leaves, 32, true));
    /* results in query order: 32-bit keys below 2.5 queries a leaf, 64-bit keys below 4.5; lower
     * bounds of 32-bit keys below 1.5 a leaf, of 64-bit keys never */
    assert_true(psa_descent_pays(leaves - 1, leaves, 32, false));
    assert_true(psa_descent_pays(leaves, leaves, 32, false));
    assert_true(psa_descent_pays(2 * leaves, leaves, 32, false));
    assert_true(psa_descent_pays(5 * leaves / 2 - 1, leaves, 32, false));
    assert_false(psa_descent_pays(5 * leaves / 2, leaves, 32, false));
    assert_true(psa_descent_lower_bound_pays(leaves - 1, leaves, 32));
    assert_true(psa_descent_lower_bound_pays(leaves, leaves, 32));
    assert_true(psa_descent_lower_bound_pays(3 * leaves / 2 - 1, leaves, 32));
    assert_false(psa_descent_lower_bound_pays(3 * leaves / 2, leaves, 32));
    assert_false(psa_descent_lower_bound_pays(PSA_DESCENT_MIN_WINDOW - 1, leaves, 32));
    assert_false(psa_descent_lower_bound_pays(PSA_DESCENT_MIN_WINDOW, leaves, 64));
    assert_false(psa_descent_lower_bound_pays(leaves - 1, leaves, 64));
    assert_false(psa_descent_pays(PSA_DESCENT_MIN_WINDOW - 1, leaves, 32, false));
    assert_false(psa_descent_pays(PSA_DESCENT_MIN_WINDOW - 1, leaves, 64, false));
    assert_true(psa_descent_pays(PSA_DESCENT_MIN_WINDOW, leaves, 64, false));
    assert_true(psa_descent_pays(leaves / 4 + PSA_DESCENT_MIN_WINDOW, leaves, 64, false));
    assert_true(psa_descent_pays(2 * leaves, leaves, 64, false));
    assert_true(psa_descent_pays(4 * leaves, leaves, 64, false));
    assert_true(psa_descent_pays(9 * leaves / 2 - 1, leaves, 64, false));
    assert_false(psa_descent_pays(9 * leaves / 2, leaves, 64, false));
    assert_true(psa_descent_lower_bound(32));
    assert_false(psa_descent_lower_bound(64));
    /* the plan: one pass of psa_descent_bits(width) bits over the span (7 for 64-bit keys, 8 for
     * 32-bit), whatever the full plan's bits */
    assert_int_equal(psa_descent_bits(64), PSA_DESCENT_BITS_64);
    assert_int_equal(psa_descent_bits(32), PSA_DESCENT_BITS_32);
    assert_true(PSA_DESCENT_BITS_64 <= PSA_MAX_PASS1_BITS && PSA_DESCENT_BITS_32 <= PSA_MAX_PASS1_BITS);
    for (uint32_t width = 32; width <= 64; width += 32) {
        const uint32_t bits = psa_descent_bits(width);
        const uint64_t top = width == 64 ? UINT64_MAX : UINT32_MAX;
        const psa_plan full = psa_make_plan(1000, top - 5, leaves, 128, 0);
        assert_true(full.bits2 > 0);
        psa_plan p = psa_descent_plan(&full, width, leaves, 128);
        assert_int_equal(p.bits, bits);
        assert_int_equal(p.bits1, bits);
        assert_int_equal(p.bits2, 0);
        assert_true(p.key_min == 1000 && p.key_max == top - 5);
        assert_int_equal(psa_bucket(&p, 0), 0);
        assert_int_equal(psa_bucket(&p, top), (1u << bits) - 1);
        /* a span of 5 bits: 5 bits */
        const psa_plan narrow = psa_make_plan(64, 64 + 31, 8, 128, 0);
        p = psa_descent_plan(&narrow, width, 8, 128);
        assert_int_equal(p.bits, 5);
        assert_int_equal(p.bits2, 0);
    }
}

/* What the search needs of the bucket function (psa.h): buckets are monotone in q; every q of
 * bucket u is >= psa_bucket_start(u) and, unless u is the last bucket, < psa_bucket_start(u + 1);
 * q <= key_min is bucket 0 and q >= key_max the last. */
static void check_bucket_order(const psa_plan *p, uint64_t q)
{
    const uint32_t u = psa_bucket(p, q);
    const uint64_t last = ((uint64_t)1 << p->bits) - 1;
    assert_true(u <= last);
    assert_true(q >= psa_bucket_start(p, u) || q <= p->key_min);
    if (u < last)
        assert_true(q < psa_bucket_start(p, u + 1));
    if (q <= p->key_min)
        assert_int_equal(u, 0);
    if (q >= p->key_max)
        assert_int_equal(u, last);
    if (q > 0)
        assert_true(psa_bucket(p, q - 1) <= u);
}

static void test_bucket_order(void **state)
{
    (void)state;
    uint64_t rng = 77;
    for (int round = 0; round < 4000; round++) {
        const uint32_t width = round % 2 ? 64 : 32;
        const uint64_t mask = tu_mask(width);
        uint64_t a = tu_next(&rng) & mask, b = tu_next(&rng) & mask;
        switch (round % 5) {
        case 0: a = 0, b = mask; break;                      /* the whole domain */
        case 1: b = a + tu_next(&rng) % 100000; break;        /* a narrow span */
        case 2: a = mask - tu_next(&rng) % 1000, b = mask; break; /* at the top */
        default: break;
        }
        b &= mask;
        if (a > b) {
            const uint64_t t = a;
            a = b, b = t;
        }
        const psa_plan p = psa_make_plan(a, b, 1 + tu_next(&rng) % (1u << 24), 32u << (round % 6),
                                           round % 3 ? 0 : 1 + tu_next(&rng) % 25);
        assert_true(p.bits <= PSA_MAX_BITS);
        assert_int_equal(p.bits1 + p.bits2, p.bits);
        for (int k = 0; k < 40; k++) {
            uint64_t q = tu_next(&rng) & mask;
            if (k % 4 == 1)
                q = a + (b - a == UINT64_MAX ? tu_next(&rng) : b > a ? tu_next(&rng) % (b - a + 1) : 0);
            if (k == 2) q = 0;
            if (k == 3) q = mask;
            if (k == 4) q = a;
            if (k == 5) q = b;
            if (k == 6 && p.bits) q = psa_bucket_start(&p, tu_next(&rng) % ((uint64_t)1 << p.bits));
            check_bucket_order(&p, q);
        }
        /* starts are non-decreasing */
        for (uint64_t u = 0; p.bits && u < ((uint64_t)1 << p.bits) && u < 64; u++)
            assert_true(psa_bucket_start(&p, u) <= psa_bucket_start(&p, u + 1));
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_paper_example),
        cmocka_unit_test(test_dense_span),
        cmocka_unit_test(test_degenerate),
        cmocka_unit_test(test_plan_shape),
        cmocka_unit_test(test_bucket_order),
        cmocka_unit_test(test_descent_or_partition),
        cmocka_unit_test(test_unordered_plan),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
