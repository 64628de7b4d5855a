/* fuzz_query.c - the query-plan builder (include/coproc/query.h,
 * runtime/query/plan.c) and what reads its plans: lowering into pipelines
 * (lower.c) and kernel generation (codegen.c). The input is a little
 * byte-code program: each instruction calls one builder - column, constant,
 * arithmetic, comparison, BETWEEN, IN, AND/OR/NOT, scan, filter, project,
 * join, group-by, order-by - with operands picked from the expressions and
 * nodes made so far (or NULL), names from a pool of real, odd, duplicate,
 * empty and NULL names, operators and kinds in and out of range. The last
 * node is then lowered and every pipeline over a base table has its kernel
 * generated, with and without doubles, all without a device; some inputs
 * (the last byte says) also run on tiny tables, one operator at a time and
 * fused, and both runs must agree on the result's shape. Checked: a builder
 * that fails returns NULL and records an error with a message, and nothing
 * built is leaked (coproc_plan_free frees it all). Why: plans are built by
 * user code through a large API whose every argument can be wrong. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"

#include "coproc/query.h"
#include "query/pipeline.h" /* coproc__lower, coproc__codegen: lowering without a device */

#define NEXPR 32
#define NNODE 16
#define NLIST 8

int LLVMFuzzerInitialize(int *argc, char ***argv);

static coproc_table *tables[4]; /* fact, dim, one of no rows, one of no columns */
static coproc_column *columns[16];

#define LONG_NAME                                                                                  \
    "a-name-longer-than-any-buffer-a-label-holds-0123456789012345678901234567890123456789"         \
    "0123456789012345678901234567890123456789012345678901234567890123456789012345678901"
/* clang-format off */
static const char *names[] = {
    "k", "k64", "u", "u64", "f", "d", "dk", "dv", "dn", "z", "x", "y", "sum", "cnt", "", NULL,
    "k ", "%s%n%s", "\"quoted\" name", LONG_NAME};
/* clang-format on */
#define NNAMES (int)(sizeof names / sizeof *names)

static const char *name_of(fuzz_in *in)
{
    return names[fuzz_u8(in) % NNAMES];
}

static void add(coproc_table *t, const char *name, coproc_type type, const void *host, size_t n)
{
    coproc_column *c = NULL;
    coproc_runtime *rt = fuzz_runtime();
    if (coproc_column_wrap(rt, type, host, n, &c) != COPROC_OK ||
        coproc_table_add(t, name, c) != COPROC_OK)
        fuzz_fail("making the tables: %s", coproc_errmsg(rt));
    for (int i = 0; i < 16; i++)
        if (!columns[i]) {
            columns[i] = c;
            break;
        }
}

static void free_tables(void)
{
    for (int i = 0; i < 4; i++)
        coproc_table_free(tables[i]);
    for (int i = 0; i < 16; i++)
        coproc_column_free(columns[i]);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    coproc_runtime *rt = fuzz_runtime();
    if (!rt)
        return 0;
    static const int32_t k[7] = {3, -1, 3, 0, 2147483647, -2147483647 - 1, 3};
    static const int64_t k64[7] = {1, 2, 3, -4, INT64_MAX, INT64_MIN, 0};
    static const uint32_t u[7] = {0, 1, 4294967295u, 7, 7, 2, 1};
    static const uint64_t u64[7] = {0, UINT64_MAX, 1, 2, 3, 4, 5};
    static const float f[7] = {0.5f, -0.0f, 1e30f, -1e30f, 3, 0, 2};
    static const double d[7] = {1.5, -2.5, 0, -0.0, 1e300, -1e-300, 7};
    static const int32_t dk[4] = {3, 0, 9, 3};
    static const int64_t dv[4] = {10, 20, 30, 40};
    static const double dn[4] = {0.25, -1, 2, 1e10};
    for (int i = 0; i < 4; i++)
        if (coproc_table_create(rt, &tables[i]) != COPROC_OK)
            fuzz_fail("coproc_table_create: %s", coproc_errmsg(rt));
    add(tables[0], "k", COPROC_INT32, k, 7);
    add(tables[0], "k64", COPROC_INT64, k64, 7);
    add(tables[0], "u", COPROC_UINT32, u, 7);
    add(tables[0], "u64", COPROC_UINT64, u64, 7);
    add(tables[0], "f", COPROC_FLOAT32, f, 7);
    add(tables[0], "d", COPROC_FLOAT64, d, 7);
    add(tables[1], "dk", COPROC_INT32, dk, 4);
    add(tables[1], "dv", COPROC_INT64, dv, 4);
    add(tables[1], "dn", COPROC_FLOAT64, dn, 4);
    add(tables[2], "z", COPROC_INT32, NULL, 0);
    atexit(free_tables);
    return 0;
}

/* ---- the program's state: what was built so far */

