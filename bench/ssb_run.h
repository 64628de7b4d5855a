/* ssb_run.h - one verified run of an SSB query plan (coproc-ssb's modes). */
#ifndef COPROC_SSB_RUN_H
#define COPROC_SSB_RUN_H

#include "ssb_plans.h"

typedef struct ssb_run {
    double seconds;          /* the run's time on the runtime's clock (virtual on simulated devices) */
    int ok;                  /* verified against the reference */
    coproc_query_result r;   /* kept for the report (last run) */
} ssb_run;

/* Run q's plan once (mode; device -1: placement; hybrid: group-bys split
 * across devices) and verify it against want. -1 when the run failed. */
int ssb_run_once(coproc_runtime *rt, coproc_plan *p, coproc_node *root, int q, coproc_query_mode mode,
                 int device, int hybrid, const ssb_result *want, ssb_run *out);

/* The median of v[0..n) (sorts v). */
double ssb_median(double *v, int n);

#endif
