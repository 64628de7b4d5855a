/* operators.c - the public operator entry points. One path per operation:
 * each call describes itself as a coproc_op; over host columns it runs as a
 * task (coproc_submit + coproc_wait: placed, streamed when over the budget),
 * over device columns it runs on their device at once, timed into the
 * device's model with the features of the operator table (ops/table.h). */
#include <string.h>

#include "core/runtime.h"
#include "data/column.h"
#include "data/residency.h"
#include "exec/hostrun.h"
#include "ops/ops.h"
#include "ops/table.h"

/* Host columns of rt take the task path. */
static int on_host(coproc_runtime *rt, const coproc_column *col)
{
    return rt && col && col->rt == rt && !col->dev;
}

/* The device an operator on `col` runs on and is timed on, or NULL when the
 * implementation will refuse the arguments anyway (it then reports the error). */
static coproc__device *device_of(coproc_runtime *rt, const coproc_column *col)
{
    return rt && col && col->rt == rt && col->dev ? col->dev : NULL;
}

static coproc_status run_task(coproc_runtime *rt, const coproc_op *op, coproc_result *r)
{
    coproc_task *t;
    coproc_status s = coproc_submit(rt, op, &t);
    if (s != COPROC_OK)
        memset(r, 0, sizeof *r);
    return s == COPROC_OK ? coproc_wait(t, r) : s;
}

/* Columns that wrap caller memory (coproc_column_wrap, Arrow zero-copy
 * imports) are read-only: writing into them would change the producer's
 * immutable, maybe shared, data. An empty column has nothing to write. A
 * column of another runtime is left to the shared checks, which name that. */
static int read_only(coproc_runtime *rt, const coproc_column *col)
{
    return col && col->rt == rt && (col->host_wrapped ||
                   (!col->dev && col->length && !col->host_owned && !col->pinned));
}

static coproc_status refuse_write(coproc_runtime *rt, const char *what)
{
    return coproc__fail(rt, COPROC_INVALID_ARGUMENT, "%s: the column wraps caller memory (a "
                        "zero-copy import or coproc_column_wrap) and is read-only; write into a "
                        "copy", what);
}

/* A host column's rows replaced by those of src (same type and length), its
 * cached copies dropped; src's validity (taken from src) replaces col's. */
static void host_overwrite(coproc_column *col, coproc_column *src)
{
    if (col->length)
        memcpy(col->host, src->host, col->length * coproc_type_size(col->type));
    for (int d = 0; d < col->rt->device_count; d++)
        coproc__residency_forget(&col->rt->devices[d], col);
    if (col->validity || src->validity) {
        coproc_column_free(col->validity);
        col->validity = NULL;
        coproc__attach_validity(col, src->validity);
        src->validity = NULL;
    }
}

#define OBSERVED(col, op, result, call)                                                     \
    do {                                                                                    \
        coproc__device *dev_ = device_of(rt, (col));                                        \
        coproc__op_call t_;                                                                 \
        coproc__op_call_begin(rt, dev_, &t_, (op));                                         \
        coproc_status s_ = (call);                                                          \
        coproc__op_call_end(rt, dev_, &t_, (op), (result), s_);                             \
        return s_;                                                                          \
    } while (0)

coproc_status coproc_reduce(coproc_runtime *rt, coproc_reduce_op op, const coproc_column *col,
                            coproc_scalar *out)
{
    coproc_op o;
    coproc_op_init(&o, COPROC_OP_REDUCE);
    o.a = col;
    o.reduce = op;
    coproc_result r;
    if (on_host(rt, col) && out) {
        coproc_status s = run_task(rt, &o, &r);
        if (s == COPROC_OK)
            *out = r.scalar;
        return s;
    }
    memset(&r, 0, sizeof r);
    OBSERVED(col, &o, &r, coproc__reduce_run(rt, op, col, out));
}

coproc_status coproc_reduce_where(coproc_runtime *rt, coproc_reduce_op op,
                                  const coproc_column *col, const coproc_column *bitmap,
                                  coproc_scalar *out)
{
    coproc_op o;
    coproc_op_init(&o, COPROC_OP_REDUCE);
    o.variant = COPROC_VARIANT_REDUCE_WHERE;
    o.a = col;
    o.b = bitmap;
    o.reduce = op;
    coproc_result r;
    if (on_host(rt, col) && out) {
        coproc_status s = run_task(rt, &o, &r);
        if (s == COPROC_OK)
            *out = r.scalar;
        return s;
    }
    memset(&r, 0, sizeof r);
    OBSERVED(col, &o, &r, coproc__reduce_where_run(rt, op, col, bitmap, out));
}

typedef coproc_status (*select_fn)(coproc_runtime *, const coproc_filter *, coproc_column **,
                                   uint64_t *);

