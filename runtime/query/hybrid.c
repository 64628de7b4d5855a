/* hybrid.c - one group-by pipeline over a table of host columns on every
 * device that can run it at once, morsel by morsel (HetExchange's routing
 * of a pipeline's input to CPUs and GPUs alike; Leis et al.'s morsels).
 *
 * Each device builds its own join tables, then pulls morsels (row ranges) of
 * the table from one shared counter and adds each into its own partial
 * aggregates (q_main without q_fresh, or the GPU path's atomics); the
 * partials merge on the host once. A device reads a morsel in place where
 * it shares the host's memory or already holds the column (a sub-buffer),
 * else the morsel's rows are copied into a buffer of its own. A device with
 * a copy queue copies the next morsel into a second buffer (on
 * dev->copy_queue) while the current one's kernel runs (dev->queue), the
 * kernel behind a barrier on its copy's event and each copy behind the
 * kernel that last read its buffer: copies and kernels overlap, as streamed
 * operators' do (exec/stream.c).
 *
 * Real devices pull from a thread each; simulated devices pull in the
 * calling thread in order of their virtual time (their kernels share one
 * executor). A device takes a morsel only if it would finish it before the
 * others would finish everything left without it, its time a row being the
 * learned estimate until it has run a morsel, then what it measured: so a
 * slow device neither delays the end nor sits idle while it can help; near
 * the end a morsel is cut to the device's fair share of what is left. A
 * device that fails gives back every morsel it ran or had taken (one
 * being copied in too); the others run them again, and its partials are dropped: nothing is lost or
 * counted twice. The measured rates stay within the run: they do not teach the devices' corrections
 * (estimates count every column of the table as moved, a morsel copies only those read; mixed in,
 * they misled the next first split: SSB SF 1 cold on simulated H100 + PoCL went from 1.10 to 1.24
 * times the ideal split). */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hwloc.h>

#include "backend/backend.h"
#include "backend/opencl/sync.h"
#include "backend/opencl/transfer.h"
#include "core/error.h"
#include "core/runtime.h"
#include "cost/bandwidth.h"
#include "cost/profile.h"
#include "data/admission.h"
#include "data/column.h"
#include "data/residency.h"
#include "query/fused.h"
#include "query/hybrid.h"

#define MORSEL_ALIGN 4096            /* rows: sub-buffer offsets stay aligned for any type */
#define MORSEL_MIN (64u << 10)       /* rows */
#define MORSEL_SHORTEST (16u << 10)  /* rows: a tail piece at least */
#define MORSEL_MAX (4u << 20)        /* rows */
#define MORSELS_PER_DEVICE 8         /* at least, for the split to balance */
#define LAUNCH_SHARE 0.05            /* launch and copy latency at most this share of a morsel */

typedef struct morsel {
    uint64_t off, len;
} morsel;

typedef struct hdev {
    coproc__device *dev;
    coproc__qkernel *k;
    coproc__qbound b[COPROC__QP_MAX_ARGS];
    int nbound;
    int fact[COPROC__QP_MAX_ARGS];    /* 1: argument i is a column of the scanned table */
    cl_mem stage[COPROC__QP_MAX_ARGS]; /* a fact column's morsel copied in (else NULL: in place) */
    /* Double-buffered (overlap): the second set of stage buffers (set 1;
     * stage is set 0), the set the next morsel goes into, and per set the
     * copy under way into it (its end on the backend's clock) and the
     * kernel that last read it (a marker). */
    int overlap;
    cl_mem spare[COPROC__QP_MAX_ARGS];
    cl_mem pinned[2][COPROC__QP_MAX_ARGS];    /* pinned host buffers a pageable column's */
    void *pinned_ptr[2][COPROC__QP_MAX_ARGS]; /* morsel is staged through, per set (or NULL) */
    int set;
    cl_event copied[2], read[2];
    double copied_at[2];
    morsel next; /* taken, its copy under way (has_next) */
    int has_next;
    coproc__qbuilt built[COPROC__QP_MAX_STEPS]; /* its tables of h->builds[i], while not in the plan */
    int opened;
    coproc__qgroup g;
    coproc__task_clock clock;
    double per_row;                   /* seconds a row: estimated, then measured */
    uint64_t morsel_rows;             /* its morsels' rows (a longer launch latency: longer) */
    double free_at;                   /* when its current morsel ends (estimate; clock_at) */
    double lag;                       /* seconds from the start until other queries' work on
                                         it ends: its share begins no earlier */
    double busy;                      /* task seconds spent on morsels */
    uint64_t rows, nmorsels;
    morsel *ran;                      /* the morsels it finished (given back if it fails) */
    size_t nran, capran;
    int done, failed;
    int skipped;                      /* not admitted (admission.h): runs nothing (failed too) */
    uint64_t footprint;               /* admitted bytes */
    uint64_t staged;                  /* stream buffers' bytes, reserved in the budget */
    coproc_status s;
    char err[256];
} hdev;

typedef struct hybrid {
    coproc__fused *f;
    int pi;
    const coproc__qpipe *q;
    hdev d[COPROC__QMAX_DEVICES];
    int n;
    pthread_mutex_t lock;
    uint64_t next, total;
    int builds[COPROC__QP_MAX_STEPS]; /* the build pipelines pi probes */
    int nbuilds;
    morsel *retry;                    /* morsels of failed devices, run first */
    size_t nretry, capretry;
    double work;                      /* operations a row (as the estimates count them) */
    /* $COPROC_FAULT_HYBRID=D:N: device D fails its Nth morsel (tests) */
    int fault_device;
    uint64_t fault_morsel;
} hybrid;

static int push(morsel **v, size_t *n, size_t *cap, morsel m)
{
    if (*n == *cap) {
        size_t c = *cap ? 2 * *cap : 16;
        morsel *p = realloc(*v, c * sizeof *p);
        if (!p)
            return -1;
        *v = p;
        *cap = c;
    }
    (*v)[(*n)++] = m;
    return 0;
}

