/* test_query_nulls.c - query plans over columns with nulls, in both engines
 * (fused, one operator at a time), on every device and kernel path, checked
 * against SQLite running the same query in SQL over the same rows: SQL's
 * three-valued logic in filters (NOT, AND, OR over unknown), comparisons of
 * two nullable columns, BETWEEN and IN, arithmetic and booleans projected
 * with nulls, aggregates skipping nulls (count(*) against count(col), null
 * where a group has no valid value), null group keys (one group, also in
 * composite keys), joins never matching a null key, and ORDER BY ... NULLS
 * FIRST / LAST. Null rates 0 %, 1 %, 50 %, 100 %; tables of 0, 1, 33 and
 * 1000 rows. At 0 % the columns carry no validity at all (the plain path). */
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coproc.h"
#include "coproc/query.h"
#include "testlib.h"

/* ---------------------------------------------------------------- data */

enum { NF = 8, ND = 3 }; /* fact columns, dimension columns */

typedef struct column_def {
    const char *name;
    coproc_type type;
    int nullable;
    const char *const *dict; /* a string column: its codes' strings, else NULL */
    int ndict;
} column_def;

/* Two dictionaries of different strings: a join of s and ds maps codes. */
static const char *const fruit[] = {"apple", "banana", "cherry", "date"};
static const char *const dim_fruit[] = {"banana", "cherry", "elder"};

static const column_def fact_cols[NF] = {
    {"id", COPROC_INT32, 0, NULL, 0},  {"a", COPROC_INT32, 1, NULL, 0},
    {"b", COPROC_INT64, 1, NULL, 0},   {"u", COPROC_UINT32, 1, NULL, 0},
    {"g", COPROC_INT32, 1, NULL, 0},   {"k", COPROC_INT32, 1, NULL, 0},
    {"x", COPROC_FLOAT64, 1, NULL, 0}, {"s", COPROC_INT32, 1, fruit, 4},
};
static const column_def dim_cols[ND] = {{"dk", COPROC_INT32, 1, NULL, 0},
                                        {"dv", COPROC_INT64, 1, NULL, 0},
                                        {"ds", COPROC_INT32, 1, dim_fruit, 3}};

typedef struct table_data {
    size_t rows;
    int ncols;
    const column_def *defs;
    void *values[NF];
    uint32_t *valid[NF]; /* NULL: the column has no validity */
} table_data;

static int is_valid(const uint32_t *w, size_t r)
{
    return !w || ((w[r / 32] >> (r % 32)) & 1u);
}

/* Values small enough that no sum overflows and SQLite's integers agree with
 * int64 arithmetic; x has three decimals (exact in SQLite's REAL too). */
static void make_table(table_data *t, const column_def *defs, int ncols, size_t rows, double rate,
                       test_rng *rng)
{
    memset(t, 0, sizeof *t);
    t->rows = rows;
    t->ncols = ncols;
    t->defs = defs;
    for (int c = 0; c < ncols; c++) {
        size_t size = coproc_type_size(defs[c].type);
        t->values[c] = calloc(rows ? rows : 1, size);
        if (defs[c].nullable && rate > 0)
            t->valid[c] = calloc((rows + 31) / 32 + 1, sizeof(uint32_t));
        for (size_t r = 0; r < rows; r++) {
            int64_t v;
            const char *n = defs[c].name;
            if (defs[c].dict)
                v = (int64_t)test_rand_below(rng, (uint64_t)defs[c].ndict);
            else if (!strcmp(n, "id"))
                v = (int64_t)r;
            else if (!strcmp(n, "a"))
                v = (int64_t)test_rand_below(rng, 80) - 20;
            else if (!strcmp(n, "b"))
                v = (int64_t)test_rand_below(rng, 110) - 10;
            else if (!strcmp(n, "u"))
                v = (int64_t)test_rand_below(rng, 10);
            else if (!strcmp(n, "g"))
                v = (int64_t)test_rand_below(rng, 5);
            else if (!strcmp(n, "k") || !strcmp(n, "dk"))
                v = (int64_t)test_rand_below(rng, 24);
            else if (!strcmp(n, "dv"))
                v = (int64_t)test_rand_below(rng, 100);
            else
                v = (int64_t)test_rand_below(rng, 2001) - 1000; /* x, in thousandths */
            switch (defs[c].type) {
            case COPROC_INT32:
                ((int32_t *)t->values[c])[r] = (int32_t)v;
                break;
            case COPROC_INT64:
                ((int64_t *)t->values[c])[r] = v;
                break;
            case COPROC_UINT32:
                ((uint32_t *)t->values[c])[r] = (uint32_t)v;
                break;
            default:
                ((double *)t->values[c])[r] = (double)v / 1000.0;
                break;
            }
            int null = rate >= 1.0 || (double)test_rand_below(rng, 1000000) < rate * 1e6;
            if (t->valid[c] && !null)
                t->valid[c][r / 32] |= 1u << (r % 32);
            /* under a null the value is garbage: a plan must not read it */
            if (t->valid[c] && null && defs[c].type == COPROC_INT32)
                ((int32_t *)t->values[c])[r] = (int32_t)0x7fff0000;
        }
    }
}

