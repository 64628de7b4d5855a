/* launch.c - launch geometry and kernel enqueue with error mapping. */
#include "core/fault.h"
#include "backend/opencl/launch.h"

#include <stdlib.h>
#include <string.h>

#include "core/error.h"
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
        coproc__submit_begin(dev);
        err = clEnqueueNDRangeKernel(dev->queue, a->kernel, 1, NULL, &g->global, &g->local, 0, NULL,
                                     NULL);
        coproc__submit_end(dev);
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
