/* ssb_reference.c - the 13 SSB queries as plain scalar loops over lineorder:
 * each dimension row found directly by its key (row = key - 1; the date's
 * through an array over yyyymmdd), the predicates written as the
 * specification states them with the constants through the encoders, the
 * groups summed in a small hash table. Nothing clever, so that it is plainly
 * right: the answer other engines are checked against. */
#include <stdlib.h>
#include <string.h>

#include "ssb.h"
#include "ssb_internal.h"

/* ---- the date row of a yyyymmdd key -------------------------------------- */

#define DATEKEY_FIRST 19920101
#define DATEKEY_LAST 19981231

typedef struct dates {
    int32_t *row; /* [key - DATEKEY_FIRST]: row + 1, 0 when no such date */
} dates;

static int dates_open(dates *d, const ssb_db *db)
{
    d->row = calloc(DATEKEY_LAST - DATEKEY_FIRST + 1, sizeof *d->row);
    if (!d->row) return -1;
    for (size_t i = 0; i < db->rows[SSB_DATE]; i++)
        d->row[db->d_datekey[i] - DATEKEY_FIRST] = (int32_t)i + 1;
    return 0;
}

/* The date row of key; the generator makes every lo_*date one of the table's. */
static size_t date_row(const dates *d, int32_t key) { return (size_t)d->row[key - DATEKEY_FIRST] - 1; }

/* ---- sums by group key ------------------------------------------------------ */

/* Up to three group keys, each in 0 .. 2^21 - 1 (years, codes), packed into one
 * word; open addressing with linear probing. */
typedef struct groups {
    size_t cap, n;
    uint64_t *key; /* packed key + 1; 0 for an empty slot */
    int64_t *sum;
} groups;

static int groups_init(groups *g, size_t cap)
{
    g->cap = cap;
    g->n = 0;
    g->key = calloc(cap, sizeof *g->key);
    g->sum = calloc(cap, sizeof *g->sum);
    if (g->key && g->sum) return 0;
    free(g->key);
    free(g->sum);
    return -1;
}

static void groups_free(groups *g)
{
    free(g->key);
    free(g->sum);
}

static size_t slot_of(const groups *g, uint64_t k)
{
    size_t i = (size_t)((k * 0x9E3779B97F4A7C15ull) >> 20) & (g->cap - 1);
    while (g->key[i] && g->key[i] != k) i = (i + 1) & (g->cap - 1);
    return i;
}

static int groups_add(groups *g, int64_t a, int64_t b, int64_t c, int64_t v)
{
    uint64_t k = (((uint64_t)a << 42) | ((uint64_t)b << 21) | (uint64_t)c) + 1;
    if (2 * (g->n + 1) > g->cap) {
        groups bigger;
        if (groups_init(&bigger, 2 * g->cap) != 0) return -1;
        for (size_t i = 0; i < g->cap; i++) {
            if (!g->key[i]) continue;
            size_t j = slot_of(&bigger, g->key[i]);
            bigger.key[j] = g->key[i];
            bigger.sum[j] = g->sum[i];
            bigger.n++;
        }
        groups_free(g);
        *g = bigger;
    }
    size_t i = slot_of(g, k);
    if (!g->key[i]) {
        g->key[i] = k;
        g->n++;
    }
    g->sum[i] += v;
    return 0;
}

/* ---- result shapes ---------------------------------------------------------- */

#define AGG (-1)

/* The select list: each column a group key (0..2, as passed to groups_add)
 * or the sum; and the ORDER BY with the tie-breaks (as ssb_result_sort). */
typedef struct shape {
    int ncols;
    const char *names[5];
    int src[5];
    int order[6];
} shape;

static const shape q2_shape = {3, {"revenue", "d_year", "p_brand1"}, {AGG, 0, 1}, {2, 3, 0}};
static const shape q31_shape = {4, {"c_nation", "s_nation", "d_year", "revenue"},
                                {0, 1, 2, AGG}, {3, -4, 1, 2, 0}};
static const shape q3_city_shape = {4, {"c_city", "s_city", "d_year", "revenue"},
                                    {0, 1, 2, AGG}, {3, -4, 1, 2, 0}};
static const shape q41_shape = {3, {"d_year", "c_nation", "profit"}, {0, 1, AGG}, {1, 2, 0}};
static const shape q42_shape = {4, {"d_year", "s_nation", "p_category", "profit"},
                                {0, 1, 2, AGG}, {1, 2, 3, 0}};
