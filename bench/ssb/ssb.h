/* ssb.h - the Star Schema Benchmark's data (O'Neil et al., rev. 3) stored the
 * way Crystal (Shanbhag et al., SIGMOD 2020) stores it: every column one int32
 * array, strings dictionary-encoded so that the queries' string ranges are
 * integer ranges, dates as yyyymmdd. A deterministic generator, a disk cache,
 * and a plain scalar C reference of the 13 queries with their SQL text.
 *
 * Plain C11; nothing here depends on coproc. bench/ssb/README.md lists the
 * encodings and where the data deviates from dbgen. */
#ifndef SSB_H
#define SSB_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- the data ---------------------------------------------------------- */

typedef enum ssb_table {
    SSB_LINEORDER,
    SSB_DATE,
    SSB_CUSTOMER,
    SSB_SUPPLIER,
    SSB_PART,
    SSB_NTABLES
} ssb_table;

/* The date table is fixed: 1992-01-01 .. 1998-12-30, as dbgen makes it. */
#define SSB_DATE_ROWS 2556

/*
 * One database. Every column is one contiguous malloc'd int32_t array of its
 * table's row count; keys are dense (row i holds key i + 1). Owned by the
 * struct: ssb_free releases them. Codes (ssb_*_code below):
 *   region 0..4, nation 0..24 (TPC-H's nation keys), city nation*10 + 0..9,
 *   mfgr 1..5, category 11..55, brand1 1101..5540 (the number after '#'),
 *   yearmonth yyyymm ("Dec1997" -> 199712), shipmode 0..6, prices in cents.
 */
typedef struct ssb_db {
    double sf;
    size_t rows[SSB_NTABLES]; /* indexed by ssb_table */

    /* lineorder: 1..7 lines per order */
    int32_t *lo_orderkey, *lo_linenumber, *lo_custkey, *lo_partkey, *lo_suppkey;
    int32_t *lo_orderdate, *lo_quantity, *lo_extendedprice, *lo_discount, *lo_revenue;
    int32_t *lo_supplycost, *lo_tax, *lo_commitdate, *lo_shipmode;
    /* date: d_datekey yyyymmdd */
    int32_t *d_datekey, *d_year, *d_yearmonthnum, *d_yearmonth, *d_monthnuminyear;
    int32_t *d_daynuminmonth, *d_daynuminyear, *d_weeknuminyear;
    /* customer */
    int32_t *c_custkey, *c_city, *c_nation, *c_region;
    /* supplier */
    int32_t *s_suppkey, *s_city, *s_nation, *s_region;
    /* part */
    int32_t *p_partkey, *p_mfgr, *p_category, *p_brand1, *p_retailprice;
} ssb_db;

/* Row counts for a scale factor: orders 1,500,000 sf (lineorder has 1..7 lines
 * each, about 4 on average), customers 30,000 sf, suppliers 2,000 sf, parts
 * 200,000 (1 + floor(log2 sf)) for sf >= 1 and 200,000 sf below (at least 400),
 * rounded to the nearest row and at least 1. */
typedef struct ssb_sizes {
    size_t orders, customers, suppliers, parts, dates;
} ssb_sizes;

/* Valid scale factors: 0 < sf <= SSB_MAX_SF (order keys fit int32). */
#define SSB_MAX_SF 1000.0

/* Fills *out; returns 0, or -1 for an invalid sf. */
int ssb_sizes_for(double sf, ssb_sizes *out);

/* Generate the database for sf into *out (overwritten; on failure it is
 * zeroed). Deterministic: the same sf gives byte-identical columns. Returns 0,
 * or -1 on an invalid sf or when out of memory. */
int ssb_generate(double sf, ssb_db *out);

/* One part of nparts of the database for sf, for a process of a distributed
 * run: every dimension table whole, and of lineorder the lines of orders
 * [part * orders / nparts, (part + 1) * orders / nparts) - exactly the rows
 * ssb_generate gives there, so the parts in order make its lineorder.
 * Returns 0, or -1 on an invalid sf or part or out of memory (*out zeroed). */
int ssb_generate_slice(double sf, int part, int nparts, ssb_db *out);

/* Release the columns of a database filled by this library and zero it.
 * A zeroed struct is fine. */
void ssb_free(ssb_db *db);

/*
 * The database for sf from the cache file dir/ssb-sf<sf>.bin, else generated
 * and written there (dir is created if missing, its parent is not; writing
 * is best effort and atomic: a temporary file renamed into place). A file
 * that is truncated, corrupt (checksums), of another version or scale is
 * ignored and replaced.
 * Returns 1 loaded from the cache, 0 generated, -1 on an invalid sf or out of
 * memory (then *out is zeroed).
 */
int ssb_load_or_generate(double sf, const char *dir, ssb_db *out);

/* The cache file's path for sf in dir, written into buf; returns buf, or NULL
 * when it does not fit. */
