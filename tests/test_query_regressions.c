/* test_query_regressions.c - wrong answers and refusals that comparing the
 * query engine with SQLite on random plans found (issue 34), each as the
 * smallest plan that showed it, with the answer SQL gives written out by hand.
 * Every case runs fused and one operator at a time, on every device and
 * kernel path, with zero-copy and without (a device that copies, as a
 * discrete GPU does; the simulated H100 is one).
 *
 * - group-by on two keys, one nullable, one operator at a time without
 *   zero-copy: the null key's fill was written into host memory while the
 *   device kept its stale copy of that column, so every null-keyed row became
 *   a group of its own;
 * - SUM/MIN/MAX/AVG over no rows of a nullable argument are null, fused too;
 * - MIN/MAX of a projected boolean (the kernel did not build on PoCL);
 * - BETWEEN with a null bound is lo <= e AND e <= hi in three-valued logic:
 *   5 BETWEEN NULL AND 3 is FALSE, so NOT of it keeps the row;
 * - an expression nested 200 deep (clang's limit of 256 nested brackets) and
 *   a kernel build that fails (COPROC_FAULT=build) run one operator at a time
 *   with the reason in the note, never an error to the caller. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coproc.h"
#include "coproc/query.h"
#include "testlib.h"

#define NULLV INT64_MIN /* a null cell in the expected rows */

typedef void (*case_fn)(coproc_runtime *rt, coproc_query_mode mode, const char *where);

static coproc_runtime *cur_rt; /* the runtime of the case running, for its messages */

/* Every device and kernel path, zero-copy and not, both engines. */
static void each_config(case_fn fn)
{
    coproc_runtime *probe = test_open(NULL);
    int n = coproc_device_count(probe);
    coproc_device_info info[16];
    for (int i = 0; i < n && i < 16; i++)
        coproc_device_info_get(probe, i, &info[i]);
    coproc_close(probe);
    for (int i = 0; i < n && i < 16; i++)
        for (int cpu_path = 1; cpu_path >= 0; cpu_path--) {
            if (info[i].type != COPROC_DEVICE_CPU && cpu_path)
                continue;
            for (int zc = 0; zc < 2; zc++) {
                char spec[16], where[96];
                snprintf(spec, sizeof spec, "%d", info[i].discovered_index);
                coproc_options o;
                coproc_options_init(&o);
                o.devices = spec;
                o.disable_zero_copy = !zc;
                coproc_runtime *rt = test_open_with(&o);
                test_force_path(rt, 0, cpu_path);
                cur_rt = rt;
                for (int m = 0; m < 2; m++) {
                    coproc_query_mode mode = m ? COPROC_QUERY_OPERATORS : COPROC_QUERY_FUSED;
                    snprintf(where, sizeof where, "device %d (%.32s), %s, %s", i, info[i].name,
                             cpu_path ? "cpu-path" : "gpu-path",
                             zc ? "zero-copy" : "copies");
                    snprintf(where + strlen(where), sizeof where - strlen(where), ", %s",
                             m ? "operators" : "fused");
                    fn(rt, mode, where);
                }
                coproc_close(rt);
            }
        }
}

/* ---------------------------------------------------------------- tables */

typedef struct coltab {
    coproc_table *t;
    coproc_column *cols[8];
    int n;
} coltab;

/* Add an INT32 column of v[0..rows) with nulls where v[r] == NULLV (the
 * value under a null is `garbage`, different in every row, so a plan that
 * reads it shows). */
