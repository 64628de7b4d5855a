/* test_sort.c - coproc_sort (keys only, keys with values) and coproc_argsort
 * of every key type against a stable scalar reference sort, on edge sizes and
 * values, on every device and kernel path. */
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testlib.h"

enum { FILL_RANDOM, FILL_SMALL_RANGE, FILL_EXTREME, FILL_SPECIAL_FLOAT, FILL_EQUAL, FILL_SORTED,
       FILL_REVERSED, FILL_MODES };

static const char *const mode_name[] = {"random", "small-range", "extreme", "special-float",
                                        "equal", "sorted", "reversed"};


static void fill(coproc_type t, void *data, size_t n, int mode, test_rng *r)
{
    for (size_t i = 0; i < n; i++) {
        uint64_t x = test_rand(r);
        int pick = (int)(x % 7);
        if (mode == FILL_SMALL_RANGE)
            x %= 37; /* many duplicates, a range that needs one pass */
        if (mode == FILL_EQUAL)
            x = 12345;
        if (mode == FILL_SORTED || mode == FILL_REVERSED)
            x = (mode == FILL_SORTED ? i : n - i) * 3; /* 3 x: spans several digits */
        switch (t) {
        case COPROC_INT32: {
            int32_t v = mode == FILL_RANDOM || mode == FILL_EXTREME ? (int32_t)(x >> 32)
                                                                    : (int32_t)x - 18;
            if (mode == FILL_EXTREME && pick == 0) v = INT32_MIN;
            if (mode == FILL_EXTREME && pick == 1) v = INT32_MAX;
            if (mode == FILL_EXTREME && pick == 2) v = -1;
            ((int32_t *)data)[i] = v; break; }
        case COPROC_INT64: {
            int64_t v = mode == FILL_RANDOM || mode == FILL_EXTREME ? (int64_t)x : (int64_t)x - 18;
            if (mode == FILL_EXTREME && pick == 0) v = INT64_MIN;
            if (mode == FILL_EXTREME && pick == 1) v = INT64_MAX;
            if (mode == FILL_EXTREME && pick == 2) v = -1;
            ((int64_t *)data)[i] = v; break; }
        case COPROC_UINT32: {
            uint32_t v = mode == FILL_RANDOM || mode == FILL_EXTREME ? (uint32_t)(x >> 32)
                                                                     : (uint32_t)x;
            if (mode == FILL_EXTREME && pick == 0) v = UINT32_MAX;
            if (mode == FILL_EXTREME && pick == 1) v = 0;
            ((uint32_t *)data)[i] = v; break; }
        case COPROC_UINT64: {
            uint64_t v = x;
            if (mode == FILL_EXTREME && pick == 0) v = UINT64_MAX;
            if (mode == FILL_EXTREME && pick == 1) v = 0;
            ((uint64_t *)data)[i] = v; break; }
        default: {
            double v = mode == FILL_RANDOM || mode == FILL_SPECIAL_FLOAT
                           ? ((double)(x >> 11) / 9007199254740992.0 - 0.5) * 1e6
                           : (double)x - 18.5;
            if (mode == FILL_SPECIAL_FLOAT) {
                if (pick == 0) v = (x >> 8) % 3 ? NAN : -NAN;
                if (pick == 1) v = (x >> 8) & 1 ? -0.0 : 0.0;
                if (pick == 2) v = (x >> 8) & 1 ? INFINITY : -INFINITY;
            }
            if (mode == FILL_EXTREME) {
                if (pick == 0) v = t == COPROC_FLOAT32 ? FLT_MAX : DBL_MAX;
                if (pick == 1) v = t == COPROC_FLOAT32 ? -FLT_MAX : -DBL_MAX;
                if (pick == 2) v = t == COPROC_FLOAT32 ? FLT_MIN / 4 : DBL_MIN / 4; /* subnormal */
                if (pick == 3) v = t == COPROC_FLOAT32 ? -FLT_MIN / 4 : -DBL_MIN / 4;
            }
            if (t == COPROC_FLOAT32) {
                float f = (float)v;
                if (isnan(v)) { /* NaNs with assorted payloads and signs */
                    uint32_t b = 0x7fc00000u | (uint32_t)(x >> 40) | (signbit(v) ? 0x80000000u : 0);
                    memcpy(&f, &b, 4);
                }
                ((float *)data)[i] = f;
            } else {
                if (isnan(v)) {
                    uint64_t b = 0x7ff8000000000000ull | (x >> 20) | (signbit(v) ? 1ull << 63 : 0);
                    memcpy(&v, &b, 8);
                }
                ((double *)data)[i] = v;
            }
            break; }
        }
    }
}


