/* cases.c - the measured operators and the C loops that do the same work. */
#include "cases.h"

#include "bench_util.h"

#include <stdlib.h>
#include <string.h>

#include "baseline.h"
#include "coproc/opencl.h"

coproc_status bench_data_init(bench_data *d, coproc_runtime *rt, int device, size_t n,
                              int threads)
{
    memset(d, 0, sizeof *d);
    d->rt = rt;
    d->device = device;
    d->n = n;
    d->nb = n / 16 ? n / 16 : 1;
    d->threads = threads;
    d->a = malloc(n * 4);
    d->keys = malloc(n * 4);
    d->gkeys = malloc(n * 4);
    d->wkeys = malloc(n * 4);
    d->pos = malloc(n * 4);
    d->build = malloc(d->nb * 4);
    d->probe = malloc(n * 4);
    d->out32 = malloc(n * 4);
    d->out64 = malloc(n * 8);
    d->out_u32a = malloc(n * 4);
    d->out_u32b = malloc(n * 4);
    d->gk_hi = malloc(n * 4);
    d->gk_lo = malloc(n * 4);
    if (!d->gk_hi || !d->gk_lo || !d->a || !d->keys || !d->gkeys || !d->wkeys || !d->pos || !d->build || !d->probe || !d->out32 ||
        !d->out64 || !d->out_u32a || !d->out_u32b)
        return COPROC_HOST_OUT_OF_MEMORY;
    uint64_t s = 2026;
    for (size_t i = 0; i < n; i++) {
        uint64_t r = bench_mix(&s);
        d->a[i] = (int32_t)(uint32_t)r;
        d->keys[i] = (uint32_t)(r >> 32);
        d->gkeys[i] = (uint32_t)(r >> 20) % BENCH_GROUPS;
        d->wkeys[i] = (uint32_t)(r >> 12) % BENCH_WIDE_GROUPS;
        d->pos[i] = (uint32_t)((r >> 16) % n);
        d->gk_hi[i] = d->gkeys[i] / 32;
        d->gk_lo[i] = d->gkeys[i] % 32;
    }
    /* Distinct build keys: an odd multiplier is a bijection on uint32. */
    for (size_t i = 0; i < d->nb; i++)
        d->build[i] = (uint32_t)(i * 2654435761u + 12345u);
    for (size_t i = 0; i < n; i++)
        d->probe[i] = d->build[bench_mix(&s) % d->nb];

    coproc_status st;
    if ((st = coproc_column_upload(rt, device, COPROC_INT32, d->a, n, &d->ca)) ||
        (st = coproc_column_upload(rt, device, COPROC_UINT32, d->keys, n, &d->ckeys)) ||
        (st = coproc_column_upload(rt, device, COPROC_UINT32, d->gkeys, n, &d->cgkeys)) ||
        (st = coproc_column_upload(rt, device, COPROC_UINT32, d->wkeys, n, &d->cwkeys)) ||
        (st = coproc_column_upload(rt, device, COPROC_UINT32, d->pos, n, &d->cpos)) ||
        (st = coproc_column_upload(rt, device, COPROC_UINT32, d->build, d->nb, &d->cbuild)) ||
        (st = coproc_column_upload(rt, device, COPROC_UINT32, d->probe, n, &d->cprobe)) ||
        (st = coproc_column_upload(rt, device, COPROC_UINT32, d->pos, n, &d->cvals)) ||
        (st = coproc_column_upload(rt, device, COPROC_UINT32, d->gk_hi, n, &d->cgk_hi)) ||
        (st = coproc_column_upload(rt, device, COPROC_UINT32, d->gk_lo, n, &d->cgk_lo)) ||
        (st = coproc_column_alloc(rt, device, COPROC_UINT32, n, &d->sort_keys)) ||
        (st = coproc_column_alloc(rt, device, COPROC_UINT32, n, &d->sort_vals)))
        return st;
    return COPROC_OK;
}

void bench_data_free(bench_data *d)
{
    coproc_column *cols[] = {d->ca, d->ckeys, d->cgkeys, d->cpos, d->cbuild,
                             d->cprobe, d->cvals, d->sort_keys, d->sort_vals, d->cwkeys, d->cgk_hi, d->cgk_lo};
    for (size_t i = 0; i < sizeof cols / sizeof *cols; i++)
        coproc_column_free(cols[i]);
    free(d->a); free(d->keys); free(d->gkeys); free(d->wkeys); free(d->pos); free(d->build); free(d->probe);
    free(d->out32); free(d->out64); free(d->out_u32a); free(d->out_u32b);
    free(d->gk_hi); free(d->gk_lo);
    memset(d, 0, sizeof *d);
}

/* ---- reduce */
static coproc_status run_sum(bench_data *d)
{
    coproc_scalar r;
    coproc_status s = coproc_reduce(d->rt, COPROC_REDUCE_SUM, d->ca, &r);
    d->device_result = (uint64_t)r.v.i64;
    return s;
}
static void c_sum(bench_data *d) { d->c_result = (uint64_t)base_sum_i32(d->a, d->n, d->threads); }