static void add_i32(coproc_runtime *rt, coltab *ct, const char *name, const int64_t *v, size_t rows,
                    int32_t *store, uint32_t *bits)
{
    int any_null = 0;
    memset(bits, 0, ((rows + 31) / 32) * sizeof *bits);
    for (size_t r = 0; r < rows; r++) {
        if (v[r] == NULLV) {
            store[r] = 1000 + (int32_t)r * 7;
            any_null = 1;
        } else {
            store[r] = (int32_t)v[r];
            bits[r / 32] |= 1u << (r % 32);
        }
    }
    coproc_column *c;
    assert_int_equal(coproc_column_wrap(rt, COPROC_INT32, store, rows, &c), COPROC_OK);
    if (any_null) {
        coproc_column *b;
        assert_int_equal(coproc_column_wrap(rt, COPROC_UINT32, bits, (rows + 31) / 32, &b), COPROC_OK);
        assert_int_equal(coproc_column_set_validity(c, b), COPROC_OK);
    }
    assert_int_equal(coproc_table_add(ct->t, name, c), COPROC_OK);
    ct->cols[ct->n++] = c;
}

static void free_coltab(coltab *ct)
{
    coproc_table_free(ct->t);
    for (int i = 0; i < ct->n; i++)
        coproc_column_free(ct->cols[i]);
}

/* ---------------------------------------------------------------- results */

/* Cell (r, c) of a result as int64 (floats: their value rounded, checked
 * apart), NULLV where null. */
static int64_t cell_i(const coproc_table *t, int c, size_t r)
{
    const coproc_column *col = coproc_table_column_at(t, c);
    const coproc_column *v = coproc_column_validity(col);
    if (v && !((((const uint32_t *)coproc_column_host_data(v))[r / 32] >> (r % 32)) & 1u))
        return NULLV;
    const void *d = coproc_column_host_data(col);
    switch (coproc_column_type(col)) {
    case COPROC_INT32: return ((const int32_t *)d)[r];
    case COPROC_UINT32: return ((const uint32_t *)d)[r];
    case COPROC_INT64:
    case COPROC_UINT64: return ((const int64_t *)d)[r];
    case COPROC_FLOAT32: return (int64_t)llround(((const float *)d)[r] * 1000);
    default: return (int64_t)llround(((const double *)d)[r] * 1000);
    }
}

static int row_cmp_n;
static int row_cmp(const void *a, const void *b)
{
    const int64_t *x = a, *y = b;
    for (int c = 0; c < row_cmp_n; c++)
        if (x[c] != y[c])
            return x[c] < y[c] ? -1 : 1;
    return 0;
}

/* Run root and compare its rows, as a multiset, with want (nrows x ncols;
 * floats written as thousandths). */
static int run_hybrid; /* the next runs split group-bys across devices (opts.hybrid) */

static void run_expect(coproc_plan *p, coproc_node *root, coproc_query_mode mode, const char *where,
                       const char *what, const int64_t *want, size_t nrows, int ncols,
                       coproc_query_result *keep)
{
    coproc_query_options o;
    coproc_query_options_init(&o);
    o.mode = mode;
    o.hybrid = run_hybrid;
    coproc_query_result r;
    coproc_status s = coproc_query_run(p, root, &o, &r);
    if (s != COPROC_OK)
        fail_msg("%s: %s: %s: %s", where, what, coproc_status_name(s), coproc_plan_status(p) ? coproc_plan_errmsg(p) : coproc_errmsg(cur_rt));
    const coproc_table *t = r.table;
    if (coproc_table_column_count(t) != ncols || coproc_table_rows(t) != nrows)
        fail_msg("%s: %s: %d columns x %zu rows, expected %d x %zu", where, what,
                 coproc_table_column_count(t), coproc_table_rows(t), ncols, nrows);
    int64_t *got = calloc(nrows * ncols + 1, sizeof *got), *exp = calloc(nrows * ncols + 1, sizeof *exp);
    for (size_t i = 0; i < nrows; i++)
        for (int c = 0; c < ncols; c++)
            got[i * ncols + c] = cell_i(t, c, i);
    memcpy(exp, want, nrows * ncols * sizeof *exp);
    row_cmp_n = ncols;
    qsort(got, nrows, ncols * sizeof *got, row_cmp);
    qsort(exp, nrows, ncols * sizeof *exp, row_cmp);
    for (size_t i = 0; i < nrows * ncols; i++)
        if (got[i] != exp[i])
            fail_msg("%s: %s: row %zu column %zu: %lld, expected %lld (NULL is %lld)", where, what,
                     i / ncols, i % ncols, (long long)got[i], (long long)exp[i], (long long)NULLV);
    free(got);
    free(exp);
    if (keep)
        *keep = r;
    else
        coproc_query_result_free(&r);
}