/* Whether dev reads host memory in place (else a morsel is copied in). */
static int in_place(const coproc__device *dev)
{
    return dev->zero_copy && dev->info.host_unified_memory;
}

/* Whether dev copies morsels beside its kernels (two stage buffers a column). */
static int overlaps(const coproc__device *dev)
{
    return !in_place(dev) && dev->copy_queue && dev->copy_queue != dev->queue;
}

/* ---------------------------------------------------------------- the split */

/* d's time on the run's common clock, from d's task seconds: a simulated
 * device's task begins after the work queued on it (its clock.start), a
 * real one's at once, its kernels then queued behind the others'. The split
 * compares devices on this clock, so a device busy with other queries'
 * pipelines takes a smaller first share (issue 17: the split sees the work
 * that placement and admission see). */
static double clock_at(const hybrid *h, const hdev *d, double task_s)
{
    if (!h->f->rt->backend->calibrates)
        return d->lag + task_s;
    return task_s > d->lag ? task_s : d->lag;
}

/* Whether d should take a morsel of len rows now (lock held): it finishes
 * it before the other devices would finish all that is left without it. */
static int worth_it(hybrid *h, hdev *d, double now, uint64_t len)
{
    double others = 0, free_max = 0;
    int nothers = 0;
    for (int i = 0; i < h->n; i++) {
        hdev *e = &h->d[i];
        if (e == d || e->done || e->failed || !(e->per_row > 0))
            continue;
        others += 1 / e->per_row;
        free_max = e->free_at > free_max ? e->free_at : free_max;
        nothers++;
    }
    if (!nothers)
        return 1;
    uint64_t left = h->next < h->total ? h->total - h->next : 0;
    for (size_t i = 0; i < h->nretry; i++)
        left += h->retry[i].len;
    double rest = free_max + (double)left / others;
    return now + d->per_row * (double)len <= rest;
}

/* The rows d would run if every device with a rate went on from when it
 * is free and all finished the rest at one time T (lock held). */
static double fair_share(hybrid *h, hdev *d, double now)
{
    double rate = 0, weighted = 0;
    uint64_t left = h->next < h->total ? h->total - h->next : 0;
    for (int i = 0; i < h->n; i++) {
        hdev *e = &h->d[i];
        if (e != d && (e->done || e->failed || !(e->per_row > 0)))
            continue;
        if (!(e->per_row > 0))
            return (double)left;
        double free_at = e == d ? now : e->free_at;
        rate += 1 / e->per_row;
        weighted += free_at / e->per_row;
    }
    double T = ((double)left + weighted) / rate;
    return (T - now) / d->per_row;
}

/* The next morsel for d (lock taken here): 0 when none is left or d
 * should stop. now: d's task seconds. */
static int take(hybrid *h, hdev *d, double now, morsel *m)
{
    pthread_mutex_lock(&h->lock);
    int got = 0, again = h->nretry > 0;
    if (again) {
        /* A morsel given back by a device with longer ones: d's length at a time. */
        morsel *r = &h->retry[h->nretry - 1];
        *m = *r;
        if (m->len > d->morsel_rows) {
            m->len = d->morsel_rows;
            again = 0; /* the rest stays queued */
        }
        got = 1;
    } else if (h->next < h->total) {
        m->off = h->next;
        m->len = h->total - h->next < d->morsel_rows ? h->total - h->next : d->morsel_rows;
        got = 1;
        /* Near the end: d's fair share of what is left, so that every
         * device finishes together (as the rates say). */
        double share = fair_share(h, d, now);
        if (share < (double)m->len) {
            uint64_t len = share < MORSEL_SHORTEST ? MORSEL_SHORTEST : (uint64_t)share;
            len = (len + MORSEL_ALIGN - 1) / MORSEL_ALIGN * MORSEL_ALIGN;
            m->len = len < m->len ? len : m->len;
        }
    }
    if (got && !worth_it(h, d, now, m->len))
        got = 0;
    if (got) {
        if (again)
            h->nretry--;
        else if (h->nretry > 0 && h->retry[h->nretry - 1].off == m->off)
            h->retry[h->nretry - 1].off += m->len, h->retry[h->nretry - 1].len -= m->len;
        else
            h->next += m->len;
        d->free_at = now + d->per_row * (double)m->len;
    } else {
        d->done = 1;
    }
    pthread_mutex_unlock(&h->lock);
    return got;
}

/* d failed: its morsels go back to the others, its partials are dropped;
 * with them the one it ran and the one it had taken next (being copied). */
static void give_back(hybrid *h, hdev *d, const morsel *current, const morsel *next)
{
    pthread_mutex_lock(&h->lock);
    d->failed = 1;
    int lost = 0;
    for (size_t i = 0; i < d->nran && !lost; i++)
        lost = push(&h->retry, &h->nretry, &h->capretry, d->ran[i]) != 0;
    if (current && !lost)
        lost = push(&h->retry, &h->nretry, &h->capretry, *current) != 0;
    if (next && !lost)
        lost = push(&h->retry, &h->nretry, &h->capretry, *next) != 0;
    if (lost) /* no memory to note them: nobody may finish without them */
        h->next = h->total + 1;
    pthread_mutex_unlock(&h->lock);
}

/* ---------------------------------------------------------------- one morsel */

/* Morsel m ran on d (its kernel done), from task seconds t0 and wall clock
 * w0: its time teaches d's rate, and it is d's to give back should d fail.
 * Double-buffered, t0 is when the morsel before ended, so the rate is the
 * pipeline's (a copy longer than the kernel beside it shows in it). */
