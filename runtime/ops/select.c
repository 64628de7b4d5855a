/* select.c - coproc_select and coproc_select_bitmap (cl/select.cl).
 * Each predicate runs in the variant of cl/select.cl built for its column
 * type, in the kernels of its comparison (the constants are kernel
 * arguments), so the test is compiled in and vectorises. A count of one
 * predicate reads the column and writes only per-group counts. Otherwise one
 * kernel per predicate evaluates it into a bitmap a word at a time (the second
 * predicate ANDs or ORs its words into the first's) and writes per-group
 * counts; the host adds the counts; a second kernel turns the bitmap into
 * ordered positions, each group starting at the sum of the counts before it. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "data/column.h"
#include "backend/opencl/launch.h"
#include "backend/opencl/program.h"
#include "ops/ops.h"
#include "core/error.h"
#include "exec/chunked.h"
#include "exec/hostops.h"
#include "ops/table.h"
#include "backend/opencl/sync.h"

/* SEL_T of cl/select.cl per coproc_type, and its kernels' names per coproc_cmp. */
static const char *const type_cl[] = {"int", "long", "uint", "ulong", "float", "double"};
static const char *const cmp_name[] = {"eq", "ne", "lt", "le", "gt", "ge", "range"};

/* A predicate as its kernel takes it: constants in the column's own type. */
typedef struct pred_args {
    const coproc_column *col;
    cl_int cmp;
    size_t size;          /* bytes of a and b */
    unsigned char a[8];
    unsigned char b[8];
} pred_args;

/* The smallest float >= a and the largest float <= a (a not NaN). */
static float float_ceil(double a)
{
    if (a > FLT_MAX)
        return INFINITY;
    if (a < -FLT_MAX)
        return isinf(a) ? -INFINITY : -FLT_MAX;
    float f = (float)a;
    return (double)f < a ? nextafterf(f, INFINITY) : f;
}

static float float_floor(double a)
{
    if (a < -FLT_MAX)
        return -INFINITY;
    if (a > FLT_MAX)
        return isinf(a) ? INFINITY : FLT_MAX;
    float f = (float)a;
    return (double)f > a ? nextafterf(f, -INFINITY) : f;
}

/*
 * A float32 column compared with a double constant, as C compares them (in
 * double), rewritten as float comparisons so devices without fp64 agree:
 * x < a <=> x < ceil(a), x <= a <=> x <= floor(a), x == a only if a is a float.
 * A test that no row passes becomes 0 <= x < 0, one that every row passes
 * (NaN included) x != NaN.
 */
static void float32_constants(const coproc_predicate *p, pred_args *out)
{
    double a = p->a.f64, b = p->b.f64;
    float fa = 0, fb = 0;
    cl_int cmp = (cl_int)p->cmp;
    int never = 0, always = 0;
    if (isnan(a) || (p->cmp == COPROC_CMP_RANGE && isnan(b))) {
        always = p->cmp == COPROC_CMP_NE;
        never = !always;
    } else {
        switch (p->cmp) {
        case COPROC_CMP_EQ:
        case COPROC_CMP_NE:
            fa = float_ceil(a);
            if ((double)fa != a) {
                always = p->cmp == COPROC_CMP_NE;
                never = !always;
            }
            break;
        case COPROC_CMP_LT: case COPROC_CMP_GE: fa = float_ceil(a); break;
        case COPROC_CMP_LE: case COPROC_CMP_GT: fa = float_floor(a); break;
        default: fa = float_ceil(a); fb = float_ceil(b); break;
        }
    }
    if (never) {
        cmp = COPROC_CMP_RANGE;
        fa = fb = 0;
    } else if (always) {
        cmp = COPROC_CMP_NE;
        fa = NAN;
    }
    out->cmp = cmp;
    memcpy(out->a, &fa, 4);
    memcpy(out->b, &fb, 4);
}

/* A predicate's constants must fit its int32/uint32 column (coproc.h); b is
 * read only by a range. Checked at submit and again where they are converted. */
