/* scan.c - prefix sums (coproc_scan) and the shared primitives of
 * primitives.h, by reduce-then-scan over cl/scan.cl: group sums, a one-group
 * scan of those sums, then a per-group scan from its offset. */
#include <stdio.h>
#include <stdint.h>
#include <string.h>

#include "data/column.h"
#include "backend/opencl/launch.h"
#include "ops/primitives.h"
#include "backend/opencl/program.h"
#include "ops/nulls.h"
#include "ops/ops.h"
#include "core/error.h"
#include "exec/chunked.h"
#include "ops/table.h"
#include "backend/opencl/sync.h"

/* The elements of one scan as cl/scan.cl's kernels see them. */
typedef struct scan_plan {
    const char *sums;    /* pass 1 kernel */
    const char *groups;  /* pass 2 kernel */
    const char *apply;   /* pass 3 kernel */
    size_t sum_size;     /* bytes of one group sum */
    size_t out_size;     /* bytes of one output element (local tile element) */
    int apply_has_inclusive; /* pass 3 takes the `inclusive` argument */
} scan_plan;

/* Must match SCAN_ITEMS and SCAN_PAD in cl/scan.cl. */
#define SCAN_ITEMS 8
#define SCAN_PADDED(count) ((count) + (count) / 32 + 1)

/* The plan's three kernels from dev's pool (program.h), and the group sums
 * (`sums_bytes`) in the first one's scratch buffer; return_kernels gives them
 * back, whatever was borrowed. */
static coproc_status borrow_kernels(coproc_runtime *rt, coproc__device *dev, const scan_plan *p,
                                    size_t sums_bytes, coproc__kernel_lease **l)
{
    coproc_status s = coproc__kernel_borrow(rt, dev, "scan", p->sums, &l[0]);
    if (s == COPROC_OK)
        s = coproc__kernel_borrow(rt, dev, "scan", p->groups, &l[1]);
    if (s == COPROC_OK)
        s = coproc__kernel_borrow(rt, dev, "scan", p->apply, &l[2]);
    if (s == COPROC_OK)
        s = coproc__lease_scratch(rt, dev, l[0], sums_bytes);
    return s;
}

static void return_kernels(coproc__device *dev, coproc__kernel_lease **l)
{
    for (int i = 0; i < 3; i++)
        coproc__kernel_return(dev, l[i]);
}

/*
 * Run the three passes over n rows of `in` into `out`. *total (may be NULL)
 * receives the raw bytes of the grand total (sum_size of them). n > 0.
 */
static coproc_status run_scan(coproc_runtime *rt, coproc__device *dev, const scan_plan *p,
                              cl_mem in, cl_mem valid, size_t n, cl_mem out, int inclusive,
                              void *total)
{
    /* Built before the geometry is made: the build tells the work-group
     * limit its kernels allow (program.c). */
    cl_program built;
    coproc_status s = coproc__program_get(rt, dev, "scan", &built);
    if (s != COPROC_OK)
        return s;
    coproc__geometry g = coproc__geometry_for(dev, n, 0);
    coproc__geometry one = coproc__geometry_for(dev, 0, 0); /* one work-group */
    /* Chunks of whole 64-row blocks keep GPU tiles aligned. */
    cl_ulong chunk = ((n + g.groups - 1) / g.groups + 63) / 64 * 64;
    cl_ulong nn = n;
    cl_uint groups = (cl_uint)g.groups;
    coproc__kernel_lease *k[3] = {NULL, NULL, NULL};
    s = borrow_kernels(rt, dev, p, (g.groups + 1) * p->sum_size, k);
    if (s != COPROC_OK)
        goto done;
    cl_mem sums = k[0]->scratch;
    cl_int has_valid = valid != NULL;
    cl_mem vmem = valid ? valid : in; /* without nulls: never read */

    coproc__args a1 = {k[0]->kernel, 0, CL_SUCCESS};
    COPROC__ARG(a1, in);
    COPROC__ARG(a1, nn);
    COPROC__ARG(a1, chunk);
    COPROC__ARG(a1, sums);
    COPROC__ARG_LOCAL(a1, g.local * p->sum_size);
    COPROC__ARG(a1, vmem);
    COPROC__ARG(a1, has_valid);
    s = coproc__launch(rt, dev, &a1, &g, p->sums);
    if (s != COPROC_OK)
        goto done;

    coproc__args a2 = {k[1]->kernel, 0, CL_SUCCESS};
    COPROC__ARG(a2, sums);
    COPROC__ARG(a2, groups);
    COPROC__ARG_LOCAL(a2, one.local * p->sum_size);
    s = coproc__launch(rt, dev, &a2, &one, p->groups);
    if (s != COPROC_OK)
        goto done;

    coproc__args a3 = {k[2]->kernel, 0, CL_SUCCESS};
    cl_int incl = inclusive;
    COPROC__ARG(a3, in);
    COPROC__ARG(a3, nn);
    COPROC__ARG(a3, chunk);
    COPROC__ARG(a3, sums);
    COPROC__ARG(a3, out);
    if (p->apply_has_inclusive)
        COPROC__ARG(a3, incl);
    COPROC__ARG_LOCAL(a3, SCAN_PADDED(g.local * SCAN_ITEMS) * p->out_size);
    COPROC__ARG_LOCAL(a3, g.local * p->out_size);
    COPROC__ARG(a3, vmem);
    COPROC__ARG(a3, has_valid);
    s = coproc__launch(rt, dev, &a3, &g, p->apply);
    if (s != COPROC_OK)
        goto done;

    if (total) {
        cl_int err = coproc__read_now(dev, dev->queue, sums, g.groups * p->sum_size, p->sum_size,
                                      total, 0, NULL, NULL);
        if (err != CL_SUCCESS)
            s = coproc__fail_cl(rt, err, "%s: reading the total from device %d", p->groups,
                                dev->index);
    }
done:
    return_kernels(dev, k);
    return s;
}

