/* test_budget_residency.c - the residency cache through the public API on
 * PoCL: zero-copy moves no byte; with copies, a repeated query moves nothing
 * the second time; a budget smaller than the columns evicts (LRU) and stays
 * within budget; results stay resident for the next operator; pinned host
 * columns; inputs over the budget stream through with correct results. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testlib.h"
#include "exec/hostrun.h" /* the estimate placement uses */
#include "core/runtime.h" /* test_out_of_memory_streams shrinks a device's allocation limit */

static coproc_runtime *open_with(uint64_t budget, int disable_zero_copy)
{
    coproc_options o;
    coproc_options_init(&o);
    o.devices = "cpu";
    o.device_budget_bytes = budget;
    o.disable_zero_copy = disable_zero_copy;
    coproc_runtime *rt = test_open_with(&o);
    coproc_device_info info;
    assert_ok(rt, coproc_device_info_get(rt, 0, &info));
    if (!info.host_unified_memory) { /* these checks are about a host-unified device */
        coproc_close(rt);
        exit(TEST_SKIP);
    }
    return rt;
}

static coproc_device_stats stats(coproc_runtime *rt)
{
    coproc_device_stats ds = {.struct_size = sizeof ds};
    assert_ok(rt, coproc_device_stats_get(rt, 0, &ds));
    return ds;
}

static int64_t run_sum(coproc_runtime *rt, const coproc_column *c, coproc_result *keep)
{
    coproc_op op;
    coproc_op_init(&op, COPROC_OP_REDUCE);
    op.a = c;
    coproc_task *t;
    assert_ok(rt, coproc_submit(rt, &op, &t));
    coproc_result r;
    assert_ok(rt, coproc_wait(t, &r));
    if (keep)
        *keep = r;
    return r.scalar.v.i64;
}

static int32_t *ramp(size_t n, int32_t start)
{
    int32_t *v = malloc(n * sizeof *v);
    for (size_t i = 0; i < n; i++)
        v[i] = start + (int32_t)(i % 1000) - 500;
    return v;
}

static int64_t ref_sum(const int32_t *v, size_t n)
{
    int64_t s = 0;
    for (size_t i = 0; i < n; i++)
        s += v[i];
    return s;
}

static void test_zero_copy_moves_nothing(void **state)
{
    coproc_runtime *rt = open_with(0, 0);
    size_t n = 300000;
    int32_t *v = ramp(n, 3);
    coproc_column *c;
    assert_ok(rt, coproc_column_wrap(rt, COPROC_INT32, v, n, &c));
    assert_int_equal(run_sum(rt, c, NULL), ref_sum(v, n));
    /* a selection's positions come back mapped, not copied */
    coproc_op op;
    coproc_op_init(&op, COPROC_OP_SELECT);
    op.filter.first = (coproc_predicate){.col = c, .cmp = COPROC_CMP_GT, .a.i64 = 0};
    coproc_task *t;
    coproc_result r;
    assert_ok(rt, coproc_submit(rt, &op, &t));
    assert_ok(rt, coproc_wait(t, &r));
    uint64_t expect = 0;
    for (size_t i = 0; i < n; i++)
        expect += v[i] > 0;
    assert_int_equal(r.count, expect);
    coproc_device_stats ds = stats(rt);
    assert_int_equal(ds.bytes_h2d, 0);
    assert_int_equal(ds.bytes_d2h, 0);
    assert_int_equal(ds.cache_misses, 1);
    assert_int_equal(ds.cache_hits, 1);
    coproc_result_free(&r);
    coproc_column_free(c);
    free(v);
    coproc_close(rt);
}

static void test_repeat_moves_nothing(void **state)
{
    coproc_runtime *rt = open_with(0, 1);
    size_t n = 250000;
    int32_t *v = ramp(n, 1);
    coproc_column *c;
    assert_ok(rt, coproc_column_wrap(rt, COPROC_INT32, v, n, &c));
    assert_int_equal(run_sum(rt, c, NULL), ref_sum(v, n));
    coproc_device_stats first = stats(rt);
    assert_int_equal(first.bytes_h2d, n * sizeof *v);
    assert_int_equal(first.cache_misses, 1);
    assert_int_equal(run_sum(rt, c, NULL), ref_sum(v, n));
    coproc_device_stats second = stats(rt);
    assert_int_equal(second.bytes_h2d, first.bytes_h2d); /* moved nothing */
    assert_int_equal(second.cache_hits, 1);
    assert_int_equal(second.resident_bytes, n * sizeof *v);
    /* freeing the column drops its cached copy */
    coproc_column_free(c);
    assert_int_equal(stats(rt).resident_bytes, 0);
    free(v);
    coproc_close(rt);
}

