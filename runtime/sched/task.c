/* task.c - asynchronous operators: submission, placement, per-device worker
 * threads with bounded ready queues, waiting; and the per-device statistics.
 * One scheduler (scheduler.h) per runtime places every task, so its picture of
 * each device's queued and running work is complete. */
#include "sched/task.h"
#include "sched/tasks_internal.h"

#include <sched.h>

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/backend.h"
#include "cost/bandwidth.h"
#include "exec/hostrun.h"
#include "cost/profile.h"
#include "data/residency.h"
#include "core/runtime.h"
#include "query/state.h" /* coproc_drain waits for query tasks too */
#include "sched/scheduler.h"
#include "backend/opencl/topology.h"

/* How long coproc_wait looks at a task its worker runs before sleeping. */
#define WAIT_SPIN_S 30e-6

typedef coproc__worker worker;

/* The scheduler's clock: the runtime's (the backend's: wall or simulated) from t0. */
static double clock_now(coproc_runtime *rt, const coproc__tasks *ts)
{
    return rt->backend->now(rt) - ts->t0;
}

static void task_free(coproc_task *t)
{
    pthread_mutex_destroy(&t->lock);
    pthread_cond_destroy(&t->done_cond);
    free(t);
}

/* Drop one reference (t->lock held; released here); the last frees t. */
static void task_unref_locked(coproc_task *t)
{
    int last = --t->refs == 0;
    pthread_mutex_unlock(&t->lock);
    if (last)
        task_free(t);
}

void coproc__task_unref(coproc_task *t)
{
    pthread_mutex_lock(&t->lock);
    task_unref_locked(t);
}

/* t->lock held: let a run the watchdog gave up come back before t is done
 * (it may be slow, not dead, and still read t's inputs, which the caller
 * frees once t is done), for as long as the watchdog's least bound. */
static void await_stale_runs(coproc_task *t)
{
    double until = coproc__now() + t->rt->watchdog_s;
    while (t->stale_runs > 0 && coproc__cond_wait_until(&t->done_cond, &t->lock, until) == 0)
        ;
}

/* t->lock held. */
static void mark_done(coproc_task *t)
{
    t->done = 1;
    atomic_store_explicit(&t->finished, 1, memory_order_release);
    pthread_cond_broadcast(&t->done_cond);
}

void coproc__task_end(coproc_task *t, coproc_status s, const char *msg)
{
    pthread_mutex_lock(&t->lock);
    if (!t->done) {
        t->attempt++; /* a run still in flight is stale now */
        await_stale_runs(t);
        t->status = s;
        snprintf(t->errmsg, sizeof t->errmsg, "%s", msg);
        mark_done(t);
    }
    pthread_mutex_unlock(&t->lock);
}

/* The end of run `attempt` of t: its result becomes t's, unless the watchdog
 * moved t meanwhile (the run is stale: its result is dropped). Drops the
 * run's reference. */
static void commit(coproc_task *t, int attempt, coproc_status s, coproc_result *r,
                   const coproc__task_clock *clock)
{
    pthread_mutex_lock(&t->lock);
    if (t->done || t->attempt != attempt) {
        if (t->stale_runs > 0 && --t->stale_runs == 0)
            pthread_cond_broadcast(&t->done_cond); /* a commit waits for it */
        task_unref_locked(t);
        coproc_result_free(r);
        return;
    }
    await_stale_runs(t);
    if (t->done) { /* ended meanwhile */
        task_unref_locked(t);
        coproc_result_free(r);
        return;
    }
    t->status = s;
    if (s != COPROC_OK) /* best effort: another thread's error may have replaced it */
        coproc__errmsg_copy(t->rt, t->errmsg, sizeof t->errmsg);
    t->result = *r;
    t->clock = *clock;
    mark_done(t);
    task_unref_locked(t);
}

/* What the watchdog sees of w: run `attempt` of t on device d from now on
 * (t NULL: nothing runs). */
static void watch(worker *w, coproc_task *t, int attempt, int d, double estimate)
{
    pthread_mutex_lock(&w->lock);
    w->running = t;
    w->running_attempt = attempt;
    w->running_device = d;
    if (t) {
        w->running_since = coproc__now();
        w->running_bound = coproc__watchdog_bound(w->rt, estimate);
    }
    pthread_mutex_unlock(&w->lock);
}

/* Failures a run may be tried again for, on another device or once more. */
static int retriable(coproc_status s)
{
    return s == COPROC_DEVICE_OUT_OF_MEMORY || s == COPROC_DEVICE_LOST ||
           s == COPROC_DRIVER_ERROR || s == COPROC_BUILD_FAILED;
}

