/* ssb_compare.h - coproc-ssb --compare: each query under each way of
 * placing it (hybrid morsels over every device, learned placement of whole
 * pipelines, each device alone) in one run, interleaved, with the ideal
 * split those single-device times imply. */
#ifndef COPROC_SSB_COMPARE_H
#define COPROC_SSB_COMPARE_H

#include <jansson.h>

#include "ssb_plans.h"

/* Run the queries run_q[] marks, `repeat` times each strategy; print the
 * table (unless quiet) and put it under "compare" in doc. cold: each run on
 * tables made afresh, so that no device holds their columns yet (the data
 * in host memory); else the devices' caches keep what earlier runs copied
 * (warm). Returns 0 when every result was verified. */
int ssb_compare(coproc_runtime *rt, const ssb_db *db, const ssb_tables *tables, const int *run_q,
                int repeat, int cold, int quiet, json_t *doc);

/* Every query run_q[] marks submitted at once, hybrid and placed, on
 * fresh tables; the makespans (runtime clock) go under "together" in doc
 * (the "compare" object) and are printed unless quiet. Returns 0 when every
 * result was verified (ssb_together.c). */
int ssb_together(coproc_runtime *rt, const ssb_db *db, const int *run_q, int quiet, json_t *doc);

/* The device the static rule (Trueno-DB's) picks, from each device's
 * estimate of the whole query (the sum of its pipelines' estimates; <= 0:
 * none). */
int ssb_rule_device(coproc_runtime *rt, const double *est, int ndev);

/* The budget sweep: for each of the npct percentages of the queries'
 * working set (ssb_working_set_bytes), a runtime of its own with that
 * device budget, and each query run with the data in host memory (fresh
 * tables every run) by every strategy; prints the totals over the queries
 * (unless quiet) and puts them under "budget_sweep" in doc. Returns 0 when
 * every result was verified (ssb_sweep.c). `operators` 0 leaves out the
 * strategies that run the plan one operator at a time (WTAR, ops CPU). */
int ssb_sweep(const ssb_db *db, const int *run_q, int repeat, const int *pct, int npct, int operators,
              int quiet, json_t *doc);

#endif
