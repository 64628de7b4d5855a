/* launch.c - launch geometry and kernel enqueue with error mapping. */
#include "core/fault.h"
#include "backend/opencl/launch.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/error.h"
#include "core/runtime.h"
#include "cost/bandwidth.h"
#include "backend/opencl/progress.h"
#include "backend/opencl/sync.h"

#define CPU_GROUPS_PER_UNIT 4
#define CPU_MIN_CHUNK 4096
#define GPU_DEFAULT_LOCAL 256
#define GPU_GROUPS_PER_UNIT 8

coproc__geometry coproc__geometry_for(const coproc__device *dev, size_t n, size_t local)
{
    coproc__geometry g;
    size_t units = dev->info.compute_units ? dev->info.compute_units : 1;
    if (dev->cpu_path) {
        size_t groups = units * CPU_GROUPS_PER_UNIT;
        size_t by_size = (n + CPU_MIN_CHUNK - 1) / CPU_MIN_CHUNK;
        g.groups = by_size < groups ? (by_size ? by_size : 1) : groups;
        g.local = local ? local : 1;
    } else {
        g.local = local ? local : GPU_DEFAULT_LOCAL;
        if (g.local > dev->info.max_work_group_size)
            g.local = dev->info.max_work_group_size;
        if (dev->quirks.max_work_group && g.local > dev->quirks.max_work_group)
            g.local = dev->quirks.max_work_group;
        size_t klimit = atomic_load(&dev->kernel_group_limit);
        if (klimit && g.local > klimit)
            g.local = klimit;
        size_t groups = units * GPU_GROUPS_PER_UNIT;
        size_t by_size = (n + g.local - 1) / g.local;
        g.groups = by_size < groups ? (by_size ? by_size : 1) : groups;
    }
    /* A quirk (quirks.h) may cap the rows one work-item walks: more groups. */
    g.global = g.groups * g.local;
    return coproc__geometry_cap_rows(g, n, dev->quirks.max_rows_per_item);
}

coproc__geometry coproc__geometry_cap_rows(coproc__geometry g, size_t n, uint64_t rows)
{
    if (!rows)
        return g;
    size_t per_group = g.local * (size_t)rows;
    size_t need = n / per_group + (n % per_group != 0);
    if (g.groups < need)
        g.groups = need;
    g.global = g.groups * g.local;
    return g;
}

/* COPROC_FAULT=slowlaunch (fault.h): a user event that a thread of its own
 * completes at `until_ns` (coproc__now), the launch queued behind it. */
typedef struct held {
    cl_event ev;
    uint64_t until_ns;
} held;

static void *release_held(void *arg)
{
    held *h = arg;
    for (;;) {
        double left = (double)h->until_ns * 1e-9 - coproc__now();
        if (left <= 0)
            break;
        struct timespec ts = {(time_t)left, (long)((left - (double)(time_t)left) * 1e9)};
        nanosleep(&ts, NULL);
    }
    clSetUserEventStatus(h->ev, CL_COMPLETE);
    clReleaseEvent(h->ev);
    free(h);
    return NULL;
}

/* A launch held `seconds` after the one held before it ends (or now): the
 * event it is to wait for, or NULL (then it is not held). */
static cl_event hold_launch(coproc_runtime *rt, coproc__device *dev, double seconds)
{
    cl_int err;
    held *h = malloc(sizeof *h);
    cl_event ev = h ? clCreateUserEvent(dev->context, &err) : NULL;
    if (!ev) {
        free(h);
        return NULL;
    }
    atomic_uint_fast64_t *last = &rt->faults.held_until_ns[dev->index & 15];
    uint64_t now = (uint64_t)(coproc__now() * 1e9), prev = atomic_load(last), until;
    do
        until = (prev > now ? prev : now) + (uint64_t)(seconds * 1e9);
    while (!atomic_compare_exchange_weak(last, &prev, until));
    h->ev = ev;
    h->until_ns = until;
    clRetainEvent(ev); /* the thread's */
    pthread_t th;
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    if (pthread_create(&th, &attr, release_held, h) != 0) {
        clSetUserEventStatus(ev, CL_COMPLETE);
        clReleaseEvent(ev);
        free(h);
    }
    pthread_attr_destroy(&attr);
    return ev;
}

