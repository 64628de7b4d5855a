/* test_query_operators.c - plans built with coproc/query.h, run one operator
 * at a time (COPROC_QUERY_OPERATORS), against a scalar C evaluation of the
 * same plan written here: filters with every comparison, BETWEEN, IN,
 * AND/OR/NOT and column-vs-column comparisons; arithmetic with division by
 * zero and int64 wrapping; int32/int64/uint32/uint64/float32/float64 columns;
 * inner joins with duplicate keys on both sides and semi joins; group-by with
 * 0 to 3 keys and every aggregate; order-by ascending/descending with ties,
 * NaN and limits; empty tables, no row and every row passing, one group,
 * device columns; errors (bad options, a plan with a missing column, and a
 * failure injected at every operator of a run, which must release everything). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coproc/query.h"
#include "testlib.h"

static coproc_runtime *rt;

/* Whether a device of rt has fp64. Without it, plans scan their tables less
 * the float64 columns, and a case that names one or yields float64 (avg, a
 * float sum, a cast) is skipped, saying so: float64 has no device there. */
static int fp64 = 1;
static int case_needs_fp64; /* the node being built named a float64 column left out */
static int cases_run, cases_skipped;

/* ---------------------------------------------------------------- reference tables */

/* One value: integers in i (uint32 zero-extended, uint64 as its bits), floats in f. */
typedef struct cell {
    int64_t i;
    double f;
} cell;

#define MAXC 40
typedef struct rtab {
    int n;
    char names[MAXC][32];
    coproc_type types[MAXC];
    size_t rows;
    cell *v[MAXC];
} rtab;

static int is_flt(coproc_type t) { return t == COPROC_FLOAT32 || t == COPROC_FLOAT64; }

/* Every reference table made by a test, freed at its end. */
static rtab *made[4096];
static int nmade;

static rtab *rtab_new(size_t rows)
{
    rtab *r = calloc(1, sizeof *r);
    assert_non_null(r);
    r->rows = rows;
    assert_true(nmade < 4096);
    made[nmade++] = r;
    return r;
}

static int rtab_add(rtab *r, const char *name, coproc_type t)
{
    assert_true(r->n < MAXC);
    snprintf(r->names[r->n], sizeof r->names[0], "%s", name);
    r->types[r->n] = t;
    r->v[r->n] = calloc(r->rows ? r->rows : 1, sizeof(cell));
    assert_non_null(r->v[r->n]);
    return r->n++;
}

static int dropped_f64(const char *name);

static int rtab_find(const rtab *r, const char *name)
{
    for (int i = 0; i < r->n; i++)
        if (strcmp(r->names[i], name) == 0)
            return i;
    if (!fp64 && r->n > 0 && dropped_f64(name)) {
        case_needs_fp64 = 1; /* any column will do: the case is skipped */
        return 0;
    }
    fail_msg("reference: no column %s", name);
    return -1;
}

static void free_made(void)
{
    for (int k = 0; k < nmade; k++) {
        for (int i = 0; i < made[k]->n; i++)
            free(made[k]->v[i]);
        free(made[k]);
    }
    nmade = 0;
}

static cell cell_from(coproc_type t, const void *d, size_t i)
{
    cell c = {0, 0};
    switch (t) {
    case COPROC_INT32: c.i = ((const int32_t *)d)[i]; break;
    case COPROC_UINT32: c.i = ((const uint32_t *)d)[i]; break;
    case COPROC_INT64: c.i = ((const int64_t *)d)[i]; break;
    case COPROC_UINT64: c.i = (int64_t)((const uint64_t *)d)[i]; break;
    case COPROC_FLOAT32: c.f = ((const float *)d)[i]; break;
    default: c.f = ((const double *)d)[i]; break;
    }
    return c;
}

/* ---------------------------------------------------------------- test tables */

/* Columns owned by the test (arrays wrapped as host columns, or uploaded),
 * a coproc_table over them and the same rows as a reference table. */
typedef struct ttab {
    coproc_table *t;
    rtab *ref;
    coproc_table *t_no64; /* without fp64: the same less its float64 columns */
    rtab *ref_no64;
    int n;
    void *data[MAXC];
    coproc_column *cols[MAXC];
} ttab;

static void ttab_init(ttab *tt, size_t rows)
{
    memset(tt, 0, sizeof *tt);
    assert_ok(rt, coproc_table_create(rt, &tt->t));
    tt->ref = rtab_new(rows);
    if (!fp64) {
        assert_ok(rt, coproc_table_create(rt, &tt->t_no64));
        tt->ref_no64 = rtab_new(rows);
    }
}

/* The names of the float64 columns left out of the tables (no fp64). */
static char dropped[16][32];
static int ndropped;

static int dropped_f64(const char *name)
{
    for (int i = 0; i < ndropped; i++)
        if (strcmp(dropped[i], name) == 0)
            return 1;
    return 0;
}

/* Add a column whose rows are data (rows elements of type t, taken over);
 * device >= 0 uploads it there instead of wrapping it. */
static void ttab_add(ttab *tt, const char *name, coproc_type t, void *data, int device)
{
    size_t rows = tt->ref->rows;
    coproc_column *col;
    if (!fp64 && t == COPROC_FLOAT64 && !dropped_f64(name) && ndropped < 16)
        snprintf(dropped[ndropped++], sizeof dropped[0], "%s", name);
    if (device >= 0 && !(t == COPROC_FLOAT64 && !fp64)) /* float64 cannot live there */
        assert_ok(rt, coproc_column_upload(rt, device, t, data, rows, &col));
    else
        assert_ok(rt, coproc_column_wrap(rt, t, rows ? data : NULL, rows, &col));
    assert_ok(rt, coproc_table_add(tt->t, name, col));
    int j = rtab_add(tt->ref, name, t);
    for (size_t i = 0; i < rows; i++)
        tt->ref->v[j][i] = cell_from(t, data, i);
    if (tt->t_no64 && t != COPROC_FLOAT64) {
        assert_ok(rt, coproc_table_add(tt->t_no64, name, col));
        j = rtab_add(tt->ref_no64, name, t);
        for (size_t i = 0; i < rows; i++)
            tt->ref_no64->v[j][i] = cell_from(t, data, i);
    }
    tt->data[tt->n] = data;
    tt->cols[tt->n++] = col;
}

static void ttab_free(ttab *tt)
{
    coproc_table_free(tt->t);
    coproc_table_free(tt->t_no64);
    for (int i = 0; i < tt->n; i++) {
        coproc_column_free(tt->cols[i]);
        free(tt->data[i]);
    }
    memset(tt, 0, sizeof *tt);
}

static void *arr(coproc_type t, size_t rows)
{
    void *d = calloc(rows ? rows : 1, coproc_type_size(t));
    assert_non_null(d);
    return d;
}

/* The fact table A (n rows), every type, ties, extremes, NaN and infinities;
 * device >= 0: every column uploaded there. */
static void make_fact(ttab *tt, size_t n, int device)
{
    test_rng r = {42};
    int32_t *id = arr(COPROC_INT32, n), *k1 = arr(COPROC_INT32, n);
    int64_t *k2 = arr(COPROC_INT64, n), *big = arr(COPROC_INT64, n), *v = arr(COPROC_INT64, n);
    uint32_t *k3 = arr(COPROC_UINT32, n), *w = arr(COPROC_UINT32, n);
    uint64_t *u = arr(COPROC_UINT64, n);
    float *f32 = arr(COPROC_FLOAT32, n);
    double *f64 = arr(COPROC_FLOAT64, n);
    static const int64_t k2v[] = {-((int64_t)1 << 62), -7, 0, 3, (int64_t)1 << 40, (int64_t)1 << 62};
    static const uint32_t k3v[] = {0, 1, 2, 3, UINT32_MAX};
    static const uint32_t wv[] = {0, 7, UINT32_MAX};
    static const uint64_t uv[] = {0, 5, (uint64_t)1 << 63, UINT64_MAX, (uint64_t)1 << 40};
    for (size_t i = 0; i < n; i++) {
        id[i] = (int32_t)i;
        k1[i] = (int32_t)test_rand_below(&r, 11) - 5;
        k2[i] = k2v[test_rand_below(&r, 6)];
        k3[i] = k3v[test_rand_below(&r, 5)];
        w[i] = wv[test_rand_below(&r, 3)];
        u[i] = uv[test_rand_below(&r, 5)];
        switch (test_rand_below(&r, 8)) {
        case 0: big[i] = INT64_MAX; break;
        case 1: big[i] = INT64_MIN; break;
        case 2: big[i] = -1; break;
        case 3: big[i] = (int64_t)test_rand_below(&r, 5) - 2; break;
        case 4: big[i] = INT64_MAX - (int64_t)test_rand_below(&r, 3); break;
        default: big[i] = (int64_t)test_rand(&r); break;
        }
        v[i] = (int64_t)test_rand_below(&r, 201) - 100;
        uint64_t p = test_rand_below(&r, 40);
        f32[i] = p == 0 ? NAN : p == 1 ? INFINITY : p == 2 ? -INFINITY
                                  : (float)((int)test_rand_below(&r, 81) - 40) / 4.0f;
        p = test_rand_below(&r, 40);
        f64[i] = p < 2 ? NAN : p == 2 ? -0.0 : p == 3 ? INFINITY
                                 : (double)((int)test_rand_below(&r, 41) - 20) / 2.0;
    }
    ttab_init(tt, n);
    ttab_add(tt, "id", COPROC_INT32, id, device);
    ttab_add(tt, "k1", COPROC_INT32, k1, device);
    ttab_add(tt, "k2", COPROC_INT64, k2, device);
    ttab_add(tt, "k3", COPROC_UINT32, k3, device);
    ttab_add(tt, "w", COPROC_UINT32, w, device);
    ttab_add(tt, "u", COPROC_UINT64, u, device);
    ttab_add(tt, "big", COPROC_INT64, big, device);
    ttab_add(tt, "v", COPROC_INT64, v, device);
    ttab_add(tt, "f32", COPROC_FLOAT32, f32, device);
    ttab_add(tt, "f64", COPROC_FLOAT64, f64, device);
}

