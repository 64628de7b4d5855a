/* operators.c - the curves that seed the cost models: every operator kind run
 * through the public API on device-resident 32-bit data over a few sizes and,
 * where they change the cost, shapes (selectivity, output width, group count,
 * match rate). Each run is timed by the wall clock around the synchronous call
 * and a clFinish, after an untimed run of the same shape; its (features,
 * seconds) go to p->ops[kind], which is fitted at the end. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cost/bandwidth.h"
#include "cost/calibration/calibration.h"
#include "data/column.h"
#include "cost/cost.h"
#include "backend/opencl/sync.h"

#define MAX_SHAPES 3
#define MAX_COLS 3

typedef struct op_shape {
    const char *name; /* progress label */
    int param;        /* meaning depends on the kind: percent, groups, ... */
} op_shape;

typedef struct op_spec {
    coproc__op_kind kind;
    int shapes;
    op_shape shape[MAX_SHAPES];
} op_spec;

/* What each kind runs; see setup() and run() for what the parameters mean. */
static const op_spec specs[] = {
    {COPROC__OP_REDUCE, 1, {{"sum int32", 0}}},
    {COPROC__OP_SELECT, 3, {{"10 % selected", 10}, {"50 % selected", 50}, {"90 % selected", 90}}},
    {COPROC__OP_MAP, 2, {{"add const int32", 4}, {"cast int32 to int64", 8}}},
    {COPROC__OP_GATHER, 2, {{"positions = rows", 1}, {"positions = rows / 4", 4}}},
    {COPROC__OP_SCAN, 2, {{"int32 to int64", 4}, {"int64", 8}}},
    {COPROC__OP_GROUP_BY, 3, {{"16 groups", 16}, {"1024 groups", 1024}, {"65536 groups", 65536}}},
    {COPROC__OP_SORT, 2, {{"keys + values", 1}, {"keys only", 0}}},
    {COPROC__OP_HASH_JOIN, 2, {{"all probes match", 1}, {"10 % match", 10}}},
    {COPROC__OP_MERGE_JOIN, 2, {{"all probes match", 1}, {"10 % match", 10}}},
    {COPROC__OP_SEMI_JOIN, 2, {{"all probes match", 1}, {"10 % match", 10}}},
};

typedef struct op_ctx {
    coproc__calib *c;
    int device;        /* the device's index in the runtime */
    uint32_t *rnd;     /* n_max random words */
    void *scratch;     /* room for n_max 64-bit values */
    size_t n_max;
} op_ctx;

/* The inputs of one case, owned. */
typedef struct op_inputs {
    coproc_column *col[MAX_COLS];
} op_inputs;

static void inputs_free(op_inputs *in)
{
    for (int i = 0; i < MAX_COLS; i++) {
        coproc_column_free(in->col[i]);
        in->col[i] = NULL;
    }
}

static coproc_status upload(op_ctx *o, coproc_type t, const void *host, size_t n,
                            coproc_column **out)
{
    return coproc_column_upload(o->c->rt, o->device, t, host, n, out);
}

/* The join sides: `left` m = n/4 distinct keys in scattered order; `right` n
 * keys, all in left's range (match 1) or in a range 10x wider (10 % match). */
static coproc_status join_inputs(op_ctx *o, int match, size_t n, op_inputs *in)
{
    size_t m = n / 4 ? n / 4 : 1;
    uint32_t *keys = o->scratch;
    for (size_t i = 0; i < m; i++) /* m is a power of two: an odd multiplier permutes */
        keys[i] = (uint32_t)((i * 2654435761u) & (m - 1));
    coproc_status s = upload(o, COPROC_UINT32, keys, m, &in->col[0]);
    for (size_t j = 0; j < n; j++)
        keys[j] = o->rnd[j] % (uint32_t)(m * (size_t)match);
    if (s == COPROC_OK)
        s = upload(o, COPROC_UINT32, keys, n, &in->col[1]);
    return s;
}

