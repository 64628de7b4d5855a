/* ssb_run.c - one verified run of an SSB query plan (ssb_run.h). */
#include "ssb_run.h"

#include <stdio.h>
#include <stdlib.h>

int ssb_run_once(coproc_runtime *rt, coproc_plan *p, coproc_node *root, int q, coproc_query_mode mode,
                 int device, int hybrid, const ssb_result *want, ssb_run *out)
{
    coproc_query_options o;
    coproc_query_options_init(&o);
    o.mode = mode;
    o.device = device;
    o.hybrid = hybrid;
    coproc_query_result_free(&out->r);
    coproc_status s = coproc_query_run(p, root, &o, &out->r);
    const char *how = hybrid ? "hybrid" : mode == COPROC_QUERY_FUSED ? "fused" : "operators";
    if (s != COPROC_OK) {
        fprintf(stderr, "coproc-ssb: %s (%s, device %d): %s\n", ssb_query_name(q), how, device,
                coproc_errmsg(rt));
        out->ok = 0;
        return -1;
    }
    out->seconds = out->r.seconds;
    ssb_result got;
    char why[512] = "";
    out->ok = ssb_result_from_table(out->r.table, q, &got) == 0 && ssb_result_equal(&got, want, why, sizeof why);
    if (!out->ok)
        fprintf(stderr, "coproc-ssb: %s (%s, device %d): WRONG RESULT: %s\n", ssb_query_name(q), how, device,
                why);
    ssb_result_free(&got);
    return 0;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double ssb_median(double *v, int n)
{
    qsort(v, n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}
