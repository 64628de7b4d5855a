/* hostrun.h - one placed operator (checked with coproc__op_check, ops/table.h),
 * as a worker runs it on one device:
 * inputs made resident (residency.h) or streamed when they exceed the budget
 * (hostops.h), the in-memory operator run, results brought back as host
 * columns; and the estimate of what that costs on each device. */
#ifndef COPROC_HOSTRUN_H
#define COPROC_HOSTRUN_H

#include "backend/backend.h"
#include "cost/cost.h"
#include "data/column.h"

/* The device op must run on because an input is a device column, or -1. */
int coproc__op_home_device(const coproc_op *op);

/* Whether dev can run op at all (fp64 inputs need fp64). */
int coproc__op_runs_on(const coproc_op *op, const coproc__device *dev);

/* 0 when op cannot stream (an operator without a streamed form: none of
 * today's) and its inputs and working memory exceed dev's budget: it would
 * fail there (placement avoids such a device). */
int coproc__op_fits(coproc_runtime *rt, const coproc_op *op, coproc__device *dev);

/* Estimated seconds of op on dev: moving the inputs not resident there, the
 * computation (the device's learned model) and the result back. Negative when
 * the model of that operator is not fitted yet. *transfer gets the movement part. */
double coproc__op_estimate(coproc__device *dev, const coproc_op *op, double *transfer);

/* Bytes of op's inputs. */
double coproc__op_input_bytes(const coproc_op *op);

/* Copy op's host inputs to dev ahead of its run (the copy queue overlaps the
 * operator running now), when they fit without evicting anything. */
void coproc__op_prefetch(coproc_runtime *rt, coproc__device *dev, const coproc_op *op);

/* Run op on dev; *out receives the result (host columns). */
coproc_status coproc__op_run(coproc_runtime *rt, coproc__device *dev, const coproc_op *op,
                             coproc_result *out);

/* Turn every device column of r (made on dev) into a host column. On error
 * the columns not yet turned are freed. */
coproc_status coproc__result_to_host(coproc_runtime *rt, coproc__device *dev, coproc_result *r);

/* Time an operator run on dev into dev's model of op's kind, with the
 * features the operator table gives for op and its result r (dev NULL, or
 * calibration running: nothing); once the model has settled, only some runs
 * are timed (coproc__op_timer_begin_sampled). */
void coproc__op_observe_begin(coproc__device *dev, coproc__op_timer *t, const coproc_op *op);
void coproc__op_observe_end(coproc_runtime *rt, coproc__device *dev, coproc__op_timer *t,
                            const coproc_op *op, const coproc_result *r, coproc_status s);

/* A synchronous call on device columns (no task): observed as above, and on
 * the runtime's clock as a task submitted and waited for at once. dev NULL:
 * nothing. */
typedef struct coproc__op_call {
    coproc__op_timer timer;
    coproc__task_clock clock;
} coproc__op_call;
void coproc__op_call_begin(coproc_runtime *rt, coproc__device *dev, coproc__op_call *c,
                           const coproc_op *op);
void coproc__op_call_end(coproc_runtime *rt, coproc__device *dev, coproc__op_call *c,
                         const coproc_op *op, const coproc_result *r, coproc_status s);

#endif