static coproc_status ran(hybrid *h, hdev *d, const morsel *m, double bytes, double t0, double w0)
{
    coproc_runtime *rt = h->f->rt;
    coproc__device *dev = d->dev;
    dev->backend->pipeline_ran(dev, bytes, (double)m->len, h->work, coproc__now() - w0);
    double t = rt->backend->task_elapsed(rt, dev, &d->clock);
    pthread_mutex_lock(&h->lock);
    d->busy += t - t0;
    d->rows += m->len;
    d->nmorsels++;
    d->per_row = d->busy / (double)d->rows;
    d->free_at = clock_at(h, d, t) + (d->has_next ? d->per_row * (double)d->next.len : 0);
    int lost = push(&d->ran, &d->nran, &d->capran, *m) != 0;
    pthread_mutex_unlock(&h->lock);
    return lost ? coproc__fail(rt, COPROC_HOST_OUT_OF_MEMORY, "query: out of host memory")
                : COPROC_OK;
}

/* A sub-buffer of morsel m of argument i's whole column (held or in place). */
static coproc_status morsel_view(hybrid *h, hdev *d, const morsel *m, int i, cl_mem *sub)
{
    size_t size = coproc_type_size(d->b[i].col->type);
    cl_buffer_region r = {m->off * size, m->len * size};
    cl_int err;
    *sub = clCreateSubBuffer(d->b[i].mem, 0, CL_BUFFER_CREATE_TYPE_REGION, &r, &err);
    if (!*sub)
        return coproc__fail_cl(h->f->rt, err, "query (hybrid): a morsel of \"%s\" on device %d",
                               h->q->src->names[d->k->args[i].col], d->dev->index);
    return COPROC_OK;
}

/* Argument i's stage buffer in set b. */
static cl_mem stage_of(const hdev *d, int b, int i)
{
    return b ? d->spare[i] : d->stage[i];
}

/* Start copying morsel m's fact columns into set b on the copy queue, after
 * the kernel that last read that set; a pageable column through the set's
 * pinned buffer (a DMA from pageable memory runs at a fraction of the bus,
 * and a driver may make such a copy block). */
static coproc_status copy_beside(hybrid *h, hdev *d, const morsel *m, int b)
{
    coproc_status s = COPROC_OK;
    if (d->copied[b]) { /* the set's last copy (its pinned buffers free again) */
        cl_int err = coproc__wait_event(d->dev, d->copied[b]);
        if (err != CL_SUCCESS)
            return coproc__fail_cl(h->f->rt, err, "query (hybrid): a copy to device %d",
                                   d->dev->index);
    }
    for (int i = 0; i < d->k->nargs && s == COPROC_OK; i++) {
        if (!d->stage[i])
            continue;
        const coproc_column *c = d->b[i].col;
        size_t size = coproc_type_size(c->type);
        const char *src = (const char *)c->host + m->off * size;
        if (d->pinned_ptr[b][i] && m->len) {
            coproc__memcpy_parallel(d->pinned_ptr[b][i], src, m->len * size);
            src = d->pinned_ptr[b][i];
        }
        cl_event ev;
        double at;
        /* Charged as a copy from the column's own memory, as coproc__h2d's staged copies are. */
        s = coproc__h2d_beside(h->f->rt, d->dev, stage_of(d, b, i), 0, src, m->len * size,
                               c->pinned != NULL, d->read[b] ? 1 : 0, &d->read[b], &ev, &at);
        if (s != COPROC_OK)
            break;
        /* The copy queue is in order: the last copy's event covers the others. */
        if (d->copied[b])
            clReleaseEvent(d->copied[b]);
        d->copied[b] = ev;
        d->copied_at[b] = at;
    }
    return s;
}

/* Double-buffered: run morsel m (its copy into set d->set already under way
 * when `copied`), the next morsel's copy started beside its kernel. */
static coproc_status run_overlapped(hybrid *h, hdev *d, const morsel *m, int copied)
{
    coproc_runtime *rt = h->f->rt;
    coproc__device *dev = d->dev;
    cl_mem cols[COPROC__QP_MAX_ARGS] = {0}, subs[COPROC__QP_MAX_ARGS] = {0};
    coproc_status s = COPROC_OK;
    double bytes = 0;
    double t0 = rt->backend->task_elapsed(rt, dev, &d->clock), w0 = coproc__now();
    int b = d->set;
    d->set ^= 1;
    if (!copied)
        s = copy_beside(h, d, m, b);
    if (s == COPROC_OK && take(h, d, clock_at(h, d, t0) + d->per_row * (double)m->len, &d->next)) {
        d->has_next = 1;
        s = copy_beside(h, d, &d->next, b ^ 1);
    }
    for (int i = 0; i < d->k->nargs && s == COPROC_OK; i++) {
        if (!d->fact[i])
            continue;
        bytes += (double)(m->len * coproc_type_size(d->b[i].col->type));
        if (d->stage[i])
            cols[i] = stage_of(d, b, i);
        else if ((s = morsel_view(h, d, m, i, &subs[i])) == COPROC_OK)
            cols[i] = subs[i];
    }
    if (s == COPROC_OK && dev->index == h->fault_device && d->nmorsels + 1 == h->fault_morsel)
        s = coproc__fail(rt, COPROC_DEVICE_LOST, "query (hybrid): device %d failed (injected)",
                         dev->index);
    if (s == COPROC_OK && d->copied[b])
        s = coproc__queue_wait_copy(rt, dev, d->copied[b], d->copied_at[b]);
    if (s == COPROC_OK)
        s = coproc__qgroup_add(&d->g, m->len, cols);
    if (s == COPROC_OK) {
        /* The next copy into set b waits for this kernel. */
        if (d->read[b])
            clReleaseEvent(d->read[b]);
        d->read[b] = NULL;
        coproc__submit_begin(dev);
        cl_int err = clEnqueueMarkerWithWaitList(dev->queue, 0, NULL, &d->read[b]);
        coproc__submit_end(dev);
        if (err == CL_SUCCESS)
            err = coproc__finish(dev, dev->queue);
        if (err != CL_SUCCESS)
            s = coproc__fail_cl(rt, err, "query (hybrid): a morsel on device %d", dev->index);
    }
    if (s != COPROC_OK) {
        /* Nothing may still read the sub-buffers or write the stage buffers;
         * the copy under way counts as d's time. */
        coproc__finish(dev, dev->queue);
        coproc__finish(dev, dev->copy_queue);
        dev->backend->queue_waits(dev, d->copied_at[b ^ 1]);
    }
    for (int i = 0; i < d->k->nargs; i++)
        if (subs[i])
            clReleaseMemObject(subs[i]);
    return s == COPROC_OK ? ran(h, d, m, bytes, t0, w0) : s;
}