static void free_table(table_data *t)
{
    for (int c = 0; c < t->ncols; c++) {
        free(t->values[c]);
        free(t->valid[c]);
    }
}

/* The coproc table of t's columns (skipping float64 columns when !fp64);
 * cols receives the columns for freeing. */
static coproc_table *to_coproc(coproc_runtime *rt, const table_data *t, int fp64,
                               coproc_column **cols)
{
    coproc_table *ct;
    assert_int_equal(coproc_table_create(rt, &ct), COPROC_OK);
    for (int c = 0; c < t->ncols; c++) {
        cols[c] = NULL;
        if (!fp64 && t->defs[c].type == COPROC_FLOAT64)
            continue;
        assert_int_equal(coproc_column_wrap(rt, t->defs[c].type, t->values[c], t->rows, &cols[c]),
                         COPROC_OK);
        if (t->valid[c]) {
            coproc_column *bits;
            assert_int_equal(
                coproc_column_wrap(rt, COPROC_UINT32, t->valid[c], (t->rows + 31) / 32, &bits),
                COPROC_OK);
            assert_int_equal(coproc_column_set_validity(cols[c], bits), COPROC_OK);
        }
        if (t->defs[c].dict) /* after the validity: null rows' codes are garbage */
            assert_int_equal(
                coproc_column_set_dictionary(cols[c], t->defs[c].ndict, t->defs[c].dict),
                COPROC_OK);
        assert_int_equal(coproc_table_add(ct, t->defs[c].name, cols[c]), COPROC_OK);
    }
    return ct;
}

static void to_sqlite(sqlite3 *db, const char *name, const table_data *t)
{
    char sql[512];
    int off = snprintf(sql, sizeof sql, "CREATE TABLE %s(", name);
    for (int c = 0; c < t->ncols; c++)
        off += snprintf(sql + off, sizeof sql - off, "%s%s %s", c ? ", " : "", t->defs[c].name,
                        t->defs[c].dict                     ? "TEXT"
                        : t->defs[c].type == COPROC_FLOAT64 ? "REAL"
                                                            : "INTEGER");
    snprintf(sql + off, sizeof sql - off, ")");
    assert_int_equal(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
    off = snprintf(sql, sizeof sql, "INSERT INTO %s VALUES(", name);
    for (int c = 0; c < t->ncols; c++)
        off += snprintf(sql + off, sizeof sql - off, "%s?", c ? ", " : "");
    snprintf(sql + off, sizeof sql - off, ")");
    sqlite3_stmt *st;
    assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK);
    for (size_t r = 0; r < t->rows; r++) {
        for (int c = 0; c < t->ncols; c++) {
            const void *v = t->values[c];
            if (!is_valid(t->valid[c], r))
                sqlite3_bind_null(st, c + 1);
            else if (t->defs[c].dict)
                sqlite3_bind_text(st, c + 1, t->defs[c].dict[((const int32_t *)v)[r]], -1,
                                  SQLITE_STATIC);
            else if (t->defs[c].type == COPROC_FLOAT64)
                sqlite3_bind_double(st, c + 1, ((const double *)v)[r]);
            else if (t->defs[c].type == COPROC_UINT32)
                sqlite3_bind_int64(st, c + 1, ((const uint32_t *)v)[r]);
            else
                sqlite3_bind_int64(st, c + 1, test_get_i(t->defs[c].type, v, r));
        }
        assert_int_equal(sqlite3_step(st), SQLITE_DONE);
        sqlite3_reset(st);
    }
    sqlite3_finalize(st);
}

/* ---------------------------------------------------------------- results */

typedef struct cell {
    int null, is_float, is_str;
    int64_t i;
    double f;
    char str[16]; /* is_str */
} cell;

typedef struct rows {
    size_t n;
    int ncols;
    cell *c; /* n * ncols */
} rowset;

static int cell_cmp(const cell *x, const cell *y)
{
    if (x->null || y->null)
        return y->null - x->null; /* nulls first */
    if (x->is_str || y->is_str)
        return x->is_str != y->is_str ? x->is_str - y->is_str : strcmp(x->str, y->str);
    double a = x->is_float ? x->f : (double)x->i, b = y->is_float ? y->f : (double)y->i;
    if (!x->is_float && !y->is_float)
        return (x->i > y->i) - (x->i < y->i);
    return (a > b) - (a < b);
}

static int sort_ncols;
static int row_cmp(const void *pa, const void *pb)
{
    const cell *a = pa, *b = pb;
    for (int c = 0; c < sort_ncols; c++) {
        int r = cell_cmp(&a[c], &b[c]);
        if (r)
            return r;
    }
    return 0;
}

static void sort_rows(rowset *r)
{
    /* rows of ncols cells: qsort over fixed-size records */
    sort_ncols = r->ncols;
    if (r->n > 1)
        qsort(r->c, r->n, r->ncols * sizeof(cell), row_cmp);
}

