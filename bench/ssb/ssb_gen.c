/* ssb_gen.c - the deterministic generator: dbgen's cardinalities, value
 * ranges and uniform distributions (SSB rev. 3, dbgen's build.c), drawn from
 * our own splitmix64 streams, one per table, so the same scale factor always
 * gives the same bytes and a smaller scale's dimension rows are a prefix of a
 * larger one's. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ssb.h"
#include "ssb_internal.h"

typedef struct rng {
    uint64_t s;
} rng;

#define GAMMA 0x9E3779B97F4A7C15ull

static uint64_t rng_next(rng *r)
{
    uint64_t z = (r->s += GAMMA);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* Uniform in [lo, hi], hi - lo < 2^32 (multiply-shift: a bias under 2^-32). */
static int64_t rng_between(rng *r, int64_t lo, int64_t hi)
{
    uint64_t span = (uint64_t)(hi - lo) + 1;
    return lo + (int64_t)(((rng_next(r) >> 32) * span) >> 32);
}

/* One stream per table (and one for the lines per order, which the counting
 * pass replays). */
#define SEED_PART 0x5041525400000001ull
#define SEED_SUPPLIER 0x5355505000000002ull
#define SEED_CUSTOMER 0x4355535400000003ull
#define SEED_LINES 0x4C494E4500000004ull
#define SEED_ORDER 0x4F52444500000005ull
#define SEED_LINEORDER 0x4C4F524400000006ull

/* dbgen: order dates run from STARTDATE to TOTDATE - 152 days later
 * (O_ODATE_MAX leaves room for ship and receipt dates), i.e. 1998-08-02;
 * the commit date is 30..90 days after the order date. */
#define ORDERDATE_LAST 2405
#define COMMIT_MIN 30
#define COMMIT_MAX 90

int ssb_sizes_for(double sf, ssb_sizes *out)
{
    if (!(sf > 0) || !(sf <= SSB_MAX_SF)) return -1;
    double parts = sf >= 1 ? 200000.0 * (1 + floor(log2(sf))) : fmax(400, round(200000 * sf));
    out->orders = (size_t)fmax(1, round(1500000 * sf));
    out->customers = (size_t)fmax(1, round(30000 * sf));
    out->suppliers = (size_t)fmax(1, round(2000 * sf));
    out->parts = (size_t)parts;
    out->dates = SSB_DATE_ROWS;
    return 0;
}

static int is_leap(int y) { return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0; }

/* Day by day from 1992-01-01; the week number as dbgen's mk_date computes it
 * (day of year / 7 + 1, so week 1 has six days). */
