/* kr_sort_impl.h — the stable MSD radix sort of records by an unsigned key, for one record type:
 * included (not a header) with KS_REC (the record type, with a field `key`), KS_KEY_T (its key
 * type), KS_SRC (the source type the first pass reads) and KS_SRC_KEY(src, i) / KS_SRC_REC(src, i)
 * (key and record i of the source), and KS_FN(name) (the name suffix) defined. kr_sort.c
 * instantiates it for (key, value) pairs; cpu_update/ for the updater's operation records.
 *
 * THE ALGORITHM (bench/NOTES.md, "Issue 15", has the measurements behind the numbers)
 *  1. One pass over the source: the bits where keys differ (OR of key ^ first key) and the
 *     per-thread histograms of the top digit of the key width. Where the keys' span is narrower
 *     (the top bits all equal) a second counting pass takes the top digit of the bits that differ.
 *  2. Scatter (parallel, stable: thread t's records of bucket b follow thread t-1's) from the source
 *     into out[]: one pass over DRAM, into 2^d buckets, d chosen so that a bucket holds about
 *     KS_LOCAL / 2 records and fits the core's L2 cache.
 *  3. Each bucket, in parallel (dynamic schedule): sorted in cache by recursive MSD passes between
 *     its region of out[] and a per-thread scratch of KS_LOCAL records, each pass on the bits that
 *     still differ, down to insertion sorts of a few records; then visit(bucket) sees it sorted.
 *     A bucket larger than KS_LOCAL but at most KS_THREAD_BUCKET records (the digit is at most
 *     KS_MAX_DIGIT bits: from 2^27 pairs of 16 bytes on, every bucket is) is split once more by its
 *     thread, into that thread's mid buffer, into pieces of about KS_LOCAL / 2, each then
 *     sorted in cache as above (the bucket's region is only read: it stays clean in the cache).
 *     Larger buckets (skewed keys) are sorted the same way, from step 1, by the whole team, between
 *     their region and a DRAM scratch.
 *  Stable at every step, so equal keys keep their source order. */

#ifndef KS_LOCAL
#error "define KS_LOCAL (records a bucket sorted in cache may hold) before including kr_sort_impl.h"
#endif

/* Called with each bucket sorted: its first position in the whole order, the sorted records (in
 * out[] or in the thread's scratch) and their count, and the calling thread's number. */
typedef void (*KS_FN(visit_fn))(void *arg, uint64_t begin, const void *sorted, uint64_t count, int thread);

static inline unsigned KS_FN(log2_floor)(uint64_t x) { return 63u - (unsigned)__builtin_clzll(x); }

/* Bits [0, hi) where keys of a[0..n) differ: the highest differing bit + 1 (0 when all are equal). */
static unsigned KS_FN(differing_bits)(const KS_REC *a, uint64_t n)
{
    KS_KEY_T diff = 0, first = a[0].key;
    for (uint64_t i = 1; i < n; i++)
        diff |= a[i].key ^ first;
    return diff ? KS_FN(log2_floor)((uint64_t)diff) + 1 : 0;
}

/* Stable insertion sort by key (only strictly greater records move). */
static void KS_FN(insertion)(KS_REC *a, uint64_t n)
{
    for (uint64_t i = 1; i < n; i++) {
        if (!(a[i].key < a[i - 1].key))
            continue;
        KS_REC x = a[i];
        uint64_t j = i;
        do {
            a[j] = a[j - 1];
            j--;
        } while (j > 0 && x.key < a[j - 1].key);
        a[j] = x;
    }
}

/* Tuning (bench/NOTES.md, "Issue 15", has the measurements behind them) */
#define KS_SMALL 24            /* at most this many records: insertion sort */
#define KS_LOCAL_DIGIT 11      /* the widest digit of an in-cache pass (its counters on the stack) */
#define KS_MAX_DIGIT 12        /* the widest digit of a pass over DRAM */
#define KS_THREAD_BUCKET (8 * (uint64_t)KS_LOCAL) /* the largest bucket one thread sorts, through
                                                     its mid buffer; larger: a nested team level */

static void KS_FN(sort_inplace)(KS_REC *buf, KS_REC *scratch, uint64_t n, unsigned hi);

/* The digit of an in-cache pass over n records: about 4 records a bucket. */
static inline unsigned KS_FN(local_digit)(uint64_t n)
{
    unsigned d = KS_FN(log2_floor)(n) - 2;
    return d > KS_LOCAL_DIGIT ? KS_LOCAL_DIGIT : d < 1 ? 1 : d;
}

/* One in-cache MSD pass: scatters from[0..n) into to[0..n) by the top digit (d bits, 1 <= d <=
 * KS_LOCAL_DIGIT, fewer where fewer differ) of the bits that differ below hi; ends[b] = the end of
 * bucket b. Returns the bucket count, or 0 when every key is equal (nothing moved). *shift_out: the
 * bits left below the digit. */
