/* merge_join.c - sort-merge equi-join and semi-join of integer keys
 * (cl/merge_join.cl), and coproc_join_result_free for every join.
 *
 * Both sides are sorted as copies by coproc_sort, carrying their row
 * positions. Each sorted left row finds its equal range in the sorted right
 * keys (count and start), an exclusive scan of the counts places the pairs,
 * and one kernel writes them. The semi-join sorts a copy of build and flags
 * each probe row found there by binary search. */
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>

#include "data/column.h"
#include "backend/opencl/launch.h"
#include "ops/primitives.h"
#include "backend/opencl/program.h"
#include "ops/join_tasks.h"
#include "ops/nulls.h"
#include "ops/ops.h"
#include "core/error.h"
#include "backend/opencl/sync.h"
#include "backend/opencl/transfer.h"

static const char *const key_suffix[] = {"i32", "i64", "u32", "u64"};

/* Both key columns valid, of rt, on one device, integers of one type, at most
 * UINT32_MAX rows each. */
static coproc_status check_keys(coproc_runtime *rt, const coproc_column *a, const char *a_name,
                                const coproc_column *b, const char *b_name, const char *what)
{
    char label[96];
    snprintf(label, sizeof label, "%s: %s", what, a_name);
    coproc_status s = coproc__column_check(rt, a, NULL, label);
    if (s != COPROC_OK)
        return s;
    snprintf(label, sizeof label, "%s: %s", what, b_name);
    if ((s = coproc__column_check(rt, b, a->dev, label)) != COPROC_OK)
        return s;
    if (!coproc__is_key_type(a->type) || !coproc__is_key_type(b->type))
        return coproc__fail(rt, COPROC_UNSUPPORTED_TYPE, "%s: keys of type %s and %s; keys must "
                            "be integers", what, coproc_type_name(a->type),
                            coproc_type_name(b->type));
    if (a->type != b->type)
        return coproc__fail(rt, COPROC_INVALID_ARGUMENT, "%s: %s keys are %s but %s keys are %s; "
                            "both must have the same type", what, a_name,
                            coproc_type_name(a->type), b_name, coproc_type_name(b->type));
    if (a->length > UINT32_MAX || b->length > UINT32_MAX)
        return coproc__fail(rt, COPROC_UNSUPPORTED, "%s: %zu x %zu rows; at most 2^32 - 1 a side",
                            what, a->length, b->length);
    return COPROC_OK;
}

static coproc_status launch_rows(coproc_runtime *rt, coproc__device *dev, coproc__args *a,
                                 size_t n, const char *kname)
{
    coproc__geometry g = coproc__geometry_for(dev, n, 0);
    return coproc__launch(rt, dev, a, &g, kname);
}

/* Loop steps of one sorted left row in mj_count and of one probe row in
 * mj_semi: two searches (a gallop and a binary search each, up to 32 steps for
 * 2^32 rows), bounded where a device caps a work-item's loop steps. */
#define SEARCH_STEPS_PER_ROW 128

static coproc_status launch_searches(coproc_runtime *rt, coproc__device *dev, coproc__args *a,
                                     size_t n, const char *kname)
{
    coproc__geometry g = coproc__join_geometry(dev, n, SEARCH_STEPS_PER_ROW);
    return coproc__launch(rt, dev, a, &g, kname);
}

static coproc_status kernel(coproc_runtime *rt, coproc__device *dev, const char *name,
                            coproc_type t, cl_kernel *out)
{
    char kname[32];
    if ((unsigned)t < 4)
        snprintf(kname, sizeof kname, "%s_%s", name, key_suffix[t]);
    else
        snprintf(kname, sizeof kname, "%s", name);
    return coproc__kernel_create(rt, dev, "merge_join", kname, out);
}

/* The pairs by tasks (ops/join_tasks.h) where the device caps loop steps:
 * items of a few sorted left rows (walking one costs a step or two), each
 * item's pairs in tasks of bounded pairs. */
