/* plan.c - building plans: expressions, nodes and each node's output schema,
 * checked as they are built so that an error names the node that caused it. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "data/column.h"
#include "query/plan.h"
#include "data/dictionary.h"

#define MAX_KEYS 8
/* The most nodes an expression's tree may have. An operand may be given twice
 * (x * x), so a plan of a few calls can name a tree of 2^calls nodes, which
 * checking and code generation walk in full: such a plan is refused. */
#define MAX_EXPR_NODES 4096

coproc_status coproc_plan_create(coproc_runtime *rt, coproc_plan **out)
{
    if (!out)
        return coproc__fail(rt, COPROC_NULL_POINTER, "coproc_plan_create: out is NULL");
    *out = NULL;
    if (!rt)
        return COPROC_NULL_POINTER;
    coproc_plan *p = calloc(1, sizeof *p);
    if (!p)
        return coproc__fail(rt, COPROC_HOST_OUT_OF_MEMORY, "coproc_plan_create: out of host memory");
    p->rt = rt;
    *out = p;
    return COPROC_OK;
}

static void schema_free(coproc__schema *s)
{
    for (int i = 0; i < s->n; i++)
        free(s->names[i]);
    free(s->names);
    free(s->types);
    free(s->dicts);
}

static void free_names(char **names, int n)
{
    if (!names)
        return;
    for (int i = 0; i < n; i++)
        free(names[i]);
    free(names);
}

void coproc_plan_free(coproc_plan *p)
{
    if (!p)
        return;
    for (coproc_expr *e = p->exprs, *next; e; e = next) {
        next = e->next_alloc;
        free(e->name);
        free(e->list);
        free(e);
    }
    for (coproc_node *n = p->nodes, *next; n; n = next) {
        next = n->next_alloc;
        if (n->table) /* the scan's reference (coproc_plan_scan) */
            coproc_table_free((coproc_table *)n->table);
        schema_free(&n->schema);
        free_names(n->names, n->n);
        free(n->exprs);
        free(n->desc);
        free(n->nulls_first);
        free(n->probe_key);
        free(n->build_key);
        free_names(n->probe_keys, n->njoin_keys);
        free_names(n->build_keys, n->njoin_keys);
        for (int k = 0; n->key_remap && k < n->njoin_keys; k++)
            free(n->key_remap[k]);
        free(n->key_remap);
        for (int i = 0; i < n->naggs; i++)
            free(n->aggs[i].name);
        free(n->aggs);
        free(n);
    }
    free(p);
}

coproc_status coproc_plan_status(const coproc_plan *p)
{
    return p ? p->status : COPROC_NULL_POINTER;
}

const char *coproc_plan_errmsg(const coproc_plan *p)
{
    return p ? p->errmsg : "no plan";
}

void *coproc__plan_fail(coproc_plan *p, coproc_status s, const char *fmt, ...)
{
    if (p->status == COPROC_OK) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(p->errmsg, sizeof p->errmsg, fmt, ap);
        va_end(ap);
        p->status = s;
    }
    return NULL;
}

/* ---------------------------------------------------------------- schemas and types */

int coproc__type_is_int(coproc_type t)
{
    return t == COPROC_INT32 || t == COPROC_INT64 || t == COPROC_UINT32 || t == COPROC_UINT64;
}

coproc_cmp coproc__cmp_swap(coproc_cmp op)
{
    switch (op) {
    case COPROC_CMP_LT: return COPROC_CMP_GT;
    case COPROC_CMP_LE: return COPROC_CMP_GE;
    case COPROC_CMP_GT: return COPROC_CMP_LT;
    case COPROC_CMP_GE: return COPROC_CMP_LE;
    default: return op;
    }
}

int coproc__schema_find(const coproc__schema *s, const char *name)
{
    for (int i = 0; i < s->n; i++)
        if (strcmp(s->names[i], name) == 0)
            return i;
    return -1;
}

/* Add a column, a string column when dict is not NULL. */
static int schema_add_dict(coproc__schema *s, const char *name, coproc_type t,
                           struct coproc__dict *dict)
{
    char **names = realloc(s->names, (s->n + 1) * sizeof *names);
    if (!names)
        return -1;
    s->names = names;
    coproc_type *types = realloc(s->types, (s->n + 1) * sizeof *types);
    if (!types)
        return -1;
    s->types = types;
    struct coproc__dict **dicts = realloc(s->dicts, (s->n + 1) * sizeof *dicts);
    if (!dicts)
        return -1;
    s->dicts = dicts;
    if (!(s->names[s->n] = strdup(name)))
        return -1;
    s->dicts[s->n] = dict;
    s->types[s->n++] = t;
    return 0;
}

