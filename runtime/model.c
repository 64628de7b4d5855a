/* model.c - learned cost functions: weighted least squares over a ring of
 * recent observations, kept non-negative and robust to timing spikes. See
 * model.h. Pure computation: no global state, no locking (the owner locks). */
#include "model.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define NVAR (1 + COPROC__MODEL_MAX_FEATURES) /* intercept + features */
#define RING COPROC__MODEL_RING
#define PIVOT_MIN 1e-12  /* on the equilibrated (unit-diagonal) system */
#define MAD_FLOOR 1e-3   /* relative residuals this close count as agreeing */
#define MAD_SIGMA 1.4826 /* MAD -> standard deviation for normal noise */
#define OUTLIER_SIGMAS 3.0

void coproc__model_init(coproc__model *m, int features)
{
    memset(m, 0, sizeof *m);
    if (features < 1)
        features = 1;
    if (features > COPROC__MODEL_MAX_FEATURES)
        features = COPROC__MODEL_MAX_FEATURES;
    m->features = features;
}

/* Ring slot of the i-th oldest observation; fits walk the ring oldest first
 * so a model reloaded from JSON sums in the same order and fits identically. */
static int ring_slot(const coproc__model *m, int i)
{
    return (m->ring_head - m->ring_len + i + 2 * RING) % RING;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* q-quantile of sorted a[0..n-1], interpolating linearly between order
 * statistics (so the median of an even count is the mean of the middle two). */
static double quantile_sorted(const double *a, int n, double q)
{
    double pos = q * (n - 1);
    int lo = (int)pos;
    if (lo >= n - 1)
        return a[n - 1];
    return a[lo] + (pos - lo) * (a[lo + 1] - a[lo]);
}

static double median_of(const double *v, int n)
{
    double s[RING];
    memcpy(s, v, (size_t)n * sizeof *s);
    qsort(s, (size_t)n, sizeof *s, cmp_double);
    return quantile_sorted(s, n, 0.5);
}

static double predict_with(const double *coef, int k, const double *x)
{
    double p = coef[0];
    for (int j = 0; j < k; j++)
        p += coef[1 + j] * x[j];
    return p;
}

/* Distinct feature vectors among the points idx[0..n-1], counting no further
 * than `need` (so the check stays O(n) however many points repeat). */
static int count_distinct(const coproc__model *m, const int *idx, int n, int need)
{
    int rep[NVAR], found = 0;
    for (int i = 0; i < n && found < need; i++) {
        int seen = 0;
        for (int r = 0; r < found && !seen; r++) {
            int same = 1;
            for (int j = 0; j < m->features; j++)
                same &= m->x[idx[i]][j] == m->x[rep[r]][j];
            seen = same;
        }
        if (!seen)
            rep[found++] = idx[i];
    }
    return found;
}

/*
 * Solve a u = b (n x n) by Gaussian elimination with partial pivoting. Returns
 * -1 on success, else the column whose pivot vanished: a variable the data
 * cannot tell apart from the others, which the caller then fixes at zero.
 */
static int solve(int n, double a[NVAR][NVAR], double b[NVAR], double u[NVAR])
{
    for (int c = 0; c < n; c++) {
        int p = c;
        for (int r = c + 1; r < n; r++)
            if (fabs(a[r][c]) > fabs(a[p][c]))
                p = r;
        if (!(fabs(a[p][c]) > PIVOT_MIN))
            return c;
        for (int j = 0; j < n; j++) {
            double t = a[c][j];
            a[c][j] = a[p][j];
            a[p][j] = t;
        }
        double t = b[c];
        b[c] = b[p];
        b[p] = t;
        for (int r = c + 1; r < n; r++) {
            double f = a[r][c] / a[c][c];
            for (int j = c; j < n; j++)
                a[r][j] -= f * a[c][j];
            b[r] -= f * b[c];
        }
    }
    for (int c = n - 1; c >= 0; c--) {
        double s = b[c];
        for (int j = c + 1; j < n; j++)
            s -= a[c][j] * u[j];
        u[c] = s / a[c][c];
    }
    return -1;
}

/*
 * Non-negative weighted least squares over the points idx[0..n-1]: minimise
 * sum ((y - c.x) / y)^2. Features are scaled by their maximum and times by
 * theirs, and the normal equations equilibrated to a unit diagonal, so sizes
 * from 1 to 2^30 and times from nanoseconds to minutes stay well conditioned.
 * While a coefficient comes out negative (or undetermined), the most negative
 * one is fixed at zero and the rest refitted. 0 on success with coef set.
 */
static int fit_points(const coproc__model *m, const int *idx, int n, double coef[NVAR])
{
    int k = m->features;
    double xs[COPROC__MODEL_MAX_FEATURES], ys = 0;
    for (int j = 0; j < k; j++) {
        xs[j] = 0;
        for (int i = 0; i < n; i++)
            xs[j] = fmax(xs[j], m->x[idx[i]][j]);
        if (xs[j] == 0)
            xs[j] = 1; /* an all-zero feature: its column is zero and gets dropped */
    }
    for (int i = 0; i < n; i++)
        ys = fmax(ys, m->y[idx[i]]);

    int active[NVAR];
    for (int v = 0; v <= k; v++)
        active[v] = 1;
    for (;;) {
        int var[NVAR], na = 0;
        for (int v = 0; v <= k; v++)
            if (active[v])
                var[na++] = v;
        if (na == 0)
            return -1;

        double a[NVAR][NVAR] = {{0}}, b[NVAR] = {0}, d[NVAR], u[NVAR];
        for (int i = 0; i < n; i++) {
            const double *x = m->x[idx[i]];
            double inv = ys / m->y[idx[i]]; /* row weight 1/y, y scaled to <= 1 */
            double row[NVAR];
            for (int p = 0; p < na; p++)
                row[p] = (var[p] == 0 ? 1.0 : x[var[p] - 1] / xs[var[p] - 1]) * inv;
            for (int p = 0; p < na; p++) {
                b[p] += row[p];
                for (int q = 0; q <= p; q++)
                    a[p][q] += row[p] * row[q];
            }
        }
        /* a variable with an all-zero column, or one the others already
         * explain, is undetermined: fix it at zero */
        int drop = -1;
        for (int p = 0; p < na && drop < 0; p++) {
            d[p] = sqrt(a[p][p]);
            if (!(d[p] > 0))
                drop = p;
        }
        if (drop < 0) {
            for (int p = 0; p < na; p++) {
                for (int q = 0; q <= p; q++)
                    a[q][p] = a[p][q] = a[p][q] / (d[p] * d[q]);
                b[p] /= d[p];
            }
            drop = solve(na, a, b, u);
        }
        if (drop < 0) {
            /* u and the coefficient share a sign (d > 0): drop the most negative */
            for (int p = 0; p < na; p++)
                if (u[p] < 0 && (drop < 0 || u[p] < u[drop]))
                    drop = p;
        }
        if (drop >= 0) {
            active[var[drop]] = 0;
            continue;
        }
        for (int v = 0; v <= COPROC__MODEL_MAX_FEATURES; v++)
            coef[v] = 0;
        for (int p = 0; p < na; p++) {
            int v = var[p];
            double w = u[p] / d[p] * ys;
            coef[v] = v == 0 ? w : w / xs[v - 1];
            if (!isfinite(coef[v]))
                return -1;
        }
        return 0;
    }
}

int coproc__model_fit(coproc__model *m)
{
    int k = m->features, n = 0;
    int idx[RING], kept[RING];
    for (int i = 0; i < m->ring_len; i++)
        idx[n++] = ring_slot(m, i);
    double coef[NVAR];
    if (count_distinct(m, idx, n, k + 1) < k + 1 || fit_points(m, idx, n, coef) != 0)
        return -1;

    /* Relative residuals; those beyond 3 scaled MADs of the median are timing
     * spikes (or drops), refitted without once. A floor on the MAD keeps
     * near-exact data from rejecting points over rounding noise. */
    double r[RING], dev[RING];
    for (int i = 0; i < n; i++)
        r[i] = (m->y[idx[i]] - predict_with(coef, k, m->x[idx[i]])) / m->y[idx[i]];
    double med = median_of(r, n);
    for (int i = 0; i < n; i++)
        dev[i] = fabs(r[i] - med);
    double limit = OUTLIER_SIGMAS * MAD_SIGMA * fmax(median_of(dev, n), MAD_FLOOR);
    int nk = 0;
    for (int i = 0; i < n; i++)
        if (dev[i] <= limit)
            kept[nk++] = idx[i];
    double refit[NVAR];
    const int *used = idx;
    if (nk < n && count_distinct(m, kept, nk, k + 1) == k + 1 &&
        fit_points(m, kept, nk, refit) == 0) {
        memcpy(coef, refit, sizeof coef);
        used = kept;
        n = nk;
    }

    memcpy(m->coef, coef, sizeof m->coef);
    for (int j = 0; j < k; j++) {
        m->lo[j] = INFINITY;
        m->hi[j] = 0;
        for (int i = 0; i < n; i++) {
            m->lo[j] = fmin(m->lo[j], m->x[used[i]][j]);
            m->hi[j] = fmax(m->hi[j], m->x[used[i]][j]);
        }
    }
    m->fitted = 1;
    m->refits++;
    m->since_refit = 0;
    return 0;
}

/*
 * An unfitted model fits on the very observation that gives it features + 1
 * distinct points, so one seeded by a short calibration sweep predicts at once;
 * after that it refits every COPROC__MODEL_REFIT_EVERY observations. Zero
 * seconds are ignored too (relative error is undefined there), as are
 * negative or non-finite features.
 */
void coproc__model_observe(coproc__model *m, const double *x, double seconds)
{
    if (!isfinite(seconds) || !(seconds > 0))
        return;
    for (int j = 0; j < m->features; j++)
        if (!isfinite(x[j]) || x[j] < 0)
            return;
    if (m->fitted) {
        m->err[m->err_head] = fabs(coproc__model_predict(m, x) - seconds) / seconds;
        m->err_head = (m->err_head + 1) % COPROC__MODEL_ERROR_RING;
        if (m->err_len < COPROC__MODEL_ERROR_RING)
            m->err_len++;
    }
    for (int j = 0; j < COPROC__MODEL_MAX_FEATURES; j++)
        m->x[m->ring_head][j] = j < m->features ? x[j] : 0;
    m->y[m->ring_head] = seconds;
    m->ring_head = (m->ring_head + 1) % RING;
    if (m->ring_len < RING)
        m->ring_len++;
    m->observations++;
    m->since_refit++;
    /* a failed fit keeps the old one (if any) and tries again a full period
     * later; an unfitted model tries on every observation regardless */
    if ((!m->fitted || m->since_refit >= COPROC__MODEL_REFIT_EVERY) && coproc__model_fit(m) != 0)
        m->since_refit = 0;
}

/* Never negative for valid x; NaN features give NaN rather than a bogus 0. */
double coproc__model_predict(const coproc__model *m, const double *x)
{
    if (!m->fitted)
        return -1;
    double p = predict_with(m->coef, m->features, x);
    return p < 0 ? 0 : p;
}

/* With no fit every x is outside the (empty) range: infinity. */
double coproc__model_extrapolation(const coproc__model *m, const double *x)
{
    if (!m->fitted)
        return INFINITY;
    double f = 1;
    for (int j = 0; j < m->features; j++) {
        double g = 1;
        if (isnan(x[j]))
            g = INFINITY;
        else if (x[j] > m->hi[j])
            g = m->hi[j] > 0 ? x[j] / m->hi[j] : INFINITY;
        else if (x[j] < m->lo[j])
            g = x[j] > 0 ? m->lo[j] / x[j] : INFINITY;
        f = fmax(f, g);
    }
    return f;
}

/* Quantiles interpolate between order statistics (see quantile_sorted). */
void coproc__model_error(const coproc__model *m, double *median, double *p90)
{
    double s[COPROC__MODEL_ERROR_RING];
    double md = -1, p = -1;
    if (m->err_len > 0) {
        memcpy(s, m->err, (size_t)m->err_len * sizeof *s);
        qsort(s, (size_t)m->err_len, sizeof *s, cmp_double);
        md = quantile_sorted(s, m->err_len, 0.5);
        p = quantile_sorted(s, m->err_len, 0.9);
    }
    if (median)
        *median = md;
    if (p90)
        *p90 = p;
}

static json_t *json_vector(const double *v, int n)
{
    json_t *a = json_array();
    for (int i = 0; a && i < n; i++)
        if (json_array_append_new(a, json_real(v[i])) != 0) {
            json_decref(a);
            a = NULL;
        }
    return a;
}

static json_int_t json_count(uint64_t v)
{
    return v > (uint64_t)INT64_MAX ? (json_int_t)INT64_MAX : (json_int_t)v;
}

/* "coef" is null while there is no fit. Points go oldest first. Doubles are
 * written with 17 digits (jansson's default), so they read back exactly.
 * json_object_set_new consumes its value even when it fails (or j is NULL),
 * so every set runs and only the result is checked. NULL on no memory. */
json_t *coproc__model_to_json(const coproc__model *m)
{
    int k = m->features, rc = 0;
    json_t *j = json_object();
    json_t *points = json_array();
    for (int i = 0; points && i < m->ring_len && rc == 0; i++) {
        int s = ring_slot(m, i);
        double p[NVAR];
        memcpy(p, m->x[s], (size_t)k * sizeof *p);
        p[k] = m->y[s];
        rc |= json_array_append_new(points, json_vector(p, k + 1));
    }
    rc |= json_object_set_new(j, "points", points);
    rc |= json_object_set_new(j, "features", json_integer(k));
    rc |= json_object_set_new(j, "coef", m->fitted ? json_vector(m->coef, k + 1) : json_null());
    rc |= json_object_set_new(j, "observations", json_integer(json_count(m->observations)));
    rc |= json_object_set_new(j, "refits", json_integer(json_count(m->refits)));
    rc |= json_object_set_new(j, "lo", json_vector(m->lo, k));
    rc |= json_object_set_new(j, "hi", json_vector(m->hi, k));
    if (rc != 0) {
        json_decref(j);
        j = NULL;
    }
    return j;
}

/* v as exactly n finite numbers, each >= min; 0 or -1. */
static int read_vector(const json_t *v, int n, double min, double *out)
{
    if (!json_is_array(v) || json_array_size(v) != (size_t)n)
        return -1;
    for (int i = 0; i < n; i++) {
        const json_t *e = json_array_get(v, (size_t)i);
        if (!json_is_number(e))
            return -1;
        out[i] = json_number_value(e);
        if (!isfinite(out[i]) || out[i] < min)
            return -1;
    }
    return 0;
}

static int read_count(const json_t *j, const char *key, uint64_t *out)
{
    const json_t *v = json_object_get(j, key);
    if (!json_is_integer(v) || json_integer_value(v) < 0)
        return -1;
    *out = (uint64_t)json_integer_value(v);
    return 0;
}

/* Fill the empty model m from j; -1 at the first malformed field. */
static int read_model(coproc__model *m, const json_t *j)
{
    int k = m->features;
    if (!json_is_object(j))
        return -1;
    const json_t *f = json_object_get(j, "features");
    if (!json_is_integer(f) || json_integer_value(f) != k)
        return -1;
    if (read_count(j, "observations", &m->observations) != 0 ||
        read_count(j, "refits", &m->refits) != 0)
        return -1;
    const json_t *coef = json_object_get(j, "coef");
    if (!json_is_null(coef) && read_vector(coef, k + 1, 0, m->coef) != 0)
        return -1;
    m->fitted = !json_is_null(coef);
    if (read_vector(json_object_get(j, "lo"), k, 0, m->lo) != 0 ||
        read_vector(json_object_get(j, "hi"), k, 0, m->hi) != 0)
        return -1;
    for (int i = 0; i < k; i++)
        if (m->lo[i] > m->hi[i])
            return -1;
    const json_t *points = json_object_get(j, "points");
    if (!json_is_array(points) || json_array_size(points) > RING)
        return -1;
    for (size_t i = 0; i < json_array_size(points); i++) {
        double p[NVAR];
        if (read_vector(json_array_get(points, i), k + 1, 0, p) != 0 || !(p[k] > 0))
            return -1;
        memcpy(m->x[i], p, (size_t)k * sizeof *p);
        m->y[i] = p[k];
        m->ring_len++;
    }
    m->ring_head = m->ring_len % RING;
    return 0;
}

/* The error ring and the refit phase are not saved: both start afresh. */
int coproc__model_from_json(coproc__model *m, int features, const json_t *j)
{
    coproc__model_init(m, features);
    if (read_model(m, j) == 0)
        return 0;
    coproc__model_init(m, features);
    return -1;
}
