/* test_query.c - whole plans (coproc/query.h) against plain scalar C, in both
 * modes (fused pipelines, one operator at a time) and on both kernel paths:
 * filters with every kind of expression, projections, inner and semi joins
 * over dense and sparse keys, group-by with 0-2 keys and every aggregate,
 * order-by with limit; empty inputs, nothing or everything passing; and plans
 * that must fail with a status naming the node. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coproc/query.h"
#include "testlib.h"

/* ---------------------------------------------------------------- data */

#define DIM 50        /* dense dimension: keys 1..DIM */
#define SPARSE 40     /* sparse dimension: keys k * 1000003 + 7 */
#define PAIRS 61      /* dimension keyed by two columns */

typedef struct data {
    size_t n;
    int32_t *fk, *a;
    int64_t *b, *sk;
    uint32_t *u;
    double *x;
    float *y;
    int32_t tk[DIM], tg[DIM];
    int64_t tw[DIM];
    int64_t hk[SPARSE];
    int32_t hv[SPARSE];
    int32_t dupk[6], dupv[6];   /* a dimension with duplicate keys */
    int32_t gk[5], gv[5];       /* keyed by the dense dimension's tg */
    int32_t pk1[PAIRS], pv[PAIRS]; /* a dimension keyed by (pk1, pk2), one pair twice */
    int64_t pk2[PAIRS];
} data;

static void make_data(data *d, size_t n, uint64_t seed)
{
    test_rng r = {seed};
    memset(d, 0, sizeof *d);
    d->n = n;
    size_t m = n ? n : 1;
    d->fk = malloc(m * 4), d->a = malloc(m * 4), d->b = malloc(m * 8), d->sk = malloc(m * 8);
    d->u = malloc(m * 4), d->x = malloc(m * 8), d->y = malloc(m * 4);
    for (size_t i = 0; i < n; i++) {
        d->fk[i] = (int32_t)test_rand_below(&r, DIM + 5);          /* 0 and > DIM miss */
        d->a[i] = (int32_t)test_rand_below(&r, 101) - 50;
        uint64_t k = test_rand_below(&r, 10);
        d->b[i] = k == 0 ? INT64_MAX - (int64_t)test_rand_below(&r, 3)
                : k == 1 ? INT64_MIN + (int64_t)test_rand_below(&r, 3)
                         : (int64_t)test_rand_below(&r, 2000001) - 1000000;
        d->sk[i] = (int64_t)test_rand_below(&r, SPARSE + 10) * 1000003 + 7;
        d->u[i] = (uint32_t)test_rand(&r);
        d->x[i] = ((double)test_rand_below(&r, 20001) - 10000) / 64.0;
        d->y[i] = (float)((double)test_rand_below(&r, 2001) - 1000) / 8.0f;
    }
    for (int i = 0; i < DIM; i++) {
        d->tk[i] = DIM - i; /* not in order */
        d->tg[i] = (DIM - i) % 5;
        d->tw[i] = (int64_t)(DIM - i) * 1000;
    }
    for (int i = 0; i < SPARSE; i++) {
        d->hk[i] = (int64_t)i * 1000003 + 7;
        d->hv[i] = i % 3;
    }
    for (int i = 0; i < 6; i++) {
        d->dupk[i] = 1 + i % 3; /* keys 1, 2, 3 twice each */
        d->dupv[i] = i;
    }
    for (int i = 0; i < 5; i++) {
        d->gk[i] = 4 - i;
        d->gv[i] = i % 2;
    }
    for (int i = 0; i < PAIRS; i++) {
        int j = i < PAIRS - 1 ? i : 0; /* the last row repeats the first's key */
        d->pk1[i] = 1 + j % 20;
        d->pk2[i] = (j * 7) % 101 - 50;
        d->pv[i] = i % 7;
    }
}

static void free_data(data *d)
{
    free(d->fk), free(d->a), free(d->b), free(d->sk), free(d->u), free(d->x), free(d->y);
}

typedef struct tables {
    coproc_table *f, *t, *h, *dup, *g, *pair;
    coproc_table *f_no64; /* the fact table less its float64 column x (devices without fp64) */
    coproc_column *cols[24];
    int ncols;
} tables;

static void add(coproc_runtime *rt, tables *tb, coproc_table *t, const char *name, coproc_type ty,
                const void *p, size_t n)
{
    coproc_column *c;
    assert_int_equal(coproc_column_wrap(rt, ty, n ? p : NULL, n, &c), COPROC_OK);
    tb->cols[tb->ncols++] = c;
    assert_int_equal(coproc_table_add(t, name, c), COPROC_OK);
    if (t == tb->f && ty != COPROC_FLOAT64)
        assert_int_equal(coproc_table_add(tb->f_no64, name, c), COPROC_OK);
}

static void make_tables(coproc_runtime *rt, const data *d, tables *tb)
{
    memset(tb, 0, sizeof *tb);
    assert_int_equal(coproc_table_create(rt, &tb->f), COPROC_OK);
    assert_int_equal(coproc_table_create(rt, &tb->f_no64), COPROC_OK);
    assert_int_equal(coproc_table_create(rt, &tb->t), COPROC_OK);
    assert_int_equal(coproc_table_create(rt, &tb->h), COPROC_OK);
    assert_int_equal(coproc_table_create(rt, &tb->dup), COPROC_OK);
    assert_int_equal(coproc_table_create(rt, &tb->g), COPROC_OK);
    assert_int_equal(coproc_table_create(rt, &tb->pair), COPROC_OK);
    add(rt, tb, tb->f, "fk", COPROC_INT32, d->fk, d->n);
    add(rt, tb, tb->f, "a", COPROC_INT32, d->a, d->n);
    add(rt, tb, tb->f, "b", COPROC_INT64, d->b, d->n);
    add(rt, tb, tb->f, "sk", COPROC_INT64, d->sk, d->n);
    add(rt, tb, tb->f, "u", COPROC_UINT32, d->u, d->n);
    add(rt, tb, tb->f, "x", COPROC_FLOAT64, d->x, d->n);
    add(rt, tb, tb->f, "y", COPROC_FLOAT32, d->y, d->n);
    add(rt, tb, tb->t, "tk", COPROC_INT32, d->tk, DIM);
    add(rt, tb, tb->t, "tg", COPROC_INT32, d->tg, DIM);
    add(rt, tb, tb->t, "tw", COPROC_INT64, d->tw, DIM);
    add(rt, tb, tb->h, "hk", COPROC_INT64, d->hk, SPARSE);
    add(rt, tb, tb->h, "hv", COPROC_INT32, d->hv, SPARSE);
    add(rt, tb, tb->dup, "dk", COPROC_INT32, d->dupk, 6);
    add(rt, tb, tb->dup, "dv", COPROC_INT32, d->dupv, 6);
    add(rt, tb, tb->g, "gk", COPROC_INT32, d->gk, 5);
    add(rt, tb, tb->g, "gv", COPROC_INT32, d->gv, 5);
    add(rt, tb, tb->pair, "pk1", COPROC_INT32, d->pk1, PAIRS);
    add(rt, tb, tb->pair, "pk2", COPROC_INT64, d->pk2, PAIRS);
    add(rt, tb, tb->pair, "pv", COPROC_INT32, d->pv, PAIRS);
}

static void free_tables(tables *tb)
{
    coproc_table_free(tb->f), coproc_table_free(tb->t), coproc_table_free(tb->h);
    coproc_table_free(tb->f_no64);
    coproc_table_free(tb->dup), coproc_table_free(tb->g), coproc_table_free(tb->pair);
    for (int i = 0; i < tb->ncols; i++)
        coproc_column_free(tb->cols[i]);
}

/* ---------------------------------------------------------------- expected results */

/* A result as rows of doubles-or-integers, compared in order or as a multiset. */
typedef struct rows {
    int ncols;
    size_t n, cap;
    int isf[16];
    union cell { int64_t i; double f; } *v;
} rows;

static void rows_init(rows *r, int ncols, const int *isf)
{
    memset(r, 0, sizeof *r);
    r->ncols = ncols;
    memcpy(r->isf, isf, ncols * sizeof *isf);
}

static union cell *rows_add(rows *r)
{
    if (r->n == r->cap) {
        r->cap = r->cap ? 2 * r->cap : 64;
        r->v = realloc(r->v, r->cap * r->ncols * sizeof *r->v);
    }
    return &r->v[r->n++ * r->ncols];
}

static int cell_cmp(const rows *r, const union cell *x, const union cell *y)
{
    for (int c = 0; c < r->ncols; c++) {
        if (r->isf[c]) {
            double a = x[c].f, b = y[c].f;
            if (isnan(a) || isnan(b)) {
                if (isnan(a) != isnan(b))
                    return isnan(a) ? 1 : -1;
                continue;
            }
            if (fabs(a - b) <= 1e-9 * fmax(1, fmax(fabs(a), fabs(b))))
                continue;
            return a < b ? -1 : 1;
        }
        if (x[c].i != y[c].i)
            return x[c].i < y[c].i ? -1 : 1;
    }
    return 0;
}