static const shape q43_shape = {4, {"d_year", "s_city", "p_brand1", "profit"},
                                {0, 1, 2, AGG}, {1, 2, 3, 0}};

static const shape *shape_of(int q)
{
    return q <= SSB_Q2_3   ? &q2_shape
           : q == SSB_Q3_1 ? &q31_shape
           : q <= SSB_Q3_4 ? &q3_city_shape
           : q == SSB_Q4_1 ? &q41_shape
           : q == SSB_Q4_2 ? &q42_shape
                           : &q43_shape;
}

const int *ssb_result_order(int q)
{
    static const int none[1] = {0};
    return q <= SSB_Q1_3 || q >= SSB_NQUERIES ? none : shape_of(q)->order;
}

static int emit(const groups *g, const shape *sh, ssb_result *out)
{
    out->ncols = sh->ncols;
    for (int c = 0; c < sh->ncols; c++) out->names[c] = sh->names[c];
    out->nrows = g->n;
    out->values = g->n ? malloc(g->n * (size_t)sh->ncols * sizeof *out->values) : NULL;
    if (g->n && !out->values) return -1;
    int64_t *v = out->values;
    for (size_t i = 0; i < g->cap; i++) {
        if (!g->key[i]) continue;
        uint64_t k = g->key[i] - 1;
        int64_t keys[3] = {(int64_t)(k >> 42), (int64_t)((k >> 21) & 0x1FFFFF),
                           (int64_t)(k & 0x1FFFFF)};
        for (int c = 0; c < sh->ncols; c++) *v++ = sh->src[c] == AGG ? g->sum[i] : keys[sh->src[c]];
    }
    ssb_result_sort(out, sh->order);
    return 0;
}

/* ---- the queries ------------------------------------------------------------ */

/* Q1.x: one sum over lineorder filtered by date, discount and quantity. */
static int run_q1(const ssb_db *db, const dates *dt, int q, ssb_result *out)
{
    int64_t revenue = 0;
    for (size_t i = 0; i < db->rows[SSB_LINEORDER]; i++) {
        size_t d = date_row(dt, db->lo_orderdate[i]);
        int32_t disc = db->lo_discount[i], qty = db->lo_quantity[i];
        int match;
        if (q == SSB_Q1_1)
            match = db->d_year[d] == 1993 && disc >= 1 && disc <= 3 && qty < 25;
        else if (q == SSB_Q1_2)
            match = db->d_yearmonthnum[d] == 199401 && disc >= 4 && disc <= 6 && qty >= 26 &&
                    qty <= 35;
        else
            match = db->d_weeknuminyear[d] == 6 && db->d_year[d] == 1994 && disc >= 5 &&
                    disc <= 7 && qty >= 26 && qty <= 35;
        if (match) revenue += (int64_t)db->lo_extendedprice[i] * disc;
    }
    out->ncols = 1;
    out->names[0] = "revenue";
    out->nrows = 1;
    out->values = malloc(sizeof *out->values);
    if (!out->values) return -1;
    out->values[0] = revenue;
    return 0;
}

/* Q2.x: revenue by year and brand, for a part predicate and a supplier region. */
static int run_q2(const ssb_db *db, const dates *dt, int q, groups *g)
{
    int32_t category = ssb_category_code("MFGR#12");
    int32_t brand_lo = ssb_brand_code("MFGR#2221"), brand_hi = ssb_brand_code("MFGR#2228");
    int32_t brand = ssb_brand_code("MFGR#2239");
    int32_t region = ssb_region_code(q == SSB_Q2_1 ? "AMERICA" : q == SSB_Q2_2 ? "ASIA" : "EUROPE");
    for (size_t i = 0; i < db->rows[SSB_LINEORDER]; i++) {
        size_t p = (size_t)db->lo_partkey[i] - 1, s = (size_t)db->lo_suppkey[i] - 1;
        int32_t b = db->p_brand1[p];
        int part_ok = q == SSB_Q2_1   ? db->p_category[p] == category
                      : q == SSB_Q2_2 ? b >= brand_lo && b <= brand_hi
                                      : b == brand;
        if (!part_ok || db->s_region[s] != region) continue;
        size_t d = date_row(dt, db->lo_orderdate[i]);
        if (groups_add(g, db->d_year[d], b, 0, db->lo_revenue[i]) != 0) return -1;
    }
    return 0;
}

/* Q3.x: revenue by customer place, supplier place and year, 1992..1997
 * (Q3.4: December 1997). */
