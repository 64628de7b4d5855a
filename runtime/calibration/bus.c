/* bus.c - host<->device transfers: a size sweep from pinned and from pageable
 * host memory in each direction, each fitted to t = latency + bytes /
 * bandwidth, and both directions at once on two queues. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bandwidth.h"
#include "calibration.h"
#include "column.h"

#define KiB 1024.0
#define MiB (1024.0 * 1024.0)

/* Pinned host memory is what the driver allocates for a buffer made with
 * CL_MEM_ALLOC_HOST_PTR, reached through a mapping (page-locked on GPUs). */
typedef struct pinned {
    cl_mem mem;
    void *ptr;
} pinned;

static coproc_status pinned_new(coproc__calib *c, size_t bytes, pinned *out)
{
    cl_int err;
    out->ptr = NULL;
    out->mem = clCreateBuffer(c->dev->context, CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR, bytes,
                              NULL, &err);
    if (!out->mem)
        return coproc__fail_cl(c->rt, err, "calibration: pinned host buffer of %zu bytes", bytes);
    out->ptr = clEnqueueMapBuffer(c->dev->queue, out->mem, CL_TRUE,
                                  CL_MAP_READ | CL_MAP_WRITE, 0, bytes, 0, NULL, NULL, &err);
    if (!out->ptr)
        return coproc__fail_cl(c->rt, err, "calibration: mapping a pinned host buffer");
    memset(out->ptr, 1, bytes); /* touch every page before timing */
    return COPROC_OK;
}

static void pinned_free(coproc__calib *c, pinned *p)
{
    if (p->ptr) {
        clEnqueueUnmapMemObject(c->dev->queue, p->mem, p->ptr, 0, NULL, NULL);
        clFinish(c->dev->queue);
    }
    if (p->mem)
        clReleaseMemObject(p->mem);
    p->mem = NULL;
    p->ptr = NULL;
}

/* Seconds of one blocking transfer of `bytes` between host and dbuf, finished. */
static coproc_status transfer_once(coproc__calib *c, int to_device, cl_mem dbuf, void *host,
                                   size_t bytes, double *seconds)
{
    cl_command_queue q = c->dev->queue;
    double t0 = coproc__now();
    cl_int err = to_device ? clEnqueueWriteBuffer(q, dbuf, CL_TRUE, 0, bytes, host, 0, NULL, NULL)
                           : clEnqueueReadBuffer(q, dbuf, CL_TRUE, 0, bytes, host, 0, NULL, NULL);
    if (err == CL_SUCCESS)
        err = clFinish(q);
    *seconds = coproc__now() - t0;
    if (err != CL_SUCCESS)
        return coproc__fail_cl(c->rt, err, "calibration: %s of %zu bytes",
                                to_device ? "clEnqueueWriteBuffer" : "clEnqueueReadBuffer", bytes);
    return COPROC_OK;
}

/* Best of `reps` timed transfers after one untimed one. */
static coproc_status transfer_best(coproc__calib *c, int to_device, cl_mem dbuf, void *host,
                                   size_t bytes, int reps, double *best)
{
    *best = INFINITY;
    for (int r = 0; r <= reps; r++) {
        double t;
        coproc_status s = transfer_once(c, to_device, dbuf, host, bytes, &t);
        if (s != COPROC_OK)
            return s;
        if (r > 0 && t < *best)
            *best = t;
    }
    return COPROC_OK;
}

int coproc__fit_transfer(coproc__transfer_fit *f)
{
    /* Minimise sum ((L + b x - t) / t)^2: normal equations of a 2x2 system. */
    double sw = 0, sx = 0, sxx = 0, st = 0, sxt = 0;
    for (int i = 0; i < f->points; i++) {
        double x = f->bytes[i], t = f->seconds[i];
        if (!(t > 0) || !(x > 0))
            continue;
        double w = 1.0 / (t * t);
        sw += w;
        sx += w * x;
        sxx += w * x * x;
        st += w * t;
        sxt += w * x * t;
    }
    if (!(sxx > 0))
        return -1;
    double det = sw * sxx - sx * sx;
    double latency = 0, slope = 0;
    if (det > 1e-12 * sw * sxx) {
        latency = (st * sxx - sx * sxt) / det;
        slope = (sw * sxt - sx * st) / det;
    }
    if (!(latency >= 0) || !(slope > 0)) { /* a line through the origin instead */
        latency = 0;
        slope = sxt / sxx;
    }
    if (!(slope > 0) || !isfinite(slope))
        return -1;
    f->latency_s = latency;
    f->bytes_per_s = 1.0 / slope;
    return 0;
}

/* The sweep: 4 KiB x4 up to 1 MiB, then x2 up to 256 MiB (full) or 64 MiB
 * (quick; fewer small sizes), below the cap. Above 1 MiB the steps are dense
 * because caches bend the curve there on CPU devices, and the prediction
 * interpolates between the points. Returns the number of sizes. */
static int sweep_sizes(const coproc__calib *c, size_t cap, size_t *sizes)
{
    int n = 0;
    double top = c->full ? 256 * MiB : 64 * MiB;
    for (double b = 4 * KiB; b <= top && n < COPROC__SWEEP_MAX; b *= b < 1 * MiB ? 4 : 2) {
        if (!c->full && (b == 16 * KiB || b == 256 * KiB))
            continue;
        if ((size_t)b <= cap)
            sizes[n++] = (size_t)b;
    }
    return n;
}

/* Both directions at once: H2D on the device's queue, D2H on a second queue of
 * the same context, total bytes over the time both take. */