static const rows *sort_ctx;
static int qsort_cmp(const void *a, const void *b) { return cell_cmp(sort_ctx, a, b); }

static void rows_sort(rows *r)
{
    sort_ctx = r;
    if (r->n > 1) /* qsort's base may not be NULL, even for no rows */
        qsort(r->v, r->n, r->ncols * sizeof *r->v, qsort_cmp);
}

/* The result table as rows (every column, in order). */
static void rows_of(const coproc_table *t, rows *r)
{
    int n = coproc_table_column_count(t), isf[16];
    assert_true(n <= 16);
    for (int c = 0; c < n; c++) {
        coproc_type ty = coproc_column_type(coproc_table_column_at(t, c));
        isf[c] = ty == COPROC_FLOAT32 || ty == COPROC_FLOAT64;
    }
    rows_init(r, n, isf);
    for (size_t i = 0; i < coproc_table_rows(t); i++) {
        union cell *row = rows_add(r);
        for (int c = 0; c < n; c++) {
            const coproc_column *col = coproc_table_column_at(t, c);
            const void *p = coproc_column_host_data(col);
            switch (coproc_column_type(col)) {
            case COPROC_INT32: row[c].i = ((const int32_t *)p)[i]; break;
            case COPROC_INT64: row[c].i = ((const int64_t *)p)[i]; break;
            case COPROC_UINT32: row[c].i = ((const uint32_t *)p)[i]; break;
            case COPROC_UINT64: row[c].i = (int64_t)((const uint64_t *)p)[i]; break;
            case COPROC_FLOAT32: row[c].f = ((const float *)p)[i]; break;
            case COPROC_FLOAT64: row[c].f = ((const double *)p)[i]; break;
            default: fail();
            }
        }
    }
}

static void expect_rows(const char *what, rows *got, rows *want, int ordered)
{
    if (!ordered) {
        rows_sort(got);
        rows_sort(want);
    }
    if (got->n != want->n || got->ncols != want->ncols)
        fail_msg("%s: %zu rows x %d columns, expected %zu x %d", what, got->n, got->ncols, want->n,
                 want->ncols);
    for (size_t i = 0; i < got->n; i++)
        if (cell_cmp(want, &got->v[i * got->ncols], &want->v[i * want->ncols]) != 0) {
            char line[512];
            int w = 0;
            for (int c = 0; c < got->ncols; c++) {
                const union cell *g = &got->v[i * got->ncols + c], *x = &want->v[i * want->ncols + c];
                if (got->isf[c])
                    w += snprintf(line + w, sizeof line - w, " %g/%g", g->f, x->f);
                else
                    w += snprintf(line + w, sizeof line - w, " %lld/%lld", (long long)g->i, (long long)x->i);
            }
            fail_msg("%s: row %zu differs (got/expected):%s", what, i, line);
        }
    free(got->v);
    free(want->v);
}

static int64_t wrap_mul(int64_t a, int64_t b) { return (int64_t)((uint64_t)a * (uint64_t)b); }
static int64_t wrap_add(int64_t a, int64_t b) { return (int64_t)((uint64_t)a + (uint64_t)b); }
static int64_t idiv(int64_t a, int64_t b)
{
    return b == 0 ? 0 : b == -1 ? (int64_t)(0 - (uint64_t)a) : a / b;
}
static int dim_row(const data *d, int64_t key)
{
    for (int i = 0; i < DIM; i++)
        if (d->tk[i] == key)
            return i;
    return -1;
}

/* ---------------------------------------------------------------- the plans */

typedef struct ctx {
    coproc_runtime *rt;
    const char *path;
    coproc_query_mode mode;
    const data *d;
    tables *tb;
    int hybrid;          /* group-bys over the fact table on every device, by morsels */
    coproc_table *fact;  /* the fact table the plans scan: tb->f, or tb->f_no64 */
} ctx;

static coproc_query_result run(ctx *c, coproc_plan *p, coproc_node *root, const char *what)
{
    coproc_query_options o;
    coproc_query_options_init(&o);
    o.mode = c->mode;
    o.hybrid = c->hybrid;
    coproc_query_result r;
    coproc_status s = coproc_query_run(p, root, &o, &r);
    if (s != COPROC_OK)
        fail_msg("%s (%s, mode %d): %s: %s", what, c->path, c->mode, coproc_status_name(s),
                 coproc_errmsg(c->rt));
    return r;
}

/* Filters of every kind, then a projection: as a multiset. */
static void plan_filter_project(ctx *c)
{
    const data *d = c->d;
    coproc_plan *p;
    assert_int_equal(coproc_plan_create(c->rt, &p), COPROC_OK);
#define COL(n) coproc_expr_column(p, n)
#define INT(v) coproc_expr_int(p, v)
    coproc_expr *in_list[] = {INT(1), INT(2), INT(3), INT(5), INT(8), INT(13), INT(-21), INT(-34)};
    coproc_expr *pred = coproc_expr_or(
        p,
        coproc_expr_and(p, coproc_expr_between(p, COL("a"), INT(-10), INT(20)),
                        coproc_expr_not(p, coproc_expr_compare(p, COPROC_CMP_LT, COL("b"), INT(0)))),
        coproc_expr_and(p, coproc_expr_in(p, COL("a"), 8, in_list),
                        coproc_expr_compare(p, COPROC_CMP_GE, COL("x"), COL("y"))));
    pred = coproc_expr_and(p, pred, coproc_expr_compare(p, COPROC_CMP_NE, COL("fk"), INT(3)));
    coproc_node *f = coproc_plan_filter(p, coproc_plan_scan(p, c->fact, "fact"), pred);
    const char *names[] = {"a", "s", "q", "z", "lt", "u"};
    coproc_expr *ex[] = {
        COL("a"),
        coproc_expr_arith(p, COPROC_ARITH_ADD, coproc_expr_arith(p, COPROC_ARITH_MUL, COL("a"), COL("b")), INT(7)),
        coproc_expr_arith(p, COPROC_ARITH_DIV, COL("b"), COL("a")),
        coproc_expr_arith(p, COPROC_ARITH_MUL, COL("x"), coproc_expr_float(p, 2.5)),
        coproc_expr_compare(p, COPROC_CMP_LT, COL("a"), COL("y")),
        COL("u"),
    };
    coproc_node *pr = coproc_plan_project(p, f, 6, names, ex);
    coproc_query_result r = run(c, p, pr, "filter+project");
    int isf[] = {0, 0, 0, 1, 0, 0};
    rows want, got;
    rows_init(&want, 6, isf);
    for (size_t i = 0; i < d->n; i++) {
        int a = d->a[i];
        int inl = a == 1 || a == 2 || a == 3 || a == 5 || a == 8 || a == 13 || a == -21 || a == -34;
        int ok = ((a >= -10 && a <= 20 && !(d->b[i] < 0)) || (inl && d->x[i] >= d->y[i])) && d->fk[i] != 3;
        if (!ok)
            continue;
        union cell *row = rows_add(&want);
        row[0].i = a;
        row[1].i = wrap_add(wrap_mul(a, d->b[i]), 7);
        row[2].i = idiv(d->b[i], a);
        row[3].f = d->x[i] * 2.5;
        row[4].i = (double)a < (double)d->y[i];
        row[5].i = d->u[i];
    }
    rows_of(r.table, &got);
    expect_rows("filter+project", &got, &want, 0);
    coproc_query_result_free(&r);
    coproc_plan_free(p);
}

/* fact join dim (dense keys), a filter on the dimension, group by its column:
 * every aggregate; ordered. */
