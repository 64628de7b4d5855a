/* operators.c - the public operator entry points. Each runs its
 * implementation (runtime/ops/) between two profiling markers and feeds the
 * measured time, with the features its cost model uses (runtime/profile.h),
 * to the device's model: every run teaches the model (HyPE). */
#include <math.h>

#include "data/column.h"
#include "cost/cost.h"
#include "ops/ops.h"
#include "core/runtime.h"

/* The device an operator on `col` runs on, or NULL when the implementation
 * will refuse the arguments anyway (it then reports the error). */
static coproc__device *device_of(coproc_runtime *rt, const coproc_column *col)
{
    return rt && col && col->rt == rt && col->dev && !col->dev->observe_off ? col->dev : NULL;
}

static double bytes(const coproc_column *c)
{
    return c ? (double)c->length * (double)coproc_type_size(c->type) : 0;
}

/* Columns that wrap caller memory (Arrow zero-copy imports) are read-only:
 * writing into them would change the producer's immutable, maybe shared, data. */
static coproc_status refuse_write(coproc_runtime *rt, const coproc_column *col, const char *what)
{
    return coproc__fail(rt, COPROC_INVALID_ARGUMENT, "%s: the column wraps caller memory (a "
                        "zero-copy import) and is read-only; write into a copy", what);
}

/* Host columns go through the task queue (coproc_submit + coproc_wait): the
 * synchronous call is a thin wrapper that picks the device like any task. */
static int on_host(coproc_runtime *rt, const coproc_column *col)
{
    return rt && col && col->rt == rt && !col->dev;
}

static coproc_status run_task(coproc_runtime *rt, const coproc_op *op, coproc_result *r)
{
    coproc_task *t;
    coproc_status s = coproc_submit(rt, op, &t);
    return s == COPROC_OK ? coproc_wait(t, r) : s;
}

#define TIMED(col, kind, call, ...)                                                         \
    do {                                                                                    \
        coproc__device *dev_ = device_of(rt, (col));                                        \
        coproc__op_timer t_;                                                                \
        if (dev_)                                                                           \
            coproc__op_timer_begin(dev_, &t_);                                              \
        coproc_status s_ = (call);                                                          \
        if (dev_) {                                                                         \
            double x_[] = {__VA_ARGS__};                                                    \
            coproc__op_timer_end(dev_, &t_, (kind), x_, s_ == COPROC_OK);                   \
        }                                                                                   \
        return s_;                                                                          \
    } while (0)

coproc_status coproc_reduce(coproc_runtime *rt, coproc_reduce_op op, const coproc_column *col,
                            coproc_scalar *out)
{
    if (on_host(rt, col) && out) {
        coproc_op o;
        coproc_op_init(&o, COPROC_OP_REDUCE);
        o.a = col;
        o.reduce = op;
        coproc_result r;
        coproc_status s = run_task(rt, &o, &r);
        if (s == COPROC_OK)
            *out = r.scalar;
        return s;
    }
    TIMED(col, COPROC__OP_REDUCE, coproc__reduce_run(rt, op, col, out), bytes(col));
}

coproc_status coproc_reduce_where(coproc_runtime *rt, coproc_reduce_op op,
                                  const coproc_column *col, const coproc_column *bitmap,
                                  coproc_scalar *out)
{
    TIMED(col, COPROC__OP_REDUCE, coproc__reduce_where_run(rt, op, col, bitmap, out),
          bytes(col) + bytes(bitmap));
}

static double filter_bytes(const coproc_filter *f)
{
    if (!f)
        return 0;
    return bytes(f->first.col) + (f->logic != COPROC_LOGIC_NONE ? bytes(f->second.col) : 0);
}

coproc_status coproc_select(coproc_runtime *rt, const coproc_filter *f, coproc_column **positions,
                            uint64_t *count)
{
    if (f && on_host(rt, f->first.col)) {
        coproc_op o;
        coproc_op_init(&o, COPROC_OP_SELECT);
        o.filter = *f;
        coproc_result r;
        coproc_status s = run_task(rt, &o, &r);
        if (s != COPROC_OK)
            return s;
        if (count)
            *count = r.count;
        if (positions)
            *positions = r.column;
        else
            coproc_column_free(r.column);
        return COPROC_OK;
    }
    uint64_t n = 0;
    coproc__device *dev = device_of(rt, f ? f->first.col : NULL);
    coproc__op_timer t;
    if (dev)
        coproc__op_timer_begin(dev, &t);
    coproc_status s = coproc__select_run(rt, f, positions, &n);
    if (dev) {
        double x[] = {filter_bytes(f), (double)n};
        coproc__op_timer_end(dev, &t, COPROC__OP_SELECT, x, s == COPROC_OK);
    }
    if (s == COPROC_OK && count)
        *count = n;
    return s;
}