/* ---------------------------------------------------------------- cases */

/* GROUP BY k1, k2 with k1 nullable: the null k1 rows of one k2 are one group. */
static void group_by_nullable_keys(coproc_runtime *rt, coproc_query_mode mode, const char *where)
{
    enum { R = 9 };
    static const int64_t k1[R] = {1, NULLV, NULLV, 1, NULLV, 2, NULLV, 2, 1};
    static const int64_t k2[R] = {5, 5, 5, 5, 6, 6, 6, 6, 5};
    static const int64_t v[R] = {1, 2, 3, 4, 5, 6, 7, 8, 9};
    int32_t s1[R], s2[R], s3[R];
    uint32_t b1[2], b2[2], b3[2];
    coltab ct = {0};
    assert_int_equal(coproc_table_create(rt, &ct.t), COPROC_OK);
    add_i32(rt, &ct, "k1", k1, R, s1, b1);
    add_i32(rt, &ct, "k2", k2, R, s2, b2);
    add_i32(rt, &ct, "v", v, R, s3, b3);
    coproc_plan *p;
    assert_int_equal(coproc_plan_create(rt, &p), COPROC_OK);
    coproc_node *scan = coproc_plan_scan(p, ct.t, "t");
    /* a filter first: the keys reach the group-by as the operators' results
     * (cached on a device that copies), as they did in the random plans */
    coproc_node *f = coproc_plan_filter(p, scan,
        coproc_expr_compare(p, COPROC_CMP_GT, coproc_expr_column(p, "v"), coproc_expr_int(p, 0)));
    const char *keys[] = {"k1", "k2"};
    coproc_aggregate aggs[] = {{COPROC_AGG_COUNT, NULL, "n"},
                               {COPROC_AGG_SUM, coproc_expr_column(p, "v"), "s"}};
    coproc_node *g = coproc_plan_group_by(p, f, 2, keys, 2, aggs);
    static const int64_t want[] = {1, 5, 3, 14,     NULLV, 5, 2, 5,  NULLV, 6, 2, 12,
                                   2, 6, 2, 14};
    run_expect(p, g, mode, where, "GROUP BY k1, k2 (after a filter)", want, 4, 4, NULL);
    /* and straight over the scan */
    g = coproc_plan_group_by(p, scan, 2, keys, 2, aggs);
    run_expect(p, g, mode, where, "GROUP BY k1, k2", want, 4, 4, NULL);
    coproc_plan_free(p);
    free_coltab(&ct);
}

/* SUM(x), MIN(x), MAX(x / 2), AVG(b), COUNT(x), COUNT(*) WHERE nothing
 * passes, x nullable and b = (x < 5) projected: NULL, NULL, NULL, NULL, 0, 0. */