static int schema_add(coproc__schema *s, const char *name, coproc_type t)
{
    return schema_add_dict(s, name, t, NULL);
}

static int numeric(int qv) { return qv == COPROC__QV_INT || qv == COPROC__QV_FLOAT; }

int coproc__expr_check(const coproc_expr *e, const coproc__schema *s, char *why, size_t whylen)
{
    int a, b, c;
    switch (e->kind) {
    case COPROC__QE_COLUMN: {
        int i = coproc__schema_find(s, e->name);
        if (i < 0) {
            snprintf(why, whylen, "no column \"%s\" in the input", e->name);
            return -1;
        }
        return coproc__type_is_int(s->types[i]) ? COPROC__QV_INT : COPROC__QV_FLOAT;
    }
    case COPROC__QE_INT:
        return COPROC__QV_INT;
    case COPROC__QE_FLOAT:
        return COPROC__QV_FLOAT;
    case COPROC__QE_ARITH:
        if ((a = coproc__expr_check(e->a, s, why, whylen)) < 0 ||
            (b = coproc__expr_check(e->b, s, why, whylen)) < 0)
            return -1;
        if (!numeric(a) || !numeric(b)) {
            snprintf(why, whylen, "arithmetic on a boolean");
            return -1;
        }
        return a == COPROC__QV_FLOAT || b == COPROC__QV_FLOAT ? COPROC__QV_FLOAT : COPROC__QV_INT;
    case COPROC__QE_CMP:
    case COPROC__QE_BETWEEN:
        if ((a = coproc__expr_check(e->a, s, why, whylen)) < 0 ||
            (b = coproc__expr_check(e->b, s, why, whylen)) < 0)
            return -1;
        c = COPROC__QV_INT;
        if (e->kind == COPROC__QE_BETWEEN && (c = coproc__expr_check(e->c, s, why, whylen)) < 0)
            return -1;
        if (!numeric(a) || !numeric(b) || !numeric(c)) {
            snprintf(why, whylen, "comparison of a boolean");
            return -1;
        }
        return COPROC__QV_BOOL;
    case COPROC__QE_IN:
        if ((a = coproc__expr_check(e->a, s, why, whylen)) < 0)
            return -1;
        for (int i = 0; i < e->n; i++)
            if (e->list[i]->kind == COPROC__QE_STRING) { /* left by coproc__resolve_strings */
                snprintf(why, whylen, "IN with a string over something other than a string "
                                      "column (a column with a dictionary)");
                return -1;
            }
        if (!numeric(a)) {
            snprintf(why, whylen, "IN over a boolean");
            return -1;
        }
        return COPROC__QV_BOOL;
    case COPROC__QE_AND:
    case COPROC__QE_OR:
        if ((a = coproc__expr_check(e->a, s, why, whylen)) < 0 ||
            (b = coproc__expr_check(e->b, s, why, whylen)) < 0)
            return -1;
        if (a != COPROC__QV_BOOL || b != COPROC__QV_BOOL) {
            snprintf(why, whylen, "AND/OR of a value that is not a boolean");
            return -1;
        }
        return COPROC__QV_BOOL;
    case COPROC__QE_NOT:
        if ((a = coproc__expr_check(e->a, s, why, whylen)) < 0)
            return -1;
        if (a != COPROC__QV_BOOL) {
            snprintf(why, whylen, "NOT of a value that is not a boolean");
            return -1;
        }
        return COPROC__QV_BOOL;
    case COPROC__QE_STRING:
    case COPROC__QE_PREFIX:
        snprintf(why, whylen, "a string compared with something other than a string column "
                              "(a column with a dictionary)");
        return -1;
    }
    snprintf(why, whylen, "unknown expression");
    return -1;
}

coproc_type coproc__expr_out_type(const coproc_expr *e, const coproc__schema *s)
{
    if (e->kind == COPROC__QE_COLUMN) {
        int i = coproc__schema_find(s, e->name);
        return i < 0 ? COPROC__TYPE_COUNT : s->types[i];
    }
    char why[8];
    switch (coproc__expr_check(e, s, why, sizeof why)) {
    case COPROC__QV_INT:
        return COPROC_INT64;
    case COPROC__QV_FLOAT:
        return COPROC_FLOAT64;
    case COPROC__QV_BOOL:
        return COPROC_INT32;
    }
    return COPROC__TYPE_COUNT;
}

