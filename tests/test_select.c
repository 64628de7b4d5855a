/* test_select.c - coproc_select and coproc_select_bitmap of every type and
 * comparison, one predicate and two (AND/OR, mixed types), against scalar C
 * comparisons, on edge sizes, on every device and kernel path. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testlib.h"

/* Few distinct values, so EQ matches and ties are common; extremes mixed in. */
static void fill(coproc_type t, void *data, size_t n, test_rng *r)
{
    for (size_t i = 0; i < n; i++) {
        uint64_t x = test_rand(r);
        int pick = (int)(x % 13);
        int64_t small = (int64_t)((x >> 32) % 61) - 30;
        switch (t) {
        case COPROC_INT32:
            ((int32_t *)data)[i] = pick == 0 ? INT32_MIN : pick == 1 ? INT32_MAX : (int32_t)small;
            break;
        case COPROC_INT64:
            ((int64_t *)data)[i] = pick == 0 ? INT64_MIN : pick == 1 ? INT64_MAX : small * ((int64_t)1 << 33);
            break;
        case COPROC_UINT32:
            ((uint32_t *)data)[i] = pick == 0 ? UINT32_MAX : (uint32_t)(small + 30);
            break;
        case COPROC_UINT64:
            ((uint64_t *)data)[i] = pick == 0 ? UINT64_MAX : (uint64_t)(small + 30) << 40;
            break;
        default: {
            double v = (double)small / 4;
            if (pick == 0) v = NAN;
            if (pick == 1) v = -0.0;
            if (pick == 2) v = (x & 1) ? INFINITY : -INFINITY;
            if (pick == 3) v = 0.1; /* 0.1f != 0.1: float32 vs double constant */
            if (t == COPROC_FLOAT32) ((float *)data)[i] = (float)v; else ((double *)data)[i] = v;
            break; }
        }
    }
}

static coproc_value value_at(coproc_type t, const void *data, size_t i)
{
    coproc_value v;
    switch (t) {
    case COPROC_INT32: v.i64 = ((const int32_t *)data)[i]; break;
    case COPROC_INT64: v.i64 = ((const int64_t *)data)[i]; break;
    case COPROC_UINT32: v.u64 = ((const uint32_t *)data)[i]; break;
    case COPROC_UINT64: v.u64 = ((const uint64_t *)data)[i]; break;
    case COPROC_FLOAT32: v.f64 = ((const float *)data)[i]; break;
    default: v.f64 = ((const double *)data)[i]; break;
    }
    return v;
}

/* C's own comparison of the element with the constant (floats in double). */
static int ref_pred(coproc_type t, const void *data, size_t i, coproc_cmp cmp, coproc_value a,
                    coproc_value b)
{
    coproc_value x = value_at(t, data, i);
#define CMP_ALL(X, A, B)                                                                     \
    switch (cmp) {                                                                           \
    case COPROC_CMP_EQ: return X == A;                                                       \
    case COPROC_CMP_NE: return X != A;                                                       \
    case COPROC_CMP_LT: return X < A;                                                        \
    case COPROC_CMP_LE: return X <= A;                                                       \
    case COPROC_CMP_GT: return X > A;                                                        \
    case COPROC_CMP_GE: return X >= A;                                                       \
    default: return A <= X && X < B;                                                         \
    }
    if (t == COPROC_INT32 || t == COPROC_INT64) { CMP_ALL(x.i64, a.i64, b.i64) }
    if (t == COPROC_UINT32 || t == COPROC_UINT64) { CMP_ALL(x.u64, a.u64, b.u64) }
    CMP_ALL(x.f64, a.f64, b.f64)
#undef CMP_ALL
}

typedef struct input {
    coproc_type t;
    void *data;
    coproc_column *col;
} input;

