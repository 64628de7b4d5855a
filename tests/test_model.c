/* test_model.c - the learned cost model on synthetic timings: coefficient
 * recovery, noise, spikes, refit cadence, non-negativity, extrapolation, error
 * statistics and the JSON round trip. Needs no device and opens no runtime. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cost/model.h"
#include "testlib.h"

static double uniform(test_rng *r)
{
    return (double)(test_rand(r) >> 11) * 0x1p-53;
}

/* Normal with mean 0 and standard deviation 1 (Box-Muller). */
static double gaussian(test_rng *r)
{
    double u = 1.0 - uniform(r), v = uniform(r);
    return sqrt(-2.0 * log(u)) * cos(2.0 * M_PI * v);
}

static double t_linear(double n)
{
    return 5e-6 + n / 2e9;
}

static double t_nlogn(double n)
{
    return 1e-5 + 3e-9 * n + 2e-10 * n * log2(n);
}

/* Features for a one-feature (n) or two-feature (n, n log2 n) model. */
static void features_of(int k, double n, double *x)
{
    x[0] = n;
    if (k > 1)
        x[1] = n * log2(n);
}

static void assert_near(double got, double want, double rel)
{
    if (!(fabs(got - want) <= rel * fabs(want)))
        fail_msg("got %.9g, want %.9g (within %g%%)", got, want, rel * 100);
}

/* Observe sizes 2^lo .. 2^hi at `per_octave` points each, timed by f with
 * multiplicative gaussian noise of relative size `noise`. */
static void feed(coproc__model *m, double (*f)(double), int lo, int hi, int per_octave,
                 double noise, test_rng *r)
{
    for (int e = lo; e <= hi; e++)
        for (int s = 0; s < per_octave; s++) {
            double n = ldexp(1.0 + (double)s / per_octave, e), x[2];
            features_of(m->features, n, x);
            coproc__model_observe(m, x, f(n) * (1.0 + noise * gaussian(r)));
        }
}

static void test_recovers_linear(void **state)
{
    coproc__model m;
    coproc__model_init(&m, 1);
    test_rng r = {1};
    feed(&m, t_linear, 0, 30, 4, 0, &r);
    assert_int_equal(coproc__model_fit(&m), 0);
    assert_near(m.coef[0], 5e-6, 0.01);
    assert_near(m.coef[1], 1 / 2e9, 0.01);
    double x = 1e6;
    assert_near(coproc__model_predict(&m, &x), t_linear(1e6), 1e-6);
}

static void test_recovers_nlogn(void **state)
{
    coproc__model m;
    coproc__model_init(&m, 2);
    test_rng r = {2};
    feed(&m, t_nlogn, 0, 30, 6, 0, &r);
    assert_int_equal(coproc__model_fit(&m), 0);
    assert_near(m.coef[0], 1e-5, 0.01);
    assert_near(m.coef[1], 3e-9, 0.01);
    assert_near(m.coef[2], 2e-10, 0.01);
}

/* 5 % noise: the fit still predicts new sizes to well within 10 %, measured
 * both by the model's own error ring and against the noiseless truth. */
static void test_noise(void **state)
{
    coproc__model m;
    coproc__model_init(&m, 2);
    test_rng r = {3};
    feed(&m, t_nlogn, 4, 30, 8, 0.05, &r);
    assert_int_equal(coproc__model_fit(&m), 0);
    double worst = 0;
    for (int i = 0; i < 100; i++) {
        double n = ldexp(1.0 + uniform(&r), 5 + (int)test_rand_below(&r, 25)), x[2];
        features_of(2, n, x);
        worst = fmax(worst, fabs(coproc__model_predict(&m, x) / t_nlogn(n) - 1));
        coproc__model_observe(&m, x, t_nlogn(n) * (1.0 + 0.05 * gaussian(&r)));
    }
    double median, p90;
    coproc__model_error(&m, &median, &p90);
    print_message("noise 5%%: model error median %.4f p90 %.4f, worst vs truth %.4f\n",
                  median, p90, worst);
    assert_true(median <= 0.10);
    assert_true(worst <= 0.05);
}

/* A few 100x timing spikes (StarPU's polluted history) barely move the fit.
 * Relative-error weights already shrink a slow spike's pull by its 100x. */
