/* launch.c - what starting work costs: the latency of enqueueing an empty
 * kernel and waiting for it, and building a program from source versus
 * loading it from the binary cache. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cost/bandwidth.h"
#include "core/runtime.h"
#include "cost/calibration/calibration.h"
#include "data/column.h"
#include "backend/opencl/launch.h"
#include "backend/opencl/program.h"
#include "backend/opencl/sync.h"

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

coproc_status coproc__calib_launch(coproc__calib *c, coproc__profile *p)
{
    coproc__calib_progress(c, "launch latency");
    enum { MAX_RUNS = 500 };
    int runs = c->full ? MAX_RUNS : 60;
    double *t = malloc(sizeof(double) * MAX_RUNS);
    cl_kernel k = NULL;
    cl_mem unused = NULL;
    coproc_status s = t ? COPROC_OK : coproc__fail(c->rt, COPROC_HOST_OUT_OF_MEMORY,
                                                   "out of host memory");
    if (s == COPROC_OK)
        s = coproc__kernel_create(c->rt, c->dev, "calibrate", "calibrate_empty", &k);
    if (s == COPROC_OK)
        s = coproc__buffer_new(c->rt, c->dev, 16, &unused);
    if (s != COPROC_OK)
        goto done;
    cl_int err = clSetKernelArg(k, 0, sizeof unused, &unused);
    size_t one = 1;
    for (int r = -5; r < runs && err == CL_SUCCESS; r++) { /* 5 untimed runs first */
        double t0 = coproc__now();
        err = clEnqueueNDRangeKernel(c->dev->queue, k, 1, NULL, &one, &one, 0, NULL, NULL);
        if (err == CL_SUCCESS)
            err = coproc__finish(c->dev, c->dev->queue);
        if (r >= 0)
            t[r] = coproc__now() - t0;
    }
    if (err != CL_SUCCESS) {
        s = coproc__fail_cl(c->rt, err, "calibration: empty kernel on device %d", c->dev->index);
        goto done;
    }
    qsort(t, (size_t)runs, sizeof *t, cmp_double);
    p->launch_latency_s = t[runs / 2];
done:
    if (k)
        clReleaseKernel(k);
    if (unused)
        clReleaseMemObject(unused);
    free(t);
    return s;
}

/* Seconds to build `source` through coproc__program_build, create its kernel
 * and run it once (drivers such as PoCL compile only at the first launch). */
static coproc_status build_and_run(coproc__calib *c, const char *source, double *seconds)
{
    cl_program prog = NULL;
    cl_kernel k = NULL;
    cl_mem buf = NULL;
    double t0 = coproc__now();
    coproc_status s = coproc__program_build(c->rt, c->dev, "calibrate_probe", source,
                                            strlen(source), &prog);
    cl_int err = CL_SUCCESS;
    if (s == COPROC_OK && !(k = clCreateKernel(prog, "calibrate_probe", &err)))
        s = coproc__fail_cl(c->rt, err, "calibration: clCreateKernel(calibrate_probe)");
    if (s == COPROC_OK)
        s = coproc__buffer_new(c->rt, c->dev, 1024 * sizeof(cl_uint), &buf);
    if (s == COPROC_OK) {
        cl_ulong n = 1024;
        coproc__geometry g = coproc__geometry_for(c->dev, n, 0);
        coproc__args a = {k, 0, CL_SUCCESS};
        COPROC__ARG(a, buf);
        COPROC__ARG(a, n);
        s = coproc__launch(c->rt, c->dev, &a, &g, "calibrate_probe");
    }
    if (s == COPROC_OK && (err = coproc__finish(c->dev, c->dev->queue)) != CL_SUCCESS)
        s = coproc__fail_cl(c->rt, err, "calibration: clFinish");
    *seconds = coproc__now() - t0;
    if (buf)
        clReleaseMemObject(buf);
    if (k)
        clReleaseKernel(k);
    if (prog)
        clReleaseProgram(prog);
    return s;
}

#define PROBE_BODY                                                                         \
    "__kernel void calibrate_probe(__global uint *x, ulong n)\n"                           \
    "{\n"                                                                                  \
    "    COPROC_FOR_EACH_ROW(i, n) { x[i] = x[i] * 2654435761u + (uint)i; }\n"              \
    "}\n"

/* The quick pass: no build defeats the driver's cache (on PoCL that alone
 * took most of a quick calibration). The probe goes through the binary cache:
 * built from source when the cache lacks it, and stored, then loaded from
 * it; when it was cached already, it is built again with the binary cache
 * off. "From source" then includes whatever the driver caches itself, which
 * is what a runtime with an empty cache directory pays. */
static coproc_status quick_build(coproc__calib *c, coproc__profile *p)
{
    coproc_runtime *rt = c->rt;
    coproc__calib_progress(c, "program build");
    uint64_t built = atomic_load(&rt->programs_built);
    double first;
    coproc_status s = build_and_run(c, PROBE_BODY, &first);
    if (s == COPROC_OK && atomic_load(&rt->programs_built) != built) {
        p->build_source_s = first;
    } else if (s == COPROC_OK) {
        int saved = rt->disable_binary_cache;
        rt->disable_binary_cache = 1;
        s = build_and_run(c, PROBE_BODY, &p->build_source_s);
        rt->disable_binary_cache = saved;
    }
    if (s == COPROC_OK)
        s = build_and_run(c, PROBE_BODY, &p->build_cached_s);
    return s;
}

coproc_status coproc__calib_build(coproc__calib *c, coproc__profile *p)
{
    if (!c->full)
        return quick_build(c, p);
    coproc_runtime *rt = c->rt;
    /* From source: a comment unique to this run keeps the driver's own cache
     * (PoCL's kcache, NVIDIA's ComputeCache) from answering, and our binary
     * cache is switched off for the call. */
    coproc__calib_progress(c, "program build from source");
    char source[512];
    snprintf(source, sizeof source, "/* calibration probe %d %.0f */\n" PROBE_BODY,
             (int)getpid(), coproc__now() * 1e9);
    int saved = rt->disable_binary_cache;
    rt->disable_binary_cache = 1;
    coproc_status s = build_and_run(c, source, &p->build_source_s);
    rt->disable_binary_cache = saved;
    if (s != COPROC_OK)
        return s;

    /* From the binary cache: a fixed source, built once to be sure it is
     * stored, then timed. Without a cache directory this is a source build,
     * which is what such a runtime pays. */
    coproc__calib_progress(c, "program build from cached binary");
    double first;
    s = build_and_run(c, PROBE_BODY, &first);
    if (s == COPROC_OK)
        s = build_and_run(c, PROBE_BODY, &p->build_cached_s);
    return s;
}