/* The watchdog or a failure moved t on: run `attempt` need not go on. */
static int stale(coproc_task *t, int attempt)
{
    pthread_mutex_lock(&t->lock);
    int st = t->done || t->attempt != attempt;
    pthread_mutex_unlock(&t->lock);
    return st;
}

/* How device d's run ended, for its health: a device that reports itself
 * lost, or fails with driver errors three runs in a row, is given up. */
#define DRIVER_ERRORS_TO_GIVE_UP 3
static void note_failure(coproc__tasks *ts, int d, coproc_status s)
{
    worker *w = &ts->w[d];
    int in_a_row = 0; /* an atomic, not the worker's lock: every run passes here */
    if (s == COPROC_DRIVER_ERROR)
        in_a_row = atomic_fetch_add(&w->failures, 1) + 1;
    else
        atomic_store(&w->failures, 0);
    int give_up = in_a_row >= DRIVER_ERRORS_TO_GIVE_UP;
    if (s == COPROC_DEVICE_LOST)
        coproc__device_give_up(ts, d,
                               atomic_load(&ts->w[d].rt->devices[d].no_progress)
                                   ? "a wait saw no progress within its bound"
                                   : "it reported itself lost");
    else if (give_up)
        coproc__device_give_up(ts, d, "three runs in a row failed with driver errors");
}

/* Run one task on its device. A device out of memory (after its own evict,
 * retry and streaming), lost, or failing in its driver hands the task to the
 * next device that can run it, here in this thread, so no queue can fill up
 * in a cycle; with no other device it runs once more here. The run is one
 * attempt: if the watchdog gives its device up meanwhile and runs the task
 * elsewhere, this run's result is dropped when it ends. */
static void run_task(coproc__tasks *ts, worker *w, coproc_task *t)
{
    coproc_runtime *rt = w->rt;
    int d = w->device;
    pthread_mutex_lock(&t->lock);
    int attempt = t->attempt;
    coproc__sched_ticket ticket = t->ticket;
    coproc__task_clock clock = t->clock;
    int tried = t->tried;
    t->refs++;
    pthread_mutex_unlock(&t->lock);
    pthread_mutex_lock(&w->lock);
    unsigned n = ++w->runs_started;
    pthread_mutex_unlock(&w->lock);
    coproc_result r;
    memset(&r, 0, sizeof r);
    coproc_status s;
    int again = 0; /* ran once more on the same device */
    for (;;) {
        coproc__device *dev = &rt->devices[d];
        watch(w, t, attempt, d, ticket.estimate);
        dev->backend->task_begin(rt, dev, &clock);
        coproc__sched_start(&ts->sched, &ticket, clock.start - ts->t0);
        if (coproc__watchdog_stall(ts, w, n))
            s = coproc__fail(rt, COPROC_DEVICE_LOST, "device %d stalled (COPROC_FAULT_STALL)", d);
        else
            s = coproc__op_run(rt, dev, &t->op, &r);
        dev->backend->task_end(rt, dev, &clock);
        double seconds = clock.seconds;
        coproc__sched_finish(&ts->sched, &ticket, clock.end - ts->t0,
                             s == COPROC_OK ? seconds : -1);
        if (s == COPROC_OK) {
            note_failure(ts, d, s);
            atomic_fetch_add(&ts->w[d].tasks_run, 1);
            atomic_fetch_add(&ts->w[d].tasks_streamed, r.streamed != 0);
            r.seconds = seconds;
            r.estimate_s = ticket.estimate;
            break;
        }
        coproc_result_free(&r);
        memset(&r, 0, sizeof r);
        tried |= 1u << d;
        note_failure(ts, d, s);
        if (!retriable(s) || stale(t, attempt))
            break;
        /* Elsewhere when it may move; else once more here (a fault may be
         * passing), unless the device is gone. */
        int next = -1;
        if (t->op.device < 0 && coproc__op_home_device(&t->op) < 0)
            for (int i = 0; i < rt->device_count && next < 0; i++)
                if (!(tried & (1u << i)) && !atomic_load(&ts->w[i].lost) &&
                    coproc__op_runs_on(&t->op, &rt->devices[i]))
                    next = i;
        if (next < 0 && !again && !atomic_load(&ts->w[d].lost)) {
            next = d;
            again = 1;
        }
        if (next < 0)
            break;
        coproc__log(rt, COPROC_LOG_INFO, "device %d: the %s failed (%s); running it on device %d",
                    d, coproc_op_kind_name(t->op.kind), coproc_status_name(s), next);
        coproc__sched_task st;
        memset(&st, 0, sizeof st);
        st.kind = (int)t->op.kind;
        st.forced = next;
        for (int i = 0; i < COPROC__SCHED_MAX_DEVICES; i++)
            st.cost[i] = st.transfer[i] = -1;
        coproc__sched_place(&ts->sched, &st, clock_now(rt, ts), &ticket);
        clock.submitted = clock.end; /* handed on when the first device gave up */
        d = next;
    }
    watch(w, NULL, 0, -1, 0);
    commit(t, attempt, s, &r, &clock);
}

