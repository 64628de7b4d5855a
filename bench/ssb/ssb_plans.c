/* ssb_plans.c - the 13 SSB queries as coproc plans, written as Crystal runs
 * them: each dimension filtered into a join table (a semi join where the
 * query needs none of its columns), lineorder streamed past them, the sum
 * grouped by the dimensions' attributes, then ordered. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ssb_plans.h"

/* ---------------------------------------------------------------- strings */

static const char *const month_names[12] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                            "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};

/* A string column of the queries: its code's dbgen string into buf (NULL for
 * a code that is none), and back. Brands print as four digits ("MFGR#2201"),
 * so that their byte order is their code order. */
typedef struct string_col {
    const char *name;
    const char *(*to_string)(int32_t code, char *buf);
    int32_t (*to_code)(const char *s);
} string_col;

static const char *region_s(int32_t c, char *buf) { (void)buf; return ssb_region_name(c); }
static const char *nation_s(int32_t c, char *buf) { (void)buf; return ssb_nation_name(c); }
static const char *city_s(int32_t c, char *buf) { return ssb_city_name(c, buf); }
static const char *mfgr_s(int32_t c, char *buf)
{
    snprintf(buf, 16, "MFGR#%d", (int)c);
    return ssb_mfgr_code(buf) == c ? buf : NULL;
}
static const char *category_s(int32_t c, char *buf)
{
    snprintf(buf, 16, "MFGR#%d", (int)c);
    return ssb_category_code(buf) == c ? buf : NULL;
}
static const char *brand_s(int32_t c, char *buf)
{
    snprintf(buf, 16, "MFGR#%04d", (int)c);
    return ssb_brand_code(buf) == c ? buf : NULL;
}
static const char *yearmonth_s(int32_t c, char *buf)
{
    if (c % 100 < 1 || c % 100 > 12)
        return NULL;
    snprintf(buf, 16, "%s%d", month_names[c % 100 - 1], (int)(c / 100));
    return buf;
}

static const string_col string_cols[] = {
    {"c_region", region_s, ssb_region_code},   {"s_region", region_s, ssb_region_code},
    {"c_nation", nation_s, ssb_nation_code},   {"s_nation", nation_s, ssb_nation_code},
    {"c_city", city_s, ssb_city_code},         {"s_city", city_s, ssb_city_code},
    {"p_mfgr", mfgr_s, ssb_mfgr_code},         {"p_category", category_s, ssb_category_code},
    {"p_brand1", brand_s, ssb_brand_code},     {"d_yearmonth", yearmonth_s, ssb_yearmonth_code},
};

static const string_col *string_col_of(const char *name)
{
    for (size_t i = 0; i < sizeof string_cols / sizeof string_cols[0]; i++)
        if (strcmp(string_cols[i].name, name) == 0)
            return &string_cols[i];
    return NULL;
}

/* The column's codes as strings, dictionary-encoded where device says. */
static coproc_status encode(coproc_runtime *rt, const string_col *sc, const ssb_column *c,
                            int device, coproc_column **out)
{
    char *buf = malloc((c->rows ? c->rows : 1) * 16);
    const char **v = malloc((c->rows ? c->rows : 1) * sizeof *v);
    coproc_status s = buf && v ? COPROC_OK : COPROC_HOST_OUT_OF_MEMORY;
    for (size_t r = 0; r < c->rows && s == COPROC_OK; r++)
        if (!(v[r] = sc->to_string(c->data[r], buf + r * 16)))
            s = COPROC_INVALID_ARGUMENT;
    if (s == COPROC_OK)
        s = coproc_column_encode_strings(rt, device, v, c->rows, out);
    free(buf);
    free(v);
    return s;
}

static coproc_status tables_open(coproc_runtime *rt, const ssb_db *db, int device, int strings,
                                 ssb_tables *out)
{
    memset(out, 0, sizeof *out);
    out->strings = strings;
    coproc_status s = COPROC_OK;
    for (int t = 0; t < SSB_NTABLES && s == COPROC_OK; t++)
        s = coproc_table_create(rt, &out->t[t]);
    for (int i = 0; i < ssb_ncolumns() && s == COPROC_OK; i++) {
        ssb_column c;
        if (ssb_column_at(db, i, &c) != 0 || out->ncols == 64)
            break;
        coproc_column *col;
        const string_col *sc = strings ? string_col_of(c.name) : NULL;
        if (sc)
            s = encode(rt, sc, &c, device, &col);
        else if (device < 0)
            s = coproc_column_wrap(rt, COPROC_INT32, c.data, c.rows, &col);
        else
            s = coproc_column_upload(rt, device, COPROC_INT32, c.data, c.rows, &col);
        if (s != COPROC_OK)
            break;
        out->cols[out->ncols++] = col;
        s = coproc_table_add(out->t[c.table], c.name, col);
    }
    if (s != COPROC_OK)
        ssb_tables_close(out);
    return s;
}

