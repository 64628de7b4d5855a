/* nulls.c - validity bitmaps on a device (nulls.h, cl/nulls.cl) and
 * coproc_column_null_count. Each operator's null semantics live in its own
 * file, made of these pieces and its null-free run. */
#include "ops/nulls.h"

#include <stdlib.h>
#include <string.h>

#include "backend/opencl/launch.h"
#include "backend/opencl/program.h"
#include "backend/opencl/sync.h"
#include "core/error.h"
#include "core/runtime.h"
#include "ops/ops.h"

/* Launch a borrowed kernel of cl/nulls.cl over `rows` rows (0: nothing): the
 * steps its work-items take in all, so that a device's cap on one
 * work-item's loop (quirk max_rows_per_item) sizes the geometry. */
static coproc_status launch(coproc_runtime *rt, coproc__device *dev, coproc__kernel_lease *l,
                            coproc__args *a, size_t rows, const char *what)
{
    if (rows == 0)
        return COPROC_OK;
    coproc__geometry g = coproc__geometry_for(dev, rows, 0);
    return coproc__launch(rt, dev, a, &g, what);
}

static coproc_status borrow(coproc_runtime *rt, coproc__device *dev, const char *kernel,
                            coproc__kernel_lease **l)
{
    return coproc__kernel_borrow(rt, dev, "nulls", kernel, l);
}

static coproc_status new_bitmap(coproc_runtime *rt, coproc__device *dev, size_t n,
                                coproc_column **out)
{
    return coproc__column_new(rt, dev, COPROC_UINT32, (n + 31) / 32, out);
}

/* Finish a helper: on failure free *out and set it NULL. */
static coproc_status done(coproc__device *dev, coproc__kernel_lease *l, coproc_status s,
                          coproc_column **out)
{
    coproc__kernel_return(dev, l);
    if (s != COPROC_OK) {
        coproc_column_free(*out);
        *out = NULL;
    }
    return s;
}

coproc_status coproc__nulls_and(coproc_runtime *rt, coproc__device *dev, const coproc_column *a,
                                const coproc_column *b, size_t n, coproc_column **out)
{
    *out = NULL;
    if (!a && !b)
        return COPROC_OK;
    if (!a || !b)
        return coproc__column_copy(rt, dev, a ? a : b, out);
    coproc__kernel_lease *l = NULL;
    coproc_status s = borrow(rt, dev, "nulls_and", &l);
    if (s == COPROC_OK)
        s = new_bitmap(rt, dev, n, out);
    if (s == COPROC_OK) {
        cl_ulong nn = n;
        coproc__args args = {l->kernel, 0, CL_SUCCESS};
        COPROC__ARG(args, a->mem);
        COPROC__ARG(args, b->mem);
        COPROC__ARG(args, nn);
        COPROC__ARG(args, (*out)->mem);
        s = launch(rt, dev, l, &args, (n + 31) / 32, "nulls_and");
    }
    return done(dev, l, s, out);
}

coproc_status coproc__nulls_not(coproc_runtime *rt, coproc__device *dev, const coproc_column *a,
                                size_t n, coproc_column **out)
{
    *out = NULL;
    if (!a)
        return coproc__nulls_range(rt, dev, n, 0, 0, out);
    coproc__kernel_lease *l = NULL;
    coproc_status s = borrow(rt, dev, "nulls_not", &l);
    if (s == COPROC_OK)
        s = new_bitmap(rt, dev, n, out);
    if (s == COPROC_OK) {
        cl_ulong nn = n;
        coproc__args args = {l->kernel, 0, CL_SUCCESS};
        COPROC__ARG(args, a->mem);
        COPROC__ARG(args, nn);
        COPROC__ARG(args, (*out)->mem);
        s = launch(rt, dev, l, &args, (n + 31) / 32, "nulls_not");
    }
    return done(dev, l, s, out);
}

