/* sort.c - LSD radix sort and argsort of every column type (cl/sort.cl).
 *
 * Keys are sorted as order-preserving unsigned bits, 8 bits a pass. One
 * kernel first counts the digits of every pass at once; passes whose digit
 * is the same for every key are skipped (a small key range sorts in one or
 * two passes), and its per-group counts serve the first pass. Each pass
 * after that is histogram -> scan of the 256 x groups table -> stable
 * scatter, ping-ponging between the column and one temporary buffer. */
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "data/column.h"
#include "backend/opencl/launch.h"
#include "backend/opencl/program.h"
#include "ops/nulls.h"
#include "ops/ops.h"
#include "core/error.h"
#include "exec/hostops.h"
#include "ops/table.h"
#include "backend/opencl/sync.h"

/* Mirrors of cl/sort.cl. */
#define SORT_ENC_IN 1u
#define SORT_DEC_OUT 2u
#define SORT_IOTA_IN 4u
#define SORT_NO_KEYS_OUT 8u
#define SORT_KIND_UNSIGNED 0u
#define SORT_KIND_SIGNED 1u
#define SORT_KIND_FLOAT 2u
#define SORT_MAX_LOCAL 256
#define SORT_ITEMS_K32 8
#define SORT_ITEMS_K64 6
#define RADIX 256

static cl_uint key_kind(coproc_type t)
{
    switch (t) {
    case COPROC_INT32:
    case COPROC_INT64: return SORT_KIND_SIGNED;
    case COPROC_FLOAT32:
    case COPROC_FLOAT64: return SORT_KIND_FLOAT;
    default: return SORT_KIND_UNSIGNED;
    }
}

/* One sort: the keys, where values come from and go to, and the launch shape. */
typedef struct sort_job {
    coproc_runtime *rt;
    coproc__device *dev;
    const char *what;      /* operator name for messages */
    size_t n;
    size_t kbytes;         /* 4 or 8 */
    size_t vbytes;         /* 0 (keys only), 4 or 8 */
    cl_uint kind;
    cl_mem keys;           /* the key column: sorted in place unless argsort */
    cl_mem values;         /* sort: the value column or NULL */
    cl_mem perm;           /* argsort: the output permutation, else NULL */
    size_t groups, local;
    cl_ulong rows_per_group;
    int passes;            /* 4 or 8 */
} sort_job;

size_t coproc__sort_work_group(const coproc__device *dev, const cl_kernel *k, int count)
{
    size_t local = SORT_MAX_LOCAL;
    if (local > dev->info.max_work_group_size)
        local = dev->info.max_work_group_size;
    if (dev->quirks.max_work_group && local > dev->quirks.max_work_group)
        local = dev->quirks.max_work_group;
    for (int i = 0; i < count; i++) {
        size_t kmax = 0;
        if (clGetKernelWorkGroupInfo(k[i], dev->id, CL_KERNEL_WORK_GROUP_SIZE, sizeof kmax, &kmax,
                                     NULL) == CL_SUCCESS && kmax && kmax < local)
            local = kmax;
    }
    return local;
}

/* Launch shape: on the CPU path one work-item per group over a contiguous
 * chunk; on the GPU path groups of up to 256 work-items (all the kernels k
 * launched so allow), each group a whole number of tiles (ITEMS rows per
 * work-item). */
static void plan_geometry(sort_job *j, const cl_kernel *k, int count)
{
    coproc__device *dev = j->dev;
    if (dev->cpu_path) {
        coproc__geometry g = coproc__geometry_for(dev, j->n, 1);
        size_t rpg = (j->n + g.groups - 1) / g.groups;
        j->local = 1;
        j->rows_per_group = rpg;
        j->groups = (j->n + rpg - 1) / rpg;
        return;
    }
    size_t local = coproc__sort_work_group(dev, k, count);
    size_t tile = local * (j->kbytes == 8 ? SORT_ITEMS_K64 : SORT_ITEMS_K32);
    size_t tiles = (j->n + tile - 1) / tile;
    coproc__geometry g = coproc__geometry_for(dev, j->n, local);
    size_t groups = g.groups < tiles ? g.groups : tiles;
    size_t per_group = (tiles + groups - 1) / groups;
    j->local = local;
    j->groups = (tiles + per_group - 1) / per_group;
    j->rows_per_group = (cl_ulong)per_group * tile;
}

