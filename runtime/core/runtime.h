/* runtime.h - the runtime handle: devices, options, last error, log, counters.
 * Files that only report errors and log need core/error.h alone. */
#ifndef COPROC_RUNTIME_H
#define COPROC_RUNTIME_H

#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>

#include "coproc.h"
#include "core/error.h"
#include "core/fault.h"
#include "backend/opencl/device.h"
#include "ops/table.h"

#define COPROC__ERRMSG_MAX 8192

/* The smallest device budget (coproc_options.device_budget_bytes, COPROC_BUDGET)
 * a runtime accepts (coproc.h, COPROC_MIN_DEVICE_BUDGET): one stream of chunks
 * needs COPROC__STREAM_MIN_BUDGET (exec/hostops.h, 64 KiB), but the chunked
 * operators add their rows beside a 64 KiB whole (reduce_where and scan fail at
 * exactly 64 KiB) and the partitioned joins a per-compute-unit table, so the
 * floor is twice that: every operator that streams still can. */
#define COPROC__MIN_BUDGET COPROC_MIN_DEVICE_BUDGET

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
    coproc__faults faults;       /* COPROC_FAULT (core/fault.h) */
    double watchdog_s;           /* a running task's least bound; <= 0: no watchdog (task.c) */
    struct coproc__tasks *tasks; /* workers and the scheduler (task.h); NULL until first submit */
    coproc__op_seen seen;      /* output sizes so far, for estimates (ops/table.h) */
    pthread_mutex_t tasks_lock;  /* guards creating `tasks` */
    struct coproc__query_state *query; /* the query layer's programs and learning (query/state.h) */
};

/* The device at index i, or NULL (with an error set) if i is out of range. */
coproc__device *coproc__device_at(coproc_runtime *rt, int i);

#endif