/* The dimension table B (m rows): duplicate keys of several types. */
static void make_dim(ttab *tt, size_t m)
{
    test_rng r = {7};
    int32_t *bid = arr(COPROC_INT32, m), *dc = arr(COPROC_INT32, m);
    int64_t *dk = arr(COPROC_INT64, m), *bu = arr(COPROC_INT64, m);
    uint32_t *dk3 = arr(COPROC_UINT32, m);
    double *dv = arr(COPROC_FLOAT64, m);
    static const uint32_t k3v[] = {0, 1, 2, 7};
    static const int64_t buv[] = {-1, INT64_MIN, 5, 9};
    for (size_t i = 0; i < m; i++) {
        bid[i] = (int32_t)i;
        dk[i] = (int64_t)test_rand_below(&r, 13) - 6;
        dk3[i] = k3v[test_rand_below(&r, 4)];
        bu[i] = buv[test_rand_below(&r, 4)];
        dv[i] = ((double)test_rand_below(&r, 21) - 10) / 2;
        dc[i] = (int32_t)test_rand_below(&r, 1000) - 500;
    }
    ttab_init(tt, m);
    ttab_add(tt, "bid", COPROC_INT32, bid, -1);
    ttab_add(tt, "dk", COPROC_INT64, dk, -1);
    ttab_add(tt, "dk3", COPROC_UINT32, dk3, -1);
    ttab_add(tt, "bu", COPROC_INT64, bu, -1);
    ttab_add(tt, "dv", COPROC_FLOAT64, dv, -1);
    ttab_add(tt, "dc", COPROC_INT32, dc, -1);
}

/* An empty table: a int32, b float64, c uint64. */
static void make_empty(ttab *tt)
{
    ttab_init(tt, 0);
    ttab_add(tt, "a", COPROC_INT32, arr(COPROC_INT32, 0), -1);
    ttab_add(tt, "b", COPROC_FLOAT64, arr(COPROC_FLOAT64, 0), -1);
    ttab_add(tt, "c", COPROC_UINT64, arr(COPROC_UINT64, 0), -1);
}

/* ---------------------------------------------------------------- dual expressions */

/* An expression built both ways: e for the plan, the rest for the reference. */
enum { X_COL, X_INT, X_FLT, X_ARITH, X_CMP, X_BETWEEN, X_IN, X_AND, X_OR, X_NOT };
typedef struct rx {
    int kind;
    char name[32];
    int64_t i;
    double f;
    int op;
    struct rx *a, *b, *c;
    int n;
    struct rx *list[8];
    coproc_expr *e;
} rx;

static rx pool[4096];
static int npool;
static coproc_plan *P; /* the plan being built */

static rx *rx_new(int kind)
{
    assert_true(npool < 4096);
    rx *x = &pool[npool++];
    memset(x, 0, sizeof *x);
    x->kind = kind;
    return x;
}

static rx *COL(const char *name)
{
    rx *x = rx_new(X_COL);
    snprintf(x->name, sizeof x->name, "%s", name);
    x->e = coproc_expr_column(P, name);
    return x;
}
static rx *INT(int64_t v)
{
    rx *x = rx_new(X_INT);
    x->i = v;
    x->e = coproc_expr_int(P, v);
    return x;
}
static rx *FLT(double v)
{
    rx *x = rx_new(X_FLT);
    x->f = v;
    x->e = coproc_expr_float(P, v);
    return x;
}
static rx *ARITH(coproc_arith op, rx *a, rx *b)
{
    rx *x = rx_new(X_ARITH);
    x->op = op, x->a = a, x->b = b;
    x->e = coproc_expr_arith(P, op, a->e, b->e);
    return x;
}
static rx *CMP(coproc_cmp op, rx *a, rx *b)
{
    rx *x = rx_new(X_CMP);
    x->op = op, x->a = a, x->b = b;
    x->e = coproc_expr_compare(P, op, a->e, b->e);
    return x;
}
static rx *BETWEEN(rx *a, rx *lo, rx *hi)
{
    rx *x = rx_new(X_BETWEEN);
    x->a = a, x->b = lo, x->c = hi;
    x->e = coproc_expr_between(P, a->e, lo->e, hi->e);
    return x;
}
static rx *IN(rx *a, int n, rx *const *list)
{
    rx *x = rx_new(X_IN);
    coproc_expr *l[8];
    x->a = a, x->n = n;
    for (int k = 0; k < n; k++)
        x->list[k] = list[k], l[k] = list[k]->e;
    x->e = coproc_expr_in(P, a->e, n, l);
    return x;
}
static rx *AND(rx *a, rx *b)
{
    rx *x = rx_new(X_AND);
    x->a = a, x->b = b;
    x->e = coproc_expr_and(P, a->e, b->e);
    return x;
}
static rx *OR(rx *a, rx *b)
{
    rx *x = rx_new(X_OR);
    x->a = a, x->b = b;
    x->e = coproc_expr_or(P, a->e, b->e);
    return x;
}
static rx *NOT(rx *a)
{
    rx *x = rx_new(X_NOT);
    x->a = a;
    x->e = coproc_expr_not(P, a->e);
    return x;
}

/* A value while evaluating: kind 0 integer (i), 1 float (f), 2 boolean (i). */
typedef struct rv {
    int kind;
    int64_t i;
    double f;
} rv;

static double rv_f(rv v) { return v.kind == 1 ? v.f : (double)v.i; }

static int64_t iarith(int op, int64_t a, int64_t b)
{
    switch (op) {
    case COPROC_ARITH_ADD: return (int64_t)((uint64_t)a + (uint64_t)b);
    case COPROC_ARITH_SUB: return (int64_t)((uint64_t)a - (uint64_t)b);
    case COPROC_ARITH_MUL: return (int64_t)((uint64_t)a * (uint64_t)b);
    default: return b == 0 ? 0 : (a == INT64_MIN && b == -1) ? INT64_MIN : a / b;
    }
}

static int cmp_holds(int op, rv a, rv b)
{
    if (a.kind == 1 || b.kind == 1) {
        double x = rv_f(a), y = rv_f(b);
        switch (op) {
        case COPROC_CMP_EQ: return x == y;
        case COPROC_CMP_NE: return x != y;
        case COPROC_CMP_LT: return x < y;
        case COPROC_CMP_LE: return x <= y;
        case COPROC_CMP_GT: return x > y;
        default: return x >= y;
        }
    }
    switch (op) {
    case COPROC_CMP_EQ: return a.i == b.i;
    case COPROC_CMP_NE: return a.i != b.i;
    case COPROC_CMP_LT: return a.i < b.i;
    case COPROC_CMP_LE: return a.i <= b.i;
    case COPROC_CMP_GT: return a.i > b.i;
    default: return a.i >= b.i;
    }
}

