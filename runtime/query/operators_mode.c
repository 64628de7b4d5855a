/* operators_mode.c - a plan run one operator at a time: every node through
 * coproc's public operators over host columns (each submitted as a task, so
 * placed on the device the policy picks, or on opts.device), every
 * intermediate materialised as host columns. The classic execution the fused
 * engine is measured against, and its fallback for plans it cannot fuse.
 *
 * Values follow coproc/query.h: integer expressions compute in int64
 * (wrapping, x/0 = 0, INT64_MIN/-1 = INT64_MIN; uint64 columns read as int64
 * bits), anything with a float in double. Choices where the plan API leaves
 * room:
 * - comparisons of two non-constant operands become a sign column and one
 *   select against 0: floats a - b in double (both infinite and equal set to
 *   0; NaN stays NaN, so only NE holds), integers 2*(a/2 - b/2) + (a%2 - b%2)
 *   in double, which never overflows and keeps the sign exactly;
 * - MIN/MAX ignore NaN unless every row of the group is NaN (coproc_reduce's
 *   and coproc_group_by's rule), compare integers as int64 (so a uint64
 *   column's values >= 2^63 are negative there); over no rows (group-by
 *   without keys over an empty input) they are 0; AVG is then NaN, SUM and
 *   COUNT 0;
 * - order-by: stable; integers by the column's own type (uint64 unsigned);
 *   floats with -0.0 equal to +0.0 and NaN after every number ascending,
 *   before every number descending (the exact reverse);
 * - inner joins give their pairs in the hash join's order (no order is
 *   promised); key columns of different integer types join as int64 values;
 * - a group-by's groups come ascending by their keys (first key most
 *   significant; uint64 keys as unsigned, other keys as signed values).
 * A node's booleans are INT32 0/1 columns made by select + scatter; AND/OR/NOT
 * of two predicates over columns go into one coproc_filter where they can.
 * Each node reports once ("operators: <label>"): device = where its last
 * operator ran (-1 if none ran), bytes_in = its input columns' bytes,
 * bytes_moved = host<->device copies on every device meanwhile (concurrent
 * work on the runtime counts too; 0 on zero-copy PoCL).
 *
 * Tests only: COPROC_TEST_QUERY_FAIL_OP=k makes the k-th operator of a run
 * fail (COPROC_INTERNAL), to check that every failure releases everything. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/runtime.h"
#include "data/column.h"
#include "query/plan.h"
#include "data/dictionary.h"
#include "query/run.h"

/* A node's output while running: host columns in the node's schema order.
 * own[i]: this relation frees cols[i] (else the column belongs to the scanned
 * table, or to an earlier column of the same relation). */
typedef struct rel {
    int n;
    coproc_column **cols;
    unsigned char *own;
    size_t rows;
} rel;

typedef struct ctx {
    coproc__qrun *run;
    coproc_runtime *rt;
    const coproc_node *node;  /* the node running, named in messages */
    const rel *in;            /* expressions read this relation ... */
    const coproc__schema *schema; /* ... whose columns are named here */
    int device;               /* where the node's last operator ran */
    long ops, fail_op;        /* operators run; the one to fail (tests), 0: none */
    coproc_column **tmp;      /* everything the running node made and not yet handed on */
    int ntmp, tmpcap;
} ctx;

/* An expression's value: a constant, or a column (borrowed: from the input
 * relation or the temporaries). */
typedef struct val {
    int is_const;
    int is_float;             /* a float value (constant or float column) */
    int64_t i;
    double f;
    const coproc_column *col;
} val;

#define LABEL(c) ((c)->node ? (c)->node->label : "query")

static coproc_status oom(ctx *c)
{
    return coproc__fail(c->rt, COPROC_HOST_OUT_OF_MEMORY, "%s: out of host memory", LABEL(c));
}

/* ---------------------------------------------------------------- temporaries */

static coproc_status tmp_push(ctx *c, coproc_column *col)
{
    if (!col)
        return COPROC_OK;
    if (c->ntmp == c->tmpcap) {
        int cap = c->tmpcap ? 2 * c->tmpcap : 32;
        coproc_column **t = realloc(c->tmp, cap * sizeof *t);
        if (!t) {
            coproc_column_free(col);
            return oom(c);
        }
        c->tmp = t;
        c->tmpcap = cap;
    }
    c->tmp[c->ntmp++] = col;
    return COPROC_OK;
}

/* Take col out of the temporaries (the caller now owns it); 0 if it is not one. */
static int tmp_detach(ctx *c, const coproc_column *col)
{
    for (int i = c->ntmp - 1; i >= 0; i--)
        if (c->tmp[i] == col) {
            c->tmp[i] = c->tmp[--c->ntmp];
            return 1;
        }
    return 0;
}

static void tmp_free_all(ctx *c)
{
    for (int i = 0; i < c->ntmp; i++)
        coproc_column_free(c->tmp[i]);
    c->ntmp = 0;
}

/* ---------------------------------------------------------------- relations */

static void rel_free(rel *r)
{
    for (int i = 0; i < r->n; i++)
        if (r->own && r->own[i])
            coproc_column_free(r->cols[i]);
    free(r->cols);
    free(r->own);
    memset(r, 0, sizeof *r);
}

static coproc_status rel_init(ctx *c, rel *r, int n, size_t rows)
{
    memset(r, 0, sizeof *r);
    r->cols = calloc(n ? n : 1, sizeof *r->cols);
    r->own = calloc(n ? n : 1, 1);
    if (!r->cols || !r->own) {
        rel_free(r);
        return oom(c);
    }
    r->n = n;
    r->rows = rows;
    return COPROC_OK;
}

/* out's column j becomes in's column i, ownership moving along. */
static void rel_pass(rel *in, int i, rel *out, int j)
{
    out->cols[j] = in->cols[i];
    out->own[j] = in->own[i];
    in->own[i] = 0;
}

/* out's column j becomes col, one of the temporaries: out now owns it. */
static coproc_status rel_set(ctx *c, rel *out, int j, const coproc_column *col)
{
    if (!tmp_detach(c, col))
        return coproc__fail(c->rt, COPROC_INTERNAL, "%s: output column %d is not the node's own",
                            LABEL(c), j);
    out->cols[j] = (coproc_column *)col;
    out->own[j] = 1;
    return COPROC_OK;
}

/* ---------------------------------------------------------------- operators */

/* Submit op (on opts.device, else where the policy places it) and wait; the
 * result's columns join the temporaries. */
static coproc_status op_run(ctx *c, coproc_op *op, coproc_result *r, const char *what)
{
    memset(r, 0, sizeof *r);
    op->device = c->run->opts.device;
    if (c->fail_op > 0 && ++c->ops == c->fail_op)
        return coproc__fail(c->rt, COPROC_INTERNAL, "%s: %s: injected failure "
                            "(COPROC_TEST_QUERY_FAIL_OP)", LABEL(c), what);
    coproc_task *t;
    coproc_status s = coproc_submit(c->rt, op, &t);
    if (s == COPROC_OK)
        s = coproc_wait(t, r);
    if (s != COPROC_OK) {
        char msg[400];
        coproc__errmsg_copy(c->rt, msg, sizeof msg);
        return coproc__fail(c->rt, s, "%s: %s: %s", LABEL(c), what, msg);
    }
    c->device = r->device;
    coproc_column *cols[] = {r->column, r->column2, r->groups.keys, r->groups.count,
                             r->groups.sum, r->groups.min, r->groups.max, r->join.left,
                             r->join.right};
    for (size_t k = 0; k < sizeof cols / sizeof cols[0]; k++)
        if (s == COPROC_OK)
            s = tmp_push(c, cols[k]);
        else
            coproc_column_free(cols[k]);
    return s;
}

static coproc_status do_map(ctx *c, coproc_arith op, const coproc_column *a,
                            const coproc_column *b, coproc_column **out)
{
    coproc_op o;
    coproc_op_init(&o, COPROC_OP_MAP);
    o.a = a, o.b = b, o.arith = op;
    coproc_result r;
    coproc_status s = op_run(c, &o, &r, "map");
    *out = r.column;
    return s;
}

static coproc_status do_map_const(ctx *c, coproc_arith op, const coproc_column *a,
                                  coproc_value v, coproc_column **out)
{
    coproc_op o;
    coproc_op_init(&o, COPROC_OP_MAP);
    o.a = a, o.arith = op, o.c = v;
    coproc_result r;
    coproc_status s = op_run(c, &o, &r, "map");
    *out = r.column;
    return s;
}

static coproc_status do_cast(ctx *c, const coproc_column *a, coproc_type to,
                             const coproc_column **out)
{
    if (coproc_column_type(a) == to) {
        *out = a;
        return COPROC_OK;
    }
    coproc_op o;
    coproc_op_init(&o, COPROC_OP_MAP);
    o.variant = COPROC_VARIANT_CAST, o.a = a, o.to = to;
    coproc_result r;
    coproc_status s = op_run(c, &o, &r, "cast");
    *out = r.column;
    return s;
}

static coproc_status do_gather(ctx *c, const coproc_column *src, const coproc_column *pos,
                               coproc_column **out)
{
    coproc_op o;
    coproc_op_init(&o, COPROC_OP_GATHER);
    o.a = src, o.b = pos;
    coproc_result r;
    coproc_status s = op_run(c, &o, &r, "gather");
    *out = r.column;
    return s;
}

/* A copy of dst with src written at pos. */
static coproc_status do_scatter(ctx *c, const coproc_column *src, const coproc_column *pos,
                                const coproc_column *dst, coproc_column **out)
{
    coproc_op o;
    coproc_op_init(&o, COPROC_OP_GATHER);
    o.variant = COPROC_VARIANT_SCATTER, o.a = src, o.b = pos, o.dst = dst;
    coproc_result r;
    coproc_status s = op_run(c, &o, &r, "scatter");
    *out = r.column;
    return s;
}