static void test_spikes(void **state)
{
    coproc__model clean, spiky;
    coproc__model_init(&clean, 1);
    coproc__model_init(&spiky, 1);
    test_rng r1 = {4}, r2 = {4};
    feed(&clean, t_linear, 0, 30, 6, 0.02, &r1);
    feed(&spiky, t_linear, 0, 30, 6, 0.02, &r2);
    double sizes[] = {1, 1000, 4096, 1e6, 3e8};
    for (int i = 0; i < 5; i++)
        coproc__model_observe(&spiky, &sizes[i], 100 * t_linear(sizes[i]));
    assert_int_equal(coproc__model_fit(&clean), 0);
    assert_int_equal(coproc__model_fit(&spiky), 0);
    for (double n = 1; n <= 0x1p30; n *= 8)
        assert_near(coproc__model_predict(&spiky, &n), coproc__model_predict(&clean, &n), 0.01);
}

/* A measurement 100x too fast weighs 10^4 times more under 1/y^2 weights;
 * outlier rejection must still keep it from dragging the fit. */
static void test_fast_spike(void **state)
{
    coproc__model clean, spiky;
    coproc__model_init(&clean, 1);
    coproc__model_init(&spiky, 1);
    test_rng r1 = {5}, r2 = {5};
    feed(&clean, t_linear, 0, 30, 6, 0.02, &r1);
    feed(&spiky, t_linear, 0, 30, 6, 0.02, &r2);
    double n0 = 1e6;
    coproc__model_observe(&spiky, &n0, t_linear(n0) / 100);
    assert_int_equal(coproc__model_fit(&clean), 0);
    assert_int_equal(coproc__model_fit(&spiky), 0);
    for (double n = 1; n <= 0x1p30; n *= 8)
        assert_near(coproc__model_predict(&spiky, &n), coproc__model_predict(&clean, &n), 0.01);
}

static void test_refit_cadence(void **state)
{
    coproc__model m;
    coproc__model_init(&m, 1);
    double x = 100;
    coproc__model_observe(&m, &x, t_linear(x));
    coproc__model_observe(&m, &x, t_linear(x)); /* the same point: still one distinct */
    assert_false(m.fitted);
    assert_int_equal(m.refits, 0);
    assert_true(coproc__model_predict(&m, &x) < 0);
    x = 200;
    coproc__model_observe(&m, &x, t_linear(x)); /* the second distinct point fits at once */
    assert_true(m.fitted);
    assert_int_equal(m.refits, 1);
    assert_near(coproc__model_predict(&m, &x), t_linear(x), 1e-9);
    for (int i = 1; i <= 350; i++) {
        x = 100 + i;
        coproc__model_observe(&m, &x, t_linear(x));
        assert_int_equal(m.refits, 1 + i / COPROC__MODEL_REFIT_EVERY);
        assert_int_equal(m.since_refit, i % COPROC__MODEL_REFIT_EVERY);
    }
    assert_int_equal(m.observations, 353);
    assert_int_equal(m.ring_len, COPROC__MODEL_RING);
}

/* Three features need four distinct points; a two-point seed is not enough. */
static void test_first_fit_needs_k_plus_1(void **state)
{
    coproc__model m;
    coproc__model_init(&m, 3);
    for (int i = 1; i <= 4; i++) {
        assert_false(m.fitted);
        double x[3] = {i, i * i, 1.0 / i};
        coproc__model_observe(&m, x, 1e-3 * i);
    }
    assert_true(m.fitted);
    assert_int_equal(m.refits, 1);
}