static coproc_status pairs_by_tasks(coproc_runtime *rt, coproc__device *dev, cl_mem count,
                                    cl_mem lower, cl_mem offset, const coproc_column *lp,
                                    const coproc_column *rp, size_t nl, uint64_t pairs,
                                    coproc_join_result *r)
{
    static const char *const what = "coproc_sort_merge_join";
    coproc__geometry g = coproc__join_geometry(dev, nl, 2);
    cl_ulong rows = (nl + g.global - 1) / g.global, items = (nl + rows - 1) / rows;
    cl_kernel k_starts = NULL, k_tasks = NULL;
    cl_mem starts = NULL;
    uint32_t *start = malloc(items * 4);
    coproc_status s = start ? COPROC_OK
                            : coproc__fail(rt, COPROC_HOST_OUT_OF_MEMORY, "out of host memory");
    if (s == COPROC_OK)
        s = kernel(rt, dev, "mj_item_starts", COPROC__TYPE_COUNT, &k_starts);
    if (s == COPROC_OK)
        s = kernel(rt, dev, "mj_task_pairs", COPROC__TYPE_COUNT, &k_tasks);
    if (s == COPROC_OK)
        s = coproc__buffer_new(rt, dev, items * 4, &starts);
    if (s != COPROC_OK)
        goto done;
    coproc__args a = {k_starts, 0, CL_SUCCESS};
    COPROC__ARG(a, offset);
    COPROC__ARG(a, rows);
    COPROC__ARG(a, items);
    COPROC__ARG(a, starts);
    if ((s = launch_rows(rt, dev, &a, items, "mj_item_starts")) != COPROC_OK ||
        (s = coproc__d2h(rt, dev, NULL, start, starts, 0, items * 4, 0)) != COPROC_OK)
        goto done;
    cl_ulong n = nl;
    a = (coproc__args){k_tasks, 0, CL_SUCCESS};
    COPROC__ARG(a, count);
    COPROC__ARG(a, lower);
    COPROC__ARG(a, offset);
    COPROC__ARG(a, lp->mem);
    COPROC__ARG(a, rp->mem);
    COPROC__ARG(a, n);
    COPROC__ARG(a, rows);
    s = coproc__join_tasks_run(rt, dev, &a, start, items, pairs, 0, r->left->mem, r->right->mem,
                               what);
done:
    free(start);
    if (starts)
        clReleaseMemObject(starts);
    if (k_starts)
        clReleaseKernel(k_starts);
    if (k_tasks)
        clReleaseKernel(k_tasks);
    return s;
}

/* A sorted copy of col in *keys and, when perm is not NULL, the original row
 * position of each sorted key in *perm (UINT32). */
static coproc_status sorted_copy(coproc_runtime *rt, const coproc_column *col,
                                 coproc_column **keys, coproc_column **perm)
{
    coproc__device *dev = col->dev;
    coproc_column *k = NULL, *p = NULL;
    cl_kernel iota = NULL;
    coproc_status s = coproc__column_new(rt, dev, col->type, col->length, &k);
    if (s != COPROC_OK)
        goto done;
    if (col->length) {
        coproc__submit_begin(dev);
        cl_int err = clEnqueueCopyBuffer(dev->queue, col->mem, k->mem, 0, 0,
                                         col->length * coproc_type_size(col->type), 0, NULL,
                                         NULL);
        coproc__submit_end(dev);
        if (err != CL_SUCCESS) {
            s = coproc__fail_cl(rt, err, "copying %zu keys on device %d", col->length,
                                dev->index);
            goto done;
        }
    }
    if (perm) {
        if ((s = coproc__column_new(rt, dev, COPROC_UINT32, col->length, &p)) != COPROC_OK ||
            (s = kernel(rt, dev, "mj_iota", COPROC__TYPE_COUNT, &iota)) != COPROC_OK)
            goto done;
        cl_ulong n = col->length;
        coproc__args a = {iota, 0, CL_SUCCESS};
        COPROC__ARG(a, p->mem);
        COPROC__ARG(a, n);
        if ((s = launch_rows(rt, dev, &a, col->length, "mj_iota")) != COPROC_OK)
            goto done;
    }
    s = coproc_sort(rt, k, p);
done:
    if (iota)
        clReleaseKernel(iota);
    if (s != COPROC_OK) {
        coproc_column_free(k);
        coproc_column_free(p);
        return s;
    }
    *keys = k;
    if (perm)
        *perm = p;
    return COPROC_OK;
}

