/* test_query_fused_nulls.c - plans over columns with nulls (validity bitmaps)
 * in the fused engine, against plain scalar C with SQL's semantics: filters
 * in three-valued logic (NOT over comparisons with nulls, AND/OR mixes,
 * column-against-column comparisons, BETWEEN, IN, arithmetic with nulls),
 * projections, joins with null keys on either side, group-by aggregates over
 * null values. Tables of 0, 1, 33, 1000 and 5000 rows, nulls at 0 %, 1 %,
 * 50 % and 100 % (and no bitmap), host and device columns; every result row
 * by row, values where valid and the validity bits; and that the pipelines
 * really ran fused. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coproc/query.h"
#include "testlib.h"

/* ---------------------------------------------------------------- data */

#define DIM 40 /* the dimension: keys 1..DIM (dense), k * 1000003 + 7 (hashed) */

static const char *const DICT[] = {"apple",  "apricot", "banana", "berry",
                                   "cherry", "date",    "fig",    "grape"};

typedef struct data {
    size_t n;
    int rate; /* % of null rows; -1: no bitmap */
    int64_t *id;
    int32_t *g, *a, *fk, *sc; /* sc: codes of a string column (DICT) */
    int64_t *b, *hk;
    uint32_t *u;
    double *x;
    uint32_t *va, *vb, *vu, *vx, *vfk, *vhk, *vs; /* validity (NULL: none) */
    int64_t dk[DIM], dh[DIM];
    int32_t dv[DIM], dn[DIM];
    uint32_t vdk[2], vdh[2], vdn[2];
} data;

static int is_valid(const uint32_t *v, size_t i)
{
    return !v || (v[i / 32] >> (i % 32) & 1u);
}

/* A bitmap of n rows with `rate` % nulls (NULL for -1). */
static uint32_t *bitmap(test_rng *r, size_t n, int rate, uint32_t *into)
{
    if (rate < 0)
        return NULL;
    size_t words = (n + 31) / 32;
    uint32_t *v = into ? into : calloc(words ? words : 1, 4);
    memset(v, 0, (words ? words : 1) * 4);
    for (size_t i = 0; i < n; i++)
        if ((int)test_rand_below(r, 100) >= rate)
            v[i / 32] |= 1u << (i % 32);
    /* bits past the last row are set: they must be ignored */
    if (n % 32)
        v[n / 32] |= ~0u << (n % 32);
    return v;
}

static void make_data(data *d, size_t n, int rate, uint64_t seed)
{
    test_rng r = {seed};
    memset(d, 0, sizeof *d);
    d->n = n;
    d->rate = rate;
    size_t m = n ? n : 1;
    d->id = malloc(m * 8), d->g = malloc(m * 4), d->a = malloc(m * 4), d->fk = malloc(m * 4);
    d->b = malloc(m * 8), d->hk = malloc(m * 8), d->u = malloc(m * 4), d->x = malloc(m * 8);
    d->sc = malloc(m * 4);
    for (size_t i = 0; i < n; i++) {
        d->id[i] = (int64_t)i;
        d->g[i] = (int32_t)(i % 5);
        d->a[i] = (int32_t)test_rand_below(&r, 101) - 50;
        d->b[i] = (int64_t)test_rand_below(&r, 2001) - 1000;
        d->u[i] = (uint32_t)test_rand_below(&r, 2000);
        d->x[i] = ((double)test_rand_below(&r, 4001) - 2000) / 64.0;
        d->fk[i] = (int32_t)test_rand_below(&r, DIM + 4); /* 0 and > DIM miss */
        d->hk[i] = (int64_t)d->fk[i] * 1000003 + 7;
        d->sc[i] = (int32_t)test_rand_below(&r, 8);
    }
    d->va = bitmap(&r, n, rate, NULL), d->vb = bitmap(&r, n, rate, NULL);
    d->vu = bitmap(&r, n, rate, NULL), d->vx = bitmap(&r, n, rate, NULL);
    d->vfk = bitmap(&r, n, rate, NULL), d->vhk = bitmap(&r, n, rate, NULL);
    d->vs = bitmap(&r, n, rate, NULL);
    /* The dimension: unique valid keys; a null key's value is a valid key
     * of another row (a join that read it would match, or see duplicates). */
    int drate = rate < 0 ? -1 : rate > 0 && rate < 50 ? 10 : rate;
    bitmap(&r, DIM, drate < 0 ? 0 : drate, d->vdk);
    bitmap(&r, DIM, drate < 0 ? 0 : drate, d->vdh);
    bitmap(&r, DIM, drate < 0 ? 0 : drate, d->vdn);
    for (int i = 0; i < DIM; i++) {
        int valid = drate < 0 || is_valid(d->vdk, (size_t)i);
        d->dk[i] = valid ? DIM - i : 1 + (i * 7) % DIM;
        valid = drate < 0 || is_valid(d->vdh, (size_t)i);
        d->dh[i] = (valid ? DIM - i : 1 + (i * 3) % DIM) * (int64_t)1000003 + 7;
        d->dv[i] = i * 10 + 3;
        d->dn[i] = i - 20;
    }
}

static void free_data(data *d)
{
    free(d->id), free(d->g), free(d->a), free(d->fk), free(d->b), free(d->hk), free(d->u),
        free(d->x);
    free(d->va), free(d->vb), free(d->vu), free(d->vx), free(d->vfk), free(d->vhk), free(d->vs);
    free(d->sc);
}

typedef struct tables {
    coproc_table *f, *dim;
    coproc_column *cols[32];
    int ncols;
} tables;

/* A column over p (borrowed) with validity v (copied into a column of its
 * own; NULL: none), a host column (dev < 0) or on device dev. */
static void add(coproc_runtime *rt, tables *tb, coproc_table *t, int dev, const char *name,
                coproc_type ty, const void *p, size_t n, const uint32_t *v)
{
    coproc_column *c, *bm = NULL;
    size_t words = (n + 31) / 32;
    if (dev < 0) {
        assert_int_equal(coproc_column_wrap(rt, ty, n ? p : NULL, n, &c), COPROC_OK);
        if (v)
            assert_int_equal(coproc_column_wrap(rt, COPROC_UINT32, words ? v : NULL, words, &bm),
                             COPROC_OK);
    } else {
        assert_int_equal(coproc_column_upload(rt, dev, ty, n ? p : NULL, n, &c), COPROC_OK);
        if (v)
            assert_int_equal(
                coproc_column_upload(rt, dev, COPROC_UINT32, words ? v : NULL, words, &bm),
                COPROC_OK);
    }
    if (bm)
        assert_int_equal(coproc_column_set_validity(c, bm), COPROC_OK);
    tb->cols[tb->ncols++] = c;
    assert_int_equal(coproc_table_add(t, name, c), COPROC_OK);
}

