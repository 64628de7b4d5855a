/* skew.h - coproc-bench --skew: a hash join whose build side is skewed (one
 * key holds most rows) against an unskewed build of the same size (skew.c). */
#ifndef COPROC_BENCH_SKEW_H
#define COPROC_BENCH_SKEW_H

#include <stddef.h>
#include <stdio.h>

#include <jansson.h>

#include "coproc.h"

/*
 * coproc_hash_join of n build rows and n probe rows, two ways interleaved
 * over `reps` rounds after a warm-up: the build keys all distinct, and 90 %
 * of the build rows on one key (the rest distinct). The probe holds each
 * distinct build key once and misses for the rest, so both joins give
 * exactly n pairs - the same output, only the build side's skew differs.
 * Every result is checked (each pair's keys equal, each build row paired
 * exactly once). Prints the best times and the median of the rounds'
 * skewed / unskewed ratios with their range (the runtime's budget decides
 * whether the join runs in device memory or partitioned); appends them to
 * jarr. 0 on success, -1 on a failure or a wrong result.
 */
int bench_skew(coproc_runtime *rt, size_t n, int reps, FILE *out, json_t *jarr);

#endif
