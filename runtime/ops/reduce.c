/* reduce.c - sum, min, max, count of a whole column (cl/reduce.cl). */
#include <math.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "data/column.h"
#include "backend/opencl/launch.h"
#include "backend/opencl/program.h"
#include "ops/ops.h"
#include "ops/nulls.h"
#include "ops/reduce_fold.h"
#include "core/error.h"
#include "exec/hostops.h"
#include "ops/table.h"
#include "backend/opencl/sync.h"

static const char *const type_suffix[] = {"i32", "i64", "u32", "u64", "f32", "f64"};

static const char *const op_name[] = {"sum", "min", "max"};

/* The reduction over the valid rows of a column with nulls (coproc.h):
 * cl/reduce.cl's reduce_valid_* kernels, which also count the valid rows;
 * COUNT counts the validity's set bits alone. No valid row: the identity. */
static coproc_status reduce_valid(coproc_runtime *rt, coproc_reduce_op op, const coproc_column *col,
                                  coproc_scalar *out)
{
    coproc_scalar r;
    coproc__reduce_identity(op, col->type, &r);
    coproc__device *dev = col->dev;
    size_t n = col->length;
    if (op == COPROC_REDUCE_COUNT || n == 0) {
        uint64_t valid = 0;
        coproc_status s = coproc__nulls_count(rt, dev, col->validity->mem, n, &valid);
        if (s != COPROC_OK)
            return s;
        if (op == COPROC_REDUCE_COUNT)
            r.v.u64 = valid;
        r.count = valid;
        *out = r;
        return COPROC_OK;
    }
    char kname[40];
    snprintf(kname, sizeof kname, "reduce_valid_%s_%s", op_name[op], type_suffix[col->type]);
    size_t psize = coproc__reduce_partial_size(dev, op, col->type);
    coproc__kernel_lease *l = NULL;
    coproc__geometry g = {0};
    cl_mem counts = NULL;
    cl_uint *host_counts = NULL;
    coproc_status s = coproc__kernel_borrow(rt, dev, "reduce", kname, &l);
    if (s == COPROC_OK) {
        g = coproc__geometry_for(dev, n, 0);
        s = coproc__lease_scratch(rt, dev, l, g.groups * psize);
    }
    if (s == COPROC_OK)
        s = coproc__buffer_new(rt, dev, g.groups * sizeof(cl_uint), &counts);
    if (s == COPROC_OK && !(host_counts = malloc(g.groups * sizeof *host_counts)))
        s = coproc__fail(rt, COPROC_HOST_OUT_OF_MEMORY, "out of host memory");
    if (s != COPROC_OK)
        goto done;
    cl_ulong nn = n;
    coproc__args a = {l->kernel, 0, CL_SUCCESS};
    COPROC__ARG(a, col->mem);
    COPROC__ARG(a, nn);
    COPROC__ARG(a, col->validity->mem);
    COPROC__ARG(a, l->scratch);
    COPROC__ARG(a, counts);
    COPROC__ARG_LOCAL(a, g.local * psize);
    COPROC__ARG_LOCAL(a, g.local * sizeof(cl_uint));
    s = coproc__launch(rt, dev, &a, &g, kname);
    if (s != COPROC_OK)
        goto done;
    unsigned char *host = l->scratch_host;
    cl_int err = clEnqueueReadBuffer(dev->queue, l->scratch, CL_FALSE, 0, g.groups * psize, host, 0,
                                     NULL, NULL);
    if (err == CL_SUCCESS)
        err = coproc__read_now(dev, dev->queue, counts, 0, g.groups * sizeof *host_counts,
                               host_counts, 0, NULL, NULL);
    if (err != CL_SUCCESS) {
        coproc__finish(dev, dev->queue); /* the first read may still target host */
        s = coproc__fail_cl(rt, err, "%s: reading partials from device %d", kname, dev->index);
        goto done;
    }
    uint64_t total = 0;
    for (size_t i = 0; i < g.groups; i++) {
        total += host_counts[i];
        coproc__reduce_fold(op, col->type, psize, host + i * psize, &r, i == 0);
    }
    if (total == 0)
        coproc__reduce_identity(op, col->type, &r); /* every row null: as over zero rows */
    r.count = total;
    *out = r;
done:
    free(host_counts);
    if (counts)
        clReleaseMemObject(counts);
    coproc__kernel_return(dev, l);
    return s;
}