static rowset from_sqlite(sqlite3 *db, const char *sql)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
        fail_msg("SQLite: %s: %s", sql, sqlite3_errmsg(db));
    rowset r = {0, sqlite3_column_count(st), NULL};
    size_t cap = 0;
    while (sqlite3_step(st) == SQLITE_ROW) {
        if (r.n == cap) {
            cap = cap ? 2 * cap : 64;
            r.c = realloc(r.c, cap * r.ncols * sizeof(cell));
        }
        for (int c = 0; c < r.ncols; c++) {
            cell *x = &r.c[r.n * r.ncols + c];
            memset(x, 0, sizeof *x);
            switch (sqlite3_column_type(st, c)) {
            case SQLITE_NULL:
                x->null = 1;
                break;
            case SQLITE_FLOAT:
                x->is_float = 1, x->f = sqlite3_column_double(st, c);
                break;
            case SQLITE_TEXT:
                x->is_str = 1;
                snprintf(x->str, sizeof x->str, "%s", (const char *)sqlite3_column_text(st, c));
                break;
            default:
                x->i = sqlite3_column_int64(st, c);
                break;
            }
        }
        r.n++;
    }
    sqlite3_finalize(st);
    return r;
}

static rowset from_coproc(const coproc_table *t)
{
    rowset r = {coproc_table_rows(t), coproc_table_column_count(t), NULL};
    r.c = calloc(r.n * r.ncols + 1, sizeof(cell));
    for (int c = 0; c < r.ncols; c++) {
        const coproc_column *col = coproc_table_column_at(t, c);
        const coproc_column *v = coproc_column_validity(col);
        const uint32_t *w = v ? coproc_column_host_data(v) : NULL;
        const void *d = coproc_column_host_data(col);
        coproc_type ty = coproc_column_type(col);
        assert_true(coproc_column_device(col) < 0);
        for (size_t i = 0; i < r.n; i++) {
            cell *x = &r.c[i * r.ncols + c];
            x->null = !is_valid(w, i);
            if (x->null)
                continue;
            if (coproc_column_dictionary_size(col) >= 0) { /* a string column: the code's string */
                const char *v = coproc_column_dictionary_value(col, ((const int32_t *)d)[i]);
                assert_non_null(v);
                x->is_str = 1;
                snprintf(x->str, sizeof x->str, "%s", v);
            } else if (test_is_float(ty))
                x->is_float = 1, x->f = test_get_f(ty, d, i);
            else if (ty == COPROC_UINT32 || ty == COPROC_UINT64)
                x->i = (int64_t)test_get_u(ty, d, i);
            else
                x->i = test_get_i(ty, d, i);
        }
    }
    return r;
}

static void print_cell(const cell *x)
{
    if (x->null)
        printf(" NULL");
    else if (x->is_str)
        printf(" '%s'", x->str);
    else if (x->is_float)
        printf(" %.17g", x->f);
    else
        printf(" %lld", (long long)x->i);
}

/* Equal row for row: integers exactly, floats to 1e-9 relative (SQLite sums
 * in another order). */
static void check_equal(const char *what, rowset *got, rowset *want, int ordered)
{
    if (!ordered) {
        sort_rows(got);
        sort_rows(want);
    }
    int ok = got->n == want->n && got->ncols == want->ncols;
    size_t bad = 0;
    for (size_t i = 0; ok && i < got->n; i++)
        for (int c = 0; ok && c < got->ncols; c++) {
            const cell *x = &got->c[i * got->ncols + c], *y = &want->c[i * want->ncols + c];
            if (x->null || y->null)
                ok = x->null == y->null;
            else if (x->is_str || y->is_str)
                ok = x->is_str == y->is_str && !strcmp(x->str, y->str);
            else if (x->is_float || y->is_float) {
                double a = x->is_float ? x->f : (double)x->i, b = y->is_float ? y->f : (double)y->i;
                ok = x->is_float == y->is_float &&
                     fabs(a - b) <= 1e-9 * fmax(1.0, fmax(fabs(a), fabs(b)));
            } else {
                ok = x->i == y->i;
            }
            bad = i;
        }
    if (!ok) {
        printf("%s: %zu rows x %d columns, SQLite %zu x %d; first difference at row %zu\n", what,
               got->n, got->ncols, want->n, want->ncols, bad);
        for (size_t i = bad; i < bad + 3 && i < got->n; i++) {
            printf("  coproc:");
            for (int c = 0; c < got->ncols; c++)
                print_cell(&got->c[i * got->ncols + c]);
            printf("\n");
        }
        for (size_t i = bad; i < bad + 3 && i < want->n; i++) {
            printf("  SQLite:");
            for (int c = 0; c < want->ncols; c++)
                print_cell(&want->c[i * want->ncols + c]);
            printf("\n");
        }
        fail_msg("%s: coproc and SQLite differ", what);
    }
}

