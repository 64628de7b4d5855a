/* nulls.c - the cost of nulls, measured in one run: the same operator over
 * the same device column without a validity bitmap and with one (1 % nulls),
 * interleaved round by round so that clocks, caches and the device's state
 * affect both alike. */
#include "nulls.h"

#include "bench_util.h"

#include "coproc/query.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct nulls_data {
    coproc_runtime *rt;
    size_t n;
    int32_t *a;
    uint32_t *valid;               /* BENCH_NULL_RATE of the rows null */
    uint32_t *gkeys;               /* group keys < 1024 */
    coproc_column *ca;             /* a, no validity */
    coproc_column *can;            /* a with `valid` */
    coproc_column *ckeys, *ckeysn; /* gkeys without and with `valid` */
    uint32_t *pos;                 /* scatter positions: random rows, so duplicates */
    coproc_column *cpos;
    coproc_column *dst, *dstn;     /* scatter targets: dstn takes a's nulls */
    coproc_column *ha, *han;       /* a as host columns, without and with `valid` */
    coproc_column *hk, *hkn;       /* gkeys as host columns, without and with `valid` */
    /* the fused queries: tables (k = gkeys, a) over ca and over can, and
     * plans [shape][nulls] (query_setup) */
    coproc_table *qt[2];
    coproc_plan *qp[2][2];
    coproc_node *qroot[2][2];
    uint64_t result;               /* of the last run, to check */
} nulls_data;

static coproc_status group(nulls_data *d, const coproc_column *keys, const coproc_column *values);

typedef struct nulls_case {
    const char *name;
    /* Run the operator over the columns without nulls (nulls 0) or with them. */
    coproc_status (*run)(nulls_data *d, int nulls);
    /* The expected result (what run leaves in d->result), with or without nulls. */
    uint64_t (*expect)(const nulls_data *d, int nulls);
} nulls_case;

static int is_valid(const nulls_data *d, size_t i)
{
    return (d->valid[i >> 5] >> (i & 31)) & 1;
}

static coproc_status run_sum(nulls_data *d, int nulls)
{
    coproc_scalar r;
    coproc_status s = coproc_reduce(d->rt, COPROC_REDUCE_SUM, nulls ? d->can : d->ca, &r);
    d->result = (uint64_t)r.v.i64;
    return s;
}
/* The sum over host columns: streamed through the device when they exceed
 * its budget (coproc-bench --budget). */
static coproc_status run_sum_host(nulls_data *d, int nulls)
{
    coproc_scalar r;
    coproc_status s = coproc_reduce(d->rt, COPROC_REDUCE_SUM, nulls ? d->han : d->ha, &r);
    d->result = (uint64_t)r.v.i64;
    return s;
}
/* The group-by over host columns (null keys): streamed through the device
 * when they exceed its budget, the chunks' groups merged on the host. */
static coproc_status run_group_host(nulls_data *d, int nulls)
{
    return group(d, nulls ? d->hkn : d->hk, d->ha);
}
static uint64_t expect_sum(const nulls_data *d, int nulls)
{
    int64_t s = 0;
    for (size_t i = 0; i < d->n; i++)
        if (!nulls || is_valid(d, i))
            s += d->a[i];
    return (uint64_t)s;
}

static coproc_status select_run(nulls_data *d, int nulls, int positions)
{
    coproc_filter f = {
        .first = {.col = nulls ? d->can : d->ca, .cmp = COPROC_CMP_LT, .a = {.i64 = 0}}};
    coproc_column *pos = NULL;
    uint64_t count = 0;
    coproc_status s = coproc_select(d->rt, &f, positions ? &pos : NULL, &count);
    coproc_column_free(pos);
    d->result = count;
    return s;
}
static coproc_status run_select(nulls_data *d, int nulls)
{
    return select_run(d, nulls, 1);
}
static coproc_status run_select_count(nulls_data *d, int nulls)
{
    return select_run(d, nulls, 0);
}
static uint64_t expect_select(const nulls_data *d, int nulls)
{
    uint64_t c = 0;
    for (size_t i = 0; i < d->n; i++)
        c += d->a[i] < 0 && (!nulls || is_valid(d, i));
    return c;
}

static coproc_status run_scan(nulls_data *d, int nulls)
{
    coproc_column *out = NULL;
    coproc_status s = coproc_scan(d->rt, nulls ? d->can : d->ca, 0, &out);
    coproc_column_free(out);
    d->result = 0;
    return s;
}

