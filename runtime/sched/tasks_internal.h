/* tasks_internal.h - what task.c (submission, ready queues, workers,
 * waiting) and watchdog.c (a device that stops making progress) share: the
 * task, the worker of each device and the runtime's set of them. */
#ifndef COPROC_TASKS_INTERNAL_H
#define COPROC_TASKS_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>

#include "backend/backend.h"
#include "coproc.h"
#include "sched/scheduler.h"

struct coproc_task {
    coproc_runtime *rt;
    coproc_op op;
    pthread_mutex_t lock;
    pthread_cond_t done_cond; /* on CLOCK_MONOTONIC (coproc_wait_timeout) */
    /* Guarded by lock: */
    coproc__sched_ticket ticket; /* the current attempt's placement */
    coproc__task_clock clock;    /* submitted; the whole clock once done */
    int tried;                   /* devices that ran out of memory on it or were lost (bits) */
    int attempt;                 /* the current attempt: a run of an older one is stale and
                                  * its result dropped (the watchdog moved the task) */
    int refs;                    /* the caller's until coproc_wait, one per run in flight, one
                                  * while the prefetcher reads its op; the last frees it */
    int stale_runs;              /* runs the watchdog gave up that have not come back: the
                                  * task is not done before they do (or a grace ends), so
                                  * its caller does not free inputs a slow run still reads */
    int done;
    coproc_status status;
    char errmsg[512];
    coproc_result result;
    struct coproc_task *prev, *next; /* the runtime's tasks not yet waited on (live_lock) */
    atomic_int queued_on; /* the device whose ready queue took it last */
    atomic_int finished;  /* done, readable without the lock (coproc_wait's spin) */
};

typedef struct coproc__worker {
    coproc_runtime *rt;
    struct coproc__tasks *ts; /* its owner */
    int device;
    pthread_t thread;
    int started;
    pthread_mutex_t lock;
    pthread_cond_t not_empty, not_full;
    coproc_task **ring; /* bounded ready queue */
    int head, count;
    int busy; /* one of its tasks runs (in the worker or in a waiter) */
    int stop;
    int exited; /* the worker thread returned: it takes no more work */
    atomic_uint_fast64_t tasks_run, tasks_streamed;
    /* The prefetcher: copies the next task's inputs on the copy queue while
     * this task computes. `pending` waits for it, `active` is being copied. */
    pthread_t prefetcher;
    int prefetcher_started;
    pthread_cond_t prefetch_cond;
    coproc_task *pending, *active;
    /* What the watchdog watches (lock): the run in progress here, on which
     * device (an out-of-memory hand-off runs it on another), since when
     * (coproc__now) and how long it may take. */
    coproc_task *running;
    int running_attempt, running_device;
    double running_since, running_bound;
    unsigned runs_started; /* runs begun here (COPROC_FAULT_STALL counts them) */
    atomic_int failures;   /* runs in a row that failed with a driver error */
    atomic_int lost;       /* the watchdog gave the device up: no work goes to it */
    double lost_at;        /* coproc__now when it did */
    atomic_uint_fast64_t tasks_moved;
} coproc__worker;

typedef struct coproc__tasks {
    coproc__sched sched;
    double t0; /* clock origin */
    int depth;
    coproc__worker *w;
    /* Tasks submitted and not yet waited on: coproc_close frees them. */
    pthread_mutex_t live_lock;
    coproc_task *live;
    /* The watchdog (watchdog.c): its thread, woken to stop; injected stalls
     * wait on the same condition, so closing ends them. */
    pthread_t watchdog;
    int watchdog_started;
    pthread_mutex_t wd_lock;
    pthread_cond_t wd_cond; /* CLOCK_MONOTONIC */
    int wd_stop;
    int closing;      /* the runtime closes: injected stalls end */
    int stall_device; /* COPROC_FAULT_STALL=D:N[:S]; -1 none */
    unsigned stall_nth;
    double stall_s;
} coproc__tasks;

/* task.c, for the watchdog: place t on a device that is neither lost nor in
 * `avoid` and can run it, and queue it there. 0, or -1 when there is none
 * (nothing is queued). */
int coproc__task_requeue(coproc__tasks *ts, coproc_task *t, int avoid);
/* End t with status s and message msg (it was not run or its run is stale). */
void coproc__task_end(coproc_task *t, coproc_status s, const char *msg);
/* Drop a reference to t; the last one frees it. */
void coproc__task_unref(coproc_task *t);

/* watchdog.c: init (its lock and condition), start (the thread, when
 * rt->watchdog_s > 0; reads COPROC_FAULT_STALL), closing (injected stalls
 * end), stop (the thread), destroy. */
void coproc__watchdog_init(coproc__tasks *ts);
void coproc__watchdog_start(coproc_runtime *rt, coproc__tasks *ts);
void coproc__watchdog_closing(coproc__tasks *ts);
void coproc__watchdog_stop(coproc__tasks *ts);
void coproc__watchdog_destroy(coproc__tasks *ts);
/* Mark device d lost (why: for the log): it takes no more work and its
 * queued tasks go to other devices (or end with DEVICE_LOST). Idempotent. */
void coproc__device_give_up(coproc__tasks *ts, int d, const char *why);
/* How long one run estimated at `estimate` seconds may take (rt->watchdog_s). */
double coproc__watchdog_bound(const coproc_runtime *rt, double estimate);
/* An injected stall (COPROC_FAULT_STALL) for w's run number n: blocks as a
 * hung driver would, until its time is up or the runtime closes; 1 if it
 * stalled (the run then fails as DEVICE_LOST without touching its op). */
int coproc__watchdog_stall(coproc__tasks *ts, coproc__worker *w, unsigned n);
/* A timed wait on cond (initialised on CLOCK_MONOTONIC) until `until`
 * (coproc__now's clock); what pthread_cond_timedwait returns. */
int coproc__cond_wait_until(pthread_cond_t *cond, pthread_mutex_t *lock, double until);
/* Initialise cond on CLOCK_MONOTONIC, the clock coproc__now reads. */
void coproc__cond_init_monotonic(pthread_cond_t *cond);

#endif
