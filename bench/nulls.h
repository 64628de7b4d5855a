/* nulls.h - coproc-bench's cost of nulls (nulls.c). */
#ifndef COPROC_BENCH_NULLS_H
#define COPROC_BENCH_NULLS_H

#include <stddef.h>
#include <stdio.h>

#include <jansson.h>

#include "coproc.h"

/* The share of null rows in the nullable columns. */
#define BENCH_NULL_RATE 0.01

/*
 * The cost of nulls on device `dev` at n rows: each operator (a sum, a
 * selection to positions and to a count, a scan, a map, a group-by with
 * nullable values and one with nullable keys, a scatter with null source
 * rows, and a sum and a group-by with nullable keys over host columns -
 * streamed when they exceed the device's budget, coproc-bench --budget) run
 * on the same int32 data
 * without a validity and with one (BENCH_NULL_RATE nulls), the two
 * interleaved over `reps` rounds (after one warm-up round each; the order
 * flips every round). Prints one line per operator on `out`: both best times
 * and the ratio with nulls / without, as the median of the rounds' ratios and
 * their range; appends the same to jarr. Operators whose name lacks `only`
 * (NULL: none) are skipped. 0 on success, -1 on a failure or a wrong result.
 */
int bench_nulls(coproc_runtime *rt, int dev, size_t n, int reps, const char *only, FILE *out,
                json_t *jarr);

#endif
