/* progress.c - a device's progress: completions seen, builds and first
 * launches (progress.h). */
#include "backend/opencl/progress.h"

#include <stdlib.h>
#include <string.h>

#include "backend/opencl/device.h"
#include "cost/bandwidth.h"

static uint64_t now_ns(void) { return (uint64_t)(coproc__now() * 1e9); }

static void unref(coproc__progress *p)
{
    if (atomic_fetch_sub(&p->refs, 1) == 1)
        free(p);
}

static void note(coproc__progress *p)
{
    if (!atomic_load(&p->frozen))
        atomic_store(&p->last_ns, now_ns());
}

int coproc__progress_init(coproc__device *dev)
{
    pthread_mutex_init(&dev->fresh.lock, NULL);
    atomic_store(&dev->fresh.n, 0);
    coproc__progress *p = calloc(1, sizeof *p);
    if (!p)
        return -1;
    atomic_store(&p->refs, 1);
    dev->progress = p;
    return 0;
}

void coproc__progress_release(coproc__device *dev)
{
    if (dev->progress)
        unref(dev->progress);
    dev->progress = NULL;
    pthread_mutex_destroy(&dev->fresh.lock);
}

void coproc__progress_note(coproc__device *dev)
{
    if (dev->progress)
        note(dev->progress);
}

void coproc__progress_freeze(coproc__device *dev, int on)
{
    if (dev->progress)
        atomic_fetch_add(&dev->progress->frozen, on ? 1 : -1);
}

void coproc__kernel_fresh(coproc__device *dev, cl_kernel k)
{
    coproc__fresh_kernels *f = &dev->fresh;
    pthread_mutex_lock(&f->lock);
    int n = atomic_load(&f->n), i = 0;
    while (i < n && f->k[i] != k)
        i++;
    if (i == n) { /* a new one; when full the oldest (never launched) makes room */
        if (n == COPROC__FRESH_KERNELS) {
            memmove(f->k, f->k + 1, (size_t)(n - 1) * sizeof *f->k);
            n--;
        }
        f->k[n++] = k;
        atomic_store(&f->n, n);
    }
    pthread_mutex_unlock(&f->lock);
}

int coproc__kernel_first_launch(coproc__device *dev, cl_kernel k)
{
    coproc__fresh_kernels *f = &dev->fresh;
    if (atomic_load(&f->n) == 0) /* the common case: every kernel made has run */
        return 0;
    pthread_mutex_lock(&f->lock);
    int n = atomic_load(&f->n), first = 0;
    for (int i = 0; i < n; i++)
        if (f->k[i] == k) {
            f->k[i] = f->k[n - 1];
            atomic_store(&f->n, n - 1);
            first = 1;
            break;
        }
    pthread_mutex_unlock(&f->lock);
    return first;
}

static void CL_CALLBACK launch_done(cl_event ev, cl_int status, void *user)
{
    (void)ev;
    (void)status;
    coproc__progress *p = user;
    note(p);
    unref(p);
}

/* A first launch's compile: from the end of the commands before it (its
 * marker) to its start (CL_RUNNING, or past it). Two callbacks share it. */
typedef struct compile_watch {
    coproc__progress *p;
    atomic_int state; /* 0 queued, 1 compiling, 2 started */
    atomic_int refs;
} compile_watch;

static void compile_unref(compile_watch *c)
{
    if (atomic_fetch_sub(&c->refs, 1) == 1) {
        unref(c->p);
        free(c);
    }
}

static void CL_CALLBACK compile_begins(cl_event ev, cl_int status, void *user)
{
    (void)ev;
    (void)status;
    compile_watch *c = user;
    int queued = 0;
    if (atomic_compare_exchange_strong(&c->state, &queued, 1) &&
        atomic_fetch_add(&c->p->compiling, 1) == 0)
        atomic_store(&c->p->compiling_since_ns, now_ns());
    compile_unref(c);
}

static void CL_CALLBACK compile_ends(cl_event ev, cl_int status, void *user)
{
    (void)ev;
    (void)status;
    compile_watch *c = user;
    if (atomic_exchange(&c->state, 2) == 1) {
        note(c->p); /* as a build's end */
        atomic_fetch_sub(&c->p->compiling, 1);
    }
    compile_unref(c);
}

void coproc__progress_watch(coproc__device *dev, cl_event marker, cl_event ev)
{
    coproc__progress *p = dev->progress;
    if (!p || !ev)
        return;
    atomic_fetch_add(&p->refs, 1);
    if (clSetEventCallback(ev, CL_COMPLETE, launch_done, p) != CL_SUCCESS)
        unref(p);
    compile_watch *c = marker ? calloc(1, sizeof *c) : NULL;
    if (!c)
        return;
    c->p = p;
    atomic_fetch_add(&p->refs, 1);
    atomic_store(&c->refs, 3); /* ours and the two callbacks' */
    if (clSetEventCallback(marker, CL_COMPLETE, compile_begins, c) != CL_SUCCESS)
        compile_unref(c);
    /* Called once it runs or ends, whichever comes first (or fails). */
    if (clSetEventCallback(ev, CL_RUNNING, compile_ends, c) != CL_SUCCESS)
        compile_ends(ev, CL_SUCCESS, c);
    compile_unref(c);
}

double coproc__device_quiet(const coproc__device *dev, double since, double now)
{
    if (atomic_load(&dev->building) > 0)
        return 0;
    double from = (double)atomic_load(&dev->build_end_ns) * 1e-9;
    from = from > since ? from : since;
    const coproc__progress *p = dev->progress;
    if (p) {
        double last = (double)atomic_load(&p->last_ns) * 1e-9;
        from = last > from ? last : from;
        if (atomic_load(&p->compiling) > 0) {
            double began = (double)atomic_load(&p->compiling_since_ns) * 1e-9;
            double most = COPROC__COMPILE_BOUNDS * dev->wait_bound_s;
            if (now - began < (most > COPROC__COMPILE_MAX_S ? most : COPROC__COMPILE_MAX_S))
                return 0;
        }
    }
    return now > from ? now - from : 0;
}
