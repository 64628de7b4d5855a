/* test_nulls.c - nulls (coproc.h, "nulls") in every operator against a scalar
 * C reference: validity bitmaps with null rates 0, 1 %, 50 % and 100 %, every
 * type, sizes at the edges (0, 1, 31, 32, 33, 1000+, several work-groups), on
 * every device and both kernel paths (test_each_device_path), over device
 * columns (run at once) and host columns (a task: the inputs' validities
 * made resident beside them, the results' brought back). The values under
 * nulls are garbage on purpose, and so are the bitmaps' bits past the last
 * row: neither may change a result. Bad input: bitmaps of the wrong type,
 * length, place or runtime; what is not handled yet refuses (UNSUPPORTED).
 * COPROC_TEST_MAX_ROWS caps the sizes and COPROC_TEST_QUICK keeps one case of
 * each kind (Oclgrind, tests/test_oclgrind.sh). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testlib.h"

#include "coproc/query.h"

static const size_t sizes[] = {0, 1, 31, 32, 33, 1000, 5003, 70001};
#define NSIZES (sizeof sizes / sizeof *sizes)

/* COPROC_TEST_MAX_ROWS (tests/test_oclgrind.sh): only sizes up to it. */
static int too_big(size_t n)
{
    const char *m = getenv("COPROC_TEST_MAX_ROWS");
    return m && n > (size_t)strtoull(m, NULL, 10);
}

/* COPROC_TEST_QUICK (Oclgrind): every kernel once, not every combination:
 * device columns, int32 and float64 (both element sizes), a null rate of 50 %. */
static int skip_quick(int host, int type, size_t rate_index)
{
    if (!getenv("COPROC_TEST_QUICK"))
        return 0;
    return host || (type != COPROC_INT32 && type != COPROC_FLOAT64) || rate_index != 2;
}
static const double rates[] = {0, 0.01, 0.5, 1};
#define NRATES (sizeof rates / sizeof *rates)

/* ---- data */

static int valid_at(const uint32_t *v, size_t i) { return v ? (v[i >> 5] >> (i & 31)) & 1 : 1; }

/* A validity of n rows, a null with probability rate; the bits past row n
 * are random (they must be ignored). */
static uint32_t *make_validity(size_t n, double rate, test_rng *r)
{
    size_t words = (n + 31) / 32;
    uint32_t *v = calloc(words ? words : 1, 4);
    for (size_t w = 0; w < words; w++)
        v[w] = (uint32_t)test_rand(r); /* the garbage past n stays */
    for (size_t i = 0; i < n; i++) {
        int null = rate >= 1 || (rate > 0 && (double)test_rand_below(r, 1000000) < rate * 1e6);
        if (null)
            v[i >> 5] &= ~(1u << (i & 31));
        else
            v[i >> 5] |= 1u << (i & 31);
    }
    return v;
}

/* n values of t: integers over their whole range (or keys below `range` when
 * it is nonzero), floats quarters in [-250, 250] (sums exact in double and
 * prefix sums exact in float). Rows under nulls (valid NULL: none) get
 * extreme garbage: NaN, the types' extremes. */
static void *make_values(coproc_type t, size_t n, uint64_t range, const uint32_t *valid,
                         test_rng *r)
{
    size_t es = coproc_type_size(t);
    unsigned char *d = malloc(n ? n * es : 8);
    for (size_t i = 0; i < n; i++) {
        uint64_t x = test_rand(r);
        int garbage = !valid_at(valid, i);
        if (range && !garbage)
            x = (uint64_t)((int64_t)(x % range) - (t == COPROC_INT32 || t == COPROC_INT64
                                                       ? (int64_t)range / 2 : 0));
        switch (t) {
        case COPROC_INT32: case COPROC_UINT32: { uint32_t v = (uint32_t)x; memcpy(d + i * 4, &v, 4); break; }
        case COPROC_INT64: case COPROC_UINT64: memcpy(d + i * 8, &x, 8); break;
        case COPROC_FLOAT32: {
            float v = garbage ? (x & 1 ? NAN : INFINITY) : (float)((int)(x % 2001) - 1000) / 4.0f;
            memcpy(d + i * 4, &v, 4);
            break;
        }
        default: {
            double v = garbage ? (x & 1 ? NAN : -INFINITY) : (double)((int)(x % 2001) - 1000) / 4.0;
            memcpy(d + i * 8, &v, 8);
            break;
        }
        }
    }
    return d;
}

/* A column of rt over data (device `dev`, or a host column when dev < 0, which
 * borrows data and valid: keep them until it is freed) with validity valid
 * (NULL: none). */
static coproc_column *make_col(coproc_runtime *rt, int dev, coproc_type t, const void *data,
                               size_t n, const uint32_t *valid)
{
    coproc_column *c = NULL, *b = NULL;
    size_t words = (n + 31) / 32;
    if (dev < 0) {
        assert_ok(rt, coproc_column_wrap(rt, t, data, n, &c));
        if (valid)
            assert_ok(rt, coproc_column_wrap(rt, COPROC_UINT32, valid, words, &b));
    } else {
        assert_ok(rt, coproc_column_upload(rt, dev, t, data, n, &c));
        if (valid)
            assert_ok(rt, coproc_column_upload(rt, dev, COPROC_UINT32, valid, words, &b));
    }
    if (b)
        assert_ok(rt, coproc_column_set_validity(c, b));
    return c;
}

/* A column's values and validity downloaded (malloc'd; *valid NULL without one). */
static void *fetch(coproc_runtime *rt, const coproc_column *c, uint32_t **valid)
{
    size_t n = coproc_column_length(c);
    void *d = malloc(n ? n * coproc_type_size(coproc_column_type(c)) : 8);
    assert_ok(rt, coproc_column_download(c, d, n));
    const coproc_column *v = coproc_column_validity(c);
    *valid = NULL;
    if (v) {
        assert_int_equal(coproc_column_type(v), COPROC_UINT32);
        assert_int_equal(coproc_column_length(v), (n + 31) / 32);
        *valid = malloc((n + 31) / 32 * 4 + 4);
        assert_ok(rt, coproc_column_download(v, *valid, (n + 31) / 32));
    }
    return d;
}

static int is_float(coproc_type t) { return t == COPROC_FLOAT32 || t == COPROC_FLOAT64; }
static int is_signed(coproc_type t) { return t == COPROC_INT32 || t == COPROC_INT64; }

/* Element i of d (type t) as raw bits, and equality of two elements (floats
 * by value, NaN equal to NaN). */
static uint64_t bits_at(coproc_type t, const void *d, size_t i)
{
    if (coproc_type_size(t) == 4)
        return ((const uint32_t *)d)[i];
    return ((const uint64_t *)d)[i];
}

static int same_value(coproc_type t, const void *a, size_t i, const void *b, size_t j)
{
    if (is_float(t)) {
        double x = test_get_f(t, a, i), y = test_get_f(t, b, j);
        return x == y || (isnan(x) && isnan(y));
    }
    return bits_at(t, a, i) == bits_at(t, b, j);
}

static int has_fp64(coproc_runtime *rt, int dev)
{
    coproc_device_info info;
    assert_ok(rt, coproc_device_info_get(rt, dev, &info));
    return info.has_fp64;
}

/* The types a device holds (float64 needs fp64). */
static int type_ok(coproc_runtime *rt, int dev, coproc_type t)
{
    return t != COPROC_FLOAT64 || has_fp64(rt, dev);
}

/* Check that out's rows equal the expected rows and validity (want_valid NULL:
 * out must have no validity, or one with every bit set). Values are compared
 * at valid rows only. */
static void check_column(coproc_runtime *rt, const coproc_column *out, coproc_type t,
                         const void *want, const uint32_t *want_valid, size_t n, const char *ctx)
{
    assert_int_equal(coproc_column_type(out), t);
    if (coproc_column_length(out) != n)
        fail_msg("%s: %zu rows, expected %zu", ctx, coproc_column_length(out), n);
    uint32_t *gv;
    void *got = fetch(rt, out, &gv);
    for (size_t i = 0; i < n; i++) {
        int w = valid_at(want_valid, i), g = valid_at(gv, i);
        if (w != g)
            fail_msg("%s: row %zu is %s, expected %s", ctx, i, g ? "valid" : "null",
                     w ? "valid" : "null");
        if (w && !same_value(t, got, i, want, i))
            fail_msg("%s: row %zu is %#llx, expected %#llx", ctx, i,
                     (unsigned long long)bits_at(t, got, i), (unsigned long long)bits_at(t, want, i));
    }
    uint64_t nulls = 0, want_nulls = 0;
    for (size_t i = 0; i < n; i++)
        want_nulls += !valid_at(want_valid, i);
    assert_ok(rt, coproc_column_null_count(out, &nulls));
    if (nulls != want_nulls)
        fail_msg("%s: null_count %llu, expected %llu", ctx, (unsigned long long)nulls,
                 (unsigned long long)want_nulls);
    free(got);
    free(gv);
}

/* ---- reduce, reduce_where */