static coproc_status run_min(bench_data *d)
{
    coproc_scalar r;
    coproc_status s = coproc_reduce(d->rt, COPROC_REDUCE_MIN, d->ca, &r);
    d->device_result = (uint64_t)r.v.i64;
    return s;
}
static void c_min(bench_data *d) { d->c_result = (uint64_t)(int64_t)base_min_i32(d->a, d->n, d->threads); }

/* ---- selection, 50 %: a < 0 on uniform int32 */
static coproc_status run_select(bench_data *d)
{
    coproc_filter f = {.first = {.col = d->ca, .cmp = COPROC_CMP_LT, .a = {.i64 = 0}}};
    coproc_column *pos = NULL;
    uint64_t count = 0;
    coproc_status s = coproc_select(d->rt, &f, &pos, &count);
    coproc_column_free(pos);
    d->device_result = count;
    return s;
}
static void c_select(bench_data *d) { d->c_result = base_select_lt_i32(d->a, d->n, 0, d->out_u32a, d->threads); }

/* The same filter, counted only (positions NULL). */
static coproc_status run_select_count(bench_data *d)
{
    coproc_filter f = {.first = {.col = d->ca, .cmp = COPROC_CMP_LT, .a = {.i64 = 0}}};
    uint64_t count = 0;
    coproc_status s = coproc_select(d->rt, &f, NULL, &count);
    d->device_result = count;
    return s;
}
static void c_select_count(bench_data *d) { d->c_result = base_count_lt_i32(d->a, d->n, 0, d->threads); }

/* ---- map */
static coproc_status run_add(bench_data *d)
{
    coproc_column *out = NULL;
    coproc_status s = coproc_map_const(d->rt, COPROC_ARITH_ADD, d->ca, (coproc_value){.i64 = 7}, &out);
    coproc_column_free(out);
    d->device_result = 0;
    return s;
}
static void c_add(bench_data *d) { base_add_const_i32(d->a, d->n, 7, d->out32, d->threads); d->c_result = 0; }

/* ---- gather by random positions */
static coproc_status run_gather(bench_data *d)
{
    coproc_column *out = NULL;
    coproc_status s = coproc_gather(d->rt, d->ca, d->cpos, &out);
    coproc_column_free(out);
    d->device_result = 0;
    return s;
}
static void c_gather(bench_data *d) { base_gather_i32(d->a, d->pos, d->n, d->out32, d->threads); d->c_result = 0; }

/* ---- inclusive scan */
static coproc_status run_scan(bench_data *d)
{
    coproc_column *out = NULL;
    coproc_status s = coproc_scan(d->rt, d->ca, 0, &out);
    coproc_column_free(out);
    d->device_result = 0;
    return s;
}
static void c_scan(bench_data *d) { base_scan_i32(d->a, d->n, d->out64, d->threads); d->c_result = 0; }

/* ---- sort: restore the unsorted keys (untimed), sort in place */
static coproc_status copy_column(coproc_runtime *rt, const coproc_column *src, coproc_column *dst)
{
    size_t bytes = coproc_column_length(src) * coproc_type_size(coproc_column_type(src));
    cl_command_queue q;
    coproc_status s = coproc_device_opencl(rt, coproc_column_device(src), NULL, NULL, &q);
    if (s != COPROC_OK)
        return s;
    cl_int err = clEnqueueCopyBuffer(q, coproc_column_opencl(src), coproc_column_opencl(dst), 0, 0,
                                     bytes, 0, NULL, NULL);
    if (err == CL_SUCCESS)
        err = clFinish(q);
    return err == CL_SUCCESS ? COPROC_OK : COPROC_DRIVER_ERROR;
}
static coproc_status prep_sort(bench_data *d)
{
    coproc_status s = copy_column(d->rt, d->ckeys, d->sort_keys);
    return s ? s : copy_column(d->rt, d->cvals, d->sort_vals);
}
static coproc_status run_sort_keys(bench_data *d) { d->device_result = 0; return coproc_sort(d->rt, d->sort_keys, NULL); }
static coproc_status run_sort_pairs(bench_data *d) { d->device_result = 0; return coproc_sort(d->rt, d->sort_keys, d->sort_vals); }
static void c_sort_keys(bench_data *d)
{
    memcpy(d->out_u32a, d->keys, d->n * 4);
    base_qsort_u32(d->out_u32a, d->n);
    d->c_result = 0;
}
static void c_sort_pairs(bench_data *d)
{
    memcpy(d->out_u32a, d->keys, d->n * 4);
    memcpy(d->out_u32b, d->pos, d->n * 4);
    base_qsort_pairs_u32(d->out_u32a, d->out_u32b, d->n);
    d->c_result = 0;
}

