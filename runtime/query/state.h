/* state.h - what the query layer keeps per runtime between runs: the
 * generated programs built per device (so a repeated query shape never waits
 * for the compiler) and each device's learned correction of the pipelines'
 * cost estimate. Owned by rt->query; thread-safe. */
#ifndef COPROC_QUERY_STATE_H
#define COPROC_QUERY_STATE_H

#include <CL/cl.h>

#include "backend/opencl/device.h"

struct coproc__query_state;

struct coproc__query_state *coproc__query_state_new(void);
/* Releases the programs: call before the devices' contexts go. */
void coproc__query_state_free(struct coproc__query_state *q);

/* The built program for `source` on dev, built once per runtime and device
 * (through the on-disk binary cache) and kept; *out stays owned by the state. */
coproc_status coproc__query_program(coproc_runtime *rt, coproc__device *dev, const char *source,
                                    size_t length, cl_program *out);

/* measured / estimated seconds of the pipelines dev has run (1 before any). */
double coproc__query_correction(coproc_runtime *rt, int device);
void coproc__query_observe(coproc_runtime *rt, int device, double estimate_s, double measured_s);

/* Read what the query layer takes from the environment (COPROC_VERIFY,
 * COPROC_FAULT_VERIFY: verify.h), once, at coproc_open. */
void coproc__query_state_configure(coproc_runtime *rt);

/* The shadow check's state (verify.h), NULL without a query state. */
struct coproc__verify *coproc__query_verify(coproc_runtime *rt);

#endif
