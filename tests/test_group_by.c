/* test_group_by.c - coproc_group_by against a scalar C reference (sort the
 * rows by key, fold each run): every key type with every value type (and
 * none), key distributions with few, many (table growth) and extreme keys,
 * values with extremes, NaN, -0.0 and infinities; sorted output compared in
 * order, unsorted output compared as a set; on every device and kernel path.
 * Keys over a small range take the dense (direct-indexed) path: a small range
 * far from 0, and ranges exactly at its limit and one over it.
 * coproc_group_by_aggs: every combination of aggregates asked, on dense and
 * hash keys, columns not asked NULL; bad flags refused. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testlib.h"

#define NO_VALUES COPROC__TYPE_COUNT

enum { KD_FEW, KD_MANY, KD_MOD, KD_EXTREME, KD_EQUAL, KD_FAR, KD_AT_LIMIT, KD_OVER_LIMIT,
       KD_COUNT };
static const char *const kd_name[] = {"few",  "many",     "mod",       "extreme",
                                      "equal", "far", "at-limit", "over-limit"};

/* The widest key range (max - min + 1) that runtime/ops/group_by.c aggregates
 * by direct indexing: 2n + DENSE_SLACK. */
static uint64_t dense_limit(size_t n) { return 2 * (uint64_t)n + 65536; }
enum { VM_RANDOM, VM_EXTREME, VM_SPECIAL, VM_NAN_GROUPS, VM_COUNT };

static int is_signed_type(coproc_type t) { return t == COPROC_INT32 || t == COPROC_INT64; }
static int is_float_type(coproc_type t) { return t == COPROC_FLOAT32 || t == COPROC_FLOAT64; }

/* Keys as raw bits in uint64 (32-bit keys zero-extended). */
static uint64_t key_at(coproc_type t, const void *k, size_t i)
{
    if (coproc_type_size(t) == 4)
        return ((const uint32_t *)k)[i];
    return ((const uint64_t *)k)[i];
}

/* Ordered form: compares like the key type's values. */
static uint64_t key_order(coproc_type t, uint64_t raw)
{
    if (t == COPROC_INT32)
        return raw ^ 0x80000000u;
    if (t == COPROC_INT64)
        return raw ^ 0x8000000000000000ull;
    return raw;
}

static void fill_keys(coproc_type t, void *k, size_t n, int dist, test_rng *r)
{
    /* Keys that look like empty-slot sentinels, or differ only in high bits. */
    static const uint64_t extreme64[] = {0, 1, UINT64_MAX, 0x8000000000000000ull,
                                         0x7FFFFFFFFFFFFFFFull, 0xFFFFFFFFull, 0x100000000ull,
                                         0xFFFFFFFF00000000ull, 0x4000000000000000ull,
                                         0xC000000000000000ull, 0x80000000ull, 0x7FFFFFFFull,
                                         0x4000000000000001ull, 0x0000000080000001ull};
    static const uint32_t extreme32[] = {0, 1, UINT32_MAX, 0x80000000u, 0x7FFFFFFFu,
                                         0xFFFFFFFEu, 0x80000001u, 0x40000000u};
    int wide = coproc_type_size(t) == 8;
    uint64_t few[7];
    for (int j = 0; j < 7; j++)
        few[j] = test_rand(r);
    for (size_t i = 0; i < n; i++) {
        uint64_t x = test_rand(r), v;
        switch (dist) {
        case KD_FEW: v = few[x % 7]; break;
        case KD_MANY: v = x; break;
        case KD_MOD: v = (uint64_t)((int64_t)(x % 1000) - 500); break;
        case KD_EXTREME:
            v = wide ? extreme64[x % (sizeof extreme64 / sizeof *extreme64)]
                     : extreme32[x % (sizeof extreme32 / sizeof *extreme32)];
            break;
        case KD_FAR: /* 37 keys far from 0: near the type's minimum (signed) or top */
            v = (is_signed_type(t) ? (wide ? 0x8000000000000005ull : 0x80000005u)
                                   : (wide ? 0xFFFFFFFFFFFFFF00ull : 0xFFFFFF00u)) + x % 37;
            break;
        case KD_AT_LIMIT:
        case KD_OVER_LIMIT: {
            /* a range of exactly the limit (or one more): the first two rows hold
             * its ends; signed keys straddle 0, unsigned ones end at the maximum */
            uint64_t range = dense_limit(n) + (dist == KD_OVER_LIMIT);
            uint64_t top = wide ? UINT64_MAX : UINT32_MAX;
            uint64_t lo = is_signed_type(t) ? 0 - range / 2 : top - range + 1;
            v = lo + (i == 0 ? 0 : i == 1 ? range - 1 : x % range);
            break; }
        default: v = 0xFFFFFFFFFFFFFFFFull; break; /* all -1 / all UINT_MAX */
        }
        if (wide)
            ((uint64_t *)k)[i] = v;
        else
            ((uint32_t *)k)[i] = (uint32_t)v;
    }
}