static void *prefetcher_main(void *arg)
{
    worker *w = arg;
    coproc__topology_bind_thread(w->rt, w->device);
    cl_context own = coproc__thread_context_begin(w->rt); /* quirks.h context_per_thread */
    pthread_mutex_lock(&w->lock);
    for (;;) {
        while (!w->pending && !w->stop)
            pthread_cond_wait(&w->prefetch_cond, &w->lock);
        if (!w->pending)
            break;
        coproc_task *t = w->active = w->pending;
        w->pending = NULL;
        pthread_mutex_lock(&t->lock); /* the watchdog may move t and its waiter free it */
        t->refs++;
        pthread_mutex_unlock(&t->lock);
        pthread_mutex_unlock(&w->lock);
        coproc__op_prefetch(w->rt, &w->rt->devices[w->device], &t->op);
        coproc__task_unref(t);
        pthread_mutex_lock(&w->lock);
        w->active = NULL;
        pthread_cond_broadcast(&w->prefetch_cond);
    }
    pthread_mutex_unlock(&w->lock);
    coproc__thread_context_end(own);
    return NULL;
}

/* Take the head of w's ready queue (w->lock held): the prefetcher must be
 * done with it before it runs (once it finishes its caller may free the
 * columns the prefetcher would read), and moves on to the next. */
static coproc_task *take_head(coproc__tasks *ts, worker *w)
{
    coproc_task *t = w->ring[w->head];
    w->head = (w->head + 1) % ts->depth;
    w->count--;
    pthread_cond_signal(&w->not_full);
    if (w->pending == t)
        w->pending = NULL;
    while (w->active == t)
        pthread_cond_wait(&w->prefetch_cond, &w->lock);
    if (w->count > 0 && w->prefetcher_started) {
        w->pending = w->ring[w->head];
        pthread_cond_broadcast(&w->prefetch_cond);
    }
    return t;
}

static void *worker_main(void *arg)
{
    worker *w = arg;
    coproc__tasks *ts = w->ts;
    coproc__topology_bind_thread(w->rt, w->device);
    cl_context own = coproc__thread_context_begin(w->rt); /* quirks.h context_per_thread */
    for (;;) {
        pthread_mutex_lock(&w->lock);
        while (w->busy || (w->count == 0 && !w->stop))
            pthread_cond_wait(&w->not_empty, &w->lock);
        if (w->count == 0) {
            w->exited = 1;
            pthread_mutex_unlock(&w->lock);
            coproc__thread_context_end(own);
            return NULL;
        }
        w->busy = 1; /* before take_head, which may let go of the lock */
        coproc_task *t = take_head(ts, w);
        pthread_mutex_unlock(&w->lock);
        run_task(ts, w, t);
        pthread_mutex_lock(&w->lock);
        w->busy = 0;
        pthread_mutex_unlock(&w->lock);
    }
}

/* A task its waiter finds still at the head of its device's queue, the
 * device idle, runs in the waiter's thread: a small operator then pays no
 * hand-over to the worker and back (two thread wake-ups, more than its kernel
 * on a CPU device). The queue's order and one task at a time per device are
 * kept: the worker waits while the waiter runs it (busy). 1 if t ran here. */
static int run_if_queued(coproc_task *t)
{
    coproc__tasks *ts = t->rt->tasks;
    worker *w = &ts->w[atomic_load(&t->queued_on)];
    pthread_mutex_lock(&w->lock);
    int mine = !w->busy && w->count > 0 && w->ring[w->head] == t;
    if (mine) {
        w->busy = 1;
        take_head(ts, w);
    }
    pthread_mutex_unlock(&w->lock);
    if (!mine)
        return 0;
    run_task(ts, w, t);
    pthread_mutex_lock(&w->lock);
    w->busy = 0;
    pthread_cond_signal(&w->not_empty); /* the worker, if more are queued */
    pthread_mutex_unlock(&w->lock);
    return 1;
}