coproc_status coproc__launch(coproc_runtime *rt, coproc__device *dev, const coproc__args *a,
                             const coproc__geometry *g, const char *what)
{
    if (a->err != CL_SUCCESS)
        return coproc__fail_cl(rt, a->err, "%s: clSetKernelArg %u", what, a->next);
    if (atomic_load(&dev->no_progress)) /* given up by a wait (sync.h) */
        return coproc__fail_cl(rt, COPROC__CL_NO_PROGRESS, "%s on device %d (%s), given up", what,
                               dev->index, dev->info.name);
    /* A group larger than the kernel allows is a sizing bug of coproc's (the
     * geometry made before the kernel's program was built and its limit
     * learned, program.c): some drivers refuse it, some run it; none may. */
    size_t limit = 0;
    if (g->local > 1 &&
        clGetKernelWorkGroupInfo(a->kernel, dev->id, CL_KERNEL_WORK_GROUP_SIZE, sizeof limit,
                                 &limit, NULL) == CL_SUCCESS &&
        limit > 0 && g->local > limit)
        return coproc__fail(rt, COPROC_INTERNAL,
                            "%s: a work-group of %zu on device %d (%s), whose kernel allows %zu",
                            what, g->local, dev->index, dev->info.name, limit);
    cl_int err = coproc__fault(rt, dev->index, COPROC__FAULT_LAUNCH);
    if (err == CL_SUCCESS) {
        /* Where waits are bounded, its completion is progress, and a
         * kernel's first launch, behind a marker, tells when the driver
         * compiles it (progress.h). */
        int watch = dev->wait_bound_s > 0;
        int first = watch && coproc__kernel_first_launch(dev, a->kernel);
        cl_event ev = NULL, mark = NULL;
        double slow = coproc__fault_delay(rt, dev->index, COPROC__FAULT_SLOW_LAUNCH);
        cl_event hold = slow > 0 ? hold_launch(rt, dev, slow) : NULL;
        coproc__submit_begin(dev);
        if (first && clEnqueueMarkerWithWaitList(dev->queue, 0, NULL, &mark) != CL_SUCCESS)
            mark = NULL;
        err = clEnqueueNDRangeKernel(dev->queue, a->kernel, 1, NULL, &g->global, &g->local,
                                     hold ? 1 : 0, hold ? &hold : NULL, watch ? &ev : NULL);
        coproc__submit_end(dev);
        if (hold)
            clReleaseEvent(hold);
        if (err == CL_SUCCESS && ev)
            coproc__progress_watch(dev, mark, ev);
        if (mark)
            clReleaseEvent(mark);
        if (ev)
            clReleaseEvent(ev);
    }
    if (err != CL_SUCCESS)
        return coproc__fail_cl(rt, err, "%s: clEnqueueNDRangeKernel on device %d (%s)", what,
                               dev->index, dev->info.name);
    return COPROC_OK;
}

cl_int coproc__enqueue_fill(coproc__device *dev, cl_command_queue q, cl_mem mem,
                            const void *pattern, size_t pattern_size, size_t offset, size_t bytes,
                            cl_uint nwait, const cl_event *wait, cl_event *event)
{
    if (!dev->quirks.fill_by_write || bytes == 0) {
        coproc__submit_begin(dev);
        cl_int err =
            clEnqueueFillBuffer(q, mem, pattern, pattern_size, offset, bytes, nwait, wait, event);
        coproc__submit_end(dev);
        return err;
    }
    unsigned char *host = malloc(bytes);
    if (!host)
        return CL_OUT_OF_HOST_MEMORY;
    for (size_t at = 0; at < bytes; at += pattern_size)
        memcpy(host + at, pattern, pattern_size < bytes - at ? pattern_size : bytes - at);
    cl_int err = coproc__write_now(dev, q, mem, offset, bytes, host, nwait, wait, event);
    free(host);
    return err;
}