static void fill_values(coproc_type t, void *data, size_t n, int mode, const void *keys,
                        coproc_type kt, test_rng *r)
{
    for (size_t i = 0; i < n; i++) {
        uint64_t x = test_rand(r);
        int pick = (int)(x % 9);
        switch (t) {
        case COPROC_INT32: {
            int32_t v = (int32_t)(x >> 32);
            if (mode != VM_RANDOM && pick == 0) v = INT32_MIN;
            if (mode != VM_RANDOM && pick == 1) v = INT32_MAX;
            if (mode != VM_RANDOM && pick == 2) v = -1;
            ((int32_t *)data)[i] = v; break; }
        case COPROC_UINT32: {
            uint32_t v = (uint32_t)(x >> 32);
            if (mode != VM_RANDOM && pick == 0) v = UINT32_MAX;
            if (mode != VM_RANDOM && pick == 1) v = 0;
            ((uint32_t *)data)[i] = v; break; }
        case COPROC_INT64: {
            int64_t v = (int64_t)x;
            if (mode != VM_RANDOM && pick == 0) v = INT64_MIN;
            if (mode != VM_RANDOM && pick == 1) v = INT64_MAX;
            if (mode != VM_RANDOM && pick == 2) v = -1;
            if (mode != VM_RANDOM && pick == 3) v = (int64_t)(x >> 40) - (1 << 23); /* small */
            ((int64_t *)data)[i] = v; break; }
        case COPROC_UINT64: {
            uint64_t v = x;
            if (mode != VM_RANDOM && pick == 0) v = UINT64_MAX;
            if (mode != VM_RANDOM && pick == 1) v = 0;
            if (mode != VM_RANDOM && pick == 2) v = x >> 40;
            ((uint64_t *)data)[i] = v; break; }
        case COPROC_FLOAT32:
        case COPROC_FLOAT64: {
            double v = ((double)(x >> 11) / 9007199254740992.0 - 0.5) * 1000;
            if (mode == VM_EXTREME) { /* magnitudes over a wide range */
                int e = (int)((x >> 3) % 120) - 60;
                if (t == COPROC_FLOAT64)
                    e += (int)((x >> 20) % 400) - 200;
                v = ldexp(v, e);
            }
            if (mode == VM_SPECIAL) {
                if (pick == 0) v = NAN;
                if (pick == 1) v = -0.0;
                if (pick == 2) v = 0.0;
                if (pick == 3 && (x >> 40) % 40 == 0) v = (x & 1) ? INFINITY : -INFINITY;
                if (pick == 4) v = t == COPROC_FLOAT32 ? 1e-42 : 1e-310; /* denormal */
            }
            if (mode == VM_NAN_GROUPS && key_at(kt, keys, i) % 3 == 0)
                v = NAN; /* whole groups of NaN */
            if (t == COPROC_FLOAT32) ((float *)data)[i] = (float)v; else ((double *)data)[i] = v;
            break; }
        default: break;
        }
    }
}

/* One group of the reference. Values as the output columns hold them. */
typedef struct ref_group {
    uint64_t key;     /* raw bits */
    uint64_t count;
    uint64_t isum;    /* integer sums, wrapping */
    double fsum;      /* float sums, serial in double */
    double abs_sum;   /* sum of |v| over finite rows, for the tolerance */
    uint64_t imin, imax; /* integer min/max raw bits (value type width) */
    double fmin, fmax;
} ref_group;

typedef struct row_ref { uint64_t ord; size_t row; } row_ref;

static int cmp_row_ref(const void *a, const void *b)
{
    const row_ref *x = a, *y = b;
    if (x->ord != y->ord)
        return x->ord < y->ord ? -1 : 1;
    return x->row < y->row ? -1 : x->row > y->row;
}

static double value_f(coproc_type t, const void *v, size_t i)
{
    return t == COPROC_FLOAT32 ? ((const float *)v)[i] : ((const double *)v)[i];
}

static int64_t value_i(coproc_type t, const void *v, size_t i)
{
    switch (t) {
    case COPROC_INT32: return ((const int32_t *)v)[i];
    case COPROC_UINT32: return (int64_t)((const uint32_t *)v)[i];
    default: return ((const int64_t *)v)[i];
    }
}

/* The scalar reference, groups in ascending key order; returns the count. */
static size_t reference(coproc_type kt, const void *keys, coproc_type vt, const void *vals,
                        size_t n, ref_group *out)
{
    row_ref *rows = malloc((n ? n : 1) * sizeof *rows);
    for (size_t i = 0; i < n; i++) {
        rows[i].ord = key_order(kt, key_at(kt, keys, i));
        rows[i].row = i;
    }
    qsort(rows, n, sizeof *rows, cmp_row_ref);
    size_t groups = 0;
    for (size_t a = 0; a < n;) {
        size_t b = a;
        while (b < n && rows[b].ord == rows[a].ord)
            b++;
        ref_group *g = &out[groups++];
        memset(g, 0, sizeof *g);
        g->key = key_at(kt, keys, rows[a].row);
        g->count = b - a;
        if (vt != NO_VALUES && is_float_type(vt)) {
            g->fmin = g->fmax = NAN;
            for (size_t j = a; j < b; j++) {
                double v = value_f(vt, vals, rows[j].row);
                g->fsum += v;
                if (isfinite(v))
                    g->abs_sum += fabs(v);
                g->fmin = fmin(g->fmin, v);
                g->fmax = fmax(g->fmax, v);
            }
        } else if (vt != NO_VALUES) {
            int sgn = is_signed_type(vt);
            int64_t smin = INT64_MAX, smax = INT64_MIN;
            uint64_t umin = UINT64_MAX, umax = 0;
            for (size_t j = a; j < b; j++) {
                int64_t v = value_i(vt, vals, rows[j].row);
                g->isum += (uint64_t)v;
                if (v < smin) smin = v;
                if (v > smax) smax = v;
                if ((uint64_t)v < umin) umin = (uint64_t)v;
                if ((uint64_t)v > umax) umax = (uint64_t)v;
            }
            uint64_t mask = coproc_type_size(vt) == 4 ? 0xFFFFFFFFull : UINT64_MAX;
            g->imin = (sgn ? (uint64_t)smin : umin) & mask;
            g->imax = (sgn ? (uint64_t)smax : umax) & mask;
        }
        a = b;
    }
    free(rows);
    return groups;
}

/* A group as downloaded from the result columns. */
typedef struct got_group {
    uint64_t key, ord, count, isum, imin, imax;
    double fsum, fmin, fmax;
} got_group;

static int cmp_got_key(const void *a, const void *b)
{
    uint64_t x = ((const got_group *)a)->ord, y = ((const got_group *)b)->ord;
    return x < y ? -1 : x > y;
}

/* Which of sum, min, max (COPROC_GROUP_*) a result has: those asked, with values. */
static unsigned has_aggs(coproc_type vt, unsigned aggs)
{
    return vt == NO_VALUES ? 0 : aggs & (COPROC_GROUP_SUM | COPROC_GROUP_MIN | COPROC_GROUP_MAX);
}

/* The reference group of key (raw bits) among want[0..wm), in key order; a
 * zeroed group when there is none (compare then reports the key). */
