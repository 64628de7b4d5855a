/* workload_real.c - coproc-workload on the real OpenCL devices: a HyPE-style
 * workload (streams of aggregations, selections, group-bys, sorts and hash
 * joins over host columns of mixed sizes) submitted with coproc_submit from
 * several application threads, run once per policy and once per device alone.
 *
 * Each run opens a fresh runtime (so no column is cached on any device at the
 * start), wraps the host arrays as host columns, warms up (every operator kind
 * on every device over separate training columns: the scheduler's training
 * phase is over, the cost models are fitted and the kernel programs built or
 * loaded), and then times the workload: makespan is the wall time from the
 * streams' start to the last result. Figures per device come from
 * coproc_device_stats_get (differences across the measured part) and from the
 * results themselves (where each ran, estimated and measured seconds). Every
 * result, warm-up included, is compared with a plain C reference; results are
 * kept until the run ends and checked then, outside the timed part, unless
 * they grow past RETAIN_CAP, after which the streams check them as they come. */
#include "workload.h"

#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sysexits.h>

#include <jansson.h>

#include "coproc.h"
#include "coproc/inspect.h" /* the estimate coproc_submit makes, policy names */

#define MAXDEV 16
#define RETAIN_CAP ((uint64_t)1 << 30) /* result bytes kept for checking after the run */
#define WARMUP_SIZES 3                 /* training-column sizes, log-spaced min..max rows */
#define WARMUP_REPS 2                  /* x sizes = placements per kind and device (>= 3) */
#define BUS_TABLES 32                  /* host arrays of the bus-bound workload */
#define MAX_REPORTED 5                 /* wrong or failed operators described on stderr */

enum { POLICIES = COPROC_POLICY_FIXED + 1 };

/* ---------------------------------------------------------------- random numbers */

static uint64_t rng_next(uint64_t *s) /* splitmix64 */
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static double rng_unit(uint64_t *s) { return (double)(rng_next(s) >> 11) * 0x1.0p-53; }

/* Uniform in [0, n) for n < 2^32 (multiply-shift; the bias is negligible here). */
static uint64_t rng_below(uint64_t *s, uint64_t n) { return ((rng_next(s) >> 32) * n) >> 32; }

static size_t log_uniform(uint64_t *s, size_t lo, size_t hi)
{
    double v = exp(log((double)lo) + rng_unit(s) * (log((double)hi) - log((double)lo)));
    size_t n = (size_t)llround(v);
    return n < lo ? lo : n > hi ? hi : n;
}

/* ---------------------------------------------------------------- data */

enum { NEED_VALS = 1, NEED_GROUP = 2, NEED_SORT = 4, NEED_JOIN = 8 };
enum { VAL_RANGE = 1000000 }; /* values in [-VAL_RANGE, VAL_RANGE] */

/* One host table: the arrays its operators read, their references, and the
 * host columns of the current run. */
typedef struct table {
    size_t n;
    int needs;
    int groups;            /* keys in [0, groups) */
    size_t dim_n;          /* rows of the join's build side */
    int32_t *vals;         /* every table */
    int32_t *keys;         /* NEED_GROUP */
    int32_t *sortk;        /* NEED_SORT */
    int32_t *fk, *dim;     /* NEED_JOIN: probe keys in [0, 2 dim_n), build keys a permutation */
    /* references */
    int64_t sum, min, max;
    int32_t *sorted_keys, *sorted_vals;
    uint64_t *g_count;
    int64_t *g_sum, *g_min, *g_max;
    uint64_t g_nonempty;
    uint64_t join_matches;
    /* this run's columns */
    coproc_column *cvals, *ckeys, *csortk, *cfk, *cdim;
} table;

typedef struct wtask {
    coproc_op_kind kind;
    int table;
    coproc_reduce_op rop;
    coproc_cmp cmp;
    int32_t a, b;
    uint64_t selected;     /* SELECT: rows that match (the reference count) */
    coproc_column *own;    /* bus-bound: this operator's own column over its table's values */
} wtask;

typedef struct workload {
    table *tables;
    int ntables;
    wtask *tasks;
    int ntasks;
    int kind_count[COPROC_OP_KIND_COUNT];
    int kinds;             /* warm-up: operator kinds trained */
    int own_columns;       /* each task reads its own column (nothing reused) */
    double bytes;          /* of the measured tables' arrays */
    double read_bytes;     /* input bytes of all the operators together */
} workload;

static int32_t *alloc_i32(size_t n) { return malloc((n ? n : 1) * sizeof(int32_t)); }

/* Stable LSD radix sort of (k, v) by k: the reference of COPROC_OP_SORT. */
static int sort_reference(const int32_t *k, const int32_t *v, size_t n, int32_t *ok, int32_t *ov)
{
    uint32_t *ka = malloc((n + 1) * 4), *kb = malloc((n + 1) * 4);
    uint32_t *ia = malloc((n + 1) * 4), *ib = malloc((n + 1) * 4);
    if (!ka || !kb || !ia || !ib) {
        free(ka), free(kb), free(ia), free(ib);
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        ka[i] = (uint32_t)k[i] ^ 0x80000000u;
        ia[i] = (uint32_t)i;
    }
    for (int shift = 0; shift < 32; shift += 8) {
        size_t count[257] = {0};
        for (size_t i = 0; i < n; i++)
            count[((ka[i] >> shift) & 255) + 1]++;
        for (int b = 0; b < 256; b++)
            count[b + 1] += count[b];
        for (size_t i = 0; i < n; i++) {
            size_t to = count[(ka[i] >> shift) & 255]++;
            kb[to] = ka[i];
            ib[to] = ia[i];
        }
        uint32_t *t = ka; ka = kb; kb = t;
        t = ia; ia = ib; ib = t;
    }
    for (size_t i = 0; i < n; i++) {
        ok[i] = (int32_t)(ka[i] ^ 0x80000000u);
        ov[i] = v[ia[i]];
    }
    free(ka), free(kb), free(ia), free(ib);
    return 0;
}