static void empty_aggregates(coproc_runtime *rt, coproc_query_mode mode, const char *where)
{
    enum { R = 70 };
    int64_t x[R], id[R];
    for (int r = 0; r < R; r++) {
        x[r] = r % 3 ? r - 30 : NULLV;
        id[r] = r;
    }
    int32_t s1[R], s2[R];
    uint32_t b1[4], b2[4];
    coltab ct = {0};
    assert_int_equal(coproc_table_create(rt, &ct.t), COPROC_OK);
    add_i32(rt, &ct, "x", x, R, s1, b1);
    add_i32(rt, &ct, "id", id, R, s2, b2);
    coproc_plan *p;
    assert_int_equal(coproc_plan_create(rt, &p), COPROC_OK);
    coproc_node *scan = coproc_plan_scan(p, ct.t, "t");
    /* on another column: nothing proves x valid where rows pass */
    coproc_node *f = coproc_plan_filter(p, scan,
        coproc_expr_compare(p, COPROC_CMP_GT, coproc_expr_column(p, "id"), coproc_expr_int(p, 1000)));
    const char *names[] = {"x", "b"};
    coproc_expr *ex[] = {coproc_expr_column(p, "x"),
                         coproc_expr_compare(p, COPROC_CMP_LT, coproc_expr_column(p, "x"),
                                             coproc_expr_int(p, 5))};
    coproc_node *pr = coproc_plan_project(p, f, 2, names, ex);
    coproc_expr *x_ = coproc_expr_column(p, "x");
    coproc_aggregate aggs[] = {
        {COPROC_AGG_SUM, x_, "s"},
        {COPROC_AGG_MIN, x_, "mn"},
        {COPROC_AGG_MAX, coproc_expr_arith(p, COPROC_ARITH_DIV, x_, coproc_expr_int(p, 2)), "mx"},
        {COPROC_AGG_AVG, coproc_expr_column(p, "b"), "a"},
        {COPROC_AGG_COUNT, x_, "c"},
        {COPROC_AGG_COUNT, NULL, "n"},
    };
    static const int64_t want[] = {NULLV, NULLV, NULLV, NULLV, 0, 0};
    run_expect(p, coproc_plan_group_by(p, pr, 0, NULL, 6, aggs), mode, where,
               "aggregates over no rows (after a projection)", want, 1, 6, NULL);
    run_expect(p, coproc_plan_group_by(p, f, 0, NULL, 3, aggs), mode, where,
               "aggregates over no rows", want, 1, 3, NULL);
    /* and where the filter proves x valid */
    coproc_node *f2 = coproc_plan_filter(p, scan,
        coproc_expr_compare(p, COPROC_CMP_GT, coproc_expr_column(p, "x"), coproc_expr_int(p, 1000)));
    run_expect(p, coproc_plan_group_by(p, f2, 0, NULL, 3, aggs), mode, where,
               "aggregates over no rows (x > 1000)", want, 1, 3, NULL);
    coproc_plan_free(p);
    free_coltab(&ct);
}