static void ref_reduce(coproc_type t, coproc_reduce_op op, const void *d, size_t n,
                       const uint32_t *valid, const uint32_t *sel, coproc_scalar *out)
{
    memset(out, 0, sizeof *out);
    int64_t si = 0, mi = is_signed(t) ? (op == COPROC_REDUCE_MIN ? INT64_MAX : INT64_MIN) : 0;
    uint64_t su = 0, mu = op == COPROC_REDUCE_MIN ? UINT64_MAX : 0;
    double sf = 0, mf = op == COPROC_REDUCE_MIN ? INFINITY : -INFINITY;
    uint64_t count = 0;
    for (size_t i = 0; i < n; i++) {
        if (!valid_at(valid, i) || !valid_at(sel, i))
            continue;
        count++;
        if (is_float(t)) {
            double x = test_get_f(t, d, i);
            sf += x;
            mf = op == COPROC_REDUCE_MIN ? fmin(mf, x) : fmax(mf, x);
        } else if (is_signed(t)) {
            int64_t x = test_get_i(t, d, i);
            si = (int64_t)((uint64_t)si + (uint64_t)x);
            mi = op == COPROC_REDUCE_MIN ? (x < mi ? x : mi) : (x > mi ? x : mi);
        } else {
            uint64_t x = test_get_u(t, d, i);
            su += x;
            mu = op == COPROC_REDUCE_MIN ? (x < mu ? x : mu) : (x > mu ? x : mu);
        }
    }
    out->count = count;
    if (op == COPROC_REDUCE_COUNT)
        out->v.u64 = count;
    else if (op == COPROC_REDUCE_SUM)
        is_float(t) ? (void)(out->v.f64 = sf) : is_signed(t) ? (void)(out->v.i64 = si)
                                                              : (void)(out->v.u64 = su);
    else
        is_float(t) ? (void)(out->v.f64 = mf) : is_signed(t) ? (void)(out->v.i64 = mi)
                                                              : (void)(out->v.u64 = mu);
}

static void check_scalar(coproc_type t, coproc_reduce_op op, const coproc_scalar *got,
                         const coproc_scalar *want, const char *ctx)
{
    if (got->count != want->count)
        fail_msg("%s: count %llu, expected %llu", ctx, (unsigned long long)got->count,
                 (unsigned long long)want->count);
    if (want->count == 0 && op != COPROC_REDUCE_COUNT)
        return; /* SQL's NULL: the value is the identity, not compared */
    int ok = op == COPROC_REDUCE_COUNT ? got->v.u64 == want->v.u64
             : is_float(t)             ? got->v.f64 == want->v.f64
             : is_signed(t)            ? got->v.i64 == want->v.i64
                                       : got->v.u64 == want->v.u64;
    if (!ok)
        fail_msg("%s: %#llx (%g), expected %#llx (%g)", ctx, (unsigned long long)got->v.u64,
                 got->v.f64, (unsigned long long)want->v.u64, want->v.f64);
}

static void reduce_case(coproc_runtime *rt, int device, const char *path, void *user)
{
    (void)user;
    test_rng r = {11};
    for (int host = 0; host < 2; host++)
        for (int t = 0; t < COPROC__TYPE_COUNT; t++) {
            if (!type_ok(rt, device, (coproc_type)t))
                continue;
            for (size_t si = 0; si < NSIZES; si++)
                for (size_t ri = 0; ri < NRATES; ri++) {
                    size_t n = sizes[si];
                    if (too_big(n) || skip_quick(host, t, ri))
                        continue;
                    if (host && n > 5003)
                        continue;
                    uint32_t *v = make_validity(n, rates[ri], &r);
                    uint32_t *sel = make_validity(n, 0.3, &r);
                    void *d = make_values((coproc_type)t, n, 0, v, &r);
                    coproc_column *c = make_col(rt, host ? -1 : device, (coproc_type)t, d, n, v);
                    coproc_column *b = make_col(rt, host ? -1 : device, COPROC_UINT32, sel,
                                                (n + 31) / 32, NULL);
                    for (int op = 0; op <= COPROC_REDUCE_COUNT; op++) {
                        char ctx[128];
                        coproc_scalar got, want;
                        snprintf(ctx, sizeof ctx, "%s %s reduce op %d %s n=%zu rate=%g", path,
                                 host ? "host" : "device", op, coproc_type_name((coproc_type)t),
                                 n, rates[ri]);
                        assert_ok(rt, coproc_reduce(rt, (coproc_reduce_op)op, c, &got));
                        ref_reduce((coproc_type)t, (coproc_reduce_op)op, d, n, v, NULL, &want);
                        check_scalar((coproc_type)t, (coproc_reduce_op)op, &got, &want, ctx);
                        strcat(ctx, " where");
                        assert_ok(rt, coproc_reduce_where(rt, (coproc_reduce_op)op, c, b, &got));
                        ref_reduce((coproc_type)t, (coproc_reduce_op)op, d, n, v, sel, &want);
                        check_scalar((coproc_type)t, (coproc_reduce_op)op, &got, &want, ctx);
                    }
                    coproc_column_free(c);
                    coproc_column_free(b);
                    free(v);
                    free(sel);
                    free(d);
                }
        }
}

static void test_nulls_reduce(void **state) { test_each_device_path(reduce_case, NULL); }

/* ---- select, select_bitmap */

static int cmp_test(coproc_type t, const void *d, size_t i, coproc_cmp cmp, coproc_value a)
{
    if (is_float(t)) {
        double x = test_get_f(t, d, i);
        return cmp == COPROC_CMP_LT ? x < a.f64 : cmp == COPROC_CMP_GE ? x >= a.f64 : x != a.f64;
    }
    if (is_signed(t)) {
        int64_t x = test_get_i(t, d, i);
        return cmp == COPROC_CMP_LT ? x < a.i64 : cmp == COPROC_CMP_GE ? x >= a.i64 : x != a.i64;
    }
    uint64_t x = test_get_u(t, d, i);
    return cmp == COPROC_CMP_LT ? x < a.u64 : cmp == COPROC_CMP_GE ? x >= a.u64 : x != a.u64;
}

static void select_case(coproc_runtime *rt, int device, const char *path, void *user)
{
    (void)user;
    test_rng r = {12};
    for (int host = 0; host < 2; host++)
        for (int t = 0; t < COPROC__TYPE_COUNT; t++) {
            if (!type_ok(rt, device, (coproc_type)t))
                continue;
            coproc_value mid = {0};
            if (!is_float((coproc_type)t) && !is_signed((coproc_type)t))
                mid.u64 = coproc_type_size((coproc_type)t) == 4 ? 1u << 31 : 1ull << 63;
            for (size_t si = 0; si < NSIZES; si++)
                for (size_t ri = 0; ri < NRATES; ri++) {
                    size_t n = sizes[si];
                    if (too_big(n) || skip_quick(host, t, ri))
                        continue;
                    if (host && n > 5003)
                        continue;
                    uint32_t *v1 = make_validity(n, rates[ri], &r), *v2 = make_validity(n, 0.2, &r);
                    void *d1 = make_values((coproc_type)t, n, 0, v1, &r);
                    void *d2 = make_values((coproc_type)t, n, 0, v2, &r);
                    coproc_column *c1 = make_col(rt, host ? -1 : device, (coproc_type)t, d1, n, v1);
                    coproc_column *c2 = make_col(rt, host ? -1 : device, (coproc_type)t, d2, n, v2);
                    /* NE: a null's garbage (NaN, extremes) would pass it */
                    coproc_cmp cmps[] = {COPROC_CMP_LT, COPROC_CMP_NE};
                    for (int ci = 0; ci < 2; ci++)
                        for (int logic = 0; logic <= COPROC_LOGIC_OR; logic++) {
                            coproc_filter f = {
                                .first = {.col = c1, .cmp = cmps[ci], .a = mid},
                                .logic = (coproc_logic)logic,
                                .second = {.col = c2, .cmp = COPROC_CMP_GE, .a = mid}};
                            char ctx[128];
                            snprintf(ctx, sizeof ctx, "%s %s select %s cmp %d logic %d n=%zu "
                                     "rate=%g", path, host ? "host" : "device",
                                     coproc_type_name((coproc_type)t), cmps[ci], logic, n,
                                     rates[ri]);
                            size_t want = 0;
                            uint32_t *wb = calloc((n + 31) / 32 + 1, 4);
                            uint32_t *wp = malloc((n + 1) * 4);
                            for (size_t i = 0; i < n; i++) {
                                int p1 = valid_at(v1, i) &&
                                         cmp_test((coproc_type)t, d1, i, cmps[ci], mid);
                                int p2 = valid_at(v2, i) &&
                                         cmp_test((coproc_type)t, d2, i, COPROC_CMP_GE, mid);
                                int pass = logic == COPROC_LOGIC_NONE ? p1
                                           : logic == COPROC_LOGIC_AND ? p1 && p2 : p1 || p2;
                                if (pass) {
                                    wb[i >> 5] |= 1u << (i & 31);
                                    wp[want++] = (uint32_t)i;
                                }
                            }
                            coproc_column *pos = NULL, *bm = NULL;
                            uint64_t count = 0;
                            assert_ok(rt, coproc_select(rt, &f, NULL, &count)); /* count only */
                            if (count != want)
                                fail_msg("%s: count only %llu, expected %zu", ctx,
                                         (unsigned long long)count, want);
                            assert_ok(rt, coproc_select(rt, &f, &pos, &count));
                            assert_int_equal(count, want);
                            check_column(rt, pos, COPROC_UINT32, wp, NULL, want, ctx);
                            assert_ok(rt, coproc_select_bitmap(rt, &f, &bm, &count));
                            assert_int_equal(count, want);
                            uint32_t *gb = malloc((n + 31) / 32 * 4 + 4);
                            assert_ok(rt, coproc_column_download(bm, gb, (n + 31) / 32));
                            for (size_t i = 0; i < n; i++)
                                if (valid_at(gb, i) != valid_at(wb, i))
                                    fail_msg("%s: bitmap row %zu", ctx, i);
                            assert_null(coproc_column_validity(bm));
                            free(gb);
                            free(wb);
                            free(wp);
                            coproc_column_free(pos);
                            coproc_column_free(bm);
                        }
                    coproc_column_free(c1);
                    coproc_column_free(c2);
                    free(v1);
                    free(v2);
                    free(d1);
                    free(d2);
                }
        }
}

