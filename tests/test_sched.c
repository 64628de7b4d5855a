/* test_sched.c - the scheduler's policies on hand-built cases, the training
 * phase, load accounting, residency, thread-safety, and the simulator and oracle
 * (deterministic; no OpenCL device, no runtime). */
#include <math.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "sched_oracle.h"
#include "sched/scheduler.h"
#include "sched_sim.h"

static coproc__sched_task task_of(int kind, int n, const double *cost)
{
    coproc__sched_task t;
    memset(&t, 0, sizeof t);
    t.kind = kind;
    t.forced = -1;
    for (int d = 0; d < COPROC__SCHED_MAX_DEVICES; d++) {
        t.cost[d] = d < n ? cost[d] : -1;
        t.transfer[d] = -1;
    }
    return t;
}

static void init_policy(coproc__sched *s, coproc__policy p, int n, int training)
{
    coproc__sched_config c = coproc__sched_defaults(n);
    c.policy = p;
    c.training = training;
    assert_int_equal(coproc__sched_init(s, &c), 0);
}

static void test_policy_names(void **state)
{
    for (int p = 0; p < COPROC__POLICY_COUNT; p++)
        assert_int_equal(coproc__policy_parse(coproc__policy_name((coproc__policy)p)), p);
    assert_int_equal(coproc__policy_parse("WTAR"), COPROC__POLICY_WTAR);
    assert_int_equal(coproc__policy_parse("nope"), -1);
    coproc__sched s;
    coproc__sched_config c = coproc__sched_defaults(0);
    assert_int_equal(coproc__sched_init(&s, &c), -1);
    c = coproc__sched_defaults(COPROC__SCHED_MAX_DEVICES + 1);
    assert_int_equal(coproc__sched_init(&s, &c), -1);
}

static void test_srt(void **state)
{
    coproc__sched s;
    init_policy(&s, COPROC__POLICY_SRT, 3, -1);
    double c[3] = {3, 1, 2};
    coproc__sched_task t = task_of(0, 3, c);
    /* SRT ignores load: always the smallest estimate */
    for (int i = 0; i < 5; i++) assert_int_equal(coproc__sched_place(&s, &t, 0, NULL), 1);
    /* a device without a trusted estimate is not compared */
    double c2[3] = {3, -1, 2};
    t = task_of(0, 3, c2);
    assert_int_equal(coproc__sched_place(&s, &t, 0, NULL), 2);
    coproc__sched_destroy(&s);
}

static void test_wtar_alternates(void **state)
{
    coproc__sched s;
    init_policy(&s, COPROC__POLICY_WTAR, 2, -1);
    double c[2] = {1, 1};
    coproc__sched_task t = task_of(0, 2, c);
    for (int i = 0; i < 10; i++) assert_int_equal(coproc__sched_place(&s, &t, 0, NULL), i % 2);
    coproc__sched_destroy(&s);
}

static void test_wtar_fast_device(void **state)
{
    coproc__sched s;
    init_policy(&s, COPROC__POLICY_WTAR, 2, -1);
    double c[2] = {10, 1};
    coproc__sched_task t = task_of(0, 2, c);
    int on[2] = {0, 0};
    for (int i = 0; i < 110; i++) on[coproc__sched_place(&s, &t, 0, NULL)]++;
    /* both finish together: 10 tasks (100 s) on the slow one, 100 on the fast */
    assert_true(on[1] >= 99 && on[1] <= 101);
    coproc__sched_destroy(&s);
}