static coproc_status check_constants(coproc_runtime *rt, const coproc_predicate *p,
                                     const char *what)
{
    int range = p->cmp == COPROC_CMP_RANGE;
    if (p->col->type == COPROC_INT32 &&
        (p->a.i64 < INT32_MIN || p->a.i64 > INT32_MAX ||
         (range && (p->b.i64 < INT32_MIN || p->b.i64 > INT32_MAX))))
        return coproc__fail(rt, COPROC_INVALID_ARGUMENT, "%s: constant %lld does not fit "
                            "int32", what, (long long)(p->a.i64 < INT32_MIN ||
                                                       p->a.i64 > INT32_MAX ? p->a.i64 : p->b.i64));
    if (p->col->type == COPROC_UINT32 && (p->a.u64 > UINT32_MAX || (range && p->b.u64 > UINT32_MAX)))
        return coproc__fail(rt, COPROC_INVALID_ARGUMENT, "%s: constant %llu does not fit "
                            "uint32", what, (unsigned long long)(p->a.u64 > UINT32_MAX ? p->a.u64
                                                                 : p->b.u64));
    return COPROC_OK;
}

/* Check one predicate and convert its constants. */
static coproc_status pred_prepare(coproc_runtime *rt, const coproc_predicate *p, const char *what,
                                  pred_args *out)
{
    memset(out, 0, sizeof *out);
    coproc_status s = coproc__column_check(rt, p->col, NULL, what);
    if (s != COPROC_OK)
        return s;
    if ((unsigned)p->cmp > COPROC_CMP_RANGE)
        return coproc__fail(rt, COPROC_INVALID_ARGUMENT, "%s: unknown comparison %d", what,
                            (int)p->cmp);
    coproc_type t = p->col->type;
    if ((unsigned)t >= COPROC__TYPE_COUNT)
        return coproc__fail(rt, COPROC_UNSUPPORTED_TYPE, "%s: invalid type %d", what, (int)t);
    int range = p->cmp == COPROC_CMP_RANGE;
    out->col = p->col;
    out->cmp = (cl_int)p->cmp;
    out->size = coproc_type_size(t);
    if ((s = check_constants(rt, p, what)) != COPROC_OK)
        return s;
    switch (t) {
    case COPROC_INT32: {
        int32_t a = (int32_t)p->a.i64, b = range ? (int32_t)p->b.i64 : 0;
        memcpy(out->a, &a, 4);
        memcpy(out->b, &b, 4);
        break;
    }
    case COPROC_UINT32: {
        uint32_t a = (uint32_t)p->a.u64, b = range ? (uint32_t)p->b.u64 : 0;
        memcpy(out->a, &a, 4);
        memcpy(out->b, &b, 4);
        break;
    }
    case COPROC_FLOAT32:
        float32_constants(p, out);
        break;
    default: /* 64-bit types take the constant's bits as they are */
        memcpy(out->a, &p->a, 8);
        memcpy(out->b, &p->b, 8);
        break;
    }
    return COPROC_OK;
}

/* Check a filter; *np receives the number of predicates (1 or 2). */
static coproc_status filter_prepare(coproc_runtime *rt, const coproc_filter *f, const char *what,
                                    pred_args p[2], int *np)
{
    char label[96];
    if (!f)
        return coproc__fail(rt, COPROC_NULL_POINTER, "%s: filter is NULL", what);
    if ((unsigned)f->logic > COPROC_LOGIC_OR)
        return coproc__fail(rt, COPROC_INVALID_ARGUMENT, "%s: unknown logic %d", what,
                            (int)f->logic);
    snprintf(label, sizeof label, "%s: first predicate's column", what);
    coproc_status s = pred_prepare(rt, &f->first, label, &p[0]);
    if (s != COPROC_OK)
        return s;
    *np = 1;
    if (f->logic == COPROC_LOGIC_NONE)
        return COPROC_OK;
    snprintf(label, sizeof label, "%s: second predicate's column", what);
    s = pred_prepare(rt, &f->second, label, &p[1]);
    if (s != COPROC_OK)
        return s;
    if (p[1].col->dev != p[0].col->dev)
        return coproc__fail(rt, COPROC_WRONG_DEVICE, "%s: the predicates' columns live on "
                            "devices %d and %d", what, p[0].col->dev->index,
                            p[1].col->dev->index);
    if (p[1].col->length != p[0].col->length)
        return coproc__fail(rt, COPROC_LENGTH_MISMATCH, "%s: the predicates' columns have %zu "
                            "and %zu rows", what, p[0].col->length, p[1].col->length);
    *np = 2;
    return COPROC_OK;
}