/* select and select_bitmap: positions or bitmap (may be NULL to only count). */
static coproc_status select_call(coproc_runtime *rt, coproc_op_variant variant, select_fn fn,
                                 const coproc_filter *f, coproc_column **col, uint64_t *count)
{
    coproc_op o;
    coproc_op_init(&o, COPROC_OP_SELECT);
    /* Only a count: positions are neither made nor moved (over more than
     * 2^32 rows they could outgrow the host's memory). */
    o.variant = variant == COPROC_VARIANT_DEFAULT && !col ? COPROC_VARIANT_SELECT_COUNT : variant;
    if (f)
        o.filter = *f;
    coproc_result r;
    memset(&r, 0, sizeof r);
    coproc_status s;
    if (f && on_host(rt, f->first.col)) {
        if (col)
            *col = NULL;
        if ((s = run_task(rt, &o, &r)) != COPROC_OK)
            return s;
    } else {
        coproc__device *dev = device_of(rt, f ? f->first.col : NULL);
        coproc__op_call t;
        coproc__op_call_begin(rt, dev, &t, &o);
        s = fn(rt, f, col, &r.count);
        coproc__op_call_end(rt, dev, &t, &o, &r, s);
        if (s != COPROC_OK)
            return s;
        r.column = col ? *col : NULL;
    }
    if (count)
        *count = r.count;
    if (col)
        *col = r.column;
    else
        coproc_column_free(r.column);
    return COPROC_OK;
}

coproc_status coproc_select(coproc_runtime *rt, const coproc_filter *f, coproc_column **positions,
                            uint64_t *count)
{
    return select_call(rt, COPROC_VARIANT_DEFAULT, coproc__select_run, f, positions, count);
}

coproc_status coproc_select_bitmap(coproc_runtime *rt, const coproc_filter *f,
                                   coproc_column **bitmap, uint64_t *count)
{
    if (rt && !bitmap)
        return coproc__fail(rt, COPROC_NULL_POINTER, "coproc_select_bitmap: bitmap is NULL");
    return select_call(rt, COPROC_VARIANT_SELECT_BITMAP, coproc__select_bitmap_run, f, bitmap,
                       count);
}

/* The calls whose result is one column (*out) from up to two inputs. */
static coproc_status one_column(coproc_runtime *rt, const coproc_op *o, coproc_column **out)
{
    coproc_result r;
    coproc_status s = run_task(rt, o, &r);
    *out = s == COPROC_OK ? r.column : NULL;
    return s;
}

coproc_status coproc_map(coproc_runtime *rt, coproc_arith op, const coproc_column *a,
                         const coproc_column *b, coproc_column **out)
{
    coproc_op o;
    coproc_op_init(&o, COPROC_OP_MAP);
    o.a = a;
    o.b = b;
    o.arith = op;
    if (on_host(rt, a) && out) {
        if (!b) {
            *out = NULL;
            return coproc__fail(rt, COPROC_NULL_POINTER, "coproc_map: b is NULL");
        }
        return one_column(rt, &o, out);
    }
    coproc_result r = {.column = NULL};
    OBSERVED(a, &o, &r, coproc__map_run(rt, op, a, b, out));
}

coproc_status coproc_map_const(coproc_runtime *rt, coproc_arith op, const coproc_column *a,
                               coproc_value c, coproc_column **out)
{
    coproc_op o;
    coproc_op_init(&o, COPROC_OP_MAP);
    o.a = a;
    o.arith = op;
    o.c = c;
    if (on_host(rt, a) && out)
        return one_column(rt, &o, out);
    coproc_result r = {.column = NULL};
    OBSERVED(a, &o, &r, coproc__map_const_run(rt, op, a, c, out));
}

coproc_status coproc_cast(coproc_runtime *rt, const coproc_column *a, coproc_type to,
                          coproc_column **out)
{
    coproc_op o;
    coproc_op_init(&o, COPROC_OP_MAP);
    o.variant = COPROC_VARIANT_CAST;
    o.a = a;
    o.to = to;
    if (on_host(rt, a) && out)
        return one_column(rt, &o, out);
    coproc_result r = {.column = NULL};
    OBSERVED(a, &o, &r, coproc__cast_run(rt, a, to, out));
}

coproc_status coproc_gather(coproc_runtime *rt, const coproc_column *src,
                            const coproc_column *positions, coproc_column **out)
{
    coproc_op o;
    coproc_op_init(&o, COPROC_OP_GATHER);
    o.a = src;
    o.b = positions;
    if (on_host(rt, src) && out)
        return one_column(rt, &o, out);
    coproc_result r = {.column = NULL};
    OBSERVED(src, &o, &r, coproc__gather_run(rt, src, positions, out));
}