static void plan_join_group(ctx *c, int repeat)
{
    const data *d = c->d;
    coproc_plan *p;
    assert_int_equal(coproc_plan_create(c->rt, &p), COPROC_OK);
    coproc_node *dim = coproc_plan_filter(p, coproc_plan_scan(p, c->tb->t, "dim"),
                                          coproc_expr_compare(p, COPROC_CMP_LT, COL("tg"), INT(4)));
    coproc_node *j = coproc_plan_join(p, COPROC_JOIN_INNER, coproc_plan_scan(p, c->fact, "fact"), "fk", dim, "tk");
    const char *keys[] = {"tg"};
    coproc_aggregate ag[] = {
        {COPROC_AGG_SUM, COL("a"), "sa"},
        {COPROC_AGG_COUNT, NULL, "n"},
        {COPROC_AGG_MIN, COL("a"), "mn"},
        {COPROC_AGG_MAX, COL("b"), "mx"},
        {COPROC_AGG_AVG, COL("a"), "av"},
        {COPROC_AGG_SUM, coproc_expr_arith(p, COPROC_ARITH_MUL, COL("x"), INT(2)), "sx"},
        {COPROC_AGG_SUM, coproc_expr_arith(p, COPROC_ARITH_ADD, COL("tw"), COL("a")), "sw"},
    };
    coproc_node *g = coproc_plan_group_by(p, j, 1, keys, 7, ag);
    coproc_order_key ok[] = {{"tg", 1, 0}};
    coproc_node *o = coproc_plan_order_by(p, g, 1, ok, 0);
    int isf[] = {0, 0, 0, 0, 0, 1, 1, 0};
    for (int rep = 0; rep < repeat; rep++) {
        coproc_query_result r = run(c, p, o, "join+group");
        if (rep > 0 && c->mode == COPROC_QUERY_FUSED && r.kernels_built != 0)
            fail_msg("join+group again: %llu kernels built, expected none", (unsigned long long)r.kernels_built);
        rows want, got;
        rows_init(&want, 8, isf);
        for (int grp = 3; grp >= 0; grp--) {
            int64_t sa = 0, n = 0, mn = INT64_MAX, mx = INT64_MIN, sw = 0;
            double sx = 0;
            for (size_t i = 0; i < d->n; i++) {
                int t = dim_row(d, d->fk[i]);
                if (t < 0 || d->tg[t] != grp)
                    continue;
                sa += d->a[i], n++;
                mn = d->a[i] < mn ? d->a[i] : mn;
                mx = d->b[i] > mx ? d->b[i] : mx;
                sx += d->x[i] * 2;
                sw = wrap_add(sw, d->tw[t] + d->a[i]);
            }
            if (!n)
                continue;
            union cell *row = rows_add(&want);
            row[0].i = grp, row[1].i = sa, row[2].i = n, row[3].i = mn, row[4].i = mx;
            row[5].f = (double)sa / n, row[6].f = sx, row[7].i = sw;
        }
        rows_of(r.table, &got);
        expect_rows("join+group", &got, &want, 1);
        coproc_query_result_free(&r);
    }
    coproc_plan_free(p);
}

/* Semi join on sparse int64 keys (hashed), then a global aggregate. */
static void plan_semi_global(ctx *c)
{
    const data *d = c->d;
    coproc_plan *p;
    assert_int_equal(coproc_plan_create(c->rt, &p), COPROC_OK);
    coproc_node *h = coproc_plan_filter(p, coproc_plan_scan(p, c->tb->h, "sparse"),
                                        coproc_expr_compare(p, COPROC_CMP_NE, COL("hv"), INT(1)));
    coproc_node *j = coproc_plan_join(p, COPROC_JOIN_SEMI, coproc_plan_scan(p, c->fact, "fact"), "sk", h, "hk");
    coproc_aggregate ag[] = {{COPROC_AGG_COUNT, NULL, "n"}, {COPROC_AGG_SUM, COL("b"), "sb"},
                             {COPROC_AGG_MAX, COL("y"), "my"}};
    coproc_node *g = coproc_plan_group_by(p, j, 0, NULL, 3, ag);
    coproc_query_result r = run(c, p, g, "semi+global");
    int isf[] = {0, 0, 1};
    rows want, got;
    rows_init(&want, 3, isf);
    int64_t n = 0, sb = 0;
    double my = -INFINITY;
    for (size_t i = 0; i < d->n; i++) {
        int64_t k = d->sk[i];
        if ((k - 7) % 1000003 != 0 || (k - 7) / 1000003 >= SPARSE || d->hv[(k - 7) / 1000003] == 1)
            continue;
        n++, sb = wrap_add(sb, d->b[i]);
        my = d->y[i] > my ? d->y[i] : my;
    }
    union cell *row = rows_add(&want);
    row[0].i = n, row[1].i = sb, row[2].f = n ? my : 0;
    rows_of(r.table, &got);
    /* MIN/MAX over no rows: 0, as documented. */
    char what[96];
    snprintf(what, sizeof what, "semi+global (%s, mode %d, %zu rows)", c->path, c->mode, d->n);
    expect_rows(what, &got, &want, 1);
    coproc_query_result_free(&r);
    coproc_plan_free(p);
}

/* Three probes in one pipeline, the last keyed by a column the first join
 * brings (a snowflake): the engine may reorder probes by selectivity, but
 * not this one before the join that defines its key. */
static void plan_snowflake(ctx *c)
{
    const data *d = c->d;
    coproc_plan *p;
    assert_int_equal(coproc_plan_create(c->rt, &p), COPROC_OK);
    coproc_node *dim = coproc_plan_filter(p, coproc_plan_scan(p, c->tb->t, "dim"),
                                          coproc_expr_compare(p, COPROC_CMP_LT, COL("tg"), INT(4)));
    coproc_node *h = coproc_plan_filter(p, coproc_plan_scan(p, c->tb->h, "sparse"),
                                        coproc_expr_compare(p, COPROC_CMP_NE, COL("hv"), INT(1)));
    coproc_node *gd = coproc_plan_filter(p, coproc_plan_scan(p, c->tb->g, "g"),
                                         coproc_expr_compare(p, COPROC_CMP_GE, COL("gk"), INT(2)));
    coproc_node *j = coproc_plan_join(p, COPROC_JOIN_INNER, coproc_plan_scan(p, c->fact, "fact"), "fk", dim, "tk");
    j = coproc_plan_join(p, COPROC_JOIN_SEMI, j, "sk", h, "hk");
    j = coproc_plan_join(p, COPROC_JOIN_INNER, j, "tg", gd, "gk");
    const char *keys[] = {"gv"};
    coproc_aggregate ag[] = {{COPROC_AGG_COUNT, NULL, "n"}, {COPROC_AGG_SUM, COL("a"), "sa"}};
    coproc_node *g = coproc_plan_group_by(p, j, 1, keys, 2, ag);
    coproc_query_result r = run(c, p, g, "snowflake");
    for (int i = 0; c->mode == COPROC_QUERY_FUSED && i < r.pipelines; i++)
        if (!r.pipeline[i].fused)
            fail_msg("snowflake: pipeline %d (%s) was not fused: %s", i, r.pipeline[i].what, r.note);
    int isf[] = {0, 0, 0};
    rows want, got;
    rows_init(&want, 3, isf);
    int64_t n[2] = {0, 0}, sa[2] = {0, 0};
    for (size_t i = 0; i < d->n; i++) {
        int t = dim_row(d, d->fk[i]);
        int64_t k = d->sk[i];
        if (t < 0 || d->tg[t] >= 4 || d->tg[t] < 2)
            continue;
        if ((k - 7) % 1000003 != 0 || (k - 7) / 1000003 >= SPARSE || d->hv[(k - 7) / 1000003] == 1)
            continue;
        int gv = d->gv[4 - d->tg[t]];
        n[gv]++, sa[gv] += d->a[i];
    }
    for (int v = 0; v < 2; v++)
        if (n[v]) {
            union cell *row = rows_add(&want);
            row[0].i = v, row[1].i = n[v], row[2].i = sa[v];
        }
    rows_of(r.table, &got);
    expect_rows("snowflake", &got, &want, 0);
    coproc_query_result_free(&r);
    coproc_plan_free(p);
}

/* Inner join on sparse keys (a hashed table): the build side's column hv is
 * read at the row the probe finds, not from a payload laid out by key, and
 * grouped by; a dense join (dim) beside it reads its payload. */
static void plan_hashed_inner(ctx *c)
{
    const data *d = c->d;
    coproc_plan *p;
    assert_int_equal(coproc_plan_create(c->rt, &p), COPROC_OK);
    coproc_node *j = coproc_plan_join(p, COPROC_JOIN_INNER, coproc_plan_scan(p, c->fact, "fact"), "sk",
                                      coproc_plan_scan(p, c->tb->h, "sparse"), "hk");
    j = coproc_plan_join(p, COPROC_JOIN_INNER, j, "fk", coproc_plan_scan(p, c->tb->t, "dim"), "tk");
    const char *keys[] = {"hv", "tg"};
    coproc_aggregate ag[] = {{COPROC_AGG_COUNT, NULL, "n"}, {COPROC_AGG_SUM, COL("a"), "sa"}};
    coproc_node *g = coproc_plan_group_by(p, j, 2, keys, 2, ag);
    coproc_query_result r = run(c, p, g, "hashed inner");
    int isf[] = {0, 0, 0, 0};
    rows want, got;
    rows_init(&want, 4, isf);
    int64_t n[3][8] = {{0}}, sa[3][8] = {{0}};
    for (size_t i = 0; i < d->n; i++) {
        int t = dim_row(d, d->fk[i]);
        int64_t k = d->sk[i];
        if (t < 0 || (k - 7) % 1000003 != 0 || (k - 7) / 1000003 >= SPARSE)
            continue;
        int hv = d->hv[(k - 7) / 1000003];
        assert_true(d->tg[t] >= 0 && d->tg[t] < 8);
        n[hv][d->tg[t]]++, sa[hv][d->tg[t]] += d->a[i];
    }
    for (int v = 0; v < 3; v++)
        for (int t = 0; t < 8; t++)
            if (n[v][t]) {
                union cell *row = rows_add(&want);
                row[0].i = v, row[1].i = t, row[2].i = n[v][t], row[3].i = sa[v][t];
            }
    rows_of(r.table, &got);
    expect_rows("hashed inner", &got, &want, 0);
    coproc_query_result_free(&r);
    coproc_plan_free(p);
}

