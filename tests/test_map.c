/* test_map.c - coproc_map, coproc_map_const (every type and operation) and
 * coproc_cast (all 36 pairs) against scalar C, on edge sizes and values, on
 * every device and kernel path. The reference has no undefined behaviour:
 * signed wrap goes through unsigned arithmetic and memcpy. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testlib.h"

/* Values at the edges of each type, cycled through the data with random ones. */
static const int64_t edge_i64[] = {0, 1, -1, 2, -2, 7, -7, INT32_MIN, INT32_MAX, INT64_MIN,
                                   INT64_MAX, (int64_t)INT32_MIN - 1, (int64_t)INT32_MAX + 1,
                                   (int64_t)UINT32_MAX, 1LL << 53, (1LL << 53) + 1, -(1LL << 24) - 1};
static const uint64_t edge_u64[] = {0, 1, 2, 7, UINT32_MAX, (uint64_t)UINT32_MAX + 1, UINT64_MAX,
                                    UINT64_MAX - 1, 1ULL << 63, (1ULL << 53) + 1, (1ULL << 24) + 1,
                                    INT32_MAX, (uint64_t)INT64_MAX};
static const double edge_f64[] = {0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 0.7, -0.7, 1.5, -2.5,
                                  NAN, INFINITY, -INFINITY, 1e30, -1e30, 1e300, -1e300,
                                  2147483647.0, 2147483647.5, 2147483648.0, -2147483648.0,
                                  -2147483648.9, -2147483649.0, 4294967295.0, 4294967295.9,
                                  4294967296.0, 9223372036854775807.0, 9223372036854775808.0,
                                  -9223372036854775808.0, -9.3e18, 18446744073709551615.0,
                                  18446744073709551616.0, 3.4028234663852886e38, 3.5e38, 1e-40,
                                  1e-310, 16777217.0, 0.1, 3.0};

static void fill(coproc_type t, void *data, size_t n, test_rng *r)
{
    for (size_t i = 0; i < n; i++) {
        uint64_t x = test_rand(r);
        int edge = x % 3 == 0;
        size_t ei = (size_t)(x >> 8);
        switch (t) {
        case COPROC_INT32: {
            int64_t v = edge ? edge_i64[ei % 11] : (int64_t)(int32_t)(uint32_t)(x >> 32) >> (x % 28);
            ((int32_t *)data)[i] = (int32_t)v; break; }
        case COPROC_INT64: {
            uint64_t u = x >> 16;
            int64_t v = edge ? edge_i64[ei % 17] : (x & 2) ? (int64_t)(u >> (x % 40)) : -(int64_t)(u >> (x % 40));
            ((int64_t *)data)[i] = v; break; }
        case COPROC_UINT32:
            ((uint32_t *)data)[i] = edge ? (uint32_t)edge_u64[ei % 5] : (uint32_t)(x >> 32) >> (x % 28);
            break;
        case COPROC_UINT64:
            ((uint64_t *)data)[i] = edge ? edge_u64[ei % 13] : x >> (x % 50);
            break;
        default: {
            double v = edge ? edge_f64[ei % (sizeof edge_f64 / sizeof *edge_f64)]
                            : ((double)(x >> 11) / 9007199254740992.0 - 0.5) * ldexp(1.0, (int)(x % 80) - 20);
            if (t == COPROC_FLOAT32) ((float *)data)[i] = (float)v; else ((double *)data)[i] = v;
            break; }
        }
    }
}

/* ---- arithmetic reference */

static int32_t i32_from(uint32_t u) { int32_t v; memcpy(&v, &u, 4); return v; }
static int64_t i64_from(uint64_t u) { int64_t v; memcpy(&v, &u, 8); return v; }

static int32_t ref_i32(coproc_arith op, int32_t x, int32_t y)
{
    uint32_t ux = (uint32_t)x, uy = (uint32_t)y;
    switch (op) {
    case COPROC_ARITH_ADD: return i32_from(ux + uy);
    case COPROC_ARITH_SUB: return i32_from(ux - uy);
    case COPROC_ARITH_MUL: return i32_from(ux * uy);
    default: return y == 0 ? 0 : y == -1 ? i32_from(0u - ux) : x / y;
    }
}

static int64_t ref_i64(coproc_arith op, int64_t x, int64_t y)
{
    uint64_t ux = (uint64_t)x, uy = (uint64_t)y;
    switch (op) {
    case COPROC_ARITH_ADD: return i64_from(ux + uy);
    case COPROC_ARITH_SUB: return i64_from(ux - uy);
    case COPROC_ARITH_MUL: return i64_from(ux * uy);
    default: return y == 0 ? 0 : y == -1 ? i64_from(0u - ux) : x / y;
    }
}

