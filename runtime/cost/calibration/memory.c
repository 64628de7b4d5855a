/* memory.c - device memory bandwidth: a copy kernel (bytes read + written, as
 * STREAM counts it) and a read-only kernel (bytes read), each the best of a
 * few runs over a buffer much larger than any cache. */
#include "cost/bandwidth.h"
#include "cost/calibration/calibration.h"
#include "data/column.h"
#include "backend/opencl/launch.h"
#include "backend/opencl/program.h"
#include "backend/opencl/sync.h"

#define MiB ((size_t)1 << 20)

/* Seconds kernel k took on the device timeline (profiling events), or the
 * wall clock when the driver gives no usable timestamps. */
static coproc_status timed_launch(coproc__calib *c, coproc__args *a, const coproc__geometry *g,
                                  const char *what, double *seconds)
{
    cl_event ev = NULL;
    double t0 = coproc__now();
    cl_int err = a->err;
    if (err == CL_SUCCESS)
        err = clEnqueueNDRangeKernel(c->dev->queue, a->kernel, 1, NULL, &g->global, &g->local,
                                     0, NULL, &ev);
    if (err == CL_SUCCESS)
        err = coproc__finish(c->dev, c->dev->queue);
    double wall = coproc__now() - t0;
    if (err != CL_SUCCESS) {
        if (ev)
            clReleaseEvent(ev);
        return coproc__fail_cl(c->rt, err, "calibration: %s on device %d", what, c->dev->index);
    }
    double device = coproc__device_event_seconds(c->dev, ev, ev);
    *seconds = device > 0 && device <= wall * 1.5 ? device : wall;
    clReleaseEvent(ev);
    return COPROC_OK;
}

/* Bytes per second of the read-only kernel over `bytes`, best of reps. */
static coproc_status read_bandwidth(coproc__calib *c, size_t bytes, int reps, double *bytes_per_s)
{
    *bytes_per_s = 0;
    coproc__device *dev = c->dev;
    cl_kernel k = NULL;
    cl_mem in = NULL, out = NULL;
    cl_ulong n = bytes / 16;
    coproc__geometry g = coproc__geometry_for(dev, n, 0);
    coproc_status s = coproc__kernel_create(c->rt, dev, "calibrate", "calibrate_read", &k);
    if (s == COPROC_OK)
        s = coproc__buffer_new(c->rt, dev, n * 16, &in);
    if (s == COPROC_OK)
        s = coproc__buffer_new(c->rt, dev, g.global * 16, &out); /* a uint4 per work-item */
    if (s != COPROC_OK)
        goto done;
    cl_uint fill = 0x01020304;
    cl_int err = clEnqueueFillBuffer(dev->queue, in, &fill, sizeof fill, 0, n * 16, 0, NULL, NULL);
    if (err != CL_SUCCESS) {
        s = coproc__fail_cl(c->rt, err, "calibration: clEnqueueFillBuffer");
        goto done;
    }
    coproc__args a = {k, 0, CL_SUCCESS};
    COPROC__ARG(a, in);
    COPROC__ARG(a, n);
    COPROC__ARG(a, out);
    for (int r = 0; r <= reps; r++) { /* the first run warms up */
        double t = 0;
        s = timed_launch(c, &a, &g, "read bandwidth kernel", &t);
        if (s != COPROC_OK)
            goto done;
        if (r > 0 && t > 0 && (double)(n * 16) / t > *bytes_per_s)
            *bytes_per_s = (double)(n * 16) / t;
    }
done:
    if (k)
        clReleaseKernel(k);
    if (in)
        clReleaseMemObject(in);
    if (out)
        clReleaseMemObject(out);
    return s;
}

coproc_status coproc__calib_memory(coproc__calib *c, coproc__profile *p)
{
    /* Far beyond the caches: 64 MiB on CPUs for the quick pass (their memory is
     * slow to sweep), 256 MiB otherwise, 1 GiB on a GPU's full pass. */
    int cpu = c->dev->info.type == COPROC_DEVICE_CPU;
    size_t bytes = c->full ? (cpu ? 256 * MiB : 1024 * MiB) : (cpu ? 64 * MiB : 256 * MiB);
    if (bytes > c->max_bytes)
        bytes = c->max_bytes;
    int reps = c->full ? 5 : 2;
    char size[32];
    coproc__calib_size_name((double)bytes, size, sizeof size);
    coproc__calib_progress(c, "memory copy %s", size);
    coproc_status s = coproc__copy_bandwidth(c->rt, c->dev, bytes, reps, &p->mem_copy_bytes_per_s);
    if (s != COPROC_OK)
        return s;
    coproc__calib_progress(c, "memory read %s", size);
    return read_bandwidth(c, bytes, reps, &p->mem_read_bytes_per_s);
}
