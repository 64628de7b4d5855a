/* sync.c - blocking OpenCL calls that wait on their own event, within the
 * device's bound (sync.h). */
#include "backend/opencl/sync.h"

#include <pthread.h>
#include <stdlib.h>

#include "core/error.h"
#include "core/fault.h"
#include "core/runtime.h"
#include "backend/opencl/progress.h"
#include "cost/bandwidth.h"
#include "sched/tasks_internal.h"

/* One bounded wait: the event's completion callback signals it. Shared by
 * the waiter and the callback, freed by whichever lets go last (a wait that
 * gives up returns before the callback ever runs). */
typedef struct bounded_wait {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    int done; /* the callback ran */
    cl_int status;
    int refs;
} bounded_wait;

static void bw_unref(bounded_wait *w)
{
    pthread_mutex_lock(&w->lock);
    int last = --w->refs == 0;
    pthread_mutex_unlock(&w->lock);
    if (last) {
        pthread_cond_destroy(&w->cond);
        pthread_mutex_destroy(&w->lock);
        free(w);
    }
}

static void CL_CALLBACK bw_complete(cl_event ev, cl_int status, void *user)
{
    (void)ev;
    bounded_wait *w = user;
    pthread_mutex_lock(&w->lock);
    w->done = 1;
    w->status = status;
    pthread_cond_broadcast(&w->cond);
    pthread_mutex_unlock(&w->lock);
    bw_unref(w);
}

/* The device is given up: later calls fail at once, and the watchdog moves
 * its queued work (sched/watchdog.c reads no_progress). */
static cl_int no_progress(coproc__device *dev, double waited_s)
{
    if (atomic_exchange(&dev->no_progress, 1) == 0)
        coproc__log(dev->rt, COPROC_LOG_ERROR,
                    "device %d (%s): a command made no progress in %.2f s (its bound: no "
                    "command of the device completed, nothing was built): the device is given up",
                    dev->index, dev->info.name, waited_s);
    return COPROC__CL_NO_PROGRESS;
}

/* clWaitForEvents, its end noted as the device's progress. */
static cl_int wait_unbounded(coproc__device *dev, cl_event ev)
{
    cl_int err = clWaitForEvents(1, &ev);
    if (err == CL_SUCCESS)
        coproc__progress_note(dev);
    return err;
}

cl_int coproc__wait_event(coproc__device *dev, cl_event ev)
{
    if (atomic_load(&dev->no_progress))
        return COPROC__CL_NO_PROGRESS;
    double bound = dev->wait_bound_s;
    if (bound <= 0 || dev->quirks.unbounded_waits)
        return wait_unbounded(dev, ev);
    if (bound < COPROC__WAIT_FLOOR_S)
        bound = COPROC__WAIT_FLOOR_S;
    int stuck = coproc__fault(dev->rt, dev->index, COPROC__FAULT_STUCK) == COPROC__CL_NO_PROGRESS;
    double start = coproc__now();
    /* Already over (a read right after a short kernel often is): no
     * callback to arm. */
    cl_int st = CL_QUEUED;
    if (!stuck &&
        clGetEventInfo(ev, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof st, &st, NULL) == CL_SUCCESS &&
        st <= CL_COMPLETE) {
        if (st == CL_COMPLETE)
            coproc__progress_note(dev);
        return st < 0 ? st : CL_SUCCESS;
    }
    /* Sent to the device before the wait sleeps: a driver need not start
     * what was never flushed (rusticl submits only on a flush or a wait;
     * Oclgrind not even on a flush: quirk waits-run-commands, above). */
    cl_command_queue q = NULL;
    if (clGetEventInfo(ev, CL_EVENT_COMMAND_QUEUE, sizeof q, &q, NULL) == CL_SUCCESS && q) {
        coproc__submit_begin(dev);
        clFlush(q);
        coproc__submit_end(dev);
    }
    bounded_wait *w = calloc(1, sizeof *w);
    if (!w)
        return CL_OUT_OF_HOST_MEMORY;
    pthread_mutex_init(&w->lock, NULL);
    coproc__cond_init_monotonic(&w->cond);
    w->refs = 2;
    cl_int err = clSetEventCallback(ev, CL_COMPLETE, bw_complete, w);
    if (err != CL_SUCCESS) {
        w->refs = 1;
        bw_unref(w);
        return stuck ? no_progress(dev, 0) : wait_unbounded(dev, ev);
    }
    /* Until the command ends, the device has been quiet for the bound (no
     * command of it completed, nothing built or compiled at a first launch:
     * progress.h), or it is given up elsewhere (the watchdog): a look at
     * least every COPROC__WAIT_LOOK_S. */
    pthread_mutex_lock(&w->lock);
    double quiet = 0;
    for (;;) {
        if (w->done && !stuck)
            break;
        if (atomic_load(&dev->no_progress))
            break;
        double now = coproc__now();
        quiet = coproc__device_quiet(dev, start, now);
        if (quiet >= bound)
            break;
        double next = bound - quiet < COPROC__WAIT_LOOK_S ? bound - quiet : COPROC__WAIT_LOOK_S;
        coproc__cond_wait_until(&w->cond, &w->lock, now + next);
    }
    int done = w->done && !stuck;
    cl_int status = w->status;
    pthread_mutex_unlock(&w->lock);
    bw_unref(w);
    if (!done)
        return no_progress(dev, quiet);
    coproc__progress_note(dev);
    return status < 0 ? status : CL_SUCCESS;
}

