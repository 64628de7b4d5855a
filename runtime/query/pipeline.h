/* pipeline.h - a plan cut at its breakers into pipelines (lower.c), each one
 * generated kernel (codegen.c), run by the fused engine (fused.c).
 *
 * A pipeline reads one table (a base table, or the host table an earlier
 * pipeline produced), applies filters, projections and hash-join probes row
 * by row, and ends in a sink: a group-by's aggregates, a materialised table,
 * or a join's hash table (a build pipeline, run on the device of the pipeline
 * that probes it). */
#ifndef COPROC_QUERY_PIPELINE_H
#define COPROC_QUERY_PIPELINE_H

#include <CL/cl.h>

#include "data/column.h"
#include "query/plan.h"

#define COPROC__QP_MAX_STEPS 48
/* Key columns of one join (plan.c's limit). */
#define COPROC__QP_MAX_JOIN_KEYS 8

typedef enum coproc__qstep_kind {
    COPROC__QS_FILTER = 0,  /* node->pred */
    COPROC__QS_PROJECT,     /* node->names = node->exprs */
    COPROC__QS_PROBE        /* node is a join; build = its build pipeline */
} coproc__qstep_kind;

typedef struct coproc__qstep {
    coproc__qstep_kind kind;
    const coproc_node *node;
    int build;
} coproc__qstep;

typedef enum coproc__qsink {
    COPROC__QK_NONE = 0,     /* still open */
    COPROC__QK_GROUP,        /* sink_node: the group-by */
    COPROC__QK_MATERIALIZE,  /* the columns of `top` */
    COPROC__QK_BUILD         /* sink_node: the join it builds for */
} coproc__qsink;

/* A built join table on a device: ht[] holds build rows + 1 (0: empty), at
 * key - kmin (dense) or at a hash of the key, probing linearly (mask). */
typedef struct coproc__qbuilt {
    cl_mem ht;
    cl_mem bits;             /* dense: bit key - kmin set when the key is in ht */
    cl_mem *pay;             /* dense: source column c at slot key - kmin (made when a probe
                              * first reads c; npay entries, NULL until then) */
    int npay;
    int dense;
    int64_t kmin, kmax;
    uint32_t mask;
    /* A key of several columns (nkeys > 1) is packed into one long, the sum
     * of (column m - klo[m]) * kst[m]; kmin/kmax are then the packed key's.
     * Every build row lies within [klo[m], khi[m]], so the packing is one
     * to one there; a probe row outside them matches nothing. */
    int nkeys;
    int64_t klo[COPROC__QP_MAX_JOIN_KEYS], khi[COPROC__QP_MAX_JOIN_KEYS], kst[COPROC__QP_MAX_JOIN_KEYS];
    /* A string key whose two sides have different dictionaries: the join's
     * key_remap (probe code -> build code, -1: absent) on the device, nremap
     * entries; NULL for the other keys. */
    cl_mem remap[COPROC__QP_MAX_JOIN_KEYS];
    int64_t nremap[COPROC__QP_MAX_JOIN_KEYS];
    uint64_t rows, src_rows; /* rows inserted, of the source's rows (the share a probe passes) */
    double bytes;            /* what a probe reads from: the table (and keys when hashed) */
} coproc__qbuilt;

typedef struct coproc__qpipe {
    const coproc_table *src;   /* NULL until src_pipe has run */
    int src_pipe;              /* -1: a base table; else the pipeline whose output is read */
    char src_name[96];
    const coproc_node *top;    /* the last node in the pipeline: its schema is the row's */
    int nsteps;
    coproc__qstep steps[COPROC__QP_MAX_STEPS];
    coproc__qsink sink;
    const coproc_node *sink_node;
    const coproc_node *order;  /* an order-by applied to the output table, or NULL */
    int consumer;              /* BUILD: the pipeline that probes it */
    /* running */
    coproc_table *out;         /* GROUP / MATERIALIZE: the output (host columns), owned */
    coproc__qbuilt built;      /* BUILD */
    /* BUILD: columns of src whose range over the rows that pass the build
     * side the build kernel measures (the probing group-by's keys), so that
     * a group-by over a filtered dimension's attribute has as few slots as
     * the rows that can reach it. range_ok: measured (32-bit columns). */
    int nranges;
    int range_col[8];
    int range_ok[8];
    int64_t range_lo[8], range_hi[8];
    int device;
} coproc__qpipe;

