/* overhead.h - coproc-bench --overhead (overhead.c). */
#ifndef COPROC_BENCH_OVERHEAD_H
#define COPROC_BENCH_OVERHEAD_H

#include <stddef.h>
#include <stdio.h>

#include <jansson.h>

#include "coproc.h"

/* Time a `rows`-row int32 sum on device `dev` four ways (a bare OpenCL
 * kernel, coproc_reduce on a device column, coproc_submit + coproc_wait, 100
 * submits then 100 waits),
 * interleaved over about `iterations` calls each; print the table on `out`
 * and add it to jdev as "overhead". 0 on success, -1 on failure or a wrong sum. */
int bench_overhead(coproc_runtime *rt, int dev, int is_cpu, size_t rows, int iterations,
                   FILE *out, json_t *jdev);

#endif