/* The cl/select.cl variant for p's column type: its defines. */
static void pred_defines(const pred_args *p, char *defines, size_t size)
{
    snprintf(defines, size, "#define SEL_T %s\n", type_cl[p->col->type]);
}

/* Kernel select_<p's comparison> (positions: select_positions) of the
 * cl/select.cl variant for p's column type. */
static coproc_status pred_kernel(coproc_runtime *rt, coproc__device *dev, const pred_args *p,
                                 int positions, cl_kernel *out)
{
    char defines[32], kernel[32];
    pred_defines(p, defines, sizeof defines);
    snprintf(kernel, sizeof kernel, "select_%s", positions ? "positions" : cmp_name[p->cmp]);
    return coproc__kernel_create_variant(rt, dev, "select", defines, kernel, out);
}

/* Build the variants the np predicates use before a geometry is made: a
 * build tells the work-group limit of its kernels (program.c). */
static coproc_status pred_programs(coproc_runtime *rt, coproc__device *dev, const pred_args *p,
                                   int np)
{
    for (int i = 0; i < np; i++) {
        char defines[32];
        cl_program built;
        pred_defines(&p[i], defines, sizeof defines);
        coproc_status s = coproc__program_variant(rt, dev, "select", defines, &built);
        if (s != COPROC_OK)
            return s;
    }
    return COPROC_OK;
}

/* Read the groups' counts back (blocking) and add them into *count. */
static coproc_status sum_counts(coproc_runtime *rt, coproc__device *dev, cl_mem counts,
                                size_t groups, uint64_t *count)
{
    cl_uint *host = malloc(groups * sizeof *host);
    if (!host)
        return coproc__fail(rt, COPROC_HOST_OUT_OF_MEMORY, "out of host memory");
    cl_int err =
        coproc__read_now(dev, dev->queue, counts, 0, groups * sizeof *host, host, 0, NULL, NULL);
    if (err != CL_SUCCESS) {
        free(host);
        return coproc__fail_cl(rt, err, "select: reading counts from device %d", dev->index);
    }
    *count = 0;
    for (size_t i = 0; i < groups; i++)
        *count += host[i];
    free(host);
    return COPROC_OK;
}

/* The number of rows (n > 0) that match the one predicate p: no bitmap and
 * no positions, only a count per work-group. */
static coproc_status count_only(coproc_runtime *rt, coproc__device *dev, const pred_args *p,
                                size_t n, uint64_t *count)
{
    cl_mem counts = NULL;
    cl_kernel k = NULL;
    coproc_status s = pred_kernel(rt, dev, p, 0, &k); /* first: see pred_programs */
    coproc__geometry g = coproc__geometry_for(dev, n, 0);
    if (s == COPROC_OK)
        s = coproc__buffer_new(rt, dev, g.groups * sizeof(cl_uint), &counts);
    if (s == COPROC_OK) {
        cl_ulong nn = n, wchunk = 0;
        cl_int mode = 3; /* count only: the bitmap argument is not used */
        coproc__args a = {k, 0, CL_SUCCESS};
        COPROC__ARG(a, p->col->mem);
        COPROC__ARG(a, nn);
        COPROC__ARG(a, wchunk);
        coproc__arg(&a, p->size, p->a);
        coproc__arg(&a, p->size, p->b);
        COPROC__ARG(a, mode);
        COPROC__ARG(a, counts); /* as the bitmap: never touched */
        COPROC__ARG(a, counts);
        COPROC__ARG_LOCAL(a, 1);
        COPROC__ARG_LOCAL(a, g.local * sizeof(cl_uint));
        cl_int has_valid = 0;   /* a column with nulls takes the bitmap path */
        COPROC__ARG(a, counts); /* as the validity: never read */
        COPROC__ARG(a, has_valid);
        s = coproc__launch(rt, dev, &a, &g, "select (count)");
    }
    if (s == COPROC_OK)
        s = sum_counts(rt, dev, counts, g.groups, count);
    if (k)
        clReleaseKernel(k);
    if (counts)
        clReleaseMemObject(counts);
    return s;
}

