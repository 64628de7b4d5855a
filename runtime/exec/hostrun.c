/* hostrun.c - running one submitted operator on one device (see hostrun.h). */
#include "exec/hostrun.h"

#include <math.h>
#include <string.h>

#include "cost/cost.h"
#include "exec/hostops.h"
#include "ops/ops.h"
#include "cost/profile.h"
#include "data/residency.h"
#include "core/runtime.h"
#include "backend/opencl/transfer.h"

#define MAX_INPUTS 3

/* The input columns of op, in a fixed order per kind; returns how many. */
static int op_inputs(const coproc_op *op, const coproc_column *in[MAX_INPUTS])
{
    int n = 0;
    switch (op->kind) {
    case COPROC_OP_SELECT:
        in[n++] = op->filter.first.col;
        if (op->filter.logic != COPROC_LOGIC_NONE)
            in[n++] = op->filter.second.col;
        break;
    case COPROC_OP_REDUCE:
        in[n++] = op->a;
        break;
    case COPROC_OP_HASH_JOIN:
        in[n++] = op->a;
        in[n++] = op->b;
        break;
    default: /* MAP, GROUP_BY, SORT: b optional */
        in[n++] = op->a;
        if (op->b)
            in[n++] = op->b;
        break;
    }
    return n;
}

static double col_bytes(const coproc_column *c)
{
    return c ? (double)c->length * (double)coproc_type_size(c->type) : 0;
}

double coproc__op_input_bytes(const coproc_op *op)
{
    const coproc_column *in[MAX_INPUTS];
    int n = op_inputs(op, in);
    double b = 0;
    for (int i = 0; i < n; i++)
        b += col_bytes(in[i]);
    return b;
}

coproc_status coproc__op_check(coproc_runtime *rt, const coproc_op *op)
{
    if (op->struct_size != sizeof *op)
        return coproc__fail(rt, COPROC_INVALID_ARGUMENT, "coproc_submit: op not initialised with "
                            "coproc_op_init");
    switch (op->kind) {
    case COPROC_OP_REDUCE: case COPROC_OP_SELECT: case COPROC_OP_MAP: case COPROC_OP_GROUP_BY:
    case COPROC_OP_SORT: case COPROC_OP_HASH_JOIN:
        break;
    default:
        return coproc__fail(rt, COPROC_UNSUPPORTED, "coproc_submit: operator kind %s is not "
                            "supported asynchronously; call it on device columns",
                            coproc_op_kind_name(op->kind));
    }
    const coproc_column *in[MAX_INPUTS];
    int n = op_inputs(op, in);
    int home = -2;
    for (int i = 0; i < n; i++) {
        if (!in[i])
            return coproc__fail(rt, COPROC_NULL_POINTER, "coproc_submit: %s input %d is NULL",
                                coproc_op_kind_name(op->kind), i);
        if (in[i]->rt != rt)
            return coproc__fail(rt, COPROC_INVALID_ARGUMENT, "coproc_submit: input %d belongs to "
                                "another runtime", i);
        int d = in[i]->dev ? in[i]->dev->index : -1;
        if (home != -2 && d != home)
            return coproc__fail(rt, COPROC_WRONG_DEVICE, "coproc_submit: inputs live in different "
                                "places (host, device %d, device %d)", home, d);
        home = d;
        if (i > 0 && in[i]->length != in[0]->length && op->kind != COPROC_OP_HASH_JOIN)
            return coproc__fail(rt, COPROC_LENGTH_MISMATCH, "coproc_submit: inputs of %zu and %zu "
                                "rows", in[0]->length, in[i]->length);
    }
    if ((op->kind == COPROC_OP_GROUP_BY || op->kind == COPROC_OP_HASH_JOIN) &&
        !coproc__is_key_type(op->a->type))
        return coproc__fail(rt, COPROC_UNSUPPORTED_TYPE, "coproc_submit: %s keys must be integers, "
                            "not %s", coproc_op_kind_name(op->kind), coproc_type_name(op->a->type));
    if (op->kind == COPROC_OP_HASH_JOIN && op->a->type != op->b->type)
        return coproc__fail(rt, COPROC_INVALID_ARGUMENT, "coproc_submit: join keys of types %s and "
                            "%s", coproc_type_name(op->a->type), coproc_type_name(op->b->type));
    if (op->kind == COPROC_OP_MAP && op->b && op->a->type != op->b->type)
        return coproc__fail(rt, COPROC_INVALID_ARGUMENT, "coproc_submit: map over %s and %s",
                            coproc_type_name(op->a->type), coproc_type_name(op->b->type));
    if (op->device >= rt->device_count || op->device < -1)
        return coproc__fail(rt, COPROC_INVALID_ARGUMENT, "coproc_submit: device %d out of range "
                            "(%d devices)", op->device, rt->device_count);
    if (home >= 0 && op->device >= 0 && op->device != home)
        return coproc__fail(rt, COPROC_WRONG_DEVICE, "coproc_submit: inputs live on device %d, "
                            "not on the requested device %d", home, op->device);
    return COPROC_OK;
}

