/* test_merge_join.c - coproc_sort_merge_join and coproc_semi_join of every
 * integer key type against nested-loop references (pairs compared as sorted
 * pair lists), on every device and kernel path. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testlib.h"

/* Key i of a column of type t, widened without changing equality. */
static uint64_t key_at(coproc_type t, const void *d, size_t i)
{
    switch (t) {
    case COPROC_INT32: return (uint64_t)(int64_t)((const int32_t *)d)[i];
    case COPROC_UINT32: return ((const uint32_t *)d)[i];
    default: return ((const uint64_t *)d)[i];
    }
}

enum { KEYS_RANGE, KEYS_EXTREME, KEYS_SKEW };

/* n keys drawn from `range` distinct values (duplicates when range < n),
 * spread over the type (negative ones too), or extreme values; KEYS_SKEW: as
 * KEYS_RANGE but 49 of 50 rows take the first value. */
static void fill_keys(coproc_type t, void *d, size_t n, uint64_t range, int mode, test_rng *r)
{
    static const int64_t ext_i[] = {INT64_MIN, INT64_MAX, -1, 0, 1, INT32_MIN, INT32_MAX};
    static const uint64_t ext_u[] = {UINT64_MAX, 0, 1, UINT32_MAX, UINT64_MAX - 1};
    for (size_t i = 0; i < n; i++) {
        uint64_t v = test_rand_below(r, range ? range : 1);
        if (mode == KEYS_SKEW && test_rand_below(r, 50))
            v = 0;
        int64_t sv = (int64_t)(v * 2654435761u % 1000003) - 500000; /* scattered, signed */
        switch (t) {
        case COPROC_INT32:
            ((int32_t *)d)[i] = mode == KEYS_EXTREME ? (int32_t)(v % 3 == 0 ? INT32_MIN
                                                                 : v % 3 == 1 ? INT32_MAX : -1)
                                                     : (int32_t)sv;
            break;
        case COPROC_INT64:
            ((int64_t *)d)[i] = mode == KEYS_EXTREME ? ext_i[v % 7] : sv * 4000000000ll;
            break;
        case COPROC_UINT32:
            ((uint32_t *)d)[i] = mode == KEYS_EXTREME ? (uint32_t)(v % 2 ? UINT32_MAX : 0)
                                                      : (uint32_t)(sv + 500000) * 4000u;
            break;
        default:
            ((uint64_t *)d)[i] = mode == KEYS_EXTREME ? ext_u[v % 5]
                                                      : (uint64_t)(sv + 500000) << 33 | 7;
            break;
        }
    }
}

static void download_u32(coproc_runtime *rt, const coproc_column *c, uint32_t *out, size_t n)
{
    assert_int_equal(coproc_column_length(c), n);
    assert_int_equal(coproc_column_type(c), COPROC_UINT32);
    assert_ok(rt, coproc_column_download(c, out, n));
}

static void check_join(coproc_runtime *rt, int dev, coproc_type t, size_t nl, size_t nr,
                       uint64_t range, int mode, test_rng *rng, const char *ctx)
{
    size_t w = coproc_type_size(t);
    void *l = malloc((nl ? nl : 1) * w), *r = malloc((nr ? nr : 1) * w);
    fill_keys(t, l, nl, range, mode, rng);
    fill_keys(t, r, nr, range, mode, rng);
    char where[200];
    snprintf(where, sizeof where, "%s %s nl=%zu nr=%zu range=%llu", ctx, coproc_type_name(t), nl,
             nr, (unsigned long long)range);

    /* nested-loop reference */
    size_t want_n = 0, cap = 16;
    test_pair *want = malloc(cap * sizeof *want);
    for (size_t i = 0; i < nl; i++)
        for (size_t j = 0; j < nr; j++)
            if (key_at(t, l, i) == key_at(t, r, j)) {
                if (want_n == cap)
                    want = realloc(want, (cap *= 2) * sizeof *want);
                want[want_n++] = (test_pair){(uint32_t)i, (uint32_t)j};
            }

    coproc_column *lc = NULL, *rc = NULL;
    assert_ok(rt, coproc_column_upload(rt, dev, t, l, nl, &lc));
    assert_ok(rt, coproc_column_upload(rt, dev, t, r, nr, &rc));
    coproc_join_result res;
    assert_ok(rt, coproc_sort_merge_join(rt, lc, rc, &res));
    if (res.count != want_n)
        fail_msg("%s: %zu pairs, expected %zu", where, res.count, want_n);
    uint32_t *gl = malloc((want_n ? want_n : 1) * 4), *gr = malloc((want_n ? want_n : 1) * 4);
    download_u32(rt, res.left, gl, want_n);
    download_u32(rt, res.right, gr, want_n);
    test_pair *got = malloc((want_n ? want_n : 1) * sizeof *got);
    for (size_t i = 0; i < want_n; i++)
        got[i] = (test_pair){gl[i], gr[i]};
    qsort(got, want_n, sizeof *got, test_cmp_pair);
    for (size_t i = 0; i < want_n; i++)
        if (got[i].l != want[i].l || got[i].r != want[i].r)
            fail_msg("%s: pair %zu is (%u, %u), expected (%u, %u)", where, i, got[i].l, got[i].r,
                     want[i].l, want[i].r);
    coproc_join_result_free(&res);
    assert_null(res.left);
    void *back = malloc((nl ? nl : 1) * w); /* the join sorted copies, not the input */
    assert_ok(rt, coproc_column_download(lc, back, nl));
    if (memcmp(back, l, nl * w) != 0)
        fail_msg("%s: the left input changed", where);
    free(back);

    /* semi-join: probe = left, build = right; positions ascending */
    coproc_column *pos = NULL;
    uint64_t cnt = 12345;
    assert_ok(rt, coproc_semi_join(rt, lc, rc, &pos, &cnt));
    size_t sw = 0;
    uint32_t *swant = malloc((nl ? nl : 1) * 4), *sgot = malloc((nl ? nl : 1) * 4);
    for (size_t i = 0; i < nl; i++)
        for (size_t j = 0; j < nr; j++)
            if (key_at(t, l, i) == key_at(t, r, j)) {
                swant[sw++] = (uint32_t)i;
                break;
            }
    if (cnt != sw)
        fail_msg("%s semi: count %llu, expected %zu", where, (unsigned long long)cnt, sw);
    download_u32(rt, pos, sgot, sw);
    if (memcmp(sgot, swant, sw * 4) != 0)
        fail_msg("%s semi: positions differ", where);
    coproc_column_free(pos);

    coproc_column_free(lc);
    coproc_column_free(rc);
    free(l);
    free(r);
    free(want);
    free(got);
    free(gl);
    free(gr);
    free(swant);
    free(sgot);
}

