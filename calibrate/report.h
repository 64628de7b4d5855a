/* report.h - coproc-calibrate's readable table of one device's profile, and
 * the names and units of each cost model's features (shared with plot.c). */
#ifndef COPROC_CALIBRATE_REPORT_H
#define COPROC_CALIBRATE_REPORT_H

#include <stdio.h>

#include "coproc.h"
#include "profile_view.h"

/* Feature j of kind k: its name ("input bytes", "output rows") and whether it
 * counts bytes (its coefficient then reads as a bandwidth). */
const char *coproc_report_feature_name(coproc_op_kind k, int j);
int coproc_report_feature_is_bytes(coproc_op_kind k, int j);

/* Observation i (oldest first) of m: features x and seconds. */
void coproc_report_point(const view_model *m, int i, double *x, double *seconds);

/* Median and 90th percentile of |predicted - measured| / measured over the
 * points p's model of kind k was fitted on; both -1 without a fit or points. */
void coproc_report_fit_error(const profile_view *p, coproc_op_kind k, double *median,
                             double *p90);

/* Print the profile of device `index` as a table with units. `source` says
 * where it came from ("calibrated now", "loaded from cache"). */
void coproc_print_profile(FILE *f, int index, const coproc_device_info *info,
                          const profile_view *p, const char *source);

#endif