static coproc_status enqueue(sort_job *j, coproc__args *a, size_t groups, size_t local,
                             const char *kname)
{
    coproc__geometry g = {groups, local, groups * local};
    return coproc__launch(j->rt, j->dev, a, &g, kname);
}

static coproc_status new_buffer(sort_job *j, size_t bytes, cl_mem *out)
{
    return coproc__buffer_new(j->rt, j->dev, bytes, out);
}

static coproc_status launch_iota(sort_job *j, cl_mem out)
{
    coproc__kernel_lease *l = NULL;
    coproc_status s = coproc__kernel_borrow(j->rt, j->dev, "sort", "sort_iota", &l);
    if (s != COPROC_OK)
        return s;
    cl_ulong n = j->n;
    coproc__args a = {l->kernel, 0, CL_SUCCESS};
    COPROC__ARG(a, out);
    COPROC__ARG(a, n);
    coproc__geometry g = coproc__geometry_for(j->dev, j->n, 0);
    s = coproc__launch(j->rt, j->dev, &a, &g, "sort_iota");
    coproc__kernel_return(j->dev, l);
    return s;
}

/*
 * Run the sort described by j. With j->perm set (argsort) the keys are only
 * read and the stable permutation lands in perm; otherwise keys (and values)
 * are sorted in place. Buffers are all allocated before any column is
 * written, so a failure leaves the columns as they were.
 */
