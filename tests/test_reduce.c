/* test_reduce.c - sum/min/max/count of every type against a scalar C loop, on
 * edge sizes and values, on every device and kernel path. */
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testlib.h"

enum { FILL_RANDOM, FILL_EXTREME, FILL_SPECIAL_FLOAT, FILL_ALL_NAN, FILL_EQUAL };

static void fill(coproc_type t, void *data, size_t n, int mode, test_rng *r)
{
    for (size_t i = 0; i < n; i++) {
        uint64_t x = test_rand(r);
        int pick = (int)(x % 7);
        switch (t) {
        case COPROC_INT32: {
            int32_t v = mode == FILL_EQUAL ? -5 : (int32_t)(x >> 32) >> (mode == FILL_RANDOM ? 8 : 0);
            if (mode == FILL_EXTREME && pick == 0) v = INT32_MIN;
            if (mode == FILL_EXTREME && pick == 1) v = INT32_MAX;
            ((int32_t *)data)[i] = v; break; }
        case COPROC_INT64: {
            int64_t v = mode == FILL_EQUAL ? -5 : (int64_t)x >> (mode == FILL_RANDOM ? 20 : 0);
            if (mode == FILL_EXTREME && pick == 0) v = INT64_MIN;
            if (mode == FILL_EXTREME && pick == 1) v = INT64_MAX;
            ((int64_t *)data)[i] = v; break; }
        case COPROC_UINT32: {
            uint32_t v = mode == FILL_EQUAL ? 7 : (uint32_t)(x >> 32);
            if (mode == FILL_EXTREME && pick == 0) v = UINT32_MAX;
            if (mode == FILL_EXTREME && pick == 1) v = 0;
            ((uint32_t *)data)[i] = v; break; }
        case COPROC_UINT64: {
            uint64_t v = mode == FILL_EQUAL ? 7 : x;
            if (mode == FILL_EXTREME && pick == 0) v = UINT64_MAX;
            if (mode == FILL_EXTREME && pick == 1) v = 0;
            ((uint64_t *)data)[i] = v; break; }
        case COPROC_FLOAT32:
        case COPROC_FLOAT64: {
            double v = mode == FILL_EQUAL ? -0.5 : ((double)(x >> 11) / 9007199254740992.0 - 0.5) * 1000;
            if (mode == FILL_SPECIAL_FLOAT) {
                if (pick == 0) v = NAN;
                if (pick == 1) v = -0.0;
                if (pick == 2 && (x >> 40) % 50 == 0) v = (x & 1) ? INFINITY : -INFINITY;
            }
            if (mode == FILL_ALL_NAN) v = NAN;
            if (t == COPROC_FLOAT32) ((float *)data)[i] = (float)v; else ((double *)data)[i] = v;
            break; }
        default: break;
        }
    }
}

/* The scalar reference, written as plainly as possible. */
static coproc_scalar reference(coproc_reduce_op op, coproc_type t, const void *data, size_t n)
{
    coproc_scalar r;
    memset(&r, 0, sizeof r);
    r.count = n;
    int mn = op == COPROC_REDUCE_MIN;
    if (op == COPROC_REDUCE_COUNT) { r.type = COPROC_UINT64; r.v.u64 = n; return r; }
    switch (t) {
    case COPROC_INT32: case COPROC_INT64: {
        r.type = COPROC_INT64;
        int64_t acc = op == COPROC_REDUCE_SUM ? 0 : mn ? (t == COPROC_INT32 ? INT32_MAX : INT64_MAX)
                                                       : (t == COPROC_INT32 ? INT32_MIN : INT64_MIN);
        for (size_t i = 0; i < n; i++) {
            int64_t v = t == COPROC_INT32 ? ((const int32_t *)data)[i] : ((const int64_t *)data)[i];
            if (op == COPROC_REDUCE_SUM) acc = (int64_t)((uint64_t)acc + (uint64_t)v);
            else if (mn ? v < acc : v > acc) acc = v;
        }
        r.v.i64 = acc; break; }
    case COPROC_UINT32: case COPROC_UINT64: {
        r.type = COPROC_UINT64;
        uint64_t acc = op == COPROC_REDUCE_SUM ? 0 : mn ? (t == COPROC_UINT32 ? UINT32_MAX : UINT64_MAX) : 0;
        for (size_t i = 0; i < n; i++) {
            uint64_t v = t == COPROC_UINT32 ? ((const uint32_t *)data)[i] : ((const uint64_t *)data)[i];
            if (op == COPROC_REDUCE_SUM) acc += v;
            else if (mn ? v < acc : v > acc) acc = v;
        }
        r.v.u64 = acc; break; }
    default: {
        r.type = COPROC_FLOAT64;
        double acc = op == COPROC_REDUCE_SUM ? 0 : n == 0 ? (mn ? INFINITY : -INFINITY) : NAN;
        for (size_t i = 0; i < n; i++) {
            double v = t == COPROC_FLOAT32 ? ((const float *)data)[i] : ((const double *)data)[i];
            if (op == COPROC_REDUCE_SUM) acc += v;
            else acc = mn ? fmin(acc, v) : fmax(acc, v);
        }
        r.v.f64 = acc; break; }
    }
    return r;
}

