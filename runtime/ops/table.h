/* table.h - the operator table: one entry per public operator with all the
 * runtime needs to know about it. Each entry lives beside the operator's
 * code (runtime/ops/<op>.c); runtime/ops/table.c lists them. The runtime's
 * other layers (exec/, sched/, the public entry points) learn about
 * operators only through this table: adding an operator is ops/x.c +
 * cl/x.cl + one line in table.c.
 *
 * Every entry's functions take the operator as a coproc_op (coproc.h): its
 * kind, variant and arguments. Input columns may be host or device columns;
 * `v` in run() holds device columns standing in for the op's inputs, in the
 * order inputs() gives them. */
#ifndef COPROC_OPS_TABLE_H
#define COPROC_OPS_TABLE_H

#include <pthread.h>

#include "coproc.h"
#include "backend/opencl/device.h"

#define COPROC__OP_MAX_INPUTS 3

/* Output sizes seen so far, for estimating operators before they run: a
 * moving average per quantity (recent work matters most). One per runtime. */
typedef struct coproc__op_seen {
    pthread_mutex_t lock;
    double selectivity;    /* matches per row of selections and semi joins */
    double pairs_per_row;  /* pairs per row of the larger side of joins */
    double groups;         /* groups of group-bys */
} coproc__op_seen;

void coproc__op_seen_init(coproc__op_seen *s);
void coproc__op_seen_destroy(coproc__op_seen *s);
/* A consistent copy of the averages. */
coproc__op_seen coproc__op_seen_get(coproc__op_seen *s);
/* Fold a quantity into its average (NAN: nothing to learn). */
void coproc__op_seen_learn(coproc__op_seen *s, double selectivity, double pairs_per_row,
                           double groups);

typedef struct coproc__op_def {
    const char *name;              /* the public call, e.g. "gather" */
    coproc_op_kind kind;           /* the cost model it feeds (one per kind and device) */
    coproc_op_variant variant;

    /* The input columns, in a fixed order; returns how many (an optional input
     * that is absent is left out). */
    int (*inputs)(const coproc_op *op, const coproc_column *in[COPROC__OP_MAX_INPUTS]);
    /* 1: every input has the same length as the first. */
    int same_length;
    /* Checks beyond the shared ones (non-NULL inputs of rt, one place, equal
     * lengths), before the operator is queued; in[] as inputs() gives them. */
    coproc_status (*check)(coproc_runtime *rt, const coproc_op *op,
                           const coproc_column *const *in, int n);

    /* The model features x[0..1] (docs/profile.md per kind) and the bytes of
     * the result. r: after the run, the result (device or host columns); NULL
     * before it, when output sizes are guessed from `seen`. */
    void (*features)(const coproc_op *op, const coproc_result *r, const coproc__op_seen *seen,
                     double x[2], double *out_bytes);
    /* Device memory the in-memory run allocates beyond its inputs (outputs and
     * temporaries), in bytes, with out_bytes as features() estimated them. */
    double (*device_bytes)(const coproc__device *dev, const coproc_op *op, double out_bytes);
    /* Learn output sizes from a finished run (NULL: nothing to learn). */
    void (*learn)(const coproc_op *op, const coproc_result *r, coproc__op_seen *seen);

    /* The in-memory run on device columns v (all on dev): results as device
     * columns in *out. Inputs are never changed (sort works on copies). */
    coproc_status (*run)(coproc_runtime *rt, coproc__device *dev, const coproc_op *op,
                         const coproc_column *const *v, coproc_result *out);
    /* Host inputs larger than `budget` bytes of dev: streamed or partitioned,
     * results as host columns. NULL: the operator cannot run over the budget. */
    coproc_status (*stream)(coproc_runtime *rt, coproc__device *dev, const coproc_op *op,
                            size_t budget, coproc_result *out);
    /* Why it cannot stream (when stream is NULL), for the error message. */
    const char *no_stream;
    /* Its stream handles inputs with nulls (validities streamed beside the
     * rows); 0: such inputs over the budget are refused (UNSUPPORTED). */
    int stream_nulls;
} coproc__op_def;

/* The entry of op's kind and variant; NULL if there is none. */
const coproc__op_def *coproc__op_def_of(const coproc_op *op);

/* Check op before it is queued: the shared checks, then the entry's own. The
 * message names what is wrong. Sets *def on success. */
coproc_status coproc__op_check(coproc_runtime *rt, const coproc_op *op,
                               const coproc__op_def **def);

/* Bytes of a column (0 for NULL). */
double coproc__col_bytes(const coproc_column *c);

/* inputs() of the common shapes: a; a and b; a and b when b is set. */
int coproc__inputs_a(const coproc_op *op, const coproc_column *in[COPROC__OP_MAX_INPUTS]);
int coproc__inputs_ab(const coproc_op *op, const coproc_column *in[COPROC__OP_MAX_INPUTS]);
int coproc__inputs_a_opt_b(const coproc_op *op, const coproc_column *in[COPROC__OP_MAX_INPUTS]);

/* Rows of a column (0 for NULL), and rows * log2(rows) (sorts' feature). */
double coproc__col_rows(const coproc_column *c);
double coproc__n_log_n(double n);

/* Check helpers for check(): integer join/group keys; two key columns of one
 * type; a bitmap of ceil(rows / 32) uint32 words. */
coproc_status coproc__check_keys(coproc_runtime *rt, const char *what, const coproc_column *a,
                                 const coproc_column *b);
coproc_status coproc__check_bitmap(coproc_runtime *rt, const char *what,
                                   const coproc_column *bitmap, size_t rows);

/* The table entries, one per public operator (defined in runtime/ops/<op>.c). */
extern const coproc__op_def coproc__op_reduce, coproc__op_reduce_where, coproc__op_select,
    coproc__op_select_bitmap, coproc__op_map, coproc__op_cast, coproc__op_gather,
    coproc__op_scatter, coproc__op_compact, coproc__op_scan, coproc__op_group_by, coproc__op_sort,
    coproc__op_argsort, coproc__op_hash_join, coproc__op_merge_join, coproc__op_semi_join,
    coproc__op_hash_join_count, coproc__op_select_count;

#endif