static coproc_status do_select(ctx *c, const coproc_filter *f, coproc_column **pos,
                               uint64_t *count)
{
    coproc_op o;
    coproc_op_init(&o, COPROC_OP_SELECT);
    o.filter = *f;
    coproc_result r;
    coproc_status s = op_run(c, &o, &r, "select");
    *pos = r.column;
    *count = r.count;
    return s;
}

static coproc_status do_reduce(ctx *c, coproc_reduce_op op, const coproc_column *a,
                               coproc_scalar *out)
{
    coproc_op o;
    coproc_op_init(&o, COPROC_OP_REDUCE);
    o.a = a, o.reduce = op;
    coproc_result r;
    coproc_status s = op_run(c, &o, &r, "reduce");
    *out = r.scalar;
    return s;
}

/* Grouped by keys, ascending, computing aggs (COPROC_GROUP_*); the result's
 * columns are temporaries. */
static coproc_status do_group_by(ctx *c, const coproc_column *keys, const coproc_column *values,
                                 unsigned aggs, coproc_group_result *out)
{
    coproc_op o;
    coproc_op_init(&o, COPROC_OP_GROUP_BY);
    o.a = keys, o.b = values, o.sorted = 1, o.aggs = aggs;
    coproc_result r;
    coproc_status s = op_run(c, &o, &r, "group-by");
    *out = r.groups;
    return s;
}

static coproc_status do_argsort(ctx *c, const coproc_column *keys, coproc_column **perm)
{
    coproc_op o;
    coproc_op_init(&o, COPROC_OP_SORT);
    o.variant = COPROC_VARIANT_ARGSORT, o.a = keys;
    coproc_result r;
    coproc_status s = op_run(c, &o, &r, "argsort");
    *perm = r.column;
    return s;
}

/* ---------------------------------------------------------------- host glue */

/* A new host column of n elements (not a temporary yet). */
static coproc_status host_col(ctx *c, coproc_type t, size_t n, coproc_column **out)
{
    coproc_status s = coproc_column_host_alloc(c->rt, t, n, out);
    if (s != COPROC_OK)
        return coproc__fail(c->rt, s, "%s: a column of %zu elements: %s", LABEL(c), n,
                            coproc_status_message(s));
    return COPROC_OK;
}

/* A new host column of rows elements, each v (i64 for integer types, f64 for floats). */
static coproc_status fill_col(ctx *c, coproc_type t, size_t rows, int64_t i, double f,
                              coproc_column **out)
{
    coproc_column *col;
    coproc_status s = host_col(c, t, rows, &col);
    if (s != COPROC_OK)
        return s;
    void *d = coproc_column_host_data(col);
    for (size_t k = 0; k < rows; k++)
        switch (t) {
        case COPROC_INT32: ((int32_t *)d)[k] = (int32_t)i; break;
        case COPROC_UINT32: ((uint32_t *)d)[k] = (uint32_t)i; break;
        case COPROC_INT64: ((int64_t *)d)[k] = i; break;
        case COPROC_UINT64: ((uint64_t *)d)[k] = (uint64_t)i; break;
        case COPROC_FLOAT32: ((float *)d)[k] = (float)f; break;
        default: ((double *)d)[k] = f; break;
        }
    *out = col;
    return tmp_push(c, col);
}

/* 0, 1, ..., rows - 1 as UINT32. */
static coproc_status iota_col(ctx *c, size_t rows, coproc_column **out)
{
    coproc_status s = fill_col(c, COPROC_UINT32, rows, 0, 0, out);
    uint32_t *d = s == COPROC_OK ? coproc_column_host_data(*out) : NULL;
    for (size_t k = 0; d && k < rows; k++)
        d[k] = (uint32_t)k;
    return s;
}

/* A host copy of any column (host or device). */
static coproc_status copy_col(ctx *c, const coproc_column *src, coproc_column **out)
{
    coproc_column *col;
    size_t n = coproc_column_length(src);
    coproc_status s = coproc_column_host_alloc(c->rt, coproc_column_type(src), n, &col);
    if (s == COPROC_OK && n && (s = coproc_column_download(src, coproc_column_host_data(col), n)) != COPROC_OK)
        coproc_column_free(col);
    const coproc_column *v = coproc_column_validity(src);
    if (s == COPROC_OK && v) { /* the nulls travel with the values */
        coproc_column *bits;
        size_t w = coproc_column_length(v);
        s = coproc_column_host_alloc(c->rt, COPROC_UINT32, w, &bits);
        if (s == COPROC_OK && w &&
            (s = coproc_column_download(v, coproc_column_host_data(bits), w)) != COPROC_OK)
            coproc_column_free(bits);
        if (s == COPROC_OK && (s = coproc_column_set_validity(col, bits)) != COPROC_OK)
            coproc_column_free(bits);
        if (s != COPROC_OK)
            coproc_column_free(col);
    }
    if (s != COPROC_OK) {
        char msg[400];
        coproc__errmsg_copy(c->rt, msg, sizeof msg);
        return coproc__fail(c->rt, s, "%s: copying a column to the host: %s", LABEL(c), msg);
    }
    *out = col;
    return tmp_push(c, col);
}

/* ---------------------------------------------------------------- nulls (host glue) */

/* Nulls follow SQL: a comparison with a null operand is unknown, AND/OR/NOT
 * are three-valued (Kleene), a filter keeps the rows whose predicate is true.
 * A select already drops rows whose comparison reads a null, and AND/OR of
 * "true" sets are "true" sets again, so only NOT (and a boolean projected as
 * a column) needs the third value: there a predicate becomes an INT32 column
 * of 0 (false), 1 (unknown) or 2 (true) - AND is its min, OR its max, NOT
 * 2 - x. The glue below reads host columns' validity bitmaps. */

static const uint32_t *valid_words(const coproc_column *col)
{
    const coproc_column *v = coproc_column_validity(col);
    return v ? coproc_column_host_data(v) : NULL;
}

static int bit_at(const uint32_t *w, size_t r)
{
    return !w || ((w[r / 32] >> (r % 32)) & 1u);
}

/* A new bitmap of rows bits: bit r set when every one of the n columns is
 * valid at r and, when tv (a three-valued column's rows) is given, tv[r] is
 * not unknown. */
static coproc_status and_bitmap(ctx *c, size_t rows, const coproc_column *const *cols, int n,
                                const int32_t *tv, coproc_column **out)
{
    size_t words = (rows + 31) / 32;
    coproc_column *b;
    coproc_status s = host_col(c, COPROC_UINT32, words, &b);
    if (s != COPROC_OK)
        return s;
    uint32_t *d = coproc_column_host_data(b);
    for (size_t k = 0; k < words; k++)
        d[k] = ~0u;
    for (int i = 0; i < n; i++) {
        const uint32_t *w = valid_words(cols[i]);
        for (size_t k = 0; w && k < words; k++)
            d[k] &= w[k];
    }
    for (size_t r = 0; tv && r < rows; r++)
        if (tv[r] == 1)
            d[r / 32] &= ~(1u << (r % 32));
    *out = b;
    return COPROC_OK;
}

/* col (one of the temporaries) gets the validity "every one of the n columns
 * valid" (none when none of them has one). */
static coproc_status give_validity(ctx *c, coproc_column *col, const coproc_column *const *cols,
                                   int n)
{
    int any = 0;
    for (int i = 0; i < n; i++)
        any |= valid_words(cols[i]) != NULL;
    if (!any)
        return COPROC_OK;
    coproc_column *b;
    coproc_status s = and_bitmap(c, coproc_column_length(col), cols, n, NULL, &b);
    if (s == COPROC_OK && (s = coproc_column_set_validity(col, b)) != COPROC_OK) {
        coproc_column_free(b);
        return coproc__fail(c->rt, s, "%s: a validity: %s", LABEL(c), coproc_status_message(s));
    }
    return s;
}

/* col's values without its validity (a view of the same host memory). */
static coproc_status strip_nulls(ctx *c, const coproc_column *col, const coproc_column **out)
{
    *out = col;
    if (!coproc_column_validity(col))
        return COPROC_OK;
    coproc_column *v;
    coproc_status s =
        coproc_column_wrap(c->rt, coproc_column_type(col), coproc_column_host_data(col),
                           coproc_column_length(col), &v);
    if (s != COPROC_OK)
        return coproc__fail(c->rt, s, "%s: a view of a column: %s", LABEL(c),
                            coproc_status_message(s));
    *out = v;
    return tmp_push(c, v);
}

/* An INT32 column over the input's rows: 1 where every one of the n columns
 * is valid, else 0 (no validity of its own); with `inverse`, the opposite. */
static coproc_status valid_col(ctx *c, const coproc_column *const *cols, int n, int inverse,
                               const coproc_column **out)
{
    coproc_column *k;
    size_t rows = c->in->rows;
    coproc_status s = fill_col(c, COPROC_INT32, rows, 0, 0, &k);
    int32_t *d = s == COPROC_OK ? coproc_column_host_data(k) : NULL;
    for (size_t r = 0; d && r < rows; r++) {
        int v = 1;
        for (int i = 0; i < n && v; i++)
            v = bit_at(valid_words(cols[i]), r);
        d[r] = inverse ? !v : v;
    }
    *out = k;
    return s;
}

/* An integer column (a fresh temporary) with v in the rows where `of` (a
 * column of as many rows) is null. */
static void fill_nulls_where(coproc_column *col, const coproc_column *of, uint64_t v)
{
    const uint32_t *w = valid_words(of);
    size_t n = coproc_column_length(col);
    void *d = coproc_column_host_data(col);
    size_t size = coproc_type_size(coproc_column_type(col));
    for (size_t r = 0; w && r < n; r++)
        if (!bit_at(w, r)) {
            if (size == 8)
                ((uint64_t *)d)[r] = v;
            else
                ((uint32_t *)d)[r] = (uint32_t)v;
        }
    /* An operator's result may also be cached on the device that made it
     * (not host-unified, or without zero-copy): that copy is stale now. */
    coproc__column_host_changed(col);
}

/* An integer column (a fresh temporary) with its null rows set to v and its
 * validity dropped. */
static void fill_nulls(coproc_column *col, uint64_t v)
{
    fill_nulls_where(col, col, v);
    coproc_column_set_validity(col, NULL);
}

