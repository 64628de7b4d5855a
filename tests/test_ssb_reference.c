/* test_ssb_reference.c - the SSB data and reference queries (bench/ssb): the
 * generator is deterministic and keeps to the specification's ranges and
 * cardinalities, the disk cache survives corruption, and each of the 13
 * reference queries gives what SQLite gives for its SQL over the same data.
 * Needs no device: everything here is plain C. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* timegm */
#endif
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <sqlite3.h>

#include "ssb.h"

/* The checksum of SF 0.01: a change to the generator's output must bump
 * SSB_CACHE_VERSION (old cache files would otherwise still load) and this. */
#define SF001_CHECKSUM 0x3591bd1ef179c031ull

/* ---- encoders ------------------------------------------------------------ */

static void test_encoders(void **state)
{
    (void)state;
    /* The codes the SQL text uses. */
    assert_int_equal(ssb_region_code("AMERICA"), 1);
    assert_int_equal(ssb_region_code("ASIA"), 2);
    assert_int_equal(ssb_region_code("EUROPE"), 3);
    assert_int_equal(ssb_nation_code("UNITED STATES"), 24);
    assert_int_equal(ssb_city_code("UNITED KI1"), 231);
    assert_int_equal(ssb_city_code("UNITED KI5"), 235);
    assert_int_equal(ssb_mfgr_code("MFGR#1"), 1);
    assert_int_equal(ssb_mfgr_code("MFGR#2"), 2);
    assert_int_equal(ssb_category_code("MFGR#12"), 12);
    assert_int_equal(ssb_category_code("MFGR#14"), 14);
    assert_int_equal(ssb_brand_code("MFGR#2221"), 2221);
    assert_int_equal(ssb_brand_code("MFGR#2228"), 2228);
    assert_int_equal(ssb_brand_code("MFGR#2239"), 2239);
    assert_int_equal(ssb_yearmonth_code("Dec1997"), 199712);
    /* dbgen's unpadded brand and the padded one are the same brand. */
    assert_int_equal(ssb_brand_code("MFGR#121"), 1201);
    assert_int_equal(ssb_brand_code("MFGR#1201"), 1201);
    assert_int_equal(ssb_brand_code("MFGR#1240"), 1240);
    /* Strings that are not codes. */
    const char *bad_brand[] = {"MFGR#1241", "MFGR#1200", "MFGR#6101", "MFGR#1601", "MFGR#12",
                               "MFGR#12011", "mfgr#1201", "", "MFGR#12a1"};
    for (size_t i = 0; i < sizeof bad_brand / sizeof *bad_brand; i++)
        assert_int_equal(ssb_brand_code(bad_brand[i]), -1);
    assert_int_equal(ssb_category_code("MFGR#16"), -1);
    assert_int_equal(ssb_category_code("MFGR#61"), -1);
    assert_int_equal(ssb_mfgr_code("MFGR#6"), -1);
    assert_int_equal(ssb_mfgr_code("MFGR#0"), -1);
    assert_int_equal(ssb_region_code("ATLANTIS"), -1);
    assert_int_equal(ssb_region_code(NULL), -1);
    assert_int_equal(ssb_nation_code("UNITED"), -1);
    assert_int_equal(ssb_city_code("UNITED KI"), -1);
    assert_int_equal(ssb_city_code("UNITED KIX"), -1);
    assert_int_equal(ssb_yearmonth_code("Dec1999"), -1);
    assert_int_equal(ssb_yearmonth_code("Xyz1997"), -1);
    assert_int_equal(ssb_yearmonth_code("Dec97"), -1);
    assert_int_equal(ssb_shipmode_code("REG AIR"), 4);
    assert_int_equal(ssb_shipmode_code("BOAT"), -1);
    /* Every city round-trips; short nations are padded to 9 characters. */
    char buf[11];
    assert_string_equal(ssb_city_name(170, buf), "PERU     0");
    assert_string_equal(ssb_city_name(239, buf), "UNITED KI9");
    assert_null(ssb_city_name(250, buf));
    for (int32_t c = 0; c < 250; c++) assert_int_equal(ssb_city_code(ssb_city_name(c, buf)), c);
    for (int32_t n = 0; n < 25; n++) assert_int_equal(ssb_nation_code(ssb_nation_name(n)), n);
    for (int32_t r = 0; r < 5; r++) assert_int_equal(ssb_region_code(ssb_region_name(r)), r);
    for (int32_t m = 0; m < 7; m++) assert_int_equal(ssb_shipmode_code(ssb_shipmode_name(m)), m);
    assert_null(ssb_nation_name(25));
    for (int q = 0; q < SSB_NQUERIES; q++) {
        assert_int_equal(ssb_query_index(ssb_query_name(q)), q);
        assert_non_null(ssb_query_sql(q));
    }
    assert_int_equal(ssb_query_index("2.3"), SSB_Q2_3);
    assert_int_equal(ssb_query_index("q5.1"), -1);
    assert_null(ssb_query_name(SSB_NQUERIES));
}