coproc_status ssb_tables_open(coproc_runtime *rt, const ssb_db *db, int device, ssb_tables *out)
{
    return tables_open(rt, db, device, 0, out);
}

coproc_status ssb_tables_open_strings(coproc_runtime *rt, const ssb_db *db, int device,
                                      ssb_tables *out)
{
    return tables_open(rt, db, device, 1, out);
}

void ssb_tables_close(ssb_tables *t)
{
    for (int i = 0; i < SSB_NTABLES; i++)
        coproc_table_free(t->t[i]);
    for (int i = 0; i < t->ncols; i++)
        coproc_column_free(t->cols[i]);
    memset(t, 0, sizeof *t);
}

/* ---------------------------------------------------------------- building blocks */

typedef struct qb {
    coproc_plan *p;
    const ssb_tables *t;
    ssb_plan_agg *agg; /* non-NULL: record the aggregation here instead of building it */
} qb;

static coproc_expr *col(qb *b, const char *name) { return coproc_expr_column(b->p, name); }
static coproc_expr *num(qb *b, int64_t v) { return coproc_expr_int(b->p, v); }
/* Column c's constant v: the code, or its string where c is a string column. */
static coproc_expr *konst(qb *b, const char *c, int64_t v)
{
    const string_col *sc = b->t->strings ? string_col_of(c) : NULL;
    char buf[16];
    return sc ? coproc_expr_string(b->p, sc->to_string((int32_t)v, buf)) : num(b, v);
}
static coproc_expr *eq(qb *b, const char *c, int64_t v)
{
    return coproc_expr_compare(b->p, COPROC_CMP_EQ, col(b, c), konst(b, c, v));
}
static coproc_expr *between(qb *b, const char *c, int64_t lo, int64_t hi)
{
    return coproc_expr_between(b->p, col(b, c), konst(b, c, lo), konst(b, c, hi));
}
static coproc_expr *in2(qb *b, const char *c, int64_t x, int64_t y)
{
    coproc_expr *list[] = {konst(b, c, x), konst(b, c, y)};
    return coproc_expr_in(b->p, col(b, c), 2, list);
}
static coproc_expr *and2(qb *b, coproc_expr *x, coproc_expr *y) { return coproc_expr_and(b->p, x, y); }

static coproc_node *scan(qb *b, ssb_table t) { return coproc_plan_scan(b->p, b->t->t[t], ssb_table_name(t)); }

/* A dimension, filtered by pred (NULL: all rows). */
static coproc_node *dim(qb *b, ssb_table t, coproc_expr *pred)
{
    coproc_node *n = scan(b, t);
    return pred ? coproc_plan_filter(b->p, n, pred) : n;
}

static coproc_node *join(qb *b, coproc_join_kind k, coproc_node *probe, const char *pk, coproc_node *build,
                         const char *bk)
{
    return coproc_plan_join(b->p, k, probe, pk, build, bk);
}

/* sum(expr) as name, grouped by keys, ordered by order (name, desc) pairs. */
static coproc_node *group_sum(qb *b, coproc_node *in, int nkeys, const char *const *keys, coproc_expr *sum,
                              const char *name, int norder, const coproc_order_key *order)
{
    coproc_aggregate ag = {COPROC_AGG_SUM, sum, name};
    if (b->agg) {
        b->agg->in = in;
        b->agg->nkeys = nkeys;
        for (int i = 0; i < nkeys; i++)
            b->agg->keys[i] = keys[i];
        b->agg->agg = ag;
        b->agg->norder = norder;
        for (int i = 0; i < norder; i++)
            b->agg->order[i] = order[i];
        return in;
    }
    coproc_node *g = coproc_plan_group_by(b->p, in, nkeys, keys, 1, &ag);
    return norder ? coproc_plan_order_by(b->p, g, norder, order, 0) : g;
}

/* ---------------------------------------------------------------- the queries */