/* Fill t's arrays (as its needs say) and their references. 0, or -1 out of memory. */
static int table_fill(table *t, uint64_t seed)
{
    uint64_t r = seed;
    size_t n = t->n;
    if (!(t->vals = alloc_i32(n)))
        return -1;
    t->sum = 0;
    t->min = INT32_MAX;
    t->max = INT32_MIN;
    for (size_t i = 0; i < n; i++) {
        int32_t v = (int32_t)rng_below(&r, 2 * VAL_RANGE + 1) - VAL_RANGE;
        t->vals[i] = v;
        t->sum += v;
        if (v < t->min) t->min = v;
        if (v > t->max) t->max = v;
    }
    if (t->needs & NEED_GROUP) {
        t->groups = (int)log_uniform(&r, 16, 4096);
        size_t g = (size_t)t->groups;
        t->keys = alloc_i32(n);
        t->g_count = calloc(g, sizeof *t->g_count);
        t->g_sum = calloc(g, sizeof *t->g_sum);
        t->g_min = malloc(g * sizeof *t->g_min);
        t->g_max = malloc(g * sizeof *t->g_max);
        if (!t->keys || !t->g_count || !t->g_sum || !t->g_min || !t->g_max)
            return -1;
        for (size_t k = 0; k < g; k++) {
            t->g_min[k] = INT32_MAX;
            t->g_max[k] = INT32_MIN;
        }
        for (size_t i = 0; i < n; i++) {
            int32_t k = (int32_t)rng_below(&r, g);
            t->keys[i] = k;
            t->g_count[k]++;
            t->g_sum[k] += t->vals[i];
            if (t->vals[i] < t->g_min[k]) t->g_min[k] = t->vals[i];
            if (t->vals[i] > t->g_max[k]) t->g_max[k] = t->vals[i];
        }
        t->g_nonempty = 0;
        for (size_t k = 0; k < g; k++)
            t->g_nonempty += t->g_count[k] != 0;
    }
    if (t->needs & NEED_SORT) {
        t->sortk = alloc_i32(n);
        t->sorted_keys = alloc_i32(n);
        t->sorted_vals = alloc_i32(n);
        if (!t->sortk || !t->sorted_keys || !t->sorted_vals)
            return -1;
        /* many duplicates in small tables, few in large: stability is tested */
        uint64_t domain = n < 1024 ? 64 : (uint64_t)1 << 32;
        for (size_t i = 0; i < n; i++)
            t->sortk[i] = (int32_t)(uint32_t)(domain == ((uint64_t)1 << 32)
                                                  ? rng_next(&r) >> 32
                                                  : rng_below(&r, domain));
        if (sort_reference(t->sortk, t->vals, n, t->sorted_keys, t->sorted_vals) != 0)
            return -1;
    }
    if (t->needs & NEED_JOIN) {
        t->dim_n = n / 4 > 64 ? n / 4 : 64;
        t->dim = alloc_i32(t->dim_n);
        t->fk = alloc_i32(n);
        if (!t->dim || !t->fk)
            return -1;
        for (size_t i = 0; i < t->dim_n; i++)
            t->dim[i] = (int32_t)i;
        for (size_t i = t->dim_n; i > 1; i--) { /* Fisher-Yates */
            size_t j = rng_below(&r, i);
            int32_t x = t->dim[i - 1];
            t->dim[i - 1] = t->dim[j];
            t->dim[j] = x;
        }
        t->join_matches = 0;
        for (size_t i = 0; i < n; i++) {
            t->fk[i] = (int32_t)rng_below(&r, 2 * t->dim_n);
            t->join_matches += (size_t)t->fk[i] < t->dim_n;
        }
    }
    return 0;
}

static double table_bytes(const table *t)
{
    double per_row = 1 + ((t->needs & NEED_GROUP) != 0) + ((t->needs & NEED_SORT) != 0) +
                     ((t->needs & NEED_JOIN) != 0);
    return 4.0 * ((double)t->n * per_row + ((t->needs & NEED_JOIN) ? (double)t->dim_n : 0));
}

static void table_free(table *t)
{
    free(t->vals), free(t->keys), free(t->sortk), free(t->fk), free(t->dim);
    free(t->sorted_keys), free(t->sorted_vals);
    free(t->g_count), free(t->g_sum), free(t->g_min), free(t->g_max);
    memset(t, 0, sizeof *t);
}

static int needs_of(coproc_op_kind k)
{
    switch (k) {
    case COPROC_OP_GROUP_BY: return NEED_VALS | NEED_GROUP;
    case COPROC_OP_SORT: return NEED_VALS | NEED_SORT;
    case COPROC_OP_HASH_JOIN: return NEED_VALS | NEED_JOIN;
    default: return NEED_VALS;
    }
}

/* A selection's predicate: selectivity ~U(1 %, 50 %) in the mixed workload,
 * 1 % in the bus-bound one (little comes back). */
static void make_predicate(wtask *w, uint64_t *r, int bus_bound)
{
    double sel = bus_bound ? 0.01 : 0.01 + 0.49 * rng_unit(r);
    int32_t width = (int32_t)(sel * 2 * VAL_RANGE);
    if (!bus_bound && rng_below(r, 2) == 0) {
        w->cmp = COPROC_CMP_LT;
        w->a = -VAL_RANGE + width;
    } else {
        w->cmp = COPROC_CMP_RANGE;
        w->a = (int32_t)rng_below(r, (uint64_t)(2 * VAL_RANGE - width)) - VAL_RANGE;
        w->b = w->a + width;
    }
}

static int selected(const wtask *w, int64_t v)
{
    return w->cmp == COPROC_CMP_LT ? v < w->a : (v >= w->a && v < w->b);
}

static void count_selected(wtask *w, const table *t)
{
    w->selected = 0;
    for (size_t i = 0; i < t->n; i++)
        w->selected += (uint64_t)selected(w, t->vals[i]);
}

static void make_task(wtask *w, coproc_op_kind k, int table, uint64_t *r, int bus_bound)
{
    memset(w, 0, sizeof *w);
    w->kind = k;
    w->table = table;
    static const coproc_reduce_op rops[] = {COPROC_REDUCE_SUM, COPROC_REDUCE_MIN,
                                            COPROC_REDUCE_MAX};
    if (k == COPROC_OP_REDUCE)
        w->rop = rops[rng_below(r, 3)];
    if (k == COPROC_OP_SELECT)
        make_predicate(w, r, bus_bound);
}

/* The measured workload. Mixed: tasks/5 tables (4..64) shared by the tasks, so
 * a table may be cached on a device by an earlier operator; kinds 30 % reduce,
 * 30 % select, 15 % group-by, 10 % sort, 15 % hash join. Bus-bound: 60 %
 * reductions and 40 % selections (1 % selective), each over a column of its
 * own (so that nothing is ever cached on a device: every operator moves its
 * input), wrapping one of BUS_TABLES host arrays (to bound host memory). */
static int workload_make(workload *wl, const wl_real_config *cfg)
{
    memset(wl, 0, sizeof *wl);
    uint64_t r = cfg->seed * 0x2545f4914f6cdd1dull + 1;
    wl->ntasks = cfg->tasks;
    if (cfg->bus_bound) {
        wl->ntables = cfg->tasks < BUS_TABLES ? cfg->tasks : BUS_TABLES;
        wl->own_columns = 1;
    } else {
        wl->ntables = cfg->tasks / 5;
        if (wl->ntables < 4) wl->ntables = 4;
        if (wl->ntables > 64) wl->ntables = 64;
        if (wl->ntables > cfg->tasks) wl->ntables = cfg->tasks;
    }
    wl->tables = calloc((size_t)wl->ntables, sizeof *wl->tables);
    wl->tasks = calloc((size_t)wl->ntasks, sizeof *wl->tasks);
    if (!wl->tables || !wl->tasks)
        return -1;
    for (int i = 0; i < wl->ntables; i++) {
        wl->tables[i].n = log_uniform(&r, cfg->min_rows, cfg->max_rows);
        wl->tables[i].needs = NEED_VALS;
    }
    for (int i = 0; i < wl->ntasks; i++) {
        double u = rng_unit(&r);
        coproc_op_kind k;
        int tb;
        if (cfg->bus_bound) {
            k = u < 0.6 ? COPROC_OP_REDUCE : COPROC_OP_SELECT;
            tb = i % wl->ntables;
        } else {
            k = u < 0.30 ? COPROC_OP_REDUCE : u < 0.60 ? COPROC_OP_SELECT
                : u < 0.75 ? COPROC_OP_GROUP_BY : u < 0.85 ? COPROC_OP_SORT
                : COPROC_OP_HASH_JOIN;
            tb = (int)rng_below(&r, (uint64_t)wl->ntables);
        }
        make_task(&wl->tasks[i], k, tb, &r, cfg->bus_bound);
        wl->tables[tb].needs |= needs_of(k);
        wl->kind_count[k]++;
    }
    for (int i = 0; i < wl->ntables; i++) {
        if (table_fill(&wl->tables[i], rng_next(&r)) != 0)
            return -1;
        wl->bytes += table_bytes(&wl->tables[i]);
    }
    for (int i = 0; i < wl->ntasks; i++) {
        const table *t = &wl->tables[wl->tasks[i].table];
        coproc_op_kind k = wl->tasks[i].kind;
        if (k == COPROC_OP_SELECT)
            count_selected(&wl->tasks[i], t);
        wl->read_bytes += 4.0 * (k == COPROC_OP_GROUP_BY || k == COPROC_OP_SORT ? 2.0 * t->n
                                 : k == COPROC_OP_HASH_JOIN ? (double)(t->n + t->dim_n)
                                 : (double)t->n);
    }
    return 0;
}

