/* compute.c - compute throughput: a loop of independent multiply-add chains
 * per work-item (cl/calibrate.cl), long enough to dwarf the launch cost.
 * Integers count one operation per 32-bit multiply-add; floats count an FMA
 * as two flops, as peak-FLOP figures do. */
#include <math.h>

#include "cost/bandwidth.h"
#include "cost/calibration/calibration.h"
#include "data/column.h"
#include "backend/opencl/launch.h"
#include "backend/opencl/program.h"
#include "backend/opencl/sync.h"

#define MADS_PER_ITER 64 /* 8 chains of 8-wide vectors (cl/calibrate.cl) */

/* Wall seconds of one run of k with `iters` iterations. */
static coproc_status run_once(coproc__calib *c, cl_kernel k, const coproc__geometry *g,
                              cl_uint iters, double *seconds)
{
    cl_int err = clSetKernelArg(k, 1, sizeof iters, &iters);
    double t0 = coproc__now();
    if (err == CL_SUCCESS)
        err = clEnqueueNDRangeKernel(c->dev->queue, k, 1, NULL, &g->global, &g->local, 0, NULL,
                                     NULL);
    if (err == CL_SUCCESS)
        err = coproc__finish(c->dev, c->dev->queue);
    *seconds = coproc__now() - t0;
    if (err != CL_SUCCESS)
        return coproc__fail_cl(c->rt, err, "calibration: compute kernel on device %d",
                                c->dev->index);
    return COPROC_OK;
}

/* Multiply-adds per second of kernel `name` (integer or float). */
static coproc_status throughput(coproc__calib *c, const char *name, int is_float,
                                double *mads_per_s)
{
    *mads_per_s = 0;
    coproc__device *dev = c->dev;
    /* Enough work-items to fill the device: the geometry of a large input. */
    coproc__geometry g = coproc__geometry_for(dev, (size_t)1 << 30, 0);
    cl_kernel k = NULL;
    cl_mem out = NULL;
    coproc_status s = coproc__kernel_create(c->rt, dev, "calibrate", name, &k);
    if (s == COPROC_OK)
        s = coproc__buffer_new(c->rt, dev, g.global * 32, &out); /* a uint8/float8 per work-item */
    if (s != COPROC_OK)
        goto done;
    cl_uint ia = 1664525u, ib = 1013904223u;       /* an LCG's constants */
    cl_float fa = 0.999f, fb = 0.001f;             /* values stay near 1 */
    cl_int err = clSetKernelArg(k, 0, sizeof out, &out);
    if (err == CL_SUCCESS)
        err = is_float ? clSetKernelArg(k, 2, sizeof fa, &fa)
                       : clSetKernelArg(k, 2, sizeof ia, &ia);
    if (err == CL_SUCCESS)
        err = is_float ? clSetKernelArg(k, 3, sizeof fb, &fb)
                       : clSetKernelArg(k, 3, sizeof ib, &ib);
    if (err != CL_SUCCESS) {
        s = coproc__fail_cl(c->rt, err, "calibration: clSetKernelArg(%s)", name);
        goto done;
    }
    /* Grow the loop until one run takes the target time, then take the best of a few. */
    double target = c->full ? 0.05 : 0.01;
    cl_uint iters = 16;
    double t = 0;
    for (int tries = 0; tries < 12; tries++) {
        s = run_once(c, k, &g, iters, &t);
        if (s != COPROC_OK)
            goto done;
        if (t >= target * 0.5 || iters >= (1u << 24))
            break;
        double grow = t > 0 ? target / t : 64;
        iters = (cl_uint)fmin((double)iters * fmin(grow, 64), (double)(1u << 24));
    }
    double best = t;
    for (int r = 0; r < (c->full ? 4 : 2); r++) {
        s = run_once(c, k, &g, iters, &t);
        if (s != COPROC_OK)
            goto done;
        if (t < best)
            best = t;
    }
    if (best > 0)
        *mads_per_s = (double)g.global * iters * MADS_PER_ITER / best;
done:
    if (k)
        clReleaseKernel(k);
    if (out)
        clReleaseMemObject(out);
    return s;
}

coproc_status coproc__calib_compute(coproc__calib *c, coproc__profile *p)
{
    coproc__calib_progress(c, "compute int32 multiply-add");
    coproc_status s = throughput(c, "calibrate_int_mad", 0, &p->int_ops_per_s);
    if (s != COPROC_OK)
        return s;
    coproc__calib_progress(c, "compute fp32 multiply-add");
    double fmas = 0;
    s = throughput(c, "calibrate_float_mad", 1, &fmas);
    p->float_ops_per_s = 2 * fmas;
    return s;
}