/* Mark in seen[] the input's columns with nulls that an expression reads. */
static void mark_nullable(ctx *c, const coproc_expr *e, unsigned char *seen)
{
    if (!e)
        return;
    if (e->kind == COPROC__QE_COLUMN) {
        int i = coproc__schema_find(c->schema, e->name);
        if (i >= 0 && coproc_column_validity(c->in->cols[i]))
            seen[i] = 1;
        return;
    }
    mark_nullable(c, e->a, seen);
    mark_nullable(c, e->b, seen);
    mark_nullable(c, e->c, seen);
    for (int k = 0; e->list && k < e->n; k++)
        mark_nullable(c, e->list[k], seen);
}

/* The input's columns with nulls that e reads, into *cols (malloc'd, may be
 * NULL when there are none) and *n. */
static coproc_status nullable_refs(ctx *c, const coproc_expr *e, const coproc_column ***cols,
                                   int *n)
{
    *cols = NULL, *n = 0;
    unsigned char *seen = calloc(c->in->n ? c->in->n : 1, 1);
    const coproc_column **v = malloc((c->in->n ? c->in->n : 1) * sizeof *v);
    if (!seen || !v) {
        free(seen);
        free(v);
        return oom(c);
    }
    mark_nullable(c, e, seen);
    for (int i = 0; i < c->in->n; i++)
        if (seen[i])
            v[(*n)++] = c->in->cols[i];
    free(seen);
    if (*n == 0) {
        free(v);
        v = NULL;
    }
    *cols = v;
    return COPROC_OK;
}

/* Gather every column of in at pos into out's columns at, at + 1, ... */
static coproc_status gather_all(ctx *c, const rel *in, const coproc_column *pos, rel *out, int at)
{
    for (int i = 0; i < in->n; i++) {
        coproc_column *g;
        coproc_status s = do_gather(c, in->cols[i], pos, &g);
        if (s != COPROC_OK || (s = rel_set(c, out, at + i, g)) != COPROC_OK)
            return s;
    }
    return COPROC_OK;
}

/* ---------------------------------------------------------------- numeric expressions */

static int64_t int_arith(coproc_arith op, int64_t a, int64_t b)
{
    switch (op) {
    case COPROC_ARITH_ADD: return (int64_t)((uint64_t)a + (uint64_t)b);
    case COPROC_ARITH_SUB: return (int64_t)((uint64_t)a - (uint64_t)b);
    case COPROC_ARITH_MUL: return (int64_t)((uint64_t)a * (uint64_t)b);
    default:
        if (b == 0)
            return 0;
        if (a == INT64_MIN && b == -1)
            return INT64_MIN;
        return a / b;
    }
}

static double float_arith(coproc_arith op, double a, double b)
{
    switch (op) {
    case COPROC_ARITH_ADD: return a + b;
    case COPROC_ARITH_SUB: return a - b;
    case COPROC_ARITH_MUL: return a * b;
    default: return a / b;
    }
}

static int col_is_float(const coproc_column *col)
{
    coproc_type t = coproc_column_type(col);
    return t == COPROC_FLOAT32 || t == COPROC_FLOAT64;
}

/* An integer column as INT64 (uint64 keeps its bits). */
static coproc_status as_i64(ctx *c, const coproc_column *col, const coproc_column **out)
{
    return do_cast(c, col, COPROC_INT64, out);
}

/* A column as FLOAT64; a uint64 column is read as int64 first. */
static coproc_status as_f64(ctx *c, const coproc_column *col, const coproc_column **out)
{
    coproc_status s = COPROC_OK;
    if (coproc_column_type(col) == COPROC_UINT64)
        s = as_i64(c, col, &col);
    return s == COPROC_OK ? do_cast(c, col, COPROC_FLOAT64, out) : s;
}

static double val_f(const val *v) { return v->is_float ? v->f : (double)v->i; }

/* The value materialised as a column of type t (INT64 or FLOAT64 for computed values). */
static coproc_status val_col(ctx *c, const val *v, coproc_type t, const coproc_column **out)
{
    if (v->is_const) {
        coproc_column *col;
        coproc_status s = fill_col(c, t, c->in->rows, v->i, val_f(v), &col);
        *out = col;
        return s;
    }
    if (t == COPROC_FLOAT64)
        return as_f64(c, v->col, out);
    return do_cast(c, v->col, t, out);
}

static coproc_status eval_num(ctx *c, const coproc_expr *e, val *out);

static coproc_status eval_arith(ctx *c, const coproc_expr *e, val *out)
{
    val a, b;
    coproc_status s;
    if ((s = eval_num(c, e->a, &a)) != COPROC_OK || (s = eval_num(c, e->b, &b)) != COPROC_OK)
        return s;
    int fl = a.is_float || b.is_float;
    memset(out, 0, sizeof *out);
    out->is_float = fl;
    if (a.is_const && b.is_const) {
        out->is_const = 1;
        if (fl)
            out->f = float_arith(e->arith, val_f(&a), val_f(&b));
        else
            out->i = int_arith(e->arith, a.i, b.i);
        return COPROC_OK;
    }
    coproc_type t = fl ? COPROC_FLOAT64 : COPROC_INT64;
    coproc_column *r;
    coproc_arith op = e->arith;
    if (a.is_const && (op == COPROC_ARITH_ADD || op == COPROC_ARITH_MUL)) {
        val x = a; /* commutative: column op constant */
        a = b, b = x;
    }
    if (!a.is_const && b.is_const) {
        const coproc_column *x;
        coproc_value k;
        if (fl)
            k.f64 = val_f(&b);
        else
            k.i64 = b.i;
        if ((s = val_col(c, &a, t, &x)) != COPROC_OK || (s = do_map_const(c, op, x, k, &r)) != COPROC_OK)
            return s;
    } else if (a.is_const && op == COPROC_ARITH_SUB) {
        /* k - x = (x * -1) + k, exactly so in wrapping int64 and in IEEE double */
        const coproc_column *x;
        coproc_column *neg;
        coproc_value m1, k;
        if (fl)
            m1.f64 = -1.0, k.f64 = val_f(&a);
        else
            m1.i64 = -1, k.i64 = a.i;
        if ((s = val_col(c, &b, t, &x)) != COPROC_OK ||
            (s = do_map_const(c, COPROC_ARITH_MUL, x, m1, &neg)) != COPROC_OK ||
            (s = do_map_const(c, COPROC_ARITH_ADD, neg, k, &r)) != COPROC_OK)
            return s;
    } else {
        const coproc_column *x, *y; /* both columns, or k / column */
        if ((s = val_col(c, &a, t, &x)) != COPROC_OK || (s = val_col(c, &b, t, &y)) != COPROC_OK ||
            (s = do_map(c, op, x, y, &r)) != COPROC_OK)
            return s;
    }
    out->col = r;
    return COPROC_OK;
}

static coproc_status eval_num(ctx *c, const coproc_expr *e, val *out)
{
    memset(out, 0, sizeof *out);
    switch (e->kind) {
    case COPROC__QE_COLUMN: {
        int i = coproc__schema_find(c->schema, e->name);
        if (i < 0)
            return coproc__fail(c->rt, COPROC_INVALID_ARGUMENT, "%s: no column \"%s\"", LABEL(c),
                                e->name);
        out->col = c->in->cols[i];
        out->is_float = col_is_float(out->col);
        return COPROC_OK;
    }
    case COPROC__QE_INT:
        out->is_const = 1, out->i = e->i;
        return COPROC_OK;
    case COPROC__QE_FLOAT:
        out->is_const = 1, out->is_float = 1, out->f = e->f;
        return COPROC_OK;
    case COPROC__QE_ARITH:
        return eval_arith(c, e, out);
    default:
        return coproc__fail(c->rt, COPROC_INVALID_ARGUMENT, "%s: a boolean where a number is needed",
                            LABEL(c));
    }
}

/* ---------------------------------------------------------------- predicates */

static coproc_filter single(const coproc_column *col, coproc_cmp op, coproc_value a)
{
    coproc_filter f;
    memset(&f, 0, sizeof f);
    f.first.col = col, f.first.cmp = op, f.first.a = a;
    f.logic = COPROC_LOGIC_NONE;
    return f;
}

/* A predicate that is always (or never) true over the input's rows. */
static coproc_status const_pred(ctx *c, int truth, coproc_filter *f)
{
    coproc_column *z;
    coproc_status s = fill_col(c, COPROC_INT32, c->in->rows, 0, 0, &z);
    coproc_value zero = {.i64 = 0};
    *f = single(z, truth ? COPROC_CMP_EQ : COPROC_CMP_NE, zero);
    return s;
}

/* An INT32 column over the input's rows: 1 at the count positions pos, else 0. */
static coproc_status pos_bool(ctx *c, const coproc_column *pos, uint64_t count,
                              const coproc_column **out)
{
    coproc_column *ones, *zeros, *r = NULL;
    size_t rows = c->in->rows;
    coproc_status s;
    if (count == 0 || count == rows) {
        s = fill_col(c, COPROC_INT32, rows, count ? 1 : 0, 0, &r);
    } else if ((s = fill_col(c, COPROC_INT32, rows, 0, 0, &zeros)) == COPROC_OK &&
               (s = fill_col(c, COPROC_INT32, count, 1, 0, &ones)) == COPROC_OK) {
        s = do_scatter(c, ones, pos, zeros, &r);
    }
    *out = r;
    return s;
}

/* The predicate as an INT32 0/1 column over the input's rows. */
static coproc_status pred_bool(ctx *c, const coproc_filter *f, const coproc_column **out)
{
    coproc_column *pos;
    uint64_t count;
    coproc_status s = do_select(c, f, &pos, &count);
    return s == COPROC_OK ? pos_bool(c, pos, count, out) : s;
}