static void test_non_negative(void **state)
{
    coproc__model m;
    coproc__model_init(&m, 1);
    /* constant time: the slope is (numerically) nothing */
    for (double n = 1; n <= 0x1p30; n *= 2)
        coproc__model_observe(&m, &n, 1e-3);
    assert_int_equal(coproc__model_fit(&m), 0);
    assert_near(m.coef[0], 1e-3, 1e-9);
    assert_true(m.coef[1] >= 0 && m.coef[1] * 0x1p30 <= 1e-9 * m.coef[0]);
    /* time falling with size: the slope would be negative, so it is exactly 0 */
    coproc__model_init(&m, 1);
    for (double n = 1; n <= 0x1p30; n *= 2)
        coproc__model_observe(&m, &n, 1e-3 - 1e-13 * n);
    assert_int_equal(coproc__model_fit(&m), 0);
    assert_true(m.coef[1] == 0);
    assert_true(m.coef[0] > 1e-3 - 1e-13 * 0x1p30 && m.coef[0] < 1e-3);
    /* t = 2e-9 n - 1e-6 over n >= 1024: the intercept would be negative */
    coproc__model_init(&m, 1);
    for (double n = 1024; n <= 0x1p30; n *= 2)
        coproc__model_observe(&m, &n, 2e-9 * n - 1e-6);
    assert_int_equal(coproc__model_fit(&m), 0);
    assert_true(m.coef[0] == 0);
    assert_true(m.coef[1] > 0);
    for (double n = 1; n <= 0x1p30; n *= 2)
        assert_true(coproc__model_predict(&m, &n) >= 0);
    /* two features, true n log n coefficient negative: it is dropped */
    coproc__model_init(&m, 2);
    for (double n = 16; n <= 0x1p30; n *= 2) {
        double x[2] = {n, n * log2(n)};
        coproc__model_observe(&m, x, 1e-5 + 1e-8 * n - 1e-11 * n * log2(n));
    }
    assert_int_equal(coproc__model_fit(&m), 0);
    assert_true(m.coef[2] == 0);
    assert_true(m.coef[0] >= 0 && m.coef[1] > 0);
}

/* A feature that is constant (the intercept already explains it) or always
 * zero cannot be told apart: it is fixed at zero, the rest still fit. */
static void test_undetermined_feature(void **state)
{
    coproc__model m;
    coproc__model_init(&m, 3);
    for (double n = 1; n <= 0x1p30; n *= 2) {
        double x[3] = {n, 16, 0};
        coproc__model_observe(&m, x, t_linear(n));
    }
    assert_int_equal(coproc__model_fit(&m), 0);
    assert_true(m.coef[2] == 0 && m.coef[3] == 0);
    assert_near(m.coef[0], 5e-6, 1e-6);
    assert_near(m.coef[1], 1 / 2e9, 1e-6);
}

static void test_too_few_points(void **state)
{
    coproc__model m;
    coproc__model_init(&m, 1);
    assert_int_equal(coproc__model_fit(&m), -1);
    double x = 10;
    coproc__model_observe(&m, &x, 1e-3);
    assert_int_equal(coproc__model_fit(&m), -1);
    assert_false(m.fitted);
    coproc__model_init(&m, 2);
    for (int i = 0; i < 10; i++) {
        double x2[2] = {i % 2 ? 10 : 20, i % 2 ? 33 : 86}; /* two distinct points only */
        coproc__model_observe(&m, x2, 1e-3);
    }
    assert_int_equal(coproc__model_fit(&m), -1);
    assert_false(m.fitted);
    /* invalid observations are ignored */
    coproc__model_init(&m, 1);
    double bad[] = {NAN, -1, INFINITY};
    for (int i = 0; i < 3; i++) {
        coproc__model_observe(&m, &bad[i], 1e-3);
        coproc__model_observe(&m, &x, bad[i]);
    }
    coproc__model_observe(&m, &x, 0);
    assert_int_equal(m.observations, 0);
    /* a fitted model whose ring fills with one point keeps its old fit */
    double a = 1000, b = 2000;
    coproc__model_observe(&m, &a, t_linear(a));
    coproc__model_observe(&m, &b, t_linear(b));
    assert_int_equal(m.refits, 1);
    for (int i = 0; i < COPROC__MODEL_RING; i++)
        coproc__model_observe(&m, &b, 1.0); /* pushes a out of the ring */
    double coef[2] = {m.coef[0], m.coef[1]};
    uint64_t refits = m.refits;
    for (int i = 0; i < 3 * COPROC__MODEL_RING; i++)
        coproc__model_observe(&m, &b, 1.0);
    assert_int_equal(coproc__model_fit(&m), -1);
    assert_true(m.fitted);
    assert_int_equal(m.refits, refits);
    assert_true(m.coef[0] == coef[0] && m.coef[1] == coef[1]);
}