static coproc_status radix_sort(sort_job *j)
{
    coproc_runtime *rt = j->rt;
    coproc__device *dev = j->dev;
    int argsort = j->perm != NULL;
    const char *ks = j->kbytes == 8 ? "k64" : "k32";
    j->passes = (int)j->kbytes;
    char hist_all_name[32], hist_name[32], scatter_name[32];
    snprintf(hist_all_name, sizeof hist_all_name, "sort_hist_all_%s", ks);
    snprintf(hist_name, sizeof hist_name, "sort_hist_%s", ks);
    snprintf(scatter_name, sizeof scatter_name, "sort_scatter_%s", ks);
    cl_uint vwords = (cl_uint)((argsort ? 4 : j->vbytes) / 4); /* value words a row */

    /* The kernels come from the device's pool (program.h): every argument is set below. */
    const char *names[4] = {hist_all_name, hist_name, "sort_scan_table", scatter_name};
    coproc__kernel_lease *lease[4] = {NULL, NULL, NULL, NULL};
    cl_mem table = NULL, totals = NULL, kt1 = NULL, kt2 = NULL, vt = NULL;
    cl_uint *host_totals = NULL;
    coproc_status s = COPROC_OK;
    for (int i = 0; i < 4 && s == COPROC_OK; i++)
        s = coproc__kernel_borrow(rt, dev, "sort", names[i], &lease[i]);
    if (s != COPROC_OK)
        goto done;
    cl_kernel k_all = lease[0]->kernel, k_hist = lease[1]->kernel, k_scan = lease[2]->kernel,
              k_scatter = lease[3]->kernel;
    cl_kernel launched[] = {k_all, k_hist, k_scan, k_scatter};
    plan_geometry(j, launched, 4);

    /* Digit counts of every pass, from the keys as they are. */
    size_t table_len = (size_t)j->passes * RADIX * j->groups;
    size_t totals_len = (size_t)j->passes * RADIX;
    if ((s = new_buffer(j, table_len * 4, &table)) != COPROC_OK ||
        (s = new_buffer(j, totals_len * 4, &totals)) != COPROC_OK)
        goto done;
    host_totals = malloc(totals_len * 4);
    if (!host_totals) {
        s = coproc__fail(rt, COPROC_HOST_OUT_OF_MEMORY, "out of host memory");
        goto done;
    }
    cl_uint zero = 0;
    cl_int err = coproc__enqueue_fill(dev, dev->queue, totals, &zero, sizeof zero, 0, totals_len * 4, 0,
                                     NULL, NULL);
    if (err != CL_SUCCESS) {
        s = coproc__fail_cl(rt, err, "%s: clearing digit counts on device %d", j->what,
                            dev->index);
        goto done;
    }
    cl_ulong n = j->n;
    coproc__args a = {k_all, 0, CL_SUCCESS};
    COPROC__ARG(a, j->keys);
    COPROC__ARG(a, n);
    COPROC__ARG(a, j->rows_per_group);
    COPROC__ARG(a, j->kind);
    COPROC__ARG(a, table);
    COPROC__ARG(a, totals);
    if ((s = enqueue(j, &a, j->groups, j->local, hist_all_name)) != COPROC_OK)
        goto done;
    err = coproc__read_now(dev, dev->queue, totals, 0, totals_len * 4, host_totals, 0, NULL, NULL);
    if (err != CL_SUCCESS) {
        s = coproc__fail_cl(rt, err, "%s: reading digit counts from device %d", j->what,
                            dev->index);
        goto done;
    }

    /* A pass whose digit is constant leaves the order as it is. */
    int pass[8], m = 0;
    for (int p = 0; p < j->passes; p++) {
        int constant = 0;
        for (int d = 0; d < RADIX; d++)
            constant |= host_totals[p * RADIX + d] == j->n;
        if (!constant)
            pass[m++] = p;
    }
    if (m == 0) {
        if (argsort)
            s = launch_iota(j, j->perm);
        goto done;
    }

    /* Temporaries. sort: keys and values ping-pong between the column and one
     * buffer. argsort: keys move through kt1/kt2 (the last pass writes none),
     * positions through perm and vt, arranged so the last pass writes perm. */
    size_t kbytes = j->n * j->kbytes;
    if (argsort) {
        if (m >= 2 && ((s = new_buffer(j, kbytes, &kt1)) != COPROC_OK ||
                       (s = new_buffer(j, j->n * 4, &vt)) != COPROC_OK))
            goto done;
        if (m >= 3 && (s = new_buffer(j, kbytes, &kt2)) != COPROC_OK)
            goto done;
    } else {
        if ((s = new_buffer(j, kbytes, &kt1)) != COPROC_OK)
            goto done;
        if (j->values && (s = new_buffer(j, j->n * j->vbytes, &vt)) != COPROC_OK)
            goto done;
    }

    /* The table scan is one work-group. On the CPU path one work-item walks the
     * table twice, 2 x 256 x groups steps: where rows per work-item are capped
     * (quirk loop-65535: Mesa stops a work-item's loops after 65535 steps, so
     * 2^20 rows lost the table's tail) the group takes as many work-items as it
     * may instead. */
    size_t scan_local = j->local;
    if (dev->cpu_path && dev->quirks.max_rows_per_item)
        scan_local = coproc__sort_work_group(dev, &k_scan, 1);
    /* Where the driver stops a work-item's loops after max_loop_steps, the
     * table (256 x groups, groups growing with the rows when rows per
     * work-item are capped) is scanned in segments a work-item's two walks
     * over its chunk fit (2 x (chunk + 1) steps, plus sort_group_scan's
     * loops): 2^20 entries and 32 work-items lost the tail before. The
     * segments chain through the scan lease's scratch word. */
    cl_uint scan_seg = UINT32_MAX;
    uint64_t steps = dev->quirks.max_loop_steps;
    if (steps) {
        uint64_t chunk = steps > 128 ? (steps - 128) / 2 : 1;
        scan_seg = chunk * scan_local < UINT32_MAX ? (cl_uint)(chunk * scan_local) : UINT32_MAX;
    }
    if ((s = coproc__lease_scratch(rt, dev, lease[2], sizeof(cl_uint))) != COPROC_OK)
        goto done;
    cl_mem kin = j->keys, vin = argsort ? j->perm : j->values;
    for (int i = 0; i < m; i++) {
        cl_uint shift = (cl_uint)(8 * pass[i]);
        cl_ulong off = (cl_ulong)pass[i] * RADIX * j->groups;
        cl_uint len = (cl_uint)(RADIX * j->groups);
        cl_uint flags = i == 0 ? SORT_ENC_IN : 0;
        cl_mem kout, vout;
        if (argsort) {
            kout = i == m - 1 ? kin : (i % 2 == 0 ? kt1 : kt2);
            vout = (m - 1 - i) % 2 == 0 ? j->perm : vt;
            if (i == 0)
                flags |= SORT_IOTA_IN, vin = vout;
            if (i == m - 1)
                flags |= SORT_NO_KEYS_OUT;
        } else {
            kout = i % 2 == 0 ? kt1 : j->keys;
            vout = j->values ? (i % 2 == 0 ? vt : j->values) : kout;
            if (!j->values)
                vin = kin;
            if (i == m - 1)
                flags |= SORT_DEC_OUT;
        }
        if (i > 0) { /* the first pass's counts came with the counts of all passes */
            a = (coproc__args){k_hist, 0, CL_SUCCESS};
            COPROC__ARG(a, kin);
            COPROC__ARG(a, n);
            COPROC__ARG(a, j->rows_per_group);
            COPROC__ARG(a, shift);
            COPROC__ARG(a, table);
            COPROC__ARG(a, off);
            if ((s = enqueue(j, &a, j->groups, j->local, hist_name)) != COPROC_OK)
                goto done;
        }
        for (cl_ulong at = 0; at < len; at += scan_seg) {
            cl_ulong seg_off = off + at;
            cl_uint seg_len = (cl_uint)(len - at < scan_seg ? len - at : scan_seg),
                    chained = at > 0;
            a = (coproc__args){k_scan, 0, CL_SUCCESS};
            COPROC__ARG(a, table);
            COPROC__ARG(a, seg_off);
            COPROC__ARG(a, seg_len);
            COPROC__ARG(a, lease[2]->scratch);
            COPROC__ARG(a, chained);
            if ((s = enqueue(j, &a, 1, scan_local, "sort_scan_table")) != COPROC_OK)
                goto done;
        }
        a = (coproc__args){k_scatter, 0, CL_SUCCESS};
        COPROC__ARG(a, kin);
        COPROC__ARG(a, kout);
        COPROC__ARG(a, vin);
        COPROC__ARG(a, vout);
        COPROC__ARG(a, table);
        COPROC__ARG(a, off);
        COPROC__ARG(a, n);
        COPROC__ARG(a, j->rows_per_group);
        COPROC__ARG(a, shift);
        COPROC__ARG(a, j->kind);
        COPROC__ARG(a, flags);
        COPROC__ARG(a, vwords);
        if ((s = enqueue(j, &a, j->groups, j->local, scatter_name)) != COPROC_OK)
            goto done;
        kin = kout;
        vin = vout;
    }
    /* sort with an odd pass count ends in the temporaries. */
    if (!argsort && m % 2 == 1) {
        coproc__submit_begin(dev);
        err = clEnqueueCopyBuffer(dev->queue, kt1, j->keys, 0, 0, kbytes, 0, NULL, NULL);
        if (err == CL_SUCCESS && j->values)
            err = clEnqueueCopyBuffer(dev->queue, vt, j->values, 0, 0, j->n * j->vbytes, 0, NULL,
                                      NULL);
        coproc__submit_end(dev);
        if (err != CL_SUCCESS) {
            s = coproc__fail_cl(rt, err, "%s: copying sorted rows on device %d", j->what,
                                dev->index);
            goto done;
        }
    }
done:
    if (s == COPROC_OK) {
        err = coproc__finish(dev, dev->queue);
        if (err != CL_SUCCESS)
            s = coproc__fail_cl(rt, err, "%s: running on device %d", j->what, dev->index);
    }
    free(host_totals);
    cl_mem bufs[] = {table, totals, kt1, kt2, vt};
    for (size_t i = 0; i < sizeof bufs / sizeof *bufs; i++)
        if (bufs[i])
            clReleaseMemObject(bufs[i]);
    for (int i = 0; i < 4; i++)
        coproc__kernel_return(dev, lease[i]);
    return s;
}