coproc_status coproc__scan_exclusive_u32(coproc_runtime *rt, coproc__device *dev, cl_mem in,
                                         size_t n, cl_mem out, uint64_t *total)
{
    static const scan_plan plan = {"scan_sums_u32", "scan_groups_u64", "scan_apply_u32_u32",
                                   8, 4, 1};
    if (n == 0) {
        if (total)
            *total = 0;
        return COPROC_OK;
    }
    cl_ulong t = 0;
    coproc_status s = run_scan(rt, dev, &plan, in, NULL, n, out, 0, total ? &t : NULL);
    if (s == COPROC_OK && total)
        *total = t;
    return s;
}

coproc_status coproc__flags_to_positions(coproc_runtime *rt, coproc__device *dev, cl_mem flags,
                                         size_t n, cl_mem *positions, uint64_t *count)
{
    static const scan_plan plan = {"scan_sums_flags", "scan_groups_u64", "scan_positions",
                                   8, 4, 0};
    *positions = NULL;
    *count = 0;
    if (n > UINT32_MAX)
        return coproc__fail(rt, COPROC_UNSUPPORTED, "%zu rows: positions are 32-bit", n);
    /* The output's size is known only after pass 2, so the passes run in two
     * steps: counts and offsets first, then the positions. The program is
     * built first: the build tells its kernels' work-group limit. */
    cl_program built;
    coproc_status s = coproc__program_get(rt, dev, "scan", &built);
    if (s != COPROC_OK)
        return s;
    coproc__geometry g = coproc__geometry_for(dev, n, 0);
    coproc__geometry one = coproc__geometry_for(dev, 0, 0);
    cl_ulong chunk = ((n + g.groups - 1) / g.groups + 63) / 64 * 64;
    cl_ulong nn = n;
    cl_uint groups = (cl_uint)g.groups;
    coproc__kernel_lease *k[3] = {NULL, NULL, NULL};
    cl_mem out = NULL;
    cl_ulong total = 0;
    if (n == 0)
        goto done;
    s = borrow_kernels(rt, dev, &plan, (g.groups + 1) * plan.sum_size, k);
    if (s != COPROC_OK)
        goto done;
    cl_mem sums = k[0]->scratch;

    coproc__args a1 = {k[0]->kernel, 0, CL_SUCCESS};
    cl_int no_valid = 0;
    COPROC__ARG(a1, flags);
    COPROC__ARG(a1, nn);
    COPROC__ARG(a1, chunk);
    COPROC__ARG(a1, sums);
    COPROC__ARG_LOCAL(a1, g.local * plan.sum_size);
    COPROC__ARG(a1, flags); /* no validity: never read */
    COPROC__ARG(a1, no_valid);
    s = coproc__launch(rt, dev, &a1, &g, plan.sums);
    if (s != COPROC_OK)
        goto done;
    coproc__args a2 = {k[1]->kernel, 0, CL_SUCCESS};
    COPROC__ARG(a2, sums);
    COPROC__ARG(a2, groups);
    COPROC__ARG_LOCAL(a2, one.local * plan.sum_size);
    s = coproc__launch(rt, dev, &a2, &one, plan.groups);
    if (s != COPROC_OK)
        goto done;
    cl_int err = coproc__read_now(dev, dev->queue, sums, g.groups * plan.sum_size, sizeof total,
                                  &total, 0, NULL, NULL);
    if (err != CL_SUCCESS) {
        s = coproc__fail_cl(rt, err, "%s: reading the count from device %d", plan.groups,
                            dev->index);
        goto done;
    }
    if (total == 0)
        goto done;
    s = coproc__buffer_new(rt, dev, total * sizeof(cl_uint), &out);
    if (s != COPROC_OK)
        goto done;
    coproc__args a3 = {k[2]->kernel, 0, CL_SUCCESS};
    COPROC__ARG(a3, flags);
    COPROC__ARG(a3, nn);
    COPROC__ARG(a3, chunk);
    COPROC__ARG(a3, sums);
    COPROC__ARG(a3, out);
    COPROC__ARG_LOCAL(a3, SCAN_PADDED(g.local * SCAN_ITEMS) * plan.out_size);
    COPROC__ARG_LOCAL(a3, g.local * plan.out_size);
    s = coproc__launch(rt, dev, &a3, &g, plan.apply);
done:
    if (s == COPROC_OK && !out)
        s = coproc__buffer_new(rt, dev, sizeof(cl_uint), &out); /* max(count, 1) elements */
    if (s == COPROC_OK) {
        *positions = out;
        *count = total;
    } else if (out) {
        clReleaseMemObject(out);
    }
    return_kernels(dev, k);
    return s;
}