int coproc__op_home_device(const coproc_op *op)
{
    const coproc_column *in[MAX_INPUTS];
    int n = op_inputs(op, in);
    for (int i = 0; i < n; i++)
        if (in[i] && in[i]->dev)
            return in[i]->dev->index;
    return -1;
}

int coproc__op_runs_on(const coproc_op *op, const coproc__device *dev)
{
    const coproc_column *in[MAX_INPUTS];
    int n = op_inputs(op, in);
    for (int i = 0; i < n; i++)
        if (in[i]->type == COPROC_FLOAT64 && !dev->info.has_fp64)
            return 0;
    return 1;
}

static int zero_copy(const coproc__device *dev)
{
    return dev->zero_copy && dev->info.host_unified_memory;
}

/* Device memory op needs beyond its inputs, as a multiple of the input bytes:
 * outputs and temporaries of the in-memory operators (generous). */
static double working_factor(coproc_op_kind k)
{
    switch (k) {
    case COPROC_OP_REDUCE: return 0.1;
    case COPROC_OP_SELECT: return 1.5;
    case COPROC_OP_MAP: return 1.0;
    case COPROC_OP_SORT: return 2.5;
    case COPROC_OP_GROUP_BY: return 2.5;
    default: return 3.0;
    }
}

/* Model features of op (as runtime/operators.c feeds them); output sizes,
 * unknown before it runs, are guessed from those seen so far (op_learn);
 * *out_bytes: what comes back. */
static void op_features(coproc_runtime *rt, const coproc_op *op, double x[2], double *out_bytes)
{
    double in = coproc__op_input_bytes(op);
    double n = op->a ? (double)op->a->length : (double)op->filter.first.col->length;
    pthread_mutex_lock(&rt->seen_lock);
    double sel = rt->seen_selectivity, ppr = rt->seen_pairs_per_row, groups = rt->seen_groups;
    pthread_mutex_unlock(&rt->seen_lock);
    x[0] = in;
    x[1] = 0;
    *out_bytes = 0;
    switch (op->kind) {
    case COPROC_OP_SELECT:
        x[1] = n * sel;
        *out_bytes = x[1] * 4;
        break;
    case COPROC_OP_MAP:
        x[1] = col_bytes(op->a);
        *out_bytes = x[1];
        break;
    case COPROC_OP_GROUP_BY:
        x[1] = n < groups ? n : groups;
        *out_bytes = x[1] * 32;
        break;
    case COPROC_OP_SORT:
        x[1] = n > 1 ? n * log2(n) : 0;
        *out_bytes = in;
        break;
    case COPROC_OP_HASH_JOIN: {
        double m = op->b ? (double)op->b->length : 0;
        x[1] = (n > m ? n : m) * ppr;
        *out_bytes = x[1] * 8;
        break;
    }
    default:
        break;
    }
}

/* Remember the output size of a finished operator for the next estimates
 * (an exponential moving average: recent workloads matter most). */
static void op_learn(coproc_runtime *rt, const coproc_op *op, const coproc_result *r)
{
    const double w = 0.2;
    double n = op->a ? (double)op->a->length : (double)op->filter.first.col->length;
    pthread_mutex_lock(&rt->seen_lock);
    if (op->kind == COPROC_OP_SELECT && n > 0)
        rt->seen_selectivity += w * ((double)r->count / n - rt->seen_selectivity);
    else if (op->kind == COPROC_OP_GROUP_BY && r->count > 0)
        rt->seen_groups += w * ((double)r->count - rt->seen_groups);
    else if (op->kind == COPROC_OP_HASH_JOIN && op->b) {
        double m = n > (double)op->b->length ? n : (double)op->b->length;
        if (m > 0)
            rt->seen_pairs_per_row += w * ((double)r->count / m - rt->seen_pairs_per_row);
    }
    pthread_mutex_unlock(&rt->seen_lock);
}

static double move_time(coproc__device *dev, int to_device, double bytes)
{
    if (bytes <= 0)
        return 0;
    pthread_mutex_lock(&dev->model_lock);
    double t = coproc__profile_transfer_now(dev->profile, to_device, 1, bytes);
    pthread_mutex_unlock(&dev->model_lock);
    return t >= 0 ? t : 20e-6 + bytes / 8e9; /* uncalibrated: a modest PCIe guess */
}