/* ---- group-by sum+count: only those two asked, as the C loop computes */
static coproc_status group_by(bench_data *d, const coproc_column *keys)
{
    coproc_group_result g;
    coproc_status s = coproc_group_by_aggs(d->rt, keys, d->ca,
                                           COPROC_GROUP_COUNT | COPROC_GROUP_SUM, 0, &g);
    d->device_result = s == COPROC_OK ? g.groups : 0;
    if (s == COPROC_OK)
        coproc_group_result_free(&g);
    return s;
}
static coproc_status run_group(bench_data *d) { return group_by(d, d->cgkeys); }
static coproc_status run_group_wide(bench_data *d) { return group_by(d, d->cwkeys); }
/* The C loops count the groups that occur: the check compares group counts. */
static void c_group_keys(bench_data *d, const uint32_t *keys, uint32_t groups)
{
    int64_t *sums = malloc(groups * sizeof *sums), *counts = malloc(groups * sizeof *counts);
    d->c_result = sums && counts ? base_group_sum_count(keys, d->a, d->n, groups, sums, counts,
                                                        d->threads)
                                 : 0;
    free(sums);
    free(counts);
}
static void c_group(bench_data *d) { c_group_keys(d, d->gkeys, BENCH_GROUPS); }

/* The same 1024 groups keyed by two columns (coproc_group_by_keys folds them;
 * the C loop packs them into one key, then groups). */
static coproc_status run_group_two_keys(bench_data *d)
{
    const coproc_column *keys[2] = {d->cgk_hi, d->cgk_lo};
    coproc_column *key_out[2];
    coproc_group_result g;
    coproc_status s = coproc_group_by_keys(d->rt, 2, keys, d->ca,
                                           COPROC_GROUP_COUNT | COPROC_GROUP_SUM, &g, key_out);
    d->device_result = s == COPROC_OK ? g.groups : 0;
    if (s == COPROC_OK) {
        coproc_group_result_free(&g);
        coproc_column_free(key_out[0]);
        coproc_column_free(key_out[1]);
    }
    return s;
}
static void c_group_two_keys(bench_data *d)
{
    for (size_t i = 0; i < d->n; i++)
        d->out_u32a[i] = d->gk_hi[i] * 32 + d->gk_lo[i];
    c_group_keys(d, d->out_u32a, BENCH_GROUPS);
}
static void c_group_wide(bench_data *d) { c_group_keys(d, d->wkeys, BENCH_WIDE_GROUPS); }

/* ---- hash join: probe n keys into n/16 distinct build keys */
static coproc_status run_join(bench_data *d)
{
    coproc_join_result j;
    coproc_status s = coproc_hash_join(d->rt, d->cbuild, d->cprobe, &j);
    d->device_result = s == COPROC_OK ? j.count : 0;
    if (s == COPROC_OK)
        coproc_join_result_free(&j);
    return s;
}
static void c_join(bench_data *d)
{
    d->c_result = base_hash_join_u32(d->build, d->nb, d->probe, d->n, d->out_u32a, d->out_u32b, d->threads);
}
static coproc_status run_join_count(bench_data *d)
{
    uint64_t count = 0;
    coproc_status s = coproc_hash_join_count(d->rt, d->cbuild, d->cprobe, &count);
    d->device_result = count;
    return s;
}
static void c_join_count(bench_data *d)
{
    d->c_result = base_hash_join_count_u32(d->build, d->nb, d->probe, d->n, d->threads);
}

const bench_case bench_cases[] = {
    {"sum int32", 4, NULL, run_sum, c_sum, "C loop"},
    {"min int32", 4, NULL, run_min, c_min, "C loop"},
    {"select 50% int32 -> positions", 4, NULL, run_select, c_select, "C loop"},
    {"select 50% int32 -> count", 4, NULL, run_select_count, c_select_count, "C loop"},
    {"map int32 + const", 4, NULL, run_add, c_add, "C loop"},
    {"gather int32", 8, NULL, run_gather, c_gather, "C loop"},
    {"scan int32 inclusive", 4, NULL, run_scan, c_scan, "C loop"},
    {"sort uint32 keys", 4, prep_sort, run_sort_keys, c_sort_keys, "qsort"},
    {"sort uint32 key/value", 8, prep_sort, run_sort_pairs, c_sort_pairs, "qsort"},
    {"group-by sum+count 1024 keys", 8, NULL, run_group, c_group, "C loop"},
    {"group-by sum+count 2^20 keys", 8, NULL, run_group_wide, c_group_wide, "C loop"},
    {"group-by sum+count 2 key columns, 1024 groups", 12, NULL, run_group_two_keys,
     c_group_two_keys, "C loop"},
    {"hash join pairs (n into n/16)", 4, NULL, run_join, c_join, "C loop"},
    {"hash join count (n into n/16)", 4, NULL, run_join_count, c_join_count, "C loop"},
};
const int bench_case_count = sizeof bench_cases / sizeof *bench_cases;
