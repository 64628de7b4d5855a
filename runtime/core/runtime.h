/* runtime.h - the runtime handle: devices, options, last error, log, counters. */
#ifndef COPROC_RUNTIME_H
#define COPROC_RUNTIME_H

#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>

#include "coproc.h"
#include "backend/opencl/device.h"
#include "ops/table.h"

#define COPROC__ERRMSG_MAX 8192

struct coproc_runtime {
    coproc__device *devices;   /* selected devices, owned */
    int device_count;
    const struct coproc__backend *backend; /* the backend of every device (backend.h) */
    void *backend_state;       /* that backend's own, e.g. the simulated clock */
    char cache_dir[1024];      /* "" when no cache directory could be made */
    int disable_binary_cache;
    coproc_log_fn log;
    void *log_user;
    coproc_log_level log_level;

    pthread_mutex_t err_lock;  /* guards errmsg */
    char errmsg[COPROC__ERRMSG_MAX];

    atomic_uint_fast64_t programs_built;
    atomic_uint_fast64_t programs_from_cache;
    atomic_uint_fast64_t program_cache_writes;
    atomic_uint_fast64_t next_column_id; /* host columns' ids (residency keys) */

    uint64_t cpu_cache_bytes;  /* the CPUs' largest data caches, all together (hwloc); 0
                                  unknown - calibration evicts them before timing a copy */
    int policy;                /* coproc_policy, after COPROC_POLICY */
    int fixed_device;
    int queue_depth;
    struct coproc__tasks *tasks; /* workers and the scheduler (task.h); NULL until first submit */
    coproc__op_seen seen;      /* output sizes so far, for estimates (ops/table.h) */
    pthread_mutex_t tasks_lock;  /* guards creating `tasks` */
};

/* Record an error message on rt (may be NULL) and return s, so callers write
 * `return coproc__fail(rt, COPROC_X, "...")`. */
coproc_status coproc__fail(coproc_runtime *rt, coproc_status s, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* As coproc__fail for an OpenCL error: the message ends with the CL error name,
 * and the status is derived from the CL code (out of memory, device lost, ...). */
coproc_status coproc__fail_cl(coproc_runtime *rt, int cl_err, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Map an OpenCL error code to the closest coproc status. */
coproc_status coproc__status_from_cl(int cl_err);

/* Copy the last error message of rt into buf (size bytes), under its lock. */
void coproc__errmsg_copy(coproc_runtime *rt, char *buf, size_t size);

void coproc__log(coproc_runtime *rt, coproc_log_level level, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* The device at index i, or NULL (with an error set) if i is out of range. */
coproc__device *coproc__device_at(coproc_runtime *rt, int i);

#endif
