/* reduce.c - sum, min, max, count of a whole column (cl/reduce.cl). */
#include <math.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "column.h"
#include "launch.h"
#include "program.h"
#include "ops.h"
#include "runtime.h"

static const char *const type_suffix[] = {"i32", "i64", "u32", "u64", "f32", "f64"};

static int is_float(coproc_type t) { return t == COPROC_FLOAT32 || t == COPROC_FLOAT64; }
static int is_signed(coproc_type t) { return t == COPROC_INT32 || t == COPROC_INT64; }

/* Size of one partial as the kernel writes it (see cl/reduce.cl). */
static size_t partial_size(const coproc__device *dev, coproc_reduce_op op, coproc_type t)
{
    if (op == COPROC_REDUCE_SUM)
        return t == COPROC_FLOAT32 && !dev->info.has_fp64 ? 4 : 8;
    return coproc_type_size(t);
}

/* Identity value for an empty input. */
static void identity(coproc_reduce_op op, coproc_type t, coproc_scalar *r)
{
    memset(r, 0, sizeof *r);
    if (op == COPROC_REDUCE_COUNT || op == COPROC_REDUCE_SUM) {
        r->type = is_float(t) ? COPROC_FLOAT64 : is_signed(t) ? COPROC_INT64 : COPROC_UINT64;
        if (op == COPROC_REDUCE_COUNT)
            r->type = COPROC_UINT64;
        return;
    }
    int mn = op == COPROC_REDUCE_MIN;
    switch (t) {
    case COPROC_INT32: r->type = COPROC_INT64; r->v.i64 = mn ? INT32_MAX : INT32_MIN; break;
    case COPROC_INT64: r->type = COPROC_INT64; r->v.i64 = mn ? INT64_MAX : INT64_MIN; break;
    case COPROC_UINT32: r->type = COPROC_UINT64; r->v.u64 = mn ? UINT32_MAX : 0; break;
    case COPROC_UINT64: r->type = COPROC_UINT64; r->v.u64 = mn ? UINT64_MAX : 0; break;
    default: r->type = COPROC_FLOAT64; r->v.f64 = mn ? INFINITY : -INFINITY; break;
    }
}

/* Fold partial k (raw bytes as the kernel wrote them) into r. */
static void fold(coproc_reduce_op op, coproc_type t, size_t psize, const unsigned char *p,
                 coproc_scalar *r, int first)
{
    if (op == COPROC_REDUCE_SUM) {
        if (is_float(t)) {
            double v;
            if (psize == 4) { float f; memcpy(&f, p, 4); v = f; } else memcpy(&v, p, 8);
            r->v.f64 += v;
        } else {
            uint64_t v;
            memcpy(&v, p, 8);
            r->v.u64 += v; /* two's complement: the same bits for signed sums */
        }
        return;
    }
    int mn = op == COPROC_REDUCE_MIN;
    switch (t) {
    case COPROC_INT32:
    case COPROC_INT64: {
        int64_t v;
        if (t == COPROC_INT32) { int32_t w; memcpy(&w, p, 4); v = w; } else memcpy(&v, p, 8);
        if (first || (mn ? v < r->v.i64 : v > r->v.i64))
            r->v.i64 = v;
        break;
    }
    case COPROC_UINT32:
    case COPROC_UINT64: {
        uint64_t v;
        if (t == COPROC_UINT32) { uint32_t w; memcpy(&w, p, 4); v = w; } else memcpy(&v, p, 8);
        if (first || (mn ? v < r->v.u64 : v > r->v.u64))
            r->v.u64 = v;
        break;
    }
    default: {
        double v;
        if (t == COPROC_FLOAT32) { float f; memcpy(&f, p, 4); v = f; } else memcpy(&v, p, 8);
        r->v.f64 = first ? v : (mn ? fmin(r->v.f64, v) : fmax(r->v.f64, v)); break; }
    }
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
    coproc_scalar r;
    identity(op, col->type, &r);
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
    static const char *const op_name[] = {"sum", "min", "max"};
    char kname[32];
    snprintf(kname, sizeof kname, "reduce_%s_%s", op_name[op], type_suffix[col->type]);
    size_t psize = partial_size(dev, op, col->type);
    coproc__geometry g = coproc__geometry_for(dev, col->length, 0);

    cl_kernel k = NULL;
    cl_mem partials = NULL;
    unsigned char *host = NULL;
    s = coproc__kernel_create(rt, dev, "reduce", kname, &k);
    if (s != COPROC_OK)
        goto done;
    s = coproc__buffer_new(rt, dev, g.groups * psize, &partials);
    if (s != COPROC_OK)
        goto done;
    host = malloc(g.groups * psize);
    if (!host) {
        s = coproc__fail(rt, COPROC_HOST_OUT_OF_MEMORY, "out of host memory");
        goto done;
    }
    cl_ulong n = col->length;
    coproc__args a = {k, 0, CL_SUCCESS};
    COPROC__ARG(a, col->mem);
    COPROC__ARG(a, n);
    COPROC__ARG(a, partials);
    COPROC__ARG_LOCAL(a, g.local * psize);
    s = coproc__launch(rt, dev, &a, &g, kname);
    if (s != COPROC_OK)
        goto done;
    cl_int err = clEnqueueReadBuffer(dev->queue, partials, CL_TRUE, 0, g.groups * psize, host, 0,
                                     NULL, NULL);
    if (err != CL_SUCCESS) {
        s = coproc__fail_cl(rt, err, "%s: reading partials from device %d", kname, dev->index);
        goto done;
    }
    for (size_t i = 0; i < g.groups; i++)
        fold(op, col->type, psize, host + i * psize, &r, i == 0);
    *out = r;
done:
    free(host);
    if (partials)
        clReleaseMemObject(partials);
    if (k)
        clReleaseKernel(k);
    return s;
}