static void test_wtar_running_task(void **state)
{
    coproc__sched s;
    init_policy(&s, COPROC__POLICY_WTAR, 2, -1);
    double c[2] = {4, 5};
    coproc__sched_task t = task_of(0, 2, c);
    coproc__sched_ticket tk;
    assert_int_equal(coproc__sched_place(&s, &t, 0, &tk), 0);
    assert_true(fabs(coproc__sched_load(&s, 0, 0) - 4) < 1e-9);
    coproc__sched_start(&s, &tk, 10.0);
    /* 1 s into a 4 s task: 3 s remain, so 3 + 4 > 0 + 5 -> device 1 */
    assert_true(fabs(coproc__sched_load(&s, 0, 11.0) - 3) < 1e-9);
    coproc__sched_ticket tk2;
    assert_int_equal(coproc__sched_place(&s, &t, 11.0, &tk2), 1);
    coproc__sched_cancel(&s, &tk2);
    /* 3.5 s in: 0.5 remain, 0.5 + 4 < 5 -> device 0 */
    coproc__sched_ticket tk3;
    assert_int_equal(coproc__sched_place(&s, &t, 13.5, &tk3), 0);
    coproc__sched_cancel(&s, &tk3);
    /* overrunning: remaining clamps at 0 */
    assert_true(coproc__sched_load(&s, 0, 30.0) == 0);
    coproc__sched_finish(&s, &tk, 15.0, 5.0);
    coproc__sched_device_stats st;
    coproc__sched_stats(&s, 0, &st);
    assert_int_equal(st.running, 0);
    assert_true(st.queued == 0);
    assert_int_equal(st.finished, 1);
    assert_true(fabs(st.rel_error_sum - 0.2) < 1e-9); /* |4 - 5| / 5 */
    assert_true(fabs(st.busy - 5.0) < 1e-9);
    coproc__sched_destroy(&s);
}

static void test_rr(void **state)
{
    coproc__sched s;
    init_policy(&s, COPROC__POLICY_RR, 3, -1);
    double c[3] = {1, 100, 1000};
    coproc__sched_task t = task_of(0, 3, c);
    for (int i = 0; i < 9; i++) assert_int_equal(coproc__sched_place(&s, &t, 0, NULL), i % 3);
    t.allowed = 0x5; /* devices 0 and 2 */
    for (int i = 0; i < 4; i++) assert_int_equal(coproc__sched_place(&s, &t, 0, NULL), (i % 2) * 2);
    coproc__sched_destroy(&s);
}

static void test_tbo(void **state)
{
    coproc__sched s;
    coproc__sched_config cfg = coproc__sched_defaults(3);
    cfg.policy = COPROC__POLICY_TBO;
    cfg.training = -1;
    cfg.tbo_threshold = 2.5;
    assert_int_equal(coproc__sched_init(&s, &cfg), 0);
    double c[3] = {3, 1, 2};
    coproc__sched_task t = task_of(0, 3, c);
    /* device 1 until its queued work exceeds 2.5 s, then the next fastest */
    int want[] = {1, 1, 1, 2, 2, 0};
    for (int i = 0; i < 6; i++) assert_int_equal(coproc__sched_place(&s, &t, 0, NULL), want[i]);
    /* all overloaded: the earliest finish */
    assert_int_equal(coproc__sched_place(&s, &t, 0, NULL), 1); /* 3+1 vs 4+2 vs 3+3 */
    coproc__sched_destroy(&s);
}

static void test_pbo(void **state)
{
    double c[2] = {1, 3};
    coproc__sched_task t = task_of(0, 2, c);
    int seq[2][64];
    for (int r = 0; r < 2; r++) {
        coproc__sched s;
        init_policy(&s, COPROC__POLICY_PBO, 2, -1);
        int on0 = 0;
        for (int i = 0; i < 20000; i++) {
            int d = coproc__sched_place(&s, &t, 0, NULL);
            if (i < 64) seq[r][i] = d;
            on0 += d == 0;
        }
        /* P(0) = 1 - 1/4 = 0.75 */
        assert_true(fabs(on0 / 20000.0 - 0.75) < 0.02);
        coproc__sched_destroy(&s);
    }
    assert_memory_equal(seq[0], seq[1], sizeof seq[0]); /* seeded: reproducible */
    /* three devices: P(i) = (1 - T_i/sum)/(N-1) = 0.4, 0.35, 0.25 for {1,1.5,2.5}/5 */
    double c3[3] = {1, 1.5, 2.5};
    t = task_of(0, 3, c3);
    coproc__sched s;
    init_policy(&s, COPROC__POLICY_PBO, 3, -1);
    int on[3] = {0, 0, 0};
    for (int i = 0; i < 30000; i++) on[coproc__sched_place(&s, &t, 0, NULL)]++;
    assert_true(fabs(on[0] / 30000.0 - 0.40) < 0.02);
    assert_true(fabs(on[1] / 30000.0 - 0.35) < 0.02);
    assert_true(fabs(on[2] / 30000.0 - 0.25) < 0.02);
    coproc__sched_destroy(&s);
}