static void make_tables(coproc_runtime *rt, const data *d, int dev, int fp64, tables *tb)
{
    memset(tb, 0, sizeof *tb);
    assert_int_equal(coproc_table_create(rt, &tb->f), COPROC_OK);
    assert_int_equal(coproc_table_create(rt, &tb->dim), COPROC_OK);
    size_t n = d->n;
    add(rt, tb, tb->f, dev, "id", COPROC_INT64, d->id, n, NULL);
    add(rt, tb, tb->f, dev, "g", COPROC_INT32, d->g, n, NULL);
    add(rt, tb, tb->f, dev, "a", COPROC_INT32, d->a, n, d->va);
    add(rt, tb, tb->f, dev, "b", COPROC_INT64, d->b, n, d->vb);
    add(rt, tb, tb->f, dev, "u", COPROC_UINT32, d->u, n, d->vu);
    if (fp64)
        add(rt, tb, tb->f, dev, "x", COPROC_FLOAT64, d->x, n, d->vx);
    add(rt, tb, tb->f, dev, "fk", COPROC_INT32, d->fk, n, d->vfk);
    add(rt, tb, tb->f, dev, "hk", COPROC_INT64, d->hk, n, d->vhk);
    add(rt, tb, tb->f, dev, "s", COPROC_INT32, d->sc, n, d->vs);
    assert_int_equal(coproc_column_set_dictionary(tb->cols[tb->ncols - 1], 8, DICT), COPROC_OK);
    int dv = d->rate >= 0;
    add(rt, tb, tb->dim, dev, "dk", COPROC_INT64, d->dk, DIM, dv ? d->vdk : NULL);
    add(rt, tb, tb->dim, dev, "dh", COPROC_INT64, d->dh, DIM, dv ? d->vdh : NULL);
    add(rt, tb, tb->dim, dev, "dv", COPROC_INT32, d->dv, DIM, NULL);
    add(rt, tb, tb->dim, dev, "dn", COPROC_INT32, d->dn, DIM, dv ? d->vdn : NULL);
}

static void free_tables(tables *tb)
{
    coproc_table_free(tb->f);
    coproc_table_free(tb->dim);
    for (int i = 0; i < tb->ncols; i++)
        coproc_column_free(tb->cols[i]);
}

/* ---------------------------------------------------------------- results as rows */

typedef struct cell {
    int null;
    int isf;
    int64_t i;
    double f;
} cell;

typedef struct rows {
    int ncols;
    size_t n, cap;
    cell *v;
} rows;

static cell *rows_add(rows *r)
{
    if (r->n == r->cap) {
        r->cap = r->cap ? 2 * r->cap : 64;
        r->v = realloc(r->v, r->cap * r->ncols * sizeof *r->v);
        assert_non_null(r->v);
    }
    cell *c = &r->v[r->n++ * r->ncols];
    memset(c, 0, r->ncols * sizeof *c);
    return c;
}

static int ncols_sort;
static int cell_cmp(const void *x, const void *y)
{
    const cell *a = x, *b = y;
    for (int c = 0; c < ncols_sort; c++) {
        if (a[c].null != b[c].null)
            return a[c].null - b[c].null; /* nulls last */
        if (a[c].null)
            continue;
        if (a[c].isf ? a[c].f != b[c].f : a[c].i != b[c].i)
            return a[c].isf ? (a[c].f < b[c].f ? -1 : 1) : (a[c].i < b[c].i ? -1 : 1);
    }
    return 0;
}

static void rows_sort(rows *r)
{
    ncols_sort = r->ncols;
    if (r->n > 1) /* no rows: r->v may be NULL, which qsort must not get */
        qsort(r->v, r->n, r->ncols * sizeof *r->v, cell_cmp);
}

/* The result table's rows: values, and nulls where its validity says so. */
static void rows_of(const coproc_table *t, rows *r)
{
    memset(r, 0, sizeof *r);
    r->ncols = coproc_table_column_count(t);
    for (size_t i = 0; i < coproc_table_rows(t); i++) {
        cell *row = rows_add(r);
        for (int c = 0; c < r->ncols; c++) {
            const coproc_column *col = coproc_table_column_at(t, c);
            const coproc_column *vc = coproc_column_validity(col);
            const void *p = coproc_column_host_data(col);
            coproc_type ty = coproc_column_type(col);
            row[c].null = vc && !is_valid(coproc_column_host_data(vc), i);
            row[c].isf = test_is_float(ty);
            if (row[c].null)
                continue;
            if (row[c].isf)
                row[c].f = test_get_f(ty, p, i);
            else
                row[c].i = ty == COPROC_UINT32 || ty == COPROC_UINT64
                               ? (int64_t)test_get_u(ty, p, i)
                               : test_get_i(ty, p, i);
        }
    }
}

static void expect_rows(const char *what, rows *got, rows *want)
{
    rows_sort(got);
    rows_sort(want);
    if (got->n != want->n || got->ncols != want->ncols)
        fail_msg("%s: %zu rows x %d columns, expected %zu x %d", what, got->n, got->ncols, want->n,
                 want->ncols);
    for (size_t i = 0; i < got->n * got->ncols; i++) {
        const cell *g = &got->v[i], *w = &want->v[i];
        int same = g->null == w->null;
        if (same && !g->null)
            same = w->isf ? (g->f == w->f || fabs(g->f - w->f) <= 1e-9 * fmax(1, fabs(w->f)) ||
                             (isnan(g->f) && isnan(w->f)))
                          : g->i == w->i;
        if (!same)
            fail_msg("%s: row %zu column %d: got %s %lld/%g, expected %s %lld/%g", what,
                     i / got->ncols, (int)(i % got->ncols), g->null ? "null" : "", (long long)g->i,
                     g->f, w->null ? "null" : "", (long long)w->i, w->f);
    }
    free(got->v);
    free(want->v);
}

static cell ival(int valid, int64_t v)
{
    return (cell){.null = !valid, .i = valid ? v : 0};
}

static cell fval(int valid, double v)
{
    return (cell){.null = !valid, .isf = 1, .f = valid ? v : 0};
}

/* ---------------------------------------------------------------- three-valued logic */

enum { F = 0, T = 1, U = 2 };