static rv eval(const rx *x, const rtab *t, size_t row)
{
    rv r = {0, 0, 0}, a, b;
    switch (x->kind) {
    case X_COL: {
        int j = rtab_find(t, x->name);
        if (is_flt(t->types[j]))
            r.kind = 1, r.f = t->v[j][row].f;
        else
            r.i = t->v[j][row].i;
        return r;
    }
    case X_INT: r.i = x->i; return r;
    case X_FLT: r.kind = 1, r.f = x->f; return r;
    case X_ARITH:
        a = eval(x->a, t, row), b = eval(x->b, t, row);
        if (a.kind == 1 || b.kind == 1) {
            double p = rv_f(a), q = rv_f(b);
            r.kind = 1;
            r.f = x->op == COPROC_ARITH_ADD ? p + q : x->op == COPROC_ARITH_SUB ? p - q
                  : x->op == COPROC_ARITH_MUL ? p * q : p / q;
        } else {
            r.i = iarith(x->op, a.i, b.i);
        }
        return r;
    default: break;
    }
    r.kind = 2;
    switch (x->kind) {
    case X_CMP: r.i = cmp_holds(x->op, eval(x->a, t, row), eval(x->b, t, row)); break;
    case X_BETWEEN:
        a = eval(x->a, t, row);
        r.i = cmp_holds(COPROC_CMP_GE, a, eval(x->b, t, row)) && cmp_holds(COPROC_CMP_LE, a, eval(x->c, t, row));
        break;
    case X_IN:
        a = eval(x->a, t, row);
        for (int k = 0; k < x->n && !r.i; k++)
            r.i = cmp_holds(COPROC_CMP_EQ, a, eval(x->list[k], t, row));
        break;
    case X_AND: r.i = eval(x->a, t, row).i && eval(x->b, t, row).i; break;
    case X_OR: r.i = eval(x->a, t, row).i || eval(x->b, t, row).i; break;
    default: r.i = !eval(x->a, t, row).i; break;
    }
    return r;
}

/* 0 integer, 1 float, 2 boolean */
static int rx_kind(const rx *x, const rtab *t)
{
    switch (x->kind) {
    case X_COL: return is_flt(t->types[rtab_find(t, x->name)]);
    case X_INT: return 0;
    case X_FLT: return 1;
    case X_ARITH: return rx_kind(x->a, t) || rx_kind(x->b, t) ? 1 : 0;
    default: return 2;
    }
}

static coproc_type rx_type(const rx *x, const rtab *t)
{
    if (x->kind == X_COL)
        return t->types[rtab_find(t, x->name)];
    int k = rx_kind(x, t);
    return k == 0 ? COPROC_INT64 : k == 1 ? COPROC_FLOAT64 : COPROC_INT32;
}

static cell rv_cell(rv v)
{
    cell c = {0, 0};
    if (v.kind == 1)
        c.f = v.f;
    else
        c.i = v.i;
    return c;
}

/* ---------------------------------------------------------------- dual nodes */

typedef struct dn {
    coproc_node *node;
    rtab *ref;
    int nodes; /* nodes in the subtree (reports expected) */
    int f64;   /* it names a float64 column left out (no fp64): not built, skipped */
} dn;

/* Not added to the plan when the case names a float64 column left out (no
 * fp64): it would fail building, and the plan's first error stays. */
#define SKIPPABLE(in_f64, node) ((in_f64) || case_needs_fp64 ? NULL : (node))

static dn d_scan(ttab *tt, const char *name)
{
    if (!fp64) {
        dn d = {coproc_plan_scan(P, tt->t_no64, name), tt->ref_no64, 1, 0};
        return d;
    }
    dn d = {coproc_plan_scan(P, tt->t, name), tt->ref, 1, 0};
    return d;
}

static dn d_filter(dn in, rx *pred)
{
    case_needs_fp64 = 0;
    const rtab *t = in.ref;
    size_t keep = 0;
    for (size_t i = 0; i < t->rows; i++)
        keep += eval(pred, t, i).i != 0;
    rtab *o = rtab_new(keep);
    for (int j = 0; j < t->n; j++)
        rtab_add(o, t->names[j], t->types[j]);
    size_t k = 0;
    for (size_t i = 0; i < t->rows; i++)
        if (eval(pred, t, i).i) {
            for (int j = 0; j < t->n; j++)
                o->v[j][k] = t->v[j][i];
            k++;
        }
    dn d = {SKIPPABLE(in.f64, coproc_plan_filter(P, in.node, pred->e)), o, in.nodes + 1,
            in.f64 || case_needs_fp64};
    return d;
}

static dn d_project(dn in, int n, const char *const *names, rx *const *exprs)
{
    case_needs_fp64 = 0;
    const rtab *t = in.ref;
    rtab *o = rtab_new(t->rows);
    coproc_expr *e[MAXC];
    for (int j = 0; j < n; j++) {
        rtab_add(o, names[j], rx_type(exprs[j], t));
        e[j] = exprs[j]->e;
        for (size_t i = 0; i < t->rows; i++)
            o->v[j][i] = exprs[j]->kind == X_COL ? t->v[rtab_find(t, exprs[j]->name)][i]
                                                  : rv_cell(eval(exprs[j], t, i));
    }
    dn d = {SKIPPABLE(in.f64, coproc_plan_project(P, in.node, n, names, e)), o, in.nodes + 1,
            in.f64 || case_needs_fp64};
    return d;
}

static dn d_join(coproc_join_kind kind, dn probe, const char *pk, dn build, const char *bk)
{
    case_needs_fp64 = 0;
    const rtab *p = probe.ref, *b = build.ref;
    int pj = rtab_find(p, pk), bj = rtab_find(b, bk);
    size_t m = 0;
    for (size_t i = 0; i < p->rows; i++) {
        size_t hits = 0;
        for (size_t k = 0; k < b->rows; k++)
            hits += p->v[pj][i].i == b->v[bj][k].i;
        m += kind == COPROC_JOIN_SEMI ? hits > 0 : hits;
    }
    rtab *o = rtab_new(m);
    for (int j = 0; j < p->n; j++)
        rtab_add(o, p->names[j], p->types[j]);
    if (kind == COPROC_JOIN_INNER)
        for (int j = 0; j < b->n; j++)
            rtab_add(o, b->names[j], b->types[j]);
    size_t r = 0;
    for (size_t i = 0; i < p->rows; i++)
        for (size_t k = 0; k < b->rows; k++) {
            if (p->v[pj][i].i != b->v[bj][k].i)
                continue;
            for (int j = 0; j < p->n; j++)
                o->v[j][r] = p->v[j][i];
            if (kind == COPROC_JOIN_INNER)
                for (int j = 0; j < b->n; j++)
                    o->v[p->n + j][r] = b->v[j][k];
            r++;
            if (kind == COPROC_JOIN_SEMI)
                break;
        }
    int f64 = probe.f64 || build.f64;
    dn d = {SKIPPABLE(f64, coproc_plan_join(P, kind, probe.node, pk, build.node, bk)), o,
            probe.nodes + build.nodes + 1, f64 || case_needs_fp64};
    return d;
}

typedef struct ragg {
    coproc_agg_fn fn;
    rx *arg;
    const char *name;
} ragg;

/* The aggregate over rows rows[0..n-1] of t. */
static cell agg_ref(const ragg *a, const rtab *t, const size_t *rows, size_t n)
{
    cell c = {0, 0};
    if (a->fn == COPROC_AGG_COUNT) {
        c.i = (int64_t)n;
        return c;
    }
    int fl = rx_kind(a->arg, t) == 1;
    int64_t isum = 0;
    double fsum = 0;
    int seen = 0;
    for (size_t k = 0; k < n; k++) {
        rv v = eval(a->arg, t, rows[k]);
        isum = (int64_t)((uint64_t)isum + (uint64_t)v.i);
        fsum += v.f;
        if (a->fn == COPROC_AGG_MIN || a->fn == COPROC_AGG_MAX) {
            int mx = a->fn == COPROC_AGG_MAX;
            if (fl) {
                if (isnan(v.f))
                    continue;
                if (!seen || (mx ? v.f > c.f : v.f < c.f))
                    c.f = v.f;
            } else if (!seen || (mx ? v.i > c.i : v.i < c.i)) {
                c.i = v.i;
            }
            seen = 1;
        }
    }
    switch (a->fn) {
    case COPROC_AGG_SUM:
        if (fl)
            c.f = fsum;
        else
            c.i = isum;
        break;
    case COPROC_AGG_AVG:
        c.f = n ? (fl ? fsum : (double)isum) / (double)n : NAN;
        break;
    default: /* MIN/MAX: every value NaN gives NaN; no rows gives 0 */
        if (fl && !seen)
            c.f = n ? NAN : 0;
        break;
    }
    return c;
}

static coproc_type agg_type(const ragg *a, const rtab *t)
{
    switch (a->fn) {
    case COPROC_AGG_COUNT: return COPROC_INT64;
    case COPROC_AGG_AVG: return COPROC_FLOAT64;
    case COPROC_AGG_SUM: return rx_kind(a->arg, t) == 1 ? COPROC_FLOAT64 : COPROC_INT64;
    default: return rx_type(a->arg, t);
    }
}