/* The warm-up: WARMUP_SIZES tables log-spaced over about min..max rows with every
 * array, and per device WARMUP_REPS operators of each kind the workload uses on
 * each of them, forced onto that device. */
static int warmup_make(workload *wl, const workload *measured, const wl_real_config *cfg,
                       int ndev)
{
    memset(wl, 0, sizeof *wl);
    uint64_t r = cfg->seed ^ 0x5bd1e995u;
    wl->ntables = WARMUP_SIZES;
    int kinds = 0;
    for (int k = 0; k < COPROC_OP_KIND_COUNT; k++)
        kinds += measured->kind_count[k] > 0;
    wl->ntasks = ndev * (1 + WARMUP_REPS * WARMUP_SIZES) * kinds;
    wl->tables = calloc((size_t)wl->ntables, sizeof *wl->tables);
    wl->tasks = calloc((size_t)wl->ntasks + 1, sizeof *wl->tasks);
    if (!wl->tables || !wl->tasks)
        return -1;
    /* min/4 .. max/2 rows (at least 4x apart: models need distinct sizes to fit) */
    double lo_rows = cfg->min_rows / 4 > 64 ? (double)(cfg->min_rows / 4) : 64;
    double hi_rows = fmax((double)(cfg->max_rows / 2), 4 * lo_rows);
    for (int i = 0; i < WARMUP_SIZES; i++) {
        double f = WARMUP_SIZES > 1 ? (double)i / (WARMUP_SIZES - 1) : 1;
        double lo = log(lo_rows), hi = log(hi_rows);
        table *t = &wl->tables[i];
        t->n = (size_t)llround(exp(lo + f * (hi - lo)));
        for (int k = 0; k < COPROC_OP_KIND_COUNT; k++)
            if (measured->kind_count[k])
                t->needs |= needs_of((coproc_op_kind)k);
        if (table_fill(t, rng_next(&r)) != 0)
            return -1;
    }
    /* round 0: the smallest size, which builds (or loads) the kernel programs;
     * then every size WARMUP_REPS times. Device-major within each (round, kind),
     * so that every device works at once. */
    int n = 0;
    for (int round = 0; round < 1 + WARMUP_REPS * WARMUP_SIZES; round++)
        for (int k = 0; k < COPROC_OP_KIND_COUNT; k++) {
            if (!measured->kind_count[k])
                continue;
            for (int d = 0; d < ndev; d++) {
                int size = round == 0 ? 0 : (round - 1) % WARMUP_SIZES;
                /* selectivities of 1..50 % even for the bus-bound workload: the
                 * model then tells the cost per row from the cost per match */
                make_task(&wl->tasks[n], (coproc_op_kind)k, size, &r, 0);
                n++;
            }
        }
    wl->kinds = kinds;
    for (int i = 0; i < n; i++)
        if (wl->tasks[i].kind == COPROC_OP_SELECT)
            count_selected(&wl->tasks[i], &wl->tables[wl->tasks[i].table]);
    return 0;
}

static void workload_free(workload *wl)
{
    for (int i = 0; i < wl->ntables; i++)
        table_free(&wl->tables[i]);
    free(wl->tables);
    free(wl->tasks);
    memset(wl, 0, sizeof *wl);
}

/* Host columns over t's arrays for one runtime: wrapped (borrowed), or copied
 * into coproc_column_host_alloc's pinned memory. */
static coproc_status column_make(coproc_runtime *rt, const int32_t *a, size_t n, int pinned,
                                 coproc_column **out)
{
    *out = NULL;
    if (!a)
        return COPROC_OK;
    if (!pinned)
        return coproc_column_wrap(rt, COPROC_INT32, a, n, out);
    coproc_status s = coproc_column_host_alloc(rt, COPROC_INT32, n, out);
    if (s == COPROC_OK && n)
        memcpy(coproc_column_host_data(*out), a, n * sizeof *a);
    return s;
}

static coproc_status tables_open(coproc_runtime *rt, workload *wl, int pinned)
{
    coproc_status s = COPROC_OK;
    for (int i = 0; i < wl->ntables && s == COPROC_OK; i++) {
        table *t = &wl->tables[i];
        if (s == COPROC_OK) s = column_make(rt, t->vals, t->n, pinned, &t->cvals);
        if (s == COPROC_OK) s = column_make(rt, t->keys, t->n, pinned, &t->ckeys);
        if (s == COPROC_OK) s = column_make(rt, t->sortk, t->n, pinned, &t->csortk);
        if (s == COPROC_OK) s = column_make(rt, t->fk, t->n, pinned, &t->cfk);
        if (s == COPROC_OK) s = column_make(rt, t->dim, t->dim_n, pinned, &t->cdim);
    }
    for (int i = 0; i < wl->ntasks && wl->own_columns && s == COPROC_OK; i++) {
        const table *t = &wl->tables[wl->tasks[i].table];
        s = column_make(rt, t->vals, t->n, pinned, &wl->tasks[i].own);
    }
    return s;
}

static void tables_close(workload *wl)
{
    for (int i = 0; i < wl->ntables; i++) {
        table *t = &wl->tables[i];
        coproc_column *c[] = {t->cvals, t->ckeys, t->csortk, t->cfk, t->cdim};
        for (int j = 0; j < 5; j++)
            coproc_column_free(c[j]);
        t->cvals = t->ckeys = t->csortk = t->cfk = t->cdim = NULL;
    }
    for (int i = 0; i < wl->ntasks; i++) {
        coproc_column_free(wl->tasks[i].own);
        wl->tasks[i].own = NULL;
    }
}

static void build_op(const workload *wl, const wtask *w, int device, coproc_op *op)
{
    const table *t = &wl->tables[w->table];
    const coproc_column *vals = w->own ? w->own : t->cvals;
    coproc_op_init(op, w->kind);
    op->device = device;
    switch (w->kind) {
    case COPROC_OP_REDUCE:
        op->a = vals;
        op->reduce = w->rop;
        break;
    case COPROC_OP_SELECT:
        op->filter.first = (coproc_predicate){.col = vals, .cmp = w->cmp, .a.i64 = w->a,
                                              .b.i64 = w->b};
        break;
    case COPROC_OP_GROUP_BY:
        op->a = t->ckeys;
        op->b = t->cvals;
        op->sorted = 1;
        break;
    case COPROC_OP_SORT:
        op->a = t->csortk;
        op->b = t->cvals;
        break;
    case COPROC_OP_HASH_JOIN:
        op->a = t->cdim; /* build side */
        op->b = t->cfk;
        break;
    default:
        break;
    }
}

/* ---------------------------------------------------------------- checking */

static int col_is(const coproc_column *c, coproc_type ty, size_t n)
{
    return n == 0 ? (c == NULL || coproc_column_length(c) == 0)
                  : c && coproc_column_type(c) == ty && coproc_column_length(c) == n &&
                        coproc_column_host_data(c) != NULL;
}