static int t_cmp(int valid, int holds)
{
    return !valid ? U : holds ? T : F;
}
static int t_and(int x, int y)
{
    return x == F || y == F ? F : x == T && y == T ? T : U;
}
static int t_or(int x, int y)
{
    return x == T || y == T ? T : x == F && y == F ? F : U;
}
static int t_not(int x)
{
    return x == U ? U : x == T ? F : T;
}

/* ---------------------------------------------------------------- the predicates */

typedef struct ctx {
    coproc_runtime *rt;
    const char *path;
    const data *d;
    tables *tb;
    int fp64;
    int device; /* the device columns live on, or -1 */
    int hybrid; /* opts.hybrid: a group-by over host columns on every device */
} ctx;

typedef struct pred {
    const char *name;
    int needs_fp64;
    coproc_expr *(*build)(coproc_plan *p, const data *d);
    int (*ref)(const data *d, size_t i);
} pred;

#define COL(n) coproc_expr_column(p, n)
#define INT(v) coproc_expr_int(p, v)
#define CMP(op, x, y) coproc_expr_compare(p, COPROC_CMP_##op, x, y)

#define VA is_valid(d->va, i)
#define VB is_valid(d->vb, i)
#define VU is_valid(d->vu, i)
#define VX is_valid(d->vx, i)

/* NOT (a < 10) */
static coproc_expr *b_not_lt(coproc_plan *p, const data *d)
{
    (void)d;
    return coproc_expr_not(p, CMP(LT, COL("a"), INT(10)));
}
static int r_not_lt(const data *d, size_t i)
{
    return t_not(t_cmp(VA, d->a[i] < 10));
}

/* (a < 0 OR b > 100) AND NOT (u >= 1000) */
static coproc_expr *b_mix(coproc_plan *p, const data *d)
{
    (void)d;
    return coproc_expr_and(
        p, coproc_expr_or(p, CMP(LT, COL("a"), INT(0)), CMP(GT, COL("b"), INT(100))),
        coproc_expr_not(p, CMP(GE, COL("u"), INT(1000))));
}
static int r_mix(const data *d, size_t i)
{
    return t_and(t_or(t_cmp(VA, d->a[i] < 0), t_cmp(VB, d->b[i] > 100)),
                 t_not(t_cmp(VU, d->u[i] >= 1000)));
}

/* a * 20 < b, and NOT (a <> b / 20): columns against columns */
static coproc_expr *b_colcol(coproc_plan *p, const data *d)
{
    (void)d;
    return coproc_expr_or(
        p, CMP(LT, coproc_expr_arith(p, COPROC_ARITH_MUL, COL("a"), INT(20)), COL("b")),
        coproc_expr_not(
            p, CMP(NE, COL("a"), coproc_expr_arith(p, COPROC_ARITH_DIV, COL("b"), INT(20)))));
}
static int r_colcol(const data *d, size_t i)
{
    return t_or(t_cmp(VA && VB, (int64_t)d->a[i] * 20 < d->b[i]),
                t_not(t_cmp(VA && VB, d->a[i] != d->b[i] / 20)));
}

/* NOT (a IN (1, 2, 3, -5)) OR u IN (7, 1999) */
static coproc_expr *b_in(coproc_plan *p, const data *d)
{
    (void)d;
    coproc_expr *l1[] = {INT(1), INT(2), INT(3), INT(-5)};
    coproc_expr *l2[] = {INT(7), INT(1999)};
    return coproc_expr_or(p, coproc_expr_not(p, coproc_expr_in(p, COL("a"), 4, l1)),
                          coproc_expr_in(p, COL("u"), 2, l2));
}
static int r_in(const data *d, size_t i)
{
    int32_t a = d->a[i];
    return t_or(t_not(t_cmp(VA, a == 1 || a == 2 || a == 3 || a == -5)),
                t_cmp(VU, d->u[i] == 7 || d->u[i] == 1999));
}

/* NOT (a + b > 0): arithmetic with a null is null */
static coproc_expr *b_arith(coproc_plan *p, const data *d)
{
    (void)d;
    return coproc_expr_not(
        p, CMP(GT, coproc_expr_arith(p, COPROC_ARITH_ADD, COL("a"), COL("b")), INT(0)));
}
static int r_arith(const data *d, size_t i)
{
    return t_not(t_cmp(VA && VB, d->a[i] + d->b[i] > 0));
}

/* (a > 0) OR (id / 2 * 2 = id): TRUE OR UNKNOWN is TRUE */
static coproc_expr *b_or_true(coproc_plan *p, const data *d)
{
    (void)d;
    coproc_expr *even =
        CMP(EQ,
            coproc_expr_arith(p, COPROC_ARITH_MUL,
                              coproc_expr_arith(p, COPROC_ARITH_DIV, COL("id"), INT(2)), INT(2)),
            COL("id"));
    return coproc_expr_or(p, CMP(GT, COL("a"), INT(0)), even);
}
static int r_or_true(const data *d, size_t i)
{
    return t_or(t_cmp(VA, d->a[i] > 0), i % 2 == 0 ? T : F);
}

/* NOT (NOT (a > 0) AND id < n / 2): FALSE AND UNKNOWN is FALSE */
static coproc_expr *b_and_false(coproc_plan *p, const data *d)
{
    return coproc_expr_not(p, coproc_expr_and(p, coproc_expr_not(p, CMP(GT, COL("a"), INT(0))),
                                              CMP(LT, COL("id"), INT((int64_t)d->n / 2))));
}
static int r_and_false(const data *d, size_t i)
{
    return t_not(t_and(t_not(t_cmp(VA, d->a[i] > 0)), i < d->n / 2 ? T : F));
}

/* NOT (u BETWEEN 100 AND 1500) AND b BETWEEN a AND 900 */
static coproc_expr *b_between(coproc_plan *p, const data *d)
{
    (void)d;
    return coproc_expr_and(
        p, coproc_expr_not(p, coproc_expr_between(p, COL("u"), INT(100), INT(1500))),
        coproc_expr_between(p, COL("b"), COL("a"), INT(900)));
}
static int r_between(const data *d, size_t i)
{
    return t_and(t_not(t_cmp(VU, d->u[i] >= 100 && d->u[i] <= 1500)),
                 t_cmp(VA && VB, d->b[i] >= d->a[i] && d->b[i] <= 900));
}

/* NOT (a > 20 OR u < 500) OR NOT (b > 0 AND NOT (a < -30)): the
 * negations of OR and AND over unknowns */