coproc_status coproc__reduce_run(coproc_runtime *rt, coproc_reduce_op op, const coproc_column *col,
                                 coproc_scalar *out)
{
    if (!rt)
        return COPROC_NULL_POINTER;
    if (!out)
        return coproc__fail(rt, COPROC_NULL_POINTER, "coproc_reduce: out is NULL");
    coproc_status s = coproc__column_check(rt, col, NULL, "coproc_reduce: column");
    if (s != COPROC_OK)
        return s;
    if ((unsigned)op > COPROC_REDUCE_COUNT)
        return coproc__fail(rt, COPROC_INVALID_ARGUMENT, "coproc_reduce: unknown op %d", (int)op);
    if (col->validity)
        return reduce_valid(rt, op, col, out);
    coproc_scalar r;
    coproc__reduce_identity(op, col->type, &r);
    r.count = col->length;
    if (op == COPROC_REDUCE_COUNT) {
        r.v.u64 = col->length;
        *out = r;
        return COPROC_OK;
    }
    if (col->length == 0) {
        *out = r;
        return COPROC_OK;
    }

    coproc__device *dev = col->dev;
    char kname[32];
    snprintf(kname, sizeof kname, "reduce_%s_%s", op_name[op], type_suffix[col->type]);
    size_t psize = coproc__reduce_partial_size(dev, op, col->type);

    /* The kernel and its partials buffer come from the device's pool (made
     * once); the partials are read with the blocking read right after the
     * launch: one wait a call. The kernel first: its build tells the
     * work-group limit the geometry keeps to (program.c). */
    coproc__kernel_lease *l = NULL;
    coproc__geometry g = {0};
    s = coproc__kernel_borrow(rt, dev, "reduce", kname, &l);
    if (s == COPROC_OK) {
        g = coproc__geometry_for(dev, col->length, 0);
        s = coproc__lease_scratch(rt, dev, l, g.groups * psize);
    }
    if (s != COPROC_OK)
        goto done;
    cl_ulong n = col->length;
    coproc__args a = {l->kernel, 0, CL_SUCCESS};
    COPROC__ARG(a, col->mem);
    COPROC__ARG(a, n);
    COPROC__ARG(a, l->scratch);
    COPROC__ARG_LOCAL(a, g.local * psize);
    s = coproc__launch(rt, dev, &a, &g, kname);
    if (s != COPROC_OK)
        goto done;
    unsigned char *host = l->scratch_host;
    cl_int err =
        coproc__read_now(dev, dev->queue, l->scratch, 0, g.groups * psize, host, 0, NULL, NULL);
    if (err != CL_SUCCESS) {
        s = coproc__fail_cl(rt, err, "%s: reading partials from device %d", kname, dev->index);
        goto done;
    }
    for (size_t i = 0; i < g.groups; i++)
        coproc__reduce_fold(op, col->type, psize, host + i * psize, &r, i == 0);
    *out = r;
done:
    coproc__kernel_return(dev, l);
    return s;
}

/* ---- the operator table's entry (ops/table.h) */

static coproc_status reduce_check(coproc_runtime *rt, const coproc_op *op,
                                  const coproc_column *const *in, int n)
{
    if ((unsigned)op->reduce > COPROC_REDUCE_COUNT)
        return coproc__fail(rt, COPROC_INVALID_ARGUMENT, "coproc_submit: reduce op %d",
                            (int)op->reduce);
    return COPROC_OK;
}

static void reduce_features(const coproc_op *op, const coproc_result *r,
                            const coproc__op_seen *seen, double x[2], double *out_bytes)
{
    x[0] = coproc__col_bytes(op->a);
    x[1] = 0;
    *out_bytes = 0;
}

/* The work-groups' partials (reduce_run allocates groups x 8 bytes; groups
 * stay in the thousands). */
static double reduce_device_bytes(const coproc__device *dev, const coproc_op *op, double out)
{
    return 64 << 10;
}

static coproc_status reduce_in_memory(coproc_runtime *rt, coproc__device *dev,
                                      const coproc_op *op, const coproc_column *const *v,
                                      coproc_result *out)
{
    return coproc__reduce_run(rt, op->reduce, v[0], &out->scalar);
}

static coproc_status reduce_stream(coproc_runtime *rt, coproc__device *dev, const coproc_op *op,
                                   size_t budget, coproc_result *out)
{
    return coproc__stream_reduce(rt, dev, op->reduce, op->a, budget, &out->scalar);
}

const coproc__op_def coproc__op_reduce = {
    .name = "reduce",
    .kind = COPROC_OP_REDUCE,
    .variant = COPROC_VARIANT_DEFAULT,
    .inputs = coproc__inputs_a,
    .check = reduce_check,
    .features = reduce_features,
    .device_bytes = reduce_device_bytes,
    .run = reduce_in_memory,
    .stream = reduce_stream,
    .stream_nulls = 1,
};