static void gen_date(ssb_db *db)
{
    static const int mdays[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    int y = 1992, m = 1, d = 1, yday = 1;
    for (size_t i = 0; i < SSB_DATE_ROWS; i++) {
        db->d_datekey[i] = y * 10000 + m * 100 + d;
        db->d_year[i] = y;
        db->d_yearmonthnum[i] = y * 100 + m;
        db->d_yearmonth[i] = y * 100 + m;
        db->d_monthnuminyear[i] = m;
        db->d_daynuminmonth[i] = d;
        db->d_daynuminyear[i] = yday;
        db->d_weeknuminyear[i] = yday / 7 + 1;
        int len = mdays[m - 1] + (m == 2 && is_leap(y));
        yday++;
        if (++d > len) {
            d = 1;
            if (++m > 12) {
                m = 1;
                y++;
                yday = 1;
            }
        }
    }
}

/* A nation 0..24 and one of its ten cities, as dbgen's mk_cust / mk_supp. */
static void gen_places(rng *r, size_t n, int32_t *key, int32_t *city, int32_t *nation,
                       int32_t *region)
{
    for (size_t i = 0; i < n; i++) {
        int32_t nat = (int32_t)rng_between(r, 0, SSB_NNATIONS - 1);
        key[i] = (int32_t)(i + 1);
        nation[i] = nat;
        city[i] = nat * 10 + (int32_t)rng_between(r, 0, 9);
        region[i] = ssb__nation_region(nat);
    }
}

/* dbgen's rpb_routine: the retail price in cents from the part key. */
static int32_t retail_price(int64_t partkey)
{
    return (int32_t)(90000 + (partkey / 10) % 20001 + (partkey % 1000) * 100);
}

static void gen_part(ssb_db *db)
{
    rng r = {SEED_PART};
    for (size_t i = 0; i < db->rows[SSB_PART]; i++) {
        int32_t mfgr = (int32_t)rng_between(&r, 1, 5);
        int32_t cat = mfgr * 10 + (int32_t)rng_between(&r, 1, 5);
        db->p_partkey[i] = (int32_t)(i + 1);
        db->p_mfgr[i] = mfgr;
        db->p_category[i] = cat;
        db->p_brand1[i] = cat * 100 + (int32_t)rng_between(&r, 1, 40);
        db->p_retailprice[i] = retail_price((int64_t)i + 1);
    }
}

/* dbgen gives orders only to customers whose key is not a multiple of 3
 * (CUST_MORTALITY): the k-th such key, k from 0. */
static int32_t living_customer(int64_t k) { return (int32_t)(k / 2 * 3 + k % 2 + 1); }

/* The lines of orders [first, last). */
static size_t count_lines(size_t first, size_t last)
{
    rng lines = {SEED_LINES + first * GAMMA};
    size_t total = 0;
    for (size_t o = first; o < last; o++)
        total += (size_t)rng_between(&lines, 1, 7);
    return total;
}

/* The lines of orders [first, last) into rows 0.. of db's lineorder; row0: the lines of
 * the orders before first. Each stream is a counter (splitmix64), so it starts where a
 * whole run would be: lines and orders draw 1 and 2 values an order, lines 7 a line. */
static void gen_lineorder(ssb_db *db, size_t first, size_t last, size_t row0)
{
    rng lines = {SEED_LINES + first * GAMMA}, ord = {SEED_ORDER + 2 * first * GAMMA},
        r = {SEED_LINEORDER + 7 * row0 * GAMMA};
    int64_t living = (int64_t)db->rows[SSB_CUSTOMER] - (int64_t)db->rows[SSB_CUSTOMER] / 3;
    int64_t nparts = (int64_t)db->rows[SSB_PART], nsupp = (int64_t)db->rows[SSB_SUPPLIER];
    size_t row = 0;
    for (size_t o = first; o < last; o++) {
        int nlines = (int)rng_between(&lines, 1, 7);
        int64_t day = rng_between(&ord, 0, ORDERDATE_LAST);
        int32_t cust = living_customer(rng_between(&ord, 0, living - 1));
        for (int l = 0; l < nlines; l++, row++) {
            int64_t partkey = rng_between(&r, 1, nparts);
            int32_t qty = (int32_t)rng_between(&r, 1, 50);
            int32_t disc = (int32_t)rng_between(&r, 0, 10);
            int32_t price = db->p_retailprice[partkey - 1];
            db->lo_orderkey[row] = (int32_t)(o + 1);
            db->lo_linenumber[row] = l + 1;
            db->lo_custkey[row] = cust;
            db->lo_partkey[row] = (int32_t)partkey;
            db->lo_suppkey[row] = (int32_t)rng_between(&r, 1, nsupp);
            db->lo_orderdate[row] = db->d_datekey[day];
            db->lo_quantity[row] = qty;
            db->lo_extendedprice[row] = price * qty;
            db->lo_discount[row] = disc;
            db->lo_revenue[row] = (int32_t)((int64_t)price * qty * (100 - disc) / 100);
            db->lo_supplycost[row] = 6 * price / 10;
            db->lo_tax[row] = (int32_t)rng_between(&r, 0, 8);
            db->lo_commitdate[row] = db->d_datekey[day + rng_between(&r, COMMIT_MIN, COMMIT_MAX)];
            db->lo_shipmode[row] = (int32_t)rng_between(&r, 0, SSB_NSHIPMODES - 1);
        }
    }
}

int ssb_generate(double sf, ssb_db *out)
{
    return ssb_generate_slice(sf, 0, 1, out);
}

int ssb_generate_slice(double sf, int part, int nparts, ssb_db *out)
{
    memset(out, 0, sizeof *out);
    ssb_sizes sz;
    if (ssb_sizes_for(sf, &sz) != 0 || nparts < 1 || part < 0 || part >= nparts)
        return -1;
    size_t first = (size_t)((uint64_t)sz.orders * (uint64_t)part / (uint64_t)nparts);
    size_t last = (size_t)((uint64_t)sz.orders * (uint64_t)(part + 1) / (uint64_t)nparts);
    size_t row0 = count_lines(0, first);
    out->sf = sf;
    out->rows[SSB_LINEORDER] = count_lines(first, last);
    out->rows[SSB_DATE] = sz.dates;
    out->rows[SSB_CUSTOMER] = sz.customers;
    out->rows[SSB_SUPPLIER] = sz.suppliers;
    out->rows[SSB_PART] = sz.parts;
    if (ssb__alloc(out) != 0) return -1;

    gen_date(out);
    rng supp = {SEED_SUPPLIER}, cust = {SEED_CUSTOMER};
    gen_places(&supp, sz.suppliers, out->s_suppkey, out->s_city, out->s_nation, out->s_region);
    gen_places(&cust, sz.customers, out->c_custkey, out->c_city, out->c_nation, out->c_region);
    gen_part(out);
    gen_lineorder(out, first, last, row0);
    return 0;
}
