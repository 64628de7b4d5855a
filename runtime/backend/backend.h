/* backend.h - the device-backend table: what differs between kinds of device
 * behind one interface (as SQLite's sqlite3_vfs or PoCL's device ops), so the
 * rest of the runtime - estimates, models, policies, workers, residency,
 * budgets, streaming, out-of-memory fallback - runs unchanged over any of them.
 *
 * Two backends: OpenCL devices (backend/opencl/), timed by the wall clock and
 * OpenCL profiling; and simulated devices (backend/sim/), which behave as a
 * calibration profile says on a virtual clock while their kernels run on a
 * host OpenCL device, so their results are real. A runtime's devices all come
 * from one backend: they share one clock.
 *
 * A backend sees the runtime through coproc__device and its own state
 * (dev->backend_state, rt->backend_state); nothing else reaches into that. */
#ifndef COPROC_BACKEND_H
#define COPROC_BACKEND_H

#include <stddef.h>

#include "coproc.h"

typedef struct coproc__device coproc__device;

/* Raise when a field is added; a table of another version is refused. */
#define COPROC__BACKEND_VERSION 3

/* One task's time on its device, on the runtime's clock (seconds). */
typedef struct coproc__task_clock {
    double submitted; /* when the caller submitted it */
    double start;     /* when its device began it */
    double end;       /* when it finished */
    double seconds;   /* the work it took on its device (end - start for OpenCL) */
    double mark;      /* the backend's private reading at the start */
} coproc__task_clock;

typedef struct coproc__backend {
    int version;      /* COPROC__BACKEND_VERSION */
    const char *name; /* "opencl", "sim" */

    /* Whether the device selection (coproc_options.devices after
     * COPROC_DEVICES) names this backend's devices. */
    int (*claims)(const char *spec);
    /* Open the devices `spec` selects into rt->devices / rt->device_count
     * (each with dev->backend set and a profile allocated), and the
     * backend's runtime state. A failure leaves the message on rt. */
    coproc_status (*open)(coproc_runtime *rt, const char *spec);
    /* Release one device, then (after every device) the runtime state. */
    void (*release_device)(coproc__device *dev);
    void (*close)(coproc_runtime *rt);

    /* Nonzero: devices are calibrated by measuring them (else the profile
     * they were opened with is their calibration). */
    int calibrates;

    /* An operator of model kind `kind` (coproc__op_kind) with features x ran
     * on dev, `measured` seconds on the hardware that ran it (< 0: not
     * timed): the seconds it took on dev, which its model learns. */
    double (*op_ran)(coproc__device *dev, int kind, const double *x, double measured);
    /* A copy of `bytes` to (to_device 1) or from dev, from or to pinned host
     * memory or not, ran in `measured` seconds (< 0: not timed): its seconds on
     * dev. ahead: made by the prefetcher for the task after the running one. */
    double (*copy_ran)(coproc__device *dev, int to_device, int pinned, int ahead, double bytes,
                       double measured);

    /* A copy of `bytes` to dev, from pinned host memory or not, was enqueued on dev->copy_queue
     * inside a task, not waited for: it runs beside the kernels on dev->queue (a copy engine),
     * starting once the work enqueued before it is done. Returns when it ends on the backend's
     * clock, for queue_waits; -1 where the backend keeps no clock of its own (OpenCL: the events
     * order it). */
    double (*copy_queued)(coproc__device *dev, int pinned, double bytes);
    /* dev->queue's next command waits for a copy that ends at `at`
     * (copy_queued's; -1: none): it starts no earlier. */
    void (*queue_waits)(coproc__device *dev, double at);

    /* A fused query kernel ran on dev over `rows` rows reading `bytes` of
     * columns with `work` operations a row, `measured` seconds on the
     * hardware that ran it: its seconds on dev. */
    double (*pipeline_ran)(coproc__device *dev, double bytes, double rows, double work,
                           double measured);

    /* The runtime's clock, seconds. */
    double (*now)(coproc_runtime *rt);
    /* A task on dev begins (c->submitted set by the caller) and ends; they
     * fill the rest of c. */
    void (*task_begin)(coproc_runtime *rt, coproc__device *dev, coproc__task_clock *c);
    void (*task_end)(coproc_runtime *rt, coproc__device *dev, coproc__task_clock *c);
    /* The seconds of work task c (begun, not ended) has done on dev so far. */
    double (*task_elapsed)(coproc_runtime *rt, coproc__device *dev, const coproc__task_clock *c);
    /* The caller has waited for a task that ended at c->end. */
    void (*task_waited)(coproc_runtime *rt, const coproc__task_clock *c);
} coproc__backend;

extern const coproc__backend coproc__backend_opencl;
extern const coproc__backend coproc__backend_sim;

/* The backend whose devices `spec` selects (simulated when it names sim:
 * devices, else OpenCL). */
const coproc__backend *coproc__backend_for(const char *spec);

/* The next comma-separated entry of a device selection at *p, spaces trimmed
 * (possibly empty: ",,"), into *entry and *len; *p moves past it. 0 when
 * nothing is left. */
int coproc__selection_next(const char **p, const char **entry, size_t *len);

#endif