static void test_nulls_select(void **state) { test_each_device_path(select_case, NULL); }

/* ---- map, map_const, cast, scan */

/* want[i] = a[i] + b[i] (wrapping; floats exact), and the element bytes of (to)x. */
static void add_at(coproc_type t, const void *a, const void *b, void *out, size_t i)
{
    switch (t) {
    case COPROC_INT32: case COPROC_UINT32:
        ((uint32_t *)out)[i] = ((const uint32_t *)a)[i] + ((const uint32_t *)b)[i]; break;
    case COPROC_INT64: case COPROC_UINT64:
        ((uint64_t *)out)[i] = ((const uint64_t *)a)[i] + ((const uint64_t *)b)[i]; break;
    case COPROC_FLOAT32: ((float *)out)[i] = ((const float *)a)[i] + ((const float *)b)[i]; break;
    default: ((double *)out)[i] = ((const double *)a)[i] + ((const double *)b)[i]; break;
    }
}

static void map_case(coproc_runtime *rt, int device, const char *path, void *user)
{
    (void)user;
    test_rng r = {13};
    for (int host = 0; host < 2; host++)
        for (int t = 0; t < COPROC__TYPE_COUNT; t++) {
            if (!type_ok(rt, device, (coproc_type)t))
                continue;
            coproc_type to = is_float((coproc_type)t) ? COPROC_INT32 : COPROC_FLOAT32;
            for (size_t si = 0; si < NSIZES; si++)
                for (size_t ri = 0; ri < NRATES; ri++) {
                    size_t n = sizes[si];
                    if (too_big(n) || skip_quick(host, t, ri))
                        continue;
                    if (host && n > 5003)
                        continue;
                    uint32_t *va = make_validity(n, rates[ri], &r), *vb = make_validity(n, 0.1, &r);
                    void *a = make_values((coproc_type)t, n, 0, va, &r);
                    void *b = make_values((coproc_type)t, n, 0, vb, &r);
                    coproc_column *ca = make_col(rt, host ? -1 : device, (coproc_type)t, a, n, va);
                    coproc_column *cb = make_col(rt, host ? -1 : device, (coproc_type)t, b, n, vb);
                    coproc_column *cn = make_col(rt, host ? -1 : device, (coproc_type)t, b, n, NULL);
                    size_t es = coproc_type_size((coproc_type)t);
                    unsigned char *want = malloc(n ? n * 8 : 8);
                    uint32_t *wv = calloc((n + 31) / 32 + 1, 4);
                    char ctx[128];
                    snprintf(ctx, sizeof ctx, "%s %s map %s n=%zu rate=%g", path,
                             host ? "host" : "device", coproc_type_name((coproc_type)t), n, rates[ri]);
                    /* a + b: valid where both are */
                    coproc_column *out = NULL;
                    assert_ok(rt, coproc_map(rt, COPROC_ARITH_ADD, ca, cb, &out));
                    for (size_t i = 0; i < n; i++) {
                        add_at((coproc_type)t, a, b, want, i);
                        if (valid_at(va, i) && valid_at(vb, i))
                            wv[i >> 5] |= 1u << (i & 31);
                    }
                    check_column(rt, out, (coproc_type)t, want, wv, n, ctx);
                    coproc_column_free(out);
                    /* a + (b without nulls): a's validity */
                    assert_ok(rt, coproc_map(rt, COPROC_ARITH_ADD, ca, cn, &out));
                    memset(wv, 0, ((n + 31) / 32 + 1) * 4);
                    for (size_t i = 0; i < n; i++)
                        if (valid_at(va, i))
                            wv[i >> 5] |= 1u << (i & 31);
                    check_column(rt, out, (coproc_type)t, want, wv, n, ctx);
                    coproc_column_free(out);
                    /* (b without nulls) + (b without nulls): no validity */
                    assert_ok(rt, coproc_map(rt, COPROC_ARITH_ADD, cn, cn, &out));
                    assert_null(coproc_column_validity(out));
                    coproc_column_free(out);
                    /* a + a as map_const(a, ADD, 0) + a: a's validity; a * 1 */
                    coproc_value one = {0};
                    if (is_float((coproc_type)t))
                        one.f64 = 1;
                    else
                        one.u64 = 1;
                    assert_ok(rt, coproc_map_const(rt, COPROC_ARITH_MUL, ca, one, &out));
                    check_column(rt, out, (coproc_type)t, a, wv, n, ctx);
                    coproc_column_free(out);
                    /* cast: null in, null out */
                    assert_ok(rt, coproc_cast(rt, ca, to, &out));
                    for (size_t i = 0; i < n; i++) {
                        if (to == COPROC_INT32) {
                            int32_t x = valid_at(va, i) ? (int32_t)test_get_f((coproc_type)t, a, i) : 0;
                            memcpy(want + i * 4, &x, 4);
                        } else {
                            float x = !valid_at(va, i) ? 0.0f
                                      : is_signed((coproc_type)t)
                                          ? (float)test_get_i((coproc_type)t, a, i)
                                          : (float)test_get_u((coproc_type)t, a, i);
                            memcpy(want + i * 4, &x, 4);
                        }
                    }
                    check_column(rt, out, to, want, wv, n, ctx);
                    coproc_column_free(out);
                    /* scan: nulls add 0 and stay null */
                    coproc_type st = is_float((coproc_type)t) ? (coproc_type)t
                                     : is_signed((coproc_type)t) ? COPROC_INT64 : COPROC_UINT64;
                    for (int excl = 0; excl < 2; excl++) {
                        assert_ok(rt, coproc_scan(rt, ca, excl, &out));
                        double accf = 0;
                        uint64_t acc = 0;
                        for (size_t i = 0; i < n; i++) {
                            int ok = valid_at(va, i);
                            double xf = ok && is_float((coproc_type)t) ? test_get_f((coproc_type)t, a, i) : 0;
                            uint64_t xi = !ok || is_float((coproc_type)t) ? 0
                                          : is_signed((coproc_type)t) ? (uint64_t)test_get_i((coproc_type)t, a, i)
                                                                      : test_get_u((coproc_type)t, a, i);
                            if (!excl) {
                                accf += xf;
                                acc += xi;
                            }
                            if (st == COPROC_FLOAT32) {
                                float f = (float)accf;
                                memcpy(want + i * 4, &f, 4);
                            } else if (st == COPROC_FLOAT64) {
                                memcpy(want + i * 8, &accf, 8);
                            } else {
                                memcpy(want + i * 8, &acc, 8);
                            }
                            if (excl) {
                                accf += xf;
                                acc += xi;
                            }
                        }
                        check_column(rt, out, st, want, wv, n, ctx);
                        coproc_column_free(out);
                    }
                    (void)es;
                    coproc_column_free(ca);
                    coproc_column_free(cb);
                    coproc_column_free(cn);
                    free(va);
                    free(vb);
                    free(a);
                    free(b);
                    free(want);
                    free(wv);
                }
        }
}

static void test_nulls_map_cast_scan(void **state) { test_each_device_path(map_case, NULL); }

/* ---- gather, compact */