static coproc_expr *b_not_or(coproc_plan *p, const data *d)
{
    (void)d;
    return coproc_expr_or(
        p,
        coproc_expr_not(p,
                        coproc_expr_or(p, CMP(GT, COL("a"), INT(20)), CMP(LT, COL("u"), INT(500)))),
        coproc_expr_not(p, coproc_expr_and(p, CMP(GT, COL("b"), INT(0)),
                                           coproc_expr_not(p, CMP(LT, COL("a"), INT(-30))))));
}
static int r_not_or(const data *d, size_t i)
{
    return t_or(t_not(t_or(t_cmp(VA, d->a[i] > 20), t_cmp(VU, d->u[i] < 500))),
                t_not(t_and(t_cmp(VB, d->b[i] > 0), t_not(t_cmp(VA, d->a[i] < -30)))));
}

/* Strings (tests of their codes): NOT (s LIKE 'ap%') AND s < 'fig' OR
 * s IN ('date', 'grape') OR NOT (s BETWEEN 'b' AND 'c') */
static coproc_expr *b_strings(coproc_plan *p, const data *d)
{
    (void)d;
    coproc_expr *in[] = {coproc_expr_string(p, "date"), coproc_expr_string(p, "grape")};
    coproc_expr *e = coproc_expr_and(p, coproc_expr_not(p, coproc_expr_prefix(p, COL("s"), "ap")),
                                     CMP(LT, COL("s"), coproc_expr_string(p, "fig")));
    e = coproc_expr_or(p, e, coproc_expr_in(p, COL("s"), 2, in));
    return coproc_expr_or(
        p, e,
        coproc_expr_not(p, coproc_expr_between(p, COL("s"), coproc_expr_string(p, "b"),
                                               coproc_expr_string(p, "c"))));
}
static int r_strings(const data *d, size_t i)
{
    int v = is_valid(d->vs, i);
    const char *s = DICT[d->sc[i]];
    int e = t_and(t_not(t_cmp(v, strncmp(s, "ap", 2) == 0)), t_cmp(v, strcmp(s, "fig") < 0));
    e = t_or(e, t_cmp(v, strcmp(s, "date") == 0 || strcmp(s, "grape") == 0));
    return t_or(e, t_not(t_cmp(v, strcmp(s, "b") >= 0 && strcmp(s, "c") <= 0)));
}

/* x BETWEEN -10 AND 10 OR NOT (x * 2.0 > a) (float64) */
static coproc_expr *b_float(coproc_plan *p, const data *d)
{
    (void)d;
    return coproc_expr_or(
        p, coproc_expr_between(p, COL("x"), coproc_expr_float(p, -10), coproc_expr_float(p, 10)),
        coproc_expr_not(
            p, CMP(GT, coproc_expr_arith(p, COPROC_ARITH_MUL, COL("x"), coproc_expr_float(p, 2)),
                   COL("a"))));
}
static int r_float(const data *d, size_t i)
{
    double x = d->x[i];
    return t_or(t_cmp(VX, x >= -10 && x <= 10), t_not(t_cmp(VX && VA, x * 2.0 > (double)d->a[i])));
}

static const pred preds[] = {
    {"NOT (a < 10)", 0, b_not_lt, r_not_lt},
    {"(a < 0 OR b > 100) AND NOT (u >= 1000)", 0, b_mix, r_mix},
    {"a * 20 < b OR NOT (a <> b / 20)", 0, b_colcol, r_colcol},
    {"NOT (a IN (1, 2, 3, -5)) OR u IN (7, 1999)", 0, b_in, r_in},
    {"NOT (a + b > 0)", 0, b_arith, r_arith},
    {"a > 0 OR id is even", 0, b_or_true, r_or_true},
    {"NOT (NOT (a > 0) AND id < n / 2)", 0, b_and_false, r_and_false},
    {"NOT (u BETWEEN 100 AND 1500) AND b BETWEEN a AND 900", 0, b_between, r_between},
    {"NOT (a > 20 OR u < 500) OR NOT (b > 0 AND NOT (a < -30))", 0, b_not_or, r_not_or},
    {"x BETWEEN -10 AND 10 OR NOT (x * 2 > a)", 1, b_float, r_float},
    {"strings: NOT LIKE, <, IN, NOT BETWEEN", 0, b_strings, r_strings},
};

/* ---------------------------------------------------------------- running */

/* Run in fused mode; expect_fused: every pipeline ran as a generated kernel. */
static coproc_query_result run(ctx *c, coproc_plan *p, coproc_node *root, const char *what,
                               int expect_fused)
{
    assert_int_equal(coproc_plan_status(p), COPROC_OK);
    coproc_query_options o;
    coproc_query_options_init(&o);
    o.mode = COPROC_QUERY_FUSED;
    o.hybrid = c->hybrid;
    coproc_query_result r;
    coproc_status s = coproc_query_run(p, root, &o, &r);
    if (s != COPROC_OK)
        fail_msg("%s (%s, %zu rows, nulls %d %%): %s: %s", what, c->path, c->d->n, c->d->rate,
                 coproc_status_name(s), coproc_errmsg(c->rt));
    if (expect_fused) {
        if (r.note[0])
            fail_msg("%s (%zu rows, nulls %d %%): not fused: %s", what, c->d->n, c->d->rate,
                     r.note);
        for (int i = 0; i < r.pipelines; i++)
            if (!r.pipeline[i].fused)
                fail_msg("%s: pipeline %d (%s) not fused", what, i, r.pipeline[i].what);
    }
    return r;
}

static void check(ctx *c, coproc_plan *p, coproc_node *root, const char *what, rows *want)
{
    coproc_query_result r = run(c, p, root, what, 1);
    rows got;
    rows_of(r.table, &got);
    char label[256];
    snprintf(label, sizeof label, "%s (%s, %zu rows, nulls %d %%, %s columns)", what, c->path,
             c->d->n, c->d->rate, c->device < 0 ? "host" : "device");
    expect_rows(label, &got, want);
    coproc_query_result_free(&r);
    coproc_plan_free(p);
}

/* Each predicate as a filter: the ids of the rows where it is TRUE, and a
 * group-by over them (counts and sums of a column without nulls). */
