/* concurrent_harness.h — queries during updates (issue 15, item 2), shared by test_concurrent.c (the
 * CPU engine) and test_gpu_concurrent.c (the GPU engine): a sequence of update batches (updates in
 * place, inserts and deletes, dense inserts that split leaves, a deleted range that removes leaves,
 * upserts) whose every version is precomputed with a plain sorted-array model, together with the
 * answers of a fixed query set under each version; query threads loop over lookups, lower bounds and
 * range counts while the main thread applies the batches, and each call's whole result must equal
 * the answers of one version that was published during the call (never a mix, never one older than
 * the thread saw before). Header-only; the engine-specific calls come through hc_run. */
#ifndef HARMONIA_CONCURRENT_HARNESS_H
#define HARMONIA_CONCURRENT_HARNESS_H

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>

#include "tests/test_util.h"

#define HC_KEYS 24000      /* the initial tree */
#define HC_BATCHES 14      /* versions 1 .. HC_BATCHES after the initial 0 */
#define HC_QUERIES 3000    /* per call */
#define HC_CALLS_PER_VERSION 6 /* calls every thread completes on each version before the next batch */

typedef enum { HC_LOOKUP, HC_LOWER_BOUND, HC_RANGE_COUNT, HC_KINDS } hc_kind;

/* One version's answers to the query set. */
typedef struct hc_answers {
    uint64_t values[HC_QUERIES];
    uint8_t found[HC_QUERIES];
    uint64_t lb_keys[HC_QUERIES], lb_values[HC_QUERIES];
    uint8_t lb_found[HC_QUERIES];
    uint64_t counts[HC_QUERIES];
} hc_answers;

typedef struct hc_batch {
    uint64_t count;
    uint8_t *kinds;
    uint64_t *keys, *values;
} hc_batch;

typedef struct hc_world {
    tu_model versions[HC_BATCHES + 1];
    hc_batch batches[HC_BATCHES + 1]; /* batches[v] makes version v (v >= 1) */
    hc_answers *answers;              /* HC_BATCHES + 1 */
    uint64_t queries[HC_QUERIES], lo[HC_QUERIES], hi[HC_QUERIES];
} hc_world;

/* The model after one operation (keys ascending, values alongside; room for one more key). */
static void hc_apply_op(tu_model *m, uint8_t kind, uint64_t key, uint64_t value)
{
    uint64_t lo = 0, hi = m->n;
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo) / 2;
        if (m->keys[mid] < key)
            lo = mid + 1;
        else
            hi = mid;
    }
    const bool present = lo < m->n && m->keys[lo] == key;
    if (kind == HARMONIA_OP_DELETE) {
        if (present) {
            memmove(m->keys + lo, m->keys + lo + 1, (m->n - lo - 1) * sizeof(uint64_t));
            memmove(m->values + lo, m->values + lo + 1, (m->n - lo - 1) * sizeof(uint64_t));
            m->n--;
        }
        return;
    }
    if (present) {
        m->values[lo] = value;
        return;
    }
    memmove(m->keys + lo + 1, m->keys + lo, (m->n - lo) * sizeof(uint64_t));
    memmove(m->values + lo + 1, m->values + lo, (m->n - lo) * sizeof(uint64_t));
    m->keys[lo] = key;
    m->values[lo] = value;
    m->n++;
}

static void hc_copy_model(tu_model *dst, const tu_model *src, uint64_t room)
{
    dst->key_bits = 64;
    dst->n = src->n;
    dst->keys = malloc((src->n + room) * sizeof(uint64_t));
    dst->values = malloc((src->n + room) * sizeof(uint64_t));
    assert_true(dst->keys && dst->values);
    memcpy(dst->keys, src->keys, src->n * sizeof(uint64_t));
    memcpy(dst->values, src->values, src->n * sizeof(uint64_t));
}