static coproc_status run_morsel(hybrid *h, hdev *d, const morsel *m)
{
    coproc_runtime *rt = h->f->rt;
    coproc__device *dev = d->dev;
    cl_mem cols[COPROC__QP_MAX_ARGS] = {0}, subs[COPROC__QP_MAX_ARGS] = {0};
    coproc_status s = COPROC_OK;
    double bytes = 0;
    double t0 = rt->backend->task_elapsed(rt, dev, &d->clock), w0 = coproc__now();
    for (int i = 0; i < d->k->nargs && s == COPROC_OK; i++) {
        if (!d->fact[i])
            continue;
        const coproc_column *c = d->b[i].col;
        size_t size = coproc_type_size(c->type);
        bytes += (double)(m->len * size);
        if (d->stage[i]) {
            s = coproc__h2d(rt, dev, NULL, d->stage[i], 0, (const char *)c->host + m->off * size,
                            m->len * size, 0);
            cols[i] = d->stage[i];
        } else {
            cl_buffer_region r = {m->off * size, m->len * size};
            cl_int err;
            subs[i] = clCreateSubBuffer(d->b[i].mem, 0, CL_BUFFER_CREATE_TYPE_REGION, &r, &err);
            if (!subs[i])
                s = coproc__fail_cl(rt, err, "query (hybrid): a morsel of \"%s\" on device %d",
                                    h->q->src->names[d->k->args[i].col], dev->index);
            cols[i] = subs[i];
        }
    }
    if (s == COPROC_OK && dev->index == h->fault_device && d->nmorsels + 1 == h->fault_morsel)
        s = coproc__fail(rt, COPROC_DEVICE_LOST, "query (hybrid): device %d failed (injected)",
                         dev->index);
    if (s == COPROC_OK)
        s = coproc__qgroup_add(&d->g, m->len, cols);
    if (s == COPROC_OK) {
        cl_int err = coproc__finish(dev, dev->queue);
        if (err != CL_SUCCESS)
            s = coproc__fail_cl(rt, err, "query (hybrid): a morsel on device %d", dev->index);
    } else {
        coproc__finish(dev, dev->queue); /* nothing may still read the sub-buffers */
    }
    for (int i = 0; i < d->k->nargs; i++)
        if (subs[i])
            clReleaseMemObject(subs[i]);
    if (s != COPROC_OK)
        return s;
    return ran(h, d, m, bytes, t0, w0);
}

/* Run morsel m on d (copied: its copy under way, the one d took next). A
 * failure is d's alone: its morsels go back (its error kept for the case
 * that every device fails). */
static void run_or_give_back(hybrid *h, hdev *d, const morsel *m, int copied)
{
    coproc_status s = d->overlap ? run_overlapped(h, d, m, copied) : run_morsel(h, d, m);
    if (s != COPROC_OK) {
        d->s = s;
        snprintf(d->err, sizeof d->err, "%s", coproc_errmsg(h->f->rt));
        give_back(h, d, m, d->has_next ? &d->next : NULL);
        d->has_next = 0;
    }
}

/* d's next morsel: the one it took while running the last (*copied: its
 * copy is under way), else one taken now (now: d's time). */
static int next_morsel(hybrid *h, hdev *d, double now, morsel *m, int *copied)
{
    *copied = d->has_next;
    if (d->has_next) {
        *m = d->next;
        d->has_next = 0;
        return 1;
    }
    return !d->done && take(h, d, now, m); /* done: a take failed while its last morsel ran */
}

/* Pull morsels until none is left for d. */
static void pull(hybrid *h, hdev *d)
{
    coproc_runtime *rt = h->f->rt;
    morsel m;
    int copied;
    while (!d->failed &&
           next_morsel(h, d, clock_at(h, d, rt->backend->task_elapsed(rt, d->dev, &d->clock)), &m,
                       &copied))
        run_or_give_back(h, d, &m, copied);
}

static void *pull_main(void *arg)
{
    void **a = arg;
    hybrid *h = a[0];
    cl_context own = coproc__thread_context_begin(h->f->rt); /* quirks.h context_per_thread */
    pull(h, a[1]);
    coproc__thread_context_end(own);
    return NULL;
}

/* Real devices: a thread each (the caller's for the first). Simulated ones:
 * the least advanced in virtual time pulls next, in the caller's thread. */
