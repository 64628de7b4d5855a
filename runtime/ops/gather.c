/* gather.c - coproc_gather, coproc_scatter, coproc_compact and
 * coproc_reduce_where (cl/gather.cl). Positions are checked on the device:
 * gather flags bad positions while it copies and drops its output; scatter
 * checks first and its copy kernel skips all writes when the check failed,
 * so dst is untouched without a host round trip between the two. */
#include <math.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "data/column.h"
#include "backend/opencl/launch.h"
#include "backend/opencl/program.h"
#include "ops/nulls.h"
#include "ops/ops.h"
#include "ops/reduce_fold.h"
#include "core/error.h"
#include "exec/chunked.h"
#include "backend/opencl/transfer.h"
#include "ops/table.h"
#include "backend/opencl/sync.h"

static const char *const type_suffix[] = {"i32", "i64", "u32", "u64", "f32", "f64"};

/* Kernels move bits: 4- and 8-byte elements. */
static const char *move_suffix(coproc_type t) { return coproc_type_size(t) == 4 ? "b32" : "b64"; }

static coproc_status check_type(coproc_runtime *rt, const coproc_column *c, const char *what)
{
    if ((unsigned)c->type >= COPROC__TYPE_COUNT)
        return coproc__fail(rt, COPROC_UNSUPPORTED_TYPE, "%s: invalid type %d", what,
                            (int)c->type);
    return COPROC_OK;
}

/* Gather's positions: UINT32, or UINT64 (a select over more than 2^32 rows
 * gives them). */
static coproc_status check_positions(coproc_runtime *rt, const coproc_column *c, const char *what)
{
    if (c->type != COPROC_UINT32 && c->type != COPROC_UINT64)
        return coproc__fail(rt, COPROC_UNSUPPORTED_TYPE, "%s is %s; it must be uint32 or uint64",
                            what, coproc_type_name(c->type));
    return COPROC_OK;
}

static coproc_status check_uint32(coproc_runtime *rt, const coproc_column *c, const char *what)
{
    if (c->type != COPROC_UINT32)
        return coproc__fail(rt, COPROC_UNSUPPORTED_TYPE, "%s is %s; it must be uint32", what,
                            coproc_type_name(c->type));
    return COPROC_OK;
}

/* A new buffer of `bytes` (a multiple of 4) zeroed on the device's queue. */
static coproc_status new_zeroed(coproc_runtime *rt, coproc__device *dev, size_t bytes, cl_mem *buf)
{
    coproc_status s = coproc__buffer_new(rt, dev, bytes, buf);
    if (s != COPROC_OK)
        return s;
    cl_uint zero = 0;
    cl_int err =
        coproc__enqueue_fill(dev, dev->queue, *buf, &zero, sizeof zero, 0, bytes, 0, NULL, NULL);
    if (err != CL_SUCCESS) {
        clReleaseMemObject(*buf);
        *buf = NULL;
        return coproc__fail_cl(rt, err, "clEnqueueFillBuffer on device %d", dev->index);
    }
    return COPROC_OK;
}

/* A zeroed one-word flag buffer for the position checks. */
static coproc_status new_flag(coproc_runtime *rt, coproc__device *dev, cl_mem *flag)
{
    return new_zeroed(rt, dev, sizeof(cl_uint), flag);
}

/* Wait for the queue and read the flag: OUT_OF_RANGE when it is set. */
static coproc_status read_flag(coproc_runtime *rt, coproc__device *dev, cl_mem flag,
                               const char *what, size_t limit)
{
    cl_uint bad = 0;
    cl_int err = coproc__read_now(dev, dev->queue, flag, 0, sizeof bad, &bad, 0, NULL, NULL);
    if (err != CL_SUCCESS)
        return coproc__fail_cl(rt, err, "%s: reading the range check from device %d", what,
                               dev->index);
    if (bad)
        return coproc__fail(rt, COPROC_OUT_OF_RANGE, "%s: a position is >= %zu, the length of "
                            "the indexed column", what, limit);
    return COPROC_OK;
}

/* gather with null positions (coproc.h): out row i is null where
 * positions[i] is, whatever value it holds. The positions under nulls are
 * made 0 and gathered as any (src empty: every position must be null), and
 * out's validity is then ANDed with the positions'. */
static coproc_status gather_null_positions(coproc_runtime *rt, const coproc_column *src,
                                           const coproc_column *positions, coproc_column **out)
{
    coproc__device *dev = src->dev;
    size_t m = positions->length;
    coproc_column *filled = NULL, *bits = NULL;
    coproc_status s;
    if (src->length == 0) { /* no row to point at: every row of out is null */
        uint64_t valid = 0;
        s = coproc__nulls_count(rt, dev, positions->validity->mem, m, &valid);
        if (s == COPROC_OK && valid)
            s = coproc__fail(rt, COPROC_OUT_OF_RANGE,
                             "coproc_gather: a position is >= 0, the "
                             "length of the indexed column");
        if (s == COPROC_OK)
            s = coproc__column_new(rt, dev, src->type, m, out);
        if (s == COPROC_OK && (s = coproc__nulls_range(rt, dev, m, 0, 0, &bits)) != COPROC_OK) {
            coproc_column_free(*out);
            *out = NULL;
        }
        if (s == COPROC_OK)
            coproc__attach_validity(*out, bits);
        return s;
    }
    cl_ulong zero = 0; /* as many zero bytes as a position has */
    s = coproc__nulls_fill(rt, positions, &zero, &filled);
    if (s == COPROC_OK)
        s = coproc__gather_run(rt, src, filled, out);
    coproc_column_free(filled);
    if (s != COPROC_OK)
        return s;
    coproc_column *had = (*out)->validity;
    (*out)->validity = NULL;
    s = coproc__nulls_give_and(rt, out, had, positions->validity);
    coproc_column_free(had);
    return s;
}