/* Run f both ways and compare with the reference rows. */
static void check_filter(coproc_runtime *rt, const coproc_filter *f, const input *in1,
                         const input *in2, size_t n, const char *ctx)
{
    uint32_t *want = malloc((n ? n : 1) * 4);
    size_t words = (n + 31) / 32;
    uint32_t *want_bits = calloc(words ? words : 1, 4);
    size_t count = 0;
    for (size_t i = 0; i < n; i++) {
        int m = ref_pred(in1->t, in1->data, i, f->first.cmp, f->first.a, f->first.b);
        if (f->logic != COPROC_LOGIC_NONE) {
            int m2 = ref_pred(in2->t, in2->data, i, f->second.cmp, f->second.a, f->second.b);
            m = f->logic == COPROC_LOGIC_AND ? m && m2 : m || m2;
        }
        if (m) {
            want[count++] = (uint32_t)i;
            want_bits[i / 32] |= 1u << (i % 32);
        }
    }
    char where[256];
    snprintf(where, sizeof where, "%s n=%zu cmp=%d/%d logic=%d a=%llx", ctx, n, (int)f->first.cmp,
             (int)f->second.cmp, (int)f->logic, (unsigned long long)f->first.a.u64);

    coproc_column *pos = NULL;
    uint64_t got_count = 999;
    assert_ok(rt, coproc_select(rt, f, &pos, &got_count));
    if (got_count != count)
        fail_msg("%s: count %llu want %zu", where, (unsigned long long)got_count, count);
    assert_int_equal(coproc_column_type(pos), COPROC_UINT32);
    assert_int_equal(coproc_column_length(pos), count);
    uint32_t *got = malloc((count ? count : 1) * 4);
    assert_ok(rt, coproc_column_download(pos, got, count));
    for (size_t i = 0; i < count; i++)
        if (got[i] != want[i])
            fail_msg("%s: position %zu is %u, want %u", where, i, got[i], want[i]);
    coproc_column_free(pos);

    got_count = 999;
    assert_ok(rt, coproc_select(rt, f, NULL, &got_count)); /* count only */
    assert_int_equal(got_count, count);

    coproc_column *bm = NULL;
    got_count = 999;
    assert_ok(rt, coproc_select_bitmap(rt, f, &bm, &got_count));
    assert_int_equal(got_count, count);
    assert_int_equal(coproc_column_length(bm), words);
    uint32_t *bits = malloc((words ? words : 1) * 4);
    assert_ok(rt, coproc_column_download(bm, bits, words));
    for (size_t w = 0; w < words; w++)
        if (bits[w] != want_bits[w])
            fail_msg("%s: bitmap word %zu is %08x, want %08x", where, w, bits[w], want_bits[w]);
    coproc_column_free(bm);
    free(bits);
    free(got);
    free(want);
    free(want_bits);
}

/* Sizes beside test_edge_sizes: one bitmap word less, exactly, one more; and
 * one row past 8 CPU-path chunks of 4096 rows (launch.c). */
static const size_t extra_sizes[] = {31, 32, 33, 32769};

static void run_size(coproc_runtime *rt, int dev, const char *path, size_t n, int ntypes,
                     test_rng *r)
{
    int big = n > 70000;
    input in[COPROC__TYPE_COUNT];
    for (int t = 0; t < ntypes; t++) {
        in[t].t = (coproc_type)t;
        in[t].data = malloc((n ? n : 1) * 8);
        fill((coproc_type)t, in[t].data, n, r);
        assert_ok(rt, coproc_column_upload(rt, dev, (coproc_type)t, in[t].data, n, &in[t].col));
    }
    for (int t = 0; t < ntypes; t++) {
        if (big && t != COPROC_INT32 && t != COPROC_FLOAT32)
            continue;
        for (int cmp = COPROC_CMP_EQ; cmp <= COPROC_CMP_RANGE; cmp++) {
            coproc_filter f;
            memset(&f, 0, sizeof f);
            f.first.col = in[t].col;
            f.first.cmp = (coproc_cmp)cmp;
            size_t i1 = (size_t)test_rand_below(r, n), i2 = (size_t)test_rand_below(r, n);
            if (n) {
                f.first.a = value_at((coproc_type)t, in[t].data, i1);
                f.first.b = value_at((coproc_type)t, in[t].data, i2);
            }
            char ctx[96];
            snprintf(ctx, sizeof ctx, "%s %s", path, coproc_type_name((coproc_type)t));
            check_filter(rt, &f, &in[t], NULL, n, ctx);
            if (big)
                continue;
            /* a second predicate of another type, AND and OR */
            int t2 = (t + 1 + cmp) % ntypes;
            f.second.col = in[t2].col;
            f.second.cmp = (coproc_cmp)((cmp + 2) % 7);
            if (n) {
                f.second.a = value_at((coproc_type)t2, in[t2].data, i2);
                f.second.b = value_at((coproc_type)t2, in[t2].data, i1);
            }
            for (int logic = COPROC_LOGIC_AND; logic <= COPROC_LOGIC_OR; logic++) {
                f.logic = (coproc_logic)logic;
                check_filter(rt, &f, &in[t], &in[t2], n, ctx);
            }
        }
    }
    /* Constants at the edges: all rows, no rows, NaN, values between floats. */
    if (n == 33 || n == 1025 || n == 100003) {
        static const double fconst[] = {0.1, -0.0, NAN, INFINITY, -INFINITY, 1e300, -1e300,
                                        FLT_MAX, 0.25, 1e-50};
        for (int t = 0; t < ntypes; t++) {
            for (int cmp = COPROC_CMP_EQ; cmp <= COPROC_CMP_RANGE; cmp++) {
                for (int e = 0; e < 10; e++) {
                    coproc_filter f;
                    memset(&f, 0, sizeof f);
                    f.first.col = in[t].col;
                    f.first.cmp = (coproc_cmp)cmp;
                    switch (t) {
                    case COPROC_INT32:
                        f.first.a.i64 = e % 2 ? INT32_MIN : INT32_MAX;
                        f.first.b.i64 = e % 3 ? INT32_MAX : 0;
                        break;
                    case COPROC_INT64:
                        f.first.a.i64 = e % 2 ? INT64_MIN : INT64_MAX;
                        f.first.b.i64 = e % 3 ? INT64_MAX : 0;
                        break;
                    case COPROC_UINT32:
                        f.first.a.u64 = e % 2 ? 0 : UINT32_MAX;
                        f.first.b.u64 = e % 3 ? UINT32_MAX : 5;
                        break;
                    case COPROC_UINT64:
                        f.first.a.u64 = e % 2 ? 0 : UINT64_MAX;
                        f.first.b.u64 = e % 3 ? UINT64_MAX : 5;
                        break;
                    default:
                        f.first.a.f64 = fconst[e];
                        f.first.b.f64 = fconst[(e + 3) % 10];
                        break;
                    }
                    char ctx[96];
                    snprintf(ctx, sizeof ctx, "%s %s edge-constant %d", path,
                             coproc_type_name((coproc_type)t), e);
                    check_filter(rt, &f, &in[t], NULL, n, ctx);
                }
            }
        }
    }
    for (int t = 0; t < ntypes; t++) {
        coproc_column_free(in[t].col);
        free(in[t].data);
    }
}

