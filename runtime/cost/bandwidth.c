/* bandwidth.c - device memory bandwidth from a copy kernel. */
#include "cost/bandwidth.h"

#include <time.h>

#include "data/column.h"
#include "backend/opencl/launch.h"
#include "backend/opencl/program.h"
#include "core/error.h"
#include "backend/opencl/sync.h"

double coproc__now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

coproc_status coproc__copy_bandwidth(coproc_runtime *rt, coproc__device *dev, size_t bytes,
                                     int reps, double *bytes_per_s)
{
    *bytes_per_s = 0;
    bytes &= ~(size_t)15;
    if (bytes == 0 || reps < 1)
        return coproc__fail(rt, COPROC_INVALID_ARGUMENT, "copy bandwidth: nothing to copy");
    cl_mem in = NULL, out = NULL;
    cl_kernel k = NULL;
    coproc_status s = coproc__kernel_create(rt, dev, "memcopy", "copy_u32x4", &k);
    if (s == COPROC_OK)
        s = coproc__buffer_new(rt, dev, bytes, &in);
    if (s == COPROC_OK)
        s = coproc__buffer_new(rt, dev, bytes, &out);
    if (s != COPROC_OK)
        goto done;
    cl_uint zero = 0;
    coproc__submit_begin(dev);
    cl_int err = clEnqueueFillBuffer(dev->queue, in, &zero, sizeof zero, 0, bytes, 0, NULL, NULL);
    coproc__submit_end(dev);
    if (err != CL_SUCCESS) {
        s = coproc__fail_cl(rt, err, "copy bandwidth: clEnqueueFillBuffer");
        goto done;
    }
    cl_ulong n = bytes / 16;
    coproc__geometry g = coproc__geometry_for(dev, n, 0);
    coproc__args a = {k, 0, CL_SUCCESS};
    COPROC__ARG(a, in);
    COPROC__ARG(a, out);
    COPROC__ARG(a, n);
    double best = 0;
    for (int r = 0; r <= reps; r++) { /* the first run warms up */
        double t0 = coproc__now();
        s = coproc__launch(rt, dev, &a, &g, "copy bandwidth");
        if (s != COPROC_OK)
            goto done;
        err = coproc__finish(dev, dev->queue);
        if (err != CL_SUCCESS) {
            s = coproc__fail_cl(rt, err, "copy bandwidth: clFinish");
            goto done;
        }
        double t = coproc__now() - t0;
        if (r > 0 && t > 0 && 2.0 * (double)bytes / t > best)
            best = 2.0 * (double)bytes / t;
    }
    *bytes_per_s = best;
done:
    if (k)
        clReleaseKernel(k);
    if (in)
        clReleaseMemObject(in);
    if (out)
        clReleaseMemObject(out);
    return s;
}
