/* test_budget_scatter.c - scatter over host columns larger than the device
 * budget streams: dst's copy goes to the device a window at a time and src
 * and positions stream through each window (runtime/ops/gather.c). Checked
 * against a scalar reference at the smallest budget coproc_open accepts
 * (zero-copy off, and on: a host-unified device then uses the host columns
 * in place) and unlimited (in memory): sizes 0, 1, odd, window edges,
 * duplicate positions (one writer wins: every src value names its row, so
 * the winner is checked to be a writer of that position), a position out of
 * range (OUT_OF_RANGE, no output, dst untouched), 4- and 8-byte types.
 * COPROC_TEST_MAX_ROWS caps the sizes and COPROC_TEST_DISTINCT=1 leaves out
 * the cases with duplicate positions (Oclgrind: their racing writes are what
 * coproc_scatter documents, and what Oclgrind reports). */
#include <stdlib.h>
#include <string.h>

#include "testlib.h"

static size_t max_rows(void)
{
    const char *e = getenv("COPROC_TEST_MAX_ROWS");
    return e && *e ? (size_t)strtoull(e, NULL, 10) : SIZE_MAX;
}

static int distinct_only(void)
{
    const char *e = getenv("COPROC_TEST_DISTINCT");
    return e && *e == '1';
}

/* zero_copy 0: copies as to a discrete GPU; 1: a host-unified device (PoCL)
 * uses host columns in place. */
static coproc_runtime *open_budget(uint64_t budget, int zero_copy)
{
    coproc_options o;
    coproc_options_init(&o);
    o.devices = "0";
    o.disable_zero_copy = !zero_copy;
    o.device_budget_bytes = budget;
    return test_open_with(&o);
}

/* Value v of type t (INT32 or INT64) at row i of d. */
static void put(coproc_type t, void *d, size_t i, int64_t v)
{
    if (t == COPROC_INT32)
        ((int32_t *)d)[i] = (int32_t)v;
    else
        ((int64_t *)d)[i] = v;
}

/* Scatter m rows into dst of `rows` rows; bad: one position is == rows
 * (with no row in dst every position is bad). expect_streamed -1: either. */
static void one_case(coproc_runtime *rt, coproc_type t, size_t rows, size_t m, int bad,
                     int expect_streamed)
{
    size_t w = coproc_type_size(t);
    void *src = malloc(m * w + 8), *dst = malloc(rows * w + 8);
    uint32_t *pos = malloc(m * 4 + 4);
    test_rng r = {rows * 31 + m};
    for (size_t i = 0; i < rows; i++)
        put(t, dst, i, -(int64_t)i - 1); /* negative: never a writer's value */
    /* m <= rows: distinct positions spread over dst (7919 is prime to rows);
     * else random ones, with the edges of dst and of the windows (16368 rows
     * of 4 bytes, 8184 of 8 at the smallest budget) among them. */
    int distinct = m <= rows;
    assert_true(!distinct || rows == 0 || rows % 7919 != 0);
    for (size_t i = 0; i < m; i++) {
        put(t, src, i, (int64_t)i + 1000); /* names its writer */
        pos[i] = distinct ? (uint32_t)((i * 7919 + 5) % rows)
                 : rows   ? (uint32_t)test_rand_below(&r, rows)
                          : 0;
    }
    size_t edges[] = {0, rows - 1, 8183, 8184, 16367, 16368, 32736};
    for (size_t e = 0; !distinct && e < sizeof edges / sizeof edges[0] && e < m; e++)
        if (edges[e] < rows)
            pos[m - 1 - e] = (uint32_t)edges[e];
    if (bad && m)
        pos[m / 2] = (uint32_t)rows;
    void *dst_before = malloc(rows * w + 8);
    memcpy(dst_before, dst, rows * w);

    coproc_column *cs, *cp, *cd;
    assert_ok(rt, coproc_column_wrap(rt, t, src, m, &cs));
    assert_ok(rt, coproc_column_wrap(rt, COPROC_UINT32, pos, m, &cp));
    assert_ok(rt, coproc_column_wrap(rt, t, dst, rows, &cd));
    coproc_op op;
    coproc_op_init(&op, COPROC_OP_GATHER);
    op.variant = COPROC_VARIANT_SCATTER;
    op.a = cs;
    op.b = cp;
    op.dst = cd;
    coproc_task *task;
    coproc_result res;
    assert_ok(rt, coproc_submit(rt, &op, &task));
    coproc_status s = coproc_wait(task, &res);
    if (m && (bad || rows == 0)) {
        assert_int_equal(s, COPROC_OUT_OF_RANGE);
        assert_null(res.column);
    } else {
        assert_ok(rt, s);
        if (expect_streamed >= 0 && res.streamed != expect_streamed)
            fail_msg("scatter of %zu rows into %zu (%s): streamed %d, expected %d", m, rows,
                     coproc_type_name(t), res.streamed, expect_streamed);
        assert_int_equal(coproc_column_length(res.column), rows);
        const void *o = coproc_column_host_data(res.column);
        char *written = calloc(rows + 1, 1);
        for (size_t i = 0; i < m; i++)
            written[pos[i]] = 1;
        for (size_t p = 0; p < rows; p++) {
            int64_t v = test_get_i(t, o, p);
            if (!written[p]) {
                assert_int_equal(v, -(int64_t)p - 1);
                continue;
            }
            /* the winner is a row that writes p */
            assert_true(v >= 1000 && (size_t)(v - 1000) < m);
            assert_int_equal(pos[v - 1000], p);
        }
        free(written);
        coproc_result_free(&res);
    }
    assert_memory_equal(dst, dst_before, rows * w); /* the op writes a copy */
    coproc_column_free(cs);
    coproc_column_free(cp);
    coproc_column_free(cd);
    free(src);
    free(dst);
    free(pos);
    free(dst_before);
}