static void gather_case(coproc_runtime *rt, int device, const char *path, void *user)
{
    (void)user;
    test_rng r = {14};
    for (int host = 0; host < 2; host++)
        for (int t = 0; t < COPROC__TYPE_COUNT; t++) {
            if (!type_ok(rt, device, (coproc_type)t))
                continue;
            size_t es = coproc_type_size((coproc_type)t);
            for (size_t si = 0; si < NSIZES; si++)
                for (size_t ri = 0; ri < NRATES; ri++) {
                    size_t n = sizes[si];
                    if (too_big(n) || skip_quick(host, t, ri))
                        continue;
                    if (host && n > 5003)
                        continue;
                    uint32_t *v = make_validity(n, rates[ri], &r), *sel = make_validity(n, 0.4, &r);
                    void *d = make_values((coproc_type)t, n, 0, v, &r);
                    coproc_column *c = make_col(rt, host ? -1 : device, (coproc_type)t, d, n, v);
                    char ctx[128];
                    snprintf(ctx, sizeof ctx, "%s %s gather %s n=%zu rate=%g", path,
                             host ? "host" : "device", coproc_type_name((coproc_type)t), n, rates[ri]);
                    /* gather at m random positions (m = n + 7, none when n = 0) */
                    size_t m = n ? n + 7 : 0;
                    uint32_t *p = malloc((m + 1) * 4);
                    unsigned char *want = malloc((m + 1) * es);
                    uint32_t *wv = calloc((m + 31) / 32 + 1, 4);
                    for (size_t i = 0; i < m; i++) {
                        p[i] = (uint32_t)test_rand_below(&r, n);
                        memcpy(want + i * es, (const char *)d + p[i] * es, es);
                        if (valid_at(v, p[i]))
                            wv[i >> 5] |= 1u << (i & 31);
                    }
                    coproc_column *cp = make_col(rt, host ? -1 : device, COPROC_UINT32, p, m, NULL);
                    coproc_column *out = NULL;
                    assert_ok(rt, coproc_gather(rt, c, cp, &out));
                    check_column(rt, out, (coproc_type)t, want, wv, m, ctx);
                    coproc_column_free(out);
                    /* positions with nulls (rate rates[3 - ri]) that hold garbage, out of
                     * range: those rows of out are null */
                    strcat(ctx, " null positions");
                    uint32_t *pv = make_validity(m, rates[NRATES - 1 - ri], &r);
                    for (size_t i = 0; i < m; i++)
                        if (!valid_at(pv, i)) {
                            p[i] = UINT32_MAX - (uint32_t)i;
                            wv[i >> 5] &= ~(1u << (i & 31));
                        }
                    coproc_column *cpn = make_col(rt, host ? -1 : device, COPROC_UINT32, p, m, pv);
                    assert_ok(rt, coproc_gather(rt, c, cpn, &out));
                    check_column(rt, out, (coproc_type)t, want, wv, m, ctx);
                    coproc_column_free(out);
                    coproc_column_free(cpn);
                    /* the same as UINT64 positions (garbage past 2^32 under nulls) */
                    strcat(ctx, " uint64");
                    uint64_t *p64 = malloc((m + 1) * 8);
                    for (size_t i = 0; i < m; i++)
                        p64[i] = valid_at(pv, i) ? p[i] : UINT64_MAX - i;
                    cpn = make_col(rt, host ? -1 : device, COPROC_UINT64, p64, m, pv);
                    assert_ok(rt, coproc_gather(rt, c, cpn, &out));
                    check_column(rt, out, (coproc_type)t, want, wv, m, ctx);
                    coproc_column_free(out);
                    coproc_column_free(cpn);
                    free(p64);
                    free(pv);
                    /* compact by sel: the selected rows keep their nulls */
                    strcat(ctx, " compact");
                    coproc_column *bm = make_col(rt, host ? -1 : device, COPROC_UINT32, sel,
                                                 (n + 31) / 32, NULL);
                    size_t k = 0;
                    memset(wv, 0, ((m + 31) / 32 + 1) * 4);
                    for (size_t i = 0; i < n; i++)
                        if (valid_at(sel, i)) {
                            memcpy(want + k * es, (const char *)d + i * es, es);
                            if (valid_at(v, i))
                                wv[k >> 5] |= 1u << (k & 31);
                            k++;
                        }
                    assert_ok(rt, coproc_compact(rt, c, bm, &out));
                    check_column(rt, out, (coproc_type)t, want, wv, k, ctx);
                    coproc_column_free(out);
                    coproc_column_free(bm);
                    coproc_column_free(cp);
                    coproc_column_free(c);
                    free(p);
                    free(want);
                    free(wv);
                    free(v);
                    free(sel);
                    free(d);
                }
        }
}

static void test_nulls_gather_compact(void **state) { test_each_device_path(gather_case, NULL); }

/* ---- scatter */

/* A host column a scatter may write (coproc_column_host_alloc) holding the n
 * values at data, with the validity valid (NULL: none), or a device column. */
static coproc_column *make_dst(coproc_runtime *rt, int dev, coproc_type t, const void *data,
                               size_t n, const uint32_t *valid)
{
    if (dev >= 0)
        return make_col(rt, dev, t, data, n, valid);
    coproc_column *c = NULL, *b = NULL;
    assert_ok(rt, coproc_column_host_alloc(rt, t, n, &c));
    if (n)
        memcpy(coproc_column_host_data(c), data, n * coproc_type_size(t));
    if (valid) {
        assert_ok(rt, coproc_column_host_alloc(rt, COPROC_UINT32, (n + 31) / 32, &b));
        if (n)
            memcpy(coproc_column_host_data(b), valid, (n + 31) / 32 * 4);
        assert_ok(rt, coproc_column_set_validity(c, b));
    }
    return c;
}

/* dst row positions[i] takes src row i's value and validity; a null position
 * writes nothing; of duplicate positions the last row (the highest i) wins.
 * Every combination of src, positions and dst with or without a validity
 * (mask bits 1, 2, 4), m = n + n / 2 + 1 rows into n (so duplicates), garbage
 * (out of range) under the null positions. */
static void scatter_case(coproc_runtime *rt, int device, const char *path, void *user)
{
    (void)user;
    test_rng r = {15};
    for (int host = 0; host < 2; host++)
        for (int t = 0; t < COPROC__TYPE_COUNT; t++) {
            if (!type_ok(rt, device, (coproc_type)t))
                continue;
            size_t es = coproc_type_size((coproc_type)t);
            for (size_t si = 0; si < NSIZES; si++)
                for (size_t ri = 0; ri < NRATES; ri++)
                    for (int mask = 1; mask < 8; mask++) {
                        size_t n = sizes[si], m = n ? n + n / 2 + 1 : 0;
                        if (too_big(n) || skip_quick(host, t, ri))
                            continue;
                        if (host && n > 5003)
                            continue;
                        uint32_t *sv = mask & 1 ? make_validity(m, rates[ri], &r) : NULL;
                        uint32_t *pv =
                            mask & 2 ? make_validity(m, rates[NRATES - 1 - ri], &r) : NULL;
                        uint32_t *dv = mask & 4 ? make_validity(n, 0.5, &r) : NULL;
                        void *sd = make_values((coproc_type)t, m, 0, sv, &r);
                        void *dd = make_values((coproc_type)t, n, 0, dv, &r);
                        uint32_t *p = malloc((m + 1) * 4);
                        unsigned char *want = malloc((n + 1) * es);
                        uint32_t *wv = malloc(((n + 31) / 32 + 1) * 4);
                        memcpy(want, dd, n * es);
                        for (size_t w = 0; w < (n + 31) / 32; w++)
                            wv[w] = dv ? dv[w] : ~0u;
                        for (size_t i = 0; i < m; i++) {
                            p[i] = (uint32_t)test_rand_below(&r, n);
                            if (!valid_at(pv, i)) {
                                p[i] = UINT32_MAX - (uint32_t)i; /* garbage, never read */
                                continue;
                            }
                            memcpy(want + p[i] * es, (const char *)sd + i * es, es);
                            wv[p[i] >> 5] &= ~(1u << (p[i] & 31));
                            wv[p[i] >> 5] |= (uint32_t)valid_at(sv, i) << (p[i] & 31);
                        }
                        int dev = host ? -1 : device;
                        coproc_column *cs = make_col(rt, dev, (coproc_type)t, sd, m, sv);
                        coproc_column *cp = make_col(rt, dev, COPROC_UINT32, p, m, pv);
                        coproc_column *cd = make_dst(rt, dev, (coproc_type)t, dd, n, dv);
                        char ctx[160];
                        snprintf(ctx, sizeof ctx, "%s %s scatter %s n=%zu rate=%g nulls in%s%s%s",
                                 path, host ? "host" : "device", coproc_type_name((coproc_type)t),
                                 n, rates[ri], sv ? " src" : "", pv ? " positions" : "",
                                 dv ? " dst" : "");
                        assert_ok(rt, coproc_scatter(rt, cs, cp, cd));
                        check_column(rt, cd, (coproc_type)t, want, sv || dv ? wv : NULL, n, ctx);
                        if (!sv && !dv && coproc_column_validity(cd))
                            fail_msg("%s: dst got a validity", ctx);
                        coproc_column_free(cs);
                        coproc_column_free(cp);
                        coproc_column_free(cd);
                        free(sv);
                        free(pv);
                        free(dv);
                        free(sd);
                        free(dd);
                        free(p);
                        free(want);
                        free(wv);
                    }
        }
}

static void test_nulls_scatter(void **state)
{
    test_each_device_path(scatter_case, NULL);
}

/* A valid position out of range: OUT_OF_RANGE and dst untouched, values and
 * validity; a null one is never read. Gather from an empty column: null
 * positions give null rows, a valid one OUT_OF_RANGE. */
static void test_nulls_scatter_gather_range(void **state)
{
    coproc_runtime *rt = test_open(NULL);
    uint32_t data[40], valid[2] = {0xF0F0F0F0u, 0xAB}, nulls[2] = {0, 0};
    for (int i = 0; i < 40; i++)
        data[i] = (uint32_t)i;
    for (int host = 0; host < 2; host++) {
        int dev = host ? -1 : 0;
        uint32_t pos[40];
        for (int i = 0; i < 40; i++)
            pos[i] = (uint32_t)(39 - i);
        pos[17] = 40; /* out of range, valid */
        coproc_column *src = make_col(rt, dev, COPROC_UINT32, data, 40, nulls);
        coproc_column *p = make_col(rt, dev, COPROC_UINT32, pos, 40, NULL);
        coproc_column *dst = make_dst(rt, dev, COPROC_UINT32, data, 40, valid);
        assert_status(COPROC_OUT_OF_RANGE, coproc_scatter(rt, src, p, dst));
        check_column(rt, dst, COPROC_UINT32, data, valid, 40, "scatter out of range");
        coproc_column_free(p);
        uint32_t pvalid[2] = {~(1u << 17), 0xFF};
        p = make_col(rt, dev, COPROC_UINT32, pos, 40, pvalid); /* row 17 null: fine */
        assert_ok(rt, coproc_scatter(rt, src, p, dst));
        uint32_t want_valid[2] = {valid[0] & (1u << 22), valid[1] & 0}; /* 39 - 17 kept */
        check_column(rt, dst, COPROC_UINT32, data, want_valid, 40, "scatter null position");
        coproc_column *empty = make_col(rt, dev, COPROC_UINT32, data, 0, NULL), *out = NULL;
        coproc_column *np = make_col(rt, dev, COPROC_UINT32, pos, 3, nulls);
        assert_ok(rt, coproc_gather(rt, empty, np, &out));
        check_column(rt, out, COPROC_UINT32, data, nulls, 3, "gather from empty, null positions");
        coproc_column_free(out);
        coproc_column_free(np);
        uint32_t one[1] = {2};
        np = make_col(rt, dev, COPROC_UINT32, pos, 3, one);
        assert_status(COPROC_OUT_OF_RANGE, coproc_gather(rt, empty, np, &out));
        assert_null(out);
        coproc_column_free(np);
        coproc_column_free(empty);
        coproc_column_free(src);
        coproc_column_free(p);
        coproc_column_free(dst);
    }
    coproc_close(rt);
}

