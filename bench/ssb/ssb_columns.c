/* ssb_columns.c - the columns of ssb_db as a table (name, table, where in the
 * struct), so that the cache, the checksum and programs loop over them
 * instead of naming each; allocation and release. */
#include <stdlib.h>
#include <string.h>

#include "ssb.h"
#include "ssb_internal.h"

#define COL(t, f) {t, #f, offsetof(ssb_db, f)}

/* Fixed order: the cache file stores the columns in it. */
const ssb__coldef ssb__columns[] = {
    COL(SSB_LINEORDER, lo_orderkey),     COL(SSB_LINEORDER, lo_linenumber),
    COL(SSB_LINEORDER, lo_custkey),      COL(SSB_LINEORDER, lo_partkey),
    COL(SSB_LINEORDER, lo_suppkey),      COL(SSB_LINEORDER, lo_orderdate),
    COL(SSB_LINEORDER, lo_quantity),     COL(SSB_LINEORDER, lo_extendedprice),
    COL(SSB_LINEORDER, lo_discount),     COL(SSB_LINEORDER, lo_revenue),
    COL(SSB_LINEORDER, lo_supplycost),   COL(SSB_LINEORDER, lo_tax),
    COL(SSB_LINEORDER, lo_commitdate),   COL(SSB_LINEORDER, lo_shipmode),
    COL(SSB_DATE, d_datekey),            COL(SSB_DATE, d_year),
    COL(SSB_DATE, d_yearmonthnum),       COL(SSB_DATE, d_yearmonth),
    COL(SSB_DATE, d_monthnuminyear),     COL(SSB_DATE, d_daynuminmonth),
    COL(SSB_DATE, d_daynuminyear),       COL(SSB_DATE, d_weeknuminyear),
    COL(SSB_CUSTOMER, c_custkey),        COL(SSB_CUSTOMER, c_city),
    COL(SSB_CUSTOMER, c_nation),         COL(SSB_CUSTOMER, c_region),
    COL(SSB_SUPPLIER, s_suppkey),        COL(SSB_SUPPLIER, s_city),
    COL(SSB_SUPPLIER, s_nation),         COL(SSB_SUPPLIER, s_region),
    COL(SSB_PART, p_partkey),            COL(SSB_PART, p_mfgr),
    COL(SSB_PART, p_category),           COL(SSB_PART, p_brand1),
    COL(SSB_PART, p_retailprice),
};
const int ssb__ncolumns = (int)(sizeof ssb__columns / sizeof ssb__columns[0]);

static const char *const table_names[SSB_NTABLES] = {"lineorder", "date", "customer",
                                                     "supplier", "part"};

const char *ssb_table_name(ssb_table t)
{
    return (unsigned)t < SSB_NTABLES ? table_names[t] : NULL;
}

int ssb_ncolumns(void) { return ssb__ncolumns; }

int ssb_column_at(const ssb_db *db, int i, ssb_column *out)
{
    if (i < 0 || i >= ssb__ncolumns) return -1;
    out->table = ssb__columns[i].table;
    out->name = ssb__columns[i].name;
    out->data = *ssb__colptr((ssb_db *)db, i);
    out->rows = db->rows[out->table];
    return 0;
}

int32_t *ssb_column_find(const ssb_db *db, const char *name, size_t *rows)
{
    for (int i = 0; i < ssb__ncolumns; i++) {
        if (strcmp(ssb__columns[i].name, name) != 0) continue;
        if (rows) *rows = db->rows[ssb__columns[i].table];
        return *ssb__colptr((ssb_db *)db, i);
    }
    return NULL;
}

int ssb__alloc(ssb_db *db)
{
    for (int i = 0; i < ssb__ncolumns; i++) {
        size_t n = db->rows[ssb__columns[i].table];
        /* At least one element, so that an empty table still has a pointer. */
        int32_t *p = malloc((n ? n : 1) * sizeof *p);
        if (!p) {
            ssb_free(db);
            return -1;
        }
        *ssb__colptr(db, i) = p;
    }
    return 0;
}

void ssb_free(ssb_db *db)
{
    if (!db) return;
    for (int i = 0; i < ssb__ncolumns; i++) free(*ssb__colptr(db, i));
    memset(db, 0, sizeof *db);
}

/* 64-bit words folded in with a multiply-rotate (xxhash's round): fast enough
 * for hundreds of megabytes, and any flipped bit changes the result. */
static uint64_t mix(uint64_t h, uint64_t w)
{
    h ^= w * 0x9E3779B97F4A7C15ull;
    h = (h << 31) | (h >> 33);
    return h * 0xC2B2AE3D27D4EB4Full;
}

uint64_t ssb__hash_bytes(uint64_t h, const void *data, size_t len)
{
    const unsigned char *p = data;
    size_t i = 0;
    for (; i + 8 <= len; i += 8) {
        uint64_t w;
        memcpy(&w, p + i, 8);
        h = mix(h, w);
    }
    uint64_t tail = len;
    for (; i < len; i++) tail = (tail << 8) | p[i];
    return mix(h, tail);
}

uint64_t ssb_checksum(const ssb_db *db)
{
    uint64_t h = 0x5353422D31ull; /* "SSB-1" */
    for (int i = 0; i < ssb__ncolumns; i++) {
        size_t n = db->rows[ssb__columns[i].table];
        h = ssb__hash_bytes(h, ssb__columns[i].name, strlen(ssb__columns[i].name));
        h = mix(h, n);
        h = ssb__hash_bytes(h, *ssb__colptr((ssb_db *)db, i), n * sizeof(int32_t));
    }
    return h;
}