#define REF_UNSIGNED(op, x, y)                                                               \
    ((op) == COPROC_ARITH_ADD ? (x) + (y) : (op) == COPROC_ARITH_SUB ? (x) - (y)             \
     : (op) == COPROC_ARITH_MUL ? (x) * (y) : (y) == 0 ? 0 : (x) / (y))
#define REF_FLOAT(op, x, y)                                                                  \
    ((op) == COPROC_ARITH_ADD ? (x) + (y) : (op) == COPROC_ARITH_SUB ? (x) - (y)             \
     : (op) == COPROC_ARITH_MUL ? (x) * (y) : (x) / (y))

/* out[i] = a[i] op (b ? b[i] : *c) in type t. */
static void ref_map(coproc_type t, coproc_arith op, const void *a, const void *b, const void *c,
                    size_t n, void *out)
{
    for (size_t i = 0; i < n; i++) {
        switch (t) {
        case COPROC_INT32: {
            int32_t y = b ? ((const int32_t *)b)[i] : *(const int32_t *)c;
            ((int32_t *)out)[i] = ref_i32(op, ((const int32_t *)a)[i], y); break; }
        case COPROC_INT64: {
            int64_t y = b ? ((const int64_t *)b)[i] : *(const int64_t *)c;
            ((int64_t *)out)[i] = ref_i64(op, ((const int64_t *)a)[i], y); break; }
        case COPROC_UINT32: {
            uint32_t x = ((const uint32_t *)a)[i], y = b ? ((const uint32_t *)b)[i] : *(const uint32_t *)c;
            ((uint32_t *)out)[i] = (uint32_t)REF_UNSIGNED(op, x, y); break; }
        case COPROC_UINT64: {
            uint64_t x = ((const uint64_t *)a)[i], y = b ? ((const uint64_t *)b)[i] : *(const uint64_t *)c;
            ((uint64_t *)out)[i] = REF_UNSIGNED(op, x, y); break; }
        case COPROC_FLOAT32: {
            float x = ((const float *)a)[i], y = b ? ((const float *)b)[i] : *(const float *)c;
            ((float *)out)[i] = REF_FLOAT(op, x, y); break; }
        default: {
            double x = ((const double *)a)[i], y = b ? ((const double *)b)[i] : *(const double *)c;
            ((double *)out)[i] = REF_FLOAT(op, x, y); break; }
        }
    }
}

/* Bit-exact comparison; any NaN equals any NaN. ulps: tolerance for float32. */
static void compare(coproc_type t, const void *got, const void *want, size_t n, int ulps,
                    const char *ctx, const void *a, const void *b)
{
    size_t sz = coproc_type_size(t);
    for (size_t i = 0; i < n; i++) {
        const unsigned char *g = (const unsigned char *)got + i * sz;
        const unsigned char *w = (const unsigned char *)want + i * sz;
        if (t == COPROC_FLOAT32) {
            float gf, wf;
            memcpy(&gf, g, 4);
            memcpy(&wf, w, 4);
            if (isnan(gf) && isnan(wf))
                continue;
            if (ulps && !isnan(gf) && !isnan(wf) && fabsf(gf - wf) <= ulps * fabsf(nextafterf(wf, INFINITY) - wf))
                continue;
        } else if (t == COPROC_FLOAT64) {
            double gd, wd;
            memcpy(&gd, g, 8);
            memcpy(&wd, w, 8);
            if (isnan(gd) && isnan(wd))
                continue;
        }
        if (memcmp(g, w, sz) != 0) {
            uint64_t gu = 0, wu = 0, au = 0, bu = 0;
            memcpy(&gu, g, sz);
            memcpy(&wu, w, sz);
            if (a) memcpy(&au, (const unsigned char *)a + i * sz, sz);
            if (b) memcpy(&bu, (const unsigned char *)b + i * sz, sz);
            fail_msg("%s: row %zu of %zu: got %016llx want %016llx (a %016llx b %016llx)", ctx, i,
                     n, (unsigned long long)gu, (unsigned long long)wu, (unsigned long long)au,
                     (unsigned long long)bu);
        }
    }
}