static void dispatch(hybrid *h)
{
    coproc_runtime *rt = h->f->rt;
    if (!rt->backend->calibrates) {
        for (;;) {
            hdev *next = NULL;
            double at = 0;
            for (int i = 0; i < h->n; i++) {
                hdev *d = &h->d[i];
                if (d->done || d->failed)
                    continue;
                double t = clock_at(h, d, rt->backend->task_elapsed(rt, d->dev, &d->clock));
                if (!next || t < at) {
                    next = d;
                    at = t;
                }
            }
            if (!next) {
                /* Work left (given back after the rest stopped): the survivors go on. */
                pthread_mutex_lock(&h->lock);
                int left = h->nretry > 0 || h->next < h->total, revived = 0;
                for (int i = 0; left && i < h->n; i++)
                    if (!h->d[i].failed && h->d[i].done) {
                        h->d[i].done = 0;
                        revived = 1;
                    }
                pthread_mutex_unlock(&h->lock);
                if (!revived)
                    return;
                continue;
            }
            morsel m;
            int copied;
            if (next_morsel(h, next, at, &m, &copied))
                run_or_give_back(h, next, &m, copied);
        }
    }
    pthread_t th[COPROC__QMAX_DEVICES];
    void *args[COPROC__QMAX_DEVICES][2];
    int started[COPROC__QMAX_DEVICES] = {0};
    for (int i = 1; i < h->n; i++) {
        args[i][0] = h;
        args[i][1] = &h->d[i];
        started[i] = pthread_create(&th[i], NULL, pull_main, args[i]) == 0;
    }
    pull(h, &h->d[0]);
    for (int i = 1; i < h->n; i++)
        if (started[i])
            pthread_join(th[i], NULL);
    /* Devices whose thread did not start, and morsels given back after
     * every other device stopped: finish them here. */
    for (int pass = 0; pass < 2; pass++)
        for (int i = 0; i < h->n; i++) {
            h->d[i].done = 0;
            pull(h, &h->d[i]);
        }
}

/* ---------------------------------------------------------------- setting up a device */

/* Swap d's join tables into the plan (or out of it, back into d); d->built[i]
 * belongs to build pipeline h->builds[i] (the probes may be reordered). */
static void swap_built(hybrid *h, hdev *d)
{
    for (int i = 0; i < h->nbuilds; i++) {
        coproc__qbuilt t = h->f->prog.p[h->builds[i]].built;
        h->f->prog.p[h->builds[i]].built = d->built[i];
        d->built[i] = t;
    }
}

/* d's kernel, columns and payloads, its join tables in the plan meanwhile. */
static coproc_status open_device(hybrid *h, hdev *d)
{
    coproc__fused *f = h->f;
    coproc_runtime *rt = f->rt;
    coproc__device *dev = d->dev;
    if (!(d->k = calloc(1, sizeof *d->k)))
        return coproc__fail(rt, COPROC_HOST_OUT_OF_MEMORY, "query: out of host memory");
    if (coproc__codegen(&f->prog, h->pi, dev->info.has_fp64, d->k) != 0) {
        snprintf(f->run->note, sizeof f->run->note, "%s", d->k->why);
        return COPROC_UNSUPPORTED;
    }
    coproc_status s = COPROC_OK;
    /* Morsels cut the scanned table's columns at any row: its bitmaps
     * would need cutting at bit offsets, which the kernels do not do. */
    for (int i = 0; i < d->k->nargs; i++)
        if (d->k->args[i].validity && d->k->args[i].table == h->q->src) {
            snprintf(f->run->note, sizeof f->run->note,
                     "the pipeline over %s streams in morsels, and its columns have nulls",
                     h->q->src_name);
            return COPROC_UNSUPPORTED;
        }
    for (int i = 0; i < d->k->nargs && s == COPROC_OK; i++) {
        const coproc_table *t = d->k->args[i].table;
        const coproc_column *c = coproc__qarg_column(&d->k->args[i]);
        d->nbound = i + 1;
        d->fact[i] = t == h->q->src;
        if (d->fact[i] && !in_place(dev) && !coproc__residency_has(dev, c)) {
            /* copied in a morsel at a time */
            d->b[i] = (coproc__qbound){.col = c};
            uint64_t bytes = d->morsel_rows * coproc_type_size(c->type);
            d->staged += coproc__residency_reserve(dev, bytes); /* within the budget */
            s = coproc__buffer_new(rt, dev, bytes, &d->stage[i]);
            d->b[i].mem = d->stage[i];
        } else {
            s = coproc__qbind_column(f, dev, c, t->names[d->k->args[i].col], &d->b[i], NULL);
        }
    }
    /* Double-buffered: a second stage buffer for each staged column, within
     * the budget as the first (size_for_budget counted both), and a pinned
     * host buffer per set for a pageable column (none: copied straight). */
    int staged_cols = 0;
    for (int i = 0; i < d->nbound && s == COPROC_OK && d->overlap; i++)
        if (d->stage[i]) {
            uint64_t bytes = d->morsel_rows * coproc_type_size(d->b[i].col->type);
            d->staged += coproc__residency_reserve(dev, bytes);
            s = coproc__buffer_new(rt, dev, bytes, &d->spare[i]);
            staged_cols++;
            for (int b = 0; b < 2 && s == COPROC_OK && !d->b[i].col->pinned && bytes; b++) {
                cl_int err;
                d->pinned[b][i] = clCreateBuffer(
                    dev->context, CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR, bytes, NULL, &err);
                if (d->pinned[b][i])
                    d->pinned_ptr[b][i] =
                        coproc__map_now(dev, dev->queue, d->pinned[b][i],
                                        CL_MAP_READ | CL_MAP_WRITE, 0, bytes, &err);
            }
        }
    if (!staged_cols)
        d->overlap = 0; /* nothing copied: as in place */
    if (s == COPROC_OK)
        s = coproc__qmake_payloads(f, dev, d->k, d->b);
    return s;
}

