/* check_ops.c - the operator half of coproc-calibrate --check (check_ops.h). */
#include "check_ops.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "coproc/inspect.h"
#include "profile_view.h"

#define REPS 7          /* runs per size; their median is compared */
#define GROUPS 60       /* sizes per operator */
#define WARM_GROUPS 20  /* the first 140 runs teach the model, unscored */
#define BATCH 10        /* sizes run interleaved; divides GROUPS and WARM_GROUPS */
#define MAX_ROWS ((size_t)1 << 23)

/* The sizes' and shuffles' deterministic pseudo-random sequence (splitmix64). */
static uint64_t next_random(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double coproc_check_quantile(double *v, int n, double q)
{
    if (n <= 0)
        return -1;
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    double pos = q * (n - 1);
    int lo = (int)pos;
    return lo >= n - 1 ? v[n - 1] : v[lo] + (pos - lo) * (v[lo + 1] - v[lo]);
}

/* The inputs of one size, made once for all runs of the size. */
typedef struct inputs {
    coproc_column *a, *k, *pos, *groups, *build;
} inputs;

static void inputs_free(inputs *in)
{
    coproc_column_free(in->a);
    coproc_column_free(in->k);
    coproc_column_free(in->pos);
    coproc_column_free(in->groups);
    coproc_column_free(in->build);
    memset(in, 0, sizeof *in);
}

static coproc_status setup(coproc_runtime *rt, coproc_op_kind k, int dev, const int32_t *a,
                           const uint32_t *keys, size_t n, inputs *in)
{
    memset(in, 0, sizeof *in);
    coproc_status s = coproc_column_upload(rt, dev, COPROC_INT32, a, n, &in->a);
    if (s == COPROC_OK)
        s = coproc_column_upload(rt, dev, COPROC_UINT32, keys, n, &in->k);
    if (s != COPROC_OK)
        return s;
    switch (k) {
    case COPROC_OP_GATHER: /* keys scaled to [0, n): random positions inside the column */
        return coproc_map_const(rt, COPROC_ARITH_DIV, in->k,
                                (coproc_value){.u64 = (4294967296u + n - 1) / n}, &in->pos);
    case COPROC_OP_GROUP_BY: /* 1024 groups */
        return coproc_map_const(rt, COPROC_ARITH_DIV, in->k, (coproc_value){.u64 = 1u << 22},
                                &in->groups);
    case COPROC_OP_HASH_JOIN: /* n / 16 build keys, n probes */
        return coproc_column_upload(rt, dev, COPROC_UINT32, keys, n / 16 ? n / 16 : 1,
                                    &in->build);
    default:
        return COPROC_OK;
    }
}

/*
 * Run kind k once through the public API. The runtime times it and feeds its
 * model itself (markers on the device's queue around the operator's
 * commands); x and *seconds are that observation, read back from the model
 * (coproc_model_last), so the check scores the model on exactly what it learns from.
 * Timing the call again from out here would add this loop's own marker round
 * trip (tens of microseconds on PoCL) to what the model predicts. *seconds is
 * NaN when the runtime did not observe the run (it built a program then). A
 * sort sorts in place, so each sort run gets fresh keys first (untimed).
 */
static coproc_status run_once(coproc_runtime *rt, int dev, coproc_op_kind k,
                              const uint32_t *keys, size_t n, inputs *in, double *x,
                              double *seconds)
{
    coproc_column *out = NULL;
    coproc_status s = COPROC_OK;
    *seconds = NAN;
    if (k == COPROC_OP_SORT) {
        coproc_column_free(in->k);
        in->k = NULL;
        if ((s = coproc_column_upload(rt, dev, COPROC_UINT32, keys, n, &in->k)) != COPROC_OK)
            return s;
    }
    coproc_group_result g;
    coproc_join_result j;
    memset(&g, 0, sizeof g);
    memset(&j, 0, sizeof j);
    uint64_t seen = 0;
    if ((s = coproc_model_last(rt, dev, k, NULL, NULL, &seen)) != COPROC_OK)
        return s;
    switch (k) {
    case COPROC_OP_REDUCE: {
        coproc_scalar r;
        s = coproc_reduce(rt, COPROC_REDUCE_SUM, in->a, &r);
        break;
    }
    case COPROC_OP_SELECT: {
        coproc_filter f = {.first = {.col = in->a, .cmp = COPROC_CMP_LT, .a = {.i64 = 0}}};
        uint64_t count;
        s = coproc_select(rt, &f, &out, &count);
        break;
    }
    case COPROC_OP_MAP:
        s = coproc_map_const(rt, COPROC_ARITH_MUL, in->a, (coproc_value){.i64 = 3}, &out);
        break;
    case COPROC_OP_GATHER: s = coproc_gather(rt, in->a, in->pos, &out); break;
    case COPROC_OP_SCAN: s = coproc_scan(rt, in->a, 0, &out); break;
    case COPROC_OP_SORT: s = coproc_sort(rt, in->k, NULL); break;
    case COPROC_OP_GROUP_BY: s = coproc_group_by(rt, in->groups, in->a, 0, &g); break;
    case COPROC_OP_HASH_JOIN: s = coproc_hash_join(rt, in->build, in->k, &j); break;
    default: break;
    }
    double lx[COPROC_MODEL_MAX_FEATURES] = {0}, ls = NAN;
    uint64_t now = 0;
    if (s == COPROC_OK && coproc_model_last(rt, dev, k, lx, &ls, &now) == COPROC_OK &&
        now == seen + 1) {
        memcpy(x, lx, sizeof lx);
        *seconds = ls;
    }
    if (k == COPROC_OP_GROUP_BY && s == COPROC_OK)
        coproc_group_result_free(&g);
    if (k == COPROC_OP_HASH_JOIN && s == COPROC_OK)
        coproc_join_result_free(&j);
    coproc_column_free(out);
    return s;
}

/* Median relative error of a model of kind k's form fitted on the n points
 * (x, t) themselves: how closely any such model can follow them, i.e.
 * the scatter of the measurements; -1 when they do not determine a fit. */
static double in_sample_error(coproc_op_kind k, double x[][COPROC_MODEL_MAX_FEATURES],
                              const double *t, int n)
{
    double pred[GROUPS], err[GROUPS];
    if (n < 1 || n > GROUPS ||
        coproc_model_fit_points(k, n, (const double(*)[COPROC_MODEL_MAX_FEATURES])x, t, pred) !=
            COPROC_OK)
        return -1;
    for (int i = 0; i < n; i++)
        err[i] = fabs(pred[i] - t[i]) / t[i];
    return coproc_check_quantile(err, n, 0.5);
}

/* The --check-points line of device i's model of kind k as it stands now. 0,
 * or -1 when host memory runs out. */
static int print_model(coproc_runtime *rt, int i, coproc_op_kind k, FILE *points)
{
    coproc_profile *now = NULL;
    profile_view *v = malloc(sizeof *v);
    if (!v || coproc_profile_current(rt, i, &now) != COPROC_OK || profile_view_init(v, now) != 0) {
        free(v);
        return -1;
    }
    const view_model *m = &v->ops[k];
    fprintf(points, "# %s model: coef %.6g %.6g %.6g %.6g knot %.6g\n", coproc_op_kind_name(k),
            m->coef[0], m->coef[1], m->coef[2], m->coef[3], m->knot);
    profile_view_free(v);
    free(v);
    return 0;
}

/* The runs of one size that the runtime observed, moved to the front; their count. */
static int observed(double *t, int n)
{
    int m = 0;
    for (int i = 0; i < n; i++)
        if (isfinite(t[i]))
            t[m++] = t[i];
    return m;
}

json_t *coproc_check_operators(coproc_runtime *rt, int i, double min_log2, double max_log2,
                               FILE *out, FILE *points)
{
    const double MIN_LOG2 = min_log2, MAX_LOG2 = max_log2;
    int32_t *a = malloc(MAX_ROWS * sizeof *a);
    uint32_t *keys = malloc(MAX_ROWS * sizeof *keys);
    json_t *jops = json_object();
    if (!a || !keys) {
        free(a);
        free(keys);
        json_decref(jops);
        return NULL;
    }
    uint64_t seed = 7 + (uint64_t)(min_log2 * 100);
    for (size_t r = 0; r < MAX_ROWS; r++) {
        uint64_t v = next_random(&seed);
        a[r] = (int32_t)(uint32_t)v;
        keys[r] = (uint32_t)(v >> 32);
    }
    static const coproc_op_kind kinds[] = {COPROC_OP_REDUCE, COPROC_OP_SELECT, COPROC_OP_MAP,
                                           COPROC_OP_GATHER, COPROC_OP_SCAN, COPROC_OP_SORT,
                                           COPROC_OP_GROUP_BY, COPROC_OP_HASH_JOIN};
    fprintf(out, "device %d: operator check, %d sizes each, 2^%g..2^%g rows (log-uniform, odd), "
            "%d runs a size;\nscored: the last %d sizes (after %d runs), predicted before "
            "they ran against the median of their runs (the runtime's own timing);\n"
            "floor: the same model refitted on the scored medians themselves - what the runs' "
            "scatter leaves to any model\n%-10s %6s %6s %12s %8s %8s %8s %9s %9s\n",
            i, GROUPS, MIN_LOG2, MAX_LOG2, REPS, GROUPS - WARM_GROUPS, WARM_GROUPS * REPS,
            "operator", "runs", "refits", "ms measured", "median", "p90", "floor", "1-run med",
            "1-run p90");
    int failed = 0;
    double all[8 * GROUPS];
    int nall = 0;
    for (size_t ki = 0; ki < sizeof kinds / sizeof *kinds && !failed; ki++) {
        coproc_op_kind k = kinds[ki];
        double err[GROUPS], tmin = INFINITY, tmax = 0;
        double scored_x[GROUPS][COPROC_MODEL_MAX_FEATURES], scored_t[GROUPS];
        int scored = 0;
        /* Batches of BATCH sizes: inputs made for all, then REPS rounds, each
         * running every size once in a new order, so a burst of other work on
         * the machine falls on one run of many sizes rather than on every run
         * of one (the median then sets it aside), and drift falls on all alike.
         * The predictions are the model's before the batch. */
        for (int g0 = 0; g0 < GROUPS && !failed; g0 += BATCH) {
            size_t n[BATCH];
            inputs in[BATCH];
            double x[BATCH][COPROC_MODEL_MAX_FEATURES], t[BATCH][REPS];
            memset(in, 0, sizeof in);
            memset(x, 0, sizeof x);
            coproc_profile *before = NULL; /* the models as they stand before the batch's runs */
            coproc_status s = coproc_profile_current(rt, i, &before);
            for (int b = 0; b < BATCH && s == COPROC_OK; b++) {
                /* log-uniform sizes, never a power of two */
                double u = (double)(next_random(&seed) % 10000);
                n[b] = (size_t)exp2(MIN_LOG2 + (MAX_LOG2 - MIN_LOG2) * u / 10000.0);
                n[b] |= 1;
                if (n[b] > MAX_ROWS)
                    n[b] = MAX_ROWS - 1;
                s = setup(rt, k, i, a, keys, n[b], &in[b]);
            }
            int order[BATCH];
            for (int b = 0; b < BATCH; b++)
                order[b] = b;
            for (int r = 0; s == COPROC_OK && r < REPS; r++) {
                for (int b = BATCH - 1; b > 0; b--) {
                    int j = (int)(next_random(&seed) % (uint64_t)(b + 1));
                    int o = order[b];
                    order[b] = order[j];
                    order[j] = o;
                }
                for (int b = 0; b < BATCH && s == COPROC_OK; b++)
                    s = run_once(rt, i, k, keys, n[order[b]], &in[order[b]], x[order[b]],
                                 &t[order[b]][r]);
            }
            for (int b = 0; b < BATCH; b++)
                inputs_free(&in[b]);
            if (s != COPROC_OK) {
                fprintf(stderr, "coproc-calibrate: --check: %s: %s\n", coproc_op_kind_name(k),
                        coproc_errmsg(rt));
                coproc_profile_free(before);
                failed = 1;
                break;
            }
            for (int b = 0; b < BATCH; b++) {
                int gi = g0 + b;
                int runs = observed(t[b], REPS);
                if (runs == 0)
                    continue; /* every run built a program: nothing to score */
                double pred = coproc_profile_predict(before, k, x[b]);
                double lo = t[b][0], hi = t[b][0];
                for (int r = 1; r < runs; r++) {
                    lo = fmin(lo, t[b][r]);
                    hi = fmax(hi, t[b][r]);
                }
                double med = coproc_check_quantile(t[b], runs, 0.5);
                if (points)
                    fprintf(points, "%s %zu %.9g %.9g %.9g %.9g %d\n", coproc_op_kind_name(k),
                            n[b], pred, med, lo, hi, gi >= WARM_GROUPS);
                if (gi >= WARM_GROUPS && pred >= 0 && med > 0) {
                    memcpy(scored_x[scored], x[b], sizeof scored_x[scored]);
                    scored_t[scored] = med;
                    err[scored++] = fabs(pred - med) / med;
                    all[nall++] = fabs(pred - med) / med;
                    tmin = fmin(tmin, med);
                    tmax = fmax(tmax, med);
                }
            }
            coproc_profile_free(before);
        }
        if (failed)
            break;
        if (points && print_model(rt, i, k, points) != 0) {
            fprintf(stderr, "coproc-calibrate: --check: %s: out of host memory\n",
                    coproc_op_kind_name(k));
            failed = 1;
            break;
        }
        coproc_model_stats ms = {.struct_size = sizeof ms};
        if (coproc_model_stats_get(rt, i, k, &ms) != COPROC_OK) {
            fprintf(stderr, "coproc-calibrate: --check: %s: %s\n", coproc_op_kind_name(k),
                    coproc_errmsg(rt));
            failed = 1;
            break;
        }
        double single_med = ms.median_rel_error, single_p90 = ms.p90_rel_error;
        uint64_t obs = ms.observations, refits = ms.refits;
        double med = coproc_check_quantile(err, scored, 0.5);
        double p90 = coproc_check_quantile(err, scored, 0.9);
        double floor_med = in_sample_error(k, scored_x, scored_t, scored);
        char range[32];
        snprintf(range, sizeof range, "%.2g-%.2g", tmin * 1e3, tmax * 1e3);
        fprintf(out, "%-10s %6llu %6llu %12s %7.1f%% %7.1f%% %7.1f%% %8.1f%% %8.1f%%\n",
                coproc_op_kind_name(k), (unsigned long long)obs, (unsigned long long)refits,
                scored ? range : "-", med * 100, p90 * 100, floor_med * 100, single_med * 100,
                single_p90 * 100);
        json_object_set_new(
            jops, coproc_op_kind_name(k),
            json_pack("{s:I, s:I, s:i, s:f, s:f, s:f, s:f, s:f, s:f, s:f}", "observations",
                      (json_int_t)obs, "refits", (json_int_t)refits, "sizes_scored", scored,
                      "min_seconds", scored ? tmin : 0.0, "max_seconds", scored ? tmax : 0.0,
                      "median_rel_error", med, "p90_rel_error", p90,
                      "in_sample_median_rel_error", floor_med,
                      "single_run_median_rel_error", single_med,
                      "single_run_p90_rel_error", single_p90));
    }
    free(a);
    free(keys);
    if (failed) {
        json_decref(jops);
        return NULL;
    }
    double med = coproc_check_quantile(all, nall, 0.5);
    double p90 = coproc_check_quantile(all, nall, 0.9);
    fprintf(out, "all operators: median error %.1f %%, p90 %.1f %%\n\n", med * 100, p90 * 100);
    return json_pack("{s:i, s:i, s:i, s:f, s:f, s:f, s:f, s:o}", "runs_per_size", REPS, "sizes",
                     GROUPS, "sizes_scored", GROUPS - WARM_GROUPS, "min_rows_log2", MIN_LOG2,
                     "max_rows_log2", MAX_LOG2, "median_rel_error", med, "p90_rel_error", p90,
                     "operators", jops);
}
