/* main.c - coproc-bench: every operator on every device over sizes 2^20..2^28
 * (capped by device memory), data already on the device. Prints, measured in
 * the same run: throughput, the ratio to the device's memory bandwidth (from a
 * copy kernel) and, on CPU devices, the ratio to a plain multi-threaded C loop
 * (or qsort for sorts) on the same cores; then the cost of nulls: the same
 * operators with a validity bitmap (1 % nulls) and without, interleaved
 * (nulls.c); --joins: query joins on two key columns (joins.c). */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sysexits.h>
#include <time.h>

#include <hwloc.h>
#include <jansson.h>

#include "bench_util.h"
#include "cases.h"
#include "coproc/inspect.h"
#include "joins.h"
#include "skew.h"
#include "nulls.h"
#include "overhead.h"

#define BENCH_SCHEMA "coproc.bench"
#define BENCH_SCHEMA_VERSION 1

typedef struct options {
    int json, quiet, reps, min_log2, max_log2, overhead, nulls, no_zero_copy, joins, skew;
    const char *devices, *only;
    unsigned long long budget; /* device_budget_bytes; 0: the default */
} options;

static void usage(FILE *f)
{
    fprintf(f, "usage: coproc-bench [--json] [--device SPEC] [--max-log2 N] [--min-log2 N]\n"
               "                    [--reps N] [--only SUBSTRING] [--overhead[=CALLS]] [--quiet]\n"
               "  --json          versioned JSON document on stdout\n"
               "  --device SPEC   all, cpu, gpu or indices \"0,2\" (as COPROC_DEVICES)\n"
               "  --max-log2 N    largest size 2^N rows (default 28; capped by device memory)\n"
               "  --min-log2 N    smallest size 2^N rows (default 20)\n"
               "  --reps N        timed runs per point, best kept (default 3)\n"
               "  --only TEXT     only operators whose name contains TEXT\n"
               "  --nulls         only the cost of nulls: each operator with a validity\n"
               "                  bitmap (1 %% nulls) and without, interleaved; the ratio\n"
               "                  is the median of the rounds' (--reps, default 3) with\n"
               "                  their range (otherwise it follows the operators' table)\n"
               "  --budget BYTES  each device's budget (coproc_options.device_budget_bytes):\n"
               "                  host columns past it stream (--nulls: the host-column sum\n"
               "                  and group-by)\n"
               "  --no-zero-copy  copy host columns to CPU devices too (so that they stream\n"
               "                  past the budget there as on a GPU)\n"
               "  --joins         only query joins on two key columns: fused (the columns\n"
               "                  packed in the kernel) vs fused on one key column packed\n"
               "                  by hand vs one operator at a time, interleaved (--reps)\n"
               "  --skew          only a hash join over a skewed build side (90 %% of its\n"
               "                  rows on one key) against an unskewed one of the same size,\n"
               "                  both giving as many pairs, interleaved (--reps); with\n"
               "                  --budget (and --no-zero-copy) partitioned past the budget\n"
               "  --overhead[=N]  only the per-call overhead of a 1,000-row sum: a bare\n"
               "                  OpenCL kernel vs coproc_reduce vs submit+wait, N calls\n"
               "                  each (default 10000), interleaved in rounds\n");
}

/* Cores of the device's cpuset, for the C loops (CPU devices run on those). */
static int cores_of(const coproc_device_info *info)
{
    hwloc_bitmap_t set = hwloc_bitmap_alloc();
    int n = 0;
    if (set && info->cpuset[0] && hwloc_bitmap_list_sscanf(set, info->cpuset) == 0)
        n = hwloc_bitmap_weight(set);
    hwloc_bitmap_free(set);
    return n > 0 ? n : 1;
}

static void quiet_log(void *u, coproc_log_level l, const char *m) { (void)u; (void)l; (void)m; }