coproc_status coproc_select_bitmap(coproc_runtime *rt, const coproc_filter *f,
                                   coproc_column **bitmap, uint64_t *count)
{
    uint64_t n = 0;
    coproc__device *dev = device_of(rt, f ? f->first.col : NULL);
    coproc__op_timer t;
    if (dev)
        coproc__op_timer_begin(dev, &t);
    coproc_status s = coproc__select_bitmap_run(rt, f, bitmap, &n);
    if (dev) {
        double x[] = {filter_bytes(f), (double)n};
        coproc__op_timer_end(dev, &t, COPROC__OP_SELECT, x, s == COPROC_OK);
    }
    if (s == COPROC_OK && count)
        *count = n;
    return s;
}

coproc_status coproc_map(coproc_runtime *rt, coproc_arith op, const coproc_column *a,
                         const coproc_column *b, coproc_column **out)
{
    if (on_host(rt, a) && out) {
        coproc_op o;
        coproc_op_init(&o, COPROC_OP_MAP);
        o.a = a;
        o.b = b;
        o.arith = op;
        coproc_result r;
        *out = NULL;
        if (!b)
            return coproc__fail(rt, COPROC_NULL_POINTER, "coproc_map: b is NULL");
        coproc_status s = run_task(rt, &o, &r);
        if (s == COPROC_OK)
            *out = r.column;
        return s;
    }
    TIMED(a, COPROC__OP_MAP, coproc__map_run(rt, op, a, b, out), bytes(a) + bytes(b), bytes(a));
}

coproc_status coproc_map_const(coproc_runtime *rt, coproc_arith op, const coproc_column *a,
                               coproc_value c, coproc_column **out)
{
    if (on_host(rt, a) && out) {
        coproc_op o;
        coproc_op_init(&o, COPROC_OP_MAP);
        o.a = a;
        o.arith = op;
        o.c = c;
        coproc_result r;
        *out = NULL;
        coproc_status s = run_task(rt, &o, &r);
        if (s == COPROC_OK)
            *out = r.column;
        return s;
    }
    TIMED(a, COPROC__OP_MAP, coproc__map_const_run(rt, op, a, c, out), bytes(a), bytes(a));
}

coproc_status coproc_cast(coproc_runtime *rt, const coproc_column *a, coproc_type to,
                          coproc_column **out)
{
    TIMED(a, COPROC__OP_MAP, coproc__cast_run(rt, a, to, out), bytes(a),
          a ? (double)a->length * (double)coproc_type_size(to) : 0);
}

coproc_status coproc_gather(coproc_runtime *rt, const coproc_column *src,
                            const coproc_column *positions, coproc_column **out)
{
    TIMED(src, COPROC__OP_GATHER, coproc__gather_run(rt, src, positions, out),
          bytes(src) + bytes(positions),
          positions && src ? (double)positions->length * (double)coproc_type_size(src->type) : 0);
}

coproc_status coproc_scatter(coproc_runtime *rt, const coproc_column *src,
                             const coproc_column *positions, coproc_column *dst)
{
    if (rt && dst && dst->host_wrapped)
        return refuse_write(rt, dst, "coproc_scatter");
    TIMED(src, COPROC__OP_GATHER, coproc__scatter_run(rt, src, positions, dst),
          bytes(src) + bytes(positions), bytes(src));
}

coproc_status coproc_compact(coproc_runtime *rt, const coproc_column *src,
                             const coproc_column *bitmap, coproc_column **out)
{
    coproc__device *dev = device_of(rt, src);
    coproc__op_timer t;
    if (dev)
        coproc__op_timer_begin(dev, &t);
    coproc_status s = coproc__compact_run(rt, src, bitmap, out);
    if (dev) {
        double x[] = {bytes(src) + bytes(bitmap), s == COPROC_OK ? bytes(*out) : 0};
        coproc__op_timer_end(dev, &t, COPROC__OP_GATHER, x, s == COPROC_OK);
    }
    return s;
}

coproc_status coproc_scan(coproc_runtime *rt, const coproc_column *in, int exclusive,
                          coproc_column **out)
{
    TIMED(in, COPROC__OP_SCAN, coproc__scan_run(rt, in, exclusive, out), bytes(in),
          in ? (double)in->length * 8 : 0);
}

