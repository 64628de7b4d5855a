/* test_every_op_host.c - every public operator through coproc_submit on host
 * columns (kind + variant), checked against a scalar C reference: in memory,
 * and under a 1 MiB budget and the smallest budget coproc_open accepts, with
 * zero-copy off (PoCL then copies as a GPU does), where each input larger than
 * the budget must stream or partition - except gather's source, which must
 * fit and otherwise gives DEVICE_OUT_OF_MEMORY. Also: the
 * synchronous calls on host columns, and sort/scatter writing a host column's
 * own memory. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "testlib.h"

typedef struct data {
    size_t n;
    int32_t *a, *b;       /* values in [-500, 500) */
    uint32_t *pos;        /* a permutation-like spread of positions < n */
    uint32_t *bitmap;     /* rows i % 3 == 0 */
    int32_t *build;       /* 4000 even keys 0, 2, ... */
    coproc_column *ca, *cb, *cpos, *cbm, *cbuild;
} data;

static void data_make(coproc_runtime *rt, data *d, size_t n)
{
    memset(d, 0, sizeof *d);
    d->n = n;
    d->a = malloc((n + 1) * 4);
    d->b = malloc((n + 1) * 4);
    d->pos = malloc((n + 1) * 4);
    d->bitmap = calloc((n + 31) / 32 + 1, 4);
    d->build = malloc(4000 * 4);
    test_rng r = {42};
    for (size_t i = 0; i < n; i++) {
        d->a[i] = (int32_t)test_rand_below(&r, 1000) - 500;
        d->b[i] = (int32_t)test_rand_below(&r, 1000) - 500;
        d->pos[i] = (uint32_t)(((uint64_t)i * 7919) % n);
        if (i % 3 == 0)
            d->bitmap[i / 32] |= 1u << (i % 32);
    }
    for (int i = 0; i < 4000; i++)
        d->build[i] = 2 * i;
    assert_ok(rt, coproc_column_wrap(rt, COPROC_INT32, d->a, n, &d->ca));
    assert_ok(rt, coproc_column_wrap(rt, COPROC_INT32, d->b, n, &d->cb));
    assert_ok(rt, coproc_column_wrap(rt, COPROC_UINT32, d->pos, n, &d->cpos));
    assert_ok(rt, coproc_column_wrap(rt, COPROC_UINT32, d->bitmap, (n + 31) / 32, &d->cbm));
    assert_ok(rt, coproc_column_wrap(rt, COPROC_INT32, d->build, 4000, &d->cbuild));
}

static void data_free(data *d)
{
    coproc_column *c[] = {d->ca, d->cb, d->cpos, d->cbm, d->cbuild};
    for (int i = 0; i < 5; i++)
        coproc_column_free(c[i]);
    free(d->a);
    free(d->b);
    free(d->pos);
    free(d->bitmap);
    free(d->build);
}

/* Submit op and wait; returns the status, *r the result. */
static coproc_status run(coproc_runtime *rt, coproc_op *op, coproc_result *r)
{
    coproc_task *t;
    coproc_status s = coproc_submit(rt, op, &t);
    if (s != COPROC_OK) {
        memset(r, 0, sizeof *r);
        return s;
    }
    return coproc_wait(t, r);
}

static void expect_host(const coproc_column *c, coproc_type t, size_t n)
{
    assert_non_null(c);
    assert_int_equal(coproc_column_device(c), -1);
    assert_int_equal(coproc_column_type(c), t);
    assert_int_equal(coproc_column_length(c), n);
}