/* Shared argument checks: keys a valid column of rt with at most UINT32_MAX rows. */
static coproc_status check_keys(coproc_runtime *rt, const coproc_column *keys, const char *what)
{
    char label[64];
    snprintf(label, sizeof label, "%s: keys", what);
    coproc_status s = coproc__column_check(rt, keys, NULL, label);
    if (s != COPROC_OK)
        return s;
    if ((unsigned)keys->type >= COPROC__TYPE_COUNT)
        return coproc__fail(rt, COPROC_UNSUPPORTED_TYPE, "%s: invalid key type %d", what,
                            (int)keys->type);
    if (keys->length > UINT32_MAX)
        return coproc__fail(rt, COPROC_UNSUPPORTED, "%s: %zu rows exceed UINT32_MAX", what,
                            keys->length);
    return COPROC_OK;
}

/* ---- nulls (coproc.h): rows with null keys go first or last, in input
 * order; the valid rows are sorted as without nulls. Composed: the valid
 * keys compacted and argsorted, their permutation mapped back to rows and
 * laid beside the null rows' positions. */

/* Copy `rows` positions of src into dst at row `at`. */
static coproc_status copy_rows(coproc_runtime *rt, coproc__device *dev, const coproc_column *src,
                               coproc_column *dst, size_t at)
{
    if (src->length == 0)
        return COPROC_OK;
    return coproc__nulls_copy(rt, dev, src->mem, 0, dst->mem, at * sizeof(cl_uint),
                              src->length * sizeof(cl_uint));
}

