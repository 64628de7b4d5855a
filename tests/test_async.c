/* test_async.c - coproc_submit / coproc_wait on PoCL: a mixed workload over
 * host columns from several threads equals the scalar reference; back-pressure
 * with a tiny ready queue; forced devices; argument errors at submit. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testlib.h"

enum { ROWS = 50000, THREADS = 4, ROUNDS = 6 };

typedef struct shared {
    coproc_runtime *rt;
    int32_t *keys, *vals;
    coproc_column *kcol, *vcol;
    int64_t sum;
    uint64_t below;      /* rows with vals < 0 */
    int failures;
} shared;

static int cmp_i32(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

/* One round of every operator kind; returns the number of wrong results. */
static int one_round(shared *sh, int seed)
{
    coproc_runtime *rt = sh->rt;
    int wrong = 0;
    coproc_op ops[5];
    coproc_task *t[5];
    coproc_op_init(&ops[0], COPROC_OP_REDUCE);
    ops[0].a = sh->vcol;
    ops[0].reduce = COPROC_REDUCE_SUM;
    coproc_op_init(&ops[1], COPROC_OP_SELECT);
    ops[1].filter.first = (coproc_predicate){.col = sh->vcol, .cmp = COPROC_CMP_LT, .a.i64 = 0};
    coproc_op_init(&ops[2], COPROC_OP_MAP);
    ops[2].a = sh->vcol;
    ops[2].arith = COPROC_ARITH_ADD;
    ops[2].c.i64 = seed;
    coproc_op_init(&ops[3], COPROC_OP_SORT);
    ops[3].a = sh->kcol;
    coproc_op_init(&ops[4], COPROC_OP_GROUP_BY);
    ops[4].a = sh->kcol;
    ops[4].b = sh->vcol;
    ops[4].sorted = 1;
    for (int i = 0; i < 5; i++)
        if (coproc_submit(rt, &ops[i], &t[i]) != COPROC_OK)
            return 100;
    coproc_result r[5];
    for (int i = 0; i < 5; i++)
        if (coproc_wait(t[i], &r[i]) != COPROC_OK) {
            fprintf(stderr, "task %d: %s\n", i, coproc_errmsg(rt));
            return 100;
        }
    wrong += r[0].scalar.v.i64 != sh->sum;
    wrong += r[1].count != sh->below;
    const uint32_t *pos = coproc_column_host_data(r[1].column);
    for (uint64_t i = 0, j = 0; i < ROWS && pos; i++)
        if (sh->vals[i] < 0)
            wrong += pos[j++] != i;
    const int32_t *m = coproc_column_host_data(r[2].column);
    for (size_t i = 0; i < ROWS; i++)
        wrong += m[i] != (int32_t)((uint32_t)sh->vals[i] + (uint32_t)seed);
    int32_t *sorted = malloc(ROWS * sizeof *sorted);
    memcpy(sorted, sh->keys, ROWS * sizeof *sorted);
    qsort(sorted, ROWS, sizeof *sorted, cmp_i32);
    wrong += memcmp(sorted, coproc_column_host_data(r[3].column), ROWS * sizeof *sorted) != 0;
    free(sorted);
    /* group-by: keys are 0..99, so check count and sum per key */
    wrong += r[4].count != 100;
    const int32_t *gk = coproc_column_host_data(r[4].groups.keys);
    const uint64_t *gc = coproc_column_host_data(r[4].groups.count);
    const int64_t *gs = coproc_column_host_data(r[4].groups.sum);
    for (size_t g = 0; g < r[4].count && gk; g++) {
        uint64_t c = 0;
        int64_t s = 0;
        for (size_t i = 0; i < ROWS; i++)
            if (sh->keys[i] == gk[g]) {
                c++;
                s += sh->vals[i];
            }
        wrong += gk[g] != (int32_t)g || gc[g] != c || gs[g] != s;
    }
    for (int i = 0; i < 5; i++) {
        wrong += r[i].device < 0 || r[i].seconds <= 0;
        coproc_result_free(&r[i]);
    }
    return wrong;
}

static void *thread_main(void *arg)
{
    shared *sh = arg;
    static _Atomic int seeds = 0; /* test-local; the library has no such state */
    for (int k = 0; k < ROUNDS; k++) {
        int w = one_round(sh, ++seeds);
        if (w)
            __atomic_add_fetch(&sh->failures, w, __ATOMIC_SEQ_CST);
    }
    return NULL;
}

static void make_data(shared *sh)
{
    test_rng r = {42};
    sh->keys = malloc(ROWS * sizeof *sh->keys);
    sh->vals = malloc(ROWS * sizeof *sh->vals);
    sh->sum = 0;
    sh->below = 0;
    for (size_t i = 0; i < ROWS; i++) {
        sh->keys[i] = (int32_t)test_rand_below(&r, 100);
        sh->vals[i] = (int32_t)test_rand_below(&r, 2001) - 1000;
        sh->sum += sh->vals[i];
        sh->below += sh->vals[i] < 0;
    }
    assert_ok(sh->rt, coproc_column_wrap(sh->rt, COPROC_INT32, sh->keys, ROWS, &sh->kcol));
    assert_ok(sh->rt, coproc_column_wrap(sh->rt, COPROC_INT32, sh->vals, ROWS, &sh->vcol));
}

static void free_data(shared *sh)
{
    coproc_column_free(sh->kcol);
    coproc_column_free(sh->vcol);
    free(sh->keys);
    free(sh->vals);
}

static coproc_runtime *open_with(int queue_depth, int disable_zero_copy)
{
    coproc_options o;
    coproc_options_init(&o);
    o.devices = "cpu";
    o.queue_depth = queue_depth;
    o.disable_zero_copy = disable_zero_copy;
    return test_open_with(&o);
}

static void run_threads(int queue_depth, int disable_zero_copy)
{
    shared sh = {.rt = open_with(queue_depth, disable_zero_copy)};
    make_data(&sh);
    pthread_t th[THREADS];
    for (int i = 0; i < THREADS; i++)
        assert_int_equal(pthread_create(&th[i], NULL, thread_main, &sh), 0);
    for (int i = 0; i < THREADS; i++)
        pthread_join(th[i], NULL);
    assert_int_equal(sh.failures, 0);
    coproc_device_stats ds = {.struct_size = sizeof ds};
    assert_ok(sh.rt, coproc_device_stats_get(sh.rt, 0, &ds));
    assert_true(ds.tasks_run >= THREADS * ROUNDS * 5);
    assert_int_equal(ds.queued, 0);
    free_data(&sh);
    coproc_close(sh.rt);
}

static void test_threads_zero_copy(void **state) { run_threads(0, 0); }
/* A ready queue of 2 with 4 submitting threads: submits wait, nothing is lost. */
static void test_back_pressure_copying(void **state) { run_threads(2, 1); }

/* Shutting down with work in flight: coproc_drain returns once every
 * submitted operator has finished (copies on, a queue of 4: the prefetcher
 * and back-pressure in play); half the tasks are waited on and right, the
 * other half never are: coproc_close frees them and their results (ASan and
 * LeakSanitizer check that nothing leaks). */
static void test_close_with_work_in_flight(void **state)
{
    (void)state;
    shared sh = {.rt = open_with(4, 1)};
    make_data(&sh);
    enum { N = 24 };
    coproc_task *t[N];
    for (int i = 0; i < N; i++) {
        coproc_op op;
        coproc_op_init(&op, i % 2 ? COPROC_OP_SORT : COPROC_OP_REDUCE);
        op.a = i % 2 ? sh.kcol : sh.vcol;
        op.reduce = COPROC_REDUCE_SUM;
        assert_ok(sh.rt, coproc_submit(sh.rt, &op, &t[i]));
    }
    coproc_drain(sh.rt);
    for (int i = 0; i < N; i++)
        assert_true(coproc_task_done(t[i]));
    for (int i = 0; i < N; i += 2) {
        coproc_result r;
        assert_ok(sh.rt, coproc_wait(t[i], &r));
        assert_true(r.scalar.v.i64 == sh.sum);
        coproc_result_free(&r);
    }
    coproc_drain(sh.rt); /* nothing left to wait for: returns at once */
    coproc_drain(NULL);
    free_data(&sh);
}

static void test_submit_errors(void **state)
{
    coproc_runtime *rt = open_with(0, 0);
    int32_t a[4] = {1, 2, 3, 4};
    float f[3] = {1, 2, 3};
    coproc_column *ca, *cf, *dev;
    assert_ok(rt, coproc_column_wrap(rt, COPROC_INT32, a, 4, &ca));
    assert_ok(rt, coproc_column_wrap(rt, COPROC_FLOAT32, f, 3, &cf));
    assert_ok(rt, coproc_column_upload(rt, 0, COPROC_INT32, a, 4, &dev));
    coproc_task *t = NULL;
    coproc_op op;
    coproc_op_init(&op, COPROC_OP_REDUCE);
    assert_status(COPROC_NULL_POINTER, coproc_submit(rt, &op, &t)); /* a is NULL */
    assert_status(COPROC_NULL_POINTER, coproc_submit(rt, NULL, &t));
    op.a = ca;
    op.device = 7;
    assert_status(COPROC_INVALID_ARGUMENT, coproc_submit(rt, &op, &t));
    coproc_op_init(&op, COPROC_OP_MAP);
    op.a = ca;
    op.b = cf;
    assert_status(COPROC_LENGTH_MISMATCH, coproc_submit(rt, &op, &t));
    coproc_op_init(&op, COPROC_OP_HASH_JOIN);
    op.a = cf;
    op.b = cf;
    assert_status(COPROC_UNSUPPORTED_TYPE, coproc_submit(rt, &op, &t));
    coproc_op_init(&op, COPROC_OP_MAP);
    op.a = ca;
    op.b = dev; /* host and device inputs mixed */
    assert_status(COPROC_WRONG_DEVICE, coproc_submit(rt, &op, &t));
    coproc_op_init(&op, COPROC_OP_SCAN); /* every operator is submittable; its variants are not */
    op.a = ca;
    op.variant = COPROC_VARIANT_CAST;
    assert_status(COPROC_INVALID_ARGUMENT, coproc_submit(rt, &op, &t));
    assert_null(t);
    coproc_op_init(&op, COPROC_OP_KIND_COUNT);
    op.a = ca;
    assert_status(COPROC_INVALID_ARGUMENT, coproc_submit(rt, &op, &t));
    assert_null(t);
    /* a device column runs where it lives; a host column cannot go to a device operator */
    coproc_op_init(&op, COPROC_OP_REDUCE);
    op.a = dev;
    assert_ok(rt, coproc_submit(rt, &op, &t));
    coproc_result r;
    assert_ok(rt, coproc_wait(t, &r));
    assert_int_equal(r.scalar.v.i64, 10);
    assert_int_equal(r.device, 0);
    /* the synchronous helpers take host columns too (a submit and a wait) */
    coproc_scalar sc;
    assert_ok(rt, coproc_reduce(rt, COPROC_REDUCE_SUM, ca, &sc));
    assert_int_equal(sc.v.i64, 10);
    coproc_column *pos = NULL;
    uint64_t count = 0;
    coproc_filter fl = {.first = {.col = ca, .cmp = COPROC_CMP_GE, .a.i64 = 3}};
    assert_ok(rt, coproc_select(rt, &fl, &pos, &count));
    assert_int_equal(count, 2);
    assert_int_equal(((uint32_t *)coproc_column_host_data(pos))[0], 2);
    coproc_column_free(pos);
    /* every operator takes host columns: a scan runs as a task too */
    coproc_column *scanned = NULL;
    assert_ok(rt, coproc_scan(rt, ca, 0, &scanned));
    assert_int_equal(coproc_column_device(scanned), -1);
    assert_int_equal(((int64_t *)coproc_column_host_data(scanned))[3], 10);
    coproc_column_free(scanned);
    /* a constant that does not fit the column is refused at submit */
    coproc_op_init(&op, COPROC_OP_MAP);
    op.a = ca;
    op.c.i64 = (int64_t)1 << 40; /* does not fit int32 */
    assert_status(COPROC_INVALID_ARGUMENT, coproc_submit(rt, &op, &t));
    assert_null(t);
    /* an error while running comes back from coproc_wait, with a message */
    uint32_t far[1] = {1000};
    coproc_column *cpos;
    assert_ok(rt, coproc_column_wrap(rt, COPROC_UINT32, far, 1, &cpos));
    coproc_op_init(&op, COPROC_OP_GATHER);
    op.a = ca;
    op.b = cpos;
    assert_ok(rt, coproc_submit(rt, &op, &t));
    assert_status(COPROC_OUT_OF_RANGE, coproc_wait(t, &r));
    assert_null(r.column);
    assert_true(coproc_errmsg(rt)[0] != '\0');
    coproc_column_free(cpos);
    coproc_column_free(ca);
    coproc_column_free(cf);
    coproc_column_free(dev);
    coproc_close(rt);
}

/* Placement options out of range are refused at open, with no runtime made. */
static void test_bad_placement_options(void **state)
{
    coproc_options o;
    coproc_runtime *rt = (coproc_runtime *)1;
    coproc_options_init(&o);
    o.policy = COPROC_POLICY_FIXED + 1;
    assert_status(COPROC_INVALID_ARGUMENT, coproc_open(&o, &rt));
    assert_null(rt);
    coproc_options_init(&o);
    o.queue_depth = -1;
    assert_status(COPROC_INVALID_ARGUMENT, coproc_open(&o, &rt));
    assert_null(rt);
    /* stats of a device that is not there */
    rt = open_with(0, 0);
    coproc_device_stats ds = {.struct_size = sizeof ds};
    assert_status(COPROC_INVALID_ARGUMENT, coproc_device_stats_get(rt, 5, &ds));
    assert_non_null(strstr(coproc_errmsg(rt), "out of range"));
    ds.struct_size = 0;
    assert_status(COPROC_INVALID_ARGUMENT, coproc_device_stats_get(rt, 0, &ds));
    assert_status(COPROC_NULL_POINTER, coproc_device_stats_get(rt, 0, NULL));
    assert_status(COPROC_NULL_POINTER, coproc_wait(NULL, NULL));
    coproc_close(rt);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_submit_errors),
        cmocka_unit_test(test_bad_placement_options),
        cmocka_unit_test(test_threads_zero_copy),
        cmocka_unit_test(test_back_pressure_copying),
        cmocka_unit_test(test_close_with_work_in_flight),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