typedef struct coproc__qprog {
    coproc__qpipe *p;
    int n, cap;
    int result;                /* the pipeline whose `out` is the plan's result */
} coproc__qprog;

/* Cut the plan rooted at root into pipelines. INVALID_ARGUMENT / UNSUPPORTED
 * name the node; HOST_OUT_OF_MEMORY. */
coproc_status coproc__lower(coproc_runtime *rt, const coproc_node *root, coproc__qprog *prog);
void coproc__qprog_free(coproc__qprog *prog);
/* Release a built table's buffers and clear it. */
void coproc__qbuilt_free(coproc__qbuilt *t);

/* A growable string (codegen's output). */
typedef struct coproc__strbuf {
    char *s;
    size_t len, cap;
    int failed;                /* out of memory: s is incomplete */
} coproc__strbuf;
void coproc__sb_printf(coproc__strbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void coproc__sb_free(coproc__strbuf *b);

/* A column a generated kernel reads, in argument order: the column itself,
 * or (validity 1) its validity bitmap, read where it can hold nulls. */
typedef struct coproc__qarg {
    const coproc_table *table;
    int col;
    int validity;
} coproc__qarg;

/* The column argument a binds: the table's column or its validity. */
static inline const coproc_column *coproc__qarg_column(const coproc__qarg *a)
{
    const coproc_column *c = a->table->cols[a->col];
    return a->validity ? c->validity : c;
}

#define COPROC__QP_MAX_ARGS 96
/* A group-by's partial aggregates: its own (16 at most) and the counts of
 * valid values of those over values that can be null. */
#define COPROC__QP_MAX_PARTIALS 32

/* What codegen made for one pipeline. */
typedef struct coproc__qkernel {
    coproc__strbuf src;        /* the program text (without the prelude) */
    int nargs;
    coproc__qarg args[COPROC__QP_MAX_ARGS]; /* columns, in kernel argument order */
    int nbuilds;
    int builds[COPROC__QP_MAX_STEPS];       /* pipelines probed, in argument order */
    /* build sides' columns laid out by key (read where the table is dense):
     * probe `build` (index in builds) and the column's argument number */
    int npays;
    struct { int build, arg; } pays[COPROC__QP_MAX_ARGS];
    /* GROUP: keys' columns (resolved to a source column) for their ranges */
    int nkeys;
    coproc__qarg keys[8];
    int key_nullable[8]; /* 1: key m can be null (its null rows group in slot gnullM) */
    int naggs;
    int agg_float[COPROC__QP_MAX_PARTIALS]; /* 1: the partial is `real`, else long */
    int agg_fn[COPROC__QP_MAX_PARTIALS];
    /* An aggregate over values that can be null: 1 + the index of the
     * hidden aggregate (a SUM, after the group-by's own) counting its valid
     * values; -1 over columns with nulls that a filter proved valid (null
     * only in a group without rows); 0 for the others. */
    int agg_valid[COPROC__QP_MAX_PARTIALS];
    /* GROUP on the GPU path: q_local / q_global exist (keys, and only
     * counts and integer sums, which 32-bit atomics add exactly) */
    int atomic_ok;
    /* MATERIALIZE: 1 for an output column that can be null: q_write also
     * writes its validity, a byte a row (ovM, after the columns) */
    unsigned char out_valid[256];
    /* BUILD: the key's source columns */
    int nkey_cols;
    int key_cols[COPROC__QP_MAX_JOIN_KEYS];
    char why[256];             /* when it cannot be fused */
} coproc__qkernel;

/* Reorder pipeline pi's runs of independent probes, whose tables are built,
 * by ascending cost / (1 - pass) (probe_order.c). */
void coproc__order_probes(coproc__qprog *prog, int pi);

/* Generate the kernels of pipeline `pi` (its sink's and, for GROUP, the
 * combine kernel) for a device with (fp64) or without double. Returns 0, or
 * -1 with k->why set when the pipeline cannot be fused (e.g. a group key that
 * is computed, not a column). */
int coproc__codegen(const coproc__qprog *prog, int pi, int fp64, coproc__qkernel *k);
void coproc__qkernel_free(coproc__qkernel *k);

#endif
