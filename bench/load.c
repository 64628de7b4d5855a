/* load.c - coproc-load: many application threads submitting operators (and,
 * with --queries, whole query plans) against every device for a bounded time
 * (issue 18, its "load" part). Each thread keeps a window of tasks in flight,
 * waits on them (now and then with coproc_wait_timeout in a loop, to see
 * TIMEOUT) and checks every result against a plain C reference computed in
 * the thread. The ready queues are small (--queue-depth) so that submits meet
 * back-pressure; the peak resident memory and the most tasks in flight are
 * reported. At the end each thread leaves its last window un-waited: the main
 * thread drains the runtime, checks every such task is done, waits on half of
 * them (checking them too), frees the columns and closes (which frees the
 * rest). A thread of its own (the main one) gives up with abort() when the run
 * outlives its time by far: a deadlock shows as a core, not as a hung test.
 *
 * Uses the public API only. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sysexits.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "coproc.h"
#include "coproc/query.h"

#define MAXDEV 16
#define MAXWIN 64
#define DATASETS 3     /* host tables each thread keeps */
#define REUSE 24       /* operators over a table before it is made anew */
#define MAX_REPORTED 8 /* wrong or failed results described on stderr */
#define VAL_RANGE 1000000

/* ---------------------------------------------------------------- random numbers */

static uint64_t rng_next(uint64_t *s) /* splitmix64 */
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* Uniform in [0, n) for 0 < n < 2^32. */
static uint64_t rng_below(uint64_t *s, uint64_t n)
{
    return ((rng_next(s) >> 32) * n) >> 32;
}

static int64_t rng_range(uint64_t *s, int64_t lo, int64_t hi) /* [lo, hi] */
{
    return lo + (int64_t)rng_below(s, (uint64_t)(hi - lo + 1));
}