/* ---- group-by */

/* Keys ordered as their type's values. */
static int key_less(coproc_type t, const void *k, size_t a, size_t b)
{
    if (is_signed(t))
        return test_get_i(t, k, a) < test_get_i(t, k, b);
    return test_get_u(t, k, a) < test_get_u(t, k, b);
}

static coproc_type sum_type(coproc_runtime *rt, int dev, coproc_type vt)
{
    if (is_float(vt))
        return has_fp64(rt, dev) ? COPROC_FLOAT64 : COPROC_FLOAT32;
    return is_signed(vt) ? COPROC_INT64 : COPROC_UINT64;
}

/* The expected groups: keys (sorted, the null group last), count of valid
 * values (rows without values), sum/min/max as doubles or 64-bit ints, valid
 * when the group has a valid value. */
typedef struct ref_group {
    int null_key;
    uint64_t key;   /* bits */
    uint64_t count;
    int64_t si;
    uint64_t su;
    double sf;
    uint64_t min, max; /* bits of the value type's element */
} ref_group;

static size_t order_n;
static coproc_type order_t;
static const void *order_k;
static int cmp_rows(const void *x, const void *y)
{
    size_t a = *(const size_t *)x, b = *(const size_t *)y;
    if (key_less(order_t, order_k, a, b))
        return -1;
    if (key_less(order_t, order_k, b, a))
        return 1;
    return a < b ? -1 : a > b;
}

static int value_less(coproc_type t, const void *d, size_t a, uint64_t bbits)
{
    unsigned char tmp[8];
    memcpy(tmp, &bbits, 8);
    if (is_float(t))
        return test_get_f(t, d, a) < test_get_f(t, tmp, 0);
    if (is_signed(t))
        return test_get_i(t, d, a) < test_get_i(t, tmp, 0);
    return test_get_u(t, d, a) < test_get_u(t, tmp, 0);
}

static int value_greater(coproc_type t, const void *d, size_t a, uint64_t bbits)
{
    unsigned char tmp[8];
    memcpy(tmp, &bbits, 8);
    if (is_float(t))
        return test_get_f(t, d, a) > test_get_f(t, tmp, 0);
    if (is_signed(t))
        return test_get_i(t, d, a) > test_get_i(t, tmp, 0);
    return test_get_u(t, d, a) > test_get_u(t, tmp, 0);
}

static size_t ref_group_by(coproc_type kt, const void *k, const uint32_t *kv, coproc_type vt,
                           const void *d, const uint32_t *dv, size_t n, ref_group *g)
{
    size_t *rows = malloc((n + 1) * sizeof *rows), m = 0, ng = 0;
    for (size_t i = 0; i < n; i++)
        if (valid_at(kv, i))
            rows[m++] = i;
    order_t = kt;
    order_k = k;
    order_n = n;
    qsort(rows, m, sizeof *rows, cmp_rows);
    for (int pass = 0; pass < 2; pass++) {
        size_t i = 0;
        size_t lim = pass == 0 ? m : n;
        while (i < lim) {
            size_t row = pass == 0 ? rows[i] : i;
            if (pass == 1 && valid_at(kv, row)) {
                i++;
                continue;
            }
            ref_group *e = NULL;
            if (pass == 0 && (ng == 0 || g[ng - 1].null_key ||
                              bits_at(kt, k, row) != g[ng - 1].key))
                e = &g[ng++];
            else if (pass == 1 && (ng == 0 || !g[ng - 1].null_key))
                e = &g[ng++];
            if (e) {
                memset(e, 0, sizeof *e);
                e->null_key = pass;
                e->key = pass ? 0 : bits_at(kt, k, row);
            }
            ref_group *cur = &g[ng - 1];
            if (!d) {
                cur->count++;
            } else if (valid_at(dv, row)) {
                if (cur->count == 0) {
                    cur->min = cur->max = bits_at(vt, d, row);
                } else {
                    if (value_less(vt, d, row, cur->min))
                        cur->min = bits_at(vt, d, row);
                    if (value_greater(vt, d, row, cur->max))
                        cur->max = bits_at(vt, d, row);
                }
                cur->count++;
                if (is_float(vt))
                    cur->sf += test_get_f(vt, d, row);
                else if (is_signed(vt))
                    cur->si = (int64_t)((uint64_t)cur->si + (uint64_t)test_get_i(vt, d, row));
                else
                    cur->su += test_get_u(vt, d, row);
            }
            i++;
        }
    }
    free(rows);
    return ng;
}

/* Check a group-by result against the reference: sorted in order, else
 * matched by key (the null group last either way). */
static void check_groups(coproc_runtime *rt, int dev, const coproc_group_result *res,
                         coproc_type kt, coproc_type vt, int has_values, int values_nullable,
                         const ref_group *want, size_t ng, int sorted, unsigned aggs,
                         const char *ctx)
{
    if (res->groups != ng)
        fail_msg("%s: %zu groups, expected %zu", ctx, res->groups, ng);
    uint32_t *kvv, *svv = NULL, *mnv = NULL, *mxv = NULL;
    void *keys = fetch(rt, res->keys, &kvv);
    uint32_t *cv;
    uint64_t *count = fetch(rt, res->count, &cv);
    assert_null(cv);
    void *sum = NULL, *mn = NULL, *mx = NULL;
    coproc_type st = sum_type(rt, dev, vt);
    int has_sum = has_values && (aggs & COPROC_GROUP_SUM), has_mm = has_values && (aggs & COPROC_GROUP_MIN);
    if (!has_sum)
        assert_null(res->sum);
    if (!has_mm)
        assert_true(!res->min && !res->max);
    if (has_sum) {
        sum = fetch(rt, res->sum, &svv);
        assert_int_equal(coproc_column_type(res->sum), st);
        if (!values_nullable)
            assert_null(svv);
    }
    if (has_mm) {
        mn = fetch(rt, res->min, &mnv);
        mx = fetch(rt, res->max, &mxv);
        assert_int_equal(coproc_column_type(res->min), vt);
        if (!values_nullable)
            assert_true(!mnv && !mxv);
    }
    int has_null_group = ng && want[ng - 1].null_key;
    if (!has_null_group)
        assert_null(kvv);
    for (size_t gi = 0; gi < ng; gi++) {
        /* the group of want[gi] in the result */
        size_t at = gi;
        if (!sorted && !want[gi].null_key) {
            for (at = 0; at < ng; at++)
                if (valid_at(kvv, at) && bits_at(kt, keys, at) == want[gi].key)
                    break;
            if (at == ng)
                fail_msg("%s: key %#llx missing", ctx, (unsigned long long)want[gi].key);
        }
        const ref_group *w = &want[gi];
        if (valid_at(kvv, at) != !w->null_key)
            fail_msg("%s: group %zu's key is %s", ctx, at, w->null_key ? "valid" : "null");
        if (!w->null_key && bits_at(kt, keys, at) != w->key)
            fail_msg("%s: group %zu key %#llx, expected %#llx", ctx, at,
                     (unsigned long long)bits_at(kt, keys, at), (unsigned long long)w->key);
        if (count[at] != w->count)
            fail_msg("%s: group %zu (key %#llx%s) count %llu, expected %llu", ctx, at,
                     (unsigned long long)w->key, w->null_key ? ", null" : "",
                     (unsigned long long)count[at], (unsigned long long)w->count);
        if (!has_values)
            continue;
        int valid = w->count > 0;
        if ((has_sum && valid_at(svv, at) != valid) ||
            (has_mm && (valid_at(mnv, at) != valid || valid_at(mxv, at) != valid)))
            fail_msg("%s: group %zu aggregates %s, expected %s", ctx, at,
                     valid ? "null" : "valid", valid ? "valid" : "null");
        if (!valid)
            continue;
        int ok = !has_sum ? 1
                 : is_float(vt) ? test_get_f(st, sum, at) == w->sf
                 : is_signed(vt) ? ((int64_t *)sum)[at] == w->si : ((uint64_t *)sum)[at] == w->su;
        if (!ok)
            fail_msg("%s: group %zu sum wrong", ctx, at);
        if (has_mm && (bits_at(vt, mn, at) != w->min || bits_at(vt, mx, at) != w->max))
            fail_msg("%s: group %zu min/max %#llx/%#llx, expected %#llx/%#llx", ctx, at,
                     (unsigned long long)bits_at(vt, mn, at), (unsigned long long)bits_at(vt, mx, at),
                     (unsigned long long)w->min, (unsigned long long)w->max);
    }
    free(keys);
    free(kvv);
    free(count);
    free(sum);
    free(svv);
    free(mn);
    free(mnv);
    free(mx);
    free(mxv);
}