/* b = (x < 5) projected, then MIN(b), MAX(b), grouped by g and not. */
static void bool_min_max(coproc_runtime *rt, coproc_query_mode mode, const char *where)
{
    enum { R = 6 };
    static const int64_t x[R] = {1, 9, NULLV, 7, 8, 3};
    static const int64_t y[R] = {1, 9, 6, 7, 8, 3};
    static const int64_t g[R] = {0, 0, 0, 1, 1, 2};
    int32_t s1[R], s2[R], s3[R];
    uint32_t b1[1], b2[1], b3[1];
    coltab ct = {0};
    assert_int_equal(coproc_table_create(rt, &ct.t), COPROC_OK);
    add_i32(rt, &ct, "x", x, R, s1, b1);
    add_i32(rt, &ct, "y", y, R, s3, b3);
    add_i32(rt, &ct, "g", g, R, s2, b2);
    coproc_plan *p;
    assert_int_equal(coproc_plan_create(rt, &p), COPROC_OK);
    coproc_node *scan = coproc_plan_scan(p, ct.t, "t");
    const char *names[] = {"g", "b"};
    coproc_expr *ex[] = {coproc_expr_column(p, "g"),
                         coproc_expr_compare(p, COPROC_CMP_LT, coproc_expr_column(p, "x"),
                                             coproc_expr_int(p, 5))};
    coproc_node *pr = coproc_plan_project(p, scan, 2, names, ex);
    coproc_aggregate aggs[] = {{COPROC_AGG_MIN, coproc_expr_column(p, "b"), "mn"},
                               {COPROC_AGG_MAX, coproc_expr_column(p, "b"), "mx"}};
    const char *keys[] = {"g"};
    coproc_query_result r;
    static const int64_t want_g[] = {0, 0, 1, 1, 0, 0, 2, 1, 1};
    run_expect(p, coproc_plan_group_by(p, pr, 1, keys, 2, aggs), mode, where,
               "MIN/MAX of a boolean by g", want_g, 3, 3, &r);
    if (mode == COPROC_QUERY_FUSED && r.note[0])
        fail_msg("%s: MIN/MAX of a boolean fell back: %s", where, r.note);
    coproc_query_result_free(&r);
    static const int64_t want[] = {0, 1};
    run_expect(p, coproc_plan_group_by(p, pr, 0, NULL, 2, aggs), mode, where,
               "MIN/MAX of a boolean", want, 1, 2, NULL);
    /* the boolean of a column without nulls (an int, not a long, in the kernel) */
    const char *names2[] = {"g", "c"};
    coproc_expr *ex2[] = {coproc_expr_column(p, "g"),
                          coproc_expr_compare(p, COPROC_CMP_LT, coproc_expr_column(p, "y"),
                                              coproc_expr_int(p, 5))};
    coproc_node *pr2 = coproc_plan_project(p, scan, 2, names2, ex2);
    coproc_aggregate aggs2[] = {{COPROC_AGG_MIN, coproc_expr_column(p, "c"), "mn"},
                                {COPROC_AGG_MAX, coproc_expr_column(p, "c"), "mx"},
                                {COPROC_AGG_SUM, coproc_expr_column(p, "c"), "s"}};
    static const int64_t want2_g[] = {0, 0, 1, 1, 1, 0, 0, 0, 2, 1, 1, 1};
    run_expect(p, coproc_plan_group_by(p, pr2, 1, keys, 3, aggs2), mode, where,
               "MIN/MAX/SUM of a non-null boolean by g", want2_g, 3, 4, &r);
    if (mode == COPROC_QUERY_FUSED && r.note[0])
        fail_msg("%s: MIN/MAX of a non-null boolean fell back: %s", where, r.note);
    coproc_query_result_free(&r);
    static const int64_t want2[] = {0, 1, 2};
    run_expect(p, coproc_plan_group_by(p, pr2, 0, NULL, 3, aggs2), mode, where,
               "MIN/MAX/SUM of a non-null boolean", want2, 1, 3, NULL);
    coproc_plan_free(p);
    free_coltab(&ct);
}

