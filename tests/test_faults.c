/* test_faults.c - injected OpenCL failures (COPROC_FAULT, runtime/core/fault.h)
 * under submitted operators (issue 18). For each kind - a failed allocation,
 * copy to or from the device, kernel launch, program build, and a device that
 * disappears mid-run - a mixed load from several threads over host columns
 * copied to the devices: every operator completes with the result the scalar
 * reference gives, or, where no device is left to run it, ends with
 * DEVICE_LOST; none is lost or hangs, nothing leaks (ASan). With two devices
 * (pair_ and sim_pair_ runs) a device that dies under load hands all its work
 * to the other. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testlib.h"

enum { ROWS = 100000, THREADS = 3, PER_THREAD = 16 };

typedef struct load {
    coproc_runtime *rt;
    int32_t *vals;
    coproc_column *col;
    int64_t sum;
    int32_t min;
    uint64_t negative;
    int ok, device_lost, wrong, other;
} load;

static void *submitter(void *arg)
{
    load *l = arg;
    coproc_task *t[PER_THREAD];
    int kind[PER_THREAD];
    for (int i = 0; i < PER_THREAD; i++) {
        coproc_op op;
        kind[i] = i % 3;
        coproc_op_init(&op, kind[i] == 2 ? COPROC_OP_SELECT : COPROC_OP_REDUCE);
        op.a = l->col;
        op.reduce = kind[i] == 0 ? COPROC_REDUCE_SUM : COPROC_REDUCE_MIN;
        op.filter.first = (coproc_predicate){.col = l->col, .cmp = COPROC_CMP_LT, .a.i64 = 0};
        if (coproc_submit(l->rt, &op, &t[i]) != COPROC_OK) {
            t[i] = NULL;
            __atomic_add_fetch(coproc_errmsg(l->rt) && strstr(coproc_errmsg(l->rt), "lost")
                                   ? &l->device_lost
                                   : &l->other,
                               1, __ATOMIC_RELAXED);
        }
    }
    for (int i = 0; i < PER_THREAD; i++) {
        if (!t[i])
            continue;
        coproc_result r;
        coproc_status s = coproc_wait(t[i], &r);
        if (s == COPROC_DEVICE_LOST) {
            __atomic_add_fetch(&l->device_lost, 1, __ATOMIC_RELAXED);
            continue;
        }
        if (s != COPROC_OK) {
            if (s != COPROC_DEVICE_OUT_OF_MEMORY && s != COPROC_DRIVER_ERROR)
                fprintf(stderr, "task: %s\n", coproc_status_name(s));
            __atomic_add_fetch(&l->other, 1, __ATOMIC_RELAXED);
            continue;
        }
        int right = kind[i] == 0   ? r.scalar.v.i64 == l->sum
                    : kind[i] == 1 ? r.scalar.v.i64 == l->min
                                   : r.count == l->negative;
        __atomic_add_fetch(right ? &l->ok : &l->wrong, 1, __ATOMIC_RELAXED);
        coproc_result_free(&r);
    }
    return NULL;
}

/* The load under COPROC_FAULT=spec, over columns copied to the devices
 * (h2d and d2h faults strike) or used in place (zero_copy: results mapped,
 * map faults strike); returns it for the checks. strict: no failure but
 * DEVICE_LOST may end an operator; else any clear failure status may (the
 * random mode can strike a run and its retry), never a wrong result. */
static load run_with(const char *spec, int zero_copy, int strict)
{
    setenv("COPROC_FAULT", spec, 1);
    coproc_options o;
    coproc_options_init(&o);
    o.disable_zero_copy = !zero_copy;
    o.log_level = COPROC_LOG_ERROR;
    load l = {.rt = test_open_with(&o)};
    unsetenv("COPROC_FAULT");
    l.vals = malloc(ROWS * sizeof *l.vals);
    test_rng g = {7};
    l.min = INT32_MAX;
    for (size_t i = 0; i < ROWS; i++) {
        l.vals[i] = (int32_t)test_rand_below(&g, 200001) - 100000;
        l.sum += l.vals[i];
        l.min = l.vals[i] < l.min ? l.vals[i] : l.min;
        l.negative += l.vals[i] < 0;
    }
    assert_int_equal(coproc_column_wrap(l.rt, COPROC_INT32, l.vals, ROWS, &l.col), COPROC_OK);
    pthread_t th[THREADS];
    for (int i = 0; i < THREADS; i++)
        pthread_create(&th[i], NULL, submitter, &l);
    for (int i = 0; i < THREADS; i++)
        pthread_join(th[i], NULL);
    coproc_stats st;
    memset(&st, 0, sizeof st);
    st.struct_size = sizeof st;
    assert_int_equal(coproc_stats_get(l.rt, &st), COPROC_OK);
    fprintf(stderr,
            "COPROC_FAULT=%s on %d device(s): %d right, %d DEVICE_LOST, %d wrong, "
            "%d other; %llu faults injected\n",
            spec, coproc_device_count(l.rt), l.ok, l.device_lost, l.wrong, l.other,
            (unsigned long long)st.faults_injected);
    assert_true(st.faults_injected >= 1); /* the fault did strike */
    assert_int_equal(l.wrong, 0);
    if (strict)
        assert_int_equal(l.other, 0);
    assert_int_equal(l.ok + l.device_lost + l.other, THREADS * PER_THREAD); /* none lost */
    return l;
}