typedef struct state {
    fuzz_in in;
    coproc_plan *p;
    coproc_expr *e[NEXPR];
    int ne;
    coproc_node *n[NNODE];
    int nn;
} state;

static coproc_expr *expr_of(state *s)
{
    uint8_t b = fuzz_u8(&s->in);
    if (b == 255 || !s->ne)
        return NULL;
    return s->e[(s->ne - 1 - b % s->ne + NEXPR) % NEXPR];
}

static coproc_node *node_of(state *s)
{
    uint8_t b = fuzz_u8(&s->in);
    if (b == 255 || !s->nn)
        return NULL;
    return s->n[(s->nn - 1 - b % s->nn + NNODE) % NNODE];
}

/* The plan the builders get: ours, or now and then NULL. */
static coproc_plan *plan_of(state *s, uint8_t op)
{
    return op >= 250 ? NULL : s->p;
}

static void push_expr(state *s, coproc_expr *e)
{
    if (e)
        s->e[s->ne++ % NEXPR] = e;
}

static void push_node(state *s, coproc_node *n)
{
    if (n)
        s->n[s->nn++ % NNODE] = n;
}

static void step(state *s)
{
    uint8_t op = fuzz_u8(&s->in);
    coproc_plan *p = plan_of(s, op);
    coproc_expr *a, *b, *c, *list[NLIST];
    coproc_node *x, *y;
    const char *nm[NLIST];
    coproc_expr *ex[NLIST];
    int k, m;
    switch (op % 16) {
    case 0:
        push_expr(s, coproc_expr_column(p, name_of(&s->in)));
        break;
    case 1:
        push_expr(s, coproc_expr_int(p, fuzz_u8(&s->in) & 1 ? (int64_t)fuzz_u64(&s->in)
                                                            : (int8_t)fuzz_u8(&s->in)));
        break;
    case 2: {
        uint64_t bits = fuzz_u64(&s->in);
        double v;
        memcpy(&v, &bits, sizeof v);
        push_expr(s, coproc_expr_float(p, v));
        break;
    }
    case 3:
        k = fuzz_u8(&s->in) % 6;
        a = expr_of(s), b = expr_of(s);
        push_expr(s, coproc_expr_arith(p, (coproc_arith)(k == 5 ? -1 : k), a, b));
        break;
    case 4:
        k = fuzz_u8(&s->in) % 9;
        a = expr_of(s), b = expr_of(s);
        push_expr(s, coproc_expr_compare(p, (coproc_cmp)(k == 8 ? -1 : k), a, b));
        break;
    case 5:
        a = expr_of(s), b = expr_of(s), c = expr_of(s);
        push_expr(s, coproc_expr_between(p, a, b, c));
        break;
    case 6:
        k = fuzz_u8(&s->in) % (NLIST + 2) - 1; /* -1 .. NLIST */
        a = expr_of(s);
        for (int i = 0; i < k; i++)
            list[i] = expr_of(s);
        push_expr(s, coproc_expr_in(p, a, k, k == 0 && fuzz_u8(&s->in) & 1 ? NULL : list));
        break;
    case 7:
        a = expr_of(s), b = expr_of(s);
        push_expr(s, coproc_expr_and(p, a, b));
        break;
    case 8:
        a = expr_of(s), b = expr_of(s);
        push_expr(s, coproc_expr_or(p, a, b));
        break;
    case 9:
        push_expr(s, coproc_expr_not(p, expr_of(s)));
        break;
    case 10:
        k = fuzz_u8(&s->in) % 5;
        push_node(s, coproc_plan_scan(p, k < 4 ? tables[k] : NULL, name_of(&s->in)));
        break;
    case 11:
        x = node_of(s);
        push_node(s, coproc_plan_filter(p, x, expr_of(s)));
        break;
    case 12:
        x = node_of(s);
        k = fuzz_u8(&s->in) % (NLIST + 2) - 1;
        for (int i = 0; i < k; i++) {
            nm[i] = name_of(&s->in);
            ex[i] = expr_of(s);
        }
        m = fuzz_u8(&s->in);
        push_node(s, coproc_plan_project(p, x, k, m == 1 ? NULL : nm, m == 2 ? NULL : ex));
        break;
    case 13: {
        k = fuzz_u8(&s->in) % 3;
        x = node_of(s), y = node_of(s);
        const char *pk = name_of(&s->in), *bk = name_of(&s->in);
        push_node(s, coproc_plan_join(p, (coproc_join_kind)k, x, pk, y, bk));
        break;
    }
    case 14: {
        coproc_aggregate aggs[NLIST];
        x = node_of(s);
        k = fuzz_u8(&s->in) % (NLIST + 3) - 1; /* -1 .. NLIST + 1 (over MAX_KEYS 8) */
        const char *keys[NLIST + 2];
        for (int i = 0; i < k; i++)
            keys[i] = name_of(&s->in);
        m = fuzz_u8(&s->in) % (NLIST + 2) - 1;
        for (int i = 0; i < m; i++) {
            uint8_t fn = fuzz_u8(&s->in) % 7;
            aggs[i].fn = (coproc_agg_fn)(fn == 6 ? -1 : fn);
            aggs[i].arg = expr_of(s);
            aggs[i].name = name_of(&s->in);
        }
        push_node(s, coproc_plan_group_by(p, x, k, keys, m, aggs));
        break;
    }
    case 15: {
        coproc_order_key keys[NLIST + 2];
        x = node_of(s);
        k = fuzz_u8(&s->in) % (NLIST + 3) - 1;
        for (int i = 0; i < k; i++) {
            keys[i].column = name_of(&s->in);
            keys[i].descending = fuzz_u8(&s->in) % 3 - 1;
        }
        uint64_t limit = fuzz_u8(&s->in) & 1 ? fuzz_u64(&s->in) : fuzz_u8(&s->in) % 4;
        push_node(s, coproc_plan_order_by(p, x, k, k == 0 ? NULL : keys, limit));
        break;
    }
    }
    /* A failed builder says why. */
    if (s->p && coproc_plan_status(s->p) != COPROC_OK && !coproc_plan_errmsg(s->p)[0])
        fuzz_fail("a plan error (%s) without a message",
                  coproc_status_name(coproc_plan_status(s->p)));
}