coproc_status coproc__nulls_range(coproc_runtime *rt, coproc__device *dev, size_t n, size_t lo,
                                  size_t hi, coproc_column **out)
{
    *out = NULL;
    coproc__kernel_lease *l = NULL;
    coproc_status s = borrow(rt, dev, "nulls_range", &l);
    if (s == COPROC_OK)
        s = new_bitmap(rt, dev, n, out);
    if (s == COPROC_OK) {
        cl_ulong nn = n, lo_ = lo, hi_ = hi;
        coproc__args args = {l->kernel, 0, CL_SUCCESS};
        COPROC__ARG(args, nn);
        COPROC__ARG(args, lo_);
        COPROC__ARG(args, hi_);
        COPROC__ARG(args, (*out)->mem);
        s = launch(rt, dev, l, &args, n, "nulls_range"); /* 32 steps a word */
    }
    return done(dev, l, s, out);
}

coproc_status coproc__nulls_gather(coproc_runtime *rt, coproc__device *dev,
                                   const coproc_column *bits, cl_mem positions, coproc_type ptype,
                                   size_t m, coproc_column **out)
{
    *out = NULL;
    coproc__kernel_lease *l = NULL;
    coproc_status s =
        borrow(rt, dev, ptype == COPROC_UINT64 ? "nulls_gather_p64" : "nulls_gather", &l);
    if (s == COPROC_OK)
        s = new_bitmap(rt, dev, m, out);
    if (s == COPROC_OK) {
        cl_ulong mm = m;
        coproc__args args = {l->kernel, 0, CL_SUCCESS};
        COPROC__ARG(args, bits->mem);
        COPROC__ARG(args, positions);
        COPROC__ARG(args, mm);
        COPROC__ARG(args, (*out)->mem);
        s = launch(rt, dev, l, &args, m, "nulls_gather"); /* up to 32 steps a word */
    }
    return done(dev, l, s, out);
}

/* Per-group counts of the set bits of n rows (n > 0) under geometry g into
 * `counts` (a buffer of g->groups uints); *total their sum. */
static coproc_status group_counts(coproc_runtime *rt, coproc__device *dev, cl_mem bits, size_t n,
                                  const coproc__geometry *g, cl_ulong wchunk, cl_mem counts,
                                  uint64_t *total)
{
    coproc__kernel_lease *l = NULL;
    coproc_status s = borrow(rt, dev, "nulls_count", &l);
    if (s != COPROC_OK)
        return s;
    cl_ulong nn = n;
    coproc__args a = {l->kernel, 0, CL_SUCCESS};
    COPROC__ARG(a, bits);
    COPROC__ARG(a, nn);
    COPROC__ARG(a, wchunk);
    COPROC__ARG(a, counts);
    COPROC__ARG_LOCAL(a, g->local * sizeof(cl_uint));
    s = coproc__launch(rt, dev, &a, g, "nulls_count");
    coproc__kernel_return(dev, l);
    if (s != COPROC_OK)
        return s;
    cl_uint *host = malloc(g->groups * sizeof *host);
    if (!host)
        return coproc__fail(rt, COPROC_HOST_OUT_OF_MEMORY, "out of host memory");
    cl_int err =
        coproc__read_now(dev, dev->queue, counts, 0, g->groups * sizeof *host, host, 0, NULL, NULL);
    if (err != CL_SUCCESS) {
        free(host);
        return coproc__fail_cl(rt, err, "nulls_count: reading counts from device %d", dev->index);
    }
    *total = 0;
    for (size_t i = 0; i < g->groups; i++)
        *total += host[i];
    free(host);
    return COPROC_OK;
}

/* The geometry of the counting and positions kernels over n rows' words
 * (the program built first: its build tells the work-group limit). */
static coproc_status words_geometry(coproc_runtime *rt, coproc__device *dev, size_t n,
                                    coproc__geometry *g, cl_ulong *wchunk)
{
    cl_program built;
    coproc_status s = coproc__program_get(rt, dev, "nulls", &built);
    if (s != COPROC_OK)
        return s;
    *g = coproc__geometry_for(dev, n, 0);
    *wchunk = ((n + 31) / 32 + g->groups - 1) / g->groups;
    return COPROC_OK;
}

