/* report.h - coproc-calibrate's readable table of one device's profile, and
 * the names and units of each cost model's features (shared with plot.c). */
#ifndef COPROC_CALIBRATE_REPORT_H
#define COPROC_CALIBRATE_REPORT_H

#include <stdio.h>

#include "coproc.h"
#include "cost/profile.h"

/* Feature j of kind k: its name ("input bytes", "output rows") and whether it
 * counts bytes (its coefficient then reads as a bandwidth). */
const char *coproc_report_feature_name(coproc__op_kind k, int j);
int coproc_report_feature_is_bytes(coproc__op_kind k, int j);

/* Observation i (oldest first) of m's ring: features x and seconds. */
void coproc_report_point(const coproc__model *m, int i, double *x, double *seconds);

/* Median and 90th percentile of |predicted - measured| / measured over the
 * points m was fitted on; both -1 without a fit or points. */
void coproc_report_fit_error(const coproc__model *m, double *median, double *p90);

/* Print the profile of device `index` as a table with units. `source` says
 * where it came from ("calibrated now", "loaded from cache"). */
void coproc_print_profile(FILE *f, int index, const coproc_device_info *info,
                          const coproc__profile *p, const char *source);

#endif
