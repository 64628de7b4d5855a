/* hash_join.c - equi-join by a bucketed hash table on the left side, probed by
 * the right side with an exactly sized output (cl/hash_join.cl). */
#include <stdio.h>
#include <stdint.h>
#include <string.h>

#include "data/column.h"
#include "backend/opencl/launch.h"
#include "ops/primitives.h"
#include "backend/opencl/program.h"
#include "ops/ops.h"
#include "core/runtime.h"

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
    err = clEnqueueFillBuffer(dev->queue, bcount, &zero, sizeof zero, 0, (buckets + 1) * 4,
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