/* f as one predicate: f itself, or (two predicates) its boolean column == 1. */
static coproc_status pred_simplify(ctx *c, coproc_filter *f)
{
    if (f->logic == COPROC_LOGIC_NONE)
        return COPROC_OK;
    const coproc_column *b = NULL;
    coproc_status s = pred_bool(c, f, &b);
    coproc_value one = {.i64 = 1};
    *f = single(b, COPROC_CMP_EQ, one);
    return s;
}

static coproc_status pred_combine(ctx *c, coproc_filter *a, coproc_filter *b, coproc_logic logic,
                                  coproc_filter *out)
{
    coproc_status s;
    if ((s = pred_simplify(c, a)) != COPROC_OK || (s = pred_simplify(c, b)) != COPROC_OK)
        return s;
    *out = *a;
    out->logic = logic;
    out->second = b->first;
    return COPROC_OK;
}

/* The sign of a - b of two integer columns, exact, as INT64: a - b itself
 * for 32-bit values; else d = a/2 - b/2 where it is not 0, e = a%2 - b%2
 * where it is (neither overflows, and a - b = 2d + e has d's sign when d != 0:
 * |e| = 2 needs a and b odd of opposite signs, and then d has e's sign).
 * Integers only: no float64, which a device without fp64 could not run. */
static coproc_status int_sign(ctx *c, const coproc_column *a, const coproc_column *b,
                              const coproc_column **out)
{
    coproc_status s;
    coproc_type ta = coproc_column_type(a), tb = coproc_column_type(b);
    const coproc_column *operands[2] = {a, b};
    if (coproc_column_validity(a) || coproc_column_validity(b)) {
        /* on the values alone (scatter takes no nulls), then null where either is */
        if ((s = strip_nulls(c, a, &a)) != COPROC_OK || (s = strip_nulls(c, b, &b)) != COPROC_OK ||
            (s = int_sign(c, a, b, out)) != COPROC_OK)
            return s;
        return give_validity(c, (coproc_column *)*out, operands, 2);
    }
    if ((ta == COPROC_INT32 || ta == COPROC_UINT32) && (tb == COPROC_INT32 || tb == COPROC_UINT32)) {
        const coproc_column *x, *y;  /* 32-bit values: a - b fits int64 */
        coproc_column *d;
        if ((s = as_i64(c, a, &x)) != COPROC_OK || (s = as_i64(c, b, &y)) != COPROC_OK ||
            (s = do_map(c, COPROC_ARITH_SUB, x, y, &d)) != COPROC_OK)
            return s;
        *out = d;
        return COPROC_OK;
    }
    const coproc_column *in[2] = {a, b}, *q[2], *r[2];
    coproc_value two = {.i64 = 2};
    for (int k = 0; k < 2; k++) {
        const coproc_column *x;
        coproc_column *qk, *q2, *rk;
        if ((s = as_i64(c, in[k], &x)) != COPROC_OK ||
            (s = do_map_const(c, COPROC_ARITH_DIV, x, two, &qk)) != COPROC_OK ||
            (s = do_map_const(c, COPROC_ARITH_MUL, qk, two, &q2)) != COPROC_OK ||
            (s = do_map(c, COPROC_ARITH_SUB, x, q2, &rk)) != COPROC_OK)
            return s;
        q[k] = qk, r[k] = rk;
    }
    coproc_column *d, *e, *pos, *ez;
    uint64_t count;
    coproc_filter f;
    if ((s = do_map(c, COPROC_ARITH_SUB, q[0], q[1], &d)) != COPROC_OK ||
        (s = do_map(c, COPROC_ARITH_SUB, r[0], r[1], &e)) != COPROC_OK)
        return s;
    memset(&f, 0, sizeof f);
    f.first.col = d, f.first.cmp = COPROC_CMP_EQ, f.first.a.i64 = 0;
    if ((s = do_select(c, &f, &pos, &count)) != COPROC_OK)
        return s;
    if (count && ((s = do_gather(c, e, pos, &ez)) != COPROC_OK ||
                  (s = do_scatter(c, ez, pos, d, &d)) != COPROC_OK))
        return s;
    *out = d;
    return COPROC_OK;
}

/* a - b of two columns in double, with 0 where both are the same infinity
 * (there a - b is NaN, but a == b): compared with 0 as C compares a with b. */
static coproc_status float_sign(ctx *c, const coproc_column *a, const coproc_column *b,
                                const coproc_column **out)
{
    const coproc_column *x, *y;
    coproc_column *d;
    coproc_status s;
    const coproc_column *operands[2] = {a, b};
    if (coproc_column_validity(a) || coproc_column_validity(b)) {
        if ((s = strip_nulls(c, a, &a)) != COPROC_OK || (s = strip_nulls(c, b, &b)) != COPROC_OK ||
            (s = float_sign(c, a, b, out)) != COPROC_OK)
            return s;
        return give_validity(c, (coproc_column *)*out, operands, 2);
    }
    if ((s = as_f64(c, a, &x)) != COPROC_OK || (s = as_f64(c, b, &y)) != COPROC_OK ||
        (s = do_map(c, COPROC_ARITH_SUB, x, y, &d)) != COPROC_OK)
        return s;
    for (int sign = 1; sign >= -1; sign -= 2) {
        coproc_filter f;
        memset(&f, 0, sizeof f);
        f.first.col = x, f.first.cmp = COPROC_CMP_EQ, f.first.a.f64 = sign * INFINITY;
        f.logic = COPROC_LOGIC_AND;
        f.second.col = y, f.second.cmp = COPROC_CMP_EQ, f.second.a.f64 = sign * INFINITY;
        coproc_column *pos, *zeros;
        uint64_t count;
        if ((s = do_select(c, &f, &pos, &count)) != COPROC_OK)
            return s;
        if (count && ((s = fill_col(c, COPROC_FLOAT64, count, 0, 0.0, &zeros)) != COPROC_OK ||
                      (s = do_scatter(c, zeros, pos, d, &d)) != COPROC_OK))
            return s;
    }
    *out = d;
    return COPROC_OK;
}

/* a op b of two evaluated values as a one-predicate filter. */
static coproc_status cmp_vals(ctx *c, coproc_cmp op, val a, val b, coproc_filter *f)
{
    coproc_status s;
    int fl = a.is_float || b.is_float;
    if (a.is_const && b.is_const) {
        int lt, eq, un = 0;
        if (fl) {
            double x = val_f(&a), y = val_f(&b);
            lt = x < y, eq = x == y, un = isnan(x) || isnan(y);
        } else {
            lt = a.i < b.i, eq = a.i == b.i;
        }
        int t;
        switch (op) {
        case COPROC_CMP_EQ: t = eq; break;
        case COPROC_CMP_NE: t = !eq; break;
        case COPROC_CMP_LT: t = lt; break;
        case COPROC_CMP_LE: t = lt || eq; break;
        case COPROC_CMP_GT: t = !un && !lt && !eq; break;
        default: t = !un && !lt; break;
        }
        return const_pred(c, t, f);
    }
    if (a.is_const) { /* column op constant */
        val x = a;
        a = b, b = x;
        op = coproc__cmp_swap(op);
    }
    coproc_value k;
    const coproc_column *col = a.col;
    if (!b.is_const) {
        const coproc_column *sign;
        s = fl ? float_sign(c, a.col, b.col, &sign) : int_sign(c, a.col, b.col, &sign);
        if (s != COPROC_OK)
            return s;
        col = sign;
        if (coproc_column_type(sign) == COPROC_INT64)
            k.i64 = 0;
        else
            k.f64 = 0.0;
    } else if (fl) {
        k.f64 = val_f(&b);
        if (!col_is_float(col) && (s = as_f64(c, col, &col)) != COPROC_OK)
            return s; /* float32 columns compare with a double constant in double */
    } else {
        coproc_type t = coproc_column_type(col);
        int fits = (t == COPROC_INT64) || (t == COPROC_INT32 && b.i >= INT32_MIN && b.i <= INT32_MAX) ||
                   (t == COPROC_UINT32 && b.i >= 0 && b.i <= (int64_t)UINT32_MAX);
        if (!fits && (s = as_i64(c, col, &col)) != COPROC_OK)
            return s;
        if (coproc_column_type(col) == COPROC_UINT32)
            k.u64 = (uint64_t)b.i;
        else
            k.i64 = b.i;
    }
    *f = single(col, op, k);
    return COPROC_OK;
}

static coproc_status eval_pred3(ctx *c, const coproc_expr *e, const coproc_column **out);

static coproc_status eval_pred(ctx *c, const coproc_expr *e, coproc_filter *f)
{
    coproc_filter a, b;
    val x, y;
    coproc_status s;
    switch (e->kind) {
    case COPROC__QE_CMP:
        if ((s = eval_num(c, e->a, &x)) != COPROC_OK || (s = eval_num(c, e->b, &y)) != COPROC_OK)
            return s;
        return cmp_vals(c, e->cmp, x, y, f);
    case COPROC__QE_BETWEEN:
        if ((s = eval_num(c, e->a, &x)) != COPROC_OK || (s = eval_num(c, e->b, &y)) != COPROC_OK ||
            (s = cmp_vals(c, COPROC_CMP_GE, x, y, &a)) != COPROC_OK ||
            (s = eval_num(c, e->c, &y)) != COPROC_OK || (s = cmp_vals(c, COPROC_CMP_LE, x, y, &b)) != COPROC_OK)
            return s;
        return pred_combine(c, &a, &b, COPROC_LOGIC_AND, f);
    case COPROC__QE_IN:
        if ((s = eval_num(c, e->a, &x)) != COPROC_OK)
            return s;
        for (int k = 0; k < e->n; k++) {
            if ((s = eval_num(c, e->list[k], &y)) != COPROC_OK ||
                (s = cmp_vals(c, COPROC_CMP_EQ, x, y, k ? &b : f)) != COPROC_OK)
                return s;
            a = *f;
            if (k && (s = pred_combine(c, &a, &b, COPROC_LOGIC_OR, f)) != COPROC_OK)
                return s;
        }
        return COPROC_OK;
    case COPROC__QE_AND:
    case COPROC__QE_OR:
        if ((s = eval_pred(c, e->a, &a)) != COPROC_OK || (s = eval_pred(c, e->b, &b)) != COPROC_OK)
            return s;
        return pred_combine(c, &a, &b, e->kind == COPROC__QE_AND ? COPROC_LOGIC_AND : COPROC_LOGIC_OR, f);
    case COPROC__QE_NOT: {
        const coproc_column *bl, **nc;
        int nn;
        coproc_value zero = {.i64 = 0};
        if ((s = nullable_refs(c, e->a, &nc, &nn)) != COPROC_OK)
            return s;
        free(nc);
        if (nn) { /* NOT x is true where x is false, not where x is unknown */
            if ((s = eval_pred3(c, e->a, &bl)) != COPROC_OK)
                return s;
            *f = single(bl, COPROC_CMP_EQ, zero);
            return COPROC_OK;
        }
        if ((s = eval_pred(c, e->a, &a)) != COPROC_OK || (s = pred_bool(c, &a, &bl)) != COPROC_OK)
            return s;
        *f = single(bl, COPROC_CMP_EQ, zero);
        return COPROC_OK;
    }
    default:
        return coproc__fail(c->rt, COPROC_INVALID_ARGUMENT, "%s: a number where a boolean is needed",
                            LABEL(c));
    }
}

