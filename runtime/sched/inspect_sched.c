/* inspect_sched.c - the placement half of coproc/inspect.h: policy names, and
 * the estimate the scheduler is given for an operator on a device. */
#include "coproc/inspect.h"
#include "core/runtime.h"
#include "exec/hostrun.h"
#include "ops/table.h"
#include "sched/scheduler.h"

_Static_assert(COPROC_POLICY_WTAR == (int)COPROC__POLICY_WTAR &&
                   COPROC_POLICY_FIXED == (int)COPROC__POLICY_FIXED &&
                   COPROC_POLICY_FIXED + 1 == (int)COPROC__POLICY_COUNT,
               "public and internal policies differ");

const char *coproc_policy_name(coproc_policy p)
{
    return (unsigned)p < COPROC__POLICY_COUNT ? coproc__policy_name((coproc__policy)p) : "invalid";
}

int coproc_policy_parse(const char *name) { return coproc__policy_parse(name); }

coproc_status coproc_op_estimate(coproc_runtime *rt, const coproc_op *op, int device,
                                 double *seconds, double *transfer_seconds)
{
    if (!rt)
        return COPROC_NULL_POINTER;
    if (!op)
        return coproc__fail(rt, COPROC_NULL_POINTER, "coproc_op_estimate: op is NULL");
    coproc__device *dev = coproc__device_at(rt, device);
    if (!dev)
        return COPROC_INVALID_ARGUMENT;
    const coproc__op_def *def;
    coproc_status s = coproc__op_check(rt, op, &def);
    if (s != COPROC_OK)
        return s;
    if (!coproc__op_runs_on(op, dev))
        return coproc__fail(rt, COPROC_UNSUPPORTED, "coproc_op_estimate: device %d (%s) cannot "
                            "run this %s (float64 input, no fp64)", device, dev->info.name,
                            coproc_op_kind_name(op->kind));
    double transfer = 0;
    double estimate = coproc__op_estimate(dev, op, &transfer);
    if (seconds)
        *seconds = estimate;
    if (transfer_seconds)
        *transfer_seconds = transfer;
    return COPROC_OK;
}
