/* workload.c - coproc-workload: HyPE-style workloads (streams of aggregations,
 * selections, sorts and joins over host-resident data of mixed sizes) placed by
 * each policy and by each single device alone. With --simulate it runs on
 * simulated devices (runtime/sim.c) driven by the real scheduler and compares
 * every policy with an oracle lower bound (runtime/oracle.c). Without it the
 * same kind of workload runs on the real OpenCL devices through coproc_submit
 * (workload_real.c), every result checked against a C reference. */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sysexits.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "sched/oracle.h"
#include "sched/scheduler.h"
#include "sched/sim.h"
#include "workload.h"

static void usage(FILE *f)
{
    fprintf(f,
        "usage: coproc-workload [--policy P] [--tasks N] [--seed S] [--json] [--quiet]\n"
        "                       [--bus-bound] [--streams N] [--window N] [--min-rows N]\n"
        "                       [--max-rows N] [--fixed-device D] [--devices SPEC]\n"
        "                       [--queue-depth N] [--budget BYTES] [--no-zero-copy] [--pinned]\n"
        "                       [--repeat R]\n"
        "       coproc-workload --simulate [--scenario comparable|ten-times] [--policy P]\n"
        "                       [--tasks N] [--seed S] [--estimates true|learned] [--json]\n"
        "                       [--quiet]\n"
        "Runs a HyPE-style workload (streams of reductions, selections, group-bys, sorts\n"
        "and hash joins over host data of mixed sizes) with each placement policy and\n"
        "with each device alone; prints makespan, speed-up over the fastest single\n"
        "device, per-device utilization and operators, estimation error and bytes moved.\n"
        "  P                   wtar, srt, rr, tbo, pbo, static, fixed (default: all)\n"
        "  --tasks N           operators per run (default 200; simulated 1000)\n"
        "  --seed S            workload seed (default 1234)\n"
        "  --json              a versioned JSON document on stdout (the report goes\n"
        "                      to stderr)\n"
        "  --quiet             no progress lines (they appear only when stderr is a\n"
        "                      terminal), and with --json no report on stderr\n"
        "On the real OpenCL devices (without --simulate): each run opens a fresh\n"
        "runtime, warms up (every operator kind on every device over separate training\n"
        "columns, not timed: cost models trained, kernels built), then times the\n"
        "workload; every result is checked against a C reference (exit 70 if wrong).\n"
        "  --bus-bound         reductions and selections over large distinct columns,\n"
        "                      where moving host data dominates (default rows\n"
        "                      2^20..2^22)\n"
        "  --streams N         application threads submitting (default 4)\n"
        "  --window N          operators each stream keeps in flight, waited on in\n"
        "                      order (default 2)\n"
        "  --min-rows N        smallest table, rows (default 16K; K/M/G suffixes)\n"
        "  --max-rows N        largest table, rows (default 1M); sizes are\n"
        "                      log-uniform in between\n"
        "  --fixed-device D    the device of policy 'fixed' (default 0)\n"
        "  --devices SPEC      coproc_options.devices: all, cpu, gpu, 0,2 ...\n"
        "                      (COPROC_DEVICES overrides it)\n"
        "  --queue-depth N     each device's ready queue (default 100)\n"
        "  --budget BYTES      device memory per device (K/M/G; default 70 %%)\n"
        "  --no-zero-copy      copy to host-unified devices too\n"
        "  --repeat R          run each configuration R times and report the run with\n"
        "                      the median makespan (default 1)\n"
        "  --pinned            tables in coproc_column_host_alloc (pinned) memory\n"
        "                      instead of wrapped malloc memory\n"
        "Simulator (--simulate): two simulated devices, compared with an oracle bound.\n"
        "  --scenario S        comparable (CPU + GPU) or ten-times (default comparable)\n"
        "  --estimates E       true or learned cost estimates (default learned)\n"
        "Exit status: 0 ok, 64 usage, 69 no OpenCL device, 70 wrong results.\n");
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

double wl_now(void)
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

double wl_decision_time(void)
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
        double t0 = wl_now();
        for (int b = 0; b < BATCH; b++) {
            coproc__sched_ticket tk;
            int d = coproc__sched_place(&s, &t, t0, &tk);
            coproc__sched_start(&s, &tk, t0);
            coproc__sched_finish(&s, &tk, t0, t.cost[d]);
        }
        samples[i] = (wl_now() - t0) / BATCH;
    }
    coproc__sched_destroy(&s);
    qsort(samples, SAMPLES, sizeof *samples, cmp_double);
    double median = samples[SAMPLES / 2];
    free(samples);
    return median;
}