/* Log-uniform in [1, max]. */
static size_t rng_rows(uint64_t *s, size_t max)
{
    double u = (double)(rng_next(s) >> 11) * 0x1.0p-53;
    size_t n = (size_t)exp(u * log((double)max + 1));
    return n < 1 ? 1 : n > max ? max : n;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* ---------------------------------------------------------------- shared state */

typedef struct config {
    double seconds;
    int threads, window, queue_depth, queries, no_zero_copy;
    const char *devices, *json;
    uint64_t seed;
    size_t max_rows;
} config;

typedef struct counters {
    /* submitted: coproc_submit returned OK; waited: coproc_wait returned for
     * it (completed right, wrong, failed or device_lost); failed and
     * device_lost count refused submits and queries too */
    atomic_uint_fast64_t submitted, waited, completed, wrong, failed, device_lost, faulted,
        timeouts, queries, query_kernels_built, polls, regenerated, by_kind[COPROC_OP_KIND_COUNT];
    atomic_int in_flight, max_in_flight;
    atomic_int reported;
} counters;

typedef struct dataset dataset;

/* One task in flight: what it computes, so that its result can be checked. */
typedef struct pending {
    coproc_task *t;
    dataset *ds;
    coproc_op op;
    int bitmap; /* SELECT_BITMAP */
    int second; /* the filter has a second predicate (on keys) */
} pending;

typedef struct query_data query_data;

typedef struct worker {
    int id;
    pthread_t th;
    uint64_t rng;
    struct shared *sh;
    dataset *ds[DATASETS];
    query_data *qd;
    pending win[MAXWIN];
    int n; /* in flight, win[0..n) in submission order */
} worker;

typedef struct shared {
    config cfg;
    coproc_runtime *rt;
    int ndev, fp64, fault, injecting; /* COPROC_FAULT_STALL or COPROC_FAULT set; COPROC_FAULT */
    double deadline;
    counters c;
    atomic_int done;
    pthread_barrier_t end;
} shared;

static void note(shared *sh, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void note(shared *sh, const char *fmt, ...)
{
    if (atomic_fetch_add(&sh->c.reported, 1) >= MAX_REPORTED)
        return;
    va_list ap;
    va_start(ap, fmt);
    fputs("coproc-load: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

static void in_flight_add(shared *sh, int d)
{
    int v = atomic_fetch_add(&sh->c.in_flight, d) + d;
    int m = atomic_load(&sh->c.max_in_flight);
    while (v > m && !atomic_compare_exchange_weak(&sh->c.max_in_flight, &m, v))
        ;
}

/* ---------------------------------------------------------------- data */

/* A host table of n rows: values of one type (int32, int64 or float64 as k/8,
 * so that every sum is exact in any order), int32 keys in [0, groups), row
 * positions for gathers and a build side of distinct keys for joins; with the
 * references that are worth keeping (sorted order, per-group aggregates). */
struct dataset {
    size_t n;
    coproc_type type;
    int groups;
    size_t dim_n;
    void *vals;
    int32_t *keys, *dim;
    uint32_t *pos;
    uint8_t *in_dim; /* key k occurs in dim: in_dim[k], k in [0, 2 groups) */
    coproc_column *cvals, *ckeys, *cdim, *cpos;
    int uses, refs;
    /* lazily made references */
    uint32_t *order; /* stable sorting permutation of vals */
    int have_groups;
    uint64_t *gcount;
    double *gsumf, *gminf, *gmaxf;
    int64_t *gsum, *gmin, *gmax;
};

static double val_f(const dataset *d, size_t i)
{
    switch (d->type) {
    case COPROC_INT32:
        return ((const int32_t *)d->vals)[i];
    case COPROC_INT64:
        return (double)((const int64_t *)d->vals)[i];
    default:
        return ((const double *)d->vals)[i];
    }
}

static int64_t val_i(const dataset *d, size_t i)
{
    return d->type == COPROC_INT32 ? ((const int32_t *)d->vals)[i] : ((const int64_t *)d->vals)[i];
}

static int is_float(coproc_type t)
{
    return t == COPROC_FLOAT32 || t == COPROC_FLOAT64;
}

static void dataset_free(dataset *d)
{
    if (!d)
        return;
    coproc_column_free(d->cvals);
    coproc_column_free(d->ckeys);
    coproc_column_free(d->cdim);
    coproc_column_free(d->cpos);
    free(d->vals);
    free(d->keys);
    free(d->dim);
    free(d->pos);
    free(d->in_dim);
    free(d->order);
    free(d->gcount);
    free(d->gsumf);
    free(d->gminf);
    free(d->gmaxf);
    free(d->gsum);
    free(d->gmin);
    free(d->gmax);
    free(d);
}

static const int GROUP_CHOICES[] = {1, 7, 100, 4096, 65536};

static dataset *dataset_make(shared *sh, uint64_t *rng)
{
    dataset *d = calloc(1, sizeof *d);
    if (!d)
        return NULL;
    d->n = rng_rows(rng, sh->cfg.max_rows);
    int nt = sh->fp64 ? 3 : 2;
    static const coproc_type types[] = {COPROC_INT32, COPROC_INT64, COPROC_FLOAT64};
    d->type = types[rng_below(rng, (uint64_t)nt)];
    d->groups = GROUP_CHOICES[rng_below(rng, sizeof GROUP_CHOICES / sizeof *GROUP_CHOICES)];
    d->dim_n = (size_t)d->groups;
    size_t n = d->n;
    d->vals = malloc(n * coproc_type_size(d->type));
    d->keys = malloc(n * sizeof *d->keys);
    d->pos = malloc(n * sizeof *d->pos);
    d->dim = malloc(d->dim_n * sizeof *d->dim);
    d->in_dim = calloc(2 * (size_t)d->groups, 1);
    if (!d->vals || !d->keys || !d->pos || !d->dim || !d->in_dim) {
        dataset_free(d);
        return NULL;
    }
    for (size_t i = 0; i < n; i++) {
        int64_t v = rng_range(rng, -VAL_RANGE, VAL_RANGE);
        if (d->type == COPROC_INT32)
            ((int32_t *)d->vals)[i] = (int32_t)v;
        else if (d->type == COPROC_INT64)
            ((int64_t *)d->vals)[i] = v * 1000003; /* past 32 bits */
        else
            ((double *)d->vals)[i] = (double)(v * 8 + rng_range(rng, 0, 7)) / 8.0;
        /* keys of joins probe [0, 2 groups): about half of them match */
        d->keys[i] = (int32_t)rng_below(rng, 2 * (uint64_t)d->groups);
        d->pos[i] = (uint32_t)rng_below(rng, n);
    }
    /* the build side: `groups` distinct keys out of [0, 2 groups), shuffled */
    int32_t *all = malloc(2 * (size_t)d->groups * sizeof *all);
    if (!all) {
        dataset_free(d);
        return NULL;
    }
    for (int i = 0; i < 2 * d->groups; i++)
        all[i] = i;
    for (int i = 2 * d->groups - 1; i > 0; i--) {
        int j = (int)rng_below(rng, (uint64_t)i + 1);
        int32_t x = all[i];
        all[i] = all[j];
        all[j] = x;
    }
    for (size_t i = 0; i < d->dim_n; i++) {
        d->dim[i] = all[i];
        d->in_dim[all[i]] = 1;
    }
    free(all);
    coproc_runtime *rt = sh->rt;
    if (coproc_column_wrap(rt, d->type, d->vals, n, &d->cvals) != COPROC_OK ||
        coproc_column_wrap(rt, COPROC_INT32, d->keys, n, &d->ckeys) != COPROC_OK ||
        coproc_column_wrap(rt, COPROC_UINT32, d->pos, n, &d->cpos) != COPROC_OK ||
        coproc_column_wrap(rt, COPROC_INT32, d->dim, d->dim_n, &d->cdim) != COPROC_OK) {
        note(sh, "coproc_column_wrap: %s", coproc_errmsg(rt));
        dataset_free(d);
        return NULL;
    }
    return d;
}

/* ---------------------------------------------------------------- references */

static _Thread_local const dataset *tl_sort_ds; /* qsort has no context argument */

static int cmp_order(const void *pa, const void *pb)
{
    const dataset *d = tl_sort_ds;
    uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;
    int c;
    if (is_float(d->type)) {
        double x = val_f(d, a), y = val_f(d, b);
        c = (x > y) - (x < y);
    } else {
        int64_t x = val_i(d, a), y = val_i(d, b);
        c = (x > y) - (x < y);
    }
    return c ? c : (a > b) - (a < b); /* stable */
}

static const uint32_t *ref_order(dataset *d)
{
    if (d->order)
        return d->order;
    d->order = malloc(d->n * sizeof *d->order);
    if (!d->order)
        return NULL;
    for (size_t i = 0; i < d->n; i++)
        d->order[i] = (uint32_t)i;
    tl_sort_ds = d;
    qsort(d->order, d->n, sizeof *d->order, cmp_order);
    return d->order;
}

static int ref_groups(dataset *d)
{
    if (d->have_groups)
        return 0;
    size_t g = (size_t)d->groups * 2;
    d->gcount = calloc(g, sizeof *d->gcount);
    d->gsum = calloc(g, sizeof *d->gsum);
    d->gmin = malloc(g * sizeof *d->gmin);
    d->gmax = malloc(g * sizeof *d->gmax);
    d->gsumf = calloc(g, sizeof *d->gsumf);
    d->gminf = malloc(g * sizeof *d->gminf);
    d->gmaxf = malloc(g * sizeof *d->gmaxf);
    if (!d->gcount || !d->gsum || !d->gmin || !d->gmax || !d->gsumf || !d->gminf || !d->gmaxf)
        return -1;
    for (size_t k = 0; k < g; k++) {
        d->gmin[k] = INT64_MAX;
        d->gmax[k] = INT64_MIN;
        d->gminf[k] = INFINITY;
        d->gmaxf[k] = -INFINITY;
    }
    for (size_t i = 0; i < d->n; i++) {
        int32_t k = d->keys[i];
        d->gcount[k]++;
        if (is_float(d->type)) {
            double v = val_f(d, i);
            d->gsumf[k] += v;
            d->gminf[k] = v < d->gminf[k] ? v : d->gminf[k];
            d->gmaxf[k] = v > d->gmaxf[k] ? v : d->gmaxf[k];
        } else {
            int64_t v = val_i(d, i);
            d->gsum[k] = (int64_t)((uint64_t)d->gsum[k] + (uint64_t)v);
            d->gmin[k] = v < d->gmin[k] ? v : d->gmin[k];
            d->gmax[k] = v > d->gmax[k] ? v : d->gmax[k];
        }
    }
    d->have_groups = 1;
    return 0;
}

/* The element i of a result column as int64 or double, whatever its type. */
static int64_t col_i(const coproc_column *c, size_t i)
{
    const void *p = coproc_column_host_data(c);
    switch (coproc_column_type(c)) {
    case COPROC_INT32:
        return ((const int32_t *)p)[i];
    case COPROC_INT64:
        return ((const int64_t *)p)[i];
    case COPROC_UINT32:
        return ((const uint32_t *)p)[i];
    case COPROC_UINT64:
        return (int64_t)((const uint64_t *)p)[i];
    case COPROC_FLOAT32:
        return (int64_t)((const float *)p)[i];
    default:
        return (int64_t)((const double *)p)[i];
    }
}

static double col_f(const coproc_column *c, size_t i)
{
    const void *p = coproc_column_host_data(c);
    switch (coproc_column_type(c)) {
    case COPROC_FLOAT32:
        return ((const float *)p)[i];
    case COPROC_FLOAT64:
        return ((const double *)p)[i];
    default:
        return (double)col_i(c, i);
    }
}

/* A value of the dataset's type equal to (as C compares) element i of c. */
static int same_val(const dataset *d, const coproc_column *c, size_t ci, size_t di)
{
    if (!c || coproc_column_type(c) != d->type || !coproc_column_host_data(c))
        return 0;
    return is_float(d->type) ? col_f(c, ci) == val_f(d, di) : col_i(c, ci) == val_i(d, di);
}

static int pred_holds(const dataset *d, const coproc_predicate *p, size_t i)
{
    if (is_float(d->type) && p->col == d->cvals) {
        double v = val_f(d, i);
        switch (p->cmp) {
        case COPROC_CMP_EQ:
            return v == p->a.f64;
        case COPROC_CMP_NE:
            return v != p->a.f64;
        case COPROC_CMP_LT:
            return v < p->a.f64;
        case COPROC_CMP_LE:
            return v <= p->a.f64;
        case COPROC_CMP_GT:
            return v > p->a.f64;
        case COPROC_CMP_GE:
            return v >= p->a.f64;
        default:
            return p->a.f64 <= v && v < p->b.f64;
        }
    }
    int64_t v = p->col == d->cvals ? val_i(d, i) : d->keys[i];
    switch (p->cmp) {
    case COPROC_CMP_EQ:
        return v == p->a.i64;
    case COPROC_CMP_NE:
        return v != p->a.i64;
    case COPROC_CMP_LT:
        return v < p->a.i64;
    case COPROC_CMP_LE:
        return v <= p->a.i64;
    case COPROC_CMP_GT:
        return v > p->a.i64;
    case COPROC_CMP_GE:
        return v >= p->a.i64;
    default:
        return p->a.i64 <= v && v < p->b.i64;
    }
}

static int filter_holds(const dataset *d, const pending *p, size_t i)
{
    int a = pred_holds(d, &p->op.filter.first, i);
    if (!p->second)
        return a;
    int b = pred_holds(d, &p->op.filter.second, i);
    return p->op.filter.logic == COPROC_LOGIC_AND ? a && b : a || b;
}

/* map_const of element i, as the device computes it (integers wrap). */
static int map_ok(const dataset *d, const coproc_op *op, const coproc_column *out, size_t i)
{
    const void *o = coproc_column_host_data(out);
    if (d->type == COPROC_FLOAT64) {
        double a = val_f(d, i), c = op->b ? a : op->c.f64, r;
        switch (op->arith) {
        case COPROC_ARITH_ADD:
            r = a + c;
            break;
        case COPROC_ARITH_SUB:
            r = a - c;
            break;
        case COPROC_ARITH_MUL:
            r = a * c;
            break;
        default:
            r = a / c;
            break;
        }
        double g = ((const double *)o)[i];
        return g == r || (isnan(g) && isnan(r));
    }
    int64_t a = val_i(d, i), c = op->b ? a : op->c.i64, r;
    int bits = d->type == COPROC_INT32 ? 32 : 64;
    switch (op->arith) {
    case COPROC_ARITH_ADD:
        r = (int64_t)((uint64_t)a + (uint64_t)c);
        break;
    case COPROC_ARITH_SUB:
        r = (int64_t)((uint64_t)a - (uint64_t)c);
        break;
    case COPROC_ARITH_MUL:
        r = (int64_t)((uint64_t)a * (uint64_t)c);
        break;
    default:
        r = c == 0 ? 0 : a / c;
        break;
    }
    if (bits == 32)
        return ((const int32_t *)o)[i] == (int32_t)(uint32_t)(uint64_t)r;
    return ((const int64_t *)o)[i] == r;
}

/* Checks a join's pairs: build keys are distinct, so each probe row pairs at
 * most once; every pair must match, no probe row twice, and the count must be
 * the reference's. */
static int join_ok(const dataset *d, const coproc_join_result *j)
{
    uint64_t expect = 0;
    for (size_t i = 0; i < d->n; i++)
        expect += d->in_dim[d->keys[i]];
    if (j->count != expect)
        return 0;
    if (expect == 0)
        return 1;
    const uint32_t *l = coproc_column_host_data(j->left), *r = coproc_column_host_data(j->right);
    if (!l || !r || coproc_column_length(j->left) != expect ||
        coproc_column_length(j->right) != expect)
        return 0;
    uint8_t *seen = calloc(d->n, 1);
    if (!seen)
        return 0;
    int ok = 1;
    for (size_t i = 0; i < expect && ok; i++) {
        ok = l[i] < d->dim_n && r[i] < d->n && !seen[r[i]] && d->dim[l[i]] == d->keys[r[i]];
        if (ok)
            seen[r[i]] = 1;
    }
    free(seen);
    return ok;
}

/* 1 when r is the right result of p. */
static int check(pending *p, coproc_result *r)
{
    dataset *d = p->ds;
    const coproc_op *op = &p->op;
    size_t n = d->n;
    switch (op->kind) {
    case COPROC_OP_REDUCE: {
        const coproc_scalar *s = &r->scalar;
        if (op->reduce == COPROC_REDUCE_COUNT)
            return s->v.u64 == n;
        if (s->count != n)
            return 0;
        if (is_float(d->type)) {
            double acc = op->reduce == COPROC_REDUCE_SUM   ? 0
                         : op->reduce == COPROC_REDUCE_MIN ? INFINITY
                                                           : -INFINITY;
            for (size_t i = 0; i < n; i++) {
                double v = val_f(d, i);
                if (op->reduce == COPROC_REDUCE_SUM)
                    acc += v; /* exact: multiples of 1/8 far below 2^50 */
                else if (op->reduce == COPROC_REDUCE_MIN)
                    acc = v < acc ? v : acc;
                else
                    acc = v > acc ? v : acc;
            }
            return s->type == COPROC_FLOAT64 && s->v.f64 == acc;
        }
        int64_t acc = op->reduce == COPROC_REDUCE_SUM   ? 0
                      : op->reduce == COPROC_REDUCE_MIN ? INT64_MAX
                                                        : INT64_MIN;
        for (size_t i = 0; i < n; i++) {
            int64_t v = val_i(d, i);
            if (op->reduce == COPROC_REDUCE_SUM)
                acc = (int64_t)((uint64_t)acc + (uint64_t)v);
            else if (op->reduce == COPROC_REDUCE_MIN)
                acc = v < acc ? v : acc;
            else
                acc = v > acc ? v : acc;
        }
        return s->v.i64 == acc;
    }
    case COPROC_OP_SELECT: {
        uint64_t count = 0;
        if (p->bitmap) {
            const uint32_t *bm = coproc_column_host_data(r->column);
            size_t words = (n + 31) / 32;
            if (!bm || coproc_column_length(r->column) != words)
                return 0;
            for (size_t w = 0; w < words; w++) {
                uint32_t expect = 0;
                for (size_t b = 0; b < 32 && w * 32 + b < n; b++)
                    if (filter_holds(d, p, w * 32 + b)) {
                        expect |= 1u << b;
                        count++;
                    }
                if (bm[w] != expect)
                    return 0;
            }
            return r->count == count;
        }
        const uint32_t *pos = coproc_column_host_data(r->column);
        size_t len = coproc_column_length(r->column);
        for (size_t i = 0; i < n; i++)
            if (filter_holds(d, p, i)) {
                if (count >= len || !pos || pos[count] != i)
                    return 0;
                count++;
            }
        return count == len && r->count == count;
    }
    case COPROC_OP_MAP:
        if (!r->column || coproc_column_length(r->column) != n ||
            coproc_column_type(r->column) != d->type)
            return 0;
        for (size_t i = 0; i < n; i++)
            if (!map_ok(d, op, r->column, i))
                return 0;
        return 1;
    case COPROC_OP_GATHER:
        if (!r->column || coproc_column_length(r->column) != n)
            return 0;
        for (size_t i = 0; i < n; i++)
            if (!same_val(d, r->column, i, d->pos[i]))
                return 0;
        return 1;
    case COPROC_OP_SCAN: {
        if (!r->column || coproc_column_length(r->column) != n)
            return 0;
        double accf = 0;
        int64_t acc = 0;
        for (size_t i = 0; i < n; i++) {
            if (is_float(d->type)) {
                double before = accf;
                accf += val_f(d, i);
                if (col_f(r->column, i) != (op->exclusive ? before : accf))
                    return 0;
            } else {
                int64_t before = acc;
                acc = (int64_t)((uint64_t)acc + (uint64_t)val_i(d, i));
                if (col_i(r->column, i) != (op->exclusive ? before : acc))
                    return 0;
            }
        }
        return 1;
    }
    case COPROC_OP_SORT: {
        const uint32_t *ord = ref_order(d);
        if (!ord || !r->column || coproc_column_length(r->column) != n)
            return 0;
        for (size_t i = 0; i < n; i++)
            if (!same_val(d, r->column, i, ord[i]))
                return 0;
        if (op->b) { /* keys permuted alongside, stably */
            const int32_t *v = coproc_column_host_data(r->column2);
            if (!v || coproc_column_length(r->column2) != n)
                return 0;
            for (size_t i = 0; i < n; i++)
                if (v[i] != d->keys[ord[i]])
                    return 0;
        }
        return 1;
    }
    case COPROC_OP_GROUP_BY: {
        if (ref_groups(d) != 0)
            return 0;
        const coproc_group_result *g = &r->groups;
        size_t expect = 0, slots = 2 * (size_t)d->groups;
        for (size_t k = 0; k < slots; k++)
            expect += d->gcount[k] > 0;
        if (g->groups != expect || r->count != expect || coproc_column_length(g->keys) != expect)
            return 0;
        unsigned aggs = op->aggs ? op->aggs : COPROC_GROUP_ALL;
        if (!g->count || ((aggs & COPROC_GROUP_SUM) && !g->sum) ||
            ((aggs & COPROC_GROUP_MIN) && !g->min) || ((aggs & COPROC_GROUP_MAX) && !g->max))
            return 0;
        uint8_t *seen = calloc(slots, 1);
        if (!seen)
            return 0;
        int ok = 1;
        int64_t prev = INT64_MIN;
        for (size_t i = 0; i < expect && ok; i++) {
            int64_t k = col_i(g->keys, i);
            ok = k >= 0 && (size_t)k < slots && !seen[k] && d->gcount[k] > 0 &&
                 (uint64_t)col_i(g->count, i) == d->gcount[k] && (!op->sorted || k > prev);
            if (!ok)
                break;
            seen[k] = 1;
            prev = k;
            if (is_float(d->type)) {
                ok = (!(aggs & COPROC_GROUP_SUM) || col_f(g->sum, i) == d->gsumf[k]) &&
                     (!(aggs & COPROC_GROUP_MIN) || col_f(g->min, i) == d->gminf[k]) &&
                     (!(aggs & COPROC_GROUP_MAX) || col_f(g->max, i) == d->gmaxf[k]);
            } else {
                ok = (!(aggs & COPROC_GROUP_SUM) || col_i(g->sum, i) == d->gsum[k]) &&
                     (!(aggs & COPROC_GROUP_MIN) || col_i(g->min, i) == d->gmin[k]) &&
                     (!(aggs & COPROC_GROUP_MAX) || col_i(g->max, i) == d->gmax[k]);
            }
        }
        free(seen);
        return ok;
    }
    case COPROC_OP_HASH_JOIN:
        if (op->variant == COPROC_VARIANT_JOIN_COUNT) {
            uint64_t expect = 0;
            for (size_t i = 0; i < n; i++)
                expect += d->in_dim[d->keys[i]];
            return r->count == expect;
        }
        return r->count == r->join.count && join_ok(d, &r->join);
    case COPROC_OP_MERGE_JOIN:
        return r->count == r->join.count && join_ok(d, &r->join);
    case COPROC_OP_SEMI_JOIN: {
        const uint32_t *pos = coproc_column_host_data(r->column);
        size_t len = coproc_column_length(r->column);
        uint64_t count = 0;
        for (size_t i = 0; i < n; i++)
            if (d->in_dim[d->keys[i]]) {
                if (count >= len || !pos || pos[count] != i)
                    return 0;
                count++;
            }
        return count == len && r->count == count;
    }
    default:
        return 0;
    }
}

/* ---------------------------------------------------------------- operators */

/* A random operator over d into p->op. */
static void make_op(worker *w, dataset *d, pending *p)
{
    uint64_t *rng = &w->rng;
    memset(p, 0, sizeof *p);
    p->ds = d;
    int isf = is_float(d->type);
    coproc_op_kind kind = (coproc_op_kind)rng_below(rng, COPROC_OP_KIND_COUNT);
    coproc_op_init(&p->op, kind);
    coproc_op *op = &p->op;
    size_t pick = (size_t)rng_below(rng, d->n);
    switch (kind) {
    case COPROC_OP_REDUCE:
        op->a = d->cvals;
        op->reduce = (coproc_reduce_op)rng_below(rng, 4);
        break;
    case COPROC_OP_SELECT: {
        static const coproc_cmp cmps[] = {COPROC_CMP_LT, COPROC_CMP_GE, COPROC_CMP_EQ,
                                          COPROC_CMP_NE, COPROC_CMP_RANGE};
        coproc_predicate *f = &op->filter.first;
        f->col = d->cvals;
        f->cmp = cmps[rng_below(rng, 5)];
        if (isf) {
            f->a.f64 = val_f(d, pick);
            f->b.f64 = f->a.f64 + (double)rng_below(rng, 2 * VAL_RANGE);
        } else {
            f->a.i64 = val_i(d, pick);
            f->b.i64 = f->a.i64 + (int64_t)rng_below(rng, 2 * VAL_RANGE) *
                                      (d->type == COPROC_INT64 ? 1000003 : 1);
            if (d->type == COPROC_INT32 && f->b.i64 > INT32_MAX)
                f->b.i64 = INT32_MAX;
        }
        if (rng_below(rng, 3) == 0) {
            p->second = 1;
            op->filter.logic = rng_below(rng, 2) ? COPROC_LOGIC_AND : COPROC_LOGIC_OR;
            op->filter.second = (coproc_predicate){
                .col = d->ckeys, .cmp = COPROC_CMP_LT, .a.i64 = (int64_t)d->groups / 2};
        }
        if (rng_below(rng, 3) == 0) {
            p->bitmap = 1;
            op->variant = COPROC_VARIANT_SELECT_BITMAP;
        }
        break;
    }
    case COPROC_OP_MAP:
        op->a = d->cvals;
        op->arith = (coproc_arith)rng_below(rng, 4);
        if (rng_below(rng, 4) == 0) {
            op->b = d->cvals; /* a op a */
        } else if (isf) {
            op->c.f64 = (double)rng_range(rng, -64, 64) / 8.0;
        } else {
            op->c.i64 = rng_range(rng, -1000, 1000); /* 0 included: x / 0 is 0 */
        }
        if (op->arith == COPROC_ARITH_DIV && isf && op->b)
            op->arith = COPROC_ARITH_SUB; /* 0/0 would be NaN: fine, but keep it exact */
        break;
    case COPROC_OP_GATHER:
        op->a = d->cvals;
        op->b = d->cpos;
        break;
    case COPROC_OP_SCAN:
        op->a = d->cvals;
        op->exclusive = (int)rng_below(rng, 2);
        break;
    case COPROC_OP_GROUP_BY: {
        static const unsigned aggs[] = {0, COPROC_GROUP_COUNT | COPROC_GROUP_SUM,
                                        COPROC_GROUP_COUNT | COPROC_GROUP_MIN | COPROC_GROUP_MAX,
                                        COPROC_GROUP_ALL};
        op->a = d->ckeys;
        op->b = d->cvals;
        op->sorted = (int)rng_below(rng, 2);
        op->aggs = aggs[rng_below(rng, 4)];
        break;
    }
    case COPROC_OP_SORT:
        op->a = d->cvals;
        op->b = rng_below(rng, 2) ? d->ckeys : NULL;
        break;
    case COPROC_OP_HASH_JOIN:
        op->a = d->cdim;
        op->b = d->ckeys;
        if (rng_below(rng, 3) == 0)
            op->variant = COPROC_VARIANT_JOIN_COUNT;
        break;
    case COPROC_OP_MERGE_JOIN:
        op->a = d->cdim;
        op->b = d->ckeys;
        break;
    default: /* SEMI_JOIN */
        op->a = d->ckeys;
        op->b = d->cdim;
        break;
    }
}

/* Wait on p (sometimes in a loop of short timed waits), check and count it. */

/* With a fault injected an operator may end with the fault's clear status:
 * DEVICE_LOST (device_lost), or under COPROC_FAULT an allocation, driver or
 * build failure that struck its run and its retry (faulted). 1 if counted. */
static int count_fault(shared *sh, coproc_status s)
{
    if (sh->fault && s == COPROC_DEVICE_LOST) {
        atomic_fetch_add(&sh->c.device_lost, 1);
        return 1;
    }
    if (sh->injecting && (s == COPROC_DEVICE_OUT_OF_MEMORY || s == COPROC_DRIVER_ERROR ||
                          s == COPROC_BUILD_FAILED)) {
        atomic_fetch_add(&sh->c.faulted, 1);
        return 1;
    }
    return 0;
}

static void finish(worker *w, pending *p)
{
    shared *sh = w->sh;
    coproc_result r;
    memset(&r, 0, sizeof r);
    coproc_status s;
    uint64_t mode = rng_below(&w->rng, 4);
    if (mode == 0) {
        /* timed waits: a few milliseconds each, TIMEOUT until it is done */
        while ((s = coproc_wait_timeout(p->t, 0.001 * (double)(1 + rng_below(&w->rng, 4)), &r)) ==
               COPROC_TIMEOUT)
            atomic_fetch_add(&sh->c.timeouts, 1);
    } else if (mode == 1) {
        while (!coproc_task_done(p->t)) {
            atomic_fetch_add(&sh->c.polls, 1);
            struct timespec ts = {0, 200000};
            nanosleep(&ts, NULL);
        }
        s = coproc_wait(p->t, &r);
    } else {
        s = coproc_wait(p->t, &r);
    }
    p->t = NULL;
    atomic_fetch_add(&sh->c.waited, 1);
    in_flight_add(sh, -1);
    p->ds->refs--;
    if (s == COPROC_OK) {
        if (check(p, &r)) {
            atomic_fetch_add(&sh->c.completed, 1);
        } else {
            atomic_fetch_add(&sh->c.wrong, 1);
            note(sh, "WRONG: %s (variant %d) over %zu %s rows on device %d",
                 coproc_op_kind_name(p->op.kind), (int)p->op.variant, p->ds->n,
                 coproc_type_name(p->ds->type), r.device);
        }
        coproc_result_free(&r);
    } else if (count_fault(sh, s)) {
    } else {
        atomic_fetch_add(&sh->c.failed, 1);
        note(sh, "FAILED: %s over %zu %s rows: %s (%s)", coproc_op_kind_name(p->op.kind), p->ds->n,
             coproc_type_name(p->ds->type), coproc_status_name(s), coproc_errmsg(sh->rt));
    }
}

/* Submit one random operator into w->win[w->n]; 0 on success. */
static int submit_one(worker *w)
{
    shared *sh = w->sh;
    int k = (int)rng_below(&w->rng, DATASETS);
    dataset *d = w->ds[k];
    if (d->refs == 0 && d->uses >= REUSE) { /* a fresh table: new sizes and types */
        dataset *nd = dataset_make(sh, &w->rng);
        if (nd) {
            dataset_free(d);
            w->ds[k] = d = nd;
            atomic_fetch_add(&sh->c.regenerated, 1);
        }
    }
    pending *p = &w->win[w->n];
    make_op(w, d, p);
    coproc_status s = coproc_submit(sh->rt, &p->op, &p->t);
    if (s != COPROC_OK) {
        if (!count_fault(sh, s)) {
            atomic_fetch_add(&sh->c.failed, 1);
            note(sh, "submit %s: %s (%s)", coproc_op_kind_name(p->op.kind), coproc_status_name(s),
                 coproc_errmsg(sh->rt));
        }
        return -1;
    }
    d->uses++;
    d->refs++;
    w->n++;
    atomic_fetch_add(&sh->c.submitted, 1);
    atomic_fetch_add(&sh->c.by_kind[p->op.kind], 1);
    in_flight_add(sh, 1);
    return 0;
}

/* ---------------------------------------------------------------- queries */

/* A table for queries: keys k in [0, groups), values v (int32 or int64),
 * a filter column f in [0, 100). */
struct query_data {
    size_t n;
    int groups;
    int32_t *k, *f;
    int64_t *v64;
    int32_t *v32;
    coproc_column *ck, *cv, *cf;
    coproc_table *table;
    coproc_plan *plan;
    coproc_query_task *task;
    int threshold;
    coproc_query_mode mode;
    int uses;
};

static void query_data_free(query_data *q)
{
    if (!q)
        return;
    coproc_plan_free(q->plan);
    coproc_table_free(q->table);
    coproc_column_free(q->ck);
    coproc_column_free(q->cv);
    coproc_column_free(q->cf);
    free(q->k);
    free(q->f);
    free(q->v32);
    free(q->v64);
    free(q);
}

static query_data *query_data_make(shared *sh, uint64_t *rng)
{
    query_data *q = calloc(1, sizeof *q);
    if (!q)
        return NULL;
    q->n = rng_rows(rng, sh->cfg.max_rows / 4 > 0 ? sh->cfg.max_rows / 4 : 1);
    q->groups = GROUP_CHOICES[rng_below(rng, 4)];
    int wide = (int)rng_below(rng, 2);
    q->k = malloc(q->n * sizeof *q->k);
    q->f = malloc(q->n * sizeof *q->f);
    if (wide)
        q->v64 = malloc(q->n * sizeof *q->v64);
    else
        q->v32 = malloc(q->n * sizeof *q->v32);
    if (!q->k || !q->f || (!q->v64 && !q->v32)) {
        query_data_free(q);
        return NULL;
    }
    for (size_t i = 0; i < q->n; i++) {
        q->k[i] = (int32_t)rng_below(rng, (uint64_t)q->groups);
        q->f[i] = (int32_t)rng_below(rng, 100);
        int64_t v = rng_range(rng, -VAL_RANGE, VAL_RANGE);
        if (wide)
            q->v64[i] = v * 1000003;
        else
            q->v32[i] = (int32_t)v;
    }
    coproc_runtime *rt = sh->rt;
    if (coproc_column_wrap(rt, COPROC_INT32, q->k, q->n, &q->ck) != COPROC_OK ||
        coproc_column_wrap(rt, COPROC_INT32, q->f, q->n, &q->cf) != COPROC_OK ||
        coproc_column_wrap(rt, wide ? COPROC_INT64 : COPROC_INT32,
                           wide ? (void *)q->v64 : (void *)q->v32, q->n, &q->cv) != COPROC_OK ||
        coproc_table_create(rt, &q->table) != COPROC_OK ||
        coproc_table_add(q->table, "k", q->ck) != COPROC_OK ||
        coproc_table_add(q->table, "v", q->cv) != COPROC_OK ||
        coproc_table_add(q->table, "f", q->cf) != COPROC_OK) {
        note(sh, "query table: %s", coproc_errmsg(rt));
        query_data_free(q);
        return NULL;
    }
    return q;
}

/* SELECT k, SUM(v) AS s, COUNT(*) AS c FROM t WHERE f < threshold GROUP BY k */
static coproc_status query_submit(shared *sh, query_data *q, uint64_t *rng)
{
    coproc_plan *p = NULL;
    coproc_status s = coproc_plan_create(sh->rt, &p);
    if (s != COPROC_OK)
        return s;
    q->plan = p;
    q->threshold = (int)rng_below(rng, 101);
    coproc_node *scan = coproc_plan_scan(p, q->table, "t");
    coproc_node *filt =
        coproc_plan_filter(p, scan,
                           coproc_expr_compare(p, COPROC_CMP_LT, coproc_expr_column(p, "f"),
                                               coproc_expr_int(p, q->threshold)));
    const char *keys[] = {"k"};
    coproc_aggregate aggs[] = {{COPROC_AGG_SUM, coproc_expr_column(p, "v"), "s"},
                               {COPROC_AGG_COUNT, NULL, "c"}};
    coproc_node *root = coproc_plan_group_by(p, filt, 1, keys, 2, aggs);
    coproc_query_options o;
    coproc_query_options_init(&o);
    o.mode = q->mode = rng_below(rng, 2) ? COPROC_QUERY_FUSED : COPROC_QUERY_OPERATORS;
    s = coproc_query_submit(p, root, &o, &q->task);
    if (s != COPROC_OK) {
        note(sh, "coproc_query_submit: %s (%s)", coproc_status_name(s), coproc_plan_errmsg(p));
        coproc_plan_free(p);
        q->plan = NULL;
        q->task = NULL;
    }
    return s;
}

static int query_check(const query_data *q, const coproc_query_result *r, char *why, size_t len)
{
    size_t g = (size_t)q->groups;
    int64_t *sum = calloc(g, sizeof *sum);
    uint64_t *cnt = calloc(g, sizeof *cnt);
    uint8_t *seen = calloc(g, 1);
    int ok = sum && cnt && seen && r->table;
    for (size_t i = 0; ok && i < q->n; i++)
        if (q->f[i] < q->threshold) {
            int64_t v = q->v64 ? q->v64[i] : q->v32[i];
            sum[q->k[i]] = (int64_t)((uint64_t)sum[q->k[i]] + (uint64_t)v);
            cnt[q->k[i]]++;
        }
    size_t expect = 0;
    for (size_t k = 0; ok && k < g; k++)
        expect += cnt[k] > 0;
    const coproc_column *ck = ok ? coproc_table_column(r->table, "k") : NULL;
    const coproc_column *cs = ok ? coproc_table_column(r->table, "s") : NULL;
    const coproc_column *cc = ok ? coproc_table_column(r->table, "c") : NULL;
    size_t rows = r->table ? coproc_table_rows(r->table) : 0;
    snprintf(why, len, "%zu groups expected, %zu given", expect, rows);
    ok = ok && ck && cs && cc && rows == expect &&
         (rows == 0 || (coproc_column_host_data(ck) && coproc_column_host_data(cs) &&
                        coproc_column_host_data(cc)));
    for (size_t i = 0; ok && i < expect; i++) {
        int64_t k = col_i(ck, i);
        ok = k >= 0 && (size_t)k < g && !seen[k] && cnt[k] > 0 && col_i(cs, i) == sum[k] &&
             (uint64_t)col_i(cc, i) == cnt[k];
        if (ok)
            seen[k] = 1;
        else
            snprintf(why, len,
                     "row %zu: k %" PRId64 " s %" PRId64 " c %" PRId64 "; expected s %" PRId64
                     " c %" PRIu64,
                     i, k, col_i(cs, i), col_i(cc, i), k >= 0 && (size_t)k < g ? sum[k] : 0,
                     k >= 0 && (size_t)k < g ? cnt[k] : 0);
    }
    free(sum);
    free(cnt);
    free(seen);
    return ok;
}

static void query_finish(worker *w)
{
    shared *sh = w->sh;
    query_data *q = w->qd;
    if (!q || !q->task)
        return;
    coproc_query_result r;
    memset(&r, 0, sizeof r);
    coproc_status s = coproc_query_wait(q->task, &r);
    q->task = NULL;
    if (s == COPROC_OK) {
        atomic_fetch_add(&sh->c.query_kernels_built, r.kernels_built);
        char why[256];
        if (query_check(q, &r, why, sizeof why)) {
            atomic_fetch_add(&sh->c.queries, 1);
        } else {
            char where[128] = "";
            for (int i = 0; i < r.pipelines && strlen(where) < 100; i++)
                snprintf(where + strlen(where), sizeof where - strlen(where), " %d%s",
                         r.pipeline[i].device, r.pipeline[i].fused ? "f" : "o");
            atomic_fetch_add(&sh->c.wrong, 1);
            note(sh,
                 "WRONG: query (%s) over %zu rows (%s values), %d groups, f < %d: %s; "
                 "pipelines on devices%s; note '%s'",
                 q->mode == COPROC_QUERY_FUSED ? "fused" : "operators", q->n,
                 q->v64 ? "int64" : "int32", q->groups, q->threshold, why, where, r.note);
        }
        coproc_query_result_free(&r);
    } else if (count_fault(sh, s)) {
    } else {
        atomic_fetch_add(&sh->c.failed, 1);
        note(sh, "FAILED: query: %s (%s)", coproc_status_name(s), coproc_errmsg(sh->rt));
    }
    coproc_plan_free(q->plan);
    q->plan = NULL;
}

/* A query now and then: the previous one is waited on first. */
static void maybe_query(worker *w)
{
    shared *sh = w->sh;
    if (!sh->cfg.queries || rng_below(&w->rng, 8) != 0)
        return;
    query_finish(w);
    if (w->qd && w->qd->uses >= 8) {
        query_data_free(w->qd);
        w->qd = NULL;
    }
    if (!w->qd && !(w->qd = query_data_make(sh, &w->rng)))
        return;
    w->qd->uses++;
    coproc_status s = query_submit(sh, w->qd, &w->rng);
    if (s != COPROC_OK)
        atomic_fetch_add(&sh->c.failed, 1);
}

/* ---------------------------------------------------------------- threads */

static void *worker_main(void *arg)
{
    worker *w = arg;
    shared *sh = w->sh;
    while (now_s() < sh->deadline) {
        maybe_query(w);
        while (w->n < sh->cfg.window && now_s() < sh->deadline)
            if (submit_one(w) != 0)
                break;
        if (w->n == 0)
            continue;
        /* the oldest mostly; sometimes one at random (out of order) */
        int i = rng_below(&w->rng, 4) == 0 ? (int)rng_below(&w->rng, (uint64_t)w->n) : 0;
        finish(w, &w->win[i]);
        memmove(&w->win[i], &w->win[i + 1], (size_t)(w->n - i - 1) * sizeof w->win[0]);
        w->n--;
    }
    query_finish(w);
    /* Wait on what is in flight, then submit a fresh full window and leave it
     * un-waited: the main thread shuts down with it in flight (with more
     * threads x window than the queues hold, some of it is still queued). */
    while (w->n > 0) {
        finish(w, &w->win[w->n - 1]);
        w->n--;
    }
    pthread_barrier_wait(&sh->end); /* every thread's window at once */
    for (int tries = 0; w->n < sh->cfg.window && tries < 4 * sh->cfg.window; tries++)
        submit_one(w);
    atomic_fetch_add(&sh->done, 1);
    return NULL;
}

/* ---------------------------------------------------------------- memory */

/* VmRSS or VmHWM of this process in bytes (0 if unknown). */
static uint64_t proc_status_kb(const char *field)
{
    FILE *f = fopen("/proc/self/status", "r");
    if (!f)
        return 0;
    char line[256];
    uint64_t v = 0;
    size_t len = strlen(field);
    while (fgets(line, sizeof line, f))
        if (strncmp(line, field, len) == 0 && line[len] == ':') {
            v = strtoull(line + len + 1, NULL, 10) * 1024;
            break;
        }
    fclose(f);
    return v;
}

static uint64_t peak_rss(void)
{
    struct rusage ru;
    uint64_t a = 0, b = proc_status_kb("VmHWM");
    if (getrusage(RUSAGE_SELF, &ru) == 0)
        a = (uint64_t)ru.ru_maxrss * 1024;
    return a > b ? a : b;
}

/* ---------------------------------------------------------------- main */

typedef struct monitor {
    shared *sh;
    double t0;
    int started;
    atomic_int stop;
    uint64_t rss_q[4]; /* most VmRSS sampled in each quarter of the run (the 4th: to the close) */
} monitor;

static void *monitor_main(void *arg)
{
    monitor *m = arg;
    shared *sh = m->sh;
    double grace = 60 + sh->cfg.seconds;
    while (!atomic_load(&m->stop)) {
        struct timespec ts = {0, 20 * 1000000};
        nanosleep(&ts, NULL);
        double t = now_s();
        uint64_t rss = proc_status_kb("VmRSS");
        int q = (int)((t - m->t0) / sh->cfg.seconds * 4);
        q = q < 0 ? 0 : q > 3 ? 3 : q;
        if (rss > m->rss_q[q])
            m->rss_q[q] = rss;
        if (t > sh->deadline + grace && atomic_load(&sh->done) < m->started) {
            fprintf(stderr,
                    "coproc-load: HANG: %d of %d threads still running %.0f s after the end "
                    "(submitted %" PRIu64 ", waited %" PRIu64 ", in flight %d); aborting\n",
                    m->started - atomic_load(&sh->done), m->started, t - sh->deadline,
                    (uint64_t)sh->c.submitted, (uint64_t)sh->c.waited,
                    atomic_load(&sh->c.in_flight));
            abort();
        }
    }
    return NULL;
}

static void on_alarm(int sig)
{
    (void)sig;
    static const char msg[] = "coproc-load: HANG: shutdown (drain, waits, close) did not end; "
                              "aborting\n";
    if (write(2, msg, sizeof msg - 1) < 0) {
        /* nothing more to do */
    }
    abort();
}

static void usage(FILE *f)
{
    fprintf(f, "usage: coproc-load [--seconds S] [--threads N] [--devices SPEC] [--window W]\n"
               "                   [--queue-depth Q] [--queries] [--no-zero-copy]\n"
               "                   [--max-rows N] [--json FILE|-] [--seed S]\n"
               "Many threads submit a random mix of operators (reduce, select, map, gather,\n"
               "scan, group-by, sort, hash/merge/semi join over int32, int64 and float64\n"
               "host columns of 1 to --max-rows rows) for S seconds, each keeping W tasks in\n"
               "flight; every result is checked against a C reference. At the end each\n"
               "thread leaves its last window un-waited: the runtime is drained, half of\n"
               "those tasks waited on, the columns freed and the runtime closed.\n"
               "  --seconds S       how long threads submit (default 20)\n"
               "  --threads N       submitting threads (default 8)\n"
               "  --devices SPEC    coproc_options.devices (default all)\n"
               "  --window W        tasks in flight per thread (default 4, at most 64)\n"
               "  --queue-depth Q   each device's ready queue (default 16: back-pressure)\n"
               "  --queries         also run filter + group-by query plans, checked too\n"
               "  --no-zero-copy    copy to host-unified devices too\n"
               "  --max-rows N      largest table (default 1048576; sizes log-uniform)\n"
               "  --json FILE|-     a versioned JSON document (schema coproc.load) to FILE\n"
               "                    or stdout (the report then goes to stderr)\n"
               "  --seed S          random seed (default 1)\n"
               "With COPROC_FAULT_STALL set, operators ending in DEVICE_LOST are counted\n"
               "apart (device_lost) and do not fail the run.\n"
               "Exit status: 0 every result right, none failed or lost; 70 a result wrong,\n"
               "failed or lost; 69 no OpenCL device; 64 usage.\n");
}

static int parse_u64(const char *s, uint64_t *out)
{
    char *end;
    errno = 0;
    if (!s || !*s || *s == '-')
        return -1;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || *end)
        return -1;
    *out = v;
    return 0;
}

int main(int argc, char **argv)
{
    shared *sh = calloc(1, sizeof *sh);
    if (!sh)
        return EX_OSERR;
    config *cfg = &sh->cfg;
    *cfg = (config){.seconds = 20,
                    .threads = 8,
                    .window = 4,
                    .queue_depth = 16,
                    .seed = 1,
                    .max_rows = (size_t)1 << 20};
    enum {
        O_SECONDS = 256,
        O_THREADS,
        O_DEVICES,
        O_WINDOW,
        O_QDEPTH,
        O_QUERIES,
        O_NOZC,
        O_JSON,
        O_SEED,
        O_MAXROWS
    };
    static const struct option longopts[] = {{"seconds", required_argument, NULL, O_SECONDS},
                                             {"threads", required_argument, NULL, O_THREADS},
                                             {"devices", required_argument, NULL, O_DEVICES},
                                             {"window", required_argument, NULL, O_WINDOW},
                                             {"queue-depth", required_argument, NULL, O_QDEPTH},
                                             {"queries", no_argument, NULL, O_QUERIES},
                                             {"no-zero-copy", no_argument, NULL, O_NOZC},
                                             {"json", required_argument, NULL, O_JSON},
                                             {"seed", required_argument, NULL, O_SEED},
                                             {"max-rows", required_argument, NULL, O_MAXROWS},
                                             {"help", no_argument, NULL, 'h'},
                                             {NULL, 0, NULL, 0}};
    int c;
    uint64_t v;
    while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
        switch (c) {
        case O_SECONDS: {
            char *end;
            errno = 0;
            cfg->seconds = strtod(optarg, &end);
            if (errno || *end || !(cfg->seconds > 0) || cfg->seconds > 86400)
                goto bad;
            break;
        }
        case O_THREADS:
            if (parse_u64(optarg, &v) || v < 1 || v > 256)
                goto bad;
            cfg->threads = (int)v;
            break;
        case O_DEVICES:
            cfg->devices = optarg;
            break;
        case O_WINDOW:
            if (parse_u64(optarg, &v) || v < 1 || v > MAXWIN)
                goto bad;
            cfg->window = (int)v;
            break;
        case O_QDEPTH:
            if (parse_u64(optarg, &v) || v < 1 || v > 100000)
                goto bad;
            cfg->queue_depth = (int)v;
            break;
        case O_QUERIES:
            cfg->queries = 1;
            break;
        case O_NOZC:
            cfg->no_zero_copy = 1;
            break;
        case O_JSON:
            cfg->json = optarg;
            break;
        case O_SEED:
            if (parse_u64(optarg, &v))
                goto bad;
            cfg->seed = v;
            break;
        case O_MAXROWS:
            if (parse_u64(optarg, &v) || v < 1 || v > ((uint64_t)1 << 28))
                goto bad;
            cfg->max_rows = (size_t)v;
            break;
        case 'h':
            usage(stdout);
            free(sh);
            return 0;
        default:
            goto bad_quiet;
        }
    }
    if (optind != argc) {
        fprintf(stderr, "coproc-load: unexpected argument '%s'\n", argv[optind]);
        goto bad_quiet;
    }
    const char *stall = getenv("COPROC_FAULT_STALL");
    const char *inject = getenv("COPROC_FAULT");
    sh->injecting = inject && *inject;
    sh->fault = (stall && *stall) || sh->injecting;
    FILE *rep = cfg->json && strcmp(cfg->json, "-") == 0 ? stderr : stdout;

    signal(SIGALRM, on_alarm);
    coproc_options o;
    coproc_options_init(&o);
    o.devices = cfg->devices;
    o.queue_depth = cfg->queue_depth;
    o.disable_zero_copy = cfg->no_zero_copy;
    coproc_status s = coproc_open(&o, &sh->rt);
    if (s != COPROC_OK) {
        fprintf(stderr, "coproc-load: coproc_open: %s: %s\n", coproc_status_name(s),
                coproc_errmsg(sh->rt));
        coproc_close(sh->rt);
        free(sh);
        return s == COPROC_NO_PLATFORM || s == COPROC_NO_DEVICE || s == COPROC_DRIVER_ERROR
                   ? EX_UNAVAILABLE
                   : EX_SOFTWARE;
    }
    coproc_runtime *rt = sh->rt;
    sh->ndev = coproc_device_count(rt);
    if (sh->ndev < 1 || sh->ndev > MAXDEV) {
        int none = sh->ndev < 1;
        fprintf(stderr, "coproc-load: %d devices\n", sh->ndev);
        coproc_close(rt);
        free(sh);
        return none ? EX_UNAVAILABLE : EX_SOFTWARE;
    }
    coproc_device_info info[MAXDEV];
    sh->fp64 = 1;
    for (int d = 0; d < sh->ndev; d++) {
        coproc_device_info_get(rt, d, &info[d]);
        sh->fp64 &= info[d].has_fp64 != 0;
    }

    worker *w = calloc((size_t)cfg->threads, sizeof *w);
    if (!w)
        return EX_OSERR;
    int started = 0;
    pthread_barrier_init(&sh->end, NULL, (unsigned)cfg->threads);
    for (int i = 0; i < cfg->threads; i++) {
        w[i].id = i;
        w[i].sh = sh;
        w[i].rng = cfg->seed * 0x100000001b3ull + (uint64_t)i * 0x9e3779b97f4a7c15ull + 1;
        for (int k = 0; k < DATASETS; k++)
            if (!(w[i].ds[k] = dataset_make(sh, &w[i].rng))) {
                fprintf(stderr, "coproc-load: out of memory making tables\n");
                return EX_OSERR;
            }
    }
    uint64_t rss_base = proc_status_kb("VmRSS");
    double t0 = now_s();
    sh->deadline = t0 + cfg->seconds;
    for (int i = 0; i < cfg->threads; i++, started++)
        if (pthread_create(&w[i].th, NULL, worker_main, &w[i]) != 0) {
            fprintf(stderr, "coproc-load: cannot start thread %d\n", i);
            exit(EX_OSERR); /* the others would wait at the barrier */
        }
    /* Watch (a thread of its own, so that the drain starts as soon as the
     * last thread is joined): sample the resident memory; give up (abort: a
     * core to look at) when the threads outlive their time by far. */
    monitor mon = {.sh = sh, .t0 = t0, .started = started};
    pthread_t mon_th;
    int mon_ok = pthread_create(&mon_th, NULL, monitor_main, &mon) == 0;
    for (int i = 0; i < started; i++)
        pthread_join(w[i].th, NULL);
    double t_submit_end = now_s();

    /* Shutdown with work in flight: drain, every task done, half waited on,
     * columns freed, close (frees the other half). A hang here is caught by
     * the alarm. */
    alarm((unsigned)(120 + cfg->seconds));
    uint64_t busy_at_drain = 0; /* tasks left un-waited and not yet done */
    for (int i = 0; i < started; i++)
        for (int t = 0; t < w[i].n; t++)
            busy_at_drain += !coproc_task_done(w[i].win[t].t);
    double t_drain = now_s();
    coproc_drain(rt);
    double drain_s = now_s() - t_drain;
    uint64_t left = 0, not_done = 0, freed_done = 0, freed_by_close = 0;
    for (int i = 0; i < started; i++) {
        worker *x = &w[i];
        int j = 0;
        for (int t = 0; t < x->n; t++) {
            int done = coproc_task_done(x->win[t].t);
            left++;
            not_done += !done;
            if (t % 2 == 0) {
                finish(x, &x->win[t]);
            } else {
                freed_done += done;
                x->win[j++] = x->win[t];
            }
        }
        x->n = j;
    }
    coproc_device_stats ds[MAXDEV];
    for (int d = 0; d < sh->ndev; d++) {
        memset(&ds[d], 0, sizeof ds[d]);
        ds[d].struct_size = sizeof ds[d];
        coproc_device_stats_get(rt, d, &ds[d]);
    }
    for (int i = 0; i < started; i++) {
        freed_by_close += (uint64_t)w[i].n;
        for (int k = 0; k < DATASETS; k++) {
            dataset_free(w[i].ds[k]);
            w[i].ds[k] = NULL;
        }
        query_data_free(w[i].qd);
        w[i].qd = NULL;
    }
    coproc_stats rs;
    memset(&rs, 0, sizeof rs);
    rs.struct_size = sizeof rs;
    uint64_t faults_injected = coproc_stats_get(rt, &rs) == COPROC_OK ? rs.faults_injected : 0;
    coproc_close(rt);
    double drain_close_s = now_s() - t_drain;
    alarm(0);
    atomic_store(&mon.stop, 1);
    if (mon_ok)
        pthread_join(mon_th, NULL);
    const uint64_t *rss_q = mon.rss_q;
    uint64_t peak = peak_rss();

    counters *k = &sh->c;
    uint64_t submitted = k->submitted, completed = k->completed, wrong = k->wrong,
             failed = k->failed, dlost = k->device_lost, waited = k->waited, faulted = k->faulted;
    /* Every submitted task must have ended: waited on (right, wrong, failed
     * or device lost), or left un-waited and found done after the drain (then
     * freed by close). Lost is the rest; a task not done after the drain
     * counts as lost too (and fails the run) even though its wait returned. */
    uint64_t lost = not_done;
    if (submitted > waited + freed_done)
        lost += submitted - waited - freed_done;
    double run_s = t_submit_end - t0;
    double ops_s = run_s > 0 ? (double)(completed + wrong) / run_s : 0;

    fprintf(rep,
            "coproc-load: %d threads x window %d for %.1f s, queue depth %d, %d device%s:", started,
            cfg->window, cfg->seconds, cfg->queue_depth, sh->ndev, sh->ndev > 1 ? "s" : "");
    for (int d = 0; d < sh->ndev; d++)
        fprintf(rep, "%s %s", d ? "," : "", info[d].name);
    fprintf(rep, "\n");
    fprintf(rep,
            "  submitted %" PRIu64 ", completed %" PRIu64 " (%.0f ops/s), wrong %" PRIu64
            ", failed %" PRIu64 ", device_lost %" PRIu64 ", lost %" PRIu64 "\n",
            submitted, completed, ops_s, wrong, failed, dlost, lost);
    if (sh->injecting)
        fprintf(rep,
                "  COPROC_FAULT=%s: %" PRIu64 " OpenCL calls failed on purpose; %" PRIu64
                " operators ended with the fault's status (run and retry struck)\n",
                getenv("COPROC_FAULT"), faults_injected, faulted);
    fprintf(rep,
            "  queries %" PRIu64 " (kernels built for them %" PRIu64 "), timeouts seen %" PRIu64
            ", max in flight %d\n",
            (uint64_t)k->queries, (uint64_t)k->query_kernels_built, (uint64_t)k->timeouts,
            atomic_load(&k->max_in_flight));
    fprintf(rep,
            "  peak RSS %.1f MiB (at start %.1f MiB; most in each quarter of the run %.1f, %.1f, "
            "%.1f, %.1f MiB)\n",
            (double)peak / 1048576, (double)rss_base / 1048576, (double)rss_q[0] / 1048576,
            (double)rss_q[1] / 1048576, (double)rss_q[2] / 1048576, (double)rss_q[3] / 1048576);
    fprintf(rep,
            "  shutdown: %" PRIu64 " tasks left un-waited (%" PRIu64 " not done at the drain, "
            "%" PRIu64 " after it); drain %.3f s, drain+close %.3f s\n",
            left, busy_at_drain, not_done, drain_s, drain_close_s);
    for (int d = 0; d < sh->ndev; d++)
        fprintf(rep, "  device %d: tasks_run %" PRIu64 ", lost %d, tasks_moved %" PRIu64 "\n", d,
                ds[d].tasks_run, ds[d].lost, ds[d].tasks_moved);

    int rc = 0;
    if (cfg->json) {
        json_t *doc = json_object(), *jdev = json_array(), *jper = json_array(),
               *jkind = json_object();
        json_object_set_new(doc, "schema", json_string("coproc.load"));
        json_object_set_new(doc, "version", json_integer(1));
        json_object_set_new(doc, "seconds", json_real(cfg->seconds));
        json_object_set_new(doc, "threads", json_integer(started));
        json_object_set_new(doc, "window", json_integer(cfg->window));
        json_object_set_new(doc, "queue_depth", json_integer(cfg->queue_depth));
        json_object_set_new(doc, "max_rows", json_integer((json_int_t)cfg->max_rows));
        json_object_set_new(doc, "zero_copy", json_boolean(!cfg->no_zero_copy));
        json_object_set_new(doc, "fault_stall", stall && *stall ? json_string(stall) : json_null());
        for (int d = 0; d < sh->ndev; d++) {
            json_array_append_new(jdev, json_string(info[d].name));
            json_t *e = json_object();
            json_object_set_new(e, "tasks_run", json_integer((json_int_t)ds[d].tasks_run));
            json_object_set_new(e, "lost", json_integer(ds[d].lost));
            json_object_set_new(e, "tasks_moved", json_integer((json_int_t)ds[d].tasks_moved));
            json_array_append_new(jper, e);
        }
        for (int i = 0; i < COPROC_OP_KIND_COUNT; i++)
            json_object_set_new(jkind, coproc_op_kind_name((coproc_op_kind)i),
                                json_integer((json_int_t)k->by_kind[i]));
        json_object_set_new(doc, "devices", jdev);
        json_object_set_new(doc, "submitted", json_integer((json_int_t)submitted));
        json_object_set_new(doc, "completed", json_integer((json_int_t)completed));
        json_object_set_new(doc, "wrong", json_integer((json_int_t)wrong));
        json_object_set_new(doc, "failed", json_integer((json_int_t)failed));
        json_object_set_new(doc, "device_lost", json_integer((json_int_t)dlost));
        json_object_set_new(doc, "faulted", json_integer((json_int_t)faulted));
        json_object_set_new(doc, "faults_injected", json_integer((json_int_t)faults_injected));
        json_object_set_new(doc, "lost", json_integer((json_int_t)lost));
        json_object_set_new(doc, "ops_per_second", json_real(ops_s));
        json_object_set_new(doc, "submitted_by_kind", jkind);
        json_object_set_new(doc, "timeouts_seen", json_integer((json_int_t)k->timeouts));
        json_object_set_new(doc, "queries", json_integer((json_int_t)k->queries));
        json_object_set_new(doc, "query_kernels_built",
                            json_integer((json_int_t)k->query_kernels_built));
        json_object_set_new(doc, "peak_rss_bytes", json_integer((json_int_t)peak));
        json_object_set_new(doc, "rss_start_bytes", json_integer((json_int_t)rss_base));
        json_t *jq = json_array();
        for (int q = 0; q < 4; q++)
            json_array_append_new(jq, json_integer((json_int_t)rss_q[q]));
        json_object_set_new(doc, "rss_by_quarter_bytes", jq);
        json_object_set_new(doc, "max_in_flight", json_integer(atomic_load(&k->max_in_flight)));
        json_object_set_new(doc, "per_device", jper);
        json_object_set_new(doc, "shutdown_in_flight", json_integer((json_int_t)left));
        json_object_set_new(doc, "shutdown_busy_at_drain", json_integer((json_int_t)busy_at_drain));
        json_object_set_new(doc, "shutdown_not_done", json_integer((json_int_t)not_done));
        json_object_set_new(doc, "freed_by_close", json_integer((json_int_t)freed_by_close));
        json_object_set_new(doc, "waited", json_integer((json_int_t)waited));
        json_object_set_new(doc, "drain_seconds", json_real(drain_s));
        json_object_set_new(doc, "drain_close_seconds", json_real(drain_close_s));
        int ok;
        if (strcmp(cfg->json, "-") == 0) {
            ok = json_dumpf(doc, stdout, JSON_INDENT(2)) == 0;
            fputc('\n', stdout);
        } else {
            ok = json_dump_file(doc, cfg->json, JSON_INDENT(2)) == 0;
        }
        json_decref(doc);
        if (!ok) {
            fprintf(stderr, "coproc-load: cannot write %s\n", cfg->json);
            rc = EX_CANTCREAT;
        }
    }
    for (int i = 0; i < started; i++)
        for (int k2 = 0; k2 < DATASETS; k2++)
            dataset_free(w[i].ds[k2]);
    free(w);
    free(sh);
    if (wrong || failed || lost) {
        fprintf(stderr,
                "coproc-load: FAIL: wrong %" PRIu64 ", failed %" PRIu64 ", lost %" PRIu64 "\n",
                wrong, failed, lost);
        return EX_SOFTWARE;
    }
    return rc;
bad:
    fprintf(stderr, "coproc-load: bad value for an option: '%s'\n", optarg ? optarg : "");
bad_quiet:
    usage(stderr);
    free(sh);
    return EX_USAGE;
}
