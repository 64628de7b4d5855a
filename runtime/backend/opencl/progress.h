/* progress.h - what tells a slow device from a stuck one (issue 34).
 *
 * A device makes progress when one of its commands completes. While waits are
 * bounded (watchdog_seconds > 0), every kernel launch carries a completion
 * callback, and every bounded wait (sync.h) notes the end of its own command:
 * both stamp the device's last progress. The watchdog (sched/watchdog.c) and
 * the bounded waits measure how long a device has been quiet - since the
 * latest of their own start, its last progress and its last build's end -
 * never how long a task has run: a long operator or pipeline whose commands
 * keep completing is not a hang, only a device that completes nothing for
 * the bound is given up.
 *
 * Compiling is never a stop. coproc's own builds (coproc__program_build, in a
 * worker or in a caller's thread) hold the clock while they run; so does a
 * driver's compile inside the first launch of a kernel object (PoCL compiles
 * its work-group function there, for a minute with a 4 000-constant IN list):
 * a first launch is preceded by a marker, and from the marker's end (the
 * commands before it are done) to the launch's start (CL_RUNNING, which PoCL
 * reports once it has compiled) the device is compiling. The kernel's own run
 * counts like any command's, so one that hangs on its first run is still
 * found. As a backstop against a driver that never reports the start, a
 * compile is taken for a stop after max(COPROC__COMPILE_BOUNDS bounds,
 * COPROC__COMPILE_MAX_S).
 */
#ifndef COPROC_PROGRESS_H
#define COPROC_PROGRESS_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <CL/cl.h>

struct coproc__device;

/* A driver's compile at a first launch counts as a stop only past the longer
 * of these (progress.h's backstop). */
#define COPROC__COMPILE_BOUNDS 10.0
#define COPROC__COMPILE_MAX_S 600.0

/* Kernel objects made and not launched yet (their first launch may compile). */
#define COPROC__FRESH_KERNELS 64

/* Shared with the completion callbacks, which may run after the device is
 * released (a command of a device given up ends late): freed by whoever lets
 * go last. */
typedef struct coproc__progress {
    atomic_int refs;                     /* the device's, and one per callback armed */
    atomic_uint_fast64_t last_ns;        /* coproc__now of the last completion seen (ns) */
    atomic_int compiling;                   /* first launches compiling in the driver */
    atomic_uint_fast64_t compiling_since_ns; /* when that count last left 0 */
    atomic_int frozen; /* an injected stall (COPROC_FAULT_STALL): nothing completes */
} coproc__progress;

/* The device's kernel objects not launched yet (the device's callers only). */
typedef struct coproc__fresh_kernels {
    pthread_mutex_t lock;
    atomic_int n;
    cl_kernel k[COPROC__FRESH_KERNELS];
} coproc__fresh_kernels;

/* Set up and release dev->progress and dev->fresh (device.c). init: 0, or -1
 * out of host memory. */
int coproc__progress_init(struct coproc__device *dev);
void coproc__progress_release(struct coproc__device *dev);

/* One of dev's commands was seen complete now. */
void coproc__progress_note(struct coproc__device *dev);

/* Kernel object k was just made for dev: its first launch may compile. */
void coproc__kernel_fresh(struct coproc__device *dev, cl_kernel k);

/* For a launch of k about to be enqueued: 1 if it is k's first (k is no
 * longer fresh), else 0. */
int coproc__kernel_first_launch(struct coproc__device *dev, cl_kernel k);

/* Arm ev (a launch's event; not released here) to note its completion as
 * progress. marker: NULL, or for a kernel's first launch a marker enqueued
 * just before it: from its end to the launch's start the driver compiles,
 * which holds the clock. */
void coproc__progress_watch(struct coproc__device *dev, cl_event marker, cl_event ev);

/* How long dev has been quiet (seconds) for a waiter that began at `since`
 * (coproc__now): now less the latest of since, its last progress and its last
 * build's end; 0 while it builds or compiles a first launch (within its
 * grace). */
double coproc__device_quiet(const struct coproc__device *dev, double since, double now);

/* COPROC_FAULT_STALL: while n > 0 stalls hold dev, its completions are not
 * noted (a hung driver completes nothing). */
void coproc__progress_freeze(struct coproc__device *dev, int on);

#endif
