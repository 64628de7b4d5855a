/* coproc/query.h - whole queries: tables of named columns, plans built in C,
 * run as fused OpenCL pipelines (one generated kernel per pipeline) or one
 * operator at a time. Opt-in header; needs coproc.h.
 *
 * A plan is a tree of nodes: scan, filter, project, join (inner or semi, the
 * build side a sub-plan), group-by aggregate and order-by with limit. The run
 * cuts it at its breakers (a join's build side, a group-by, an order-by) into
 * pipelines, places each pipeline on a device from its estimated cost, and
 * returns the result as a table of host columns.
 *
 * Building never needs error checks between calls: a builder that fails (a
 * column that does not exist, mismatched types, a NULL argument, a node or
 * expression of another plan - INVALID_ARGUMENT, naming it) returns NULL and
 * records the first error in the plan; builders given a NULL input return
 * NULL too; coproc_query_run then returns that first error with the node named
 * (also in coproc_errmsg). A plan and its tables are used by one thread at a
 * time; different plans may run at once from different threads.
 *
 * Values in expressions: integer columns (int32, int64, uint32, uint64 - the
 * last read as int64 bits) compute in 64-bit signed integers (wrapping; x/0 is
 * 0), float columns and any mix with a float in double precision (in float on a
 * device without fp64). Comparisons, BETWEEN, IN, AND/OR/NOT give a boolean.
 *
 * Nulls: columns may carry a validity bitmap (coproc.h, "nulls"), given before
 * or after coproc_table_add; a run reads them with SQL's semantics:
 * - arithmetic with a null operand gives null; a comparison (the six, IN,
 *   string predicates) with a null operand is unknown; BETWEEN is its two
 *   comparisons, lo <= e AND e <= hi, each decided alone (5 BETWEEN NULL AND 3
 *   is FALSE, since 5 <= 3 is; 5 BETWEEN NULL AND 9 unknown); AND, OR and NOT are
 *   three-valued (false AND unknown is false, true OR unknown is true, NOT
 *   unknown is unknown); a filter keeps the rows whose predicate is true;
 * - a projected expression is null where it is null or unknown (a boolean is
 *   INT32 0/1 with a validity); columns passed through keep their nulls;
 * - joins never match a null key (either side);
 * - group-by: null keys form one group (per combination of keys); SUM, MIN,
 *   MAX and AVG skip null arguments and are null where a group has no valid
 *   one (also without keys, and over no rows when the argument's column has a
 *   validity); COUNT(arg) counts the valid arguments, COUNT with arg NULL rows;
 * - order-by puts null keys last, or first with coproc_order_key.nulls_first,
 *   in either direction;
 * - result columns that can hold nulls carry a validity (host bitmaps).
 * Both engines do so. Fused, the generated kernels read the validity of the
 * columns that have one as the run starts (a plan over columns without one
 * gets the kernels it always had); a group-by streamed in morsels past a
 * device's budget over a table with nulls runs one operator at a time (the
 * result's note says so), and opts.hybrid runs such a pipeline on one device.
 */
#ifndef COPROC_QUERY_H
#define COPROC_QUERY_H

#include "coproc.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------- tables */

/* Named columns of equal length. Columns added are borrowed - host columns,
 * device columns or Arrow imports (coproc/arrow.h): the caller keeps them alive
 * (not freed, not changed) until every run over the table has ended; a result
 * table owns its columns.
 *
 * Lifetime: the table itself is shared by its caller and every plan that
 * scans it. coproc_table_free drops the caller's hold; each plan holds it
 * from coproc_plan_scan to coproc_plan_free. It is freed (with the columns it
 * owns) when the last of them lets go, so a table may be freed as soon as it
 * is scanned; only its columns, borrowed, must still live. A result table's
 * columns are the runtime's: let it go, and free the plans that scan it,
 * before coproc_close. Plans, and tables of borrowed columns, hold nothing of
 * the runtime's and may be freed after it too (a plan whose submitted runs
 * coproc_close waited for). */
typedef struct coproc_table coproc_table;

COPROC_API coproc_status coproc_table_create(coproc_runtime *rt, coproc_table **out);
/* NULL_POINTER: t or col is NULL. INVALID_ARGUMENT: a NULL, empty or duplicate
 * name, a column of another runtime, or a length that differs from the
 * columns already added. */
