/* joins.c - coproc-bench --joins: a join on two key columns fused (the
 * generated kernel packs the columns into one key), against the same join on
 * one key column packed by hand, and against one operator at a time (see
 * joins.h). */
#include "joins.h"

#include "bench_util.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "coproc/query.h"

#define DIM_A 1000 /* values of the first key column */

enum { TWO_KEYS, ONE_KEY, OPERATORS, NWAYS };
static const char *const way_name[NWAYS] = {"fused, 2 key columns", "fused, 1 packed key",
                                             "operators, 2 key columns"};

typedef struct joins_data {
    coproc_runtime *rt;
    int dev;
    size_t n, nd;
    int32_t *fa, *fb, *fv, *fk; /* fact: the two keys, a value, the keys packed */
    int32_t *da, *db, *dv, *dk; /* dimension: the same */
    coproc_table *fact, *dim;
    coproc_column *cols[8];
} joins_data;

/* One run of the join (semi or inner) the way asked: its count and sum. */
static coproc_status run_way(joins_data *d, int way, int semi, int64_t *count, int64_t *sum)
{
    coproc_plan *p;
    coproc_status s = coproc_plan_create(d->rt, &p);
    if (s != COPROC_OK)
        return s;
    coproc_node *f = coproc_plan_scan(p, d->fact, "fact"), *dm = coproc_plan_scan(p, d->dim, "dim");
    coproc_join_kind kind = semi ? COPROC_JOIN_SEMI : COPROC_JOIN_INNER;
    const char *pk[] = {"fa", "fb"}, *bk[] = {"da", "db"};
    coproc_node *j = way == ONE_KEY ? coproc_plan_join(p, kind, f, "fk", dm, "dk")
                                    : coproc_plan_join_keys(p, kind, f, 2, pk, dm, bk);
    coproc_aggregate ag[] = {{COPROC_AGG_COUNT, NULL, "n"},
                             {COPROC_AGG_SUM, coproc_expr_column(p, semi ? "fv" : "dv"), "s"}};
    coproc_node *g = coproc_plan_group_by(p, j, 0, NULL, 2, ag);
    coproc_query_options o;
    coproc_query_options_init(&o);
    o.mode = way == OPERATORS ? COPROC_QUERY_OPERATORS : COPROC_QUERY_FUSED;
    o.device = d->dev;
    coproc_query_result r;
    s = coproc_query_run(p, g, &o, &r);
    if (s == COPROC_OK) {
        *count = *(const int64_t *)coproc_column_host_data(coproc_table_column(r.table, "n"));
        *sum = *(const int64_t *)coproc_column_host_data(coproc_table_column(r.table, "s"));
        if (way != OPERATORS && r.note[0]) {
            fprintf(stderr, "joins: %s fell back: %s\n", way_name[way], r.note);
            s = COPROC_UNSUPPORTED;
        }
        coproc_query_result_free(&r);
    }
    coproc_plan_free(p);
    return s;
}

static void data_free(joins_data *d)
{
    coproc_table_free(d->fact);
    coproc_table_free(d->dim);
    for (int i = 0; i < 8; i++)
        coproc_column_free(d->cols[i]);
    free(d->fa), free(d->fb), free(d->fv), free(d->fk);
    free(d->da), free(d->db), free(d->dv), free(d->dk);
}

/* The tables: a dimension keyed by (da, db) = (i % DIM_A, i / DIM_A), and a
 * fact table whose key pairs hit it about two times in three. */
static coproc_status data_init(joins_data *d)
{
    size_t n = d->n, nd = d->nd;
    int32_t nb = (int32_t)((nd + DIM_A - 1) / DIM_A), fb_range = nb + nb / 2 + 1;
    int32_t stride = fb_range; /* packed: a * stride + b, b below stride on both sides */
    d->fa = malloc(n * 4), d->fb = malloc(n * 4), d->fv = malloc(n * 4), d->fk = malloc(n * 4);
    d->da = malloc(nd * 4), d->db = malloc(nd * 4), d->dv = malloc(nd * 4), d->dk = malloc(nd * 4);
    if (!d->fa || !d->fb || !d->fv || !d->fk || !d->da || !d->db || !d->dv || !d->dk)
        return COPROC_HOST_OUT_OF_MEMORY;
    uint64_t seed = 23;
    for (size_t i = 0; i < nd; i++) {
        d->da[i] = (int32_t)(i % DIM_A);
        d->db[i] = (int32_t)(i / DIM_A);
        d->dv[i] = (int32_t)(i * 7 % 101);
        d->dk[i] = d->da[i] * stride + d->db[i];
    }
    for (size_t i = 0; i < n; i++) {
        uint64_t r = bench_mix(&seed);
        d->fa[i] = (int32_t)(r % DIM_A);
        d->fb[i] = (int32_t)((r >> 20) % (uint64_t)fb_range);
        d->fv[i] = (int32_t)((r >> 40) % 1000);
        d->fk[i] = d->fa[i] * stride + d->fb[i];
    }
    coproc_status s = coproc_table_create(d->rt, &d->fact);
    if (s == COPROC_OK)
        s = coproc_table_create(d->rt, &d->dim);
    const char *names[8] = {"fa", "fb", "fv", "fk", "da", "db", "dv", "dk"};
    int32_t *data[8] = {d->fa, d->fb, d->fv, d->fk, d->da, d->db, d->dv, d->dk};
    for (int c = 0; c < 8 && s == COPROC_OK; c++) {
        s = coproc_column_wrap(d->rt, COPROC_INT32, data[c], c < 4 ? n : nd, &d->cols[c]);
        if (s == COPROC_OK)
            s = coproc_table_add(c < 4 ? d->fact : d->dim, names[c], d->cols[c]);
    }
    return s;
}