static void test_extrapolation(void **state)
{
    coproc__model m;
    coproc__model_init(&m, 2);
    double x[2] = {1, 1};
    assert_true(isinf(coproc__model_extrapolation(&m, x)));
    for (double n = 1024; n <= 0x1p20; n *= 2) {
        double f[2] = {n, 3 * n};
        coproc__model_observe(&m, f, t_linear(n));
    }
    assert_true(m.fitted);
    assert_int_equal(coproc__model_fit(&m), 0); /* features n and 3n: collinear */
    assert_true(m.lo[0] == 1024 && m.hi[0] == 0x1p20);
    double inside[2] = {5000, 15000}, above[2] = {0x1p22, 3 * 0x1p20}, below[2] = {512, 3072};
    double both[2] = {0x1p21, 3 * 0x1p23}, zero[2] = {0, 3072};
    assert_true(coproc__model_extrapolation(&m, inside) == 1);
    assert_true(coproc__model_extrapolation(&m, above) == 4);
    assert_true(coproc__model_extrapolation(&m, below) == 2);
    assert_true(coproc__model_extrapolation(&m, both) == 8); /* max over features */
    assert_true(isinf(coproc__model_extrapolation(&m, zero)));
}

/* Relative errors |pred - y| / y = e for y = 1 / (1 + e) under a fit of 1. */
static void test_error_stats(void **state)
{
    coproc__model m;
    coproc__model_init(&m, 1);
    double median, p90, x = 0;
    coproc__model_error(&m, &median, &p90);
    assert_true(median == -1 && p90 == -1);
    m.fitted = 1; /* a fit of exactly 1 second; all-x=0 data can never refit it */
    m.coef[0] = 1;
    for (int i = 1; i <= 10; i++)
        coproc__model_observe(&m, &x, 1 / (1 + i / 100.0));
    coproc__model_error(&m, &median, &p90);
    assert_near(median, 0.055, 1e-9);
    assert_near(p90, 0.091, 1e-9); /* 0.09 + 0.1 * (0.10 - 0.09) */
    /* 50 large errors, then 100 small ones push them out of the ring */
    coproc__model_init(&m, 1);
    m.fitted = 1;
    m.coef[0] = 1;
    for (int i = 0; i < 50; i++)
        coproc__model_observe(&m, &x, 1 / 1.5);
    for (int i = 100; i >= 1; i--)
        coproc__model_observe(&m, &x, 1 / (1 + i / 1000.0));
    coproc__model_error(&m, &median, &p90);
    assert_near(median, 0.0505, 1e-9);
    assert_near(p90, 0.0901, 1e-9);
    assert_int_equal(m.err_len, COPROC__MODEL_ERROR_RING);
    assert_true(m.coef[0] == 1 && m.refits == 0);
}

static void assert_same_model(const coproc__model *a, const coproc__model *b)
{
    assert_int_equal(a->features, b->features);
    assert_int_equal(a->fitted, b->fitted);
    assert_int_equal(a->observations, b->observations);
    assert_int_equal(a->refits, b->refits);
    assert_int_equal(a->ring_len, b->ring_len);
    for (int v = 0; v <= a->features; v++)
        assert_true(a->coef[v] == b->coef[v]);
    for (int j = 0; j < a->features; j++)
        assert_true(a->lo[j] == b->lo[j] && a->hi[j] == b->hi[j]);
    assert_true(a->knot == b->knot);
    if (a->knot > 0)
        assert_true(a->coef[a->features + 1] == b->coef[b->features + 1]);
    for (int i = 0; i < a->ring_len; i++) {
        int sa = (a->ring_head - a->ring_len + i + 2 * COPROC__MODEL_RING) % COPROC__MODEL_RING;
        int sb = (b->ring_head - b->ring_len + i + 2 * COPROC__MODEL_RING) % COPROC__MODEL_RING;
        assert_true(a->y[sa] == b->y[sb]);
        for (int j = 0; j < a->features; j++)
            assert_true(a->x[sa][j] == b->x[sb][j]);
    }
}