double coproc__op_estimate(coproc__device *dev, const coproc_op *op, double *transfer)
{
    const coproc_column *in[MAX_INPUTS];
    int n = op_inputs(op, in);
    double x[2], out_bytes, in_bytes = 0;
    op_features(in[0]->rt, op, x, &out_bytes);
    for (int i = 0; i < n; i++)
        if (!in[i]->dev && !zero_copy(dev) && !coproc__residency_has(dev, in[i]))
            in_bytes += col_bytes(in[i]);
    double move = zero_copy(dev) ? 0 : move_time(dev, 1, in_bytes) + move_time(dev, 0, out_bytes);
    *transfer = move;
    double compute = coproc__predict_cost(dev, (coproc__op_kind)op->kind, x, 0, 0);
    return compute < 0 ? -1 : compute + move;
}

/* ---- results back to the host */

/* Turn a device column made by an operator into a host column: on a
 * zero-copy device by mapping its buffer (nothing moves), else by copying it
 * back and keeping the device buffer as the new column's cached copy. Frees
 * (consumes) d in every case. */
static coproc_status to_host(coproc_runtime *rt, coproc__device *dev, coproc_column *d,
                             coproc_column **out)
{
    *out = NULL;
    if (!d)
        return COPROC_OK;
    size_t bytes = d->length * coproc_type_size(d->type);
    coproc_status s;
    if (zero_copy(dev) && bytes > 0) {
        cl_int err;
        void *p = clEnqueueMapBuffer(dev->queue, d->mem, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0,
                                     bytes, 0, NULL, NULL, &err);
        if (!p) {
            s = coproc__fail_cl(rt, err, "mapping a result on device %d", dev->index);
            coproc_column_free(d);
            return s;
        }
        s = coproc_column_wrap(rt, d->type, p, d->length, out);
        if (s != COPROC_OK) {
            clEnqueueUnmapMemObject(dev->queue, d->mem, p, 0, NULL, NULL);
            coproc_column_free(d);
            return s;
        }
        (*out)->pinned = d->mem; /* released (after unmapping) when the host column is freed */
        (*out)->pinned_dev = dev;
        d->mem = NULL;
        coproc_column_free(d);
        return COPROC_OK;
    }
    s = coproc__host_column_new(rt, d->type, d->length, out);
    if (s == COPROC_OK)
        s = coproc__d2h(rt, dev, NULL, (*out)->host, d->mem, 0, bytes, 0);
    if (s != COPROC_OK) {
        coproc_column_free(*out);
        *out = NULL;
        coproc_column_free(d);
        return s;
    }
    coproc__residency_adopt(dev, *out, d->mem, bytes);
    d->mem = NULL;
    coproc_column_free(d);
    return COPROC_OK;
}

static void free_group(coproc_group_result *g)
{
    coproc_group_result_free(g);
    memset(g, 0, sizeof *g);
}

static void free_join(coproc_join_result *j)
{
    coproc_join_result_free(j);
    memset(j, 0, sizeof *j);
}

/* A copy of a device column for sort to work on in place (the input, maybe a
 * cached copy of a host column, must not change). */
static coproc_status device_copy(coproc_runtime *rt, coproc__device *dev, const coproc_column *src,
                                 coproc_column **out)
{
    coproc_status s = coproc__column_new(rt, dev, src->type, src->length, out);
    size_t bytes = src->length * coproc_type_size(src->type);
    if (s != COPROC_OK || bytes == 0)
        return s;
    cl_int err = clEnqueueCopyBuffer(dev->queue, src->mem, (*out)->mem, 0, 0, bytes, 0, NULL, NULL);
    if (err != CL_SUCCESS) {
        coproc_column_free(*out);
        *out = NULL;
        return coproc__fail_cl(rt, err, "copying a column on device %d", dev->index);
    }
    return COPROC_OK;
}