/* ---- sizes ----------------------------------------------------------------- */

static void test_sizes(void **state)
{
    (void)state;
    ssb_sizes s;
    assert_int_equal(ssb_sizes_for(0.01, &s), 0);
    assert_int_equal(s.orders, 15000);
    assert_int_equal(s.customers, 300);
    assert_int_equal(s.suppliers, 20);
    assert_int_equal(s.parts, 2000);
    assert_int_equal(s.dates, 2556);
    assert_int_equal(ssb_sizes_for(0.001, &s), 0);
    assert_int_equal(s.parts, 400); /* the floor */
    assert_int_equal(s.suppliers, 2);
    assert_int_equal(ssb_sizes_for(0.5, &s), 0);
    assert_int_equal(s.parts, 100000);
    /* 200,000 (1 + floor(log2 sf)) from sf 1 on. */
    const struct { double sf; size_t parts; } logp[] = {
        {1, 200000}, {1.9, 200000}, {2, 400000}, {4, 600000}, {10, 800000}, {100, 1400000}};
    for (size_t i = 0; i < sizeof logp / sizeof *logp; i++) {
        assert_int_equal(ssb_sizes_for(logp[i].sf, &s), 0);
        assert_int_equal(s.parts, logp[i].parts);
    }
    assert_int_equal(ssb_sizes_for(1, &s), 0);
    assert_int_equal(s.orders, 1500000);
    assert_int_equal(s.customers, 30000);
    assert_int_equal(s.suppliers, 2000);
    assert_int_equal(ssb_sizes_for(10, &s), 0);
    assert_int_equal(s.orders, 15000000);
    double bad[] = {0, -1, 1e9, SSB_MAX_SF * 1.01, 0.0 / 0.0};
    ssb_db db;
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        assert_int_equal(ssb_sizes_for(bad[i], &s), -1);
        assert_int_equal(ssb_generate(bad[i], &db), -1);
        assert_int_equal(ssb_load_or_generate(bad[i], "/tmp", &db), -1);
    }
}

/* ---- determinism ------------------------------------------------------------ */

