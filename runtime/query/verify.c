/* verify.c - the shadow check (verify.h): COPROC_VERIFY=sample:P[:device]
 * or coproc_query_options.verify = P re-runs a fraction P of query runs and
 * compares the results.
 *
 * Which runs: run n (counted per runtime from 0) is checked when
 * floor(n P) != floor((n - 1) P), so the first run is and then one in every
 * 1/P, evenly spread - a fixed fraction, not a draw, so a test or a budget
 * can count on it. The shadow run: a fused run that stayed fused runs again
 * one operator at a time (a different engine: other kernels, other code);
 * one that fell back, or ran one operator at a time, runs again fused; with
 * ":device" (or where the other engine would only repeat the first one) the
 * same engine on another device, when the runtime has one.
 *
 * Compared: rows as multisets (a group-by's rows come in no order), each
 * value equal - integers exactly, floats within a relative 1e-9 (float64) or
 * 1e-4 (float32: sums in another order round otherwise), NaN equal to NaN,
 * nulls to nulls; under an order-by, the key columns row by row too (ties
 * may come in either order, but the keys' sequence is fixed), and with a
 * limit only the keys (which of the tied rows made the cut is open).
 * COPROC_FAULT_VERIFY=N changes the first value of the N-th check's shadow
 * result, so that tests see a mismatch found, logged and counted. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/parse.h"
#include "core/runtime.h"
#include "data/column.h"
#include "query/state.h"
#include "query/verify.h"

void coproc__verify_init(coproc__verify *v) { memset(v, 0, sizeof *v); }


/* COPROC_VERIFY, "sample:P" or "sample:P:device"; anything else is ignored
 * with a warning naming it. */
void coproc__verify_configure(coproc_runtime *rt, coproc__verify *v)
{
    const char *fault = getenv("COPROC_FAULT_VERIFY");
    if (fault && *fault) {
        long long nth = 0;
        const char *why = NULL;
        if (coproc__parse_int(fault, 1, 1000000000, &nth, &why) != 0)
            coproc__log(rt, COPROC_LOG_WARN, "COPROC_FAULT_VERIFY=%s ignored: %s", fault, why);
        else
            v->fault_nth = (uint64_t)nth;
    }
    const char *env = getenv("COPROC_VERIFY");
    if (!env || !*env)
        return;
    char buf[64];
    snprintf(buf, sizeof buf, "%s", env);
    char *p = strncmp(buf, "sample:", 7) == 0 ? buf + 7 : NULL;
    char *mode = p ? strchr(p, ':') : NULL;
    if (mode)
        *mode++ = '\0';
    char *end = NULL;
    double rate = p ? strtod(p, &end) : -1;
    if (!p || end == p || *end || !(rate >= 0 && rate <= 1) || (mode && strcmp(mode, "device"))) {
        coproc__log(rt, COPROC_LOG_WARN,
                    "COPROC_VERIFY=%s ignored: expected sample:P with 0 <= P <= 1, optionally "
                    "followed by :device", env);
        return;
    }
    v->rate = rate;
    v->other_device = mode != NULL;
}

static int sampled(coproc__verify *v, double rate, int *other_device)
{
    if (rate < 0)
        rate = v->rate;
    *other_device = v->other_device;
    if (!(rate > 0))
        return 0;
    uint64_t n = atomic_fetch_add(&v->runs, 1);
    return floor((double)n * rate) != floor(((double)n - 1) * rate);
}

/* ---------------------------------------------------------------- comparing */

typedef struct cell {
    int null;
    int is_float;
    int64_t i;
    double f;
} cell;

static cell cell_at(const coproc_column *col, size_t r)
{
    cell c = {0, 0, 0, 0};
    const coproc_column *v = coproc_column_validity(col);
    if (v && !((((const uint32_t *)v->host)[r / 32] >> (r % 32)) & 1u)) {
        c.null = 1;
        return c;
    }
    const void *d = col->host;
    switch (col->type) {
    case COPROC_INT32: c.i = ((const int32_t *)d)[r]; break;
    case COPROC_UINT32: c.i = ((const uint32_t *)d)[r]; break;
    case COPROC_INT64:
    case COPROC_UINT64: c.i = ((const int64_t *)d)[r]; break;
    case COPROC_FLOAT32: c.is_float = 1, c.f = ((const float *)d)[r]; break;
    default: c.is_float = 1, c.f = ((const double *)d)[r]; break;
    }
    return c;
}

/* An order of cells for sorting: nulls first, then by value (NaN last). */
static int cell_order(const cell *a, const cell *b)
{
    if (a->null || b->null)
        return b->null - a->null;
    if (a->is_float) {
        int na = isnan(a->f), nb = isnan(b->f);
        if (na || nb)
            return na - nb;
        return (a->f > b->f) - (a->f < b->f);
    }
    return (a->i > b->i) - (a->i < b->i);
}