/* Run op on device columns (cached copies or the user's device columns). */
static coproc_status run_in_memory(coproc_runtime *rt, coproc__device *dev, const coproc_op *op,
                                   const coproc_column *const *v, coproc_result *out)
{
    coproc_status s = COPROC_OK;
    coproc_column *c1 = NULL, *c2 = NULL;
    switch (op->kind) {
    case COPROC_OP_REDUCE:
        return coproc_reduce(rt, op->reduce, v[0], &out->scalar);
    case COPROC_OP_SELECT: {
        coproc_filter f = op->filter;
        f.first.col = v[0];
        if (f.logic != COPROC_LOGIC_NONE)
            f.second.col = v[1];
        s = coproc_select(rt, &f, &c1, &out->count);
        if (s == COPROC_OK)
            s = to_host(rt, dev, c1, &out->column);
        return s;
    }
    case COPROC_OP_MAP:
        s = op->b ? coproc_map(rt, op->arith, v[0], v[1], &c1)
                  : coproc_map_const(rt, op->arith, v[0], op->c, &c1);
        if (s == COPROC_OK)
            s = to_host(rt, dev, c1, &out->column);
        return s;
    case COPROC_OP_GROUP_BY: {
        coproc_group_result g;
        memset(&g, 0, sizeof g);
        s = coproc_group_by(rt, v[0], op->b ? v[1] : NULL, op->sorted, &g);
        if (s != COPROC_OK)
            return s;
        out->groups.groups = g.groups;
        out->count = g.groups;
        coproc_column **from[] = {&g.keys, &g.count, &g.sum, &g.min, &g.max};
        coproc_column **to[] = {&out->groups.keys, &out->groups.count, &out->groups.sum,
                                &out->groups.min, &out->groups.max};
        for (int i = 0; i < 5; i++) {
            coproc_column *d = *from[i];
            *from[i] = NULL;
            if (s == COPROC_OK)
                s = to_host(rt, dev, d, to[i]);
            else
                coproc_column_free(d);
        }
        if (s != COPROC_OK)
            free_group(&out->groups);
        return s;
    }
    case COPROC_OP_SORT:
        s = device_copy(rt, dev, v[0], &c1);
        if (s == COPROC_OK && op->b)
            s = device_copy(rt, dev, v[1], &c2);
        if (s == COPROC_OK)
            s = coproc_sort(rt, c1, c2);
        if (s != COPROC_OK) {
            coproc_column_free(c1);
            coproc_column_free(c2);
            return s;
        }
        s = to_host(rt, dev, c1, &out->column);
        if (s == COPROC_OK)
            s = to_host(rt, dev, c2, &out->column2);
        else
            coproc_column_free(c2);
        return s;
    case COPROC_OP_HASH_JOIN: {
        coproc_join_result j;
        memset(&j, 0, sizeof j);
        s = coproc_hash_join(rt, v[0], v[1], &j);
        if (s != COPROC_OK)
            return s;
        out->join.count = j.count;
        out->count = j.count;
        c1 = j.left;
        c2 = j.right;
        s = to_host(rt, dev, c1, &out->join.left);
        if (s == COPROC_OK)
            s = to_host(rt, dev, c2, &out->join.right);
        else
            coproc_column_free(c2);
        if (s != COPROC_OK)
            free_join(&out->join);
        return s;
    }
    default:
        return coproc__fail(rt, COPROC_UNSUPPORTED, "operator kind %d", (int)op->kind);
    }
}

/* Inputs over the budget: stream them through, or partition. */
static coproc_status run_streamed(coproc_runtime *rt, coproc__device *dev, const coproc_op *op,
                                  size_t budget, coproc_result *out)
{
    coproc_status s;
    out->streamed = 1;
    switch (op->kind) {
    case COPROC_OP_REDUCE:
        return coproc__stream_reduce(rt, dev, op->reduce, op->a, budget, &out->scalar);
    case COPROC_OP_SELECT:
        return coproc__stream_select(rt, dev, &op->filter, budget, &out->column, &out->count);
    case COPROC_OP_MAP:
        return coproc__stream_map(rt, dev, op->arith, op->a, op->b, op->c, budget, &out->column);
    case COPROC_OP_GROUP_BY:
        s = coproc__stream_group_by(rt, dev, op->a, op->b, op->sorted, budget, &out->groups);
        out->count = out->groups.groups;
        return s;
    case COPROC_OP_SORT:
        return coproc__outofcore_sort(rt, dev, op->a, op->b, budget, &out->column, &out->column2);
    case COPROC_OP_HASH_JOIN:
        s = coproc__outofcore_hash_join(rt, dev, op->a, op->b, budget, &out->join);
        out->count = out->join.count;
        return s;
    default:
        return coproc__fail(rt, COPROC_UNSUPPORTED, "operator kind %d", (int)op->kind);
    }
}

void coproc__op_prefetch(coproc_runtime *rt, coproc__device *dev, const coproc_op *op)
{
    const coproc_column *in[MAX_INPUTS];
    int n = op_inputs(op, in);
    double inputs = coproc__op_input_bytes(op);
    if (in[0]->dev || zero_copy(dev) ||
        inputs * (1 + working_factor(op->kind)) > (double)dev->budget_bytes)
        return; /* nothing to copy, or it will stream */
    for (int i = 0; i < n; i++)
        coproc__residency_prefetch(rt, dev, in[i]);
}

