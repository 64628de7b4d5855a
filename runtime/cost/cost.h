/* cost.h - what an operator costs on a device: observing runs (OpenCL
 * profiling markers around each operator) into the device's models, and
 * predicting a whole operator's cost (moving inputs, computing, moving back). */
#ifndef COPROC_COST_H
#define COPROC_COST_H

#include "backend/opencl/device.h"
#include "cost/profile.h"

/* Brackets one operator on a device's queue. */
typedef struct coproc__op_timer {
    cl_event start;   /* marker enqueued before the operator's commands; NULL if none */
    double wall_start;
    uint64_t programs_made; /* the device's count at the start */
    int timed;              /* 0: a run a settled model does not learn from (no markers) */
} coproc__op_timer;

/* Start timing an operator on dev (never fails: falls back to the wall clock). */
void coproc__op_timer_begin(coproc__device *dev, coproc__op_timer *t);

/*
 * As coproc__op_timer_begin for a run the model of kind k may learn from:
 * the first COPROC__LEARN_RUNS runs of k on dev since open are timed
 * (markers, then observed), and every run after two of k that took
 * COPROC__TIMED_ALWAYS_US or more (the markers' cost is then a few percent;
 * one such run alone may be a hiccup of a loaded host);
 * after them, for short runs, one run in COPROC__SETTLED_EVERY once
 * the model has settled (a fit whose recent median error is at most
 * COPROC__SETTLED_ERROR), one in COPROC__UNSETTLED_EVERY while it has not
 * (runs of a few microseconds jitter by more than that: their model may never
 * settle), observed by the wall clock alone: markers would double such a
 * run's cost. The other runs cost no OpenCL command and teach nothing (an
 * observation costs a refit every 100).
 * On a simulated device (a backend that does not calibrate) every run is
 * timed: its time is the profile's, free to read.
 */
#define COPROC__LEARN_RUNS 64
#define COPROC__SETTLED_ERROR 0.25
#define COPROC__SETTLED_EVERY 32
#define COPROC__UNSETTLED_EVERY 16
#define COPROC__TIMED_ALWAYS_US 500
void coproc__op_timer_begin_sampled(coproc__device *dev, coproc__op_timer *t, coproc__op_kind k);

/*
 * Stop timing and, when ok is nonzero, feed (features x, seconds) to dev's
 * model of kind k (thread-safe) - unless a kernel program was built or loaded
 * on dev meanwhile: that run's time is mostly the build, not the operator.
 * Seconds span the device timeline from the start marker to an end marker
 * (OpenCL profiling), else the wall clock. A run left untimed by
 * coproc__op_timer_begin_sampled is only reported to the backend (a simulated
 * device charges it) with its wall-clock seconds. Always releases the timer.
 */
void coproc__op_timer_end(coproc__device *dev, coproc__op_timer *t, coproc__op_kind k,
                          const double *x, int ok);

/*
 * Stop timing and return the seconds coproc__op_timer_end would observe (the
 * device timeline between the markers, else the wall clock), without feeding
 * any model; for calibration, which times operators as the runtime does.
 * Always releases the timer.
 */
double coproc__op_timer_seconds(coproc__device *dev, coproc__op_timer *t);

/*
 * Predicted seconds for an operator of kind k with features x on dev:
 * moving in_bytes (inputs not yet on dev) host->device, computing, moving
 * out_bytes device->host. Negative when dev has no model for k yet.
 */
double coproc__predict_cost(coproc__device *dev, coproc__op_kind k, const double *x,
                            double in_bytes, double out_bytes);

#endif