/* Everything one filter run needs; released by filter_release. */
typedef struct filter_run {
    coproc__geometry g;
    cl_ulong wchunk;  /* bitmap words per group */
    cl_mem counts;    /* one uint per group */
    uint64_t count;   /* matching rows */
} filter_run;

/*
 * Evaluate the np predicates (n rows, n > 0) into bitmap (ceil(n/32) words)
 * and per-group counts, and read the total count back.
 */
static coproc_status filter_run_all(coproc_runtime *rt, coproc__device *dev, const pred_args *p,
                                    int np, coproc_logic logic, size_t n, cl_mem bitmap,
                                    filter_run *r)
{
    size_t words = (n + 31) / 32;
    r->counts = NULL;
    r->count = 0;
    coproc_status s = pred_programs(rt, dev, p, np);
    if (s != COPROC_OK)
        return s;
    r->g = coproc__geometry_for(dev, n, 0);
    r->wchunk = (words + r->g.groups - 1) / r->g.groups;
    cl_kernel k = NULL;
    s = coproc__buffer_new(rt, dev, r->g.groups * sizeof(cl_uint), &r->counts);
    if (s != COPROC_OK)
        return s;
    cl_ulong nn = n;
    for (int i = 0; i < np; i++) {
        s = pred_kernel(rt, dev, &p[i], 0, &k);
        if (s != COPROC_OK)
            return s;
        cl_int mode = i == 0 ? 0 : logic == COPROC_LOGIC_AND ? 1 : 2;
        coproc__args a = {k, 0, CL_SUCCESS};
        COPROC__ARG(a, p[i].col->mem);
        COPROC__ARG(a, nn);
        COPROC__ARG(a, r->wchunk);
        coproc__arg(&a, p[i].size, p[i].a);
        coproc__arg(&a, p[i].size, p[i].b);
        COPROC__ARG(a, mode);
        COPROC__ARG(a, bitmap);
        COPROC__ARG(a, r->counts);
        COPROC__ARG_LOCAL(a, 36 * r->g.local); /* 32 flags + 4 padding bytes per word */
        COPROC__ARG_LOCAL(a, r->g.local * sizeof(cl_uint));
        const coproc_column *valid = p[i].col->validity;
        cl_int has_valid = valid != NULL;
        cl_mem vmem = valid ? valid->mem : bitmap; /* without nulls: never read */
        COPROC__ARG(a, vmem);
        COPROC__ARG(a, has_valid);
        s = coproc__launch(rt, dev, &a, &r->g, "select");
        clReleaseKernel(k);
        if (s != COPROC_OK)
            return s;
    }
    return sum_counts(rt, dev, r->counts, r->g.groups, &r->count);
}

/* Positions of the set bits of bitmap, given the counts of filter_run_all. */
static coproc_status bitmap_positions(coproc_runtime *rt, coproc__device *dev,
                                      const pred_args *p, cl_mem bitmap, size_t n,
                                      const filter_run *r, cl_mem positions)
{
    cl_kernel k = NULL;
    /* From the variant the filter used: it is built already. */
    coproc_status s = pred_kernel(rt, dev, p, 1, &k);
    if (s != COPROC_OK)
        return s;
    cl_ulong words = (n + 31) / 32;
    coproc__args a = {k, 0, CL_SUCCESS};
    COPROC__ARG(a, bitmap);
    COPROC__ARG(a, words);
    COPROC__ARG(a, r->wchunk);
    COPROC__ARG(a, r->counts);
    COPROC__ARG(a, positions);
    COPROC__ARG_LOCAL(a, r->g.local * sizeof(cl_uint));
    COPROC__ARG_LOCAL(a, r->g.local * sizeof(cl_uint));
    s = coproc__launch(rt, dev, &a, &r->g, "select_positions");
    clReleaseKernel(k);
    return s;
}

