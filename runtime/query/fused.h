/* fused.h - what the fused engine's files share: the run's state, a
 * pipeline's columns bound on a device, and the group-by sink, which runs
 * over all of a pipeline's rows at once (fused.c) or morsel by morsel on
 * several devices (hybrid.c). */
#ifndef COPROC_QUERY_FUSED_H
#define COPROC_QUERY_FUSED_H

#include "backend/opencl/launch.h"
#include "query/pipeline.h"
#include "query/run.h"

/* Devices a hybrid run splits one pipeline across at most. */
#define COPROC__QMAX_DEVICES 16

typedef struct coproc__fused {
    coproc__qrun *run;
    coproc_runtime *rt;
    coproc__qprog prog;
} coproc__fused;

/* One kernel argument's column on a device. */
typedef struct coproc__qbound {
    const coproc_column *col;
    cl_mem mem;
    int pinned;      /* acquired from the residency cache: unpin */
    int owned;       /* a placeholder made here: release */
} coproc__qbound;

/* fused.c */
/* Column c (named `name` in messages) on dev: a device column where it is
 * (COPROC_WRONG_DEVICE elsewhere), a host column through the residency
 * cache (pinned), a placeholder for none. moved (may be NULL) adds the
 * bytes copied in. */
coproc_status coproc__qbind_column(coproc__fused *f, coproc__device *dev, const coproc_column *c,
                                   const char *name, coproc__qbound *b, uint64_t *moved);
/* Every column kernel k reads, in argument order; on failure none stays bound. */
coproc_status coproc__qbind(coproc__fused *f, coproc__device *dev, const coproc__qkernel *k,
                            coproc__qbound *b, uint64_t *moved);
void coproc__qunbind(coproc__device *dev, coproc__qbound *b, int n);
/* n, the columns b, then each probed table of k (its built tables as they
 * stand in f->prog now), then the payloads. */
void coproc__qset_common_args(coproc__args *a, coproc__fused *f, const coproc__qkernel *k,
                              const coproc__qbound *b, uint64_t rows);
coproc_status coproc__qkernel_of(coproc__fused *f, coproc__device *dev, const coproc__qkernel *k,
                                 const char *name, cl_kernel *out);
coproc_status coproc__qread(coproc__fused *f, coproc__device *dev, cl_mem m, void *dst,
                            size_t bytes);
coproc_status coproc__qcolumn_range(coproc__fused *f, const coproc_column *c, int64_t *lo,
                                    int64_t *hi);
coproc_status coproc__qmake_payloads(coproc__fused *f, coproc__device *dev,
                                     const coproc__qkernel *k, const coproc__qbound *b);
/* Pipeline pi's estimated seconds on dev (its builds included), times the
 * device's learned correction. */
double coproc__qestimate(coproc__fused *f, coproc__device *dev, int pi);
/* The part of it that builds pi's join tables. */
double coproc__qestimate_builds(coproc__fused *f, coproc__device *dev, int pi);
/* Pipeline pi's memory footprint on dev (data/admission.h): *fixed bytes,
 * plus *per_row a row of its scanned table (streamed: a morsel's rows).
 * -1 when its kernel cannot be generated. */
int coproc__qfootprint(coproc__fused *f, coproc__device *dev, int pi, uint64_t *fixed,
                       uint64_t *per_row);
/* Run pipeline pi (and what it reads first); device >= 0 forces the device. */
coproc_status coproc__qrun_pipe(coproc__fused *f, int pi, int device);

/* ---- the group-by sink (group_sink.c) */

/* The slots of pipeline pi's group-by: each key's least value, range and
 * stride (mixed radix), S in all. COPROC_UNSUPPORTED with the run's note
 * when they exceed what a fused group-by holds. */
typedef struct coproc__qslots {
    size_t S;
    int64_t kmin[8];
    uint64_t range[8], stride[8];
} coproc__qslots;
coproc_status coproc__qslots_of(coproc__fused *f, int pi, const coproc__qkernel *k,
                                coproc__qslots *out);

/* Counts and aggregates a slot: int64, or double for a float aggregate. */
typedef struct coproc__qpartial {
    size_t S;
    int naggs;
    int64_t *cnt;
    void *agg[COPROC__QP_MAX_PARTIALS];
} coproc__qpartial;
void coproc__qpartial_free(coproc__qpartial *p);
/* Add src into dst (same slots): counts and sums add, min and max keep theirs. */
void coproc__qpartial_merge(coproc__qpartial *dst, const coproc__qpartial *src,
                            const coproc__qkernel *k);
/* The group-by's result table from the (merged) partials. */
coproc_status coproc__qgroup_table(coproc__fused *f, int pi, const coproc__qkernel *k,
                                   const coproc__qslots *sl, const coproc__qpartial *p,
                                   coproc_table **out);

/* One device's group-by in progress: opened for launches of at most
 * max_rows rows, fed rows (once with all, or morsel by morsel: each launch
 * adds to the last), closed into partials. */
typedef struct coproc__qgroup {
    coproc__fused *f;
    coproc__device *dev;
    int pi;
    const coproc__qkernel *k;
    coproc__qslots sl;
    int atomic, local;         /* the GPU path's kernels; local: q_local */
    coproc__geometry g;
    cl_kernel km, kc;
    cl_mem pcnt, ocnt, out;
    cl_mem pa[COPROC__QP_MAX_PARTIALS], oa[COPROC__QP_MAX_PARTIALS];
    size_t asize[COPROC__QP_MAX_PARTIALS];
    int launches;
    cl_uint fresh_arg;         /* q_main's q_fresh argument index */
} coproc__qgroup;
coproc_status coproc__qgroup_open(coproc__qgroup *g, coproc__fused *f, coproc__device *dev,
                                  int pi, const coproc__qkernel *k, const coproc__qbound *b,
                                  const coproc__qslots *sl, uint64_t max_rows);
/* One launch over `rows` rows; cols[i] (k->nargs entries, NULL: unchanged)
 * replaces argument column i first. */
coproc_status coproc__qgroup_add(coproc__qgroup *g, uint64_t rows, const cl_mem *cols);
coproc_status coproc__qgroup_close(coproc__qgroup *g, coproc__qpartial *out);
void coproc__qgroup_release(coproc__qgroup *g);

#endif