/* Every operator once over d; `streamed`: the inputs exceed the budget. */
static void every_op(coproc_runtime *rt, data *d, int streamed)
{
    size_t n = d->n;
    coproc_op op;
    coproc_result r;

    /* reduce and reduce_where */
    coproc_op_init(&op, COPROC_OP_REDUCE);
    op.a = d->ca;
    assert_ok(rt, run(rt, &op, &r));
    int64_t sum = 0, where = 0;
    for (size_t i = 0; i < n; i++) {
        sum += d->a[i];
        where += i % 3 == 0 ? d->a[i] : 0;
    }
    assert_int_equal(r.scalar.v.i64, sum);
    assert_int_equal(r.streamed, streamed);
    op.variant = COPROC_VARIANT_REDUCE_WHERE;
    op.b = d->cbm;
    assert_ok(rt, run(rt, &op, &r));
    assert_int_equal(r.scalar.v.i64, where);
    assert_int_equal(r.scalar.count, (n + 2) / 3);
    assert_int_equal(r.streamed, streamed);

    /* select (positions) and select_bitmap */
    coproc_op_init(&op, COPROC_OP_SELECT);
    op.filter.first = (coproc_predicate){.col = d->ca, .cmp = COPROC_CMP_GT, .a.i64 = 100};
    assert_ok(rt, run(rt, &op, &r));
    expect_host(r.column, COPROC_UINT32, r.count);
    const uint32_t *p = coproc_column_host_data(r.column);
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (d->a[i] > 100)
            assert_int_equal(p[k++], i);
    assert_int_equal(r.count, k);
    coproc_result_free(&r);
    op.variant = COPROC_VARIANT_SELECT_BITMAP;
    assert_ok(rt, run(rt, &op, &r));
    expect_host(r.column, COPROC_UINT32, (n + 31) / 32);
    p = coproc_column_host_data(r.column);
    for (size_t i = 0; i < n; i++)
        assert_int_equal((p[i / 32] >> (i % 32)) & 1, d->a[i] > 100);
    for (size_t i = n; i < (n + 31) / 32 * 32; i++)
        assert_int_equal((p[i / 32] >> (i % 32)) & 1, 0);
    assert_int_equal(r.count, k);
    assert_int_equal(r.streamed, streamed);
    coproc_result_free(&r);

    /* map, map_const, cast */
    coproc_op_init(&op, COPROC_OP_MAP);
    op.a = d->ca;
    op.b = d->cb;
    op.arith = COPROC_ARITH_SUB;
    assert_ok(rt, run(rt, &op, &r));
    expect_host(r.column, COPROC_INT32, n);
    const int32_t *o = coproc_column_host_data(r.column);
    for (size_t i = 0; i < n; i++)
        assert_int_equal(o[i], d->a[i] - d->b[i]);
    coproc_result_free(&r);
    op.b = NULL;
    op.arith = COPROC_ARITH_MUL;
    op.c.i64 = -3;
    assert_ok(rt, run(rt, &op, &r));
    o = coproc_column_host_data(r.column);
    for (size_t i = 0; i < n; i++)
        assert_int_equal(o[i], d->a[i] * -3);
    coproc_result_free(&r);
    coproc_op_init(&op, COPROC_OP_MAP);
    op.variant = COPROC_VARIANT_CAST;
    op.a = d->ca;
    op.to = COPROC_INT64;
    assert_ok(rt, run(rt, &op, &r));
    expect_host(r.column, COPROC_INT64, n);
    const int64_t *o64 = coproc_column_host_data(r.column);
    for (size_t i = 0; i < n; i++)
        assert_int_equal(o64[i], d->a[i]);
    assert_int_equal(r.streamed, streamed);
    coproc_result_free(&r);

    /* scan, inclusive and exclusive */
    for (int ex = 0; ex < 2; ex++) {
        coproc_op_init(&op, COPROC_OP_SCAN);
        op.a = d->ca;
        op.exclusive = ex;
        assert_ok(rt, run(rt, &op, &r));
        expect_host(r.column, COPROC_INT64, n);
        o64 = coproc_column_host_data(r.column);
        int64_t acc = 0;
        for (size_t i = 0; i < n; i++) {
            acc += ex ? 0 : d->a[i];
            assert_int_equal(o64[i], acc);
            acc += ex ? d->a[i] : 0;
        }
        assert_int_equal(r.streamed, streamed);
        coproc_result_free(&r);
    }

    /* compact */
    coproc_op_init(&op, COPROC_OP_GATHER);
    op.variant = COPROC_VARIANT_COMPACT;
    op.a = d->ca;
    op.b = d->cbm;
    assert_ok(rt, run(rt, &op, &r));
    expect_host(r.column, COPROC_INT32, (n + 2) / 3);
    o = coproc_column_host_data(r.column);
    for (size_t i = 0; i < n; i += 3)
        assert_int_equal(o[i / 3], d->a[i]);
    coproc_result_free(&r);

    /* gather and scatter: whole on the device, else a clear status */
    coproc_op_init(&op, COPROC_OP_GATHER);
    op.a = d->ca;
    op.b = d->cpos;
    coproc_status s = run(rt, &op, &r);
    if (streamed) {
        assert_int_equal(s, COPROC_DEVICE_OUT_OF_MEMORY);
        assert_non_null(strstr(coproc_errmsg(rt), "source"));
        assert_null(r.column);
    } else {
        assert_ok(rt, s);
        o = coproc_column_host_data(r.column);
        for (size_t i = 0; i < n; i++)
            assert_int_equal(o[i], d->a[d->pos[i]]);
        coproc_result_free(&r);
    }
    /* scatter: past the budget it streams through windows of dst */
    op.variant = COPROC_VARIANT_SCATTER;
    op.dst = d->cb;
    assert_ok(rt, run(rt, &op, &r));
    expect_host(r.column, COPROC_INT32, n);
    o = coproc_column_host_data(r.column);
    for (size_t i = 0; i < n; i++) /* pos has no duplicates (7919 is prime to n) */
        assert_int_equal(o[d->pos[i]], d->a[i]);
    assert_int_equal(r.streamed, streamed);
    coproc_result_free(&r);

    /* group-by, sorted, with values */
    coproc_op_init(&op, COPROC_OP_GROUP_BY);
    op.a = d->ca;
    op.b = d->cb;
    op.sorted = 1;
    assert_ok(rt, run(rt, &op, &r));
    int64_t gsum[1000] = {0};
    uint64_t gcount[1000] = {0};
    for (size_t i = 0; i < n; i++) {
        gsum[d->a[i] + 500] += d->b[i];
        gcount[d->a[i] + 500]++;
    }
    const int32_t *gk = coproc_column_host_data(r.groups.keys);
    const uint64_t *gc = coproc_column_host_data(r.groups.count);
    const int64_t *gs = coproc_column_host_data(r.groups.sum);
    for (size_t g = 0; g < r.groups.groups; g++) {
        assert_true(g == 0 || gk[g - 1] < gk[g]);
        assert_int_equal(gc[g], gcount[gk[g] + 500]);
        assert_int_equal(gs[g], gsum[gk[g] + 500]);
    }
    size_t groups = 0;
    for (int g = 0; g < 1000; g++)
        groups += gcount[g] > 0;
    assert_int_equal(r.groups.groups, groups);
    assert_int_equal(r.streamed, streamed);
    coproc_result_free(&r);

    /* sort (keys and values; copies) and argsort (stable) */
    uint32_t *perm = malloc((n + 1) * 4);
    test_ref_argsort(COPROC_INT32, d->a, n, perm);
    coproc_op_init(&op, COPROC_OP_SORT);
    op.a = d->ca;
    op.b = d->cb;
    assert_ok(rt, run(rt, &op, &r));
    o = coproc_column_host_data(r.column);
    const int32_t *ov = coproc_column_host_data(r.column2);
    for (size_t i = 0; i < n; i++) {
        assert_int_equal(o[i], d->a[perm[i]]);
        assert_int_equal(ov[i], d->b[perm[i]]);
    }
    assert_int_equal(r.streamed, streamed);
    coproc_result_free(&r);
    op.variant = COPROC_VARIANT_ARGSORT;
    op.b = NULL;
    assert_ok(rt, run(rt, &op, &r));
    expect_host(r.column, COPROC_UINT32, n);
    p = coproc_column_host_data(r.column);
    for (size_t i = 0; i < n; i++)
        assert_int_equal(p[i], perm[i]);
    assert_int_equal(r.streamed, streamed);
    coproc_result_free(&r);
    free(perm);

    /* hash join, sort-merge join (build x a: pairs in any order), semi join */
    size_t want_n;
    test_pair *want = test_join_reference(4, d->build, 4000, d->a, n, &want_n);
    coproc_op_kind kinds[] = {COPROC_OP_HASH_JOIN, COPROC_OP_MERGE_JOIN};
    for (int j = 0; j < 2; j++) {
        coproc_op_init(&op, kinds[j]);
        op.a = d->cbuild;
        op.b = d->ca;
        assert_ok(rt, run(rt, &op, &r));
        assert_int_equal(r.join.count, want_n);
        test_check_pairs(coproc_column_host_data(r.join.left),
                         coproc_column_host_data(r.join.right), r.join.count, want,
                         coproc_op_kind_name(kinds[j]));
        coproc_result_free(&r);
    }
    free(want);
    coproc_op_init(&op, COPROC_OP_HASH_JOIN); /* the count-only hash join */
    op.variant = COPROC_VARIANT_JOIN_COUNT;
    op.a = d->cbuild;
    op.b = d->ca;
    assert_ok(rt, run(rt, &op, &r));
    assert_int_equal(r.count, want_n);
    assert_null(r.join.left);
    assert_int_equal(r.streamed, streamed);
    coproc_result_free(&r);
    uint64_t pairs = 0;
    assert_ok(rt, coproc_hash_join_count(rt, d->cbuild, d->ca, &pairs));
    assert_int_equal(pairs, want_n);
    coproc_op_init(&op, COPROC_OP_SEMI_JOIN);
    op.a = d->ca;
    op.b = d->cbuild;
    assert_ok(rt, run(rt, &op, &r));
    p = coproc_column_host_data(r.column);
    k = 0;
    for (size_t i = 0; i < n; i++)
        if (d->a[i] >= 0 && d->a[i] % 2 == 0)
            assert_int_equal(p[k++], i);
    assert_int_equal(r.count, k);
    coproc_result_free(&r);
}

