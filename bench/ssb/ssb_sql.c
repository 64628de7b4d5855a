/* ssb_sql.c - the 13 queries' names and SQL text against the encoded schema:
 * the SSB specification's queries word for word, except that each string
 * constant is its code (the comment above each query gives the strings) and
 * each ORDER BY is extended with the group columns, so the order is total. */
#include <string.h>

#include "ssb.h"

static const char *const names[SSB_NQUERIES] = {"q1.1", "q1.2", "q1.3", "q2.1", "q2.2",
                                                "q2.3", "q3.1", "q3.2", "q3.3", "q3.4",
                                                "q4.1", "q4.2", "q4.3"};

static const char *const sql[SSB_NQUERIES] = {
    /* q1.1 */
    "select sum(lo_extendedprice * lo_discount) as revenue "
    "from lineorder, date "
    "where lo_orderdate = d_datekey "
    "and d_year = 1993 "
    "and lo_discount between 1 and 3 "
    "and lo_quantity < 25",

    /* q1.2 */
    "select sum(lo_extendedprice * lo_discount) as revenue "
    "from lineorder, date "
    "where lo_orderdate = d_datekey "
    "and d_yearmonthnum = 199401 "
    "and lo_discount between 4 and 6 "
    "and lo_quantity between 26 and 35",

    /* q1.3 */
    "select sum(lo_extendedprice * lo_discount) as revenue "
    "from lineorder, date "
    "where lo_orderdate = d_datekey "
    "and d_weeknuminyear = 6 "
    "and d_year = 1994 "
    "and lo_discount between 5 and 7 "
    "and lo_quantity between 26 and 35",

    /* q2.1: p_category = 'MFGR#12', s_region = 'AMERICA' */
    "select sum(lo_revenue) as revenue, d_year, p_brand1 "
    "from lineorder, date, part, supplier "
    "where lo_orderdate = d_datekey "
    "and lo_partkey = p_partkey "
    "and lo_suppkey = s_suppkey "
    "and p_category = 12 "
    "and s_region = 1 "
    "group by d_year, p_brand1 "
    "order by d_year, p_brand1",

    /* q2.2: p_brand1 between 'MFGR#2221' and 'MFGR#2228', s_region = 'ASIA' */
    "select sum(lo_revenue) as revenue, d_year, p_brand1 "
    "from lineorder, date, part, supplier "
    "where lo_orderdate = d_datekey "
    "and lo_partkey = p_partkey "
    "and lo_suppkey = s_suppkey "
    "and p_brand1 between 2221 and 2228 "
    "and s_region = 2 "
    "group by d_year, p_brand1 "
    "order by d_year, p_brand1",

    /* q2.3: p_brand1 = 'MFGR#2239', s_region = 'EUROPE' */
    "select sum(lo_revenue) as revenue, d_year, p_brand1 "
    "from lineorder, date, part, supplier "
    "where lo_orderdate = d_datekey "
    "and lo_partkey = p_partkey "
    "and lo_suppkey = s_suppkey "
    "and p_brand1 = 2239 "
    "and s_region = 3 "
    "group by d_year, p_brand1 "
    "order by d_year, p_brand1",

    /* q3.1: c_region = 'ASIA', s_region = 'ASIA' */
    "select c_nation, s_nation, d_year, sum(lo_revenue) as revenue "
    "from customer, lineorder, supplier, date "
    "where lo_custkey = c_custkey "
    "and lo_suppkey = s_suppkey "
    "and lo_orderdate = d_datekey "
    "and c_region = 2 "
    "and s_region = 2 "
    "and d_year >= 1992 and d_year <= 1997 "
    "group by c_nation, s_nation, d_year "
    "order by d_year asc, revenue desc, c_nation asc, s_nation asc",

    /* q3.2: c_nation = 'UNITED STATES', s_nation = 'UNITED STATES' */
    "select c_city, s_city, d_year, sum(lo_revenue) as revenue "
    "from customer, lineorder, supplier, date "
    "where lo_custkey = c_custkey "
    "and lo_suppkey = s_suppkey "
    "and lo_orderdate = d_datekey "
    "and c_nation = 24 "
    "and s_nation = 24 "
    "and d_year >= 1992 and d_year <= 1997 "
    "group by c_city, s_city, d_year "
    "order by d_year asc, revenue desc, c_city asc, s_city asc",

    /* q3.3: cities 'UNITED KI1' (231) and 'UNITED KI5' (235) */
    "select c_city, s_city, d_year, sum(lo_revenue) as revenue "
    "from customer, lineorder, supplier, date "
    "where lo_custkey = c_custkey "
    "and lo_suppkey = s_suppkey "
    "and lo_orderdate = d_datekey "
    "and (c_city = 231 or c_city = 235) "
    "and (s_city = 231 or s_city = 235) "
    "and d_year >= 1992 and d_year <= 1997 "
    "group by c_city, s_city, d_year "
    "order by d_year asc, revenue desc, c_city asc, s_city asc",

    /* q3.4: cities 'UNITED KI1' and 'UNITED KI5', d_yearmonth = 'Dec1997' */
    "select c_city, s_city, d_year, sum(lo_revenue) as revenue "
    "from customer, lineorder, supplier, date "
    "where lo_custkey = c_custkey "
    "and lo_suppkey = s_suppkey "
    "and lo_orderdate = d_datekey "
    "and (c_city = 231 or c_city = 235) "
    "and (s_city = 231 or s_city = 235) "
    "and d_yearmonth = 199712 "
    "group by c_city, s_city, d_year "
    "order by d_year asc, revenue desc, c_city asc, s_city asc",

    /* q4.1: c_region = s_region = 'AMERICA', p_mfgr 'MFGR#1' or 'MFGR#2' */
    "select d_year, c_nation, sum(lo_revenue - lo_supplycost) as profit "
    "from date, customer, supplier, part, lineorder "
    "where lo_custkey = c_custkey "
    "and lo_suppkey = s_suppkey "
    "and lo_partkey = p_partkey "
    "and lo_orderdate = d_datekey "
    "and c_region = 1 "
    "and s_region = 1 "
    "and (p_mfgr = 1 or p_mfgr = 2) "
    "group by d_year, c_nation "
    "order by d_year, c_nation",

    /* q4.2: as q4.1, in 1997 and 1998 */
    "select d_year, s_nation, p_category, sum(lo_revenue - lo_supplycost) as profit "
    "from date, customer, supplier, part, lineorder "
    "where lo_custkey = c_custkey "
    "and lo_suppkey = s_suppkey "
    "and lo_partkey = p_partkey "
    "and lo_orderdate = d_datekey "
    "and c_region = 1 "
    "and s_region = 1 "
    "and (d_year = 1997 or d_year = 1998) "
    "and (p_mfgr = 1 or p_mfgr = 2) "
    "group by d_year, s_nation, p_category "
    "order by d_year, s_nation, p_category",

    /* q4.3: c_region = 'AMERICA', s_nation = 'UNITED STATES', p_category = 'MFGR#14' */
    "select d_year, s_city, p_brand1, sum(lo_revenue - lo_supplycost) as profit "
    "from date, customer, supplier, part, lineorder "
    "where lo_custkey = c_custkey "
    "and lo_suppkey = s_suppkey "
    "and lo_partkey = p_partkey "
    "and lo_orderdate = d_datekey "
    "and c_region = 1 "
    "and s_nation = 24 "
    "and (d_year = 1997 or d_year = 1998) "
    "and p_category = 14 "
    "group by d_year, s_city, p_brand1 "
    "order by d_year, s_city, p_brand1",
};

const char *ssb_query_name(int q) { return q >= 0 && q < SSB_NQUERIES ? names[q] : NULL; }

const char *ssb_query_sql(int q) { return q >= 0 && q < SSB_NQUERIES ? sql[q] : NULL; }

int ssb_query_index(const char *name)
{
    if (!name) return -1;
    if (name[0] == 'q' || name[0] == 'Q') name++;
    for (int q = 0; q < SSB_NQUERIES; q++)
        if (strcmp(names[q] + 1, name) == 0) return q;
    return -1;
}