static coproc_node *q1(qb *b, coproc_expr *date_pred, int64_t dlo, int64_t dhi, int64_t qlo, int64_t qhi)
{
    coproc_node *lo = coproc_plan_filter(
        b->p, scan(b, SSB_LINEORDER),
        and2(b, between(b, "lo_discount", dlo, dhi), between(b, "lo_quantity", qlo, qhi)));
    lo = join(b, COPROC_JOIN_SEMI, lo, "lo_orderdate", dim(b, SSB_DATE, date_pred), "d_datekey");
    coproc_expr *rev = coproc_expr_arith(b->p, COPROC_ARITH_MUL, col(b, "lo_extendedprice"), col(b, "lo_discount"));
    return group_sum(b, lo, 0, NULL, rev, "revenue", 0, NULL);
}

static coproc_node *q2(qb *b, coproc_expr *part_pred, int64_t region)
{
    coproc_node *lo = scan(b, SSB_LINEORDER);
    lo = join(b, COPROC_JOIN_SEMI, lo, "lo_suppkey", dim(b, SSB_SUPPLIER, eq(b, "s_region", region)), "s_suppkey");
    lo = join(b, COPROC_JOIN_INNER, lo, "lo_partkey", dim(b, SSB_PART, part_pred), "p_partkey");
    lo = join(b, COPROC_JOIN_INNER, lo, "lo_orderdate", dim(b, SSB_DATE, NULL), "d_datekey");
    static const char *const keys[] = {"d_year", "p_brand1"};
    static const coproc_order_key order[] = {{"d_year", 0, 0}, {"p_brand1", 0, 0}};
    return group_sum(b, lo, 2, keys, col(b, "lo_revenue"), "revenue", 2, order);
}

/* Q3: customer and supplier attributes `attr` (nation or city). */
static coproc_node *q3(qb *b, const char *c_attr, const char *s_attr, coproc_expr *c_pred, coproc_expr *s_pred,
                       coproc_expr *d_pred)
{
    coproc_node *lo = scan(b, SSB_LINEORDER);
    lo = join(b, COPROC_JOIN_INNER, lo, "lo_suppkey", dim(b, SSB_SUPPLIER, s_pred), "s_suppkey");
    lo = join(b, COPROC_JOIN_INNER, lo, "lo_custkey", dim(b, SSB_CUSTOMER, c_pred), "c_custkey");
    lo = join(b, COPROC_JOIN_INNER, lo, "lo_orderdate", dim(b, SSB_DATE, d_pred), "d_datekey");
    const char *keys[] = {c_attr, s_attr, "d_year"};
    coproc_order_key order[] = {{"d_year", 0, 0}, {"revenue", 1, 0}, {c_attr, 0, 0}, {s_attr, 0, 0}};
    return group_sum(b, lo, 3, keys, col(b, "lo_revenue"), "revenue", 4, order);
}

static coproc_node *q4(qb *b, int q)
{
    coproc_node *lo = scan(b, SSB_LINEORDER);
    coproc_expr *years = q == SSB_Q4_1 ? NULL : in2(b, "d_year", 1997, 1998);
    coproc_expr *profit = coproc_expr_arith(b->p, COPROC_ARITH_SUB, col(b, "lo_revenue"), col(b, "lo_supplycost"));
    if (q == SSB_Q4_3) {
        lo = join(b, COPROC_JOIN_INNER, lo, "lo_suppkey", dim(b, SSB_SUPPLIER, eq(b, "s_nation", 24)), "s_suppkey");
        lo = join(b, COPROC_JOIN_INNER, lo, "lo_partkey", dim(b, SSB_PART, eq(b, "p_category", 14)), "p_partkey");
        lo = join(b, COPROC_JOIN_SEMI, lo, "lo_custkey", dim(b, SSB_CUSTOMER, eq(b, "c_region", 1)), "c_custkey");
    } else {
        lo = join(b, q == SSB_Q4_1 ? COPROC_JOIN_SEMI : COPROC_JOIN_INNER, lo, "lo_partkey",
                  dim(b, SSB_PART, in2(b, "p_mfgr", 1, 2)), "p_partkey");
        lo = join(b, q == SSB_Q4_1 ? COPROC_JOIN_SEMI : COPROC_JOIN_INNER, lo, "lo_suppkey",
                  dim(b, SSB_SUPPLIER, eq(b, "s_region", 1)), "s_suppkey");
        lo = join(b, q == SSB_Q4_1 ? COPROC_JOIN_INNER : COPROC_JOIN_SEMI, lo, "lo_custkey",
                  dim(b, SSB_CUSTOMER, eq(b, "c_region", 1)), "c_custkey");
    }
    lo = join(b, COPROC_JOIN_INNER, lo, "lo_orderdate", dim(b, SSB_DATE, years), "d_datekey");
    static const char *const k41[] = {"d_year", "c_nation"}, *const k42[] = {"d_year", "s_nation", "p_category"},
                             *const k43[] = {"d_year", "s_city", "p_brand1"};
    const char *const *keys = q == SSB_Q4_1 ? k41 : q == SSB_Q4_2 ? k42 : k43;
    int nk = q == SSB_Q4_1 ? 2 : 3;
    coproc_order_key order[3];
    for (int i = 0; i < nk; i++)
        order[i] = (coproc_order_key){keys[i], 0, 0};
    return group_sum(b, lo, nk, keys, profit, "profit", nk, order);
}

