/* calibrate.c - coproc__calibrate_device: runs the passes of this directory in
 * turn on one device and stamps the profile. */
#include <stdarg.h>
#include <stdio.h>
#include <time.h>

#include "cost/bandwidth.h"
#include "cost/calibration/calibration.h"

void coproc__calib_progress(const coproc__calib *c, const char *fmt, ...)
{
    if (!c->progress)
        return;
    char what[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    c->progress(c->user, what);
}

void coproc__calib_size_name(double bytes, char *out, size_t size)
{
    static const char *const units[] = {"", " Ki", " Mi", " Gi", " Ti"};
    int u = 0;
    while (bytes >= 1024 && u < 4) {
        bytes /= 1024;
        u++;
    }
    snprintf(out, size, "%g%s", bytes, units[u]);
}

coproc_status coproc__calibrate_device(coproc_runtime *rt, coproc__device *dev, int full,
                                       coproc__progress_fn progress, void *user,
                                       coproc__profile *p)
{
    coproc__profile_init(p, dev);
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    p->created_unix = (double)now.tv_sec + (double)now.tv_nsec * 1e-9;
    p->full = full != 0;

    /* No pass allocates a buffer above max_alloc or a quarter of the memory. */
    coproc__calib c = {rt, dev, full != 0, progress, user, 0, !full};
    uint64_t cap = dev->info.global_mem_bytes / 4;
    if (dev->info.max_alloc_bytes && dev->info.max_alloc_bytes < cap)
        cap = dev->info.max_alloc_bytes;
    c.max_bytes = (size_t)cap;

    double t0 = coproc__now();
    coproc_status s = COPROC_OK;
    dev->observe_off = 1; /* the operator pass seeds the models itself */
    /* Launch first: it loads the calibration kernels the other passes use. */
    coproc_status (*const passes[])(coproc__calib *, coproc__profile *) = {
        coproc__calib_launch, coproc__calib_build,   coproc__calib_bus,
        coproc__calib_memory, coproc__calib_compute, coproc__calib_operators};
    enum { PASSES = sizeof passes / sizeof *passes };
    _Static_assert(PASSES == 6, "the log line names six passes");
    double took[PASSES] = {0};
    for (size_t i = 0; i < PASSES && s == COPROC_OK; i++) {
        double t = coproc__now();
        s = passes[i](&c, p);
        took[i] = coproc__now() - t;
    }
    dev->observe_off = 0;
    if (s != COPROC_OK)
        return s;
    p->calibration_seconds = coproc__now() - t0;
    coproc__log(rt, COPROC_LOG_INFO, "calibrated device %d (%s), %s pass, in %.2f s (launch "
                "%.2f, build %.2f, bus %.2f, memory %.2f, compute %.2f, operators %.2f)",
                dev->index, dev->info.name, full ? "full" : "quick", p->calibration_seconds,
                took[0], took[1], took[2], took[3], took[4], took[5]);
    return COPROC_OK;
}