static void test_in_memory(void **state)
{
    coproc_runtime *rt = test_open("0");
    size_t sizes[] = {0, 1, 33, 100003};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        data d;
        data_make(rt, &d, sizes[i]);
        every_op(rt, &d, 0);
        data_free(&d);
    }
    coproc_close(rt);
}

static void test_over_budget(void **state)
{
    coproc_options o;
    coproc_options_init(&o);
    o.devices = "0";
    o.disable_zero_copy = 1;
    o.device_budget_bytes = 1 << 20;
    coproc_runtime *rt = test_open_with(&o);
    data d;
    data_make(rt, &d, 1000003); /* 4 MB a column */
    every_op(rt, &d, 1);
    data_free(&d);
    coproc_close(rt);
}

/* At the smallest budget coproc_open accepts (coproc.h) every operator over
 * host columns larger than it still streams or partitions (issue 18: a budget
 * of 64 KiB was accepted and then reduce_where and scan could hold no chunk). */
static void test_at_minimum_budget(void **state)
{
    coproc_options o;
    coproc_options_init(&o);
    o.devices = "0";
    o.disable_zero_copy = 1;
    o.device_budget_bytes = COPROC_MIN_DEVICE_BUDGET;
    coproc_runtime *rt = test_open_with(&o);
    data d;
    data_make(rt, &d, 200003); /* 800 KB a column, 6x the budget */
    every_op(rt, &d, 1);
    data_free(&d);
    coproc_close(rt);
}