/* Joins on two key columns, (fk, a) = (pk1, pk2), of different types (int32
 * and int64): inner, grouped by the build side's pv (the pair repeated gives
 * two rows), and semi, then a global count and sum. */
static void plan_composite_join(ctx *c)
{
    const data *d = c->d;
    const char *pkeys[] = {"fk", "a"}, *bkeys[] = {"pk1", "pk2"};
    for (int semi = 0; semi < 2; semi++) {
        coproc_plan *p;
        assert_int_equal(coproc_plan_create(c->rt, &p), COPROC_OK);
        coproc_node *j = coproc_plan_join_keys(
            p, semi ? COPROC_JOIN_SEMI : COPROC_JOIN_INNER, coproc_plan_scan(p, c->fact, "fact"),
            2, pkeys, coproc_plan_scan(p, c->tb->pair, "pair"), bkeys);
        const char *gkey[] = {"pv"};
        coproc_aggregate ag[] = {{COPROC_AGG_COUNT, NULL, "n"}, {COPROC_AGG_SUM, COL("b"), "sb"}};
        coproc_node *g = coproc_plan_group_by(p, j, semi ? 0 : 1, semi ? NULL : gkey, 2, ag);
        coproc_query_result r = run(c, p, g, semi ? "composite semi" : "composite inner");
        int isf[] = {0, 0, 0};
        rows want, got;
        rows_init(&want, semi ? 2 : 3, isf);
        int64_t n[7] = {0}, sb[7] = {0}, sn = 0, ssb = 0;
        for (size_t i = 0; i < d->n; i++) {
            int hit = 0;
            for (int k = 0; k < PAIRS; k++)
                if (d->pk1[k] == d->fk[i] && d->pk2[k] == d->a[i]) {
                    n[d->pv[k]]++, sb[d->pv[k]] = wrap_add(sb[d->pv[k]], d->b[i]);
                    hit = 1;
                }
            if (hit)
                sn++, ssb = wrap_add(ssb, d->b[i]);
        }
        if (semi) {
            union cell *row = rows_add(&want);
            row[0].i = sn, row[1].i = ssb;
        } else {
            for (int v = 0; v < 7; v++)
                if (n[v]) {
                    union cell *row = rows_add(&want);
                    row[0].i = v, row[1].i = n[v], row[2].i = sb[v];
                }
        }
        rows_of(r.table, &got);
        char what[96];
        snprintf(what, sizeof what, "composite %s (%s, mode %d, %zu rows)", semi ? "semi" : "inner",
                 c->path, c->mode, d->n);
        expect_rows(what, &got, &want, 0);
        /* The pair repeated: the inner join's fused table holds one row a
         * key, so it runs one operator at a time and says so; the semi join
         * runs fused (its keys packed into one). */
        if (c->mode == COPROC_QUERY_FUSED && d->n > 0 && !semi && !strstr(r.note, "duplicate keys"))
            fail_msg("%s: the fused run should say it met duplicate keys (note \"%s\")", what, r.note);
        if (c->mode == COPROC_QUERY_FUSED && semi && r.note[0])
            fail_msg("%s: fell back: %s", what, r.note);
        coproc_query_result_free(&r);
        coproc_plan_free(p);
    }
}

/* Joins on two key columns (sk, a) = (k1, k2) whose packed range (about
 * 4e7 x 101) is too wide to index directly: a hashed table of packed keys,
 * the build side's w read at the row it holds. wide: k1 also holds values
 * near INT64_MIN and INT64_MAX, more than 62 bits packed, so the run falls
 * back to one operator at a time and says so. Probe values outside the
 * build side's ranges (a < k2's least) match nothing. */
static void plan_composite_hashed(ctx *c)
{
    const data *d = c->d;
    enum { NB = 97 };
    int64_t k1[NB];
    int32_t k2[NB], w[NB];
    size_t nb = 0;
    for (int i = 0; i < NB; i++) {
        size_t r = d->n ? (size_t)i * 7919 % d->n : 0;
        int64_t x = d->n ? d->sk[r] : i;
        int32_t y = d->n ? d->a[r] + (i % 5 == 4) : i;
        if (y < -20)
            continue; /* a's values below -20 match nothing */
        int seen = 0;
        for (size_t j = 0; j < nb; j++)
            seen |= k1[j] == x && k2[j] == y;
        if (!seen)
            k1[nb] = x, k2[nb] = y, w[nb] = 3 * i - 100, nb++;
    }
    for (int wide = 0; wide < 2; wide++) {
        if (wide && nb >= 2)
            k1[0] = INT64_MIN + 1, k1[1] = INT64_MAX;
        coproc_column *c1, *c2, *cw;
        coproc_table *t;
        assert_int_equal(coproc_column_wrap(c->rt, COPROC_INT64, k1, nb, &c1), COPROC_OK);
        assert_int_equal(coproc_column_wrap(c->rt, COPROC_INT32, k2, nb, &c2), COPROC_OK);
        assert_int_equal(coproc_column_wrap(c->rt, COPROC_INT32, w, nb, &cw), COPROC_OK);
        assert_int_equal(coproc_table_create(c->rt, &t), COPROC_OK);
        assert_int_equal(coproc_table_add(t, "k1", c1), COPROC_OK);
        assert_int_equal(coproc_table_add(t, "k2", c2), COPROC_OK);
        assert_int_equal(coproc_table_add(t, "w", cw), COPROC_OK);
        int64_t n = 0, sw = 0, semi_n = 0;
        for (size_t i = 0; i < d->n; i++)
            for (size_t j = 0; j < nb; j++)
                if (k1[j] == d->sk[i] && k2[j] == d->a[i])
                    n++, sw += w[j], semi_n++;
        const char *pkeys[] = {"sk", "a"}, *bkeys[] = {"k1", "k2"};
        for (int semi = 0; semi < 2; semi++) {
            coproc_plan *p;
            assert_int_equal(coproc_plan_create(c->rt, &p), COPROC_OK);
            coproc_node *j = coproc_plan_join_keys(
                p, semi ? COPROC_JOIN_SEMI : COPROC_JOIN_INNER, coproc_plan_scan(p, c->fact, "fact"),
                2, pkeys, coproc_plan_scan(p, t, "pairs"), bkeys);
            coproc_aggregate ag[] = {{COPROC_AGG_COUNT, NULL, "n"},
                                     {COPROC_AGG_SUM, semi ? COL("a") : COL("w"), "s"}};
            coproc_node *g = coproc_plan_group_by(p, j, 0, NULL, 2, ag);
            char what[128];
            snprintf(what, sizeof what, "composite %s%s (%s, mode %d, %zu rows)", wide ? "wide " : "",
                     semi ? "semi" : "hashed", c->path, c->mode, d->n);
            coproc_query_result r = run(c, p, g, what);
            int64_t sa = 0;
            for (size_t i = 0; semi && i < d->n; i++)
                for (size_t k = 0; k < nb; k++)
                    if (k1[k] == d->sk[i] && k2[k] == d->a[i]) {
                        sa += d->a[i];
                        break;
                    }
            const coproc_column *gn = coproc_table_column(r.table, "n"),
                                *gs = coproc_table_column(r.table, "s");
            assert_non_null(gn);
            assert_non_null(gs);
            int64_t got_n = ((const int64_t *)coproc_column_host_data(gn))[0];
            int64_t got_s = ((const int64_t *)coproc_column_host_data(gs))[0];
            if (got_n != (semi ? semi_n : n) || got_s != (semi ? sa : sw))
                fail_msg("%s: count %lld sum %lld, expected %lld and %lld", what, (long long)got_n,
                         (long long)got_s, (long long)(semi ? semi_n : n), (long long)(semi ? sa : sw));
            if (c->mode == COPROC_QUERY_FUSED && wide && nb >= 2 && !strstr(r.note, "62 bits"))
                fail_msg("%s: the fused run should say the keys do not pack (note \"%s\")", what, r.note);
            if (c->mode == COPROC_QUERY_FUSED && !wide && r.note[0])
                fail_msg("%s: fell back: %s", what, r.note);
            coproc_query_result_free(&r);
            coproc_plan_free(p);
        }
        coproc_table_free(t);
        coproc_column_free(c1);
        coproc_column_free(c2);
        coproc_column_free(cw);
    }
}