/* Why r is not the reference result of w, or NULL when it is. */
static const char *check(const workload *wl, const wtask *w, const coproc_result *r)
{
    const table *t = &wl->tables[w->table];
    size_t n = t->n;
    switch (w->kind) {
    case COPROC_OP_REDUCE: {
        int64_t want = w->rop == COPROC_REDUCE_SUM ? t->sum
                       : w->rop == COPROC_REDUCE_MIN ? t->min : t->max;
        if (r->scalar.type != COPROC_INT64 || r->scalar.v.i64 != want)
            return "reduce: wrong value";
        if (r->scalar.count != n)
            return "reduce: wrong row count";
        return NULL;
    }
    case COPROC_OP_SELECT: {
        if (!col_is(r->column, COPROC_UINT32, (size_t)r->count))
            return "select: positions column of the wrong type or length";
        if (r->count != w->selected)
            return "select: wrong count";
        /* as many increasing positions as there are matching rows, each matching */
        const uint32_t *pos = r->count ? coproc_column_host_data(r->column) : NULL;
        for (uint64_t j = 0; j < r->count; j++)
            if (pos[j] >= n || (j && pos[j] <= pos[j - 1]) || !selected(w, t->vals[pos[j]]))
                return "select: wrong positions";
        return NULL;
    }
    case COPROC_OP_SORT:
        if (!col_is(r->column, COPROC_INT32, n) || !col_is(r->column2, COPROC_INT32, n))
            return "sort: output of the wrong type or length";
        if (n && memcmp(coproc_column_host_data(r->column), t->sorted_keys, n * 4) != 0)
            return "sort: keys out of order";
        if (n && memcmp(coproc_column_host_data(r->column2), t->sorted_vals, n * 4) != 0)
            return "sort: values not permuted stably with the keys";
        return NULL;
    case COPROC_OP_GROUP_BY: {
        size_t g = (size_t)r->count;
        if (g != t->g_nonempty || r->groups.groups != g)
            return "group-by: wrong number of groups";
        if (!col_is(r->groups.keys, COPROC_INT32, g) || !col_is(r->groups.count, COPROC_UINT64, g) ||
            !col_is(r->groups.sum, COPROC_INT64, g) || !col_is(r->groups.min, COPROC_INT32, g) ||
            !col_is(r->groups.max, COPROC_INT32, g))
            return "group-by: output columns of the wrong type or length";
        if (!g)
            return NULL;
        const int32_t *k = coproc_column_host_data(r->groups.keys);
        const uint64_t *c = coproc_column_host_data(r->groups.count);
        const int64_t *s = coproc_column_host_data(r->groups.sum);
        const int32_t *mn = coproc_column_host_data(r->groups.min);
        const int32_t *mx = coproc_column_host_data(r->groups.max);
        for (size_t j = 0; j < g; j++) {
            if (k[j] < 0 || k[j] >= t->groups || (j && k[j] <= k[j - 1]))
                return "group-by: keys wrong or not ascending";
            if (c[j] != t->g_count[k[j]] || s[j] != t->g_sum[k[j]] || mn[j] != t->g_min[k[j]] ||
                mx[j] != t->g_max[k[j]])
                return "group-by: wrong aggregates";
        }
        return NULL;
    }
    case COPROC_OP_HASH_JOIN: {
        size_t m = r->join.count;
        if (m != t->join_matches || r->count != m)
            return "hash join: wrong number of pairs";
        if (!col_is(r->join.left, COPROC_UINT32, m) || !col_is(r->join.right, COPROC_UINT32, m))
            return "hash join: position columns of the wrong type or length";
        if (!m)
            return NULL;
        const uint32_t *l = coproc_column_host_data(r->join.left);
        const uint32_t *p = coproc_column_host_data(r->join.right);
        uint8_t *seen = calloc(n / 8 + 1, 1);
        if (!seen)
            return "hash join: out of host memory to check it";
        const char *why = NULL;
        /* build keys are distinct: each probe row matches at most once */
        for (size_t i = 0; i < m && !why; i++) {
            if (l[i] >= t->dim_n || p[i] >= n || t->dim[l[i]] != t->fk[p[i]])
                why = "hash join: a pair whose keys differ";
            else if (seen[p[i] / 8] & (1u << (p[i] % 8)))
                why = "hash join: a pair given twice";
            else
                seen[p[i] / 8] |= (uint8_t)(1u << (p[i] % 8));
        }
        free(seen);
        return why;
    }
    default:
        return "unexpected operator kind";
    }
}

static uint64_t col_bytes(const coproc_column *c)
{
    return c ? (uint64_t)coproc_column_length(c) * coproc_type_size(coproc_column_type(c)) : 0;
}

static uint64_t result_bytes(const coproc_result *r)
{
    return col_bytes(r->column) + col_bytes(r->column2) + col_bytes(r->groups.keys) +
           col_bytes(r->groups.count) + col_bytes(r->groups.sum) + col_bytes(r->groups.min) +
           col_bytes(r->groups.max) + col_bytes(r->join.left) + col_bytes(r->join.right);
}

/* ---------------------------------------------------------------- one run */

/* What one run measured. */
typedef struct run_fig {
    int policy;            /* coproc_policy */
    int device;            /* FIXED: the device; else -1 */
    double makespan;
    double warmup_s;
    int warmup_ops;
    uint64_t tasks[MAXDEV], streamed[MAXDEV];
    double busy[MAXDEV];
    uint64_t h2d[MAXDEV], d2h[MAXDEV], hits[MAXDEV], misses[MAXDEV];
    double err_sum[MAXDEV];
    uint64_t err_n[MAXDEV];
    /* per operator kind: mean relative error and geometric mean of estimate / measured */
    double kerr_sum[COPROC_OP_KIND_COUNT], klog_ratio[COPROC_OP_KIND_COUNT];
    uint64_t kerr_n[COPROC_OP_KIND_COUNT];
    double err_median;     /* median relative error over all operators; -1 if none */
    uint64_t mismatches, failed;
} run_fig;

typedef struct run_ctx {
    const wl_real_config *cfg;
    const workload *wl;
    coproc_runtime *rt;
    coproc_result *res;
    coproc_status *st;
    unsigned char *checked;
    atomic_uint_fast64_t retained, mismatches, failed;
    pthread_mutex_t report_lock;
    int reported;
    pthread_barrier_t start;
    const char *phase;
} run_ctx;

typedef struct stream {
    run_ctx *rc;
    int id, nstreams;
    double begin, end;
} stream;

static void report_problem(run_ctx *rc, int task, const char *what)
{
    pthread_mutex_lock(&rc->report_lock);
    if (rc->reported++ < MAX_REPORTED)
        fprintf(stderr, "coproc-workload: %s operator %d (%s): %s\n", rc->phase, task,
                coproc_op_kind_name(rc->wl->tasks[task].kind), what);
    pthread_mutex_unlock(&rc->report_lock);
}

/* Compare task i's result with the reference and free it. */
static void check_and_free(run_ctx *rc, int i)
{
    if (rc->checked[i])
        return;
    rc->checked[i] = 1;
    if (rc->st[i] != COPROC_OK)
        return; /* counted as failed already */
    const char *why = check(rc->wl, &rc->wl->tasks[i], &rc->res[i]);
    if (why) {
        atomic_fetch_add(&rc->mismatches, 1);
        report_problem(rc, i, why);
    }
    atomic_fetch_sub(&rc->retained, result_bytes(&rc->res[i]));
    coproc_result_free(&rc->res[i]);
}

static void record(run_ctx *rc, int i, coproc_status s, const coproc_result *r)
{
    rc->st[i] = s;
    if (s != COPROC_OK) {
        atomic_fetch_add(&rc->failed, 1);
        char msg[600];
        pthread_mutex_lock(&rc->report_lock);
        snprintf(msg, sizeof msg, "%s: %s", coproc_status_name(s), coproc_errmsg(rc->rt));
        pthread_mutex_unlock(&rc->report_lock);
        report_problem(rc, i, msg);
        return;
    }
    rc->res[i] = *r;
    if (atomic_fetch_add(&rc->retained, result_bytes(r)) + result_bytes(r) > RETAIN_CAP)
        check_and_free(rc, i);
}