coproc_status coproc__gather_run(coproc_runtime *rt, const coproc_column *src,
                                 const coproc_column *positions, coproc_column **out)
{
    if (!rt)
        return COPROC_NULL_POINTER;
    if (!out)
        return coproc__fail(rt, COPROC_NULL_POINTER, "coproc_gather: out is NULL");
    *out = NULL;
    coproc_status s = coproc__column_check(rt, src, NULL, "coproc_gather: src");
    if (s == COPROC_OK)
        s = coproc__column_check(rt, positions, src->dev, "coproc_gather: positions");
    if (s == COPROC_OK)
        s = check_type(rt, src, "coproc_gather: src");
    if (s == COPROC_OK)
        s = check_positions(rt, positions, "coproc_gather: positions");
    if (s != COPROC_OK)
        return s;
    if (positions->validity)
        return gather_null_positions(rt, src, positions, out);
    if (src->validity) { /* the values, then out bit i = src's bit positions[i] */
        coproc_column raw = coproc__without_nulls(src);
        s = coproc__gather_run(rt, &raw, positions, out);
        coproc_column *bits = NULL;
        if (s == COPROC_OK)
            s = coproc__nulls_gather(rt, src->dev, src->validity, positions->mem, positions->type,
                                     positions->length, &bits);
        if (s != COPROC_OK) {
            coproc_column_free(*out);
            *out = NULL;
            return s;
        }
        coproc__attach_validity(*out, bits);
        return COPROC_OK;
    }
    coproc__device *dev = src->dev;
    size_t m = positions->length;
    coproc_column *col = NULL;
    coproc__kernel_lease *k = NULL;
    cl_mem flag = NULL;
    char kname[32];
    snprintf(kname, sizeof kname, "gather_%s%s", positions->type == COPROC_UINT64 ? "p64_" : "",
             move_suffix(src->type));
    s = coproc__column_new(rt, dev, src->type, m, &col);
    if (s != COPROC_OK || m == 0)
        goto done;
    s = coproc__kernel_borrow(rt, dev, "gather", kname, &k);
    if (s == COPROC_OK)
        s = new_flag(rt, dev, &flag);
    if (s != COPROC_OK)
        goto done;
    cl_ulong limit = src->length, mm = m;
    coproc__args a = {k->kernel, 0, CL_SUCCESS};
    COPROC__ARG(a, src->mem);
    COPROC__ARG(a, limit);
    COPROC__ARG(a, positions->mem);
    COPROC__ARG(a, mm);
    COPROC__ARG(a, col->mem);
    COPROC__ARG(a, flag);
    coproc__geometry g = coproc__geometry_for(dev, m, 0);
    s = coproc__launch(rt, dev, &a, &g, kname);
    if (s == COPROC_OK)
        s = read_flag(rt, dev, flag, "coproc_gather", src->length);
done:
    if (flag)
        clReleaseMemObject(flag);
    if (k)
        coproc__kernel_return(dev, k);
    if (s != COPROC_OK) {
        coproc_column_free(col);
        return s;
    }
    *out = col;
    return COPROC_OK;
}

/* Launch the kernel whose arguments a holds over `rows` rows (> 0). */
static coproc_status launch_rows(coproc_runtime *rt, coproc__device *dev, coproc__args *a,
                                 size_t rows, const char *what)
{
    coproc__geometry g = coproc__geometry_for(dev, rows, 0);
    return coproc__launch(rt, dev, a, &g, what);
}

/* scatter with nulls (coproc.h), m > 0 rows: owner[p] = 1 + the last row i
 * (the highest) whose valid position is p; that row alone writes p's value,
 * and p's validity bit is its row's, so the two agree however the writers
 * race. dst gets a validity (all rows valid, then updated) when src has one
 * and dst none. Nothing is written when a valid position is out of range. */
static coproc_status scatter_nulls(coproc_runtime *rt, const coproc_column *src,
                                   const coproc_column *positions, coproc_column *dst)
{
    coproc__device *dev = src->dev;
    size_t m = src->length, n = dst->length;
    if (m >= UINT32_MAX) /* owner holds i + 1 in 32 bits */
        return coproc__fail(rt, COPROC_UNSUPPORTED,
                            "coproc_scatter: %zu rows with nulls on "
                            "device %d; at most %u",
                            m, dev->index, UINT32_MAX - 1);
    const coproc_column *sv = src->validity, *pv = positions->validity;
    coproc_column *made = NULL; /* dst's new validity */
    coproc__kernel_lease *ko = NULL, *kv = NULL, *kb = NULL;
    cl_mem owner = NULL, flag = NULL;
    char kname[32];
    snprintf(kname, sizeof kname, "scatter_nulls_%s", move_suffix(src->type));
    coproc_status s = coproc__kernel_borrow(rt, dev, "gather", "scatter_owner", &ko);
    if (s == COPROC_OK)
        s = coproc__kernel_borrow(rt, dev, "gather", kname, &kv);
    if (s == COPROC_OK)
        s = coproc__kernel_borrow(rt, dev, "gather", "scatter_nulls_bits", &kb);
    if (s == COPROC_OK)
        s = new_zeroed(rt, dev, (n ? n : 1) * sizeof(cl_uint), &owner);
    if (s == COPROC_OK)
        s = new_flag(rt, dev, &flag);
    if (s == COPROC_OK && sv && !dst->validity)
        s = coproc__nulls_range(rt, dev, n, 0, n, &made);
    if (s != COPROC_OK)
        goto done;
    const coproc_column *valid = made ? made : dst->validity;
    cl_mem pbits = pv ? pv->mem : positions->mem, sbits = sv ? sv->mem : positions->mem;
    cl_uint has_pv = pv != NULL, has_sv = sv != NULL;
    cl_ulong mm = m, nn = n;
    coproc__args a1 = {ko->kernel, 0, CL_SUCCESS};
    COPROC__ARG(a1, positions->mem);
    COPROC__ARG(a1, pbits);
    COPROC__ARG(a1, has_pv);
    COPROC__ARG(a1, mm);
    COPROC__ARG(a1, nn);
    COPROC__ARG(a1, owner);
    COPROC__ARG(a1, flag);
    s = launch_rows(rt, dev, &a1, m, "scatter_owner");
    if (s != COPROC_OK)
        goto done;
    coproc__args a2 = {kv->kernel, 0, CL_SUCCESS};
    COPROC__ARG(a2, src->mem);
    COPROC__ARG(a2, positions->mem);
    COPROC__ARG(a2, pbits);
    COPROC__ARG(a2, has_pv);
    COPROC__ARG(a2, mm);
    COPROC__ARG(a2, owner);
    COPROC__ARG(a2, dst->mem);
    COPROC__ARG(a2, flag);
    s = launch_rows(rt, dev, &a2, m, kname);
    if (s == COPROC_OK && valid && n) {
        coproc__args a3 = {kb->kernel, 0, CL_SUCCESS};
        COPROC__ARG(a3, owner);
        COPROC__ARG(a3, nn);
        COPROC__ARG(a3, sbits);
        COPROC__ARG(a3, has_sv);
        COPROC__ARG(a3, valid->mem);
        COPROC__ARG(a3, flag);
        s = launch_rows(rt, dev, &a3, n, "scatter_nulls_bits"); /* 32 steps a word */
    }
    if (s == COPROC_OK)
        s = read_flag(rt, dev, flag, "coproc_scatter", n);
    if (s == COPROC_OK && made) {
        coproc__attach_validity(dst, made);
        made = NULL;
    }
done:
    coproc_column_free(made);
    if (owner)
        clReleaseMemObject(owner);
    if (flag)
        clReleaseMemObject(flag);
    if (ko)
        coproc__kernel_return(dev, ko);
    if (kv)
        coproc__kernel_return(dev, kv);
    if (kb)
        coproc__kernel_return(dev, kb);
    return s;
}