/* Make the input columns of kind k, shape `param`, n rows. */
static coproc_status setup(op_ctx *o, coproc__op_kind k, int param, size_t n, op_inputs *in)
{
    uint32_t *w = o->scratch;
    switch (k) {
    case COPROC__OP_REDUCE:
    case COPROC__OP_SELECT:
    case COPROC__OP_MAP:
        return upload(o, k == COPROC__OP_SELECT ? COPROC_UINT32 : COPROC_INT32, o->rnd, n,
                      &in->col[0]);
    case COPROC__OP_GATHER: {
        size_t m = n / (size_t)param;
        for (size_t i = 0; i < m; i++)
            w[i] = o->rnd[i] % (uint32_t)n;
        coproc_status s = upload(o, COPROC_INT32, o->rnd, n, &in->col[0]);
        return s == COPROC_OK ? upload(o, COPROC_UINT32, w, m, &in->col[1]) : s;
    }
    case COPROC__OP_SCAN:
        if (param == 4)
            return upload(o, COPROC_INT32, o->rnd, n, &in->col[0]);
        for (size_t i = 0; i < n; i++)
            ((int64_t *)o->scratch)[i] = (int64_t)(int32_t)o->rnd[i];
        return upload(o, COPROC_INT64, o->scratch, n, &in->col[0]);
    case COPROC__OP_GROUP_BY: {
        for (size_t i = 0; i < n; i++)
            w[i] = o->rnd[i] % (uint32_t)param;
        coproc_status s = upload(o, COPROC_INT32, w, n, &in->col[0]);
        return s == COPROC_OK ? upload(o, COPROC_INT32, o->rnd, n, &in->col[1]) : s;
    }
    case COPROC__OP_SORT: {
        /* col[0] holds the unsorted keys, copied into col[1] before each run. */
        coproc_status s = upload(o, COPROC_UINT32, o->rnd, n, &in->col[0]);
        if (s == COPROC_OK)
            s = coproc_column_alloc(o->c->rt, o->device, COPROC_UINT32, n, &in->col[1]);
        if (s == COPROC_OK && param)
            s = upload(o, COPROC_UINT32, o->rnd, n, &in->col[2]);
        return s;
    }
    case COPROC__OP_HASH_JOIN:
    case COPROC__OP_MERGE_JOIN:
    case COPROC__OP_SEMI_JOIN:
        return join_inputs(o, param, n, in);
    default:
        return coproc__fail(o->c->rt, COPROC_INTERNAL, "calibration: no setup for kind %d", k);
    }
}

/* Run kind k once on its inputs: *seconds as the runtime times an operator
 * (coproc__op_timer: OpenCL markers before and after, on the device timeline),
 * x its features. */
static coproc_status run(op_ctx *o, coproc__op_kind k, int param, size_t n, op_inputs *in,
                         double *x, double *seconds)
{
    coproc_runtime *rt = o->c->rt;
    coproc__device *dev = o->c->dev;
    coproc_column *out = NULL;
    coproc_group_result g;
    coproc_join_result j;
    memset(&g, 0, sizeof g);
    memset(&j, 0, sizeof j);
    double dn = (double)n, m = (double)(n / 4 ? n / 4 : 1);
    uint64_t count = 0;
    cl_int err = CL_SUCCESS;
    if (k == COPROC__OP_SORT) { /* fresh unsorted keys, untimed */
        err = clEnqueueCopyBuffer(dev->queue, in->col[0]->mem, in->col[1]->mem, 0, 0, n * 4, 0,
                                  NULL, NULL);
        if (err == CL_SUCCESS)
            err = coproc__finish(dev, dev->queue);
        if (err != CL_SUCCESS)
            return coproc__fail_cl(rt, err, "calibration: copying sort keys");
    }

    coproc_status s;
    coproc__op_timer timer;
    coproc__op_timer_begin(dev, &timer);
    switch (k) {
    case COPROC__OP_REDUCE: {
        coproc_scalar r;
        s = coproc_reduce(rt, COPROC_REDUCE_SUM, in->col[0], &r);
        x[0] = 4 * dn;
        break;
    }
    case COPROC__OP_SELECT: {
        coproc_filter f;
        memset(&f, 0, sizeof f);
        f.first.col = in->col[0];
        f.first.cmp = COPROC_CMP_LT;
        f.first.a.u64 = (uint64_t)((double)UINT32_MAX * param / 100.0);
        s = coproc_select(rt, &f, &out, &count);
        x[0] = 4 * dn;
        x[1] = (double)count;
        break;
    }
    case COPROC__OP_MAP:
        if (param == 4) {
            coproc_value c = {.i64 = 12345};
            s = coproc_map_const(rt, COPROC_ARITH_ADD, in->col[0], c, &out);
        } else {
            s = coproc_cast(rt, in->col[0], COPROC_INT64, &out);
        }
        x[0] = 4 * dn;
        x[1] = param * dn;
        break;
    case COPROC__OP_GATHER:
        s = coproc_gather(rt, in->col[0], in->col[1], &out);
        x[0] = 4 * dn + 4 * (dn / param);
        x[1] = 4 * (dn / param);
        break;
    case COPROC__OP_SCAN:
        s = coproc_scan(rt, in->col[0], 0, &out);
        x[0] = param * dn;
        x[1] = 8 * dn;
        break;
    case COPROC__OP_GROUP_BY:
        s = coproc_group_by(rt, in->col[0], in->col[1], 0, &g);
        x[0] = 8 * dn;
        x[1] = (double)g.groups;
        break;
    case COPROC__OP_SORT:
        s = coproc_sort(rt, in->col[1], in->col[2]);
        x[0] = (in->col[2] ? 8 : 4) * dn;
        x[1] = dn * log2(dn > 1 ? dn : 2);
        break;
    case COPROC__OP_HASH_JOIN:
    case COPROC__OP_MERGE_JOIN:
        s = k == COPROC__OP_HASH_JOIN ? coproc_hash_join(rt, in->col[0], in->col[1], &j)
                                      : coproc_sort_merge_join(rt, in->col[0], in->col[1], &j);
        x[0] = 4 * (dn + m);
        x[1] = (double)j.count;
        break;
    case COPROC__OP_SEMI_JOIN:
        s = coproc_semi_join(rt, in->col[1], in->col[0], &out, &count);
        x[0] = 4 * (dn + m);
        x[1] = (double)count;
        break;
    default:
        s = coproc__fail(rt, COPROC_INTERNAL, "calibration: no run for kind %d", k);
        break;
    }
    *seconds = coproc__op_timer_seconds(dev, &timer);
    if (s == COPROC_OK && (err = coproc__finish(dev, dev->queue)) != CL_SUCCESS)
        s = coproc__fail_cl(rt, err, "calibration: clFinish after %s", coproc__op_kind_name(k));
    coproc_column_free(out);
    coproc_group_result_free(&g);
    coproc_join_result_free(&j);
    return s;
}