static coproc_status finish(coproc_runtime *rt, coproc__device *dev, const char *what)
{
    cl_int err = coproc__finish(dev, dev->queue);
    if (err != CL_SUCCESS)
        return coproc__fail_cl(rt, err, "%s: clFinish on device %d", what, dev->index);
    return COPROC_OK;
}

coproc_status coproc__select_run(coproc_runtime *rt, const coproc_filter *f,
                                 coproc_column **positions, uint64_t *count)
{
    if (!rt)
        return COPROC_NULL_POINTER;
    if (positions)
        *positions = NULL;
    pred_args p[2];
    int np = 0;
    coproc_status s = filter_prepare(rt, f, "coproc_select", p, &np);
    if (s != COPROC_OK)
        return s;
    coproc__device *dev = p[0].col->dev;
    size_t n = p[0].col->length;
    if (n > UINT32_MAX)
        return coproc__fail(rt, COPROC_UNSUPPORTED, "coproc_select: %zu rows exceed 32-bit "
                            "positions", n);
    if (!positions && !count)
        return COPROC_OK;
    filter_run r = {.counts = NULL};
    cl_mem bitmap = NULL;
    coproc_column *out = NULL;
    if (n > 0 && !positions && np == 1 && !p[0].col->validity) {
        s = count_only(rt, dev, &p[0], n, &r.count);
    } else if (n > 0) {
        s = coproc__buffer_new(rt, dev, (n + 31) / 32 * sizeof(cl_uint), &bitmap);
        if (s == COPROC_OK)
            s = filter_run_all(rt, dev, p, np, f->logic, n, bitmap, &r);
    }
    if (s == COPROC_OK && positions) {
        s = coproc__column_new(rt, dev, COPROC_UINT32, r.count, &out);
        if (s == COPROC_OK && r.count > 0)
            s = bitmap_positions(rt, dev, &p[0], bitmap, n, &r, out->mem);
        if (s == COPROC_OK)
            s = finish(rt, dev, "coproc_select");
    }
    if (bitmap)
        clReleaseMemObject(bitmap);
    if (r.counts)
        clReleaseMemObject(r.counts);
    if (s != COPROC_OK) {
        coproc_column_free(out);
        return s;
    }
    if (positions)
        *positions = out;
    if (count)
        *count = r.count;
    return COPROC_OK;
}

coproc_status coproc__select_bitmap_run(coproc_runtime *rt, const coproc_filter *f,
                                        coproc_column **bitmap, uint64_t *count)
{
    if (!rt)
        return COPROC_NULL_POINTER;
    if (!bitmap)
        return coproc__fail(rt, COPROC_NULL_POINTER, "coproc_select_bitmap: bitmap is NULL");
    *bitmap = NULL;
    pred_args p[2];
    int np = 0;
    coproc_status s = filter_prepare(rt, f, "coproc_select_bitmap", p, &np);
    if (s != COPROC_OK)
        return s;
    coproc__device *dev = p[0].col->dev;
    size_t n = p[0].col->length;
    if (n > UINT32_MAX)
        return coproc__fail(rt, COPROC_UNSUPPORTED, "coproc_select_bitmap: %zu rows exceed "
                            "32-bit positions", n);
    filter_run r = {.counts = NULL};
    coproc_column *out = NULL;
    s = coproc__column_new(rt, dev, COPROC_UINT32, (n + 31) / 32, &out);
    if (s == COPROC_OK && n > 0)
        s = filter_run_all(rt, dev, p, np, f->logic, n, out->mem, &r);
    if (r.counts)
        clReleaseMemObject(r.counts);
    if (s != COPROC_OK) {
        coproc_column_free(out);
        return s;
    }
    *bitmap = out;
    if (count)
        *count = r.count;
    return COPROC_OK;
}

/* ---- the operator table's entries (ops/table.h) */