static void run_device(coproc_runtime *rt, int dev, const char *path, void *user)
{
    (void)user;
    coproc_device_info info;
    assert_ok(rt, coproc_device_info_get(rt, dev, &info));
    test_rng rng = {4242};
    int ntypes = info.has_fp64 ? COPROC__TYPE_COUNT : COPROC_FLOAT64;
    for (size_t si = 0; test_edge_sizes[si] != (size_t)-1; si++)
        run_size(rt, dev, path, test_edge_sizes[si], ntypes, &rng);
    for (size_t si = 0; si < sizeof extra_sizes / sizeof *extra_sizes; si++)
        run_size(rt, dev, path, extra_sizes[si], ntypes, &rng);
}

static void test_select_matches_reference(void **state)
{
    (void)state;
    test_each_device_path(run_device, NULL);
}

/* A driver quirk that caps the rows a work-item walks (quirks.h) gives more
 * work-groups than bitmap words, so groups at the end own no word: they must
 * write none (the CPU path's partial last word once raced so). */
static void run_capped(coproc_runtime *rt, int dev, const char *path, void *user)
{
    (void)user;
    static const size_t sizes[] = {1, 17, 31, 33, 100, 1025};
    test_rng rng = {77};
    for (size_t si = 0; si < sizeof sizes / sizeof *sizes; si++) {
        size_t n = sizes[si];
        input in = {COPROC_INT32, malloc(n * 4), NULL};
        fill(COPROC_INT32, in.data, n, &rng);
        assert_ok(rt, coproc_column_upload(rt, dev, COPROC_INT32, in.data, n, &in.col));
        for (int cmp = COPROC_CMP_LT; cmp <= COPROC_CMP_RANGE; cmp += COPROC_CMP_RANGE - COPROC_CMP_LT) {
            coproc_filter f;
            memset(&f, 0, sizeof f);
            f.first = (coproc_predicate){in.col, (coproc_cmp)cmp, {.i64 = -3}, {.i64 = 9}};
            f.second = (coproc_predicate){in.col, COPROC_CMP_LT, {.i64 = 20}, {.i64 = 0}};
            char ctx[96];
            snprintf(ctx, sizeof ctx, "%s rows-per-item 16", path);
            for (int logic = COPROC_LOGIC_NONE; logic <= COPROC_LOGIC_OR; logic++) {
                f.logic = (coproc_logic)logic;
                check_filter(rt, &f, &in, &in, n, ctx);
            }
        }
        coproc_column_free(in.col);
        free(in.data);
    }
}

static void test_select_capped_rows(void **state)
{
    (void)state;
    setenv("COPROC_QUIRKS", "max_rows_per_item=16", 1);
    test_each_device_path(run_capped, NULL);
    unsetenv("COPROC_QUIRKS");
}