static void close_device(hybrid *h, hdev *d)
{
    if (d->opened)
        coproc__qgroup_release(&d->g);
    if (d->overlap && d->dev->copy_queue)
        coproc__finish(d->dev, d->dev->copy_queue); /* nothing writes the stage buffers */
    for (int b = 0; b < 2; b++) {
        if (d->copied[b])
            clReleaseEvent(d->copied[b]);
        if (d->read[b])
            clReleaseEvent(d->read[b]);
    }
    for (int i = 0; i < d->nbound; i++) {
        if (d->spare[i])
            clReleaseMemObject(d->spare[i]);
        for (int b = 0; b < 2; b++) {
            if (d->pinned_ptr[b][i]) {
                coproc__submit_begin(d->dev);
                clEnqueueUnmapMemObject(d->dev->queue, d->pinned[b][i], d->pinned_ptr[b][i], 0,
                                        NULL, NULL);
                coproc__submit_end(d->dev);
            }
            if (d->pinned[b][i])
                clReleaseMemObject(d->pinned[b][i]);
        }
    }
    if (d->overlap)
        coproc__finish(d->dev, d->dev->queue); /* the unmaps */
    for (int i = 0; i < d->nbound; i++)
        if (d->stage[i])
            clReleaseMemObject(d->stage[i]);
        else
            coproc__qunbind(d->dev, &d->b[i], 1);
    if (d->staged)
        coproc__residency_unreserve(d->dev, d->staged);
    if (d->footprint)
        coproc__admit_release(d->dev, d->footprint);
    for (int i = 0; i < COPROC__QP_MAX_STEPS; i++)
        coproc__qbuilt_free(&d->built[i]);
    if (d->k) {
        coproc__qkernel_free(d->k);
        free(d->k);
    }
    free(d->ran);
    (void)h;
}

/* A device's morsel rows: long enough that its launch (and copy) latency
 * stays a small share of each, short enough that the table makes
 * MORSELS_PER_DEVICE morsels a device where latency allows. */
static uint64_t morsel_size(const coproc__device *dev, double per_row, uint64_t total, int ndev)
{
    const coproc__profile *p = dev->profile;
    double lat = (p->launch_latency_s > 0 ? p->launch_latency_s : 20e-6) + (in_place(dev) ? 0 : 20e-6);
    double rows = lat / LAUNCH_SHARE / (per_row > 0 ? per_row : 1e-9);
    double even = (double)total / (MORSELS_PER_DEVICE * ndev);
    rows = rows < even ? even : rows;
    rows = rows < MORSEL_MIN ? MORSEL_MIN : rows;
    rows = rows > MORSEL_MAX ? MORSEL_MAX : rows;
    rows = rows > (double)total ? (double)total : rows;
    uint64_t r = ((uint64_t)rows + MORSEL_ALIGN - 1) / MORSEL_ALIGN * MORSEL_ALIGN;
    return r < MORSEL_ALIGN ? MORSEL_ALIGN : r;
}

/* A device's estimated seconds a row of the pipeline (builds apart). */
static double estimated_per_row(coproc__fused *f, coproc__device *dev, int pi)
{
    uint64_t rows = f->prog.p[pi].src->rows;
    double t = coproc__qestimate(f, dev, pi) - coproc__qestimate_builds(f, dev, pi);
    return t / (double)(rows ? rows : 1);
}

/* Which of the n devices that are CPU devices may take part (ok[i] = 1):
 * they share the host's cores (PoCL's pthread and basic, llvmpipe), so their
 * throughputs add only while their threads fit in those cores. The fastest
 * (least whole[i]) takes part; each next fastest too while the compute units
 * (threads) of those taken stay within the hardware threads of their
 * cpusets: PoCL's pthread with POCL_MAX_PTHREAD_COUNT=1 beside basic on two
 * cores, not pthread on every core beside anything. Devices that say no
 * compute units or cpuset count as the whole machine. */
static void cpus_taking_part(coproc__fused *f, const int *devices, int n, const double *whole,
                             int *ok)
{
    hwloc_bitmap_t all = hwloc_bitmap_alloc(), one = hwloc_bitmap_alloc();
    for (int i = 0; i < n; i++) {
        const coproc_device_info *info = &f->rt->devices[devices[i]].info;
        if (info->type == COPROC_DEVICE_CPU && all && one && info->cpuset[0] &&
            hwloc_bitmap_list_sscanf(one, info->cpuset) == 0)
            hwloc_bitmap_or(all, all, one);
    }
    int threads = all ? hwloc_bitmap_weight(all) : 0;
    hwloc_bitmap_free(all);
    hwloc_bitmap_free(one);
    unsigned used = 0;
    for (;;) {
        int next = -1;
        for (int i = 0; i < n; i++)
            if (!ok[i] && f->rt->devices[devices[i]].info.type == COPROC_DEVICE_CPU &&
                (next < 0 || whole[i] < whole[next]))
                next = i;
        if (next < 0)
            return;
        unsigned cu = f->rt->devices[devices[next]].info.compute_units;
        if (used > 0 && (cu == 0 || threads <= 0 || used + cu > (unsigned)threads))
            return;
        ok[next] = 1;
        used += cu ? cu : (unsigned)(threads > 0 ? threads : 1);
    }
}

