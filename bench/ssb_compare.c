/* ssb_compare.c - coproc-ssb --compare (ssb_compare.h). The ideal split is
 * the time if every device's throughput on the query added up exactly:
 * 1 / sum(1 / t_d) over the single-device times t_d, measured in the same
 * run (on simulated devices: their profiles' times). The static rule is
 * Trueno-DB's: the whole query on the accelerator (a GPU, else the device
 * estimated fastest) when its estimate is at least 5x the first CPU's, else
 * on that CPU; estimates are coproc's calibrated ones, and the rule's time
 * is the chosen device's own. */
#include "ssb_compare.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "ssb_run.h"

#define MAX_DEV 16
#define MAX_REPEAT 64
#define RULE_SPEEDUP 5.0

int ssb_rule_device(coproc_runtime *rt, const double *est, int ndev)
{
    int cpu = -1, acc = -1;
    for (int d = 0; d < ndev; d++) {
        coproc_device_info info;
        coproc_device_info_get(rt, d, &info);
        if (info.type == COPROC_DEVICE_CPU && cpu < 0)
            cpu = d;
        else if (info.type == COPROC_DEVICE_GPU && (acc < 0 || est[d] < est[acc]))
            acc = d;
    }
    cpu = cpu < 0 ? 0 : cpu;
    for (int d = 0; acc < 0 && d < ndev; d++)
        if (d != cpu && est[d] > 0 && (acc < 0 || est[d] < est[acc]))
            acc = d;
    if (acc < 0 || !(est[acc] > 0) || !(est[cpu] > 0))
        return cpu;
    return est[cpu] / est[acc] >= RULE_SPEEDUP ? acc : cpu;
}

enum { S_HYBRID, S_PLACED, S_DEV0 }; /* then one a device */

static const char *strategy_name(int s, char *buf, size_t len)
{
    if (s == S_HYBRID)
        return "hybrid";
    if (s == S_PLACED)
        return "placement";
    snprintf(buf, len, "device %d alone", s - S_DEV0);
    return buf;
}