/* BETWEEN with null operands, as SQL's lo <= e AND e <= hi. */
static void between_null_bound(coproc_runtime *rt, coproc_query_mode mode, const char *where)
{
    enum { R = 5 };
    static const int64_t id[R] = {0, 1, 2, 3, 4};
    static const int64_t x[R] = {NULLV, 3, 7, NULLV, 5};
    static const int64_t y[R] = {10, NULLV, NULLV, 4, 6};
    int32_t s1[R], s2[R], s3[R];
    uint32_t b1[1], b2[1], b3[1];
    coltab ct = {0};
    assert_int_equal(coproc_table_create(rt, &ct.t), COPROC_OK);
    add_i32(rt, &ct, "id", id, R, s1, b1);
    add_i32(rt, &ct, "x", x, R, s2, b2);
    add_i32(rt, &ct, "y", y, R, s3, b3);
    coproc_plan *p;
    assert_int_equal(coproc_plan_create(rt, &p), COPROC_OK);
    coproc_node *scan = coproc_plan_scan(p, ct.t, "t");
    const char *names[] = {"id"};
#define COL(n) coproc_expr_column(p, n)
#define INT(v) coproc_expr_int(p, v)
    /* NOT (5 BETWEEN x AND 3): 5 <= 3 is FALSE, so every row is kept */
    coproc_expr *e1 = coproc_expr_not(p, coproc_expr_between(p, INT(5), COL("x"), INT(3)));
    static const int64_t w1[] = {0, 1, 2, 3, 4};
    coproc_node *n1 = coproc_plan_project(p, coproc_plan_filter(p, scan, e1), 1, names,
                                          (coproc_expr *[]){COL("id")});
    run_expect(p, n1, mode, where, "NOT (5 BETWEEN x AND 3)", w1, 5, 1, NULL);
    /* 5 BETWEEN x AND y: TRUE where x <= 5 <= y (row 4); FALSE where either
     * side is FALSE (row 2: 7 <= 5; row 3: 5 <= 4, x null); else UNKNOWN */
    coproc_expr *e2 = coproc_expr_between(p, INT(5), COL("x"), COL("y"));
    static const int64_t w2[] = {4};
    coproc_node *n2 = coproc_plan_project(p, coproc_plan_filter(p, scan, e2), 1, names,
                                          (coproc_expr *[]){COL("id")});
    run_expect(p, n2, mode, where, "5 BETWEEN x AND y", w2, 1, 1, NULL);
    coproc_expr *e3 = coproc_expr_not(p, coproc_expr_between(p, INT(5), COL("x"), COL("y")));
    static const int64_t w3[] = {2, 3};
    coproc_node *n3 = coproc_plan_project(p, coproc_plan_filter(p, scan, e3), 1, names,
                                          (coproc_expr *[]){COL("id")});
    run_expect(p, n3, mode, where, "NOT (5 BETWEEN x AND y)", w3, 2, 1, NULL);
    /* projected: id, (5 BETWEEN x AND y) as 1/0/NULL */
    const char *pn[] = {"id", "b"};
    coproc_node *n4 = coproc_plan_project(p, scan, 2, pn,
        (coproc_expr *[]){COL("id"), coproc_expr_between(p, INT(5), COL("x"), COL("y"))});
    static const int64_t w4[] = {0, NULLV, 1, NULLV, 2, 0, 3, 0, 4, 1};
    run_expect(p, n4, mode, where, "(5 BETWEEN x AND y) projected", w4, 5, 2, NULL);
#undef COL
#undef INT
    coproc_plan_free(p);
    free_coltab(&ct);
}

/* SUM(((x + 1) + 1) ... + 1) nested 200 deep, and the same in a filter. */
static void deep_expression(coproc_runtime *rt, coproc_query_mode mode, const char *where)
{
    enum { R = 100, DEPTH = 200 };
    int64_t x[R];
    for (int r = 0; r < R; r++)
        x[r] = r;
    int32_t s1[R];
    uint32_t b1[4];
    coltab ct = {0};
    assert_int_equal(coproc_table_create(rt, &ct.t), COPROC_OK);
    add_i32(rt, &ct, "x", x, R, s1, b1);
    coproc_plan *p;
    assert_int_equal(coproc_plan_create(rt, &p), COPROC_OK);
    coproc_node *scan = coproc_plan_scan(p, ct.t, "t");
    coproc_expr *e = coproc_expr_column(p, "x");
    for (int d = 0; d < DEPTH; d++)
        e = coproc_expr_arith(p, COPROC_ARITH_ADD, e, coproc_expr_int(p, 1));
    /* x + 200 < 250: x < 50 */
    coproc_node *f = coproc_plan_filter(p, scan,
        coproc_expr_compare(p, COPROC_CMP_LT, e, coproc_expr_int(p, 250)));
    coproc_aggregate aggs[] = {{COPROC_AGG_SUM, e, "s"}, {COPROC_AGG_COUNT, NULL, "n"}};
    coproc_node *g = coproc_plan_group_by(p, f, 0, NULL, 2, aggs);
    assert_int_equal(coproc_plan_status(p), COPROC_OK);
    static const int64_t want[] = {49 * 50 / 2 + 50 * DEPTH, 50};
    coproc_query_result r;
    run_expect(p, g, mode, where, "an expression 200 deep", want, 1, 2, &r);
    if (mode == COPROC_QUERY_FUSED && !r.note[0])
        fail_msg("%s: a fused run of an expression 200 deep says nothing in its note", where);
    coproc_query_result_free(&r);
    coproc_plan_free(p);
    free_coltab(&ct);
}