static int select_inputs(const coproc_op *op, const coproc_column *in[COPROC__OP_MAX_INPUTS])
{
    in[0] = op->filter.first.col;
    /* An unknown logic takes one input, so that select_check names it rather
     * than the shared checks calling a second column that is not there NULL. */
    if (op->filter.logic != COPROC_LOGIC_AND && op->filter.logic != COPROC_LOGIC_OR)
        return 1;
    in[1] = op->filter.second.col;
    return 2;
}

static coproc_status select_check(coproc_runtime *rt, const coproc_op *op,
                                  const coproc_column *const *in, int n)
{
    const coproc_filter *f = &op->filter;
    if ((unsigned)f->logic > COPROC_LOGIC_OR)
        return coproc__fail(rt, COPROC_INVALID_ARGUMENT, "coproc_submit: filter logic %d",
                            (int)f->logic);
    for (int i = 0; i < n; i++) {
        coproc_cmp c = i == 0 ? f->first.cmp : f->second.cmp;
        if ((unsigned)c > COPROC_CMP_RANGE)
            return coproc__fail(rt, COPROC_INVALID_ARGUMENT, "coproc_submit: comparison %d",
                                (int)c);
        coproc_status s = check_constants(rt, i == 0 ? &f->first : &f->second,
                                          i == 0 ? "coproc_submit: select's first predicate"
                                                 : "coproc_submit: select's second predicate");
        if (s != COPROC_OK)
            return s;
    }
    return COPROC_OK;
}

static void select_features(const coproc_op *op, const coproc_result *r,
                            const coproc__op_seen *seen, double x[2], double *out_bytes)
{
    const coproc_column *in[COPROC__OP_MAX_INPUTS];
    int n_in = select_inputs(op, in);
    double rows = coproc__col_rows(in[0]);
    x[0] = 0;
    for (int i = 0; i < n_in; i++)
        x[0] += coproc__col_bytes(in[i]);
    x[1] = r ? (double)r->count : rows * seen->selectivity;
    *out_bytes = op->variant == COPROC_VARIANT_SELECT_BITMAP ? (rows + 31) / 32 * 4 : x[1] * 4;
}

/* As coproc__select_run allocates: the bitmap, the work-groups' counts and
 * the positions (out_bytes). */
static double select_device_bytes(const coproc__device *dev, const coproc_op *op, double out)
{
    return coproc__col_rows(op->filter.first.col) / 8 + out + (64 << 10);
}

static void select_learn(const coproc_op *op, const coproc_result *r, coproc__op_seen *seen)
{
    double rows = coproc__col_rows(op->filter.first.col);
    if (rows > 0)
        coproc__op_seen_learn(seen, (double)r->count / rows, NAN, NAN);
}

static coproc_filter filter_on(const coproc_op *op, const coproc_column *const *v)
{
    coproc_filter f = op->filter;
    f.first.col = v[0];
    if (f.logic != COPROC_LOGIC_NONE)
        f.second.col = v[1];
    return f;
}

static coproc_status select_in_memory(coproc_runtime *rt, coproc__device *dev,
                                      const coproc_op *op, const coproc_column *const *v,
                                      coproc_result *out)
{
    coproc_filter f = filter_on(op, v);
    return coproc__select_run(rt, &f, &out->column, &out->count);
}

static coproc_status select_stream(coproc_runtime *rt, coproc__device *dev, const coproc_op *op,
                                   size_t budget, coproc_result *out)
{
    return coproc__stream_select(rt, dev, &op->filter, budget, &out->column, &out->count);
}

const coproc__op_def coproc__op_select = {
    .name = "select",
    .kind = COPROC_OP_SELECT,
    .variant = COPROC_VARIANT_DEFAULT,
    .inputs = select_inputs,
    .same_length = 1,
    .check = select_check,
    .features = select_features,
    .device_bytes = select_device_bytes,
    .learn = select_learn,
    .run = select_in_memory,
    .stream = select_stream,
    .stream_nulls = 1,
};

/* coproc_select with positions NULL: the count alone. */
static void select_count_features(const coproc_op *op, const coproc_result *r,
                                  const coproc__op_seen *seen, double x[2], double *out_bytes)
{
    select_features(op, r, seen, x, out_bytes);
    *out_bytes = 0;
}

