/* ssb_main.c - coproc-ssb: the Star Schema Benchmark's 13 queries as coproc
 * plans, every result verified against the plain scalar C reference. Per
 * query, measured in the same run with the runs interleaved: the fused time
 * (median of --repeat), where each pipeline ran, bytes moved, rows scanned,
 * the ratio to the bandwidth-bound time (bytes the query must read / the
 * device's memory bandwidth, measured beside each fused run: Crystal's
 * yardstick), and the speed-ups
 * over operator-at-a-time, over each single device, and over the scalar C
 * reference. Public API only (coproc.h, coproc/query.h, coproc/inspect.h). */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sysexits.h>
#include <time.h>

#include <jansson.h>

#include "coproc/inspect.h"
#include "ssb_compare.h"
#include "ssb_verify.h"
#include "ssb_mpi_dispatch.h"
#include "ssb_run.h"

#define SSB_SCHEMA "coproc.ssb"
#define SSB_SCHEMA_VERSION 1
#define MAX_REPEAT 64
#define MAX_DEV 16

typedef struct options {
    double sf;
    double verify_cost; /* --verify-cost P: the shadow check's cost at rate P (ssb_verify.c) */
    int repeat, device, resident, json, modes, compare, cold; /* modes: 1 fused, 2 operators, 3 both */
    int strings; /* the string columns as strings, the queries comparing strings */
    int sweep[16], nsweep; /* --sweep: budgets in percent of the working set */
    const char *cache, *queries, *json_path, *timeline;
} options;

static void usage(FILE *f)
{
    fprintf(f, "usage: coproc-ssb [--sf X] [--device N|auto] [--mode fused|operators|both]\n"
               "                  [--repeat N] [--queries q1.1,q3.2,...] [--resident]\n"
               "                  [--data-cache DIR] [--json FILE|-] [--timeline FILE.svg] [--compare [--cold]]\n"
               "                  [--sweep 100,50,25,10] [--strings]\n"
               "  --mpi ...       run distributed under mpirun (coproc-ssb --mpi --help)\n"
               "  --sf X          scale factor (default 1)\n"
               "  --device N      run every pipeline on device N (default auto: placement)\n"
               "  --mode M        fused, operators or both (default both; the speed-up needs both)\n"
               "  --repeat N      timed runs of each (default 3), the median reported\n"
               "  --resident      upload the tables to the device first (--device N, else 0)\n"
               "  --strings       regions, nations, cities, brands, ... as dictionary-encoded\n"
               "                  strings, the queries comparing strings\n"
               "  --data-cache D  where the generated data is kept (default $COPROC_CACHE_DIR/ssb,\n"
               "                  else ~/.cache/coproc/ssb)\n"
               "  --json FILE     the results as a versioned JSON document (- for stdout)\n"
               "  --timeline F    an SVG of where and when each pipeline ran (last fused runs)\n"
               "  --verify-cost P each query's fused runs without and with the shadow check\n"
               "                  at rate P (coproc_query_options.verify), interleaved --repeat\n"
               "                  times each: the check's cost\n"
               "  --compare       each query hybrid (every device, by morsels), placed (one device\n"
               "                  a pipeline) and on each device alone, with the ideal split;\n"
               "                  then all of them submitted at once (hybrid, placed, cold)\n"
               "  --cold          (with --compare) every run on fresh tables: no device has\n"
               "                  their columns cached (the data in host memory)\n"
               "  --sweep P,...   the budget sweep: device budgets of P %% of the queries' working\n"
               "                  set, each strategy's total with the data in host memory\n"
               "                  (--mode fused: without the strategies one operator at a time)\n");
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* x with two decimals, "-" when it was not measured (a mode not run, one device). */
static const char *fmt(char *buf, double x)
{
    if (isfinite(x))
        snprintf(buf, 16, "%.2f", x);
    else
        snprintf(buf, 16, "-");
    return buf;
}

static void quiet_log(void *u, coproc_log_level l, const char *m) { (void)u; (void)l; (void)m; }

/* One timeline bar. */
typedef struct bar {
    int query, device;
    double start, end;
} bar;

static void write_timeline(const char *path, const bar *bars, int nbars, coproc_runtime *rt)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        fprintf(stderr, "coproc-ssb: cannot write %s\n", path);
        return;
    }
    int ndev = coproc_device_count(rt);
    double end = 0;
    for (int i = 0; i < nbars; i++)
        end = fmax(end, bars[i].end);
    double W = 1000, row = 40, left = 220, top = 30;
    double scale = end > 0 ? (W - left - 20) / end : 1;
    fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" "
               "font-family=\"sans-serif\" font-size=\"11\">\n",
            W, top + row * ndev + 40);
    fprintf(f, "<text x=\"10\" y=\"18\">coproc-ssb: where and when each pipeline ran "
               "(fused, last repetition; %.3f s)</text>\n", end);
    for (int d = 0; d < ndev; d++) {
        coproc_device_info info;
        coproc_device_info_get(rt, d, &info);
        fprintf(f, "<text x=\"10\" y=\"%.0f\">%d: %.28s</text>\n", top + row * d + 24, d, info.name);
    }
    static const char *colors[] = {"#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1",
                                   "#ff9da7", "#9c755f", "#bab0ac", "#1f77b4", "#2ca02c", "#d62728"};
    for (int i = 0; i < nbars; i++) {
        const bar *b = &bars[i];
        if (b->device < 0 || b->device >= ndev)
            continue;
        double x = left + b->start * scale, w = fmax(1, (b->end - b->start) * scale);
        fprintf(f, "<rect x=\"%.1f\" y=\"%.0f\" width=\"%.1f\" height=\"%.0f\" fill=\"%s\">"
                   "<title>%s %.3f-%.3f s</title></rect>\n",
                x, top + row * b->device + 8, w, row - 12, colors[b->query % 13], ssb_query_name(b->query),
                b->start, b->end);
        if (w > 30)
            fprintf(f, "<text x=\"%.1f\" y=\"%.0f\" fill=\"white\">%s</text>\n", x + 3,
                    top + row * b->device + 24, ssb_query_name(b->query));
    }
    fprintf(f, "<text x=\"%.0f\" y=\"%.0f\">0 s</text><text x=\"%.0f\" y=\"%.0f\">%.3f s</text>\n", left,
            top + row * ndev + 20, W - 80, top + row * ndev + 20, end);
    fprintf(f, "</svg>\n");
    fclose(f);
}

