/* sim.h - simulated devices (the "sim" backend of backend.h), inside the
 * backend: a device opened from a calibration profile
 * (COPROC_DEVICES=sim:PROFILE.json[:option=value...][,sim:...]) reports the
 * type, memory and host-unified flag its profile gives, and takes as long as
 * the profile says for every operator (its model curves) and copy (its
 * transfer sweep), times a deterministic noise, on a virtual clock. Its
 * kernels run on a host OpenCL device (the executor: the first CPU device
 * found), in the executor's memory, so results are computed, not invented.
 *
 * open.c opens the devices; clock.c keeps the virtual time and is the table. */
#ifndef COPROC_BACKEND_SIM_H
#define COPROC_BACKEND_SIM_H

#include <pthread.h>
#include <stdint.h>

#include "backend/backend.h"
#include "cost/profile.h"

/* One simulated device's own state (dev->backend_state). */
typedef struct coproc__sim_state {
    coproc__profile *truth;   /* the profile it behaves as (never learns) */
    double noise;             /* relative: each cost times 1 + noise * u, u in [-1, 1] */
    uint64_t seed;
    pthread_mutex_t lock;     /* guards the fields below */
    uint64_t draws;           /* noise draws so far */
    double work;              /* seconds of work charged so far */
    double ahead;             /* copies made for the next task, charged when it begins */
    double busy_until;        /* the runtime clock when its last task ended */
    double frontier;          /* when the work charged to its open tasks so far ends: tasks
                                 open at once share the device, one's work after another's */
    double copy_free;         /* when its copy engine ends the copies queued on it so far */
    int tasks_open;           /* tasks running now: work outside one (a column's upload)
                                 is the caller's, and moves the runtime clock itself */
    struct coproc__sim_clock *clock; /* the runtime's */
} coproc__sim_state;

/* The runtime's virtual clock (rt->backend_state). */
typedef struct coproc__sim_clock {
    pthread_mutex_t lock;
    double now;               /* the latest task end a caller has waited for */
} coproc__sim_clock;

/* open.c: whether spec names simulated devices (its first entry starts with "sim:"). */
int coproc__sim_claims(const char *spec);
coproc_status coproc__sim_open(coproc_runtime *rt, const char *spec);
void coproc__sim_release_device(coproc__device *dev);
void coproc__sim_close(coproc_runtime *rt);

#endif