/* Sorted key i must equal input key ref[i] bit for bit, except that a NaN
 * may come back as any NaN (NaNs are canonicalised). */
static void check_keys(coproc_type t, const void *in, const uint32_t *ref, const void *got,
                       size_t n, const char *ctx)
{
    size_t w = coproc_type_size(t);
    for (size_t i = 0; i < n; i++) {
        const unsigned char *g = (const unsigned char *)got + i * w;
        const unsigned char *e = (const unsigned char *)in + (size_t)ref[i] * w;
        if (test_is_float(t) && isnan(test_get_f(t, in, ref[i])) && isnan(test_get_f(t, got, i)))
            continue;
        if (memcmp(g, e, w) != 0) {
            uint64_t gv = 0, ev = 0;
            memcpy(&gv, g, w);
            memcpy(&ev, e, w);
            fail_msg("%s: key %zu is 0x%llx, expected 0x%llx", ctx, i, (unsigned long long)gv,
                     (unsigned long long)ev);
        }
    }
}

/* Value column of type vt holding the row index (exact in every type here). */
static void make_values(coproc_type vt, void *v, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        switch (vt) {
        case COPROC_INT32: ((int32_t *)v)[i] = -(int32_t)i; break;
        case COPROC_INT64: ((int64_t *)v)[i] = (int64_t)i - (1ll << 40); break;
        case COPROC_UINT32: ((uint32_t *)v)[i] = (uint32_t)i; break;
        case COPROC_UINT64: ((uint64_t *)v)[i] = (uint64_t)i << 20; break;
        case COPROC_FLOAT32: ((float *)v)[i] = (float)i; break;
        default: ((double *)v)[i] = (double)i + 0.5; break;
        }
    }
}

static void check_values(coproc_type vt, const void *vin, const uint32_t *ref, const void *got,
                         size_t n, const char *ctx)
{
    size_t w = coproc_type_size(vt);
    for (size_t i = 0; i < n; i++)
        if (memcmp((const char *)got + i * w, (const char *)vin + (size_t)ref[i] * w, w) != 0)
            fail_msg("%s: value %zu comes from the wrong row (expected row %u)", ctx, i, ref[i]);
}

typedef struct case_ctx {
    coproc_runtime *rt;
    int dev;
    const char *path;
    int has_fp64;
} case_ctx;

