/* scheduler.h - device-independent placement of tasks over up to
 * COPROC__SCHED_MAX_DEVICES abstract devices (HyPE's heuristics plus the
 * Trueno-DB static rule). The caller supplies, per task, an estimated cost per
 * device (transfer of inputs not resident there + compute + result back) and a
 * clock value; the scheduler keeps per device the estimated work placed but not
 * started and the running tasks' start times and estimates. It never allocates
 * after init; a mutex inside makes every call thread-safe. */
#ifndef COPROC_SCHEDULER_H
#define COPROC_SCHEDULER_H

#include <pthread.h>
#include <stdint.h>

#define COPROC__SCHED_MAX_DEVICES 16
#define COPROC__SCHED_MAX_KINDS 64        /* task kinds tracked for the training phase */
#define COPROC__SCHED_TRAINING_DEFAULT 3  /* HyPE: a few runs per device before trusting a model */

typedef enum coproc__policy {
    COPROC__POLICY_WTAR = 0,   /* min queued + remaining running + this estimate (default) */
    COPROC__POLICY_SRT,        /* min estimate */
    COPROC__POLICY_RR,         /* round-robin */
    COPROC__POLICY_TBO,        /* fastest unless its load exceeds a threshold, then next fastest */
    COPROC__POLICY_PBO,        /* random, P(i) = (1 - T_i/sum T) / (N-1) */
    COPROC__POLICY_STATIC,     /* Trueno-DB rule with calibrated constants */
    COPROC__POLICY_FIXED,      /* always one device */
    COPROC__POLICY_COUNT
} coproc__policy;

typedef struct coproc__sched_config {
    coproc__policy policy;
    int devices;                 /* 1..COPROC__SCHED_MAX_DEVICES */
    int training;                /* placements per kind and device before estimates are
                                    used; 0 = default (3), negative = no training phase */
    /* TBO: a device is overloaded when its load (queued + remaining running) exceeds
     * tbo_threshold seconds if > 0, else tbo_factor x this task's estimate there
     * (tbo_factor 0 = 2). */
    double tbo_threshold;
    double tbo_factor;
    int fixed_device;            /* FIXED */
    /* STATIC: the GPU device only if input_bytes >= static_min_bytes and
     * compute > static_ratio x transfer on it, else the CPU device. Transfer time
     * is the task's transfer[] estimate for the GPU, or input_bytes /
     * static_bus_bandwidth when that is negative. Zeros mean Trueno-DB's 10 MB
     * and 5x; the bandwidth comes from calibration. */
    int static_cpu_device, static_gpu_device;
    double static_min_bytes, static_ratio, static_bus_bandwidth;
    uint64_t seed;               /* PBO's RNG */
} coproc__sched_config;

/* One task as the scheduler sees it. cost[d] < 0: no trusted model on d. */
typedef struct coproc__sched_task {
    int kind;                                    /* 0..MAX_KINDS-1; else no training phase */
    int forced;                                  /* device to use, or -1 */
    uint32_t allowed;                            /* bit per device able to run it; 0 = all */
    double cost[COPROC__SCHED_MAX_DEVICES];      /* estimated seconds, total */
    double transfer[COPROC__SCHED_MAX_DEVICES];  /* part of cost that is data movement
                                                    (STATIC only; < 0 unknown) */
    double input_bytes;                          /* STATIC only */
} coproc__sched_task;

/* What a placement returns; handed back to start/finish. */
typedef struct coproc__sched_ticket {
    int device;
    int kind;
    int training;          /* placed by the training phase */
    double estimate;       /* seconds; < 0 unknown (counted as 0 in the load) */
    double start;          /* clock at start, set by coproc__sched_start */
} coproc__sched_ticket;

typedef struct coproc__sched_device_stats {
    uint64_t placed, finished;
    double queued;           /* estimated seconds placed, not started */
    double running_estimate; /* sum of running tasks' estimates */
    int running;
    double busy;             /* sum of measured seconds */
    double rel_error_sum;    /* sum |estimate - measured| / measured over finished tasks
                                that had an estimate */
    uint64_t rel_error_n;
} coproc__sched_device_stats;

typedef struct coproc__sched {
    pthread_mutex_t lock;
    coproc__sched_config cfg;
    uint64_t rng;
    uint64_t rr_next;
    coproc__sched_device_stats dev[COPROC__SCHED_MAX_DEVICES];
    double running_start_sum[COPROC__SCHED_MAX_DEVICES]; /* for remaining time */
    uint16_t seen[COPROC__SCHED_MAX_KINDS][COPROC__SCHED_MAX_DEVICES]; /* placements, saturating */
} coproc__sched;

/* A config with the defaults: WTAR, training 3, TBO factor 2, STATIC CPU 0 / GPU 1
 * with 10 MB and 5x. */
coproc__sched_config coproc__sched_defaults(int devices);

/* Parse a policy name ("wtar", "srt", "rr", "tbo", "pbo", "static", "fixed",
 * case-insensitive); -1 if unknown. */
int coproc__policy_parse(const char *name);
const char *coproc__policy_name(coproc__policy p);

/* 0 on success, -1 on a bad config. */
int coproc__sched_init(coproc__sched *s, const coproc__sched_config *cfg);
void coproc__sched_destroy(coproc__sched *s);

/* Choose a device for t at clock `now` and count its estimate as queued there.
 * Returns the device (also in *ticket), or -1 if no device is allowed. */
int coproc__sched_place(coproc__sched *s, const coproc__sched_task *t, double now,
                        coproc__sched_ticket *ticket);

/* The task began running at `now`: its estimate moves from queued to running. */
void coproc__sched_start(coproc__sched *s, coproc__sched_ticket *ticket, double now);

/* The task ended at `now` after `measured` seconds (negative: failed, not timed). */
void coproc__sched_finish(coproc__sched *s, const coproc__sched_ticket *ticket, double now,
                          double measured);

/* A placed task that will never start (cancelled): its queued estimate is dropped. */
void coproc__sched_cancel(coproc__sched *s, const coproc__sched_ticket *ticket);

/* Estimated seconds of work ahead of a new task on `device` at `now`. */
double coproc__sched_load(coproc__sched *s, int device, double now);

/* A consistent copy of one device's counters. */
void coproc__sched_stats(coproc__sched *s, int device, coproc__sched_device_stats *out);

#endif