/* ---------------------------------------------------------------- the queries */

#define COL(n) coproc_expr_column(p, n)
#define I(v) coproc_expr_int(p, v)
#define CMP(op, x, y) coproc_expr_compare(p, COPROC_CMP_##op, x, y)
#define NOT(x) coproc_expr_not(p, x)
#define AND(x, y) coproc_expr_and(p, x, y)
#define OR(x, y) coproc_expr_or(p, x, y)
#define ARITH(op, x, y) coproc_expr_arith(p, COPROC_ARITH_##op, x, y)

typedef coproc_node *(*build_fn)(coproc_plan *p, coproc_node *f, coproc_node *d);

static coproc_node *ids(coproc_plan *p, coproc_node *in)
{
    const char *names[] = {"id"};
    coproc_expr *e[] = {COL("id")};
    return coproc_plan_project(p, in, 1, names, e);
}

static coproc_node *q_not(coproc_plan *p, coproc_node *f, coproc_node *d)
{
    (void)d;
    const char *names[] = {"id", "a"};
    coproc_expr *e[] = {COL("id"), COL("a")};
    return coproc_plan_project(p, coproc_plan_filter(p, f, NOT(CMP(GT, COL("a"), I(10)))), 2, names,
                               e);
}

static coproc_node *q_not_and(coproc_plan *p, coproc_node *f, coproc_node *d)
{
    (void)d;
    return ids(
        p, coproc_plan_filter(p, f, NOT(AND(CMP(GT, COL("a"), I(10)), CMP(LT, COL("b"), I(50))))));
}

static coproc_node *q_not_or(coproc_plan *p, coproc_node *f, coproc_node *d)
{
    (void)d;
    return ids(
        p, coproc_plan_filter(p, f, NOT(OR(CMP(GT, COL("a"), I(10)), CMP(EQ, COL("u"), I(3))))));
}

static coproc_node *q_cols(coproc_plan *p, coproc_node *f, coproc_node *d)
{
    (void)d; /* two nullable columns of different types, and NOT of that */
    return ids(p, coproc_plan_filter(
                      p, f, OR(CMP(LT, COL("a"), COL("b")), NOT(CMP(GE, COL("u"), COL("g"))))));
}

static coproc_node *q_between_in(coproc_plan *p, coproc_node *f, coproc_node *d)
{
    (void)d;
    coproc_expr *list[] = {I(1), I(3), I(5)};
    coproc_expr *btw = coproc_expr_between(p, COL("a"), I(5), I(20));
    return ids(p, coproc_plan_filter(p, f, OR(NOT(btw), coproc_expr_in(p, COL("u"), 3, list))));
}

static coproc_node *q_not_in_arith(coproc_plan *p, coproc_node *f, coproc_node *d)
{
    (void)d;
    coproc_expr *list[] = {I(2), I(4)};
    coproc_expr *sum = ARITH(ADD, ARITH(MUL, COL("b"), I(2)), COL("a"));
    return ids(p, coproc_plan_filter(p, f,
                                     AND(NOT(coproc_expr_in(p, COL("u"), 2, list)),
                                         NOT(NOT(CMP(GT, sum, I(30)))))));
}

static coproc_node *q_project(coproc_plan *p, coproc_node *f, coproc_node *d)
{
    (void)d;
    coproc_expr *list[] = {I(2), I(4)};
    const char *names[] = {"id", "s", "gt", "ni", "k2"};
    coproc_expr *e[] = {COL("id"), ARITH(ADD, COL("a"), COL("b")), CMP(GT, COL("a"), COL("b")),
                        NOT(coproc_expr_in(p, COL("u"), 2, list)), ARITH(SUB, I(7), COL("k"))};
    return coproc_plan_project(p, f, 5, names, e);
}

static coproc_node *q_project_float(coproc_plan *p, coproc_node *f, coproc_node *d)
{
    (void)d;
    const char *names[] = {"id", "x2", "xa"};
    coproc_expr *e[] = {COL("id"), ARITH(MUL, COL("x"), I(2)),
                        CMP(GE, COL("x"), ARITH(MUL, COL("a"), coproc_expr_float(p, 0.01)))};
    return coproc_plan_project(p, f, 3, names, e);
}

static coproc_node *group_g(coproc_plan *p, coproc_node *in, int nkeys, const char *const *keys)
{
    coproc_aggregate ag[] = {{COPROC_AGG_COUNT, NULL, "n"},
                             {COPROC_AGG_COUNT, COL("a"), "na"},
                             {COPROC_AGG_SUM, COL("b"), "sb"},
                             {COPROC_AGG_MIN, COL("a"), "mina"},
                             {COPROC_AGG_MAX, COL("u"), "maxu"}};
    return coproc_plan_group_by(p, in, nkeys, keys, 5, ag);
}

static coproc_node *q_group(coproc_plan *p, coproc_node *f, coproc_node *d)
{
    (void)d;
    const char *keys[] = {"g"};
    return group_g(p, f, 1, keys);
}

