/* map.c - element-wise arithmetic (coproc_map, coproc_map_const) and type
 * casts (coproc_cast), one pass each over cl/map.cl. */
#include <stdio.h>
#include <stdint.h>
#include <string.h>

#include "data/column.h"
#include "backend/opencl/launch.h"
#include "backend/opencl/program.h"
#include "ops/nulls.h"
#include "ops/ops.h"
#include "core/error.h"
#include "exec/chunked.h"
#include "exec/hostops.h"
#include "ops/table.h"
#include "backend/opencl/sync.h"

static const char *const type_suffix[] = {"i32", "i64", "u32", "u64", "f32", "f64"};

/* Enqueue the built kernel over n rows, wait, and hand back out (or free it). */
static coproc_status run(coproc_runtime *rt, coproc__device *dev, coproc__args *a, size_t n,
                         const char *kname, coproc_column *out, coproc_column **result)
{
    coproc_status s = COPROC_OK;
    if (n > 0) {
        coproc__geometry g = coproc__geometry_for(dev, n, 0);
        s = coproc__launch(rt, dev, a, &g, kname);
        if (s == COPROC_OK) {
            cl_int err = coproc__finish(dev, dev->queue);
            if (err != CL_SUCCESS)
                s = coproc__fail_cl(rt, err, "%s: clFinish on device %d", kname, dev->index);
        }
    }
    if (s != COPROC_OK) {
        coproc_column_free(out);
        return s;
    }
    *result = out;
    return COPROC_OK;
}

/* a op (b or c): b NULL takes the constant c (bytes of a's type). */
static coproc_status map_common(coproc_runtime *rt, const char *what, coproc_arith op,
                                const coproc_column *a, const coproc_column *b,
                                const void *c, coproc_column **out)
{
    if ((unsigned)op > COPROC_ARITH_DIV)
        return coproc__fail(rt, COPROC_INVALID_ARGUMENT, "%s: unknown operation %d", what,
                            (int)op);
    if ((unsigned)a->type >= COPROC__TYPE_COUNT)
        return coproc__fail(rt, COPROC_UNSUPPORTED_TYPE, "%s: invalid type %d", what,
                            (int)a->type);
    coproc__device *dev = a->dev;
    char kname[32];
    snprintf(kname, sizeof kname, "map_%s", type_suffix[a->type]);
    coproc_column *col = NULL;
    coproc__kernel_lease *k = NULL;
    coproc_status s = coproc__column_new(rt, dev, a->type, a->length, &col);
    if (s == COPROC_OK)
        s = coproc__kernel_borrow(rt, dev, "map", kname, &k);
    if (s != COPROC_OK) {
        coproc_column_free(col);
        return s;
    }
    cl_int use_const = b == NULL, opcode = (cl_int)op;
    cl_ulong n = a->length;
    coproc__args args = {k->kernel, 0, CL_SUCCESS};
    cl_mem bmem = b ? b->mem : a->mem; /* unused with the constant */
    COPROC__ARG(args, a->mem);
    COPROC__ARG(args, bmem);
    coproc__arg(&args, coproc_type_size(a->type), c);
    COPROC__ARG(args, use_const);
    COPROC__ARG(args, opcode);
    COPROC__ARG(args, n);
    COPROC__ARG(args, col->mem);
    s = run(rt, dev, &args, a->length, kname, col, out);
    coproc__kernel_return(dev, k);
    return s;
}

coproc_status coproc__map_run(coproc_runtime *rt, coproc_arith op, const coproc_column *a,
                              const coproc_column *b, coproc_column **out)
{
    if (!rt)
        return COPROC_NULL_POINTER;
    if (!out)
        return coproc__fail(rt, COPROC_NULL_POINTER, "coproc_map: out is NULL");
    *out = NULL;
    coproc_status s = coproc__column_check(rt, a, NULL, "coproc_map: a");
    if (s == COPROC_OK)
        s = coproc__column_check(rt, b, a->dev, "coproc_map: b");
    if (s != COPROC_OK)
        return s;
    if (a->type != b->type)
        return coproc__fail(rt, COPROC_INVALID_ARGUMENT, "coproc_map: a is %s, b is %s (types "
                            "must match; coproc_cast one)", coproc_type_name(a->type),
                            coproc_type_name(b->type));
    if (a->length != b->length)
        return coproc__fail(rt, COPROC_LENGTH_MISMATCH, "coproc_map: a has %zu rows, b %zu",
                            a->length, b->length);
    unsigned char zero[8] = {0};
    s = map_common(rt, "coproc_map", op, a, b, zero, out);
    /* null in, null out (rows under nulls were computed from whatever lay there) */
    if (s == COPROC_OK && (a->validity || b->validity))
        s = coproc__nulls_give_and(rt, out, a->validity, b->validity);
    return s;
}

