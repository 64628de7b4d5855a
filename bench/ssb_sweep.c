/* ssb_sweep.c - coproc-ssb --sweep: robustness when device memory is scarce
 * (CoGaDB, SIGMOD 2016: cache thrashing and operators running past device
 * memory made queries many times slower). Each budget a runtime of its own;
 * every run on fresh tables (the data in host memory, nothing cached from
 * the run before). Strategies: hybrid, placement (fused pipelines, each on
 * the device of least estimate plus queued work), HyPE's WTAR (operator at
 * a time, each operator placed by the scheduler's WTAR policy), the static
 * rule, each device alone. The target: at every budget none of coproc's
 * own strategies slower than the CPU alone running the same engine: hybrid
 * and placement (WTAR's choice over fused pipelines) against the fused plan on
 * the CPU, WTAR one operator at a time against the same operators on the CPU
 * (a plan one operator at a time materialises every intermediate column and
 * cannot come near a fused one, on any device: that gap is the engine's, not
 * a cliff). Without the operators mode (--mode fused) the last two are left
 * out (at SF 10 they take about an hour). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "ssb_compare.h"
#include "ssb_run.h"

#define MAX_DEV 16
#define MAX_REPEAT 64

/* S_OPS_CPU: the plan one operator at a time on the CPU alone, WTAR's own
 * baseline (the same operators, no placement). */
enum { S_HYBRID, S_PLACED, S_WTAR, S_OPS_CPU, S_DEV0 }; /* then one a device */

static void quiet_log(void *u, coproc_log_level l, const char *m)
{
    (void)u;
    (void)l;
    (void)m;
}

/* One strategy's run of q on fresh tables; its time, NAN when it failed. */
static double run_cold(coproc_runtime *rt, const ssb_db *db, int q, int s, int cpu,
                       const ssb_result *want, ssb_run *out)
{
    ssb_tables t;
    coproc_plan *p = NULL;
    coproc_node *root;
    int ok = ssb_tables_open(rt, db, -1, &t) == COPROC_OK;
    ok = ok && coproc_plan_create(rt, &p) == COPROC_OK && ssb_plan_build(p, &t, q, &root) == COPROC_OK;
    coproc_query_mode mode =
        s == S_WTAR || s == S_OPS_CPU ? COPROC_QUERY_OPERATORS : COPROC_QUERY_FUSED;
    int device = s >= S_DEV0 ? s - S_DEV0 : s == S_OPS_CPU ? cpu : -1;
    ok = ok && ssb_run_once(rt, p, root, q, mode, device, s == S_HYBRID, want, out) == 0 && out->ok;
    coproc_plan_free(p);
    if (ok || t.ncols)
        ssb_tables_close(&t);
    return ok ? out->seconds : NAN;
}

/* Totals over the queries at one budget into total[] (per strategy) and *rule. */
static int one_budget(coproc_runtime *rt, const ssb_db *db, const int *run_q, int repeat, int cpu,
                      int operators, double *total, double *rule)
{
    int ndev = coproc_device_count(rt);
    ndev = ndev > MAX_DEV ? MAX_DEV : ndev;
    int ns = S_DEV0 + ndev, all_ok = 1;
    *rule = 0;
    for (int s = 0; s < ns; s++)
        total[s] = 0;
    for (int q = 0; q < SSB_NQUERIES; q++) {
        if (!run_q[q])
            continue;
        ssb_result want;
        if (ssb_reference_run(db, q, &want) != 0)
            return -1;
        ssb_run out[S_DEV0 + MAX_DEV];
        memset(out, 0, sizeof out);
        double t[S_DEV0 + MAX_DEV][MAX_REPEAT];
        /* A warm-up of each (kernels built, corrections learned), then interleaved. */
        for (int r = -1; r < repeat; r++)
            for (int s = 0; s < ns; s++) {
                if ((s == S_OPS_CPU && cpu < 0) || ((s == S_WTAR || s == S_OPS_CPU) && !operators)) {
                    t[s][r < 0 ? 0 : r] = NAN;
                    continue;
                }
                double x = run_cold(rt, db, q, s, cpu, &want, &out[s]);
                all_ok &= isfinite(x);
                if (r >= 0)
                    t[s][r] = x;
            }
        double est[MAX_DEV];
        for (int d = 0; d < ndev; d++) {
            est[d] = 0;
            for (int i = 0; i < out[S_DEV0 + d].r.pipelines; i++)
                if (out[S_DEV0 + d].r.pipeline[i].estimate_s > 0)
                    est[d] += out[S_DEV0 + d].r.pipeline[i].estimate_s;
        }
        for (int s = 0; s < ns; s++)
            total[s] += ssb_median(t[s], repeat);
        *rule += ssb_median(t[S_DEV0 + ssb_rule_device(rt, est, ndev)], repeat);
        for (int s = 0; s < ns; s++)
            coproc_query_result_free(&out[s].r);
        ssb_result_free(&want);
    }
    return all_ok ? 0 : -1;
}

