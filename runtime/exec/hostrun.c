/* hostrun.c - running one placed operator on one device (see hostrun.h):
 * everything here asks the operator table (ops/table.h) what the operator
 * needs; nothing here knows one operator from another. */
#include "exec/hostrun.h"

#include "backend/backend.h"

#include <math.h>
#include <string.h>

#include "backend/opencl/transfer.h"
#include "core/runtime.h"
#include "cost/cost.h"
#include "cost/profile.h"
#include "data/residency.h"
#include "exec/hostops.h"
#include "ops/table.h"
#include "backend/opencl/sync.h"

#define MAX_INPUTS COPROC__OP_MAX_INPUTS

/* The table entry of an op that passed coproc__op_check. */
static const coproc__op_def *def_of(const coproc_op *op) { return coproc__op_def_of(op); }

double coproc__op_input_bytes(const coproc_op *op)
{
    const coproc_column *in[MAX_INPUTS];
    int n = def_of(op)->inputs(op, in);
    double b = 0;
    for (int i = 0; i < n; i++)
        b += coproc__col_bytes(in[i]);
    return b;
}

int coproc__op_home_device(const coproc_op *op)
{
    const coproc_column *in[MAX_INPUTS];
    int n = def_of(op)->inputs(op, in);
    for (int i = 0; i < n; i++)
        if (in[i] && in[i]->dev)
            return in[i]->dev->index;
    return -1;
}

int coproc__op_runs_on(const coproc_op *op, const coproc__device *dev)
{
    const coproc_column *in[MAX_INPUTS];
    int n = def_of(op)->inputs(op, in);
    for (int i = 0; i < n; i++)
        if (in[i]->type == COPROC_FLOAT64 && !dev->info.has_fp64)
            return 0;
    return !(op->kind == COPROC_OP_MAP && op->variant == COPROC_VARIANT_CAST &&
             op->to == COPROC_FLOAT64 && !dev->info.has_fp64);
}

static int zero_copy(const coproc__device *dev)
{
    return dev->zero_copy && dev->info.host_unified_memory;
}

/* Seconds to move `bytes` to or from dev, from or to pinned host memory or
 * not (pageable memory goes at its own, usually lower, rate). */
static double move_time(coproc__device *dev, int to_device, int pinned, double bytes)
{
    if (bytes <= 0)
        return 0;
    pthread_mutex_lock(&dev->model_lock);
    double t = coproc__profile_transfer_now(dev->profile, to_device, pinned, bytes);
    pthread_mutex_unlock(&dev->model_lock);
    return t >= 0 ? t : 20e-6 + bytes / 8e9; /* uncalibrated: a modest PCIe guess */
}

/* Features and result bytes of op: of its result r after a run, or (r NULL)
 * before it, output sizes guessed from those seen so far. */
static void op_features(coproc_runtime *rt, const coproc__op_def *def, const coproc_op *op,
                        const coproc_result *r, double x[2], double *out_bytes)
{
    coproc__op_seen seen = coproc__op_seen_get(&rt->seen);
    def->features(op, r, &seen, x, out_bytes);
}

double coproc__op_estimate(coproc__device *dev, const coproc_op *op, double *transfer)
{
    const coproc__op_def *def = def_of(op);
    const coproc_column *in[MAX_INPUTS];
    int n = def->inputs(op, in);
    double x[2], out_bytes, in_bytes[2] = {0, 0}; /* [pinned] */
    op_features(in[0]->rt, def, op, NULL, x, &out_bytes);
    for (int i = 0; i < n; i++)
        for (const coproc_column *c = in[i]; c; c = c->validity)
            if (!c->dev && !zero_copy(dev) && !coproc__residency_has(dev, c))
                in_bytes[c->pinned != NULL] += (double)c->length * coproc_type_size(c->type);
    /* Results come back into new (pageable) host memory. */
    double move = zero_copy(dev) ? 0
                                 : move_time(dev, 1, 0, in_bytes[0]) +
                                       move_time(dev, 1, 1, in_bytes[1]) +
                                       move_time(dev, 0, 0, out_bytes);
    *transfer = move;
    double compute = coproc__predict_cost(dev, (coproc__op_kind)op->kind, x, 0, 0);
    return compute < 0 ? -1 : compute + move;
}