static coproc_status argsort_nulls(coproc_runtime *rt, const coproc_column *keys, int nulls_first,
                                   coproc_column **perm)
{
    coproc__device *dev = keys->dev;
    size_t n = keys->length;
    coproc_column raw = coproc__without_nulls(keys), bits = coproc__without_nulls(keys->validity);
    coproc_column *valid_keys = NULL, *valid_rows = NULL, *null_bits = NULL, *null_rows = NULL;
    coproc_column *order = NULL, *sorted_rows = NULL, *out = NULL;
    coproc_status s = coproc__compact_run(rt, &raw, &bits, &valid_keys);
    if (s == COPROC_OK)
        s = coproc__nulls_positions(rt, dev, bits.mem, n, &valid_rows);
    if (s == COPROC_OK)
        s = coproc__nulls_not(rt, dev, &bits, n, &null_bits);
    if (s == COPROC_OK)
        s = coproc__nulls_positions(rt, dev, null_bits->mem, n, &null_rows);
    if (s == COPROC_OK)
        s = coproc__argsort_run(rt, valid_keys, 0, &order);
    if (s == COPROC_OK)
        s = coproc__gather_run(rt, valid_rows, order, &sorted_rows);
    if (s == COPROC_OK)
        s = coproc__column_new(rt, dev, COPROC_UINT32, n, &out);
    if (s == COPROC_OK)
        s = copy_rows(rt, dev, null_rows, out, nulls_first ? 0 : sorted_rows->length);
    if (s == COPROC_OK)
        s = copy_rows(rt, dev, sorted_rows, out, nulls_first ? null_rows->length : 0);
    if (s == COPROC_OK) {
        cl_int err = coproc__finish(dev, dev->queue);
        if (err != CL_SUCCESS)
            s = coproc__fail_cl(rt, err, "coproc_argsort: clFinish on device %d", dev->index);
    }
    coproc_column *tmp[] = {valid_keys, valid_rows, null_bits, null_rows, order, sorted_rows};
    for (size_t i = 0; i < sizeof tmp / sizeof *tmp; i++)
        coproc_column_free(tmp[i]);
    if (s != COPROC_OK) {
        coproc_column_free(out);
        return s;
    }
    *perm = out;
    return COPROC_OK;
}

/* col (a device column) takes the rows of src (same type and length: its
 * permuted copy) and src's validity, which replaces col's. */
static coproc_status take_rows(coproc_runtime *rt, coproc_column *col, coproc_column *src)
{
    coproc__device *dev = col->dev;
    size_t bytes = col->length * coproc_type_size(col->type);
    coproc_status s = coproc__nulls_copy(rt, dev, src->mem, 0, col->mem, 0, bytes);
    cl_int err = s == COPROC_OK ? coproc__finish(dev, dev->queue) : CL_SUCCESS;
    if (err != CL_SUCCESS)
        return coproc__fail_cl(rt, err, "coproc_sort: copying rows on device %d", dev->index);
    if (s != COPROC_OK)
        return s;
    coproc_column_free(col->validity);
    col->validity = NULL;
    coproc__attach_validity(col, src->validity);
    src->validity = NULL;
    return COPROC_OK;
}

static coproc_status sort_nulls(coproc_runtime *rt, coproc_column *keys, coproc_column *values,
                                int nulls_first)
{
    coproc_column *perm = NULL, *k = NULL, *v = NULL;
    coproc_status s = coproc__argsort_run(rt, keys, nulls_first, &perm);
    if (s == COPROC_OK)
        s = coproc__gather_run(rt, keys, perm, &k);
    if (s == COPROC_OK && values)
        s = coproc__gather_run(rt, values, perm, &v);
    if (s == COPROC_OK)
        s = take_rows(rt, keys, k);
    if (s == COPROC_OK && values)
        s = take_rows(rt, values, v);
    coproc_column_free(perm);
    coproc_column_free(k);
    coproc_column_free(v);
    return s;
}