static coproc_status run_map(nulls_data *d, int nulls)
{
    coproc_column *out = NULL;
    coproc_status s = coproc_map_const(d->rt, COPROC_ARITH_ADD, nulls ? d->can : d->ca,
                                       (coproc_value){.i64 = 7}, &out);
    coproc_column_free(out);
    d->result = 0;
    return s;
}
/* a scattered at random positions (duplicates: the last row wins with nulls) */
static coproc_status run_scatter(nulls_data *d, int nulls)
{
    d->result = 0;
    return coproc_scatter(d->rt, nulls ? d->can : d->ca, d->cpos, nulls ? d->dstn : d->dst);
}
static uint64_t expect_zero(const nulls_data *d, int nulls)
{
    (void)d;
    (void)nulls;
    return 0;
}

/* group-by sum+count over 1024 keys, as coproc-bench's own case */
static coproc_status group(nulls_data *d, const coproc_column *keys, const coproc_column *values)
{
    coproc_group_result g;
    coproc_status s =
        coproc_group_by_aggs(d->rt, keys, values, COPROC_GROUP_COUNT | COPROC_GROUP_SUM, 0, &g);
    d->result = s == COPROC_OK ? g.groups : 0;
    if (s == COPROC_OK)
        coproc_group_result_free(&g);
    return s;
}
static coproc_status run_group_values(nulls_data *d, int nulls)
{
    return group(d, d->ckeys, nulls ? d->can : d->ca);
}
static coproc_status run_group_keys(nulls_data *d, int nulls)
{
    return group(d, nulls ? d->ckeysn : d->ckeys, d->ca);
}
/* Every key occurs from 2^16 rows on (and a null key, 1 % of them); below,
 * the group count is not checked (NOT_CHECKED). */
#define NOT_CHECKED UINT64_MAX
static uint64_t expect_groups(const nulls_data *d, int nulls)
{
    (void)nulls;
    return d->n >= 1u << 16 ? 1024 : NOT_CHECKED;
}
static uint64_t expect_groups_null_key(const nulls_data *d, int nulls)
{
    return d->n >= 1u << 16 ? 1024 + (nulls != 0) : NOT_CHECKED; /* + the null group */
}

/* Fused queries, filter + group-by over a with or without its validity:
 * shape 0: SELECT k, COUNT(*), SUM(a) WHERE a < 0 GROUP BY k (the filter
 * proves a valid: the sum reads no bitmap); shape 1: the same WHERE k < 512
 * (the sum skips nulls, counting a's valid values). Result: the rows counted. */
static coproc_status query_run(nulls_data *d, int shape, int nulls)
{
    coproc_query_options o;
    coproc_query_options_init(&o);
    coproc_query_result r;
    coproc_status s = coproc_query_run(d->qp[shape][nulls], d->qroot[shape][nulls], &o, &r);
    if (s != COPROC_OK)
        return s;
    d->result = 0;
    const coproc_column *cnt = coproc_table_column(r.table, "n");
    const int64_t *c = coproc_column_host_data(cnt);
    for (size_t i = 0; i < coproc_table_rows(r.table); i++)
        d->result += (uint64_t)c[i];
    /* a fused run has no note; one that fell back is not the figure asked for */
    if (r.note[0] || r.pipelines < 1 || !r.pipeline[0].fused)
        d->result = NOT_CHECKED - 1;
    coproc_query_result_free(&r);
    return COPROC_OK;
}

static coproc_status run_query_filter(nulls_data *d, int nulls)
{
    return query_run(d, 0, nulls);
}
static coproc_status run_query_values(nulls_data *d, int nulls)
{
    return query_run(d, 1, nulls);
}
static uint64_t expect_keys_below(const nulls_data *d, int nulls)
{
    (void)nulls;
    uint64_t c = 0;
    for (size_t i = 0; i < d->n; i++)
        c += d->gkeys[i] < 512;
    return c;
}

static coproc_status query_setup(nulls_data *d, int nulls)
{
    coproc_status s;
    if ((s = coproc_table_create(d->rt, &d->qt[nulls])) ||
        (s = coproc_table_add(d->qt[nulls], "k", d->ckeys)) ||
        (s = coproc_table_add(d->qt[nulls], "a", nulls ? d->can : d->ca)))
        return s;
    for (int shape = 0; shape < 2; shape++) {
        if ((s = coproc_plan_create(d->rt, &d->qp[shape][nulls])))
            return s;
        coproc_plan *p = d->qp[shape][nulls];
        coproc_node *f = coproc_plan_filter(
            p, coproc_plan_scan(p, d->qt[nulls], "t"),
            coproc_expr_compare(p, COPROC_CMP_LT, coproc_expr_column(p, shape ? "k" : "a"),
                                coproc_expr_int(p, shape ? 512 : 0)));
        const char *keys[] = {"k"};
        coproc_aggregate aggs[] = {{COPROC_AGG_COUNT, NULL, "n"},
                                   {COPROC_AGG_SUM, coproc_expr_column(p, "a"), "s"}};
        d->qroot[shape][nulls] = coproc_plan_group_by(p, f, 1, keys, 2, aggs);
        if ((s = coproc_plan_status(p)))
            return s;
    }
    return COPROC_OK;
}