/* Wait for ev, then hand it to *event or release it. */
static cl_int waited(coproc__device *dev, cl_int err, cl_event ev, cl_event *event)
{
    if (err == CL_SUCCESS)
        err = coproc__wait_event(dev, ev);
    if (ev && event && err == CL_SUCCESS)
        *event = ev;
    else if (ev)
        clReleaseEvent(ev);
    return err;
}

cl_int coproc__read_now(coproc__device *dev, cl_command_queue q, cl_mem src, size_t offset,
                        size_t bytes, void *dst, cl_uint nwait, const cl_event *wait,
                        cl_event *event)
{
    cl_event ev = NULL;
    if (event)
        *event = NULL;
    if (atomic_load(&dev->no_progress))
        return COPROC__CL_NO_PROGRESS;
    coproc__submit_begin(dev);
    cl_int err = clEnqueueReadBuffer(q, src, CL_FALSE, offset, bytes, dst, nwait, wait, &ev);
    coproc__submit_end(dev);
    return waited(dev, err, ev, event);
}

cl_int coproc__write_now(coproc__device *dev, cl_command_queue q, cl_mem dst, size_t offset,
                         size_t bytes, const void *src, cl_uint nwait, const cl_event *wait,
                         cl_event *event)
{
    cl_event ev = NULL;
    if (event)
        *event = NULL;
    if (atomic_load(&dev->no_progress))
        return COPROC__CL_NO_PROGRESS;
    coproc__submit_begin(dev);
    cl_int err = clEnqueueWriteBuffer(q, dst, CL_FALSE, offset, bytes, src, nwait, wait, &ev);
    coproc__submit_end(dev);
    return waited(dev, err, ev, event);
}

void *coproc__map_now(coproc__device *dev, cl_command_queue q, cl_mem mem, cl_map_flags flags,
                      size_t offset, size_t bytes, cl_int *err)
{
    cl_event ev = NULL;
    if (atomic_load(&dev->no_progress)) {
        *err = COPROC__CL_NO_PROGRESS;
        return NULL;
    }
    coproc__submit_begin(dev);
    void *p = clEnqueueMapBuffer(q, mem, CL_FALSE, flags, offset, bytes, 0, NULL, &ev, err);
    coproc__submit_end(dev);
    *err = waited(dev, p ? CL_SUCCESS : *err, ev, NULL);
    if (*err != CL_SUCCESS && p) {
        coproc__submit_begin(dev);
        clEnqueueUnmapMemObject(q, mem, p, 0, NULL, NULL);
        coproc__submit_end(dev);
        p = NULL;
    }
    return p;
}

cl_int coproc__finish(coproc__device *dev, cl_command_queue q)
{
    if (atomic_load(&dev->no_progress))
        return COPROC__CL_NO_PROGRESS;
    cl_int injected = dev->rt ? coproc__fault(dev->rt, dev->index, COPROC__FAULT_FINISH) : 0;
    if (injected)
        return injected;
    cl_event ev = NULL;
    coproc__submit_begin(dev);
    cl_int err = clEnqueueMarkerWithWaitList(q, 0, NULL, &ev);
    coproc__submit_end(dev);
    err = waited(dev, err, ev, NULL);
    /* The marker ended: every command before it did; clFinish only flushes. */
    return err == CL_SUCCESS ? clFinish(q) : err;
}
