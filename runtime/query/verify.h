/* verify.h - the shadow check: a sampled fraction of query runs run again on
 * the other engine (fused against one operator at a time) or on another
 * device, and the two results are compared (verify.c). A mismatch is logged
 * with the plan's pipelines and the first differing row, and counted in the
 * device stats of every device the run used (coproc_device_stats). */
#ifndef COPROC_QUERY_VERIFY_H
#define COPROC_QUERY_VERIFY_H

#include <stdatomic.h>

#include "query/plan.h"

/* Per runtime, inside the query layer's state (state.c). */
typedef struct coproc__verify {
    double rate;              /* COPROC_VERIFY's sampled fraction, 0: off */
    int other_device;         /* 1: "device" - the same engine on another device first */
    atomic_uint_fast64_t runs; /* runs asked about so far: the sampling's counter */
    uint64_t fault_nth;       /* COPROC_FAULT_VERIFY=N: the N-th check sees its shadow's
                                 first value changed (tests of the comparison) */
    atomic_uint_fast64_t checks; /* checks made so far */
} coproc__verify;

void coproc__verify_init(coproc__verify *v);
/* COPROC_VERIFY and COPROC_FAULT_VERIFY into v (coproc_open). */
void coproc__verify_configure(coproc_runtime *rt, coproc__verify *v);

/* Check the successful run of root (res, run with opts) if it is sampled:
 * opts->verify (negative: COPROC_VERIFY's rate). Sets res->verified. Never
 * changes res otherwise, never fails the run: a shadow run that cannot run
 * leaves verified 0. */
void coproc__verify_run(coproc_plan *p, coproc_node *root, const coproc_query_options *opts,
                        coproc_query_result *res);

#endif
