/* test_isolation.c - two runtimes in one process do not see each other: each
 * has its own devices, errors, counters and columns, and both work at once
 * from two threads; runtimes opened with different device selections that
 * outrank COPROC_DEVICES (options.over_env) each see their own devices. */
#include <pthread.h>
#include <stdlib.h>
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

#define POCL COPROC_PROFILES_DIR "/pocl-ci.json"
#define H100 COPROC_PROFILES_DIR "/h100-synthetic.json"

static coproc_runtime *open_over_env(const char *devices, unsigned over_env)
{
    coproc_options o;
    coproc_options_init(&o);
    o.devices = devices;
    o.over_env = over_env;
    return test_open_with(&o);
}

static void test_selection_over_env(void **state)
{
    (void)state;
    /* The test sets the variable itself (a test may; the library never does) so that both
     * the option's and the variable's selection are known. */
    const char *was = getenv("COPROC_DEVICES");
    char *keep = was ? strdup(was) : NULL;
    assert_int_equal(setenv("COPROC_DEVICES", "sim:" POCL ",sim:" H100, 1), 0);

    coproc_runtime *a = open_over_env("sim:" POCL ":type=gpu", COPROC_OPTION_DEVICES);
    coproc_runtime *b = open_over_env("sim:" H100, COPROC_OPTION_DEVICES);
    coproc_runtime *c = open_over_env("sim:" POCL ":type=gpu", 0); /* the variable wins */
    assert_string_equal(getenv("COPROC_DEVICES"), "sim:" POCL ",sim:" H100);
    if (keep)
        setenv("COPROC_DEVICES", keep, 1);
    else
        unsetenv("COPROC_DEVICES");
    free(keep);

    coproc_device_info da, db;
    assert_int_equal(coproc_device_count(a), 1);
    assert_ok(a, coproc_device_info_get(a, 0, &da));
    assert_int_equal(da.type, COPROC_DEVICE_GPU);
    assert_int_equal(coproc_device_count(b), 1);
    assert_ok(b, coproc_device_info_get(b, 0, &db));
    assert_string_not_equal(da.name, db.name);
    assert_int_equal(coproc_device_count(c), 2);

    /* Both selections compute, at once. */
    worker wa = {a, 0, 3}, wb = {b, 0, 4};
    pthread_t ta, tb;
    assert_int_equal(pthread_create(&ta, NULL, work, &wa), 0);
    assert_int_equal(pthread_create(&tb, NULL, work, &wb), 0);
    pthread_join(ta, NULL);
    pthread_join(tb, NULL);
    assert_int_equal(wa.failures, 0);
    assert_int_equal(wb.failures, 0);
    coproc_close(a);
    coproc_close(b);
    coproc_close(c);

    /* A bit that names no field is refused. */
    coproc_options o;
    coproc_options_init(&o);
    o.over_env = 1u << 30;
    o.log = NULL;
    coproc_runtime *bad = NULL;
    assert_int_equal(coproc_open(&o, &bad), COPROC_INVALID_ARGUMENT);
    assert_null(bad);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_two_runtimes),
        cmocka_unit_test(test_one_runtime_many_threads),
        cmocka_unit_test(test_selection_over_env),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
