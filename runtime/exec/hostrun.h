/* hostrun.h - one submitted operator, as a worker runs it on one device:
 * inputs made resident (residency.h) or streamed when they exceed the budget
 * (hostops.h), the in-memory operator run, results brought back as host
 * columns; and the estimate of what that costs on each device. */
#ifndef COPROC_HOSTRUN_H
#define COPROC_HOSTRUN_H

#include "data/column.h"

/* Check op's arguments before it is queued (the message names what is wrong). */
coproc_status coproc__op_check(coproc_runtime *rt, const coproc_op *op);

/* The device op must run on because an input is a device column, or -1. */
int coproc__op_home_device(const coproc_op *op);

/* Whether dev can run op at all (fp64 inputs need fp64). */
int coproc__op_runs_on(const coproc_op *op, const coproc__device *dev);

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

#endif
