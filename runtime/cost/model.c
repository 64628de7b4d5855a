/* model.c - learned cost functions: least absolute relative error (the median
 * run) over a ring of recent observations, kept non-negative, robust to timing
 * spikes, bent once where the data bend. See model.h. Pure computation: no global state, no locking (the owner locks). */
#include "cost/model.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define NVAR (1 + COPROC__MODEL_MAX_FEATURES) /* intercept + features */
#define RING COPROC__MODEL_RING
#define PIVOT_MIN 1e-12  /* on the equilibrated (unit-diagonal) system */
#define MAD_FLOOR 1e-3   /* relative residuals this close count as agreeing */
#define MAD_SIGMA 1.4826 /* MAD -> standard deviation for normal noise */
#define OUTLIER_SIGMAS 3.0
#define SHIFT_WINDOW 32    /* observations since the last fit that can show a shift */
#define SHIFT_RATIO 0.10   /* their median off the fit by more than this */
#define SHIFT_SIDE 0.75    /* with at least this share of them on that side */

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

/* The hinge column of a model bent at knot: how far x1 lies beyond it. */
static double hinge(double knot, const double *x)
{
    return knot > 0 && x[0] > knot ? x[0] - knot : 0;
}

static double predict_with(const double *coef, int k, double knot, const double *x)
{
    double p = coef[0];
    for (int j = 0; j < k; j++)
        p += coef[1 + j] * x[j];
    if (knot > 0)
        p += coef[1 + k] * hinge(knot, x);
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
 * sum w[i] ((y - c.x) / ys)^2 with every c >= 0, ys the largest time (the
 * weights are for times scaled by it; fit_median chooses them). Features are
 * scaled by their maximum, and each system equilibrated to a unit diagonal, so
 * sizes from 1 to 2^30 and times from nanoseconds to minutes stay well
 * conditioned. With at most four variables the exact answer is cheap:
 * every subset of the variables is fitted freely, and of the subsets whose
 * coefficients all come out >= 0 the one with the least error wins (the
 * smaller subset on a tie). A variable that is undetermined (an all-zero
 * column, or one the others already explain) makes its subsets singular, so
 * it is fixed at zero. 0 on success with coef set.
 */
static int fit_points(const coproc__model *m, const int *idx, int n, double knot,
                      const double *w, double coef[NVAR])
{
    /* with a knot the hinge is one more feature, column k */
    int k = m->features + (knot > 0), nv = k + 1;
    double xs[NVAR], ys = 0;
    for (int j = 0; j < k; j++) {
        xs[j] = 0;
        for (int i = 0; i < n; i++)
            xs[j] = fmax(xs[j], j < m->features ? m->x[idx[i]][j] : hinge(knot, m->x[idx[i]]));
        if (xs[j] == 0)
            xs[j] = 1; /* an all-zero feature: its column is zero and never fits */
    }
    for (int i = 0; i < n; i++)
        ys = fmax(ys, m->y[idx[i]]);

    /* the normal equations of all variables: row i is its scaled features
     * times sqrt(w[i]), its target its scaled time times the same */
    double full[NVAR][NVAR] = {{0}}, fb[NVAR] = {0};
    for (int i = 0; i < n; i++) {
        double row[NVAR];
        double sw = sqrt(w[i]), target = sw * m->y[idx[i]] / ys;
        for (int v = 0; v < nv; v++) {
            double f = v == 0 ? 1.0
                       : v - 1 < m->features ? m->x[idx[i]][v - 1] : hinge(knot, m->x[idx[i]]);
            row[v] = (v == 0 ? f : f / xs[v - 1]) * sw;
        }
        for (int p = 0; p < nv; p++) {
            fb[p] += row[p] * target;
            for (int q = 0; q < nv; q++)
                full[p][q] += row[p] * row[q];
        }
    }

    /* fits closer than this to each other are a tie, which the smaller subset
     * (found first) wins: rounding must not pick a variable */
    double tol = 0;
    for (int i = 0; i < n; i++)
        tol += w[i] * (m->y[idx[i]] / ys) * (m->y[idx[i]] / ys);
    tol *= 1e-12;
    double best = INFINITY, best_coef[NVAR] = {0};
    for (int size = 1; size <= nv; size++)
        for (int mask = 1; mask < 1 << nv; mask++) {
            if (__builtin_popcount((unsigned)mask) != size)
                continue;
            int var[NVAR], na = 0, ok = 1;
            for (int v = 0; v < nv; v++)
                if (mask >> v & 1)
                    var[na++] = v;
            double a[NVAR][NVAR], b[NVAR], d[NVAR], u[NVAR];
            for (int p = 0; p < na && ok; p++) {
                d[p] = sqrt(full[var[p]][var[p]]);
                ok = d[p] > 0;
            }
            if (!ok)
                continue;
            for (int p = 0; p < na; p++) {
                b[p] = fb[var[p]] / d[p];
                for (int q = 0; q < na; q++)
                    a[p][q] = full[var[p]][var[q]] / (d[p] * d[q]);
            }
            if (solve(na, a, b, u) >= 0)
                continue; /* singular: a variable the others explain */
            double c[NVAR] = {0};
            for (int p = 0; p < na && ok; p++) {
                /* u and the coefficient share a sign (d > 0) */
                int v = var[p];
                double cv = u[p] / d[p] * ys;
                c[v] = v == 0 ? cv : cv / xs[v - 1];
                ok = u[p] >= 0 && isfinite(c[v]);
            }
            if (!ok)
                continue;
            double e = 0;
            for (int i = 0; i < n; i++) {
                double x[NVAR];
                memcpy(x, m->x[idx[i]], sizeof m->x[0]);
                x[m->features] = hinge(knot, m->x[idx[i]]);
                double pred = c[0];
                for (int v = 1; v < nv; v++)
                    pred += c[v] * x[v - 1];
                double r = (m->y[idx[i]] - pred) / ys;
                e += w[i] * r * r;
            }
            if (!isfinite(best) || e < best - fmax(1e-9 * best, tol)) {
                best = e;
                memcpy(best_coef, c, sizeof c);
            }
        }
    if (!isfinite(best))
        return -1;
    memcpy(coef, best_coef, NVAR * sizeof *coef);
    return 0;
}

/*
 * The fit of idx[0..n-1] (bent at knot) that minimises the sum of absolute
 * relative errors |y - p| / p, by iteratively reweighted least squares: first
 * weights 1/y^2 (least squared relative error), then IRLS_STEPS rounds of
 * weights 1 / (p * max(|y - p|, 1 % of p)) from the previous fit's p. For one
 * size's runs that lands on their median: a typical run, where least squares
 * of relative error would lean towards the fastest (on a busy CPU device run
 * times are skewed, a few two or three times the median). 0 or -1.
 */
#define IRLS_STEPS 8
static int fit_median(const coproc__model *m, const int *idx, int n, double knot,
                      double coef[NVAR])
{
    double w[RING], ys = 0;
    for (int i = 0; i < n; i++)
        ys = fmax(ys, m->y[idx[i]]);
    for (int i = 0; i < n; i++) {
        double y = m->y[idx[i]] / ys;
        w[i] = 1 / (y * y);
    }
    if (fit_points(m, idx, n, knot, w, coef) != 0)
        return -1;
    for (int it = 0; it < IRLS_STEPS; it++) {
        for (int i = 0; i < n; i++) {
            double y = m->y[idx[i]] / ys;
            double p = fmax(predict_with(coef, m->features, knot, m->x[idx[i]]) / ys, 1e-3 * y);
            w[i] = 1 / (p * fmax(fabs(y - p), 0.01 * p));
        }
        double next[NVAR];
        if (fit_points(m, idx, n, knot, w, next) != 0)
            break;
        memcpy(coef, next, NVAR * sizeof *coef);
    }
    return 0;
}

/* Distinct values of the first feature among idx[0..n-1], counting up to 3. */
static int distinct_first(const coproc__model *m, const int *idx, int n)
{
    double seen[3];
    int found = 0;
    for (int i = 0; i < n && found < 3; i++) {
        int dup = 0;
        for (int j = 0; j < found && !dup; j++)
            dup = seen[j] == m->x[idx[i]][0];
        if (!dup)
            seen[found++] = m->x[idx[i]][0];
    }
    return found;
}

/* Squared relative residuals of coef (bent at knot) over idx, each capped at
 * 0.25 (50 %) so that a few spikes cannot choose the shape. */
static double capped_error(const coproc__model *m, const int *idx, int n, double knot,
                           const double *coef)
{
    double e = 0;
    for (int i = 0; i < n; i++) {
        double r = (m->y[idx[i]] - predict_with(coef, m->features, knot, m->x[idx[i]])) /
                   m->y[idx[i]];
        e += fmin(r * r, 0.25);
    }
    return e;
}

/* The straight fit of idx, or a bent one where it is clearly better (see
 * coproc__model_fit in model.h): coef and *knot set; 0, or -1 with no fit. */
static int fit_shape(const coproc__model *m, const int *idx, int n, double coef[NVAR],
                     double *knot)
{
    int k = m->features;
    *knot = 0;
    if (count_distinct(m, idx, n, k + 1) < k + 1 || fit_median(m, idx, n, 0, coef) != 0)
        return -1;
    if (k >= COPROC__MODEL_MAX_FEATURES)
        return 0;
    double lo = INFINITY, hi = 0;
    for (int i = 0; i < n; i++) {
        lo = fmin(lo, m->x[idx[i]][0]);
        hi = fmax(hi, m->x[idx[i]][0]);
    }
    double straight = capped_error(m, idx, n, 0, coef), best = straight;
    if (!(lo > 0) || !(hi > 4 * lo) || !(straight > n * 0.03 * 0.03))
        return 0;
    for (int c = 1; c <= COPROC__MODEL_KNOTS; c++) {
        double kn = lo * pow(hi / lo, (double)c / (COPROC__MODEL_KNOTS + 1)), bent[NVAR];
        /* on each side at least k + 2 distinct points and 3 distinct values of
         * the bending feature, so both slopes are measured (a calibration
         * sweep of 4 sizes never bends: the runs that follow must show it) */
        int below[RING], above[RING], nb = 0, na = 0;
        for (int i = 0; i < n; i++) {
            if (m->x[idx[i]][0] <= kn)
                below[nb++] = idx[i];
            else
                above[na++] = idx[i];
        }
        if (count_distinct(m, below, nb, k + 2) < k + 2 ||
            count_distinct(m, above, na, k + 2) < k + 2 || distinct_first(m, below, nb) < 3 ||
            distinct_first(m, above, na) < 3 || fit_median(m, idx, n, kn, bent) != 0)
            continue;
        double e = capped_error(m, idx, n, kn, bent);
        if (e < best && e < 0.75 * straight) {
            best = e;
            *knot = kn;
            memcpy(coef, bent, NVAR * sizeof *coef);
        }
    }
    return 0;
}

/* Of the points idx[0..n-1], those whose relative residual under coef (bent at
 * knot) lies within 3 scaled MADs of the median into kept; their number. A
 * floor on the MAD keeps near-exact data from rejecting points over rounding
 * noise. */
static int inliers(const coproc__model *m, const int *idx, int n, const double *coef, double knot,
                   int *kept)
{
    double r[RING], dev[RING];
    for (int i = 0; i < n; i++)
        r[i] = (m->y[idx[i]] - predict_with(coef, m->features, knot, m->x[idx[i]])) /
               m->y[idx[i]];
    double med = median_of(r, n);
    for (int i = 0; i < n; i++)
        dev[i] = fabs(r[i] - med);
    double limit = OUTLIER_SIGMAS * MAD_SIGMA * fmax(median_of(dev, n), MAD_FLOOR);
    int nk = 0;
    for (int i = 0; i < n; i++)
        if (dev[i] <= limit)
            kept[nk++] = idx[i];
    return nk;
}

int coproc__model_fit(coproc__model *m)
{
    int k = m->features, n = 0;
    int idx[RING], kept[RING];
    for (int i = 0; i < m->ring_len; i++)
        idx[n++] = ring_slot(m, i);
    double coef[NVAR], knot = 0;
    if (count_distinct(m, idx, n, k + 1) < k + 1 || fit_median(m, idx, n, 0, coef) != 0)
        return -1;

    /* Timing spikes (or drops) are outliers of the straight fit; the shape is
     * chosen without them, then the outliers of that shape are left out and it
     * is refitted once. */
    int nk = inliers(m, idx, n, coef, 0, kept);
    double shaped[NVAR];
    if (fit_shape(m, nk < n ? kept : idx, nk < n ? nk : n, shaped, &knot) == 0)
        memcpy(coef, shaped, sizeof coef);
    else
        knot = 0;
    nk = inliers(m, idx, n, coef, knot, kept);
    double refit[NVAR];
    const int *used = idx;
    if (nk < n && count_distinct(m, kept, nk, k + 1) == k + 1 &&
        fit_median(m, kept, nk, knot, refit) == 0) {
        memcpy(coef, refit, sizeof coef);
        used = kept;
        n = nk;
    }

    memcpy(m->coef, coef, sizeof m->coef);
    m->knot = knot;
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
 * The device got faster or slower as a whole (another process took a share of
 * it, a clock changed, a VM moved): the latest observations since the last fit
 * that lie inside its range - at least SHIFT_WINDOW, at most twice that - sit
 * mostly on one side of it, by a median factor beyond 1 +- SHIFT_RATIO. Then
 * the observations before them are
 * scaled by that factor: they keep the shape they show (sizes, a bend) and
 * take the new level, so the refit that follows tracks the shift at once
 * instead of waiting until new observations outnumber old ones in the ring.
 * Returns 1 when it scaled.
 */
static int follow_shift(coproc__model *m)
{
    if (!m->fitted || m->since_refit < SHIFT_WINDOW)
        return 0;
    /* the latest observations inside the fitted range: beyond it a miss is
     * the fit's extrapolation, not the device */
    double r[2 * SHIFT_WINDOW];
    int w = 0, above = 0, oldest = m->ring_len;
    for (int i = m->ring_len - 1; i >= m->ring_len - m->since_refit && i >= 0 &&
                                  w < 2 * SHIFT_WINDOW; i--) {
        int s = ring_slot(m, i);
        if (coproc__model_extrapolation(m, m->x[s]) > 1)
            continue;
        double p = coproc__model_predict(m, m->x[s]);
        if (!(p > 0) || !isfinite(p))
            return 0;
        r[w] = m->y[s] / p;
        above += r[w++] > 1;
        oldest = i;
    }
    if (w < SHIFT_WINDOW)
        return 0;
    double f = median_of(r, w);
    int side = f > 1 ? above : w - above;
    if (!(fabs(f - 1) > SHIFT_RATIO) || side < SHIFT_SIDE * w)
        return 0;
    for (int i = 0; i < oldest; i++)
        m->y[ring_slot(m, i)] *= f;
    return 1;
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
     * later; an unfitted model tries on every observation regardless. A shift
     * is looked for every SHIFT_WINDOW observations and before each refit. */
    int due = !m->fitted || m->since_refit >= COPROC__MODEL_REFIT_EVERY;
    int shifted = m->fitted && (due || m->since_refit % SHIFT_WINDOW == 0) && follow_shift(m);
    if ((due || shifted) && coproc__model_fit(m) != 0)
        m->since_refit = 0;
}

/* Never negative for valid x; NaN features give NaN rather than a bogus 0. */
double coproc__model_predict(const coproc__model *m, const double *x)
{
    if (!m->fitted)
        return -1;
    double p = predict_with(m->coef, m->features, m->knot, x);
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

int coproc__model_last(const coproc__model *m, double *x, double *seconds)
{
    if (m->ring_len < 1)
        return -1;
    int slot = ring_slot(m, m->ring_len - 1);
    for (int j = 0; j < m->features; j++)
        x[j] = m->x[slot][j];
    *seconds = m->y[slot];
    return 0;
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
    int nc = k + 1 + (m->knot > 0);
    rc |= json_object_set_new(j, "coef", m->fitted ? json_vector(m->coef, nc) : json_null());
    rc |= json_object_set_new(j, "knot", json_real(m->fitted ? m->knot : 0));
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
    const json_t *knot = json_object_get(j, "knot"); /* absent before bends: straight */
    if (knot && (!json_is_number(knot) || !(json_number_value(knot) >= 0) ||
                 !isfinite(json_number_value(knot)) ||
                 (json_number_value(knot) > 0 && k >= COPROC__MODEL_MAX_FEATURES)))
        return -1;
    m->knot = knot ? json_number_value(knot) : 0;
    const json_t *coef = json_object_get(j, "coef");
    if (!json_is_null(coef) && read_vector(coef, k + 1 + (m->knot > 0), 0, m->coef) != 0)
        return -1;
    if (json_is_null(coef))
        m->knot = 0;
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