int ssb_compare(coproc_runtime *rt, const ssb_db *db, const ssb_tables *tables, const int *run_q,
                int repeat, int cold, int quiet, json_t *doc)
{
    int ndev = coproc_device_count(rt);
    ndev = ndev > MAX_DEV ? MAX_DEV : ndev;
    int ns = S_DEV0 + ndev, all_ok = 1;
    double total[S_DEV0 + MAX_DEV] = {0}, total_ideal = 0, total_rule = 0;
    json_t *jq = json_array();
    if (!quiet) {
        printf("%-5s %10s %10s %8s", "query", "hybrid_ms", "placed_ms", "rule_ms");
        for (int d = 0; d < ndev; d++)
            printf("  dev%d_ms", d);
        printf(" %9s %9s %9s\n", "ideal_ms", "hyb/ideal", "best1/hyb");
    }
    for (int q = 0; q < SSB_NQUERIES; q++) {
        if (!run_q[q])
            continue;
        ssb_result want;
        if (ssb_reference_run(db, q, &want) != 0) {
            all_ok = 0;
            continue;
        }
        coproc_plan *p;
        coproc_node *root;
        coproc_plan_create(rt, &p);
        int ok = ssb_plan_build(p, tables, q, &root) == COPROC_OK;
        ssb_run out[S_DEV0 + MAX_DEV];
        memset(out, 0, sizeof out);
        double t[S_DEV0 + MAX_DEV][MAX_REPEAT];
        /* A warm-up of each (kernels built, caches filled), then interleaved runs.
         * Cold: every run on tables made afresh (columns no device has cached). */
        for (int r = -1; r < repeat && ok; r++)
            for (int s = 0; s < ns && ok; s++) {
                int device = s >= S_DEV0 ? s - S_DEV0 : -1;
                ssb_tables fresh;
                coproc_plan *pc = p;
                coproc_node *rc = root;
                if (cold) {
                    ok = ssb_tables_open(rt, db, -1, &fresh) == COPROC_OK;
                    coproc_plan_create(rt, &pc);
                    ok = ok && ssb_plan_build(pc, &fresh, q, &rc) == COPROC_OK;
                }
                ok = ok && ssb_run_once(rt, pc, rc, q, COPROC_QUERY_FUSED, device, s == S_HYBRID, &want, &out[s]) == 0 &&
                     out[s].ok;
                if (cold) {
                    coproc_plan_free(pc);
                    ssb_tables_close(&fresh);
                }
                if (r >= 0)
                    t[s][r] = out[s].seconds;
            }
        all_ok &= ok;
        double est[MAX_DEV];
        for (int d = 0; d < ndev; d++) {
            est[d] = 0;
            for (int i = 0; i < out[S_DEV0 + d].r.pipelines; i++) /* host pipelines: none */
                if (out[S_DEV0 + d].r.pipeline[i].estimate_s > 0)
                    est[d] += out[S_DEV0 + d].r.pipeline[i].estimate_s;
        }
        int rule = ssb_rule_device(rt, est, ndev);
        double med[S_DEV0 + MAX_DEV], inv = 0, best1 = INFINITY;
        for (int s = 0; s < ns; s++) {
            med[s] = ok ? ssb_median(t[s], repeat) : NAN;
            total[s] += med[s];
            if (s >= S_DEV0) {
                inv += 1 / med[s];
                best1 = fmin(best1, med[s]);
            }
        }
        double ideal = ok ? 1 / inv : NAN, rule_s = med[S_DEV0 + rule];
        total_ideal += ideal;
        total_rule += rule_s;
        if (!quiet) {
            printf("%-5s %10.2f %10.2f %8.2f", ssb_query_name(q), 1e3 * med[S_HYBRID], 1e3 * med[S_PLACED],
                   1e3 * rule_s);
            for (int d = 0; d < ndev; d++)
                printf(" %8.2f", 1e3 * med[S_DEV0 + d]);
            printf(" %9.2f %9.2f %9.2f%s\n", 1e3 * ideal, med[S_HYBRID] / ideal, best1 / med[S_HYBRID],
                   ok ? "" : "  WRONG");
        }
        json_t *e = json_object(), *st = json_object();
        json_object_set_new(e, "name", json_string(ssb_query_name(q)));
        json_object_set_new(e, "verified", json_boolean(ok));
        for (int s = 0; s < ns; s++) {
            char buf[32];
            json_object_set_new(st, strategy_name(s, buf, sizeof buf),
                                isfinite(med[s]) ? json_real(med[s]) : json_null());
        }
        json_object_set_new(st, "static rule", isfinite(rule_s) ? json_real(rule_s) : json_null());
        json_object_set_new(e, "total_seconds", st);
        json_object_set_new(e, "static_rule_device", json_integer(rule));
        json_object_set_new(e, "ideal_seconds", isfinite(ideal) ? json_real(ideal) : json_null());
        json_object_set_new(e, "hybrid_vs_ideal",
                            isfinite(ideal) ? json_real(med[S_HYBRID] / ideal) : json_null());
        /* Where the hybrid run's pipelines ran, and when (its last run). */
        json_t *pipes = json_array();
        for (int i = 0; ok && i < out[S_HYBRID].r.pipelines; i++) {
            const coproc_pipeline_info *pi = &out[S_HYBRID].r.pipeline[i];
            json_t *x = json_object();
            json_object_set_new(x, "what", json_string(pi->what));
            json_object_set_new(x, "device", json_integer(pi->device));
            json_object_set_new(x, "start_seconds", json_real(pi->start_s));
            json_object_set_new(x, "end_seconds", json_real(pi->end_s));
            json_object_set_new(x, "rows_in", json_integer((json_int_t)pi->rows_in));
            json_array_append_new(pipes, x);
        }
        json_object_set_new(e, "hybrid_pipelines", pipes);
        json_array_append_new(jq, e);
        for (int s = 0; s < ns; s++)
            coproc_query_result_free(&out[s].r);
        coproc_plan_free(p);
        ssb_result_free(&want);
    }
    double best1 = INFINITY;
    for (int d = 0; d < ndev; d++)
        best1 = fmin(best1, total[S_DEV0 + d]);
    if (!quiet) {
        printf("%-5s %10.2f %10.2f %8.2f", "all", 1e3 * total[S_HYBRID], 1e3 * total[S_PLACED],
               1e3 * total_rule);
        for (int d = 0; d < ndev; d++)
            printf(" %8.2f", 1e3 * total[S_DEV0 + d]);
        printf(" %9.2f %9.2f %9.2f\n", 1e3 * total_ideal, total[S_HYBRID] / total_ideal,
               best1 / total[S_HYBRID]);
    }
    json_t *all = json_object(), *st = json_object();
    for (int s = 0; s < ns; s++) {
        char buf[32];
        json_object_set_new(st, strategy_name(s, buf, sizeof buf), json_real(total[s]));
    }
    json_object_set_new(st, "static rule", json_real(total_rule));
    json_object_set_new(all, "total_seconds", st);
    json_object_set_new(all, "ideal_seconds", json_real(total_ideal));
    json_object_set_new(all, "hybrid_vs_ideal", json_real(total[S_HYBRID] / total_ideal));
    json_t *c = json_object();
    json_object_set_new(c, "queries", jq);
    json_object_set_new(c, "all", all);
    json_object_set_new(c, "cold", json_boolean(cold));
    if (ndev > 1 && ssb_together(rt, db, run_q, quiet, c) != 0)
        all_ok = 0;
    json_object_set_new(doc, "compare", c);
    return all_ok ? 0 : -1;
}
