/* plan.h - the query layer's seam: tables, expressions and plan nodes as the
 * builders (plan.c, table.c) make them and the two engines read them - fused
 * pipelines (pipeline.c, codegen.c, fused.c) and operator at a time
 * (operators_mode.c). Every node knows its output schema once built. */
#ifndef COPROC_QUERY_PLAN_H
#define COPROC_QUERY_PLAN_H

#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

#include "coproc.h"
#include "coproc/query.h"

/* A table lives while its user holds it (coproc_table_create, until
 * coproc_table_free) and while any plan scans it: each scan node holds a
 * reference, dropped when its plan is freed. Its columns stay borrowed. */
struct coproc_table {
    coproc_runtime *rt;
    atomic_int refs;         /* the user's, plus one a scan node */
    int n, cap;
    char **names;
    const coproc_column **cols;
    coproc_column **owned;   /* result tables: the columns to free (else NULL entries) */
    size_t rows;
};

/* A value's kind while evaluating: 64-bit integer, double, or boolean. */
typedef enum coproc__qv {
    COPROC__QV_INT = 0,
    COPROC__QV_FLOAT,
    COPROC__QV_BOOL
} coproc__qv;

typedef enum coproc__qe_kind {
    COPROC__QE_COLUMN = 0,
    COPROC__QE_INT,
    COPROC__QE_FLOAT,
    COPROC__QE_ARITH,   /* a arith b */
    COPROC__QE_CMP,     /* a cmp b */
    COPROC__QE_BETWEEN, /* a between b and c */
    COPROC__QE_IN,      /* a in list */
    COPROC__QE_AND,
    COPROC__QE_OR,
    COPROC__QE_NOT,     /* not a */
    /* Only while a node is built: a filter's or projection's predicates on
     * dictionary-encoded strings are rewritten into predicates on codes
     * (strings.c in this folder), so no engine ever sees these. */
    COPROC__QE_STRING,  /* a string constant: name */
    COPROC__QE_PREFIX   /* a LIKE 'name%' */
} coproc__qe_kind;

struct coproc_expr {
    coproc__qe_kind kind;
    char *name;          /* COLUMN */
    int64_t i;           /* INT */
    double f;            /* FLOAT */
    coproc_arith arith;
    coproc_cmp cmp;
    coproc_expr *a, *b, *c;
    int n;               /* IN */
    coproc_expr **list;
    uint32_t size;           /* nodes in its tree, shared operands counted each time */
    const coproc_plan *plan; /* its plan: builders refuse another plan's expressions */
    coproc_expr *next_alloc; /* the plan's list of everything it owns */
};

/* A node's output columns. */
typedef struct coproc__schema {
    int n;
    char **names;
    coproc_type *types;
    struct coproc__dict **dicts; /* a string column's dictionary (borrowed from the
                                    scanned table's column), else NULL */
} coproc__schema;

typedef enum coproc__qn_kind {
    COPROC__QN_SCAN = 0,
    COPROC__QN_FILTER,
    COPROC__QN_PROJECT,
    COPROC__QN_JOIN,
    COPROC__QN_GROUP_BY,
    COPROC__QN_ORDER_BY
} coproc__qn_kind;

typedef struct coproc__agg {
    coproc_agg_fn fn;
    coproc_expr *arg;
    char *name;
} coproc__agg;

struct coproc_node {
    coproc__qn_kind kind;
    int id;
    char label[96];              /* "join#3 lo_orderdate=d_datekey", for messages */
    coproc_node *in;             /* every kind but SCAN; JOIN: the probe side */
    coproc_node *build;          /* JOIN */
    const coproc_table *table;   /* SCAN */
    coproc_expr *pred;           /* FILTER */
    int n;                       /* PROJECT outputs, GROUP_BY keys, ORDER_BY keys */
    char **names;                /* PROJECT: output names; GROUP_BY keys; ORDER_BY keys */
    coproc_expr **exprs;         /* PROJECT */
    int *desc;                   /* ORDER_BY */
    int *nulls_first;            /* ORDER_BY: null keys first (else last) */
    uint64_t limit;              /* ORDER_BY */
    coproc_join_kind join;       /* JOIN */
    char *probe_key, *build_key; /* JOIN: its (first) key columns */
    int njoin_keys;              /* JOIN: key columns a side (1: probe_key = build_key) */
    char **probe_keys, **build_keys; /* JOIN: all njoin_keys of them */
    /* JOIN: for a string key whose two sides have different dictionaries,
     * each probe code's build code (-1: the string is not there), made when
     * the node is built; else NULL. Fused, the map is copied to the device
     * beside the join's table (fused.c); one operator at a time, gathered. */
    int32_t **key_remap;
    int naggs;                   /* GROUP_BY */
    coproc__agg *aggs;
    coproc__schema schema;
    const coproc_plan *plan;     /* its plan: builders refuse another plan's nodes */
    coproc_node *next_alloc;
};

struct coproc_plan {
    coproc_runtime *rt;
    coproc_status status;        /* the first error building */
    char errmsg[512];
    int next_id;
    coproc_expr *exprs;          /* everything allocated, to free */
    coproc_node *nodes;
};

/* Index of `name` in s, or -1. */
int coproc__schema_find(const coproc__schema *s, const char *name);

/* The comparison with its operands swapped: a < b is b > a. */
coproc_cmp coproc__cmp_swap(coproc_cmp op);

/* Record the first error building p (later ones are consequences of it);
 * returns NULL. */
void *coproc__plan_fail(coproc_plan *p, coproc_status s, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* e with its predicates on string columns made predicates on their codes
 * (new expressions of p where anything changed): NULL after recording the
 * error in p (a string compared with a column that has no dictionary). */
coproc_expr *coproc__resolve_strings(coproc_plan *p, const char *label, coproc_expr *e,
                                     const coproc__schema *s);

/* SQL's BETWEEN as what it means, lo <= e AND e <= hi, in `both` (lo and hi
 * hold its two comparisons; all three live as long as e). In three-valued
 * logic each side is decided alone: 5 BETWEEN NULL AND 3 is FALSE, since
 * 5 <= 3 is. Both engines evaluate a BETWEEN over values that can be null so. */
static inline void coproc__between_split(const coproc_expr *e, coproc_expr *lo, coproc_expr *hi,
                                         coproc_expr *both)
{
    memset(lo, 0, sizeof *lo);
    memset(hi, 0, sizeof *hi);
    memset(both, 0, sizeof *both);
    lo->kind = hi->kind = COPROC__QE_CMP;
    lo->cmp = hi->cmp = COPROC_CMP_LE;
    lo->a = e->b, lo->b = e->a;
    hi->a = e->a, hi->b = e->c;
    both->kind = COPROC__QE_AND;
    both->a = lo, both->b = hi;
    both->size = lo->size = hi->size = e->size;
}

/* The kind of value e gives over input schema s; -1 (with the message in why)
 * when a column is missing or the operands do not fit. */
int coproc__expr_check(const coproc_expr *e, const coproc__schema *s, char *why, size_t whylen);

/* The column type an expression's values take when materialised: a column
 * reference keeps its column's type; integers INT64, floats FLOAT64, booleans INT32. */
coproc_type coproc__expr_out_type(const coproc_expr *e, const coproc__schema *s);

/* Whether t is an integer type. */
int coproc__type_is_int(coproc_type t);

/* Take a reference to t (a scan node of a plan); coproc_table_free drops one. */
void coproc__table_ref(const coproc_table *t);

/* Append a result column (owned) to a result table. */
coproc_status coproc__table_add_owned(coproc_table *t, const char *name, coproc_column *col);

#endif