int coproc__hybrid_choose(coproc__fused *f, int pi, int *devices, int n)
{
    if (n < 2)
        return n;
    n = n > COPROC__QMAX_DEVICES ? COPROC__QMAX_DEVICES : n;
    double whole[COPROC__QMAX_DEVICES], lag[COPROC__QMAX_DEVICES], best = INFINITY;
    uint64_t rows = f->prog.p[pi].src->rows;
    double now = f->rt->backend->now(f->rt);
    for (int i = 0; i < n; i++) {
        coproc__device *dev = &f->rt->devices[devices[i]];
        /* Other queries' admitted work there first (admission.h). */
        lag[i] = coproc__admit_wait_s(dev, now);
        whole[i] = coproc__qestimate(f, dev, pi);
        best = lag[i] + whole[i] < best ? lag[i] + whole[i] : best;
    }
    /* CPU devices share the host's cores: those whose threads fit in them
     * (cpus_taking_part); COPROC_HYBRID_CPUS=all lets every one (tests: two
     * PoCL devices). */
    const char *cpus = getenv("COPROC_HYBRID_CPUS");
    int cpu_ok[COPROC__QMAX_DEVICES] = {0};
    cpus_taking_part(f, devices, n, whole, cpu_ok);
    /* Each one's first morsel: its morsel size, or its share of the rows at
     * the estimated rates if that is less. */
    double rate = 0, per_row[COPROC__QMAX_DEVICES];
    for (int i = 0; i < n; i++) {
        per_row[i] = estimated_per_row(f, &f->rt->devices[devices[i]], pi);
        rate += per_row[i] > 0 ? 1 / per_row[i] : 0;
    }
    int kept = 0;
    for (int i = 0; i < n; i++) {
        coproc__device *dev = &f->rt->devices[devices[i]];
        if (dev->info.type == COPROC_DEVICE_CPU && !cpu_ok[i] && !(cpus && !strcmp(cpus, "all")))
            continue;
        uint64_t m = morsel_size(dev, per_row[i], rows, n);
        double share = per_row[i] > 0 && rate > 0 ? (double)rows / per_row[i] / rate : (double)rows;
        m = (double)m < share ? m : (uint64_t)share;
        m = m > MORSEL_SHORTEST ? m : MORSEL_SHORTEST;
        m = m < rows ? m : rows;
        if (lag[i] + coproc__qestimate_builds(f, dev, pi) + per_row[i] * (double)m <=
            best * (1 + 1e-6))
            devices[kept++] = devices[i];
    }
    return kept;
}

/* ---------------------------------------------------------------- admission */

/* Each device's footprint (admission.h): the columns it binds whole, and
 * its stream buffers, a morsel's rows of the scanned table's columns: its
 * morsels are cut so that those take at most half of what the rest leaves
 * of its budget (another pipeline can stream beside), all of it if half
 * holds no morsel. A device whose budget holds no morsel takes no part. */
static void size_for_budget(hybrid *h, hdev *d)
{
    uint64_t fixed, per_row, budget = d->dev->budget_bytes;
    if (coproc__qfootprint(h->f, d->dev, h->pi, &fixed, &per_row) != 0)
        fixed = per_row = 0; /* its error comes when it opens */
    if (d->overlap)
        per_row *= 2; /* two stage buffers a column */
    if (per_row > 0) {
        uint64_t room = fixed < budget ? budget - fixed : 0;
        uint64_t rows = room / 2 / per_row / MORSEL_ALIGN * MORSEL_ALIGN;
        if (rows == 0)
            rows = room / per_row / MORSEL_ALIGN * MORSEL_ALIGN;
        if (rows == 0 && room / per_row >= h->total)
            rows = h->total;
        d->morsel_rows = rows < d->morsel_rows ? rows : d->morsel_rows;
    }
    d->footprint = d->morsel_rows ? fixed + per_row * d->morsel_rows : budget + 1;
}

/* Admit the devices whose footprint fits beside the pipelines running
 * there now; those that do not go without (skipped: the others take their
 * rows). When none fits now, wait on the one whose running pipelines are
 * estimated to end first. */
static coproc_status admit(hybrid *h)
{
    coproc_runtime *rt = h->f->rt;
    double now = rt->backend->now(rt);
    int admitted = 0, wait_on = -1;
    double least = INFINITY;
    for (int i = 0; i < h->n; i++) {
        hdev *d = &h->d[i];
        size_for_budget(h, d);
        double until = now + coproc__qestimate(h->f, d->dev, h->pi);
        int a = coproc__admit(d->dev, d->footprint, until, 0);
        admitted += a == 1;
        if (a == 0 && coproc__admit_wait_s(d->dev, now) < least) {
            least = coproc__admit_wait_s(d->dev, now);
            wait_on = i;
        }
        if (a != 1)
            d->skipped = 1;
    }
    if (!admitted && wait_on >= 0) {
        hdev *d = &h->d[wait_on];
        double until = rt->backend->now(rt) + coproc__qestimate(h->f, d->dev, h->pi);
        if (coproc__admit(d->dev, d->footprint, until, 1) == 1) {
            d->skipped = 0;
            admitted = 1;
        }
    }
    for (int i = 0; i < h->n; i++) {
        hdev *d = &h->d[i];
        if (d->skipped) {
            d->footprint = 0; /* nothing to give back */
            d->failed = d->done = 1;
        }
    }
    if (!admitted)
        return coproc__fail(rt, COPROC_DEVICE_OUT_OF_MEMORY,
                            "query (hybrid): no device's budget holds a morsel of the pipeline "
                            "over %s (device %d's: %llu bytes)", h->q->src_name,
                            h->d[0].dev->index, (unsigned long long)h->d[0].dev->budget_bytes);
    return COPROC_OK;
}

/* ---------------------------------------------------------------- the whole */

static coproc_status report(hybrid *h, const char *what, double start)
{
    coproc__fused *f = h->f;
    coproc_status s = COPROC_OK;
    for (int i = 0; i < h->n && s == COPROC_OK; i++) {
        hdev *d = &h->d[i];
        if (d->skipped)
            continue;
        coproc_pipeline_info info = {.fused = 1, .estimate_s = -1};
        snprintf(info.what, sizeof info.what, "%.100s (hybrid: %llu morsels%s)", what,
                 (unsigned long long)d->nmorsels, d->failed ? ", failed, given back" : "");
        info.device = d->dev->index;
        info.rows_in = d->failed ? 0 : d->rows;
        for (int a = 0; a < d->k->nargs; a++)
            if (d->fact[a])
                info.bytes_in += d->rows * coproc_type_size(d->b[a].col->type);
        for (int a = 0; a < d->k->nargs; a++)
            if (d->stage[a])
                info.bytes_moved += d->rows * coproc_type_size(d->b[a].col->type);
        info.start_s = start;
        info.end_s = start + d->clock.end - d->clock.start;
        s = coproc__qrun_report(f->run, &info);
    }
    return s;
}