/* ---------------------------------------------------------------- expressions */

static coproc_expr *expr_new(coproc_plan *p, coproc__qe_kind kind)
{
    coproc_expr *e = calloc(1, sizeof *e);
    if (!e)
        return coproc__plan_fail(p, COPROC_HOST_OUT_OF_MEMORY, "building an expression: out of host memory");
    e->kind = kind;
    e->size = 1;
    e->plan = p;
    e->next_alloc = p->exprs;
    p->exprs = e;
    return e;
}

coproc_expr *coproc_expr_column(coproc_plan *p, const char *name)
{
    if (!p)
        return NULL;
    if (!name)
        return coproc__plan_fail(p, COPROC_NULL_POINTER, "coproc_expr_column: name is NULL");
    coproc_expr *e = expr_new(p, COPROC__QE_COLUMN);
    if (e && !(e->name = strdup(name)))
        return coproc__plan_fail(p, COPROC_HOST_OUT_OF_MEMORY, "building an expression: out of host memory");
    return e;
}

coproc_expr *coproc_expr_int(coproc_plan *p, int64_t v)
{
    coproc_expr *e = p ? expr_new(p, COPROC__QE_INT) : NULL;
    if (e)
        e->i = v;
    return e;
}

coproc_expr *coproc_expr_string(coproc_plan *p, const char *v)
{
    if (!p)
        return NULL;
    if (!v)
        return coproc__plan_fail(p, COPROC_NULL_POINTER, "coproc_expr_string: the string is NULL");
    coproc_expr *e = expr_new(p, COPROC__QE_STRING);
    if (e && !(e->name = strdup(v)))
        return coproc__plan_fail(p, COPROC_HOST_OUT_OF_MEMORY, "building an expression: out of host memory");
    return e;
}

coproc_expr *coproc_expr_float(coproc_plan *p, double v)
{
    coproc_expr *e = p ? expr_new(p, COPROC__QE_FLOAT) : NULL;
    if (e)
        e->f = v;
    return e;
}

/* e, its operands set, if its tree is small enough (MAX_EXPR_NODES); else NULL. */
static coproc_expr *sized(coproc_plan *p, const char *what, coproc_expr *e)
{
    if (!e)
        return NULL;
    uint64_t n = 1 + (uint64_t)e->n + (e->a ? e->a->size : 0) + (e->b ? e->b->size : 0) +
                 (e->c ? e->c->size : 0);
    if (n > MAX_EXPR_NODES)
        return coproc__plan_fail(p, COPROC_INVALID_ARGUMENT,
                         "%s: an expression of more than %d nodes "
                         "(operands given more than once count each time)",
                         what, MAX_EXPR_NODES);
    e->size = (uint32_t)n;
    return e;
}

/* Whether e (not NULL) is one of p's expressions; else the error is recorded,
 * naming it ("<what>: <role> <i> ...", i < 0: no number). An expression of
 * another plan would be freed with that plan, under this one; one of p's is
 * made of p's only (its builder checked). */
static int own_expr(coproc_plan *p, const char *what, const char *role, int i,
                    const coproc_expr *e)
{
    if (e->plan == p)
        return 1;
    char num[16] = "";
    if (i >= 0)
        snprintf(num, sizeof num, " %d", i);
    coproc__plan_fail(p, COPROC_INVALID_ARGUMENT, "%s: %s%s is an expression of another plan",
                      what, role, num);
    return 0;
}

/* NULL operands mean an error was recorded already, unless none was: then the
 * caller passed NULL itself. */
static int operands_ok(coproc_plan *p, const char *what, int n, coproc_expr *a, coproc_expr *b,
                       coproc_expr *c)
{
    if (!p)
        return 0;
    if (!a || (n > 1 && !b) || (n > 2 && !c)) {
        coproc__plan_fail(p, COPROC_NULL_POINTER, "%s: an operand is NULL", what);
        return 0;
    }
    coproc_expr *ops[3] = {a, b, c};
    for (int i = 0; i < 3; i++)
        if (ops[i] && !own_expr(p, what, "operand", i + 1, ops[i]))
            return 0;
    return p->status == COPROC_OK;
}