static void plan_filters(ctx *c)
{
    const data *d = c->d;
    for (size_t k = 0; k < sizeof preds / sizeof preds[0]; k++) {
        const pred *pr = &preds[k];
        if (pr->needs_fp64 && !c->fp64)
            continue;
        coproc_plan *p;
        assert_int_equal(coproc_plan_create(c->rt, &p), COPROC_OK);
        coproc_node *f = coproc_plan_filter(p, coproc_plan_scan(p, c->tb->f, "f"), pr->build(p, d));
        const char *names[] = {"id"};
        coproc_expr *ex[] = {COL("id")};
        coproc_node *root = coproc_plan_project(p, f, 1, names, ex);
        rows want = {.ncols = 1};
        for (size_t i = 0; i < d->n; i++)
            if (pr->ref(d, i) == T)
                rows_add(&want)[0] = ival(1, d->id[i]);
        check(c, p, root, pr->name, &want);

        assert_int_equal(coproc_plan_create(c->rt, &p), COPROC_OK);
        f = coproc_plan_filter(p, coproc_plan_scan(p, c->tb->f, "f"), pr->build(p, d));
        const char *keys[] = {"g"};
        coproc_aggregate aggs[] = {{COPROC_AGG_COUNT, NULL, "n"}, {COPROC_AGG_SUM, COL("id"), "s"}};
        root = coproc_plan_group_by(p, f, 1, keys, 2, aggs);
        int64_t cnt[5] = {0}, sum[5] = {0};
        for (size_t i = 0; i < d->n; i++)
            if (pr->ref(d, i) == T)
                cnt[d->g[i]]++, sum[d->g[i]] += d->id[i];
        want = (rows){.ncols = 3};
        for (int g = 0; g < 5; g++)
            if (cnt[g]) {
                cell *row = rows_add(&want);
                row[0] = ival(1, g), row[1] = ival(1, cnt[g]), row[2] = ival(1, sum[g]);
            }
        char what[160];
        snprintf(what, sizeof what, "group-by after %s", pr->name);
        check(c, p, root, what, &want);
    }
}

/* A projection computed from columns with nulls (c = a + b, t = a < u),
 * then filtered on: c > 0 OR NOT t. */
static void plan_project_then_filter(ctx *c)
{
    const data *d = c->d;
    coproc_plan *p;
    assert_int_equal(coproc_plan_create(c->rt, &p), COPROC_OK);
    const char *n1[] = {"id", "c", "t"};
    coproc_expr *e1[] = {COL("id"), coproc_expr_arith(p, COPROC_ARITH_ADD, COL("a"), COL("b")),
                         CMP(LT, COL("a"), COL("u"))};
    coproc_node *pr = coproc_plan_project(p, coproc_plan_scan(p, c->tb->f, "f"), 3, n1, e1);
    coproc_node *f = coproc_plan_filter(
        p, pr, coproc_expr_or(p, CMP(GT, COL("c"), INT(0)), CMP(EQ, COL("t"), INT(0))));
    const char *n2[] = {"id"};
    coproc_expr *e2[] = {COL("id")};
    coproc_node *root = coproc_plan_project(p, f, 1, n2, e2);
    rows want = {.ncols = 1};
    for (size_t i = 0; i < d->n; i++) {
        int cv = t_cmp(VA && VB, d->a[i] + d->b[i] > 0);
        int tv = t_cmp(VA && VU, (int64_t)d->a[i] < (int64_t)d->u[i]);
        int t_is_0 = tv == U ? U : tv == F ? T : F;
        if (t_or(cv, t_is_0) == T)
            rows_add(&want)[0] = ival(1, d->id[i]);
    }
    check(c, p, root, "project a + b, a < u, then filter", &want);
}

/* Joins on keys with nulls on both sides (dense dk and hashed dh): inner
 * (then a filter on a build column with nulls), and semi. */
static void plan_joins(ctx *c)
{
    const data *d = c->d;
    int dvalid = d->rate >= 0;
    for (int hashed = 0; hashed < 2; hashed++) {
        const char *pk = hashed ? "hk" : "fk", *bk = hashed ? "dh" : "dk";
        const uint32_t *vp = hashed ? d->vhk : d->vfk;
        const uint32_t *vb = dvalid ? (hashed ? d->vdh : d->vdk) : NULL;
        for (int kind = 0; kind < 3; kind++) {
            coproc_plan *p;
            assert_int_equal(coproc_plan_create(c->rt, &p), COPROC_OK);
            coproc_node *j = coproc_plan_join(p, kind == 1 ? COPROC_JOIN_SEMI : COPROC_JOIN_INNER,
                                              coproc_plan_scan(p, c->tb->f, "f"), pk,
                                              coproc_plan_scan(p, c->tb->dim, "dim"), bk);
            if (kind == 2) /* dn > -10 over the build side's nullable column */
                j = coproc_plan_filter(p, j, CMP(GT, COL("dn"), INT(-10)));
            const char *names[] = {"id", "dv"};
            coproc_expr *ex[] = {COL("id"), kind == 1 ? NULL : COL("dv")};
            coproc_node *root = coproc_plan_project(p, j, kind == 1 ? 1 : 2, names, ex);
            rows want = {.ncols = kind == 1 ? 1 : 2};
            for (size_t i = 0; i < d->n; i++) {
                if (!is_valid(vp, i))
                    continue;
                int64_t key = hashed ? d->hk[i] : d->fk[i];
                for (int r = 0; r < DIM; r++) {
                    if (!is_valid(vb, (size_t)r) || (hashed ? d->dh[r] : d->dk[r]) != key)
                        continue;
                    if (kind == 2 &&
                        (!is_valid(dvalid ? d->vdn : NULL, (size_t)r) || d->dn[r] <= -10))
                        continue;
                    cell *row = rows_add(&want);
                    row[0] = ival(1, d->id[i]);
                    if (kind != 1)
                        row[1] = ival(1, d->dv[r]);
                }
            }
            char what[96];
            snprintf(what, sizeof what, "%s join on %s = %s%s", kind == 1 ? "semi" : "inner", pk,
                     bk, kind == 2 ? ", filter dn > -10" : "");
            check(c, p, root, what, &want);
        }
    }
}

/* Projections materialised: columns passed through keep their nulls, a
 * computed column is null where an operand is, a boolean 0/1 and null where
 * UNKNOWN; after a filter with nulls (filtered 1), and after one that needs
 * a and u valid to pass (2: a > -40 AND NOT (u < 100) - they are then read
 * as columns without nulls). */
