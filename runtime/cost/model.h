/* model.h - learned cost functions (HyPE): a least-squares model per operator
 * and device, t = c0 + c1*x1 + ... + ck*xk over operator-chosen features
 * (rows, rows*log2(rows), output rows, groups, bytes), fitted on a bounded ring
 * of recent observations, refitted every COPROC__MODEL_REFIT_EVERY of them,
 * and reporting its own relative error. Not thread-safe: the owner locks. */
#ifndef COPROC_MODEL_H
#define COPROC_MODEL_H

#include <stdint.h>

#include <jansson.h>

#define COPROC__MODEL_MAX_FEATURES 3
#define COPROC__MODEL_RING 256          /* observations kept for fitting */
#define COPROC__MODEL_REFIT_EVERY 100   /* HyPE's cadence */
#define COPROC__MODEL_ERROR_RING 100    /* relative errors kept for median / p90 */
#define COPROC__MODEL_KNOTS 12          /* knot positions a fit tries */

typedef struct coproc__model {
    int features;                                   /* k, 1..COPROC__MODEL_MAX_FEATURES */
    int fitted;                                     /* coef holds a fit */
    double coef[1 + COPROC__MODEL_MAX_FEATURES];    /* c0 (seconds), then per feature,
                                                       then the hinge's (below) */
    /* A bend in the first feature: when knot > 0 the model adds
     * coef[features + 1] * max(0, x1 - knot), a steeper cost per unit beyond
     * the knot (on a CPU device: data leaving the last-level cache). 0: none.
     * Only models of fewer than COPROC__MODEL_MAX_FEATURES features bend. */
    double knot;
    uint64_t observations;                          /* all ever observed */
    uint64_t refits;                                /* fits done so far */
    int since_refit;                                /* observations since the last fit */
    /* ring of recent observations */
    int ring_len, ring_head;
    double x[COPROC__MODEL_RING][COPROC__MODEL_MAX_FEATURES];
    double y[COPROC__MODEL_RING];
    /* ring of relative errors |predicted - measured| / measured, of observations
     * made while a fit existed (i.e. on data the fit had not seen) */
    int err_len, err_head;
    double err[COPROC__MODEL_ERROR_RING];
    /* range of each feature seen by the current fit, to tell extrapolation */
    double lo[COPROC__MODEL_MAX_FEATURES], hi[COPROC__MODEL_MAX_FEATURES];
} coproc__model;

/* An empty model over `features` features (clamped to 1..MAX). */
void coproc__model_init(coproc__model *m, int features);

/*
 * Record that an operator with features x took `seconds`. If a fit exists, its
 * relative error on this observation goes into the error ring first. Every
 * COPROC__MODEL_REFIT_EVERY observations the model is refitted over the ring.
 * Sooner when the device's speed shifted as a whole: when, every 32
 * observations, the last 32-64 inside the fitted range lie mostly (3 in 4) on
 * one side of the fit by a median factor beyond 1 +- 10 %, the older ones in
 * the ring are scaled by that factor (their shape kept, the level moved) and
 * the model is refitted at once.
 * Non-finite or negative seconds are ignored.
 */
void coproc__model_observe(coproc__model *m, const double *x, double seconds);

/*
 * Fit now over the ring for the median run: least absolute relative error
 * |y - p| / p (iteratively reweighted least squares, from weights 1/y^2),
 * coefficients kept non-negative (exactly: the best of the variable subsets
 * whose free fit has no negative coefficient). The line may bend once:
 * knots at COPROC__MODEL_KNOTS places spaced geometrically across the first
 * feature's range (with 3 distinct values of it, and features + 2 distinct
 * points, on each side) are tried, and the best kept when it cuts the (capped)
 * squared relative error by a quarter or more and the straight fit is off by
 * more than 3 % RMS (see knot above). Then observations whose residual is an
 * outlier (beyond 3 scaled median absolute deviations) are dropped and the
 * model refitted once, so a few timing spikes do not pull it.
 * Returns 0 on success, -1 with too few observations (fewer than features + 1
 * distinct points); the previous fit then stays.
 */
int coproc__model_fit(coproc__model *m);

/* Predicted seconds for features x; a negative value when there is no fit. */
double coproc__model_predict(const coproc__model *m, const double *x);

/* How far x lies outside the fitted range: 1 inside, else max over features of
 * x/hi or lo/x (e.g. 4 = four times beyond the largest size seen). */
double coproc__model_extrapolation(const coproc__model *m, const double *x);

/* The latest observation: its features into x (m->features of them) and its
 * seconds; -1 when there is none. */
int coproc__model_last(const coproc__model *m, double *x, double *seconds);

/* Median and 90th percentile of the recent relative errors; both -1 when none. */
void coproc__model_error(const coproc__model *m, double *median, double *p90);

/* The model as JSON: {"features", "coef", "knot", "observations", "refits", "lo",
 * "hi", "points": [[x..., y], ...]} (new reference); "coef" has features + 2
 * entries when knot > 0. */
json_t *coproc__model_to_json(const coproc__model *m);

/* Read a model written by coproc__model_to_json (one without "knot", from
 * before bends, reads as straight); 0 on success, -1 if malformed (m is then
 * left as an empty model of `features` features). */
int coproc__model_from_json(coproc__model *m, int features, const json_t *j);

#endif