coproc_status coproc_group_by(coproc_runtime *rt, const coproc_column *keys,
                              const coproc_column *values, int sorted, coproc_group_result *out)
{
    if (on_host(rt, keys) && out) {
        coproc_op o;
        coproc_op_init(&o, COPROC_OP_GROUP_BY);
        o.a = keys;
        o.b = values;
        o.sorted = sorted;
        coproc_result r;
        coproc_status s = run_task(rt, &o, &r);
        if (s == COPROC_OK)
            *out = r.groups;
        return s;
    }
    coproc__device *dev = device_of(rt, keys);
    coproc__op_timer t;
    if (dev)
        coproc__op_timer_begin(dev, &t);
    coproc_status s = coproc__group_by_run(rt, keys, values, sorted, out);
    if (dev) {
        double x[] = {bytes(keys) + bytes(values), s == COPROC_OK ? (double)out->groups : 0};
        coproc__op_timer_end(dev, &t, COPROC__OP_GROUP_BY, x, s == COPROC_OK);
    }
    return s;
}

static double n_log_n(const coproc_column *c)
{
    double n = c ? (double)c->length : 0;
    return n > 1 ? n * log2(n) : 0;
}

coproc_status coproc_sort(coproc_runtime *rt, coproc_column *keys, coproc_column *values)
{
    if (rt && ((keys && keys->host_wrapped) || (values && values->host_wrapped)))
        return refuse_write(rt, keys && keys->host_wrapped ? keys : values, "coproc_sort");
    TIMED(keys, COPROC__OP_SORT, coproc__sort_run(rt, keys, values), bytes(keys) + bytes(values),
          n_log_n(keys));
}

coproc_status coproc_argsort(coproc_runtime *rt, const coproc_column *keys, coproc_column **perm)
{
    TIMED(keys, COPROC__OP_SORT, coproc__argsort_run(rt, keys, perm),
          bytes(keys) + (keys ? (double)keys->length * 4 : 0), n_log_n(keys));
}

typedef coproc_status (*join_fn)(coproc_runtime *, const coproc_column *, const coproc_column *,
                                 coproc_join_result *);

static coproc_status timed_join(coproc_runtime *rt, coproc__op_kind kind, join_fn fn,
                                const coproc_column *left, const coproc_column *right,
                                coproc_join_result *out)
{
    coproc__device *dev = device_of(rt, left);
    coproc__op_timer t;
    if (dev)
        coproc__op_timer_begin(dev, &t);
    coproc_status s = fn(rt, left, right, out);
    if (dev) {
        double x[] = {bytes(left) + bytes(right), s == COPROC_OK ? (double)out->count : 0};
        coproc__op_timer_end(dev, &t, kind, x, s == COPROC_OK);
    }
    return s;
}

coproc_status coproc_hash_join(coproc_runtime *rt, const coproc_column *left,
                               const coproc_column *right, coproc_join_result *out)
{
    if (on_host(rt, left) && out) {
        coproc_op o;
        coproc_op_init(&o, COPROC_OP_HASH_JOIN);
        o.a = left;
        o.b = right;
        coproc_result r;
        coproc_status s = run_task(rt, &o, &r);
        if (s == COPROC_OK)
            *out = r.join;
        return s;
    }
    return timed_join(rt, COPROC__OP_HASH_JOIN, coproc__hash_join_run, left, right, out);
}

coproc_status coproc_sort_merge_join(coproc_runtime *rt, const coproc_column *left,
                                     const coproc_column *right, coproc_join_result *out)
{
    return timed_join(rt, COPROC__OP_MERGE_JOIN, coproc__sort_merge_join_run, left, right, out);
}

coproc_status coproc_semi_join(coproc_runtime *rt, const coproc_column *probe,
                               const coproc_column *build, coproc_column **positions,
                               uint64_t *count)
{
    uint64_t n = 0;
    coproc__device *dev = device_of(rt, probe);
    coproc__op_timer t;
    if (dev)
        coproc__op_timer_begin(dev, &t);
    coproc_status s = coproc__semi_join_run(rt, probe, build, positions, &n);
    if (dev) {
        double x[] = {bytes(probe) + bytes(build), (double)n};
        coproc__op_timer_end(dev, &t, COPROC__OP_SEMI_JOIN, x, s == COPROC_OK);
    }
    if (s == COPROC_OK && count)
        *count = n;
    return s;
}