static void test_deterministic(void **state)
{
    (void)state;
    ssb_db a, b;
    assert_int_equal(ssb_generate(0.01, &a), 0);
    assert_int_equal(ssb_generate(0.01, &b), 0);
    assert_memory_equal(a.rows, b.rows, sizeof a.rows);
    for (int i = 0; i < ssb_ncolumns(); i++) {
        ssb_column ca, cb;
        assert_int_equal(ssb_column_at(&a, i, &ca), 0);
        assert_int_equal(ssb_column_at(&b, i, &cb), 0);
        assert_true(ca.data != cb.data);
        assert_memory_equal(ca.data, cb.data, ca.rows * sizeof(int32_t));
    }
    uint64_t sum = ssb_checksum(&a);
    assert_true(sum == ssb_checksum(&b));
    if (sum != SF001_CHECKSUM) fprintf(stderr, "SF 0.01 checksum %016llx\n", (unsigned long long)sum);
    assert_true(sum == SF001_CHECKSUM);
    /* One changed value changes the checksum. */
    b.lo_revenue[a.rows[SSB_LINEORDER] / 2] ^= 1;
    assert_true(ssb_checksum(&b) != sum);
    /* A larger scale's dimension rows extend a smaller one's. */
    ssb_db c;
    assert_int_equal(ssb_generate(0.02, &c), 0);
    assert_memory_equal(a.c_city, c.c_city, a.rows[SSB_CUSTOMER] * sizeof(int32_t));
    assert_memory_equal(a.s_nation, c.s_nation, a.rows[SSB_SUPPLIER] * sizeof(int32_t));
    assert_memory_equal(a.p_brand1, c.p_brand1, a.rows[SSB_PART] * sizeof(int32_t));
    assert_int_equal(ssb_column_find(&a, "nope", NULL) == NULL, 1);
    size_t n;
    assert_ptr_equal(ssb_column_find(&a, "lo_revenue", &n), a.lo_revenue);
    assert_int_equal(n, a.rows[SSB_LINEORDER]);
    assert_int_equal(ssb_column_at(&a, ssb_ncolumns(), &(ssb_column){0}), -1);
    ssb_free(&a);
    ssb_free(&b);
    ssb_free(&c);
    ssb_free(&c); /* a zeroed db is fine */
}

/* ---- ranges and cardinalities -------------------------------------------------- */

/* yyyymmdd of the day after key, by the C library's calendar. */
static int32_t next_day(int32_t key)
{
    struct tm tm = {.tm_year = key / 10000 - 1900, .tm_mon = key / 100 % 100 - 1,
                    .tm_mday = key % 100, .tm_hour = 12};
    time_t t = timegm(&tm) + 86400;
    struct tm n;
    gmtime_r(&t, &n);
    return (n.tm_year + 1900) * 10000 + (n.tm_mon + 1) * 100 + n.tm_mday;
}

/* TPC-H's nation -> region, by name, written out apart from the library's table. */
static const char *const region_of[][2] = {
    {"ALGERIA", "AFRICA"},      {"ARGENTINA", "AMERICA"},     {"BRAZIL", "AMERICA"},
    {"CANADA", "AMERICA"},      {"EGYPT", "MIDDLE EAST"},     {"ETHIOPIA", "AFRICA"},
    {"FRANCE", "EUROPE"},       {"GERMANY", "EUROPE"},        {"INDIA", "ASIA"},
    {"INDONESIA", "ASIA"},      {"IRAN", "MIDDLE EAST"},      {"IRAQ", "MIDDLE EAST"},
    {"JAPAN", "ASIA"},          {"JORDAN", "MIDDLE EAST"},    {"KENYA", "AFRICA"},
    {"MOROCCO", "AFRICA"},      {"MOZAMBIQUE", "AFRICA"},     {"PERU", "AMERICA"},
    {"CHINA", "ASIA"},          {"ROMANIA", "EUROPE"},        {"SAUDI ARABIA", "MIDDLE EAST"},
    {"VIETNAM", "ASIA"},        {"RUSSIA", "EUROPE"},         {"UNITED KINGDOM", "EUROPE"},
    {"UNITED STATES", "AMERICA"}};

static void check_places(size_t n, const int32_t *key, const int32_t *city, const int32_t *nation,
                         const int32_t *region)
{
    int seen[25] = {0};
    for (size_t i = 0; i < n; i++) {
        assert_int_equal(key[i], (int32_t)i + 1);
        assert_in_range(nation[i], 0, 24);
        assert_int_equal(city[i] / 10, nation[i]);
        const char *name = ssb_nation_name(nation[i]);
        int found = 0;
        for (int k = 0; k < 25; k++) {
            if (strcmp(region_of[k][0], name) != 0) continue;
            assert_int_equal(region[i], ssb_region_code(region_of[k][1]));
            found = 1;
        }
        assert_true(found);
        seen[nation[i]]++;
    }
    if (n >= 300)
        for (int k = 0; k < 25; k++) assert_true(seen[k] > 0);
}

/* The slices of a distributed run (ssb_generate_slice) are the whole data's rows: every
 * dimension whole, lineorder's parts in order its rows, for 1 to 5 parts. */