/* Thousands of groups (two keys over 101 x 55 values): on the GPU path
 * more than a work-group's local table holds, so atomics on the result;
 * sums of values near INT64_MAX / INT64_MIN wrap as 64-bit integers. */
static void plan_many_groups(ctx *c)
{
    const data *d = c->d;
    coproc_plan *p;
    assert_int_equal(coproc_plan_create(c->rt, &p), COPROC_OK);
    const char *keys[] = {"a", "fk"};
    coproc_aggregate ag[] = {{COPROC_AGG_COUNT, NULL, "n"}, {COPROC_AGG_SUM, COL("b"), "sb"},
                             {COPROC_AGG_AVG, COL("a"), "av"}};
    coproc_node *g = coproc_plan_group_by(p, coproc_plan_scan(p, c->fact, "fact"), 2, keys, 3, ag);
    coproc_query_result r = run(c, p, g, "many groups");
    int isf[] = {0, 0, 0, 0, 1};
    rows want, got;
    rows_init(&want, 5, isf);
    enum { NA = 101, NF = DIM + 5 };
    int64_t *n = calloc(NA * NF, sizeof *n), *sb = calloc(NA * NF, sizeof *sb);
    assert_non_null(n);
    assert_non_null(sb);
    for (size_t i = 0; i < d->n; i++) {
        size_t s = (size_t)(d->a[i] + 50) * NF + (size_t)d->fk[i];
        n[s]++, sb[s] = wrap_add(sb[s], d->b[i]);
    }
    for (size_t s = 0; s < NA * NF; s++)
        if (n[s]) {
            union cell *row = rows_add(&want);
            row[0].i = (int64_t)(s / NF) - 50, row[1].i = (int64_t)(s % NF), row[2].i = n[s], row[3].i = sb[s];
            row[4].f = (double)((int64_t)(s / NF) - 50);
        }
    free(n);
    free(sb);
    rows_of(r.table, &got);
    expect_rows("many groups", &got, &want, 0);
    coproc_query_result_free(&r);
    coproc_plan_free(p);
}

/* An order-by feeding a filter and a projection: the rows that pass keep
 * the sorted order on every path (the GPU path strides rows otherwise). */
static const int64_t *sort_b;
static int by_b_desc(const void *x, const void *y)
{
    size_t i = *(const size_t *)x, j = *(const size_t *)y;
    if (sort_b[i] != sort_b[j])
        return sort_b[i] > sort_b[j] ? -1 : 1;
    return i < j ? -1 : i > j; /* stable */
}

static void plan_order_then_filter(ctx *c)
{
    const data *d = c->d;
    coproc_plan *p;
    assert_int_equal(coproc_plan_create(c->rt, &p), COPROC_OK);
    coproc_order_key ok[] = {{"b", 1, 0}};
    coproc_node *o = coproc_plan_order_by(p, coproc_plan_scan(p, c->fact, "fact"), 1, ok, 0);
    coproc_node *f = coproc_plan_filter(p, o, coproc_expr_compare(p, COPROC_CMP_GT, COL("a"), INT(0)));
    const char *names[] = {"b", "a"};
    coproc_expr *ex[] = {COL("b"), COL("a")};
    coproc_node *pr = coproc_plan_project(p, f, 2, names, ex);
    coproc_query_result r = run(c, p, pr, "order then filter");
    size_t *idx = malloc((d->n ? d->n : 1) * sizeof *idx), m = 0;
    assert_non_null(idx);
    for (size_t i = 0; i < d->n; i++)
        if (d->a[i] > 0)
            idx[m++] = i;
    sort_b = d->b;
    qsort(idx, m, sizeof *idx, by_b_desc);
    int isf[] = {0, 0};
    rows want, got;
    rows_init(&want, 2, isf);
    for (size_t x = 0; x < m; x++) {
        union cell *row = rows_add(&want);
        row[0].i = d->b[idx[x]], row[1].i = d->a[idx[x]];
    }
    free(idx);
    rows_of(r.table, &got);
    char what[96];
    snprintf(what, sizeof what, "order then filter (%s, mode %d, %zu rows)", c->path, c->mode, d->n);
    expect_rows(what, &got, &want, 1);
    coproc_query_result_free(&r);
    coproc_plan_free(p);
}

/* Float MIN / MAX ignore NaN unless every row of the group is NaN (the
 * operators' rule): group 1 is all NaN, group 2 has one number. */
static void plan_nan_min_max(coproc_runtime *rt, const char *path, coproc_query_mode mode)
{
    static const int32_t k[] = {1, 1, 2, 2, 2};
    static const double x[] = {NAN, NAN, NAN, -2.5, NAN};
    coproc_column *ck, *cx;
    coproc_table *t;
    assert_int_equal(coproc_column_wrap(rt, COPROC_INT32, k, 5, &ck), COPROC_OK);
    assert_int_equal(coproc_column_wrap(rt, COPROC_FLOAT64, x, 5, &cx), COPROC_OK);
    assert_int_equal(coproc_table_create(rt, &t), COPROC_OK);
    assert_int_equal(coproc_table_add(t, "k", ck), COPROC_OK);
    assert_int_equal(coproc_table_add(t, "x", cx), COPROC_OK);
    coproc_plan *p;
    assert_int_equal(coproc_plan_create(rt, &p), COPROC_OK);
    const char *keys[] = {"k"};
    coproc_aggregate ag[] = {{COPROC_AGG_MIN, COL("x"), "mn"}, {COPROC_AGG_MAX, COL("x"), "mx"}};
    coproc_node *g = coproc_plan_group_by(p, coproc_plan_scan(p, t, "t"), 1, keys, 2, ag);
    coproc_order_key ok[] = {{"k", 0, 0}};
    coproc_node *o = coproc_plan_order_by(p, g, 1, ok, 0);
    coproc_query_options opt;
    coproc_query_options_init(&opt);
    opt.mode = mode;
    coproc_query_result r;
    assert_int_equal(coproc_query_run(p, o, &opt, &r), COPROC_OK);
    const coproc_column *mn = coproc_table_column(r.table, "mn"), *mx = coproc_table_column(r.table, "mx");
    assert_non_null(mn);
    assert_non_null(mx);
    assert_int_equal(coproc_column_length(mn), 2);
    const double *a = coproc_column_host_data(mn), *b = coproc_column_host_data(mx);
    if (!isnan(a[0]) || !isnan(b[0]) || a[1] != -2.5 || b[1] != -2.5)
        fail_msg("NaN min/max (%s, mode %d): got %g %g / %g %g, expected nan nan / -2.5 -2.5", path, mode,
                 a[0], b[0], a[1], b[1]);
    coproc_query_result_free(&r);
    coproc_plan_free(p);
    coproc_table_free(t);
    coproc_column_free(ck);
    coproc_column_free(cx);
}

/* Two keys, order by one ascending and one descending, limit. */
static void plan_two_keys_limit(ctx *c)
{
    const data *d = c->d;
    coproc_plan *p;
    assert_int_equal(coproc_plan_create(c->rt, &p), COPROC_OK);
    coproc_node *j = coproc_plan_join(p, COPROC_JOIN_INNER, coproc_plan_scan(p, c->fact, "fact"), "fk",
                                      coproc_plan_scan(p, c->tb->t, "dim"), "tk");
    const char *keys[] = {"tg", "a"};
    coproc_aggregate ag[] = {{COPROC_AGG_COUNT, NULL, "n"}};
    coproc_node *g = coproc_plan_group_by(p, j, 2, keys, 1, ag);
    coproc_order_key ok[] = {{"n", 1, 0}, {"tg", 0, 0}, {"a", 1, 0}};
    coproc_node *o = coproc_plan_order_by(p, g, 3, ok, 17);
    coproc_query_result r = run(c, p, o, "two keys");
    int isf[] = {0, 0, 0};
    rows all, got;
    rows_init(&all, 3, isf);
    for (int grp = 0; grp < 5; grp++)
        for (int a = -50; a <= 50; a++) {
            int64_t n = 0;
            for (size_t i = 0; i < d->n; i++) {
                int t = dim_row(d, d->fk[i]);
                n += t >= 0 && d->tg[t] == grp && d->a[i] == a;
            }
            if (n) {
                union cell *row = rows_add(&all);
                row[0].i = grp, row[1].i = a, row[2].i = n;
            }
        }
    /* order: n desc, tg asc, a desc */
    for (size_t i = 1; i < all.n; i++)
        for (size_t k = i; k > 0; k--) {
            union cell *x = &all.v[(k - 1) * 3], *y = &all.v[k * 3];
            int before = y[2].i > x[2].i || (y[2].i == x[2].i && (y[0].i < x[0].i || (y[0].i == x[0].i && y[1].i > x[1].i)));
            if (!before)
                break;
            for (int q = 0; q < 3; q++) {
                union cell t = x[q];
                x[q] = y[q], y[q] = t;
            }
        }
    if (all.n > 17)
        all.n = 17;
    rows_of(r.table, &got);
    expect_rows("two keys", &got, &all, 1);
    coproc_query_result_free(&r);
    coproc_plan_free(p);
}

