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
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testlib.h"
#include "coproc/query.h"

enum { ROWS = 200000, TASKS = 24 };

typedef struct fixture {
    int32_t *vals;
    int64_t sum;
    pthread_mutex_t lock; /* the log: workers, the watchdog and the caller write it */
    char log[4096];
} fixture;

static void capture(void *user, coproc_log_level level, const char *msg)
{
    fixture *f = user;
    (void)level;
    pthread_mutex_lock(&f->lock);
    size_t n = strlen(f->log);
    snprintf(f->log + n, sizeof f->log - n, "%s\n", msg);
    pthread_mutex_unlock(&f->lock);
}

/* How many times `what` is in the captured log. */
static int log_count(const fixture *f, const char *what)
{
    int n = 0;
    pthread_mutex_lock((pthread_mutex_t *)&f->lock);
    for (const char *p = f->log; (p = strstr(p, what)); p += strlen(what))
        n++;
    pthread_mutex_unlock((pthread_mutex_t *)&f->lock);
    return n;
}

static int log_has(const fixture *f, const char *what) { return log_count(f, what) > 0; }

static fixture *make_fixture(void)
{
    fixture *f = calloc(1, sizeof *f);
    pthread_mutex_init(&f->lock, NULL);
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
    pthread_mutex_destroy(&f->lock);
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
    assert_true(log_has(f, "device 1"));
    assert_true(log_has(f, "lost"));
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
 * DEVICE_LOST at the wait's bound (sync.h: watchdog_seconds, 2 s at least),
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
    if (took < 2.5 || took > 60)
        fail_msg("the stuck wait ended after %.2f s (its bound: 3 s)", took);
    assert_true(log_has(f, "made no progress"));
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

/* ---- slow is not stuck (issue 34): the watchdog and the bounded waits count
 * how long a device has completed nothing, builds and a driver's compile at a
 * first launch not counted (backend/opencl/progress.h). COPROC_FAULT's slow
 * sites (core/fault.h) make a build or a launch take seconds; the bound is
 * 1 s (the watchdog's; waits in the caller's thread: 2 s, sync.h's floor).
 * Times are asserted from below where the injection sets them, and from
 * above only by large factors. */

enum { SLOW_ROWS = 100000 };

/* A runtime on device 0 alone (fixed policy), COPROC_FAULT=fault, the log at
 * INFO captured (the injections' lines), the watchdog at 1 s. */
static coproc_runtime *open_slow(fixture *f, const char *fault)
{
    setenv("COPROC_FAULT", fault, 1);
    unsetenv("COPROC_FAULT_STALL");
    coproc_options o;
    coproc_options_init(&o);
    o.watchdog_seconds = 1;
    o.policy = COPROC_POLICY_FIXED;
    o.fixed_device = 0;
    o.log = capture;
    o.log_user = f;
    o.log_level = COPROC_LOG_INFO;
    f->log[0] = '\0';
    coproc_runtime *rt = test_open_with(&o);
    unsetenv("COPROC_FAULT");
    return rt;
}


/* Whether device 0 is one whose driver compiles at every launch, not only at
 * the first (Mesa's rusticl and clover on llvmpipe, 22.3: up to a second a
 * launch with a cold shader cache, inside the launch, where no marker tells
 * it from a stall): the two cases below keep a 1 s bound, which such a
 * compile alone can pass, so they run on PoCL and the simulated devices. */
static int compiles_every_launch(void)
{
    coproc_runtime *rt = test_open(NULL);
    coproc_device_info info;
    int r = coproc_device_info_get(rt, 0, &info) == COPROC_OK &&
            (strstr(info.platform, "rusticl") || strstr(info.platform, "Clover"));
    coproc_close(rt);
    if (r)
        print_message("skipped on %s: it compiles at every launch, which a 1 s bound cannot "
                      "tell from a stall\n", info.platform);
    return r;
}

/* (a) A program build and a first launch (where a driver compiles) that each
 * take 3 s, thrice the watchdog's bound: the device lives, in a worker
 * (a submitted sum) and in the caller's thread (a query's waits). */
static void test_slow_build_not_lost(void **state)
{
    (void)state;
    if (compiles_every_launch())
        return;
    fixture *f = make_fixture();
    const char *slow = "slowbuild:0:1:3,slowlaunch:0:1:3";
    coproc_runtime *rt = open_slow(f, slow);
    coproc_column *col = NULL;
    assert_int_equal(coproc_column_wrap(rt, COPROC_INT32, f->vals, ROWS, &col), COPROC_OK);
    double t0 = test_now();
    coproc_task *t = NULL;
    coproc_result r;
    assert_int_equal(submit_sum(rt, col, -1, &t), COPROC_OK);
    coproc_status s = coproc_wait(t, &r);
    double took = test_now() - t0;
    if (s != COPROC_OK)
        fail_msg("a sum behind a slow build: %s: %s", coproc_status_name(s), coproc_errmsg(rt));
    assert_int_equal(r.scalar.v.i64, f->sum);
    coproc_result_free(&r);
    assert_int_equal(log_count(f, "slowbuild call"), 1);
    assert_int_equal(log_count(f, "slowlaunch call"), 1);
    assert_true(took >= 5.5); /* both injections held it */
    assert_false(device_lost(rt, 0, NULL));
    assert_false(log_has(f, "lost"));
    coproc_column_free(col);
    coproc_close(rt);

    /* A query in the caller's thread: its build and its kernel's first launch. */
    rt = open_slow(f, slow);
    assert_int_equal(coproc_column_wrap(rt, COPROC_INT32, f->vals, ROWS, &col), COPROC_OK);
    coproc_table *tab = NULL;
    coproc_plan *p = NULL;
    assert_int_equal(coproc_table_create(rt, &tab), COPROC_OK);
    assert_int_equal(coproc_table_add(tab, "v", col), COPROC_OK);
    assert_int_equal(coproc_plan_create(rt, &p), COPROC_OK);
    coproc_node *scan = coproc_plan_scan(p, tab, "t");
    coproc_node *pos = coproc_plan_filter(
        p, scan, coproc_expr_compare(p, COPROC_CMP_GT, coproc_expr_column(p, "v"),
                                     coproc_expr_int(p, 0)));
    coproc_aggregate agg = {COPROC_AGG_COUNT, NULL, "n"};
    coproc_node *root = coproc_plan_group_by(p, pos, 0, NULL, 1, &agg);
    coproc_query_result qr;
    t0 = test_now();
    s = coproc_query_run(p, root, NULL, &qr);
    took = test_now() - t0;
    if (s != COPROC_OK)
        fail_msg("a query behind a slow build: %s: %s", coproc_status_name(s), coproc_errmsg(rt));
    int64_t n = -1, want = 0;
    for (size_t i = 0; i < ROWS; i++)
        want += f->vals[i] > 0;
    assert_int_equal(coproc_column_download(coproc_table_column_at(qr.table, 0), &n, 1),
                     COPROC_OK);
    assert_int_equal(n, want);
    coproc_query_result_free(&qr);
    assert_int_equal(log_count(f, "slowlaunch call"), 1);
    assert_true(took >= 5.5);
    assert_false(device_lost(rt, 0, NULL));
    coproc_plan_free(p);
    coproc_table_free(tab);
    coproc_column_free(col);
    coproc_close(rt);
    free_fixture(f);
}

static int cmp_i32(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

/* (b) A sort whose every kernel takes 0.3 s (held in the driver): a run far
 * longer than its bound whose commands keep completing is slow, not stuck. */
static void test_long_run_not_lost(void **state)
{
    (void)state;
    if (compiles_every_launch())
        return;
    fixture *f = make_fixture();
    coproc_runtime *rt = open_slow(f, "slowlaunch:0:every:1:0.3");
    coproc_column *col = NULL;
    assert_int_equal(coproc_column_wrap(rt, COPROC_INT32, f->vals, SLOW_ROWS, &col), COPROC_OK);
    coproc_op op;
    coproc_op_init(&op, COPROC_OP_SORT);
    op.a = col;
    coproc_task *t = NULL;
    coproc_result r;
    double t0 = test_now();
    assert_int_equal(coproc_submit(rt, &op, &t), COPROC_OK);
    coproc_status s = coproc_wait(t, &r);
    double took = test_now() - t0;
    if (s != COPROC_OK)
        fail_msg("a slow sort: %s: %s", coproc_status_name(s), coproc_errmsg(rt));
    int32_t *want = malloc(SLOW_ROWS * sizeof *want), *got = malloc(SLOW_ROWS * sizeof *got);
    memcpy(want, f->vals, SLOW_ROWS * sizeof *want);
    qsort(want, SLOW_ROWS, sizeof *want, cmp_i32);
    assert_int_equal(coproc_column_download(r.column, got, SLOW_ROWS), COPROC_OK);
    assert_memory_equal(got, want, SLOW_ROWS * sizeof *want);
    coproc_result_free(&r);
    int held = log_count(f, "slowlaunch call");
    double bound = r.estimate_s > 0.05 ? 20 * r.estimate_s : 1;
    print_message("sort: %d launches held 0.3 s each, %.2f s in all, bound %.2f s\n", held, took,
                  bound);
    assert_true(took >= 0.3 * held - 0.1); /* the launches were held one after another */
    assert_true(took > 2 * bound);         /* far longer than the bound */
    assert_false(device_lost(rt, 0, NULL));
    free(want);
    free(got);
    coproc_column_free(col);
    coproc_close(rt);
    free_fixture(f);
}

/* (c) A launch that never ends (held 20 s; not a first launch, so no
 * compile): the watchdog gives the device up after its 1 s bound and the
 * caller of a synchronous sum - whose run is its own thread's - hears
 * DEVICE_LOST (one device) or gets the sum from the other device at once,
 * not when the launch ends. */
static void test_stuck_heard_at_once(void **state)
{
    (void)state;
    fixture *f = make_fixture();
    /* How many launches one sum makes: the held one is the second sum's first. */
    coproc_runtime *rt = open_slow(f, "slowlaunch:0:every:1:0.001");
    coproc_column *col = NULL;
    coproc_scalar sum;
    assert_int_equal(coproc_column_wrap(rt, COPROC_INT32, f->vals, ROWS, &col), COPROC_OK);
    assert_int_equal(coproc_reduce(rt, COPROC_REDUCE_SUM, col, &sum), COPROC_OK);
    int per_sum = log_count(f, "slowlaunch call");
    assert_true(per_sum >= 1);
    coproc_column_free(col);
    coproc_close(rt);

    char fault[64];
    snprintf(fault, sizeof fault, "slowlaunch:0:%d:20", per_sum + 1);
    rt = open_slow(f, fault);
    assert_int_equal(coproc_column_wrap(rt, COPROC_INT32, f->vals, ROWS, &col), COPROC_OK);
    assert_int_equal(coproc_reduce(rt, COPROC_REDUCE_SUM, col, &sum), COPROC_OK);
    assert_int_equal(sum.v.i64, f->sum);
    double t0 = test_now();
    coproc_status s = coproc_reduce(rt, COPROC_REDUCE_SUM, col, &sum);
    double took = test_now() - t0;
    print_message("stuck launch: %s after %.2f s (bound 1 s)\n", coproc_status_name(s), took);
    assert_int_equal(log_count(f, "slowlaunch call"), 1);
    if (coproc_device_count(rt) > 1) {
        if (s != COPROC_OK)
            fail_msg("rerun elsewhere: %s: %s", coproc_status_name(s), coproc_errmsg(rt));
        assert_int_equal(sum.v.i64, f->sum);
    } else {
        assert_int_equal(s, COPROC_DEVICE_LOST);
    }
    assert_true(device_lost(rt, 0, NULL));
    assert_true(log_has(f, "no progress"));
    if (took < 0.9 || took > 12) /* the bound, plus a look or two; not the 20 s hold */
        fail_msg("the caller heard after %.2f s (bound 1 s, the launch held 20 s)", took);
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
    assert_true(log_has(f, "COPROC_WATCHDOG=-3 ignored"));
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
    assert_true(log_has(f, "COPROC_FAULT_STALL=zero:one ignored"));
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
        cmocka_unit_test(test_slow_build_not_lost),
        cmocka_unit_test(test_long_run_not_lost),
        cmocka_unit_test(test_stuck_heard_at_once),
        cmocka_unit_test(test_bad_settings),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