/* Keys are multiples of 8 (room between them for inserts). Batch v, by v % 6: 0 updates of present
 * keys (in place), 1 a few spread inserts and deletes (in place where no leaf fills), 2 dense inserts
 * into one region (splits), 3 the deletion of a whole range (leaves removed), 4 upserts, 5 updates and
 * deletes of single keys. */
static void hc_make_batch(hc_batch *b, const tu_model *m, int v, uint64_t *rng)
{
    const uint64_t cap = 4096;
    b->kinds = malloc(cap);
    b->keys = malloc(cap * sizeof(uint64_t));
    b->values = malloc(cap * sizeof(uint64_t));
    assert_true(b->kinds && b->keys && b->values);
    uint64_t n = 0;
    const uint64_t span = 8 * (uint64_t)HC_KEYS;
    switch (v % 6) {
    case 0:
        for (int i = 0; i < 400 && m->n > 0; i++, n++) {
            b->kinds[n] = HARMONIA_OP_UPDATE;
            b->keys[n] = m->keys[tu_next(rng) % m->n];
        }
        break;
    case 1:
        for (int i = 0; i < 30; i++, n++) {
            b->kinds[n] = HARMONIA_OP_UPSERT;
            b->keys[n] = (tu_next(rng) % span) | 3; /* not a multiple of 8: a new key */
        }
        for (int i = 0; i < 30 && m->n > 0; i++, n++) {
            b->kinds[n] = HARMONIA_OP_DELETE;
            b->keys[n] = m->keys[tu_next(rng) % m->n];
        }
        break;
    case 2: {
        const uint64_t base = (tu_next(rng) % (span / 2)) & ~(uint64_t)7;
        for (int i = 0; i < 1500; i++, n++) {
            b->kinds[n] = HARMONIA_OP_UPSERT;
            b->keys[n] = base + (uint64_t)i * 2 + 1;
        }
        break;
    }
    case 3: {
        const uint64_t first = tu_next(rng) % (m->n > 1200 ? m->n - 1200 : 1);
        for (uint64_t i = first; i < first + 1000 && i < m->n; i++, n++) {
            b->kinds[n] = HARMONIA_OP_DELETE;
            b->keys[n] = m->keys[i];
        }
        break;
    }
    case 4:
        for (int i = 0; i < 600; i++, n++) {
            b->kinds[n] = HARMONIA_OP_UPSERT;
            b->keys[n] = (i % 2 && m->n > 0) ? m->keys[tu_next(rng) % m->n] : (tu_next(rng) % span) | 5;
        }
        break;
    default:
        for (int i = 0; i < 20 && m->n > 0; i++, n++) {
            b->kinds[n] = i % 2 ? HARMONIA_OP_DELETE : HARMONIA_OP_UPDATE;
            b->keys[n] = m->keys[tu_next(rng) % m->n];
        }
        break;
    }
    for (uint64_t i = 0; i < n; i++)
        b->values[i] = tu_next(rng);
    /* updates must name present keys, at the time they apply: keep only those (the model decides) */
    tu_model probe;
    hc_copy_model(&probe, m, n + 1);
    uint64_t kept = 0;
    for (uint64_t i = 0; i < n; i++) {
        if (b->kinds[i] == HARMONIA_OP_UPDATE) {
            bool present = false;
            for (uint64_t lo = 0, hi = probe.n; lo < hi;) {
                uint64_t mid = lo + (hi - lo) / 2;
                if (probe.keys[mid] == b->keys[i]) {
                    present = true;
                    break;
                }
                if (probe.keys[mid] < b->keys[i])
                    lo = mid + 1;
                else
                    hi = mid;
            }
            if (!present)
                continue;
        }
        hc_apply_op(&probe, b->kinds[i], b->keys[i], b->values[i]);
        b->kinds[kept] = b->kinds[i];
        b->keys[kept] = b->keys[i];
        b->values[kept] = b->values[i];
        kept++;
    }
    free(probe.keys);
    free(probe.values);
    b->count = kept;
}

