/* gen.h - the differential tester's generator and checker (issue 34, "Right
 * answers, always"), shared by tests/test_differential.c (random cases from a
 * seed, a standalone runner for long runs) and fuzz/fuzz_differential.c (cases
 * decoded from libFuzzer's bytes; fuzz/regressions/differential/ replays the
 * minimised ones).
 *
 * A case is a seed (the tables' data and the plan both follow from it), a mask
 * of plan simplifications and a window of rows per table (both used by the
 * minimiser), the engines to run (fused, operators) and, for the fuzz target,
 * a runtime configuration. dg_run_case generates three random tables, one
 * random plan over the whole of coproc/query.h, runs it with coproc and the
 * equivalent SQL with SQLite (over the same rows, in an in-memory database)
 * and compares the two: as multisets of rows, or in order where an order-by
 * decides it (ties compared as multisets, a LIMIT's last tie group as a
 * subset); integers exactly, floats to a relative 1e-9. Where coproc's
 * documented semantics differ from SQLite's the generator avoids the case or
 * writes the SQL to coproc's semantics (docs/api.md, "Differences from SQL
 * engines (SQLite)"). The SQL printed is the plan in SQL: it runs in SQLite
 * with the functions dg_sqlite_functions registers (wrapping arithmetic,
 * coproc's integer division, a wrapping SUM). */
#ifndef COPROC_TEST_DIFFERENTIAL_GEN_H
#define COPROC_TEST_DIFFERENTIAL_GEN_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "coproc.h"

#define DG_NTABLES 3

/* Modes of a case: which engines run. */
enum { DG_FUSED = 1, DG_OPERATORS = 2, DG_BOTH = 3 };

/* Runtime configurations (the fuzz target opens one of each as asked; the
 * test binary runs in whatever runtime its environment gives). */
enum {
    DG_CONFIG_DEFAULT = 0, /* PoCL (or COPROC_DEVICES) as it comes */
    DG_CONFIG_GPU_PATH,    /* COPROC_KERNEL_PATH=gpu: the GPU kernels on PoCL */
    DG_CONFIG_NO_ZERO_COPY,/* coproc_options.disable_zero_copy: copies as to a discrete GPU */
    DG_CONFIG_SIM_PAIR,    /* the simulated PoCL CPU + H100 pair (profiles/) */
    DG_CONFIG_COUNT
};

/* Plan simplifications (dg_case.mask), each forcing a feature off; the
 * minimiser sets those that keep a disagreement. */
enum {
    DG_NO_ORDER = 1u << 0,
    DG_NO_LIMIT = 1u << 1,
    DG_NO_GROUP = 1u << 2,
    DG_NO_JOIN = 1u << 3,
    DG_NO_FILTER = 1u << 4,
    DG_NO_PROJECT = 1u << 5,
    DG_FLAT_PRED = 1u << 6,    /* predicates without AND/OR/NOT */
    DG_NO_ARITH = 1u << 7,     /* expressions without arithmetic */
    DG_ONE_AGG = 1u << 8,      /* one aggregate */
    DG_PLAIN_BUILD = 1u << 9,  /* join build sides are plain scans */
    DG_ONE_KEY = 1u << 10,     /* one join key, at most one group key */
    DG_ONE_JOIN = 1u << 11,    /* at most one join */
    DG_NO_HAVING = 1u << 12,   /* nothing after a group-by but an order-by */
    DG_FEW_COLS = 1u << 13,    /* projections of one column */
    DG_MASK_BITS = 14
};

/* Known engine defects the generator can avoid (COPROC_DIFF_SKIP, while they
 * are being fixed; the test exercises them all without it). */
enum {
    DG_SKIP_GROUP_NULL_KEYS = 1u << 0, /* "group_null_keys": several keys, one nullable */
    DG_SKIP_EMPTY_AGG = 1u << 1,       /* "empty_agg": keyless aggregates of nullable args */
    DG_SKIP_BOOL_MINMAX = 1u << 2,     /* "bool_minmax": MIN/MAX of a boolean */
    DG_SKIP_BETWEEN_NULL = 1u << 3,    /* "between_null": BETWEEN with nullable bounds */
    /* found by this tester (report of issue 34), being fixed: */
    DG_SKIP_U64_KEYS = 1u << 4,        /* "u64_keys": uint64 keys above INT64_MAX (fused refuses) */
};