COPROC_API coproc_status coproc_table_add(coproc_table *t, const char *name,
                                          const coproc_column *col);
COPROC_API int coproc_table_column_count(const coproc_table *t);
COPROC_API size_t coproc_table_rows(const coproc_table *t);
COPROC_API const char *coproc_table_column_name(const coproc_table *t, int i); /* NULL if out of range */
COPROC_API const coproc_column *coproc_table_column_at(const coproc_table *t, int i);
COPROC_API const coproc_column *coproc_table_column(const coproc_table *t, const char *name);
/* Lets the table go: it is freed (with the columns it owns) now, or when the
 * last plan scanning it is freed. NULL is a no-op. */
COPROC_API void coproc_table_free(coproc_table *t);

/* ---------------------------------------------------------------- plans */

typedef struct coproc_plan coproc_plan;
/* Owned by the plan whose builder made them, and used in that plan only: a
 * builder or run given another plan's node or expression refuses it
 * (INVALID_ARGUMENT). */
typedef struct coproc_expr coproc_expr;
typedef struct coproc_node coproc_node;

COPROC_API coproc_status coproc_plan_create(coproc_runtime *rt, coproc_plan **out);
/* Frees the plan, its nodes and expressions, and lets go of the tables it
 * scans (freed here if their callers freed them already). */
COPROC_API void coproc_plan_free(coproc_plan *p);
/* The first error building recorded (COPROC_OK if none), and its message. */
COPROC_API coproc_status coproc_plan_status(const coproc_plan *p);
COPROC_API const char *coproc_plan_errmsg(const coproc_plan *p);

/* Expressions. A column is named as it appears in the node's input. A tree of
 * more than 4096 nodes (an operand given twice, as in x * x, counts twice) is
 * refused: the builder records INVALID_ARGUMENT. */
COPROC_API coproc_expr *coproc_expr_column(coproc_plan *p, const char *name);
COPROC_API coproc_expr *coproc_expr_int(coproc_plan *p, int64_t v);
COPROC_API coproc_expr *coproc_expr_float(coproc_plan *p, double v);
COPROC_API coproc_expr *coproc_expr_arith(coproc_plan *p, coproc_arith op, coproc_expr *a,
                                          coproc_expr *b);
/* a op b for op EQ, NE, LT, LE, GT, GE (COPROC_CMP_RANGE: use coproc_expr_between). */
COPROC_API coproc_expr *coproc_expr_compare(coproc_plan *p, coproc_cmp op, coproc_expr *a,
                                            coproc_expr *b);
/* lo <= e AND e <= hi (SQL's BETWEEN, both ends included; with nulls, the
 * AND of the two comparisons in three-valued logic, as SQL defines it). */
COPROC_API coproc_expr *coproc_expr_between(coproc_plan *p, coproc_expr *e, coproc_expr *lo,
                                            coproc_expr *hi);
/* e equals one of the n constants (coproc_expr_int/float), n >= 1. */
COPROC_API coproc_expr *coproc_expr_in(coproc_plan *p, coproc_expr *e, int n,
                                       coproc_expr *const *list);
/* Strings (dictionary-encoded columns, coproc.h "strings"): a string constant
 * compares (coproc_expr_compare, coproc_expr_between, coproc_expr_in) with a
 * string column only, in byte order (strcmp's); coproc_expr_prefix is SQL's
 * e LIKE 'prefix%'. Each is decided on the column's dictionary when the
 * filter or projection is built and runs as a test of the codes; a string
 * column compares with another of the same strings only. A join of string
 * keys with different dictionaries maps the probe's codes onto the build's
 * (a map made when the join is built, read by the fused probe). Results keep a string column's
 * dictionary (group-by keys, columns passed through). */
COPROC_API coproc_expr *coproc_expr_string(coproc_plan *p, const char *s);
COPROC_API coproc_expr *coproc_expr_prefix(coproc_plan *p, coproc_expr *e, const char *prefix);
COPROC_API coproc_expr *coproc_expr_and(coproc_plan *p, coproc_expr *a, coproc_expr *b);
COPROC_API coproc_expr *coproc_expr_or(coproc_plan *p, coproc_expr *a, coproc_expr *b);
COPROC_API coproc_expr *coproc_expr_not(coproc_plan *p, coproc_expr *a);