/* A count with an optional binary suffix (K, M, G); 0 when malformed. */
static uint64_t parse_count(const char *arg)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(arg, &end, 10);
    if (errno || end == arg || arg[0] == '-')
        return 0;
    int shift = 0;
    switch (*end) {
    case 'k': case 'K': shift = 10; end++; break;
    case 'm': case 'M': shift = 20; end++; break;
    case 'g': case 'G': shift = 30; end++; break;
    default: break;
    }
    if (*end != '\0' || v > (UINT64_MAX >> shift))
        return 0;
    return (uint64_t)v << shift;
}

/* A positive int, or -1. */
static int parse_int(const char *arg, int max)
{
    uint64_t v = parse_count(arg);
    return v >= 1 && v <= (uint64_t)max ? (int)v : -1;
}

enum { OPT_REAL = 1, OPT_SIM = 2 }; /* which mode an option belongs to */

int main(int argc, char **argv)
{
    int simulate = 0, json = 0, quiet = 0, tasks_n = -1, only_policy = -1;
    uint64_t seed = 1234;
    const char *scenario = "comparable";
    coproc__sim_estimates est = COPROC__SIM_EST_LEARNED;
    wl_real_config rc = {.streams = 4, .window = 2, .repeat = 1};
    uint64_t min_rows = 0, max_rows = 0;
    int modes = 0; /* OPT_* of the mode-specific options given */
    enum { O_STREAMS = 256, O_WINDOW, O_MIN_ROWS, O_MAX_ROWS, O_BUS, O_FIXED, O_DEVICES,
           O_QDEPTH, O_BUDGET, O_NOZC, O_PINNED, O_REPEAT };
    static const struct option longopts[] = {
        {"simulate", no_argument, NULL, 's'},     {"json", no_argument, NULL, 'j'},
        {"policy", required_argument, NULL, 'p'}, {"scenario", required_argument, NULL, 'c'},
        {"tasks", required_argument, NULL, 'n'},  {"seed", required_argument, NULL, 'S'},
        {"estimates", required_argument, NULL, 'e'}, {"help", no_argument, NULL, 'h'},
        {"quiet", no_argument, NULL, 'q'},
        {"streams", required_argument, NULL, O_STREAMS},
        {"window", required_argument, NULL, O_WINDOW},
        {"min-rows", required_argument, NULL, O_MIN_ROWS},
        {"max-rows", required_argument, NULL, O_MAX_ROWS},
        {"bus-bound", no_argument, NULL, O_BUS},
        {"fixed-device", required_argument, NULL, O_FIXED},
        {"devices", required_argument, NULL, O_DEVICES},
        {"queue-depth", required_argument, NULL, O_QDEPTH},
        {"budget", required_argument, NULL, O_BUDGET},
        {"no-zero-copy", no_argument, NULL, O_NOZC},
        {"pinned", no_argument, NULL, O_PINNED},
        {"repeat", required_argument, NULL, O_REPEAT},
        {NULL, 0, NULL, 0}};
    int c;
    while ((c = getopt_long(argc, argv, "sjqp:c:n:S:e:h", longopts, NULL)) != -1) {
        switch (c) {
        case 's': simulate = 1; break;
        case 'j': json = 1; break;
        case 'q': quiet = 1; break;
        case 'p':
            if ((only_policy = coproc__policy_parse(optarg)) < 0) {
                fprintf(stderr, "coproc-workload: unknown policy '%s'\n", optarg);
                return EX_USAGE;
            }
            break;
        case 'c': scenario = optarg; modes |= OPT_SIM; break;
        case 'n':
            if ((tasks_n = parse_int(optarg, 100000000)) < 0) {
                fprintf(stderr, "coproc-workload: --tasks %s: a positive count\n", optarg);
                return EX_USAGE;
            }
            break;
        case 'S': seed = strtoull(optarg, NULL, 10); break;
        case 'e':
            modes |= OPT_SIM;
            if (strcmp(optarg, "true") == 0) est = COPROC__SIM_EST_TRUE;
            else if (strcmp(optarg, "learned") == 0) est = COPROC__SIM_EST_LEARNED;
            else { usage(stderr); return EX_USAGE; }
            break;
        case 'h': usage(stdout); return 0;
        case O_STREAMS: case O_WINDOW: case O_QDEPTH: case O_REPEAT: {
            int v = parse_int(optarg, 4096);
            if (v < 0) {
                fprintf(stderr, "coproc-workload: %s: a count from 1 to 4096\n", optarg);
                return EX_USAGE;
            }
            *(c == O_STREAMS ? &rc.streams : c == O_WINDOW ? &rc.window
              : c == O_REPEAT ? &rc.repeat : &rc.queue_depth) = v;
            modes |= OPT_REAL;
            break;
        }
        case O_MIN_ROWS: case O_MAX_ROWS: {
            uint64_t v = parse_count(optarg);
            if (v < 1 || v > UINT32_MAX) {
                fprintf(stderr, "coproc-workload: %s rows: from 1 to 2^32-1\n", optarg);
                return EX_USAGE;
            }
            *(c == O_MIN_ROWS ? &min_rows : &max_rows) = v;
            modes |= OPT_REAL;
            break;
        }
        case O_BUS: rc.bus_bound = 1; modes |= OPT_REAL; break;
        case O_FIXED: {
            char *end;
            long v = strtol(optarg, &end, 10);
            if (*optarg == '\0' || *end || v < 0 || v > 15) {
                fprintf(stderr, "coproc-workload: --fixed-device %s: a device index\n", optarg);
                return EX_USAGE;
            }
            rc.fixed_device = (int)v;
            modes |= OPT_REAL;
            break;
        }
        case O_DEVICES: rc.devices = optarg; modes |= OPT_REAL; break;
        case O_BUDGET:
            if (!(rc.budget_bytes = parse_count(optarg))) {
                fprintf(stderr, "coproc-workload: --budget %s: bytes, or with K/M/G\n", optarg);
                return EX_USAGE;
            }
            modes |= OPT_REAL;
            break;
        case O_NOZC: rc.disable_zero_copy = 1; modes |= OPT_REAL; break;
        case O_PINNED: rc.pinned = 1; modes |= OPT_REAL; break;
        default: usage(stderr); return EX_USAGE;
        }
    }
    if (optind < argc) {
        usage(stderr);
        return EX_USAGE;
    }
    if (modes & (simulate ? OPT_REAL : OPT_SIM)) {
        fprintf(stderr, "coproc-workload: %s\n", simulate
                ? "--streams, --window, --min-rows, --max-rows, --bus-bound, --fixed-device, "
                  "--devices, --queue-depth, --budget, --no-zero-copy, --pinned and --repeat "
                  "are for real devices, not --simulate"
                : "--scenario and --estimates need --simulate");
        return EX_USAGE;
    }
    if (!simulate) {
        rc.tasks = tasks_n > 0 ? tasks_n : 200;
        rc.min_rows = min_rows ? min_rows : rc.bus_bound ? (size_t)1 << 20 : (size_t)1 << 14;
        rc.max_rows = max_rows ? max_rows : rc.bus_bound ? (size_t)1 << 22 : (size_t)1 << 20;
        if (rc.max_rows < rc.min_rows) {
            if (max_rows && min_rows) {
                fprintf(stderr, "coproc-workload: --max-rows below --min-rows\n");
                return EX_USAGE;
            }
            /* only one bound given, beyond the other's default: move that one */
            if (max_rows) rc.min_rows = rc.max_rows / 64 ? rc.max_rows / 64 : 1;
            else rc.max_rows = rc.min_rows <= UINT32_MAX / 64 ? rc.min_rows * 64 : UINT32_MAX;
        }
        rc.seed = seed;
        rc.only_policy = only_policy;
        rc.json = json;
        rc.progress = !quiet && isatty(STDERR_FILENO);
        rc.out = json ? (quiet ? NULL : stderr) : stdout;
        return wl_run_real(&rc);
    }
    if (tasks_n < 0)
        tasks_n = 1000;
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

    FILE *devnull = json && quiet ? fopen("/dev/null", "w") : NULL;
    FILE *out = json ? (devnull ? devnull : stderr) : stdout;
    json_t *jsingle = json_object(), *jpol = json_object();
    coproc__sched_config cfg = coproc__sched_defaults(ndev);
    coproc__sim_result r;
    double best_single = INFINITY;
    double t0 = wl_now();
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
    double wall = wl_now() - t0;
    double decide = wl_decision_time();
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
    if (devnull)
        fclose(devnull);
    return 0;
}