/* One (type, size, mode): keys only, keys with a value column, argsort. */
static void run_case(case_ctx *c, coproc_type t, size_t n, int mode, test_rng *rng, int with_all)
{
    coproc_runtime *rt = c->rt;
    size_t w = coproc_type_size(t);
    void *keys = malloc((n ? n : 1) * w), *got = malloc((n ? n : 1) * 8);
    uint32_t *ref = malloc((n ? n : 1) * 4), *perm = malloc((n ? n : 1) * 4);
    fill(t, keys, n, mode, rng);
    test_ref_argsort(t, keys, n, ref);
    char ctx[200];
    snprintf(ctx, sizeof ctx, "%s %s n=%zu %s", c->path, coproc_type_name(t), n, mode_name[mode]);

    /* argsort: the exact stable permutation; keys untouched. */
    coproc_column *k = NULL, *p = NULL;
    assert_ok(rt, coproc_column_upload(rt, c->dev, t, keys, n, &k));
    assert_ok(rt, coproc_argsort(rt, k, &p));
    assert_int_equal(coproc_column_length(p), n);
    assert_int_equal(coproc_column_type(p), COPROC_UINT32);
    assert_ok(rt, coproc_column_download(p, perm, n));
    for (size_t i = 0; i < n; i++)
        if (perm[i] != ref[i])
            fail_msg("%s argsort: perm[%zu] = %u, expected %u", ctx, i, perm[i], ref[i]);
    assert_ok(rt, coproc_column_download(k, got, n));
    if (memcmp(got, keys, n * w) != 0)
        fail_msg("%s argsort changed its keys", ctx);
    coproc_column_free(p);

    /* keys only */
    assert_ok(rt, coproc_sort(rt, k, NULL));
    assert_ok(rt, coproc_column_download(k, got, n));
    check_keys(t, keys, ref, got, n, ctx);
    coproc_column_free(k);

    /* keys with values: one value type per case, all of them when asked */
    for (int vt = 0; vt < COPROC__TYPE_COUNT; vt++) {
        if (!with_all && vt != (int)((t + mode + n) % COPROC__TYPE_COUNT))
            continue;
        if (vt == COPROC_FLOAT64 && !c->has_fp64)
            continue;
        size_t vw = coproc_type_size((coproc_type)vt);
        void *vals = malloc((n ? n : 1) * vw), *vgot = malloc((n ? n : 1) * vw);
        make_values((coproc_type)vt, vals, n);
        coproc_column *v = NULL;
        assert_ok(rt, coproc_column_upload(rt, c->dev, t, keys, n, &k));
        assert_ok(rt, coproc_column_upload(rt, c->dev, (coproc_type)vt, vals, n, &v));
        assert_ok(rt, coproc_sort(rt, k, v));
        assert_ok(rt, coproc_column_download(k, got, n));
        assert_ok(rt, coproc_column_download(v, vgot, n));
        char vctx[260];
        snprintf(vctx, sizeof vctx, "%s values %s", ctx, coproc_type_name((coproc_type)vt));
        check_keys(t, keys, ref, got, n, vctx);
        check_values((coproc_type)vt, vals, ref, vgot, n, vctx);
        coproc_column_free(k);
        coproc_column_free(v);
        free(vals);
        free(vgot);
    }
    free(keys);
    free(got);
    free(ref);
    free(perm);
}

static void run_device(coproc_runtime *rt, int dev, const char *path, void *user)
{
    (void)user;
    coproc_device_info info;
    assert_ok(rt, coproc_device_info_get(rt, dev, &info));
    case_ctx c = {rt, dev, path, info.has_fp64};
    test_rng rng = {777};
    for (int t = 0; t < COPROC__TYPE_COUNT; t++) {
        if (t == COPROC_FLOAT64 && !info.has_fp64)
            continue;
        for (size_t si = 0; test_edge_sizes[si] != (size_t)-1; si++) {
            size_t n = test_edge_sizes[si];
            /* The largest size for two types only, random keys: keeps the test quick. */
            if (n > 200000 && t != COPROC_UINT32 && t != COPROC_FLOAT64)
                continue;
            for (int m = 0; m < FILL_MODES; m++) {
                if (m == FILL_SPECIAL_FLOAT && !test_is_float((coproc_type)t))
                    continue;
                if (n > 5000 && m != FILL_RANDOM && m != FILL_SMALL_RANGE &&
                    m != FILL_SPECIAL_FLOAT && m != FILL_EXTREME)
                    continue;
                if (n > 70000 && m != FILL_RANDOM && !(n < 200000 && m == FILL_SMALL_RANGE))
                    continue;
                run_case(&c, (coproc_type)t, n, m, &rng, n == 257 || n == 4097);
            }
        }
    }
}

static void test_sort_matches_reference(void **state)
{
    (void)state;
    test_each_device_path(run_device, NULL);
}