static void plan_project_nulls(ctx *c, int filtered)
{
    const data *d = c->d;
    coproc_plan *p;
    assert_int_equal(coproc_plan_create(c->rt, &p), COPROC_OK);
    coproc_node *in = coproc_plan_scan(p, c->tb->f, "f");
    if (filtered == 1)
        in = coproc_plan_filter(p, in, b_not_or(p, d));
    if (filtered == 2)
        in = coproc_plan_filter(p, in,
                                coproc_expr_and(p, CMP(GT, COL("a"), INT(-40)),
                                                coproc_expr_not(p, CMP(LT, COL("u"), INT(100)))));
    const char *names[] = {"id", "a", "b", "u", "s", "t", "q", "x", "w"};
    coproc_expr *ex[] = {COL("id"),
                         COL("a"),
                         COL("b"),
                         COL("u"),
                         coproc_expr_arith(p, COPROC_ARITH_SUB, COL("b"), COL("a")),
                         coproc_expr_or(p, CMP(LT, COL("a"), INT(0)), CMP(GT, COL("u"), INT(1000))),
                         coproc_expr_not(p, CMP(EQ, COL("a"), COL("g"))),
                         COL("x"),
                         coproc_expr_arith(p, COPROC_ARITH_MUL, COL("x"), COL("a"))};
    int n = c->fp64 ? 9 : 7;
    coproc_node *root = coproc_plan_project(p, in, n, names, ex);
    rows want = {.ncols = n};
    for (size_t i = 0; i < d->n; i++) {
        if (filtered == 1 && r_not_or(d, i) != T)
            continue;
        if (filtered == 2 && t_and(t_cmp(VA, d->a[i] > -40), t_not(t_cmp(VU, d->u[i] < 100))) != T)
            continue;
        cell *row = rows_add(&want);
        row[0] = ival(1, d->id[i]);
        row[1] = ival(VA, d->a[i]);
        row[2] = ival(VB, d->b[i]);
        row[3] = ival(VU, d->u[i]);
        row[4] = ival(VA && VB, d->b[i] - d->a[i]);
        int t = t_or(t_cmp(VA, d->a[i] < 0), t_cmp(VU, d->u[i] > 1000));
        row[5] = ival(t != U, t == T);
        int q = t_not(t_cmp(VA, d->a[i] == d->g[i]));
        row[6] = ival(q != U, q == T);
        if (n > 7) {
            row[7] = fval(VX, d->x[i]);
            row[8] = fval(VX && VA, d->x[i] * (double)d->a[i]);
        }
    }
    static const char *what[] = {"projection with nulls", "projection with nulls after a filter",
                                 "projection after a filter proving a, u valid"};
    check(c, p, root, what[filtered], &want);
}

/* An inner join passing columns with nulls through from both sides. */
static void plan_join_pass_nulls(ctx *c)
{
    const data *d = c->d;
    int dvalid = d->rate >= 0;
    coproc_plan *p;
    assert_int_equal(coproc_plan_create(c->rt, &p), COPROC_OK);
    coproc_node *j = coproc_plan_join(p, COPROC_JOIN_INNER, coproc_plan_scan(p, c->tb->f, "f"),
                                      "hk", coproc_plan_scan(p, c->tb->dim, "dim"), "dh");
    /* the second dimension renamed by a projection on its build side */
    const char *dn2[] = {"k2", "n2"};
    coproc_expr *de2[] = {COL("dk"), COL("dn")};
    coproc_node *dim2 =
        coproc_plan_project(p, coproc_plan_scan(p, c->tb->dim, "dim2"), 2, dn2, de2);
    j = coproc_plan_join(p, COPROC_JOIN_INNER, j, "fk", dim2, "k2");
    const char *names[] = {"id", "a", "n2", "m"};
    coproc_expr *ex[] = {COL("id"), COL("a"), COL("n2"),
                         coproc_expr_arith(p, COPROC_ARITH_MUL, COL("n2"), COL("a"))};
    coproc_node *root = coproc_plan_project(p, j, 4, names, ex);
    rows want = {.ncols = 4};
    for (size_t i = 0; i < d->n; i++) {
        if (!is_valid(d->vhk, i) || !is_valid(d->vfk, i))
            continue;
        int r1 = -1, r2 = -1;
        for (int r = 0; r < DIM; r++) {
            if (is_valid(dvalid ? d->vdh : NULL, (size_t)r) && d->dh[r] == d->hk[i])
                r1 = r;
            if (is_valid(dvalid ? d->vdk : NULL, (size_t)r) && d->dk[r] == d->fk[i])
                r2 = r;
        }
        if (r1 < 0 || r2 < 0)
            continue;
        int vn = is_valid(dvalid ? d->vdn : NULL, (size_t)r2);
        cell *row = rows_add(&want);
        row[0] = ival(1, d->id[i]);
        row[1] = ival(VA, d->a[i]);
        row[2] = ival(vn, d->dn[r2]);
        row[3] = ival(vn && VA, (int64_t)d->dn[r2] * d->a[i]);
    }
    check(c, p, root, "two joins passing nulls through", &want);
}

/* A group-by's aggregates that can be null, read by the next pipeline:
 * SUM(a) by g, then NOT (sa > 0). */
static void plan_group_then_filter(ctx *c)
{
    const data *d = c->d;
    coproc_plan *p;
    assert_int_equal(coproc_plan_create(c->rt, &p), COPROC_OK);
    const char *keys[] = {"g"};
    coproc_aggregate aggs[] = {{COPROC_AGG_SUM, COL("a"), "sa"}};
    coproc_node *gb = coproc_plan_group_by(p, coproc_plan_scan(p, c->tb->f, "f"), 1, keys, 1, aggs);
    coproc_node *root = coproc_plan_filter(p, gb, coproc_expr_not(p, CMP(GT, COL("sa"), INT(0))));
    int64_t n[5] = {0}, nv[5] = {0}, sum[5] = {0};
    for (size_t i = 0; i < d->n; i++) {
        n[d->g[i]]++;
        if (VA)
            nv[d->g[i]]++, sum[d->g[i]] += d->a[i];
    }
    rows want = {.ncols = 2};
    for (int g = 0; g < 5; g++) {
        int valid = nv[g] > 0 || d->rate < 0;
        if (n[g] && t_not(t_cmp(valid, sum[g] > 0)) == T) {
            cell *row = rows_add(&want);
            row[0] = ival(1, g), row[1] = ival(1, sum[g]);
        }
    }
    check(c, p, root, "group-by, then a filter on its aggregate", &want);
}

/* An order-by over a column with nulls, fused: its rows come ordered with
 * the nulls last (the host's order-by reads the validity). Over a projection
 * (group 0), over a group-by's null keys (1) and its aggregates (2). */