/* Submit the tasks i = first, first + step, ... keeping `window` in flight,
 * waiting on them in order. forced_device: -1 (the policy decides), or a
 * device; -2: task i goes to device i % ndev (the warm-up). */
static void submit_all(run_ctx *rc, int first, int step, int window, int forced, int ndev)
{
    coproc_task **fl = calloc((size_t)window, sizeof *fl);
    int *ids = calloc((size_t)window, sizeof *ids);
    int head = 0, count = 0;
    if (!fl || !ids) {
        for (int i = first; i < rc->wl->ntasks; i += step) {
            rc->st[i] = COPROC_HOST_OUT_OF_MEMORY;
            atomic_fetch_add(&rc->failed, 1);
        }
        free(fl), free(ids);
        return;
    }
    for (int i = first;; i += step) {
        if (count == window || (i >= rc->wl->ntasks && count > 0)) {
            coproc_result r;
            coproc_status s = coproc_wait(fl[head], &r);
            record(rc, ids[head], s, &r);
            head = (head + 1) % window;
            count--;
        }
        if (i >= rc->wl->ntasks) {
            if (count == 0)
                break;
            continue;
        }
        coproc_op op;
        build_op(rc->wl, &rc->wl->tasks[i], forced == -2 ? i % ndev : forced, &op);
        coproc_task *t = NULL;
        coproc_status s = coproc_submit(rc->rt, &op, &t);
        if (s != COPROC_OK) {
            record(rc, i, s, NULL);
            continue;
        }
        fl[(head + count) % window] = t;
        ids[(head + count) % window] = i;
        count++;
    }
    free(fl);
    free(ids);
}

static void *stream_main(void *arg)
{
    stream *s = arg;
    pthread_barrier_wait(&s->rc->start);
    /* The runtime's clock: the wall clock, or simulated devices' virtual one. */
    s->begin = coproc_clock_seconds(s->rc->rt);
    submit_all(s->rc, s->id, s->nstreams, s->rc->cfg->window, -1, 0);
    s->end = coproc_clock_seconds(s->rc->rt);
    return NULL;
}

static int run_ctx_init(run_ctx *rc, const wl_real_config *cfg, const workload *wl,
                        coproc_runtime *rt, const char *phase)
{
    memset(rc, 0, sizeof *rc);
    rc->cfg = cfg;
    rc->wl = wl;
    rc->rt = rt;
    rc->phase = phase;
    size_t n = (size_t)wl->ntasks + 1;
    rc->res = calloc(n, sizeof *rc->res);
    rc->st = calloc(n, sizeof *rc->st);
    rc->checked = calloc(n, 1);
    pthread_mutex_init(&rc->report_lock, NULL);
    return rc->res && rc->st && rc->checked ? 0 : -1;
}