/* The promised float order, spelled out on a fixed input. */
static void test_sort_float_order(void **state)
{
    (void)state;
    coproc_runtime *rt = test_open(NULL);
    float in[] = {NAN, 1.0f, -0.0f, INFINITY, -NAN, 0.0f, -INFINITY, -1.0f, NAN, 0.0f, -0.0f};
    size_t n = sizeof in / sizeof *in;
    uint32_t vals[sizeof in / sizeof *in];
    for (size_t i = 0; i < n; i++)
        vals[i] = (uint32_t)i;
    coproc_column *k = NULL, *v = NULL;
    assert_ok(rt, coproc_column_upload(rt, 0, COPROC_FLOAT32, in, n, &k));
    assert_ok(rt, coproc_column_upload(rt, 0, COPROC_UINT32, vals, n, &v));
    assert_ok(rt, coproc_sort(rt, k, v));
    float out[sizeof in / sizeof *in];
    uint32_t vout[sizeof in / sizeof *in];
    assert_ok(rt, coproc_column_download(k, out, n));
    assert_ok(rt, coproc_column_download(v, vout, n));
    /* -inf, -1, -0 (row 2), -0 (row 10), +0 (row 5), +0 (row 9), 1, inf, NaN x3 in input order */
    const uint32_t want[] = {6, 7, 2, 10, 5, 9, 1, 3, 0, 4, 8};
    for (size_t i = 0; i < n; i++)
        assert_int_equal(vout[i], want[i]);
    assert_true(isinf(out[0]) && out[0] < 0);
    assert_true(out[2] == 0 && signbit(out[2]) && signbit(out[3]));
    assert_true(out[4] == 0 && !signbit(out[4]) && !signbit(out[5]));
    assert_true(isinf(out[7]) && out[7] > 0);
    assert_true(isnan(out[8]) && isnan(out[9]) && isnan(out[10]));
    coproc_column_free(k);
    coproc_column_free(v);

    int64_t ext[] = {INT64_MAX, -1, INT64_MIN, 0, INT64_MIN + 1, 1};
    int64_t ext_sorted[] = {INT64_MIN, INT64_MIN + 1, -1, 0, 1, INT64_MAX};
    assert_ok(rt, coproc_column_upload(rt, 0, COPROC_INT64, ext, 6, &k));
    assert_ok(rt, coproc_sort(rt, k, NULL));
    assert_ok(rt, coproc_column_download(k, ext, 6));
    assert_memory_equal(ext, ext_sorted, sizeof ext);
    coproc_column_free(k);
    coproc_close(rt);
}

static void test_sort_bad_input(void **state)
{
    (void)state;
    coproc_runtime *rt = test_open(NULL);
    int32_t x[4] = {4, 3, 2, 1};
    coproc_column *k = NULL, *v3 = NULL, *perm = (coproc_column *)1;
    assert_ok(rt, coproc_column_upload(rt, 0, COPROC_INT32, x, 4, &k));
    assert_ok(rt, coproc_column_upload(rt, 0, COPROC_INT32, x, 3, &v3));
    assert_status(COPROC_NULL_POINTER, coproc_sort(NULL, k, NULL));
    assert_status(COPROC_NULL_POINTER, coproc_sort(rt, NULL, NULL));
    assert_true(strstr(coproc_errmsg(rt), "NULL") != NULL);
    assert_status(COPROC_LENGTH_MISMATCH, coproc_sort(rt, k, v3));
    assert_status(COPROC_INVALID_ARGUMENT, coproc_sort(rt, k, k));
    assert_status(COPROC_NULL_POINTER, coproc_argsort(NULL, k, &perm));
    assert_status(COPROC_NULL_POINTER, coproc_argsort(rt, k, NULL));
    assert_status(COPROC_NULL_POINTER, coproc_argsort(rt, NULL, &perm));
    assert_null(perm); /* failures leave *out NULL */
    /* Nothing was partially sorted by the refused calls. */
    int32_t back[4];
    assert_ok(rt, coproc_column_download(k, back, 4));
    assert_memory_equal(back, x, sizeof x);
    /* Columns of another runtime are refused, not misused. */
    coproc_runtime *rt2 = test_open(NULL);
    assert_status(COPROC_INVALID_ARGUMENT, coproc_sort(rt2, k, NULL));
    perm = (coproc_column *)1;
    assert_status(COPROC_INVALID_ARGUMENT, coproc_argsort(rt2, k, &perm));
    assert_null(perm);
    coproc_column *k2 = NULL;
    assert_ok(rt2, coproc_column_upload(rt2, 0, COPROC_INT32, x, 4, &k2));
    assert_status(COPROC_INVALID_ARGUMENT, coproc_sort(rt, k, k2));
    coproc_column_free(k2);
    coproc_close(rt2);
    coproc_column_free(v3);
    coproc_column_free(k);
    coproc_close(rt);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sort_float_order),
        cmocka_unit_test(test_sort_bad_input),
        cmocka_unit_test(test_sort_matches_reference),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