static void run_map(coproc_runtime *rt, int dev, const char *path, void *user)
{
    (void)user;
    coproc_device_info info;
    assert_ok(rt, coproc_device_info_get(rt, dev, &info));
    test_rng rng = {31337};
    for (int t = 0; t < COPROC__TYPE_COUNT; t++) {
        if (t == COPROC_FLOAT64 && !info.has_fp64)
            continue;
        for (size_t si = 0; test_edge_sizes[si] != (size_t)-1; si++) {
            size_t n = test_edge_sizes[si];
            if (n > 70000 && t != COPROC_INT32 && t != COPROC_FLOAT32)
                continue;
            void *a = malloc((n ? n : 1) * 8), *b = malloc((n ? n : 1) * 8);
            void *got = malloc((n ? n : 1) * 8), *want = malloc((n ? n : 1) * 8);
            fill((coproc_type)t, a, n, &rng);
            fill((coproc_type)t, b, n, &rng);
            coproc_column *ca = NULL, *cb = NULL;
            assert_ok(rt, coproc_column_upload(rt, dev, (coproc_type)t, a, n, &ca));
            assert_ok(rt, coproc_column_upload(rt, dev, (coproc_type)t, b, n, &cb));
            for (int op = COPROC_ARITH_ADD; op <= COPROC_ARITH_DIV; op++) {
                /* Without fp64, float32 division is the device's (OpenCL allows 2.5 ulp). */
                int ulps = t == COPROC_FLOAT32 && op == COPROC_ARITH_DIV && !info.has_fp64 ? 3 : 0;
                char ctx[128];
                snprintf(ctx, sizeof ctx, "%s map %s op=%d n=%zu", path,
                         coproc_type_name((coproc_type)t), op, n);
                coproc_column *out = NULL;
                assert_ok(rt, coproc_map(rt, (coproc_arith)op, ca, cb, &out));
                assert_int_equal(coproc_column_type(out), t);
                assert_int_equal(coproc_column_length(out), n);
                assert_ok(rt, coproc_column_download(out, got, n));
                ref_map((coproc_type)t, (coproc_arith)op, a, b, NULL, n, want);
                compare((coproc_type)t, got, want, n, ulps, ctx, a, b);
                coproc_column_free(out);
                /* constants: a few edge values, including 0 and -1 for division */
                for (int ci = 0; ci < 4; ci++) {
                    coproc_value c;
                    unsigned char cbytes[8];
                    switch (t) {
                    case COPROC_INT32: {
                        static const int32_t v[] = {0, -1, INT32_MIN, 3};
                        c.i64 = v[ci];
                        memcpy(cbytes, &v[ci], 4); break; }
                    case COPROC_INT64: {
                        static const int64_t v[] = {0, -1, INT64_MIN, -3};
                        c.i64 = v[ci];
                        memcpy(cbytes, &v[ci], 8); break; }
                    case COPROC_UINT32: {
                        static const uint32_t v[] = {0, UINT32_MAX, 1, 3};
                        c.u64 = v[ci];
                        memcpy(cbytes, &v[ci], 4); break; }
                    case COPROC_UINT64: {
                        static const uint64_t v[] = {0, UINT64_MAX, 1, 3};
                        c.u64 = v[ci];
                        memcpy(cbytes, &v[ci], 8); break; }
                    case COPROC_FLOAT32: {
                        static const float v[] = {0.0f, -0.0f, INFINITY, 0.1f};
                        c.f64 = v[ci];
                        memcpy(cbytes, &v[ci], 4); break; }
                    default: {
                        static const double v[] = {0.0, -0.0, NAN, 0.1};
                        c.f64 = v[ci];
                        memcpy(cbytes, &v[ci], 8); break; }
                    }
                    assert_ok(rt, coproc_map_const(rt, (coproc_arith)op, ca, c, &out));
                    assert_ok(rt, coproc_column_download(out, got, n));
                    ref_map((coproc_type)t, (coproc_arith)op, a, NULL, cbytes, n, want);
                    compare((coproc_type)t, got, want, n, ulps, ctx, a, NULL);
                    coproc_column_free(out);
                }
            }
            coproc_column_free(ca);
            coproc_column_free(cb);
            free(a);
            free(b);
            free(got);
            free(want);
        }
    }
}

static void test_map_matches_reference(void **state)
{
    (void)state;
    test_each_device_path(run_map, NULL);
}

/* ---- cast reference */

/* Truncate toward zero and saturate to [lo, hi]; NaN gives 0. lo and hi are
 * powers of two (or 0) in double, so the comparisons are exact. */
static double sat_trunc(double x, double lo, double hi_excl, int *over, int *under)
{
    *over = *under = 0;
    if (isnan(x))
        return 0;
    double t = trunc(x);
    if (t >= hi_excl)
        *over = 1;
    else if (t < lo)
        *under = 1;
    return t;
}