static dn d_group(dn in, int nkeys, const char *const *keys, int naggs, const ragg *aggs)
{
    case_needs_fp64 = 0;
    const rtab *t = in.ref;
    int kj[8];
    for (int k = 0; k < nkeys; k++)
        kj[k] = rtab_find(t, keys[k]);
    for (int a = 0; a < naggs; a++) /* every argument's columns, count's too */
        if (aggs[a].arg)
            (void)rx_kind(aggs[a].arg, t);
    /* group ids by a quadratic scan: fine for a few hundred rows */
    size_t *gid = calloc(t->rows + 1, sizeof *gid), *first = calloc(t->rows + 1, sizeof *first);
    size_t groups = 0;
    for (size_t i = 0; i < t->rows; i++) {
        size_t g = groups;
        for (size_t h = 0; h < groups && g == groups; h++) {
            int same = 1;
            for (int k = 0; k < nkeys && same; k++)
                same = t->v[kj[k]][first[h]].i == t->v[kj[k]][i].i;
            if (same)
                g = h;
        }
        if (g == groups)
            first[groups++] = i;
        gid[i] = g;
    }
    if (nkeys == 0)
        groups = 1;
    rtab *o = rtab_new(groups);
    for (int k = 0; k < nkeys; k++)
        rtab_add(o, keys[k], t->types[kj[k]]);
    for (int a = 0; a < naggs; a++)
        rtab_add(o, aggs[a].name, agg_type(&aggs[a], t));
    size_t *rows = calloc(t->rows + 1, sizeof *rows);
    for (size_t g = 0; g < groups; g++) {
        size_t n = 0;
        for (size_t i = 0; i < t->rows; i++)
            if (gid[i] == g)
                rows[n++] = i;
        for (int k = 0; k < nkeys; k++)
            o->v[k][g] = t->v[kj[k]][first[g]];
        for (int a = 0; a < naggs; a++)
            o->v[nkeys + a][g] = agg_ref(&aggs[a], t, rows, n);
    }
    free(gid);
    free(first);
    free(rows);
    coproc_aggregate ca[MAXC];
    for (int a = 0; a < naggs; a++) {
        ca[a].fn = aggs[a].fn;
        ca[a].arg = aggs[a].arg ? aggs[a].arg->e : NULL;
        ca[a].name = aggs[a].name;
    }
    dn d = {SKIPPABLE(in.f64, coproc_plan_group_by(P, in.node, nkeys, keys, naggs, ca)), o, in.nodes + 1,
            in.f64 || case_needs_fp64};
    return d;
}

/* Order of two rows by one key: integers by the column's type (uint64
 * unsigned), floats with NaN after every number; -0.0 == +0.0. */
static int key_cmp(coproc_type t, cell a, cell b)
{
    if (is_flt(t)) {
        int na = isnan(a.f), nb = isnan(b.f);
        if (na || nb)
            return na - nb;
        return a.f < b.f ? -1 : a.f > b.f;
    }
    if (t == COPROC_UINT64)
        return (uint64_t)a.i < (uint64_t)b.i ? -1 : (uint64_t)a.i > (uint64_t)b.i;
    return a.i < b.i ? -1 : a.i > b.i;
}

static const rtab *sort_t;
static int sort_nk, sort_kj[8], sort_desc[8];

static int order_cmp(const void *pa, const void *pb)
{
    size_t a = *(const size_t *)pa, b = *(const size_t *)pb;
    for (int k = 0; k < sort_nk; k++) {
        int j = sort_kj[k];
        int c = key_cmp(sort_t->types[j], sort_t->v[j][a], sort_t->v[j][b]);
        if (c)
            return sort_desc[k] ? -c : c;
    }
    return a < b ? -1 : a > b; /* stable */
}

static dn d_order(dn in, int nkeys, const coproc_order_key *keys, uint64_t limit)
{
    case_needs_fp64 = 0;
    const rtab *t = in.ref;
    size_t *idx = calloc(t->rows + 1, sizeof *idx);
    for (size_t i = 0; i < t->rows; i++)
        idx[i] = i;
    sort_t = t, sort_nk = nkeys;
    for (int k = 0; k < nkeys; k++)
        sort_kj[k] = rtab_find(t, keys[k].column), sort_desc[k] = keys[k].descending;
    qsort(idx, t->rows, sizeof *idx, order_cmp);
    size_t rows = limit && limit < t->rows ? (size_t)limit : t->rows;
    rtab *o = rtab_new(rows);
    for (int j = 0; j < t->n; j++) {
        rtab_add(o, t->names[j], t->types[j]);
        for (size_t i = 0; i < rows; i++)
            o->v[j][i] = t->v[j][idx[i]];
    }
    free(idx);
    dn d = {SKIPPABLE(in.f64, coproc_plan_order_by(P, in.node, nkeys, keys, limit)), o, in.nodes + 1,
            in.f64 || case_needs_fp64};
    return d;
}

/* ---------------------------------------------------------------- comparing */

static int cell_eq(coproc_type t, cell a, cell b)
{
    if (is_flt(t))
        return (isnan(a.f) && isnan(b.f)) || a.f == b.f;
    return a.i == b.i;
}

static const rtab *row_t;
static int row_cmp(const void *pa, const void *pb)
{
    size_t a = *(const size_t *)pa, b = *(const size_t *)pb;
    for (int j = 0; j < row_t->n; j++) {
        int c = key_cmp(row_t->types[j], row_t->v[j][a], row_t->v[j][b]);
        if (c)
            return c;
    }
    return 0;
}

static size_t *row_order(const rtab *t, int ordered)
{
    size_t *idx = calloc(t->rows + 1, sizeof *idx);
    for (size_t i = 0; i < t->rows; i++)
        idx[i] = i;
    if (!ordered) {
        row_t = t;
        qsort(idx, t->rows, sizeof *idx, row_cmp);
    }
    return idx;
}

static void print_row(const char *what, const rtab *t, size_t i)
{
    fprintf(stderr, "  %s row %zu:", what, i);
    for (int j = 0; j < t->n; j++)
        if (is_flt(t->types[j]))
            fprintf(stderr, " %s=%g", t->names[j], t->v[j][i].f);
        else
            fprintf(stderr, " %s=%lld", t->names[j], (long long)t->v[j][i].i);
    fprintf(stderr, "\n");
}

/* The result table as a reference table (its columns' own types). */
static rtab *from_table(const coproc_table *t)
{
    rtab *r = rtab_new(coproc_table_rows(t));
    for (int j = 0; j < coproc_table_column_count(t); j++) {
        const coproc_column *col = coproc_table_column_at(t, j);
        assert_int_equal(coproc_column_device(col), -1); /* host columns */
        assert_int_equal(coproc_column_length(col), r->rows);
        coproc_type ty = coproc_column_type(col);
        int k = rtab_add(r, coproc_table_column_name(t, j), ty);
        const void *d = coproc_column_host_data(col);
        for (size_t i = 0; i < r->rows; i++)
            r->v[k][i] = cell_from(ty, d, i);
    }
    return r;
}

static void compare(const rtab *got, const rtab *want, int ordered, const char *ctx)
{
    if (got->n != want->n)
        fail_msg("%s: %d columns, expected %d", ctx, got->n, want->n);
    for (int j = 0; j < want->n; j++) {
        if (strcmp(got->names[j], want->names[j]) != 0 || got->types[j] != want->types[j])
            fail_msg("%s: column %d is %s %s, expected %s %s", ctx, j, got->names[j],
                     coproc_type_name(got->types[j]), want->names[j], coproc_type_name(want->types[j]));
    }
    if (got->rows != want->rows)
        fail_msg("%s: %zu rows, expected %zu", ctx, got->rows, want->rows);
    size_t *gi = row_order(got, ordered), *wi = row_order(want, ordered);
    for (size_t i = 0; i < want->rows; i++)
        for (int j = 0; j < want->n; j++)
            if (!cell_eq(want->types[j], got->v[j][gi[i]], want->v[j][wi[i]])) {
                print_row("got", got, gi[i]);
                print_row("want", want, wi[i]);
                free(gi);
                free(wi);
                fail_msg("%s: row %zu column %s differs", ctx, i, want->names[j]);
            }
    free(gi);
    free(wi);
}

/* Run d's plan one operator at a time and compare with its reference. */
static void check(dn d, int ordered, const char *ctx)
{
    if (coproc_plan_status(P) != COPROC_OK)
        fail_msg("%s: building: %s", ctx, coproc_plan_errmsg(P));
    coproc_query_options o;
    coproc_query_options_init(&o);
    o.mode = COPROC_QUERY_OPERATORS;
    coproc_query_result r;
    int yields_f64 = 0;
    for (int j = 0; j < d.ref->n; j++)
        yields_f64 |= d.ref->types[j] == COPROC_FLOAT64;
    if (!fp64 && (d.f64 || yields_f64)) {
        print_message("skipped (device has no fp64): %s\n", ctx);
        cases_skipped++;
        return;
    }
    coproc_status s = coproc_query_run(P, d.node, &o, &r);
    /* float64 in between (a float sum cast back, say): refused, saying why */
    if (!fp64 && s == COPROC_UNSUPPORTED && strstr(coproc_errmsg(rt), "float64 needs fp64")) {
        print_message("skipped (device has no fp64: %s): %s\n", coproc_errmsg(rt), ctx);
        cases_skipped++;
        return;
    }
    if (s != COPROC_OK)
        fail_msg("%s: coproc_query_run -> %s: %s", ctx, coproc_status_name(s), coproc_errmsg(rt));
    cases_run++;
    compare(from_table(r.table), d.ref, ordered, ctx);
    /* one report per node, in execution order */
    assert_int_equal(r.pipelines, d.nodes);
    double t = 0;
    for (int k = 0; k < r.pipelines; k++) {
        const coproc_pipeline_info *pi = &r.pipeline[k];
        assert_int_equal(pi->fused, 0);
        assert_true(strncmp(pi->what, "operators: ", 11) == 0);
        assert_true(pi->device >= -1 && pi->device < coproc_device_count(rt));
        assert_true(pi->start_s >= t - 1e-9 && pi->end_s >= pi->start_s);
        t = pi->start_s;
    }
    assert_true(r.seconds >= 0);
    coproc_query_result_free(&r);
}