coproc_status coproc__nulls_count(coproc_runtime *rt, coproc__device *dev, cl_mem bits, size_t n,
                                  uint64_t *count)
{
    *count = 0;
    if (n == 0)
        return COPROC_OK;
    coproc__geometry g;
    cl_ulong wchunk;
    cl_mem counts = NULL;
    coproc_status s = words_geometry(rt, dev, n, &g, &wchunk);
    if (s == COPROC_OK)
        s = coproc__buffer_new(rt, dev, g.groups * sizeof(cl_uint), &counts);
    if (s == COPROC_OK)
        s = group_counts(rt, dev, bits, n, &g, wchunk, counts, count);
    if (counts)
        clReleaseMemObject(counts);
    return s;
}

coproc_status coproc__nulls_positions(coproc_runtime *rt, coproc__device *dev, cl_mem bits,
                                      size_t n, coproc_column **out)
{
    *out = NULL;
    coproc__geometry g;
    cl_ulong wchunk;
    cl_mem counts = NULL;
    coproc__kernel_lease *l = NULL;
    uint64_t total = 0;
    coproc_status s = words_geometry(rt, dev, n, &g, &wchunk);
    if (s == COPROC_OK && n > 0) {
        s = coproc__buffer_new(rt, dev, g.groups * sizeof(cl_uint), &counts);
        if (s == COPROC_OK)
            s = group_counts(rt, dev, bits, n, &g, wchunk, counts, &total);
    }
    if (s == COPROC_OK)
        s = coproc__column_new(rt, dev, COPROC_UINT32, total, out);
    if (s == COPROC_OK && total > 0)
        s = borrow(rt, dev, "nulls_positions", &l);
    if (s == COPROC_OK && total > 0) {
        cl_ulong nn = n;
        coproc__args a = {l->kernel, 0, CL_SUCCESS};
        COPROC__ARG(a, bits);
        COPROC__ARG(a, nn);
        COPROC__ARG(a, wchunk);
        COPROC__ARG(a, counts);
        COPROC__ARG(a, (*out)->mem);
        COPROC__ARG_LOCAL(a, g.local * sizeof(cl_uint));
        COPROC__ARG_LOCAL(a, g.local * sizeof(cl_uint));
        s = coproc__launch(rt, dev, &a, &g, "nulls_positions");
    }
    if (s == COPROC_OK && total > 0) { /* counts is released below: let the kernel finish */
        cl_int err = coproc__finish(dev, dev->queue);
        if (err != CL_SUCCESS)
            s = coproc__fail_cl(rt, err, "nulls_positions: clFinish on device %d", dev->index);
    }
    if (counts)
        clReleaseMemObject(counts);
    return done(dev, l, s, out);
}

coproc_status coproc__nulls_copy(coproc_runtime *rt, coproc__device *dev, cl_mem src, size_t src_at,
                                 cl_mem dst, size_t dst_at, size_t bytes)
{
    if (bytes == 0)
        return COPROC_OK;
    coproc__kernel_lease *l = NULL;
    coproc_status s = borrow(rt, dev, "nulls_copy", &l);
    if (s == COPROC_OK) {
        cl_ulong soff = src_at / 4, doff = dst_at / 4, count = bytes / 4;
        coproc__args a = {l->kernel, 0, CL_SUCCESS};
        COPROC__ARG(a, src);
        COPROC__ARG(a, soff);
        COPROC__ARG(a, dst);
        COPROC__ARG(a, doff);
        COPROC__ARG(a, count);
        s = launch(rt, dev, l, &a, count, "nulls_copy");
    }
    coproc__kernel_return(dev, l);
    return s;
}

coproc_status coproc__nulls_put(coproc_runtime *rt, coproc__device *dev, cl_mem dst, size_t at,
                                const void *v, size_t size)
{
    coproc__kernel_lease *l = NULL;
    coproc_status s = borrow(rt, dev, "nulls_put", &l);
    if (s == COPROC_OK) {
        cl_uint w[2] = {0, 0}, two = size == 8;
        memcpy(w, v, size);
        cl_ulong word = at / 4;
        coproc__args a = {l->kernel, 0, CL_SUCCESS};
        COPROC__ARG(a, dst);
        COPROC__ARG(a, word);
        COPROC__ARG(a, w[0]);
        COPROC__ARG(a, w[1]);
        COPROC__ARG(a, two);
        s = launch(rt, dev, l, &a, 1, "nulls_put");
    }
    coproc__kernel_return(dev, l);
    return s;
}