static int cell_same(const cell *a, const cell *b, double tol)
{
    if (a->null || b->null)
        return a->null == b->null;
    if (!a->is_float)
        return a->i == b->i;
    if (isnan(a->f) || isnan(b->f))
        return isnan(a->f) && isnan(b->f);
    if (a->f == b->f)
        return 1;
    return fabs(a->f - b->f) <= tol * fmax(1.0, fmax(fabs(a->f), fabs(b->f)));
}

/* A cell as text, for a mismatch's message. */
static const char *cell_text(const cell *x, char *buf, size_t len)
{
    if (x->null)
        snprintf(buf, len, "NULL");
    else if (x->is_float)
        snprintf(buf, len, "%.17g", x->f);
    else
        snprintf(buf, len, "%lld", (long long)x->i);
    return buf;
}

typedef struct rows {
    size_t n;
    int ncols;
    cell *c; /* n x ncols */
} rows;

static int sort_rows_cmp(const void *x, const void *y, void *ncols)
{
    const cell *a = x, *b = y;
    for (int c = 0; c < *(const int *)ncols; c++) {
        int r = cell_order(&a[c], &b[c]);
        if (r)
            return r;
    }
    return 0;
}

/* Column indexes cols[0..ncols) of t's rows. */
static int rows_of(const coproc_table *t, const int *cols, int ncols, rows *out)
{
    out->n = t->rows;
    out->ncols = ncols;
    out->c = malloc((t->rows * (size_t)ncols + 1) * sizeof *out->c);
    if (!out->c)
        return -1;
    for (size_t r = 0; r < t->rows; r++)
        for (int c = 0; c < ncols; c++)
            out->c[r * ncols + c] = cell_at(t->cols[cols[c]], r);
    return 0;
}

static void sort_rows(rows *r)
{
    /* qsort_r is GNU's; rows of ncols cells */
    if (r->n > 1)
        qsort_r(r->c, r->n, (size_t)r->ncols * sizeof *r->c, sort_rows_cmp, &r->ncols);
}

/* Whether a and b hold the same rows (in order, or as multisets when
 * `sorted`); else a description of the first difference in why. */
static int same_rows(rows *a, rows *b, const double *tol, int sorted, const char *what, char *why,
                     size_t len)
{
    if (a->n != b->n) {
        snprintf(why, len, "%s: %zu rows against %zu", what, a->n, b->n);
        return 0;
    }
    if (sorted) {
        sort_rows(a);
        sort_rows(b);
    }
    for (size_t r = 0; r < a->n; r++)
        for (int c = 0; c < a->ncols; c++) {
            const cell *x = &a->c[r * a->ncols + c], *y = &b->c[r * b->ncols + c];
            if (!cell_same(x, y, tol[c])) {
                char vx[48], vy[48];
                snprintf(why, len, "%s: row %zu, column %d: %s against %s", what, r, c,
                         cell_text(x, vx, sizeof vx), cell_text(y, vy, sizeof vy));
                return 0;
            }
        }
    return 1;
}

/* Whether tables a and b agree as described at the top; why says where not. */
static int same_tables(const coproc_node *root, const coproc_table *a, const coproc_table *b,
                       char *why, size_t len)
{
    if (a->n != b->n) {
        snprintf(why, len, "%d columns against %d", a->n, b->n);
        return 0;
    }
    int all[256], keys[256], nkeys = 0;
    double tol[256], ktol[256];
    if (a->n > 256) {
        snprintf(why, len, "more than 256 columns: not compared");
        return 1;
    }
    for (int c = 0; c < a->n; c++) {
        if (a->cols[c]->type != b->cols[c]->type) {
            snprintf(why, len, "column %d is %s against %s", c, coproc_type_name(a->cols[c]->type),
                     coproc_type_name(b->cols[c]->type));
            return 0;
        }
        all[c] = c;
        tol[c] = a->cols[c]->type == COPROC_FLOAT32 ? 1e-4 : 1e-9;
    }
    int ordered = root->kind == COPROC__QN_ORDER_BY;
    for (int k = 0; ordered && k < root->n; k++) {
        int c = coproc__schema_find(&root->schema, root->names[k]);
        if (c >= 0 && c < a->n) {
            ktol[nkeys] = tol[c];
            keys[nkeys++] = c;
        }
    }
    rows x = {0, 0, NULL}, y = {0, 0, NULL};
    int same = 1;
    if (ordered && nkeys) {
        if (rows_of(a, keys, nkeys, &x) != 0 || rows_of(b, keys, nkeys, &y) != 0)
            goto oom;
        same = same_rows(&x, &y, ktol, 0, "the order-by's keys in order", why, len);
        free(x.c);
        free(y.c);
        x.c = y.c = NULL;
    }
    if (same && !(ordered && root->limit)) {
        if (rows_of(a, all, a->n, &x) != 0 || rows_of(b, all, b->n, &y) != 0)
            goto oom;
        same = same_rows(&x, &y, tol, 1, "the rows", why, len);
    }
    free(x.c);
    free(y.c);
    return same;
oom:
    free(x.c);
    free(y.c);
    snprintf(why, len, "out of host memory: not compared");
    return 1;
}