/* Lower root and generate every pipeline's kernels that can be generated now. */
static void lower(coproc_runtime *rt, coproc_node *root)
{
    coproc__qprog prog;
    if (coproc__lower(rt, root, &prog) != COPROC_OK)
        return;
    if (prog.result < 0 || prog.result >= prog.n)
        fuzz_fail("lowering gave result pipeline %d of %d", prog.result, prog.n);
    coproc__qkernel *k = malloc(sizeof *k);
    for (int i = 0; i < prog.n; i++) {
        if (!prog.p[i].src)
            continue; /* reads an earlier pipeline's output: known only when run */
        for (int fp64 = 0; fp64 < 2; fp64++) {
            if (coproc__codegen(&prog, i, fp64, k) != 0 && !k->why[0])
                fuzz_fail("a pipeline that cannot be generated, without a reason");
            coproc__qkernel_free(k);
        }
    }
    free(k);
    coproc__qprog_free(&prog);
}

/* Run root both ways; when both succeed they agree on the result's shape. */
static void run(coproc_plan *p, coproc_node *root, int hybrid)
{
    coproc_query_options o;
    coproc_query_result r[2];
    coproc_status st[2];
    for (int mode = 0; mode < 2; mode++) {
        coproc_query_options_init(&o);
        o.mode = mode ? COPROC_QUERY_OPERATORS : COPROC_QUERY_FUSED;
        o.hybrid = hybrid;
        st[mode] = coproc_query_run(p, root, &o, &r[mode]);
    }
    if (st[0] == COPROC_OK && st[1] == COPROC_OK) {
        if (coproc_table_rows(r[0].table) != coproc_table_rows(r[1].table) ||
            coproc_table_column_count(r[0].table) != coproc_table_column_count(r[1].table))
            fuzz_fail("fused: %zu rows x %d columns, operators: %zu rows x %d columns",
                      coproc_table_rows(r[0].table), coproc_table_column_count(r[0].table),
                      coproc_table_rows(r[1].table), coproc_table_column_count(r[1].table));
    }
    for (int mode = 0; mode < 2; mode++)
        if (st[mode] == COPROC_OK)
            coproc_query_result_free(&r[mode]);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    coproc_runtime *rt = fuzz_runtime();
    if (!rt) {
        fuzz_skipped = 1;
        return 0;
    }
    /* The last byte: whether to run the plan (bit 0), hybrid (bit 1). */
    uint8_t last = size ? data[size - 1] : 0;
    state *s = calloc(1, sizeof *s);
    s->in = (fuzz_in){data, size ? size - 1 : 0};
    if (coproc_plan_create(rt, &s->p) != COPROC_OK)
        fuzz_fail("coproc_plan_create: %s", coproc_errmsg(rt));
    for (int i = 0; i < 256 && s->in.n; i++)
        step(s);
    coproc_node *root = s->nn ? s->n[(s->nn - 1) % NNODE] : NULL;
    if (root && coproc_plan_status(s->p) == COPROC_OK) {
        lower(rt, root);
        if (last & 1)
            run(s->p, root, last >> 1 & 1);
    } else {
        coproc_query_result r;
        if (coproc_query_run(s->p, root, NULL, &r) == COPROC_OK)
            fuzz_fail("a plan with an error (or no root) ran");
    }
    coproc_plan_free(s->p);
    free(s);
    return 0;
}