static void hc_answer(const tu_model *m, const hc_world *w, hc_answers *a)
{
    for (uint64_t i = 0; i < HC_QUERIES; i++) {
        uint64_t lo = 0, hi = m->n, q = w->queries[i];
        while (lo < hi) {
            uint64_t mid = lo + (hi - lo) / 2;
            if (m->keys[mid] < q)
                lo = mid + 1;
            else
                hi = mid;
        }
        a->found[i] = lo < m->n && m->keys[lo] == q;
        a->values[i] = a->found[i] ? m->values[lo] : 0;
        a->lb_found[i] = lo < m->n;
        a->lb_keys[i] = lo < m->n ? m->keys[lo] : 0;
        a->lb_values[i] = lo < m->n ? m->values[lo] : 0;
        uint64_t first = 0, end = 0;
        for (lo = 0, hi = m->n; lo < hi;) {
            uint64_t mid = lo + (hi - lo) / 2;
            if (m->keys[mid] < w->lo[i]) lo = mid + 1; else hi = mid;
        }
        first = lo;
        for (lo = 0, hi = m->n; lo < hi;) {
            uint64_t mid = lo + (hi - lo) / 2;
            if (m->keys[mid] <= w->hi[i]) lo = mid + 1; else hi = mid;
        }
        end = lo;
        a->counts[i] = w->lo[i] <= w->hi[i] && end > first ? end - first : 0;
    }
}

static hc_world *hc_world_make(uint64_t seed)
{
    hc_world *w = calloc(1, sizeof *w);
    assert_non_null(w);
    uint64_t rng = seed;
    tu_model *m0 = &w->versions[0];
    m0->key_bits = 64;
    m0->n = HC_KEYS;
    m0->keys = malloc(HC_KEYS * sizeof(uint64_t));
    m0->values = malloc(HC_KEYS * sizeof(uint64_t));
    for (uint64_t i = 0; i < HC_KEYS; i++) {
        m0->keys[i] = 8 * i;
        m0->values[i] = tu_next(&rng);
    }
    for (int v = 1; v <= HC_BATCHES; v++) {
        hc_make_batch(&w->batches[v], &w->versions[v - 1], v, &rng);
        hc_copy_model(&w->versions[v], &w->versions[v - 1], w->batches[v].count + 1);
        for (uint64_t i = 0; i < w->batches[v].count; i++)
            hc_apply_op(&w->versions[v], w->batches[v].kinds[i], w->batches[v].keys[i], w->batches[v].values[i]);
    }
    /* queries: keys written by the batches (their answers change from version to version), present
     * keys, gaps and the ends */
    const uint64_t span = 8 * (uint64_t)HC_KEYS;
    for (uint64_t i = 0; i < HC_QUERIES; i++) {
        const int v = 1 + (int)(i % HC_BATCHES);
        const hc_batch *b = &w->batches[v];
        uint64_t q;
        if (i % 3 != 2 && b->count > 0)
            q = b->keys[tu_next(&rng) % b->count];
        else
            q = tu_next(&rng) % (span + 64);
        if (i == 0) q = 0;
        if (i == 1) q = UINT64_MAX;
        w->queries[i] = q;
        w->lo[i] = q;
        w->hi[i] = i % 7 == 0 ? q - 1 : q + (tu_next(&rng) % 4096); /* some empty, some long */
        if (w->hi[i] < w->lo[i] && i % 7 != 0)
            w->hi[i] = UINT64_MAX;
    }
    w->answers = calloc(HC_BATCHES + 1, sizeof(hc_answers));
    assert_non_null(w->answers);
    for (int v = 0; v <= HC_BATCHES; v++)
        hc_answer(&w->versions[v], w, &w->answers[v]);
    return w;
}