static void test_group_by_nullable_keys(void **state)
{
    (void)state;
    each_config(group_by_nullable_keys);
}
static void test_empty_aggregates(void **state)
{
    (void)state;
    each_config(empty_aggregates);
    /* and split across every device (the simulated pair: morsels merged) */
    run_hybrid = 1;
    coproc_runtime *rt = test_open(NULL);
    cur_rt = rt;
    empty_aggregates(rt, COPROC_QUERY_FUSED, "every device, hybrid, fused");
    coproc_close(rt);
    run_hybrid = 0;
}
static void test_bool_min_max(void **state)
{
    (void)state;
    each_config(bool_min_max);
}
static void test_between_null_bound(void **state)
{
    (void)state;
    each_config(between_null_bound);
}
static void test_deep_expression(void **state)
{
    (void)state;
    each_config(deep_expression);
}

/* A fused kernel whose build fails runs one operator at a time, said in the
 * note: the first build of a fresh runtime (the pipeline's program) fails. */
static void test_build_failure_falls_back(void **state)
{
    (void)state;
    const char *devs = getenv("COPROC_DEVICES");
    if (devs && strstr(devs, "sim:")) { /* simulated devices build on the host's device */
        printf("skipped on simulated devices: their builds are not device 0's\n");
        return;
    }
    setenv("COPROC_FAULT", "build:0:1", 1);
    coproc_runtime *rt = test_open("0");
    unsetenv("COPROC_FAULT");
    enum { R = 40 };
    int64_t x[R];
    for (int r = 0; r < R; r++)
        x[r] = r;
    int32_t s1[R];
    uint32_t b1[2];
    coltab ct = {0};
    assert_int_equal(coproc_table_create(rt, &ct.t), COPROC_OK);
    add_i32(rt, &ct, "x", x, R, s1, b1);
    coproc_plan *p;
    assert_int_equal(coproc_plan_create(rt, &p), COPROC_OK);
    coproc_node *f = coproc_plan_filter(p, coproc_plan_scan(p, ct.t, "t"),
        coproc_expr_compare(p, COPROC_CMP_GE, coproc_expr_column(p, "x"), coproc_expr_int(p, 30)));
    coproc_aggregate aggs[] = {{COPROC_AGG_SUM, coproc_expr_column(p, "x"), "s"}};
    coproc_node *g = coproc_plan_group_by(p, f, 0, NULL, 1, aggs);
    static const int64_t want[] = {345};
    coproc_query_result r;
    run_expect(p, g, COPROC_QUERY_FUSED, "device 0, build fault", "SUM(x) WHERE x >= 30", want, 1, 1, &r);
    if (!strstr(r.note, "build"))
        fail_msg("the fallback's note does not name the build: \"%s\"", r.note);
    printf("note: %s\n", r.note);
    coproc_query_result_free(&r);
    coproc_plan_free(p);
    free_coltab(&ct);
    coproc_close(rt);
}

/* The shadow check (coproc_query_options.verify, COPROC_VERIFY): sampled
 * runs run again on the other engine and compare equal; a shadow result
 * changed on purpose (COPROC_FAULT_VERIFY) is found, logged and counted. */
static int verify_errors;
static void count_errors(void *user, coproc_log_level level, const char *msg)
{
    (void)user;
    if (level == COPROC_LOG_ERROR && strstr(msg, "COPROC_VERIFY"))
        verify_errors++;
}