static int is_bool_expr(const coproc_expr *e)
{
    return e->kind >= COPROC__QE_CMP;
}

/* 1 + a - b of two INT32 0/1 columns: the three-valued encoding from a
 * "true" column a and a "false" column b. */
static coproc_status three_valued(ctx *c, const coproc_column *t, const coproc_column *f,
                                  const coproc_column **out)
{
    coproc_column *d, *r;
    coproc_value one = {.i64 = 1};
    coproc_status s;
    if ((s = do_map(c, COPROC_ARITH_SUB, t, f, &d)) != COPROC_OK ||
        (s = do_map_const(c, COPROC_ARITH_ADD, d, one, &r)) != COPROC_OK)
        return s;
    *out = r;
    return COPROC_OK;
}

/* The rows where the three-valued x is (or, with is, is not) v, as a one-predicate filter. */
static coproc_filter tv_is(const coproc_column *x, coproc_cmp op, int64_t v)
{
    coproc_value k = {.i64 = v};
    return single(x, op, k);
}

/* A predicate as a three-valued INT32 column over the input's rows: 0 false,
 * 1 unknown, 2 true. */
static coproc_status eval_pred3(ctx *c, const coproc_expr *e, const coproc_column **out)
{
    coproc_status s;
    const coproc_column *a, *b, *t, *f;
    switch (e->kind) {
    case COPROC__QE_BETWEEN: {
        coproc_expr lo, hi, both;
        coproc__between_split(e, &lo, &hi, &both);
        return eval_pred3(c, &both, out);
    }
    case COPROC__QE_NOT: {
        coproc_column *m, *r;
        coproc_value m1 = {.i64 = -1}, two = {.i64 = 2};
        if ((s = eval_pred3(c, e->a, &a)) != COPROC_OK ||
            (s = do_map_const(c, COPROC_ARITH_MUL, a, m1, &m)) != COPROC_OK ||
            (s = do_map_const(c, COPROC_ARITH_ADD, m, two, &r)) != COPROC_OK)
            return s;
        *out = r;
        return COPROC_OK;
    }
    case COPROC__QE_AND:
    case COPROC__QE_OR: {
        /* AND: true when both are, false when either is; OR the other way round */
        int and = e->kind == COPROC__QE_AND;
        coproc_filter ft, ff, x, y;
        if ((s = eval_pred3(c, e->a, &a)) != COPROC_OK ||
            (s = eval_pred3(c, e->b, &b)) != COPROC_OK)
            return s;
        x = tv_is(a, COPROC_CMP_EQ, 2), y = tv_is(b, COPROC_CMP_EQ, 2);
        if ((s = pred_combine(c, &x, &y, and? COPROC_LOGIC_AND : COPROC_LOGIC_OR, &ft)) !=
            COPROC_OK)
            return s;
        x = tv_is(a, COPROC_CMP_EQ, 0), y = tv_is(b, COPROC_CMP_EQ, 0);
        if ((s = pred_combine(c, &x, &y, and? COPROC_LOGIC_OR : COPROC_LOGIC_AND, &ff)) !=
                COPROC_OK ||
            (s = pred_bool(c, &ft, &t)) != COPROC_OK || (s = pred_bool(c, &ff, &f)) != COPROC_OK)
            return s;
        return three_valued(c, t, f, out);
    }
    default: {
        /* a comparison: true where the select holds (it drops rows reading a
         * null), unknown where an operand is null, false elsewhere */
        coproc_filter ft;
        const coproc_column **nc, *unknown;
        coproc_column *t2, *d;
        coproc_value two = {.i64 = 2};
        int nn;
        if ((s = eval_pred(c, e, &ft)) != COPROC_OK || (s = pred_bool(c, &ft, &t)) != COPROC_OK ||
            (s = nullable_refs(c, e, &nc, &nn)) != COPROC_OK)
            return s;
        s = valid_col(c, nc, nn, 1, &unknown);
        free(nc);
        /* 2t + unknown: 2 true, 1 unknown, 0 false (t is 0 where unknown) */
        if (s != COPROC_OK || (s = do_map_const(c, COPROC_ARITH_MUL, t, two, &t2)) != COPROC_OK ||
            (s = do_map(c, COPROC_ARITH_ADD, t2, unknown, &d)) != COPROC_OK)
            return s;
        *out = d;
        return COPROC_OK;
    }
    }
}

/* Any expression as a column of its out type (coproc__expr_out_type). */
static coproc_status eval_col(ctx *c, const coproc_expr *e, const coproc_column **out)
{
    coproc_status s;
    if (is_bool_expr(e)) {
        const coproc_column **nc;
        int nn;
        if ((s = nullable_refs(c, e, &nc, &nn)) != COPROC_OK)
            return s;
        free(nc);
        coproc_filter f;
        if (!nn) {
            if ((s = eval_pred(c, e, &f)) != COPROC_OK)
                return s;
            return pred_bool(c, &f, out);
        }
        /* 1 where true, 0 where false, null where unknown */
        const coproc_column *tv, *t;
        coproc_column *bits;
        if ((s = eval_pred3(c, e, &tv)) != COPROC_OK)
            return s;
        f = tv_is(tv, COPROC_CMP_EQ, 2);
        if ((s = pred_bool(c, &f, &t)) != COPROC_OK ||
            (s = and_bitmap(c, c->in->rows, NULL, 0, coproc_column_host_data(tv), &bits)) !=
                COPROC_OK)
            return s;
        if ((s = coproc_column_set_validity((coproc_column *)t, bits)) != COPROC_OK) {
            coproc_column_free(bits);
            return coproc__fail(c->rt, s, "%s: a validity: %s", LABEL(c), coproc_status_message(s));
        }
        *out = t;
        return COPROC_OK;
    }
    val v;
    if ((s = eval_num(c, e, &v)) != COPROC_OK)
        return s;
    if (e->kind == COPROC__QE_COLUMN) {
        *out = v.col;
        return COPROC_OK;
    }
    return val_col(c, &v, v.is_float ? COPROC_FLOAT64 : COPROC_INT64, out);
}

/* ---------------------------------------------------------------- nodes */

static void set_input(ctx *c, const rel *in, const coproc__schema *schema)
{
    c->in = in;
    c->schema = schema;
}

static coproc_status run_scan(ctx *c, const coproc_node *n, rel *out)
{
    const coproc_table *t = n->table;
    coproc_status s = rel_init(c, out, n->schema.n, t->rows);
    for (int i = 0; s == COPROC_OK && i < n->schema.n; i++) {
        const coproc_column *col = coproc_table_column(t, n->schema.names[i]);
        if (!col || coproc_column_type(col) != n->schema.types[i] || coproc_column_length(col) != t->rows)
            return coproc__fail(c->rt, COPROC_INVALID_ARGUMENT,
                                "%s: the table's column \"%s\" is missing or changed since the plan "
                                "was built", n->label, n->schema.names[i]);
        if (coproc_column_device(col) >= 0) {
            coproc_column *h;
            if ((s = copy_col(c, col, &h)) == COPROC_OK)
                s = rel_set(c, out, i, h);
        } else {
            out->cols[i] = (coproc_column *)col; /* borrowed: the table outlives the run */
        }
    }
    return s;
}

static coproc_status run_filter(ctx *c, const coproc_node *n, rel *in, rel *out)
{
    coproc_filter f;
    coproc_column *pos;
    uint64_t count;
    coproc_status s;
    set_input(c, in, &n->in->schema);
    if ((s = eval_pred(c, n->pred, &f)) != COPROC_OK || (s = do_select(c, &f, &pos, &count)) != COPROC_OK ||
        (s = rel_init(c, out, in->n, count)) != COPROC_OK)
        return s;
    if (count == in->rows) { /* every row passes: the columns as they are */
        for (int i = 0; i < in->n; i++)
            rel_pass(in, i, out, i);
        return COPROC_OK;
    }
    return gather_all(c, in, pos, out, 0);
}

static coproc_status run_project(ctx *c, const coproc_node *n, rel *in, rel *out)
{
    coproc_status s = rel_init(c, out, n->n, in->rows);
    set_input(c, in, &n->in->schema);
    for (int j = 0; s == COPROC_OK && j < n->n; j++) {
        const coproc_expr *e = n->exprs[j];
        if (e->kind == COPROC__QE_COLUMN) { /* the column itself */
            int i = coproc__schema_find(&n->in->schema, e->name);
            if (i < 0)
                return coproc__fail(c->rt, COPROC_INVALID_ARGUMENT, "%s: no column \"%s\"",
                                    n->label, e->name);
            rel_pass(in, i, out, j);
            continue;
        }
        const coproc_column *col;
        if ((s = eval_col(c, e, &col)) == COPROC_OK)
            s = rel_set(c, out, j, col);
    }
    return s;
}