static void run_cases(uint64_t budget, int zero_copy)
{
    coproc_runtime *rt = open_budget(budget, zero_copy);
    coproc_device_info info;
    assert_ok(rt, coproc_device_info_get(rt, 0, &info));
    int in_place = zero_copy && info.host_unified_memory;
    static const struct {
        size_t rows, m;
    } sizes[] = {{0, 0},         {1, 0},     {1, 1},         {33, 7},        {33, 67},
                 {16369, 16369}, {20000, 3}, {20000, 19999}, {40001, 40001}, {100003, 200007}};
    coproc_type types[] = {COPROC_INT32, COPROC_INT64};
    size_t cap = max_rows();
    for (int ti = 0; ti < 2; ti++)
        for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
            size_t rows = sizes[i].rows, m = sizes[i].m;
            if (rows > cap || m > cap || (distinct_only() && m > rows))
                continue;
            /* past the budget: src, positions, dst and dst's copy together
             * (runtime/exec/hostrun.c: inputs, unless used in place, and
             * working bytes) */
            size_t w = coproc_type_size(types[ti]);
            double inputs = in_place ? 0 : (double)(m * (w + 4) + rows * w);
            int streamed = budget && inputs + (double)(rows * w + 16) > (double)budget;
            /* Used in place, what fits may still stream after an out-of-memory
             * retry (the pool holds the last run's buffers): either is right. */
            streamed = in_place && !streamed ? -1 : streamed;
            one_case(rt, types[ti], rows, m, 0, streamed);
            one_case(rt, types[ti], rows, m, 1, streamed);
        }
    coproc_close(rt);
}

static void test_over_budget(void **state)
{
    run_cases(COPROC_MIN_DEVICE_BUDGET, 0);
}

/* Zero-copy allowed: on a host-unified device the streamed scatter uses
 * the host columns in place, in one pass. */
static void test_over_budget_in_place(void **state)
{
    run_cases(COPROC_MIN_DEVICE_BUDGET, 1);
}

static void test_in_memory(void **state)
{
    run_cases(0, 0);
}

/* No row of dst: any position is out of range. */
static void test_empty_dst(void **state)
{
    coproc_runtime *rt = open_budget(COPROC_MIN_DEVICE_BUDGET, 0);
    one_case(rt, COPROC_INT32, 0, 1, 0, 0);
    coproc_close(rt);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_over_budget),
        cmocka_unit_test(test_over_budget_in_place),
        cmocka_unit_test(test_in_memory),
        cmocka_unit_test(test_empty_dst),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