static void plan_begin(void)
{
    npool = 0;
    assert_ok(rt, coproc_plan_create(rt, &P));
}

static void plan_end(void)
{
    coproc_plan_free(P);
    P = NULL;
}

/* ---------------------------------------------------------------- tests */

#define N_FACT 400
#define N_DIM 40

static void test_scan_and_project(void **state)
{
    (void)state;
    ttab A;
    make_fact(&A, N_FACT, -1);
    plan_begin();
    dn s = d_scan(&A, "A");
    check(s, 1, "scan");
    {
        const char *names[] = {"u2", "f", "id", "i2", "seven", "half", "same"};
        rx *e[] = {COL("u"), COL("f32"), COL("id"), COL("id"), INT(7), FLT(0.5), COL("k3")};
        check(d_project(s, 7, names, e), 1, "project columns and constants");
    }
    {
        const char *names[] = {"sum", "diff", "prod", "quot", "wrap", "minneg", "rdiv", "rsub",
                               "mix", "fdiv", "fsub", "b", "c0", "u64x", "u32x", "div0"};
        rx *e[] = {ARITH(COPROC_ARITH_ADD, COL("k1"), COL("big")),
                   ARITH(COPROC_ARITH_SUB, COL("big"), COL("v")),
                   ARITH(COPROC_ARITH_MUL, COL("big"), COL("k2")),
                   ARITH(COPROC_ARITH_DIV, COL("big"), COL("k1")), /* k1 has zeros */
                   ARITH(COPROC_ARITH_ADD, COL("big"), INT(INT64_MAX)),
                   ARITH(COPROC_ARITH_DIV, COL("big"), INT(-1)), /* INT64_MIN / -1 */
                   ARITH(COPROC_ARITH_DIV, INT(1000), COL("k1")),
                   ARITH(COPROC_ARITH_SUB, INT(INT64_MIN), COL("big")),
                   ARITH(COPROC_ARITH_ADD, COL("k1"), FLT(0.25)),
                   ARITH(COPROC_ARITH_DIV, COL("f32"), COL("f64")), /* x/0, 0/0, inf/inf */
                   ARITH(COPROC_ARITH_SUB, FLT(1.5), COL("f32")),
                   CMP(COPROC_CMP_GT, COL("k1"), INT(0)),
                   ARITH(COPROC_ARITH_MUL, INT(3), INT(-4)),
                   ARITH(COPROC_ARITH_ADD, COL("u"), INT(1)),
                   ARITH(COPROC_ARITH_MUL, COL("k3"), COL("w")),
                   ARITH(COPROC_ARITH_DIV, COL("v"), INT(0))};
        check(d_project(s, 16, names, e), 1, "project arithmetic");
    }
    {
        const char *names[] = {"x"};
        rx *e[] = {ARITH(COPROC_ARITH_MUL, ARITH(COPROC_ARITH_ADD, COL("v"), COL("k1")),
                         ARITH(COPROC_ARITH_SUB, COL("f64"), ARITH(COPROC_ARITH_DIV, COL("k3"), INT(2))))};
        dn p = d_project(s, 1, names, e);
        const char *n2[] = {"y", "x"};
        rx *e2[] = {ARITH(COPROC_ARITH_ADD, COL("x"), FLT(1)), COL("x")};
        check(d_project(p, 2, n2, e2), 1, "project of a project");
    }
    plan_end();
    ttab_free(&A);
    free_made();
}

static void test_filters(void **state)
{
    (void)state;
    ttab A;
    make_fact(&A, N_FACT, -1);
    plan_begin();
    dn s = d_scan(&A, "A");
    static const char *const cols[] = {"k1", "k2", "k3", "u", "big", "v", "f32", "f64"};
    char ctx[128];
    /* every comparison, each column against int and float constants, both ways round */
    for (int op = COPROC_CMP_EQ; op <= COPROC_CMP_GE; op++)
        for (int c = 0; c < 8; c++) {
            static const int64_t ik[] = {0, 3, 2, 5, -1, 17, 0, -2};
            static const double fk[] = {0.5, 3.0, 2.5, 5.0, -1.0, -7.5, 0.25, -0.0};
            snprintf(ctx, sizeof ctx, "%s cmp %d int", cols[c], op);
            check(d_filter(s, CMP(op, COL(cols[c]), INT(ik[c]))), 1, ctx);
            snprintf(ctx, sizeof ctx, "%s cmp %d float", cols[c], op);
            check(d_filter(s, CMP(op, COL(cols[c]), FLT(fk[c]))), 1, ctx);
            snprintf(ctx, sizeof ctx, "int cmp %d %s", op, cols[c]);
            check(d_filter(s, CMP(op, INT(ik[c]), COL(cols[c]))), 1, ctx);
        }
    /* column against column: ints (wide and narrow), floats with NaN and inf, mixed */
    static const char *const pairs[][2] = {{"big", "k2"}, {"k1", "k3"}, {"big", "big"}, {"u", "big"},
                                           {"f32", "f64"}, {"f64", "f64"}, {"k1", "f32"},
                                           {"big", "f64"}, {"w", "k3"}, {"v", "k1"}};
    for (int op = COPROC_CMP_EQ; op <= COPROC_CMP_GE; op++)
        for (size_t k = 0; k < sizeof pairs / sizeof pairs[0]; k++) {
            snprintf(ctx, sizeof ctx, "%s cmp %d %s", pairs[k][0], op, pairs[k][1]);
            check(d_filter(s, CMP(op, COL(pairs[k][0]), COL(pairs[k][1]))), 1, ctx);
        }
    /* constants out of a column's range, arithmetic on both sides */
    check(d_filter(s, CMP(COPROC_CMP_LT, COL("k1"), INT((int64_t)1 << 40))), 1, "int32 < 2^40");
    check(d_filter(s, CMP(COPROC_CMP_GT, COL("k3"), INT(-1))), 1, "uint32 > -1");
    check(d_filter(s, CMP(COPROC_CMP_EQ, COL("k3"), INT(UINT32_MAX))), 1, "uint32 == max");
    check(d_filter(s, CMP(COPROC_CMP_LT, COL("u"), INT(0))), 1, "uint64 < 0 (int64 bits)");
    check(d_filter(s, CMP(COPROC_CMP_LE, ARITH(COPROC_ARITH_ADD, COL("big"), INT(1)),
                          ARITH(COPROC_ARITH_MUL, COL("k2"), INT(2)))), 1, "expr <= expr");
    check(d_filter(s, CMP(COPROC_CMP_GT, ARITH(COPROC_ARITH_SUB, COL("f32"), COL("v")), FLT(0))), 1,
          "float expr > 0");
    /* BETWEEN (inclusive), IN, AND/OR/NOT */
    check(d_filter(s, BETWEEN(COL("k1"), INT(-2), INT(3))), 1, "between int");
    check(d_filter(s, BETWEEN(COL("f32"), FLT(-1.5), INT(2))), 1, "between float");
    check(d_filter(s, BETWEEN(COL("v"), COL("k1"), ARITH(COPROC_ARITH_MUL, COL("k1"), INT(10)))), 1,
          "between columns");
    check(d_filter(s, BETWEEN(INT(0), COL("k1"), COL("v"))), 1, "constant between columns");
    {
        rx *l1[] = {INT(-5), INT(0), INT(4)};
        check(d_filter(s, IN(COL("k1"), 3, l1)), 1, "in int");
        rx *l2[] = {FLT(2.5), INT(-3), FLT(NAN), FLT(INFINITY)};
        check(d_filter(s, IN(COL("f32"), 4, l2)), 1, "in float");
        rx *l3[] = {INT(2)};
        check(d_filter(s, IN(COL("k3"), 1, l3)), 1, "in one");
        rx *l4[] = {FLT(1.0), INT(3), FLT(2.5)};
        check(d_filter(s, IN(COL("k1"), 3, l4)), 1, "int in floats");
        rx *l5[] = {INT(-1), INT(INT64_MIN)};
        check(d_filter(s, IN(COL("u"), 2, l5)), 1, "uint64 in int64 bits");
        rx *l6[] = {INT(1), INT(2)};
        check(d_filter(s, NOT(IN(ARITH(COPROC_ARITH_ADD, COL("k1"), COL("k3")), 2, l6))), 1, "not in");
    }
    rx *a = CMP(COPROC_CMP_GT, COL("k1"), INT(0)), *b = CMP(COPROC_CMP_LT, COL("f64"), FLT(3));
    rx *c = CMP(COPROC_CMP_NE, COL("k3"), INT(2));
    check(d_filter(s, AND(a, b)), 1, "and");
    check(d_filter(s, OR(a, b)), 1, "or");
    check(d_filter(s, NOT(b)), 1, "not (NaN rows pass)");
    check(d_filter(s, AND(OR(a, b), NOT(c))), 1, "(a or b) and not c");
    check(d_filter(s, OR(AND(a, b), AND(c, NOT(a)))), 1, "(a and b) or (c and not a)");
    check(d_filter(s, OR(OR(a, b), OR(c, CMP(COPROC_CMP_EQ, COL("big"), COL("k2"))))), 1,
          "four ors");
    check(d_filter(s, AND(NOT(NOT(a)), BETWEEN(COL("v"), INT(-10), INT(10)))), 1, "not not");
    /* constant predicates, every row and no row */
    check(d_filter(s, CMP(COPROC_CMP_LT, INT(1), INT(2))), 1, "1 < 2");
    check(d_filter(s, CMP(COPROC_CMP_GT, FLT(NAN), INT(2))), 1, "NaN > 2");
    check(d_filter(s, AND(CMP(COPROC_CMP_NE, FLT(NAN), FLT(NAN)), a)), 1, "NaN != NaN and a");
    check(d_filter(s, CMP(COPROC_CMP_GE, COL("id"), INT(0))), 1, "every row");
    check(d_filter(s, CMP(COPROC_CMP_LT, COL("id"), INT(0))), 1, "no row");
    /* filter over filter, then project */
    dn f1 = d_filter(s, a);
    dn f2 = d_filter(f1, CMP(COPROC_CMP_NE, COL("k2"), INT(0)));
    const char *names[] = {"id", "r"};
    rx *e[] = {COL("id"), ARITH(COPROC_ARITH_DIV, COL("big"), COL("k1"))};
    check(d_project(f2, 2, names, e), 1, "filter > filter > project");
    plan_end();
    ttab_free(&A);
    free_made();
}