static uint32_t KS_FN(local_pass)(const KS_REC *from, KS_REC *to, uint64_t n, unsigned hi, unsigned d,
                                  uint32_t *ends, unsigned *shift_out)
{
    unsigned differ = KS_FN(differing_bits)(from, n);
    hi = differ < hi ? differ : hi;
    if (hi == 0)
        return 0;
    d = d > hi ? hi : d;
    const unsigned shift = hi - d;
    const uint32_t buckets = 1u << d, mask = buckets - 1;
    memset(ends, 0, buckets * sizeof ends[0]);
    for (uint64_t i = 0; i < n; i++)
        ends[(from[i].key >> shift) & mask]++;
    uint32_t sum = 0;
    for (uint32_t b = 0; b < buckets; b++) {
        uint32_t count = ends[b];
        ends[b] = sum;
        sum += count;
    }
    for (uint64_t i = 0; i < n; i++)
        to[ends[(from[i].key >> shift) & mask]++] = from[i];
    *shift_out = shift;
    return buckets;
}

/* Sorts src[0..n) (keys equal above bit hi) stably into dst[0..n); src is clobbered. */
static void KS_FN(sort_into)(KS_REC *src, KS_REC *dst, uint64_t n, unsigned hi)
{
    uint32_t ends[1u << KS_LOCAL_DIGIT];
    unsigned shift = 0;
    uint32_t buckets =
        n <= KS_SMALL || hi == 0 ? 0 : KS_FN(local_pass)(src, dst, n, hi, KS_FN(local_digit)(n), ends, &shift);
    if (buckets == 0) {
        memcpy(dst, src, n * sizeof(KS_REC));
        if (n <= KS_SMALL && hi > 0)
            KS_FN(insertion)(dst, n);
        return;
    }
    uint32_t begin = 0;
    for (uint32_t b = 0; b < buckets; b++) {
        if (ends[b] - begin > 1)
            KS_FN(sort_inplace)(dst + begin, src + begin, ends[b] - begin, shift);
        begin = ends[b];
    }
}

/* Sorts buf[0..n) (keys equal above bit hi) stably in place, with scratch[0..n). */
static void KS_FN(sort_inplace)(KS_REC *buf, KS_REC *scratch, uint64_t n, unsigned hi)
{
    if (n <= KS_SMALL) {
        if (hi > 0)
            KS_FN(insertion)(buf, n);
        return;
    }
    uint32_t ends[1u << KS_LOCAL_DIGIT];
    unsigned shift = 0;
    uint32_t buckets = hi == 0 ? 0 : KS_FN(local_pass)(buf, scratch, n, hi, KS_FN(local_digit)(n), ends, &shift);
    uint32_t begin = 0;
    for (uint32_t b = 0; b < buckets; b++) {
        if (ends[b] > begin)
            KS_FN(sort_into)(scratch + begin, buf + begin, ends[b] - begin, shift);
        begin = ends[b];
    }
}

/* What the parallel levels share. */
typedef struct KS_FN(ctx) {
    KS_REC *local;        /* threads * KS_LOCAL records: each thread's scratch for in-cache sorts */
    int threads;
    KS_FN(visit_fn) visit;
    void *arg;
    bool result_in_out;   /* sort each bucket into its own place in out[] (the caller keeps the
                             sorted array), not into the thread's scratch (where the caller only
                             reads it: out[] then stays clean in the cache, no write-back) */
} KS_FN(ctx);

/* One thread sorts and visits bucket[0..n) (its records' global positions from base; keys equal
 * above bit hi), larger than its cache scratch: split by the top digit of the bits that differ into
 * mid[0..n), in pieces of about KS_LOCAL / 2 (at most 2^KS_LOCAL_DIGIT of them), then each piece
 * sorted in cache into the thread's scratch (or back into bucket[], for the caller that keeps the
 * sorted array, and for a piece still larger than the scratch: keys that cluster) and visited. */
static void KS_FN(sort_large)(const KS_FN(ctx) *c, KS_REC *bucket, KS_REC *mid, uint64_t n, unsigned hi,
                              uint64_t base, int thread)
{
    uint32_t ends[1u << KS_LOCAL_DIGIT];
    unsigned shift = 0;
    unsigned d = KS_FN(log2_floor)(n / (KS_LOCAL / 2)) + 1;
    d = d > KS_LOCAL_DIGIT ? KS_LOCAL_DIGIT : d;
    uint32_t pieces = hi == 0 ? 0 : KS_FN(local_pass)(bucket, mid, n, hi, d, ends, &shift);
    if (pieces == 0) { /* every key equal: already in order */
        c->visit(c->arg, base, bucket, n, thread);
        return;
    }
    KS_REC *scratch = c->local + (size_t)thread * KS_LOCAL;
    uint32_t begin = 0;
    for (uint32_t b = 0; b < pieces; b++) {
        const uint32_t m = ends[b] - begin;
        if (m == 0)
            continue;
        const KS_REC *sorted = mid + begin;
        if (m > 1 && shift > 0) {
            KS_REC *to = c->result_in_out || m > KS_LOCAL ? bucket + begin : scratch;
            KS_FN(sort_into)(mid + begin, to, m, shift);
            sorted = to;
        }
        c->visit(c->arg, base + begin, sorted, m, thread);
        begin = ends[b];
    }
}