coproc_status coproc__scatter_run(coproc_runtime *rt, const coproc_column *src,
                                  const coproc_column *positions, coproc_column *dst)
{
    if (!rt)
        return COPROC_NULL_POINTER;
    coproc_status s = coproc__column_check(rt, src, NULL, "coproc_scatter: src");
    if (s == COPROC_OK)
        s = coproc__column_check(rt, positions, src->dev, "coproc_scatter: positions");
    if (s == COPROC_OK)
        s = coproc__column_check(rt, dst, src->dev, "coproc_scatter: dst");
    if (s == COPROC_OK)
        s = check_type(rt, src, "coproc_scatter: src");
    if (s == COPROC_OK)
        s = check_uint32(rt, positions, "coproc_scatter: positions");
    if (s != COPROC_OK)
        return s;
    if (dst->type != src->type)
        return coproc__fail(rt, COPROC_INVALID_ARGUMENT,
                            "coproc_scatter: dst is %s, src %s "
                            "(types must match)",
                            coproc_type_name(dst->type), coproc_type_name(src->type));
    if (positions->length != src->length)
        return coproc__fail(rt, COPROC_LENGTH_MISMATCH, "coproc_scatter: %zu positions for %zu "
                            "rows of src", positions->length, src->length);
    size_t m = src->length;
    if (m == 0)
        return COPROC_OK;
    if (src->validity || positions->validity || dst->validity)
        return scatter_nulls(rt, src, positions, dst);
    coproc__device *dev = src->dev;
    coproc__kernel_lease *check = NULL, *k = NULL;
    cl_mem flag = NULL;
    char kname[32];
    snprintf(kname, sizeof kname, "scatter_%s", move_suffix(src->type));
    s = coproc__kernel_borrow(rt, dev, "gather", "gather_check", &check);
    if (s == COPROC_OK)
        s = coproc__kernel_borrow(rt, dev, "gather", kname, &k);
    if (s == COPROC_OK)
        s = new_flag(rt, dev, &flag);
    if (s != COPROC_OK)
        goto done;
    cl_ulong mm = m, limit = dst->length;
    coproc__geometry g = coproc__geometry_for(dev, m, 0);
    coproc__args a1 = {check->kernel, 0, CL_SUCCESS};
    COPROC__ARG(a1, positions->mem);
    COPROC__ARG(a1, mm);
    COPROC__ARG(a1, limit);
    COPROC__ARG(a1, flag);
    s = coproc__launch(rt, dev, &a1, &g, "gather_check");
    if (s != COPROC_OK)
        goto done;
    coproc__args a2 = {k->kernel, 0, CL_SUCCESS};
    COPROC__ARG(a2, src->mem);
    COPROC__ARG(a2, positions->mem);
    COPROC__ARG(a2, mm);
    COPROC__ARG(a2, dst->mem);
    COPROC__ARG(a2, flag);
    s = coproc__launch(rt, dev, &a2, &g, kname);
    if (s == COPROC_OK)
        s = read_flag(rt, dev, flag, "coproc_scatter", dst->length);
done:
    if (flag)
        clReleaseMemObject(flag);
    if (check)
        coproc__kernel_return(dev, check);
    if (k)
        coproc__kernel_return(dev, k);
    return s;
}

/* Check a bitmap argument against a column of n rows. */
static coproc_status check_bitmap(coproc_runtime *rt, const coproc_column *bitmap,
                                  const coproc__device *dev, size_t n, const char *what)
{
    coproc_status s = coproc__column_check(rt, bitmap, dev, what);
    if (s == COPROC_OK)
        s = check_uint32(rt, bitmap, what);
    if (s != COPROC_OK)
        return s;
    if (bitmap->length != (n + 31) / 32)
        return coproc__fail(rt, COPROC_LENGTH_MISMATCH, "%s has %zu words; %zu rows need %zu",
                            what, bitmap->length, n, (n + 31) / 32);
    return COPROC_OK;
}