/* The scalar reference: the dimension row of (a, b) is a + DIM_A * b. */
static void reference(const joins_data *d, int semi, int64_t *count, int64_t *sum)
{
    *count = *sum = 0;
    for (size_t i = 0; i < d->n; i++) {
        size_t row = (size_t)d->fa[i] + (size_t)DIM_A * (size_t)d->fb[i];
        if (row >= d->nd)
            continue;
        (*count)++;
        *sum += semi ? d->fv[i] : d->dv[row];
    }
}

int bench_joins(coproc_runtime *rt, int dev, size_t n, int reps, FILE *out, json_t *jarr)
{
    joins_data d = {.rt = rt, .dev = dev, .n = n, .nd = n / 8 ? n / 8 : 1};
    coproc_status s = data_init(&d);
    if (s != COPROC_OK) {
        fprintf(out, "joins: setup failed: %s\n", coproc_errmsg(rt));
        data_free(&d);
        return -1;
    }
    double *ratio = malloc(2 * (size_t)reps * sizeof *ratio);
    int bad = !ratio;
    for (int semi = 0; semi < 2 && !bad; semi++) {
        int64_t want_n, want_s;
        reference(&d, semi, &want_n, &want_s);
        double best[NWAYS] = {1e30, 1e30, 1e30};
        for (int r = 0; r <= reps && !bad; r++) { /* round 0 warms up */
            double t[NWAYS];
            for (int k = 0; k < NWAYS && !bad; k++) {
                int way = (k + r) % NWAYS; /* the order turns every round */
                int64_t cnt = 0, sum = 0;
                double t0 = bench_now_s();
                s = run_way(&d, way, semi, &cnt, &sum);
                t[way] = bench_now_s() - t0;
                if (s != COPROC_OK || cnt != want_n || sum != want_s) {
                    fprintf(out, "joins: %s %s: %s (count %lld sum %lld, expected %lld and %lld)\n",
                            semi ? "semi" : "inner", way_name[way],
                            s != COPROC_OK ? coproc_errmsg(rt) : "WRONG RESULT", (long long)cnt,
                            (long long)sum, (long long)want_n, (long long)want_s);
                    bad = 1;
                }
            }
            if (r == 0 || bad)
                continue;
            for (int w = 0; w < NWAYS; w++)
                best[w] = t[w] < best[w] ? t[w] : best[w];
            ratio[r - 1] = t[TWO_KEYS] / t[ONE_KEY];
            ratio[reps + r - 1] = t[OPERATORS] / t[TWO_KEYS];
        }
        if (bad)
            break;
        qsort(ratio, (size_t)reps, sizeof *ratio, bench_cmp_double);
        qsort(ratio + reps, (size_t)reps, sizeof *ratio, bench_cmp_double);
        double m1 = ratio[reps / 2], m2 = ratio[reps + reps / 2];
        fprintf(out, "%-12s %10zu %9.3f %9.3f %9.3f  %5.2fx [%.2f, %.2f]  %6.2fx [%.2f, %.2f]\n",
                semi ? "semi join" : "inner join", n, best[TWO_KEYS] * 1e3, best[ONE_KEY] * 1e3,
                best[OPERATORS] * 1e3, m1, ratio[0], ratio[reps - 1], m2, ratio[reps],
                ratio[2 * reps - 1]);
        json_t *j = json_object();
        json_object_set_new(j, "join", json_string(semi ? "semi" : "inner"));
        json_object_set_new(j, "rows", json_integer((json_int_t)n));
        json_object_set_new(j, "dimension_rows", json_integer((json_int_t)d.nd));
        json_object_set_new(j, "seconds_two_keys", json_real(best[TWO_KEYS]));
        json_object_set_new(j, "seconds_one_key", json_real(best[ONE_KEY]));
        json_object_set_new(j, "seconds_operators", json_real(best[OPERATORS]));
        json_object_set_new(j, "two_keys_vs_one_key", json_real(m1));
        json_object_set_new(j, "operators_vs_two_keys", json_real(m2));
        json_array_append_new(jarr, j);
    }
    free(ratio);
    data_free(&d);
    return bad ? -1 : 0;
}