static void hc_world_free(hc_world *w)
{
    for (int v = 0; v <= HC_BATCHES; v++) {
        free(w->versions[v].keys);
        free(w->versions[v].values);
        free(w->batches[v].kinds);
        free(w->batches[v].keys);
        free(w->batches[v].values);
    }
    free(w->answers);
    free(w);
}

/* One call's results (host memory; the GPU runner copies device results here). */
typedef struct hc_results {
    uint64_t a[HC_QUERIES], b[HC_QUERIES];
    uint8_t found[HC_QUERIES];
} hc_results;

/* Whether a call's results are exactly version v's answers. */
static bool hc_matches(const hc_world *w, hc_kind kind, const hc_results *r, int v)
{
    const hc_answers *x = &w->answers[v];
    for (uint64_t i = 0; i < HC_QUERIES; i++) {
        switch (kind) {
        case HC_LOOKUP:
            if (r->found[i] != x->found[i] || r->a[i] != x->values[i])
                return false;
            break;
        case HC_LOWER_BOUND:
            if (r->found[i] != x->lb_found[i] || r->a[i] != x->lb_keys[i] || r->b[i] != x->lb_values[i])
                return false;
            break;
        default:
            if (r->a[i] != x->counts[i])
                return false;
        }
    }
    return true;
}

/* The engine's call: fills r from the tree with the query set; returns the call's status. */
typedef harmonia_status (*hc_run_fn)(void *context, harmonia_tree *tree, const hc_world *w, hc_kind kind,
                                     unsigned call, hc_results *r);

typedef struct hc_shared {
    harmonia_tree *tree;
    const hc_world *w;
    hc_run_fn run;
    void *run_context[8];
    atomic_int published;  /* the last version whose update returned */
    atomic_int stop;
    atomic_ulong calls[8]; /* calls completed per thread */
    atomic_ulong failures;
    char failure[512];
    pthread_mutex_t failure_lock;
    int seen_versions[8];  /* distinct versions each thread saw */
} hc_shared;

typedef struct hc_thread {
    hc_shared *s;
    int id;
} hc_thread;

static void hc_fail(hc_shared *s, const char *fmt, ...)
{
    pthread_mutex_lock(&s->failure_lock);
    if (atomic_fetch_add(&s->failures, 1) == 0) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(s->failure, sizeof s->failure, fmt, ap);
        va_end(ap);
    }
    pthread_mutex_unlock(&s->failure_lock);
}

static void *hc_reader(void *arg)
{
    hc_thread *t = arg;
    hc_shared *s = t->s;
    hc_results *r = malloc(sizeof *r);
    int last = 0;
    unsigned call = 0;
    while (!atomic_load(&s->stop) && atomic_load(&s->failures) == 0) {
        const hc_kind kind = (hc_kind)((call + (unsigned)t->id) % HC_KINDS);
        const int before = atomic_load(&s->published);
        harmonia_status st = s->run(s->run_context[t->id], s->tree, s->w, kind, call, r);
        const int after = atomic_load(&s->published);
        if (st != HARMONIA_OK) {
            hc_fail(s, "thread %d call %u: status %d: %s", t->id, call, (int)st, harmonia_last_error(s->tree));
            break;
        }
        /* one version published during the call: from `before` to the one being applied after `after` */
        const int top = after < HC_BATCHES ? after + 1 : HC_BATCHES;
        int matched = -1;
        for (int v = before; v <= top && matched < 0; v++)
            if (hc_matches(s->w, kind, r, v))
                matched = v;
        if (matched < 0) {
            hc_fail(s, "thread %d call %u (kind %d): the results match no version in %d .. %d (a mix, or a "
                    "stale version)", t->id, call, (int)kind, before, top);
            break;
        }
        if (matched < last && !hc_matches(s->w, kind, r, last)) {
            hc_fail(s, "thread %d call %u: version %d after version %d", t->id, call, matched, last);
            break;
        }
        if (matched > last) {
            s->seen_versions[t->id]++;
            last = matched;
        }
        call++;
        atomic_fetch_add(&s->calls[t->id], 1);
    }
    free(r);
    return NULL;
}

