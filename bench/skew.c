/* skew.c - coproc-bench --skew (skew.h). */
#include "skew.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"

#define SKEW_KEY 7
#define MAX_REPS 64

/* A result column's rows on the host (a copy when it lives on a device;
 * *copy then holds it, to free). */
static const uint32_t *rows_of(const coproc_column *c, uint32_t **copy)
{
    *copy = NULL;
    if (coproc_column_device(c) < 0)
        return coproc_column_host_data(c);
    size_t n = coproc_column_length(c);
    *copy = malloc((n ? n : 1) * sizeof **copy);
    if (*copy && coproc_column_download(c, *copy, n * sizeof **copy) != COPROC_OK) {
        free(*copy);
        *copy = NULL;
    }
    return *copy;
}

/* Whether the join of build[0..n) and probe[0..n) gave each build row
 * exactly once, beside a probe row of the same key. */
static int check(const coproc_join_result *jr, const int32_t *build, const int32_t *probe, size_t n)
{
    if (jr->count != n)
        return 0;
    uint32_t *cl, *cr;
    const uint32_t *l = rows_of(jr->left, &cl), *r = rows_of(jr->right, &cr);
    unsigned char *seen = calloc(n ? n : 1, 1);
    int ok = seen != NULL && (n == 0 || (l && r));
    for (size_t i = 0; ok && i < n; i++) {
        ok = l[i] < n && r[i] < n && !seen[l[i]] && build[l[i]] == probe[r[i]];
        if (ok)
            seen[l[i]] = 1;
    }
    free(seen);
    free(cl);
    free(cr);
    return ok;
}

/* One join on the host columns; its seconds, or -1 when it failed or was wrong. */
static double run(coproc_runtime *rt, const int32_t *build, const int32_t *probe, size_t n)
{
    coproc_column *L = NULL, *R = NULL;
    coproc_join_result jr = {0, NULL, NULL};
    double t = -1;
    if (coproc_column_wrap(rt, COPROC_INT32, (void *)build, n, &L) == COPROC_OK &&
        coproc_column_wrap(rt, COPROC_INT32, (void *)probe, n, &R) == COPROC_OK) {
        double t0 = bench_now_s();
        coproc_status s = coproc_hash_join(rt, L, R, &jr);
        t = bench_now_s() - t0;
        if (s != COPROC_OK) {
            fprintf(stderr, "coproc-bench --skew: %s: %s\n", coproc_status_name(s), coproc_errmsg(rt));
            t = -1;
        } else if (!check(&jr, build, probe, n)) {
            fprintf(stderr, "coproc-bench --skew: WRONG RESULT (%zu rows)\n", n);
            t = -1;
        }
    }
    coproc_join_result_free(&jr);
    coproc_column_free(L);
    coproc_column_free(R);
    return t;
}

int bench_skew(coproc_runtime *rt, size_t n, int reps, FILE *out, json_t *jarr)
{
    if (reps > MAX_REPS)
        reps = MAX_REPS;
    int32_t *uni = malloc((n ? n : 1) * sizeof *uni), *skew = malloc((n ? n : 1) * sizeof *skew),
            *probe = malloc((n ? n : 1) * sizeof *probe);
    if (!uni || !skew || !probe) {
        free(uni), free(skew), free(probe);
        return -1;
    }
    /* Keys 0..n-1 unskewed; skewed: SKEW_KEY in 9 of 10 rows, the row's
     * number in the others (multiples of 10, never SKEW_KEY). The probe: every
     * key 0..n-1 once, shuffled, so both give n pairs. */
    uint64_t seed = 42;
    for (size_t i = 0; i < n; i++) {
        uni[i] = (int32_t)i;
        skew[i] = i % 10 ? SKEW_KEY : (int32_t)i;
        probe[i] = (int32_t)i;
    }
    for (size_t i = n; i > 1; i--) {
        size_t j = (size_t)(bench_mix(&seed) % i);
        int32_t t = probe[i - 1];
        probe[i - 1] = probe[j];
        probe[j] = t;
    }
    int ok = run(rt, uni, probe, n) >= 0 && run(rt, skew, probe, n) >= 0; /* warm-up */
    double tu[MAX_REPS], ts[MAX_REPS], ratio[MAX_REPS];
    for (int r = 0; r < reps && ok; r++) {
        /* which goes first alternates: the noise falls on both alike */
        double a = r % 2 ? run(rt, skew, probe, n) : run(rt, uni, probe, n);
        double b = r % 2 ? run(rt, uni, probe, n) : run(rt, skew, probe, n);
        ok = a >= 0 && b >= 0;
        tu[r] = r % 2 ? b : a;
        ts[r] = r % 2 ? a : b;
        ratio[r] = ts[r] / tu[r];
    }
    if (ok) {
        qsort(tu, (size_t)reps, sizeof *tu, bench_cmp_double);
        qsort(ts, (size_t)reps, sizeof *ts, bench_cmp_double);
        qsort(ratio, (size_t)reps, sizeof *ratio, bench_cmp_double);
        double med = ratio[reps / 2];
        fprintf(out, "%-12s %10zu %11.2f %11.2f  %.2f (%.2f-%.2f)\n", "hash join", n, 1e3 * tu[0],
                1e3 * ts[0], med, ratio[0], ratio[reps - 1]);
        json_t *e = json_object();
        json_object_set_new(e, "rows", json_integer((json_int_t)n));
        json_object_set_new(e, "unskewed_best_s", json_real(tu[0]));
        json_object_set_new(e, "skewed_best_s", json_real(ts[0]));
        json_object_set_new(e, "ratio_median", json_real(med));
        json_object_set_new(e, "ratio_min", json_real(ratio[0]));
        json_object_set_new(e, "ratio_max", json_real(ratio[reps - 1]));
        json_array_append_new(jarr, e);
    }
    free(uni);
    free(skew);
    free(probe);
    return ok ? 0 : -1;
}
