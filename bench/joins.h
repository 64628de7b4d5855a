/* joins.h - coproc-bench --joins: query joins on two key columns (joins.c). */
#ifndef COPROC_BENCH_JOINS_H
#define COPROC_BENCH_JOINS_H

#include <stddef.h>
#include <stdio.h>

#include <jansson.h>

#include "coproc.h"

/*
 * A query joining n fact rows to a dimension of n / 8 rows on two key
 * columns (inner and semi join, then a count and a sum), run on device `dev`
 * three ways, interleaved over `reps` rounds after a warm-up round: fused
 * with the two key columns (the generated kernel packs them), fused on one
 * key column holding the same keys packed by hand (what the composite join
 * can at best approach), and one operator at a time. Every run's result is
 * checked against a scalar C loop. Prints per join kind the best times and
 * the ratios two columns / one column and operators / two columns, each the
 * median of the rounds' ratios with their range; appends them to jarr.
 * 0 on success, -1 on a failure or a wrong result.
 */
int bench_joins(coproc_runtime *rt, int dev, size_t n, int reps, FILE *out, json_t *jarr);

#endif