static void test_slices(void **state)
{
    (void)state;
    ssb_db whole, part;
    assert_int_equal(ssb_generate(0.01, &whole), 0);
    for (int n = 1; n <= 5; n++) {
        size_t row = 0;
        for (int p = 0; p < n; p++) {
            assert_int_equal(ssb_generate_slice(0.01, p, n, &part), 0);
            for (int i = 0; i < ssb_ncolumns(); i++) {
                ssb_column a, b;
                assert_int_equal(ssb_column_at(&whole, i, &a), 0);
                assert_int_equal(ssb_column_at(&part, i, &b), 0);
                size_t first = a.table == SSB_LINEORDER ? row : 0;
                if (a.table != SSB_LINEORDER)
                    assert_int_equal(b.rows, a.rows);
                assert_true(first + b.rows <= a.rows);
                assert_memory_equal(b.data, a.data + first, b.rows * sizeof *b.data);
            }
            row += part.rows[SSB_LINEORDER];
            ssb_free(&part);
        }
        assert_int_equal(row, whole.rows[SSB_LINEORDER]);
    }
    assert_int_equal(ssb_generate_slice(0.01, 2, 2, &part), -1);
    assert_int_equal(ssb_generate_slice(0.01, 0, 0, &part), -1);
    ssb_free(&whole);
}