static void ref_cast(coproc_type from, coproc_type to, const void *in, size_t n, void *out)
{
    for (size_t i = 0; i < n; i++) {
        /* Integers are carried as their value in int64 or uint64; floats as double. */
        int src_float = from == COPROC_FLOAT32 || from == COPROC_FLOAT64;
        int src_unsigned = from == COPROC_UINT32 || from == COPROC_UINT64;
        int64_t si = 0;
        uint64_t su = 0;
        double sd = 0;
        switch (from) {
        case COPROC_INT32: si = ((const int32_t *)in)[i]; su = (uint64_t)si; break;
        case COPROC_INT64: si = ((const int64_t *)in)[i]; su = (uint64_t)si; break;
        case COPROC_UINT32: su = ((const uint32_t *)in)[i]; break;
        case COPROC_UINT64: su = ((const uint64_t *)in)[i]; break;
        case COPROC_FLOAT32: sd = ((const float *)in)[i]; break;
        default: sd = ((const double *)in)[i]; break;
        }
        int over, under;
        switch (to) {
        case COPROC_INT32: {
            int32_t v;
            if (src_float) {
                double t = sat_trunc(sd, -2147483648.0, 2147483648.0, &over, &under);
                v = over ? INT32_MAX : under ? INT32_MIN : (int32_t)t;
            } else {
                v = i32_from((uint32_t)su); /* low 32 bits */
            }
            ((int32_t *)out)[i] = v; break; }
        case COPROC_INT64: {
            int64_t v;
            if (src_float) {
                double t = sat_trunc(sd, -9223372036854775808.0, 9223372036854775808.0, &over, &under);
                v = over ? INT64_MAX : under ? INT64_MIN : (int64_t)t;
            } else {
                v = i64_from(su);
            }
            ((int64_t *)out)[i] = v; break; }
        case COPROC_UINT32: {
            uint32_t v;
            if (src_float) {
                double t = sat_trunc(sd, 0.0, 4294967296.0, &over, &under);
                v = over ? UINT32_MAX : under ? 0 : (uint32_t)t;
            } else {
                v = (uint32_t)su;
            }
            ((uint32_t *)out)[i] = v; break; }
        case COPROC_UINT64: {
            uint64_t v;
            if (src_float) {
                double t = sat_trunc(sd, 0.0, 18446744073709551616.0, &over, &under);
                v = over ? UINT64_MAX : under ? 0 : (uint64_t)t;
            } else {
                v = su;
            }
            ((uint64_t *)out)[i] = v; break; }
        case COPROC_FLOAT32: {
            float v;
            if (from == COPROC_FLOAT32) v = ((const float *)in)[i];
            else if (src_float) v = (float)sd; /* IEEE: overflow gives inf */
            else if (src_unsigned) v = (float)su;
            else v = (float)si;
            ((float *)out)[i] = v; break; }
        default: {
            double v = src_float ? sd : src_unsigned ? (double)su : (double)si;
            ((double *)out)[i] = v; break; }
        }
    }
}

static void run_cast(coproc_runtime *rt, int dev, const char *path, void *user)
{
    (void)user;
    coproc_device_info info;
    assert_ok(rt, coproc_device_info_get(rt, dev, &info));
    test_rng rng = {2718};
    static const size_t sizes[] = {0, 1, 7, 257, 4097, 100003};
    int ntypes = info.has_fp64 ? COPROC__TYPE_COUNT : COPROC_FLOAT64;
    for (size_t si = 0; si < sizeof sizes / sizeof *sizes; si++) {
        size_t n = sizes[si];
        void *in = malloc((n ? n : 1) * 8), *got = malloc((n ? n : 1) * 8);
        void *want = malloc((n ? n : 1) * 8);
        for (int from = 0; from < ntypes; from++) {
            fill((coproc_type)from, in, n, &rng);
            /* Put every edge value in at least once. */
            size_t ne = from == COPROC_FLOAT32 || from == COPROC_FLOAT64
                            ? sizeof edge_f64 / sizeof *edge_f64
                            : from == COPROC_INT32 || from == COPROC_INT64 ? 17 : 13;
            for (size_t i = 0; i < ne && i < n; i++) {
                switch (from) {
                case COPROC_INT32: ((int32_t *)in)[i] = (int32_t)edge_i64[i % 11]; break;
                case COPROC_INT64: ((int64_t *)in)[i] = edge_i64[i]; break;
                case COPROC_UINT32: ((uint32_t *)in)[i] = (uint32_t)edge_u64[i % 5]; break;
                case COPROC_UINT64: ((uint64_t *)in)[i] = edge_u64[i]; break;
                case COPROC_FLOAT32: ((float *)in)[i] = (float)edge_f64[i]; break;
                default: ((double *)in)[i] = edge_f64[i]; break;
                }
            }
            coproc_column *col = NULL;
            assert_ok(rt, coproc_column_upload(rt, dev, (coproc_type)from, in, n, &col));
            for (int to = 0; to < ntypes; to++) {
                coproc_column *out = NULL;
                assert_ok(rt, coproc_cast(rt, col, (coproc_type)to, &out));
                assert_int_equal(coproc_column_type(out), to);
                assert_int_equal(coproc_column_length(out), n);
                assert_ok(rt, coproc_column_download(out, got, n));
                ref_cast((coproc_type)from, (coproc_type)to, in, n, want);
                char ctx[128];
                snprintf(ctx, sizeof ctx, "%s cast %s -> %s n=%zu", path,
                         coproc_type_name((coproc_type)from), coproc_type_name((coproc_type)to), n);
                compare((coproc_type)to, got, want, n, 0, ctx, in, NULL);
                coproc_column_free(out);
            }
            coproc_column_free(col);
        }
        free(in);
        free(got);
        free(want);
    }
}

