/* hash_join.c - equi-join by a bucketed hash table on the left side, probed by
 * the right side with an exactly sized output (cl/hash_join.cl). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>

#include "data/column.h"
#include "backend/opencl/launch.h"
#include "ops/primitives.h"
#include "backend/opencl/program.h"
#include "ops/ops.h"
#include "core/error.h"
#include "exec/hostops.h"
#include "ops/table.h"

/* Launch `kname` of cl/hash_join.cl over n rows with the arguments already in a. */
static coproc_status run(coproc_runtime *rt, coproc__device *dev, coproc__args *a, size_t n,
                         const char *kname)
{
    coproc__geometry g = coproc__geometry_for(dev, n, 0);
    return coproc__launch(rt, dev, a, &g, kname);
}

coproc_status coproc__hash_join_run(coproc_runtime *rt, const coproc_column *left,
                                    const coproc_column *right, coproc_join_result *out)
{
    if (!rt)
        return COPROC_NULL_POINTER;
    if (!out)
        return coproc__fail(rt, COPROC_NULL_POINTER, "coproc_hash_join: out is NULL");
    memset(out, 0, sizeof *out);
    coproc_status s = coproc__column_check(rt, left, NULL, "coproc_hash_join: left");
    if (s == COPROC_OK)
        s = coproc__column_check(rt, right, left->dev, "coproc_hash_join: right");
    if (s != COPROC_OK)
        return s;
    if (!coproc__is_key_type(left->type) || !coproc__is_key_type(right->type))
        return coproc__fail(rt, COPROC_UNSUPPORTED_TYPE, "coproc_hash_join: keys of type %s and "
                            "%s; keys must be integers", coproc_type_name(left->type),
                            coproc_type_name(right->type));
    if (left->type != right->type)
        return coproc__fail(rt, COPROC_INVALID_ARGUMENT, "coproc_hash_join: left keys are %s "
                            "but right keys are %s; both must have the same type",
                            coproc_type_name(left->type), coproc_type_name(right->type));
    size_t nl = left->length, nr = right->length;
    if (nl > UINT32_MAX || nr > UINT32_MAX)
        return coproc__fail(rt, COPROC_UNSUPPORTED, "coproc_hash_join: %zu x %zu rows; at most "
                            "2^32 - 1 a side", nl, nr);

    coproc__device *dev = left->dev;
    const char *sfx = coproc_type_size(left->type) == 8 ? "k64" : "k32";
    size_t ks = coproc_type_size(left->type);
    coproc_join_result r = {0, NULL, NULL};
    cl_kernel k[4] = {NULL, NULL, NULL, NULL};
    cl_mem bcount = NULL, bstart = NULL, entry = NULL, matches = NULL, offs = NULL;
    uint64_t pairs = 0;
    char kname[4][32];
    static const char *const stage[] = {"hj_count", "hj_place", "hj_matches", "hj_pairs"};
    cl_ulong nnl = nl, nnr = nr;
    size_t buckets = coproc__next_pow2(nl);
    cl_uint mask = (cl_uint)(buckets - 1);
    cl_int err;
    if (nl == 0 || nr == 0)
        goto output; /* no pairs */
    for (int i = 0; i < 4 && s == COPROC_OK; i++) {
        snprintf(kname[i], sizeof kname[i], "%s_%s", stage[i], sfx);
        s = coproc__kernel_create(rt, dev, "hash_join", kname[i], &k[i]);
    }
    if (s == COPROC_OK)
        s = coproc__buffer_new(rt, dev, (buckets + 1) * 4, &bcount);
    if (s == COPROC_OK)
        s = coproc__buffer_new(rt, dev, (buckets + 1) * 4, &bstart);
    if (s == COPROC_OK) /* (key, row) as uint2 / ulong2 */
        s = coproc__buffer_new(rt, dev, nl * 2 * ks, &entry);
    if (s == COPROC_OK)
        s = coproc__buffer_new(rt, dev, nr * 4, &matches);
    if (s == COPROC_OK)
        s = coproc__buffer_new(rt, dev, nr * 4, &offs);
    if (s != COPROC_OK)
        goto done;
    cl_uint zero = 0;
    err = coproc__enqueue_fill(dev, dev->queue, bcount, &zero, sizeof zero, 0, (buckets + 1) * 4,
                                     0, NULL, NULL);
    if (err != CL_SUCCESS) {
        s = coproc__fail_cl(rt, err, "coproc_hash_join: clearing buckets on device %d",
                            dev->index);
        goto done;
    }

    /* Build: count per bucket, bucket starts, place the entries. */
    coproc__args a0 = {k[0], 0, CL_SUCCESS};
    COPROC__ARG(a0, left->mem);
    COPROC__ARG(a0, nnl);
    COPROC__ARG(a0, mask);
    COPROC__ARG(a0, bcount);
    s = run(rt, dev, &a0, nl, kname[0]);
    if (s == COPROC_OK)
        s = coproc__scan_exclusive_u32(rt, dev, bcount, buckets + 1, bstart, NULL);
    if (s != COPROC_OK)
        goto done;
    coproc__args a1 = {k[1], 0, CL_SUCCESS};
    COPROC__ARG(a1, left->mem);
    COPROC__ARG(a1, nnl);
    COPROC__ARG(a1, mask);
    COPROC__ARG(a1, bstart);
    COPROC__ARG(a1, bcount);
    COPROC__ARG(a1, entry);
    s = run(rt, dev, &a1, nl, kname[1]);
    if (s != COPROC_OK)
        goto done;

    /* Probe: matches per row, their output offsets, then the pairs. */
    coproc__args a2 = {k[2], 0, CL_SUCCESS};
    COPROC__ARG(a2, right->mem);
    COPROC__ARG(a2, nnr);
    COPROC__ARG(a2, mask);
    COPROC__ARG(a2, bstart);
    COPROC__ARG(a2, entry);
    COPROC__ARG(a2, matches);
    s = run(rt, dev, &a2, nr, kname[2]);
    if (s == COPROC_OK)
        s = coproc__scan_exclusive_u32(rt, dev, matches, nr, offs, &pairs);
    if (s != COPROC_OK)
        goto done;
    if (pairs > UINT32_MAX) {
        s = coproc__fail(rt, COPROC_UNSUPPORTED, "coproc_hash_join: %llu pairs; at most 2^32 - 1",
                         (unsigned long long)pairs);
        goto done;
    }
output:
    r.count = (size_t)pairs;
    s = coproc__column_new(rt, dev, COPROC_UINT32, r.count, &r.left);
    if (s == COPROC_OK)
        s = coproc__column_new(rt, dev, COPROC_UINT32, r.count, &r.right);
    if (s != COPROC_OK || pairs == 0)
        goto done;
    coproc__args a3 = {k[3], 0, CL_SUCCESS};
    COPROC__ARG(a3, right->mem);
    COPROC__ARG(a3, nnr);
    COPROC__ARG(a3, mask);
    COPROC__ARG(a3, bstart);
    COPROC__ARG(a3, entry);
    COPROC__ARG(a3, matches);
    COPROC__ARG(a3, offs);
    COPROC__ARG(a3, r.left->mem);
    COPROC__ARG(a3, r.right->mem);
    s = run(rt, dev, &a3, nr, kname[3]);
    if (s == COPROC_OK) {
        err = clFinish(dev->queue);
        if (err != CL_SUCCESS)
            s = coproc__fail_cl(rt, err, "coproc_hash_join on device %d", dev->index);
    }
done:
    if (s == COPROC_OK) {
        *out = r;
    } else {
        coproc_column_free(r.left);
        coproc_column_free(r.right);
    }
    cl_mem bufs[] = {bcount, bstart, entry, matches, offs};
    for (size_t i = 0; i < sizeof bufs / sizeof *bufs; i++)
        if (bufs[i])
            clReleaseMemObject(bufs[i]);
    for (int i = 0; i < 4; i++)
        if (k[i])
            clReleaseKernel(k[i]);
    return s;
}

