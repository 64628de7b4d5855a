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

#endif