/* Every column of t. `name` labels the node in messages and reports. */
COPROC_API coproc_node *coproc_plan_scan(coproc_plan *p, const coproc_table *t, const char *name);
/* The rows of in for which pred (a boolean expression) holds. */
COPROC_API coproc_node *coproc_plan_filter(coproc_plan *p, coproc_node *in, coproc_expr *pred);
/* Exactly n columns: names[i] = exprs[i]. A column reference keeps its type;
 * arithmetic gives int64 or float64, a boolean int32 (0/1). */
COPROC_API coproc_node *coproc_plan_project(coproc_plan *p, coproc_node *in, int n,
                                            const char *const *names,
                                            coproc_expr *const *exprs);

typedef enum coproc_join_kind {
    COPROC_JOIN_INNER = 0, /* probe's columns then build's, one row per matching pair */
    COPROC_JOIN_SEMI       /* probe's rows whose key occurs in build; probe's columns */
} coproc_join_kind;

/* Equi-join on probe_key = build_key (integer columns). The build side (a
 * sub-plan) is hashed; the probe side streams past it. Column names of the two
 * sides must differ for an inner join. Duplicate build keys give every pair. */
COPROC_API coproc_node *coproc_plan_join(coproc_plan *p, coproc_join_kind kind,
                                         coproc_node *probe, const char *probe_key,
                                         coproc_node *build, const char *build_key);

/* Equi-join on several key columns (1 to 8): probe_keys[k] = build_keys[k] for
 * every k (integer columns). Fused, the key columns are packed into one 64-bit
 * key by the build side's value ranges (a probe row outside them matches
 * nothing; a null in any key column matches nothing). Where the ranges need
 * more than 62 bits packed, or the build keys are columns computed by a
 * projection, the plan runs one operator at a time (the result's note says
 * so), through coproc_hash_join_keys / coproc_semi_join_keys (coproc.h). */
COPROC_API coproc_node *coproc_plan_join_keys(coproc_plan *p, coproc_join_kind kind,
                                              coproc_node *probe, int nkeys,
                                              const char *const *probe_keys, coproc_node *build,
                                              const char *const *build_keys);

typedef enum coproc_agg_fn {
    COPROC_AGG_SUM = 0, /* integers into int64 (wrapping), floats into float64 */
    COPROC_AGG_COUNT,   /* int64; arg NULL counts rows */
    COPROC_AGG_MIN,     /* the argument's type */
    COPROC_AGG_MAX,
    COPROC_AGG_AVG      /* float64 */
} coproc_agg_fn;

typedef struct coproc_aggregate {
    coproc_agg_fn fn;
    coproc_expr *arg;   /* NULL only for COUNT */
    const char *name;   /* the output column's name */
} coproc_aggregate;

/* One row per distinct combination of the nkeys integer key columns (nkeys 0:
 * one row over all input rows, even none: SUM, COUNT, MIN, MAX 0 and AVG NaN
 * over no rows), holding the keys then the
 * aggregates. Rows come in no particular order: add an order-by. */
COPROC_API coproc_node *coproc_plan_group_by(coproc_plan *p, coproc_node *in, int nkeys,
                                             const char *const *keys, int naggs,
                                             const coproc_aggregate *aggs);

typedef struct coproc_order_key {
    const char *column;
    int descending;
    int nulls_first; /* nonzero: rows whose key is null come first (NULLS FIRST);
                        0: last (NULLS LAST), either direction */
} coproc_order_key;

/* The rows of in ordered by the keys (stable: ties keep the input order;
 * floats: NaN after every number), the first `limit` of them (0: all). */
COPROC_API coproc_node *coproc_plan_order_by(coproc_plan *p, coproc_node *in, int nkeys,
                                             const coproc_order_key *keys, uint64_t limit);

/* ---------------------------------------------------------------- running */