static void run_device(coproc_runtime *rt, int dev, const char *path, void *user)
{
    (void)user;
    test_rng rng = {4242};
    /* (left, right, distinct keys): empty sides, singletons, heavy duplicates
     * on both sides, mostly unique, no matches possible, chunk and
     * work-group boundaries. */
    static const struct { size_t nl, nr; uint64_t range; } cases[] = {
        {0, 0, 10},     {0, 5, 10},      {5, 0, 10},      {1, 1, 1},        {1, 1, 1000000},
        {7, 9, 3},      {64, 65, 8},     {257, 255, 1},   {1000, 1000, 100000},
        {1025, 300, 40}, {4097, 4095, 3000}, {300, 8193, 97}, {3000, 3001, 3000},
        {20000, 3, 5},  {3, 20000, 20000},
    };
    for (int t = COPROC_INT32; t <= COPROC_UINT64; t++) {
        for (size_t c = 0; c < sizeof cases / sizeof *cases; c++)
            check_join(rt, dev, (coproc_type)t, cases[c].nl, cases[c].nr, cases[c].range,
                       KEYS_RANGE, &rng, path);
        check_join(rt, dev, (coproc_type)t, 200, 150, 1000, KEYS_EXTREME, &rng, path);
    }
}

static void test_merge_join_matches_reference(void **state)
{
    (void)state;
    test_each_device_path(run_device, NULL);
}

/* A key repeated 100,000 times on one side, the other side all that key, both
 * ways; 98% one key among distinct ones. One sorted row's pairs are far more
 * than a work-item may loop where a device caps that (Mesa's llvmpipe: 65535
 * steps; the pairs are then written by tasks that start mid-row). */
static void run_long_runs(coproc_runtime *rt, int dev, const char *path, void *user)
{
    (void)user;
    test_rng rng = {77};
    check_join(rt, dev, COPROC_UINT32, 100000, 60, 1, KEYS_RANGE, &rng, path);
    check_join(rt, dev, COPROC_INT64, 60, 100000, 1, KEYS_RANGE, &rng, path);
    check_join(rt, dev, COPROC_INT32, 30011, 97, 30000, KEYS_SKEW, &rng, path);
    check_join(rt, dev, COPROC_UINT64, 97, 30011, 30000, KEYS_SKEW, &rng, path);
}

static void test_merge_join_long_runs(void **state)
{
    (void)state;
    test_each_device_path(run_long_runs, NULL);
}

/* The tasks' splitting on any device: a loop cap forced so low that most
 * items' pairs are split, many of them mid-row. */
static void run_capped(coproc_runtime *rt, int dev, const char *path, void *user)
{
    coproc_device_info info;
    assert_ok(rt, coproc_device_info_get(rt, dev, &info));
    assert_non_null(strstr(info.quirks, "forced-loop-steps"));
    run_device(rt, dev, path, user);
    run_long_runs(rt, dev, path, user);
}

static void test_merge_join_loop_cap(void **state)
{
    (void)state;
    test_each_device_path_quirks("max_loop_steps=300", run_capped, NULL);
}