static void test_joins(void **state)
{
    (void)state;
    ttab A, B;
    make_fact(&A, N_FACT, -1);
    make_dim(&B, N_DIM);
    plan_begin();
    dn a = d_scan(&A, "A"), b = d_scan(&B, "B");
    check(d_join(COPROC_JOIN_INNER, a, "k1", b, "dk"), 0, "inner int32 = int64, duplicates");
    check(d_join(COPROC_JOIN_INNER, a, "k3", b, "dk3"), 0, "inner uint32 = uint32");
    check(d_join(COPROC_JOIN_INNER, a, "u", b, "bu"), 0, "inner uint64 = int64 (bits)");
    check(d_join(COPROC_JOIN_INNER, b, "dk", a, "k1"), 0, "inner, the dimension probing");
    check(d_join(COPROC_JOIN_INNER, a, "k1", b, "dc"), 0, "inner, few matches");
    dn bf = d_filter(b, CMP(COPROC_CMP_GT, COL("dv"), FLT(0)));
    check(d_join(COPROC_JOIN_SEMI, a, "k1", bf, "dk"), 1, "semi");
    check(d_join(COPROC_JOIN_SEMI, a, "k3", b, "dk3"), 1, "semi uint32");
    check(d_join(COPROC_JOIN_SEMI, a, "id", b, "bid"), 1, "semi, ids");
    check(d_join(COPROC_JOIN_SEMI, a, "id", a, "id"), 1, "semi, every row");
    dn none = d_filter(b, CMP(COPROC_CMP_GT, COL("dv"), FLT(100)));
    check(d_join(COPROC_JOIN_INNER, a, "k1", none, "dk"), 0, "inner, empty build");
    check(d_join(COPROC_JOIN_SEMI, a, "k1", none, "dk"), 1, "semi, empty build");
    check(d_join(COPROC_JOIN_INNER, none, "dk", a, "k1"), 0, "inner, empty probe");
    /* join > filter > project, and a join ordered by unique keys */
    dn j = d_join(COPROC_JOIN_INNER, d_filter(a, CMP(COPROC_CMP_LT, COL("v"), INT(50))), "k1", bf, "dk");
    dn jf = d_filter(j, CMP(COPROC_CMP_GT, COL("dv"), COL("f64")));
    const char *names[] = {"id", "bid", "x"};
    rx *e[] = {COL("id"), COL("bid"), ARITH(COPROC_ARITH_MUL, COL("dv"), COL("v"))};
    dn jp = d_project(jf, 3, names, e);
    check(jp, 0, "filter > join > filter > project");
    coproc_order_key ok[] = {{"id", 0, 0}, {"bid", 1, 0}};
    check(d_order(jp, 2, ok, 0), 1, "... > order by id, bid desc");
    /* two joins */
    dn j2 = d_join(COPROC_JOIN_INNER, d_join(COPROC_JOIN_SEMI, a, "k3", b, "dk3"), "k1", b, "dk");
    check(j2, 0, "semi then inner");
    plan_end();
    ttab_free(&A);
    ttab_free(&B);
    free_made();
}

static void test_group_by(void **state)
{
    (void)state;
    ttab A, B;
    make_fact(&A, N_FACT, -1);
    make_dim(&B, N_DIM);
    plan_begin();
    dn s = d_scan(&A, "A");
    ragg all[] = {
        {COPROC_AGG_SUM, COL("v"), "sum_v"},
        {COPROC_AGG_SUM, COL("f32"), "sum_f32"},
        {COPROC_AGG_SUM, COL("k3"), "sum_k3"},
        {COPROC_AGG_SUM, COL("u"), "sum_u"},
        {COPROC_AGG_SUM, COL("big"), "sum_big"}, /* wraps */
        {COPROC_AGG_SUM, ARITH(COPROC_ARITH_ADD, ARITH(COPROC_ARITH_MUL, COL("v"), INT(2)), INT(1)), "sum_e"},
        {COPROC_AGG_COUNT, NULL, "n"},
        {COPROC_AGG_COUNT, COL("f64"), "n_f64"},
        {COPROC_AGG_MIN, COL("k1"), "min_k1"},
        {COPROC_AGG_MAX, COL("k2"), "max_k2"},
        {COPROC_AGG_MIN, COL("k3"), "min_k3"},
        {COPROC_AGG_MAX, COL("k3"), "max_k3"},
        {COPROC_AGG_MIN, COL("u"), "min_u"},
        {COPROC_AGG_MAX, COL("u"), "max_u"},
        {COPROC_AGG_MIN, COL("f32"), "min_f32"},
        {COPROC_AGG_MAX, COL("f32"), "max_f32"},
        {COPROC_AGG_MIN, COL("big"), "min_big"},
        {COPROC_AGG_MAX, ARITH(COPROC_ARITH_ADD, COL("v"), FLT(0.5)), "max_e"},
        {COPROC_AGG_AVG, COL("v"), "avg_v"},
        {COPROC_AGG_AVG, COL("k3"), "avg_k3"},
        {COPROC_AGG_AVG, ARITH(COPROC_ARITH_DIV, COL("v"), FLT(4)), "avg_e"},
    };
    int na = sizeof all / sizeof all[0];
    ragg finite[] = { /* over float columns without NaN (f64 filtered) */
        {COPROC_AGG_SUM, COL("f64"), "sum_f64"},
        {COPROC_AGG_MIN, COL("f64"), "min_f64"},
        {COPROC_AGG_MAX, COL("f64"), "max_f64"},
        {COPROC_AGG_AVG, COL("f64"), "avg_f64"},
        {COPROC_AGG_COUNT, NULL, "n"},
    };
    dn fin = d_filter(s, BETWEEN(COL("f64"), INT(-100), INT(100)));
    check(d_group(s, 0, NULL, na, all), 1, "no keys");
    check(d_group(fin, 0, NULL, 5, finite), 1, "no keys, float64");
    dn none = d_filter(s, CMP(COPROC_CMP_LT, COL("id"), INT(0)));
    check(d_group(none, 0, NULL, na, all), 1, "no keys, no rows");
    check(d_group(none, 0, NULL, 5, finite), 1, "no keys, no rows, float64");
    {
        const char *k[] = {"k1"};
        check(d_group(none, 1, k, na, all), 0, "one key, no rows");
        check(d_group(s, 1, k, na, all), 0, "k1");
        check(d_group(fin, 1, k, 5, finite), 0, "k1, float64");
        dn one = d_filter(s, CMP(COPROC_CMP_EQ, COL("k1"), INT(2)));
        check(d_group(one, 1, k, na, all), 0, "one group");
    }
    static const char *const single[] = {"k2", "k3", "u", "big", "id"};
    for (int k = 0; k < 5; k++) {
        char ctx[64];
        snprintf(ctx, sizeof ctx, "key %s", single[k]);
        check(d_group(s, 1, &single[k], na, all), 0, ctx);
    }
    {
        const char *k[] = {"k1", "k3"};
        check(d_group(s, 2, k, na, all), 0, "keys k1, k3");
        const char *k2[] = {"u", "k2"};
        check(d_group(s, 2, k2, na, all), 0, "keys u, k2 (wide: ranked)");
        const char *k3[] = {"k1", "k2", "u"};
        check(d_group(s, 3, k3, na, all), 0, "keys k1, k2, u");
        const char *k4[] = {"k3", "w", "k1"};
        check(d_group(s, 3, k4, na, all), 0, "keys k3, w, k1 (radix overflow)");
        const char *k5[] = {"big", "k2", "k3"};
        check(d_group(s, 3, k5, na, all), 0, "keys big, k2, k3");
        const char *k6[] = {"k1", "k3", "w", "k2", "u", "id", "v", "big"};
        check(d_group(s, 8, k6, 3, all), 0, "eight keys");
        const char *k7[] = {"k1", "k1x"};
        const char *pn[] = {"k1", "k1x", "v"};
        rx *pe[] = {COL("k1"), ARITH(COPROC_ARITH_MUL, COL("k1"), INT(3)), COL("v")};
        check(d_group(d_project(s, 3, pn, pe), 2, k7, 1, all), 0, "keys k1, 3*k1 (one per k1)");
    }
    {
        /* join > group-by > order-by > limit */
        dn j = d_join(COPROC_JOIN_INNER, s, "k1", d_scan(&B, "B"), "dk");
        const char *k[] = {"k1", "dk3"};
        ragg ag[] = {{COPROC_AGG_SUM, COL("dv"), "s"}, {COPROC_AGG_COUNT, NULL, "n"},
                     {COPROC_AGG_MAX, COL("v"), "mx"}};
        dn g = d_group(j, 2, k, 3, ag);
        check(g, 0, "join > group-by");
        coproc_order_key ok[] = {{"s", 1, 0}, {"k1", 0, 0}, {"dk3", 0, 0}};
        check(d_order(g, 3, ok, 5), 1, "join > group-by > order-by limit 5");
        /* group-by of a group-by */
        const char *k2[] = {"n"};
        ragg ag2[] = {{COPROC_AGG_COUNT, NULL, "groups"}, {COPROC_AGG_SUM, COL("s"), "ss"}};
        check(d_group(g, 1, k2, 2, ag2), 0, "group-by > group-by");
    }
    plan_end();
    ttab_free(&A);
    ttab_free(&B);
    free_made();
}

