/* workload.c - coproc-workload: HyPE-style workloads (streams of aggregations,
 * selections, sorts and joins over host-resident data of mixed sizes) placed by
 * each policy and by each single device alone. With --simulate it runs on
 * simulated devices (runtime/sim.c) driven by the real scheduler and compares
 * every policy with an oracle lower bound (runtime/oracle.c). Running the same
 * workload on real devices needs the asynchronous runtime, which is not built
 * yet: without --simulate the program says so and exits 69. */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sysexits.h>
#include <time.h>

#include <jansson.h>

#include "oracle.h"
#include "scheduler.h"
#include "sim.h"

static void usage(FILE *f)
{
    fprintf(f, "usage: coproc-workload --simulate [--scenario comparable|ten-times] [--policy P]\n"
               "                       [--tasks N] [--seed S] [--estimates true|learned] [--json]\n"
               "  P: wtar, srt, rr, tbo, pbo, static, fixed (default: all)\n");
}

/* A 16-core CPU in host memory and a GPU ~10x faster at compute behind a 25 GB/s bus. */
static void scenario_comparable(coproc__sim_device d[2])
{
    memset(d, 0, 2 * sizeof *d);
    d[0] = (coproc__sim_device){.name = "cpu", .host = 1,
                                .throughput = {2.0e9, 1.5e9, 3.0e8, 3.0e8},
                                .latency = {20e-6, 20e-6, 50e-6, 50e-6}, .noise = 0.05};
    d[1] = (coproc__sim_device){.name = "gpu", .throughput = {2.0e10, 1.5e10, 3.0e9, 3.0e9},
                                .latency = {10e-6, 10e-6, 30e-6, 30e-6},
                                .bus_bandwidth = 25e9, .bus_latency = 10e-6, .noise = 0.05};
}