static coproc_node *q_group_filtered(coproc_plan *p, coproc_node *f, coproc_node *d)
{
    (void)d;
    const char *keys[] = {"k"};
    return group_g(p, coproc_plan_filter(p, f, NOT(CMP(GT, COL("a"), I(50)))), 1, keys);
}

static coproc_node *q_group2(coproc_plan *p, coproc_node *f, coproc_node *d)
{
    (void)d;
    const char *keys[] = {"g", "k"};
    return group_g(p, f, 2, keys);
}

static coproc_node *q_group_all(coproc_plan *p, coproc_node *f, coproc_node *d)
{
    (void)d;
    return group_g(p, f, 0, NULL);
}

static coproc_node *q_group_avg(coproc_plan *p, coproc_node *f, coproc_node *d)
{
    (void)d; /* AVG is float64 */
    const char *keys[] = {"k"};
    coproc_aggregate ag[] = {{COPROC_AGG_AVG, COL("a"), "avga"},
                             {COPROC_AGG_AVG, COL("b"), "avgb"}};
    return coproc_plan_group_by(p, f, 1, keys, 2, ag);
}

static coproc_node *q_all_avg(coproc_plan *p, coproc_node *f, coproc_node *d)
{
    (void)d;
    coproc_aggregate ag[] = {{COPROC_AGG_AVG, COL("a"), "avga"},
                             {COPROC_AGG_COUNT, COL("b"), "nb"}};
    return coproc_plan_group_by(p, f, 0, NULL, 2, ag);
}

static coproc_node *q_group_float(coproc_plan *p, coproc_node *f, coproc_node *d)
{
    (void)d;
    const char *keys[] = {"g"};
    coproc_aggregate ag[] = {{COPROC_AGG_SUM, COL("x"), "sx"},
                             {COPROC_AGG_MIN, COL("x"), "minx"},
                             {COPROC_AGG_MAX, COL("x"), "maxx"},
                             {COPROC_AGG_AVG, COL("x"), "avgx"},
                             {COPROC_AGG_COUNT, COL("x"), "nx"}};
    return coproc_plan_group_by(p, f, 1, keys, 5, ag);
}

static coproc_node *q_join_group(coproc_plan *p, coproc_node *f, coproc_node *d)
{
    const char *keys[] = {"dv"};
    coproc_aggregate ag[] = {{COPROC_AGG_COUNT, NULL, "n"}, {COPROC_AGG_SUM, COL("a"), "sa"}};
    coproc_node *j = coproc_plan_join(p, COPROC_JOIN_INNER, f, "k", d, "dk");
    return coproc_plan_group_by(p, j, 1, keys, 2, ag);
}

static coproc_node *q_join_rows(coproc_plan *p, coproc_node *f, coproc_node *d)
{
    const char *names[] = {"id", "a", "dv"};
    coproc_expr *e[] = {COL("id"), COL("a"), COL("dv")};
    coproc_node *j = coproc_plan_join(p, COPROC_JOIN_INNER, f, "k", d, "dk");
    return coproc_plan_project(p, coproc_plan_filter(p, j, NOT(CMP(GT, COL("dv"), I(50)))), 3,
                               names, e);
}

static coproc_node *q_semi(coproc_plan *p, coproc_node *f, coproc_node *d)
{
    return ids(p, coproc_plan_join(p, COPROC_JOIN_SEMI, f, "k", d, "dk"));
}

static coproc_node *q_order(coproc_plan *p, coproc_node *f, coproc_node *d)
{
    (void)d;
    const char *names[] = {"id", "g", "a"};
    coproc_expr *e[] = {COL("id"), COL("g"), COL("a")};
    coproc_order_key ok[] = {{"g", 0, 1}, {"a", 1, 0}, {"id", 0, 0}};
    return coproc_plan_order_by(p, coproc_plan_project(p, f, 3, names, e), 3, ok, 0);
}

static coproc_node *q_order_limit(coproc_plan *p, coproc_node *f, coproc_node *d)
{
    (void)d;
    const char *names[] = {"id", "b"};
    coproc_expr *e[] = {COL("id"), COL("b")};
    coproc_order_key ok[] = {{"b", 0, 0}, {"id", 1, 0}};
    return coproc_plan_order_by(p, coproc_plan_project(p, f, 2, names, e), 2, ok, 7);
}

static coproc_node *q_group_order(coproc_plan *p, coproc_node *f, coproc_node *d)
{
    (void)d;
    const char *keys[] = {"g"};
    coproc_aggregate ag[] = {{COPROC_AGG_SUM, COL("a"), "s"}};
    coproc_order_key ok[] = {{"s", 1, 1}, {"g", 0, 0}};
    return coproc_plan_order_by(p, coproc_plan_group_by(p, f, 1, keys, 1, ag), 2, ok, 0);
}

