/* workload.c - coproc-workload: HyPE-style workloads (streams of aggregations,
 * selections, group-bys, sorts and joins over host-resident data of mixed
 * sizes) placed by each policy and by each single device alone, every result
 * checked against a C reference (workload_real.c). With --simulate the
 * devices are simulated ones (COPROC_DEVICES=sim:..., runtime/backend/sim/):
 * PoCL's CPU and an H100 as profiles/ describe them, on a virtual clock. */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sysexits.h>
#include <time.h>
#include <unistd.h>

#include "coproc.h"
#include "coproc/inspect.h" /* policy names */
#include "workload.h"

/* The simulated devices of --simulate: PoCL's CPU as calibrated on the CI
 * machine and the H100 built from its measured figures. */
#define SIM_PROFILES "pocl-ci.json", "h100-synthetic.json"

static void usage(FILE *f)
{
    fprintf(f,
        "usage: coproc-workload [--policy P] [--tasks N] [--seed S] [--json] [--quiet]\n"
        "                       [--bus-bound] [--streams N] [--window N] [--min-rows N]\n"
        "                       [--max-rows N] [--fixed-device D] [--devices SPEC]\n"
        "                       [--queue-depth N] [--budget BYTES] [--no-zero-copy] [--pinned]\n"
        "                       [--repeat R] [--simulate]\n"
        "Runs a HyPE-style workload (streams of reductions, selections, group-bys, sorts\n"
        "and hash joins over host data of mixed sizes) with each placement policy and\n"
        "with each device alone; prints makespan, speed-up over the fastest single\n"
        "device, per-device utilization and operators, estimation error and bytes moved.\n"
        "  P                   wtar, srt, rr, tbo, pbo, static, fixed (default: all)\n"
        "  --tasks N           operators per run (default 200)\n"
        "  --seed S            workload seed (default 1234)\n"
        "  --json              a versioned JSON document on stdout (the report goes\n"
        "                      to stderr)\n"
        "  --quiet             no progress lines (they appear only when stderr is a\n"
        "                      terminal), and with --json no report on stderr\n"
        "Each run opens a fresh\n"
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
        "  --simulate          on simulated devices (unless --devices names others):\n"
        "                      sim:pocl-ci.json,sim:h100-synthetic.json from the\n"
        "                      profiles directory (COPROC_PROFILES overrides it); times\n"
        "                      are on their virtual clock, results still computed\n"
        "Exit status: 0 ok, 64 usage, 69 no OpenCL device, 70 wrong results.\n");
}

double wl_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

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


int main(int argc, char **argv)
{
    int simulate = 0, json = 0, quiet = 0, tasks_n = -1, only_policy = -1;
    uint64_t seed = 1234;
    wl_real_config rc = {.streams = 4, .window = 2, .repeat = 1};
    uint64_t min_rows = 0, max_rows = 0;
    enum { O_STREAMS = 256, O_WINDOW, O_MIN_ROWS, O_MAX_ROWS, O_BUS, O_FIXED, O_DEVICES,
           O_QDEPTH, O_BUDGET, O_NOZC, O_PINNED, O_REPEAT };
    static const struct option longopts[] = {
        {"simulate", no_argument, NULL, 's'},     {"json", no_argument, NULL, 'j'},
        {"policy", required_argument, NULL, 'p'},
        {"tasks", required_argument, NULL, 'n'},  {"seed", required_argument, NULL, 'S'},
        {"help", no_argument, NULL, 'h'},
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
    while ((c = getopt_long(argc, argv, "sjqp:n:S:h", longopts, NULL)) != -1) {
        switch (c) {
        case 's': simulate = 1; break;
        case 'j': json = 1; break;
        case 'q': quiet = 1; break;
        case 'p':
            if ((only_policy = coproc_policy_parse(optarg)) < 0) {
                fprintf(stderr, "coproc-workload: unknown policy '%s'\n", optarg);
                return EX_USAGE;
            }
            break;
        case 'n':
            if ((tasks_n = parse_int(optarg, 100000000)) < 0) {
                fprintf(stderr, "coproc-workload: --tasks %s: a positive count\n", optarg);
                return EX_USAGE;
            }
            break;
        case 'S': seed = strtoull(optarg, NULL, 10); break;
        case 'h': usage(stdout); return 0;
        case O_STREAMS: case O_WINDOW: case O_QDEPTH: case O_REPEAT: {
            int v = parse_int(optarg, 4096);
            if (v < 0) {
                fprintf(stderr, "coproc-workload: %s: a count from 1 to 4096\n", optarg);
                return EX_USAGE;
            }
            *(c == O_STREAMS ? &rc.streams : c == O_WINDOW ? &rc.window
              : c == O_REPEAT ? &rc.repeat : &rc.queue_depth) = v;
           
            break;
        }
        case O_MIN_ROWS: case O_MAX_ROWS: {
            uint64_t v = parse_count(optarg);
            if (v < 1 || v > UINT32_MAX) {
                fprintf(stderr, "coproc-workload: %s rows: from 1 to 2^32-1\n", optarg);
                return EX_USAGE;
            }
            *(c == O_MIN_ROWS ? &min_rows : &max_rows) = v;
           
            break;
        }
        case O_BUS: rc.bus_bound = 1; break;
        case O_FIXED: {
            char *end;
            long v = strtol(optarg, &end, 10);
            if (*optarg == '\0' || *end || v < 0 || v > 15) {
                fprintf(stderr, "coproc-workload: --fixed-device %s: a device index\n", optarg);
                return EX_USAGE;
            }
            rc.fixed_device = (int)v;
           
            break;
        }
        case O_DEVICES: rc.devices = optarg; break;
        case O_BUDGET:
            if (!(rc.budget_bytes = parse_count(optarg))) {
                fprintf(stderr, "coproc-workload: --budget %s: bytes, or with K/M/G\n", optarg);
                return EX_USAGE;
            }
           
            break;
        case O_NOZC: rc.disable_zero_copy = 1; break;
        case O_PINNED: rc.pinned = 1; break;
        default: usage(stderr); return EX_USAGE;
        }
    }
    if (optind < argc) {
        usage(stderr);
        return EX_USAGE;
    }
    char sim_spec[4200];
    if (simulate && !rc.devices && !getenv("COPROC_DEVICES")) {
        const char *dir = getenv("COPROC_PROFILES");
        if (!dir || !*dir)
            dir = access(COPROC_PROFILES_DIR, R_OK) == 0 ? COPROC_PROFILES_DIR
                                                         : COPROC_PROFILES_INSTALLED;
        const char *names[] = {SIM_PROFILES};
        snprintf(sim_spec, sizeof sim_spec, "sim:%s/%s,sim:%s/%s", dir, names[0], dir, names[1]);
        rc.devices = sim_spec;
    }
    const char *env = getenv("COPROC_DEVICES"), *spec = env && *env ? env : rc.devices;
    rc.simulated = spec && strncmp(spec, "sim:", 4) == 0;

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