static coproc_status build(coproc_plan *p, const ssb_tables *t, int q, ssb_plan_agg *agg,
                           coproc_node **root)
{
    qb b = {p, t, agg};
    coproc_node *r = NULL;
    switch (q) {
    case SSB_Q1_1: r = q1(&b, eq(&b, "d_year", 1993), 1, 3, 0, 24); break;
    case SSB_Q1_2: r = q1(&b, eq(&b, "d_yearmonthnum", 199401), 4, 6, 26, 35); break;
    case SSB_Q1_3:
        r = q1(&b, and2(&b, eq(&b, "d_weeknuminyear", 6), eq(&b, "d_year", 1994)), 5, 7, 26, 35);
        break;
    case SSB_Q2_1: r = q2(&b, eq(&b, "p_category", 12), 1); break;
    case SSB_Q2_2: r = q2(&b, between(&b, "p_brand1", 2221, 2228), 2); break;
    case SSB_Q2_3: r = q2(&b, eq(&b, "p_brand1", 2239), 3); break;
    case SSB_Q3_1:
        r = q3(&b, "c_nation", "s_nation", eq(&b, "c_region", 2), eq(&b, "s_region", 2),
               between(&b, "d_year", 1992, 1997));
        break;
    case SSB_Q3_2:
        r = q3(&b, "c_city", "s_city", eq(&b, "c_nation", 24), eq(&b, "s_nation", 24),
               between(&b, "d_year", 1992, 1997));
        break;
    case SSB_Q3_3:
        r = q3(&b, "c_city", "s_city", in2(&b, "c_city", 231, 235), in2(&b, "s_city", 231, 235),
               between(&b, "d_year", 1992, 1997));
        break;
    case SSB_Q3_4:
        r = q3(&b, "c_city", "s_city", in2(&b, "c_city", 231, 235), in2(&b, "s_city", 231, 235),
               eq(&b, "d_yearmonth", 199712));
        break;
    case SSB_Q4_1:
    case SSB_Q4_2:
    case SSB_Q4_3: r = q4(&b, q); break;
    default: return COPROC_INVALID_ARGUMENT;
    }
    *root = r;
    return coproc_plan_status(p);
}

coproc_status ssb_plan_build(coproc_plan *p, const ssb_tables *t, int q, coproc_node **root)
{
    return build(p, t, q, NULL, root);
}

coproc_status ssb_plan_build_agg(coproc_plan *p, const ssb_tables *t, int q, ssb_plan_agg *out)
{
    memset(out, 0, sizeof *out);
    coproc_node *in = NULL;
    return build(p, t, q, out, &in);
}

/* ---------------------------------------------------------------- bytes and results */

static const char *const used[SSB_NQUERIES][12] = {
    {"lo_orderdate", "lo_discount", "lo_quantity", "lo_extendedprice", "d_datekey", "d_year"},
    {"lo_orderdate", "lo_discount", "lo_quantity", "lo_extendedprice", "d_datekey", "d_yearmonthnum"},
    {"lo_orderdate", "lo_discount", "lo_quantity", "lo_extendedprice", "d_datekey", "d_year", "d_weeknuminyear"},
#define Q2 {"lo_orderdate", "lo_partkey", "lo_suppkey", "lo_revenue", "d_datekey", "d_year", "p_partkey", \
            "p_category", "p_brand1", "s_suppkey", "s_region"}
    Q2, Q2, Q2,