static ref_group find_ref(const ref_group *want, size_t wm, coproc_type kt, uint64_t key)
{
    uint64_t ord = key_order(kt, key);
    size_t lo = 0, hi = wm;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (key_order(kt, want[mid].key) < ord)
            lo = mid + 1;
        else
            hi = mid;
    }
    ref_group none;
    memset(&none, 0, sizeof none);
    return lo < wm && want[lo].key == key ? want[lo] : none;
}

/* An aggregate not asked is taken from the reference (compare passes it). */
static void download_groups(coproc_runtime *rt, const coproc_group_result *r, coproc_type kt,
                            coproc_type vt, unsigned aggs, const ref_group *want, size_t wm,
                            got_group *g)
{
    size_t m = r->groups;
    size_t cap = m ? m : 1;
    void *k = malloc(cap * 8), *c = malloc(cap * 8), *s = malloc(cap * 8), *mn = malloc(cap * 8),
         *mx = malloc(cap * 8);
    assert_int_equal(coproc_column_length(r->keys), m);
    assert_int_equal(coproc_column_type(r->keys), kt);
    assert_int_equal(coproc_column_length(r->count), m);
    assert_int_equal(coproc_column_type(r->count), COPROC_UINT64);
    assert_ok(rt, coproc_column_download(r->keys, k, cap));
    assert_ok(rt, coproc_column_download(r->count, c, cap));
    unsigned has = has_aggs(vt, aggs);
    if (!(has & COPROC_GROUP_SUM))
        assert_null(r->sum);
    if (!(has & COPROC_GROUP_MIN))
        assert_null(r->min);
    if (!(has & COPROC_GROUP_MAX))
        assert_null(r->max);
    if (has & COPROC_GROUP_SUM) {
        assert_int_equal(coproc_column_length(r->sum), m);
        assert_ok(rt, coproc_column_download(r->sum, s, cap));
    }
    if (has & COPROC_GROUP_MIN) {
        assert_int_equal(coproc_column_type(r->min), vt);
        assert_int_equal(coproc_column_length(r->min), m);
        assert_ok(rt, coproc_column_download(r->min, mn, cap));
    }
    if (has & COPROC_GROUP_MAX) {
        assert_int_equal(coproc_column_type(r->max), vt);
        assert_int_equal(coproc_column_length(r->max), m);
        assert_ok(rt, coproc_column_download(r->max, mx, cap));
    }
    coproc_type st = r->sum ? coproc_column_type(r->sum) : NO_VALUES;
    for (size_t i = 0; i < m; i++) {
        memset(&g[i], 0, sizeof g[i]);
        g[i].key = key_at(kt, k, i);
        g[i].ord = key_order(kt, g[i].key);
        g[i].count = ((uint64_t *)c)[i];
        if (vt == NO_VALUES)
            continue;
        ref_group ref;
        memset(&ref, 0, sizeof ref);
        if (has != (COPROC_GROUP_SUM | COPROC_GROUP_MIN | COPROC_GROUP_MAX))
            ref = find_ref(want, wm, kt, g[i].key);
        const ref_group *w = &ref;
        if (is_float_type(vt)) {
            g[i].fsum = !r->sum                 ? w->fsum
                        : st == COPROC_FLOAT32 ? ((float *)s)[i]
                                               : ((double *)s)[i];
            g[i].fmin = r->min ? value_f(vt, mn, i) : w->fmin;
            g[i].fmax = r->max ? value_f(vt, mx, i) : w->fmax;
        } else {
            g[i].isum = r->sum ? ((uint64_t *)s)[i] : w->isum;
            uint64_t mask = coproc_type_size(vt) == 4 ? 0xFFFFFFFFull : UINT64_MAX;
            g[i].imin = r->min ? (uint64_t)value_i(vt, mn, i) & mask : w->imin;
            g[i].imax = r->max ? (uint64_t)value_i(vt, mx, i) & mask : w->imax;
        }
    }
    free(k); free(c); free(s); free(mn); free(mx);
}

static int same_float(double a, double b) { return (isnan(a) && isnan(b)) || a == b; }

static void compare(const got_group *got, const ref_group *want, size_t m, coproc_type vt,
                    int sum_is_f32, const char *where)
{
    for (size_t i = 0; i < m; i++) {
        const got_group *g = &got[i];
        const ref_group *w = &want[i];
        if (g->key != w->key || g->count != w->count)
            fail_msg("%s: group %zu: key %llx count %llu, want key %llx count %llu", where, i,
                     (unsigned long long)g->key, (unsigned long long)g->count,
                     (unsigned long long)w->key, (unsigned long long)w->count);
        if (vt == NO_VALUES)
            continue;
        if (is_float_type(vt)) {
            if (!same_float(g->fmin, w->fmin) || !same_float(g->fmax, w->fmax))
                fail_msg("%s: group %zu (key %llx): min/max %g/%g, want %g/%g", where, i,
                         (unsigned long long)w->key, g->fmin, g->fmax, w->fmin, w->fmax);
            double tol = (w->count + 4) * (sum_is_f32 ? FLT_EPSILON : DBL_EPSILON) * w->abs_sum;
            if (isnan(w->fsum) || isinf(w->fsum) || isnan(g->fsum) || isinf(g->fsum)) {
                if (!same_float(g->fsum, w->fsum))
                    fail_msg("%s: group %zu (key %llx): sum %g, want %g", where, i,
                             (unsigned long long)w->key, g->fsum, w->fsum);
            } else if (fabs(g->fsum - w->fsum) > tol + 1e-300) {
                fail_msg("%s: group %zu (key %llx): sum %.17g, want %.17g (tol %g)", where, i,
                         (unsigned long long)w->key, g->fsum, w->fsum, tol);
            }
        } else if (g->isum != w->isum || g->imin != w->imin || g->imax != w->imax) {
            fail_msg("%s: group %zu (key %llx): sum/min/max %llx/%llx/%llx, want %llx/%llx/%llx",
                     where, i, (unsigned long long)w->key, (unsigned long long)g->isum,
                     (unsigned long long)g->imin, (unsigned long long)g->imax,
                     (unsigned long long)w->isum, (unsigned long long)w->imin,
                     (unsigned long long)w->imax);
        }
    }
}

/* Run one group-by of keys and vals (n rows; what names them) sorted and
 * unsorted, and check it against the reference: coproc_group_by_aggs asking
 * aggs, or coproc_group_by when aggs is 0. */