typedef enum coproc_query_mode {
    COPROC_QUERY_FUSED = 0,  /* one generated kernel per pipeline. One fallback rule: a plan
                                whose kernel the code generator refuses (an expression nested
                                more than 48 deep, a shape it cannot fuse) or the driver's
                                compiler fails to build runs one operator at a time, the
                                reason in the result's note - never an error for a plan the
                                other engine runs */
    COPROC_QUERY_OPERATORS   /* every node through the operators, intermediates materialised */
} coproc_query_mode;

typedef struct coproc_query_options {
    size_t struct_size;      /* set by coproc_query_options_init */
    coproc_query_mode mode;
    int device;              /* -1 (default): each pipeline where it costs least; else there */
    /* 1: a group-by pipeline over a table of host columns runs on every
     * device that can run it at once, each pulling morsels of the rows
     * (hybrid); 0 (default): each pipeline on one device. */
    int hybrid;
    /* The shadow check: the fraction of runs (0 to 1) run again and compared -
     * a fused run one operator at a time, a run one operator at a time fused
     * (or, with COPROC_VERIFY=sample:P:device and several devices, the same
     * engine on another device). Rows compare as multisets, floats within a
     * relative 1e-9 (1e-4 for float32), an order-by's keys in order too. The
     * first run's result is returned either way; result.verified says what
     * the check found, and a mismatch is logged as an error and counted in
     * coproc_device_stats.verify_mismatches of the devices involved. Runs
     * are sampled evenly: run n of the runtime when floor(nP) changes (the
     * first run, then one in 1/P). Negative (the default): COPROC_VERIFY's
     * rate, "sample:P" or "sample:P:device", read at coproc_open (unset:
     * 0, off; anything else is ignored with a warning). */
    double verify;
} coproc_query_options;

COPROC_API void coproc_query_options_init(coproc_query_options *o);

/* Where and how one pipeline ran. */
typedef struct coproc_pipeline_info {
    char what[160];          /* e.g. "scan lineorder > filter > join date > group-by" */
    int device;              /* where it ran (-1: on the host, e.g. a small order-by) */
    int fused;               /* 1: one generated kernel; 0: operator at a time */
    double start_s, end_s;   /* from the start of the run */
    double estimate_s;       /* predicted seconds on that device (< 0 if none) */
    uint64_t rows_in;        /* rows scanned */
    uint64_t bytes_in;       /* bytes of columns read by its kernels */
    uint64_t bytes_moved;    /* bytes copied between host and device */
} coproc_pipeline_info;

typedef struct coproc_query_result {
    coproc_table *table;     /* host columns, owned */
    int pipelines;
    coproc_pipeline_info *pipeline; /* in execution order, owned */
    double seconds;          /* the whole run */
    uint64_t kernels_built;  /* programs compiled (not from a cache) during the run */
    char note[256];          /* why a fused run fell back to operators (the code
                                generator's reason, or "the generated kernel did not
                                build: " and the compiler's message), else "" */
    int verified;            /* the shadow check (options.verify): 0 not checked, 1 its
                                shadow run agreed, -1 it differed (logged, counted) */
} coproc_query_result;

/* Run the plan rooted at root. On error *out holds nothing and everything the
 * run made is released. */
COPROC_API coproc_status coproc_query_run(coproc_plan *p, coproc_node *root,
                                          const coproc_query_options *opts,
                                          coproc_query_result *out);

typedef struct coproc_query_task coproc_query_task;
/* Run it on a thread of its own; the plan must not change or be freed, nor its
 * tables' columns, until the run ends: coproc_query_wait, or coproc_drain.
 * A plan with an error, or a root that is NULL or another plan's, is refused
 * here (*out NULL); other errors come from coproc_query_wait. A task never
 * waited on is waited for by coproc_close, which frees it and its result
 * (coproc.h). */
COPROC_API coproc_status coproc_query_submit(coproc_plan *p, coproc_node *root,
                                             const coproc_query_options *opts,
                                             coproc_query_task **out);
/* Wait, move the result into *out (may be NULL) and free the task. */
COPROC_API coproc_status coproc_query_wait(coproc_query_task *t, coproc_query_result *out);

COPROC_API void coproc_query_result_free(coproc_query_result *r);

#ifdef __cplusplus
}
#endif
#endif /* COPROC_QUERY_H */