static void check(coproc_reduce_op op, coproc_type t, size_t n, const coproc_scalar *got,
                  const coproc_scalar *want, const void *data, const char *ctx)
{
    char where[200];
    snprintf(where, sizeof where, "%s op=%d type=%s n=%zu", ctx, (int)op, coproc_type_name(t), n);
    if (got->type != want->type || got->count != want->count)
        fail_msg("%s: type %d/%d count %llu/%llu", where, got->type, want->type,
                 (unsigned long long)got->count, (unsigned long long)want->count);
    if (want->type == COPROC_FLOAT64) {
        double g = got->v.f64, w = want->v.f64;
        if (isnan(w) || isnan(g)) {
            if (!(isnan(w) && isnan(g)))
                fail_msg("%s: got %g want %g", where, g, w);
            return;
        }
        if (op == COPROC_REDUCE_SUM) {
            /* Summation order differs: bound the error by n * eps * sum|x|. */
            double abs_sum = 0;
            for (size_t i = 0; i < n; i++)
                abs_sum += fabs(t == COPROC_FLOAT32 ? ((const float *)data)[i] : ((const double *)data)[i]);
            double eps = t == COPROC_FLOAT32 ? FLT_EPSILON : DBL_EPSILON;
            if (isinf(w)) { if (g != w) fail_msg("%s: got %g want %g", where, g, w); return; }
            if (fabs(g - w) > 4 * eps * abs_sum + 1e-300)
                fail_msg("%s: got %.17g want %.17g", where, g, w);
        } else if (g != w) { /* -0.0 == 0.0: min/max may return either zero */
            fail_msg("%s: got %.17g want %.17g", where, g, w);
        }
        return;
    }
    if (got->v.u64 != want->v.u64)
        fail_msg("%s: got %lld want %lld", where, (long long)got->v.i64, (long long)want->v.i64);
}

static void run_device(coproc_runtime *rt, int dev, const char *path, void *user)
{
    (void)user;
    coproc_device_info info;
    assert_ok(rt, coproc_device_info_get(rt, dev, &info));
    static const int modes[] = {FILL_RANDOM, FILL_EXTREME, FILL_SPECIAL_FLOAT, FILL_ALL_NAN, FILL_EQUAL};
    test_rng rng = {12345};
    for (int t = 0; t < COPROC__TYPE_COUNT; t++) {
        if (t == COPROC_FLOAT64 && !info.has_fp64)
            continue;
        int is_float = t == COPROC_FLOAT32 || t == COPROC_FLOAT64;
        for (size_t si = 0; test_edge_sizes[si] != (size_t)-1; si++) {
            size_t n = test_edge_sizes[si];
            void *data = malloc((n ? n : 1) * 8);
            for (size_t m = 0; m < sizeof modes / sizeof *modes; m++) {
                if ((modes[m] == FILL_SPECIAL_FLOAT || modes[m] == FILL_ALL_NAN) && !is_float)
                    continue;
                if (n > 70000 && m > 1)
                    continue; /* big sizes: random and extreme values are enough */
                fill((coproc_type)t, data, n, modes[m], &rng);
                coproc_column *col = NULL;
                assert_ok(rt, coproc_column_upload(rt, dev, (coproc_type)t, data, n, &col));
                for (int op = COPROC_REDUCE_SUM; op <= COPROC_REDUCE_COUNT; op++) {
                    coproc_scalar got, want = reference((coproc_reduce_op)op, (coproc_type)t, data, n);
                    assert_ok(rt, coproc_reduce(rt, (coproc_reduce_op)op, col, &got));
                    check((coproc_reduce_op)op, (coproc_type)t, n, &got, &want, data, path);
                }
                coproc_column_free(col);
            }
            free(data);
        }
    }
}

static void test_reduce_matches_reference(void **state)
{
    (void)state;
    test_each_device_path(run_device, NULL);
}

/* Float32 sums are as good as a double accumulator on every device, also
 * without fp64 (compensated float pairs) and where subnormals are flushed
 * (they are summed exactly as integers): cancellation a float accumulator
 * loses, subnormals alone, and the two mixed, through coproc_reduce and
 * coproc_reduce_where (every row selected). */