static void check_data(coproc_runtime *rt, int dev, coproc_type kt, coproc_type vt,
                       const void *keys, const void *vals, size_t n, unsigned aggs,
                       const char *what)
{
    ref_group *want = malloc((n ? n : 1) * sizeof *want);
    got_group *got = malloc((n ? n : 1) * sizeof *got);
    size_t m = reference(kt, keys, vt, vals, n, want);

    coproc_column *kc = NULL, *vc = NULL;
    assert_ok(rt, coproc_column_upload(rt, dev, kt, keys, n, &kc));
    if (vt != NO_VALUES)
        assert_ok(rt, coproc_column_upload(rt, dev, vt, vals, n, &vc));
    for (int sorted = 0; sorted <= 1; sorted++) {
        char where[300];
        snprintf(where, sizeof where, "%s sorted=%d aggs=0x%x", what, sorted, aggs);
        coproc_group_result r;
        coproc_status s = aggs ? coproc_group_by_aggs(rt, kc, vc, aggs, sorted, &r)
                               : coproc_group_by(rt, kc, vc, sorted, &r);
        if (s != COPROC_OK)
            fail_msg("%s: %s: %s", where, coproc_status_name(s), coproc_errmsg(rt));
        if (r.groups != m)
            fail_msg("%s: %zu groups, want %zu", where, r.groups, m);
        download_groups(rt, &r, kt, vt, aggs ? aggs : COPROC_GROUP_ALL, want, m, got);
        int sum_is_f32 = r.sum && coproc_column_type(r.sum) == COPROC_FLOAT32;
        if (!sorted)
            qsort(got, m, sizeof *got, cmp_got_key);
        compare(got, want, m, vt, sum_is_f32, where);
        coproc_group_result_free(&r);
        assert_null(r.keys);
    }
    coproc_column_free(kc);
    coproc_column_free(vc);
    free(want); free(got);
}

static void check_aggs(coproc_runtime *rt, int dev, coproc_type kt, coproc_type vt, size_t n,
                       int dist, int mode, unsigned aggs, const char *path, test_rng *rng)
{
    void *keys = malloc((n ? n : 1) * 8), *vals = malloc((n ? n : 1) * 8);
    fill_keys(kt, keys, n, dist, rng);
    if (vt != NO_VALUES)
        fill_values(vt, vals, n, mode, keys, kt, rng);
    char what[200];
    snprintf(what, sizeof what, "%s keys=%s values=%s n=%zu dist=%s mode=%d", path,
             coproc_type_name(kt), vt == NO_VALUES ? "none" : coproc_type_name(vt), n,
             kd_name[dist], mode);
    check_data(rt, dev, kt, vt, keys, vals, n, aggs, what);
    free(keys); free(vals);
}

static void check_one(coproc_runtime *rt, int dev, coproc_type kt, coproc_type vt, size_t n,
                      int dist, int mode, const char *path, test_rng *rng)
{
    check_aggs(rt, dev, kt, vt, n, dist, mode, 0, path, rng);
}

static void run_device(coproc_runtime *rt, int dev, const char *path, void *user)
{
    (void)user;
    coproc_device_info info;
    assert_ok(rt, coproc_device_info_get(rt, dev, &info));
    test_rng rng = {777};
    static const size_t sizes[] = {0, 1, 2, 7, 64, 257, 1025, 4097, 20011};
    int combo = 0;
    for (int kt = COPROC_INT32; kt <= COPROC_UINT64; kt++) {
        for (int vt = 0; vt <= NO_VALUES; vt++) {
            if (vt == COPROC_FLOAT64 && !info.has_fp64)
                continue;
            combo++;
            for (size_t si = 0; si < sizeof sizes / sizeof *sizes; si++)
                for (int dist = 0; dist < KD_COUNT; dist++)
                    check_one(rt, dev, (coproc_type)kt, (coproc_type)vt, sizes[si], dist,
                              (combo + (int)si + dist) % VM_COUNT, path, &rng);
        }
    }
    /* Many groups: the first table (2^16 slots) overflows and grows; sorted
     * output of many groups goes through the device sort. */
    check_one(rt, dev, COPROC_INT32, COPROC_INT32, 100003, KD_MANY, VM_RANDOM, path, &rng);
    check_one(rt, dev, COPROC_UINT64, COPROC_FLOAT32, 65537, KD_MANY, VM_SPECIAL, path, &rng);
    check_one(rt, dev, COPROC_INT64, info.has_fp64 ? COPROC_FLOAT64 : COPROC_FLOAT32, 100003,
              KD_MANY, VM_EXTREME, path, &rng);
    check_one(rt, dev, COPROC_UINT32, NO_VALUES, 1u << 20, KD_MOD, VM_RANDOM, path, &rng);
    check_one(rt, dev, COPROC_INT64, COPROC_UINT64, 1u << 20, KD_FEW, VM_EXTREME, path, &rng);
    /* Dense keys over a range too wide for a GPU's local table (or a CPU's
     * cache): many rows per work-item, sums of extremes that wrap. */
    check_one(rt, dev, COPROC_INT32, COPROC_INT32, 1u << 20, KD_AT_LIMIT, VM_EXTREME, path, &rng);
    check_one(rt, dev, COPROC_UINT64, COPROC_INT64, 300007, KD_AT_LIMIT, VM_EXTREME, path, &rng);
    check_one(rt, dev, COPROC_INT64, COPROC_UINT32, 1u << 20, KD_FAR, VM_EXTREME, path, &rng);
}

static void test_group_by_matches_reference(void **state)
{
    (void)state;
    test_each_device_path(run_device, NULL);
}

/* Every combination of aggregates, with every value type (and none), on keys
 * that take the dense path (mod: 1000 keys; far) and the hash path (many,
 * over-limit), at sizes through the edges. */