static void test_order_by(void **state)
{
    (void)state;
    ttab A;
    make_fact(&A, N_FACT, -1);
    plan_begin();
    dn s = d_scan(&A, "A");
    static const char *const cols[] = {"id", "k1", "k2", "k3", "w", "u", "big", "v", "f32", "f64"};
    for (int c = 0; c < 10; c++)
        for (int desc = 0; desc < 2; desc++) {
            char ctx[64];
            snprintf(ctx, sizeof ctx, "order by %s%s", cols[c], desc ? " desc" : "");
            coproc_order_key k = {cols[c], desc, 0};
            check(d_order(s, 1, &k, 0), 1, ctx);
        }
    coproc_order_key k2[] = {{"k1", 1, 0}, {"f64", 0, 0}};
    check(d_order(s, 2, k2, 0), 1, "k1 desc, f64");
    coproc_order_key k3[] = {{"k3", 1, 0}, {"k2", 0, 0}, {"f32", 1, 0}};
    check(d_order(s, 3, k3, 17), 1, "k3 desc, k2, f32 desc limit 17");
    check(d_order(s, 3, k3, 1), 1, "limit 1");
    check(d_order(s, 3, k3, N_FACT), 1, "limit = rows");
    check(d_order(s, 3, k3, 100000), 1, "limit > rows");
    coproc_order_key k4[] = {{"u", 0, 0}, {"big", 1, 0}, {"w", 0, 0}, {"k1", 0, 0}};
    check(d_order(s, 4, k4, 0), 1, "four keys");
    dn f = d_filter(s, CMP(COPROC_CMP_GT, COL("k1"), INT(3)));
    coproc_order_key k5[] = {{"f32", 1, 0}};
    check(d_order(f, 1, k5, 5), 1, "filter > order by f32 desc limit 5");
    const char *pn[] = {"x", "id"};
    rx *pe[] = {ARITH(COPROC_ARITH_DIV, COL("f64"), COL("f32")), COL("id")};
    coproc_order_key k6[] = {{"x", 0, 0}};
    check(d_order(d_project(s, 2, pn, pe), 1, k6, 0), 1, "order by a computed float (NaN, inf)");
    coproc_order_key kv = {"v", 0, 0}, kk = {"k1", 1, 0};
    check(d_order(d_order(s, 1, &kv, 0), 1, &kk, 0), 1, "order-by of an order-by");
    plan_end();
    ttab_free(&A);
    free_made();
}

static void test_empty_table(void **state)
{
    (void)state;
    ttab E, B;
    make_empty(&E);
    make_dim(&B, N_DIM);
    plan_begin();
    dn e = d_scan(&E, "E"), b = d_scan(&B, "B");
    check(e, 1, "scan");
    check(d_filter(e, CMP(COPROC_CMP_GT, COL("a"), COL("c"))), 1, "filter");
    const char *pn[] = {"x", "y", "a"};
    rx *pe[] = {ARITH(COPROC_ARITH_ADD, COL("a"), COL("b")), CMP(COPROC_CMP_EQ, COL("c"), INT(1)), COL("a")};
    check(d_project(e, 3, pn, pe), 1, "project");
    ragg ag[] = {{COPROC_AGG_SUM, COL("a"), "s"}, {COPROC_AGG_SUM, COL("b"), "sb"},
                 {COPROC_AGG_COUNT, NULL, "n"}, {COPROC_AGG_MIN, COL("b"), "mn"},
                 {COPROC_AGG_MAX, COL("c"), "mx"}, {COPROC_AGG_AVG, COL("a"), "avg"}};
    check(d_group(e, 0, NULL, 6, ag), 1, "group-by, no keys");
    const char *k[] = {"a", "c"};
    check(d_group(e, 2, k, 6, ag), 1, "group-by, two keys");
    coproc_order_key ok[] = {{"b", 1, 0}, {"a", 0, 0}};
    check(d_order(e, 2, ok, 3), 1, "order-by");
    check(d_join(COPROC_JOIN_INNER, e, "a", b, "dk"), 1, "join, empty probe");
    check(d_join(COPROC_JOIN_INNER, b, "dk", e, "a"), 1, "join, empty build");
    check(d_join(COPROC_JOIN_SEMI, b, "dk", e, "c"), 1, "semi, empty build");
    check(d_join(COPROC_JOIN_SEMI, e, "c", b, "bu"), 1, "semi, empty probe");
    plan_end();
    ttab_free(&E);
    ttab_free(&B);
    free_made();
}

static void test_device_columns(void **state)
{
    (void)state;
    ttab D;
    make_fact(&D, N_FACT, 0);
    plan_begin();
    dn s = d_scan(&D, "D");
    check(s, 1, "scan of device columns");
    dn f = d_filter(s, OR(CMP(COPROC_CMP_LT, COL("f32"), COL("f64")), CMP(COPROC_CMP_EQ, COL("k3"), INT(2))));
    const char *pn[] = {"id", "x", "k1"};
    rx *pe[] = {COL("id"), ARITH(COPROC_ARITH_SUB, COL("big"), COL("k2")), COL("k1")};
    coproc_order_key ok[] = {{"k1", 1, 0}};
    check(d_order(d_project(f, 3, pn, pe), 1, ok, 50), 1, "device columns: filter > project > order");
    const char *k[] = {"k3"};
    ragg ag[] = {{COPROC_AGG_SUM, COL("v"), "s"}, {COPROC_AGG_MIN, COL("f32"), "m"}};
    check(d_group(s, 1, k, 2, ag), 0, "device columns: group-by");
    plan_end();
    ttab_free(&D);
    free_made();
}