static void plan_order_nulls(ctx *c, int group)
{
    if (c->d->rate < 0)
        return;
    coproc_plan *p;
    assert_int_equal(coproc_plan_create(c->rt, &p), COPROC_OK);
    const char *names[] = {"id", "a"};
    coproc_expr *ex[] = {COL("id"), COL("a")};
    coproc_node *in = coproc_plan_scan(p, c->tb->f, "f");
    const char *keys[] = {group == 1 ? "a" : "g"};
    coproc_aggregate aggs[] = {{COPROC_AGG_SUM, COL(group == 1 ? "id" : "a"), "id"}};
    in = group ? coproc_plan_group_by(p, in, 1, keys, 1, aggs)
               : coproc_plan_project(p, in, 2, names, ex);
    const char *by = group == 1 ? keys[0] : "id";
    coproc_order_key key = {by, 0, 0};
    coproc_node *root = coproc_plan_order_by(p, in, 1, &key, 0);
    coproc_query_result r = run(c, p, root, "order-by over nulls", 0);
    assert_true(r.note[0] == 0);
    if (!group)
        assert_int_equal(coproc_table_rows(r.table), c->d->n);
    const coproc_column *col = coproc_table_column(r.table, by);
    const coproc_column *v = coproc_column_validity(col);
    const uint32_t *w = v ? coproc_column_host_data(v) : NULL;
    coproc_type t = coproc_column_type(col);
    const void *data = coproc_column_host_data(col);
    int seen_null = 0;
    for (size_t i = 0; i < coproc_table_rows(r.table); i++) {
        int valid = !w || ((w[i / 32] >> (i % 32)) & 1u);
        assert_false(valid && seen_null); /* nulls last */
        seen_null |= !valid;
        if (valid && i > 0 && (!w || ((w[(i - 1) / 32] >> ((i - 1) % 32)) & 1u)))
            assert_true(t == COPROC_INT64
                            ? ((const int64_t *)data)[i - 1] <= ((const int64_t *)data)[i]
                            : ((const int32_t *)data)[i - 1] <= ((const int32_t *)data)[i]);
    }
    coproc_query_result_free(&r);
    coproc_plan_free(p);
}

/* Group-by keys with nulls: the null keys form one group (per combination
 * with the other keys), reported with a null key. By a; by (a, fk); by the
 * build side's dn after a join. COUNT(*), SUM(id) and SUM(b) (nulls). */
static void plan_null_keys(ctx *c, int shape)
{
    const data *d = c->d;
    int dvalid = d->rate >= 0;
    coproc_plan *p;
    assert_int_equal(coproc_plan_create(c->rt, &p), COPROC_OK);
    coproc_node *in = coproc_plan_scan(p, c->tb->f, "f");
    if (shape == 2)
        in = coproc_plan_join(p, COPROC_JOIN_INNER, in, "fk",
                              coproc_plan_scan(p, c->tb->dim, "dim"), "dk");
    const char *k0[] = {"a"}, *k1[] = {"a", "fk"}, *k2[] = {"dn"};
    const char *const *keys = shape == 0 ? k0 : shape == 1 ? k1 : k2;
    int nkeys = shape == 1 ? 2 : 1;
    coproc_aggregate aggs[] = {{COPROC_AGG_COUNT, NULL, "n"},
                               {COPROC_AGG_SUM, COL("id"), "sid"},
                               {COPROC_AGG_SUM, COL("b"), "sb"}};
    coproc_node *root = coproc_plan_group_by(p, in, nkeys, keys, 3, aggs);
    /* groups: key 0 in -50..50 or dn -20..19 (101: null), key 1 fk 0..DIM+3 (DIM + 4: null) */
    enum { K0 = 102, K1 = DIM + 5 };
    int64_t *n = calloc(K0 * K1, 8), *sid = calloc(K0 * K1, 8), *sb = calloc(K0 * K1, 8),
            *nb = calloc(K0 * K1, 8);
    for (size_t i = 0; i < d->n; i++) {
        int g0, g1 = 0;
        if (shape == 2) {
            if (!is_valid(d->vfk, i))
                continue;
            int r = -1;
            for (int x = 0; x < DIM; x++)
                if (is_valid(dvalid ? d->vdk : NULL, (size_t)x) && d->dk[x] == d->fk[i])
                    r = x;
            if (r < 0)
                continue;
            g0 = is_valid(dvalid ? d->vdn : NULL, (size_t)r) ? d->dn[r] + 50 : K0 - 1;
        } else {
            g0 = VA ? d->a[i] + 50 : K0 - 1;
            if (shape == 1)
                g1 = is_valid(d->vfk, i) ? d->fk[i] : K1 - 1;
        }
        int at = g0 * K1 + g1;
        n[at]++;
        sid[at] += d->id[i];
        if (VB)
            nb[at]++, sb[at] += d->b[i];
    }
    rows want = {.ncols = nkeys + 3};
    for (int g0 = 0; g0 < K0; g0++)
        for (int g1 = 0; g1 < K1; g1++) {
            int at = g0 * K1 + g1;
            if (!n[at])
                continue;
            cell *row = rows_add(&want);
            row[0] = ival(g0 != K0 - 1, g0 - 50);
            if (nkeys == 2)
                row[1] = ival(g1 != K1 - 1, g1);
            row[nkeys] = ival(1, n[at]);
            row[nkeys + 1] = ival(1, sid[at]);
            row[nkeys + 2] = ival(nb[at] > 0 || d->rate < 0, sb[at]);
        }
    free(n), free(sid), free(sb), free(nb);
    static const char *what[] = {"group-by a (nulls)", "group-by a, fk (nulls)",
                                 "join, group-by dn (nulls)"};
    check(c, p, root, what[shape], &want);
}

/* One aggregate's reference over a group: the rows' validity and values. */
typedef struct acc {
    int64_t n, sum;
    double fsum, fmin, fmax;
    int64_t min, max;
} acc;

static void acc_add_i(acc *x, int valid, int64_t v)
{
    if (!valid)
        return;
    x->min = x->n == 0 || v < x->min ? v : x->min;
    x->max = x->n == 0 || v > x->max ? v : x->max;
    x->sum = (int64_t)((uint64_t)x->sum + (uint64_t)v);
    x->n++;
}

static void acc_add_f(acc *x, int valid, double v)
{
    if (!valid)
        return;
    x->fmin = x->n == 0 || v < x->fmin ? v : x->fmin;
    x->fmax = x->n == 0 || v > x->fmax ? v : x->fmax;
    x->fsum += v;
    x->n++;
}

/* Group-by aggregates over values with nulls (skipped; null where a group
 * has none), by g or with no keys, over every row or those a filter with
 * nulls keeps. `atomic`: only counts and integer sums (the GPU path's
 * atomic tables). */
