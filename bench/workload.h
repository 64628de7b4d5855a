/* workload.h - coproc-workload's two halves: the simulator run (workload.c)
 * and the run on real OpenCL devices (workload_real.c). */
#ifndef COPROC_BENCH_WORKLOAD_H
#define COPROC_BENCH_WORKLOAD_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Options of the real-device run (see usage() in workload.c). */
typedef struct wl_real_config {
    int tasks;               /* operators per run */
    int streams;             /* application threads submitting */
    int window;              /* operators each stream keeps in flight */
    int repeat;              /* runs per configuration; the median makespan's figures */
    size_t min_rows, max_rows;
    uint64_t seed;
    int bus_bound;           /* reductions and selections over large distinct columns */
    int only_policy;         /* a coproc_policy, or -1: all */
    int fixed_device;        /* the device of the "fixed" policy */
    const char *devices;     /* coproc_options.devices (COPROC_DEVICES overrides it) */
    int queue_depth;         /* coproc_options.queue_depth */
    uint64_t budget_bytes;   /* coproc_options.device_budget_bytes */
    int disable_zero_copy;   /* coproc_options.disable_zero_copy */
    int pinned;              /* columns in coproc_column_host_alloc memory, not wrapped */
    int json;                /* the JSON document on stdout */
    int progress;            /* progress lines on stderr */
    FILE *out;               /* the human-readable report; NULL: none */
} wl_real_config;

/* Run the workload with every policy and every device alone; returns the
 * exit status (0, EX_USAGE, EX_UNAVAILABLE, EX_SOFTWARE, EX_OSERR). */
int wl_run_real(const wl_real_config *cfg);

/* Median seconds of one WTAR decision over 4 devices (place, start, finish). */
double wl_decision_time(void);

/* Device d's estimate (0..3) of the operator wl_submit_decision_time times:
 * its seconds, and into *transfer the part that moves data. */
typedef double (*wl_estimate_fn)(void *user, int d, double *transfer);

/* Median seconds of the whole decision coproc_submit makes for one operator
 * of kind `kind` over 4 devices: the estimate on each (estimate, with user)
 * and the WTAR placement (workload_sched.c). -1 on failure. */
double wl_submit_decision_time(int kind, wl_estimate_fn estimate, void *user);

/* CLOCK_MONOTONIC in seconds. */
double wl_now(void);

#endif
