/* workload.h - coproc-workload: options (workload.c) and the run
 * (workload_real.c), on OpenCL devices or on simulated ones. */
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
    int simulated;           /* devices are simulated (--simulate): times are virtual */
    int json;                /* the JSON document on stdout */
    int progress;            /* progress lines on stderr */
    FILE *out;               /* the human-readable report; NULL: none */
} wl_real_config;

/* Run the workload with every policy and every device alone; returns the
 * exit status (0, EX_USAGE, EX_UNAVAILABLE, EX_SOFTWARE, EX_OSERR). */
int wl_run_real(const wl_real_config *cfg);

/* CLOCK_MONOTONIC in seconds. */
double wl_now(void);

#endif