/* Put t on device d's ready queue, waiting while it is full (back-pressure).
 * -1 when the device is lost (the watchdog) or its worker has stopped: t is
 * not queued. */
static int enqueue(coproc__tasks *ts, int d, coproc_task *t)
{
    worker *w = &ts->w[d];
    pthread_mutex_lock(&w->lock);
    while (w->count == ts->depth && !atomic_load(&w->lost) && !w->exited)
        pthread_cond_wait(&w->not_full, &w->lock);
    if (atomic_load(&w->lost) || w->exited) {
        pthread_mutex_unlock(&w->lock);
        return -1;
    }
    atomic_store(&t->queued_on, d);
    w->ring[(w->head + w->count) % ts->depth] = t;
    w->count++;
    pthread_cond_signal(&w->not_empty);
    pthread_mutex_unlock(&w->lock);
    return 0;
}

/* Place t with the scheduler on a device that can run it, is not lost and
 * not in `avoid` (bits): its ticket set, the device returned; -1 if none. */
static int place(coproc__tasks *ts, coproc_task *t, int avoid)
{
    coproc_runtime *rt = t->rt;
    const coproc_op *op = &t->op;
    coproc__sched_task st;
    memset(&st, 0, sizeof st);
    st.kind = (int)op->kind;
    int home = coproc__op_home_device(op);
    st.forced = home >= 0 ? home : op->device;
    st.input_bytes = coproc__op_input_bytes(op);
    for (int d = 0; d < rt->device_count; d++) {
        st.cost[d] = st.transfer[d] = -1;
        coproc__device *dev = &rt->devices[d];
        if ((avoid >> d & 1) || atomic_load(&ts->w[d].lost) || !coproc__op_runs_on(op, dev))
            continue;
        st.allowed |= 1u << d;
        st.cost[d] = coproc__op_estimate(dev, op, &st.transfer[d]);
    }
    if (!st.allowed || (st.forced >= 0 && !(st.allowed >> st.forced & 1)))
        return -1;
    /* An operator that cannot stream goes where its budget holds it, if any does. */
    unsigned fits = 0;
    for (int d = 0; st.forced < 0 && d < rt->device_count; d++)
        if ((st.allowed >> d & 1) && coproc__op_fits(rt, op, &rt->devices[d]))
            fits |= 1u << d;
    if (fits && fits != st.allowed) {
        st.allowed = fits;
        for (int d = 0; d < rt->device_count; d++)
            if (!(fits >> d & 1))
                st.cost[d] = st.transfer[d] = -1;
    }
    coproc__sched_ticket ticket;
    int d = coproc__sched_place(&ts->sched, &st, clock_now(rt, ts), &ticket);
    if (d < 0 || d >= rt->device_count || !(st.allowed >> d & 1)) {
        /* The policy named a device it may not have (the fixed one, lost):
         * the quickest of those left. */
        st.forced = -1;
        for (int i = 0; i < rt->device_count; i++)
            if ((st.allowed >> i & 1) && (st.forced < 0 || st.cost[i] < st.cost[st.forced]))
                st.forced = i;
        d = coproc__sched_place(&ts->sched, &st, clock_now(rt, ts), &ticket);
        if (d != st.forced)
            return -1;
    }
    pthread_mutex_lock(&t->lock);
    t->ticket = ticket;
    pthread_mutex_unlock(&t->lock);
    return d;
}

/* Place and queue t, trying the next device while the chosen one turns out
 * lost; -1 when no device is left. */
static int place_and_queue(coproc__tasks *ts, coproc_task *t, int avoid)
{
    for (;;) {
        int d = place(ts, t, avoid);
        if (d < 0)
            return -1;
        if (enqueue(ts, d, t) == 0)
            return 0;
        avoid |= 1 << d;
    }
}

int coproc__task_requeue(coproc__tasks *ts, coproc_task *t, int avoid)
{
    pthread_mutex_lock(&t->lock);
    avoid |= t->tried;
    pthread_mutex_unlock(&t->lock);
    return place_and_queue(ts, t, avoid);
}

