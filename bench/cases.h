/* cases.h - the operators coproc-bench measures, each with its C baseline. */
#ifndef COPROC_BENCH_CASES_H
#define COPROC_BENCH_CASES_H

#include <stddef.h>
#include <stdint.h>

#include "coproc.h"

/* Host data and the same data already on the device under test. */
typedef struct bench_data {
    coproc_runtime *rt;
    int device;
    size_t n;           /* rows */
    size_t nb;          /* rows of the join's build side (n / 16) */
    int threads;        /* for the C loops */
    int32_t *a;         /* uniform int32 */
    uint32_t *keys;     /* uniform uint32 (sort keys) */
    uint32_t *gkeys;    /* group keys < BENCH_GROUPS */
    uint32_t *wkeys;    /* group keys < BENCH_WIDE_GROUPS */
    uint32_t *pos;      /* random positions < n */
    uint32_t *build;    /* nb distinct keys */
    uint32_t *probe;    /* n keys drawn from build */
    coproc_column *ca, *ckeys, *cgkeys, *cpos, *cbuild, *cprobe, *cvals;
    coproc_column *cwkeys;
    uint32_t *gk_hi, *gk_lo;          /* gkeys as two key columns: gkeys / 32, gkeys % 32 */
    coproc_column *cgk_hi, *cgk_lo;
    coproc_column *sort_keys, *sort_vals; /* scratch the in-place sort works on */
    /* host scratch for the C loops */
    int32_t *out32;
    int64_t *out64;
    uint32_t *out_u32a, *out_u32b;
    /* results, to check the device against the C loop */
    uint64_t device_result, c_result;
} bench_data;

#define BENCH_GROUPS 1024
#define BENCH_WIDE_GROUPS (1u << 20)

typedef struct bench_case {
    const char *name;
    double bytes_per_row;  /* input bytes the operator must read per row */
    /* Before each timed device run (untimed), e.g. restore unsorted keys; may be NULL. */
    coproc_status (*prepare)(bench_data *d);
    coproc_status (*run)(bench_data *d);   /* the timed operator; sets device_result */
    void (*c_run)(bench_data *d);          /* the C baseline; sets c_result */
    const char *c_name;                    /* "C loop" or "qsort" */
} bench_case;

extern const bench_case bench_cases[];
extern const int bench_case_count;

/* Fill host data and upload it; bench_data_free undoes it. */
coproc_status bench_data_init(bench_data *d, coproc_runtime *rt, int device, size_t n,
                              int threads);
void bench_data_free(bench_data *d);

#endif