/* ---------------------------------------------------------------- the check */

/* The device that ran the last pipeline, or -1. */
static int main_device(const coproc_query_result *res)
{
    for (int i = res->pipelines - 1; i >= 0; i--)
        if (res->pipeline[i].device >= 0)
            return res->pipeline[i].device;
    return -1;
}

void coproc__verify_run(coproc_plan *p, coproc_node *root, const coproc_query_options *opts,
                        coproc_query_result *res)
{
    coproc_runtime *rt = p->rt;
    coproc__verify *v = coproc__query_verify(rt);
    int other_device = 0;
    res->verified = 0;
    if (!v || !sampled(v, opts->verify, &other_device))
        return;
    /* The shadow run's options: the other engine, or another device. */
    coproc_query_options o = *opts;
    o.verify = 0;
    o.hybrid = 0;
    int was_fused = opts->mode == COPROC_QUERY_FUSED && !res->note[0];
    int dev = main_device(res);
    if (other_device && rt->device_count > 1) {
        o.device = dev >= 0 ? (dev + 1) % rt->device_count : 1;
    } else {
        o.mode = was_fused ? COPROC_QUERY_OPERATORS : COPROC_QUERY_FUSED;
        o.device = opts->device;
    }
    /* The caller's last error survives the shadow run. */
    char *kept = malloc(COPROC__ERRMSG_MAX);
    if (kept) {
        pthread_mutex_lock(&rt->err_lock);
        memcpy(kept, rt->errmsg, COPROC__ERRMSG_MAX);
        pthread_mutex_unlock(&rt->err_lock);
    }
    coproc_query_result shadow;
    coproc_status s = coproc_query_run(p, root, &o, &shadow);
    if (kept) {
        pthread_mutex_lock(&rt->err_lock);
        memcpy(rt->errmsg, kept, COPROC__ERRMSG_MAX);
        pthread_mutex_unlock(&rt->err_lock);
        free(kept);
    }
    if (s != COPROC_OK) {
        coproc__log(rt, COPROC_LOG_INFO, "COPROC_VERIFY: the shadow run could not run (%s): "
                    "not checked", coproc_status_name(s));
        return;
    }
    if (o.mode == COPROC_QUERY_FUSED && o.mode != opts->mode && shadow.note[0]) {
        /* it fell back: the first run's engine again, nothing independent */
        coproc_query_result_free(&shadow);
        return;
    }
    uint64_t check = atomic_fetch_add(&v->checks, 1) + 1;
    if (check == v->fault_nth && shadow.table->n > 0 && shadow.table->rows > 0) {
        coproc_column *c = shadow.table->owned ? shadow.table->owned[0] : NULL;
        if (c && c->host) /* COPROC_FAULT_VERIFY: a wrong shadow value (its top byte) */
            ((unsigned char *)c->host)[coproc_type_size(c->type) - 1] ^= 0x40;
        coproc_column_set_validity(c, NULL);
    }
    char why[512];
    int same = same_tables(root, res->table, shadow.table, why, sizeof why);
    res->verified = same ? 1 : -1;
    /* Counted on every device either run used. */
    unsigned char used[64] = {0};
    for (int i = 0; i < res->pipelines; i++)
        if (res->pipeline[i].device >= 0 && res->pipeline[i].device < 64)
            used[res->pipeline[i].device] = 1;
    for (int i = 0; i < shadow.pipelines; i++)
        if (shadow.pipeline[i].device >= 0 && shadow.pipeline[i].device < 64)
            used[shadow.pipeline[i].device] = 1;
    for (int d = 0; d < rt->device_count && d < 64; d++)
        if (used[d]) {
            atomic_fetch_add(&rt->devices[d].verify_runs, 1);
            if (!same)
                atomic_fetch_add(&rt->devices[d].verify_mismatches, 1);
        }
    if (!same) {
        char plan[1024];
        size_t off = 0;
        plan[0] = '\0';
        for (int i = 0; i < res->pipelines && off < sizeof plan; i++)
            off += (size_t)snprintf(plan + off, sizeof plan - off, "%s[%s on device %d%s]",
                                    i ? " " : "", res->pipeline[i].what, res->pipeline[i].device,
                                    res->pipeline[i].fused ? ", fused" : "");
        char where[32] = "";
        if (o.device >= 0)
            snprintf(where, sizeof where, " on device %d", o.device);
        coproc__log(rt, COPROC_LOG_ERROR,
                    "COPROC_VERIFY: a query's result differs from its shadow run (%s%s): %s; "
                    "the plan ran as %s",
                    o.mode == COPROC_QUERY_OPERATORS ? "one operator at a time" : "fused", where,
                    why, plan);
    }
    coproc_query_result_free(&shadow);
}