static void run_float_sums(coproc_runtime *rt, int dev, const char *path, void *user)
{
    (void)user;
    enum { CASES = 4 };
    static const size_t sizes[] = {1, 257, 5000, 100003};
    for (size_t si = 0; si < sizeof sizes / sizeof *sizes; si++) {
        size_t n = sizes[si];
        float *x = malloc(n * sizeof *x);
        uint32_t *bits = malloc((n + 31) / 32 * 4);
        for (size_t w = 0; w < (n + 31) / 32; w++)
            bits[w] = w + 1 < (n + 31) / 32 || n % 32 == 0 ? 0xffffffffu : (1u << (n % 32)) - 1;
        for (int c = 0; c < CASES; c++) {
            double want = 0, mag = 0;
            for (size_t i = 0; i < n; i++) {
                float v;
                switch (c) {
                case 0: /* 2^24 + ones - 2^24: a float accumulator drops every one */
                    v = i == 0 ? 16777216.0f : i == n - 1 && n > 1 ? -16777216.0f : 1.0f;
                    break;
                case 1: /* subnormals only, of both signs */
                    v = (float)((double)FLT_TRUE_MIN * (double)((i * 7919) % 1000 + 1)) *
                        (i % 3 == 0 ? -1.0f : 1.0f);
                    break;
                case 2: /* subnormals beside normal numbers */
                    v = i % 2 ? FLT_TRUE_MIN * 3 : 1e-30f * (float)(i % 5);
                    break;
                default: /* many small terms after one large one */
                    v = i == 0 ? 1e8f : 0.1f + (float)(i % 10) * 1e-3f;
                    break;
                }
                x[i] = v;
                want += v; /* exact in double here: few significant bits */
                mag += fabs((double)v);
            }
            coproc_column *col = NULL, *cbits = NULL;
            assert_ok(rt, coproc_column_upload(rt, dev, COPROC_FLOAT32, x, n, &col));
            assert_ok(rt,
                      coproc_column_upload(rt, dev, COPROC_UINT32, bits, (n + 31) / 32, &cbits));
            coproc_scalar got, where;
            assert_ok(rt, coproc_reduce(rt, COPROC_REDUCE_SUM, col, &got));
            assert_ok(rt, coproc_reduce_where(rt, COPROC_REDUCE_SUM, col, cbits, &where));
            /* A double accumulator's bound (n * 2^-53 * sum|x|) with room: a
             * float accumulator misses it by orders of magnitude. */
            double tol = (double)n * 0x1p-50 * mag + 1e-300;
            if (fabs(got.v.f64 - want) > tol || fabs(where.v.f64 - want) > tol)
                fail_msg("%s case %d n=%zu: reduce %.17g, reduce_where %.17g, want %.17g", path, c,
                         n, got.v.f64, where.v.f64, want);
            coproc_column_free(col);
            coproc_column_free(cbits);
        }
        free(x);
        free(bits);
    }
}

static void test_reduce_float_sums(void **state)
{
    (void)state;
    test_each_device_path(run_float_sums, NULL);
}

static void test_reduce_bad_input(void **state)
{
    (void)state;
    coproc_runtime *rt = test_open(NULL);
    coproc_scalar out;
    int32_t x[4] = {1, 2, 3, 4};
    coproc_column *col = NULL;
    assert_ok(rt, coproc_column_upload(rt, 0, COPROC_INT32, x, 4, &col));
    assert_status(COPROC_NULL_POINTER, coproc_reduce(NULL, COPROC_REDUCE_SUM, col, &out));
    assert_status(COPROC_NULL_POINTER, coproc_reduce(rt, COPROC_REDUCE_SUM, NULL, &out));
    assert_true(strstr(coproc_errmsg(rt), "NULL") != NULL);
    assert_status(COPROC_NULL_POINTER, coproc_reduce(rt, COPROC_REDUCE_SUM, col, NULL));
    assert_status(COPROC_INVALID_ARGUMENT, coproc_reduce(rt, (coproc_reduce_op)99, col, &out));
    coproc_column *bad = (coproc_column *)1;
    assert_status(COPROC_UNSUPPORTED_TYPE, coproc_column_upload(rt, 0, (coproc_type)42, x, 4, &bad));
    assert_null(bad); /* failures leave *out NULL */
    assert_status(COPROC_NULL_POINTER, coproc_column_upload(rt, 0, COPROC_INT32, NULL, 4, &bad));
    assert_status(COPROC_INVALID_ARGUMENT, coproc_column_upload(rt, 99, COPROC_INT32, x, 4, &bad));
    assert_null(bad);
    coproc_column *other = NULL;
    assert_ok(rt, coproc_column_upload(rt, 0, COPROC_INT32, x, 4, &other));
    int32_t small[2];
    assert_status(COPROC_LENGTH_MISMATCH, coproc_column_download(other, small, 2));
    coproc_column_free(other);
    /* More than the device can allocate: a clear status, no crash. */
    coproc_device_info info;
    assert_ok(rt, coproc_device_info_get(rt, 0, &info));
    assert_status(COPROC_DEVICE_OUT_OF_MEMORY,
                  coproc_column_alloc(rt, 0, COPROC_INT64, info.max_alloc_bytes / 8 + 1, &bad));
    assert_null(bad);
    assert_true(strstr(coproc_errmsg(rt), "largest allocation") != NULL);
    /* A column of another runtime is refused, not misused. */
    coproc_runtime *rt2 = test_open(NULL);
    assert_status(COPROC_INVALID_ARGUMENT, coproc_reduce(rt2, COPROC_REDUCE_SUM, col, &out));
    coproc_close(rt2);
    coproc_column_free(col);
    coproc_close(rt);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reduce_matches_reference),
        cmocka_unit_test(test_reduce_float_sums),
        cmocka_unit_test(test_reduce_bad_input),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
