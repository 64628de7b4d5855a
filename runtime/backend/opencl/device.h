/* device.h - one OpenCL device as the runtime holds it, and discovery. */
#ifndef COPROC_DEVICE_H
#define COPROC_DEVICE_H

#include <pthread.h>
#include <stdatomic.h>
#include <CL/cl.h>

#include "coproc.h"
#include "backend/opencl/memory.h"
#include "backend/opencl/progress.h"
#include "backend/opencl/quirks.h"

typedef struct coproc_runtime coproc_runtime;
struct coproc__backend;
typedef struct coproc__profile coproc__profile;

/* Upper bound on operator kinds (cost/profile.h's coproc__op_kind). */
#define COPROC__DEVICE_OP_KINDS 16

/* Upper bound on embedded kernel programs (cl/ files). */
#define COPROC__MAX_PROGRAMS 64

typedef struct coproc__device {
    coproc_device_info info;
    int index;                    /* index in the runtime */
    coproc_runtime *rt;           /* the runtime that opened it */
    /* A wait in the caller's thread (sync.h) that sees no progress for this
     * long gives the device up (0: waits are not bounded), and then sets
     * no_progress: every later wait and launch on it fails at once, and the
     * watchdog moves its queued work elsewhere (sched/watchdog.c). */
    double wait_bound_s;
    atomic_int no_progress;
    /* The backend that opened it (backend/backend.h) and that backend's own
     * state for it (NULL for OpenCL devices). */
    const struct coproc__backend *backend;
    void *backend_state;
    cl_platform_id platform;
    cl_device_id id;
    cl_context context;
    cl_command_queue queue;       /* in-order, profiling enabled: kernels */
    cl_command_queue copy_queue;  /* in-order, profiling enabled: copies that overlap the
                                     kernels on `queue` (streaming operators) */
    char fingerprint[768];        /* platform, device, driver, PCI id, coproc version */
    char build_options[256];      /* -D flags that tune kernels for this device */
    int cpu_path;                 /* 1: contiguous chunk per work-item; 0: GPU strided loop */
    coproc__quirks quirks;        /* what this driver gets wrong (quirks.h); zero: nothing */
    pthread_mutex_t submit_lock;  /* held while enqueueing where quirks.serial_submit (sync.h) */

    pthread_mutex_t program_lock; /* guards programs[] */
    cl_program programs[COPROC__MAX_PROGRAMS];
    struct coproc__program_variant *variants; /* built by coproc__program_variant (program.h),
                                                 a list guarded by program_lock */
    atomic_uint_fast64_t programs_made; /* built or loaded: an operator's run that made one
                                           is not a sample of its cost (cost.c) */
    /* Programs being built or loaded for it now, and when the last one ended
     * (coproc__now, in ns): compiling is not a device that makes no progress
     * (progress.h). */
    atomic_int building;
    atomic_uint_fast64_t build_end_ns;
    /* Its commands' completions and first launches (progress.h): what the
     * watchdog and the bounded waits measure; and the kernels not launched yet. */
    coproc__progress *progress;
    coproc__fresh_kernels fresh;
    /* The smallest CL_KERNEL_WORK_GROUP_SIZE of the kernels built for it so
     * far (0: none yet): the launch geometry keeps work-groups within it
     * (launch.c), as a kernel using many registers may allow fewer work-items
     * than the device's maximum (program.c). */
    atomic_size_t kernel_group_limit;

    coproc__pool pool;            /* freed large buffers for reuse */

    /* Kernel objects made once and lent to one call at a time, with their
     * scratch buffers (program.c, coproc__kernel_lease); NULL until the first. */
    pthread_mutex_t kernel_lock;  /* guards kernels */
    struct coproc__kernel_pool *kernels;

    /* Device memory that operators over host columns may use (residency cache
     * plus working memory), and whether host columns are used in place on a
     * host-unified device (no copy) - see coproc_options. */
    uint64_t budget_bytes;
    int zero_copy;
    struct coproc__residency *residency; /* owned; see residency.h */
    struct coproc__staging *staging;     /* owned; pinned staging buffers (transfer.h) */
    /* Bytes moved between host and device, each way (transfer.h counts them). */
    atomic_uint_fast64_t bytes_h2d, bytes_d2h;
    /* Query runs the shadow check (query/verify.c) compared that used it, and
     * of those the ones whose two results differed. */
    atomic_uint_fast64_t verify_runs, verify_mismatches;

    pthread_mutex_t model_lock;   /* guards profile's models */
    coproc__profile *profile;     /* calibration results and cost models; owned, never NULL after init */
    int profile_source;           /* 0 empty, 1 loaded from cache, 2 calibrated now */
    /* Nonzero while calibration runs operators: they seed the models
     * themselves, so the public entry points must not observe them twice. */
    volatile int observe_off;
    /* Per operator kind: runs observed on device columns since open, and
     * whether its model has settled, so runs are timed only 1 in N (cost.c). */
    atomic_uint op_runs[COPROC__DEVICE_OP_KINDS];
    atomic_int op_settled[COPROC__DEVICE_OP_KINDS];
    atomic_uint op_last_us[COPROC__DEVICE_OP_KINDS]; /* the last run's wall-clock time */
    atomic_uint op_prev_us[COPROC__DEVICE_OP_KINDS]; /* and the one's before it */
} coproc__device;

/* A device as discovery finds it, before selection. */
typedef struct coproc__found_device {
    coproc_device_info info;
    cl_platform_id platform;
    cl_device_id id;
} coproc__found_device;

/*
 * Enumerate every OpenCL platform and device. *out is malloc'd (caller frees).
 * NO_PLATFORM when the loader finds no platform; DRIVER_ERROR when every
 * platform fails; a platform that fails while others work is skipped with a
 * warning. Finding zero devices is not an error here.
 */
coproc_status coproc__discover(coproc_runtime *rt, coproc__found_device **out, int *count);

/* Keep the devices that `spec` selects (see coproc_options.devices): keep[i] = 0/1. */
coproc_status coproc__select_devices(coproc_runtime *rt, const char *spec,
                                     const coproc__found_device *found, int count, int *keep);

/* Create context and queue, compute fingerprint and build options. */
coproc_status coproc__device_init(coproc_runtime *rt, coproc__device *dev,
                                  const coproc__found_device *found, int index);
void coproc__device_release(coproc__device *dev);

/* Choose the kernel access pattern (1: CPU contiguous chunks, 0: GPU strided,
 * coalesced) - set from the device type at init. Tests call it to run the GPU
 * path on PoCL; only valid before any program is built on dev. */
void coproc__device_set_path(coproc__device *dev, int cpu_path);

/* Device seconds from start's START to end's END (the same event for one
 * command), from OpenCL profiling; -1 where the driver gives none or its
 * counters are placeholders (quirks.h no_profiling): the caller's wall clock. */
double coproc__device_event_seconds(const coproc__device *dev, cl_event start, cl_event end);

/* For the quirk context_per_thread (quirks.h): a context of this thread's own
 * on the first device that has it, NULL where none has it (or it cannot be
 * made). Called at the start of each thread coproc starts that may run
 * commands; coproc__thread_context_end(it) on the same thread at its end. */
cl_context coproc__thread_context_begin(coproc_runtime *rt);
void coproc__thread_context_end(cl_context own);

#endif