/* Duplicate build keys: every pair (the fused engine hands it to the operators). */
static void plan_duplicates(ctx *c)
{
    const data *d = c->d;
    coproc_plan *p;
    assert_int_equal(coproc_plan_create(c->rt, &p), COPROC_OK);
    coproc_node *j = coproc_plan_join(p, COPROC_JOIN_INNER, coproc_plan_scan(p, c->fact, "fact"), "fk",
                                      coproc_plan_scan(p, c->tb->dup, "dups"), "dk");
    const char *keys[] = {"dv"};
    coproc_aggregate ag[] = {{COPROC_AGG_COUNT, NULL, "n"}, {COPROC_AGG_SUM, COL("a"), "sa"}};
    coproc_node *g = coproc_plan_group_by(p, j, 1, keys, 2, ag);
    coproc_order_key ok[] = {{"dv", 0, 0}};
    coproc_node *o = coproc_plan_order_by(p, g, 1, ok, 0);
    coproc_query_result r = run(c, p, o, "duplicates");
    int isf[] = {0, 0, 0};
    rows want, got;
    rows_init(&want, 3, isf);
    for (int v = 0; v < 6; v++) {
        int64_t n = 0, sa = 0;
        for (size_t i = 0; i < d->n; i++)
            if (d->fk[i] == d->dupk[v])
                n++, sa += d->a[i];
        if (n) {
            union cell *row = rows_add(&want);
            row[0].i = v, row[1].i = n, row[2].i = sa;
        }
    }
    rows_of(r.table, &got);
    expect_rows("duplicates", &got, &want, 1);
    if (c->mode == COPROC_QUERY_FUSED && d->n > 0 && !r.note[0])
        fail_msg("duplicates: the fused run should say why it fell back");
    coproc_query_result_free(&r);
    coproc_plan_free(p);
}

/* Group keys spanning all 64 bits (INT64_MIN and INT64_MAX): the key range
 * hi - lo + 1 wraps to 0 in 64 bits, and a fused run counted no slot and
 * returned no group (found by fuzz_query). Every group, in both modes. */
static void plan_full_range_keys(coproc_runtime *rt, const char *path, coproc_query_mode mode)
{
    static const int64_t k[] = {1, 2, 3, -4, INT64_MAX, INT64_MIN, 0, 2};
    static const int32_t v[] = {10, 20, 30, 40, 50, 60, 70, 80};
    coproc_column *ck, *cv;
    coproc_table *t;
    assert_int_equal(coproc_column_wrap(rt, COPROC_INT64, k, 8, &ck), COPROC_OK);
    assert_int_equal(coproc_column_wrap(rt, COPROC_INT32, v, 8, &cv), COPROC_OK);
    assert_int_equal(coproc_table_create(rt, &t), COPROC_OK);
    assert_int_equal(coproc_table_add(t, "k", ck), COPROC_OK);
    assert_int_equal(coproc_table_add(t, "v", cv), COPROC_OK);
    coproc_plan *p;
    assert_int_equal(coproc_plan_create(rt, &p), COPROC_OK);
    const char *keys[] = {"k"};
    coproc_aggregate ag[] = {{COPROC_AGG_SUM, COL("v"), "s"}};
    coproc_node *g = coproc_plan_group_by(p, coproc_plan_scan(p, t, "t"), 1, keys, 1, ag);
    coproc_order_key ok[] = {{"k", 0, 0}};
    coproc_node *o = coproc_plan_order_by(p, g, 1, ok, 0);
    coproc_query_options opt;
    coproc_query_options_init(&opt);
    opt.mode = mode;
    coproc_query_result r;
    assert_int_equal(coproc_query_run(p, o, &opt, &r), COPROC_OK);
    static const int64_t want_k[] = {INT64_MIN, -4, 0, 1, 2, 3, INT64_MAX};
    static const int64_t want_s[] = {60, 40, 70, 10, 100, 30, 50};
    const coproc_column *gk = coproc_table_column(r.table, "k"), *gs = coproc_table_column(r.table, "s");
    assert_non_null(gk);
    assert_non_null(gs);
    if (coproc_column_length(gk) != 7)
        fail_msg("full-range keys (%s, mode %d): %zu groups, expected 7", path, mode, coproc_column_length(gk));
    const int64_t *a = coproc_column_host_data(gk), *b = coproc_column_host_data(gs);
    for (int i = 0; i < 7; i++)
        if (a[i] != want_k[i] || b[i] != want_s[i])
            fail_msg("full-range keys (%s, mode %d): group %d is (%lld, %lld), expected (%lld, %lld)", path,
                     mode, i, (long long)a[i], (long long)b[i], (long long)want_k[i], (long long)want_s[i]);
    coproc_query_result_free(&r);
    coproc_plan_free(p);
    coproc_table_free(t);
    coproc_column_free(ck);
    coproc_column_free(cv);
}

static void each(coproc_runtime *rt, int device, const char *path, void *user)
{
    coproc_device_info info;
    assert_int_equal(coproc_device_info_get(rt, device, &info), COPROC_OK);
    /* Without fp64 the plans that read, compute or return float64 are skipped,
     * each saying so; the others run, over the fact table less its float64
     * column one operator at a time (the fused kernels carry it as bits). */
    int fp64 = info.has_fp64;
    static const size_t sizes[] = {0, 1, 777, 20000};
    /* COPROC_TEST_MAX_ROWS: the largest table (Oclgrind runs small ones). */
    const char *max_env = getenv("COPROC_TEST_MAX_ROWS");
    size_t max_rows = max_env ? (size_t)strtoull(max_env, NULL, 10) : SIZE_MAX;
    for (size_t si = 0; si < sizeof sizes / sizeof sizes[0] && sizes[si] <= max_rows; si++) {
        data d;
        make_data(&d, sizes[si], 42 + si);
        tables tb;
        make_tables(rt, &d, &tb);
        for (int mode = 0; mode < 2; mode++) {
            ctx c = {rt, path, mode ? COPROC_QUERY_OPERATORS : COPROC_QUERY_FUSED, &d, &tb, 0,
                     fp64 || !mode ? tb.f : tb.f_no64};
            if (fp64) {
                plan_filter_project(&c);
                plan_join_group(&c, 2);
                plan_many_groups(&c);
                if (si == 0)
                    plan_nan_min_max(rt, path, c.mode);
            } else if (si == 0) {
                printf("skipped (device has no fp64: %s, mode %d): filter+project (reads x), "
                       "join+group (sums x, avg), many groups (avg), NaN min/max (float64)\n",
                       info.name, mode);
            }
            if (si == 0)
                plan_full_range_keys(rt, path, c.mode);
            plan_semi_global(&c);
            plan_two_keys_limit(&c);
            ctx dup = c; /* it falls back to operators, which gather float64 */
            dup.fact = fp64 ? tb.f : tb.f_no64;
            plan_duplicates(&dup);
            plan_snowflake(&c);
            plan_hashed_inner(&c);
            plan_composite_join(&dup); /* the inner join falls back, as duplicates */
            plan_composite_hashed(&dup); /* the wide keys fall back too */
            ctx ord = c; /* float64 columns copied, not computed; sorted only with fp64 */
            ord.fact = fp64 ? tb.f : tb.f_no64;
            plan_order_then_filter(&ord);
        }
        free_tables(&tb);
        free_data(&d);
    }
    (void)user;
}

static void test_plans(void **state)
{
    (void)state;
    test_each_device_path(each, NULL);
}

/* The plans again with every device at once: the group-bys over the fact
 * table split into morsels across them (the second device on the GPU path,
 * so partials of both kinds merge). Needs two devices. */