coproc_status coproc__sort_run(coproc_runtime *rt, coproc_column *keys, coproc_column *values,
                               int nulls_first)
{
    if (!rt)
        return COPROC_NULL_POINTER;
    coproc_status s = check_keys(rt, keys, "coproc_sort");
    if (s != COPROC_OK)
        return s;
    if (values) {
        if ((s = coproc__column_check(rt, values, keys->dev, "coproc_sort: values")) != COPROC_OK)
            return s;
        if (values == keys)
            return coproc__fail(rt, COPROC_INVALID_ARGUMENT,
                                "coproc_sort: values is the keys column");
        if ((unsigned)values->type >= COPROC__TYPE_COUNT)
            return coproc__fail(rt, COPROC_UNSUPPORTED_TYPE, "coproc_sort: invalid value type %d",
                                (int)values->type);
        if (values->length != keys->length)
            return coproc__fail(rt, COPROC_LENGTH_MISMATCH,
                                "coproc_sort: %zu keys but %zu values", keys->length,
                                values->length);
    }
    if (keys->validity || coproc__has_nulls(values))
        return sort_nulls(rt, keys, values, nulls_first);
    if (keys->length < 2)
        return COPROC_OK;
    sort_job j = {0};
    j.rt = rt;
    j.dev = keys->dev;
    j.what = "coproc_sort";
    j.n = keys->length;
    j.kbytes = coproc_type_size(keys->type);
    j.vbytes = values ? coproc_type_size(values->type) : 0;
    j.kind = key_kind(keys->type);
    j.keys = keys->mem;
    j.values = values ? values->mem : NULL;
    return radix_sort(&j);
}

coproc_status coproc__argsort_run(coproc_runtime *rt, const coproc_column *keys, int nulls_first,
                                  coproc_column **perm)
{
    if (!rt)
        return COPROC_NULL_POINTER;
    if (!perm)
        return coproc__fail(rt, COPROC_NULL_POINTER, "coproc_argsort: perm is NULL");
    *perm = NULL;
    coproc_status s = check_keys(rt, keys, "coproc_argsort");
    if (s != COPROC_OK)
        return s;
    if (keys->validity)
        return argsort_nulls(rt, keys, nulls_first, perm);
    coproc_column *out = NULL;
    if ((s = coproc__column_new(rt, keys->dev, COPROC_UINT32, keys->length, &out)) != COPROC_OK)
        return s;
    sort_job j = {0};
    j.rt = rt;
    j.dev = keys->dev;
    j.what = "coproc_argsort";
    j.n = keys->length;
    j.kbytes = coproc_type_size(keys->type);
    j.kind = key_kind(keys->type);
    j.keys = keys->mem;
    j.perm = out->mem;
    if (j.n == 1) { /* nothing to sort: the permutation is {0} */
        cl_uint zero = 0;
        cl_int err =
            coproc__write_now(j.dev, j.dev->queue, out->mem, 0, sizeof zero, &zero, 0, NULL, NULL);
        if (err != CL_SUCCESS)
            s = coproc__fail_cl(rt, err, "coproc_argsort: writing to device %d", j.dev->index);
    } else if (j.n > 1) {
        s = radix_sort(&j);
    }
    if (s != COPROC_OK) {
        coproc_column_free(out);
        return s;
    }
    *perm = out;
    return COPROC_OK;
}

/* Device bytes coproc__sort_run allocates beside the columns it sorts in
 * place: the radix sort's ping-pong copies of keys and values, and its digit
 * table of passes x 256 x groups words (groups bounded by either kernel
 * path's choice). */
uint64_t coproc__sort_device_bytes(const coproc__device *dev, uint64_t rows, size_t kb, size_t vb)
{
    uint64_t units = dev->info.compute_units ? dev->info.compute_units : 1;
    uint64_t groups = rows / 64 + 1;
    if (groups > units * 8)
        groups = units * 8;
    return rows * (kb + vb) + (uint64_t)kb * 1024 * (groups + 1);
}

/* ---- the operator table's entries (ops/table.h) */

static void sort_features(const coproc_op *op, const coproc_result *r, const coproc__op_seen *seen,
                          double x[2], double *out_bytes)
{
    x[0] = coproc__col_bytes(op->a) + coproc__col_bytes(op->b);
    x[1] = coproc__n_log_n(coproc__col_rows(op->a));
    *out_bytes = x[0];
}