static coproc_status op_run(coproc_runtime *rt, coproc__device *dev, const coproc_op *op,
                            coproc_result *out);

coproc_status coproc__op_run(coproc_runtime *rt, coproc__device *dev, const coproc_op *op,
                             coproc_result *out)
{
    coproc_status s = op_run(rt, dev, op, out);
    if (s == COPROC_OK)
        op_learn(rt, op, out);
    return s;
}

/* Stream op within `budget` bytes reserved on dev (beside the cached copies). */
static coproc_status stream_within(coproc_runtime *rt, coproc__device *dev, const coproc_op *op,
                                   uint64_t budget, coproc_result *out)
{
    uint64_t got = coproc__residency_reserve(dev, budget);
    coproc_status s;
    if (got < COPROC__STREAM_MIN_BUDGET)
        s = coproc__fail(rt, COPROC_DEVICE_OUT_OF_MEMORY, "device %d: %llu bytes free for "
                         "streaming, below the %zu bytes a stream needs", dev->index,
                         (unsigned long long)got, COPROC__STREAM_MIN_BUDGET);
    else
        s = run_streamed(rt, dev, op, (size_t)got, out);
    coproc__residency_unreserve(dev, got);
    return s;
}

static coproc_status op_run(coproc_runtime *rt, coproc__device *dev, const coproc_op *op,
                            coproc_result *out)
{
    const coproc_column *in[MAX_INPUTS];
    int n = op_inputs(op, in);
    memset(out, 0, sizeof *out);
    out->device = dev->index;

    if (in[0]->dev) /* device columns: already where they must be */
        return run_in_memory(rt, dev, op, in, out);

    double inputs = coproc__op_input_bytes(op);
    double work = inputs * working_factor(op->kind);
    if (op->kind == COPROC_OP_HASH_JOIN) { /* the pairs, as many as joins have made so far */
        double x[2], out_bytes;
        op_features(rt, op, x, &out_bytes);
        work += 2 * out_bytes;
    }
    double need = work + (zero_copy(dev) ? 0 : inputs);
    /* Streaming sizes its buffers from the budget: keep each allocation legal. */
    uint64_t stream_budget = dev->budget_bytes < dev->info.max_alloc_bytes
                                 ? dev->budget_bytes : dev->info.max_alloc_bytes;
    int huge = 0; /* past the in-memory operators' UINT32_MAX rows */
    for (int i = 0; i < n; i++)
        huge |= in[i]->length > UINT32_MAX;
    if (need > (double)dev->budget_bytes || huge)
        return stream_within(rt, dev, op, stream_budget, out);

    for (int attempt = 0;; attempt++) {
        coproc_column views[MAX_INPUTS];
        const coproc_column *v[MAX_INPUTS];
        int pinned = 0;
        coproc_status s = COPROC_OK;
        for (; pinned < n && s == COPROC_OK; pinned++) {
            cl_mem mem;
            s = coproc__residency_acquire(rt, dev, in[pinned], &mem, NULL);
            if (s != COPROC_OK)
                break;
            views[pinned] = (coproc_column){.rt = rt, .dev = dev, .type = in[pinned]->type,
                                            .length = in[pinned]->length, .mem = mem};
            v[pinned] = &views[pinned];
        }
        if (s == COPROC_OK) {
            /* Hold room for outputs and temporaries: evict what no operator uses. */
            uint64_t held = coproc__residency_reserve(dev, (uint64_t)work);
            s = run_in_memory(rt, dev, op, v, out);
            coproc__residency_unreserve(dev, held);
        }
        for (int i = 0; i < pinned; i++)
            coproc__residency_unpin(dev, in[i]);
        if (s != COPROC_DEVICE_OUT_OF_MEMORY)
            return s;
        /* Out of memory: evict every cached copy and retry once; then stream
         * with half the budget, which needs far less memory at once. */
        coproc__log(rt, COPROC_LOG_INFO, "device %d out of memory (%s); %s", dev->index,
                    coproc_errmsg(rt), attempt == 0 ? "evicting and retrying" : "streaming");
        coproc_result_free(out); /* a part made before the failure */
        memset(out, 0, sizeof *out);
        out->device = dev->index;
        coproc__residency_make_room(dev, dev->budget_bytes); /* drains the pool too */
        if (attempt == 1)
            return stream_within(rt, dev, op, stream_budget / 2, out);
    }
}