static void group_by_case(coproc_runtime *rt, int device, const char *path, void *user)
{
    (void)user;
    test_rng r = {15};
    static const size_t gsizes[] = {0, 1, 33, 5003};
    /* every key type with int32 values and none; int64 keys with the others */
    static const int pairs[][2] = {
        {COPROC_INT32, -1}, {COPROC_INT64, -1}, {COPROC_UINT32, -1}, {COPROC_UINT64, -1},
        {COPROC_INT32, COPROC_INT32}, {COPROC_INT64, COPROC_INT32},
        {COPROC_UINT32, COPROC_INT32}, {COPROC_UINT64, COPROC_INT32},
        {COPROC_INT64, COPROC_INT64}, {COPROC_INT64, COPROC_UINT32},
        {COPROC_INT64, COPROC_UINT64}, {COPROC_INT64, COPROC_FLOAT32},
        {COPROC_INT64, COPROC_FLOAT64}};
    for (int host = 0; host < 2; host++)
        for (size_t pi = 0; pi < sizeof pairs / sizeof *pairs; pi++) {
            {
                int kt = pairs[pi][0], vt = pairs[pi][1];
                if (vt >= 0 && !type_ok(rt, device, (coproc_type)vt))
                    continue;
                if (host && kt != COPROC_UINT32 && kt != COPROC_INT64)
                    continue;
                for (size_t si = 0; si < sizeof gsizes / sizeof *gsizes; si++)
                    for (size_t ri = 0; ri < NRATES; ri++)
                        for (int which = 0; which < 3; which++) { /* keys, values, both nullable */
                            size_t n = gsizes[si];
                            if (too_big(n) || skip_quick(host, vt < 0 ? COPROC_INT32 : vt, ri) ||
                                (getenv("COPROC_TEST_QUICK") && pi % 4))
                                continue;
                            if (vt < 0 && which != 0)
                                continue;
                            double kr = which != 1 ? rates[ri] : -1, vr = which != 0 ? rates[ri] : -1;
                            uint32_t *kv = kr >= 0 ? make_validity(n, kr, &r) : NULL;
                            uint32_t *dv = vr >= 0 ? make_validity(n, vr, &r) : NULL;
                            uint64_t range = n > 1000 ? n / 3 : 50;
                            void *k = make_values((coproc_type)kt, n, range, kv, &r);
                            if (which == 2 && n >= 2 && kv) {
                                /* the type's extreme keys: no sentinel key is left for the
                                 * nulls, which group apart (runtime/ops/group_by.c) */
                                int w8 = coproc_type_size((coproc_type)kt) == 8;
                                uint64_t lo = is_signed((coproc_type)kt) ? (w8 ? 1ull << 63 : 1u << 31) : 0;
                                uint64_t hi = lo - 1;
                                if (w8) {
                                    ((uint64_t *)k)[0] = lo;
                                    ((uint64_t *)k)[1] = hi;
                                } else {
                                    ((uint32_t *)k)[0] = (uint32_t)lo;
                                    ((uint32_t *)k)[1] = (uint32_t)hi;
                                }
                                kv[0] |= 3u;
                            }
                            void *d = vt >= 0 ? make_values((coproc_type)vt, n, 0, dv, &r) : NULL;
                            coproc_column *ck = make_col(rt, host ? -1 : device, (coproc_type)kt, k, n, kv);
                            coproc_column *cd = vt >= 0 ? make_col(rt, host ? -1 : device,
                                                                   (coproc_type)vt, d, n, dv) : NULL;
                            ref_group *want = malloc((n + 2) * sizeof *want);
                            size_t ng = ref_group_by((coproc_type)kt, k, kv, (coproc_type)vt, d,
                                                     dv, n, want);
                            /* all aggregates; sums and counts (values' nulls made 0); counts */
                            static const unsigned aggs[] = {
                                COPROC_GROUP_ALL, COPROC_GROUP_SUM | COPROC_GROUP_COUNT,
                                COPROC_GROUP_COUNT};
                            for (int sorted = 0; sorted < 2; sorted++)
                                for (int ai = 0; ai < 3; ai++) {
                                if ((vt < 0 || !sorted) && ai > 0)
                                    continue;
                                char ctx[160];
                                snprintf(ctx, sizeof ctx, "%s %s group_by keys %s values %s n=%zu "
                                         "key rate %g value rate %g sorted %d aggs %#x", path,
                                         host ? "host" : "device", coproc_type_name((coproc_type)kt),
                                         vt >= 0 ? coproc_type_name((coproc_type)vt) : "none", n,
                                         kr, vr, sorted, aggs[ai]);
                                coproc_group_result res;
                                assert_ok(rt, coproc_group_by_aggs(rt, ck, cd, aggs[ai], sorted, &res));
                                check_groups(rt, device, &res, (coproc_type)kt, (coproc_type)vt,
                                             vt >= 0, dv != NULL, want, ng, sorted, aggs[ai], ctx);
                                coproc_group_result_free(&res);
                            }
                            coproc_column_free(ck);
                            coproc_column_free(cd);
                            free(kv);
                            free(dv);
                            free(k);
                            free(d);
                            free(want);
                        }
            }
        }
}

static void test_nulls_group_by(void **state) { test_each_device_path(group_by_case, NULL); }

/* The dense kernels' own null handling (cl/group_by.cl, CPU path): keys over
 * a range wider than a window (some windows stop: the key-range pass and its
 * null slot), over 64 / 65 rows (a validity word split across work-items),
 * nulls in runs (whole words null, whole words valid) and under keys of 0
 * (Arrow's usual bits under a null) or of garbage, int32 and int64 values,
 * sums with counts (the take-back of null values) and every aggregate. */
static void group_by_dense_case(coproc_runtime *rt, int device, const char *path, void *user)
{
    (void)user;
    test_rng r = {19};
    static const size_t nsizes[] = {64, 65, 9001};
    static const int vtypes[] = {COPROC_INT32, COPROC_INT64};
    /* null rates: 30 % (most words mixed), 1 % (a few null keys in some
     * words: runs of valid keys around them; not under COPROC_TEST_QUICK) */
    static const double dense_rates[] = {0.3, 0.01};
    for (size_t si = 0; si < sizeof nsizes / sizeof *nsizes; si++)
        for (int runs = 0; runs < 2; runs++)
            for (int which = 0; which < 3; which++) /* keys, values, both nullable */
                for (size_t vi = 0; vi < 2; vi++)
                    for (size_t qi = 0; qi < 2; qi++) {
                        size_t n = nsizes[si];
                        if (too_big(n) || (getenv("COPROC_TEST_QUICK") && (vi || runs || qi)))
                            continue;
                        double rate = dense_rates[qi];
                        uint32_t *kv = which != 1 ? make_validity(n, rate, &r) : NULL;
                        uint32_t *dv = which != 0 ? make_validity(n, rate, &r) : NULL;
                        for (size_t w = 0; runs && w < (n + 31) / 32; w++) { /* runs of words */
                            if (kv)
                                kv[w] = w % 3 == 0 ? 0 : w % 3 == 1 ? ~0u : kv[w];
                            if (dv)
                                dv[w] = w % 4 == 1 ? 0 : w % 4 == 2 ? ~0u : dv[w];
                        }
                        int32_t *k = make_values(COPROC_INT32, n, n > 1000 ? 3000 : 20, kv, &r);
                        for (size_t i = 0; runs && i < n; i++)
                            if (!valid_at(kv, i))
                                k[i] = 0; /* zeros under the null keys */
                        coproc_type vt = (coproc_type)vtypes[vi];
                        void *d = make_values(vt, n, 0, dv, &r);
                        coproc_column *ck = make_col(rt, device, COPROC_INT32, k, n, kv);
                        coproc_column *cd = make_col(rt, device, vt, d, n, dv);
                        ref_group *want = malloc((n + 2) * sizeof *want);
                        size_t ng = ref_group_by(COPROC_INT32, k, kv, vt, d, dv, n, want);
                        static const unsigned aggs[] = {COPROC_GROUP_SUM | COPROC_GROUP_COUNT,
                                                        COPROC_GROUP_ALL, COPROC_GROUP_COUNT};
                        for (int ai = 0; ai < 3; ai++) {
                            char ctx[160];
                            snprintf(ctx, sizeof ctx,
                                     "%s dense group_by n=%zu runs %d nullable %d rate %g "
                                     "values %s aggs %#x",
                                     path, n, runs, which, rate, coproc_type_name(vt), aggs[ai]);
                            coproc_group_result res;
                            assert_ok(rt, coproc_group_by_aggs(rt, ck, cd, aggs[ai], 1, &res));
                            check_groups(rt, device, &res, COPROC_INT32, vt, 1, dv != NULL, want,
                                         ng, 1, aggs[ai], ctx);
                            coproc_group_result_free(&res);
                        }
                        coproc_column_free(ck);
                        coproc_column_free(cd);
                        free(kv);
                        free(dv);
                        free(k);
                        free(d);
                        free(want);
                    }
}

static void test_nulls_group_by_dense(void **state)
{
    (void)state;
    test_each_device_path(group_by_dense_case, NULL);
}

/* ---- joins */