/* Device bytes of one hash join of nl x nr rows giving `pairs` pairs, as
 * coproc__hash_join_run allocates them: the keys, the bucket counts and
 * starts (a power of two), the (key, row) entries, matches and offsets per
 * probe row, the pair columns; plus a quarter for slack. UINT64_MAX when
 * absurdly large. */
uint64_t coproc__hash_join_device_bytes(uint64_t nl, uint64_t nr, uint64_t pairs, size_t ks)
{
    if (pairs > UINT64_MAX / 32 || nl > UINT32_MAX || nr > UINT32_MAX)
        return UINT64_MAX;
    uint64_t b = (nl + nr) * ks + 8 * (coproc__next_pow2(nl) + 1) + 2 * ks * nl + 8 * nr +
                 8 * pairs;
    return b + b / 4;
}

/* ---- the operator table's entry (ops/table.h) */

static coproc_status join_check(coproc_runtime *rt, const coproc_op *op,
                                const coproc_column *const *in, int n)
{
    return coproc__check_keys(rt, coproc__op_def_of(op)->name, op->a, op->b);
}

static void join_features(const coproc_op *op, const coproc_result *r, const coproc__op_seen *seen,
                          double x[2], double *out_bytes)
{
    double n = coproc__col_rows(op->a), m = coproc__col_rows(op->b);
    x[0] = coproc__col_bytes(op->a) + coproc__col_bytes(op->b);
    x[1] = r ? (double)r->join.count : (n > m ? n : m) * seen->pairs_per_row;
    *out_bytes = x[1] * 8;
}

