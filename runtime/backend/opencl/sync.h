/* sync.h - blocking copies, maps and finishes that wait on their own
 * command's event.
 *
 * Mesa 22.3's rusticl returns from a blocking clEnqueueReadBuffer (write,
 * map, clFinish) before the command ran when another thread flushed the same
 * queue in between (a clWaitForEvents or blocking call there sends this
 * thread's command with its own batch, and the blocking call then finds
 * nothing left to wait for; clvk had the same bug, kpet/clvk#241). Four
 * threads reducing on one runtime read stale partials about once a thousand
 * calls (tests/test_isolation.c). Waiting on the command's own event is what
 * the specification promises everywhere, so coproc does it on every driver.
 *
 * Every wait is bounded by dev->wait_bound_s (the runtime's watchdog_seconds,
 * 60 s unless set; 0 waits for ever), and by COPROC__WAIT_FLOOR_S at least,
 * counted as the device's quiet time (progress.h): from the latest of the
 * wait's start, the last completion of any of the device's commands and the
 * last build's end, and not at all while a program builds or a kernel's first
 * launch (inside which a driver may compile it) has not ended. A wait whose
 * device stays quiet that long is taken for a driver that stopped (issue 18:
 * PoCL's basic device deadlocks on its own lock), the device is given up
 * (dev->no_progress, then the watchdog) and the wait returns
 * COPROC__CL_NO_PROGRESS (DEVICE_LOST); later waits and launches on it fail at
 * once, and waits under way on it return within COPROC__WAIT_LOOK_S of the
 * give-up (also the watchdog's: a run it gave up returns then, not when its
 * command ends). A command that still ends after its bound may yet write the
 * memory it was given (a read's destination), which its caller may have freed
 * by then: the bound (60 s by default) is long so that only a driver that has
 * stopped, not a slow one, is given up (docs/reliability.md).
 */
#ifndef COPROC_SYNC_H
#define COPROC_SYNC_H

#include <CL/cl.h>

#include "backend/opencl/device.h"

/* The least bound: a device quiet for less may be a machine too busy to run
 * the driver's threads. */
#define COPROC__WAIT_FLOOR_S 2.0
/* A wait looks this often whether its device was given up meanwhile. */
#define COPROC__WAIT_LOOK_S 0.25

/* clEnqueueReadBuffer / clEnqueueWriteBuffer on q (one of dev's queues),
 * returning once the copy has finished. event (may be NULL) receives the
 * finished command's event. */
cl_int coproc__read_now(coproc__device *dev, cl_command_queue q, cl_mem src, size_t offset,
                        size_t bytes, void *dst, cl_uint nwait, const cl_event *wait,
                        cl_event *event);
cl_int coproc__write_now(coproc__device *dev, cl_command_queue q, cl_mem dst, size_t offset,
                         size_t bytes, const void *src, cl_uint nwait, const cl_event *wait,
                         cl_event *event);

/* clEnqueueMapBuffer, returning once the map has finished; NULL and *err on failure. */
void *coproc__map_now(coproc__device *dev, cl_command_queue q, cl_mem mem, cl_map_flags flags,
                      size_t offset, size_t bytes, cl_int *err);

/* Returns once every command enqueued on q before the call has finished
 * (a marker waited for, then clFinish). */
cl_int coproc__finish(coproc__device *dev, cl_command_queue q);

/* Around every enqueue (and flush) on dev's queues: where the driver needs
 * it (quirks.h serial_submit) one thread at a time submits. Nothing that
 * waits on another thread may run between the two. */
static inline void coproc__submit_begin(coproc__device *dev)
{
    if (dev->quirks.serial_submit)
        pthread_mutex_lock(&dev->submit_lock);
}

static inline void coproc__submit_end(coproc__device *dev)
{
    if (dev->quirks.serial_submit)
        pthread_mutex_unlock(&dev->submit_lock);
}

/* Wait for ev (not released) within dev's bound: CL_SUCCESS, the command's
 * error, or COPROC__CL_NO_PROGRESS (the device is then given up). */
cl_int coproc__wait_event(coproc__device *dev, cl_event ev);

#endif