static coproc_status select_count_in_memory(coproc_runtime *rt, coproc__device *dev,
                                            const coproc_op *op, const coproc_column *const *v,
                                            coproc_result *out)
{
    coproc_filter f = filter_on(op, v);
    return coproc__select_run(rt, &f, NULL, &out->count);
}

static coproc_status select_count_stream(coproc_runtime *rt, coproc__device *dev,
                                         const coproc_op *op, size_t budget, coproc_result *out)
{
    return coproc__stream_select(rt, dev, &op->filter, budget, NULL, &out->count);
}

const coproc__op_def coproc__op_select_count = {
    .name = "select_count",
    .kind = COPROC_OP_SELECT,
    .variant = COPROC_VARIANT_SELECT_COUNT,
    .inputs = select_inputs,
    .same_length = 1,
    .check = select_check,
    .features = select_count_features,
    .device_bytes = select_device_bytes,
    .learn = select_learn,
    .run = select_count_in_memory,
    .stream = select_count_stream,
    .stream_nulls = 1,
};

static coproc_status select_bitmap_in_memory(coproc_runtime *rt, coproc__device *dev,
                                             const coproc_op *op, const coproc_column *const *v,
                                             coproc_result *out)
{
    coproc_filter f = filter_on(op, v);
    return coproc__select_bitmap_run(rt, &f, &out->column, &out->count);
}

/* Chunks of whole bitmap words: the chunks' bitmaps laid end to end. */
static coproc_status select_bitmap_slice(coproc_runtime *rt, const coproc_op *op, size_t first,
                                         size_t n, coproc_op *part,
                                         coproc_column *views[COPROC__OP_MAX_INPUTS])
{
    *part = *op;
    coproc_status s = coproc__host_view(rt, op->filter.first.col, first, n, &views[0]);
    part->filter.first.col = views[0];
    if (s == COPROC_OK && op->filter.logic != COPROC_LOGIC_NONE) {
        s = coproc__host_view(rt, op->filter.second.col, first, n, &views[1]);
        part->filter.second.col = views[1];
    }
    return s;
}

static coproc_status select_bitmap_combine(coproc_runtime *rt, const coproc_op *op, size_t first,
                                           size_t n, coproc_result *part, coproc_result *acc)
{
    size_t words = (op->filter.first.col->length + 31) / 32;
    coproc_status s = acc->column ? COPROC_OK
                                  : coproc__host_column_new(rt, COPROC_UINT32, words, &acc->column);
    if (s != COPROC_OK)
        return s;
    memcpy((uint32_t *)acc->column->host + first / 32, part->column->host,
           part->column->length * sizeof(uint32_t));
    acc->count += part->count;
    return COPROC_OK;
}

static coproc_status select_bitmap_stream(coproc_runtime *rt, coproc__device *dev,
                                          const coproc_op *op, size_t budget,
                                          coproc_result *out)
{
    const coproc_column *in[COPROC__OP_MAX_INPUTS];
    int n_in = select_inputs(op, in);
    double row = 0.125 * 2; /* the chunk's bitmap, on the device and coming back */
    for (int i = 0; i < n_in; i++)
        row += coproc_type_size(in[i]->type);
    coproc__chunking c = {.rows = in[0]->length, .align = 32, .row_bytes = row,
                          .whole_bytes = 64 << 10, .slice = select_bitmap_slice,
                          .combine = select_bitmap_combine};
    return coproc__stream_chunked(rt, dev, op, &coproc__op_select_bitmap, budget, &c, out);
}

const coproc__op_def coproc__op_select_bitmap = {
    .name = "select_bitmap", .kind = COPROC_OP_SELECT, .variant = COPROC_VARIANT_SELECT_BITMAP,
    .inputs = select_inputs, .same_length = 1, .check = select_check,
    .features = select_features, .device_bytes = select_device_bytes, .learn = select_learn,
    .run = select_bitmap_in_memory, .stream = select_bitmap_stream,
};