static void test_results_stay_resident(void **state)
{
    coproc_runtime *rt = open_with(0, 1);
    size_t n = 3000001; /* 12 MB: both ways through the 8 MiB pinned staging buffers */
    int32_t *v = ramp(n, 0);
    coproc_column *c;
    assert_ok(rt, coproc_column_wrap(rt, COPROC_INT32, v, n, &c));
    coproc_op op;
    coproc_op_init(&op, COPROC_OP_MAP);
    op.a = c;
    op.arith = COPROC_ARITH_MUL;
    op.c.i64 = 3;
    coproc_task *t;
    coproc_result r;
    assert_ok(rt, coproc_submit(rt, &op, &t));
    assert_ok(rt, coproc_wait(t, &r));
    coproc_device_stats before = stats(rt);
    assert_int_equal(before.bytes_d2h, n * sizeof *v); /* the result came back once */
    assert_int_equal(run_sum(rt, r.column, NULL), 3 * ref_sum(v, n));
    coproc_device_stats after = stats(rt);
    assert_int_equal(after.bytes_h2d, before.bytes_h2d); /* and did not go out again */
    assert_int_equal(after.cache_hits, before.cache_hits + 1);
    coproc_result_free(&r);
    coproc_column_free(c);
    free(v);
    coproc_close(rt);
}

static void test_budget_evicts_lru(void **state)
{
    const size_t n = 100000;                  /* 400 KB per column */
    coproc_runtime *rt = open_with(1u << 20, 1); /* room for two of them */
    int32_t *v[4];
    coproc_column *c[4];
    for (int i = 0; i < 4; i++) {
        v[i] = ramp(n, i * 7);
        assert_ok(rt, coproc_column_wrap(rt, COPROC_INT32, v[i], n, &c[i]));
    }
    for (int round = 0; round < 2; round++)
        for (int i = 0; i < 4; i++) {
            assert_int_equal(run_sum(rt, c[i], NULL), ref_sum(v[i], n));
            coproc_device_stats ds = stats(rt);
            assert_true(ds.resident_bytes <= ds.budget_bytes);
        }
    coproc_device_stats ds = stats(rt);
    assert_int_equal(ds.budget_bytes, 1u << 20);
    /* cyclic access over 4 columns with room for 2: LRU misses every time */
    assert_int_equal(ds.cache_misses, 8);
    assert_true(ds.cache_evictions >= 6);
    /* the most recent column hits */
    assert_int_equal(run_sum(rt, c[3], NULL), ref_sum(v[3], n));
    assert_int_equal(stats(rt).cache_hits, 1);
    for (int i = 0; i < 4; i++) {
        coproc_column_free(c[i]);
        free(v[i]);
    }
    coproc_close(rt);
}

static void test_pinned_host_column(void **state)
{
    coproc_runtime *rt = open_with(0, 1);
    size_t n = 70001;
    coproc_column *c;
    assert_ok(rt, coproc_column_host_alloc(rt, COPROC_INT32, n, &c));
    int32_t *p = coproc_column_host_data(c);
    assert_non_null(p);
    int64_t s = 0;
    for (size_t i = 0; i < n; i++)
        s += p[i] = (int32_t)((uint32_t)(i * 2654435761u) >> 8) - (1 << 23);
    assert_int_equal(run_sum(rt, c, NULL), s);
    assert_int_equal(coproc_column_device(c), -1);
    int32_t *back = malloc(n * sizeof *back);
    assert_ok(rt, coproc_column_download(c, back, n));
    assert_memory_equal(back, p, n * sizeof *back);
    free(back);
    coproc_column_free(c);
    coproc_close(rt);
}

static void test_over_budget_streams(void **state)
{
    coproc_runtime *rt = open_with(256u << 10, 1);
    size_t n = 1000003; /* 4 MB through a 256 KiB budget */
    int32_t *v = ramp(n, 11);
    coproc_column *c;
    assert_ok(rt, coproc_column_wrap(rt, COPROC_INT32, v, n, &c));
    coproc_result r;
    assert_int_equal(run_sum(rt, c, &r), ref_sum(v, n));
    assert_int_equal(r.streamed, 1);
    coproc_device_stats ds = stats(rt);
    assert_true(ds.bytes_h2d >= n * sizeof *v);
    assert_int_equal(ds.tasks_streamed, 1);
    assert_true(ds.resident_bytes <= ds.budget_bytes);
    coproc_column_free(c);
    free(v);
    coproc_close(rt);
}

