/* bus.c - host<->device transfers: a size sweep from pinned and from pageable
 * host memory in each direction, each fitted to t = latency + bytes /
 * bandwidth, and both directions at once on two queues.
 *
 * On a host-memory device (PoCL) a transfer is a memcpy, 2-3x faster when
 * its bytes sit in the CPU's last-level cache than when they come from
 * memory, and which of the two a timed copy gets depends on what ran just
 * before it. Every timed copy there starts after a read through twice the
 * machine's largest caches, so the profile describes one state - a column
 * that is not in the cache, the usual case for data worth a device - and the
 * check measures that same state. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cost/bandwidth.h"
#include "core/runtime.h"
#include "cost/calibration/calibration.h"
#include "data/column.h"
#include "backend/opencl/sync.h"

#define KiB 1024.0
#define MiB (1024.0 * 1024.0)

/* Pinned host memory is what the driver allocates for a buffer made with
 * CL_MEM_ALLOC_HOST_PTR, reached through a mapping (page-locked on GPUs). */
typedef struct pinned_buf {
    cl_mem mem;
    void *ptr;
} pinned_buf;

static coproc_status pinned_new(coproc__calib *c, size_t bytes, pinned_buf *out)
{
    cl_int err;
    out->ptr = NULL;
    out->mem = clCreateBuffer(c->dev->context, CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR, bytes,
                              NULL, &err);
    if (!out->mem)
        return coproc__fail_cl(c->rt, err, "calibration: pinned host buffer of %zu bytes", bytes);
    out->ptr = coproc__map_now(c->dev, c->dev->queue, out->mem, CL_MAP_READ | CL_MAP_WRITE, 0,
                               bytes, &err);
    if (!out->ptr)
        return coproc__fail_cl(c->rt, err, "calibration: mapping a pinned host buffer");
    memset(out->ptr, 1, bytes); /* touch every page before timing */
    return COPROC_OK;
}

static void pinned_free(coproc__calib *c, pinned_buf *p)
{
    if (p->ptr) {
        clEnqueueUnmapMemObject(c->dev->queue, p->mem, p->ptr, 0, NULL, NULL);
        coproc__finish(c->dev, c->dev->queue);
    }
    if (p->mem)
        clReleaseMemObject(p->mem);
    p->mem = NULL;
    p->ptr = NULL;
}

/* What evicts the CPU caches before a timed copy: NULL bytes where the
 * device's copies do not run through them (a GPU's DMA). */
typedef struct evictor {
    unsigned char *bytes;
    size_t size;
    volatile uint64_t sink; /* keeps the reads */
} evictor;

static coproc_status evictor_init(coproc_runtime *rt, const coproc__device *dev, int full,
                                  evictor *e)
{
    e->bytes = NULL;
    e->size = 0;
    e->sink = 0;
    if (!dev->info.host_unified_memory)
        return COPROC_OK;
    /* twice the caches (they are not strictly LRU; the quick pass: once);
     * 64 MiB when hwloc cannot tell */
    uint64_t size = rt->cpu_cache_bytes ? (full ? 2 : 1) * rt->cpu_cache_bytes
                                        : 64 * (uint64_t)MiB;
    if (size > 1024 * (uint64_t)MiB)
        size = 1024 * (uint64_t)MiB;
    if (!(e->bytes = malloc((size_t)size)))
        return coproc__fail(rt, COPROC_HOST_OUT_OF_MEMORY, "calibration: out of host memory "
                            "for a cache-evicting buffer of %llu bytes", (unsigned long long)size);
    memset(e->bytes, 3, (size_t)size);
    e->size = (size_t)size;
    return COPROC_OK;
}

static void evict(evictor *e)
{
    uint64_t sum = 0;
    for (size_t o = 0; o < e->size; o += 64)
        sum += e->bytes[o];
    e->sink += sum;
}

static void evictor_free(evictor *e)
{
    free(e->bytes);
    e->bytes = NULL;
}

/* Seconds of one blocking transfer of `bytes` between host and dbuf: the
 * device's own time for the command (OpenCL profiling, START to END), which is
 * what the bus is busy for and what the runtime's transfers cost beyond a
 * command's launch; the wall clock around it where the driver gives none. */