/* The row counts of the sweep: 2^14, 2^16, ... up to 2^20 (quick) or 2^24
 * (full), as far as memory allows. */
static int row_counts(const coproc__calib *c, size_t *n)
{
    int count = 0;
    int top = c->full ? 24 : 20;
    for (int e = 14; e <= top; e += 2) {
        size_t rows = (size_t)1 << e;
        if (rows * 16 > c->max_bytes) /* the widest case holds ~16 bytes a row at once */
            break;
        n[count++] = rows;
    }
    return count;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* The quick pass measures in time, not to a fixed size: every kind at its
 * two smallest sizes first, then each larger size for every kind still in,
 * a kind dropping out once its runs at the next size (estimated from the
 * last, in proportion to rows) would overrun QUICK_SECONDS since the pass
 * began. A slow device so gets fewer, smaller sizes, the model's line carries
 * them up, and runs refine it later. With the driver's cache cold each kind's
 * first run compiles its program (PoCL: seconds a program): past
 * QUICK_WARMUP_SECONDS no further kind is started, and those left start with
 * empty models, learnt from their runs (as a kind whose calibration fails). */
#define QUICK_SECONDS 2.5
#define QUICK_WARMUP_SECONDS 8.0

#define KINDS (sizeof specs / sizeof *specs)

/* Kind `spec` at size index i (-1: the untimed warm-up at the smallest),
 * every shape: each size three times (quick) or five (full); the median is
 * observed, so one timing spike (common on a loaded CPU device) does not
 * reach the model. A run long enough that spikes hardly matter (50 ms quick,
 * 0.5 s full) is observed alone. *took: the medians' sum. */
static coproc_status sweep_size(op_ctx *o, const op_spec *spec, const size_t *rows, int i,
                                coproc__model *model, double *took)
{
    coproc__calib *c = o->c;
    int reps = c->full ? 5 : 3;
    size_t n = rows[i < 0 ? 0 : i];
    *took = 0;
    for (int sh = 0; sh < spec->shapes; sh++) {
        int param = spec->shape[sh].param;
        char size[32];
        coproc__calib_size_name((double)n, size, sizeof size);
        coproc__calib_progress(c, "operator %s, %s, %s rows%s", coproc__op_kind_name(spec->kind),
                               spec->shape[sh].name, size, i < 0 ? " (warm-up)" : "");
        op_inputs in;
        memset(&in, 0, sizeof in);
        coproc_status s = setup(o, spec->kind, param, n, &in);
        double x[COPROC__MODEL_MAX_FEATURES] = {0}, t[5];
        int runs = i < 0 ? 1 : reps;
        double enough = c->full ? 0.5 : 0.05;
        for (int r = 0; s == COPROC_OK && r < runs; r++) {
            s = run(o, spec->kind, param, n, &in, x, &t[r]);
            if (r == 0 && t[0] >= enough)
                runs = 1;
        }
        inputs_free(&in);
        if (s != COPROC_OK)
            return s;
        if (i < 0)
            continue; /* the warm-up run: programs built, memory touched */
        qsort(t, (size_t)runs, sizeof *t, cmp_double);
        *took += t[runs / 2] * reps;
        coproc__model_observe(model, x, t[runs / 2]);
    }
    return COPROC_OK;
}

coproc_status coproc__calib_operators(coproc__calib *c, coproc__profile *p)
{
    size_t rows[8];
    int sizes = row_counts(c, rows);
    if (sizes == 0)
        return COPROC_OK; /* a device this small gets no seed curves */
    op_ctx o = {c, c->dev->index, NULL, NULL, rows[sizes - 1]};
    o.rnd = malloc(o.n_max * sizeof(uint32_t));
    o.scratch = malloc(o.n_max * sizeof(uint64_t));
    if (!o.rnd || !o.scratch) {
        free(o.rnd);
        free(o.scratch);
        return coproc__fail(c->rt, COPROC_HOST_OUT_OF_MEMORY, "calibration: out of host memory");
    }
    uint64_t seed = 42;
    for (size_t i = 0; i < o.n_max; i++)
        o.rnd[i] = (uint32_t)coproc__splitmix64(&seed);

    int in[KINDS];      /* 1 while the kind is measured */
    double took[KINDS]; /* its runs at the last size */
    for (size_t k = 0; k < KINDS; k++) {
        coproc__model_init(&p->ops[specs[k].kind], coproc__op_kind_features(specs[k].kind));
        in[k] = 1;
        took[k] = 0;
    }
    coproc_status s = COPROC_OK;
    double began = coproc__now();
    for (int i = -1; i < sizes && s == COPROC_OK; i++) {
        for (size_t k = 0; k < KINDS && s == COPROC_OK; k++) {
            const op_spec *spec = &specs[k];
            coproc__model *model = &p->ops[spec->kind];
            if (!in[k])
                continue;
            double spent = coproc__now() - began;
            if (!c->full && i < 0 && spent > QUICK_WARMUP_SECONDS) {
                coproc__log(c->rt, COPROC_LOG_INFO, "quick calibration of device %d (%s): %s "
                            "not measured (its programs did not build within %.0f s); its cost "
                            "model starts empty", c->dev->index, c->dev->info.name,
                            coproc__op_kind_name(spec->kind), QUICK_WARMUP_SECONDS);
                in[k] = 0;
                continue;
            }
            if (!c->full && i >= 2 &&
                spent + took[k] * (double)rows[i] / (double)rows[i - 1] > QUICK_SECONDS) {
                in[k] = 0; /* its larger sizes would overrun the pass */
                continue;
            }
            s = sweep_size(&o, spec, rows, i, model, &took[k]);
            if (s == COPROC_DEVICE_LOST || s == COPROC_HOST_OUT_OF_MEMORY)
                break;
            if (s != COPROC_OK) {
                /* One operator failing leaves its model empty (it learns from
                 * runs later) rather than failing the whole calibration. */
                coproc__log(c->rt, COPROC_LOG_WARN, "calibration of %s on device %d (%s) failed: "
                            "%s: %s; its cost model starts empty",
                            coproc__op_kind_name(spec->kind), c->dev->index, c->dev->info.name,
                            coproc_status_name(s), coproc_errmsg(c->rt));
                coproc__model_init(model, coproc__op_kind_features(spec->kind));
                in[k] = -1; /* failed: left empty, not fitted */
                s = COPROC_OK;
            }
        }
    }
    for (size_t k = 0; k < KINDS && s == COPROC_OK; k++)
        if (in[k] >= 0)
            coproc__model_fit(&p->ops[specs[k].kind]);
    free(o.rnd);
    free(o.scratch);
    return s;
}