char *ssb_cache_path(double sf, const char *dir, char *buf, size_t len);

/* The cache file format's version; bumped whenever the generator's output changes. */
#define SSB_CACHE_VERSION 1

/* A checksum of every column of db (names, row counts and values). */
uint64_t ssb_checksum(const ssb_db *db);

/* ---- columns by name --------------------------------------------------- */

typedef struct ssb_column {
    ssb_table table;
    const char *name; /* "lo_orderdate" */
    int32_t *data;    /* owned by the db */
    size_t rows;
} ssb_column;

/* The number of columns, and column i (0 <= i < ssb_ncolumns()) of db in a
 * fixed order, table by table. Returns 0, -1 for a bad i. */
int ssb_ncolumns(void);
int ssb_column_at(const ssb_db *db, int i, ssb_column *out);
/* Column `name` of db; NULL when there is no such column. */
int32_t *ssb_column_find(const ssb_db *db, const char *name, size_t *rows);
/* "lineorder", "date", "customer", "supplier", "part". */
const char *ssb_table_name(ssb_table t);

/* ---- encodings: string constants to codes and back ----------------------
 * Each *_code returns the code, or -1 for a string that is not one. */

int32_t ssb_region_code(const char *name);   /* "ASIA" -> 2 */
int32_t ssb_nation_code(const char *name);   /* "UNITED STATES" -> 24 */
int32_t ssb_city_code(const char *name);     /* "UNITED KI1" -> 231 */
int32_t ssb_mfgr_code(const char *name);     /* "MFGR#1" -> 1 */
int32_t ssb_category_code(const char *name); /* "MFGR#12" -> 12 */
int32_t ssb_brand_code(const char *name);    /* "MFGR#2221" -> 2221 */
int32_t ssb_yearmonth_code(const char *ym);  /* "Dec1997" -> 199712 */
int32_t ssb_shipmode_code(const char *name); /* "AIR" -> 0 */

/* Names of codes: static strings, NULL for a bad code. */
const char *ssb_region_name(int32_t code);
const char *ssb_nation_name(int32_t code);
const char *ssb_shipmode_name(int32_t code);
/* The city name of a code ("UNITED KI1", 10 characters) into buf (at least 11
 * bytes); returns buf, or NULL for a bad code. */
char *ssb_city_name(int32_t code, char *buf);

/* ---- the 13 queries ---------------------------------------------------- */

/* The queries in the specification's order; ssb_query_name gives "q1.1". */
enum {
    SSB_Q1_1, SSB_Q1_2, SSB_Q1_3,
    SSB_Q2_1, SSB_Q2_2, SSB_Q2_3,
    SSB_Q3_1, SSB_Q3_2, SSB_Q3_3, SSB_Q3_4,
    SSB_Q4_1, SSB_Q4_2, SSB_Q4_3,
    SSB_NQUERIES
};
#define SSB_RESULT_MAXCOLS 8

/* A query's result: nrows rows of ncols int64 values, row-major, in the
 * query's ORDER BY order with remaining ties broken by every group column
 * ascending (a total order). Group columns hold their codes. names are static
 * strings. values is malloc'd (NULL when nrows is 0); ssb_result_free. */
typedef struct ssb_result {
    int ncols;
    const char *names[SSB_RESULT_MAXCOLS];
    size_t nrows;
    int64_t *values;
} ssb_result;

/* "q1.1" .. "q4.3" for q = 0..12; NULL otherwise. */
const char *ssb_query_name(int q);
/* Query q (0..12) from its name ("q2.3" or "2.3"); -1 when unknown. */
int ssb_query_index(const char *name);

/* The SQL of query q (0..12) against the encoded schema: the tables and column
 * names above, string constants replaced by their codes, the ORDER BY extended
 * with the tie-breaks. Static; NULL for a bad q. Q1.x's sum is NULL in SQL when
 * no row matches, where the reference says 0. */
const char *ssb_query_sql(int q);

/* Run query q (0..12) over db with plain loops and direct lookups into the
 * dimension arrays (indexed by key - 1). Fills *out; returns 0, -1 for a bad
 * q or out of memory (then *out is empty). Q1.x always return one row. */
int ssb_reference_run(const ssb_db *db, int q, ssb_result *out);
/* Query q's ORDER BY over its result columns, with the tie-breaks, as the
 * reference sorts: 1-based column numbers, negative descending, 0 ending it. */
const int *ssb_result_order(int q);
/* Sort r's rows by such an order. */
void ssb_result_sort(ssb_result *r, const int *order);

/* Free out's values and empty it. */
void ssb_result_free(ssb_result *r);

/* 1 when a and b have the same columns (names) and rows in the same order;
 * else 0, and why (when not NULL) says where, with the first differing rows. */
int ssb_result_equal(const ssb_result *a, const ssb_result *b, char *why, size_t whylen);

#ifdef __cplusplus
}
#endif

#endif