/* The sorted copies (out bytes) and what the sort needs beside them. */
static double sort_device_bytes(const coproc__device *dev, const coproc_op *op, double out)
{
    return out + (double)coproc__sort_device_bytes(dev, op->a->length,
                                                   coproc_type_size(op->a->type),
                                                   op->b ? coproc_type_size(op->b->type) : 0);
}

/* A copy of the device column col, its validity copied too. */
static coproc_status copy_with_nulls(coproc_runtime *rt, coproc__device *dev,
                                     const coproc_column *col, coproc_column **out)
{
    coproc_column *bits = NULL;
    coproc_status s = coproc__column_copy(rt, dev, col, out);
    if (s == COPROC_OK && col->validity &&
        (s = coproc__column_copy(rt, dev, col->validity, &bits)) != COPROC_OK) {
        coproc_column_free(*out);
        *out = NULL;
    }
    if (s == COPROC_OK)
        coproc__attach_validity(*out, bits);
    return s;
}

/* Sorted copies: the inputs (maybe cached copies of host columns) stay. */
static coproc_status sort_in_memory(coproc_runtime *rt, coproc__device *dev, const coproc_op *op,
                                    const coproc_column *const *v, coproc_result *out)
{
    coproc_status s = copy_with_nulls(rt, dev, v[0], &out->column);
    if (s == COPROC_OK && op->b)
        s = copy_with_nulls(rt, dev, v[1], &out->column2);
    if (s == COPROC_OK)
        s = coproc__sort_run(rt, out->column, out->column2, op->nulls_first);
    return s; /* on error the caller frees what *out holds */
}

static coproc_status sort_stream(coproc_runtime *rt, coproc__device *dev, const coproc_op *op,
                                 size_t budget, coproc_result *out)
{
    return coproc__outofcore_sort(rt, dev, op->a, op->b, budget, &out->column, &out->column2);
}

const coproc__op_def coproc__op_sort = {
    .name = "sort", .kind = COPROC_OP_SORT, .variant = COPROC_VARIANT_DEFAULT,
    .inputs = coproc__inputs_a_opt_b, .same_length = 1, .features = sort_features,
    .device_bytes = sort_device_bytes, .run = sort_in_memory, .stream = sort_stream,
};

static void argsort_features(const coproc_op *op, const coproc_result *r,
                             const coproc__op_seen *seen, double x[2], double *out_bytes)
{
    double n = coproc__col_rows(op->a);
    x[0] = coproc__col_bytes(op->a) + n * 4;
    x[1] = coproc__n_log_n(n);
    *out_bytes = n * 4;
}

/* A copy of the keys with their positions, sorted as keys and values. */
static double argsort_device_bytes(const coproc__device *dev, const coproc_op *op, double out)
{
    size_t kb = coproc_type_size(op->a->type);
    return (double)op->a->length * (double)(kb + 4) +
           (double)coproc__sort_device_bytes(dev, op->a->length, kb, 4);
}

static coproc_status argsort_in_memory(coproc_runtime *rt, coproc__device *dev,
                                       const coproc_op *op, const coproc_column *const *v,
                                       coproc_result *out)
{
    return coproc__argsort_run(rt, v[0], op->nulls_first, &out->column);
}

/* The out-of-core sort of the keys with their row positions as values: the
 * permuted positions are the permutation (the sort is stable). */
static coproc_status argsort_stream(coproc_runtime *rt, coproc__device *dev, const coproc_op *op,
                                    size_t budget, coproc_result *out)
{
    size_t n = op->a->length;
    if (n > UINT32_MAX)
        return coproc__fail(rt, COPROC_UNSUPPORTED, "argsort: %zu rows exceed 32-bit positions",
                            n);
    coproc_column *rows = NULL, *keys = NULL;
    coproc_status s = coproc__host_column_new(rt, COPROC_UINT32, n, &rows);
    for (size_t i = 0; s == COPROC_OK && i < n; i++)
        ((uint32_t *)rows->host)[i] = (uint32_t)i;
    if (s == COPROC_OK)
        s = coproc__outofcore_sort(rt, dev, op->a, rows, budget, &keys, &out->column);
    coproc_column_free(rows);
    coproc_column_free(keys);
    return s;
}

const coproc__op_def coproc__op_argsort = {
    .name = "argsort", .kind = COPROC_OP_SORT, .variant = COPROC_VARIANT_ARGSORT,
    .inputs = coproc__inputs_a, .features = argsort_features,
    .device_bytes = argsort_device_bytes, .run = argsort_in_memory, .stream = argsort_stream,
};