coproc_status coproc__hybrid_group(coproc__fused *f, int pi, const int *devices, int ndev,
                                   const char *what)
{
    coproc_runtime *rt = f->rt;
    coproc__qpipe *q = &f->prog.p[pi];
    hybrid *h = calloc(1, sizeof *h);
    if (!h)
        return coproc__fail(rt, COPROC_HOST_OUT_OF_MEMORY, "query: out of host memory");
    h->f = f;
    h->pi = pi;
    h->q = q;
    h->n = ndev < COPROC__QMAX_DEVICES ? ndev : COPROC__QMAX_DEVICES;
    h->total = q->src->rows;
    h->work = 2 + 4.0 * q->nsteps;
    h->fault_device = -1;
    const char *fault = getenv("COPROC_FAULT_HYBRID");
    unsigned long long fm;
    if (fault && sscanf(fault, "%d:%llu", &h->fault_device, &fm) == 2)
        h->fault_morsel = fm;
    pthread_mutex_init(&h->lock, NULL);
    coproc_status s = COPROC_OK;
    for (int j = 0; j < q->nsteps; j++)
        if (q->steps[j].kind == COPROC__QS_PROBE)
            h->builds[h->nbuilds++] = q->steps[j].build;
    /* Every device's share is a task from here: its builds and morsels
     * (on simulated devices: the devices' times run side by side). */
    double start = coproc__qrun_now(f->run), now = rt->backend->now(rt);
    for (int i = 0; i < h->n; i++) {
        hdev *d = &h->d[i];
        d->dev = &rt->devices[devices[i]];
        d->clock.submitted = now;
        /* Other queries' work before its share (before this one is admitted):
         * where it is queued on a simulated device, else as admission
         * estimates it. */
        d->lag = coproc__admit_wait_s(d->dev, now);
        d->dev->backend->task_begin(rt, d->dev, &d->clock);
        if (!rt->backend->calibrates)
            d->lag = d->clock.start > now ? d->clock.start - now : 0;
    }
    /* Each device's join tables, built there; the probes ordered once (by the first's). */
    for (int i = 0; i < h->n && s == COPROC_OK; i++) {
        hdev *d = &h->d[i];
        for (int j = 0; j < h->nbuilds && s == COPROC_OK; j++)
            s = coproc__qrun_pipe(f, h->builds[j], devices[i]);
        swap_built(h, d);
    }
    if (s == COPROC_OK) {
        swap_built(h, &h->d[0]);
        coproc__order_probes(&f->prog, pi);
        swap_built(h, &h->d[0]);
    }
    for (int i = 0; i < h->n; i++) {
        h->d[i].per_row = estimated_per_row(f, h->d[i].dev, pi);
        h->d[i].morsel_rows = morsel_size(h->d[i].dev, h->d[i].per_row, h->total, h->n);
        h->d[i].overlap = overlaps(h->d[i].dev);
        h->d[i].copied_at[0] = h->d[i].copied_at[1] = -1;
    }
    if (s == COPROC_OK)
        s = admit(h);
    /* Each device's kernel, columns and group-by; the slots' layout (the
     * same on every device) from the first one's kernel. */
    coproc__qslots sl = {0};
    int have_slots = 0;
    for (int i = 0; i < h->n && s == COPROC_OK; i++) {
        hdev *d = &h->d[i];
        if (d->skipped)
            continue;
        swap_built(h, d);
        s = open_device(h, d);
        if (s == COPROC_OK && !have_slots++)
            s = coproc__qslots_of(f, pi, d->k, &sl);
        if (s == COPROC_OK) {
            s = coproc__qgroup_open(&d->g, f, d->dev, pi, d->k, d->b, &sl, d->morsel_rows);
            d->opened = 1;
        }
        swap_built(h, d);
    }
    if (s == COPROC_OK)
        dispatch(h);
    for (int i = 0; i < h->n; i++) {
        h->d[i].dev->backend->task_end(rt, h->d[i].dev, &h->d[i].clock);
        rt->backend->task_waited(rt, &h->d[i].clock);
    }
    /* Every row counted once, by a device that did not fail. */
    uint64_t rows = 0;
    int alive = 0, first = -1;
    for (int i = 0; i < h->n; i++)
        if (!h->d[i].failed) {
            rows += h->d[i].rows;
            alive++;
            first = first < 0 ? i : first;
        }
    if (s == COPROC_OK && (!alive || rows != h->total)) {
        for (int i = 0; i < h->n; i++)
            if (h->d[i].failed && !h->d[i].skipped) {
                s = h->d[i].s;
                coproc__fail(rt, s, "query (hybrid): %s", h->d[i].err);
                break;
            }
        if (s == COPROC_OK)
            s = coproc__fail(rt, COPROC_INTERNAL, "query (hybrid): %llu of %llu rows ran",
                             (unsigned long long)rows, (unsigned long long)h->total);
    }
    coproc__qpartial sum = {0}, part = {0};
    for (int i = 0; i < h->n && s == COPROC_OK; i++) {
        if (h->d[i].failed)
            continue;
        s = coproc__qgroup_close(&h->d[i].g, i == first ? &sum : &part);
        if (s == COPROC_OK && i != first) {
            coproc__qpartial_merge(&sum, &part, h->d[first].k);
            coproc__qpartial_free(&part);
        }
    }
    if (s == COPROC_OK)
        s = coproc__qgroup_table(f, pi, h->d[first].k, &sl, &sum, &q->out);
    if (s == COPROC_OK)
        s = report(h, what, start);
    coproc__qpartial_free(&sum);
    for (int i = 0; i < h->n; i++)
        close_device(h, &h->d[i]);
    free(h->retry);
    pthread_mutex_destroy(&h->lock);
    free(h);
    return s;
}