coproc_status coproc__scan_run(coproc_runtime *rt, const coproc_column *in, int exclusive,
                               coproc_column **out)
{
    static const scan_plan plans[COPROC__TYPE_COUNT] = {
        [COPROC_INT32] = {"scan_sums_i32", "scan_groups_u64", "scan_apply_i32", 8, 8, 1},
        [COPROC_INT64] = {"scan_sums_i64", "scan_groups_u64", "scan_apply_i64", 8, 8, 1},
        [COPROC_UINT32] = {"scan_sums_u32", "scan_groups_u64", "scan_apply_u32", 8, 8, 1},
        [COPROC_UINT64] = {"scan_sums_u64", "scan_groups_u64", "scan_apply_u64", 8, 8, 1},
        [COPROC_FLOAT32] = {"scan_sums_f32", "scan_groups_f32", "scan_apply_f32", 4, 4, 1},
        [COPROC_FLOAT64] = {"scan_sums_f64", "scan_groups_f64", "scan_apply_f64", 8, 8, 1},
    };
    static const coproc_type out_type[COPROC__TYPE_COUNT] = {
        COPROC_INT64, COPROC_INT64, COPROC_UINT64, COPROC_UINT64, COPROC_FLOAT32, COPROC_FLOAT64};
    if (!rt)
        return COPROC_NULL_POINTER;
    if (!out)
        return coproc__fail(rt, COPROC_NULL_POINTER, "coproc_scan: out is NULL");
    *out = NULL;
    coproc_status s = coproc__column_check(rt, in, NULL, "coproc_scan: input");
    if (s != COPROC_OK)
        return s;
    if ((unsigned)in->type >= COPROC__TYPE_COUNT)
        return coproc__fail(rt, COPROC_UNSUPPORTED_TYPE, "coproc_scan: invalid type %d",
                            (int)in->type);
    coproc_column *col = NULL;
    s = coproc__column_new(rt, in->dev, out_type[in->type], in->length, &col);
    if (s != COPROC_OK)
        return s;
    /* nulls add 0 (the kernels skip them) and stay null (the input's validity) */
    if (in->length > 0)
        s = run_scan(rt, in->dev, &plans[in->type], in->mem,
                     in->validity ? in->validity->mem : NULL, in->length, col->mem, !exclusive,
                     NULL);
    if (s == COPROC_OK && in->validity) {
        coproc_column *bits = NULL;
        s = coproc__nulls_and(rt, in->dev, in->validity, NULL, in->length, &bits);
        coproc__attach_validity(col, bits);
    }
    if (s == COPROC_OK) {
        cl_int err = coproc__finish(in->dev, in->dev->queue);
        if (err != CL_SUCCESS)
            s = coproc__fail_cl(rt, err, "coproc_scan: clFinish on device %d", in->dev->index);
    }
    if (s != COPROC_OK) {
        coproc_column_free(col);
        return s;
    }
    *out = col;
    return COPROC_OK;
}