static coproc_node *q_strings(coproc_plan *p, coproc_node *f, coproc_node *d)
{
    (void)d;
    coproc_expr *list[] = {coproc_expr_string(p, "date"), coproc_expr_string(p, "fig")};
    coproc_expr *ne = NOT(CMP(EQ, COL("s"), coproc_expr_string(p, "banana")));
    coproc_expr *pre = NOT(coproc_expr_prefix(p, COL("s"), "ch"));
    return ids(p, coproc_plan_filter(p, f, OR(AND(ne, pre), coproc_expr_in(p, COL("s"), 2, list))));
}

static coproc_node *q_string_group(coproc_plan *p, coproc_node *f, coproc_node *d)
{
    (void)d;
    const char *keys[] = {"s"};
    coproc_aggregate ag[] = {{COPROC_AGG_COUNT, NULL, "n"}, {COPROC_AGG_COUNT, COL("a"), "na"}};
    return coproc_plan_group_by(p, f, 1, keys, 2, ag);
}

static coproc_node *q_string_join(coproc_plan *p, coproc_node *f, coproc_node *d)
{
    const char *names[] = {"id", "s", "dv"};
    coproc_expr *e[] = {COL("id"), COL("s"), COL("dv")};
    return coproc_plan_project(p, coproc_plan_join(p, COPROC_JOIN_INNER, f, "s", d, "ds"), 3, names,
                               e);
}

static coproc_node *q_string_semi(coproc_plan *p, coproc_node *f, coproc_node *d)
{
    return ids(p, coproc_plan_join(p, COPROC_JOIN_SEMI, f, "s", d, "ds"));
}

static coproc_node *q_semi_string_key(coproc_plan *p, coproc_node *f, coproc_node *d)
{
    const char *pk[] = {"k", "s"}, *bk[] = {"dk", "ds"};
    return ids(p, coproc_plan_join_keys(p, COPROC_JOIN_SEMI, f, 2, pk, d, bk));
}

static coproc_node *q_join_two_keys(coproc_plan *p, coproc_node *f, coproc_node *d)
{
    const char *pk[] = {"k", "u"}, *bk[] = {"dk", "dv"};
    const char *names[] = {"id", "dv"};
    coproc_expr *e[] = {COL("id"), COL("dv")};
    coproc_node *j = coproc_plan_join_keys(p, COPROC_JOIN_INNER, f, 2, pk, d, bk);
    return coproc_plan_project(p, j, 2, names, e);
}

static coproc_node *q_semi_two_keys(coproc_plan *p, coproc_node *f, coproc_node *d)
{
    const char *pk[] = {"k", "u"}, *bk[] = {"dk", "dv"};
    return ids(p, coproc_plan_join_keys(p, COPROC_JOIN_SEMI, f, 2, pk, d, bk));
}

typedef struct query {
    const char *name;
    const char *sql;
    build_fn build;
    int ordered;  /* compare in order (else as multisets) */
    int fp64;     /* reads or computes float64 */
    int all_rows; /* an aggregate without keys: SQLite's NULL over no rows needs the validity */
    int fuses;    /* 1: the fused engine runs it (no fallback note); 2: unless the build side
                   * has duplicate keys (an inner join's fused table holds one row a key) */
} query;