/* Join keys of one type: as they are when the types agree, else both as int64. */
static coproc_status join_keys(ctx *c, const coproc_column **pk, const coproc_column **bk)
{
    if (coproc_column_type(*pk) == coproc_column_type(*bk))
        return COPROC_OK;
    coproc_status s = as_i64(c, *pk, pk);
    return s == COPROC_OK ? as_i64(c, *bk, bk) : s;
}

/* A key column of one side, as a host column (the composite-key operators
 * take columns that live in one place). */
static coproc_status host_key(ctx *c, const coproc_column *col, const coproc_column **out)
{
    if (coproc_column_device(col) < 0) {
        *out = col;
        return COPROC_OK;
    }
    coproc_column *h;
    coproc_status s = copy_col(c, col, &h);
    *out = h;
    return s;
}

/* An operator's failure, named after the node (its message kept). */
static coproc_status op_failed(ctx *c, coproc_status s, const char *what)
{
    char msg[400];
    coproc__errmsg_copy(c->rt, msg, sizeof msg);
    return coproc__fail(c->rt, s, "%s: %s: %s", LABEL(c), what, msg);
}

/* Probe key k as the build side's codes where the two sides' strings have
 * different dictionaries (plan.h, key_remap): each code looked up in the
 * map, -1 where the build side lacks the string (it then matches nothing). */
static coproc_status remap_key(ctx *c, const coproc_node *n, int k, const coproc_column **key)
{
    const int32_t *map = n->key_remap[k];
    if (!map)
        return COPROC_OK;
    int pi = coproc__schema_find(&n->in->schema, n->probe_keys[k]);
    const struct coproc__dict *d = n->in->schema.dicts[pi];
    coproc_column *m, *mapped;
    const coproc_column *pos;
    coproc_status s = coproc_column_host_alloc(c->rt, COPROC_INT32, (size_t)d->n, &m);
    if (s != COPROC_OK)
        return op_failed(c, s, "string key map");
    if (d->n)
        memcpy(coproc_column_host_data(m), map, (size_t)d->n * sizeof *map);
    const coproc_column *codes;
    if ((s = tmp_push(c, m)) != COPROC_OK || (s = strip_nulls(c, *key, &codes)) != COPROC_OK ||
        (s = do_cast(c, codes, COPROC_UINT32, &pos)) != COPROC_OK) /* codes are >= 0 */
        return s;
    if (coproc_column_validity(*key)) /* a null row's code may be anything: look up 0 there */
        fill_nulls_where((coproc_column *)pos, *key, 0);
    if ((s = do_gather(c, m, pos, &mapped)) != COPROC_OK ||
        (s = give_validity(c, mapped, key, 1)) != COPROC_OK) /* and keep the row null */
        return s;
    *key = mapped;
    return COPROC_OK;
}

/* A join on several key columns: coproc_hash_join_keys or
 * coproc_semi_join_keys over host copies of the keys (types made to agree
 * pairwise as for one key). */
static coproc_status run_join_composite(ctx *c, const coproc_node *n, rel *probe, rel *build,
                                        rel *out)
{
    int nk = n->njoin_keys;
    const coproc_column *pk[16], *bk[16];
    coproc_status s = COPROC_OK;
    for (int k = 0; k < nk && s == COPROC_OK; k++) {
        int pi = coproc__schema_find(&n->in->schema, n->probe_keys[k]);
        int bi = coproc__schema_find(&n->build->schema, n->build_keys[k]);
        if (pi < 0 || bi < 0)
            return coproc__fail(c->rt, COPROC_INVALID_ARGUMENT, "%s: a key column is missing",
                                n->label);
        pk[k] = probe->cols[pi], bk[k] = build->cols[bi];
        if ((s = remap_key(c, n, k, &pk[k])) == COPROC_OK &&
            (s = join_keys(c, &pk[k], &bk[k])) == COPROC_OK &&
            (s = host_key(c, pk[k], &pk[k])) == COPROC_OK)
            s = host_key(c, bk[k], &bk[k]);
    }
    if (s != COPROC_OK)
        return s;
    if (n->join == COPROC_JOIN_SEMI) {
        coproc_column *pos = NULL;
        uint64_t count = 0;
        if ((s = coproc_semi_join_keys(c->rt, nk, pk, bk, &pos, &count)) != COPROC_OK)
            return op_failed(c, s, "semi-join");
        s = tmp_push(c, pos);
        if (s == COPROC_OK)
            s = rel_init(c, out, probe->n, count);
        if (s != COPROC_OK)
            return s;
        if (count == probe->rows) {
            for (int i = 0; i < probe->n; i++)
                rel_pass(probe, i, out, i);
            return COPROC_OK;
        }
        return gather_all(c, probe, pos, out, 0);
    }
    coproc_join_result j;
    if ((s = coproc_hash_join_keys(c->rt, nk, bk, pk, &j)) != COPROC_OK) /* builds on bk */
        return op_failed(c, s, "hash join");
    if ((s = tmp_push(c, j.left)) != COPROC_OK) {
        coproc_column_free(j.right);
        return s;
    }
    if ((s = tmp_push(c, j.right)) != COPROC_OK ||
        (s = rel_init(c, out, probe->n + build->n, j.count)) != COPROC_OK ||
        (s = gather_all(c, probe, j.right, out, 0)) != COPROC_OK)
        return s;
    return gather_all(c, build, j.left, out, probe->n);
}

static coproc_status run_join(ctx *c, const coproc_node *n, rel *probe, rel *build, rel *out)
{
    if (n->njoin_keys > 1)
        return run_join_composite(c, n, probe, build, out);
    int pi = coproc__schema_find(&n->in->schema, n->probe_key);
    int bi = coproc__schema_find(&n->build->schema, n->build_key);
    if (pi < 0 || bi < 0)
        return coproc__fail(c->rt, COPROC_INVALID_ARGUMENT, "%s: a key column is missing", n->label);
    const coproc_column *pk = probe->cols[pi], *bk = build->cols[bi];
    coproc_status s = remap_key(c, n, 0, &pk);
    if (s == COPROC_OK)
        s = join_keys(c, &pk, &bk);
    if (s != COPROC_OK)
        return s;
    coproc_op o;
    coproc_result r;
    if (n->join == COPROC_JOIN_SEMI) {
        coproc_op_init(&o, COPROC_OP_SEMI_JOIN);
        o.a = pk, o.b = bk;
        if ((s = op_run(c, &o, &r, "semi-join")) != COPROC_OK ||
            (s = rel_init(c, out, probe->n, r.count)) != COPROC_OK)
            return s;
        if (r.count == probe->rows) {
            for (int i = 0; i < probe->n; i++)
                rel_pass(probe, i, out, i);
            return COPROC_OK;
        }
        return gather_all(c, probe, r.column, out, 0);
    }
    coproc_op_init(&o, COPROC_OP_HASH_JOIN);
    o.a = bk, o.b = pk; /* builds on a */
    if ((s = op_run(c, &o, &r, "hash join")) != COPROC_OK ||
        (s = rel_init(c, out, probe->n + build->n, r.join.count)) != COPROC_OK ||
        (s = gather_all(c, probe, r.join.right, out, 0)) != COPROC_OK)
        return s;
    return gather_all(c, build, r.join.left, out, probe->n);
}

/* ---------------------------------------------------------------- group-by */

/* Dense ranks (UINT64) of an integer column's values in ascending order, and
 * how many distinct values there are. */
static coproc_status rank_col(ctx *c, const coproc_column *col, const coproc_column **out,
                              uint64_t *distinct)
{
    coproc_group_result g;
    coproc_op o;
    coproc_result j;
    coproc_column *zeros, *ranks;
    coproc_status s;
    if ((s = do_group_by(c, col, NULL, COPROC_GROUP_COUNT, &g)) != COPROC_OK)
        return s;
    /* null keys never join: their rows keep the fill, one rank past the keys' */
    int nulls = coproc_column_validity(col) != NULL;
    coproc_op_init(&o, COPROC_OP_HASH_JOIN);
    o.a = g.keys, o.b = col; /* left: the key's rank, right: the row */
    if ((s = op_run(c, &o, &j, "hash join")) != COPROC_OK ||
        (s = fill_col(c, COPROC_UINT32, coproc_column_length(col), nulls ? (int64_t)g.groups : 0, 0,
                      &zeros)) != COPROC_OK ||
        (s = do_scatter(c, j.join.left, j.join.right, zeros, &ranks)) != COPROC_OK)
        return s;
    *distinct = g.groups + nulls;
    return do_cast(c, ranks, COPROC_UINT64, out);
}

/* One UINT64 key per distinct combination of the key columns, ordered as the
 * combinations are (first key most significant): each key as a digit -
 * value - min where the range is at most 2^32, else its dense rank - folded
 * in mixed radix, the key so far ranked again where the radix would overflow. */
static coproc_status combined_key(ctx *c, const coproc_column *const *keys, int nkeys,
                                  const coproc_column **out)
{
    const coproc_column *acc = NULL;
    uint64_t radix_acc = 1;
    coproc_status s;
    for (int k = 0; k < nkeys; k++) {
        coproc_scalar mn, mx;
        if ((s = do_reduce(c, COPROC_REDUCE_MIN, keys[k], &mn)) != COPROC_OK ||
            (s = do_reduce(c, COPROC_REDUCE_MAX, keys[k], &mx)) != COPROC_OK)
            return s;
        coproc_type t = coproc_column_type(keys[k]);
        int sgn = t == COPROC_INT32 || t == COPROC_INT64;
        uint64_t lo = sgn ? (uint64_t)mn.v.i64 : mn.v.u64, hi = sgn ? (uint64_t)mx.v.i64 : mx.v.u64;
        if (mn.count == 0) /* every key null (or no rows) */
            lo = hi = 0;
        uint64_t range = hi - lo; /* radix - 1 */
        int nulls = coproc_column_validity(keys[k]) != NULL; /* null: one digit past the values */
        const coproc_column *digit;
        uint64_t radix;
        if (range < ((uint64_t)1 << 32)) {
            const coproc_column *u;
            coproc_column *d;
            coproc_value v = {.u64 = lo};
            if ((s = do_cast(c, keys[k], COPROC_UINT64, &u)) != COPROC_OK ||
                (s = do_map_const(c, COPROC_ARITH_SUB, u, v, &d)) != COPROC_OK)
                return s;
            if (nulls)
                fill_nulls(d, range + 1);
            digit = d;
            radix = range + 1 + nulls;
        } else if ((s = rank_col(c, keys[k], &digit, &radix)) != COPROC_OK) {
            return s;
        }
        if (!acc) {
            acc = digit;
            radix_acc = radix;
            continue;
        }
        if (radix_acc > UINT64_MAX / radix &&
            (s = rank_col(c, acc, &acc, &radix_acc)) != COPROC_OK)
            return s;
        coproc_column *m, *sum;
        coproc_value rv = {.u64 = radix};
        if ((s = do_map_const(c, COPROC_ARITH_MUL, acc, rv, &m)) != COPROC_OK ||
            (s = do_map(c, COPROC_ARITH_ADD, m, digit, &sum)) != COPROC_OK)
            return s;
        acc = sum;
        radix_acc *= radix;
    }
    *out = acc;
    return COPROC_OK;
}