coproc_status coproc__sort_merge_join_run(coproc_runtime *rt, const coproc_column *left,
                                          const coproc_column *right, coproc_join_result *out)
{
    static const char *const what = "coproc_sort_merge_join";
    if (!rt)
        return COPROC_NULL_POINTER;
    if (!out)
        return coproc__fail(rt, COPROC_NULL_POINTER, "%s: out is NULL", what);
    memset(out, 0, sizeof *out);
    coproc_status s = check_keys(rt, left, "left", right, "right", what);
    if (s != COPROC_OK)
        return s;
    if (left->validity || right->validity) /* null keys never match: dropped first */
        return coproc__nulls_join(rt, left, right, coproc__sort_merge_join_run, out);

    coproc__device *dev = left->dev;
    size_t nl = left->length, nr = right->length;
    coproc_join_result r = {0, NULL, NULL};
    coproc_column *lk = NULL, *lp = NULL, *rk = NULL, *rp = NULL;
    cl_kernel k_count = NULL, k_pairs = NULL;
    cl_mem count = NULL, lower = NULL, offset = NULL;
    uint64_t pairs = 0;
    if (nl == 0 || nr == 0)
        goto output;
    if ((s = sorted_copy(rt, left, &lk, &lp)) != COPROC_OK ||
        (s = sorted_copy(rt, right, &rk, &rp)) != COPROC_OK ||
        (s = kernel(rt, dev, "mj_count", left->type, &k_count)) != COPROC_OK ||
        (s = kernel(rt, dev, "mj_pairs", COPROC__TYPE_COUNT, &k_pairs)) != COPROC_OK ||
        (s = coproc__buffer_new(rt, dev, nl * 4, &count)) != COPROC_OK ||
        (s = coproc__buffer_new(rt, dev, nl * 4, &lower)) != COPROC_OK ||
        (s = coproc__buffer_new(rt, dev, nl * 4, &offset)) != COPROC_OK)
        goto done;
    cl_ulong nnl = nl, nnr = nr;
    coproc__args a = {k_count, 0, CL_SUCCESS};
    COPROC__ARG(a, lk->mem);
    COPROC__ARG(a, nnl);
    COPROC__ARG(a, rk->mem);
    COPROC__ARG(a, nnr);
    COPROC__ARG(a, count);
    COPROC__ARG(a, lower);
    if ((s = launch_searches(rt, dev, &a, nl, "mj_count")) != COPROC_OK ||
        (s = coproc__scan_exclusive_u32(rt, dev, count, nl, offset, &pairs)) != COPROC_OK)
        goto done;
    if (pairs > UINT32_MAX) {
        s = coproc__fail(rt, COPROC_UNSUPPORTED, "%s: %llu matching pairs; positions are 32-bit",
                         what, (unsigned long long)pairs);
        goto done;
    }
output:
    if ((s = coproc__column_new(rt, dev, COPROC_UINT32, pairs, &r.left)) != COPROC_OK ||
        (s = coproc__column_new(rt, dev, COPROC_UINT32, pairs, &r.right)) != COPROC_OK)
        goto done;
    r.count = pairs;
    if (pairs && coproc__join_pairs_per_task(dev)) {
        if ((s = pairs_by_tasks(rt, dev, count, lower, offset, lp, rp, nl, pairs, &r)) !=
            COPROC_OK)
            goto done;
    } else if (pairs) {
        a = (coproc__args){k_pairs, 0, CL_SUCCESS};
        COPROC__ARG(a, count);
        COPROC__ARG(a, lower);
        COPROC__ARG(a, offset);
        COPROC__ARG(a, lp->mem);
        COPROC__ARG(a, rp->mem);
        cl_ulong nnl2 = nl;
        COPROC__ARG(a, nnl2);
        COPROC__ARG(a, r.left->mem);
        COPROC__ARG(a, r.right->mem);
        if ((s = launch_rows(rt, dev, &a, nl, "mj_pairs")) != COPROC_OK)
            goto done;
    }
    cl_int err = coproc__finish(dev, dev->queue);
    if (err != CL_SUCCESS)
        s = coproc__fail_cl(rt, err, "%s: running on device %d", what, dev->index);
done:
    if (s == COPROC_OK)
        *out = r;
    else
        coproc_join_result_free(&r);
    coproc_column *cols[] = {lk, lp, rk, rp};
    for (size_t i = 0; i < 4; i++)
        coproc_column_free(cols[i]);
    cl_mem bufs[] = {count, lower, offset};
    for (size_t i = 0; i < 3; i++)
        if (bufs[i])
            clReleaseMemObject(bufs[i]);
    if (k_count)
        clReleaseKernel(k_count);
    if (k_pairs)
        clReleaseKernel(k_pairs);
    return s;
}

