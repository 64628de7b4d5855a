/* test_watchdog.c - a device that stops making progress does not hang the
 * runtime (issue 18). COPROC_FAULT_STALL makes a device's N-th run block as a
 * driver that never returns would; the watchdog (options.watchdog_seconds)
 * marks that device lost and runs its work on another device, or ends it with
 * DEVICE_LOST when no other can. Every result is checked against the scalar
 * sum; coproc_wait_timeout returns TIMEOUT and leaves the task to wait on
 * again; the runtime closes cleanly after (no leak under ASan). Runs on
 * whatever devices COPROC_DEVICES / POCL_DEVICES give: the two-device cases
 * are skipped with one device (CTest runs pair_ and sim_pair_ variants). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testlib.h"

enum { ROWS = 200000, TASKS = 24 };

typedef struct fixture {
    int32_t *vals;
    int64_t sum;
    char log[4096];
} fixture;

static void capture(void *user, coproc_log_level level, const char *msg)
{
    fixture *f = user;
    (void)level;
    size_t n = strlen(f->log);
    snprintf(f->log + n, sizeof f->log - n, "%s\n", msg);
}

static fixture *make_fixture(void)
{
    fixture *f = calloc(1, sizeof *f);
    f->vals = malloc(ROWS * sizeof *f->vals);
    test_rng r = {42};
    for (size_t i = 0; i < ROWS; i++) {
        f->vals[i] = (int32_t)test_rand_below(&r, 2000001) - 1000000;
        f->sum += f->vals[i];
    }
    return f;
}

static void free_fixture(fixture *f)
{
    free(f->vals);
    free(f);
}

/* A runtime with the watchdog at `seconds` and device `dev`'s run `nth`
 * stalled for `stall` seconds (dev < 0: none). The tests use 3 s: far below
 * the 60 s stalls, far above an honest sum on a loaded machine, even one
 * whose driver compiles at launch (rusticl). */
static coproc_runtime *open_stalled(fixture *f, double seconds, int dev, int nth, double stall,
                                    int policy)
{
    char env[64];
    if (dev >= 0) {
        snprintf(env, sizeof env, "%d:%d:%g", dev, nth, stall);
        setenv("COPROC_FAULT_STALL", env, 1);
    } else {
        unsetenv("COPROC_FAULT_STALL");
    }
    coproc_options o;
    coproc_options_init(&o);
    o.watchdog_seconds = seconds;
    o.policy = policy;
    o.log = capture;
    o.log_user = f;
    o.log_level = COPROC_LOG_WARN;
    f->log[0] = '\0';
    return test_open_with(&o);
}

static coproc_status submit_sum(coproc_runtime *rt, coproc_column *col, int device, coproc_task **t)
{
    coproc_op op;
    coproc_op_init(&op, COPROC_OP_REDUCE);
    op.a = col;
    op.reduce = COPROC_REDUCE_SUM;
    op.device = device;
    return coproc_submit(rt, &op, t);
}

static int device_lost(coproc_runtime *rt, int d, uint64_t *moved)
{
    coproc_device_stats s;
    memset(&s, 0, sizeof s);
    s.struct_size = sizeof s;
    assert_int_equal(coproc_device_stats_get(rt, d, &s), COPROC_OK);
    if (moved)
        *moved = s.tasks_moved;
    return s.lost;
}

/* Two devices, round-robin; device 1's first run stalls for 60 s. Every task
 * completes with the right sum, device 1 is lost and its work moved; an
 * operator bound to it is refused at submit. */
static void test_stall_moves_work(void **state)
{
    (void)state;
    fixture *f = make_fixture();
    coproc_runtime *rt = open_stalled(f, 3, 1, 1, 60, COPROC_POLICY_RR);
    if (coproc_device_count(rt) < 2) {
        coproc_close(rt);
        free_fixture(f);
        skip();
    }
    coproc_column *col = NULL;
    assert_int_equal(coproc_column_wrap(rt, COPROC_INT32, f->vals, ROWS, &col), COPROC_OK);
    coproc_task *t[TASKS];
    for (int i = 0; i < TASKS; i++)
        assert_int_equal(submit_sum(rt, col, -1, &t[i]), COPROC_OK);
    int on[2] = {0, 0};
    for (int i = 0; i < TASKS; i++) {
        coproc_result r;
        coproc_status s = coproc_wait(t[i], &r);
        if (s != COPROC_OK)
            fail_msg("task %d: %s: %s", i, coproc_status_name(s), coproc_errmsg(rt));
        assert_int_equal(r.scalar.v.i64, f->sum);
        assert_true(r.device == 0 || r.device == 1);
        on[r.device]++;
        coproc_result_free(&r);
    }
    uint64_t moved = 0;
    assert_true(device_lost(rt, 1, &moved));
    assert_false(device_lost(rt, 0, NULL));
    assert_true(moved >= 1);
    assert_int_equal(on[1], 0); /* its only run stalled: nothing finished there */
    assert_non_null(strstr(f->log, "device 1"));
    assert_non_null(strstr(f->log, "lost"));
    /* Bound to the lost device: refused now, with the reason. */
    coproc_task *bound = NULL;
    assert_int_equal(submit_sum(rt, col, 1, &bound), COPROC_DEVICE_LOST);
    assert_null(bound);
    assert_non_null(strstr(coproc_errmsg(rt), "lost"));
    /* Unbound work keeps running on the device left. */
    coproc_task *more = NULL;
    coproc_result r;
    assert_int_equal(submit_sum(rt, col, -1, &more), COPROC_OK);
    assert_int_equal(coproc_wait(more, &r), COPROC_OK);
    assert_int_equal(r.scalar.v.i64, f->sum);
    assert_int_equal(r.device, 0);
    coproc_result_free(&r);
    coproc_column_free(col);
    coproc_close(rt);
    free_fixture(f);
}