/* An aggregate's argument as a column for the operators: integers as they
 * are (uint64 as int64: MIN/MAX compare int64 values), floats as they are. */
static coproc_status agg_arg(ctx *c, const coproc_expr *arg, const coproc_column **out)
{
    coproc_status s = eval_col(c, arg, out);
    if (s == COPROC_OK && coproc_column_type(*out) == COPROC_UINT64)
        s = as_i64(c, *out, out);
    return s;
}

/* One output row from scalars (no keys). */
static coproc_status group_all(ctx *c, const coproc_node *n, rel *in, rel *out)
{
    coproc_status s = rel_init(c, out, n->naggs, 1);
    size_t rows = in->rows;
    for (int a = 0; s == COPROC_OK && a < n->naggs; a++) {
        const coproc__agg *ag = &n->aggs[a];
        coproc_type t = n->schema.types[a];
        int64_t iv = 0;
        double fv = 0;
        int null_result = 0; /* SQL's NULL: an argument with nulls and no valid value */
        const coproc_column **nc;
        int nn = 0;
        if (ag->arg && (s = nullable_refs(c, ag->arg, &nc, &nn)) != COPROC_OK)
            return s;
        if (ag->arg)
            free(nc);
        if (ag->fn == COPROC_AGG_COUNT && !nn) {
            iv = (int64_t)rows;
        } else if (ag->fn == COPROC_AGG_COUNT) { /* count(arg): its valid rows */
            const coproc_column *v;
            coproc_scalar sc;
            if ((s = agg_arg(c, ag->arg, &v)) != COPROC_OK ||
                (s = do_reduce(c, COPROC_REDUCE_COUNT, v, &sc)) != COPROC_OK)
                return s;
            iv = (int64_t)sc.count;
        } else {
            const coproc_column *v;
            coproc_scalar sc;
            coproc_reduce_op op = ag->fn == COPROC_AGG_MIN ? COPROC_REDUCE_MIN
                                  : ag->fn == COPROC_AGG_MAX ? COPROC_REDUCE_MAX : COPROC_REDUCE_SUM;
            if ((s = agg_arg(c, ag->arg, &v)) != COPROC_OK || (s = do_reduce(c, op, v, &sc)) != COPROC_OK)
                return s;
            size_t valid = rows;
            if (coproc_column_validity(v)) {
                valid = (size_t)sc.count;
                null_result = valid == 0;
            }
            if (sc.type == COPROC_FLOAT32 || sc.type == COPROC_FLOAT64) {
                fv = sc.v.f64;
            } else {
                iv = sc.type == COPROC_UINT32 || sc.type == COPROC_UINT64 ? (int64_t)sc.v.u64 : sc.v.i64;
                fv = (double)iv; /* AVG of integers: the int64 sum / rows */
            }
            if ((ag->fn == COPROC_AGG_MIN || ag->fn == COPROC_AGG_MAX) && rows == 0)
                iv = 0, fv = 0; /* MIN/MAX of no rows: 0 */
            if (ag->fn == COPROC_AGG_AVG)
                fv = valid ? fv / (double)valid : NAN;
        }
        coproc_column *col, *bits;
        if ((s = fill_col(c, t, 1, iv, fv, &col)) == COPROC_OK && null_result) {
            if ((s = fill_col(c, COPROC_UINT32, 1, 0, 0, &bits)) == COPROC_OK &&
                tmp_detach(c, bits) && (s = coproc_column_set_validity(col, bits)) != COPROC_OK) {
                coproc_column_free(bits);
                s = coproc__fail(c->rt, s, "%s: a validity: %s", LABEL(c),
                                 coproc_status_message(s));
            }
        }
        if (s == COPROC_OK)
            s = rel_set(c, out, a, col);
    }
    return s;
}

static coproc_status run_group_by(ctx *c, const coproc_node *n, rel *in, rel *out)
{
    set_input(c, in, &n->in->schema);
    if (n->n == 0)
        return group_all(c, n, in, out);
    coproc_status s = rel_init(c, out, n->schema.n, 0);
    if (s != COPROC_OK)
        return s;
    if (in->rows == 0) { /* no rows, no groups */
        for (int j = 0; s == COPROC_OK && j < n->schema.n; j++) {
            coproc_column *e;
            if ((s = fill_col(c, n->schema.types[j], 0, 0, 0, &e)) == COPROC_OK)
                s = rel_set(c, out, j, e);
        }
        return s;
    }
    const coproc_column *keys[8], *key;
    for (int k = 0; k < n->n; k++) {
        int i = coproc__schema_find(&n->in->schema, n->names[k]);
        if (i < 0)
            return coproc__fail(c->rt, COPROC_INVALID_ARGUMENT, "%s: no column \"%s\"", n->label,
                                n->names[k]);
        keys[k] = in->cols[i];
    }
    coproc_column *iota;
    coproc_group_result base;
    if (n->n == 1)
        key = keys[0];
    else if ((s = combined_key(c, keys, n->n, &key)) != COPROC_OK)
        return s;
    /* the groups, each group's first row (the min of the row numbers) and count */
    if ((s = iota_col(c, in->rows, &iota)) != COPROC_OK || (s = do_group_by(c, key, iota, COPROC_GROUP_MIN, &base)) != COPROC_OK)
        return s;
    out->rows = base.groups;
    for (int k = 0; k < n->n; k++) {
        coproc_column *g;
        if ((s = do_gather(c, keys[k], base.min, &g)) != COPROC_OK ||
            (s = rel_set(c, out, k, g)) != COPROC_OK)
            return s;
    }
    for (int a = 0; a < n->naggs; a++) {
        const coproc__agg *ag = &n->aggs[a];
        coproc_type t = n->schema.types[n->n + a];
        const coproc_column *v, *r;
        coproc_group_result g;
        const coproc_column **nc;
        int nn = 0;
        if (ag->arg && (s = nullable_refs(c, ag->arg, &nc, &nn)) != COPROC_OK)
            return s;
        if (ag->arg)
            free(nc);
        if (ag->fn == COPROC_AGG_COUNT && !nn) {
            if ((s = do_cast(c, base.count, COPROC_INT64, &r)) != COPROC_OK)
                return s;
        } else if (ag->fn == COPROC_AGG_COUNT) { /* count(arg): the group's valid values */
            if ((s = agg_arg(c, ag->arg, &v)) != COPROC_OK ||
                (s = do_group_by(c, key, v, COPROC_GROUP_COUNT, &g)) != COPROC_OK ||
                (s = do_cast(c, g.count, COPROC_INT64, &r)) != COPROC_OK)
                return s;
        } else {
            unsigned want = ag->fn == COPROC_AGG_MIN   ? COPROC_GROUP_MIN
                            : ag->fn == COPROC_AGG_MAX ? COPROC_GROUP_MAX
                                                       : COPROC_GROUP_SUM; /* SUM, AVG */
            if ((s = agg_arg(c, ag->arg, &v)) != COPROC_OK ||
                (s = do_group_by(c, key, v, want, &g)) != COPROC_OK)
                return s;
            if (g.groups != base.groups)
                return coproc__fail(c->rt, COPROC_INTERNAL, "%s: %zu groups, then %zu", n->label,
                                    base.groups, g.groups);
            switch (ag->fn) {
            case COPROC_AGG_SUM:
                s = do_cast(c, g.sum, t, &r);
                break;
            case COPROC_AGG_MIN:
            case COPROC_AGG_MAX:
                s = do_cast(c, ag->fn == COPROC_AGG_MIN ? g.min : g.max, t, &r);
                break;
            default: { /* AVG */
                const coproc_column *sum, *cnt;
                coproc_column *avg;
                if ((s = coproc_column_type(g.sum) == COPROC_UINT64 ? as_f64(c, g.sum, &sum)
                                                                    : do_cast(c, g.sum, COPROC_FLOAT64, &sum)) != COPROC_OK ||
                    (s = do_cast(c, g.count, COPROC_FLOAT64, &cnt)) != COPROC_OK ||
                    (s = do_map(c, COPROC_ARITH_DIV, sum, cnt, &avg)) != COPROC_OK)
                    return s;
                r = avg;
                break;
            }
            }
            if (s != COPROC_OK)
                return s;
        }
        if ((s = rel_set(c, out, n->n + a, r)) != COPROC_OK)
            return s;
    }
    return COPROC_OK;
}

/* ---------------------------------------------------------------- order-by */

/* Ranks so far (perm, NULL: identity) refined by one more significant key:
 * perm = perm[argsort(key[perm])]. */
static coproc_status sort_pass(ctx *c, const coproc_column *key, const coproc_column **perm)
{
    coproc_column *k = NULL, *p, *np;
    coproc_status s;
    if (*perm && (s = do_gather(c, key, *perm, &k)) != COPROC_OK)
        return s;
    if ((s = do_argsort(c, k ? k : key, &p)) != COPROC_OK)
        return s;
    if (!*perm) {
        *perm = p;
        return COPROC_OK;
    }
    if ((s = do_gather(c, *perm, p, &np)) != COPROC_OK)
        return s;
    *perm = np;
    return COPROC_OK;
}

