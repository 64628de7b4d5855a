/* ssb_verify.h - coproc-ssb --verify-cost P: what the shadow check
 * (coproc_query_options.verify, COPROC_VERIFY) costs on the SSB queries. */
#ifndef COPROC_SSB_VERIFY_H
#define COPROC_SSB_VERIFY_H

#include <jansson.h>

#include "ssb_plans.h"

/* Each query's fused runs without the check and with it at rate P,
 * interleaved `repeat` times each (at least 1 / P, so that checks happen),
 * every result verified against the reference; prints the total time of
 * each way and their ratio (unless quiet) and puts them under "verify_cost"
 * in doc. Returns 0 when every run was right and no check found a
 * difference, else 1. */
int ssb_verify_cost(coproc_runtime *rt, const ssb_db *db, const ssb_tables *tables,
                    const int *run_q, int repeat, double rate, int quiet, json_t *doc);

#endif