static void run_device_aggs(coproc_runtime *rt, int dev, const char *path, void *user)
{
    (void)user;
    coproc_device_info info;
    assert_ok(rt, coproc_device_info_get(rt, dev, &info));
    test_rng rng = {4242};
    static const size_t sizes[] = {0, 1, 7, 64, 257, 1025, 4097, 20011};
    static const int dists[] = {KD_MOD, KD_FAR, KD_MANY, KD_OVER_LIMIT};
    static const coproc_type vts[] = {COPROC_INT32, COPROC_UINT32, COPROC_INT64,
                                      COPROC_UINT64, COPROC_FLOAT32, COPROC_FLOAT64,
                                      NO_VALUES};
    for (unsigned aggs = 1; aggs <= COPROC_GROUP_ALL; aggs++)
        for (size_t v = 0; v < sizeof vts / sizeof *vts; v++) {
            coproc_type vt = vts[v] == COPROC_FLOAT64 && !info.has_fp64 ? COPROC_FLOAT32 : vts[v];
            for (int d = 0; d < 4; d++) {
                /* key type, size and value mode (NaN, ±0, ±inf and subnormals
                 * included) */
                uint64_t x = test_rand(&rng);
                check_aggs(rt, dev, (coproc_type)(COPROC_INT32 + x % 4), vt,
                           sizes[(x >> 8) % 8], dists[d], (int)((x >> 16) % VM_COUNT), aggs,
                           path, &rng);
            }
        }
    /* Sums and counts on many rows: dense over a range wider than a GPU's local
     * table or a CPU's cache (the bench's case), 64-bit values dense and hashed. */
    const unsigned sc = COPROC_GROUP_COUNT | COPROC_GROUP_SUM;
    check_aggs(rt, dev, COPROC_INT32, COPROC_INT32, 1u << 20, KD_AT_LIMIT, VM_EXTREME, sc, path,
               &rng);
    check_aggs(rt, dev, COPROC_UINT32, COPROC_UINT32, 300007, KD_MOD, VM_EXTREME, sc, path, &rng);
    check_aggs(rt, dev, COPROC_INT64, COPROC_INT64, 300007, KD_FAR, VM_EXTREME, sc, path, &rng);
    check_aggs(rt, dev, COPROC_UINT64, COPROC_UINT64, 100003, KD_MANY, VM_EXTREME, sc, path,
               &rng);
    check_aggs(rt, dev, COPROC_INT32, COPROC_INT64, 100003, KD_MANY, VM_EXTREME,
               COPROC_GROUP_MAX, path, &rng);
}

static void test_group_by_aggs(void **state)
{
    (void)state;
    test_each_device_path(run_device_aggs, NULL);
}

/* The inverse of group_by.cl's gb_hash (murmur3's 64-bit finaliser): a key
 * whose hash is h. */
static uint64_t unhash(uint64_t h)
{
    /* x ^= x >> 33 is its own inverse; the multipliers' inverses mod 2^64 */
    h ^= h >> 33;
    h *= 0x9cb4b2f8129337dbull; /* 0xc4ceb9fe1a85ec53^-1 */
    h ^= h >> 33;
    h *= 0x4f74430c22a54005ull; /* 0xff51afd7ed558ccd^-1 */
    h ^= h >> 33;
    return h;
}

/* Keys whose hashes agree in their low 24 bits: every key probes from the
 * same slot of any table, the j-th new key j slots (thousands of probes a
 * row). Where a driver stops a work-item's loops (rusticl: 65535 steps),
 * pass 1 finds its work-items stopped and runs again with fewer rows each;
 * before, the stopped probes read as a full table ("more than ... groups"). */
static void run_device_colliding(coproc_runtime *rt, int dev, const char *path, void *user)
{
    (void)user;
    test_rng rng = {99};
    const size_t m = 4096, n = 2 * m;
    uint64_t *keys = malloc(n * 8);
    int64_t *vals = malloc(n * 8);
    for (size_t i = 0; i < n; i++) {
        uint64_t x = test_rand(&rng);
        keys[i] = unhash((x % m) << 24);
        vals[i] = (int64_t)test_rand(&rng);
    }
    char what[200];
    snprintf(what, sizeof what, "%s colliding keys n=%zu", path, n);
    check_data(rt, dev, COPROC_UINT64, COPROC_INT64, keys, vals, n, 0, what);
    free(keys);
    free(vals);
}

static void test_group_by_colliding_keys(void **state)
{
    (void)state;
    /* the test's inverse is right: these keys hash to 1 << 24 and 0 */
    uint64_t k = unhash(1ull << 24), z = unhash(0);
    k ^= k >> 33, k *= 0xff51afd7ed558ccdull, k ^= k >> 33, k *= 0xc4ceb9fe1a85ec53ull;
    k ^= k >> 33;
    assert_int_equal(k, 1ull << 24);
    assert_int_equal(z, 0);
    test_each_device_path(run_device_colliding, NULL);
}

/* With the rows of a work-item capped low (as rusticl's loop-65535 quirk caps
 * them; COPROC_QUIRKS forces it on any device): every kernel's geometry and
 * pass 2's local table sized by the loop-step budget, dense and hash keys,
 * every value class. */
static void run_device_capped(coproc_runtime *rt, int dev, const char *path, void *user)
{
    (void)user;
    coproc_device_info info;
    assert_ok(rt, coproc_device_info_get(rt, dev, &info));
    test_rng rng = {31337};
    static const coproc_type vts[] = {COPROC_INT32, COPROC_UINT64, COPROC_FLOAT32,
                                      COPROC_FLOAT64, NO_VALUES};
    static const size_t sizes[] = {1, 257, 20011};
    static const int dists[] = {KD_MOD, KD_MANY, KD_FEW};
    for (size_t v = 0; v < sizeof vts / sizeof *vts; v++) {
        coproc_type vt = vts[v] == COPROC_FLOAT64 && !info.has_fp64 ? COPROC_FLOAT32 : vts[v];
        for (size_t si = 0; si < sizeof sizes / sizeof *sizes; si++)
            for (int d = 0; d < 3; d++)
                check_aggs(rt, dev, v % 2 ? COPROC_INT64 : COPROC_INT32, vt, sizes[si], dists[d],
                           VM_EXTREME, 0, path, &rng);
    }
    /* many groups, fewer than 65536: sorted on the host (the device argsort of
     * more is sort's, tested in test_sort) */
    check_aggs(rt, dev, COPROC_INT32, COPROC_INT32, 60013, KD_MANY, VM_EXTREME,
               COPROC_GROUP_COUNT | COPROC_GROUP_SUM, path, &rng);
}