/* Per-group counts of set bits (n > 0) under geometry g; *total their sum. */
static coproc_status bitmap_counts(coproc_runtime *rt, coproc__device *dev, cl_mem bitmap,
                                   size_t n, const coproc__geometry *g, cl_ulong wchunk,
                                   cl_mem counts, uint64_t *total)
{
    coproc__kernel_lease *k = NULL;
    cl_uint *host = NULL;
    coproc_status s = coproc__kernel_borrow(rt, dev, "gather", "bitmap_counts", &k);
    if (s != COPROC_OK)
        return s;
    cl_ulong nn = n;
    coproc__args a = {k->kernel, 0, CL_SUCCESS};
    COPROC__ARG(a, bitmap);
    COPROC__ARG(a, nn);
    COPROC__ARG(a, wchunk);
    COPROC__ARG(a, counts);
    COPROC__ARG_LOCAL(a, g->local * sizeof(cl_uint));
    s = coproc__launch(rt, dev, &a, g, "bitmap_counts");
    if (s != COPROC_OK)
        goto done;
    host = malloc(g->groups * sizeof *host);
    if (!host) {
        s = coproc__fail(rt, COPROC_HOST_OUT_OF_MEMORY, "out of host memory");
        goto done;
    }
    cl_int err =
        coproc__read_now(dev, dev->queue, counts, 0, g->groups * sizeof *host, host, 0, NULL, NULL);
    if (err != CL_SUCCESS) {
        s = coproc__fail_cl(rt, err, "bitmap_counts: reading counts from device %d", dev->index);
        goto done;
    }
    *total = 0;
    for (size_t i = 0; i < g->groups; i++)
        *total += host[i];
done:
    free(host);
    coproc__kernel_return(dev, k);
    return s;
}

/* compact with nulls (coproc.h): the bitmap's null words select nothing; the
 * selected rows keep their nulls (their validity bits gathered at the
 * positions the bitmap selects). */
static coproc_status compact_nulls(coproc_runtime *rt, const coproc_column *src,
                                   const coproc_column *bitmap, coproc_column **out)
{
    coproc__device *dev = src->dev;
    size_t n = src->length;
    coproc_column *sel = NULL, *positions = NULL, *bits = NULL;
    coproc_status s = coproc__nulls_selected(rt, bitmap, NULL, n, &sel);
    if (s != COPROC_OK)
        return s;
    coproc_column rs = coproc__without_nulls(src), rb = coproc__without_nulls(sel ? sel : bitmap);
    s = coproc__compact_run(rt, &rs, &rb, out);
    if (s == COPROC_OK && src->validity)
        s = coproc__nulls_positions(rt, dev, rb.mem, n, &positions);
    if (s == COPROC_OK && src->validity)
        s = coproc__nulls_gather(rt, dev, src->validity, positions->mem, positions->type,
                                 positions->length, &bits);
    coproc_column_free(positions);
    coproc_column_free(sel);
    if (s != COPROC_OK) {
        coproc_column_free(*out);
        *out = NULL;
        return s;
    }
    coproc__attach_validity(*out, bits);
    return COPROC_OK;
}

coproc_status coproc__compact_run(coproc_runtime *rt, const coproc_column *src,
                                  const coproc_column *bitmap, coproc_column **out)
{
    if (!rt)
        return COPROC_NULL_POINTER;
    if (!out)
        return coproc__fail(rt, COPROC_NULL_POINTER, "coproc_compact: out is NULL");
    *out = NULL;
    coproc_status s = coproc__column_check(rt, src, NULL, "coproc_compact: src");
    if (s == COPROC_OK)
        s = check_type(rt, src, "coproc_compact: src");
    if (s == COPROC_OK)
        s = check_bitmap(rt, bitmap, src->dev, src->length, "coproc_compact: bitmap");
    if (s != COPROC_OK)
        return s;
    if (src->validity || bitmap->validity)
        return compact_nulls(rt, src, bitmap, out);
    coproc__device *dev = src->dev;
    size_t n = src->length;
    coproc_column *col = NULL;
    cl_mem counts = NULL;
    coproc__kernel_lease *k = NULL;
    uint64_t total = 0;
    cl_program built; /* built before the geometry: it tells the work-group limit */
    s = coproc__program_get(rt, dev, "gather", &built);
    if (s != COPROC_OK)
        return s;
    coproc__geometry g = coproc__geometry_for(dev, n, 0);
    cl_ulong wchunk = ((n + 31) / 32 + g.groups - 1) / g.groups;
    if (n > 0) {
        s = coproc__buffer_new(rt, dev, g.groups * sizeof(cl_uint), &counts);
        if (s == COPROC_OK)
            s = bitmap_counts(rt, dev, bitmap->mem, n, &g, wchunk, counts, &total);
        if (s != COPROC_OK)
            goto done;
    }
    s = coproc__column_new(rt, dev, src->type, total, &col);
    if (s != COPROC_OK || total == 0)
        goto done;
    char kname[32];
    snprintf(kname, sizeof kname, "compact_%s", move_suffix(src->type));
    s = coproc__kernel_borrow(rt, dev, "gather", kname, &k);
    if (s != COPROC_OK)
        goto done;
    cl_ulong nn = n;
    coproc__args a = {k->kernel, 0, CL_SUCCESS};
    COPROC__ARG(a, src->mem);
    COPROC__ARG(a, nn);
    COPROC__ARG(a, bitmap->mem);
    COPROC__ARG(a, wchunk);
    COPROC__ARG(a, counts);
    COPROC__ARG(a, col->mem);
    COPROC__ARG_LOCAL(a, g.local * sizeof(cl_uint));
    COPROC__ARG_LOCAL(a, g.local * sizeof(cl_uint));
    s = coproc__launch(rt, dev, &a, &g, kname);
    if (s == COPROC_OK) {
        cl_int err = coproc__finish(dev, dev->queue);
        if (err != CL_SUCCESS)
            s = coproc__fail_cl(rt, err, "%s: clFinish on device %d", kname, dev->index);
    }
done:
    if (k)
        coproc__kernel_return(dev, k);
    if (counts)
        clReleaseMemObject(counts);
    if (s != COPROC_OK) {
        coproc_column_free(col);
        return s;
    }
    *out = col;
    return COPROC_OK;
}

/* ---- reduce_where: the conventions of coproc_reduce (runtime/ops/reduce.c). */