#define GROUP_SQL "count(*), count(a), sum(b), min(a), max(u)"
static const query queries[] = {
    {"not", "SELECT id, a FROM f WHERE NOT (a > 10)", q_not, 0, 0, 0, 0},
    {"not and", "SELECT id FROM f WHERE NOT (a > 10 AND b < 50)", q_not_and, 0, 0, 0, 0},
    {"not or", "SELECT id FROM f WHERE NOT (a > 10 OR u = 3)", q_not_or, 0, 0, 0, 0},
    {"columns", "SELECT id FROM f WHERE a < b OR NOT (u >= g)", q_cols, 0, 0, 0, 0},
    {"between, in", "SELECT id FROM f WHERE NOT (a BETWEEN 5 AND 20) OR u IN (1, 3, 5)",
     q_between_in, 0, 0, 0, 0},
    {"not in, arithmetic",
     "SELECT id FROM f WHERE NOT (u IN (2, 4)) AND NOT (NOT (b * 2 + a > 30))", q_not_in_arith, 0,
     0, 0, 0},
    {"project", "SELECT id, a + b, a > b, NOT (u IN (2, 4)), 7 - k FROM f", q_project, 0, 0, 0, 0},
    {"project float", "SELECT id, x * 2, x >= a * 0.01 FROM f", q_project_float, 0, 1, 0, 0},
    {"group", "SELECT g, " GROUP_SQL " FROM f GROUP BY g", q_group, 0, 0, 0, 0},
    {"group filtered", "SELECT k, " GROUP_SQL " FROM f WHERE NOT (a > 50) GROUP BY k",
     q_group_filtered, 0, 0, 0, 0},
    {"group two keys", "SELECT g, k, " GROUP_SQL " FROM f GROUP BY g, k", q_group2, 0, 0, 0, 0},
    {"group all", "SELECT " GROUP_SQL " FROM f", q_group_all, 0, 0, 1, 0},
    {"group avg", "SELECT k, avg(a), avg(b) FROM f GROUP BY k", q_group_avg, 0, 1, 0, 0},
    {"all avg", "SELECT avg(a), count(b) FROM f", q_all_avg, 0, 1, 1, 0},
    {"group float", "SELECT g, sum(x), min(x), max(x), avg(x), count(x) FROM f GROUP BY g",
     q_group_float, 0, 1, 0, 0},
    {"join group", "SELECT dv, count(*), sum(a) FROM f JOIN d ON f.k = d.dk GROUP BY dv",
     q_join_group, 0, 0, 0, 0},
    {"join rows", "SELECT id, a, dv FROM f JOIN d ON f.k = d.dk WHERE NOT (dv > 50)", q_join_rows,
     0, 0, 0, 0},
    {"semi join", "SELECT id FROM f WHERE EXISTS (SELECT 1 FROM d WHERE d.dk = f.k)", q_semi, 0, 0,
     0, 0},
    {"strings",
     "SELECT id FROM f WHERE (NOT (s = 'banana') AND NOT (s LIKE 'ch%')) OR s IN ('date', 'fig')",
     q_strings, 0, 0, 0, 0},
    {"string group", "SELECT s, count(*), count(a) FROM f GROUP BY s", q_string_group, 0, 0, 0, 0},
    {"string join", "SELECT id, s, dv FROM f JOIN d ON f.s = d.ds", q_string_join, 0, 0, 0, 2},
    {"string semi join", "SELECT id FROM f WHERE EXISTS (SELECT 1 FROM d WHERE d.ds = f.s)",
     q_string_semi, 0, 0, 0, 1},
    {"semi join key and string",
     "SELECT id FROM f WHERE EXISTS (SELECT 1 FROM d WHERE d.dk = f.k AND d.ds = f.s)",
     q_semi_string_key, 0, 0, 0, 1},
    {"join two keys", "SELECT id, dv FROM f JOIN d ON f.k = d.dk AND f.u = d.dv", q_join_two_keys,
     0, 0, 0, 2},
    {"semi join two keys",
     "SELECT id FROM f WHERE EXISTS (SELECT 1 FROM d WHERE d.dk = f.k AND d.dv = f.u)",
     q_semi_two_keys, 0, 0, 0, 1},
    {"order", "SELECT id, g, a FROM f ORDER BY g NULLS FIRST, a DESC NULLS LAST, id", q_order, 1, 0,
     0, 0},
    {"order limit", "SELECT id, b FROM f ORDER BY b NULLS LAST, id DESC LIMIT 7", q_order_limit, 1,
     0, 0, 0},
    {"group order", "SELECT g, sum(a) AS s FROM f GROUP BY g ORDER BY s DESC NULLS FIRST, g",
     q_group_order, 1, 0, 0, 0},
};

/* ---------------------------------------------------------------- the runs */

typedef struct run_ctx {
    int runs, fused_runs;
} run_ctx;

static void one_table(coproc_runtime *rt, int device, const char *path, size_t rows, double rate,
                      int fp64, run_ctx *rc)
{
    test_rng rng = {rows * 7919 + (uint64_t)(rate * 1000) + 1};
    table_data f, d;
    make_table(&f, fact_cols, NF, rows, rate, &rng);
    make_table(&d, dim_cols, ND, rows ? rows / 3 + 1 : 0, rate, &rng);
    coproc_column *fc[NF], *dc[ND];
    coproc_table *ft = to_coproc(rt, &f, fp64, fc), *dt = to_coproc(rt, &d, fp64, dc);
    sqlite3 *db;
    assert_int_equal(sqlite3_open(":memory:", &db), SQLITE_OK);
    to_sqlite(db, "f", &f);
    to_sqlite(db, "d", &d);
    for (size_t q = 0; q < sizeof queries / sizeof queries[0]; q++) {
        const query *qd = &queries[q];
        if (qd->fp64 && !fp64)
            continue;
        if (qd->all_rows && rows == 0 && rate == 0)
            continue; /* no validity: SUM/MIN/MAX 0 over no rows (coproc/query.h), not NULL */
        rowset want = from_sqlite(db, qd->sql);
        for (int mode = 0; mode < 2; mode++) {
            coproc_plan *p;
            assert_int_equal(coproc_plan_create(rt, &p), COPROC_OK);
            coproc_node *fs = coproc_plan_scan(p, ft, "f"), *ds = coproc_plan_scan(p, dt, "d");
            coproc_node *root = qd->build(p, fs, ds);
            coproc_query_options o;
            coproc_query_options_init(&o);
            o.mode = mode ? COPROC_QUERY_OPERATORS : COPROC_QUERY_FUSED;
            o.device = device;
            coproc_query_result r;
            coproc_status s = coproc_query_run(p, root, &o, &r);
            char what[200];
            snprintf(what, sizeof what, "%s (device %d, %s path, %s, %zu rows, %.0f %% nulls)",
                     qd->name, device, path, mode ? "operators" : "fused", rows, rate * 100);
            if (s != COPROC_OK)
                fail_msg("%s: %s: %s", what, coproc_status_message(s), coproc_errmsg(rt));
            rowset got = from_coproc(r.table);
            rowset want_copy = want;
            want_copy.c = malloc((want.n * want.ncols + 1) * sizeof(cell));
            if (want.n) /* no rows: want.c may be NULL, which memcpy must not get */
                memcpy(want_copy.c, want.c, want.n * want.ncols * sizeof(cell));
            check_equal(what, &got, &want_copy, qd->ordered);
            rc->runs++;
            if (!mode && r.note[0] == 0)
                rc->fused_runs++;
            if (!mode && qd->fuses && r.note[0] &&
                (qd->fuses == 1 || !strstr(r.note, "duplicate keys")))
                fail_msg("%s: fell back: %s", what, r.note);
            free(got.c);
            free(want_copy.c);
            coproc_query_result_free(&r);
            coproc_plan_free(p);
        }
        free(want.c);
    }
    sqlite3_close(db);
    coproc_table_free(ft);
    coproc_table_free(dt);
    for (int c = 0; c < NF; c++)
        coproc_column_free(fc[c]);
    for (int c = 0; c < ND; c++)
        coproc_column_free(dc[c]);
    free_table(&f);
    free_table(&d);
}