static load run(const char *spec)
{
    return run_with(spec, 0, 1);
}

static void done(load *l)
{
    coproc_column_free(l->col);
    coproc_close(l->rt);
    free(l->vals);
}

static int lost(coproc_runtime *rt, int d)
{
    coproc_device_stats s;
    memset(&s, 0, sizeof s);
    s.struct_size = sizeof s;
    assert_int_equal(coproc_device_stats_get(rt, d, &s), COPROC_OK);
    return s.lost;
}

/* A passing failure: the run is tried again (elsewhere, or once more on
 * the same device) and every operator completes right. */
static void passing(const char *spec)
{
    load l = run(spec);
    assert_int_equal(l.device_lost, 0);
    assert_int_equal(l.ok, THREADS * PER_THREAD);
    for (int d = 0; d < coproc_device_count(l.rt); d++)
        assert_false(lost(l.rt, d));
    done(&l);
}

static void test_alloc(void **state)
{
    (void)state;
    passing("alloc:0:3");
}

static void test_copies(void **state)
{
    (void)state;
    passing("h2d:0:2,d2h:0:3");
}

static void test_launch(void **state)
{
    (void)state;
    passing("launch:0:every:7");
}

static void test_map(void **state)
{
    (void)state;
    load l = run_with("map:0:2,map:0:5", 1, 1);
    assert_int_equal(l.ok, THREADS * PER_THREAD);
    done(&l);
}

/* Every alloc, copy, launch and map fails with probability 3 %: an
 * operator whose run and retry both fail ends with that failure's status,
 * clearly; none is wrong or lost, and most complete. */
static void test_random(void **state)
{
    (void)state;
    for (int zero_copy = 0; zero_copy < 2; zero_copy++) {
        load l = run_with("random:30:11", zero_copy, 0);
        assert_true(l.ok > THREADS * PER_THREAD / 2);
        done(&l);
    }
}

/* A wait for all of a queue's commands fails (clFinish's CL_OUT_OF_RESOURCES). */
static void test_finish(void **state)
{
    (void)state;
    passing("finish:0:2");
}

static void test_build(void **state)
{
    (void)state;
    passing("build:0:1");
}

/* Device 0 disappears at its 5th launch: with another device every operator
 * completes there; alone, those after end with DEVICE_LOST. */
static void test_device_disappears(void **state)
{
    (void)state;
    load l = run("lost:0:5");
    assert_true(lost(l.rt, 0));
    if (coproc_device_count(l.rt) > 1) {
        assert_int_equal(l.device_lost, 0);
        assert_int_equal(l.ok, THREADS * PER_THREAD);
        assert_false(lost(l.rt, 1));
    } else {
        assert_true(l.device_lost > 0);
        coproc_task *t = NULL;
        coproc_op op;
        coproc_op_init(&op, COPROC_OP_REDUCE);
        op.a = l.col;
        assert_int_equal(coproc_submit(l.rt, &op, &t), COPROC_DEVICE_LOST);
    }
    done(&l);
}

/* Specifications that do not parse are refused by name; nothing fails. */
static void test_bad_spec(void **state)
{
    (void)state;
    load l = run("launch:0:1,nonsense:0:1,alloc:99:1,h2d:0:0,d2h:0");
    done(&l);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_alloc),
        cmocka_unit_test(test_copies),
        cmocka_unit_test(test_launch),
        cmocka_unit_test(test_map),
        cmocka_unit_test(test_random),
        cmocka_unit_test(test_build),
        cmocka_unit_test(test_finish),
        cmocka_unit_test(test_device_disappears),
        cmocka_unit_test(test_bad_spec),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