static coproc__sched_config sched_config(coproc_runtime *rt)
{
    int n = rt->device_count < COPROC__SCHED_MAX_DEVICES ? rt->device_count
                                                         : COPROC__SCHED_MAX_DEVICES;
    coproc__sched_config c = coproc__sched_defaults(n);
    c.policy = (coproc__policy)rt->policy;
    c.fixed_device = rt->fixed_device;
    /* STATIC: the first CPU and the first GPU, the bus speed as calibrated. */
    c.static_cpu_device = c.static_gpu_device = -1;
    for (int i = 0; i < n; i++) {
        coproc_device_type ty = rt->devices[i].info.type;
        if (ty == COPROC_DEVICE_CPU && c.static_cpu_device < 0)
            c.static_cpu_device = i;
        if (ty == COPROC_DEVICE_GPU && c.static_gpu_device < 0)
            c.static_gpu_device = i;
    }
    if (c.static_cpu_device < 0)
        c.static_cpu_device = 0;
    if (c.static_gpu_device < 0)
        c.static_gpu_device = c.static_cpu_device;
    double bw = rt->devices[c.static_gpu_device].profile->h2d_pinned.bytes_per_s;
    c.static_bus_bandwidth = bw > 0 ? bw : 32e9; /* Trueno-DB's constant until calibrated */
    return c;
}

/* Start the scheduler and one worker per device, on first use. */
static int tasks_free(coproc_runtime *rt, coproc__tasks *ts);

/* The runtime's scheduler and workers, started on first use; published in
 * rt->tasks only once every worker runs. */
static coproc_status tasks_start(coproc_runtime *rt, coproc__tasks **out)
{
    pthread_mutex_lock(&rt->tasks_lock);
    if ((*out = rt->tasks)) {
        pthread_mutex_unlock(&rt->tasks_lock);
        return COPROC_OK;
    }
    coproc_status s = COPROC_OK;
    coproc__tasks *ts = calloc(1, sizeof *ts);
    if (!ts || !(ts->w = calloc((size_t)rt->device_count, sizeof *ts->w))) {
        free(ts);
        pthread_mutex_unlock(&rt->tasks_lock);
        return coproc__fail(rt, COPROC_HOST_OUT_OF_MEMORY, "out of host memory");
    }
    coproc__sched_config cfg = sched_config(rt);
    if (coproc__sched_init(&ts->sched, &cfg) != 0) {
        free(ts->w);
        free(ts);
        pthread_mutex_unlock(&rt->tasks_lock);
        return coproc__fail(rt, COPROC_INVALID_ARGUMENT, "bad scheduler configuration");
    }
    ts->t0 = rt->backend->now(rt);
    ts->depth = rt->queue_depth;
    pthread_mutex_init(&ts->live_lock, NULL);
    coproc__watchdog_init(ts);
    for (int d = 0; d < rt->device_count && s == COPROC_OK; d++) {
        worker *w = &ts->w[d];
        w->rt = rt;
        w->ts = ts;
        w->device = d;
        /* Given up by a wait in a caller's thread before there were tasks (sync.h). */
        atomic_store(&w->lost, atomic_load(&rt->devices[d].no_progress) != 0);
        pthread_mutex_init(&w->lock, NULL);
        pthread_cond_init(&w->not_empty, NULL);
        pthread_cond_init(&w->not_full, NULL);
        pthread_cond_init(&w->prefetch_cond, NULL);
        if (!(w->ring = calloc((size_t)ts->depth, sizeof *w->ring)))
            s = coproc__fail(rt, COPROC_HOST_OUT_OF_MEMORY, "out of host memory");
        else if (pthread_create(&w->thread, NULL, worker_main, w) != 0)
            s = coproc__fail(rt, COPROC_HOST_OUT_OF_MEMORY, "cannot start a worker thread");
        else
            w->started = 1;
        /* Only devices with their own memory have copies to overlap. */
        coproc__device *dev = &rt->devices[d];
        if (s == COPROC_OK && !(dev->zero_copy && dev->info.host_unified_memory)) {
            pthread_mutex_lock(&w->lock);
            w->prefetcher_started =
                pthread_create(&w->prefetcher, NULL, prefetcher_main, w) == 0;
            pthread_mutex_unlock(&w->lock);
        }
    }
    if (s == COPROC_OK)
        coproc__watchdog_start(rt, ts);
    if (s == COPROC_OK)
        rt->tasks = *out = ts;
    else
        tasks_free(rt, ts);
    pthread_mutex_unlock(&rt->tasks_lock);
    return s;
}

int coproc__tasks_stop(coproc_runtime *rt)
{
    int stuck = 0;
    if (rt->tasks)
        stuck = tasks_free(rt, rt->tasks);
    rt->tasks = NULL;
    return stuck;
}