/* One device that stalls: the running task and those queued behind it end
 * with DEVICE_LOST (no device left), none hangs; new submits are refused. A
 * timed wait returns TIMEOUT first and the task can be waited on again. */
static void test_stall_only_device(void **state)
{
    (void)state;
    fixture *f = make_fixture();
    coproc_runtime *rt = open_stalled(f, 3, 0, 2, 60, COPROC_POLICY_FIXED);
    coproc_column *col = NULL;
    assert_int_equal(coproc_column_wrap(rt, COPROC_INT32, f->vals, ROWS, &col), COPROC_OK);
    coproc_task *t[4];
    for (int i = 0; i < 4; i++)
        assert_int_equal(submit_sum(rt, col, -1, &t[i]), COPROC_OK);
    coproc_result r;
    /* The first run is not stalled. */
    assert_int_equal(coproc_wait(t[0], &r), COPROC_OK);
    assert_int_equal(r.scalar.v.i64, f->sum);
    coproc_result_free(&r);
    /* The second stalls: a short timed wait gives up, the task stays ours. */
    memset(&r, 0x5a, sizeof r);
    assert_int_equal(coproc_wait_timeout(t[1], 0.01, &r), COPROC_TIMEOUT);
    assert_non_null(strstr(coproc_errmsg(rt), "wait on it again"));
    assert_int_equal(r.device, 0x5a5a5a5a); /* untouched */
    for (int i = 1; i < 4; i++) {
        coproc_status s = coproc_wait_timeout(t[i], 30, &r);
        if (s == COPROC_OK && coproc_device_count(rt) > 1) {
            assert_int_equal(r.scalar.v.i64, f->sum); /* moved to another device */
            coproc_result_free(&r);
            continue;
        }
        assert_int_equal(s, COPROC_DEVICE_LOST);
        assert_null(r.column);
    }
    assert_true(device_lost(rt, 0, NULL));
    if (coproc_device_count(rt) == 1) {
        coproc_task *late = NULL;
        assert_int_equal(submit_sum(rt, col, -1, &late), COPROC_DEVICE_LOST);
    }
    coproc_column_free(col);
    coproc_close(rt);
    free_fixture(f);
}

/* A wait in the caller's own thread (a synchronous call) whose command never
 * ends (COPROC_FAULT=stuck, as with a driver that deadlocks inside it) returns
 * DEVICE_LOST at the wait's bound (sync.h: watchdog_seconds, 10 s at least),
 * does not hang; the device is given up, later calls on it fail at once, and
 * work not bound to it runs on another device (with one only: DEVICE_LOST). */