coproc_status coproc__semi_join_run(coproc_runtime *rt, const coproc_column *probe,
                                    const coproc_column *build, coproc_column **positions,
                                    uint64_t *count)
{
    static const char *const what = "coproc_semi_join";
    if (!rt)
        return COPROC_NULL_POINTER;
    if (!positions)
        return coproc__fail(rt, COPROC_NULL_POINTER, "%s: positions is NULL", what);
    *positions = NULL;
    coproc_status s = check_keys(rt, probe, "probe", build, "build", what);
    if (s != COPROC_OK)
        return s;
    if (probe->validity || build->validity) /* null keys never match: dropped first */
        return coproc__nulls_semi_join(rt, probe, build, positions, count);

    coproc__device *dev = probe->dev;
    size_t np = probe->length, nb = build->length;
    coproc_column *bk = NULL, *result = NULL;
    cl_kernel k = NULL;
    cl_mem flags = NULL, pos = NULL;
    uint64_t found = 0;
    if (np == 0 || nb == 0) {
        s = coproc__column_new(rt, dev, COPROC_UINT32, 0, &result);
        goto done;
    }
    if ((s = sorted_copy(rt, build, &bk, NULL)) != COPROC_OK ||
        (s = kernel(rt, dev, "mj_semi", probe->type, &k)) != COPROC_OK ||
        (s = coproc__buffer_new(rt, dev, np * 4, &flags)) != COPROC_OK)
        goto done;
    cl_ulong nnp = np, nnb = nb;
    coproc__args a = {k, 0, CL_SUCCESS};
    COPROC__ARG(a, probe->mem);
    COPROC__ARG(a, nnp);
    COPROC__ARG(a, bk->mem);
    COPROC__ARG(a, nnb);
    COPROC__ARG(a, flags);
    if ((s = launch_searches(rt, dev, &a, np, "mj_semi")) != COPROC_OK ||
        (s = coproc__flags_to_positions(rt, dev, flags, np, &pos, &found)) != COPROC_OK)
        goto done;
    cl_int err = coproc__finish(dev, dev->queue);
    if (err != CL_SUCCESS) {
        s = coproc__fail_cl(rt, err, "%s: running on device %d", what, dev->index);
        goto done;
    }
    s = coproc__column_wrap_mem(rt, dev, COPROC_UINT32, found, pos, &result);
    pos = NULL; /* owned by result now, or released */
done:
    if (s == COPROC_OK) {
        *positions = result;
        if (count)
            *count = found;
    } else {
        coproc_column_free(result);
    }
    coproc_column_free(bk);
    if (pos)
        clReleaseMemObject(pos);
    if (flags)
        clReleaseMemObject(flags);
    if (k)
        clReleaseKernel(k);
    return s;
}

void coproc_join_result_free(coproc_join_result *r)
{
    if (!r)
        return;
    coproc_column_free(r->left);
    coproc_column_free(r->right);
    memset(r, 0, sizeof *r);
}