coproc_status coproc__map_const_run(coproc_runtime *rt, coproc_arith op, const coproc_column *a,
                                    coproc_value c, coproc_column **out)
{
    if (!rt)
        return COPROC_NULL_POINTER;
    if (!out)
        return coproc__fail(rt, COPROC_NULL_POINTER, "coproc_map_const: out is NULL");
    *out = NULL;
    coproc_status s = coproc__column_check(rt, a, NULL, "coproc_map_const: a");
    if (s != COPROC_OK)
        return s;
    /* The constant in the column's type; float32 rounds it to nearest, so the
     * operation is float op float as for two columns. */
    unsigned char bytes[8] = {0};
    switch (a->type) {
    case COPROC_INT32: {
        if (c.i64 < INT32_MIN || c.i64 > INT32_MAX)
            return coproc__fail(rt, COPROC_INVALID_ARGUMENT, "coproc_map_const: %lld does not "
                                "fit int32", (long long)c.i64);
        int32_t v = (int32_t)c.i64;
        memcpy(bytes, &v, 4);
        break;
    }
    case COPROC_UINT32: {
        if (c.u64 > UINT32_MAX)
            return coproc__fail(rt, COPROC_INVALID_ARGUMENT, "coproc_map_const: %llu does not "
                                "fit uint32", (unsigned long long)c.u64);
        uint32_t v = (uint32_t)c.u64;
        memcpy(bytes, &v, 4);
        break;
    }
    case COPROC_FLOAT32: {
        float v = (float)c.f64;
        memcpy(bytes, &v, 4);
        break;
    }
    default:
        memcpy(bytes, &c, 8);
        break;
    }
    s = map_common(rt, "coproc_map_const", op, a, NULL, bytes, out);
    if (s == COPROC_OK && a->validity)
        s = coproc__nulls_give_and(rt, out, a->validity, NULL);
    return s;
}

coproc_status coproc__cast_run(coproc_runtime *rt, const coproc_column *a, coproc_type to,
                               coproc_column **out)
{
    if (!rt)
        return COPROC_NULL_POINTER;
    if (!out)
        return coproc__fail(rt, COPROC_NULL_POINTER, "coproc_cast: out is NULL");
    *out = NULL;
    coproc_status s = coproc__column_check(rt, a, NULL, "coproc_cast: a");
    if (s != COPROC_OK)
        return s;
    if ((unsigned)to >= COPROC__TYPE_COUNT || (unsigned)a->type >= COPROC__TYPE_COUNT)
        return coproc__fail(rt, COPROC_UNSUPPORTED_TYPE, "coproc_cast: invalid type %d",
                            (unsigned)to >= COPROC__TYPE_COUNT ? (int)to : (int)a->type);
    coproc__device *dev = a->dev;
    char kname[32];
    snprintf(kname, sizeof kname, "cast_%s", type_suffix[a->type]);
    coproc_column *col = NULL;
    coproc__kernel_lease *k = NULL;
    s = coproc__column_new(rt, dev, to, a->length, &col);
    if (s == COPROC_OK)
        s = coproc__kernel_borrow(rt, dev, "map", kname, &k);
    if (s != COPROC_OK) {
        coproc_column_free(col);
        return s;
    }
    cl_ulong n = a->length;
    cl_int to_code = (cl_int)to;
    coproc__args args = {k->kernel, 0, CL_SUCCESS};
    COPROC__ARG(args, a->mem);
    COPROC__ARG(args, n);
    COPROC__ARG(args, to_code);
    COPROC__ARG(args, col->mem);
    s = run(rt, dev, &args, a->length, kname, col, out);
    coproc__kernel_return(dev, k);
    if (s == COPROC_OK && a->validity)
        s = coproc__nulls_give_and(rt, out, a->validity, NULL);
    return s;
}

/* ---- the operator table's entries (ops/table.h) */