/* Through text, so the doubles must survive printing and parsing. */
static int round_trip(const coproc__model *m, coproc__model *out)
{
    json_t *j = coproc__model_to_json(m);
    assert_non_null(j);
    char *text = json_dumps(j, JSON_COMPACT);
    json_decref(j);
    assert_non_null(text);
    json_t *back = json_loads(text, 0, NULL);
    free(text);
    assert_non_null(back);
    int rc = coproc__model_from_json(out, m->features, back);
    json_decref(back);
    return rc;
}

static void test_json_round_trip(void **state)
{
    coproc__model m, back;
    coproc__model_init(&m, 2);
    assert_int_equal(round_trip(&m, &back), 0); /* empty: coef null */
    assert_same_model(&m, &back);
    test_rng r = {6};
    feed(&m, t_nlogn, 4, 30, 12, 0.05, &r); /* 324 observations: the ring has wrapped */
    assert_true(m.observations > COPROC__MODEL_RING && m.refits > 1);
    assert_int_equal(round_trip(&m, &back), 0);
    assert_same_model(&m, &back);
    /* both refit to the same bits */
    assert_int_equal(coproc__model_fit(&m), 0);
    assert_int_equal(coproc__model_fit(&back), 0);
    assert_same_model(&m, &back);
    /* and keep behaving the same */
    for (int i = 0; i < 150; i++) {
        double n = ldexp(1.0 + uniform(&r), 10), x[2], t = t_nlogn(n) * (1 + 0.05 * gaussian(&r));
        features_of(2, n, x);
        coproc__model_observe(&m, x, t);
        coproc__model_observe(&back, x, t);
    }
    assert_same_model(&m, &back);
}

/* Run times skewed as on a busy CPU device (log-normal, sigma 0.4: a fifth of
 * the runs 1.4x the median or slower): the model predicts the median run, not
 * the fastest (least squares of relative error would land near 0.79x). */
static void test_typical_run(void **state)
{
    coproc__model m;
    coproc__model_init(&m, 1);
    test_rng r = {9};
    for (int i = 0; i < 250; i++) {
        double n = exp2(10 + 20 * uniform(&r));
        coproc__model_observe(&m, &n, t_linear(n) * exp(0.4 * gaussian(&r)));
    }
    assert_int_equal(coproc__model_fit(&m), 0);
    for (double n = 0x1p10; n <= 0x1p30; n *= 4) {
        double p = coproc__model_predict(&m, &n) / t_linear(n);
        print_message("typical run: n %.3g predicted / median %.3f\n", n, p);
        assert_true(p > 0.85 && p < 1.15);
    }
}

/* A memory-bound operator on a CPU device: 30 us + 0.1 ns a byte while the data
 * fit in a 16 MB cache, 0.3 ns a byte beyond. */
static double t_bent(double b)
{
    return 30e-6 + 1e-10 * b + (b > 16e6 ? 2e-10 * (b - 16e6) : 0);
}

/* A bend is found (knot near 16 MB) and predicts sizes on both sides within a
 * few percent under 5 % noise, where the straight line is off by far more;
 * straight data stay straight; the bend survives JSON. */
static void test_bend(void **state)
{
    coproc__model m, line;
    coproc__model_init(&m, 1);
    coproc__model_init(&line, 1);
    test_rng r = {8};
    for (int i = 0; i < 200; i++) {
        double b = exp2(19 + 8 * uniform(&r)); /* 0.5 MB .. 128 MB */
        double t = t_bent(b) * (1 + 0.05 * gaussian(&r));
        coproc__model_observe(&m, &b, t);
        coproc__model_observe(&line, &b, t_linear(b) * (1 + 0.05 * gaussian(&r)));
    }
    assert_int_equal(coproc__model_fit(&m), 0);
    assert_int_equal(coproc__model_fit(&line), 0);
    print_message("bend: knot %.3g (true 1.6e7), coef %.3g %.3g %.3g\n", m.knot, m.coef[0],
                  m.coef[1], m.coef[2]);
    assert_true(m.knot > 8e6 && m.knot < 32e6);
    assert_true(line.knot == 0);
    assert_near(line.coef[1], 1 / 2e9, 0.05);
    double worst = 0;
    for (double b = 0x1p19; b <= 0x1p27; b *= 1.1)
        worst = fmax(worst, fabs(coproc__model_predict(&m, &b) / t_bent(b) - 1));
    print_message("bend: worst error against the truth %.4f\n", worst);
    assert_true(worst < 0.08);
    /* the JSON round trip keeps the bend; a model saved before bends existed
     * (no "knot", features + 1 coefficients) reads as straight */
    coproc__model back;
    assert_int_equal(round_trip(&m, &back), 0);
    assert_same_model(&m, &back);
    json_t *j = coproc__model_to_json(&line);
    json_object_del(j, "knot");
    assert_int_equal(coproc__model_from_json(&back, 1, j), 0);
    assert_true(back.knot == 0 && back.fitted && back.coef[1] == line.coef[1]);
    /* a knot with a coefficient missing, or a negative knot, is refused */
    json_object_set_new(j, "knot", json_real(1e6));
    assert_int_equal(coproc__model_from_json(&back, 1, j), -1);
    json_object_set_new(j, "knot", json_real(-1));
    assert_int_equal(coproc__model_from_json(&back, 1, j), -1);
    json_decref(j);
}