/* Sorted output of 65,536 groups or more (the device argsort, then the ranks
 * inverted) with the rows of a work-item capped at 16: sort's groups (rows /
 * 16) make a digit table of over 2^20 entries, whose one-work-group scan ran
 * past llvmpipe's 65535 loop steps and came out misordered on rusticl
 * before. A loop-step limit of 4096 makes the table's scan go in chained
 * segments on every device. */
static void run_device_capped_many(coproc_runtime *rt, int dev, const char *path, void *user)
{
    (void)user;
    test_rng rng = {4242};
    check_aggs(rt, dev, COPROC_INT32, COPROC_INT32, 100003, KD_MANY, VM_RANDOM,
               COPROC_GROUP_COUNT | COPROC_GROUP_SUM, path, &rng);
    check_aggs(rt, dev, COPROC_UINT64, NO_VALUES, 70001, KD_MANY, VM_RANDOM, 0, path, &rng);
}

static void test_group_by_capped_many_groups(void **state)
{
    (void)state;
    test_each_device_path_quirks("max_rows_per_item=16,max_loop_steps=4096", run_device_capped_many,
                                 NULL);
}

static void test_group_by_capped_rows(void **state)
{
    (void)state;
    test_each_device_path_quirks("max_rows_per_item=64", run_device_capped, NULL);
}

/* ---- float32 sums, exactly: subnormals on devices that flush them */

/* A float32 sum held exactly: a 320-bit two's complement integer in units of
 * 2^-149 (the smallest subnormal); a float32 is at most 2^128, 277 bits. */
typedef struct exact_sum { uint64_t w[5]; } exact_sum;

static void exact_add(exact_sum *e, uint32_t bits)
{
    uint32_t a = bits & 0x7FFFFFFFu, E = a >> 23;
    uint64_t m = E ? (a & 0x7FFFFFu) | 0x800000u : a;
    unsigned sh = (E ? E : 1) - 1; /* value = m * 2^(max(E, 1) - 150) */
    uint64_t x[5] = {0};
    x[sh / 64] = m << (sh % 64);
    if (sh % 64 > 40)
        x[sh / 64 + 1] = m >> (64 - sh % 64);
    if (bits >> 31) { /* two's complement of x */
        unsigned c = 1;
        for (int j = 0; j < 5; j++) {
            x[j] = ~x[j] + c;
            c = c && x[j] == 0;
        }
    }
    unsigned c = 0;
    for (int j = 0; j < 5; j++) {
        uint64_t t = e->w[j] + x[j];
        unsigned c2 = t < x[j];
        t += c;
        c2 |= c && t == 0;
        e->w[j] = t;
        c = c2;
    }
}

/* The exact sum rounded once: to 64 bits, rounding to odd (the sticky bits
 * kept in the last bit), then to the long double's own width and from it
 * to float or double: round-to-odd with two bits more than the target gives
 * the correctly rounded result. */
static long double exact_value(const exact_sum *e)
{
    uint64_t x[5];
    memcpy(x, e->w, sizeof x);
    int neg = x[4] >> 63;
    if (neg) {
        unsigned c = 1;
        for (int j = 0; j < 5; j++) {
            x[j] = ~x[j] + c;
            c = c && x[j] == 0;
        }
    }
    int t = -1; /* the top bit */
    for (int j = 4; j >= 0 && t < 0; j--)
        if (x[j])
            for (int b = 63; b >= 0; b--)
                if (x[j] >> b & 1) {
                    t = j * 64 + b;
                    break;
                }
    if (t < 0)
        return 0;
    uint64_t top = 0, sticky = 0;
    for (int b = 0; b <= t; b++) {
        uint64_t bit = x[b / 64] >> (b % 64) & 1;
        if (b > t - 64)
            top |= bit << (b - (t - 63 > 0 ? t - 63 : 0));
        else
            sticky |= bit;
    }
    long double v = ldexpl((long double)(top | sticky), (t > 63 ? t - 63 : 0) - 149);
    return neg ? -v : v;
}

static uint32_t f32_bits(float f)
{
    uint32_t b;
    memcpy(&b, &f, 4);
    return b;
}

static float f32_of(uint32_t b)
{
    float f;
    memcpy(&f, &b, 4);
    return f;
}

/* A random float32 of binary exponent (frexp's) in [lo, hi], random sign:
 * subnormal below -125. */
static uint32_t rand_f32(test_rng *r, int lo, int hi)
{
    uint64_t x = test_rand(r);
    if (lo < -148)
        lo = -148;
    int e = lo + (int)(x % (uint64_t)(hi - lo + 1));
    uint32_t m = (uint32_t)(x >> 20) & 0x7FFFFFu, E = (uint32_t)(e + 126);
    uint32_t b = e >= -125 ? E << 23 | m : (m | 0x800000u) >> (-125 - e); /* subnormal */
    if (b == 0)
        b = 1;
    return b | (uint32_t)(x >> 63) << 31;
}

/* Float32 group sums of values whose bits span at most 90 binary places in a
 * group (inside the accumulator's 94: nothing is truncated), subnormals among
 * them, against the exact sum rounded once: equal to the last bit, as float64
 * with fp64, float32 without. Groups: subnormals only; 2^-149 repeated;
 * subnormals with small normals; pairs that cancel to a subnormal; a sum that
 * rounds up on a far sticky bit (1 + 2^-24 + 2^-60); sums past FLT_MAX (inf
 * as float32); signed zeros with a subnormal; then random exponent windows. */