static void plan_aggregates(ctx *c, int nkeys, int filtered, int atomic)
{
    const data *d = c->d;
    coproc_plan *p;
    assert_int_equal(coproc_plan_create(c->rt, &p), COPROC_OK);
    coproc_node *in = coproc_plan_scan(p, c->tb->f, "f");
    if (filtered)
        in = coproc_plan_filter(p, in, b_mix(p, d));
    coproc_aggregate aggs[] = {
        {COPROC_AGG_COUNT, NULL, "n"},
        {COPROC_AGG_COUNT, COL("b"), "nb"},
        {COPROC_AGG_SUM, COL("a"), "sa"},
        {COPROC_AGG_SUM, coproc_expr_arith(p, COPROC_ARITH_ADD, COL("a"), COL("b")), "sab"},
        {COPROC_AGG_SUM, COL("id"), "sid"},
        {COPROC_AGG_MIN, COL("u"), "mu"},
        {COPROC_AGG_MAX, COL("b"), "xb"},
        {COPROC_AGG_AVG, COL("a"), "va"},
        {COPROC_AGG_MIN, COL("x"), "mx"},
        {COPROC_AGG_MAX, COL("x"), "xx"},
        {COPROC_AGG_AVG, COL("x"), "ax"},
    };
    int naggs = atomic ? 5 : c->fp64 ? 11 : 8;
    const char *keys[] = {"g"};
    coproc_node *root = coproc_plan_group_by(p, in, nkeys, keys, naggs, aggs);
    enum { NA = 11 };
    acc x[5][NA];
    int64_t rows_in[5] = {0};
    memset(x, 0, sizeof x);
    for (size_t i = 0; i < d->n; i++) {
        if (filtered && r_mix(d, i) != T)
            continue;
        int g = nkeys ? d->g[i] : 0;
        rows_in[g]++;
        acc_add_i(&x[g][1], VB, d->b[i]);
        acc_add_i(&x[g][2], VA, d->a[i]);
        acc_add_i(&x[g][3], VA && VB, d->a[i] + d->b[i]);
        acc_add_i(&x[g][4], 1, d->id[i]);
        acc_add_i(&x[g][5], VU, d->u[i]);
        acc_add_i(&x[g][6], VB, d->b[i]);
        acc_add_i(&x[g][7], VA, d->a[i]);
        acc_add_f(&x[g][8], VX, d->x[i]);
        acc_add_f(&x[g][9], VX, d->x[i]);
        acc_add_f(&x[g][10], VX, d->x[i]);
    }
    rows want = {.ncols = nkeys + naggs};
    for (int g = 0; g < (nkeys ? 5 : 1); g++) {
        if (nkeys && rows_in[g] == 0)
            continue;
        cell *row = rows_add(&want), *ag = row + nkeys;
        if (nkeys)
            row[0] = ival(1, g);
        /* a column without a bitmap (rate -1) is never null: then an
         * empty group's SUM, MIN and MAX are 0 and AVG NaN, as always */
        int nb = d->rate < 0;
        acc *a = x[g];
        ag[0] = ival(1, rows_in[g]);
        ag[1] = ival(1, a[1].n);
        ag[2] = ival(a[2].n || nb, a[2].sum);
        ag[3] = ival(a[3].n || nb, a[3].sum);
        ag[4] = ival(1, a[4].sum);
        if (naggs > 5) {
            ag[5] = ival(a[5].n || nb, a[5].n ? a[5].min : 0);
            ag[6] = ival(a[6].n || nb, a[6].n ? a[6].max : 0);
            ag[7] = fval(a[7].n || nb, a[7].n ? (double)a[7].sum / (double)a[7].n : NAN);
        }
        if (naggs > 8) {
            ag[8] = fval(a[8].n || nb, a[8].n ? a[8].fmin : 0);
            ag[9] = fval(a[9].n || nb, a[9].n ? a[9].fmax : 0);
            ag[10] = fval(a[10].n || nb, a[10].n ? a[10].fsum / (double)a[10].n : NAN);
        }
    }
    char what[128];
    snprintf(what, sizeof what, "%d aggregates, %d keys%s", naggs, nkeys,
             filtered ? ", after a filter" : "");
    check(c, p, root, what, &want);
}

static void each(coproc_runtime *rt, int device, const char *path, void *user)
{
    (void)user;
    coproc_device_info info;
    assert_int_equal(coproc_device_info_get(rt, device, &info), COPROC_OK);
    if (!info.has_fp64)
        printf("device %d, %s: no fp64, the float64 cases skipped\n", device, path);
    static const size_t sizes[] = {0, 1, 33, 1000, 5000};
    static const int rates[] = {-1, 0, 1, 50, 100};
    /* COPROC_TEST_QUICK (Oclgrind): half the rows null, host columns only */
    int quick = getenv("COPROC_TEST_QUICK") != NULL;
    const char *max_env = getenv("COPROC_TEST_MAX_ROWS");
    size_t max_rows = max_env ? (size_t)strtoull(max_env, NULL, 10) : SIZE_MAX;
    for (size_t si = 0; si < sizeof sizes / sizeof sizes[0] && sizes[si] <= max_rows; si++)
        for (size_t ri = 0; ri < sizeof rates / sizeof rates[0]; ri++) {
            if (quick && rates[ri] != 50)
                continue;
            data d;
            make_data(&d, sizes[si], rates[ri], 7 + si * 10 + ri);
            /* Device columns for one rate a size (they pin the plan to device). */
            for (int on_dev = 0; on_dev < 1 + (rates[ri] == 50 && sizes[si] > 0 && !quick);
                 on_dev++) {
                tables tb;
                ctx c = {rt, path, &d, &tb, info.has_fp64, on_dev ? device : -1, 0};
                make_tables(rt, &d, c.device, c.fp64, &tb);
                plan_filters(&c);
                plan_project_then_filter(&c);
                plan_joins(&c);
                plan_project_nulls(&c, 0);
                plan_project_nulls(&c, 1);
                plan_project_nulls(&c, 2);
                plan_join_pass_nulls(&c);
                plan_group_then_filter(&c);
                for (int group = 0; group < 3; group++)
                    plan_order_nulls(&c, group);
                for (int shape = 0; shape < 3; shape++)
                    plan_null_keys(&c, shape);
                for (int nk = 0; nk < 2; nk++)
                    for (int v = 0; v < 3; v++)
                        plan_aggregates(&c, nk, v == 1, v == 2);
                /* asked for hybrid: with nulls the group-by runs on one device, fused */
                c.hybrid = 1;
                plan_aggregates(&c, 1, 1, 0);
                plan_null_keys(&c, 2);
                c.hybrid = 0;
                free_tables(&tb);
            }
            free_data(&d);
        }
}

static void test_fused_nulls(void **state)
{
    (void)state;
    test_each_device_path(each, NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fused_nulls),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