coproc_status coproc_scatter(coproc_runtime *rt, const coproc_column *src,
                             const coproc_column *positions, coproc_column *dst)
{
    if (rt && read_only(rt, dst))
        return refuse_write(rt, "coproc_scatter");
    coproc_op o;
    coproc_op_init(&o, COPROC_OP_GATHER);
    o.variant = COPROC_VARIANT_SCATTER;
    o.a = src;
    o.b = positions;
    o.dst = dst;
    coproc_result r;
    memset(&r, 0, sizeof r);
    if (on_host(rt, src) && on_host(rt, dst)) { /* a scattered copy, written back */
        coproc_status s = run_task(rt, &o, &r);
        if (s == COPROC_OK)
            host_overwrite(dst, r.column);
        coproc_result_free(&r);
        return s;
    }
    OBSERVED(src, &o, &r, coproc__scatter_run(rt, src, positions, dst));
}

coproc_status coproc_compact(coproc_runtime *rt, const coproc_column *src,
                             const coproc_column *bitmap, coproc_column **out)
{
    coproc_op o;
    coproc_op_init(&o, COPROC_OP_GATHER);
    o.variant = COPROC_VARIANT_COMPACT;
    o.a = src;
    o.b = bitmap;
    if (on_host(rt, src) && out)
        return one_column(rt, &o, out);
    coproc_result r = {.column = NULL};
    coproc__device *dev = device_of(rt, src);
    coproc__op_call t;
    coproc__op_call_begin(rt, dev, &t, &o);
    coproc_status s = coproc__compact_run(rt, src, bitmap, out);
    r.column = s == COPROC_OK ? *out : NULL;
    coproc__op_call_end(rt, dev, &t, &o, &r, s);
    return s;
}

coproc_status coproc_scan(coproc_runtime *rt, const coproc_column *in, int exclusive,
                          coproc_column **out)
{
    coproc_op o;
    coproc_op_init(&o, COPROC_OP_SCAN);
    o.a = in;
    o.exclusive = exclusive;
    if (on_host(rt, in) && out)
        return one_column(rt, &o, out);
    coproc_result r = {.column = NULL};
    OBSERVED(in, &o, &r, coproc__scan_run(rt, in, exclusive, out));
}

coproc_status coproc_group_by(coproc_runtime *rt, const coproc_column *keys,
                              const coproc_column *values, int sorted, coproc_group_result *out)
{
    return coproc_group_by_aggs(rt, keys, values, COPROC_GROUP_ALL, sorted, out);
}

coproc_status coproc_group_by_aggs(coproc_runtime *rt, const coproc_column *keys,
                                   const coproc_column *values, unsigned aggs, int sorted,
                                   coproc_group_result *out)
{
    if (!rt)
        return COPROC_NULL_POINTER;
    if (out)
        memset(out, 0, sizeof *out); /* failures leave no output */
    if (aggs == 0 || (aggs & ~(unsigned)COPROC_GROUP_ALL))
        return coproc__fail(rt, COPROC_INVALID_ARGUMENT, "coproc_group_by_aggs: aggs 0x%x; an "
                            "OR of COPROC_GROUP_COUNT, _SUM, _MIN and _MAX", aggs);
    coproc_op o;
    coproc_op_init(&o, COPROC_OP_GROUP_BY);
    o.a = keys;
    o.b = values;
    o.sorted = sorted;
    o.aggs = aggs;
    coproc_result r;
    memset(&r, 0, sizeof r);
    coproc_status s;
    if (on_host(rt, keys) && out) {
        s = run_task(rt, &o, &r);
        *out = r.groups;
        return s;
    }
    coproc__device *dev = device_of(rt, keys);
    coproc__op_call t;
    coproc__op_call_begin(rt, dev, &t, &o);
    s = coproc__group_by_run(rt, keys, values, aggs, sorted, out);
    if (s == COPROC_OK)
        r.groups = *out;
    coproc__op_call_end(rt, dev, &t, &o, &r, s);
    return s;
}

coproc_status coproc_sort(coproc_runtime *rt, coproc_column *keys, coproc_column *values)
{
    return coproc_sort_nulls(rt, keys, values, 0);
}

coproc_status coproc_sort_nulls(coproc_runtime *rt, coproc_column *keys, coproc_column *values,
                                int nulls_first)
{
    if (rt && (read_only(rt, keys) || read_only(rt, values)))
        return refuse_write(rt, "coproc_sort");
    coproc_op o;
    coproc_op_init(&o, COPROC_OP_SORT);
    o.a = keys;
    o.b = values;
    o.nulls_first = nulls_first;
    coproc_result r;
    memset(&r, 0, sizeof r);
    if (on_host(rt, keys)) { /* sorted copies, written back */
        coproc_status s = run_task(rt, &o, &r);
        if (s == COPROC_OK) {
            host_overwrite(keys, r.column);
            if (values)
                host_overwrite(values, r.column2);
        }
        coproc_result_free(&r);
        return s;
    }
    OBSERVED(keys, &o, &r, coproc__sort_run(rt, keys, values, nulls_first));
}