static void run_device_f32_exact(coproc_runtime *rt, int dev, const char *path, void *user)
{
    (void)user;
    assert_true(LDBL_MANT_DIG >= 55); /* the reference's rounding (host) */
    test_rng rng = {2024};
    enum { G = 48, PER = 400 };
    size_t n = G * PER;
    int32_t *keys = malloc(n * 4);
    uint32_t *vals = malloc(n * 4);
    for (int g = 0; g < G; g++) {
        uint32_t *v = vals + (size_t)g * PER;
        int top = -100 + (int)(test_rand(&rng) % 228); /* random windows: [top - 90, top] */
        if (top > 128)
            top = 128;
        for (int j = 0; j < PER; j++) {
            keys[g * PER + j] = g * 7 - 100;
            switch (g) {
            case 0: v[j] = rand_f32(&rng, -148, -126); break;
            case 1: v[j] = 1; break;
            case 2: v[j] = rand_f32(&rng, -148, -100); break;
            case 3: /* x, -x pairs, and 3 * 2^-149 */
                v[j] = j >= PER - 2   ? (j == PER - 2 ? 3 : 0)
                       : j % 2        ? v[j - 1] ^ 0x80000000u
                                      : rand_f32(&rng, -70, -60);
                break;
            case 4: v[j] = j == 0 ? f32_bits(1.0f) : j == 1 ? f32_bits(0x1p-24f)
                         : j == 2 ? f32_bits(0x1p-60f) : 0; break;
            case 5: v[j] = f32_bits(j % 2 ? FLT_MAX : 0x1.fffffcp127f); break;
            case 6: v[j] = j == 7 ? 0x80000001u : j % 2 ? 0x80000000u : 0; break;
            default: v[j] = rand_f32(&rng, top - 66, top); break; /* 24 bits below the last */
            }
        }
    }
    /* rows in random order */
    for (size_t i = n - 1; i > 0; i--) {
        size_t j = test_rand(&rng) % (i + 1);
        int32_t tk = keys[i];
        uint32_t tv = vals[i];
        keys[i] = keys[j], vals[i] = vals[j];
        keys[j] = tk, vals[j] = tv;
    }
    exact_sum want[G];
    uint32_t wmin[G], wmax[G];
    memset(want, 0, sizeof want);
    for (int g = 0; g < G; g++)
        wmin[g] = 0x7F800000u, wmax[g] = 0xFF800000u;
    for (size_t i = 0; i < n; i++) {
        int g = (keys[i] + 100) / 7;
        exact_add(&want[g], vals[i]);
        float x = f32_of(vals[i]);
        /* -0.0 below +0.0, as coproc's min/max order them */
        if (x < f32_of(wmin[g]) || (x == 0 && f32_of(wmin[g]) == 0 && vals[i] >> 31))
            wmin[g] = vals[i];
        if (x > f32_of(wmax[g]) || (x == 0 && f32_of(wmax[g]) == 0 && !(vals[i] >> 31)))
            wmax[g] = vals[i];
    }
    coproc_column *kc = NULL, *vc = NULL;
    assert_ok(rt, coproc_column_upload(rt, dev, COPROC_INT32, keys, n, &kc));
    assert_ok(rt, coproc_column_upload(rt, dev, COPROC_FLOAT32, vals, n, &vc));
    coproc_group_result r;
    assert_ok(rt, coproc_group_by(rt, kc, vc, 1, &r));
    assert_int_equal(r.groups, G);
    int f64 = coproc_column_type(r.sum) == COPROC_FLOAT64;
    int32_t gk[G];
    uint64_t gc[G];
    double gs64[G];
    float gs32[G];
    uint32_t gmin[G], gmax[G];
    assert_ok(rt, coproc_column_download(r.keys, gk, G));
    assert_ok(rt, coproc_column_download(r.count, gc, G));
    if (f64)
        assert_ok(rt, coproc_column_download(r.sum, gs64, G));
    else
        assert_ok(rt, coproc_column_download(r.sum, gs32, G));
    assert_ok(rt, coproc_column_download(r.min, gmin, G));
    assert_ok(rt, coproc_column_download(r.max, gmax, G));
    for (int g = 0; g < G; g++) {
        assert_int_equal(gk[g], g * 7 - 100);
        assert_int_equal(gc[g], PER);
        long double x = exact_value(&want[g]);
        if (f64) {
            double w = (double)x;
            if (memcmp(&w, &gs64[g], 8) != 0)
                fail_msg("%s: group %d: float64 sum %a, want %a (exact %La)", path, g, gs64[g], w,
                         x);
        } else {
            float w = (float)x;
            if (memcmp(&w, &gs32[g], 4) != 0)
                fail_msg("%s: group %d: float32 sum %a, want %a (exact %La)", path, g,
                         (double)gs32[g], (double)w, x);
        }
        if (gmin[g] != wmin[g] || gmax[g] != wmax[g])
            fail_msg("%s: group %d: min/max %08x/%08x, want %08x/%08x", path, g, gmin[g],
                     gmax[g], wmin[g], wmax[g]);
    }
    coproc_group_result_free(&r);
    coproc_column_free(kc);
    coproc_column_free(vc);
    free(keys);
    free(vals);
}

static void test_group_by_f32_exact_sums(void **state)
{
    (void)state;
    /* the reference itself: 2^-149 + 2^-149 = 2^-148; 1 + 2^-24 + 2^-60
     * rounds up to 1 + 2^-23 as float32; -2^-149 */
    exact_sum e = {{0}};
    exact_add(&e, 1);
    exact_add(&e, 1);
    assert_true((float)exact_value(&e) == 0x1p-148f);
    memset(&e, 0, sizeof e);
    exact_add(&e, f32_bits(1.0f));
    exact_add(&e, f32_bits(0x1p-24f));
    exact_add(&e, f32_bits(0x1p-60f));
    assert_true((float)exact_value(&e) == 1.0f + 0x1p-23f);
    memset(&e, 0, sizeof e);
    exact_add(&e, 0x80000001u);
    assert_true((float)exact_value(&e) == -0x1p-149f);
    test_each_device_path(run_device_f32_exact, NULL);
}