/* Join thread th; a lost device's thread still inside its driver after the
 * watchdog's bound is let go (detached) instead. 1 if let go. */
static int join_or_let_go(coproc_runtime *rt, worker *w, pthread_t th)
{
    for (;;) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_nsec += 100 * 1000 * 1000;
        if (ts.tv_nsec >= 1000000000L) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000L;
        }
        if (pthread_timedjoin_np(th, NULL, &ts) == 0)
            return 0;
        pthread_mutex_lock(&w->lock);
        int lost = atomic_load(&w->lost);
        double since = w->lost_at;
        pthread_mutex_unlock(&w->lock);
        if (lost && coproc__now() - since > rt->watchdog_s) {
            pthread_detach(th);
            return 1;
        }
    }
}

/* Stop the workers (they run what is queued first), then the watchdog, and
 * free everything. A lost device's thread that never comes back from its
 * driver is let go: then nothing is freed (it still points at it) and 1 is
 * returned. */
static int tasks_free(coproc_runtime *rt, coproc__tasks *ts)
{
    coproc__watchdog_closing(ts);
    for (int d = 0; d < rt->device_count; d++) {
        worker *w = &ts->w[d];
        if (!w->ring && !w->started)
            continue;
        pthread_mutex_lock(&w->lock);
        w->stop = 1;
        pthread_cond_broadcast(&w->not_empty);
        pthread_cond_broadcast(&w->prefetch_cond);
        pthread_mutex_unlock(&w->lock);
    }
    int stuck = 0;
    for (int d = 0; d < rt->device_count; d++) {
        worker *w = &ts->w[d];
        if (w->started)
            stuck |= join_or_let_go(rt, w, w->thread);
        if (w->prefetcher_started)
            stuck |= join_or_let_go(rt, w, w->prefetcher);
    }
    coproc__watchdog_stop(ts);
    if (stuck)
        return 1;
    for (int d = 0; d < rt->device_count; d++) {
        worker *w = &ts->w[d];
        if (w->ring || w->started) {
            pthread_mutex_destroy(&w->lock);
            pthread_cond_destroy(&w->not_empty);
            pthread_cond_destroy(&w->not_full);
            pthread_cond_destroy(&w->prefetch_cond);
        }
        free(w->ring);
    }
    /* Submitted and never waited on: their results go with them. */
    for (coproc_task *t = ts->live, *next; t; t = next) {
        next = t->next;
        pthread_mutex_lock(&t->lock);
        coproc_result_free(&t->result);
        task_unref_locked(t);
    }
    pthread_mutex_destroy(&ts->live_lock);
    coproc__watchdog_destroy(ts);
    coproc__sched_destroy(&ts->sched);
    free(ts->w);
    free(ts);
    return 0;
}

void coproc_op_init(coproc_op *op, coproc_op_kind kind)
{
    if (!op)
        return;
    memset(op, 0, sizeof *op);
    op->struct_size = sizeof *op;
    op->kind = kind;
    op->device = -1;
}

coproc_status coproc_submit(coproc_runtime *rt, const coproc_op *op, coproc_task **out)
{
    if (!rt)
        return COPROC_NULL_POINTER;
    if (!op || !out)
        return coproc__fail(rt, COPROC_NULL_POINTER, "coproc_submit: %s is NULL",
                            op ? "out" : "op");
    *out = NULL;
    const coproc__op_def *def;
    coproc_status s = coproc__op_check(rt, op, &def);
    if (s != COPROC_OK)
        return s;
    if (rt->device_count > COPROC__SCHED_MAX_DEVICES)
        return coproc__fail(rt, COPROC_UNSUPPORTED, "more than %d devices",
                            COPROC__SCHED_MAX_DEVICES);
    coproc__tasks *ts;
    if ((s = tasks_start(rt, &ts)) != COPROC_OK)
        return s;

    int able = 0;
    for (int d = 0; d < rt->device_count; d++)
        able |= coproc__op_runs_on(op, &rt->devices[d]) << d;
    int home = coproc__op_home_device(op);
    int forced = home >= 0 ? home : op->device;
    if (!able || (forced >= 0 && forced < rt->device_count && !(able >> forced & 1)))
        return coproc__fail(rt, COPROC_UNSUPPORTED,
                            "coproc_submit: no device can run it "
                            "(float64 needs fp64)");

    coproc_task *t = calloc(1, sizeof *t);
    if (!t)
        return coproc__fail(rt, COPROC_HOST_OUT_OF_MEMORY, "out of host memory");
    t->rt = rt;
    t->op = *op;
    t->refs = 1; /* the caller's */
    pthread_mutex_init(&t->lock, NULL);
    coproc__cond_init_monotonic(&t->done_cond);
    t->clock.submitted = rt->backend->now(rt);
    if (place_and_queue(ts, t, 0) != 0) {
        task_free(t);
        if (forced >= 0)
            return coproc__fail(rt, COPROC_DEVICE_LOST,
                                "coproc_submit: device %d, which the "
                                "operator is bound to, was lost (the watchdog)",
                                forced);
        return coproc__fail(rt, COPROC_DEVICE_LOST,
                            "coproc_submit: every device that can run "
                            "it was lost (the watchdog)");
    }
    pthread_mutex_lock(&ts->live_lock);
    t->next = ts->live;
    if (ts->live)
        ts->live->prev = t;
    ts->live = t;
    pthread_mutex_unlock(&ts->live_lock);
    *out = t;
    return COPROC_OK;
}