/* The join's own allocations (the keys, already counted as inputs, aside). */
static double join_device_bytes(const coproc__device *dev, const coproc_op *op, double out)
{
    double b = (double)coproc__hash_join_device_bytes(op->a->length, op->b->length,
                                                      (uint64_t)(out / 8),
                                                      coproc_type_size(op->a->type));
    return b - coproc__col_bytes(op->a) - coproc__col_bytes(op->b);
}

static void join_learn(const coproc_op *op, const coproc_result *r, coproc__op_seen *seen)
{
    double n = coproc__col_rows(op->a), m = coproc__col_rows(op->b);
    double rows = n > m ? n : m;
    if (rows > 0)
        coproc__op_seen_learn(seen, NAN, (double)r->join.count / rows, NAN);
}

static coproc_status join_in_memory(coproc_runtime *rt, coproc__device *dev, const coproc_op *op,
                                    const coproc_column *const *v, coproc_result *out)
{
    coproc_status s = coproc__hash_join_run(rt, v[0], v[1], &out->join);
    out->count = out->join.count;
    return s;
}

/* Both sides partitioned by key hash (exec/outofcore.c). */
static coproc_status join_stream(coproc_runtime *rt, coproc__device *dev, const coproc_op *op,
                                 size_t budget, coproc_result *out)
{
    coproc_status s = coproc__outofcore_hash_join(rt, dev, op->a, op->b, budget, &out->join);
    out->count = out->join.count;
    return s;
}

const coproc__op_def coproc__op_hash_join = {
    .name = "hash_join", .kind = COPROC_OP_HASH_JOIN, .variant = COPROC_VARIANT_DEFAULT,
    .inputs = coproc__inputs_ab, .check = join_check, .features = join_features,
    .device_bytes = join_device_bytes, .learn = join_learn, .run = join_in_memory,
    .stream = join_stream,
};

/* The sort-merge join: the same pairs as the hash join, so it shares the
 * hash join's features, and over the budget its partitioned run. */
static coproc_status merge_join_in_memory(coproc_runtime *rt, coproc__device *dev,
                                          const coproc_op *op, const coproc_column *const *v,
                                          coproc_result *out)
{
    coproc_status s = coproc__sort_merge_join_run(rt, v[0], v[1], &out->join);
    out->count = out->join.count;
    return s;
}

/* Sorted copies of both sides with their positions, the per-row counts,
 * bounds and offsets, the pairs (coproc__sort_merge_join_run). */