static int run_q3(const ssb_db *db, const dates *dt, int q, groups *g)
{
    int32_t asia = ssb_region_code("ASIA"), us = ssb_nation_code("UNITED STATES");
    int32_t ki1 = ssb_city_code("UNITED KI1"), ki5 = ssb_city_code("UNITED KI5");
    int32_t dec1997 = ssb_yearmonth_code("Dec1997");
    for (size_t i = 0; i < db->rows[SSB_LINEORDER]; i++) {
        size_t c = (size_t)db->lo_custkey[i] - 1, s = (size_t)db->lo_suppkey[i] - 1;
        size_t d = date_row(dt, db->lo_orderdate[i]);
        int32_t cc = db->c_city[c], sc = db->s_city[s], year = db->d_year[d];
        int match;
        if (q == SSB_Q3_1)
            match = db->c_region[c] == asia && db->s_region[s] == asia;
        else if (q == SSB_Q3_2)
            match = db->c_nation[c] == us && db->s_nation[s] == us;
        else
            match = (cc == ki1 || cc == ki5) && (sc == ki1 || sc == ki5);
        if (q == SSB_Q3_4)
            match = match && db->d_yearmonth[d] == dec1997;
        else
            match = match && year >= 1992 && year <= 1997;
        if (!match) continue;
        int rc = q == SSB_Q3_1 ? groups_add(g, db->c_nation[c], db->s_nation[s], year, db->lo_revenue[i])
                        : groups_add(g, cc, sc, year, db->lo_revenue[i]);
        if (rc != 0) return -1;
    }
    return 0;
}

/* Q4.x: profit (revenue - supply cost) for American customers. */
static int run_q4(const ssb_db *db, const dates *dt, int q, groups *g)
{
    int32_t america = ssb_region_code("AMERICA"), us = ssb_nation_code("UNITED STATES");
    int32_t mfgr1 = ssb_mfgr_code("MFGR#1"), mfgr2 = ssb_mfgr_code("MFGR#2");
    int32_t category = ssb_category_code("MFGR#14");
    for (size_t i = 0; i < db->rows[SSB_LINEORDER]; i++) {
        size_t c = (size_t)db->lo_custkey[i] - 1, s = (size_t)db->lo_suppkey[i] - 1;
        size_t p = (size_t)db->lo_partkey[i] - 1;
        size_t d = date_row(dt, db->lo_orderdate[i]);
        int32_t year = db->d_year[d], mfgr = db->p_mfgr[p];
        if (db->c_region[c] != america) continue;
        int match;
        if (q == SSB_Q4_1)
            match = db->s_region[s] == america && (mfgr == mfgr1 || mfgr == mfgr2);
        else if (q == SSB_Q4_2)
            match = db->s_region[s] == america && (year == 1997 || year == 1998) &&
                    (mfgr == mfgr1 || mfgr == mfgr2);
        else
            match = db->s_nation[s] == us && (year == 1997 || year == 1998) &&
                    db->p_category[p] == category;
        if (!match) continue;
        int64_t profit = (int64_t)db->lo_revenue[i] - db->lo_supplycost[i];
        int rc = q == SSB_Q4_1   ? groups_add(g, year, db->c_nation[c], 0, profit)
                 : q == SSB_Q4_2 ? groups_add(g, year, db->s_nation[s], db->p_category[p], profit)
                           : groups_add(g, year, db->s_city[s], db->p_brand1[p], profit);
        if (rc != 0) return -1;
    }
    return 0;
}

int ssb_reference_run(const ssb_db *db, int q, ssb_result *out)
{
    memset(out, 0, sizeof *out);
    if (q < 0 || q >= SSB_NQUERIES) return -1;
    dates dt;
    if (dates_open(&dt, db) != 0) return -1;
    int rc;
    if (q <= SSB_Q1_3) {
        rc = run_q1(db, &dt, q, out);
    } else {
        groups g;
        rc = groups_init(&g, 1024);
        if (rc == 0) {
            const shape *sh = shape_of(q);
            rc = q <= SSB_Q2_3   ? run_q2(db, &dt, q, &g)
                 : q <= SSB_Q3_4 ? run_q3(db, &dt, q, &g)
                                 : run_q4(db, &dt, q, &g);
            if (rc == 0) rc = emit(&g, sh, out);
            groups_free(&g);
        }
    }
    free(dt.row);
    if (rc != 0) ssb_result_free(out);
    return rc;
}