static void test_static(void **state)
{
    coproc__sched s;
    coproc__sched_config cfg = coproc__sched_defaults(2);
    cfg.policy = COPROC__POLICY_STATIC;
    cfg.static_bus_bandwidth = 20e9; /* "calibrated" */
    assert_int_equal(coproc__sched_init(&s, &cfg), 0);
    double c[2] = {1, 1};
    coproc__sched_task t = task_of(0, 2, c);
    t.input_bytes = 5e6; /* under 10 MB: CPU whatever the costs */
    t.cost[1] = 0.011, t.transfer[1] = 0.001;
    assert_int_equal(coproc__sched_place(&s, &t, 0, NULL), 0);
    t.input_bytes = 20e6; /* compute 10x transfer: GPU */
    assert_int_equal(coproc__sched_place(&s, &t, 0, NULL), 1);
    t.cost[1] = 0.003; /* compute 2x transfer: CPU */
    assert_int_equal(coproc__sched_place(&s, &t, 0, NULL), 0);
    /* transfer from the calibrated bandwidth: 20 MB / 20 GB/s = 1 ms */
    t.transfer[1] = -1;
    t.cost[1] = 0.0105;
    assert_int_equal(coproc__sched_place(&s, &t, 0, NULL), 1);
    t.cost[1] = 0.005;
    assert_int_equal(coproc__sched_place(&s, &t, 0, NULL), 0);
    coproc__sched_destroy(&s);
}

static void test_fixed_forced_allowed(void **state)
{
    coproc__sched s;
    coproc__sched_config cfg = coproc__sched_defaults(3);
    cfg.policy = COPROC__POLICY_FIXED;
    cfg.fixed_device = 2;
    assert_int_equal(coproc__sched_init(&s, &cfg), 0);
    double c[3] = {1, 1, 100};
    coproc__sched_task t = task_of(0, 3, c);
    for (int i = 0; i < 5; i++) assert_int_equal(coproc__sched_place(&s, &t, 0, NULL), 2);
    t.forced = 1;
    assert_int_equal(coproc__sched_place(&s, &t, 0, NULL), 1);
    coproc__sched_destroy(&s);

    init_policy(&s, COPROC__POLICY_WTAR, 3, -1);
    t = task_of(0, 3, c);
    t.allowed = 0x4; /* only device 2 can run it */
    assert_int_equal(coproc__sched_place(&s, &t, 0, NULL), 2);
    t.allowed = 0x8; /* no such device */
    assert_int_equal(coproc__sched_place(&s, &t, 0, NULL), -1);
    coproc__sched_destroy(&s);
}

static void test_training(void **state)
{
    coproc__sched s;
    init_policy(&s, COPROC__POLICY_SRT, 3, 0); /* default K = 3 */
    double c[3] = {5, 1, 3};
    coproc__sched_task t0 = task_of(0, 3, c), t1 = task_of(1, 3, c);
    coproc__sched_ticket tk;
    for (int i = 0; i < 9; i++) {
        assert_int_equal(coproc__sched_place(&s, &t0, 0, &tk), i % 3);
        assert_true(tk.training);
    }
    assert_int_equal(coproc__sched_place(&s, &t0, 0, &tk), 1);
    assert_false(tk.training);
    /* another kind trains on its own */
    assert_int_equal(coproc__sched_place(&s, &t1, 0, &tk), 0);
    assert_true(tk.training);
    /* a device not allowed is not waited for */
    coproc__sched_task t2 = task_of(2, 3, c);
    t2.allowed = 0x3;
    for (int i = 0; i < 6; i++) assert_int_equal(coproc__sched_place(&s, &t2, 0, NULL), i % 2);
    assert_int_equal(coproc__sched_place(&s, &t2, 0, NULL), 1);
    /* after training, a device whose model is still untrusted is left out; none
     * trusted: round-robin */
    double u[3] = {-1, -1, -1};
    coproc__sched_task t3 = task_of(0, 3, u);
    int a = coproc__sched_place(&s, &t3, 0, NULL), b = coproc__sched_place(&s, &t3, 0, NULL);
    assert_true(a != b);
    coproc__sched_destroy(&s);
}