/* ---- the operator table's entry (ops/table.h) */

static void scan_features(const coproc_op *op, const coproc_result *r, const coproc__op_seen *seen,
                          double x[2], double *out_bytes)
{
    x[0] = coproc__col_bytes(op->a);
    x[1] = coproc__col_rows(op->a) * 8;
    *out_bytes = x[1];
}

/* The output (8 bytes a row at most) and the work-groups' block sums. */
static double scan_device_bytes(const coproc__device *dev, const coproc_op *op, double out)
{
    return out + (64 << 10);
}

static coproc_status scan_in_memory(coproc_runtime *rt, coproc__device *dev, const coproc_op *op,
                                    const coproc_column *const *v, coproc_result *out)
{
    return coproc__scan_run(rt, v[0], op->exclusive, &out->column);
}

/* Chunks scanned on the device, each shifted on the host by the total of the
 * rows before it (the carry: the last inclusive sum so far). */
static coproc_status scan_combine(coproc_runtime *rt, const coproc_op *op, size_t first, size_t n,
                                  coproc_result *part, coproc_result *acc)
{
    coproc_status s = coproc__combine_rows(rt, op, first, n, part, acc);
    if (s != COPROC_OK || n == 0)
        return s;
    if (first == 0)
        return COPROC_OK;
    coproc_column *c = acc->column;
    /* the row before the chunk: an exclusive scan's carry leaves it out */
    const void *prev = (const char *)op->a->host + (first - 1) * coproc_type_size(op->a->type);
    if (c->type == COPROC_FLOAT32) {
        float *o = (float *)c->host + first;
        float carry = o[-1] + (op->exclusive ? *(const float *)prev : 0);
        for (size_t i = 0; i < n; i++)
            o[i] += carry;
    } else if (c->type == COPROC_FLOAT64) {
        double *o = (double *)c->host + first;
        double carry = o[-1] + (op->exclusive ? *(const double *)prev : 0);
        for (size_t i = 0; i < n; i++)
            o[i] += carry;
    } else {
        uint64_t *o = (uint64_t *)c->host + first, carry = o[-1];
        if (op->exclusive) {
            switch (op->a->type) { /* wrapping, as the scan itself */
            case COPROC_INT32: carry += (uint64_t)(int64_t)*(const int32_t *)prev; break;
            case COPROC_UINT32: carry += *(const uint32_t *)prev; break;
            default: carry += *(const uint64_t *)prev; break;
            }
        }
        for (size_t i = 0; i < n; i++)
            o[i] += carry;
    }
    return COPROC_OK;
}

static coproc_status scan_stream(coproc_runtime *rt, coproc__device *dev, const coproc_op *op,
                                 size_t budget, coproc_result *out)
{
    coproc__chunking c = {.rows = op->a->length, .align = 1,
                          .row_bytes = 2.0 * ((double)coproc_type_size(op->a->type) + 8),
                          .whole_bytes = 64 << 10, .slice = coproc__slice_rows,
                          .combine = scan_combine};
    return coproc__stream_chunked(rt, dev, op, &coproc__op_scan, budget, &c, out);
}

const coproc__op_def coproc__op_scan = {
    .name = "scan", .kind = COPROC_OP_SCAN, .variant = COPROC_VARIANT_DEFAULT,
    .inputs = coproc__inputs_a, .features = scan_features, .device_bytes = scan_device_bytes,
    .run = scan_in_memory, .stream = scan_stream,
};