static void join_case(coproc_runtime *rt, int device, const char *path, void *user)
{
    (void)user;
    test_rng r = {16};
    static const size_t jsizes[] = {0, 1, 33, 700, 3001};
    for (int host = 0; host < 2; host++)
        for (int kt = 0; kt <= COPROC_UINT64; kt++)
            for (size_t li = 0; li < sizeof jsizes / sizeof *jsizes; li++)
                for (size_t ri = 0; ri < NRATES; ri++) {
                    size_t nl = jsizes[li], nr = jsizes[(li + 2) % 5];
                    if (too_big(nl) || too_big(nr) || skip_quick(host, kt, ri))
                        continue;
                    if (host && (kt == COPROC_INT64 || kt == COPROC_UINT32))
                        continue;
                    uint32_t *lv = make_validity(nl, rates[ri], &r), *rv = make_validity(nr, 0.3, &r);
                    uint64_t range = nl > 100 ? nl : 40;
                    void *lk = make_values((coproc_type)kt, nl, range, lv, &r);
                    void *rk = make_values((coproc_type)kt, nr, range, rv, &r);
                    /* garbage under nulls would match: make it a common key */
                    for (size_t i = 0; i < nl; i++)
                        if (!valid_at(lv, i))
                            memcpy((char *)lk + i * coproc_type_size((coproc_type)kt), rk,
                                   nr ? coproc_type_size((coproc_type)kt) : 0);
                    coproc_column *cl = make_col(rt, host ? -1 : device, (coproc_type)kt, lk, nl, lv);
                    coproc_column *cr = make_col(rt, host ? -1 : device, (coproc_type)kt, rk, nr, rv);
                    test_pair *want = malloc((nl * nr + 1) * sizeof *want);
                    size_t m = 0;
                    uint32_t *semi = malloc((nr + 1) * 4);
                    size_t ns = 0;
                    for (size_t j = 0; j < nr; j++) {
                        int hit = 0;
                        for (size_t i = 0; i < nl; i++)
                            if (valid_at(lv, i) && valid_at(rv, j) &&
                                bits_at((coproc_type)kt, lk, i) == bits_at((coproc_type)kt, rk, j)) {
                                want[m++] = (test_pair){(uint32_t)i, (uint32_t)j};
                                hit = 1;
                            }
                        if (hit)
                            semi[ns++] = (uint32_t)j;
                    }
                    qsort(want, m, sizeof *want, test_cmp_pair);
                    char ctx[128];
                    snprintf(ctx, sizeof ctx, "%s %s join %s %zu x %zu rate=%g", path,
                             host ? "host" : "device", coproc_type_name((coproc_type)kt), nl, nr,
                             rates[ri]);
                    for (int merge = 0; merge < 2; merge++) {
                        coproc_join_result j;
                        assert_ok(rt, merge ? coproc_sort_merge_join(rt, cl, cr, &j)
                                            : coproc_hash_join(rt, cl, cr, &j));
                        assert_int_equal(j.count, m);
                        uint32_t *gv;
                        uint32_t *gl = fetch(rt, j.left, &gv), *gr = fetch(rt, j.right, &gv);
                        test_check_pairs(gl, gr, m, want, ctx);
                        free(gl);
                        free(gr);
                        coproc_join_result_free(&j);
                    }
                    uint64_t count = 0;
                    assert_ok(rt, coproc_hash_join_count(rt, cl, cr, &count));
                    assert_int_equal(count, m);
                    coproc_column *pos = NULL;
                    assert_ok(rt, coproc_semi_join(rt, cr, cl, &pos, &count));
                    assert_int_equal(count, ns);
                    check_column(rt, pos, COPROC_UINT32, semi, NULL, ns, ctx);
                    coproc_column_free(pos);
                    coproc_column_free(cl);
                    coproc_column_free(cr);
                    free(lv);
                    free(rv);
                    free(lk);
                    free(rk);
                    free(want);
                    free(semi);
                }
}

static void test_nulls_joins(void **state) { test_each_device_path(join_case, NULL); }

/* ---- sort, argsort */

static void sort_case(coproc_runtime *rt, int device, const char *path, void *user)
{
    (void)user;
    test_rng r = {17};
    for (int host = 0; host < 2; host++)
        for (int t = 0; t < COPROC__TYPE_COUNT; t++) {
            if (!type_ok(rt, device, (coproc_type)t))
                continue;
            size_t es = coproc_type_size((coproc_type)t);
            for (size_t si = 0; si < NSIZES; si++)
                for (size_t ri = 0; ri < NRATES; ri++)
                    for (int first = 0; first < 2; first++) {
                        size_t n = sizes[si];
                        if (too_big(n) || skip_quick(host, t, ri))
                            continue;
                        if (host && n > 5003)
                            continue;
                        uint32_t *v = make_validity(n, rates[ri], &r), *vv = make_validity(n, 0.5, &r);
                        void *k = make_values((coproc_type)t, n, 100, v, &r);
                        void *vals = make_values(COPROC_UINT32, n, 0, vv, &r);
                        /* the reference: valid keys' stable order, nulls in input order */
                        unsigned char *kk = malloc(n ? n * es : 8);
                        uint32_t *rows = malloc((n + 1) * 4), *perm = malloc((n + 1) * 4);
                        uint32_t *want = malloc((n + 1) * 4);
                        size_t m = 0, z = 0;
                        for (size_t i = 0; i < n; i++)
                            if (valid_at(v, i)) {
                                memcpy(kk + m * es, (char *)k + i * es, es);
                                rows[m++] = (uint32_t)i;
                            }
                        test_ref_argsort((coproc_type)t, kk, m, perm);
                        size_t nulls = n - m;
                        for (size_t i = 0; i < n; i++)
                            if (!valid_at(v, i))
                                want[(first ? 0 : m) + z++] = (uint32_t)i;
                        for (size_t i = 0; i < m; i++)
                            want[(first ? nulls : 0) + i] = rows[perm[i]];
                        char ctx[128];
                        snprintf(ctx, sizeof ctx, "%s %s argsort %s n=%zu rate=%g nulls %s", path,
                                 host ? "host" : "device", coproc_type_name((coproc_type)t), n,
                                 rates[ri], first ? "first" : "last");
                        coproc_column *ck = make_col(rt, host ? -1 : device, (coproc_type)t, k, n, v);
                        coproc_column *out = NULL;
                        if (first)
                            assert_ok(rt, coproc_argsort_nulls(rt, ck, 1, &out));
                        else
                            assert_ok(rt, coproc_argsort(rt, ck, &out));
                        check_column(rt, out, COPROC_UINT32, want, NULL, n, ctx);
                        coproc_column_free(out);
                        coproc_column_free(ck);
                        /* sort in place, values (with their own nulls) alongside */
                        strcat(ctx, " sort");
                        coproc_column *sk = NULL, *sv = NULL;
                        if (host) {
                            assert_ok(rt, coproc_column_host_alloc(rt, (coproc_type)t, n, &sk));
                            assert_ok(rt, coproc_column_host_alloc(rt, COPROC_UINT32, n, &sv));
                            if (n) {
                                memcpy(coproc_column_host_data(sk), k, n * es);
                                memcpy(coproc_column_host_data(sv), vals, n * 4);
                            }
                            coproc_column *b1 = NULL, *b2 = NULL;
                            size_t w = (n + 31) / 32;
                            assert_ok(rt, coproc_column_host_alloc(rt, COPROC_UINT32, w, &b1));
                            assert_ok(rt, coproc_column_host_alloc(rt, COPROC_UINT32, w, &b2));
                            if (w) {
                                memcpy(coproc_column_host_data(b1), v, w * 4);
                                memcpy(coproc_column_host_data(b2), vv, w * 4);
                            }
                            assert_ok(rt, coproc_column_set_validity(sk, b1));
                            assert_ok(rt, coproc_column_set_validity(sv, b2));
                        } else {
                            sk = make_col(rt, device, (coproc_type)t, k, n, v);
                            sv = make_col(rt, device, COPROC_UINT32, vals, n, vv);
                        }
                        assert_ok(rt, coproc_sort_nulls(rt, sk, sv, first));
                        unsigned char *wk = malloc(n ? n * es : 8);
                        uint32_t *wvals = malloc((n + 1) * 4);
                        uint32_t *wkv = calloc((n + 31) / 32 + 1, 4), *wvv = calloc((n + 31) / 32 + 1, 4);
                        for (size_t i = 0; i < n; i++) {
                            memcpy(wk + i * es, (char *)k + want[i] * es, es);
                            wvals[i] = ((uint32_t *)vals)[want[i]];
                            if (valid_at(v, want[i]))
                                wkv[i >> 5] |= 1u << (i & 31);
                            if (valid_at(vv, want[i]))
                                wvv[i >> 5] |= 1u << (i & 31);
                        }
                        check_column(rt, sk, (coproc_type)t, wk, wkv, n, ctx);
                        check_column(rt, sv, COPROC_UINT32, wvals, wvv, n, ctx);
                        coproc_column_free(sk);
                        coproc_column_free(sv);
                        free(wk);
                        free(wvals);
                        free(wkv);
                        free(wvv);
                        free(kk);
                        free(rows);
                        free(perm);
                        free(want);
                        free(v);
                        free(vv);
                        free(k);
                        free(vals);
                    }
        }
}

static void test_nulls_sort(void **state) { test_each_device_path(sort_case, NULL); }

/* ---- the representation: set, get, count, bad input */