static void each(coproc_runtime *rt, int device, const char *path, void *user)
{
    run_ctx *rc = user;
    coproc_device_info info;
    assert_int_equal(coproc_device_info_get(rt, device, &info), COPROC_OK);
    static const size_t sizes[] = {0, 1, 33, 1000};
    static const double rates[] = {0, 0.01, 0.5, 1.0};
    const char *max_env = getenv("COPROC_TEST_MAX_ROWS");
    size_t max_rows = max_env ? (size_t)strtoull(max_env, NULL, 10) : SIZE_MAX;
    for (size_t si = 0; si < sizeof sizes / sizeof sizes[0] && sizes[si] <= max_rows; si++)
        for (size_t ri = 0; ri < sizeof rates / sizeof rates[0]; ri++) {
            if (sizes[si] == 0 && ri > 1)
                continue; /* no rows: with and without a validity is enough */
            one_table(rt, device, path, sizes[si], rates[ri], info.has_fp64, rc);
        }
    if (!info.has_fp64)
        printf("device %d: the queries over float64 (x, AVG) skipped (device has no fp64)\n",
               device);
}

static void test_against_sqlite(void **state)
{
    (void)state;
    run_ctx rc = {0, 0};
    test_each_device_path(each, &rc);
    printf("%d runs equal to SQLite; %d fused runs without a fallback note\n", rc.runs,
           rc.fused_runs);
    assert_true(rc.runs > 0);
}

/* A plan's columns may gain a validity after the table was made: the run sees it. */
static void test_validity_added_later(void **state)
{
    (void)state;
    coproc_runtime *rt = test_open(NULL);
    int32_t v[40];
    uint32_t bits[2] = {0x0000ffffu, 0};
    for (int i = 0; i < 40; i++)
        v[i] = i;
    coproc_column *c, *b;
    coproc_table *t;
    assert_int_equal(coproc_column_wrap(rt, COPROC_INT32, v, 40, &c), COPROC_OK);
    assert_int_equal(coproc_table_create(rt, &t), COPROC_OK);
    assert_int_equal(coproc_table_add(t, "v", c), COPROC_OK);
    assert_int_equal(coproc_column_wrap(rt, COPROC_UINT32, bits, 2, &b), COPROC_OK);
    assert_int_equal(coproc_column_set_validity(c, b), COPROC_OK);
    for (int mode = 0; mode < 2; mode++) {
        coproc_plan *p;
        assert_int_equal(coproc_plan_create(rt, &p), COPROC_OK);
        coproc_aggregate ag[] = {{COPROC_AGG_COUNT, COL("v"), "n"},
                                 {COPROC_AGG_SUM, COL("v"), "s"}};
        coproc_node *g = coproc_plan_group_by(p, coproc_plan_scan(p, t, "t"), 0, NULL, 2, ag);
        coproc_query_options o;
        coproc_query_options_init(&o);
        o.mode = mode ? COPROC_QUERY_OPERATORS : COPROC_QUERY_FUSED;
        coproc_query_result r;
        assert_int_equal(coproc_query_run(p, g, &o, &r), COPROC_OK);
        const coproc_column *n = coproc_table_column(r.table, "n"),
                            *s = coproc_table_column(r.table, "s");
        assert_int_equal(((const int64_t *)coproc_column_host_data(n))[0], 16);
        assert_int_equal(((const int64_t *)coproc_column_host_data(s))[0], 120); /* 0 + ... + 15 */
        coproc_query_result_free(&r);
        coproc_plan_free(p);
    }
    coproc_table_free(t);
    coproc_column_free(c);
    coproc_close(rt);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_against_sqlite),
        cmocka_unit_test(test_validity_added_later),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
