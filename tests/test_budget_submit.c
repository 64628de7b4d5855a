/* test_budget_submit.c - every operator submitted over host columns larger
 * than the device budget (PoCL with zero-copy off, as a discrete GPU) streams
 * or partitions and still equals the scalar reference; and the same operators
 * within the budget run in memory with the same results. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testlib.h"

enum { ROWS = 200003, KEYS = 5000 };

typedef struct data {
    int32_t *k, *v, *dim;
    coproc_column *ck, *cv, *cdim;
} data;

static coproc_runtime *open_budget(uint64_t budget)
{
    coproc_options o;
    coproc_options_init(&o);
    o.devices = "cpu";
    o.device_budget_bytes = budget;
    o.disable_zero_copy = 1;
    return test_open_with(&o);
}

static void data_make(coproc_runtime *rt, data *d)
{
    test_rng r = {7};
    d->k = malloc(ROWS * sizeof *d->k);
    d->v = malloc(ROWS * sizeof *d->v);
    d->dim = malloc(KEYS * sizeof *d->dim);
    for (size_t i = 0; i < ROWS; i++) {
        d->k[i] = (int32_t)test_rand_below(&r, KEYS) - KEYS / 2; /* negative keys too */
        d->v[i] = (int32_t)test_rand_below(&r, 20001) - 10000;
    }
    for (int i = 0; i < KEYS; i++)
        d->dim[i] = i * 3 - KEYS / 2; /* every third key */
    assert_ok(rt, coproc_column_wrap(rt, COPROC_INT32, d->k, ROWS, &d->ck));
    assert_ok(rt, coproc_column_wrap(rt, COPROC_INT32, d->v, ROWS, &d->cv));
    assert_ok(rt, coproc_column_wrap(rt, COPROC_INT32, d->dim, KEYS, &d->cdim));
}

static void data_free(data *d)
{
    coproc_column_free(d->ck);
    coproc_column_free(d->cv);
    coproc_column_free(d->cdim);
    free(d->k);
    free(d->v);
    free(d->dim);
}