static void run_ctx_finish(run_ctx *rc, run_fig *f)
{
    for (int i = 0; i < rc->wl->ntasks; i++)
        check_and_free(rc, i);
    f->mismatches += atomic_load(&rc->mismatches);
    f->failed += atomic_load(&rc->failed);
    free(rc->res), free(rc->st), free(rc->checked);
    pthread_mutex_destroy(&rc->report_lock);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

typedef struct dev_snap {
    coproc_device_stats s[MAXDEV];
} dev_snap;

static void snap(coproc_runtime *rt, int ndev, dev_snap *o)
{
    for (int d = 0; d < ndev; d++) {
        memset(&o->s[d], 0, sizeof o->s[d]);
        o->s[d].struct_size = sizeof o->s[d];
        coproc_device_stats_get(rt, d, &o->s[d]);
    }
}

typedef struct real_ctx {
    const wl_real_config *cfg;
    workload wl, warm;
    int ndev;
    coproc_device_info info[MAXDEV];
} real_ctx;

/* Open a runtime for (policy, device), warm up, run the workload; 0 or an exit status. */
static int run_once(real_ctx *x, int policy, int fixed_device, int alone, run_fig *f)
{
    const wl_real_config *cfg = x->cfg;
    memset(f, 0, sizeof *f);
    f->policy = policy;
    f->device = policy == COPROC_POLICY_FIXED ? fixed_device : -1;
    coproc_options o;
    coproc_options_init(&o);
    o.devices = cfg->devices;
    o.policy = policy;
    o.fixed_device = fixed_device;
    o.queue_depth = cfg->queue_depth;
    o.device_budget_bytes = cfg->budget_bytes;
    o.disable_zero_copy = cfg->disable_zero_copy;
    coproc_runtime *rt = NULL;
    coproc_status s = coproc_open(&o, &rt);
    if (s != COPROC_OK) {
        fprintf(stderr, "coproc-workload: coproc_open: %s\n", coproc_errmsg(rt));
        coproc_close(rt);
        return s == COPROC_NO_DEVICE || s == COPROC_NO_PLATFORM || s == COPROC_DRIVER_ERROR
                   ? EX_UNAVAILABLE : EX_SOFTWARE;
    }
    if (coproc_device_count(rt) != x->ndev) {
        fprintf(stderr, "coproc-workload: the runtime opened %d devices, not %d as before\n",
                coproc_device_count(rt), x->ndev);
        coproc_close(rt);
        return EX_SOFTWARE;
    }
    int rc_exit = 0;
    run_ctx rc;
    /* warm-up: training columns, every kind on every device, forced there */
    double w0 = wl_now();
    if ((s = tables_open(rt, &x->warm, 0)) != COPROC_OK) {
        fprintf(stderr, "coproc-workload: training columns: %s\n", coproc_errmsg(rt));
        rc_exit = EX_SOFTWARE;
        goto close;
    }
    if (run_ctx_init(&rc, cfg, &x->warm, rt, "warm-up") != 0) {
        rc_exit = EX_OSERR;
        goto close;
    }
    submit_all(&rc, 0, 1, x->warm.ntasks, -2, x->ndev);
    run_ctx_finish(&rc, f);
    tables_close(&x->warm);
    f->warmup_s = wl_now() - w0;
    f->warmup_ops = x->warm.ntasks / x->ndev;

    if ((s = tables_open(rt, &x->wl, cfg->pinned)) != COPROC_OK) {
        fprintf(stderr, "coproc-workload: host columns: %s\n", coproc_errmsg(rt));
        rc_exit = EX_SOFTWARE;
        goto close;
    }
    char label[48];
    if (alone)
        snprintf(label, sizeof label, "device %d alone", fixed_device);
    else
        snprintf(label, sizeof label, "%s", coproc_policy_name((coproc_policy)policy));
    if (run_ctx_init(&rc, cfg, &x->wl, rt, label) != 0) {
        rc_exit = EX_OSERR;
        goto close;
    }
    int ns = cfg->streams;
    stream *st = calloc((size_t)ns, sizeof *st);
    pthread_t *th = calloc((size_t)ns, sizeof *th);
    if (!st || !th) {
        free(st), free(th);
        run_ctx_finish(&rc, f);
        rc_exit = EX_OSERR;
        goto close;
    }
    pthread_barrier_init(&rc.start, NULL, (unsigned)ns + 1);
    int started = 0;
    for (int i = 0; i < ns; i++) {
        st[i] = (stream){.rc = &rc, .id = i, .nstreams = ns};
        if (pthread_create(&th[i], NULL, stream_main, &st[i]) != 0)
            break;
        started++;
    }
    if (started < ns) {
        /* cannot happen in practice; the barrier would never open */
        fprintf(stderr, "coproc-workload: cannot start %d threads\n", ns);
        exit(EX_OSERR);
    }
    dev_snap before, after;
    snap(rt, x->ndev, &before);
    pthread_barrier_wait(&rc.start);
    double t0 = INFINITY, t1 = 0;
    for (int i = 0; i < ns; i++) {
        pthread_join(th[i], NULL);
        if (st[i].begin < t0)
            t0 = st[i].begin; /* the first stream's first submit */
        if (st[i].end > t1)
            t1 = st[i].end;
    }
    snap(rt, x->ndev, &after);
    f->makespan = t1 - t0;
    pthread_barrier_destroy(&rc.start);
    free(st), free(th);
    double *errs = calloc((size_t)x->wl.ntasks + 1, sizeof *errs);
    size_t nerr = 0;
    for (int i = 0; i < x->wl.ntasks; i++) {
        const coproc_result *r = &rc.res[i];
        if (rc.st[i] != COPROC_OK || r->device < 0 || r->device >= x->ndev)
            continue;
        /* rc.res[i] may have been checked and freed already: device and
         * timings survive coproc_result_free */
        f->tasks[r->device]++;
        if (r->estimate_s >= 0 && r->seconds > 0) {
            double e = fabs(r->estimate_s - r->seconds) / r->seconds;
            int k = (int)x->wl.tasks[i].kind;
            f->err_sum[r->device] += e;
            if (errs)
                errs[nerr++] = e;
            f->err_n[r->device]++;
            f->kerr_sum[k] += e;
            f->kerr_n[k]++;
            f->klog_ratio[k] += log((r->estimate_s > 1e-9 ? r->estimate_s : 1e-9) / r->seconds);
        }
    }
    f->err_median = -1;
    if (nerr) {
        qsort(errs, nerr, sizeof *errs, cmp_double);
        f->err_median = nerr % 2 ? errs[nerr / 2] : (errs[nerr / 2 - 1] + errs[nerr / 2]) / 2;
    }
    free(errs);
    for (int d = 0; d < x->ndev; d++) {
        f->streamed[d] = after.s[d].tasks_streamed - before.s[d].tasks_streamed;
        f->busy[d] = after.s[d].busy_seconds - before.s[d].busy_seconds;
        f->h2d[d] = after.s[d].bytes_h2d - before.s[d].bytes_h2d;
        f->d2h[d] = after.s[d].bytes_d2h - before.s[d].bytes_d2h;
        f->hits[d] = after.s[d].cache_hits - before.s[d].cache_hits;
        f->misses[d] = after.s[d].cache_misses - before.s[d].cache_misses;
    }
    run_ctx_finish(&rc, f);
close:
    tables_close(&x->warm);
    tables_close(&x->wl);
    coproc_close(rt);
    return rc_exit;
}

static int cmp_fig(const void *a, const void *b)
{
    double x = ((const run_fig *)a)->makespan, y = ((const run_fig *)b)->makespan;
    return (x > y) - (x < y);
}

/* run_once cfg->repeat times; *f: the run of median makespan, with the wrong
 * and failed operators of every repetition. */
static int run_repeated(real_ctx *x, int policy, int fixed_device, int alone, run_fig *f)
{
    int reps = x->cfg->repeat > 0 ? x->cfg->repeat : 1;
    run_fig *all = calloc((size_t)reps, sizeof *all);
    if (!all)
        return EX_OSERR;
    uint64_t wrong = 0, failed = 0;
    for (int i = 0; i < reps; i++) {
        int e = run_once(x, policy, fixed_device, alone, &all[i]);
        if (e) {
            free(all);
            return e;
        }
        wrong += all[i].mismatches;
        failed += all[i].failed;
    }
    qsort(all, (size_t)reps, sizeof *all, cmp_fig);
    *f = all[reps / 2];
    f->mismatches = wrong;
    f->failed = failed;
    free(all);
    return 0;
}

/* ---------------------------------------------------------------- report */

static double fig_error(const run_fig *f, int ndev)
{
    double s = 0;
    uint64_t n = 0;
    for (int d = 0; d < ndev; d++)
        s += f->err_sum[d], n += f->err_n[d];
    return n ? s / (double)n : -1;
}

static double fig_moved(const run_fig *f, int ndev)
{
    double b = 0;
    for (int d = 0; d < ndev; d++)
        b += (double)(f->h2d[d] + f->d2h[d]);
    return b;
}

static json_t *json_num_or_null(double v) { return v >= 0 ? json_real(v) : json_null(); }

static json_t *fig_json(const run_fig *f, int ndev, double best_single)
{
    json_t *j = json_object();
    json_t *util = json_array(), *busy = json_array(), *tasks = json_array(),
           *streamed = json_array(), *err = json_array(), *h2d = json_array(),
           *d2h = json_array(), *hits = json_array(), *misses = json_array();
    for (int d = 0; d < ndev; d++) {
        json_array_append_new(util, json_real(f->makespan > 0 ? f->busy[d] / f->makespan : 0));
        json_array_append_new(busy, json_real(f->busy[d]));
        json_array_append_new(tasks, json_integer((json_int_t)f->tasks[d]));
        json_array_append_new(streamed, json_integer((json_int_t)f->streamed[d]));
        json_array_append_new(err, json_num_or_null(f->err_n[d] ? f->err_sum[d] / (double)f->err_n[d]
                                                                : -1));
        json_array_append_new(h2d, json_integer((json_int_t)f->h2d[d]));
        json_array_append_new(d2h, json_integer((json_int_t)f->d2h[d]));
        json_array_append_new(hits, json_integer((json_int_t)f->hits[d]));
        json_array_append_new(misses, json_integer((json_int_t)f->misses[d]));
    }
    if (f->device >= 0)
        json_object_set_new(j, "fixed_device", json_integer(f->device));
    json_object_set_new(j, "makespan_s", json_real(f->makespan));
    json_object_set_new(j, "speedup_vs_best_single", json_real(best_single / f->makespan));
    json_object_set_new(j, "oracle_ratio", json_null()); /* no oracle on real devices */
    json_object_set_new(j, "utilization", util);
    json_object_set_new(j, "estimation_error", json_num_or_null(fig_error(f, ndev)));
    json_object_set_new(j, "estimation_error_median", json_num_or_null(f->err_median));
    json_object_set_new(j, "bytes_moved", json_real(fig_moved(f, ndev)));
    json_t *jk = json_object();
    for (int k = 0; k < COPROC_OP_KIND_COUNT; k++) {
        if (!f->kerr_n[k])
            continue;
        json_t *e = json_object();
        json_object_set_new(e, "mean_rel_error", json_real(f->kerr_sum[k] / (double)f->kerr_n[k]));
        json_object_set_new(e, "estimate_over_measured",
                            json_real(exp(f->klog_ratio[k] / (double)f->kerr_n[k])));
        json_object_set_new(e, "operators", json_integer((json_int_t)f->kerr_n[k]));
        json_object_set_new(jk, coproc_op_kind_name((coproc_op_kind)k), e);
    }
    json_object_set_new(j, "estimation_by_kind", jk);
    json_object_set_new(j, "tasks_per_device", tasks);
    json_object_set_new(j, "tasks_streamed", streamed);
    json_object_set_new(j, "busy_seconds", busy);
    json_object_set_new(j, "mean_rel_error", err);
    json_object_set_new(j, "bytes_h2d", h2d);
    json_object_set_new(j, "bytes_d2h", d2h);
    json_object_set_new(j, "cache_hits", hits);
    json_object_set_new(j, "cache_misses", misses);
    json_object_set_new(j, "warmup_s", json_real(f->warmup_s));
    json_object_set_new(j, "failed", json_integer((json_int_t)f->failed));
    json_object_set_new(j, "mismatches", json_integer((json_int_t)f->mismatches));
    json_object_set_new(j, "results_ok", json_boolean(f->failed == 0 && f->mismatches == 0));
    return j;
}

static void fig_print(FILE *out, const char *label, const run_fig *f, int ndev, double best_single)
{
    if (!out)
        return;
    fprintf(out, "  %-14s makespan %.4f s  speedup vs best single %.3f  utilization", label,
            f->makespan, best_single / f->makespan);
    for (int d = 0; d < ndev; d++)
        fprintf(out, " %.2f", f->makespan > 0 ? f->busy[d] / f->makespan : 0);
    fprintf(out, "  tasks");
    for (int d = 0; d < ndev; d++)
        fprintf(out, " %llu", (unsigned long long)f->tasks[d]);
    double e = fig_error(f, ndev);
    if (e >= 0)
        fprintf(out, "  estimation error %.1f %% (median %.1f %%)", e * 100, f->err_median * 100);
    else
        fprintf(out, "  estimation error -");
    fprintf(out, "  moved %.3f GB  warm-up %.2f s  %s\n", fig_moved(f, ndev) / 1e9, f->warmup_s,
            f->failed || f->mismatches ? "RESULTS WRONG" : "results ok");
    if (f->failed || f->mismatches)
        fprintf(out, "  %-14s %llu failed, %llu wrong\n", "",
                (unsigned long long)f->failed, (unsigned long long)f->mismatches);
}

/* A short unique label for device d: its type, "#d" when several share it. */
static void dev_label(const real_ctx *x, int d, char *buf, size_t size)
{
    snprintf(buf, size, "%s%d", coproc_device_type_name(x->info[d].type), d);
}

typedef struct estimate_ctx {
    coproc_runtime *rt;
    const coproc_op *op;
    int ndev;
} estimate_ctx;

/* Median seconds of the cost estimates coproc_submit makes for one operator
 * over 4 devices (model, transfers of uncached inputs, residency lookup),
 * through coproc_op_estimate; with fewer devices the estimates repeat over the
 * ones there are. (The placement among the estimates, ~100 ns, has no public
 * call and is not in the figure.) */
static double submit_decision_time(coproc_runtime *rt)
{
    enum { SAMPLES = 2001, DEVS = 4 };
    static int32_t data[4096];
    coproc_column *col = NULL;
    double *samples = malloc(SAMPLES * sizeof *samples);
    if (!samples || coproc_column_wrap(rt, COPROC_INT32, data, 4096, &col) != COPROC_OK) {
        free(samples);
        return -1;
    }
    coproc_op op;
    coproc_op_init(&op, COPROC_OP_SELECT);
    op.filter.first = (coproc_predicate){.col = col, .cmp = COPROC_CMP_LT, .a.i64 = 0};
    int ndev = coproc_device_count(rt);
    for (int i = 0; i < SAMPLES; i++) {
        double t0 = wl_now(), seconds, transfer;
        for (int d = 0; d < DEVS; d++)
            coproc_op_estimate(rt, &op, d % ndev, &seconds, &transfer);
        samples[i] = wl_now() - t0;
    }
    coproc_column_free(col);
    qsort(samples, SAMPLES, sizeof *samples, cmp_double);
    double median = samples[SAMPLES / 2];
    free(samples);
    return median;
}

int wl_run_real(const wl_real_config *cfg)
{
    real_ctx x;
    memset(&x, 0, sizeof x);
    x.cfg = cfg;
    FILE *out = cfg->out;
    const char *envp = getenv("COPROC_POLICY");
    if (envp && *envp) {
        fprintf(stderr, "coproc-workload: COPROC_POLICY=%s ignored: the benchmark sets each "
                        "policy itself (use --policy)\n", envp);
        unsetenv("COPROC_POLICY");
    }

    /* which devices, once (a profile missing from the cache is measured here) */
    coproc_options o;
    coproc_options_init(&o);
    o.devices = cfg->devices;
    coproc_runtime *rt = NULL;
    coproc_status s = coproc_open(&o, &rt);
    if (s != COPROC_OK) {
        fprintf(stderr, "coproc-workload: %s\n", coproc_errmsg(rt));
        coproc_close(rt);
        return s == COPROC_NO_DEVICE || s == COPROC_NO_PLATFORM || s == COPROC_DRIVER_ERROR
                   ? EX_UNAVAILABLE : EX_SOFTWARE;
    }
    x.ndev = coproc_device_count(rt);
    if (x.ndev > MAXDEV) {
        fprintf(stderr, "coproc-workload: %d devices; at most %d (pick some with --devices)\n",
                x.ndev, MAXDEV);
        coproc_close(rt);
        return EX_USAGE;
    }
    for (int d = 0; d < x.ndev; d++)
        coproc_device_info_get(rt, d, &x.info[d]);
    double decide_submit = submit_decision_time(rt);
    coproc_close(rt);
    if (cfg->fixed_device < 0 || cfg->fixed_device >= x.ndev) {
        fprintf(stderr, "coproc-workload: --fixed-device %d: there are %d devices\n",
                cfg->fixed_device, x.ndev);
        return EX_USAGE;
    }

    if (cfg->progress)
        fprintf(stderr, "coproc-workload: making the workload and its reference results...\n");
    if (workload_make(&x.wl, cfg) != 0 || warmup_make(&x.warm, &x.wl, cfg, x.ndev) != 0) {
        fprintf(stderr, "coproc-workload: out of host memory for the workload\n");
        workload_free(&x.wl);
        workload_free(&x.warm);
        return EX_OSERR;
    }
    int kinds = x.warm.kinds;

    if (out) {
        fprintf(out, "%s workload on %d device%s:", cfg->bus_bound ? "bus-bound" : "mixed", x.ndev,
                x.ndev == 1 ? "" : "s");
        for (int d = 0; d < x.ndev; d++) {
            char lab[32];
            dev_label(&x, d, lab, sizeof lab);
            fprintf(out, "%s %s = %s (%s%s)", d ? ";" : "", lab, x.info[d].name,
                    x.info[d].platform,
                    x.info[d].host_unified_memory && !cfg->disable_zero_copy ? ", zero-copy" : "");
        }
        fprintf(out, "\n  %d operators (", cfg->tasks);
        int first = 1;
        for (int k = 0; k < COPROC_OP_KIND_COUNT; k++)
            if (x.wl.kind_count[k]) {
                fprintf(out, "%s%s %d", first ? "" : ", ", coproc_op_kind_name((coproc_op_kind)k),
                        x.wl.kind_count[k]);
                first = 0;
            }
        fprintf(out, ") over %d %shost tables of %zu..%zu rows (%.1f MB)%s, reading %.1f MB in "
                "all; %d streams with %d in flight each, seed %llu\n", x.wl.ntables,
                cfg->pinned ? "pinned " : "", cfg->min_rows, cfg->max_rows, x.wl.bytes / 1e6,
                x.wl.own_columns ? ", each operator over a column of its own" : "",
                x.wl.read_bytes / 1e6, cfg->streams, cfg->window, (unsigned long long)cfg->seed);
        if (cfg->repeat > 1)
            fprintf(out, "  each configuration run %d times; figures of the run with the median "
                    "makespan\n", cfg->repeat);
        fprintf(out, "  a first run of %s alone, discarded, warms the process up\n",
                "device 0");
        fprintf(out, "  each run: a fresh runtime; a warm-up of %d operators per device (%d kinds "
                "x (1 + %d sizes x %d)) over separate training columns, not timed, so that the cost "
                "models are trained and the kernel programs built; then the timed workload, "
                "every result checked against a C reference\n",
                x.warm.ntasks / x.ndev, kinds, WARMUP_SIZES, WARMUP_REPS);
    }

    int nruns = x.ndev + POLICIES;
    run_fig *single = calloc((size_t)x.ndev, sizeof *single);
    run_fig *pol = calloc(POLICIES, sizeof *pol);
    int *pol_ran = calloc(POLICIES, sizeof *pol_ran);
    if (!single || !pol || !pol_ran) {
        workload_free(&x.wl);
        workload_free(&x.warm);
        free(single), free(pol), free(pol_ran);
        return EX_OSERR;
    }
    int exit_code = 0, run_no = 0;
    uint64_t mismatches = 0, failed = 0;
    /* The process's first run is slower than the same run later (the host
     * allocator's and the driver's first-time costs): one run of the first
     * configuration, discarded, before those that count. */
    if (cfg->progress)
        fprintf(stderr, "coproc-workload: a discarded first run (process warm-up)\n");
    {
        run_fig scratch;
        exit_code = run_once(&x, COPROC_POLICY_FIXED, 0, 1, &scratch);
        if (!exit_code) {
            mismatches += scratch.mismatches; /* its results count */
            failed += scratch.failed;
        }
    }
    double best_single = INFINITY;
    int best_dev = -1;
    if (cfg->only_policy >= 0)
        nruns = x.ndev + 1;
    for (int d = 0; d < x.ndev && !exit_code; d++) {
        char lab[32];
        dev_label(&x, d, lab, sizeof lab);
        if (cfg->progress)
            fprintf(stderr, "coproc-workload: run %d/%d: %s alone (warm-up, then %d operators)\n",
                    ++run_no, nruns, lab, cfg->tasks);
        exit_code = run_repeated(&x, COPROC_POLICY_FIXED, d, 1, &single[d]);
        if (!exit_code && single[d].makespan < best_single) {
            best_single = single[d].makespan;
            best_dev = d;
        }
    }
    for (int d = 0; d < x.ndev && !exit_code; d++) {
        char lab[48];
        dev_label(&x, d, lab, sizeof lab);
        strncat(lab, " alone", sizeof lab - strlen(lab) - 1);
        fig_print(out, lab, &single[d], x.ndev, best_single);
    }
    for (int p = 0; p < POLICIES && !exit_code; p++) {
        if (cfg->only_policy >= 0 && p != cfg->only_policy)
            continue;
        if (cfg->progress)
            fprintf(stderr, "coproc-workload: run %d/%d: policy %s (warm-up, then %d operators)\n",
                    ++run_no, nruns, coproc_policy_name((coproc_policy)p), cfg->tasks);
        exit_code = run_repeated(&x, p, cfg->fixed_device, 0, &pol[p]);
        if (exit_code)
            break;
        pol_ran[p] = 1;
        fig_print(out, coproc_policy_name((coproc_policy)p), &pol[p], x.ndev, best_single);
    }

    for (int d = 0; d < x.ndev; d++)
        mismatches += single[d].mismatches, failed += single[d].failed;
    for (int p = 0; p < POLICIES; p++)
        mismatches += pol[p].mismatches, failed += pol[p].failed;
    if (out && !exit_code)
        fprintf(out, "results: %llu wrong, %llu failed; the cost estimates of a submit "
                "(4 devices): %.0f ns median\n", (unsigned long long)mismatches,
                (unsigned long long)failed, decide_submit * 1e9);

    if (cfg->json && !exit_code) {
        json_t *doc = json_object(), *jdev = json_array(), *jsingle = json_object(),
               *jsingles = json_array(), *jpol = json_object(), *jkinds = json_object();
        for (int d = 0; d < x.ndev; d++) {
            char lab[32];
            dev_label(&x, d, lab, sizeof lab);
            json_t *jd = json_object();
            json_object_set_new(jd, "index", json_integer(d));
            json_object_set_new(jd, "label", json_string(lab));
            json_object_set_new(jd, "name", json_string(x.info[d].name));
            json_object_set_new(jd, "platform", json_string(x.info[d].platform));
            json_object_set_new(jd, "type", json_string(coproc_device_type_name(x.info[d].type)));
            json_object_set_new(jd, "host_unified_memory",
                                json_boolean(x.info[d].host_unified_memory));
            json_array_append_new(jdev, jd);
            json_object_set_new(jsingle, lab, json_real(single[d].makespan));
            json_t *js = fig_json(&single[d], x.ndev, best_single);
            json_object_set_new(js, "device", json_integer(d));
            json_array_append_new(jsingles, js);
        }
        for (int p = 0; p < POLICIES; p++)
            if (pol_ran[p])
                json_object_set_new(jpol, coproc_policy_name((coproc_policy)p), fig_json(&pol[p], x.ndev, best_single));
        for (int k = 0; k < COPROC_OP_KIND_COUNT; k++)
            if (x.wl.kind_count[k])
                json_object_set_new(jkinds, coproc_op_kind_name((coproc_op_kind)k),
                                    json_integer(x.wl.kind_count[k]));
        json_t *jw = json_object();
        json_object_set_new(jw, "operators_per_device", json_integer(x.warm.ntasks / x.ndev));
        json_object_set_new(jw, "training_sizes", json_integer(WARMUP_SIZES));
        json_object_set_new(jw, "timed", json_false());
        json_object_set_new(doc, "schema", json_string("coproc.workload"));
        json_object_set_new(doc, "schema_version", json_integer(1));
        json_object_set_new(doc, "simulated", json_boolean(cfg->simulated));
        json_object_set_new(doc, "workload", json_string(cfg->bus_bound ? "bus-bound" : "mixed"));
        json_object_set_new(doc, "tasks", json_integer(cfg->tasks));
        json_object_set_new(doc, "operators", jkinds);
        json_object_set_new(doc, "tables", json_integer(x.wl.ntables));
        json_object_set_new(doc, "table_bytes", json_real(x.wl.bytes));
        json_object_set_new(doc, "input_bytes", json_real(x.wl.read_bytes));
        json_object_set_new(doc, "column_per_operator", json_boolean(x.wl.own_columns));
        json_object_set_new(doc, "min_rows", json_integer((json_int_t)cfg->min_rows));
        json_object_set_new(doc, "max_rows", json_integer((json_int_t)cfg->max_rows));
        json_object_set_new(doc, "streams", json_integer(cfg->streams));
        json_object_set_new(doc, "window", json_integer(cfg->window));
        json_object_set_new(doc, "seed", json_integer((json_int_t)cfg->seed));
        json_object_set_new(doc, "repeat", json_integer(cfg->repeat > 0 ? cfg->repeat : 1));
        json_object_set_new(doc, "pinned", json_boolean(cfg->pinned));
        json_object_set_new(doc, "zero_copy", json_boolean(!cfg->disable_zero_copy));
        json_object_set_new(doc, "devices", jdev);
        json_object_set_new(doc, "warmup", jw);
        json_object_set_new(doc, "oracle_lower_bound_s", json_null());
        json_object_set_new(doc, "single_device_makespan_s", jsingle);
        json_object_set_new(doc, "single_devices", jsingles);
        json_object_set_new(doc, "best_single_device", json_integer(best_dev));
        json_object_set_new(doc, "policies", jpol);
        json_object_set_new(doc, "mismatches", json_integer((json_int_t)mismatches));
        json_object_set_new(doc, "failed", json_integer((json_int_t)failed));
        json_object_set_new(doc, "results_ok", json_boolean(mismatches == 0 && failed == 0));
        json_object_set_new(doc, "submit_decision_time_median_s", json_real(decide_submit));
        json_dumpf(doc, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
        fputc('\n', stdout);
        json_decref(doc);
    }
    workload_free(&x.wl);
    workload_free(&x.warm);
    free(single), free(pol), free(pol_ran);
    if (exit_code)
        return exit_code;
    if (mismatches || failed) {
        fprintf(stderr, "coproc-workload: %llu wrong and %llu failed operators\n",
                (unsigned long long)mismatches, (unsigned long long)failed);
        return EX_SOFTWARE;
    }
    return 0;
}