coproc_status coproc__reduce_where_run(coproc_runtime *rt, coproc_reduce_op op,
                                       const coproc_column *col, const coproc_column *bitmap,
                                       coproc_scalar *out)
{
    if (!rt)
        return COPROC_NULL_POINTER;
    if (!out)
        return coproc__fail(rt, COPROC_NULL_POINTER, "coproc_reduce_where: out is NULL");
    coproc_status s = coproc__column_check(rt, col, NULL, "coproc_reduce_where: column");
    if (s == COPROC_OK)
        s = check_type(rt, col, "coproc_reduce_where: column");
    if (s == COPROC_OK)
        s = check_bitmap(rt, bitmap, col->dev, col->length, "coproc_reduce_where: bitmap");
    if (s != COPROC_OK)
        return s;
    if ((unsigned)op > COPROC_REDUCE_COUNT)
        return coproc__fail(rt, COPROC_INVALID_ARGUMENT, "coproc_reduce_where: unknown op %d",
                            (int)op);
    if (col->validity || bitmap->validity) { /* the selected rows that are valid */
        coproc_column *sel = NULL;
        s = coproc__nulls_selected(rt, bitmap, col->validity, col->length, &sel);
        if (s != COPROC_OK)
            return s;
        coproc_column rc = coproc__without_nulls(col);
        coproc_column rb = coproc__without_nulls(sel ? sel : bitmap);
        s = coproc__reduce_where_run(rt, op, &rc, &rb, out);
        coproc_column_free(sel);
        return s;
    }
    coproc_scalar r;
    coproc__reduce_identity(op, col->type, &r);
    size_t n = col->length;
    if (n == 0) {
        *out = r;
        return COPROC_OK;
    }
    coproc__device *dev = col->dev;
    cl_program built; /* built before the geometry: it tells the work-group limit */
    s = coproc__program_get(rt, dev, "gather", &built);
    if (s != COPROC_OK)
        return s;
    coproc__geometry g = coproc__geometry_for(dev, n, 0);
    cl_mem partials[3] = {NULL, NULL, NULL}, counts = NULL; /* sum, min, max */
    coproc__kernel_lease *k = NULL;
    unsigned char *host = NULL;
    cl_uint *host_counts = NULL;
    s = coproc__buffer_new(rt, dev, g.groups * sizeof(cl_uint), &counts);
    if (s != COPROC_OK)
        goto done;
    if (op == COPROC_REDUCE_COUNT) {
        cl_ulong wchunk = ((n + 31) / 32 + g.groups - 1) / g.groups;
        uint64_t total = 0;
        s = bitmap_counts(rt, dev, bitmap->mem, n, &g, wchunk, counts, &total);
        r.v.u64 = total;
        r.count = total;
        goto done;
    }
    /* One kernel computes sum, min, max and count; read back the one asked for. */
    char kname[40];
    snprintf(kname, sizeof kname, "reduce_where_%s", type_suffix[col->type]);
    size_t ssize = coproc__reduce_partial_size(dev, COPROC_REDUCE_SUM, col->type);
    size_t tsize = coproc_type_size(col->type);
    size_t psize = op == COPROC_REDUCE_SUM ? ssize : tsize;
    s = coproc__kernel_borrow(rt, dev, "gather", kname, &k);
    for (int i = 0; i < 3 && s == COPROC_OK; i++)
        s = coproc__buffer_new(rt, dev, g.groups * (i == 0 ? ssize : tsize), &partials[i]);
    if (s != COPROC_OK)
        goto done;
    host = malloc(g.groups * psize);
    host_counts = malloc(g.groups * sizeof *host_counts);
    if (!host || !host_counts) {
        s = coproc__fail(rt, COPROC_HOST_OUT_OF_MEMORY, "out of host memory");
        goto done;
    }
    cl_ulong nn = n;
    coproc__args a = {k->kernel, 0, CL_SUCCESS};
    COPROC__ARG(a, col->mem);
    COPROC__ARG(a, nn);
    COPROC__ARG(a, bitmap->mem);
    COPROC__ARG(a, partials[0]);
    COPROC__ARG(a, partials[1]);
    COPROC__ARG(a, partials[2]);
    COPROC__ARG(a, counts);
    COPROC__ARG_LOCAL(a, g.local * ssize);
    COPROC__ARG_LOCAL(a, g.local * tsize);
    COPROC__ARG_LOCAL(a, g.local * tsize);
    COPROC__ARG_LOCAL(a, g.local * sizeof(cl_uint));
    s = coproc__launch(rt, dev, &a, &g, kname);
    if (s != COPROC_OK)
        goto done;
    coproc__submit_begin(dev);
    cl_int err = clEnqueueReadBuffer(dev->queue, partials[op], CL_FALSE, 0, g.groups * psize,
                                     host, 0, NULL, NULL);
    coproc__submit_end(dev);
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
        coproc__reduce_identity(op, col->type, &r); /* no selected row: as coproc_reduce over zero rows */
    r.count = total;
done:
    free(host);
    free(host_counts);
    for (int i = 0; i < 3; i++)
        if (partials[i])
            clReleaseMemObject(partials[i]);
    if (counts)
        clReleaseMemObject(counts);
    if (k)
        coproc__kernel_return(dev, k);
    if (s == COPROC_OK)
        *out = r;
    return s;
}

/* ---- the operator table's entries (ops/table.h) */

static coproc_status gather_check(coproc_runtime *rt, const coproc_op *op,
                                  const coproc_column *const *in, int n)
{
    int scatter = op->variant == COPROC_VARIANT_SCATTER;
    if (op->b->type == COPROC_UINT32 || (!scatter && op->b->type == COPROC_UINT64))
        return COPROC_OK;
    return coproc__fail(rt, COPROC_UNSUPPORTED_TYPE,
                        "coproc_submit: %s positions are %s; they "
                        "must be %s",
                        scatter ? "scatter" : "gather", coproc_type_name(op->b->type),
                        scatter ? "uint32" : "uint32 or uint64");
}

static void gather_features(const coproc_op *op, const coproc_result *r,
                            const coproc__op_seen *seen, double x[2], double *out_bytes)
{
    x[0] = coproc__col_bytes(op->a) + coproc__col_bytes(op->b);
    x[1] = coproc__col_rows(op->b) * (double)coproc_type_size(op->a->type);
    *out_bytes = x[1];
}

/* The output column (positions' length of src's type) and the range flag. */
static double gather_device_bytes(const coproc__device *dev, const coproc_op *op, double out)
{
    return out + 16;
}

static coproc_status gather_in_memory(coproc_runtime *rt, coproc__device *dev,
                                      const coproc_op *op, const coproc_column *const *v,
                                      coproc_result *out)
{
    return coproc__gather_run(rt, v[0], v[1], &out->column);
}