/* Streaming takes its buffers inside the budget too: cached copies make room
 * for them rather than sitting beside them. */
static void test_streaming_shares_the_budget(void **state)
{
    coproc_runtime *rt = open_with(1u << 20, 1);
    size_t small = 150000, big = 1000000; /* 600 KB cached, then 4 MB streamed */
    int32_t *a = ramp(small, 1), *b = ramp(big, 2);
    coproc_column *ca, *cb;
    assert_ok(rt, coproc_column_wrap(rt, COPROC_INT32, a, small, &ca));
    assert_ok(rt, coproc_column_wrap(rt, COPROC_INT32, b, big, &cb));
    assert_int_equal(run_sum(rt, ca, NULL), ref_sum(a, small));
    assert_int_equal(stats(rt).resident_bytes, small * sizeof *a);
    coproc_result r;
    assert_int_equal(run_sum(rt, cb, &r), ref_sum(b, big));
    assert_int_equal(r.streamed, 1);
    coproc_device_stats ds = stats(rt);
    assert_int_equal(ds.resident_bytes, 0); /* the cached copy gave its room to the stream */
    assert_int_equal(ds.cache_evictions, 1);
    coproc_column_free(ca);
    coproc_column_free(cb);
    free(a);
    free(b);
    coproc_close(rt);
}

/* An allocation the device refuses (here: over its largest allocation, made
 * tiny) evicts and retries, then streams: a correct result, never a crash. */
static void test_out_of_memory_streams(void **state)
{
    coproc_runtime *rt = open_with(64u << 20, 1);
    rt->devices[0].info.max_alloc_bytes = 1u << 20; /* as if the device were nearly full */
    size_t n = 1000000;                             /* 4 MB: fits the budget, not an allocation */
    int32_t *v = ramp(n, 5);
    coproc_column *c;
    assert_ok(rt, coproc_column_wrap(rt, COPROC_INT32, v, n, &c));
    coproc_result r;
    assert_int_equal(run_sum(rt, c, &r), ref_sum(v, n));
    assert_int_equal(r.streamed, 1);
    coproc_op op;
    coproc_op_init(&op, COPROC_OP_SELECT);
    op.filter.first = (coproc_predicate){.col = c, .cmp = COPROC_CMP_LT, .a.i64 = -400};
    coproc_task *t;
    assert_ok(rt, coproc_submit(rt, &op, &t));
    assert_ok(rt, coproc_wait(t, &r));
    uint64_t expect = 0;
    for (size_t i = 0; i < n; i++)
        expect += v[i] < -400;
    assert_int_equal(r.count, expect);
    assert_int_equal(coproc_column_length(r.column), expect);
    coproc_result_free(&r);
    coproc_column_free(c);
    free(v);
    coproc_close(rt);
}

/* The estimate that placement compares counts the transfer of inputs that are
 * not cached on the device, and none for those that are. */
static void test_estimate_sees_residency(void **state)
{
    coproc_runtime *rt = open_with(0, 1);
    size_t n = 500000;
    int32_t *v = ramp(n, 2);
    coproc_column *c;
    assert_ok(rt, coproc_column_wrap(rt, COPROC_INT32, v, n, &c));
    coproc_op op;
    coproc_op_init(&op, COPROC_OP_REDUCE);
    op.a = c;
    double before, after;
    coproc__op_estimate(&rt->devices[0], &op, &before);
    assert_true(before > 0);
    assert_int_equal(run_sum(rt, c, NULL), ref_sum(v, n));
    coproc__op_estimate(&rt->devices[0], &op, &after);
    assert_true(after == 0); /* cached now; a sum sends nothing back */
    coproc_column_free(c);
    free(v);
    coproc_close(rt);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_zero_copy_moves_nothing),
        cmocka_unit_test(test_repeat_moves_nothing),
        cmocka_unit_test(test_results_stay_resident),
        cmocka_unit_test(test_budget_evicts_lru),
        cmocka_unit_test(test_pinned_host_column),
        cmocka_unit_test(test_over_budget_streams),
        cmocka_unit_test(test_out_of_memory_streams),
        cmocka_unit_test(test_streaming_shares_the_budget),
        cmocka_unit_test(test_estimate_sees_residency),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
