/* launch.h - launch geometry per device type, kernel arguments, running kernels. */
#ifndef COPROC_LAUNCH_H
#define COPROC_LAUNCH_H

#include "backend/opencl/device.h"

typedef struct coproc__geometry {
    size_t groups;  /* work-groups */
    size_t local;   /* work-items per group */
    size_t global;  /* groups * local */
} coproc__geometry;

/*
 * Geometry for a kernel that walks n rows with COPROC_FOR_EACH_ROW. On the CPU path:
 * one work-item per group, a few groups per compute unit, each with a
 * contiguous chunk of at least 4096 rows. On the GPU path (dev->cpu_path 0): `local` (0 picks 256)
 * work-items a group and enough groups to fill the device, each item striding.
 * n == 0 still gives one group, so callers need no special case.
 */
coproc__geometry coproc__geometry_for(const coproc__device *dev, size_t n, size_t local);
/* g with more work-groups, so that no work-item walks more than `rows` of n
 * rows (0: g unchanged). */
coproc__geometry coproc__geometry_cap_rows(coproc__geometry g, size_t n, uint64_t rows);

/* Collects clSetKernelArg results so a launch checks them once. */
typedef struct coproc__args {
    cl_kernel kernel;
    cl_uint next;
    cl_int err;
} coproc__args;

static inline void coproc__arg(coproc__args *a, size_t size, const void *value)
{
    cl_int e = clSetKernelArg(a->kernel, a->next++, size, value);
    if (e != CL_SUCCESS && a->err == CL_SUCCESS)
        a->err = e;
}
#define COPROC__ARG(a, v) coproc__arg(&(a), sizeof(v), &(v))
#define COPROC__ARG_LOCAL(a, bytes) coproc__arg(&(a), (bytes), NULL)

/* clEnqueueFillBuffer on q, or where the device's quirks ask for it
 * (fill_by_write) a blocking clEnqueueWriteBuffer of the repeated pattern. */
cl_int coproc__enqueue_fill(coproc__device *dev, cl_command_queue q, cl_mem mem,
                            const void *pattern, size_t pattern_size, size_t offset, size_t bytes,
                            cl_uint nwait, const cl_event *wait, cl_event *event);

/* Enqueue kernel over geometry g on dev's queue (args must be set; a->err checked).
 * `what` names the operation in error messages. Non-blocking. */
coproc_status coproc__launch(coproc_runtime *rt, coproc__device *dev, const coproc__args *a,
                             const coproc__geometry *g, const char *what);

#endif