/* Each case edits a valid model's JSON; all must be refused, leaving an
 * empty model, without crashing. */
static void test_json_malformed(void **state)
{
    coproc__model m;
    coproc__model_init(&m, 2);
    test_rng r = {7};
    feed(&m, t_nlogn, 4, 20, 2, 0.05, &r);
    json_t *good = coproc__model_to_json(&m);
    assert_non_null(good);
    coproc__model back;
    assert_int_equal(coproc__model_from_json(&back, 2, good), 0);

    static const struct {
        const char *key; /* replaced by value (NULL: removed) */
        const char *value;
    } cases[] = {
        {"features", NULL}, {"coef", NULL}, {"observations", NULL}, {"refits", NULL},
        {"lo", NULL}, {"hi", NULL}, {"points", NULL},
        {"features", "\"2\""}, {"features", "3"}, {"features", "2.0"},
        {"coef", "[1e-5, 3e-9]"}, {"coef", "[1e-5, 3e-9, 2e-10, 1]"},
        {"coef", "[1e-5, \"3e-9\", 2e-10]"}, {"coef", "[1e-5, -3e-9, 2e-10]"},
        {"coef", "{}"}, {"coef", "1"}, {"coef", "[1e-5, null, 2e-10]"},
        {"observations", "-1"}, {"observations", "\"7\""}, {"observations", "1.5"},
        {"refits", "true"}, {"refits", "null"},
        {"lo", "[1]"}, {"lo", "[1, \"2\"]"}, {"lo", "[1e30, 1e30]"}, {"hi", "[]"},
        {"hi", "[1, 2, 3]"}, {"lo", "[-1, 0]"},
        {"points", "{}"}, {"points", "[[1, 2]]"}, {"points", "[[1, 2, 3, 4]]"},
        {"points", "[[1, 2, \"3\"]]"}, {"points", "[[1, 2, 0]]"}, {"points", "[[1, 2, -1e-3]]"},
        {"points", "[[-1, 2, 1e-3]]"}, {"points", "[1, 2, 3]"}, {"points", "[[1, 2, [3]]]"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        json_t *j = json_deep_copy(good);
        if (cases[i].value) {
            json_t *v = json_loads(cases[i].value, JSON_DECODE_ANY, NULL);
            assert_non_null(v);
            json_object_set_new(j, cases[i].key, v);
        } else {
            json_object_del(j, cases[i].key);
        }
        assert_int_equal(coproc__model_from_json(&back, 2, good), 0);
        if (coproc__model_from_json(&back, 2, j) != -1)
            fail_msg("accepted %s = %s", cases[i].key, cases[i].value ? cases[i].value : "(none)");
        assert_false(back.fitted);
        assert_int_equal(back.features, 2);
        assert_int_equal(back.ring_len, 0);
        assert_int_equal(back.observations, 0);
        json_decref(j);
    }

    /* too many points */
    json_t *j = json_deep_copy(good);
    json_t *points = json_array();
    for (int i = 0; i <= COPROC__MODEL_RING; i++)
        json_array_append_new(points, json_pack("[f, f, f]", 1.0 + i, 2.0, 1e-3));
    json_object_set_new(j, "points", points);
    assert_int_equal(coproc__model_from_json(&back, 2, j), -1);
    json_decref(j);

    /* a model of another shape, not an object, no JSON at all */
    assert_int_equal(coproc__model_from_json(&back, 1, good), -1);
    assert_int_equal(coproc__model_from_json(&back, 3, good), -1);
    json_t *arr = json_array();
    assert_int_equal(coproc__model_from_json(&back, 2, arr), -1);
    json_decref(arr);
    assert_int_equal(coproc__model_from_json(&back, 2, NULL), -1);
    /* NaN, infinities and overflowing numbers never reach a json_t: jansson
     * refuses them at parse time, and NULL is refused above */
    assert_null(json_loads("{\"coef\": [NaN, 1, 2]}", 0, NULL));
    assert_null(json_loads("{\"coef\": [1e999, 1, 2]}", 0, NULL));
    json_decref(good);
}

static double t_linear_slow(double n)
{
    return 1.5 * t_linear(n);
}

/* The device turns 1.5x slower for good: within SHIFT_WINDOW (32) new
 * observations the model predicts the new level across the sizes it knows,
 * without waiting for the next regular refit; noise alone (5 %, symmetric)
 * never looks like a shift - the refits keep their cadence. */
static void test_follows_shift(void **state)
{
    (void)state;
    coproc__model m, steady;
    test_rng r = {7}, r2 = {7};
    coproc__model_init(&m, 1);
    coproc__model_init(&steady, 1);
    feed(&m, t_linear, 10, 29, 10, 0.05, &r); /* 200 observations */
    feed(&steady, t_linear, 10, 29, 10, 0.05, &r2);
    assert_int_equal(coproc__model_fit(&m), 0); /* the next regular refit is 100 away */
    assert_int_equal(coproc__model_fit(&steady), 0);
    uint64_t before = m.refits;
    assert_int_equal(steady.refits, before);
    feed(&m, t_linear_slow, 12, 27, 2, 0.05, &r); /* 32 observations, 1.5x slower */
    assert_int_equal(m.refits, before + 1);
    for (double n = 0x1p11; n <= 0x1p29; n *= 4)
        assert_near(coproc__model_predict(&m, &n), t_linear_slow(n), 0.06);
    feed(&steady, t_linear, 12, 27, 2, 0.05, &r2);
    assert_int_equal(steady.refits, before);
}

/* The latest observation reads back as it went in, after the ring wraps too;
 * none before the first, and an ignored one does not count. */
static void test_last_observation(void **state)
{
    (void)state;
    coproc__model m;
    coproc__model_init(&m, 2);
    double x[2], t;
    assert_int_equal(coproc__model_last(&m, x, &t), -1);
    for (int i = 1; i <= COPROC__MODEL_RING + 7; i++) {
        double xi[2] = {1000.0 * i, 3.0 * i};
        coproc__model_observe(&m, xi, 1e-3 * i);
        assert_int_equal(coproc__model_last(&m, x, &t), 0);
        assert_true(x[0] == xi[0] && x[1] == xi[1] && t == 1e-3 * i);
    }
    double bad[2] = {NAN, 1};
    coproc__model_observe(&m, bad, 5.0);
    assert_int_equal(coproc__model_last(&m, x, &t), 0);
    assert_true(t == 1e-3 * (COPROC__MODEL_RING + 7));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_recovers_linear),
        cmocka_unit_test(test_recovers_nlogn),
        cmocka_unit_test(test_noise),
        cmocka_unit_test(test_spikes),
        cmocka_unit_test(test_fast_spike),
        cmocka_unit_test(test_refit_cadence),
        cmocka_unit_test(test_first_fit_needs_k_plus_1),
        cmocka_unit_test(test_non_negative),
        cmocka_unit_test(test_undetermined_feature),
        cmocka_unit_test(test_too_few_points),
        cmocka_unit_test(test_extrapolation),
        cmocka_unit_test(test_error_stats),
        cmocka_unit_test(test_last_observation),
        cmocka_unit_test(test_follows_shift),
        cmocka_unit_test(test_json_round_trip),
        cmocka_unit_test(test_json_malformed),
        cmocka_unit_test(test_bend),
        cmocka_unit_test(test_typical_run),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