int main(int argc, char **argv)
{
    options o = {.reps = 3, .min_log2 = 20, .max_log2 = 28};
    static const struct option longopts[] = {
        {"json", no_argument, NULL, 'j'},           {"device", required_argument, NULL, 'd'},
        {"max-log2", required_argument, NULL, 'm'}, {"min-log2", required_argument, NULL, 'n'},
        {"reps", required_argument, NULL, 'r'},     {"only", required_argument, NULL, 'o'},
        {"quiet", no_argument, NULL, 'q'},          {"help", no_argument, NULL, 'h'},
        {"overhead", optional_argument, NULL, 'O'}, {"nulls", no_argument, NULL, 'N'},
        {"version", no_argument, NULL, 'V'},        {"budget", required_argument, NULL, 'b'},
        {"no-zero-copy", no_argument, NULL, 'Z'},   {"joins", no_argument, NULL, 'J'},
        {"skew", no_argument, NULL, 'S'},
        {NULL, 0, NULL, 0}};
    int c;
    while ((c = getopt_long(argc, argv, "jd:m:n:r:o:qhVb:Z", longopts, NULL)) != -1) {
        switch (c) {
        case 'j': o.json = 1; break;
        case 'd': o.devices = optarg; break;
        case 'm': o.max_log2 = atoi(optarg); break;
        case 'n': o.min_log2 = atoi(optarg); break;
        case 'r': o.reps = atoi(optarg); break;
        case 'o': o.only = optarg; break;
        case 'b':
            o.budget = strtoull(optarg, NULL, 10);
            break;
        case 'Z':
            o.no_zero_copy = 1;
            break;
        case 'q': o.quiet = 1; break;
        case 'O': o.overhead = optarg ? atoi(optarg) : 10000; break;
        case 'N':
            o.nulls = 1;
            break;
        case 'J':
            o.joins = 1;
            break;
        case 'S':
            o.skew = 1;
            break;
        case 'h': usage(stdout); return 0;
        case 'V': printf("coproc-bench %s\n", coproc_version_string()); return 0;
        default: usage(stderr); return EX_USAGE;
        }
    }
    if (optind < argc || o.reps < 1 || o.overhead < 0 || o.min_log2 < 0 || o.max_log2 > 32 ||
        o.min_log2 > o.max_log2) {
        usage(stderr);
        return EX_USAGE;
    }

    coproc_options opts;
    coproc_options_init(&opts);
    opts.devices = o.devices;
    opts.device_budget_bytes = o.budget;
    opts.disable_zero_copy = o.no_zero_copy;
    if (o.quiet)
        opts.log = quiet_log;
    coproc_runtime *rt = NULL;
    coproc_status s = coproc_open(&opts, &rt);
    if (s != COPROC_OK) {
        fprintf(stderr, "coproc-bench: %s: %s\n", coproc_status_name(s), coproc_errmsg(rt));
        coproc_close(rt);
        return s == COPROC_INVALID_ARGUMENT ? EX_USAGE : EX_UNAVAILABLE;
    }

    FILE *out = o.json ? stderr : stdout; /* with --json, stdout holds only the document */
    json_t *jdevices = json_array();
    int mismatches = 0;
    for (int dev = 0; dev < coproc_device_count(rt); dev++) {
        coproc_device_info info;
        coproc_device_info_get(rt, dev, &info);
        int is_cpu = info.type == COPROC_DEVICE_CPU;
        int threads = cores_of(&info);
        double bw = 0;
        size_t bw_bytes = (size_t)(info.max_alloc_bytes / 4 < (256u << 20) ? info.max_alloc_bytes / 4
                                                                              : (256u << 20));
        if (o.overhead)
            bw_bytes = 1 << 20; /* only printed in the header */
        s = coproc_measure_bandwidth(rt, dev, bw_bytes, 5, &bw);
        if (s != COPROC_OK) {
            fprintf(stderr, "device %d: copy bandwidth: %s\n", dev, coproc_errmsg(rt));
            continue;
        }
        if (!o.json || !o.quiet)
            fprintf(out, "\n== device %d: %s (%s), %u CUs; copy kernel: %.1f GB/s%s\n", dev,
                    info.name, coproc_device_type_name(info.type), info.compute_units, bw / 1e9,
                    is_cpu ? "" : "");
        if (is_cpu)
            fprintf(out, "   C baselines on %d thread(s) (cores %s)\n", threads, info.cpuset);
        if (!o.overhead && !o.nulls && !o.joins && !o.skew)
            fprintf(out, "%-32s %10s %10s %9s %9s %8s %10s\n", "operator", "rows", "ms",
                    "Grows/s", "GB/s", "of mem", "vs C");
        json_t *jdev = json_object();
        json_object_set_new(jdev, "index", json_integer(dev));
        json_object_set_new(jdev, "name", json_string(info.name));
        json_object_set_new(jdev, "type", json_string(coproc_device_type_name(info.type)));
        json_object_set_new(jdev, "copy_bandwidth_GBps", json_real(bw / 1e9));
        json_object_set_new(jdev, "c_threads", is_cpu ? json_integer(threads) : json_null());
        json_t *jres = json_array(), *jnulls = json_array();
        if (o.skew) {
            json_t *jskew = json_array();
            fprintf(out, "%-12s %10s %11s %11s  %s\n", "skew", "rows", "unskewed ms", "skewed ms",
                    "skewed / unskewed (range)");
            for (int lg = o.min_log2; lg <= o.max_log2; lg += 2)
                if (bench_skew(rt, (size_t)1 << lg, o.reps, out, jskew) != 0)
                    mismatches++;
            json_decref(jnulls);
            json_object_set_new(jdev, "results", jres);
            json_object_set_new(jdev, "skew", jskew);
            json_array_append_new(jdevices, jdev);
            break; /* host columns: the runtime places the joins itself */
        }
        if (o.joins) {
            json_t *jjoins = json_array();
            fprintf(out, "%-12s %10s %9s %9s %9s  %-20s  %s\n", "joins", "rows", "2 keys ms",
                    "1 key ms", "ops ms", "2 keys / 1 key", "operators / 2 keys");
            for (int lg = o.min_log2; lg <= o.max_log2; lg += 2)
                if (bench_joins(rt, dev, (size_t)1 << lg, o.reps, out, jjoins) != 0)
                    mismatches++;
            json_decref(jnulls);
            json_object_set_new(jdev, "results", jres);
            json_object_set_new(jdev, "joins", jjoins);
            json_array_append_new(jdevices, jdev);
            continue;
        }
        if (o.overhead) {
            json_decref(jnulls);
            if (bench_overhead(rt, dev, is_cpu, 1000, o.overhead, out, jdev) != 0)
                mismatches++;
            json_object_set_new(jdev, "results", jres);
            json_array_append_new(jdevices, jdev);
            continue;
        }

        /* ~64 bytes of device memory per row cover inputs, outputs and temporaries. */
        for (int lg = o.min_log2; lg <= o.max_log2; lg += 2) {
            size_t n = (size_t)1 << lg;
            if ((double)n * 64 > 0.6 * (double)info.global_mem_bytes ||
                (double)n * 8 > (double)info.max_alloc_bytes) {
                fprintf(out, "(2^%d rows do not fit device %d; stopping there)\n", lg, dev);
                break;
            }
            if (o.nulls)
                goto nulls;
            bench_data d;
            s = bench_data_init(&d, rt, dev, n, threads);
            if (s != COPROC_OK) {
                fprintf(out, "2^%d rows: setup failed: %s\n", lg, coproc_errmsg(rt));
                bench_data_free(&d);
                break;
            }
            for (int ci = 0; ci < bench_case_count; ci++) {
                const bench_case *bc = &bench_cases[ci];
                if (o.only && !strstr(bc->name, o.only))
                    continue;
                double best = 1e30, cbest = 1e30;
                for (int r = 0; r <= o.reps && s == COPROC_OK; r++) { /* run 0 warms up */
                    if (bc->prepare && (s = bc->prepare(&d)) != COPROC_OK)
                        break;
                    double t0 = bench_now_s();
                    s = bc->run(&d);
                    double t = bench_now_s() - t0;
                    if (r > 0 && t < best)
                        best = t;
                }
                if (s != COPROC_OK) {
                    fprintf(out, "%-32s %10zu  failed: %s: %s\n", bc->name, n,
                            coproc_status_name(s), coproc_errmsg(rt));
                    s = COPROC_OK;
                    continue;
                }
                if (is_cpu && bc->c_run) {
                    for (int r = 0; r < o.reps; r++) {
                        double t0 = bench_now_s();
                        bc->c_run(&d);
                        double t = bench_now_s() - t0;
                        if (t < cbest)
                            cbest = t;
                    }
                    if (d.c_result != d.device_result) {
                        fprintf(out, "MISMATCH %s: device %llu, C %llu\n", bc->name,
                                (unsigned long long)d.device_result,
                                (unsigned long long)d.c_result);
                        mismatches++;
                    }
                }
                double grows = (double)n / best / 1e9;
                double gbs = (double)n * bc->bytes_per_row / best / 1e9;
                double of_mem = (double)n * bc->bytes_per_row / best / bw;
                char vs[32] = "-";
                if (is_cpu && bc->c_run)
                    snprintf(vs, sizeof vs, "%.2fx %s", cbest / best, bc->c_name);
                fprintf(out, "%-32s %10zu %10.3f %9.3f %9.2f %7.0f%% %10s\n", bc->name, n,
                        best * 1e3, grows, gbs, of_mem * 100, vs);
                json_t *j = json_object();
                json_object_set_new(j, "operator", json_string(bc->name));
                json_object_set_new(j, "rows", json_integer((json_int_t)n));
                json_object_set_new(j, "seconds", json_real(best));
                json_object_set_new(j, "grows_per_s", json_real(grows));
                json_object_set_new(j, "input_GBps", json_real(gbs));
                json_object_set_new(j, "ratio_to_memory_bandwidth", json_real(of_mem));
                json_object_set_new(j, "baseline", is_cpu && bc->c_run ? json_string(bc->c_name) : json_null());
                json_object_set_new(j, "baseline_seconds", is_cpu && bc->c_run ? json_real(cbest) : json_null());
                json_object_set_new(j, "ratio_to_baseline", is_cpu && bc->c_run ? json_real(cbest / best) : json_null());
                json_array_append_new(jres, j);
            }
            bench_data_free(&d);
        nulls:
            fprintf(out, "%-34s %10s %10s %10s %9s  %s\n", "nulls (1 %): operator", "rows", "ms",
                    "ms nulls", "ratio", "[range]");
            if (bench_nulls(rt, dev, n, o.reps, o.only, out, jnulls) != 0)
                mismatches++;
        }
        json_object_set_new(jdev, "results", jres);
        json_object_set_new(jdev, "nulls", jnulls);
        json_array_append_new(jdevices, jdev);
    }
    if (o.json) {
        json_t *doc = json_object();
        json_object_set_new(doc, "schema", json_string(BENCH_SCHEMA));
        json_object_set_new(doc, "schema_version", json_integer(BENCH_SCHEMA_VERSION));
        json_object_set_new(doc, "coproc_version", json_string(coproc_version_string()));
        json_object_set_new(doc, "devices", jdevices);
        json_dumpf(doc, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
        fputc('\n', stdout);
        json_decref(doc);
    } else {
        json_decref(jdevices);
    }
    coproc_close(rt);
    return mismatches ? 1 : 0;
}