static void test_ranges(void **state)
{
    (void)state;
    ssb_db db;
    ssb_sizes sz;
    assert_int_equal(ssb_generate(0.01, &db), 0);
    assert_int_equal(ssb_sizes_for(0.01, &sz), 0);
    assert_int_equal(db.rows[SSB_DATE], SSB_DATE_ROWS);
    assert_int_equal(db.rows[SSB_CUSTOMER], sz.customers);
    assert_int_equal(db.rows[SSB_SUPPLIER], sz.suppliers);
    assert_int_equal(db.rows[SSB_PART], sz.parts);
    size_t nlo = db.rows[SSB_LINEORDER];
    assert_true(nlo >= sz.orders && nlo <= 7 * sz.orders);

    /* date: consecutive days 1992-01-01 .. 1998-12-30 (dbgen's 2556 rows). */
    static int32_t date_row[19990000 - 19920000];
    memset(date_row, 0, sizeof date_row);
    for (size_t i = 0; i < SSB_DATE_ROWS; i++) {
        int32_t k = db.d_datekey[i];
        assert_int_equal(k, i ? next_day(db.d_datekey[i - 1]) : 19920101);
        date_row[k - 19920000] = (int32_t)i + 1;
        assert_int_equal(db.d_year[i], k / 10000);
        assert_int_equal(db.d_yearmonthnum[i], k / 100);
        assert_int_equal(db.d_yearmonth[i], k / 100);
        assert_int_equal(db.d_monthnuminyear[i], k / 100 % 100);
        assert_int_equal(db.d_daynuminmonth[i], k % 100);
        assert_int_equal(db.d_daynuminyear[i], k % 10000 == 101 ? 1 : db.d_daynuminyear[i - 1] + 1);
        assert_int_equal(db.d_weeknuminyear[i], db.d_daynuminyear[i] / 7 + 1);
        assert_in_range(db.d_weeknuminyear[i], 1, 53);
    }
    assert_int_equal(db.d_datekey[SSB_DATE_ROWS - 1], 19981230);

    check_places(db.rows[SSB_CUSTOMER], db.c_custkey, db.c_city, db.c_nation, db.c_region);
    check_places(db.rows[SSB_SUPPLIER], db.s_suppkey, db.s_city, db.s_nation, db.s_region);

    /* part: hierarchy mfgr > category > brand, dbgen's price formula. */
    int cats[56] = {0};
    for (size_t i = 0; i < db.rows[SSB_PART]; i++) {
        int32_t k = (int32_t)i + 1;
        assert_int_equal(db.p_partkey[i], k);
        assert_in_range(db.p_mfgr[i], 1, 5);
        assert_int_equal(db.p_category[i] / 10, db.p_mfgr[i]);
        assert_in_range(db.p_category[i] % 10, 1, 5);
        assert_int_equal(db.p_brand1[i] / 100, db.p_category[i]);
        assert_in_range(db.p_brand1[i] % 100, 1, 40);
        assert_int_equal(db.p_retailprice[i], 90000 + (k / 10) % 20001 + (k % 1000) * 100);
        cats[db.p_category[i]]++;
    }
    for (int c = 11; c <= 55; c++) assert_true(cats[c] > 0 || c % 10 < 1 || c % 10 > 5);

    /* lineorder */
    int qty_seen[51] = {0}, disc_seen[11] = {0}, tax_seen[9] = {0}, mode_seen[7] = {0};
    size_t orders = 0;
    for (size_t i = 0; i < nlo; i++) {
        int first = db.lo_linenumber[i] == 1;
        if (first) {
            orders++;
            assert_int_equal(db.lo_orderkey[i], (int32_t)orders);
        } else {
            assert_true(i > 0);
            assert_int_equal(db.lo_orderkey[i], db.lo_orderkey[i - 1]);
            assert_int_equal(db.lo_linenumber[i], db.lo_linenumber[i - 1] + 1);
            assert_int_equal(db.lo_custkey[i], db.lo_custkey[i - 1]);
            assert_int_equal(db.lo_orderdate[i], db.lo_orderdate[i - 1]);
        }
        assert_in_range(db.lo_linenumber[i], 1, 7);
        assert_in_range(db.lo_custkey[i], 1, db.rows[SSB_CUSTOMER]);
        assert_true(db.lo_custkey[i] % 3 != 0); /* dbgen's CUST_MORTALITY */
        assert_in_range(db.lo_partkey[i], 1, db.rows[SSB_PART]);
        assert_in_range(db.lo_suppkey[i], 1, db.rows[SSB_SUPPLIER]);
        assert_in_range(db.lo_orderdate[i], 19920101, 19980802);
        int32_t od = date_row[db.lo_orderdate[i] - 19920000];
        int32_t cd = date_row[db.lo_commitdate[i] - 19920000];
        assert_true(od > 0 && cd > 0);
        assert_in_range(cd - od, 30, 90);
        int32_t q = db.lo_quantity[i], d = db.lo_discount[i];
        assert_in_range(q, 1, 50);
        assert_in_range(d, 0, 10);
        assert_in_range(db.lo_tax[i], 0, 8);
        assert_in_range(db.lo_shipmode[i], 0, 6);
        int32_t price = db.p_retailprice[db.lo_partkey[i] - 1];
        assert_int_equal(db.lo_extendedprice[i], q * price);
        assert_int_equal(db.lo_revenue[i], (int64_t)q * price * (100 - d) / 100);
        assert_int_equal(db.lo_supplycost[i], 6 * price / 10);
        qty_seen[q]++;
        disc_seen[d]++;
        tax_seen[db.lo_tax[i]]++;
        mode_seen[db.lo_shipmode[i]]++;
    }
    assert_int_equal(orders, sz.orders);
    double per_order = (double)nlo / (double)orders; /* 1..7 uniform: 4 */
    assert_true(per_order > 3.9 && per_order < 4.1);
    for (int v = 1; v <= 50; v++) assert_true(qty_seen[v] > 0);
    for (int v = 0; v <= 10; v++) assert_true(disc_seen[v] > 0);
    for (int v = 0; v <= 8; v++) assert_true(tax_seen[v] > 0);
    for (int v = 0; v < 7; v++) assert_true(mode_seen[v] > 0);
    ssb_free(&db);
}

/* ---- the disk cache ------------------------------------------------------------ */

static void flip_byte(const char *path, long at)
{
    FILE *f = fopen(path, "r+b");
    assert_non_null(f);
    assert_int_equal(fseek(f, at, SEEK_SET), 0);
    int c = fgetc(f);
    assert_int_not_equal(c, EOF);
    assert_int_equal(fseek(f, at, SEEK_SET), 0);
    fputc(c ^ 0x10, f);
    assert_int_equal(fclose(f), 0);
}