static const nulls_case cases[] = {
    {"sum int32", run_sum, expect_sum},
    {"select 50% int32 -> positions", run_select, expect_select},
    {"select 50% int32 -> count", run_select_count, expect_select},
    {"scan int32 inclusive", run_scan, expect_zero},
    {"map int32 + const", run_map, expect_zero},
    {"group-by sum+count, null values", run_group_values, expect_groups},
    {"group-by sum+count, null keys", run_group_keys, expect_groups_null_key},
    {"scatter int32, null src rows", run_scatter, expect_zero},
    {"sum int32, host columns", run_sum_host, expect_sum},
    {"group-by null keys, host columns", run_group_host, expect_groups_null_key},
    {"query fused filter a+group-by", run_query_filter, expect_select},
    {"query fused filter k+group-by", run_query_values, expect_keys_below},
};

/* A device column of the host rows with (valid not NULL) that validity. */
static coproc_status upload(coproc_runtime *rt, int dev, coproc_type t, const void *host, size_t n,
                            const uint32_t *valid, coproc_column **out)
{
    coproc_column *b = NULL;
    coproc_status s = coproc_column_upload(rt, dev, t, host, n, out);
    if (s == COPROC_OK && valid &&
        (s = coproc_column_upload(rt, dev, COPROC_UINT32, valid, (n + 31) / 32, &b)) == COPROC_OK &&
        (s = coproc_column_set_validity(*out, b)) != COPROC_OK)
        coproc_column_free(b);
    return s;
}

static void data_free(nulls_data *d)
{
    for (int k = 0; k < 2; k++) {
        coproc_plan_free(d->qp[0][k]);
        coproc_plan_free(d->qp[1][k]);
        coproc_table_free(d->qt[k]);
    }
    coproc_column_free(d->ca);
    coproc_column_free(d->can);
    coproc_column_free(d->ckeys);
    coproc_column_free(d->ckeysn);
    coproc_column_free(d->cpos);
    coproc_column_free(d->dst);
    coproc_column_free(d->dstn);
    coproc_column_free(d->ha);
    coproc_column_free(d->han);
    coproc_column_free(d->hk);
    coproc_column_free(d->hkn);
    free(d->pos);
    free(d->a);
    free(d->valid);
    free(d->gkeys);
}