static coproc_status map_check(coproc_runtime *rt, const coproc_op *op,
                               const coproc_column *const *in, int n)
{
    if ((unsigned)op->arith > COPROC_ARITH_DIV)
        return coproc__fail(rt, COPROC_INVALID_ARGUMENT, "coproc_submit: arithmetic %d",
                            (int)op->arith);
    if (op->b && op->a->type != op->b->type)
        return coproc__fail(rt, COPROC_INVALID_ARGUMENT, "coproc_submit: map over %s and %s",
                            coproc_type_name(op->a->type), coproc_type_name(op->b->type));
    if (!op->b && op->a->type == COPROC_INT32 && (op->c.i64 < INT32_MIN || op->c.i64 > INT32_MAX))
        return coproc__fail(rt, COPROC_INVALID_ARGUMENT, "coproc_submit: map constant %lld does "
                            "not fit int32", (long long)op->c.i64);
    if (!op->b && op->a->type == COPROC_UINT32 && op->c.u64 > UINT32_MAX)
        return coproc__fail(rt, COPROC_INVALID_ARGUMENT, "coproc_submit: map constant %llu does "
                            "not fit uint32", (unsigned long long)op->c.u64);
    return COPROC_OK;
}

static void map_features(const coproc_op *op, const coproc_result *r, const coproc__op_seen *seen,
                         double x[2], double *out_bytes)
{
    x[0] = coproc__col_bytes(op->a) + coproc__col_bytes(op->b);
    x[1] = coproc__col_bytes(op->a);
    *out_bytes = x[1];
}

/* The output column (map_common allocates one of a's type and length). */
static double map_device_bytes(const coproc__device *dev, const coproc_op *op, double out)
{
    return out;
}

static coproc_status map_in_memory(coproc_runtime *rt, coproc__device *dev, const coproc_op *op,
                                   const coproc_column *const *v, coproc_result *out)
{
    return op->b ? coproc__map_run(rt, op->arith, v[0], v[1], &out->column)
                 : coproc__map_const_run(rt, op->arith, v[0], op->c, &out->column);
}

static coproc_status map_stream(coproc_runtime *rt, coproc__device *dev, const coproc_op *op,
                                size_t budget, coproc_result *out)
{
    return coproc__stream_map(rt, dev, op->arith, op->a, op->b, op->c, budget, &out->column);
}

const coproc__op_def coproc__op_map = {
    .name = "map",
    .kind = COPROC_OP_MAP,
    .variant = COPROC_VARIANT_DEFAULT,
    .inputs = coproc__inputs_a_opt_b,
    .same_length = 1,
    .check = map_check,
    .features = map_features,
    .device_bytes = map_device_bytes,
    .run = map_in_memory,
    .stream = map_stream,
    .stream_nulls = 1,
};

static coproc_status cast_check(coproc_runtime *rt, const coproc_op *op,
                                const coproc_column *const *in, int n)
{
    if ((unsigned)op->to >= COPROC__TYPE_COUNT)
        return coproc__fail(rt, COPROC_UNSUPPORTED_TYPE, "coproc_submit: cast to invalid type %d",
                            (int)op->to);
    return COPROC_OK;
}

static void cast_features(const coproc_op *op, const coproc_result *r,
                          const coproc__op_seen *seen, double x[2], double *out_bytes)
{
    x[0] = coproc__col_bytes(op->a);
    x[1] = coproc__col_rows(op->a) * (double)coproc_type_size(op->to);
    *out_bytes = x[1];
}

static coproc_status cast_in_memory(coproc_runtime *rt, coproc__device *dev, const coproc_op *op,
                                    const coproc_column *const *v, coproc_result *out)
{
    return coproc__cast_run(rt, v[0], op->to, &out->column);
}

static coproc_status cast_stream(coproc_runtime *rt, coproc__device *dev, const coproc_op *op,
                                 size_t budget, coproc_result *out)
{
    coproc__chunking c = {.rows = op->a->length, .align = 1,
                          .row_bytes = 2.0 * (double)(coproc_type_size(op->a->type) +
                                                      coproc_type_size(op->to)),
                          .slice = coproc__slice_rows, .combine = coproc__combine_rows};
    return coproc__stream_chunked(rt, dev, op, &coproc__op_cast, budget, &c, out);
}

const coproc__op_def coproc__op_cast = {
    .name = "cast", .kind = COPROC_OP_MAP, .variant = COPROC_VARIANT_CAST,
    .inputs = coproc__inputs_a, .check = cast_check, .features = cast_features,
    .device_bytes = map_device_bytes, .run = cast_in_memory, .stream = cast_stream,
};