/* Chunks of positions; src stays whole on the device. */
static coproc_status gather_slice(coproc_runtime *rt, const coproc_op *op, size_t first, size_t n,
                                  coproc_op *part, coproc_column *views[COPROC__OP_MAX_INPUTS])
{
    *part = *op;
    coproc_status s = coproc__host_view(rt, op->b, first, n, &views[1]);
    part->b = views[1];
    return s;
}

static coproc_status gather_combine(coproc_runtime *rt, const coproc_op *op, size_t first,
                                    size_t n, coproc_result *part, coproc_result *acc)
{
    coproc_op rows = *op;
    rows.a = op->b; /* the output has a row per position */
    return coproc__combine_rows(rt, &rows, first, n, part, acc);
}

static coproc_status gather_stream(coproc_runtime *rt, coproc__device *dev, const coproc_op *op,
                                   size_t budget, coproc_result *out)
{
    double src = coproc__col_bytes(op->a);
    if (src > (double)budget / 2)
        return coproc__fail(rt, COPROC_DEVICE_OUT_OF_MEMORY, "gather on device %d: the source "
                            "column (%.0f bytes) must fit half the device's budget (%zu bytes): "
                            "positions stream, the source is read at random", dev->index, src,
                            budget);
    coproc__chunking c = {.rows = op->b->length,
                          .align = 1,
                          .row_bytes = (double)coproc_type_size(op->b->type) +
                                       2.0 * (double)coproc_type_size(op->a->type),
                          .whole_bytes = src + 16,
                          .slice = gather_slice,
                          .combine = gather_combine};
    return coproc__stream_chunked(rt, dev, op, &coproc__op_gather, budget, &c, out);
}

const coproc__op_def coproc__op_gather = {
    .name = "gather", .kind = COPROC_OP_GATHER, .variant = COPROC_VARIANT_DEFAULT,
    .inputs = coproc__inputs_ab, .check = gather_check, .features = gather_features,
    .device_bytes = gather_device_bytes, .run = gather_in_memory, .stream = gather_stream,
};

static int scatter_inputs(const coproc_op *op, const coproc_column *in[COPROC__OP_MAX_INPUTS])
{
    in[0] = op->a;
    in[1] = op->b;
    in[2] = op->dst;
    return 3;
}

static coproc_status scatter_check(coproc_runtime *rt, const coproc_op *op,
                                   const coproc_column *const *in, int n)
{
    coproc_status s = gather_check(rt, op, in, n);
    if (s != COPROC_OK)
        return s;
    if (op->a->length != op->b->length)
        return coproc__fail(rt, COPROC_LENGTH_MISMATCH, "coproc_submit: scatter of %zu rows at "
                            "%zu positions", op->a->length, op->b->length);
    if (op->a->type != op->dst->type)
        return coproc__fail(rt, COPROC_INVALID_ARGUMENT, "coproc_submit: scatter of %s into %s",
                            coproc_type_name(op->a->type), coproc_type_name(op->dst->type));
    return COPROC_OK;
}

static void scatter_features(const coproc_op *op, const coproc_result *r,
                             const coproc__op_seen *seen, double x[2], double *out_bytes)
{
    x[0] = coproc__col_bytes(op->a) + coproc__col_bytes(op->b);
    x[1] = coproc__col_bytes(op->a);
    *out_bytes = coproc__col_bytes(op->dst); /* the scattered copy comes back */
}

/* The copy of dst written into, and the range flag. */
static double scatter_device_bytes(const coproc__device *dev, const coproc_op *op, double out)
{
    return coproc__col_bytes(op->dst) + 16;
}

static coproc_status scatter_in_memory(coproc_runtime *rt, coproc__device *dev,
                                       const coproc_op *op, const coproc_column *const *v,
                                       coproc_result *out)
{
    coproc_column *copy = NULL, *bits = NULL;
    coproc_status s = coproc__column_copy(rt, dev, v[2], &copy);
    if (s == COPROC_OK && v[2]->validity) { /* the copy carries dst's nulls */
        s = coproc__column_copy(rt, dev, v[2]->validity, &bits);
        if (s == COPROC_OK)
            coproc__attach_validity(copy, bits);
    }
    if (s == COPROC_OK)
        s = coproc__scatter_run(rt, v[0], v[1], copy);
    if (s != COPROC_OK) {
        coproc_column_free(copy);
        return s;
    }
    out->column = copy;
    return COPROC_OK;
}

/* A device copy of rows [first, first + n) of the host column col. */
static coproc_status upload_rows(coproc_runtime *rt, coproc__device *dev, const coproc_column *col,
                                 size_t first, size_t n, coproc_column **out)
{
    size_t w = coproc_type_size(col->type);
    coproc_status s = coproc__column_new(rt, dev, col->type, n, out);
    if (s == COPROC_OK && n)
        s = coproc__h2d(rt, dev, NULL, (*out)->mem, 0, (const char *)col->host + first * w, n * w,
                        0);
    if (s != COPROC_OK) {
        coproc_column_free(*out);
        *out = NULL;
    }
    return s;
}

/* Rows [first, first + n) of the host column col on dev: copied, or used in
 * place (in_place: a host-unified device reads host memory; the caller's
 * src and positions read-only, dst's copy, coproc's own, written). */
static coproc_status rows_on_device(coproc_runtime *rt, coproc__device *dev,
                                    const coproc_column *col, size_t first, size_t n, int in_place,
                                    coproc_column **out)
{
    if (!in_place || n == 0)
        return upload_rows(rt, dev, col, first, n, out);
    char *host = (char *)col->host + first * coproc_type_size(col->type);
    if (col->host_owned)
        return coproc__column_wrap_host(rt, dev, col->type, n, host, out);
    cl_int err;
    cl_mem mem = clCreateBuffer(dev->context, CL_MEM_READ_ONLY | CL_MEM_USE_HOST_PTR,
                                n * coproc_type_size(col->type), host, &err);
    if (!mem)
        return coproc__fail_cl(rt, err, "scatter: wrapping host memory on device %d", dev->index);
    coproc_status s = coproc__column_wrap_mem(rt, dev, col->type, n, mem, out);
    if (s == COPROC_OK)
        (*out)->host_wrapped = 1; /* freeing it waits for the queue first */
    return s;
}