int coproc_task_done(const coproc_task *ct)
{
    coproc_task *t = (coproc_task *)ct;
    if (!t)
        return 0;
    pthread_mutex_lock(&t->lock);
    int done = t->done;
    pthread_mutex_unlock(&t->lock);
    return done;
}

/* t is done: hand its result to the caller and drop the caller's reference. */
static coproc_status collect(coproc_task *t, coproc_result *out)
{
    coproc__tasks *ts = t->rt->tasks;
    pthread_mutex_lock(&ts->live_lock);
    if (t->prev)
        t->prev->next = t->next;
    else
        ts->live = t->next;
    if (t->next)
        t->next->prev = t->prev;
    pthread_mutex_unlock(&ts->live_lock);
    pthread_mutex_lock(&t->lock);
    coproc_status s = t->status;
    if (s != COPROC_OK)
        coproc__fail(t->rt, s, "%s", t->errmsg);
    t->rt->backend->task_waited(t->rt, &t->clock);
    if (out)
        *out = t->result;
    else
        coproc_result_free(&t->result);
    if (out && s != COPROC_OK)
        memset(out, 0, sizeof *out);
    memset(&t->result, 0, sizeof t->result);
    task_unref_locked(t);
    return s;
}

coproc_status coproc_wait(coproc_task *t, coproc_result *out)
{
    if (!t)
        return COPROC_NULL_POINTER;
    if (!run_if_queued(t)) {
        /* A small task taken by its worker ends within microseconds: look a
         * little while before sleeping (a wake-up costs about as much). */
        double until = coproc__now() + WAIT_SPIN_S;
        while (!atomic_load_explicit(&t->finished, memory_order_acquire) &&
               coproc__now() < until)
            sched_yield();
    }
    pthread_mutex_lock(&t->lock);
    while (!t->done)
        pthread_cond_wait(&t->done_cond, &t->lock);
    pthread_mutex_unlock(&t->lock);
    return collect(t, out);
}

void coproc_drain(coproc_runtime *rt)
{
    if (!rt)
        return;
    /* Query runs first: they submit operators of their own until they end. */
    coproc__query_tasks_drain(rt);
    pthread_mutex_lock(&rt->tasks_lock);
    coproc__tasks *ts = rt->tasks;
    pthread_mutex_unlock(&rt->tasks_lock);
    if (!ts)
        return;
    /* Wait for each task not yet done, holding a reference so that its
     * waiter may collect and free it meanwhile; start over after each wait
     * (the list changes while unlocked). */
    for (;;) {
        pthread_mutex_lock(&ts->live_lock);
        coproc_task *t = ts->live;
        while (t && atomic_load_explicit(&t->finished, memory_order_acquire))
            t = t->next;
        if (t) {
            pthread_mutex_lock(&t->lock);
            t->refs++;
            pthread_mutex_unlock(&t->lock);
        }
        pthread_mutex_unlock(&ts->live_lock);
        if (!t)
            return;
        pthread_mutex_lock(&t->lock);
        while (!t->done)
            pthread_cond_wait(&t->done_cond, &t->lock);
        task_unref_locked(t);
    }
}