/* One parallel level: partitions n records (src when in is NULL, else in[]) into out[] by 2^d buckets
 * of the top bits that differ below bit hi, then sorts and visits each bucket (big ones by a nested
 * level between out[] and alt[], small ones in cache, in parallel). alt: n records at the same
 * offsets as out, or NULL (then one is allocated if a bucket needs it). base: the global position of
 * record 0. Called from outside any parallel region. NO_MEMORY is the only failure. */
static harmonia_status KS_FN(partition)(const KS_FN(ctx) *c, const KS_SRC *src, const KS_REC *in, uint64_t n,
                                        unsigned hi, KS_REC *out, KS_REC *alt, uint64_t base)
{
    if (n == 0)
        return HARMONIA_OK;
    if (n <= KS_LOCAL) { /* one bucket, sorted by the calling thread */
        for (uint64_t i = 0; i < n; i++)
            out[i] = in ? in[i] : KS_SRC_REC(src, i);
        const KS_REC *sorted = out;
        if (n > 1 && hi > 0 && c->result_in_out) {
            KS_FN(sort_inplace)(out, c->local, n, hi);
        } else if (n > 1 && hi > 0) {
            KS_FN(sort_into)(out, c->local, n, hi);
            sorted = c->local;
        }
        c->visit(c->arg, base, sorted, n, 0);
        return HARMONIA_OK;
    }
    /* d: buckets of about KS_LOCAL / 2 records, at most 2^KS_MAX_DIGIT */
    unsigned d = KS_FN(log2_floor)(n / (KS_LOCAL / 2)) + 1;
    d = d > KS_MAX_DIGIT ? KS_MAX_DIGIT : d;
    const int nt = c->threads;
    const uint64_t max_buckets = 1ull << d;
    uint64_t *hist = kr_malloc(((size_t)nt + 1) * max_buckets * sizeof(uint64_t));
    if (!hist)
        return HARMONIA_ERR_NO_MEMORY;
    KS_KEY_T team_diff = 0;
    unsigned shift = 0;
    uint64_t buckets = 0;
    /* pass 1: differing bits and the histogram of the top digit below hi (recounted when the bits
     * that differ end lower); pass 2: the stable scatter */
#pragma omp parallel num_threads(nt)
    {
        const int t = omp_get_thread_num(), team = omp_get_num_threads();
        const uint64_t lo = n * (uint64_t)t / (uint64_t)team, end = n * (uint64_t)(t + 1) / (uint64_t)team;
        uint64_t *mine = hist + (size_t)t * max_buckets;
        const KS_KEY_T first = in ? in[0].key : KS_SRC_KEY(src, 0);
        const unsigned guess = hi > d ? hi - d : 0;
        KS_KEY_T diff = 0;
        memset(mine, 0, max_buckets * sizeof(uint64_t));
        if (in)
            for (uint64_t i = lo; i < end; i++) {
                KS_KEY_T k = in[i].key;
                diff |= k ^ first;
                mine[((uint64_t)k >> guess) & (max_buckets - 1)]++;
            }
        else
            for (uint64_t i = lo; i < end; i++) {
                KS_KEY_T k = KS_SRC_KEY(src, i);
                diff |= k ^ first;
                mine[((uint64_t)k >> guess) & (max_buckets - 1)]++;
            }
#pragma omp atomic /* not a named critical: its lock would be a global symbol of the library */
        team_diff |= diff;
#pragma omp barrier
#pragma omp single
        {
            unsigned top = team_diff ? KS_FN(log2_floor)((uint64_t)team_diff) + 1 : 0;
            hi = top < hi ? top : hi;
            unsigned dd = d > hi ? hi : d;
            shift = hi - dd;
            buckets = 1ull << dd;
        }
        if (shift != guess || buckets != max_buckets) { /* the span is narrower: count again */
            memset(mine, 0, max_buckets * sizeof(uint64_t));
            if (in)
                for (uint64_t i = lo; i < end; i++)
                    mine[((uint64_t)in[i].key >> shift) & (buckets - 1)]++;
            else
                for (uint64_t i = lo; i < end; i++)
                    mine[((uint64_t)KS_SRC_KEY(src, i) >> shift) & (buckets - 1)]++;
        }
#pragma omp barrier
#pragma omp single
        {
            uint64_t sum = 0;
            for (uint64_t b = 0; b < buckets; b++)
                for (int u = 0; u < team; u++) {
                    uint64_t count = hist[(size_t)u * max_buckets + b];
                    hist[(size_t)u * max_buckets + b] = sum;
                    sum += count;
                }
            /* the last row (nt) keeps each bucket's start */
            for (uint64_t b = 0; b < buckets; b++)
                hist[(size_t)nt * max_buckets + b] = hist[b];
        }
        const uint64_t bmask = buckets - 1;
        if (in)
            for (uint64_t i = lo; i < end; i++) {
                KS_REC r = in[i];
                out[mine[((uint64_t)r.key >> shift) & bmask]++] = r;
            }
        else
            for (uint64_t i = lo; i < end; i++) {
                KS_REC r = KS_SRC_REC(src, i);
                out[mine[((uint64_t)r.key >> shift) & bmask]++] = r;
            }
    }
    const uint64_t *start = hist + (size_t)nt * max_buckets;
#define KS_BUCKET_END(b) ((b) + 1 < buckets ? start[(b) + 1] : n)
    harmonia_status st = HARMONIA_OK;
    if (buckets == 1 && shift == 0 && hi == 0) { /* every key equal: one run, already in order */
        c->visit(c->arg, base, out, n, 0);
        free(hist);
        return HARMONIA_OK;
    }
    /* buckets too large for one thread: a nested level each, by the whole team */
    KS_REC *own_alt = NULL;
    for (uint64_t b = 0; b < buckets && st == HARMONIA_OK; b++) {
        uint64_t begin = start[b], m = KS_BUCKET_END(b) - begin;
        if (m <= KS_THREAD_BUCKET)
            continue;
        KS_REC *to = alt ? alt + begin : NULL;
        if (!to) {
            if (!own_alt) { /* as large as the largest such bucket */
                uint64_t largest = 0;
                for (uint64_t e = b; e < buckets; e++)
                    if (KS_BUCKET_END(e) - start[e] > largest)
                        largest = KS_BUCKET_END(e) - start[e];
                own_alt = kr_malloc(largest * sizeof(KS_REC));
                if (!own_alt) {
                    st = HARMONIA_ERR_NO_MEMORY;
                    break;
                }
            }
            to = own_alt;
        }
        st = KS_FN(partition)(c, NULL, out + begin, m, shift, to, out + begin, base + begin);
    }
    free(own_alt);
    /* the mid buffers: one a thread, as large as the largest bucket between the cache scratch and
     * KS_THREAD_BUCKET (at most 4 MiB: below kr_malloc's huge-page size, so 4 KiB pages, each first
     * touched by its own thread) */
    uint64_t largest_mid = 0;
    for (uint64_t b = 0; b < buckets; b++) {
        uint64_t m = KS_BUCKET_END(b) - start[b];
        if (m > KS_LOCAL && m <= KS_THREAD_BUCKET && m > largest_mid)
            largest_mid = m;
    }
    KS_REC **mid = NULL;
    if (st == HARMONIA_OK && largest_mid > 0) {
        mid = kr_calloc((size_t)nt, sizeof *mid);
        for (int u = 0; mid && u < nt && st == HARMONIA_OK; u++)
            if (!(mid[u] = kr_malloc(largest_mid * sizeof(KS_REC))))
                st = HARMONIA_ERR_NO_MEMORY;
        if (!mid)
            st = HARMONIA_ERR_NO_MEMORY;
    }
    if (st == HARMONIA_OK) {
#pragma omp parallel for schedule(dynamic, 1) num_threads(nt)
        for (uint64_t b = 0; b < buckets; b++) {
            uint64_t begin = start[b], m = KS_BUCKET_END(b) - begin;
            if (m == 0 || m > KS_THREAD_BUCKET)
                continue;
            const int t = omp_get_thread_num();
            if (m > KS_LOCAL) {
                KS_FN(sort_large)(c, out + begin, mid[t], m, shift, base + begin, t);
                continue;
            }
            const KS_REC *sorted = out + begin;
            if (m > 1 && shift > 0) {
                KS_REC *scratch = c->local + (size_t)t * KS_LOCAL;
                if (c->result_in_out) {
                    KS_FN(sort_inplace)(out + begin, scratch, m, shift);
                } else {
                    KS_FN(sort_into)(out + begin, scratch, m, shift);
                    sorted = scratch;
                }
            }
            c->visit(c->arg, base + begin, sorted, m, t);
        }
    }
#undef KS_BUCKET_END
    for (int u = 0; mid && u < nt; u++)
        free(mid[u]);
    free(mid);
    free(hist);
    return st;
}