typedef struct dg_case {
    uint64_t seed;
    uint32_t mask;
    uint8_t modes;  /* DG_FUSED | DG_OPERATORS (0: both) */
    uint8_t config; /* DG_CONFIG_* (the fuzz target's runtime) */
    /* Rows of each table kept: [off, off + cap) of the generated ones; cap 0: all. */
    uint32_t row_off[DG_NTABLES], row_cap[DG_NTABLES];
} dg_case;

/* The byte form of a case (what fuzz/regressions/differential/ holds; any
 * bytes decode, missing ones as 0): seed (8, little-endian), mask (4), modes
 * (1), config (1), then off and cap per table (4 + 4 each). */
#define DG_CASE_BYTES 38
void dg_case_encode(const dg_case *c, uint8_t out[DG_CASE_BYTES]);
void dg_case_decode(const uint8_t *data, size_t size, dg_case *c);

typedef struct dg_options {
    unsigned skip;  /* DG_SKIP_* */
    int device;     /* coproc_query_options.device (-1: placement decides) */
    int verbose;    /* 1: print every case's SQL; 2: and the results */
    FILE *out;      /* where reports go (NULL: stdout) */
    /* Comma-separated plan features (dg_outcome.features) that make the
     * fused engine run too, whatever the case's modes say (NULL: none). */
    const char *fused_features;
} dg_options;

/* Disagreement kinds. */
enum {
    DG_KIND_BUILD = 0, /* the plan did not build (a generator bug or a builder's) */
    DG_KIND_ERROR,     /* the run returned an error */
    DG_KIND_COLUMNS,   /* a different number of columns */
    DG_KIND_ROWS,      /* a different number of rows */
    DG_KIND_VALUES,    /* the same number of rows, different values */
    DG_KIND_ORDER,     /* the rows out of the order-by's order */
    DG_KIND_SQLITE,    /* SQLite refused the SQL (a generator bug) */
    DG_KIND_COUNT
};
extern const char *const dg_kind_names[DG_KIND_COUNT];

typedef struct dg_outcome {
    int disagreements;            /* runs that disagreed (0, 1 or 2) */
    int kind[2];                  /* per mode (0 fused, 1 operators): DG_KIND_*, -1 if agreed */
    int ran[2];                   /* per mode: 1 if it ran */
    int fell_back;                /* the fused run fell back to operators (its note) */
    uint64_t kernels_built;       /* programs compiled by the fused run */
    size_t rows;                  /* SQLite's result rows */
    char features[160];           /* what the plan used, e.g. "join2 semi group3 order" */
} dg_outcome;

/* Register wadd, wsub, wmul (int64 wrapping), idiv (coproc's integer
 * division: x/0 = 0, INT64_MIN/-1 = INT64_MIN) and wsum (a wrapping SUM,
 * NULL over no value) on db (a sqlite3 *). */
int dg_sqlite_functions(void *db);

/* Generate case c, run it in rt as c->modes asks and compare with SQLite;
 * print a report of every disagreement (seed, SQL, the rows) to o->out.
 * Returns the number of runs that disagreed. */
int dg_run_case(coproc_runtime *rt, const dg_case *c, const dg_options *o, dg_outcome *out);

/* The plan of case c as SQL (malloc'd; NULL when it does not build). */
char *dg_case_sql(const dg_case *c, const dg_options *o);

/* Shrink a disagreeing case (mode DG_FUSED or DG_OPERATORS): set mask bits,
 * narrow each table's row window, keeping a disagreement of the same kind.
 * Runs the case many times (quietly); c is updated in place. Returns the
 * number of runs made. */
int dg_minimize(coproc_runtime *rt, dg_case *c, int mode, const dg_options *o);

/* "group_null_keys,empty_agg,bool_minmax,between_null,u64_keys" or "all" -> DG_SKIP_*. */
unsigned dg_parse_skip(const char *s);

#endif
