/* profile_view.h - a device's profile as coproc-calibrate reads it: the
 * handle of coproc/inspect.h, which predicts, and the fields of its JSON
 * document (docs/profile.md) in plain C for the table, the plots and the
 * check. */
#ifndef COPROC_CALIBRATE_PROFILE_VIEW_H
#define COPROC_CALIBRATE_PROFILE_VIEW_H

#include <jansson.h>

#include "coproc.h"
#include "coproc/inspect.h"

#define VIEW_SWEEP_MAX 64    /* transfer points read; a profile has at most 32 */
#define VIEW_POINTS_MAX 256  /* model observations read; a model keeps at most 256 */

/* t(bytes) = latency + bytes / bandwidth, with the points it was fitted on. */
typedef struct view_transfer {
    double latency_s;
    double bytes_per_s;
    int points;
    double bytes[VIEW_SWEEP_MAX];
    double seconds[VIEW_SWEEP_MAX];
} view_transfer;

/* One operator kind's cost model and the observations it was fitted on,
 * oldest first: x[i] their features, y[i] their seconds. */
typedef struct view_model {
    int fitted;
    int features;
    double coef[COPROC_MODEL_MAX_FEATURES + 1]; /* c0, per feature, the bend's; 0 beyond */
    double knot;
    int points;
    double x[VIEW_POINTS_MAX][COPROC_MODEL_MAX_FEATURES];
    double y[VIEW_POINTS_MAX];
} view_model;

typedef struct profile_view {
    coproc_profile *profile;      /* owned: predictions (coproc_profile_predict, ...) */
    json_t *doc;                  /* owned: the document itself */
    int full;
    double created_unix;
    double calibration_seconds;
    view_transfer h2d_pinned, d2h_pinned, h2d_pageable, d2h_pageable;
    double both_directions_bytes_per_s;
    double mem_copy_bytes_per_s;
    double mem_read_bytes_per_s;
    double int_ops_per_s;
    double float_ops_per_s;
    double launch_latency_s;
    double build_source_s;
    double build_cached_s;
    view_model ops[COPROC_OP_KIND_COUNT];
} profile_view;

/* Take p (owned by *v from now on, freed on failure too) and read its
 * document into *v. 0, or -1 when host memory runs out. */
int profile_view_init(profile_view *v, coproc_profile *p);

/* Release what *v owns. */
void profile_view_free(profile_view *v);

#endif