/* Rows [lo, lo + n) of the scattered copy *win (on dev): every chunk of src
 * and positions passes through and writes the rows it holds of the window. */
static coproc_status scatter_window(coproc_runtime *rt, coproc__device *dev, const coproc_op *op,
                                    size_t lo, coproc_column *win, size_t chunk, int in_place,
                                    cl_mem flag)
{
    char kname[32];
    snprintf(kname, sizeof kname, "scatter_window_%s", move_suffix(op->a->type));
    coproc__kernel_lease *k = NULL;
    coproc_status s = coproc__kernel_borrow(rt, dev, "gather", kname, &k);
    for (size_t first = 0; s == COPROC_OK && first < op->a->length; first += chunk) {
        size_t m = op->a->length - first < chunk ? op->a->length - first : chunk;
        coproc_column *src = NULL, *pos = NULL;
        s = rows_on_device(rt, dev, op->a, first, m, in_place, &src);
        if (s == COPROC_OK)
            s = rows_on_device(rt, dev, op->b, first, m, in_place, &pos);
        if (s == COPROC_OK) {
            cl_ulong mm = m, wlo = lo, wn = win->length, limit = op->dst->length;
            coproc__geometry g = coproc__geometry_for(dev, m, 0);
            coproc__args a = {k->kernel, 0, CL_SUCCESS};
            COPROC__ARG(a, src->mem);
            COPROC__ARG(a, pos->mem);
            COPROC__ARG(a, mm);
            COPROC__ARG(a, win->mem);
            COPROC__ARG(a, wlo);
            COPROC__ARG(a, wn);
            COPROC__ARG(a, limit);
            COPROC__ARG(a, flag);
            s = coproc__launch(rt, dev, &a, &g, kname);
        }
        coproc_column_free(src); /* in place: freeing waits for the kernel */
        coproc_column_free(pos);
    }
    if (k)
        coproc__kernel_return(dev, k);
    return s;
}

/* The window's rows back in host memory at host: copied, or (in place)
 * made visible by mapping the buffer over them. */
static coproc_status window_back(coproc_runtime *rt, coproc__device *dev, coproc_column *win,
                                 void *host, int in_place)
{
    size_t bytes = win->length * coproc_type_size(win->type);
    if (!in_place)
        return coproc__d2h(rt, dev, NULL, host, win->mem, 0, bytes, 0);
    cl_int err = CL_SUCCESS;
    void *p = coproc__map_now(dev, dev->queue, win->mem, CL_MAP_READ, 0, bytes, &err);
    if (!p)
        return coproc__fail_cl(rt, err, "scatter: mapping the result on device %d", dev->index);
    coproc_status s = COPROC_OK;
    if (p != host) /* a driver may map a copy; the spec promises the contents */
        memcpy(host, p, bytes);
    coproc__submit_begin(dev);
    err = clEnqueueUnmapMemObject(dev->queue, win->mem, p, 0, NULL, NULL);
    coproc__submit_end(dev);
    if (err != CL_SUCCESS)
        s = coproc__fail_cl(rt, err, "scatter: unmapping the result on device %d", dev->index);
    return s;
}

/* Scatter past the budget. On a host-unified device with zero-copy (a CPU)
 * the columns are host memory already: src, positions and dst's copy are
 * used in place, in one pass, and the budget (device memory) is not
 * touched. Elsewhere dst's copy is cut into windows of half the budget; for
 * each, the window goes to the device, src and positions stream through it
 * in chunks of the other half, and the window comes back. Every window reads
 * all of src and positions: (dst bytes / half the budget) passes, where the
 * in-memory scatter makes one. */
static coproc_status scatter_stream(coproc_runtime *rt, coproc__device *dev, const coproc_op *op,
                                    size_t budget, coproc_result *out)
{
    size_t w = coproc_type_size(op->dst->type), rows = op->dst->length;
    int in_place = dev->zero_copy && dev->info.host_unified_memory && rows > 0 &&
                   rows * w <= dev->info.max_alloc_bytes &&
                   op->a->length * w <= dev->info.max_alloc_bytes &&
                   op->a->length * 4 <= dev->info.max_alloc_bytes;
    size_t half = budget / 2 > 64 ? budget / 2 - 64 : 0; /* 64: the flag and alignment */
    size_t win = in_place ? rows : half / w;
    size_t chunk = in_place ? op->a->length : half / (coproc_type_size(op->a->type) + 4);
    win = win > UINT32_MAX ? UINT32_MAX : win;
    chunk = chunk > UINT32_MAX ? UINT32_MAX : chunk;
    if (!in_place && (win == 0 || chunk == 0))
        return coproc__fail(rt, COPROC_DEVICE_OUT_OF_MEMORY,
                            "scatter on device %d: %zu bytes of budget hold no window of dst",
                            dev->index, budget);
    if (rows == 0 && op->a->length > 0) /* every position is out of range */
        return coproc__fail(rt, COPROC_OUT_OF_RANGE,
                            "coproc_scatter: a position is >= 0, the length of the indexed "
                            "column");
    coproc_status s = coproc__host_column_new(rt, op->dst->type, rows, &out->column);
    if (s != COPROC_OK)
        return s;
    char *host = out->column->host;
    if (rows)
        memcpy(host, op->dst->host, rows * w);
    cl_mem flag = NULL;
    s = op->a->length ? new_flag(rt, dev, &flag) : COPROC_OK;
    for (size_t lo = 0; s == COPROC_OK && flag && lo < rows; lo += win) {
        size_t n = rows - lo < win ? rows - lo : win;
        coproc_column *dwin = NULL;
        s = rows_on_device(rt, dev, out->column, lo, n, in_place, &dwin);
        if (s == COPROC_OK)
            s = scatter_window(rt, dev, op, lo, dwin, chunk, in_place, flag);
        if (s == COPROC_OK)
            s = window_back(rt, dev, dwin, host + lo * w, in_place);
        coproc_column_free(dwin);
    }
    if (s == COPROC_OK && flag)
        s = read_flag(rt, dev, flag, "coproc_scatter", rows);
    if (flag)
        clReleaseMemObject(flag);
    if (s != COPROC_OK) {
        coproc_column_free(out->column);
        out->column = NULL;
    }
    return s;
}