/* Sort passes for one key, least significant first. */
static coproc_status sort_key(ctx *c, const coproc_column *col, int desc, const coproc_column **perm)
{
    coproc_type t = coproc_column_type(col);
    coproc_status s;
    coproc_column *x, *y;
    if (t != COPROC_FLOAT32 && t != COPROC_FLOAT64) {
        if (!desc)
            return sort_pass(c, col, perm);
        /* ~v = -v - 1 reverses the order of int64 (uint64) values, wrapping included */
        coproc_value m1 = {.i64 = -1};
        if (t != COPROC_UINT64 && (s = as_i64(c, col, &col)) != COPROC_OK)
            return s;
        if ((s = do_map_const(c, COPROC_ARITH_MUL, col, m1, &x)) != COPROC_OK ||
            (s = do_map_const(c, COPROC_ARITH_ADD, x, m1, &y)) != COPROC_OK)
            return s;
        return sort_pass(c, y, perm);
    }
    /* floats: + 0.0 makes -0.0 equal to +0.0; descending sorts -v (NaN still
     * last), then NaN first by a stable pass over "is a number" */
    coproc_value zero = {.f64 = 0.0}, m1 = {.f64 = -1.0};
    if (!desc) {
        if ((s = do_map_const(c, COPROC_ARITH_ADD, col, zero, &x)) != COPROC_OK)
            return s;
        return sort_pass(c, x, perm);
    }
    if ((s = do_map_const(c, COPROC_ARITH_MUL, col, m1, &x)) != COPROC_OK ||
        (s = do_map_const(c, COPROC_ARITH_ADD, x, zero, &y)) != COPROC_OK ||
        (s = sort_pass(c, y, perm)) != COPROC_OK)
        return s;
    coproc_value ninf = {.f64 = -INFINITY};
    coproc_filter f = single(col, COPROC_CMP_GE, ninf); /* every number, no NaN */
    coproc_column *pos;
    uint64_t count;
    if ((s = do_select(c, &f, &pos, &count)) != COPROC_OK || count == coproc_column_length(col))
        return s;
    const coproc_column *isnum;
    if ((s = pos_bool(c, pos, count, &isnum)) != COPROC_OK)
        return s;
    return sort_pass(c, isnum, perm);
}

static coproc_status run_order_by(ctx *c, const coproc_node *n, rel *in, rel *out)
{
    const coproc_column *perm = NULL;
    coproc_status s;
    set_input(c, in, &n->in->schema);
    for (int k = n->n - 1; k >= 0; k--) {
        int i = coproc__schema_find(&n->in->schema, n->names[k]);
        if (i < 0)
            return coproc__fail(c->rt, COPROC_INVALID_ARGUMENT, "%s: no column \"%s\"", n->label,
                                n->names[k]);
        if ((s = sort_key(c, in->cols[i], n->desc[k], &perm)) != COPROC_OK)
            return s;
        if (coproc_column_validity(in->cols[i])) {
            /* then by "is null" (more significant than the values, stable):
             * nulls last, or first (the values' passes put them in input order) */
            const coproc_column *isnull;
            if ((s = valid_col(c, (const coproc_column *const *)&in->cols[i], 1, !n->nulls_first[k],
                               &isnull)) != COPROC_OK ||
                (s = sort_pass(c, isnull, &perm)) != COPROC_OK)
                return s;
        }
    }
    size_t rows = in->rows;
    if (n->limit && n->limit < rows) {
        coproc_column *first;
        rows = (size_t)n->limit;
        if ((s = fill_col(c, COPROC_UINT32, rows, 0, 0, &first)) != COPROC_OK)
            return s;
        memcpy(coproc_column_host_data(first), coproc_column_host_data(perm), rows * sizeof(uint32_t));
        perm = first;
    }
    if ((s = rel_init(c, out, in->n, rows)) != COPROC_OK)
        return s;
    return gather_all(c, in, perm, out, 0);
}

/* ---------------------------------------------------------------- the tree */

static coproc_status run_node(ctx *c, const coproc_node *n, rel *out);

/* Bytes copied between host and devices so far, every device together (other
 * work running on the runtime at the same time counts too). */
static uint64_t bytes_moved(const ctx *c)
{
    uint64_t b = 0;
    for (int d = 0; d < coproc_device_count(c->rt); d++) {
        coproc_device_stats st;
        memset(&st, 0, sizeof st);
        st.struct_size = sizeof st;
        if (coproc_device_stats_get(c->rt, d, &st) == COPROC_OK)
            b += st.bytes_h2d + st.bytes_d2h;
    }
    return b;
}

static uint64_t rel_bytes(const rel *r)
{
    uint64_t b = 0;
    for (int i = 0; i < r->n; i++)
        b += (uint64_t)coproc_column_length(r->cols[i]) * coproc_type_size(coproc_column_type(r->cols[i]));
    return b;
}

static coproc_status report(ctx *c, const coproc_node *n, double start, uint64_t rows_in,
                            uint64_t bytes_in, uint64_t moved0)
{
    coproc_pipeline_info info;
    memset(&info, 0, sizeof info);
    info.bytes_in = bytes_in;
    info.bytes_moved = bytes_moved(c) - moved0;
    snprintf(info.what, sizeof info.what, "operators: %s", n->label);
    info.device = c->device;
    info.fused = 0;
    info.start_s = start;
    info.end_s = coproc__qrun_now(c->run);
    info.estimate_s = -1;
    info.rows_in = rows_in;
    return coproc__qrun_report(c->run, &info);
}

/* Every output column of the node's schema type, and as many columns. */
static coproc_status check_schema(ctx *c, const coproc_node *n, const rel *r)
{
    if (r->n != n->schema.n)
        return coproc__fail(c->rt, COPROC_INTERNAL, "%s: %d columns, the schema has %d", n->label,
                            r->n, n->schema.n);
    for (int i = 0; i < r->n; i++)
        if (coproc_column_type(r->cols[i]) != n->schema.types[i] ||
            coproc_column_length(r->cols[i]) != r->rows)
            return coproc__fail(c->rt, COPROC_INTERNAL, "%s: column \"%s\" is %s of %zu rows, "
                                "expected %s of %zu", n->label, n->schema.names[i],
                                coproc_type_name(coproc_column_type(r->cols[i])),
                                coproc_column_length(r->cols[i]),
                                coproc_type_name(n->schema.types[i]), r->rows);
    return COPROC_OK;
}

static coproc_status run_node(ctx *c, const coproc_node *n, rel *out)
{
    rel in = {0}, build = {0};
    coproc_status s = COPROC_OK;
    memset(out, 0, sizeof *out);
    if (n->kind != COPROC__QN_SCAN && (s = run_node(c, n->in, &in)) != COPROC_OK)
        return s;
    if (n->kind == COPROC__QN_JOIN && (s = run_node(c, n->build, &build)) != COPROC_OK) {
        rel_free(&in);
        return s;
    }
    c->node = n;
    c->device = -1;
    double start = coproc__qrun_now(c->run);
    uint64_t rows_in = n->kind == COPROC__QN_SCAN ? n->table->rows : in.rows + build.rows;
    uint64_t bytes_in = rel_bytes(&in) + rel_bytes(&build), moved0 = bytes_moved(c);
    switch (n->kind) {
    case COPROC__QN_SCAN: s = run_scan(c, n, out); break;
    case COPROC__QN_FILTER: s = run_filter(c, n, &in, out); break;
    case COPROC__QN_PROJECT: s = run_project(c, n, &in, out); break;
    case COPROC__QN_JOIN: s = run_join(c, n, &in, &build, out); break;
    case COPROC__QN_GROUP_BY: s = run_group_by(c, n, &in, out); break;
    case COPROC__QN_ORDER_BY: s = run_order_by(c, n, &in, out); break;
    default:
        s = coproc__fail(c->rt, COPROC_INTERNAL, "%s: unknown node kind %d", n->label, (int)n->kind);
    }
    set_input(c, NULL, NULL);
    tmp_free_all(c); /* before the inputs: temporaries may read them */
    rel_free(&build);
    rel_free(&in);
    if (s == COPROC_OK)
        s = check_schema(c, n, out);
    if (s == COPROC_OK)
        s = report(c, n, start, rows_in, n->kind == COPROC__QN_SCAN ? rel_bytes(out) : bytes_in,
                   moved0);
    if (s != COPROC_OK)
        rel_free(out);
    return s;
}

coproc_status coproc__operators_run(coproc__qrun *run, const coproc_node *root, coproc_table **out)
{
    *out = NULL;
    ctx c = {.run = run, .rt = run->rt, .device = -1};
    const char *fail = getenv("COPROC_TEST_QUERY_FAIL_OP");
    if (fail && *fail)
        c.fail_op = strtol(fail, NULL, 10);
    rel r;
    coproc_status s = run_node(&c, root, &r);
    free(c.tmp);
    c.tmp = NULL, c.tmpcap = 0;
    if (s != COPROC_OK)
        return s;
    c.node = root;
    coproc_table *t;
    if ((s = coproc_table_create(run->rt, &t)) != COPROC_OK) {
        rel_free(&r);
        return s;
    }
    for (int i = 0; s == COPROC_OK && i < r.n; i++) {
        coproc_column *col = r.cols[i];
        if (!r.own[i]) { /* the scanned table's, or shared with another column: copy */
            s = copy_col(&c, col, &col);
            tmp_detach(&c, col);
        }
        r.own[i] = 0;
        if (s == COPROC_OK)
            s = coproc__table_add_owned(t, root->schema.names[i], col);
    }
    for (int i = 0; i < r.n; i++) /* columns not handed to the table (after an error) */
        if (r.own[i])
            coproc_column_free(r.cols[i]);
    free(r.cols);
    free(r.own);
    free(c.tmp);
    if (s != COPROC_OK) {
        coproc_table_free(t);
        return s;
    }
    *out = t;
    return COPROC_OK;
}