static double merge_join_device_bytes(const coproc__device *dev, const coproc_op *op, double out)
{
    size_t ks = coproc_type_size(op->a->type);
    double rows = (double)op->a->length + (double)op->b->length;
    return rows * (double)(ks + 4) + /* the sorted copies with their positions */
           (double)coproc__sort_device_bytes(dev, op->a->length, ks, 4) +
           (double)coproc__sort_device_bytes(dev, op->b->length, ks, 4) +
           12.0 * (double)op->a->length + out;
}

const coproc__op_def coproc__op_merge_join = {
    .name = "sort_merge_join", .kind = COPROC_OP_MERGE_JOIN, .variant = COPROC_VARIANT_DEFAULT,
    .inputs = coproc__inputs_ab, .check = join_check, .features = join_features,
    .device_bytes = merge_join_device_bytes, .learn = join_learn, .run = merge_join_in_memory,
    .stream = join_stream,
};

static void semi_join_features(const coproc_op *op, const coproc_result *r,
                               const coproc__op_seen *seen, double x[2], double *out_bytes)
{
    x[0] = coproc__col_bytes(op->a) + coproc__col_bytes(op->b);
    x[1] = r ? (double)r->count : coproc__col_rows(op->a) * seen->selectivity;
    *out_bytes = x[1] * 4;
}

/* A sorted copy of the build side, a flag per probe row, the positions. */
static double semi_join_device_bytes(const coproc__device *dev, const coproc_op *op, double out)
{
    size_t ks = coproc_type_size(op->b->type);
    return (double)op->b->length * (double)ks +
           (double)coproc__sort_device_bytes(dev, op->b->length, ks, 0) +
           4.0 * (double)op->a->length + out;
}

static coproc_status semi_join_in_memory(coproc_runtime *rt, coproc__device *dev,
                                         const coproc_op *op, const coproc_column *const *v,
                                         coproc_result *out)
{
    return coproc__semi_join_run(rt, v[0], v[1], &out->column, &out->count);
}

/* The partitioned hash join of build x probe; the probe rows that found a
 * pair, each once, ascending. */
static coproc_status semi_join_stream(coproc_runtime *rt, coproc__device *dev,
                                      const coproc_op *op, size_t budget, coproc_result *out)
{
    size_t np = op->a->length;
    coproc_join_result j = {0};
    coproc_status s = coproc__outofcore_hash_join(rt, dev, op->b, op->a, budget, &j);
    unsigned char *hit = s == COPROC_OK ? calloc(np ? np : 1, 1) : NULL;
    if (s == COPROC_OK && !hit)
        s = coproc__fail(rt, COPROC_HOST_OUT_OF_MEMORY, "out of host memory");
    uint64_t count = 0;
    if (s == COPROC_OK) {
        const uint32_t *probe_row = j.right ? j.right->host : NULL;
        for (size_t i = 0; i < j.count; i++)
            if (!hit[probe_row[i]]) {
                hit[probe_row[i]] = 1;
                count++;
            }
        s = coproc__host_column_new(rt, COPROC_UINT32, count, &out->column);
    }
    if (s == COPROC_OK) {
        uint32_t *pos = out->column->host;
        for (size_t i = 0, k = 0; i < np; i++)
            if (hit[i])
                pos[k++] = (uint32_t)i;
        out->count = count;
    }
    free(hit);
    coproc_join_result_free(&j);
    return s;
}

static void semi_join_learn(const coproc_op *op, const coproc_result *r, coproc__op_seen *seen)
{
    double rows = coproc__col_rows(op->a);
    if (rows > 0)
        coproc__op_seen_learn(seen, (double)r->count / rows, NAN, NAN);
}

const coproc__op_def coproc__op_semi_join = {
    .name = "semi_join", .kind = COPROC_OP_SEMI_JOIN, .variant = COPROC_VARIANT_DEFAULT,
    .inputs = coproc__inputs_ab, .check = join_check, .features = semi_join_features,
    .device_bytes = semi_join_device_bytes, .learn = semi_join_learn,
    .run = semi_join_in_memory, .stream = semi_join_stream,
};