static void test_select_bad_input(void **state)
{
    (void)state;
    coproc_runtime *rt = test_open(NULL);
    int32_t x[5] = {1, 2, 3, 4, 5};
    uint32_t u[4] = {1, 2, 3, 4};
    coproc_column *col = NULL, *ucol = NULL, *out = (coproc_column *)1;
    assert_ok(rt, coproc_column_upload(rt, 0, COPROC_INT32, x, 5, &col));
    assert_ok(rt, coproc_column_upload(rt, 0, COPROC_UINT32, u, 4, &ucol));
    coproc_filter f;
    memset(&f, 0, sizeof f);
    f.first.col = col;
    f.first.cmp = COPROC_CMP_GT;
    f.first.a.i64 = 2;
    uint64_t count = 0;
    assert_status(COPROC_NULL_POINTER, coproc_select(NULL, &f, &out, &count));
    assert_status(COPROC_NULL_POINTER, coproc_select(rt, NULL, &out, &count));
    assert_null(out);
    assert_status(COPROC_NULL_POINTER, coproc_select_bitmap(rt, &f, NULL, &count));
    f.first.col = NULL;
    out = (coproc_column *)1;
    assert_status(COPROC_NULL_POINTER, coproc_select(rt, &f, &out, &count));
    assert_null(out);
    assert_true(strstr(coproc_errmsg(rt), "NULL") != NULL);
    f.first.col = col;
    /* constants that do not fit the column */
    f.first.a.i64 = (int64_t)INT32_MAX + 1;
    assert_status(COPROC_INVALID_ARGUMENT, coproc_select(rt, &f, &out, &count));
    f.first.a.i64 = (int64_t)INT32_MIN - 1;
    assert_status(COPROC_INVALID_ARGUMENT, coproc_select_bitmap(rt, &f, &out, &count));
    assert_null(out);
    f.first.a.i64 = 0;
    f.first.cmp = COPROC_CMP_RANGE;
    f.first.b.i64 = INT64_MAX;
    assert_status(COPROC_INVALID_ARGUMENT, coproc_select(rt, &f, &out, &count));
    f.first.col = ucol;
    f.first.a.u64 = 1;
    f.first.b.u64 = (uint64_t)UINT32_MAX + 1;
    assert_status(COPROC_INVALID_ARGUMENT, coproc_select(rt, &f, &out, &count));
    f.first.b.u64 = 3;
    assert_ok(rt, coproc_select(rt, &f, NULL, &count));
    assert_int_equal(count, 2);
    /* bad comparison and logic */
    f.first.cmp = (coproc_cmp)42;
    assert_status(COPROC_INVALID_ARGUMENT, coproc_select(rt, &f, &out, &count));
    f.first.cmp = COPROC_CMP_LT;
    f.logic = (coproc_logic)7;
    assert_status(COPROC_INVALID_ARGUMENT, coproc_select(rt, &f, &out, &count));
    /* two predicates of different lengths */
    f.logic = COPROC_LOGIC_AND;
    f.second.col = col;
    f.second.cmp = COPROC_CMP_GT;
    assert_status(COPROC_LENGTH_MISMATCH, coproc_select(rt, &f, &out, &count));
    assert_status(COPROC_LENGTH_MISMATCH, coproc_select_bitmap(rt, &f, &out, &count));
    assert_null(out);
    f.second.col = NULL;
    assert_status(COPROC_NULL_POINTER, coproc_select(rt, &f, &out, &count));
    /* a column of another runtime */
    coproc_runtime *rt2 = test_open(NULL);
    f.logic = COPROC_LOGIC_NONE;
    assert_status(COPROC_INVALID_ARGUMENT, coproc_select(rt2, &f, &out, &count));
    assert_null(out);
    coproc_close(rt2);
    coproc_column_free(col);
    coproc_column_free(ucol);
    coproc_close(rt);
}

/* Columns on two devices (when there are two) are refused. */
static void test_select_wrong_device(void **state)
{
    (void)state;
    coproc_runtime *rt = test_open(NULL);
    if (coproc_device_count(rt) < 2) {
        coproc_close(rt);
        skip();
    }
    int32_t x[3] = {1, 2, 3};
    coproc_column *c0 = NULL, *c1 = NULL, *out = NULL;
    assert_ok(rt, coproc_column_upload(rt, 0, COPROC_INT32, x, 3, &c0));
    assert_ok(rt, coproc_column_upload(rt, 1, COPROC_INT32, x, 3, &c1));
    coproc_filter f;
    memset(&f, 0, sizeof f);
    f.first.col = c0;
    f.logic = COPROC_LOGIC_OR;
    f.second.col = c1;
    assert_status(COPROC_WRONG_DEVICE, coproc_select(rt, &f, &out, NULL));
    assert_null(out);
    coproc_column_free(c0);
    coproc_column_free(c1);
    coproc_close(rt);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_select_matches_reference),
        cmocka_unit_test(test_select_capped_rows),
        cmocka_unit_test(test_select_bad_input),
        cmocka_unit_test(test_select_wrong_device),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
