/* watchdog.c - a device that stops making progress (a driver that deadlocks,
 * a device that hangs) must not hang the runtime. A thread looks at every
 * worker's run in progress a few times a second; one whose device has been
 * quiet for longer than the run's bound - max(the floor, 20 x its estimate) -
 * marks its device lost. Quiet is counted from the latest of the run's start,
 * the last completion of one of the device's commands and the last build's
 * end, and not at all while a program builds or a kernel's first launch (a
 * driver's compile) has not ended (backend/opencl/progress.h): a long run
 * whose commands keep completing is slow, not stuck. The lost device takes
 * no more work, its waits and launches fail at once (no_progress: the stuck
 * run, if it waits in coproc, returns within a quarter second), the tasks
 * queued on it and the one it was running are queued on other devices (the
 * stuck run's result, should it ever come, is dropped as stale), or end with
 * DEVICE_LOST when bound to it. COPROC_FAULT_STALL=D:N[:S] makes device D's
 * N-th run block S seconds (as a driver would that never returns; nothing of
 * the device completes meanwhile) to test all this. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/error.h"
#include "core/parse.h"
#include "core/runtime.h"
#include "backend/opencl/progress.h"
#include "cost/bandwidth.h"
#include "sched/tasks_internal.h"

/* A run may take this many times its estimate before the device is given up. */
#define WATCHDOG_ESTIMATE_FACTOR 20.0

void coproc__cond_init_monotonic(pthread_cond_t *cond)
{
    pthread_condattr_t a;
    pthread_condattr_init(&a);
    pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
    pthread_cond_init(cond, &a);
    pthread_condattr_destroy(&a);
}

int coproc__cond_wait_until(pthread_cond_t *cond, pthread_mutex_t *lock, double until)
{
    struct timespec ts;
    ts.tv_sec = (time_t)until;
    ts.tv_nsec = (long)((until - (double)ts.tv_sec) * 1e9);
    if (ts.tv_nsec >= 1000000000L)
        ts.tv_nsec = 999999999L;
    return pthread_cond_timedwait(cond, lock, &ts);
}

double coproc__watchdog_bound(const coproc_runtime *rt, double estimate)
{
    double b = WATCHDOG_ESTIMATE_FACTOR * (estimate > 0 ? estimate : 0);
    return b > rt->watchdog_s ? b : rt->watchdog_s;
}

/* COPROC_FAULT_STALL=D:N[:S] into ts; anything else is refused with a warning. */
static void parse_stall(coproc_runtime *rt, coproc__tasks *ts)
{
    const char *env = getenv("COPROC_FAULT_STALL");
    if (!env || !*env)
        return;
    char buf[64];
    snprintf(buf, sizeof buf, "%s", env);
    char *n = strchr(buf, ':');
    char *sec = n ? strchr(n + 1, ':') : NULL;
    if (n)
        *n++ = '\0';
    if (sec)
        *sec++ = '\0';
    long long d = 0, nth = 0;
    double s = 3600;
    const char *why = "expected D:N[:SECONDS]";
    if (!n || coproc__parse_int(buf, 0, rt->device_count - 1, &d, &why) != 0 ||
        coproc__parse_int(n, 1, 1000000000, &nth, &why) != 0 ||
        (sec && coproc__parse_seconds(sec, &s, &why) != 0)) {
        coproc__log(rt, COPROC_LOG_WARN, "COPROC_FAULT_STALL=%s ignored: %s", env, why);
        return;
    }
    ts->stall_device = (int)d;
    ts->stall_nth = (unsigned)nth;
    ts->stall_s = s;
}

int coproc__watchdog_stall(coproc__tasks *ts, coproc__worker *w, unsigned n)
{
    if (w->device != ts->stall_device || n != ts->stall_nth)
        return 0;
    coproc__log(w->rt, COPROC_LOG_WARN, "device %d: run %u stalls for %g s (COPROC_FAULT_STALL)",
                w->device, n, ts->stall_s);
    coproc__device *dev = &w->rt->devices[w->device];
    coproc__progress_freeze(dev, 1); /* a hung driver completes nothing */
    double until = coproc__now() + ts->stall_s;
    pthread_mutex_lock(&ts->wd_lock);
    while (!ts->closing && coproc__now() < until)
        coproc__cond_wait_until(&ts->wd_cond, &ts->wd_lock, until);
    pthread_mutex_unlock(&ts->wd_lock);
    coproc__progress_freeze(dev, 0);
    return 1;
}

/* Requeue t away from device d (counted as moved), or end it with
 * DEVICE_LOST and why. */
static void move_or_end(coproc__tasks *ts, coproc_task *t, int d, const char *why)
{
    if (coproc__task_requeue(ts, t, 1 << d) == 0) {
        atomic_fetch_add(&ts->w[d].tasks_moved, 1);
        return;
    }
    char msg[400];
    snprintf(msg, sizeof msg, "device %d was lost (%s) and no other device can run this %s", d, why,
             coproc_op_kind_name(t->op.kind));
    coproc__task_end(t, COPROC_DEVICE_LOST, msg);
}

