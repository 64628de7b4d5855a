/* check_ops.h - coproc-calibrate --check: how well a device's operator cost
 * models predict sizes they were not fitted on. */
#ifndef COPROC_CHECK_OPS_H
#define COPROC_CHECK_OPS_H

#include <stdio.h>

#include <jansson.h>

#include "coproc.h"

/*
 * Check device i's operator models (already in its profile): for each of
 * reduce, select, map, gather, scan, sort, group_by and hash_join, 60 sizes
 * drawn log-uniformly between 2^min_log2 and 2^max_log2 rows (<= 2^23; odd,
 * so never a calibration size), each run 7 times on device-resident inputs,
 * every run timed as the runtime times operators and fed to the model (which
 * refits every 100 runs). Sizes go in batches of 10, their runs interleaved
 * (7 rounds, each over all 10 in a new order). The model's prediction for a
 * size is taken before its batch runs and compared with the median of its
 * runs; the first 20 sizes (140 runs) only teach the model, the other 40 are
 * scored. A table on `out`; the results as JSON (NULL when an operator
 * failed). `points`, when not NULL, gets one line per size: kind, rows,
 * predicted, median, min, max seconds, scored.
 */
/* Quantile q of v[0..n-1] (sorted in place), interpolated between order
 * statistics like the models' own; -1 for n <= 0. */
double coproc_check_quantile(double *v, int n, double q);

json_t *coproc_check_operators(coproc_runtime *rt, int i, double min_log2, double max_log2,
                               FILE *out, FILE *points);

#endif