static coproc_status transfer_once(coproc__calib *c, evictor *ev_cache, int to_device,
                                   cl_mem dbuf, void *host, size_t bytes, double *seconds)
{
    cl_command_queue q = c->dev->queue;
    /* The quick pass evicts only before copies below a quarter of the caches
     * (what its evictor reads): a larger one's first touches are mostly
     * misses anyway, and each eviction costs more than the copy. */
    if (ev_cache->bytes && (!c->lean || bytes < ev_cache->size / 4))
        evict(ev_cache);
    cl_event ev = NULL;
    double t0 = coproc__now();
    cl_int err = to_device ? coproc__write_now(c->dev, q, dbuf, 0, bytes, host, 0, NULL, &ev)
                           : coproc__read_now(c->dev, q, dbuf, 0, bytes, host, 0, NULL, &ev);
    if (err == CL_SUCCESS)
        err = coproc__finish(c->dev, q);
    *seconds = coproc__now() - t0;
    if (ev) {
        double device = err == CL_SUCCESS ? coproc__device_event_seconds(c->dev, ev, ev) : -1;
        if (device > 0 && device <= *seconds)
            *seconds = device;
        clReleaseEvent(ev);
    }
    if (err != CL_SUCCESS)
        return coproc__fail_cl(c->rt, err, "calibration: %s of %zu bytes",
                                to_device ? "clEnqueueWriteBuffer" : "clEnqueueReadBuffer", bytes);
    return COPROC_OK;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* Runs of each size (three times as many up to 8 MiB): full and quick pass. */
static int transfer_reps(int full)
{
    return full ? 9 : 7;
}

/* What the check does with a transfer besides timing it (calibration: none). */
enum { XFER_TIME = 0, XFER_TEACH, XFER_SCORE };

/* One timed transfer: which way, between which buffers, how many bytes; for
 * the check, whether host is pinned and its role: XFER_TEACH feeds the device's
 * transfer level as the runtime's own copies do (transfer_drift.h), XFER_SCORE
 * records the runtime's prediction before each run. */
typedef struct xfer_case {
    int to_device;
    cl_mem dbuf;
    void *host;
    size_t bytes;
    int pinned, role;
} xfer_case;

#define CASES_MAX (4 * COPROC__SWEEP_MAX)
#define TRANSFER_REPS_MAX 27

/* The runtime's prediction for case k now (dev's profile and its level). */
static double live_prediction(coproc__device *dev, const xfer_case *k)
{
    pthread_mutex_lock(&dev->model_lock);
    double t = coproc__profile_transfer_now(dev->profile, k->to_device, k->pinned,
                                            (double)k->bytes);
    pthread_mutex_unlock(&dev->model_lock);
    return t;
}

static void teach(coproc__device *dev, const xfer_case *k, double seconds)
{
    pthread_mutex_lock(&dev->model_lock);
    coproc__profile_transfer_observe(dev->profile, k->to_device, k->pinned, (double)k->bytes,
                                     seconds);
    pthread_mutex_unlock(&dev->model_lock);
}

/*
 * Typical seconds of each of the n cases (n <= CASES_MAX): a warm-up round
 * over all, then rounds over all in a new random order each, so that drift -
 * the machine's load, a slow start - falls on every size, direction and kind
 * of host memory alike rather than on whichever was measured first: `reps`
 * runs of each case, three times as many up to 8 MiB where no cache eviction
 * precedes them (at most TRANSFER_REPS_MAX); seconds[i] is the median of case
 * i's runs. Each run is the command's device time (profiling START to END),
 * the wall clock where the driver gives none. Calibration and
 * coproc__check_transfers both measure with it. XFER_TEACH cases teach the
 * device's level after every run (warm-up included); for XFER_SCORE cases
 * live[i] (when live is not NULL) is the median of the runtime's predictions
 * made just before each of their runs.
 */
static coproc_status transfer_typical(coproc__calib *c, evictor *ev_cache, const xfer_case *cs,
                                      int n, int reps, double *seconds, double *live)
{
    if (n <= 0 || n > CASES_MAX || reps < 1)
        return coproc__fail(c->rt, COPROC_INTERNAL, "calibration: bad transfer sample");
    double (*t)[TRANSFER_REPS_MAX] = malloc((size_t)n * sizeof *t);
    double (*lp)[TRANSFER_REPS_MAX] = malloc((size_t)n * sizeof *lp);
    if (!t || !lp) {
        free(t);
        free(lp);
        return coproc__fail(c->rt, COPROC_HOST_OUT_OF_MEMORY, "calibration: out of host memory");
    }
    int order[CASES_MAX], runs[CASES_MAX], rounds = reps;
    /* Up to 8 MiB a transfer is cheap and its time jitters most: three times
     * the runs there - except after a cache eviction, which costs more than
     * such a copy and leaves far less jitter to average out. */
    for (int i = 0; i < n; i++) {
        runs[i] = cs[i].bytes <= 8 * MiB && !ev_cache->bytes ? 3 * reps : reps;
        if (runs[i] > TRANSFER_REPS_MAX)
            runs[i] = TRANSFER_REPS_MAX;
        if (runs[i] > rounds)
            rounds = runs[i];
    }
    uint64_t seed = 0x5eed ^ (uint64_t)n;
    for (int i = 0; i < n; i++)
        order[i] = i;
    coproc_status st = COPROC_OK;
    for (int r = -1; r < rounds && st == COPROC_OK; r++) {
        for (int i = n - 1; i > 0; i--) {
            int j = (int)(coproc__splitmix64(&seed) % (uint64_t)(i + 1)), x = order[i];
            order[i] = order[j];
            order[j] = x;
        }
        for (int i = 0; i < n && st == COPROC_OK; i++) {
            const xfer_case *k = &cs[order[i]];
            if (r >= runs[order[i]])
                continue;
            double sec, pred = k->role == XFER_SCORE ? live_prediction(c->dev, k) : -1;
            st = transfer_once(c, ev_cache, k->to_device, k->dbuf, k->host, k->bytes, &sec);
            if (st == COPROC_OK && r >= 0) {
                t[order[i]][r] = sec;
                lp[order[i]][r] = pred;
            }
            if (st == COPROC_OK && k->role == XFER_TEACH)
                teach(c->dev, k, sec);
        }
    }
    for (int i = 0; i < n && st == COPROC_OK; i++) {
        seconds[i] = median(t[i], runs[i]);
        if (live)
            live[i] = median(lp[i], runs[i]);
    }
    free(t);
    free(lp);
    return st;
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

/* The sweep: 4 KiB x4 up to 1 MiB (quick: 4 KiB, 64 KiB, 1 MiB), then x sqrt(2)
 * (rounded to 4 KiB; quick: x2) up to 256 MiB (full) or 64 MiB (quick), below the cap.
 * Above 1 MiB the steps are dense because caches bend the curve there on CPU
 * devices (a copy's rate falls by 2-3x as it leaves the last-level cache),
 * and the prediction interpolates between the points. Returns the number of
 * sizes. */
static int sweep_sizes(const coproc__calib *c, size_t cap, size_t *sizes)
{
    int n = 0;
    double top = c->full ? 256 * MiB : 64 * MiB;
    for (double b = 4 * KiB; b <= 1 * MiB && n < COPROC__SWEEP_MAX; b *= 4) {
        if (!c->full && (b == 16 * KiB || b == 256 * KiB))
            continue;
        if ((size_t)b <= cap)
            sizes[n++] = (size_t)b;
    }
    for (int e = c->full ? 1 : 2; n < COPROC__SWEEP_MAX; e += c->full ? 1 : 2) {
        double b = 4 * KiB * floor(MiB * exp2(0.5 * e) / (4 * KiB) + 0.5);
        if (b > top * 1.0001 || (size_t)b > cap)
            break;
        sizes[n++] = (size_t)b;
    }
    return n;
}

/* Both directions at once: H2D on the device's queue, D2H on a second queue of
 * the same context, total bytes over the time both take. */
static coproc_status both_directions(coproc__calib *c, cl_mem d1, cl_mem d2, pinned_buf *a,
                                     pinned_buf *b, size_t bytes, double *bytes_per_s)
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
        cl_int e1 = coproc__finish(c->dev, q1), e2 = coproc__finish(c->dev, q2);
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
    pinned_buf a = {NULL, NULL}, b = {NULL, NULL};
    cl_mem d1 = NULL, d2 = NULL;
    unsigned char *pageable = NULL;
    evictor ev_cache;
    coproc_status s = evictor_init(c->rt, c->dev, !c->lean, &ev_cache);
    if (s == COPROC_OK)
        s = pinned_new(c, top, &a);
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
        err = coproc__finish(c->dev, c->dev->queue);
    if (err != CL_SUCCESS) {
        s = coproc__fail_cl(c->rt, err, "calibration: clEnqueueFillBuffer");
        goto done;
    }

    /* fits[] in the order h2d pinned, d2h pinned, h2d pageable, d2h pageable */
    coproc__transfer_fit *fits[4] = {&p->h2d_pinned, &p->d2h_pinned, &p->h2d_pageable,
                                     &p->d2h_pageable};
    static const char *const names[4] = {"h2d pinned", "d2h pinned", "h2d pageable",
                                         "d2h pageable"};
    /* All four kinds at every size in one set of rounds (transfer_typical). */
    char size[32];
    coproc__calib_size_name((double)top, size, sizeof size);
    coproc__calib_progress(c, "bus: 4 kinds x %d sizes up to %s", count, size);
    xfer_case cases[CASES_MAX];
    double seconds[CASES_MAX];
    for (int f = 0; f < 4; f++) {
        int to_device = f % 2 == 0, is_pinned = f < 2;
        for (int i = 0; i < count; i++)
            cases[f * count + i] = (xfer_case){
                to_device, to_device ? d1 : d2,
                is_pinned ? (to_device ? a.ptr : b.ptr) : (void *)pageable, sizes[i],
                is_pinned, XFER_TIME};
    }
    /* The quick pass: 3 runs a size (the median still drops one spike). */
    s = transfer_typical(c, &ev_cache, cases, 4 * count, c->full ? transfer_reps(1) : 3, seconds,
                         NULL);
    if (s != COPROC_OK)
        goto done;
    for (int f = 0; f < 4; f++) {
        coproc__transfer_fit *fit = fits[f];
        memset(fit, 0, sizeof *fit);
        for (int i = 0; i < count; i++) {
            fit->bytes[i] = (double)sizes[i];
            fit->seconds[i] = seconds[f * count + i];
        }
        fit->points = count;
        if (coproc__fit_transfer(fit) != 0) {
            s = coproc__fail(c->rt, COPROC_INTERNAL, "calibration: the %s transfer times of "
                             "device %d do not fit a line", names[f], c->dev->index);
            goto done;
        }
    }
    coproc__calib_progress(c, "bus both directions %s", size);
    s = both_directions(c, d1, d2, &a, &b, top, &p->both_directions_bytes_per_s);
done:
    evictor_free(&ev_cache);
    pinned_free(c, &a);
    pinned_free(c, &b);
    if (d1)
        clReleaseMemObject(d1);
    if (d2)
        clReleaseMemObject(d2);
    free(pageable);
    return s;
}

coproc_status coproc__check_transfers(coproc_runtime *rt, coproc__device *dev,
                                      const coproc__profile *p, int pinned, int points,
                                      uint64_t seed, coproc__transfer_check *out)
{
    memset(out, 0, sizeof *out);
    const coproc__transfer_fit *f = pinned ? &p->h2d_pinned : &p->h2d_pageable;
    if (points < 1 || points > COPROC__CHECK_MAX || f->points < 2)
        return coproc__fail(rt, COPROC_INVALID_ARGUMENT, "transfer check: no sweep to check");
    double lo = 1 * MiB, hi = f->bytes[f->points - 1];
    if (!(hi > lo))
        return coproc__fail(rt, COPROC_INVALID_ARGUMENT, "transfer check: the sweep of device "
                            "%d ends below 1 MiB", dev->index);
    /* The draw below retries until it finds a multiple of 4 KiB in [lo, hi)
     * that is not a sweep size; a sweep ending just past 1 MiB (a loaded
     * profile may have one) has none, and the draw would never end. */
    int drawable = 0;
    for (double b = lo; b < hi && !drawable; b += 4 * KiB) {
        drawable = 1;
        for (int j = 0; j < f->points && drawable; j++)
            drawable = b != f->bytes[j];
    }
    if (!drawable)
        return coproc__fail(rt, COPROC_INVALID_ARGUMENT, "transfer check: the sweep of device "
                            "%d leaves no size between 1 MiB and its end (%.0f bytes) that it "
                            "did not measure", dev->index, hi);
    size_t sizes[COPROC__CHECK_MAX];
    for (int i = 0; i < points; i++) {
        for (;;) {
            double u = (double)(coproc__splitmix64(&seed) >> 11) * 0x1p-53;
            size_t b = (size_t)(4 * KiB * floor(lo * pow(hi / lo, u) / (4 * KiB)));
            int swept = b < (size_t)lo;
            for (int j = 0; j < f->points && !swept; j++)
                swept = (double)b == f->bytes[j];
            if (!swept) {
                sizes[i] = b;
                break;
            }
        }
    }
    coproc__calib c = {rt, dev, 0, NULL, NULL, (size_t)hi, 0};
    pinned_buf a = {NULL, NULL};
    cl_mem d = NULL;
    unsigned char *pageable = NULL;
    evictor ev_cache;
    coproc_status s = evictor_init(rt, dev, 1, &ev_cache);
    if (s == COPROC_OK)
        s = coproc__buffer_new(rt, dev, (size_t)hi, &d);
    if (s == COPROC_OK && pinned)
        s = pinned_new(&c, (size_t)hi, &a);
    if (s == COPROC_OK && !pinned) {
        if ((pageable = malloc((size_t)hi)))
            memset(pageable, 1, (size_t)hi);
        else
            s = coproc__fail(rt, COPROC_HOST_OUT_OF_MEMORY, "transfer check: out of host memory");
    }
    if (s == COPROC_OK) {
        cl_uint fill = 0x5a5a5a5a;
        cl_int err = clEnqueueFillBuffer(dev->queue, d, &fill, sizeof fill, 0, (size_t)hi, 0,
                                         NULL, NULL);
        if (err == CL_SUCCESS)
            err = coproc__finish(dev, dev->queue);
        if (err != CL_SUCCESS)
            s = coproc__fail_cl(rt, err, "transfer check: clEnqueueFillBuffer");
    }
    void *host = pinned ? a.ptr : pageable;
    /* Both directions in one set of rounds: the check's sizes, then the
     * sweep's from 1 MiB up (swept[]), measured again. */
    const coproc__transfer_fit *fits[2] = {f, pinned ? &p->d2h_pinned : &p->d2h_pageable};
    int swept[COPROC__SWEEP_MAX], nswept = 0;
    for (int j = 0; j < f->points && j < COPROC__SWEEP_MAX; j++)
        if (f->bytes[j] >= lo && fits[1]->bytes[j] == f->bytes[j] && f->seconds[j] > 0 &&
            fits[1]->seconds[j] > 0)
            swept[nswept++] = j;
    int per_dir = points + nswept;
    if (s == COPROC_OK) {
        xfer_case cases[2 * (COPROC__CHECK_MAX + COPROC__SWEEP_MAX)];
        double seconds[2 * (COPROC__CHECK_MAX + COPROC__SWEEP_MAX)];
        double live[2 * (COPROC__CHECK_MAX + COPROC__SWEEP_MAX)];
        for (int dir = 0; dir < 2; dir++) {
            for (int i = 0; i < points; i++)
                cases[dir * per_dir + i] =
                    (xfer_case){dir == 0, d, host, sizes[i], pinned, XFER_SCORE};
            for (int i = 0; i < nswept; i++)
                cases[dir * per_dir + points + i] = (xfer_case){
                    dir == 0, d, host, (size_t)f->bytes[swept[i]], pinned, XFER_TEACH};
        }
        /* three times calibration's runs: the check's own noise stays small
         * next to the error it reports. Only the sweep's sizes teach the
         * runtime's level: the sizes scored never fit anything. */
        s = transfer_typical(&c, &ev_cache, cases, 2 * per_dir, 3 * transfer_reps(p->full),
                             seconds, live);
        /* the profile with the points from 1 MiB up measured now (a copy: the
         * models in it make it too large for the stack) */
        coproc__profile *now = s == COPROC_OK ? malloc(sizeof *now) : NULL;
        if (s == COPROC_OK && !now)
            s = coproc__fail(rt, COPROC_HOST_OUT_OF_MEMORY, "transfer check: out of memory");
        for (int dir = 0; dir < 2 && s == COPROC_OK; dir++) {
            *now = *p;
            coproc__transfer_fit *nf =
                dir == 0 ? (pinned ? &now->h2d_pinned : &now->h2d_pageable)
                         : (pinned ? &now->d2h_pinned : &now->d2h_pageable);
            double ratio[COPROC__SWEEP_MAX];
            for (int i = 0; i < nswept; i++) {
                double t = seconds[dir * per_dir + points + i];
                ratio[i] = t / fits[dir]->seconds[swept[i]];
                nf->seconds[swept[i]] = t;
            }
            out->drift[dir] = nswept ? median(ratio, nswept) : 1;
            for (int i = 0; i < points; i++) {
                out->bytes[dir][i] = (double)sizes[i];
                out->measured[dir][i] = seconds[dir * per_dir + i];
                out->predicted[dir][i] =
                    coproc__profile_transfer_time(p, dir == 0, pinned, (double)sizes[i]);
                out->interpolated[dir][i] =
                    coproc__profile_transfer_time(now, dir == 0, pinned, (double)sizes[i]);
                out->live[dir][i] = live[dir * per_dir + i];
            }
            pthread_mutex_lock(&dev->model_lock);
            out->level[dir] = coproc__drift_factor(&dev->profile->drift[dir == 0][pinned != 0]);
            pthread_mutex_unlock(&dev->model_lock);
        }
        free(now);
    }
    if (s == COPROC_OK)
        out->points = points;
    evictor_free(&ev_cache);
    pinned_free(&c, &a);
    if (d)
        clReleaseMemObject(d);
    free(pageable);
    return s;
}