coproc_expr *coproc_expr_arith(coproc_plan *p, coproc_arith op, coproc_expr *a, coproc_expr *b)
{
    if (!operands_ok(p, "coproc_expr_arith", 2, a, b, NULL))
        return NULL;
    if ((unsigned)op > COPROC_ARITH_DIV)
        return coproc__plan_fail(p, COPROC_INVALID_ARGUMENT, "coproc_expr_arith: unknown operator %d", (int)op);
    coproc_expr *e = expr_new(p, COPROC__QE_ARITH);
    if (e)
        e->arith = op, e->a = a, e->b = b;
    return sized(p, "coproc_expr_arith", e);
}

coproc_expr *coproc_expr_compare(coproc_plan *p, coproc_cmp op, coproc_expr *a, coproc_expr *b)
{
    if (!operands_ok(p, "coproc_expr_compare", 2, a, b, NULL))
        return NULL;
    if ((unsigned)op > COPROC_CMP_GE)
        return coproc__plan_fail(p, COPROC_INVALID_ARGUMENT,
                         "coproc_expr_compare: operator %d is not one of EQ..GE (use coproc_expr_between)",
                         (int)op);
    coproc_expr *e = expr_new(p, COPROC__QE_CMP);
    if (e)
        e->cmp = op, e->a = a, e->b = b;
    return sized(p, "coproc_expr_compare", e);
}

coproc_expr *coproc_expr_between(coproc_plan *p, coproc_expr *x, coproc_expr *lo, coproc_expr *hi)
{
    if (!operands_ok(p, "coproc_expr_between", 3, x, lo, hi))
        return NULL;
    coproc_expr *e = expr_new(p, COPROC__QE_BETWEEN);
    if (e)
        e->a = x, e->b = lo, e->c = hi;
    return sized(p, "coproc_expr_between", e);
}

coproc_expr *coproc_expr_in(coproc_plan *p, coproc_expr *x, int n, coproc_expr *const *list)
{
    if (!operands_ok(p, "coproc_expr_in", 1, x, NULL, NULL))
        return NULL;
    if (n < 1 || !list)
        return coproc__plan_fail(p, COPROC_INVALID_ARGUMENT, "coproc_expr_in: the list is empty");
    for (int i = 0; i < n; i++) {
        if (list[i] && !own_expr(p, "coproc_expr_in", "list item", i, list[i]))
            return NULL;
        if (!list[i] || (list[i]->kind != COPROC__QE_INT && list[i]->kind != COPROC__QE_FLOAT &&
                         list[i]->kind != COPROC__QE_STRING))
            return coproc__plan_fail(p, COPROC_INVALID_ARGUMENT,
                             "coproc_expr_in: list item %d is not a constant", i);
    }
    coproc_expr *e = expr_new(p, COPROC__QE_IN);
    if (!e)
        return NULL;
    if (!(e->list = malloc(n * sizeof *e->list)))
        return coproc__plan_fail(p, COPROC_HOST_OUT_OF_MEMORY, "coproc_expr_in: out of host memory");
    memcpy(e->list, list, n * sizeof *e->list);
    e->n = n;
    e->a = x;
    return sized(p, "coproc_expr_in", e);
}

coproc_expr *coproc_expr_prefix(coproc_plan *p, coproc_expr *x, const char *prefix)
{
    if (!operands_ok(p, "coproc_expr_prefix", 1, x, NULL, NULL))
        return NULL;
    if (!prefix)
        return coproc__plan_fail(p, COPROC_NULL_POINTER, "coproc_expr_prefix: the prefix is NULL");
    coproc_expr *e = expr_new(p, COPROC__QE_PREFIX);
    if (e && !(e->name = strdup(prefix)))
        return coproc__plan_fail(p, COPROC_HOST_OUT_OF_MEMORY, "building an expression: out of host memory");
    if (e)
        e->a = x;
    return sized(p, "coproc_expr_prefix", e);
}

static coproc_expr *logic(coproc_plan *p, coproc__qe_kind k, const char *what, coproc_expr *a,
                          coproc_expr *b)
{
    if (!operands_ok(p, what, k == COPROC__QE_NOT ? 1 : 2, a, b, NULL))
        return NULL;
    coproc_expr *e = expr_new(p, k);
    if (e)
        e->a = a, e->b = b;
    return sized(p, what, e);
}