static long file_size(const char *path)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fclose(f);
    return n;
}

/* Load through the cache and expect `how` (1 loaded, 0 generated) and the data
 * of sf exactly. */
static void expect_load(double sf, const char *dir, int how, uint64_t sum)
{
    ssb_db db;
    assert_int_equal(ssb_load_or_generate(sf, dir, &db), how);
    assert_true(ssb_checksum(&db) == sum);
    assert_true(db.sf == sf);
    ssb_free(&db);
}

static void test_cache(void **state)
{
    (void)state;
    char dir[] = "/tmp/ssb-cache-test-XXXXXX", sub[64], path[256], path2[256], cmd[512];
    assert_non_null(mkdtemp(dir));
    snprintf(sub, sizeof sub, "%s/cache", dir); /* created by the library */
    assert_non_null(ssb_cache_path(0.01, sub, path, sizeof path));
    assert_non_null(ssb_cache_path(0.02, sub, path2, sizeof path2));
    assert_string_not_equal(path, path2);
    assert_null(ssb_cache_path(0.01, sub, path, 8));
    assert_non_null(ssb_cache_path(0.01, sub, path, sizeof path));
    const uint64_t sum = SF001_CHECKSUM;

    expect_load(0.01, sub, 0, sum);
    assert_int_equal(access(path, R_OK), 0);
    expect_load(0.01, sub, 1, sum);
    long size = file_size(path);

    /* A flipped bit anywhere: in the data (first, middle, last byte), in the
     * header's sf, row counts or checksums. Each time the file is rewritten. */
    long spots[] = {80, size / 2, size - 1, 0, 9, 16, 24, 40, 64, 72};
    for (size_t i = 0; i < sizeof spots / sizeof *spots; i++) {
        flip_byte(path, spots[i]);
        expect_load(0.01, sub, 0, sum);
        expect_load(0.01, sub, 1, sum);
    }
    /* Truncated (mid-data, mid-header, empty) and extended. */
    long cuts[] = {size - 4, size / 3, 40, 0};
    for (size_t i = 0; i < sizeof cuts / sizeof *cuts; i++) {
        assert_int_equal(truncate(path, cuts[i]), 0);
        expect_load(0.01, sub, 0, sum);
        expect_load(0.01, sub, 1, sum);
    }
    assert_int_equal(truncate(path, size + 4), 0);
    expect_load(0.01, sub, 0, sum);
    /* Another scale's file under this scale's name. */
    ssb_db other;
    assert_int_equal(ssb_generate(0.02, &other), 0);
    uint64_t sum2 = ssb_checksum(&other);
    ssb_free(&other);
    assert_int_equal(rename(path, path2), 0);
    expect_load(0.02, sub, 0, sum2);
    expect_load(0.02, sub, 1, sum2);
    /* A directory that cannot be made: generated, nothing written. */
    snprintf(path, sizeof path, "%s/no/such/dir", dir);
    expect_load(0.01, path, 0, sum);
    expect_load(0.01, path, 0, sum);

    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
}

/* ---- the queries against SQLite ---------------------------------------------- */

static void exec_sql(sqlite3 *s, const char *sql)
{
    char *err = NULL;
    if (sqlite3_exec(s, sql, NULL, NULL, &err) != SQLITE_OK) {
        fprintf(stderr, "sqlite: %s\n  in: %s\n", err ? err : "?", sql);
        sqlite3_free(err);
        fail();
    }
}

/* Every table of db in an in-memory database: one INSERT statement per
 * table, in one transaction; each dimension's key (its first column) is the
 * INTEGER PRIMARY KEY, so the joins are lookups. */