coproc_status coproc__nulls_fill(coproc_runtime *rt, const coproc_column *col, const void *c,
                                 coproc_column **out)
{
    *out = NULL;
    coproc__device *dev = col->dev;
    size_t es = coproc_type_size(col->type);
    coproc__kernel_lease *l = NULL;
    coproc_status s = borrow(rt, dev, es == 4 ? "nulls_fill_b32" : "nulls_fill_b64", &l);
    if (s == COPROC_OK)
        s = coproc__column_new(rt, dev, col->type, col->length, out);
    if (s == COPROC_OK) {
        cl_ulong n = col->length;
        coproc__args a = {l->kernel, 0, CL_SUCCESS};
        COPROC__ARG(a, col->mem);
        COPROC__ARG(a, n);
        COPROC__ARG(a, col->validity->mem);
        coproc__arg(&a, es, c);
        COPROC__ARG(a, (*out)->mem);
        s = launch(rt, dev, l, &a, col->length, "nulls_fill");
    }
    return done(dev, l, s, out);
}

coproc_status coproc__nulls_selected(coproc_runtime *rt, const coproc_column *bitmap,
                                     const coproc_column *valid, size_t n, coproc_column **out)
{
    *out = NULL;
    coproc_column *own = NULL;
    coproc_status s = COPROC_OK;
    if (bitmap->validity) {
        uint32_t zero = 0;
        if ((s = coproc__nulls_fill(rt, bitmap, &zero, &own)) != COPROC_OK)
            return s;
    }
    if (!valid) {
        *out = own;
        return COPROC_OK;
    }
    s = coproc__nulls_and(rt, bitmap->dev, own ? own : bitmap, valid, n, out);
    coproc_column_free(own);
    return s;
}

coproc_status coproc__nulls_give_and(coproc_runtime *rt, coproc_column **out,
                                     const coproc_column *a, const coproc_column *b)
{
    coproc_column *bits = NULL;
    coproc_status s = coproc__nulls_and(rt, (*out)->dev, a, b, (*out)->length, &bits);
    if (s != COPROC_OK) {
        coproc_column_free(*out);
        *out = NULL;
        return s;
    }
    coproc__attach_validity(*out, bits);
    return COPROC_OK;
}

/* A key column without its null rows: `col` points at the keys to use (the
 * input itself when it has no nulls, else `own`, the valid rows compacted)
 * and `positions` (NULL without nulls) at their rows in the input. */
typedef struct kept_rows {
    const coproc_column *col;
    coproc_column *own, *positions;
} kept_rows;

static void kept_free(kept_rows *k)
{
    coproc_column_free(k->own);
    coproc_column_free(k->positions);
    memset(k, 0, sizeof *k);
}

static coproc_status keep_valid(coproc_runtime *rt, const coproc_column *col, kept_rows *k)
{
    memset(k, 0, sizeof *k);
    k->col = col;
    if (!col->validity)
        return COPROC_OK;
    coproc_column raw = coproc__without_nulls(col), bits = coproc__without_nulls(col->validity);
    coproc_status s = coproc__compact_run(rt, &raw, &bits, &k->own);
    if (s == COPROC_OK)
        s = coproc__nulls_positions(rt, col->dev, col->validity->mem, col->length, &k->positions);
    if (s != COPROC_OK) {
        kept_free(k);
        return s;
    }
    k->col = k->own;
    return COPROC_OK;
}

/* Positions into k's rows (*pos) made positions into the input's rows. */
static coproc_status unkeep(coproc_runtime *rt, const kept_rows *k, coproc_column **pos)
{
    if (!k->positions || !*pos)
        return COPROC_OK;
    coproc_column *mapped = NULL;
    coproc_status s = coproc__gather_run(rt, k->positions, *pos, &mapped);
    coproc_column_free(*pos);
    *pos = mapped;
    return s;
}