/* ---- simulator */

/* A 16-core CPU (host memory) and a GPU behind a ~25 GB/s bus: the GPU is much
 * faster at compute but pays the bus, so neither wins every kind. */
static void two_comparable(coproc__sim_device d[2])
{
    memset(d, 0, 2 * sizeof *d);
    d[0] = (coproc__sim_device){.name = "cpu", .host = 1,
        .throughput = {2.0e9, 1.5e9, 3.0e8, 3.0e8},
        .latency = {20e-6, 20e-6, 50e-6, 50e-6}, .noise = 0.05};
    d[1] = (coproc__sim_device){.name = "gpu",
        .throughput = {2.0e10, 1.5e10, 3.0e9, 3.0e9},
        .latency = {10e-6, 10e-6, 30e-6, 30e-6},
        .bus_bandwidth = 25e9, .bus_latency = 10e-6, .noise = 0.05};
}

/* The same CPU and a device ten times faster at everything, sharing host memory. */
static void one_ten_times(coproc__sim_device d[2])
{
    two_comparable(d);
    d[1] = d[0];
    d[1].name = "fast";
    for (int k = 0; k < COPROC__SIM_KINDS; k++) d[1].throughput[k] *= 10, d[1].latency[k] /= 10;
}

static coproc__sim_workload_config workload_cfg(uint64_t seed)
{
    coproc__sim_workload_config w = {.tasks = 1000, .streams = 16, .min_rows = 1e4,
                                     .max_rows = 1e7, .chain_p = 0.5, .seed = seed};
    return w;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void test_residency(void **state)
{
    coproc__sim_device d[3];
    two_comparable(d);
    d[2] = d[1];
    coproc__sim_task t;
    memset(&t, 0, sizeof t);
    t.kind = COPROC__SIM_AGG, t.rows = 1e6, t.inputs = 1, t.out_bytes = 8;
    t.in[0] = (coproc__sim_input){.bytes = 8e6, .resident = 1, .src = -1};
    t.after = -1, t.result_to_host = 1;
    int on1 = 1, on_host = COPROC__SIM_HOST;
    double c1 = coproc__sim_expected_cost(d, 3, &t, 1, &on1);
    double c2 = coproc__sim_expected_cost(d, 3, &t, 2, &on1);
    double h1 = coproc__sim_expected_cost(d, 3, &t, 1, &on_host);
    assert_true(c1 < c2 && c1 < h1);
    assert_true(c2 > h1); /* device to device goes through the host: two hops */
    coproc__sched s;
    init_policy(&s, COPROC__POLICY_WTAR, 3, -1);
    double c[3] = {coproc__sim_expected_cost(d, 3, &t, 0, &on1), c1, c2};
    coproc__sched_task st = task_of(COPROC__SIM_AGG, 3, c);
    assert_int_equal(coproc__sched_place(&s, &st, 0, NULL), 1);
    coproc__sched_destroy(&s);
}

static void test_sim_determinism(void **state)
{
    coproc__sim_device d[2];
    two_comparable(d);
    coproc__sim_workload_config w = workload_cfg(42);
    coproc__sim_task *tasks = malloc(w.tasks * sizeof *tasks);
    coproc__sim_workload(&w, tasks);
    coproc__sched_config cfg = coproc__sched_defaults(2);
    coproc__sim_result a, b, c;
    cfg.policy = COPROC__POLICY_PBO;
    double t0 = now_s();
    assert_int_equal(coproc__sim_run(d, 2, tasks, w.tasks, &cfg, COPROC__SIM_EST_LEARNED, 7, &a), 0);
    double t1 = now_s();
    assert_int_equal(coproc__sim_run(d, 2, tasks, w.tasks, &cfg, COPROC__SIM_EST_LEARNED, 7, &b), 0);
    assert_true(a.makespan == b.makespan);
    assert_memory_equal(&a, &b, sizeof a);
    assert_int_equal(a.tasks_on[0] + a.tasks_on[1], w.tasks);
    assert_int_equal(coproc__sim_run(d, 2, tasks, w.tasks, &cfg, COPROC__SIM_EST_LEARNED, 8, &c), 0);
    assert_true(c.makespan != a.makespan);
    printf("# simulator: 1000 tasks in %.2f ms\n", (t1 - t0) * 1e3);
    assert_true(t1 - t0 < 0.5); /* milliseconds, with a wide margin for slow CI */
    /* the bound is below every schedule */
    coproc__oracle_bound ob;
    assert_int_equal(coproc__oracle_lower_bound(d, 2, tasks, w.tasks, 7, &ob), 0);
    assert_true(ob.bound > 0 && ob.bound <= a.makespan);
    free(tasks);
}

typedef struct scenario_figures {
    double best_single;
    double makespan[COPROC__POLICY_COUNT];
    double bound;
} scenario_figures;

static void run_scenario(const char *name, const coproc__sim_device *d, int ndev, uint64_t seed,
                         coproc__sim_estimates est, scenario_figures *f)
{
    coproc__sim_workload_config w = workload_cfg(seed);
    coproc__sim_task *tasks = malloc(w.tasks * sizeof *tasks);
    coproc__sim_workload(&w, tasks);
    coproc__oracle_bound ob;
    assert_int_equal(coproc__oracle_lower_bound(d, ndev, tasks, w.tasks, seed, &ob), 0);
    f->bound = ob.bound;
    f->best_single = INFINITY;
    coproc__sim_result r;
    coproc__sched_config cfg = coproc__sched_defaults(ndev);
    printf("# %s (%s estimates): oracle bound %.4f s (lp %.4f, critical path %.4f)\n", name,
           est == COPROC__SIM_EST_TRUE ? "true" : "learned", ob.bound, ob.lp, ob.critical_path);
    for (int dv = 0; dv < ndev; dv++) {
        cfg.policy = COPROC__POLICY_FIXED;
        cfg.fixed_device = dv;
        assert_int_equal(coproc__sim_run(d, ndev, tasks, w.tasks, &cfg, est, seed, &r), 0);
        assert_true(r.makespan >= ob.bound * (1 - 1e-9));
        printf("#   %-6s alone   makespan %.4f s\n", d[dv].name, r.makespan);
        if (r.makespan < f->best_single) f->best_single = r.makespan;
    }
    for (int p = 0; p < COPROC__POLICY_COUNT; p++) {
        cfg.policy = (coproc__policy)p;
        cfg.fixed_device = 0;
        if (p == COPROC__POLICY_FIXED) {
            f->makespan[p] = f->best_single;
            continue;
        }
        assert_int_equal(coproc__sim_run(d, ndev, tasks, w.tasks, &cfg, est, seed, &r), 0);
        assert_true(r.makespan >= ob.bound * (1 - 1e-9));
        f->makespan[p] = r.makespan;
        printf("#   %-6s makespan %.4f s  speedup_vs_best_single %.3f  oracle_ratio %.3f  "
               "util", coproc__policy_name((coproc__policy)p), r.makespan,
               f->best_single / r.makespan, r.makespan / ob.bound);
        for (int dv = 0; dv < ndev; dv++) printf(" %.2f", r.utilization[dv]);
        printf("  est_err %.3f  moved %.2f GB\n", r.est_error, r.bytes_moved / 1e9);
    }
    free(tasks);
}

static void test_sim_two_comparable(void **state)
{
    coproc__sim_device d[2];
    two_comparable(d);
    for (int e = 0; e < 2; e++) {
        scenario_figures f;
        run_scenario("two comparable devices", d, 2, 1234, (coproc__sim_estimates)e, &f);
        double wtar = f.makespan[COPROC__POLICY_WTAR];
        assert_true(f.best_single / wtar >= 1.3);
        assert_true(wtar / f.bound <= 1.10);
        for (int p = 0; p < COPROC__POLICY_COUNT; p++) assert_true(wtar <= f.makespan[p] * 1.0000001);
    }
}

static void test_sim_one_ten_times(void **state)
{
    coproc__sim_device d[2];
    one_ten_times(d);
    for (int e = 0; e < 2; e++) {
        scenario_figures f;
        run_scenario("one device 10x faster", d, 2, 99, (coproc__sim_estimates)e, &f);
        double wtar = f.makespan[COPROC__POLICY_WTAR];
        assert_true(wtar <= f.best_single * 1.05);
        for (int p = 0; p < COPROC__POLICY_COUNT; p++) assert_true(wtar <= f.makespan[p] * 1.0000001);
    }
}

/* ---- concurrency and decision time */

typedef struct worker_arg {
    coproc__sched *s;
    int id;
    int placed;
} worker_arg;

static void *worker(void *p)
{
    worker_arg *a = p;
    double c[4] = {1 + a->id, 2, 3, 4 - a->id * 0.5};
    coproc__sched_task t = task_of(a->id, 4, c);
    for (int i = 0; i < 20000; i++) {
        coproc__sched_ticket tk;
        if (coproc__sched_place(a->s, &t, i, &tk) < 0) continue;
        coproc__sched_start(a->s, &tk, i);
        coproc__sched_finish(a->s, &tk, i + 0.5, 0.5);
        a->placed++;
    }
    return NULL;
}

static void test_concurrency(void **state)
{
    coproc__sched s;
    init_policy(&s, COPROC__POLICY_WTAR, 4, 0);
    pthread_t th[4];
    worker_arg a[4];
    for (int i = 0; i < 4; i++) {
        a[i] = (worker_arg){.s = &s, .id = i};
        assert_int_equal(pthread_create(&th[i], NULL, worker, &a[i]), 0);
    }
    uint64_t placed = 0, finished = 0;
    for (int i = 0; i < 4; i++) {
        pthread_join(th[i], NULL);
        assert_int_equal(a[i].placed, 20000);
    }
    for (int d = 0; d < 4; d++) {
        coproc__sched_device_stats st;
        coproc__sched_stats(&s, d, &st);
        placed += st.placed, finished += st.finished;
        assert_int_equal(st.running, 0);
        assert_true(st.queued == 0);
        assert_true(coproc__sched_load(&s, d, 0) == 0);
    }
    assert_int_equal(placed, 80000);
    assert_int_equal(finished, 80000);
    coproc__sched_destroy(&s);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static void test_decision_time(void **state)
{
    enum { N = 100000 };
    coproc__sched s;
    init_policy(&s, COPROC__POLICY_WTAR, 4, 0);
    double *ns = malloc(N * sizeof *ns);
    double c[4] = {1e-3, 2e-3, 1.5e-3, 3e-3};
    coproc__sched_task t = task_of(0, 4, c);
    for (int i = 0; i < N; i++) {
        coproc__sched_ticket tk;
        t.kind = i % 8;
        double t0 = now_s();
        coproc__sched_place(&s, &t, i * 1e-3, &tk);
        double t1 = now_s();
        ns[i] = (t1 - t0) * 1e9;
        coproc__sched_start(&s, &tk, i * 1e-3);
        coproc__sched_finish(&s, &tk, i * 1e-3, 1e-3);
    }
    qsort(ns, N, sizeof *ns, cmp_double);
    printf("# decision time (WTAR, 4 devices): median %.0f ns, p99 %.0f ns\n", ns[N / 2],
           ns[N * 99 / 100]);
    free(ns);
    coproc__sched_destroy(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_policy_names),
        cmocka_unit_test(test_srt),
        cmocka_unit_test(test_wtar_alternates),
        cmocka_unit_test(test_wtar_fast_device),
        cmocka_unit_test(test_wtar_running_task),
        cmocka_unit_test(test_rr),
        cmocka_unit_test(test_tbo),
        cmocka_unit_test(test_pbo),
        cmocka_unit_test(test_static),
        cmocka_unit_test(test_fixed_forced_allowed),
        cmocka_unit_test(test_training),
        cmocka_unit_test(test_residency),
        cmocka_unit_test(test_sim_determinism),
        cmocka_unit_test(test_sim_two_comparable),
        cmocka_unit_test(test_sim_one_ten_times),
        cmocka_unit_test(test_concurrency),
        cmocka_unit_test(test_decision_time),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