static void test_nulls_validity_api(void **state)
{
    coproc_runtime *rt = test_open(NULL), *other = test_open(NULL);
    uint32_t data[40] = {0}, words[2] = {0xFFFFFFFEu, 0xF0}; /* rows 0, 36..39 null... */
    words[1] = 0x0F;                                          /* rows 32..35 valid */
    coproc_column *c = NULL, *b = NULL, *b2 = NULL;
    assert_ok(rt, coproc_column_upload(rt, 0, COPROC_UINT32, data, 40, &c));
    assert_null(coproc_column_validity(c));
    uint64_t nulls = 7;
    assert_ok(rt, coproc_column_null_count(c, &nulls));
    assert_int_equal(nulls, 0);
    assert_status(COPROC_NULL_POINTER, coproc_column_null_count(NULL, &nulls));
    assert_status(COPROC_NULL_POINTER, coproc_column_null_count(c, NULL));
    assert_status(COPROC_NULL_POINTER, coproc_column_set_validity(NULL, NULL));

    /* wrong type, length, place, runtime */
    assert_ok(rt, coproc_column_upload(rt, 0, COPROC_INT32, words, 2, &b));
    assert_status(COPROC_UNSUPPORTED_TYPE, coproc_column_set_validity(c, b));
    coproc_column_free(b);
    assert_ok(rt, coproc_column_upload(rt, 0, COPROC_UINT32, words, 1, &b));
    assert_status(COPROC_LENGTH_MISMATCH, coproc_column_set_validity(c, b));
    coproc_column_free(b);
    assert_ok(rt, coproc_column_wrap(rt, COPROC_UINT32, words, 2, &b));
    assert_status(COPROC_WRONG_DEVICE, coproc_column_set_validity(c, b));
    coproc_column_free(b);
    assert_ok(other, coproc_column_upload(other, 0, COPROC_UINT32, words, 2, &b));
    assert_status(COPROC_INVALID_ARGUMENT, coproc_column_set_validity(c, b));
    assert_non_null(strstr(coproc_errmsg(rt), "another runtime"));
    coproc_column_free(b);
    assert_status(COPROC_INVALID_ARGUMENT, coproc_column_set_validity(c, c));
    assert_null(coproc_column_validity(c));

    /* set, count, replace, remove */
    assert_ok(rt, coproc_column_upload(rt, 0, COPROC_UINT32, words, 2, &b));
    assert_ok(rt, coproc_column_set_validity(c, b));
    assert_ptr_equal(coproc_column_validity(c), b);
    assert_ok(rt, coproc_column_null_count(c, &nulls));
    assert_int_equal(nulls, 1 + 4); /* row 0 and rows 36..39 (bits past 40 ignored) */
    /* b is c's now: not another column's, and has no validity of its own */
    coproc_column *d = NULL;
    assert_ok(rt, coproc_column_upload(rt, 0, COPROC_UINT32, data, 40, &d));
    assert_status(COPROC_INVALID_ARGUMENT, coproc_column_set_validity(d, b));
    assert_ok(rt, coproc_column_upload(rt, 0, COPROC_UINT32, words, 1, &b2));
    assert_status(COPROC_INVALID_ARGUMENT, coproc_column_set_validity(b, b2));
    coproc_column_free(b2);
    assert_ok(rt, coproc_column_upload(rt, 0, COPROC_UINT32, words, 2, &b2));
    assert_ok(rt, coproc_column_set_validity(d, b2));
    /* a column with a validity cannot be a validity */
    assert_status(COPROC_INVALID_ARGUMENT, coproc_column_set_validity(c, d));
    coproc_column_free(d);
    assert_ok(rt, coproc_column_set_validity(c, NULL)); /* b freed with it */
    assert_null(coproc_column_validity(c));
    assert_ok(rt, coproc_column_null_count(c, &nulls));
    assert_int_equal(nulls, 0);

    /* a host column counts on the host */
    coproc_column *h = NULL, *hb = NULL;
    assert_ok(rt, coproc_column_wrap(rt, COPROC_UINT32, data, 40, &h));
    assert_ok(rt, coproc_column_wrap(rt, COPROC_UINT32, words, 2, &hb));
    assert_ok(rt, coproc_column_set_validity(h, hb));
    assert_ok(rt, coproc_column_null_count(h, &nulls));
    assert_int_equal(nulls, 5);
    coproc_column_free(h);
    coproc_column_free(c);
    coproc_close(other);
    coproc_close(rt);
}

/* Over the device budget, reduce, select and map stream the validity beside
 * the rows (tests/test_budget_stream.c checks them at every edge): here the
 * public calls at the smallest budget, against the scalar reference, and
 * that the run really streamed; group-by streams them too, its chunks'
 * partial groups merged on the host. */
static void test_nulls_over_budget(void **state)
{
    coproc_options o;
    coproc_options_init(&o);
    o.device_budget_bytes = COPROC_MIN_DEVICE_BUDGET;
    coproc_runtime *rt = test_open_with(&o);
    test_rng r = {16};
    size_t n = (1 << 17) + 33; /* 512 KiB of int32: over the budget */
    for (size_t ri = 0; ri < NRATES; ri++) {
        uint32_t *v = make_validity(n, rates[ri], &r);
        int32_t *d = make_values(COPROC_INT32, n, 2000, v, &r);
        coproc_column *c = make_col(rt, -1, COPROC_INT32, d, n, v);
        char ctx[96];
        snprintf(ctx, sizeof ctx, "over budget rate=%g", rates[ri]);
        for (int op = 0; op <= COPROC_REDUCE_COUNT; op++) {
            coproc_op rop;
            coproc_op_init(&rop, COPROC_OP_REDUCE);
            rop.a = c;
            rop.reduce = (coproc_reduce_op)op;
            coproc_task *t = NULL;
            coproc_result res;
            assert_ok(rt, coproc_submit(rt, &rop, &t));
            assert_ok(rt, coproc_wait(t, &res));
            if (!res.streamed)
                fail_msg("op %d device %d not streamed", op, res.device);
            coproc_scalar want;
            ref_reduce(COPROC_INT32, (coproc_reduce_op)op, d, n, v, NULL, &want);
            check_scalar(COPROC_INT32, (coproc_reduce_op)op, &res.scalar, &want, ctx);
        }
        coproc_filter f = {.first = {.col = c, .cmp = COPROC_CMP_GE, .a.i64 = 0}};
        coproc_column *pos = NULL;
        uint64_t count = 0, want_count = 0;
        assert_ok(rt, coproc_select(rt, &f, &pos, &count));
        const uint32_t *got = coproc_column_host_data(pos);
        for (size_t i = 0; i < n; i++)
            if (valid_at(v, i) && d[i] >= 0) {
                if (want_count >= count || got[want_count] != i)
                    fail_msg("%s: select misses row %zu", ctx, i);
                want_count++;
            }
        assert_int_equal(count, want_count);
        coproc_column_free(pos);
        coproc_column *out = NULL;
        assert_ok(rt, coproc_map(rt, COPROC_ARITH_ADD, c, c, &out));
        int32_t *want = malloc(n * 4);
        for (size_t i = 0; i < n; i++)
            want[i] = (int32_t)((uint32_t)d[i] * 2u);
        check_column(rt, out, COPROC_INT32, want, v, n, ctx);
        coproc_column_free(out);
        free(want);
        /* group-by: c's values as keys (up to 2000 groups and the null
         * one), alone and with int32 values of their own nulls; the chunks'
         * partial groups merge on the host, the null keys' group last. Not
         * under COPROC_TEST_QUICK (Oclgrind): 100+ chunks of group-by
         * kernels there take minutes, and test_nulls_group_by already runs
         * those kernels with nulls. */
        if (getenv("COPROC_TEST_QUICK")) {
            coproc_column_free(c);
            free(d);
            free(v);
            continue;
        }
        uint32_t *vv = make_validity(n, rates[(ri + 1) % NRATES], &r);
        int32_t *vd = make_values(COPROC_INT32, n, 1u << 20, vv, &r);
        coproc_column *cv = make_col(rt, -1, COPROC_INT32, vd, n, vv);
        ref_group *wantg = malloc((n + 1) * sizeof *wantg);
        for (int with_values = 0; with_values < 2; with_values++) {
            coproc_op gop;
            coproc_op_init(&gop, COPROC_OP_GROUP_BY);
            gop.a = c;
            gop.b = with_values ? cv : NULL;
            gop.sorted = with_values;
            coproc_task *t = NULL;
            coproc_result res;
            assert_ok(rt, coproc_submit(rt, &gop, &t));
            assert_ok(rt, coproc_wait(t, &res));
            char gctx[128];
            snprintf(gctx, sizeof gctx, "%s group-by%s", ctx, with_values ? " with values" : "");
            if (!res.streamed)
                fail_msg("%s: device %d not streamed", gctx, res.device);
            size_t ng = ref_group_by(COPROC_INT32, d, v, COPROC_INT32, with_values ? vd : NULL,
                                     vv, n, wantg);
            check_groups(rt, res.device, &res.groups, COPROC_INT32, COPROC_INT32, with_values,
                         with_values && vv, wantg, ng, with_values, COPROC_GROUP_ALL, gctx);
            coproc_result_free(&res);
        }
        free(wantg);
        coproc_column_free(cv);
        free(vd);
        free(vv);
        coproc_column_free(c);
        free(d);
        free(v);
    }
    coproc_close(rt);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_nulls_validity_api),
        cmocka_unit_test(test_nulls_scatter),
        cmocka_unit_test(test_nulls_scatter_gather_range),
        cmocka_unit_test(test_nulls_over_budget),
        cmocka_unit_test(test_nulls_reduce),
        cmocka_unit_test(test_nulls_select),
        cmocka_unit_test(test_nulls_map_cast_scan),
        cmocka_unit_test(test_nulls_gather_compact),
        cmocka_unit_test(test_nulls_group_by),
        cmocka_unit_test(test_nulls_group_by_dense),
        cmocka_unit_test(test_nulls_joins),
        cmocka_unit_test(test_nulls_sort),
    };
    const char *filter = getenv("COPROC_TEST_FILTER");
    if (filter && *filter)
        cmocka_set_test_filter(filter);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