coproc_expr *coproc_expr_and(coproc_plan *p, coproc_expr *a, coproc_expr *b)
{
    return logic(p, COPROC__QE_AND, "coproc_expr_and", a, b);
}
coproc_expr *coproc_expr_or(coproc_plan *p, coproc_expr *a, coproc_expr *b)
{
    return logic(p, COPROC__QE_OR, "coproc_expr_or", a, b);
}
coproc_expr *coproc_expr_not(coproc_plan *p, coproc_expr *a)
{
    return logic(p, COPROC__QE_NOT, "coproc_expr_not", a, NULL);
}

/* ---------------------------------------------------------------- nodes */

static coproc_node *node_new(coproc_plan *p, coproc__qn_kind kind, coproc_node *in,
                             const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static coproc_node *node_new(coproc_plan *p, coproc__qn_kind kind, coproc_node *in,
                             const char *fmt, ...)
{
    coproc_node *n = calloc(1, sizeof *n);
    if (!n)
        return coproc__plan_fail(p, COPROC_HOST_OUT_OF_MEMORY, "building a plan: out of host memory");
    n->kind = kind;
    n->in = in;
    n->plan = p;
    n->id = ++p->next_id;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(n->label, sizeof n->label, fmt, ap);
    va_end(ap);
    n->next_alloc = p->nodes;
    p->nodes = n;
    return n;
}

static coproc_node *oom(coproc_plan *p, const coproc_node *n)
{
    return coproc__plan_fail(p, COPROC_HOST_OUT_OF_MEMORY, "%s: out of host memory", n->label);
}

static int copy_schema(coproc__schema *dst, const coproc__schema *src)
{
    for (int i = 0; i < src->n; i++)
        if (schema_add_dict(dst, src->names[i], src->types[i], src->dicts[i]) != 0)
            return -1;
    return 0;
}

/* Inputs must be nodes of p; a NULL one means an error was recorded (or the
 * caller passed NULL: record that). A node of another plan is refused: it
 * would be freed with that plan, under this one. */
static int input_ok(coproc_plan *p, const char *what, const char *role, const coproc_node *in)
{
    if (!p)
        return 0;
    if (!in)
        coproc__plan_fail(p, COPROC_NULL_POINTER, "%s: the %s node is NULL", what, role);
    else if (in->plan != p)
        coproc__plan_fail(p, COPROC_INVALID_ARGUMENT, "%s: the %s node (%s) is a node of "
                          "another plan", what, role, in->label);
    return in && in->plan == p && p->status == COPROC_OK;
}

coproc_node *coproc_plan_scan(coproc_plan *p, const coproc_table *t, const char *name)
{
    if (!p)
        return NULL;
    if (!t)
        return coproc__plan_fail(p, COPROC_NULL_POINTER, "coproc_plan_scan: the table is NULL");
    if (t->rt != p->rt)
        return coproc__plan_fail(p, COPROC_INVALID_ARGUMENT, "coproc_plan_scan: the table is of another runtime");
    if (t->n == 0)
        return coproc__plan_fail(p, COPROC_INVALID_ARGUMENT, "coproc_plan_scan: table %s has no columns",
                         name ? name : "");
    coproc_node *n = node_new(p, COPROC__QN_SCAN, NULL, "scan#%d %s", p->next_id + 1,
                              name ? name : "table");
    if (!n)
        return NULL;
    n->table = t;
    coproc__table_ref(t); /* dropped by coproc_plan_free */
    for (int i = 0; i < t->n; i++)
        if (schema_add_dict(&n->schema, t->names[i], t->cols[i]->type, t->cols[i]->dict) != 0)
            return oom(p, n);
    return n;
}

static int check_expr(coproc_plan *p, const coproc_node *n, const coproc_expr *e,
                      const coproc__schema *s, int want_bool)
{
    char why[256];
    int qv = coproc__expr_check(e, s, why, sizeof why);
    if (qv < 0) {
        coproc__plan_fail(p, COPROC_INVALID_ARGUMENT, "%s: %s", n->label, why);
        return -1;
    }
    if (want_bool == 1 && qv != COPROC__QV_BOOL) {
        coproc__plan_fail(p, COPROC_INVALID_ARGUMENT, "%s: the predicate is not a boolean", n->label);
        return -1;
    }
    if (want_bool == 0 && qv == COPROC__QV_BOOL) {
        coproc__plan_fail(p, COPROC_INVALID_ARGUMENT, "%s: a boolean where a number is needed", n->label);
        return -1;
    }
    return qv;
}

coproc_node *coproc_plan_filter(coproc_plan *p, coproc_node *in, coproc_expr *pred)
{
    if (!input_ok(p, "coproc_plan_filter", "input", in))
        return NULL;
    if (!pred)
        return coproc__plan_fail(p, COPROC_NULL_POINTER, "coproc_plan_filter: the predicate is NULL");
    if (!own_expr(p, "coproc_plan_filter", "the predicate", -1, pred))
        return NULL;
    coproc_node *n = node_new(p, COPROC__QN_FILTER, in, "filter#%d", p->next_id + 1);
    if (!n || !(pred = coproc__resolve_strings(p, n->label, pred, &in->schema)) ||
        check_expr(p, n, pred, &in->schema, 1) < 0)
        return NULL;
    n->pred = pred;
    if (copy_schema(&n->schema, &in->schema) != 0)
        return oom(p, n);
    return n;
}

static int names_unique(coproc_plan *p, const coproc_node *n, const coproc__schema *s,
                        const char *name)
{
    if (!name || !*name) {
        coproc__plan_fail(p, COPROC_INVALID_ARGUMENT, "%s: an output column has no name", n->label);
        return 0;
    }
    if (coproc__schema_find(s, name) >= 0) {
        coproc__plan_fail(p, COPROC_INVALID_ARGUMENT, "%s: two output columns are named \"%s\"",
                  n->label, name);
        return 0;
    }
    return 1;
}

coproc_node *coproc_plan_project(coproc_plan *p, coproc_node *in, int count,
                                 const char *const *names, coproc_expr *const *exprs)
{
    if (!input_ok(p, "coproc_plan_project", "input", in))
        return NULL;
    if (count < 1)
        return coproc__plan_fail(p, COPROC_INVALID_ARGUMENT, "coproc_plan_project: %d output columns; at least 1",
                         count);
    if (!names || !exprs)
        return coproc__plan_fail(p, COPROC_INVALID_ARGUMENT, "coproc_plan_project: %s is NULL",
                         !names ? "names" : "exprs");
    coproc_node *n = node_new(p, COPROC__QN_PROJECT, in, "project#%d", p->next_id + 1);
    if (!n)
        return NULL;
    if (!(n->names = calloc(count, sizeof *n->names)) || !(n->exprs = calloc(count, sizeof *n->exprs)))
        return oom(p, n);
    n->n = count;
    for (int i = 0; i < count; i++) {
        if (!exprs[i])
            return coproc__plan_fail(p, COPROC_NULL_POINTER, "%s: expression %d is NULL", n->label, i);
        if (!own_expr(p, n->label, "expression", i, exprs[i]))
            return NULL;
        coproc_expr *e = exprs[i];
        if (!names_unique(p, n, &n->schema, names[i]) ||
            !(e = coproc__resolve_strings(p, n->label, e, &in->schema)) ||
            check_expr(p, n, e, &in->schema, -1) < 0)
            return NULL;
        n->exprs[i] = e;
        /* a string column passed through keeps its dictionary */
        int src = e->kind == COPROC__QE_COLUMN ? coproc__schema_find(&in->schema, e->name) : -1;
        if (!(n->names[i] = strdup(names[i])) ||
            schema_add_dict(&n->schema, names[i], coproc__expr_out_type(e, &in->schema),
                            src >= 0 ? in->schema.dicts[src] : NULL) != 0)
            return oom(p, n);
    }
    return n;
}

static int int_key(coproc_plan *p, const coproc_node *n, const coproc__schema *s, const char *key,
                   const char *side)
{
    if (!key) {
        coproc__plan_fail(p, COPROC_NULL_POINTER, "%s: the %s key is NULL", n->label, side);
        return -1;
    }
    int i = coproc__schema_find(s, key);
    if (i < 0) {
        coproc__plan_fail(p, COPROC_INVALID_ARGUMENT, "%s: no column \"%s\" on the %s side", n->label, key, side);
        return -1;
    }
    if (!coproc__type_is_int(s->types[i])) {
        coproc__plan_fail(p, COPROC_UNSUPPORTED_TYPE, "%s: key \"%s\" is %s, not an integer", n->label, key,
                  coproc_type_name(s->types[i]));
        return -1;
    }
    return i;
}

coproc_node *coproc_plan_join(coproc_plan *p, coproc_join_kind kind, coproc_node *probe,
                              const char *probe_key, coproc_node *build, const char *build_key)
{
    return coproc_plan_join_keys(p, kind, probe, 1, &probe_key, build, &build_key);
}

coproc_node *coproc_plan_join_keys(coproc_plan *p, coproc_join_kind kind, coproc_node *probe,
                                   int nkeys, const char *const *probe_keys, coproc_node *build,
                                   const char *const *build_keys)
{
    const char *fn = nkeys == 1 ? "coproc_plan_join" : "coproc_plan_join_keys";
    if (!input_ok(p, fn, "probe", probe) || !input_ok(p, fn, "build", build))
        return NULL;
    if (kind != COPROC_JOIN_INNER && kind != COPROC_JOIN_SEMI)
        return coproc__plan_fail(p, COPROC_INVALID_ARGUMENT, "%s: unknown kind %d", fn, (int)kind);
    if (nkeys < 1 || nkeys > MAX_KEYS || !probe_keys || !build_keys)
        return coproc__plan_fail(p, COPROC_INVALID_ARGUMENT, "%s: %d key columns (1 to %d)%s", fn, nkeys,
                         MAX_KEYS, nkeys >= 1 && nkeys <= MAX_KEYS ? ", a key list is NULL" : "");
    const char *pk0 = probe_keys[0], *bk0 = build_keys[0];
    coproc_node *n = node_new(p, COPROC__QN_JOIN, probe, "%sjoin#%d %s=%s%s",
                              kind == COPROC_JOIN_SEMI ? "semi-" : "", p->next_id + 1,
                              pk0 ? pk0 : "?", bk0 ? bk0 : "?", nkeys > 1 ? ",..." : "");
    if (!n)
        return NULL;
    n->build = build;
    n->join = kind;
    if (!(n->key_remap = calloc(nkeys, sizeof *n->key_remap)))
        return oom(p, n);
    n->njoin_keys = nkeys; /* what the plan frees */
    for (int k = 0; k < nkeys; k++) {
        int pi = int_key(p, n, &probe->schema, probe_keys[k], "probe");
        int bi = pi < 0 ? -1 : int_key(p, n, &build->schema, build_keys[k], "build");
        if (bi < 0)
            return NULL;
        const struct coproc__dict *pd = probe->schema.dicts[pi], *bd = build->schema.dicts[bi];
        if (!pd != !bd)
            return coproc__plan_fail(p, COPROC_UNSUPPORTED,
                                     "%s: key \"%s\" and key \"%s\": a string joins a string",
                                     n->label, probe_keys[k], build_keys[k]);
        /* codes of two dictionaries name different strings: the probe's
         * codes are mapped onto the build's */
        if (pd && !coproc__dict_same(pd, bd)) {
            if (!(n->key_remap[k] = malloc(((size_t)pd->n + 1) * sizeof **n->key_remap)))
                return oom(p, n);
            for (int32_t i = 0; i < pd->n; i++) {
                size_t len;
                const char *v = coproc__dict_value(pd, i, &len);
                int32_t b = coproc__dict_lower(bd, v, len, 0);
                n->key_remap[k][i] = b < coproc__dict_lower(bd, v, len, 1) ? b : -1;
            }
        }
    }
    if (!(n->probe_keys = calloc(nkeys, sizeof *n->probe_keys)) ||
        !(n->build_keys = calloc(nkeys, sizeof *n->build_keys)))
        return oom(p, n);
    for (int k = 0; k < nkeys; k++)
        if (!(n->probe_keys[k] = strdup(probe_keys[k])) ||
            !(n->build_keys[k] = strdup(build_keys[k])))
            return oom(p, n);
    if (!(n->probe_key = strdup(pk0)) || !(n->build_key = strdup(bk0)) ||
        copy_schema(&n->schema, &probe->schema) != 0)
        return oom(p, n);
    if (kind == COPROC_JOIN_INNER)
        for (int i = 0; i < build->schema.n; i++) {
            if (!names_unique(p, n, &n->schema, build->schema.names[i]))
                return NULL;
            if (schema_add_dict(&n->schema, build->schema.names[i], build->schema.types[i],
                                build->schema.dicts[i]) != 0)
                return oom(p, n);
        }
    return n;
}

coproc_node *coproc_plan_group_by(coproc_plan *p, coproc_node *in, int nkeys,
                                  const char *const *keys, int naggs,
                                  const coproc_aggregate *aggs)
{
    if (!input_ok(p, "coproc_plan_group_by", "input", in))
        return NULL;
    coproc_node *n = node_new(p, COPROC__QN_GROUP_BY, in, "group-by#%d", p->next_id + 1);
    if (!n)
        return NULL;
    if (nkeys < 0 || nkeys > MAX_KEYS || (nkeys > 0 && !keys))
        return coproc__plan_fail(p, COPROC_INVALID_ARGUMENT, "%s: %d keys (0 to %d)", n->label, nkeys, MAX_KEYS);
    if (naggs < 0 || (naggs > 0 && !aggs) || nkeys + naggs == 0)
        return coproc__plan_fail(p, COPROC_INVALID_ARGUMENT, "%s: no keys and no aggregates", n->label);
    if ((nkeys && !(n->names = calloc(nkeys, sizeof *n->names))) ||
        (naggs && !(n->aggs = calloc(naggs, sizeof *n->aggs))))
        return oom(p, n);
    for (int i = 0; i < nkeys; i++) {
        int c = int_key(p, n, &in->schema, keys[i], "input");
        if (c < 0 || !names_unique(p, n, &n->schema, keys[i]))
            return NULL;
        if (!(n->names[i] = strdup(keys[i])))
            return oom(p, n);
        n->n = i + 1;
        if (schema_add_dict(&n->schema, keys[i], in->schema.types[c], in->schema.dicts[c]) != 0)
            return oom(p, n);
    }
    for (int i = 0; i < naggs; i++) {
        const coproc_aggregate *a = &aggs[i];
        if ((unsigned)a->fn > COPROC_AGG_AVG)
            return coproc__plan_fail(p, COPROC_INVALID_ARGUMENT, "%s: aggregate %d: unknown function", n->label, i);
        if (!a->arg && a->fn != COPROC_AGG_COUNT)
            return coproc__plan_fail(p, COPROC_NULL_POINTER, "%s: aggregate %d has no argument", n->label, i);
        if (a->arg && !own_expr(p, n->label, "the argument of aggregate", i, a->arg))
            return NULL;
        if (!names_unique(p, n, &n->schema, a->name))
            return NULL;
        coproc_type t = COPROC_INT64;
        if (a->arg) {
            int qv = check_expr(p, n, a->arg, &in->schema, 0);
            if (qv < 0)
                return NULL;
            if (a->fn == COPROC_AGG_SUM)
                t = qv == COPROC__QV_FLOAT ? COPROC_FLOAT64 : COPROC_INT64;
            else if (a->fn == COPROC_AGG_MIN || a->fn == COPROC_AGG_MAX)
                t = coproc__expr_out_type(a->arg, &in->schema);
            else if (a->fn == COPROC_AGG_AVG)
                t = COPROC_FLOAT64;
        }
        n->aggs[i].fn = a->fn;
        n->aggs[i].arg = a->arg;
        n->naggs = i + 1;
        if (!(n->aggs[i].name = strdup(a->name)) || schema_add(&n->schema, a->name, t) != 0)
            return oom(p, n);
    }
    return n;
}

coproc_node *coproc_plan_order_by(coproc_plan *p, coproc_node *in, int nkeys,
                                  const coproc_order_key *keys, uint64_t limit)
{
    if (!input_ok(p, "coproc_plan_order_by", "input", in))
        return NULL;
    coproc_node *n = node_new(p, COPROC__QN_ORDER_BY, in, "order-by#%d", p->next_id + 1);
    if (!n)
        return NULL;
    if (nkeys < 1 || nkeys > MAX_KEYS || !keys)
        return coproc__plan_fail(p, COPROC_INVALID_ARGUMENT, "%s: %d keys (1 to %d)", n->label, nkeys, MAX_KEYS);
    if (!(n->names = calloc(nkeys, sizeof *n->names)) ||
        !(n->desc = calloc(nkeys, sizeof *n->desc)) ||
        !(n->nulls_first = calloc(nkeys, sizeof *n->nulls_first)))
        return oom(p, n);
    for (int i = 0; i < nkeys; i++) {
        if (!keys[i].column)
            return coproc__plan_fail(p, COPROC_NULL_POINTER, "%s: key %d names no column", n->label, i);
        if (coproc__schema_find(&in->schema, keys[i].column) < 0)
            return coproc__plan_fail(p, COPROC_INVALID_ARGUMENT, "%s: no column \"%s\" in the input",
                             n->label, keys[i].column);
        if (!(n->names[i] = strdup(keys[i].column)))
            return oom(p, n);
        n->desc[i] = keys[i].descending != 0;
        n->nulls_first[i] = keys[i].nulls_first != 0;
        n->n = i + 1;
    }
    n->limit = limit;
    if (copy_schema(&n->schema, &in->schema) != 0)
        return oom(p, n);
    return n;
}