int main(int argc, char **argv)
{
    int mpi_rc = ssb_mpi_dispatch(argc, argv); /* --mpi: the distributed run, under mpirun */
    if (mpi_rc >= 0)
        return mpi_rc;
    options opt = {.sf = 1, .repeat = 3, .device = -1, .modes = 3};
    static const struct option longs[] = {
        {"sf", required_argument, 0, 's'},      {"device", required_argument, 0, 'd'},
        {"mode", required_argument, 0, 'm'},    {"repeat", required_argument, 0, 'r'},
        {"queries", required_argument, 0, 'q'}, {"resident", no_argument, 0, 'R'},
        {"data-cache", required_argument, 0, 'c'}, {"json", required_argument, 0, 'j'},
        {"timeline", required_argument, 0, 't'}, {"help", no_argument, 0, 'h'},
        {"compare", no_argument, 0, 'C'},      {"cold", no_argument, 0, 'k'},
        {"sweep", required_argument, 0, 'B'},   {"strings", no_argument, 0, 'S'},
        {"verify-cost", required_argument, 0, 'V'},
        {0, 0, 0, 0}};
    int c;
    while ((c = getopt_long(argc, argv, "h", longs, NULL)) != -1) {
        switch (c) {
        case 's': opt.sf = atof(optarg); break;
        case 'd': opt.device = strcmp(optarg, "auto") == 0 ? -1 : atoi(optarg); break;
        case 'm':
            opt.modes = strcmp(optarg, "fused") == 0 ? 1 : strcmp(optarg, "operators") == 0 ? 2
                      : strcmp(optarg, "both") == 0 ? 3 : 0;
            break;
        case 'r': opt.repeat = atoi(optarg); break;
        case 'q': opt.queries = optarg; break;
        case 'R': opt.resident = 1; break;
        case 'c': opt.cache = optarg; break;
        case 'j': opt.json = 1, opt.json_path = optarg; break;
        case 't': opt.timeline = optarg; break;
        case 'C': opt.compare = 1; break;
        case 'k': opt.cold = 1; break;
        case 'S': opt.strings = 1; break;
        case 'V': opt.verify_cost = atof(optarg); break;
        case 'B':
            for (char *p = optarg; *p && opt.nsweep < 16;) {
                char *end;
                long v = strtol(p, &end, 10);
                if (end == p || v < 1 || v > 1000) {
                    usage(stderr);
                    return EX_USAGE;
                }
                opt.sweep[opt.nsweep++] = (int)v;
                p = *end == ',' ? end + 1 : end;
            }
            break;
        case 'h': usage(stdout); return 0;
        default: usage(stderr); return EX_USAGE;
        }
    }
    if (!(opt.sf > 0) || opt.sf > SSB_MAX_SF || opt.repeat < 1 || opt.repeat > MAX_REPEAT || !opt.modes ||
        optind != argc) {
        usage(stderr);
        return EX_USAGE;
    }
    int run_q[SSB_NQUERIES];
    for (int q = 0; q < SSB_NQUERIES; q++)
        run_q[q] = !opt.queries;
    if (opt.queries) {
        char *list = strdup(opt.queries);
        for (char *tok = strtok(list, ","); tok; tok = strtok(NULL, ",")) {
            int q = ssb_query_index(tok);
            if (q < 0) {
                fprintf(stderr, "coproc-ssb: no query %s\n", tok);
                free(list);
                return EX_USAGE;
            }
            run_q[q] = 1;
        }
        free(list);
    }

    /* ---- data: generated once per scale factor, kept on disk */
    char dir[1024];
    const char *env = getenv("COPROC_CACHE_DIR"), *home = getenv("HOME");
    if (opt.cache)
        snprintf(dir, sizeof dir, "%s", opt.cache);
    else if (env && *env)
        snprintf(dir, sizeof dir, "%s/ssb", env);
    else
        snprintf(dir, sizeof dir, "%s/.cache/coproc/ssb", home ? home : "/tmp");
    double t0 = now_s();
    ssb_db db;
    int loaded = ssb_load_or_generate(opt.sf, dir, &db);
    if (loaded < 0) {
        fprintf(stderr, "coproc-ssb: cannot generate SF %g\n", opt.sf);
        return EX_SOFTWARE;
    }
    if (!opt.json)
        printf("SSB SF %g: %zu lineorder rows, %s in %.2f s (%s)\n", opt.sf, db.rows[SSB_LINEORDER],
               loaded ? "loaded" : "generated", now_s() - t0, dir);

    if (opt.nsweep) { /* a runtime a budget, opened there */
        json_t *sw = json_object();
        json_object_set_new(sw, "schema", json_string(SSB_SCHEMA));
        json_object_set_new(sw, "version", json_integer(SSB_SCHEMA_VERSION));
        json_object_set_new(sw, "sf", json_real(opt.sf));
        json_object_set_new(sw, "repeat", json_integer(opt.repeat));
        int rc = ssb_sweep(&db, run_q, opt.repeat, opt.sweep, opt.nsweep, (opt.modes & 2) != 0, opt.json, sw);
        if (opt.json && strcmp(opt.json_path, "-") == 0)
            json_dumpf(sw, stdout, JSON_INDENT(2));
        else if (opt.json && json_dump_file(sw, opt.json_path, JSON_INDENT(2)) != 0)
            fprintf(stderr, "coproc-ssb: cannot write %s\n", opt.json_path);
        json_decref(sw);
        ssb_free(&db);
        return rc == 0 ? 0 : 1;
    }
    coproc_options o;
    coproc_options_init(&o);
    o.log = quiet_log;
    coproc_runtime *rt = NULL;
    coproc_status s = coproc_open(&o, &rt);
    if (s != COPROC_OK) {
        fprintf(stderr, "coproc-ssb: %s\n", rt ? coproc_errmsg(rt) : coproc_status_message(s));
        coproc_close(rt);
        ssb_free(&db);
        return s == COPROC_NO_PLATFORM || s == COPROC_NO_DEVICE ? 77 : EX_SOFTWARE;
    }
    int ndev = coproc_device_count(rt);
    if (ndev > MAX_DEV)
        ndev = MAX_DEV;
    if (opt.device >= ndev) {
        fprintf(stderr, "coproc-ssb: no device %d (%d devices)\n", opt.device, ndev);
        coproc_close(rt);
        ssb_free(&db);
        return EX_USAGE;
    }
    /* Each device's memory bandwidth, measured now (a copy kernel): the
     * header's figure, and the bound's where a measurement beside a run fails. */
    double bw[MAX_DEV];
    for (int d = 0; d < ndev; d++) {
        bw[d] = 0;
        if (coproc_measure_bandwidth(rt, d, 64u << 20, 3, &bw[d]) != COPROC_OK)
            bw[d] = 0;
    }
    ssb_tables tables;
    int where = opt.resident ? (opt.device >= 0 ? opt.device : 0) : -1;
    s = opt.strings ? ssb_tables_open_strings(rt, &db, where, &tables)
                    : ssb_tables_open(rt, &db, where, &tables);
    if (s != COPROC_OK) {
        fprintf(stderr, "coproc-ssb: tables: %s\n", coproc_errmsg(rt));
        coproc_close(rt);
        ssb_free(&db);
        return EX_SOFTWARE;
    }

    json_t *doc = json_object(), *jq = json_array();
    if (opt.compare || opt.verify_cost > 0) {
        int rc = opt.compare ? ssb_compare(rt, &db, &tables, run_q, opt.repeat, opt.cold, opt.json, doc)
                             : ssb_verify_cost(rt, &db, &tables, run_q, opt.repeat, opt.verify_cost,
                                               opt.json, doc);
        json_decref(jq);
        if (opt.json && strcmp(opt.json_path, "-") == 0)
            json_dumpf(doc, stdout, JSON_INDENT(2));
        else if (opt.json && json_dump_file(doc, opt.json_path, JSON_INDENT(2)) != 0)
            fprintf(stderr, "coproc-ssb: cannot write %s\n", opt.json_path);
        json_decref(doc);
        ssb_tables_close(&tables);
        coproc_close(rt);
        ssb_free(&db);
        return rc == 0 ? 0 : 1;
    }
    if (!opt.json) {
        printf("devices:");
        for (int d = 0; d < ndev; d++) {
            coproc_device_info info;
            coproc_device_info_get(rt, d, &info);
            printf("  %d %s (%.1f GB/s)", d, info.name, bw[d] / 1e9);
        }
        printf("\n%-5s %8s %9s %9s %6s %7s %8s %8s %9s  %s\n", "query", "rows", "fused_ms", "ops_ms", "fused/",
               "vs_ops", "vs_best1", "vs_C", "moved_MB", "pipelines (device)");
        printf("%-5s %8s %9s %9s %6s %7s %8s %8s %9s\n", "", "", "", "", "bwbound", "", "device", "", "");
    }
    bar *bars = NULL;
    int nbars = 0, all_ok = 1, nq = 0;
    double log_vs_ops = 0;
    int n_vs_ops = 0;
    for (int q = 0; q < SSB_NQUERIES; q++) {
        if (!run_q[q])
            continue;
        nq++;
        ssb_result want;
        double tc = now_s();
        if (ssb_reference_run(&db, q, &want) != 0) {
            fprintf(stderr, "coproc-ssb: reference %s failed\n", ssb_query_name(q));
            all_ok = 0;
            continue;
        }
        double c_s = now_s() - tc;
        coproc_plan *p;
        coproc_node *root;
        coproc_plan_create(rt, &p);
        if (ssb_plan_build(p, &tables, q, &root) != COPROC_OK) {
            fprintf(stderr, "coproc-ssb: %s: %s\n", ssb_query_name(q), coproc_plan_errmsg(p));
            all_ok = 0;
            coproc_plan_free(p);
            ssb_result_free(&want);
            continue;
        }
        /* Warm-up: builds the kernels and fills the residency caches. */
        ssb_run fused = {0}, ops = {0}, single[MAX_DEV];
        memset(single, 0, sizeof single);
        int ok = 1;
        if (opt.modes & 1)
            ok &= ssb_run_once(rt, p, root, q, COPROC_QUERY_FUSED, opt.device, 0, &want, &fused) == 0 && fused.ok;
        double tf[MAX_REPEAT], to[MAX_REPEAT], td[MAX_DEV][MAX_REPEAT], bwq[MAX_DEV][MAX_REPEAT];
        int single_devs = opt.device < 0 && ndev > 1 && (opt.modes & 1);
        for (int d = 0; single_devs && d < ndev; d++)
            ok &= ssb_run_once(rt, p, root, q, COPROC_QUERY_FUSED, d, 0, &want, &single[d]) == 0 && single[d].ok;
        for (int r = 0; r < opt.repeat && ok; r++) {
            /* Interleaved: the machine's noise falls on every variant alike. */
            if (opt.modes & 2) {
                ok &= ssb_run_once(rt, p, root, q, COPROC_QUERY_OPERATORS, opt.device, 0, &want, &ops) == 0 && ops.ok;
                to[r] = ops.seconds;
            }
            for (int d = 0; single_devs && d < ndev; d++) {
                ok &= ssb_run_once(rt, p, root, q, COPROC_QUERY_FUSED, d, 0, &want, &single[d]) == 0 && single[d].ok;
                td[d][r] = single[d].seconds;
            }
            if (opt.modes & 1) {
                /* The bandwidth of the bound, measured beside each fused run:
                 * the VM's memory bandwidth drifts by up to 1.6x within minutes,
                 * and a bound measured once at the start is not the query's. */
                for (int d = 0; d < ndev; d++)
                    if (coproc_measure_bandwidth(rt, d, 64u << 20, 3, &bwq[d][r]) != COPROC_OK)
                        bwq[d][r] = bw[d];
                ok &= ssb_run_once(rt, p, root, q, COPROC_QUERY_FUSED, opt.device, 0, &want, &fused) == 0 && fused.ok;
                tf[r] = fused.seconds;
            }
        }
        all_ok &= ok;
        double f_s = (opt.modes & 1) && ok ? ssb_median(tf, opt.repeat) : NAN;
        double o_s = (opt.modes & 2) && ok ? ssb_median(to, opt.repeat) : NAN;
        double best1 = INFINITY;
        for (int d = 0; single_devs && ok && d < ndev; d++)
            best1 = fmin(best1, ssb_median(td[d], opt.repeat));
        /* Bandwidth bound on the device that ran the probe over lineorder (the last pipeline). */
        const coproc_query_result *fr = &fused.r;
        int main_dev = -1;
        uint64_t moved = 0;
        for (int i = 0; ok && (opt.modes & 1) && i < fr->pipelines; i++) {
            moved += fr->pipeline[i].bytes_moved;
            if (strncmp(fr->pipeline[i].what, "lineorder", 9) == 0)
                main_dev = fr->pipeline[i].device;
        }
        double bytes = ssb_query_bytes(&db, q);
        double qbw = main_dev >= 0 && ok ? ssb_median(bwq[main_dev], opt.repeat) : 0;
        double bound = qbw > 0 ? bytes / qbw : NAN;
        double bw_ratio = f_s / bound, vs_ops = o_s / f_s, vs_best1 = best1 / f_s, vs_c = c_s / f_s;
        if (isfinite(vs_ops)) {
            log_vs_ops += log(vs_ops);
            n_vs_ops++;
        }
        for (int i = 0; ok && (opt.modes & 1) && i < fr->pipelines; i++) {
            bars = realloc(bars, (nbars + 1) * sizeof *bars);
            bars[nbars++] = (bar){q, fr->pipeline[i].device, 0, 0};
        }
        if (!opt.json) {
            char where[512] = "";
            int w = 0;
            for (int i = 0; (opt.modes & 1) && ok && i < fr->pipelines && w < (int)sizeof where - 40; i++)
                w += snprintf(where + w, sizeof where - w, "%s%.24s(%d)", i ? ", " : "",
                              fr->pipeline[i].what, fr->pipeline[i].device);
            char cf[16], co[16], cb[16], cv[16], c1[16], cc[16];
            printf("%-5s %8zu %9s %9s %6s %7s %8s %8s %9.1f  %s%s\n", ssb_query_name(q), want.nrows,
                   fmt(cf, 1e3 * f_s), fmt(co, 1e3 * o_s), fmt(cb, bw_ratio), fmt(cv, vs_ops),
                   fmt(c1, vs_best1), fmt(cc, vs_c), moved / 1e6, where, ok ? "" : "  WRONG");
        }
        json_t *e = json_object();
        json_object_set_new(e, "name", json_string(ssb_query_name(q)));
        json_object_set_new(e, "verified", json_boolean(ok));
        json_object_set_new(e, "rows", json_integer((json_int_t)want.nrows));
        json_object_set_new(e, "seconds", isfinite(f_s) ? json_real(f_s) : json_null());
        json_object_set_new(e, "operators_seconds", isfinite(o_s) ? json_real(o_s) : json_null());
        json_object_set_new(e, "scalar_c_seconds", json_real(c_s));
        json_object_set_new(e, "bandwidth_bytes_per_second", qbw > 0 ? json_real(qbw) : json_null());
        json_object_set_new(e, "bandwidth_bound_seconds", isfinite(bound) ? json_real(bound) : json_null());
        json_object_set_new(e, "bandwidth_bound_ratio", isfinite(bw_ratio) ? json_real(bw_ratio) : json_null());
        json_object_set_new(e, "speedup_vs_operators", isfinite(vs_ops) ? json_real(vs_ops) : json_null());
        json_object_set_new(e, "speedup_vs_best_single_device", isfinite(vs_best1) ? json_real(vs_best1) : json_null());
        json_object_set_new(e, "speedup_vs_scalar_c", isfinite(vs_c) ? json_real(vs_c) : json_null());
        json_object_set_new(e, "bytes_moved", json_integer((json_int_t)moved));
        json_object_set_new(e, "kernels_built_on_repeat", json_integer((json_int_t)fr->kernels_built));
        json_t *pipes = json_array();
        for (int i = 0; ok && (opt.modes & 1) && i < fr->pipelines; i++) {
            json_t *pi = json_object();
            json_object_set_new(pi, "what", json_string(fr->pipeline[i].what));
            json_object_set_new(pi, "device", json_integer(fr->pipeline[i].device));
            json_object_set_new(pi, "fused", json_boolean(fr->pipeline[i].fused));
            json_object_set_new(pi, "seconds", json_real(fr->pipeline[i].end_s - fr->pipeline[i].start_s));
            json_object_set_new(pi, "estimate_seconds", json_real(fr->pipeline[i].estimate_s));
            json_object_set_new(pi, "rows_in", json_integer((json_int_t)fr->pipeline[i].rows_in));
            json_object_set_new(pi, "bytes_in", json_integer((json_int_t)fr->pipeline[i].bytes_in));
            json_array_append_new(pipes, pi);
        }
        json_object_set_new(e, "pipelines", pipes);
        json_array_append_new(jq, e);
        coproc_query_result_free(&fused.r);
        coproc_query_result_free(&ops.r);
        for (int d = 0; d < MAX_DEV; d++)
            coproc_query_result_free(&single[d].r);
        coproc_plan_free(p);
        ssb_result_free(&want);
    }

    /* The timeline: every query once more, back to back, fused, as a user runs them. */
    if (opt.timeline && (opt.modes & 1)) {
        double start = now_s();
        nbars = 0;
        for (int q = 0; q < SSB_NQUERIES; q++) {
            if (!run_q[q])
                continue;
            coproc_plan *p;
            coproc_node *root;
            coproc_plan_create(rt, &p);
            coproc_query_options qo;
            coproc_query_options_init(&qo);
            qo.device = opt.device;
            coproc_query_result r;
            double base = now_s() - start;
            if (ssb_plan_build(p, &tables, q, &root) == COPROC_OK && coproc_query_run(p, root, &qo, &r) == COPROC_OK) {
                for (int i = 0; i < r.pipelines; i++) {
                    bars = realloc(bars, (nbars + 1) * sizeof *bars);
                    bars[nbars++] = (bar){q, r.pipeline[i].device, base + r.pipeline[i].start_s,
                                          base + r.pipeline[i].end_s};
                }
                coproc_query_result_free(&r);
            }
            coproc_plan_free(p);
        }
        write_timeline(opt.timeline, bars, nbars, rt);
        if (!opt.json)
            printf("timeline: %s\n", opt.timeline);
    }
    double geo = n_vs_ops ? exp(log_vs_ops / n_vs_ops) : NAN;
    if (!opt.json) {
        printf("fused vs operator-at-a-time, geometric mean over %d queries: %.2fx\n", n_vs_ops, geo);
        printf("%s\n", all_ok ? "all results verified against the scalar C reference" : "SOME RESULTS WRONG");
    }
    json_object_set_new(doc, "schema", json_string(SSB_SCHEMA));
    json_object_set_new(doc, "version", json_integer(SSB_SCHEMA_VERSION));
    json_object_set_new(doc, "sf", json_real(opt.sf));
    json_object_set_new(doc, "repeat", json_integer(opt.repeat));
    json_object_set_new(doc, "queries", jq);
    json_object_set_new(doc, "fused_vs_operators_geomean", isfinite(geo) ? json_real(geo) : json_null());
    json_object_set_new(doc, "verified", json_boolean(all_ok));
    if (opt.json) {
        if (strcmp(opt.json_path, "-") == 0)
            json_dumpf(doc, stdout, JSON_INDENT(2));
        else if (json_dump_file(doc, opt.json_path, JSON_INDENT(2)) != 0)
            fprintf(stderr, "coproc-ssb: cannot write %s\n", opt.json_path);
    }
    json_decref(doc);
    free(bars);
    ssb_tables_close(&tables);
    coproc_close(rt);
    ssb_free(&db);
    return all_ok ? 0 : 1;
}