/* Disjoint key sets: no pairs and no semi-join rows, with valid empty columns. */
static void test_merge_join_no_matches(void **state)
{
    (void)state;
    coproc_runtime *rt = test_open(NULL);
    int64_t l[] = {1, 3, 5, 7, -9}, r[] = {2, 4, 6, 8, -10, 100};
    coproc_column *lc = NULL, *rc = NULL, *pos = NULL;
    assert_ok(rt, coproc_column_upload(rt, 0, COPROC_INT64, l, 5, &lc));
    assert_ok(rt, coproc_column_upload(rt, 0, COPROC_INT64, r, 6, &rc));
    coproc_join_result res;
    assert_ok(rt, coproc_sort_merge_join(rt, lc, rc, &res));
    assert_int_equal(res.count, 0);
    assert_int_equal(coproc_column_length(res.left), 0);
    assert_int_equal(coproc_column_length(res.right), 0);
    coproc_join_result_free(&res);
    assert_ok(rt, coproc_semi_join(rt, lc, rc, &pos, NULL));
    assert_int_equal(coproc_column_length(pos), 0);
    coproc_column_free(pos);
    coproc_column_free(lc);
    coproc_column_free(rc);
    coproc_join_result_free(NULL); /* NULL is a no-op */
    coproc_close(rt);
}

static void test_merge_join_bad_input(void **state)
{
    (void)state;
    coproc_runtime *rt = test_open(NULL);
    int32_t x[4] = {1, 2, 3, 4};
    float f[4] = {1, 2, 3, 4};
    coproc_column *a = NULL, *b64 = NULL, *fc = NULL, *pos = (coproc_column *)1;
    assert_ok(rt, coproc_column_upload(rt, 0, COPROC_INT32, x, 4, &a));
    int64_t y[2] = {1, 2};
    assert_ok(rt, coproc_column_upload(rt, 0, COPROC_INT64, y, 2, &b64));
    assert_ok(rt, coproc_column_upload(rt, 0, COPROC_FLOAT32, f, 4, &fc));
    coproc_join_result res = {99, (coproc_column *)1, (coproc_column *)1};
    assert_status(COPROC_NULL_POINTER, coproc_sort_merge_join(NULL, a, a, &res));
    assert_status(COPROC_NULL_POINTER, coproc_sort_merge_join(rt, a, a, NULL));
    assert_status(COPROC_NULL_POINTER, coproc_sort_merge_join(rt, NULL, a, &res));
    assert_null(res.left); /* failures leave no output */
    assert_null(res.right);
    assert_int_equal(res.count, 0);
    assert_status(COPROC_NULL_POINTER, coproc_sort_merge_join(rt, a, NULL, &res));
    assert_status(COPROC_UNSUPPORTED_TYPE, coproc_sort_merge_join(rt, fc, fc, &res));
    assert_true(strstr(coproc_errmsg(rt), "float32") != NULL);
    assert_status(COPROC_INVALID_ARGUMENT, coproc_sort_merge_join(rt, a, b64, &res));
    assert_null(res.left);
    assert_status(COPROC_NULL_POINTER, coproc_semi_join(NULL, a, a, &pos, NULL));
    assert_status(COPROC_NULL_POINTER, coproc_semi_join(rt, a, a, NULL, NULL));
    assert_status(COPROC_NULL_POINTER, coproc_semi_join(rt, NULL, a, &pos, NULL));
    assert_null(pos);
    assert_status(COPROC_NULL_POINTER, coproc_semi_join(rt, a, NULL, &pos, NULL));
    assert_status(COPROC_UNSUPPORTED_TYPE, coproc_semi_join(rt, fc, fc, &pos, NULL));
    assert_status(COPROC_INVALID_ARGUMENT, coproc_semi_join(rt, a, b64, &pos, NULL));
    assert_null(pos);
    /* Columns of another runtime are refused. */
    coproc_runtime *rt2 = test_open(NULL);
    assert_status(COPROC_INVALID_ARGUMENT, coproc_sort_merge_join(rt2, a, a, &res));
    assert_status(COPROC_INVALID_ARGUMENT, coproc_semi_join(rt2, a, a, &pos, NULL));
    coproc_column *other = NULL;
    assert_ok(rt2, coproc_column_upload(rt2, 0, COPROC_INT32, x, 4, &other));
    assert_status(COPROC_INVALID_ARGUMENT, coproc_sort_merge_join(rt, a, other, &res));
    assert_status(COPROC_INVALID_ARGUMENT, coproc_semi_join(rt, a, other, &pos, NULL));
    assert_null(pos);
    coproc_column_free(other);
    coproc_close(rt2);
    /* The inputs are untouched (the join sorts copies). */
    int32_t back[4];
    assert_ok(rt, coproc_column_download(a, back, 4));
    assert_memory_equal(back, x, sizeof x);
    coproc_column_free(a);
    coproc_column_free(b64);
    coproc_column_free(fc);
    coproc_close(rt);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_merge_join_bad_input),
        cmocka_unit_test(test_merge_join_no_matches),
        cmocka_unit_test(test_merge_join_matches_reference),
        cmocka_unit_test(test_merge_join_long_runs),
        cmocka_unit_test(test_merge_join_loop_cap),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