static coproc_status both_directions(coproc__calib *c, cl_mem d1, cl_mem d2, pinned *a,
                                     pinned *b, size_t bytes, double *bytes_per_s)
{
    *bytes_per_s = 0;
    cl_int err;
    cl_command_queue q1 = c->dev->queue;
    cl_command_queue q2 = clCreateCommandQueue(c->dev->context, c->dev->id, 0, &err);
    if (!q2)
        return coproc__fail_cl(c->rt, err, "calibration: a second command queue");
    coproc_status s = COPROC_OK;
    int reps = c->full ? 5 : 2;
    for (int r = 0; r <= reps; r++) {
        double t0 = coproc__now();
        err = clEnqueueWriteBuffer(q1, d1, CL_FALSE, 0, bytes, a->ptr, 0, NULL, NULL);
        if (err == CL_SUCCESS)
            err = clEnqueueReadBuffer(q2, d2, CL_FALSE, 0, bytes, b->ptr, 0, NULL, NULL);
        if (err == CL_SUCCESS)
            err = clFlush(q1);
        if (err == CL_SUCCESS)
            err = clFlush(q2);
        cl_int e1 = clFinish(q1), e2 = clFinish(q2);
        if (err == CL_SUCCESS)
            err = e1 != CL_SUCCESS ? e1 : e2;
        double t = coproc__now() - t0;
        if (err != CL_SUCCESS) {
            s = coproc__fail_cl(c->rt, err, "calibration: both directions at once");
            break;
        }
        if (r > 0 && t > 0 && 2.0 * (double)bytes / t > *bytes_per_s)
            *bytes_per_s = 2.0 * (double)bytes / t;
    }
    clReleaseCommandQueue(q2);
    return s;
}

coproc_status coproc__calib_bus(coproc__calib *c, coproc__profile *p)
{
    size_t sizes[COPROC__SWEEP_MAX];
    int count = sweep_sizes(c, c->max_bytes, sizes);
    if (count < 2)
        return coproc__fail(c->rt, COPROC_DEVICE_OUT_OF_MEMORY, "calibration: device %d has "
                            "too little memory for a transfer sweep", c->dev->index);
    size_t top = sizes[count - 1];
    pinned a = {NULL, NULL}, b = {NULL, NULL};
    cl_mem d1 = NULL, d2 = NULL;
    unsigned char *pageable = NULL;
    coproc_status s = pinned_new(c, top, &a);
    if (s == COPROC_OK)
        s = pinned_new(c, top, &b);
    if (s == COPROC_OK)
        s = coproc__buffer_new(c->rt, c->dev, top, &d1);
    if (s == COPROC_OK)
        s = coproc__buffer_new(c->rt, c->dev, top, &d2);
    if (s == COPROC_OK && !(pageable = malloc(top)))
        s = coproc__fail(c->rt, COPROC_HOST_OUT_OF_MEMORY, "calibration: out of host memory");
    if (s != COPROC_OK)
        goto done;
    memset(pageable, 1, top); /* fault the pages in before timing */
    /* Device buffers written once too: reading never-touched memory can be
     * served from a shared zero page on host-memory devices, far too fast. */
    cl_uint fill = 0x5a5a5a5a;
    cl_int err = clEnqueueFillBuffer(c->dev->queue, d1, &fill, sizeof fill, 0, top, 0, NULL, NULL);
    if (err == CL_SUCCESS)
        err = clEnqueueFillBuffer(c->dev->queue, d2, &fill, sizeof fill, 0, top, 0, NULL, NULL);
    if (err == CL_SUCCESS)
        err = clFinish(c->dev->queue);
    if (err != CL_SUCCESS) {
        s = coproc__fail_cl(c->rt, err, "calibration: clEnqueueFillBuffer");
        goto done;
    }

    /* fits[] in the order h2d pinned, d2h pinned, h2d pageable, d2h pageable */
    coproc__transfer_fit *fits[4] = {&p->h2d_pinned, &p->d2h_pinned, &p->h2d_pageable,
                                     &p->d2h_pageable};
    static const char *const names[4] = {"h2d pinned", "d2h pinned", "h2d pageable",
                                         "d2h pageable"};
    for (int f = 0; f < 4; f++) {
        coproc__transfer_fit *fit = fits[f];
        memset(fit, 0, sizeof *fit);
        int to_device = f % 2 == 0, is_pinned = f < 2;
        void *host = is_pinned ? (to_device ? a.ptr : b.ptr) : pageable;
        for (int i = 0; i < count; i++) {
            char size[32];
            coproc__calib_size_name((double)sizes[i], size, sizeof size);
            coproc__calib_progress(c, "bus %s %s", names[f], size);
            /* Small transfers are cheap and noisy: more repeats. */
            int reps = sizes[i] <= 1 * MiB    ? (c->full ? 15 : 7)
                       : sizes[i] <= 16 * MiB ? (c->full ? 9 : 5)
                                              : (c->full ? 5 : 3);
            double t;
            s = transfer_best(c, to_device, to_device ? d1 : d2, host, sizes[i], reps, &t);
            if (s != COPROC_OK)
                goto done;
            fit->bytes[fit->points] = (double)sizes[i];
            fit->seconds[fit->points] = t;
            fit->points++;
        }
        if (coproc__fit_transfer(fit) != 0) {
            s = coproc__fail(c->rt, COPROC_INTERNAL, "calibration: the %s transfer times of "
                             "device %d do not fit a line", names[f], c->dev->index);
            goto done;
        }
    }
    char size[32];
    coproc__calib_size_name((double)top, size, sizeof size);
    coproc__calib_progress(c, "bus both directions %s", size);
    s = both_directions(c, d1, d2, &a, &b, top, &p->both_directions_bytes_per_s);
done:
    pinned_free(c, &a);
    pinned_free(c, &b);
    if (d1)
        clReleaseMemObject(d1);
    if (d2)
        clReleaseMemObject(d2);
    free(pageable);
    return s;
}