static sqlite3 *load_sqlite(const ssb_db *db)
{
    sqlite3 *s;
    assert_int_equal(sqlite3_open(":memory:", &s), SQLITE_OK);
    exec_sql(s, "pragma journal_mode = off; pragma synchronous = off; begin");
    for (int t = 0; t < SSB_NTABLES; t++) {
        ssb_column cols[32];
        int n = 0;
        for (int i = 0; i < ssb_ncolumns(); i++) {
            ssb_column c;
            assert_int_equal(ssb_column_at(db, i, &c), 0);
            if ((int)c.table == t) cols[n++] = c;
        }
        char create[2048], insert[2048];
        int lc = snprintf(create, sizeof create, "create table %s (", ssb_table_name(t));
        int li = snprintf(insert, sizeof insert, "insert into %s values (", ssb_table_name(t));
        for (int c = 0; c < n; c++) {
            lc += snprintf(create + lc, sizeof create - (size_t)lc, "%s%s integer%s", c ? ", " : "",
                           cols[c].name, c == 0 && t != SSB_LINEORDER ? " primary key" : "");
            li += snprintf(insert + li, sizeof insert - (size_t)li, "%s?", c ? ", " : "");
        }
        snprintf(create + lc, sizeof create - (size_t)lc, ")");
        snprintf(insert + li, sizeof insert - (size_t)li, ")");
        exec_sql(s, create);
        sqlite3_stmt *st;
        assert_int_equal(sqlite3_prepare_v2(s, insert, -1, &st, NULL), SQLITE_OK);
        for (size_t r = 0; r < cols[0].rows; r++) {
            for (int c = 0; c < n; c++) sqlite3_bind_int(st, c + 1, cols[c].data[r]);
            assert_int_equal(sqlite3_step(st), SQLITE_DONE);
            sqlite3_reset(st);
        }
        sqlite3_finalize(st);
    }
    exec_sql(s, "commit");
    return s;
}

/* Query q's SQL through SQLite as an ssb_result; names point into names_buf. */
static void run_sqlite(sqlite3 *s, int q, ssb_result *out, char names_buf[][64])
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(s, ssb_query_sql(q), -1, &st, NULL) != SQLITE_OK) {
        fprintf(stderr, "%s: %s\n", ssb_query_name(q), sqlite3_errmsg(s));
        fail();
    }
    memset(out, 0, sizeof *out);
    out->ncols = sqlite3_column_count(st);
    assert_in_range(out->ncols, 1, SSB_RESULT_MAXCOLS);
    for (int c = 0; c < out->ncols; c++) {
        snprintf(names_buf[c], 64, "%s", sqlite3_column_name(st, c));
        out->names[c] = names_buf[c];
    }
    size_t cap = 0;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        if (out->nrows == cap) {
            cap = cap ? 2 * cap : 64;
            out->values = realloc(out->values, cap * (size_t)out->ncols * sizeof(int64_t));
            assert_non_null(out->values);
        }
        for (int c = 0; c < out->ncols; c++) {
            int64_t *v = &out->values[out->nrows * (size_t)out->ncols + c];
            /* sum() over no rows is NULL in SQL; the reference says 0 (Q1.x only). */
            if (sqlite3_column_type(st, c) == SQLITE_NULL) {
                assert_true(q <= SSB_Q1_3);
                *v = 0;
            } else {
                assert_int_equal(sqlite3_column_type(st, c), SQLITE_INTEGER);
                *v = sqlite3_column_int64(st, c);
            }
        }
        out->nrows++;
    }
    assert_int_equal(rc, SQLITE_DONE);
    sqlite3_finalize(st);
}

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* Compare the reference with SQLite for the queries in mask (bit q); those in
 * nonempty must return rows. */