static coproc_result run(coproc_runtime *rt, const coproc_op *op, int streamed)
{
    coproc_task *t;
    coproc_result r;
    assert_ok(rt, coproc_submit(rt, op, &t));
    assert_ok(rt, coproc_wait(t, &r));
    assert_int_equal(r.streamed, streamed);
    return r;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

static void check_all(coproc_runtime *rt, data *d, int streamed)
{
    coproc_op op;
    coproc_result r;

    coproc_op_init(&op, COPROC_OP_REDUCE); /* min */
    op.a = d->cv;
    op.reduce = COPROC_REDUCE_MIN;
    r = run(rt, &op, streamed);
    int32_t mn = d->v[0];
    for (size_t i = 0; i < ROWS; i++)
        mn = d->v[i] < mn ? d->v[i] : mn;
    assert_int_equal(r.scalar.v.i64, mn);

    coproc_op_init(&op, COPROC_OP_SELECT); /* two predicates, AND */
    op.filter.first = (coproc_predicate){.col = d->ck, .cmp = COPROC_CMP_GE, .a.i64 = 0};
    op.filter.logic = COPROC_LOGIC_AND;
    op.filter.second = (coproc_predicate){.col = d->cv, .cmp = COPROC_CMP_RANGE, .a.i64 = -500,
                                          .b.i64 = 2500};
    r = run(rt, &op, streamed);
    const uint32_t *pos = coproc_column_host_data(r.column);
    uint64_t j = 0;
    for (size_t i = 0; i < ROWS; i++)
        if (d->k[i] >= 0 && d->v[i] >= -500 && d->v[i] < 2500) {
            assert_true(j < r.count);
            assert_int_equal(pos[j++], i);
        }
    assert_int_equal(j, r.count);
    coproc_result_free(&r);

    coproc_op_init(&op, COPROC_OP_MAP);
    op.a = d->ck;
    op.b = d->cv;
    op.arith = COPROC_ARITH_SUB;
    r = run(rt, &op, streamed);
    const int32_t *m = coproc_column_host_data(r.column);
    for (size_t i = 0; i < ROWS; i++)
        assert_int_equal(m[i], d->k[i] - d->v[i]);
    coproc_result_free(&r);

    coproc_op_init(&op, COPROC_OP_GROUP_BY);
    op.a = d->ck;
    op.b = d->cv;
    op.sorted = 1;
    r = run(rt, &op, streamed);
    int64_t *sum = calloc(KEYS, sizeof *sum);
    uint64_t *cnt = calloc(KEYS, sizeof *cnt);
    size_t groups = 0;
    for (size_t i = 0; i < ROWS; i++) {
        size_t g = (size_t)(d->k[i] + KEYS / 2);
        groups += cnt[g]++ == 0;
        sum[g] += d->v[i];
    }
    assert_int_equal(r.count, groups);
    const int32_t *gk = coproc_column_host_data(r.groups.keys);
    const uint64_t *gc = coproc_column_host_data(r.groups.count);
    const int64_t *gs = coproc_column_host_data(r.groups.sum);
    for (size_t g = 0; g < r.count; g++) {
        size_t at = (size_t)(gk[g] + KEYS / 2);
        assert_true(g == 0 || gk[g] > gk[g - 1]);
        assert_int_equal(gc[g], cnt[at]);
        assert_int_equal(gs[g], sum[at]);
    }
    free(sum);
    free(cnt);
    coproc_result_free(&r);

    coproc_op_init(&op, COPROC_OP_SORT); /* keys with values, stable */
    op.a = d->ck;
    op.b = d->cv;
    r = run(rt, &op, streamed);
    /* a stable reference: order by (key, original position) */
    int64_t *idx = malloc(ROWS * sizeof *idx);
    for (size_t i = 0; i < ROWS; i++)
        idx[i] = (int64_t)d->k[i] * 4294967296 + (int64_t)i;
    qsort(idx, ROWS, sizeof *idx, cmp_i64);
    const int32_t *sk = coproc_column_host_data(r.column), *sv = coproc_column_host_data(r.column2);
    for (size_t i = 0; i < ROWS; i++) {
        size_t from = (size_t)(idx[i] & 0xffffffff);
        assert_int_equal(sk[i], d->k[from]);
        assert_int_equal(sv[i], d->v[from]);
    }
    free(idx);
    coproc_result_free(&r);

    coproc_op_init(&op, COPROC_OP_HASH_JOIN);
    op.a = d->cdim;
    op.b = d->ck;
    r = run(rt, &op, streamed);
    uint64_t pairs = 0;
    for (size_t i = 0; i < ROWS; i++)
        pairs += (d->k[i] + KEYS / 2) % 3 == 0;
    assert_int_equal(r.count, pairs);
    const uint32_t *jl = coproc_column_host_data(r.join.left), *jr = coproc_column_host_data(r.join.right);
    for (size_t p = 0; p < r.count; p++)
        assert_int_equal(d->dim[jl[p]], d->k[jr[p]]);
    coproc_result_free(&r);

    coproc_device_stats ds = {.struct_size = sizeof ds};
    assert_ok(rt, coproc_device_stats_get(rt, 0, &ds));
    assert_true(ds.resident_bytes <= ds.budget_bytes);
    if (streamed)
        assert_int_equal(ds.tasks_streamed, 6);
}

static void test_over_budget(void **state)
{
    coproc_runtime *rt = open_budget(256u << 10); /* inputs 800 KB each */
    data d;
    data_make(rt, &d);
    check_all(rt, &d, 1);
    data_free(&d);
    coproc_close(rt);
}

static void test_within_budget(void **state)
{
    coproc_runtime *rt = open_budget(0);
    data d;
    data_make(rt, &d);
    check_all(rt, &d, 0);
    data_free(&d);
    coproc_close(rt);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_over_budget),
        cmocka_unit_test(test_within_budget),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
