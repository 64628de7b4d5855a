/* ssb_plans.h - the 13 SSB queries as coproc plans (coproc/query.h) over the
 * generated data (ssb.h), and their results in the reference's form. Needs
 * coproc: linked as coproc_ssb_plans, apart from the coproc-free coproc_ssb. */
#ifndef SSB_PLANS_H
#define SSB_PLANS_H

#include "coproc.h"
#include "coproc/query.h"
#include "ssb.h"

/* The five tables as coproc tables. device < 0: host columns wrapping the
 * generated arrays (which must outlive them); else columns uploaded to that
 * device (resident). */
typedef struct ssb_tables {
    coproc_table *t[SSB_NTABLES];
    coproc_column *cols[64];
    int ncols;
    int strings; /* the queries' string columns are strings (ssb_tables_open_strings) */
} ssb_tables;

coproc_status ssb_tables_open(coproc_runtime *rt, const ssb_db *db, int device, ssb_tables *out);
/* As ssb_tables_open, with the string columns the queries read (regions,
 * nations, cities, p_mfgr, p_category, p_brand1, d_yearmonth) as strings -
 * dictionary-encoded columns (coproc.h "strings") holding dbgen's values,
 * e.g. "UNITED KI1", "MFGR#2221", "Dec1997" - and the plans built on them
 * comparing strings. Results come back with the integer codes, as
 * ssb_reference_run gives them. */
coproc_status ssb_tables_open_strings(coproc_runtime *rt, const ssb_db *db, int device,
                                      ssb_tables *out);
void ssb_tables_close(ssb_tables *t);

/* Build query q (SSB_Q1_1..) in plan p; *root its last node. Returns the
 * plan's status (coproc_plan_status). */
coproc_status ssb_plan_build(coproc_plan *p, const ssb_tables *t, int q, coproc_node **root);

/* Query q cut at its aggregation, for a distributed run (coproc/mpi.h): in,
 * the node whose rows are grouped (lineorder joined with its dimensions), and
 * the group-by and order-by the whole plan puts on it (names are static
 * strings; with no keys, no order). */
typedef struct ssb_plan_agg {
    coproc_node *in;
    int nkeys;
    const char *keys[3];
    coproc_aggregate agg; /* the query's one sum */
    int norder;
    coproc_order_key order[4];
} ssb_plan_agg;

coproc_status ssb_plan_build_agg(coproc_plan *p, const ssb_tables *t, int q, ssb_plan_agg *out);

/* The bytes of columns query q must read at least (each column it touches,
 * once): the numerator of Crystal's bandwidth-bound time. */
double ssb_query_bytes(const ssb_db *db, int q);
/* The working set of the queries run_q[] marks: the bytes of every column
 * one of them reads, each once (the budget sweep's 100 %). */
double ssb_working_set_bytes(const ssb_db *db, const int *run_q);

/* A query's result table as an ssb_result with the reference's columns
 * (by name) and row order. -1 when a column is missing. */
int ssb_result_from_table(const coproc_table *t, int q, ssb_result *out);

#endif