static void compare_with_sqlite(double sf, unsigned mask, unsigned nonempty)
{
    ssb_db db;
    double t0 = now();
    assert_int_equal(ssb_generate(sf, &db), 0);
    double t1 = now();
    sqlite3 *s = load_sqlite(&db);
    double t2 = now();
    int failures = 0;
    for (int q = 0; q < SSB_NQUERIES; q++) {
        if (!(mask >> q & 1)) continue;
        ssb_result ref, sql;
        char names[SSB_RESULT_MAXCOLS][64];
        double a = now();
        assert_int_equal(ssb_reference_run(&db, q, &ref), 0);
        double b = now();
        run_sqlite(s, q, &sql, names);
        double c = now();
        char why[1024];
        int same = ssb_result_equal(&ref, &sql, why, sizeof why);
        fprintf(stderr, "SF %g %s: %zu rows, reference %.3f s, sqlite %.3f s%s%s\n", sf,
                ssb_query_name(q), ref.nrows, b - a, c - b, same ? "" : ": DIFFERS: ",
                same ? "" : why);
        if (!same) failures++;
        if ((nonempty >> q & 1) && ref.nrows == 0) {
            fprintf(stderr, "SF %g %s: no rows\n", sf, ssb_query_name(q));
            failures++;
        }
        ssb_result_free(&ref);
        free(sql.values);
    }
    fprintf(stderr, "SF %g: generated in %.3f s, loaded into sqlite in %.3f s\n", sf, t1 - t0,
            t2 - t1);
    sqlite3_close(s);
    ssb_free(&db);
    assert_int_equal(failures, 0);
}

#define BIT(q) (1u << (q))
#define ALL ((1u << SSB_NQUERIES) - 1)
/* Too selective for SF 0.01's 20 suppliers: none in the United States, none
 * in UNITED KI1 or KI5. SF 0.3 has rows for all four. */
#define SPARSE (BIT(SSB_Q3_2) | BIT(SSB_Q3_3) | BIT(SSB_Q3_4) | BIT(SSB_Q4_3))

static void test_queries_sf001(void **state)
{
    (void)state;
    compare_with_sqlite(0.01, ALL, ALL & ~SPARSE);
}

static void test_queries_sparse_sf03(void **state)
{
    (void)state;
    compare_with_sqlite(0.3, SPARSE, SPARSE);
}

/* The comparison can fail, and says where. */
static void test_result_equal(void **state)
{
    (void)state;
    ssb_db db;
    assert_int_equal(ssb_generate(0.01, &db), 0);
    ssb_result a, b;
    assert_int_equal(ssb_reference_run(&db, SSB_Q2_1, &a), 0);
    assert_int_equal(ssb_reference_run(&db, SSB_Q2_1, &b), 0);
    char why[1024];
    assert_true(ssb_result_equal(&a, &b, why, sizeof why));
    assert_true(a.nrows > 3);
    b.values[3 * 3 + 0] += 1; /* row 3's revenue */
    assert_false(ssb_result_equal(&a, &b, why, sizeof why));
    assert_non_null(strstr(why, "row 3"));
    fprintf(stderr, "a differing row reads: %s\n", why);
    b.values[3 * 3 + 0] -= 1;
    b.nrows--;
    assert_false(ssb_result_equal(&a, &b, why, sizeof why));
    b.nrows++;
    b.names[1] = "year";
    assert_false(ssb_result_equal(&a, &b, NULL, 0));
    ssb_result_free(&b);
    assert_null(b.values);
    /* The rows are in ORDER BY order: year, brand for Q2; year, revenue desc for Q3. */
    for (size_t i = 1; i < a.nrows; i++) {
        const int64_t *p = a.values + (i - 1) * 3, *r = a.values + i * 3;
        assert_true(p[1] < r[1] || (p[1] == r[1] && p[2] < r[2]));
    }
    ssb_result_free(&a);
    assert_int_equal(ssb_reference_run(&db, SSB_Q3_1, &a), 0);
    for (size_t i = 1; i < a.nrows; i++) {
        const int64_t *p = a.values + (i - 1) * 4, *r = a.values + i * 4;
        assert_true(p[2] < r[2] || (p[2] == r[2] && p[3] >= r[3]));
    }
    ssb_result_free(&a);
    assert_int_equal(ssb_reference_run(&db, SSB_NQUERIES, &a), -1);
    ssb_free(&db);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_encoders),
        cmocka_unit_test(test_sizes),
        cmocka_unit_test(test_deterministic),
        cmocka_unit_test(test_slices),
        cmocka_unit_test(test_ranges),
        cmocka_unit_test(test_cache),
        cmocka_unit_test(test_result_equal),
        cmocka_unit_test(test_queries_sf001),
        cmocka_unit_test(test_queries_sparse_sf03),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