static void test_shadow_check(void **state)
{
    (void)state;
    setenv("COPROC_FAULT_VERIFY", "7", 1);
    coproc_options oo;
    coproc_options_init(&oo);
    oo.devices = "0";
    oo.log = count_errors;
    coproc_runtime *rt = test_open_with(&oo);
    unsetenv("COPROC_FAULT_VERIFY");
    enum { R = 300 };
    int64_t g[R], x[R];
    for (int r = 0; r < R; r++) {
        g[r] = r % 7;
        x[r] = r % 11 ? r * 3 - 200 : NULLV;
    }
    int32_t s1[R], s2[R];
    uint32_t b1[10], b2[10];
    coltab ct = {0};
    assert_int_equal(coproc_table_create(rt, &ct.t), COPROC_OK);
    add_i32(rt, &ct, "g", g, R, s1, b1);
    add_i32(rt, &ct, "x", x, R, s2, b2);
    coproc_plan *p;
    assert_int_equal(coproc_plan_create(rt, &p), COPROC_OK);
    const char *keys[] = {"g"};
    coproc_device_info info;
    assert_ok(rt, coproc_device_info_get(rt, 0, &info));
    /* AVG one operator at a time needs float64 */
    coproc_aggregate aggs[] = {{COPROC_AGG_SUM, coproc_expr_column(p, "x"), "s"},
                               {COPROC_AGG_COUNT, NULL, "n"},
                               {COPROC_AGG_AVG, coproc_expr_column(p, "x"), "a"}};
    coproc_node *gb = coproc_plan_group_by(p, coproc_plan_scan(p, ct.t, "t"), 1, keys,
                                           info.has_fp64 ? 3 : 2, aggs);
    coproc_order_key ok = {"s", 1, 0};
    coproc_node *top = coproc_plan_order_by(p, gb, 1, &ok, 3);
    int checked = 0, agreed = 0, differed = 0;
    for (int i = 0; i < 12; i++) {
        coproc_query_options o;
        coproc_query_options_init(&o);
        assert_true(o.verify < 0); /* the default: COPROC_VERIFY's rate */
        o.mode = i % 3 == 2 ? COPROC_QUERY_OPERATORS : COPROC_QUERY_FUSED;
        o.verify = 0.5;
        coproc_query_result r;
        assert_ok(rt, coproc_query_run(p, i % 4 < 2 ? gb : top, &o, &r));
        checked += r.verified != 0;
        agreed += r.verified == 1;
        differed += r.verified == -1;
        coproc_query_result_free(&r);
    }
    /* runs 0, 2, 4, ... of the 12: six checks, the 7th would be the fault */
    assert_int_equal(checked, 6);
    assert_int_equal(agreed, 6);
    coproc_query_options o;
    coproc_query_options_init(&o);
    o.verify = 1;
    coproc_query_result r;
    assert_ok(rt, coproc_query_run(p, gb, &o, &r)); /* the 7th check: its shadow changed */
    assert_int_equal(r.verified, -1);
    coproc_query_result_free(&r);
    assert_int_equal(verify_errors, 1);
    o.verify = 0; /* off: never checked */
    assert_ok(rt, coproc_query_run(p, gb, &o, &r));
    assert_int_equal(r.verified, 0);
    coproc_query_result_free(&r);
    /* Each check counts on every device either run used (one or several). */
    uint64_t runs = 0, mismatches = 0;
    for (int d = 0; d < coproc_device_count(rt); d++) {
        coproc_device_stats ds;
        memset(&ds, 0, sizeof ds);
        ds.struct_size = sizeof ds;
        assert_ok(rt, coproc_device_stats_get(rt, d, &ds));
        assert_true(ds.verify_runs <= 7);
        assert_true(ds.verify_mismatches <= 1);
        runs += ds.verify_runs;
        mismatches += ds.verify_mismatches;
    }
    assert_true(runs >= 7);
    assert_true(mismatches >= 1);
    if (coproc_device_count(rt) == 1) {
        assert_int_equal(runs, 7);
        assert_int_equal(mismatches, 1);
    }
    (void)differed;
    coproc_plan_free(p);
    free_coltab(&ct);
    coproc_close(rt);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_group_by_nullable_keys),
        cmocka_unit_test(test_empty_aggregates),
        cmocka_unit_test(test_bool_min_max),
        cmocka_unit_test(test_between_null_bound),
        cmocka_unit_test(test_deep_expression),
        cmocka_unit_test(test_build_failure_falls_back),
        cmocka_unit_test(test_shadow_check),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