const coproc__op_def coproc__op_scatter = {
    .name = "scatter",
    .kind = COPROC_OP_GATHER,
    .variant = COPROC_VARIANT_SCATTER,
    .inputs = scatter_inputs,
    .check = scatter_check,
    .features = scatter_features,
    .device_bytes = scatter_device_bytes,
    .run = scatter_in_memory,
    .stream = scatter_stream,
};

static coproc_status compact_check(coproc_runtime *rt, const coproc_op *op,
                                   const coproc_column *const *in, int n)
{
    return coproc__check_bitmap(rt, op->variant == COPROC_VARIANT_COMPACT ? "compact"
                                                                          : "reduce_where",
                                op->b, op->a->length);
}

static void compact_features(const coproc_op *op, const coproc_result *r,
                             const coproc__op_seen *seen, double x[2], double *out_bytes)
{
    x[0] = coproc__col_bytes(op->a) + coproc__col_bytes(op->b);
    x[1] = r ? coproc__col_bytes(r->column) : coproc__col_bytes(op->a) * seen->selectivity;
    *out_bytes = x[1];
}

/* The work-groups' counts and the output (out bytes; at most src's). */
static double compact_device_bytes(const coproc__device *dev, const coproc_op *op, double out)
{
    return out + (64 << 10);
}

static coproc_status compact_in_memory(coproc_runtime *rt, coproc__device *dev,
                                       const coproc_op *op, const coproc_column *const *v,
                                       coproc_result *out)
{
    return coproc__compact_run(rt, v[0], v[1], &out->column);
}

/* Chunks of whole bitmap words: rows [first, first + n) and their words. */
static coproc_status bitmap_slice(coproc_runtime *rt, const coproc_op *op, size_t first, size_t n,
                                  coproc_op *part, coproc_column *views[COPROC__OP_MAX_INPUTS])
{
    *part = *op;
    coproc_status s = coproc__host_view(rt, op->a, first, n, &views[0]);
    part->a = views[0];
    if (s == COPROC_OK)
        s = coproc__host_view(rt, op->b, first / 32, (n + 31) / 32, &views[1]);
    part->b = views[1];
    return s;
}

static coproc_status compact_combine(coproc_runtime *rt, const coproc_op *op, size_t first,
                                     size_t n, coproc_result *part, coproc_result *acc)
{
    size_t had = acc->column ? acc->column->length : 0, more = part->column->length;
    coproc_status s = coproc__host_grow(rt, op->a->type, &acc->column, had + more);
    size_t w = coproc_type_size(op->a->type);
    if (s == COPROC_OK && more)
        memcpy((char *)acc->column->host + had * w, part->column->host, more * w);
    return s;
}

static coproc_status compact_stream(coproc_runtime *rt, coproc__device *dev, const coproc_op *op,
                                    size_t budget, coproc_result *out)
{
    coproc__chunking c = {.rows = op->a->length, .align = 32,
                          .row_bytes = 3.0 * (double)coproc_type_size(op->a->type) + 0.25,
                          .whole_bytes = 64 << 10, .slice = bitmap_slice,
                          .combine = compact_combine};
    return coproc__stream_chunked(rt, dev, op, &coproc__op_compact, budget, &c, out);
}

const coproc__op_def coproc__op_compact = {
    .name = "compact", .kind = COPROC_OP_GATHER, .variant = COPROC_VARIANT_COMPACT,
    .inputs = coproc__inputs_ab, .check = compact_check, .features = compact_features,
    .device_bytes = compact_device_bytes, .run = compact_in_memory, .stream = compact_stream,
};

static coproc_status reduce_where_check(coproc_runtime *rt, const coproc_op *op,
                                        const coproc_column *const *in, int n)
{
    if ((unsigned)op->reduce > COPROC_REDUCE_COUNT)
        return coproc__fail(rt, COPROC_INVALID_ARGUMENT, "coproc_submit: reduce op %d",
                            (int)op->reduce);
    return compact_check(rt, op, in, n);
}

static void reduce_where_features(const coproc_op *op, const coproc_result *r,
                                  const coproc__op_seen *seen, double x[2], double *out_bytes)
{
    x[0] = coproc__col_bytes(op->a) + coproc__col_bytes(op->b);
    x[1] = 0;
    *out_bytes = 0;
}

static coproc_status reduce_where_in_memory(coproc_runtime *rt, coproc__device *dev,
                                            const coproc_op *op, const coproc_column *const *v,
                                            coproc_result *out)
{
    return coproc__reduce_where_run(rt, op->reduce, v[0], v[1], &out->scalar);
}

static coproc_status reduce_where_combine(coproc_runtime *rt, const coproc_op *op, size_t first,
                                          size_t n, coproc_result *part, coproc_result *acc)
{
    coproc__reduce_combine(op->reduce, &part->scalar, &acc->scalar, first == 0);
    return COPROC_OK;
}

static coproc_status reduce_where_stream(coproc_runtime *rt, coproc__device *dev,
                                         const coproc_op *op, size_t budget, coproc_result *out)
{
    coproc__chunking c = {.rows = op->a->length, .align = 32,
                          .row_bytes = (double)coproc_type_size(op->a->type) + 0.125,
                          .whole_bytes = 64 << 10, .slice = bitmap_slice,
                          .combine = reduce_where_combine};
    return coproc__stream_chunked(rt, dev, op, &coproc__op_reduce_where, budget, &c, out);
}

const coproc__op_def coproc__op_reduce_where = {
    .name = "reduce_where", .kind = COPROC_OP_REDUCE, .variant = COPROC_VARIANT_REDUCE_WHERE,
    .inputs = coproc__inputs_ab, .check = reduce_where_check, .features = reduce_where_features,
    .device_bytes = compact_device_bytes, .run = reduce_where_in_memory,
    .stream = reduce_where_stream,
};