static void test_errors(void **state)
{
    (void)state;
    ttab A, B;
    make_fact(&A, 64, -1);
    make_dim(&B, 16);
    coproc_query_options o;
    coproc_query_options_init(&o);
    o.mode = COPROC_QUERY_OPERATORS;
    coproc_query_result r;

    /* a device out of range */
    plan_begin();
    dn s = d_scan(&A, "A");
    o.device = coproc_device_count(rt);
    assert_status(COPROC_INVALID_ARGUMENT, coproc_query_run(P, s.node, &o, &r));
    assert_null(r.table);
    o.device = -1;
    /* a fixed device runs too */
    o.device = 0;
    assert_ok(rt, coproc_query_run(P, d_filter(s, CMP(COPROC_CMP_GT, COL("k1"), INT(0))).node, &o, &r));
    for (int k = 0; k < r.pipelines; k++)
        assert_true(r.pipeline[k].device == -1 || r.pipeline[k].device == 0);
    coproc_query_result_free(&r);
    o.device = -1;
    plan_end();

    /* a plan built with a missing column names the node */
    plan_begin();
    s = d_scan(&A, "A");
    coproc_node *bad = coproc_plan_filter(P, s.node, coproc_expr_compare(P, COPROC_CMP_GT,
                                          coproc_expr_column(P, "nope"), coproc_expr_int(P, 1)));
    assert_null(bad);
    assert_status(COPROC_INVALID_ARGUMENT, coproc_query_run(P, s.node, &o, &r));
    assert_null(r.table);
    assert_non_null(strstr(coproc_errmsg(rt), "filter#"));
    assert_non_null(strstr(coproc_errmsg(rt), "nope"));
    plan_end();

    /* a failure at every operator of a run: named, and nothing left behind
     * (the ASan build finds any leak) */
    plan_begin();
    s = d_scan(&A, "A");
    dn b = d_scan(&B, "B");
    /* Without fp64: the same shape over integers (a float compare casts to
     * float64 one operator at a time; avg yields float64). */
    const char *f32 = fp64 ? "f32" : "k3", *f64 = fp64 ? "f64" : "w", *dv = fp64 ? "dv" : "dc";
    dn f = d_filter(s, OR(CMP(COPROC_CMP_LT, COL("big"), COL("k2")), NOT(CMP(COPROC_CMP_GT, COL(f32), COL(f64)))));
    dn j = d_join(COPROC_JOIN_INNER, f, "k1", b, "dk");
    const char *pn[] = {"k1", "u", "x", "dv", "w"};
    rx *pe[] = {COL("k1"), COL("u"), ARITH(COPROC_ARITH_DIV, INT(5), COL("v")), COL(dv), COL("w")};
    dn p = d_project(j, 5, pn, pe);
    const char *k[] = {"k1", "u", "w"};
    ragg ag[] = {{COPROC_AGG_SUM, COL("x"), "s"}, {fp64 ? COPROC_AGG_AVG : COPROC_AGG_MAX, COL("dv"), "a"},
                 {COPROC_AGG_MIN, COL("u"), "m"}, {COPROC_AGG_COUNT, NULL, "n"}};
    dn g = d_group(p, 3, k, 4, ag);
    coproc_order_key ok[] = {{"a", 1, 0}, {"k1", 0, 0}, {"u", 0, 0}, {"w", 1, 0}}; /* a total order */
    dn root = d_order(d_join(COPROC_JOIN_SEMI, g, "k1", b, "dk"), 4, ok, 0);
    int failures = 0;
    for (int at = 1; at < 1000; at++) {
        char v[16];
        snprintf(v, sizeof v, "%d", at);
        setenv("COPROC_TEST_QUERY_FAIL_OP", v, 1);
        coproc_status st = coproc_query_run(P, root.node, &o, &r);
        unsetenv("COPROC_TEST_QUERY_FAIL_OP");
        if (st == COPROC_OK) {
            compare(from_table(r.table), root.ref, 1, "after the injected failures");
            coproc_query_result_free(&r);
            break;
        }
        if (st != COPROC_INTERNAL)
            fail_msg("operator %d: %s: %s", at, coproc_status_name(st), coproc_errmsg(rt));
        assert_null(r.table);
        assert_int_equal(r.pipelines, 0);
        assert_null(r.pipeline);
        const char *msg = coproc_errmsg(rt);
        if (!strstr(msg, "injected") || !strstr(msg, "#"))
            fail_msg("operator %d: message \"%s\"", at, msg);
        failures++;
    }
    assert_true(failures > 20);
    plan_end();

    /* a root of another plan */
    coproc_plan *other;
    assert_ok(rt, coproc_plan_create(rt, &other));
    plan_begin();
    s = d_scan(&A, "A");
    assert_status(COPROC_INVALID_ARGUMENT, coproc_query_run(other, s.node, &o, &r));
    coproc_plan_free(other);
    plan_end();
    ttab_free(&A);
    ttab_free(&B);
    free_made();
}

static void test_submit(void **state)
{
    (void)state;
    ttab A;
    make_fact(&A, N_FACT, -1);
    plan_begin();
    dn s = d_scan(&A, "A");
    const char *k[] = {"k1"};
    ragg ag[] = {{COPROC_AGG_SUM, COL("v"), "s"}};
    dn g = d_group(d_filter(s, CMP(COPROC_CMP_NE, COL("k3"), INT(1))), 1, k, 1, ag);
    coproc_query_options o;
    coproc_query_options_init(&o);
    o.mode = COPROC_QUERY_OPERATORS;
    coproc_query_task *t1, *t2;
    assert_ok(rt, coproc_query_submit(P, g.node, &o, &t1));
    assert_ok(rt, coproc_query_submit(P, g.node, &o, &t2));
    coproc_query_result r1, r2;
    assert_ok(rt, coproc_query_wait(t1, &r1));
    assert_ok(rt, coproc_query_wait(t2, &r2));
    compare(from_table(r1.table), g.ref, 0, "submitted, first");
    compare(from_table(r2.table), g.ref, 0, "submitted, second");
    coproc_query_result_free(&r1);
    coproc_query_result_free(&r2);
    plan_end();
    ttab_free(&A);
    free_made();
}

/* MIN/MAX ignore NaN unless every row of the group is NaN; SUM/AVG take it. */
static void test_nan_groups(void **state)
{
    (void)state;
    ttab T;
    ttab_init(&T, 7);
    int64_t *k = arr(COPROC_INT64, 7);
    float *f = arr(COPROC_FLOAT32, 7);
    double *g = arr(COPROC_FLOAT64, 7);
    const int64_t kv[] = {1, 1, 2, 2, 3, 4, 4};
    const float fv[] = {NAN, NAN, 1.0f, NAN, -0.5f, INFINITY, -2.0f};
    for (int i = 0; i < 7; i++)
        k[i] = kv[i], f[i] = fv[i], g[i] = NAN;
    ttab_add(&T, "k", COPROC_INT64, k, -1);
    ttab_add(&T, "f", COPROC_FLOAT32, f, -1);
    ttab_add(&T, "g", COPROC_FLOAT64, g, -1);
    plan_begin();
    dn s = d_scan(&T, "T");
    ragg ag[] = {{COPROC_AGG_MIN, COL("f"), "mn"}, {COPROC_AGG_MAX, COL("f"), "mx"},
                 {COPROC_AGG_SUM, COL("f"), "sm"}, {COPROC_AGG_AVG, COL("f"), "av"},
                 {COPROC_AGG_COUNT, COL("f"), "n"}, {COPROC_AGG_MIN, COL("g"), "gmn"},
                 {COPROC_AGG_MAX, ARITH(COPROC_ARITH_MUL, COL("f"), INT(2)), "mx2"}};
    const char *key[] = {"k"};
    check(d_group(s, 1, key, 7, ag), 0, "NaN groups");
    check(d_group(s, 0, NULL, 7, ag), 1, "NaN, no keys");
    check(d_group(d_filter(s, CMP(COPROC_CMP_LE, COL("k"), INT(1))), 0, NULL, 7, ag), 1,
          "every value NaN, no keys");
    coproc_order_key ok[] = {{"f", 1, 0}, {"k", 1, 0}};
    check(d_order(s, 2, ok, 0), 1, "NaN first descending");
    ok[0].descending = 0;
    check(d_order(s, 2, ok, 0), 1, "NaN last ascending");
    plan_end();
    ttab_free(&T);
    free_made();
}

static int setup(void **state)
{
    (void)state;
    rt = test_open(NULL);
    fp64 = 0;
    for (int d = 0; d < coproc_device_count(rt); d++) {
        coproc_device_info info;
        assert_int_equal(coproc_device_info_get(rt, d, &info), COPROC_OK);
        fp64 |= info.has_fp64;
    }
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    if (!fp64)
        print_message("no fp64: %d cases run, %d skipped (float64)\n", cases_run,
                      cases_skipped);
    coproc_close(rt);
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_scan_and_project),
        cmocka_unit_test(test_filters),
        cmocka_unit_test(test_joins),
        cmocka_unit_test(test_group_by),
        cmocka_unit_test(test_order_by),
        cmocka_unit_test(test_nan_groups),
        cmocka_unit_test(test_empty_table),
        cmocka_unit_test(test_device_columns),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_submit),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