coproc_status coproc_wait_timeout(coproc_task *t, double seconds, coproc_result *out)
{
    if (!t)
        return COPROC_NULL_POINTER;
    if (seconds < 0)
        return coproc_wait(t, out);
    if (seconds != seconds)
        return coproc__fail(t->rt, COPROC_INVALID_ARGUMENT, "coproc_wait_timeout: seconds is NaN");
    /* Not run here (run_if_queued): the caller asked to be back in time. */
    double until = coproc__now() + (seconds > 1e9 ? 1e9 : seconds);
    pthread_mutex_lock(&t->lock);
    while (!t->done && coproc__cond_wait_until(&t->done_cond, &t->lock, until) == 0)
        ;
    int done = t->done;
    pthread_mutex_unlock(&t->lock);
    if (!done)
        return coproc__fail(t->rt, COPROC_TIMEOUT,
                            "coproc_wait_timeout: the %s has not finished "
                            "after %g s (the task is still yours: wait on it again)",
                            coproc_op_kind_name(t->op.kind), seconds);
    return collect(t, out);
}

void coproc_result_free(coproc_result *r)
{
    if (!r)
        return;
    coproc_column_free(r->column);
    coproc_column_free(r->column2);
    r->column = r->column2 = NULL;
    coproc_group_result_free(&r->groups);
    coproc_join_result_free(&r->join);
}

coproc_status coproc_device_stats_get(const coproc_runtime *crt, int device,
                                      coproc_device_stats *out)
{
    coproc_runtime *rt = (coproc_runtime *)crt;
    if (!rt)
        return COPROC_NULL_POINTER;
    if (!out)
        return coproc__fail(rt, COPROC_NULL_POINTER, "%s: out is NULL", "coproc_device_stats_get");
    if (out->struct_size < sizeof(size_t) || out->struct_size > sizeof *out)
        return coproc__fail(rt, COPROC_INVALID_ARGUMENT, "coproc_device_stats: bad struct_size");
    coproc__device *dev = coproc__device_at(rt, device);
    if (!dev)
        return COPROC_INVALID_ARGUMENT;
    coproc_device_stats s;
    memset(&s, 0, sizeof s);
    s.struct_size = out->struct_size;
    s.bytes_h2d = atomic_load(&dev->bytes_h2d);
    s.bytes_d2h = atomic_load(&dev->bytes_d2h);
    s.verify_runs = atomic_load(&dev->verify_runs);
    s.verify_mismatches = atomic_load(&dev->verify_mismatches);
    coproc__residency *r = dev->residency;
    s.cache_hits = atomic_load(&r->hits);
    s.cache_misses = atomic_load(&r->misses);
    s.cache_evictions = atomic_load(&r->evictions);
    s.cache_prefetches = atomic_load(&r->prefetches);
    pthread_mutex_lock(&r->lock);
    s.resident_bytes = r->used;
    s.admitted_bytes = r->admitted;
    s.admitted_peak_bytes = r->admitted_peak;
    s.admission_waits = r->admission_waits;
    pthread_mutex_unlock(&r->lock);
    s.budget_bytes = dev->budget_bytes;
    pthread_mutex_lock(&dev->model_lock);
    for (int d = 0; d < 2; d++)
        for (int pinned = 0; pinned < 2; pinned++) {
            /* the profile keeps [to_device][pinned]: direction 0 is to the device */
            const coproc__transfer_drift *dr = &dev->profile->drift[d == 0][pinned];
            s.transfer_level[d][pinned] = coproc__drift_factor(dr);
            s.transfers_timed += dr->seen;
        }
    pthread_mutex_unlock(&dev->model_lock);
    s.mean_rel_error = -1;
    pthread_mutex_lock(&rt->tasks_lock);
    coproc__tasks *ts = rt->tasks;
    if (ts) {
        worker *w = &ts->w[device];
        coproc__sched_device_stats ss;
        coproc__sched_stats(&ts->sched, device, &ss);
        s.busy_seconds = ss.busy;
        if (ss.rel_error_n)
            s.mean_rel_error = ss.rel_error_sum / (double)ss.rel_error_n;
        pthread_mutex_lock(&w->lock);
        s.tasks_run = atomic_load(&w->tasks_run);
        s.tasks_streamed = atomic_load(&w->tasks_streamed);
        s.queued = w->count;
        pthread_mutex_unlock(&w->lock);
        s.lost = atomic_load(&w->lost);
        s.tasks_moved = atomic_load(&w->tasks_moved);
    }
    pthread_mutex_unlock(&rt->tasks_lock);
    if (atomic_load(&rt->devices[device].no_progress))
        s.lost = 1; /* given up by a wait (sync.h), tasks or none */
    memcpy(out, &s, out->struct_size);
    return COPROC_OK;
}