/* The same CPU and a device ten times faster at everything, sharing host memory. */
static void scenario_ten_times(coproc__sim_device d[2])
{
    scenario_comparable(d);
    d[1] = d[0];
    d[1].name = "fast";
    for (int k = 0; k < COPROC__SIM_KINDS; k++) {
        d[1].throughput[k] *= 10;
        d[1].latency[k] /= 10;
    }
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Median seconds of one WTAR decision over 4 devices (place, start, finish). */
static double decision_time(void)
{
    enum { SAMPLES = 2001, BATCH = 100 };
    coproc__sched_config cfg = coproc__sched_defaults(4);
    coproc__sched s;
    if (coproc__sched_init(&s, &cfg) != 0)
        return -1;
    coproc__sched_task t = {.kind = -1, .forced = -1};
    for (int d = 0; d < 4; d++) {
        t.cost[d] = 1e-3 * (d + 1);
        t.transfer[d] = -1;
    }
    double *samples = malloc(SAMPLES * sizeof *samples);
    if (!samples) {
        coproc__sched_destroy(&s);
        return -1;
    }
    for (int i = 0; i < SAMPLES; i++) {
        double t0 = now_s();
        for (int b = 0; b < BATCH; b++) {
            coproc__sched_ticket tk;
            int d = coproc__sched_place(&s, &t, t0, &tk);
            coproc__sched_start(&s, &tk, t0);
            coproc__sched_finish(&s, &tk, t0, t.cost[d]);
        }
        samples[i] = (now_s() - t0) / BATCH;
    }
    coproc__sched_destroy(&s);
    qsort(samples, SAMPLES, sizeof *samples, cmp_double);
    double median = samples[SAMPLES / 2];
    free(samples);
    return median;
}

int main(int argc, char **argv)
{
    int simulate = 0, json = 0, tasks_n = 1000, only_policy = -1;
    uint64_t seed = 1234;
    const char *scenario = "comparable";
    coproc__sim_estimates est = COPROC__SIM_EST_LEARNED;
    static const struct option longopts[] = {
        {"simulate", no_argument, NULL, 's'},     {"json", no_argument, NULL, 'j'},
        {"policy", required_argument, NULL, 'p'}, {"scenario", required_argument, NULL, 'c'},
        {"tasks", required_argument, NULL, 'n'},  {"seed", required_argument, NULL, 'S'},
        {"estimates", required_argument, NULL, 'e'}, {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0}};
    int c;
    while ((c = getopt_long(argc, argv, "sjp:c:n:S:e:h", longopts, NULL)) != -1) {
        switch (c) {
        case 's': simulate = 1; break;
        case 'j': json = 1; break;
        case 'p':
            if ((only_policy = coproc__policy_parse(optarg)) < 0) {
                fprintf(stderr, "coproc-workload: unknown policy '%s'\n", optarg);
                return EX_USAGE;
            }
            break;
        case 'c': scenario = optarg; break;
        case 'n': tasks_n = atoi(optarg); break;
        case 'S': seed = strtoull(optarg, NULL, 10); break;
        case 'e':
            if (strcmp(optarg, "true") == 0) est = COPROC__SIM_EST_TRUE;
            else if (strcmp(optarg, "learned") == 0) est = COPROC__SIM_EST_LEARNED;
            else { usage(stderr); return EX_USAGE; }
            break;
        case 'h': usage(stdout); return 0;
        default: usage(stderr); return EX_USAGE;
        }
    }
    if (tasks_n < 1 || optind < argc) {
        usage(stderr);
        return EX_USAGE;
    }
    if (!simulate) {
        fprintf(stderr, "coproc-workload: running on real devices needs the asynchronous "
                        "runtime, which is not built yet; use --simulate\n");
        return EX_UNAVAILABLE;
    }
    coproc__sim_device devs[2];
    if (strcmp(scenario, "comparable") == 0) scenario_comparable(devs);
    else if (strcmp(scenario, "ten-times") == 0) scenario_ten_times(devs);
    else { usage(stderr); return EX_USAGE; }
    const int ndev = 2;

    coproc__sim_workload_config w = {.tasks = tasks_n, .streams = 16, .min_rows = 1e4,
                                     .max_rows = 1e7, .chain_p = 0.5, .seed = seed};
    coproc__sim_task *tasks = malloc((size_t)tasks_n * sizeof *tasks);
    if (!tasks)
        return EX_OSERR;
    coproc__sim_workload(&w, tasks);
    coproc__oracle_bound ob;
    if (coproc__oracle_lower_bound(devs, ndev, tasks, tasks_n, seed, &ob) != 0)
        return EX_SOFTWARE;

    FILE *out = json ? stderr : stdout;
    json_t *jsingle = json_object(), *jpol = json_object();
    coproc__sched_config cfg = coproc__sched_defaults(ndev);
    coproc__sim_result r;
    double best_single = INFINITY;
    double t0 = now_s();
    fprintf(out, "scenario %s, %d tasks, %s estimates; oracle lower bound %.4f s\n", scenario,
            tasks_n, est == COPROC__SIM_EST_TRUE ? "true" : "learned", ob.bound);
    for (int d = 0; d < ndev; d++) {
        cfg.policy = COPROC__POLICY_FIXED;
        cfg.fixed_device = d;
        if (coproc__sim_run(devs, ndev, tasks, tasks_n, &cfg, est, seed, &r) != 0)
            return EX_SOFTWARE;
        fprintf(out, "  %-6s alone          makespan %.4f s\n", devs[d].name, r.makespan);
        json_object_set_new(jsingle, devs[d].name, json_real(r.makespan));
        if (r.makespan < best_single)
            best_single = r.makespan;
    }
    for (int p = 0; p < COPROC__POLICY_COUNT; p++) {
        if (only_policy >= 0 && p != only_policy)
            continue;
        cfg = coproc__sched_defaults(ndev);
        cfg.policy = (coproc__policy)p;
        if (coproc__sim_run(devs, ndev, tasks, tasks_n, &cfg, est, seed, &r) != 0)
            return EX_SOFTWARE;
        fprintf(out, "  %-6s makespan %.4f s  speedup vs best single %.3f  oracle ratio %.3f  "
                "utilization", coproc__policy_name((coproc__policy)p), r.makespan,
                best_single / r.makespan, r.makespan / ob.bound);
        json_t *j = json_object(), *ju = json_array();
        for (int d = 0; d < ndev; d++) {
            fprintf(out, " %.2f", r.utilization[d]);
            json_array_append_new(ju, json_real(r.utilization[d]));
        }
        fprintf(out, "  estimation error %.1f %%  moved %.2f GB\n", r.est_error * 100,
                r.bytes_moved / 1e9);
        json_object_set_new(j, "makespan_s", json_real(r.makespan));
        json_object_set_new(j, "speedup_vs_best_single", json_real(best_single / r.makespan));
        json_object_set_new(j, "oracle_ratio", json_real(r.makespan / ob.bound));
        json_object_set_new(j, "utilization", ju);
        json_object_set_new(j, "estimation_error", json_real(r.est_error));
        json_object_set_new(j, "bytes_moved", json_real(r.bytes_moved));
        json_object_set_new(jpol, coproc__policy_name((coproc__policy)p), j);
    }
    double wall = now_s() - t0;
    double decide = decision_time();
    fprintf(out, "simulated all runs in %.1f ms; scheduling decision (WTAR, 4 devices): %.0f ns "
                 "median\n", wall * 1e3, decide * 1e9);
    if (json) {
        json_t *doc = json_object();
        json_object_set_new(doc, "schema", json_string("coproc.workload"));
        json_object_set_new(doc, "schema_version", json_integer(1));
        json_object_set_new(doc, "simulated", json_true());
        json_object_set_new(doc, "scenario", json_string(scenario));
        json_object_set_new(doc, "tasks", json_integer(tasks_n));
        json_object_set_new(doc, "oracle_lower_bound_s", json_real(ob.bound));
        json_object_set_new(doc, "single_device_makespan_s", jsingle);
        json_object_set_new(doc, "policies", jpol);
        json_object_set_new(doc, "decision_time_median_s", json_real(decide));
        json_dumpf(doc, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
        fputc('\n', stdout);
        json_decref(doc);
    } else {
        json_decref(jsingle);
        json_decref(jpol);
    }
    free(tasks);
    return 0;
}