#define Q3(c, s, d) {"lo_orderdate", "lo_custkey", "lo_suppkey", "lo_revenue", "d_datekey", "d_year", d, \
                     "c_custkey", c, "s_suppkey", s}
    Q3("c_nation", "s_nation", "d_year"), Q3("c_city", "s_city", "d_year"), Q3("c_city", "s_city", "d_year"),
    Q3("c_city", "s_city", "d_yearmonth"),
#define Q4 {"lo_orderdate", "lo_custkey", "lo_suppkey", "lo_partkey", "lo_revenue", "lo_supplycost", \
            "d_datekey", "d_year", "c_custkey", "c_region", "s_suppkey", "p_partkey"}
    Q4, Q4, Q4,
};

double ssb_query_bytes(const ssb_db *db, int q)
{
    double bytes = 0;
    if (q < 0 || q >= SSB_NQUERIES)
        return 0;
    for (int i = 0; i < 12 && used[q][i]; i++) {
        size_t rows = 0;
        if (ssb_column_find(db, used[q][i], &rows))
            bytes += 4.0 * rows;
    }
    return bytes;
}

double ssb_working_set_bytes(const ssb_db *db, const int *run_q)
{
    const char *seen[SSB_NQUERIES * 12];
    int nseen = 0;
    double bytes = 0;
    for (int q = 0; q < SSB_NQUERIES; q++)
        for (int i = 0; run_q[q] && i < 12 && used[q][i]; i++) {
            int dup = 0;
            for (int j = 0; j < nseen && !dup; j++)
                dup = strcmp(seen[j], used[q][i]) == 0;
            size_t rows = 0;
            if (!dup && ssb_column_find(db, used[q][i], &rows)) {
                seen[nseen++] = used[q][i];
                bytes += 4.0 * rows;
            }
        }
    return bytes;
}

static const char *const out_names[SSB_NQUERIES][4] = {
    {"revenue"}, {"revenue"}, {"revenue"},
    {"revenue", "d_year", "p_brand1"}, {"revenue", "d_year", "p_brand1"}, {"revenue", "d_year", "p_brand1"},
    {"c_nation", "s_nation", "d_year", "revenue"}, {"c_city", "s_city", "d_year", "revenue"},
    {"c_city", "s_city", "d_year", "revenue"}, {"c_city", "s_city", "d_year", "revenue"},
    {"d_year", "c_nation", "profit"}, {"d_year", "s_nation", "p_category", "profit"},
    {"d_year", "s_city", "p_brand1", "profit"},
};

int ssb_result_from_table(const coproc_table *t, int q, ssb_result *out)
{
    memset(out, 0, sizeof *out);
    if (q < 0 || q >= SSB_NQUERIES || !t)
        return -1;
    const coproc_column *cols[4];
    int n = 0;
    for (; n < 4 && out_names[q][n]; n++) {
        cols[n] = coproc_table_column(t, out_names[q][n]);
        if (!cols[n] || (!coproc_column_host_data(cols[n]) && coproc_column_length(cols[n])))
            return -1;
        out->names[n] = out_names[q][n];
    }
    out->ncols = n;
    out->nrows = coproc_table_rows(t);
    out->values = malloc((out->nrows ? out->nrows : 1) * n * sizeof *out->values);
    if (!out->values)
        return -1;
    int decoded = 0;
    for (size_t r = 0; r < out->nrows; r++)
        for (int c = 0; c < n; c++) {
            const void *p = coproc_column_host_data(cols[c]);
            int64_t v = 0;
            switch (coproc_column_type(cols[c])) {
            case COPROC_INT32: v = ((const int32_t *)p)[r]; break;
            case COPROC_INT64: v = ((const int64_t *)p)[r]; break;
            case COPROC_UINT32: v = ((const uint32_t *)p)[r]; break;
            case COPROC_UINT64: v = (int64_t)((const uint64_t *)p)[r]; break;
            default: free(out->values); out->values = NULL; return -1;
            }
            /* a string: back to the reference's code */
            const string_col *sc = string_col_of(out->names[c]);
            if (coproc_column_dictionary_size(cols[c]) >= 0) {
                const char *str = coproc_column_dictionary_value(cols[c], (int)v);
                v = sc && str ? sc->to_code(str) : -1;
                decoded = 1;
            }
            out->values[r * n + c] = v;
        }
    /* String order (nations, cities) is not code order: the reference's. */
    if (decoded)
        ssb_result_sort(out, ssb_result_order(q));
    return 0;
}