coproc_status coproc_argsort(coproc_runtime *rt, const coproc_column *keys, coproc_column **perm)
{
    return coproc_argsort_nulls(rt, keys, 0, perm);
}

coproc_status coproc_argsort_nulls(coproc_runtime *rt, const coproc_column *keys, int nulls_first,
                                   coproc_column **perm)
{
    coproc_op o;
    coproc_op_init(&o, COPROC_OP_SORT);
    o.variant = COPROC_VARIANT_ARGSORT;
    o.a = keys;
    o.nulls_first = nulls_first;
    if (on_host(rt, keys) && perm)
        return one_column(rt, &o, perm);
    coproc_result r = {.column = NULL};
    OBSERVED(keys, &o, &r, coproc__argsort_run(rt, keys, nulls_first, perm));
}

typedef coproc_status (*join_fn)(coproc_runtime *, const coproc_column *, const coproc_column *,
                                 coproc_join_result *);

static coproc_status join_call(coproc_runtime *rt, coproc_op_kind kind, join_fn fn,
                               const coproc_column *left, const coproc_column *right,
                               coproc_join_result *out)
{
    coproc_op o;
    coproc_op_init(&o, kind);
    o.a = left;
    o.b = right;
    coproc_result r;
    memset(&r, 0, sizeof r);
    coproc_status s;
    if (on_host(rt, left) && out) {
        s = run_task(rt, &o, &r);
        *out = r.join;
        return s;
    }
    coproc__device *dev = device_of(rt, left);
    coproc__op_call t;
    coproc__op_call_begin(rt, dev, &t, &o);
    s = fn(rt, left, right, out);
    if (s == COPROC_OK)
        r.join = *out;
    coproc__op_call_end(rt, dev, &t, &o, &r, s);
    return s;
}

coproc_status coproc_hash_join(coproc_runtime *rt, const coproc_column *left,
                               const coproc_column *right, coproc_join_result *out)
{
    return join_call(rt, COPROC_OP_HASH_JOIN, coproc__hash_join_run, left, right, out);
}

coproc_status coproc_hash_join_count(coproc_runtime *rt, const coproc_column *left,
                                     const coproc_column *right, uint64_t *count)
{
    if (rt && !count)
        return coproc__fail(rt, COPROC_NULL_POINTER, "coproc_hash_join_count: count is NULL");
    coproc_op o;
    coproc_op_init(&o, COPROC_OP_HASH_JOIN);
    o.variant = COPROC_VARIANT_JOIN_COUNT;
    o.a = left;
    o.b = right;
    coproc_result r;
    memset(&r, 0, sizeof r);
    coproc_status s;
    if (on_host(rt, left)) {
        s = run_task(rt, &o, &r);
    } else {
        coproc__device *dev = device_of(rt, left);
        coproc__op_call t;
        coproc__op_call_begin(rt, dev, &t, &o);
        s = coproc__hash_join_count_run(rt, left, right, &r.count);
        coproc__op_call_end(rt, dev, &t, &o, &r, s);
    }
    if (count)
        *count = s == COPROC_OK ? r.count : 0;
    return s;
}

coproc_status coproc_sort_merge_join(coproc_runtime *rt, const coproc_column *left,
                                     const coproc_column *right, coproc_join_result *out)
{
    return join_call(rt, COPROC_OP_MERGE_JOIN, coproc__sort_merge_join_run, left, right, out);
}

coproc_status coproc_semi_join(coproc_runtime *rt, const coproc_column *probe,
                               const coproc_column *build, coproc_column **positions,
                               uint64_t *count)
{
    coproc_op o;
    coproc_op_init(&o, COPROC_OP_SEMI_JOIN);
    o.a = probe;
    o.b = build;
    coproc_result r;
    memset(&r, 0, sizeof r);
    coproc_status s;
    if (on_host(rt, probe)) {
        if (positions)
            *positions = NULL;
        if ((s = run_task(rt, &o, &r)) != COPROC_OK)
            return s;
    } else {
        coproc__device *dev = device_of(rt, probe);
        coproc__op_call t;
        coproc__op_call_begin(rt, dev, &t, &o);
        s = coproc__semi_join_run(rt, probe, build, positions, &r.count);
        coproc__op_call_end(rt, dev, &t, &o, &r, s);
        if (s != COPROC_OK)
            return s;
        r.column = positions ? *positions : NULL;
    }
    if (count)
        *count = r.count;
    if (positions)
        *positions = r.column;
    else
        coproc_column_free(r.column);
    return COPROC_OK;
}