int bench_nulls(coproc_runtime *rt, int dev, size_t n, int reps, const char *only, FILE *out,
                json_t *jarr)
{
    nulls_data d = {.rt = rt, .n = n};
    d.a = malloc(n * 4);
    d.gkeys = malloc(n * 4);
    d.valid = calloc((n + 31) / 32, 4);
    d.pos = malloc(n * 4);
    if (!d.a || !d.gkeys || !d.valid || !d.pos) {
        data_free(&d);
        fprintf(out, "nulls: out of host memory\n");
        return -1;
    }
    uint64_t seed = 19;
    for (size_t i = 0; i < n; i++) {
        uint64_t r = bench_mix(&seed);
        d.a[i] = (int32_t)(uint32_t)r;
        d.gkeys[i] = (uint32_t)(r >> 40) % 1024;
        if ((double)((r >> 32) & 0xFF) >= 256 * BENCH_NULL_RATE)
            d.valid[i >> 5] |= 1u << (i & 31);
        d.pos[i] = (uint32_t)(bench_mix(&seed) % n);
    }
    coproc_status s;
    coproc_column *hv = NULL, *hkv = NULL;
    if ((s = upload(rt, dev, COPROC_INT32, d.a, n, NULL, &d.ca)) ||
        (s = upload(rt, dev, COPROC_INT32, d.a, n, d.valid, &d.can)) ||
        (s = upload(rt, dev, COPROC_UINT32, d.gkeys, n, NULL, &d.ckeys)) ||
        (s = upload(rt, dev, COPROC_UINT32, d.gkeys, n, d.valid, &d.ckeysn)) ||
        (s = upload(rt, dev, COPROC_UINT32, d.pos, n, NULL, &d.cpos)) ||
        (s = upload(rt, dev, COPROC_INT32, d.a, n, NULL, &d.dst)) ||
        (s = upload(rt, dev, COPROC_INT32, d.a, n, NULL, &d.dstn)) ||
        (s = coproc_column_wrap(rt, COPROC_INT32, d.a, n, &d.ha)) ||
        (s = coproc_column_wrap(rt, COPROC_INT32, d.a, n, &d.han)) ||
        (s = coproc_column_wrap(rt, COPROC_UINT32, d.valid, (n + 31) / 32, &hv)) ||
        (s = coproc_column_set_validity(d.han, hv)) ||
        (s = coproc_column_wrap(rt, COPROC_UINT32, d.gkeys, n, &d.hk)) ||
        (s = coproc_column_wrap(rt, COPROC_UINT32, d.gkeys, n, &d.hkn)) ||
        (s = coproc_column_wrap(rt, COPROC_UINT32, d.valid, (n + 31) / 32, &hkv)) ||
        (s = coproc_column_set_validity(d.hkn, hkv)) || (s = query_setup(&d, 0)) ||
        (s = query_setup(&d, 1))) {
        if (!d.han || coproc_column_validity(d.han) != hv)
            coproc_column_free(hv);
        if (!d.hkn || coproc_column_validity(d.hkn) != hkv)
            coproc_column_free(hkv);
        fprintf(out, "nulls: setup of %zu rows failed: %s\n", n, coproc_errmsg(rt));
        data_free(&d);
        return -1;
    }
    int bad = 0;
    double *ratio = malloc((size_t)reps * sizeof *ratio);
    for (size_t ci = 0; ci < sizeof cases / sizeof *cases && ratio; ci++) {
        const nulls_case *c = &cases[ci];
        if (only && !strstr(c->name, only))
            continue;
        double best[2] = {1e30, 1e30};
        s = COPROC_OK;
        for (int r = 0; r <= reps && s == COPROC_OK; r++) { /* round 0 warms both up */
            double t[2];
            for (int k = 0; k < 2 && s == COPROC_OK; k++) {
                int nulls = (r + k) % 2; /* the order flips every round */
                double t0 = bench_now_s();
                s = c->run(&d, nulls);
                t[nulls] = bench_now_s() - t0;
                uint64_t want = c->expect(&d, nulls);
                if (s == COPROC_OK && want != NOT_CHECKED && d.result != want) {
                    fprintf(out, "MISMATCH %s%s: %llu, expected %llu\n", c->name,
                            nulls ? " (nulls)" : "", (unsigned long long)d.result,
                            (unsigned long long)want);
                    bad = 1;
                }
            }
            if (s != COPROC_OK || r == 0)
                continue;
            for (int k = 0; k < 2; k++)
                if (t[k] < best[k])
                    best[k] = t[k];
            ratio[r - 1] = t[1] / t[0];
        }
        if (s != COPROC_OK) {
            fprintf(out, "%-34s %10zu  failed: %s: %s\n", c->name, n, coproc_status_name(s),
                    coproc_errmsg(rt));
            bad = 1;
            continue;
        }
        qsort(ratio, (size_t)reps, sizeof *ratio, bench_cmp_double);
        double median = reps % 2 ? ratio[reps / 2] : (ratio[reps / 2 - 1] + ratio[reps / 2]) / 2;
        fprintf(out, "%-34s %10zu %10.3f %10.3f %8.2fx  [%.2f, %.2f]\n", c->name, n, best[0] * 1e3,
                best[1] * 1e3, median, ratio[0], ratio[reps - 1]);
        json_t *j = json_object();
        json_object_set_new(j, "operator", json_string(c->name));
        json_object_set_new(j, "rows", json_integer((json_int_t)n));
        json_object_set_new(j, "null_rate", json_real(BENCH_NULL_RATE));
        json_object_set_new(j, "seconds_without_nulls", json_real(best[0]));
        json_object_set_new(j, "seconds_with_nulls", json_real(best[1]));
        json_object_set_new(j, "ratio_median", json_real(median));
        json_object_set_new(j, "ratio_min", json_real(ratio[0]));
        json_object_set_new(j, "ratio_max", json_real(ratio[reps - 1]));
        json_object_set_new(j, "rounds", json_integer(reps));
        json_array_append_new(jarr, j);
    }
    free(ratio);
    data_free(&d);
    return bad ? -1 : 0;
}