static void test_hybrid(void **state)
{
    (void)state;
    coproc_runtime *rt = test_open(NULL);
    int n = coproc_device_count(rt);
    if (n < 2) {
        coproc_close(rt);
        printf("test_query: one device: no hybrid runs\n");
        skip();
    }
    /* Devices alike must share the work; unlike ones may leave it to the
     * fastest (a simulated H100 beside a CPU does), the results the same. */
    int fp64 = 1, hybrid_seen = 0, alike = 1;
    char first[256] = "";
    for (int i = 0; i < n; i++) {
        coproc_device_info info;
        assert_int_equal(coproc_device_info_get(rt, i, &info), COPROC_OK);
        fp64 &= info.has_fp64;
        if (i == 0)
            snprintf(first, sizeof first, "%s", info.name);
        alike &= strcmp(first, info.name) == 0;
    }
    test_force_path(rt, 1, 0);
    static const size_t sizes[] = {0, 1, 777, 20000, 100000};
    for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
        data d;
        make_data(&d, sizes[si], 4242 + si);
        tables tb;
        make_tables(rt, &d, &tb);
        ctx c = {rt, "hybrid", COPROC_QUERY_FUSED, &d, &tb, 1, tb.f};
        if (fp64) {
            plan_join_group(&c, 2);
            plan_semi_global(&c);
            plan_many_groups(&c);
            plan_two_keys_limit(&c);
        }
        plan_snowflake(&c);
        plan_hashed_inner(&c);
        free_tables(&tb);
        free_data(&d);
    }
    /* The runs were split: some pipeline reported a hybrid share. */
    coproc_plan *p;
    assert_int_equal(coproc_plan_create(rt, &p), COPROC_OK);
    data d;
    make_data(&d, 100000, 7);
    tables tb;
    make_tables(rt, &d, &tb);
    coproc_node *g = coproc_plan_group_by(p, coproc_plan_scan(p, tb.f, "fact"), 1,
                                          (const char *const[]){"fk"}, 1,
                                          (coproc_aggregate[]){{COPROC_AGG_COUNT, NULL, "n"}});
    coproc_query_options o;
    coproc_query_options_init(&o);
    o.hybrid = 1;
    coproc_query_result r;
    assert_int_equal(coproc_query_run(p, g, &o, &r), COPROC_OK);
    uint64_t rows = 0;
    for (int i = 0; i < r.pipelines; i++)
        if (strstr(r.pipeline[i].what, "hybrid")) {
            hybrid_seen++;
            rows += r.pipeline[i].rows_in;
        }
    if (alike) {
        assert_true(hybrid_seen >= 2);
        assert_int_equal(rows, 100000);
    }
    coproc_query_result_free(&r);
    /* A device that fails mid-query (at its first morsel): the others run
     * its morsels; the counts are still every row once. */
    int failed_runs = 0;
    for (int dev = 0; dev < 2; dev++) {
        char fault[16];
        snprintf(fault, sizeof fault, "%d:1", dev);
        setenv("COPROC_FAULT_HYBRID", fault, 1);
        assert_int_equal(coproc_query_run(p, g, &o, &r), COPROC_OK);
        unsetenv("COPROC_FAULT_HYBRID");
        /* The faulted device fails at its first morsel: it gives back
         * whenever it got one (none, when the others took every morsel
         * before its thread came to the queue, as under a sanitizer). */
        int given_back = 0, ran_morsels = 0;
        for (int i = 0; i < r.pipelines; i++) {
            const char *h = strstr(r.pipeline[i].what, "(hybrid: ");
            unsigned long long m = 0;
            given_back += strstr(r.pipeline[i].what, "given back") != NULL;
            if (h && r.pipeline[i].device == dev && sscanf(h, "(hybrid: %llu", &m) == 1 &&
                !strstr(h, "given back"))
                ran_morsels += m > 0;
        }
        assert_int_equal(ran_morsels, 0);
        int64_t total = 0;
        const coproc_column *n = coproc_table_column(r.table, "n");
        assert_non_null(n);
        const int64_t *cnt = coproc_column_host_data(n);
        for (uint64_t i = 0; i < coproc_column_length(n); i++)
            total += cnt[i];
        assert_int_equal(total, 100000);
        uint64_t shares = 0;
        for (int i = 0; i < r.pipelines; i++)
            if (strstr(r.pipeline[i].what, "hybrid"))
                shares += r.pipeline[i].rows_in;
        if (alike)
            assert_int_equal(shares, 100000);
        failed_runs += given_back;
        coproc_query_result_free(&r);
    }
    if (failed_runs == 0)
        printf("test_query: hybrid: the faulted device got no morsel in either run\n");
    coproc_plan_free(p);
    free_tables(&tb);
    free_data(&d);
    coproc_close(rt);
}

/* Group fact by fk (count, sum of a) with every device at once and check
 * each group against a scalar reference; the rows the hybrid shares report
 * into *rows, the bytes they copied in into *moved. */
static void check_hybrid_group(coproc_runtime *rt, const data *d, const tables *tb, uint64_t *rows,
                               uint64_t *moved, int *given_back)
{
    int64_t want_n[DIM + 5] = {0}, want_s[DIM + 5] = {0};
    for (size_t i = 0; i < d->n; i++) {
        want_n[d->fk[i]]++;
        want_s[d->fk[i]] += d->a[i];
    }
    coproc_plan *p;
    assert_int_equal(coproc_plan_create(rt, &p), COPROC_OK);
    coproc_aggregate ag[] = {{COPROC_AGG_COUNT, NULL, "n"}, {COPROC_AGG_SUM, COL("a"), "s"}};
    coproc_node *g = coproc_plan_group_by(p, coproc_plan_scan(p, tb->f, "fact"), 1,
                                          (const char *const[]){"fk"}, 2, ag);
    coproc_query_options o;
    coproc_query_options_init(&o);
    o.hybrid = 1;
    coproc_query_result r;
    coproc_status st = coproc_query_run(p, g, &o, &r);
    if (st != COPROC_OK)
        printf("test_query: copied hybrid: %s: %s\n", coproc_status_name(st), coproc_errmsg(rt));
    assert_int_equal(st, COPROC_OK);
    const coproc_column *k = coproc_table_column(r.table, "fk");
    const coproc_column *n = coproc_table_column(r.table, "n");
    const coproc_column *sa = coproc_table_column(r.table, "s");
    assert_non_null(k);
    assert_non_null(n);
    assert_non_null(sa);
    assert_int_equal(coproc_column_type(k), COPROC_INT32);
    assert_int_equal(coproc_column_type(sa), COPROC_INT64);
    const int32_t *kv = coproc_column_host_data(k);
    const int64_t *nv = coproc_column_host_data(n), *sv = coproc_column_host_data(sa);
    int64_t got_n[DIM + 5] = {0}, got_s[DIM + 5] = {0};
    for (uint64_t i = 0; i < coproc_column_length(k); i++) {
        assert_true(kv[i] >= 0 && kv[i] < DIM + 5);
        assert_int_equal(got_n[kv[i]], 0); /* each group once */
        got_n[kv[i]] = nv[i];
        got_s[kv[i]] = sv[i];
    }
    for (int i = 0; i < DIM + 5; i++) {
        assert_int_equal(got_n[i], want_n[i]);
        assert_int_equal(got_s[i], want_s[i]);
    }
    *rows = *moved = 0;
    *given_back = 0;
    for (int i = 0; i < r.pipelines; i++)
        if (strstr(r.pipeline[i].what, "hybrid")) {
            *rows += r.pipeline[i].rows_in;
            *moved += r.pipeline[i].bytes_moved;
            *given_back += strstr(r.pipeline[i].what, "given back") != NULL;
        }
    coproc_query_result_free(&r);
    coproc_plan_free(p);
}

/* Hybrid group-bys on devices that do not read host memory in place (zero
 * copy off; a simulated H100 is not host-unified anyway): each morsel is
 * copied in on the copy queue beside the kernel of the one before (two stage
 * buffers a column, hybrid.c). The results are the reference's, and a device
 * that fails at its first or second morsel - one morsel run, the next one's
 * copy under way - gives every one of them back. Needs two devices. */
static void test_hybrid_copied(void **state)
{
    (void)state;
    coproc_options opts;
    coproc_options_init(&opts);
    opts.disable_zero_copy = 1;
    coproc_runtime *rt = test_open_with(&opts);
    if (coproc_device_count(rt) < 2) {
        coproc_close(rt);
        printf("test_query: one device: no hybrid runs\n");
        skip();
    }
    data d;
    make_data(&d, 700000, 99); /* several morsels of at least 64K rows a device */
    tables tb;
    make_tables(rt, &d, &tb);
    uint64_t rows, moved;
    int given_back;
    check_hybrid_group(rt, &d, &tb, &rows, &moved, &given_back);
    assert_int_equal(given_back, 0);
    /* Split (unlike devices may leave it all to one): every row once, copied in. */
    int split = rows > 0;
    if (split) {
        assert_int_equal(rows, d.n);
        assert_true(moved >= d.n * (sizeof *d.fk + sizeof *d.a));
    }
    int failed_runs = 0;
    for (int run = 0; run < 4; run++) {
        char fault[16];
        snprintf(fault, sizeof fault, "%d:%d", run % 2, 1 + run / 2);
        setenv("COPROC_FAULT_HYBRID", fault, 1);
        check_hybrid_group(rt, &d, &tb, &rows, &moved, &given_back);
        unsetenv("COPROC_FAULT_HYBRID");
        assert_true(rows <= d.n); /* a failed device's share reports no rows */
        failed_runs += given_back;
    }
    /* Whether a faulted device gets its morsel is a race (the other may take
     * them all): counted, not asserted; test_hybrid checks the give-back. */
    printf("test_query: copied hybrid: %d of 4 runs with a failed device\n", failed_runs);
    free_tables(&tb);
    free_data(&d);
    coproc_close(rt);
}