/* The synchronous calls on host columns give host columns; sort and scatter
 * write a column coproc owns and refuse one that wraps caller memory. */
static void test_sync_calls(void **state)
{
    coproc_runtime *rt = test_open("0");
    data d;
    data_make(rt, &d, 1000);
    coproc_column *out;
    assert_ok(rt, coproc_gather(rt, d.ca, d.cpos, &out));
    expect_host(out, COPROC_INT32, 1000);
    for (size_t i = 0; i < 1000; i++)
        assert_int_equal(((int32_t *)coproc_column_host_data(out))[i], d.a[d.pos[i]]);
    coproc_column_free(out);
    assert_ok(rt, coproc_cast(rt, d.ca, COPROC_FLOAT32, &out));
    for (size_t i = 0; i < 1000; i++)
        assert_true(((float *)coproc_column_host_data(out))[i] == (float)d.a[i]);
    coproc_column_free(out);
    uint64_t count = 0;
    assert_ok(rt, coproc_semi_join(rt, d.ca, d.cbuild, NULL, &count));
    size_t want = 0;
    for (size_t i = 0; i < 1000; i++)
        want += d.a[i] >= 0 && d.a[i] % 2 == 0;
    assert_int_equal(count, want);

    assert_status(COPROC_INVALID_ARGUMENT, coproc_sort(rt, d.ca, NULL));
    assert_status(COPROC_INVALID_ARGUMENT, coproc_scatter(rt, d.ca, d.cpos, d.cb));
    coproc_column *keys, *dst;
    assert_ok(rt, coproc_column_host_alloc(rt, COPROC_INT32, 1000, &keys));
    assert_ok(rt, coproc_column_host_alloc(rt, COPROC_INT32, 1000, &dst));
    memcpy(coproc_column_host_data(keys), d.a, 4000);
    memset(coproc_column_host_data(dst), 0, 4000);
    coproc_scalar sc; /* caches keys on the device: the sort must drop that copy */
    assert_ok(rt, coproc_reduce(rt, COPROC_REDUCE_MIN, keys, &sc));
    assert_ok(rt, coproc_sort(rt, keys, NULL));
    const int32_t *k = coproc_column_host_data(keys);
    for (size_t i = 1; i < 1000; i++)
        assert_true(k[i - 1] <= k[i]);
    assert_ok(rt, coproc_reduce(rt, COPROC_REDUCE_MIN, keys, &sc));
    assert_int_equal(sc.v.i64, k[0]);
    assert_ok(rt, coproc_scatter(rt, d.ca, d.cpos, dst));
    for (size_t i = 0; i < 1000; i++)
        assert_int_equal(((int32_t *)coproc_column_host_data(dst))[d.pos[i]], d.a[i]);
    coproc_column_free(keys);
    coproc_column_free(dst);

    /* argument errors at submit */
    coproc_op op;
    coproc_task *t = NULL;
    coproc_op_init(&op, COPROC_OP_GATHER);
    op.a = d.ca;
    op.b = d.cb; /* positions must be uint32 */
    assert_status(COPROC_UNSUPPORTED_TYPE, coproc_submit(rt, &op, &t));
    op.variant = COPROC_VARIANT_COMPACT;
    op.b = d.cpos; /* a bitmap of n words for n rows */
    assert_status(COPROC_LENGTH_MISMATCH, coproc_submit(rt, &op, &t));
    op.variant = COPROC_VARIANT_ARGSORT; /* not a gather variant */
    assert_status(COPROC_INVALID_ARGUMENT, coproc_submit(rt, &op, &t));
    coproc_op_init(&op, COPROC_OP_MAP);
    op.variant = COPROC_VARIANT_CAST;
    op.a = d.ca;
    op.to = (coproc_type)99;
    assert_status(COPROC_UNSUPPORTED_TYPE, coproc_submit(rt, &op, &t));
    coproc_op_init(&op, COPROC_OP_SEMI_JOIN);
    op.a = d.ca;
    assert_status(COPROC_NULL_POINTER, coproc_submit(rt, &op, &t));
    assert_null(t);
    data_free(&d);
    coproc_close(rt);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_in_memory),
        cmocka_unit_test(test_over_budget),
        cmocka_unit_test(test_at_minimum_budget),
        cmocka_unit_test(test_sync_calls),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
