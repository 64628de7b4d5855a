/* ssb_verify.c - coproc-ssb --verify-cost P (ssb_verify.h). The two ways
 * alternate run by run (which goes first alternates too), so the machine's
 * noise falls on both alike; the times are wall-clock around
 * coproc_query_run, the shadow runs included. The check samples evenly over
 * the runtime's runs (query.h), so over all the runs with it about P of them
 * are checked: the ratio is the average cost a user pays for P. */
#include "ssb_verify.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "coproc/query.h"

static double wall(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* One run of root with the check at rate; its wall time, or -1 when it
 * failed or its result differs from want (or the check found a mismatch). */
static double timed_run(coproc_plan *p, coproc_node *root, int q, double rate, const ssb_result *want,
                        int *checked)
{
    coproc_query_options o;
    coproc_query_options_init(&o);
    o.verify = rate;
    coproc_query_result r;
    double t0 = wall();
    coproc_status s = coproc_query_run(p, root, &o, &r);
    double t = wall() - t0;
    if (s != COPROC_OK)
        return -1;
    ssb_result got;
    char why[256];
    int ok = ssb_result_from_table(r.table, q, &got) == 0;
    if (ok) {
        ok = ssb_result_equal(&got, want, why, sizeof why);
        ssb_result_free(&got);
    }
    *checked += r.verified != 0;
    ok &= r.verified != -1;
    coproc_query_result_free(&r);
    return ok ? t : -1;
}

int ssb_verify_cost(coproc_runtime *rt, const ssb_db *db, const ssb_tables *tables,
                    const int *run_q, int repeat, double rate, int quiet, json_t *doc)
{
    int all_ok = 1, checks = 0, runs = 0;
    double plain = 0, with = 0;
    json_t *jq = json_array();
    if (!quiet)
        printf("%-5s %10s %10s %7s %7s\n", "query", "plain_ms", "verify_ms", "ratio", "checks");
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
        if (ssb_plan_build(p, tables, q, &root) != COPROC_OK) {
            all_ok = 0;
            coproc_plan_free(p);
            ssb_result_free(&want);
            continue;
        }
        int qchecks = 0, ok = 1;
        double qp = 0, qv = 0;
        /* Warm: both engines' kernels built, the caches filled. */
        ok &= timed_run(p, root, q, 0, &want, &qchecks) >= 0;
        coproc_query_options o;
        coproc_query_options_init(&o);
        o.mode = COPROC_QUERY_OPERATORS;
        o.verify = 0;
        coproc_query_result r;
        if (coproc_query_run(p, root, &o, &r) == COPROC_OK)
            coproc_query_result_free(&r);
        for (int i = 0; i < repeat && ok; i++)
            for (int k = 0; k < 2 && ok; k++) {
                int verify_now = (i + k) % 2;
                double t = timed_run(p, root, q, verify_now ? rate : 0, &want, &qchecks);
                ok &= t >= 0;
                if (verify_now)
                    qv += t;
                else
                    qp += t;
            }
        all_ok &= ok;
        checks += qchecks;
        runs += repeat;
        plain += qp;
        with += qv;
        if (!quiet)
            printf("%-5s %10.2f %10.2f %7.3f %7d%s\n", ssb_query_name(q), 1e3 * qp / repeat,
                   1e3 * qv / repeat, qp > 0 ? qv / qp : NAN, qchecks, ok ? "" : "  WRONG");
        json_t *e = json_object();
        json_object_set_new(e, "query", json_string(ssb_query_name(q)));
        json_object_set_new(e, "plain_seconds", json_real(qp / repeat));
        json_object_set_new(e, "verify_seconds", json_real(qv / repeat));
        json_object_set_new(e, "checks", json_integer(qchecks));
        json_object_set_new(e, "ok", json_boolean(ok));
        json_array_append_new(jq, e);
        coproc_plan_free(p);
        ssb_result_free(&want);
    }
    if (!quiet)
        printf("all   %10.2f %10.2f %7.3f %7d  (rate %g: %d checks in %d runs; cost %+.1f %%)\n",
               1e3 * plain, 1e3 * with, plain > 0 ? with / plain : NAN, checks, rate, checks, runs,
               plain > 0 ? 100 * (with / plain - 1) : NAN);
    json_t *v = json_object();
    json_object_set_new(v, "rate", json_real(rate));
    json_object_set_new(v, "plain_seconds", json_real(plain));
    json_object_set_new(v, "verify_seconds", json_real(with));
    json_object_set_new(v, "checks", json_integer(checks));
    json_object_set_new(v, "runs", json_integer(runs));
    json_object_set_new(v, "queries", jq);
    json_object_set_new(doc, "verify_cost", v);
    return all_ok ? 0 : 1;
}
