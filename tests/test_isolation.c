/* test_isolation.c - two runtimes in one process do not see each other: each
 * has its own devices, errors, counters and columns, and both work at once
 * from two threads. */
#include <pthread.h>
#include <string.h>

#include "testlib.h"

typedef struct worker {
    coproc_runtime *rt;
    int failures;
    int64_t seed;
} worker;

static void *work(void *arg)
{
    worker *w = arg;
    int32_t x[5000];
    for (int round = 0; round < 20; round++) {
        int64_t want = 0;
        for (int i = 0; i < 5000; i++) {
            x[i] = (int32_t)((w->seed * 7919 + i * 31 + round) % 2001) - 1000;
            want += x[i];
        }
        coproc_column *col = NULL;
        coproc_scalar sum;
        if (coproc_column_upload(w->rt, 0, COPROC_INT32, x, 5000, &col) != COPROC_OK ||
            coproc_reduce(w->rt, COPROC_REDUCE_SUM, col, &sum) != COPROC_OK || sum.v.i64 != want)
            w->failures++;
        coproc_column_free(col);
    }
    return NULL;
}

static void test_two_runtimes(void **state)
{
    (void)state;
    coproc_runtime *a = test_open(NULL);
    coproc_runtime *b = test_open(NULL);
    assert_ptr_not_equal(a, b);

    /* An error on one leaves the other's message alone. */
    coproc_device_info d;
    assert_int_equal(coproc_device_info_get(a, 1000, &d), COPROC_INVALID_ARGUMENT);
    assert_true(strstr(coproc_errmsg(a), "1000") != NULL);
    assert_string_equal(coproc_errmsg(b), "");

    /* Both in parallel. */
    worker wa = {a, 0, 1}, wb = {b, 0, 2};
    pthread_t ta, tb;
    assert_int_equal(pthread_create(&ta, NULL, work, &wa), 0);
    assert_int_equal(pthread_create(&tb, NULL, work, &wb), 0);
    pthread_join(ta, NULL);
    pthread_join(tb, NULL);
    assert_int_equal(wa.failures, 0);
    assert_int_equal(wb.failures, 0);

    /* Each built (or loaded) its own programs. */
    coproc_stats sa = {.struct_size = sizeof sa}, sb = {.struct_size = sizeof sb};
    assert_ok(a, coproc_stats_get(a, &sa));
    assert_ok(b, coproc_stats_get(b, &sb));
    assert_true(sa.programs_built + sa.programs_from_cache >= 1);
    assert_true(sb.programs_built + sb.programs_from_cache >= 1);

    /* Closing one leaves the other working. */
    coproc_close(a);
    wb.failures = 0;
    work(&wb);
    assert_int_equal(wb.failures, 0);
    coproc_close(b);
}

static void test_one_runtime_many_threads(void **state)
{
    (void)state;
    coproc_runtime *rt = test_open(NULL);
    worker w[4];
    pthread_t t[4];
    for (int i = 0; i < 4; i++) {
        w[i] = (worker){rt, 0, 10 + i};
        assert_int_equal(pthread_create(&t[i], NULL, work, &w[i]), 0);
    }
    for (int i = 0; i < 4; i++) {
        pthread_join(t[i], NULL);
        assert_int_equal(w[i].failures, 0);
    }
    coproc_close(rt);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_two_runtimes),
        cmocka_unit_test(test_one_runtime_many_threads),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