/* Both sides' checks first (on the inputs as given), so a bad argument is
 * named as the null-free join names it, before anything is compacted. */
static coproc_status keep_both(coproc_runtime *rt, const coproc_column *left,
                               const coproc_column *right, kept_rows *l, kept_rows *r)
{
    memset(r, 0, sizeof *r);
    coproc_status s = keep_valid(rt, left, l);
    if (s == COPROC_OK && (s = keep_valid(rt, right, r)) != COPROC_OK)
        kept_free(l);
    return s;
}

coproc_status coproc__nulls_join(coproc_runtime *rt, const coproc_column *left,
                                 const coproc_column *right, coproc__join_fn fn,
                                 coproc_join_result *out)
{
    kept_rows l, r;
    coproc_status s = keep_both(rt, left, right, &l, &r);
    if (s != COPROC_OK)
        return s;
    s = fn(rt, l.col, r.col, out);
    if (s == COPROC_OK)
        s = unkeep(rt, &l, &out->left);
    if (s == COPROC_OK)
        s = unkeep(rt, &r, &out->right);
    if (s != COPROC_OK) {
        coproc_join_result_free(out);
        memset(out, 0, sizeof *out);
    }
    kept_free(&l);
    kept_free(&r);
    return s;
}

coproc_status coproc__nulls_join_count(coproc_runtime *rt, const coproc_column *left,
                                       const coproc_column *right, uint64_t *count)
{
    kept_rows l, r;
    coproc_status s = keep_both(rt, left, right, &l, &r);
    if (s != COPROC_OK)
        return s;
    s = coproc__hash_join_count_run(rt, l.col, r.col, count);
    kept_free(&l);
    kept_free(&r);
    return s;
}

coproc_status coproc__nulls_semi_join(coproc_runtime *rt, const coproc_column *probe,
                                      const coproc_column *build, coproc_column **positions,
                                      uint64_t *count)
{
    kept_rows p, b;
    coproc_status s = keep_both(rt, probe, build, &p, &b);
    if (s != COPROC_OK)
        return s;
    s = coproc__semi_join_run(rt, p.col, b.col, positions, count);
    if (s == COPROC_OK) /* ascending positions of ascending kept rows: still ascending */
        s = unkeep(rt, &p, positions);
    if (s != COPROC_OK && positions) {
        coproc_column_free(*positions);
        *positions = NULL;
    }
    kept_free(&p);
    kept_free(&b);
    return s;
}

coproc_status coproc__nulls_refuse(coproc_runtime *rt, const char *what, const char *input)
{
    return coproc__fail(rt, COPROC_UNSUPPORTED,
                        "%s: %s has nulls (a validity bitmap), which "
                        "this operator does not handle yet",
                        what, input);
}

/* Set bits among the first n bits of host words. */
static uint64_t host_count(const uint32_t *w, size_t n)
{
    uint64_t c = 0;
    for (size_t i = 0; i < n / 32; i++)
        c += (uint64_t)__builtin_popcount(w[i]);
    if (n % 32)
        c += (uint64_t)__builtin_popcount(w[n / 32] & ((1u << (n % 32)) - 1u));
    return c;
}

coproc_status coproc_column_null_count(const coproc_column *col, uint64_t *count)
{
    if (!col)
        return COPROC_NULL_POINTER;
    coproc_runtime *rt = col->rt;
    if (!count)
        return coproc__fail(rt, COPROC_NULL_POINTER, "coproc_column_null_count: count is NULL");
    *count = 0;
    const coproc_column *v = col->validity;
    if (!v || col->length == 0)
        return COPROC_OK;
    uint64_t valid = 0;
    if (!v->dev) {
        valid = host_count(v->host, col->length);
    } else {
        coproc_status s = coproc__nulls_count(rt, v->dev, v->mem, col->length, &valid);
        if (s != COPROC_OK)
            return s;
    }
    *count = col->length - valid;
    return COPROC_OK;
}