int ssb_sweep(const ssb_db *db, const int *run_q, int repeat, const int *pct, int npct, int operators,
              int quiet, json_t *doc)
{
    double ws = ssb_working_set_bytes(db, run_q);
    json_t *rows = json_array();
    int all_ok = 1, header = 0;
    for (int i = 0; i < npct; i++) {
        double b = ws * pct[i] / 100.0;
        coproc_options o;
        coproc_options_init(&o);
        o.log = quiet_log;
        o.device_budget_bytes = b < COPROC_MIN_DEVICE_BUDGET ? COPROC_MIN_DEVICE_BUDGET : (uint64_t)b;
        coproc_runtime *rt = NULL;
        if (coproc_open(&o, &rt) != COPROC_OK) {
            fprintf(stderr, "coproc-ssb: %s\n", rt ? coproc_errmsg(rt) : "cannot open the runtime");
            coproc_close(rt);
            json_decref(rows);
            return -1;
        }
        int ndev = coproc_device_count(rt);
        ndev = ndev > MAX_DEV ? MAX_DEV : ndev;
        int cpu = -1;
        for (int d = 0; d < ndev && cpu < 0; d++) {
            coproc_device_info info;
            coproc_device_info_get(rt, d, &info);
            cpu = info.type == COPROC_DEVICE_CPU ? d : cpu;
        }
        if (!quiet && !header++) {
            printf(
                "budget sweep: working set %.1f MB (every column the queries read), data in host "
                "memory\n%7s %9s %10s %10s %8s %9s %11s",
                ws / 1e6, "budget", "budget_MB", "hybrid_ms", "placed_ms", "rule_ms", "wtar_ms",
                "ops_cpu_ms");
            for (int d = 0; d < ndev; d++)
                printf("  dev%d_ms", d);
            printf(" %12s %13s\n", "fused/cpu", "wtar/ops_cpu");
        }
        double total[S_DEV0 + MAX_DEV], rule;
        int ok = one_budget(rt, db, run_q, repeat, cpu, operators, total, &rule) == 0;
        all_ok &= ok;
        /* coproc's own strategies against the CPU alone running the same
         * engine: above 1 is a cliff. */
        double fused_vs_cpu = cpu >= 0 ? fmax(total[S_HYBRID], total[S_PLACED]) / total[S_DEV0 + cpu] : NAN;
        double wtar_ops = total[S_WTAR] / total[S_OPS_CPU];
        double vs_cpu = operators ? fmax(fused_vs_cpu, wtar_ops) : fused_vs_cpu;
        if (!quiet) {
            printf("%6d%% %9.1f %10.2f %10.2f %8.2f %9.2f %11.2f", pct[i],
                   o.device_budget_bytes / 1e6, 1e3 * total[S_HYBRID], 1e3 * total[S_PLACED],
                   1e3 * rule, 1e3 * total[S_WTAR], 1e3 * total[S_OPS_CPU]);
            for (int d = 0; d < ndev; d++)
                printf(" %8.2f", 1e3 * total[S_DEV0 + d]);
            printf(" %12.3f %13.3f%s\n", fused_vs_cpu, wtar_ops,
                   ok ? "" : "  FAILED (a run failed or was wrong: stderr)");
        }
        json_t *e = json_object(), *st = json_object();
        json_object_set_new(e, "percent", json_integer(pct[i]));
        json_object_set_new(e, "budget_bytes", json_integer((json_int_t)o.device_budget_bytes));
        json_object_set_new(e, "verified", json_boolean(ok));
        json_object_set_new(st, "hybrid", json_real(total[S_HYBRID]));
        json_object_set_new(st, "placement", json_real(total[S_PLACED]));
        if (operators) {
            json_object_set_new(st, "wtar operators", json_real(total[S_WTAR]));
            json_object_set_new(st, "cpu alone operators", json_real(total[S_OPS_CPU]));
        }
        json_object_set_new(st, "static rule", json_real(rule));
        for (int d = 0; d < ndev; d++) {
            char name[32];
            snprintf(name, sizeof name, "device %d alone", d);
            json_object_set_new(st, name, json_real(total[S_DEV0 + d]));
        }
        json_object_set_new(e, "total_seconds", st);
        json_object_set_new(e, "cpu_device", json_integer(cpu));
        json_object_set_new(e, "worst_coproc_vs_cpu", isfinite(vs_cpu) ? json_real(vs_cpu) : json_null());
        json_object_set_new(e, "wtar_vs_cpu_operators",
                            isfinite(wtar_ops) ? json_real(wtar_ops) : json_null());
        json_object_set_new(e, "worst_fused_vs_cpu",
                            isfinite(fused_vs_cpu) ? json_real(fused_vs_cpu) : json_null());
        json_array_append_new(rows, e);
        coproc_close(rt);
    }
    json_t *sw = json_object();
    json_object_set_new(sw, "working_set_bytes", json_real(ws));
    json_object_set_new(sw, "budgets", rows);
    json_object_set_new(doc, "budget_sweep", sw);
    return all_ok ? 0 : -1;
}