void coproc__device_give_up(coproc__tasks *ts, int d, const char *why)
{
    coproc__worker *w = &ts->w[d];
    coproc_runtime *rt = w->rt;
    coproc_task **moved = NULL;
    int n = 0;
    pthread_mutex_lock(&w->lock);
    if (atomic_load(&w->lost)) {
        pthread_mutex_unlock(&w->lock);
        return;
    }
    w->lost_at = coproc__now();
    atomic_store(&w->lost, 1);
    if (w->count > 0 && (moved = malloc((size_t)w->count * sizeof *moved))) {
        for (; w->count > 0; w->count--) {
            moved[n++] = w->ring[w->head];
            w->head = (w->head + 1) % ts->depth;
        }
        w->pending = NULL;
    }
    pthread_cond_broadcast(&w->not_full); /* submitters waiting for room go elsewhere */
    pthread_mutex_unlock(&w->lock);
    coproc__log(rt, COPROC_LOG_ERROR,
                "device %d (%s) is marked lost: %s; its %d queued "
                "operator%s and all new work go to other devices",
                d, rt->devices[d].info.name, why, n, n == 1 ? "" : "s");
    for (int i = 0; i < n; i++)
        move_or_end(ts, moved[i], d, why);
    free(moved);
}

/* The watchdog found run `attempt` of t on device d running past its bound:
 * give the device up; t runs again elsewhere (the stuck run is stale). */
static void device_stuck(coproc__tasks *ts, int d, coproc_task *t, int attempt, double ran,
                         double quiet, double bound)
{
    char why[200];
    snprintf(why, sizeof why,
             "no progress: a %s has run %.2f s, the device completed nothing for %.2f s, its "
             "bound %.2f s",
             coproc_op_kind_name(t->op.kind), ran, quiet, bound);
    /* Its waits and launches fail from now on: a run stuck in one of them
     * (in a worker, or in the waiter's own thread) returns now. */
    atomic_store(&ts->w[d].rt->devices[d].no_progress, 1);
    coproc__device_give_up(ts, d, why);
    pthread_mutex_lock(&t->lock);
    int current = !t->done && t->attempt == attempt;
    if (current) {
        t->attempt++;
        t->tried |= 1 << d;
        t->stale_runs++; /* its run is still in flight */
    }
    pthread_mutex_unlock(&t->lock);
    if (current)
        move_or_end(ts, t, d, why);
}

/* One look at every worker. */
static void scan(coproc_runtime *rt, coproc__tasks *ts)
{
    double now = coproc__now();
    for (int i = 0; i < rt->device_count; i++) {
        coproc__worker *w = &ts->w[i];
        /* A wait in a caller's thread gave the device up (sync.h): its queued
         * work goes elsewhere now, not when a task of it next fails. */
        if (atomic_load(&rt->devices[i].no_progress) && !atomic_load(&w->lost))
            coproc__device_give_up(ts, i, "a wait saw no progress within its bound");
        pthread_mutex_lock(&w->lock);
        coproc_task *t = w->running;
        int attempt = w->running_attempt, d = w->running_device;
        double since = w->running_since, bound = w->running_bound, quiet = 0;
        int late = 0;
        if (t && d >= 0 && !atomic_load(&ts->w[d].lost)) {
            /* Not how long the run has taken: how long its device has made
             * no progress (progress.h). */
            quiet = coproc__device_quiet(&rt->devices[d], since, now);
            late = quiet > bound;
        }
        double ran = now - since;
        if (late) { /* the task stays alive while we look at it */
            pthread_mutex_lock(&t->lock);
            t->refs++;
            pthread_mutex_unlock(&t->lock);
        }
        pthread_mutex_unlock(&w->lock);
        if (!late)
            continue;
        device_stuck(ts, d, t, attempt, ran, quiet, bound);
        coproc__task_unref(t);
    }
}

static void *watchdog_main(void *arg)
{
    coproc__tasks *ts = arg;
    coproc_runtime *rt = ts->w[0].rt;
    /* A few looks within the least bound; at most 4 a second. */
    double period = rt->watchdog_s / 4 > 0.25 ? 0.25 : rt->watchdog_s / 4;
    pthread_mutex_lock(&ts->wd_lock);
    while (!ts->wd_stop) {
        coproc__cond_wait_until(&ts->wd_cond, &ts->wd_lock, coproc__now() + period);
        if (ts->wd_stop)
            break;
        pthread_mutex_unlock(&ts->wd_lock);
        scan(rt, ts);
        pthread_mutex_lock(&ts->wd_lock);
    }
    pthread_mutex_unlock(&ts->wd_lock);
    return NULL;
}

void coproc__watchdog_init(coproc__tasks *ts)
{
    pthread_mutex_init(&ts->wd_lock, NULL);
    coproc__cond_init_monotonic(&ts->wd_cond);
    ts->stall_device = -1;
}

void coproc__watchdog_closing(coproc__tasks *ts)
{
    pthread_mutex_lock(&ts->wd_lock);
    ts->closing = 1;
    pthread_cond_broadcast(&ts->wd_cond);
    pthread_mutex_unlock(&ts->wd_lock);
}

void coproc__watchdog_start(coproc_runtime *rt, coproc__tasks *ts)
{
    parse_stall(rt, ts);
    if (rt->watchdog_s > 0 && rt->device_count > 0)
        ts->watchdog_started = pthread_create(&ts->watchdog, NULL, watchdog_main, ts) == 0;
    if (rt->watchdog_s > 0 && !ts->watchdog_started)
        coproc__log(rt, COPROC_LOG_WARN,
                    "cannot start the watchdog thread: a device that stops "
                    "responding will not be detected");
}

void coproc__watchdog_stop(coproc__tasks *ts)
{
    pthread_mutex_lock(&ts->wd_lock);
    ts->wd_stop = 1;
    pthread_cond_broadcast(&ts->wd_cond);
    pthread_mutex_unlock(&ts->wd_lock);
    if (ts->watchdog_started)
        pthread_join(ts->watchdog, NULL);
    ts->watchdog_started = 0;
}

void coproc__watchdog_destroy(coproc__tasks *ts)
{
    pthread_mutex_destroy(&ts->wd_lock);
    pthread_cond_destroy(&ts->wd_cond);
}