static void test_group_by_aggs_bad_flags(void **state)
{
    (void)state;
    coproc_runtime *rt = test_open(NULL);
    int32_t k[4] = {1, 2, 1, 2};
    coproc_column *keys = NULL;
    assert_ok(rt, coproc_column_upload(rt, 0, COPROC_INT32, k, 4, &keys));
    coproc_group_result r;
    static const unsigned bad[] = {0, 0x10, COPROC_GROUP_SUM | 0x20, 0x80000000u, ~0u};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        memset(&r, 0xAB, sizeof r);
        assert_status(COPROC_INVALID_ARGUMENT, coproc_group_by_aggs(rt, keys, keys, bad[i], 0, &r));
        assert_non_null(strstr(coproc_errmsg(rt), "aggs"));
        assert_null(r.keys); /* failures leave no output */
        assert_null(r.sum);
    }
    /* host columns go through the task path: refused the same way */
    coproc_column *hk = NULL;
    assert_ok(rt, coproc_column_wrap(rt, COPROC_INT32, k, 4, &hk));
    assert_status(COPROC_INVALID_ARGUMENT, coproc_group_by_aggs(rt, hk, hk, 0, 0, &r));
    assert_status(COPROC_INVALID_ARGUMENT, coproc_group_by_aggs(rt, hk, hk, 0x40, 0, &r));
    assert_status(COPROC_NULL_POINTER, coproc_group_by_aggs(NULL, keys, keys, 1, 0, &r));
    /* A good call after the bad ones: sums only, min/max NULL; then host columns */
    assert_ok(rt, coproc_group_by_aggs(rt, keys, keys, COPROC_GROUP_SUM, 1, &r));
    assert_int_equal(r.groups, 2);
    assert_non_null(r.count);
    assert_non_null(r.sum);
    assert_null(r.min);
    assert_null(r.max);
    int64_t gs[2];
    assert_ok(rt, coproc_column_download(r.sum, gs, 2));
    assert_int_equal(gs[0], 2);
    assert_int_equal(gs[1], 4);
    coproc_group_result_free(&r);
    assert_ok(rt, coproc_group_by_aggs(rt, hk, hk, COPROC_GROUP_MAX, 1, &r));
    assert_int_equal(r.groups, 2);
    assert_null(r.sum);
    assert_null(r.min);
    assert_non_null(r.max);
    int32_t gx[2];
    assert_ok(rt, coproc_column_download(r.max, gx, 2));
    assert_int_equal(gx[1], 2);
    coproc_group_result_free(&r);
    coproc_column_free(hk);
    coproc_column_free(keys);
    coproc_close(rt);
}

static void test_group_by_bad_input(void **state)
{
    (void)state;
    coproc_runtime *rt = test_open(NULL);
    int32_t k[4] = {1, 2, 1, 2};
    float f[4] = {1, 2, 3, 4};
    coproc_column *keys = NULL, *fkeys = NULL, *short_vals = NULL;
    assert_ok(rt, coproc_column_upload(rt, 0, COPROC_INT32, k, 4, &keys));
    assert_ok(rt, coproc_column_upload(rt, 0, COPROC_FLOAT32, f, 4, &fkeys));
    assert_ok(rt, coproc_column_upload(rt, 0, COPROC_INT32, k, 3, &short_vals));
    coproc_group_result r;
    memset(&r, 0xAB, sizeof r);
    assert_status(COPROC_NULL_POINTER, coproc_group_by(NULL, keys, NULL, 0, &r));
    assert_status(COPROC_NULL_POINTER, coproc_group_by(rt, keys, NULL, 0, NULL));
    assert_status(COPROC_NULL_POINTER, coproc_group_by(rt, NULL, NULL, 0, &r));
    assert_true(strstr(coproc_errmsg(rt), "NULL") != NULL);
    assert_null(r.keys); /* failures leave no output */
    assert_int_equal(r.groups, 0);
    assert_status(COPROC_UNSUPPORTED_TYPE, coproc_group_by(rt, fkeys, NULL, 0, &r));
    assert_null(r.keys);
    assert_status(COPROC_LENGTH_MISMATCH, coproc_group_by(rt, keys, short_vals, 1, &r));
    assert_null(r.keys);
    /* Columns of another runtime are refused, not misused. */
    coproc_runtime *rt2 = test_open(NULL);
    assert_status(COPROC_INVALID_ARGUMENT, coproc_group_by(rt2, keys, NULL, 0, &r));
    coproc_column *other_keys = NULL;
    assert_ok(rt2, coproc_column_upload(rt2, 0, COPROC_INT32, k, 4, &other_keys));
    assert_status(COPROC_INVALID_ARGUMENT, coproc_group_by(rt, keys, other_keys, 0, &r));
    assert_null(r.keys);
    coproc_column_free(other_keys);
    coproc_close(rt2);
    /* Freeing a zeroed or NULL result is harmless. */
    coproc_group_result_free(&r);
    coproc_group_result_free(NULL);
    /* Columns on two devices, where there are two. */
    if (coproc_device_count(rt) > 1) {
        coproc_column *v1 = NULL;
        assert_ok(rt, coproc_column_upload(rt, 1, COPROC_INT32, k, 4, &v1));
        assert_status(COPROC_WRONG_DEVICE, coproc_group_by(rt, keys, v1, 0, &r));
        coproc_column_free(v1);
    }
    /* A good call after the bad ones works. */
    assert_ok(rt, coproc_group_by(rt, keys, keys, 1, &r));
    assert_int_equal(r.groups, 2);
    int32_t gk[2];
    uint64_t gc[2];
    int64_t gs[2];
    assert_ok(rt, coproc_column_download(r.keys, gk, 2));
    assert_ok(rt, coproc_column_download(r.count, gc, 2));
    assert_ok(rt, coproc_column_download(r.sum, gs, 2));
    assert_int_equal(gk[0], 1);
    assert_int_equal(gk[1], 2);
    assert_int_equal(gc[0], 2);
    assert_int_equal(gs[1], 4);
    coproc_group_result_free(&r);
    coproc_column_free(keys);
    coproc_column_free(fkeys);
    coproc_column_free(short_vals);
    coproc_close(rt);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_group_by_matches_reference),
        cmocka_unit_test(test_group_by_bad_input),
        cmocka_unit_test(test_group_by_aggs),
        cmocka_unit_test(test_group_by_aggs_bad_flags),
        cmocka_unit_test(test_group_by_colliding_keys),
        cmocka_unit_test(test_group_by_capped_rows),
        cmocka_unit_test(test_group_by_capped_many_groups),
        cmocka_unit_test(test_group_by_f32_exact_sums),
    };
    /* COPROC_TEST_FILTER picks tests by name (glob). */
    const char *filter = getenv("COPROC_TEST_FILTER");
    if (filter && *filter)
        cmocka_set_test_filter(filter);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
