/* state.h - what the query layer keeps per runtime between runs: the
 * generated programs built per device (so a repeated query shape never waits
 * for the compiler) and each device's learned correction of the pipelines'
 * cost estimate. Owned by rt->query; thread-safe. */
#ifndef COPROC_QUERY_STATE_H
#define COPROC_QUERY_STATE_H

#include <pthread.h>
#include <stdint.h>

#include <CL/cl.h>

#include "backend/opencl/device.h"

struct coproc__query_state;
struct coproc_query_task;

/* The query tasks of a runtime (coproc_query_submit) not yet waited on; run.c
 * keeps the list, the state holds it. */
typedef struct coproc__query_tasks {
    pthread_mutex_t lock;
    pthread_cond_t finished;       /* broadcast as each task's run ends */
    struct coproc_query_task *live;
    uint64_t next_seq;             /* submission order, for coproc_drain */
} coproc__query_tasks;

struct coproc__query_state *coproc__query_state_new(void);
/* Releases the programs: call before the devices' contexts go, after
 * coproc__query_tasks_close. */
void coproc__query_state_free(struct coproc__query_state *q);

/* rt's list of query tasks; NULL when the runtime has no query state (out of
 * host memory at open: submitting answers HOST_OUT_OF_MEMORY). */
coproc__query_tasks *coproc__query_tasks_of(coproc_runtime *rt);

/* Return once every query task submitted before the call has finished its
 * run (run.c; coproc_drain). The tasks stay their callers'. */
void coproc__query_tasks_drain(coproc_runtime *rt);

/* Wait for every query task's run to end, then free the tasks never waited
 * on and their results (run.c; coproc_close, before the workers stop: a run
 * may have operators queued there). */
void coproc__query_tasks_close(coproc_runtime *rt);

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