/* Device memory op needs on dev beyond its inputs (the entry's formula). */
static double working_bytes(coproc_runtime *rt, coproc__device *dev, const coproc__op_def *def,
                            const coproc_op *op)
{
    double x[2], out_bytes;
    op_features(rt, def, op, NULL, x, &out_bytes);
    /* Inputs with nulls: the operators' bitmaps beside (an AND, a result's
     * validity) and row positions where they compose (compact, joins, sort). */
    const coproc_column *in[MAX_INPUTS];
    int n = def->inputs(op, in);
    double nulls = 0;
    for (int i = 0; i < n; i++)
        if (coproc__has_nulls(in[i]))
            nulls += coproc__col_rows(in[i]) * (2.0 / 8 + 4);
    return def->device_bytes(dev, op, out_bytes) + nulls;
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
    if (d->validity) { /* the validity comes back as the host column's own */
        coproc_column *dv = d->validity, *hv = NULL;
        d->validity = NULL;
        dv->is_validity = 0;
        coproc_status s = to_host(rt, dev, dv, &hv);
        if (s == COPROC_OK)
            s = to_host(rt, dev, d, out);
        else
            coproc_column_free(d);
        if (s != COPROC_OK) {
            coproc_column_free(hv);
            return s;
        }
        coproc__attach_validity(*out, hv);
        return COPROC_OK;
    }
    size_t bytes = d->length * coproc_type_size(d->type);
    coproc_status s;
    if (zero_copy(dev) && bytes > 0) {
        cl_int err;
        void *p = NULL;
        if (!(err = coproc__fault(rt, dev->index, COPROC__FAULT_MAP)))
            p = coproc__map_now(dev, dev->queue, d->mem, CL_MAP_READ | CL_MAP_WRITE, 0, bytes,
                                &err);
        if (!p) {
            s = coproc__fail_cl(rt, err, "mapping a result on device %d", dev->index);
            coproc_column_free(d);
            return s;
        }
        s = coproc_column_wrap(rt, d->type, p, d->length, out);
        if (s != COPROC_OK) {
            coproc__submit_begin(dev);
            clEnqueueUnmapMemObject(dev->queue, d->mem, p, 0, NULL, NULL);
            coproc__submit_end(dev);
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

coproc_status coproc__result_to_host(coproc_runtime *rt, coproc__device *dev, coproc_result *r)
{
    coproc_column **slot[] = {&r->column, &r->column2, &r->groups.keys, &r->groups.count,
                              &r->groups.sum, &r->groups.min, &r->groups.max, &r->join.left,
                              &r->join.right};
    coproc_status s = COPROC_OK;
    for (size_t i = 0; i < sizeof slot / sizeof slot[0]; i++) {
        coproc_column *d = *slot[i];
        if (!d || !d->dev)
            continue;
        *slot[i] = NULL;
        if (s == COPROC_OK)
            s = to_host(rt, dev, d, slot[i]);
        else
            coproc_column_free(d);
    }
    return s;
}

void coproc__op_observe_begin(coproc__device *dev, coproc__op_timer *t, const coproc_op *op)
{
    if (dev && !dev->observe_off)
        coproc__op_timer_begin_sampled(dev, t, (coproc__op_kind)op->kind);
}

void coproc__op_observe_end(coproc_runtime *rt, coproc__device *dev, coproc__op_timer *t,
                            const coproc_op *op, const coproc_result *r, coproc_status s)
{
    if (!dev || dev->observe_off)
        return;
    const coproc__op_def *def = coproc__op_def_of(op);
    double x[2] = {0, 0}, out_bytes;
    if (s == COPROC_OK && def)
        op_features(rt, def, op, r, x, &out_bytes);
    coproc__op_timer_end(dev, t, (coproc__op_kind)op->kind, x, s == COPROC_OK && def);
}

void coproc__op_call_begin(coproc_runtime *rt, coproc__device *dev, coproc__op_call *c,
                           const coproc_op *op)
{
    if (!dev)
        return;
    c->clock.submitted = rt->backend->now(rt);
    dev->backend->task_begin(rt, dev, &c->clock);
    coproc__op_observe_begin(dev, &c->timer, op);
}

void coproc__op_call_end(coproc_runtime *rt, coproc__device *dev, coproc__op_call *c,
                         const coproc_op *op, const coproc_result *r, coproc_status s)
{
    if (!dev)
        return;
    coproc__op_observe_end(rt, dev, &c->timer, op, r, s);
    dev->backend->task_end(rt, dev, &c->clock);
    rt->backend->task_waited(rt, &c->clock);
}

/* The in-memory run on device columns v, timed into dev's model; results
 * come back as host columns. */
static coproc_status run_in_memory(coproc_runtime *rt, coproc__device *dev,
                                   const coproc__op_def *def, const coproc_op *op,
                                   const coproc_column *const *v, coproc_result *out)
{
    coproc__op_timer t;
    coproc__op_observe_begin(dev, &t, op);
    coproc_status s = def->run(rt, dev, op, v, out);
    coproc__op_observe_end(rt, dev, &t, op, out, s);
    if (s == COPROC_OK)
        s = coproc__result_to_host(rt, dev, out);
    if (s != COPROC_OK) {
        coproc_result_free(out);
        memset(out, 0, sizeof *out);
        out->device = dev->index;
    }
    return s;
}

void coproc__op_prefetch(coproc_runtime *rt, coproc__device *dev, const coproc_op *op)
{
    const coproc__op_def *def = def_of(op);
    const coproc_column *in[MAX_INPUTS];
    int n = def->inputs(op, in);
    double inputs = coproc__op_input_bytes(op);
    if (in[0]->dev || zero_copy(dev) ||
        inputs + working_bytes(rt, dev, def, op) > (double)dev->budget_bytes)
        return; /* nothing to copy, or it will stream */
    for (int i = 0; i < n; i++)
        for (const coproc_column *c = in[i]; c; c = c->validity)
            coproc__residency_prefetch(rt, dev, c);
}

static coproc_status op_run(coproc_runtime *rt, coproc__device *dev, const coproc__op_def *def,
                            const coproc_op *op, coproc_result *out);

coproc_status coproc__op_run(coproc_runtime *rt, coproc__device *dev, const coproc_op *op,
                             coproc_result *out)
{
    const coproc__op_def *def = def_of(op);
    coproc_status s = op_run(rt, dev, def, op, out);
    if (s == COPROC_OK && def->learn)
        def->learn(op, out, &rt->seen);
    return s;
}

int coproc__op_fits(coproc_runtime *rt, const coproc_op *op, coproc__device *dev)
{
    const coproc__op_def *def = def_of(op);
    const coproc_column *in[MAX_INPUTS];
    def->inputs(op, in);
    if (def->stream || in[0]->dev)
        return 1;
    double need = working_bytes(rt, dev, def, op) + (zero_copy(dev) ? 0 : coproc__op_input_bytes(op));
    return need <= (double)dev->budget_bytes;
}

/* Stream op within `budget` bytes reserved on dev (beside the cached copies). */
static coproc_status stream_within(coproc_runtime *rt, coproc__device *dev,
                                   const coproc__op_def *def, const coproc_op *op,
                                   uint64_t budget, coproc_result *out)
{
    if (!def->stream)
        return coproc__fail(rt, COPROC_DEVICE_OUT_OF_MEMORY, "%s on device %d: the inputs "
                            "exceed the device's budget (%llu bytes) and %s", def->name,
                            dev->index, (unsigned long long)dev->budget_bytes, def->no_stream);
    const coproc_column *in[MAX_INPUTS];
    int n = def->inputs(op, in);
    for (int i = 0; i < n && !def->stream_nulls; i++)
        if (coproc__has_nulls(in[i]))
            return coproc__fail(rt, COPROC_UNSUPPORTED,
                                "%s on device %d: input %d has nulls "
                                "(a validity bitmap) and the inputs exceed the device's budget "
                                "(%llu bytes) or 2^32 rows; its streamed or partitioned run "
                                "does not handle nulls yet (reduce, select, map and group-by do)",
                                def->name, dev->index, i, (unsigned long long)dev->budget_bytes);
    uint64_t got = coproc__residency_reserve(dev, budget);
    coproc_status s;
    if (got < COPROC__STREAM_MIN_BUDGET)
        s = coproc__fail(rt, COPROC_DEVICE_OUT_OF_MEMORY, "device %d: %llu bytes free for "
                         "streaming, below the %zu bytes a stream needs", dev->index,
                         (unsigned long long)got, COPROC__STREAM_MIN_BUDGET);
    else
        s = def->stream(rt, dev, op, (size_t)got, out);
    coproc__residency_unreserve(dev, got);
    out->streamed = 1;
    if (s == COPROC_OK) {
        /* A streamed run teaches no model (chunks cost what the whole does not),
         * but a simulated device charges the whole operator's compute. */
        double x[2] = {0, 0}, out_bytes;
        op_features(rt, def, op, out, x, &out_bytes);
        dev->backend->op_ran(dev, (int)op->kind, x, -1);
    }
    return s;
}

static coproc_status op_run(coproc_runtime *rt, coproc__device *dev, const coproc__op_def *def,
                            const coproc_op *op, coproc_result *out)
{
    const coproc_column *in[MAX_INPUTS];
    int n = def->inputs(op, in);
    memset(out, 0, sizeof *out);
    out->device = dev->index;

    if (in[0]->dev) /* device columns: already where they must be */
        return run_in_memory(rt, dev, def, op, in, out);

    double inputs = coproc__op_input_bytes(op);
    double work = working_bytes(rt, dev, def, op);
    double need = work + (zero_copy(dev) ? 0 : inputs);
    /* Streaming sizes its buffers from the budget: keep each allocation legal. */
    uint64_t stream_budget = dev->budget_bytes < dev->info.max_alloc_bytes
                                 ? dev->budget_bytes : dev->info.max_alloc_bytes;
    size_t longest = 0; /* past UINT32_MAX rows only streaming runs (in chunks below it) */
    for (int i = 0; i < n; i++)
        longest = in[i]->length > longest ? in[i]->length : longest;
    int huge = longest > UINT32_MAX;
    if (huge && !def->stream)
        return coproc__fail(rt, COPROC_UNSUPPORTED,
                            "%s: an input of %zu rows; over more than "
                            "UINT32_MAX rows only streamed operators run, and %s",
                            def->name, longest,
                            def->no_stream ? def->no_stream : "it does not stream");
    if (need > (double)dev->budget_bytes || huge)
        return stream_within(rt, dev, def, op, stream_budget, out);

    for (int attempt = 0;; attempt++) {
        /* Device views of the inputs and of their validities (vviews[i]),
         * over the resident copies. */
        coproc_column views[MAX_INPUTS], vviews[MAX_INPUTS];
        const coproc_column *v[MAX_INPUTS];
        int pinned = 0; /* inputs pinned, with their validities */
        coproc_status s = COPROC_OK;
        for (; pinned < n && s == COPROC_OK; pinned++) {
            cl_mem mem, vmem = NULL;
            const coproc_column *c = in[pinned], *cv = c->validity;
            s = coproc__residency_acquire(rt, dev, c, &mem, NULL);
            if (s != COPROC_OK)
                break;
            if (cv && (s = coproc__residency_acquire(rt, dev, cv, &vmem, NULL)) != COPROC_OK) {
                coproc__residency_unpin(dev, c);
                break;
            }
            views[pinned] = (coproc_column){
                .rt = rt, .dev = dev, .type = c->type, .length = c->length, .mem = mem};
            if (cv) {
                vviews[pinned] = (coproc_column){.rt = rt,
                                                 .dev = dev,
                                                 .type = cv->type,
                                                 .length = cv->length,
                                                 .mem = vmem,
                                                 .is_validity = 1};
                views[pinned].validity = &vviews[pinned];
            }
            v[pinned] = &views[pinned];
        }
        if (s == COPROC_OK) {
            /* Hold room for outputs and temporaries: evict what no operator uses. */
            uint64_t held = coproc__residency_reserve(dev, (uint64_t)work);
            s = run_in_memory(rt, dev, def, op, v, out);
            coproc__residency_unreserve(dev, held);
        }
        for (int i = 0; i < pinned; i++) {
            coproc__residency_unpin(dev, in[i]);
            if (in[i]->validity)
                coproc__residency_unpin(dev, in[i]->validity);
        }
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
            return stream_within(rt, dev, def, op, stream_budget / 2, out);
    }
}