/* Runs `threads` readers against tree while the main thread applies every batch (each once all
 * readers completed HC_CALLS_PER_VERSION calls on the version before), with update config uc
 * (batch v gets free_previous_layout when v % 5 == 4). Fails the test on any mismatch; checks the
 * tree after every batch; *stats_out gets the OR of shape_changed and of blocking_sync. */
static void hc_run_updates(harmonia_tree *tree, const hc_world *w, hc_run_fn run, void **run_context, int threads,
                           const harmonia_update_config *uc, bool *saw_in_place, bool *saw_relayout,
                           bool *saw_blocking)
{
    hc_shared *s = calloc(1, sizeof *s);
    assert_non_null(s);
    s->tree = tree;
    s->w = w;
    s->run = run;
    pthread_mutex_init(&s->failure_lock, NULL);
    for (int i = 0; i < threads; i++)
        s->run_context[i] = run_context ? run_context[i] : NULL;
    pthread_t ids[8];
    hc_thread args[8];
    for (int i = 0; i < threads; i++) {
        args[i].s = s;
        args[i].id = i;
        assert_int_equal(pthread_create(&ids[i], NULL, hc_reader, &args[i]), 0);
    }
    *saw_in_place = *saw_relayout = *saw_blocking = false;
    for (int v = 1; v <= HC_BATCHES && atomic_load(&s->failures) == 0; v++) {
        /* every reader has run on the version before */
        unsigned long floor[8];
        for (int i = 0; i < threads; i++)
            floor[i] = atomic_load(&s->calls[i]);
        for (int i = 0; i < threads; i++)
            while (atomic_load(&s->calls[i]) < floor[i] + HC_CALLS_PER_VERSION && atomic_load(&s->failures) == 0)
                sched_yield();
        harmonia_update_config c = *uc;
        c.free_previous_layout = v % 5 == 4;
        harmonia_update_stats stats;
        const hc_batch *b = &w->batches[v];
        harmonia_status st = harmonia_update(tree, &c, b->kinds, b->keys, b->values, b->count, &stats);
        if (st != HARMONIA_OK) {
            atomic_store(&s->stop, 1);
            for (int i = 0; i < threads; i++)
                pthread_join(ids[i], NULL);
            fail_msg("batch %d: %s", v, harmonia_last_error(tree));
        }
        *saw_in_place |= !stats.shape_changed;
        *saw_relayout |= stats.shape_changed;
        *saw_blocking |= stats.blocking_sync != 0;
        atomic_store(&s->published, v);
    }
    /* a few calls on the last version */
    unsigned long floor[8];
    for (int i = 0; i < threads; i++)
        floor[i] = atomic_load(&s->calls[i]);
    for (int i = 0; i < threads; i++)
        while (atomic_load(&s->calls[i]) < floor[i] + 2 && atomic_load(&s->failures) == 0)
            sched_yield();
    atomic_store(&s->stop, 1);
    for (int i = 0; i < threads; i++)
        pthread_join(ids[i], NULL);
    if (atomic_load(&s->failures) != 0)
        fail_msg("%lu failing call(s); the first: %s", atomic_load(&s->failures), s->failure);
    for (int i = 0; i < threads; i++) /* every reader crossed versions */
        assert_true(s->seen_versions[i] >= HC_BATCHES / 2);
    assert_int_equal(harmonia_check(tree), HARMONIA_OK);
    harmonia_tree_info info;
    assert_int_equal(harmonia_info(tree, &info), HARMONIA_OK);
    assert_int_equal(info.key_count, w->versions[HC_BATCHES].n);
    pthread_mutex_destroy(&s->failure_lock);
    free(s);
}

#endif /* HARMONIA_CONCURRENT_HARNESS_H */
