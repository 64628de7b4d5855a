/* ssb_together.c - the "together" rows of coproc-ssb --compare
 * (ssb_compare.h): every selected query submitted at once, hybrid and
 * placed, on tables made afresh (the data in host memory); the time is the
 * makespan on the runtime's clock, from before the first submission to after
 * the last wait (virtual on simulated devices). Where queries overlap, the
 * morsel split has to see the work other queries queued on each device. */
#include "ssb_compare.h"

#include <stdio.h>
#include <string.h>

#include "coproc/inspect.h"

/* One pass: every query of run_q at once (hybrid or placed). Returns the
 * makespan in seconds, or -1 when a run failed or a result was wrong. */
static double at_once(coproc_runtime *rt, const ssb_db *db, const int *run_q, int hybrid)
{
    ssb_tables t;
    if (ssb_tables_open(rt, db, -1, &t) != COPROC_OK)
        return -1;
    coproc_plan *p[SSB_NQUERIES] = {0};
    coproc_query_task *task[SSB_NQUERIES] = {0};
    int ok = 1;
    double start = coproc_clock_seconds(rt);
    for (int q = 0; q < SSB_NQUERIES && ok; q++) {
        if (!run_q[q])
            continue;
        coproc_node *root;
        coproc_query_options o;
        coproc_query_options_init(&o);
        o.hybrid = hybrid;
        ok = coproc_plan_create(rt, &p[q]) == COPROC_OK &&
             ssb_plan_build(p[q], &t, q, &root) == COPROC_OK &&
             coproc_query_submit(p[q], root, &o, &task[q]) == COPROC_OK;
        if (!ok)
            fprintf(stderr, "coproc-ssb: %s (together): %s\n", ssb_query_name(q),
                    coproc_errmsg(rt));
    }
    for (int q = 0; q < SSB_NQUERIES; q++) {
        if (!task[q])
            continue;
        coproc_query_result r;
        ssb_result want, got;
        char why[512] = "";
        if (coproc_query_wait(task[q], &r) != COPROC_OK) {
            fprintf(stderr, "coproc-ssb: %s (together): %s\n", ssb_query_name(q),
                    coproc_errmsg(rt));
            ok = 0;
            continue;
        }
        int same = ssb_reference_run(db, q, &want) == 0;
        same = same && ssb_result_from_table(r.table, q, &got) == 0;
        if (same) {
            same = ssb_result_equal(&got, &want, why, sizeof why);
            ssb_result_free(&got);
        }
        ssb_result_free(&want);
        if (!same)
            fprintf(stderr, "coproc-ssb: %s (together): WRONG RESULT: %s\n", ssb_query_name(q),
                    why);
        ok &= same;
        coproc_query_result_free(&r);
    }
    double end = coproc_clock_seconds(rt);
    for (int q = 0; q < SSB_NQUERIES; q++)
        if (p[q])
            coproc_plan_free(p[q]);
    ssb_tables_close(&t);
    return ok ? end - start : -1;
}

int ssb_together(coproc_runtime *rt, const ssb_db *db, const int *run_q, int quiet, json_t *doc)
{
    /* A warm-up pass of each (kernels built), then the measured one. */
    double hybrid = -1, placed = -1;
    for (int pass = 0; pass < 2; pass++) {
        hybrid = at_once(rt, db, run_q, 1);
        placed = at_once(rt, db, run_q, 0);
    }
    if (!quiet)
        printf("together (submitted at once, cold): hybrid %.2f ms, placement %.2f ms\n",
               1e3 * hybrid, 1e3 * placed);
    json_t *j = json_object();
    json_object_set_new(j, "hybrid_seconds", hybrid >= 0 ? json_real(hybrid) : json_null());
    json_object_set_new(j, "placement_seconds", placed >= 0 ? json_real(placed) : json_null());
    json_object_set_new(doc, "together", j);
    return hybrid >= 0 && placed >= 0 ? 0 : -1;
}