static void test_cast_matches_reference(void **state)
{
    (void)state;
    test_each_device_path(run_cast, NULL);
}

static void test_map_bad_input(void **state)
{
    (void)state;
    coproc_runtime *rt = test_open(NULL);
    int32_t x[4] = {1, 2, 3, 4};
    int64_t y[4] = {1, 2, 3, 4};
    coproc_column *a = NULL, *a3 = NULL, *l = NULL, *out = (coproc_column *)1;
    assert_ok(rt, coproc_column_upload(rt, 0, COPROC_INT32, x, 4, &a));
    assert_ok(rt, coproc_column_upload(rt, 0, COPROC_INT32, x, 3, &a3));
    assert_ok(rt, coproc_column_upload(rt, 0, COPROC_INT64, y, 4, &l));
    coproc_value c = {.i64 = 1};
    assert_status(COPROC_NULL_POINTER, coproc_map(NULL, COPROC_ARITH_ADD, a, a, &out));
    assert_status(COPROC_NULL_POINTER, coproc_map(rt, COPROC_ARITH_ADD, a, NULL, &out));
    assert_null(out);
    assert_status(COPROC_NULL_POINTER, coproc_map(rt, COPROC_ARITH_ADD, NULL, a, &out));
    assert_status(COPROC_NULL_POINTER, coproc_map(rt, COPROC_ARITH_ADD, a, a, NULL));
    assert_status(COPROC_LENGTH_MISMATCH, coproc_map(rt, COPROC_ARITH_ADD, a, a3, &out));
    assert_status(COPROC_INVALID_ARGUMENT, coproc_map(rt, COPROC_ARITH_ADD, a, l, &out));
    assert_true(strstr(coproc_errmsg(rt), "int64") != NULL);
    assert_status(COPROC_INVALID_ARGUMENT, coproc_map(rt, (coproc_arith)9, a, a, &out));
    assert_status(COPROC_INVALID_ARGUMENT, coproc_map_const(rt, (coproc_arith)-1, a, c, &out));
    c.i64 = (int64_t)INT32_MAX + 1;
    assert_status(COPROC_INVALID_ARGUMENT, coproc_map_const(rt, COPROC_ARITH_ADD, a, c, &out));
    c.i64 = INT64_MIN;
    assert_ok(rt, coproc_map_const(rt, COPROC_ARITH_ADD, l, c, &out)); /* fits int64 */
    coproc_column_free(out);
    out = (coproc_column *)1;
    assert_status(COPROC_NULL_POINTER, coproc_map_const(rt, COPROC_ARITH_ADD, NULL, c, &out));
    assert_null(out);
    assert_status(COPROC_UNSUPPORTED_TYPE, coproc_cast(rt, a, (coproc_type)17, &out));
    assert_status(COPROC_NULL_POINTER, coproc_cast(rt, NULL, COPROC_INT64, &out));
    assert_status(COPROC_NULL_POINTER, coproc_cast(rt, a, COPROC_INT64, NULL));
    coproc_runtime *rt2 = test_open(NULL);
    assert_status(COPROC_INVALID_ARGUMENT, coproc_map(rt2, COPROC_ARITH_ADD, a, a, &out));
    assert_status(COPROC_INVALID_ARGUMENT, coproc_cast(rt2, a, COPROC_INT64, &out));
    assert_null(out);
    coproc_close(rt2);
    coproc_column_free(a);
    coproc_column_free(a3);
    coproc_column_free(l);
    coproc_close(rt);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_map_matches_reference),
        cmocka_unit_test(test_cast_matches_reference),
        cmocka_unit_test(test_map_bad_input),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
