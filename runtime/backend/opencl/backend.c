/* backend.c - the OpenCL backend (backend.h): devices found by discovery
 * (device.c) and selected by COPROC_DEVICES, timed by OpenCL profiling and
 * the wall clock. */
#include "backend/backend.h"

#include <stdlib.h>
#include <string.h>

#include "backend/opencl/device.h"
#include "backend/opencl/topology.h"
#include "core/runtime.h"
#include "cost/bandwidth.h"
#include "cost/profile.h"

/* Turn the discovered devices the selection keeps into runtime devices. */
static coproc_status init_devices(coproc_runtime *rt, coproc__found_device *found, int count,
                                  const int *keep)
{
    int wanted = 0;
    for (int i = 0; i < count; i++)
        wanted += keep[i];
    if (wanted == 0)
        return COPROC_OK;
    rt->devices = calloc((size_t)wanted, sizeof *rt->devices);
    if (!rt->devices)
        return coproc__fail(rt, COPROC_HOST_OUT_OF_MEMORY, "out of host memory");
    for (int i = 0; i < count; i++) {
        if (!keep[i])
            continue;
        coproc__device *dev = &rt->devices[rt->device_count];
        coproc_status s = coproc__device_init(rt, dev, &found[i], rt->device_count);
        if (s == COPROC_OK && !(dev->profile = malloc(sizeof *dev->profile)))
            s = coproc__fail(rt, COPROC_HOST_OUT_OF_MEMORY, "out of host memory");
        if (s == COPROC_OK)
            coproc__profile_init(dev->profile, dev);
        if (s != COPROC_OK) {
            coproc__log(rt, COPROC_LOG_WARN, "device %s skipped: %s", found[i].info.name,
                        rt->errmsg);
            coproc__device_release(dev);
            continue;
        }
        rt->device_count++;
    }
    /* same_hardware_as holds a discovered index; make it a runtime index. */
    for (int i = 0; i < rt->device_count; i++) {
        int other = rt->devices[i].info.same_hardware_as;
        rt->devices[i].info.same_hardware_as = -1;
        for (int j = 0; other >= 0 && j < rt->device_count; j++)
            if (rt->devices[j].info.discovered_index == other)
                rt->devices[i].info.same_hardware_as = j;
    }
    return COPROC_OK;
}

static int opencl_claims(const char *spec)
{
    return coproc__backend_for(spec) == &coproc__backend_opencl;
}

static coproc_status opencl_open(coproc_runtime *rt, const char *spec)
{
    coproc__found_device *found = NULL;
    int count = 0;
    coproc_status s = coproc__discover(rt, &found, &count);
    if (s != COPROC_OK)
        return s;
    int *keep = calloc(count ? (size_t)count : 1, sizeof *keep);
    if (!keep) {
        free(found);
        return coproc__fail(rt, COPROC_HOST_OUT_OF_MEMORY, "out of host memory");
    }
    s = coproc__select_devices(rt, spec, found, count, keep);
    if (s == COPROC_OK) {
        coproc__topology_place(rt, found, count);
        s = init_devices(rt, found, count, keep);
    }
    free(keep);
    free(found);
    if (s != COPROC_OK)
        return s;
    if (rt->device_count == 0) {
        if (count == 0)
            return coproc__fail(rt, COPROC_NO_DEVICE,
                                "OpenCL platforms are installed but report no usable device; for "
                                "the CPU install pocl-opencl-icd, for a GPU its vendor's OpenCL "
                                "driver (check with `clinfo`)");
        return coproc__fail(rt, COPROC_NO_DEVICE, "no device matches the selection \"%s\" "
                            "(%d device(s) found; see `coproc-calibrate --list`)",
                            spec ? spec : "all", count);
    }
    return COPROC_OK;
}

static void opencl_close(coproc_runtime *rt) { (void)rt; }

static double opencl_op_ran(coproc__device *dev, int kind, const double *x, double measured)
{
    (void)dev, (void)kind, (void)x;
    return measured;
}

static double opencl_copy_ran(coproc__device *dev, int to_device, int pinned, int ahead,
                              double bytes, double measured)
{
    (void)dev, (void)to_device, (void)pinned, (void)ahead, (void)bytes;
    return measured;
}

static double opencl_copy_queued(coproc__device *dev, int pinned, double bytes)
{
    (void)dev, (void)pinned, (void)bytes;
    return -1;
}

static void opencl_queue_waits(coproc__device *dev, double at)
{
    (void)dev, (void)at;
}

static double opencl_pipeline_ran(coproc__device *dev, double bytes, double rows, double work,
                                  double measured)
{
    (void)dev, (void)bytes, (void)rows, (void)work;
    return measured;
}

static double opencl_now(coproc_runtime *rt)
{
    (void)rt;
    return coproc__now();
}

static void opencl_task_begin(coproc_runtime *rt, coproc__device *dev, coproc__task_clock *c)
{
    (void)dev;
    c->start = c->mark = opencl_now(rt);
}

static void opencl_task_end(coproc_runtime *rt, coproc__device *dev, coproc__task_clock *c)
{
    (void)dev;
    c->end = opencl_now(rt);
    c->seconds = c->end - c->mark;
}

static double opencl_task_elapsed(coproc_runtime *rt, coproc__device *dev,
                                  const coproc__task_clock *c)
{
    (void)dev;
    return opencl_now(rt) - c->start;
}

static void opencl_task_waited(coproc_runtime *rt, const coproc__task_clock *c)
{
    (void)rt, (void)c;
}

const coproc__backend coproc__backend_opencl = {
    .version = COPROC__BACKEND_VERSION,
    .name = "opencl",
    .claims = opencl_claims,
    .open = opencl_open,
    .release_device = coproc__device_release,
    .close = opencl_close,
    .calibrates = 1,
    .op_ran = opencl_op_ran,
    .copy_ran = opencl_copy_ran,
    .copy_queued = opencl_copy_queued,
    .queue_waits = opencl_queue_waits,
    .pipeline_ran = opencl_pipeline_ran,
    .now = opencl_now,
    .task_begin = opencl_task_begin,
    .task_end = opencl_task_end,
    .task_elapsed = opencl_task_elapsed,
    .task_waited = opencl_task_waited,
};