/* ---------------------------------------------------------------- errors */

static void test_errors(void **state)
{
    (void)state;
    coproc_runtime *rt = test_open(NULL);
    data d;
    make_data(&d, 100, 7);
    tables tb;
    make_tables(rt, &d, &tb);
    coproc_query_result r;

    /* A column that does not exist: the run names the node. */
    coproc_plan *p;
    assert_int_equal(coproc_plan_create(rt, &p), COPROC_OK);
    coproc_node *f = coproc_plan_filter(p, coproc_plan_scan(p, tb.f, "fact"),
                                        coproc_expr_compare(p, COPROC_CMP_EQ, coproc_expr_column(p, "nope"),
                                                            coproc_expr_int(p, 1)));
    assert_null(f);
    assert_int_equal(coproc_plan_status(p), COPROC_INVALID_ARGUMENT);
    assert_non_null(strstr(coproc_plan_errmsg(p), "filter#2"));
    assert_non_null(strstr(coproc_plan_errmsg(p), "nope"));
    /* Later builders pass the NULL along; the run returns the first error. */
    coproc_node *g = coproc_plan_group_by(p, f, 0, NULL, 1, (coproc_aggregate[]){{COPROC_AGG_COUNT, NULL, "n"}});
    assert_null(g);
    assert_int_equal(coproc_query_run(p, g, NULL, &r), COPROC_INVALID_ARGUMENT);
    assert_null(r.table);
    assert_non_null(strstr(coproc_errmsg(rt), "nope"));
    coproc_plan_free(p);

    /* Arithmetic on a boolean, a float key, name clashes, bad lists. */
    assert_int_equal(coproc_plan_create(rt, &p), COPROC_OK);
    coproc_node *s = coproc_plan_scan(p, tb.f, "fact");
    coproc_expr *bad = coproc_expr_arith(p, COPROC_ARITH_ADD, coproc_expr_compare(p, COPROC_CMP_LT, coproc_expr_column(p, "a"), coproc_expr_int(p, 1)), coproc_expr_int(p, 1));
    const char *nm[] = {"z"};
    assert_null(coproc_plan_project(p, s, 1, nm, &bad));
    assert_int_equal(coproc_plan_status(p), COPROC_INVALID_ARGUMENT);
    coproc_plan_free(p);

    assert_int_equal(coproc_plan_create(rt, &p), COPROC_OK);
    s = coproc_plan_scan(p, tb.f, "fact");
    const char *fkey[] = {"x"};
    assert_null(coproc_plan_group_by(p, s, 1, fkey, 1, (coproc_aggregate[]){{COPROC_AGG_COUNT, NULL, "n"}}));
    assert_int_equal(coproc_plan_status(p), COPROC_UNSUPPORTED_TYPE);
    coproc_plan_free(p);

    assert_int_equal(coproc_plan_create(rt, &p), COPROC_OK);
    s = coproc_plan_scan(p, tb.f, "fact");
    assert_null(coproc_plan_join(p, COPROC_JOIN_INNER, s, "fk", coproc_plan_scan(p, tb.f, "fact2"), "fk"));
    assert_int_equal(coproc_plan_status(p), COPROC_INVALID_ARGUMENT); /* same names on both sides */
    coproc_plan_free(p);

    /* Composite join keys: counts out of 1..8, a NULL list or name, a float key, a missing one. */
    const char *pk2[] = {"fk", "a"}, *bk2[] = {"pk1", "pk2"}, *badf[] = {"fk", "x"},
               *miss[] = {"fk", "nope"}, *nul[] = {"fk", NULL};
    const char *nine[9] = {"fk", "fk", "fk", "fk", "fk", "fk", "fk", "fk", "fk"};
    struct {
        int nkeys;
        const char *const *probe, *const *build;
        coproc_status want;
    } bad_keys[] = {{0, pk2, bk2, COPROC_INVALID_ARGUMENT},  {9, nine, nine, COPROC_INVALID_ARGUMENT},
                    {2, NULL, bk2, COPROC_INVALID_ARGUMENT}, {2, badf, bk2, COPROC_UNSUPPORTED_TYPE},
                    {2, miss, bk2, COPROC_INVALID_ARGUMENT}, {2, nul, bk2, COPROC_NULL_POINTER}};
    for (size_t i = 0; i < sizeof bad_keys / sizeof bad_keys[0]; i++) {
        assert_int_equal(coproc_plan_create(rt, &p), COPROC_OK);
        s = coproc_plan_scan(p, tb.f, "fact");
        assert_null(coproc_plan_join_keys(p, COPROC_JOIN_SEMI, s, bad_keys[i].nkeys,
                                          bad_keys[i].probe, coproc_plan_scan(p, tb.pair, "pair"),
                                          bad_keys[i].build));
        assert_int_equal(coproc_plan_status(p), bad_keys[i].want);
        coproc_plan_free(p);
    }

    assert_int_equal(coproc_plan_create(rt, &p), COPROC_OK);
    assert_null(coproc_expr_in(p, coproc_expr_column(p, "a"), 0, NULL));
    assert_int_equal(coproc_plan_status(p), COPROC_INVALID_ARGUMENT);
    coproc_plan_free(p);

    /* NULL everywhere. */
    assert_int_equal(coproc_plan_create(rt, NULL), COPROC_NULL_POINTER);
    assert_int_equal(coproc_plan_create(NULL, &p), COPROC_NULL_POINTER);
    assert_null(coproc_plan_scan(NULL, tb.f, "x"));
    assert_int_equal(coproc_query_run(NULL, NULL, NULL, &r), COPROC_NULL_POINTER);
    assert_int_equal(coproc_table_add(tb.f, "q", NULL), COPROC_NULL_POINTER);
    assert_int_equal(coproc_plan_create(rt, &p), COPROC_OK);
    assert_null(coproc_plan_filter(p, NULL, NULL));
    assert_int_equal(coproc_plan_status(p), COPROC_NULL_POINTER);
    coproc_plan_free(p);

    /* Mismatched lengths in a table; duplicate names. */
    coproc_column *shortc;
    assert_int_equal(coproc_column_wrap(rt, COPROC_INT32, d.a, 5, &shortc), COPROC_OK);
    assert_int_equal(coproc_table_add(tb.f, "short", shortc), COPROC_INVALID_ARGUMENT);
    assert_int_equal(coproc_table_add(tb.f, "a", tb.cols[0]), COPROC_INVALID_ARGUMENT);
    coproc_column_free(shortc);

    /* A device that does not exist; a root of another plan. */
    assert_int_equal(coproc_plan_create(rt, &p), COPROC_OK);
    s = coproc_plan_scan(p, tb.f, "fact");
    coproc_query_options o;
    coproc_query_options_init(&o);
    o.device = 99;
    assert_int_equal(coproc_query_run(p, s, &o, &r), COPROC_INVALID_ARGUMENT);
    coproc_plan *p2;
    assert_int_equal(coproc_plan_create(rt, &p2), COPROC_OK);
    assert_int_equal(coproc_query_run(p2, s, NULL, &r), COPROC_INVALID_ARGUMENT);
    coproc_plan_free(p2);

    /* Asynchronous: submit, wait, same rows as the table (less its float64
     * column where no device has fp64: it cannot be read there). */
    coproc_device_info info;
    assert_int_equal(coproc_device_info_get(rt, 0, &info), COPROC_OK);
    if (!info.has_fp64) {
        coproc_plan_free(p);
        assert_int_equal(coproc_plan_create(rt, &p), COPROC_OK);
        s = coproc_plan_scan(p, tb.f_no64, "fact");
    }
    coproc_query_task *task;
    assert_int_equal(coproc_query_submit(p, s, NULL, &task), COPROC_OK);
    coproc_status st = coproc_query_wait(task, &r);
    if (st != COPROC_OK)
        fail_msg("scan: %s: %s", coproc_status_name(st), coproc_errmsg(rt));
    assert_int_equal(coproc_table_rows(r.table), 100);
    assert_int_equal(coproc_table_column_count(r.table), info.has_fp64 ? 7 : 6);
    assert_memory_equal(coproc_column_host_data(coproc_table_column(r.table, "b")), d.b, 100 * 8);
    coproc_query_result_free(&r);
    coproc_plan_free(p);

    free_tables(&tb);
    free_data(&d);
    coproc_close(rt);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_plans),
        cmocka_unit_test(test_hybrid),
        cmocka_unit_test(test_hybrid_copied),
    };
    /* COPROC_TEST_FILTER picks tests by name (glob), as in test_portable. */
    const char *filter = getenv("COPROC_TEST_FILTER");
    if (filter && *filter)
        cmocka_set_test_filter(filter);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