static void test_caller_wait_stuck(void **state)
{
    (void)state;
    fixture *f = make_fixture();
    setenv("COPROC_FAULT", "stuck:0:1", 1);
    coproc_runtime *rt = open_stalled(f, 3, -1, 0, 0, COPROC_POLICY_WTAR);
    unsetenv("COPROC_FAULT");
    coproc_column *dcol = NULL, *hcol = NULL;
    double t0 = test_now();
    coproc_status s = coproc_column_upload(rt, 0, COPROC_INT32, f->vals, ROWS, &dcol);
    double took = test_now() - t0;
    if (s != COPROC_DEVICE_LOST)
        fail_msg("upload to a stuck device: %s: %s", coproc_status_name(s), coproc_errmsg(rt));
    assert_null(dcol);
    if (took < 9 || took > 60)
        fail_msg("the stuck wait ended after %.2f s (its bound: 10 s)", took);
    assert_non_null(strstr(f->log, "made no progress"));
    /* Given up: the watchdog marks it lost within a few of its looks. */
    for (int i = 0; i < 100 && !device_lost(rt, 0, NULL); i++)
        test_sleep(0.05);
    assert_true(device_lost(rt, 0, NULL));
    t0 = test_now();
    assert_int_equal(coproc_column_upload(rt, 0, COPROC_INT32, f->vals, ROWS, &dcol),
                     COPROC_DEVICE_LOST);
    assert_true(test_now() - t0 < 5);
    assert_int_equal(coproc_column_wrap(rt, COPROC_INT32, f->vals, ROWS, &hcol), COPROC_OK);
    coproc_scalar sum;
    s = coproc_reduce(rt, COPROC_REDUCE_SUM, hcol, &sum);
    if (coproc_device_count(rt) > 1) {
        assert_int_equal(s, COPROC_OK);
        assert_int_equal(sum.v.i64, f->sum);
    } else {
        assert_int_equal(s, COPROC_DEVICE_LOST);
    }
    coproc_column_free(hcol);
    coproc_close(rt);
    free_fixture(f);
}

/* Without a stall the watchdog changes nothing; with it off a short stall
 * just delays (the run then fails as the hung driver call would, DEVICE_LOST,
 * and the device is given up on its own word). */
static void test_no_false_alarm(void **state)
{
    (void)state;
    fixture *f = make_fixture();
    coproc_runtime *rt = open_stalled(f, 3, -1, 0, 0, COPROC_POLICY_WTAR);
    coproc_column *col = NULL;
    assert_int_equal(coproc_column_wrap(rt, COPROC_INT32, f->vals, ROWS, &col), COPROC_OK);
    for (int i = 0; i < TASKS; i++) {
        coproc_task *t;
        coproc_result r;
        assert_int_equal(submit_sum(rt, col, -1, &t), COPROC_OK);
        assert_int_equal(coproc_wait_timeout(t, 60, &r), COPROC_OK);
        assert_int_equal(r.scalar.v.i64, f->sum);
        coproc_result_free(&r);
    }
    for (int d = 0; d < coproc_device_count(rt); d++)
        assert_false(device_lost(rt, d, NULL));
    coproc_column_free(col);
    coproc_close(rt);

    rt = open_stalled(f, -1, 0, 1, 0.2, COPROC_POLICY_FIXED);
    assert_int_equal(coproc_column_wrap(rt, COPROC_INT32, f->vals, ROWS, &col), COPROC_OK);
    coproc_task *t;
    assert_int_equal(submit_sum(rt, col, -1, &t), COPROC_OK);
    assert_int_equal(coproc_wait(t, NULL), COPROC_DEVICE_LOST);
    assert_true(device_lost(rt, 0, NULL)); /* it said so itself */
    coproc_column_free(col);
    coproc_close(rt);
    free_fixture(f);
}

/* Settings that do not parse are refused by name, never misread. */
static void test_bad_settings(void **state)
{
    (void)state;
    fixture *f = make_fixture();
    setenv("COPROC_WATCHDOG", "-3", 1);
    coproc_runtime *rt = open_stalled(f, 3, -1, 0, 0, COPROC_POLICY_WTAR);
    assert_non_null(strstr(f->log, "COPROC_WATCHDOG=-3 ignored"));
    coproc_close(rt);
    unsetenv("COPROC_WATCHDOG");
    setenv("COPROC_FAULT_STALL", "zero:one", 1);
    coproc_options o;
    coproc_options_init(&o);
    o.log = capture;
    o.log_user = f;
    f->log[0] = '\0';
    rt = test_open_with(&o);
    coproc_column *col = NULL;
    assert_int_equal(coproc_column_wrap(rt, COPROC_INT32, f->vals, ROWS, &col), COPROC_OK);
    coproc_task *t;
    assert_int_equal(submit_sum(rt, col, -1, &t), COPROC_OK);
    assert_int_equal(coproc_wait(t, NULL), COPROC_OK);
    assert_non_null(strstr(f->log, "COPROC_FAULT_STALL=zero:one ignored"));
    coproc_column_free(col);
    coproc_close(rt);
    unsetenv("COPROC_FAULT_STALL");
    o.watchdog_seconds = NAN;
    coproc_runtime *bad = NULL;
    assert_int_equal(coproc_open(&o, &bad), COPROC_INVALID_ARGUMENT);
    assert_null(bad);
    assert_int_equal(coproc_wait_timeout(NULL, 1, NULL), COPROC_NULL_POINTER);
    free_fixture(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_stall_moves_work),
        cmocka_unit_test(test_stall_only_device),
        cmocka_unit_test(test_no_false_alarm),
        cmocka_unit_test(test_caller_wait_stuck),
        cmocka_unit_test(test_bad_settings),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
