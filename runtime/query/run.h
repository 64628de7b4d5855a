/* run.h - one run of a plan, as both engines see it: the runtime, the options,
 * the clock and the report of each pipeline (run.c owns it). */
#ifndef COPROC_QUERY_RUN_H
#define COPROC_QUERY_RUN_H

#include "query/plan.h"

typedef struct coproc__qrun {
    coproc_runtime *rt;
    const coproc_plan *plan;
    coproc_query_options opts;
    double t0;                    /* wall clock at the start (seconds) */
    coproc_pipeline_info *info;   /* reported pipelines, in order */
    int ninfo, cap;
    char note[256];               /* why the fused engine fell back, else "" */
} coproc__qrun;

/* Seconds since the run started. */
double coproc__qrun_now(const coproc__qrun *run);

/* Append one pipeline's report (copied). */
coproc_status coproc__qrun_report(coproc__qrun *run, const coproc_pipeline_info *info);

/* Run the plan rooted at root one operator at a time (operators_mode.c); *out
 * is a new table of host columns. */
coproc_status coproc__operators_run(coproc__qrun *run, const coproc_node *root,
                                    coproc_table **out);

/* Run it as fused pipelines (fused.c). COPROC_UNSUPPORTED (with run->note set,
 * nothing left behind) when some pipeline cannot be fused: the caller then
 * runs the plan one operator at a time. */
coproc_status coproc__fused_run(coproc__qrun *run, const coproc_node *root, coproc_table **out);

#endif
