/* fused.c - running a plan as fused pipelines (pipeline.h): each pipeline is
 * placed on the device where its estimate (a roofline of the bytes it reads
 * and moves, times the device's learned correction) is least, its join
 * tables are built there, and its one generated kernel runs over the rows.
 * Intermediate results between breakers (a group-by's groups, a sorted or
 * materialised table) come back as host tables. With opts.hybrid a
 * group-by over a host table may run on several devices at once instead
 * (hybrid.c); its sink is group_sink.c's either way. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/backend.h"
#include "backend/opencl/launch.h"
#include "backend/opencl/progress.h"
#include "core/error.h"
#include "core/runtime.h"
#include "cost/bandwidth.h"
#include "cost/profile.h"
#include "data/admission.h"
#include "data/column.h"
#include "data/dictionary.h"
#include "data/residency.h"
#include "query/order.h"
#include "query/fused.h"
#include "query/hybrid.h"
#include "query/pipeline.h"
#include "query/run.h"
#include "query/state.h"
#include "backend/opencl/sync.h"

typedef coproc__fused fused;
typedef coproc__qbound bound;

/* ---------------------------------------------------------------- columns on a device */

void coproc__qunbind(coproc__device *dev, bound *b, int n)
{
    for (int i = 0; i < n; i++) {
        if (b[i].pinned)
            coproc__residency_unpin(dev, b[i].col);
        if (b[i].owned)
            clReleaseMemObject(b[i].mem);
    }
}

/* The kernel's columns on dev: device columns where they are, host columns
 * through the residency cache. *moved counts the bytes copied in. */
coproc_status coproc__qbind_column(fused *f, coproc__device *dev, const coproc_column *c,
                                   const char *name, bound *b, uint64_t *moved)
{
    *b = (bound){.col = c};
    coproc_status s = COPROC_OK;
    if (c->dev) {
        if (c->dev != dev)
            s = coproc__fail(f->rt, COPROC_WRONG_DEVICE, "query: column \"%s\" lives on device %d, "
                             "the pipeline runs on %d", name, c->dev->index, dev->index);
        b->mem = c->mem;
    } else if (c->length == 0) {
        s = coproc__buffer_new(f->rt, dev, 16, &b->mem);
        b->owned = s == COPROC_OK;
    } else {
        int hit = 0;
        s = coproc__residency_acquire(f->rt, dev, c, &b->mem, &hit);
        b->pinned = s == COPROC_OK;
        if (s == COPROC_OK && !hit && !(dev->zero_copy && dev->info.host_unified_memory) && moved)
            *moved += c->length * coproc_type_size(c->type);
    }
    return s;
}

coproc_status coproc__qbind(fused *f, coproc__device *dev, const coproc__qkernel *k,
                                  bound *b, uint64_t *moved)
{
    for (int i = 0; i < k->nargs; i++) {
        const coproc_table *t = k->args[i].table;
        coproc_status s = coproc__qbind_column(f, dev, coproc__qarg_column(&k->args[i]),
                                               t->names[k->args[i].col], &b[i], moved);
        if (s != COPROC_OK) {
            coproc__qunbind(dev, b, i);
            return s;
        }
    }
    return COPROC_OK;
}

void coproc__qset_common_args(coproc__args *a, fused *f, const coproc__qkernel *k, const bound *b,
                            uint64_t rows)
{
    cl_ulong n = rows;
    COPROC__ARG(*a, n);
    for (int i = 0; i < k->nargs; i++)
        COPROC__ARG(*a, b[i].mem);
    for (int j = 0; j < k->nbuilds; j++) {
        const coproc__qbuilt *t = &f->prog.p[k->builds[j]].built;
        cl_int dense = t->dense;
        cl_long kmin = t->kmin, kmax = t->kmax;
        cl_uint mask = t->mask;
        COPROC__ARG(*a, t->ht);
        COPROC__ARG(*a, t->bits);
        COPROC__ARG(*a, dense);
        COPROC__ARG(*a, kmin);
        COPROC__ARG(*a, kmax);
        COPROC__ARG(*a, mask);
        const coproc_node *jn = f->prog.p[k->builds[j]].sink_node;
        for (int m = 0; m < jn->njoin_keys; m++) {
            cl_long lo = t->klo[m], hi = t->khi[m], st = t->kst[m], nrm = t->nremap[m];
            if (jn->njoin_keys > 1) {
                COPROC__ARG(*a, lo);
                COPROC__ARG(*a, hi);
                COPROC__ARG(*a, st);
            }
            if (jn->key_remap[m]) {
                COPROC__ARG(*a, t->remap[m]);
                COPROC__ARG(*a, nrm);
            }
        }
    }
    for (int p = 0; p < k->npays; p++) {
        const coproc__qbuilt *t = &f->prog.p[k->builds[k->pays[p].build]].built;
        int c = k->args[k->pays[p].arg].col;
        /* A hashed table's columns are read by row: any buffer stands in. */
        cl_mem pay = t->pay && t->pay[c] ? t->pay[c] : t->ht;
        COPROC__ARG(*a, pay);
    }
}

/* ---------------------------------------------------------------- key ranges */

/* The smallest and largest value of an integer column (0, -1 when empty). */
coproc_status coproc__qcolumn_range(fused *f, const coproc_column *c, int64_t *lo, int64_t *hi)
{
    *lo = 0;
    *hi = -1;
    if (c->length == 0)
        return COPROC_OK;
    if (c->dev) {
        coproc_scalar mn, mx;
        coproc_status s = coproc_reduce(f->rt, COPROC_REDUCE_MIN, c, &mn);
        if (s == COPROC_OK)
            s = coproc_reduce(f->rt, COPROC_REDUCE_MAX, c, &mx);
        if (s != COPROC_OK)
            return s;
        int u = c->type == COPROC_UINT32 || c->type == COPROC_UINT64;
        *lo = u ? (int64_t)mn.v.u64 : mn.v.i64;
        *hi = u ? (int64_t)mx.v.u64 : mx.v.i64;
        if (c->type == COPROC_UINT64 && (mn.v.u64 > INT64_MAX || mx.v.u64 > INT64_MAX))
            return coproc__fail(f->rt, COPROC_UNSUPPORTED, "query: uint64 key values above INT64_MAX");
        return COPROC_OK;
    }
    int64_t mn = INT64_MAX, mx = INT64_MIN;
    /* Null rows' values are whatever was left there: not part of the range. */
    const uint32_t *valid = c->validity ? c->validity->host : NULL;
#define RANGE(T)                                                                                   \
    for (size_t i = 0; i < c->length; i++) {                                                       \
        if (valid && !(valid[i / 32] >> (i % 32) & 1u))                                            \
            continue;                                                                              \
        int64_t v = (int64_t)((const T *)c->host)[i];                                              \
        mn = v < mn ? v : mn;                                                                      \
        mx = v > mx ? v : mx;                                                                      \
    }
    switch (c->type) {
    case COPROC_INT32: RANGE(int32_t) break;
    case COPROC_INT64: RANGE(int64_t) break;
    case COPROC_UINT32: RANGE(uint32_t) break;
    case COPROC_UINT64:
        for (size_t i = 0; i < c->length; i++)
            if ((!valid || valid[i / 32] >> (i % 32) & 1u) &&
                ((const uint64_t *)c->host)[i] > INT64_MAX)
                return coproc__fail(f->rt, COPROC_UNSUPPORTED, "query: uint64 key values above INT64_MAX");
        RANGE(uint64_t) break;
    default:
        return coproc__fail(f->rt, COPROC_UNSUPPORTED_TYPE, "query: a key that is not an integer");
    }
#undef RANGE
    *lo = mn;
    *hi = mx;
    return COPROC_OK;
}

/* ---------------------------------------------------------------- placement */

/* What pipeline pi asks of a device, from the kernel it generates: the
 * device columns it reads (they pin it to their device) and doubles (a
 * float64 column read or written). *reads holds its columns (nreads).
 * COPROC_UNSUPPORTED with the run's note when it cannot be fused. */
typedef struct pipe_needs {
    int fp64;
    int nreads;
    const coproc_column *reads[COPROC__QP_MAX_ARGS];
} pipe_needs;

static coproc_status needs_of(fused *f, int pi, pipe_needs *nd)
{
    coproc__qkernel *k = calloc(1, sizeof *k);
    if (!k)
        return coproc__fail(f->rt, COPROC_HOST_OUT_OF_MEMORY, "query: out of host memory");
    coproc_status s = COPROC_OK;
    memset(nd, 0, sizeof *nd);
    /* Without doubles a pipeline may only copy float64 columns. */
    if (coproc__codegen(&f->prog, pi, 0, k) != 0) {
        coproc__qkernel_free(k);
        nd->fp64 = 1;
        if (coproc__codegen(&f->prog, pi, 1, k) != 0) {
            snprintf(f->run->note, sizeof f->run->note, "%s", k->why);
            s = COPROC_UNSUPPORTED;
        }
    }
    for (int i = 0; s == COPROC_OK && i < k->nargs; i++)
        nd->reads[nd->nreads++] = coproc__qarg_column(&k->args[i]);
    coproc__qkernel_free(k);
    free(k);
    return s;
}

static int device_can(const coproc__device *dev, const pipe_needs *nd)
{
    if (nd->fp64 && !dev->info.has_fp64)
        return 0;
    for (int i = 0; i < nd->nreads; i++)
        if (nd->reads[i]->dev && nd->reads[i]->dev != dev)
            return 0;
    return 1;
}

/* Roofline estimate of a pipeline reading `bytes` of columns, `host_bytes` of
 * them not yet on dev, over `rows` rows with `work` operations a row. */
static double roofline(coproc__device *dev, double bytes, double host_bytes, double rows, double work,
                       int kernels)
{
    const coproc__profile *p = dev->profile;
    double bw = p->mem_read_bytes_per_s > 0 ? p->mem_read_bytes_per_s : 10e9;
    /* No measured integer rate (a synthetic profile): memory-bound only. */
    double compute = p->int_ops_per_s > 0 ? rows * work / p->int_ops_per_s : 0;
    double launch = p->launch_latency_s > 0 ? p->launch_latency_s : 20e-6;
    double t = kernels * launch + fmax(bytes / bw, compute);
    /* zero_copy only allows reading host memory in place; a device that is
     * not host-unified copies what it has not cached. */
    if (host_bytes > 0 && !(dev->zero_copy && dev->info.host_unified_memory)) {
        double x = coproc__profile_transfer_now(p, 1, 0, host_bytes);
        t += x > 0 ? x : host_bytes / 5e9;
    }
    return t;
}

/* Bytes a pipeline reads (all of each referenced column, an upper bound) and
 * those not resident on dev. */
static void pipe_bytes(coproc__device *dev, const coproc__qpipe *q, const coproc__qprog *prog,
                       double *bytes, double *host_bytes, double *work)
{
    *bytes = *host_bytes = 0;
    *work = 2 + 4.0 * q->nsteps;
    const coproc_table *tabs[1 + COPROC__QP_MAX_STEPS];
    int nt = 0;
    tabs[nt++] = q->src;
    for (int i = 0; i < q->nsteps; i++)
        if (q->steps[i].kind == COPROC__QS_PROBE && prog->p[q->steps[i].build].src)
            tabs[nt++] = prog->p[q->steps[i].build].src;
    /* Every column of the tables involved: codegen has not run yet; the
     * correction learns the difference. */
    for (int t = 0; t < nt; t++)
        for (int c = 0; c < tabs[t]->n; c++) {
            const coproc_column *col = tabs[t]->cols[c];
            double b = (double)col->length * coproc_type_size(col->type) / (t == 0 ? 1 : 4);
            *bytes += b;
            if (!col->dev && !coproc__residency_has(dev, col))
                *host_bytes += (double)col->length * coproc_type_size(col->type);
        }
}

double coproc__qestimate(fused *f, coproc__device *dev, int pi)
{
    const coproc__qpipe *q = &f->prog.p[pi];
    double bytes, host, work;
    pipe_bytes(dev, q, &f->prog, &bytes, &host, &work);
    double t = roofline(dev, bytes, host, (double)q->src->rows, work, 2);
    return t * coproc__query_correction(f->rt, dev->index) + coproc__qestimate_builds(f, dev, pi);
}

double coproc__qestimate_builds(fused *f, coproc__device *dev, int pi)
{
    const coproc__qpipe *q = &f->prog.p[pi];
    double t = 0;
    for (int i = 0; i < q->nsteps; i++)
        if (q->steps[i].kind == COPROC__QS_PROBE) {
            const coproc__qpipe *b = &f->prog.p[q->steps[i].build];
            if (!b->src)
                continue;
            double bb, bh, bw;
            pipe_bytes(dev, b, &f->prog, &bb, &bh, &bw);
            t += roofline(dev, bb, bh, (double)b->src->rows, bw, 2);
        }
    return t * coproc__query_correction(f->rt, dev->index);
}

/* The devices (of `want`, or all when it is -1) that can run pipeline pi
 * and its builds, into devices[] (at most `max`): the needs are worked out
 * once, for every device. *fp64: some part needs doubles. Returns how many,
 * or -1 with the run's status in *s. */
static int able_devices(fused *f, int pi, int want, int *devices, int max, int *fp64,
                        coproc_status *s)
{
    const coproc__qpipe *q = &f->prog.p[pi];
    int n = 0, count = 0;
    pipe_needs *nd = calloc(1 + COPROC__QP_MAX_STEPS, sizeof *nd);
    if (!nd) {
        *s = coproc__fail(f->rt, COPROC_HOST_OUT_OF_MEMORY, "query: out of host memory");
        return -1;
    }
    *s = needs_of(f, pi, &nd[n++]);
    for (int i = 0; i < q->nsteps && *s == COPROC_OK; i++)
        if (q->steps[i].kind == COPROC__QS_PROBE)
            *s = needs_of(f, q->steps[i].build, &nd[n++]);
    *fp64 = 0;
    for (int i = 0; i < n; i++)
        *fp64 |= nd[i].fp64;
    for (int d = 0; *s == COPROC_OK && d < f->rt->device_count && count < max; d++) {
        int ok = !(want >= 0 && d != want);
        for (int i = 0; i < n && ok; i++)
            ok = device_can(&f->rt->devices[d], &nd[i]);
        if (ok)
            devices[count++] = d;
    }
    free(nd);
    return *s == COPROC_OK ? count : -1;
}

/* Kernel k's footprint on dev (admission.h): the bytes of the host columns
 * it reads that dev does not read in place. *fixed: those of other tables
 * and the scanned table's columns cached there already; *per_row: the rest,
 * a row of the scanned table (all its rows whole, a morsel's streamed). */
static void kernel_footprint(const coproc__qpipe *q, coproc__device *dev, const coproc__qkernel *k,
                             uint64_t *fixed, uint64_t *per_row)
{
    *fixed = *per_row = 0;
    if (dev->zero_copy && dev->info.host_unified_memory)
        return;
    for (int i = 0; i < k->nargs; i++) {
        const coproc_column *c = coproc__qarg_column(&k->args[i]);
        if (c->dev || c->length == 0)
            continue;
        size_t size = coproc_type_size(c->type);
        if (k->args[i].validity) { /* a bitmap: read whole */
            *fixed += c->length * size;
            continue;
        }
        if (k->args[i].table == q->src && !coproc__residency_has(dev, c))
            *per_row += size;
        else
            *fixed += c->length * size;
    }
}

int coproc__qfootprint(fused *f, coproc__device *dev, int pi, uint64_t *fixed, uint64_t *per_row)
{
    *fixed = *per_row = 0;
    coproc__qkernel *k = calloc(1, sizeof *k);
    if (!k)
        return -1;
    int rc = coproc__codegen(&f->prog, pi, dev->info.has_fp64, k) == 0 ? 0 : -1;
    if (rc == 0)
        kernel_footprint(&f->prog.p[pi], dev, k, fixed, per_row);
    coproc__qkernel_free(k);
    free(k);
    return rc;
}

/* Whether pipeline pi can stream its scanned table through a device in
 * morsels (hybrid.c): a group-by over a base table of host columns. */
static int streamable(fused *f, int pi)
{
    const coproc__qpipe *q = &f->prog.p[pi];
    if (q->sink != COPROC__QK_GROUP || q->src_pipe >= 0 || !q->src)
        return 0;
    for (int c = 0; c < q->src->n; c++)
        if (q->src->cols[c]->dev)
            return 0;
    return 1;
}

/* Whether pipeline pi fits dev's budget whole (0: it must stream or go elsewhere). */
static int fits_whole(fused *f, coproc__device *dev, int pi)
{
    uint64_t fixed, per_row;
    if (coproc__qfootprint(f, dev, pi, &fixed, &per_row) != 0)
        return 1; /* its error comes when it runs */
    return fixed + per_row * f->prog.p[pi].src->rows <= dev->budget_bytes;
}

/* The devices a hybrid run of pipeline pi would use (0 or 1: none): asked
 * for, a group-by over a base table of host columns, two devices that can. */
static int hybrid_devices(fused *f, int pi, int *devices)
{
    const coproc__qpipe *q = &f->prog.p[pi];
    if (!f->run->opts.hybrid || f->run->opts.device >= 0 || q->sink != COPROC__QK_GROUP ||
        q->src_pipe >= 0)
        return 0;
    /* Columns with nulls: on one device (morsels do not cut bitmaps). */
    for (int c = 0; c < q->src->n; c++)
        if (q->src->cols[c]->dev || q->src->cols[c]->validity)
            return 0;
    int fp64;
    coproc_status s;
    int n = able_devices(f, pi, -1, devices, COPROC__QMAX_DEVICES, &fp64, &s);
    return n < 0 ? 0 : coproc__hybrid_choose(f, pi, devices, n); /* an error: place() says it */
}

static coproc_status place(fused *f, int pi, double *est)
{
    coproc__qpipe *q = &f->prog.p[pi];
    coproc_runtime *rt = f->rt;
    int want = f->run->opts.device, fp64;
    int *able = malloc((rt->device_count ? rt->device_count : 1) * sizeof *able);
    if (!able)
        return coproc__fail(rt, COPROC_HOST_OUT_OF_MEMORY, "query: out of host memory");
    coproc_status s;
    int n = able_devices(f, pi, want, able, rt->device_count, &fp64, &s);
    if (n < 0) {
        free(able);
        return s;
    }
    /* The pipeline and its builds run on one device: the least estimate plus
     * the estimated rest of what the device runs now (WTAR), among those
     * whose budget holds it (or can stream it; all of them if none does). */
    int best = -1, can_stream = streamable(f, pi), nfit = 0;
    int *fit = malloc((n ? n : 1) * sizeof *fit);
    if (!fit) {
        free(able);
        return coproc__fail(rt, COPROC_HOST_OUT_OF_MEMORY, "query: out of host memory");
    }
    for (int i = 0; i < n; i++)
        nfit += fit[i] = can_stream || fits_whole(f, &rt->devices[able[i]], pi);
    double best_t = INFINITY, now = rt->backend->now(rt);
    for (int i = 0; i < n; i++) {
        if (nfit && !fit[i])
            continue;
        double t = coproc__qestimate(f, &rt->devices[able[i]], pi);
        double w = t + coproc__admit_wait_s(&rt->devices[able[i]], now);
        if (w < best_t || best < 0) {
            best_t = w;
            best = able[i];
            *est = t;
        }
    }
    free(able);
    free(fit);
    if (best < 0)
        return coproc__fail(rt, want >= 0 ? COPROC_WRONG_DEVICE : COPROC_UNSUPPORTED,
                            "query: no device can run the pipeline over %s (%s)", q->src_name,
                            fp64 ? "it reads or writes float64, and no device that holds its columns "
                                   "has fp64"
                                 : "its columns live on different devices");
    q->device = best;
    return COPROC_OK;
}

/* ---------------------------------------------------------------- the sinks */

coproc_status coproc__qkernel_of(fused *f, coproc__device *dev, const coproc__qkernel *k,
                               const char *name, cl_kernel *out)
{
    cl_program prog;
    coproc_status s = coproc__query_program(f->rt, dev, k->src.s, k->src.len, &prog);
    if (s != COPROC_OK)
        return s;
    cl_int err;
    *out = clCreateKernel(prog, name, &err);
    if (!*out)
        return coproc__fail_cl(f->rt, err, "query: clCreateKernel(%s)", name);
    coproc__kernel_fresh(dev, *out); /* its first launch may compile (progress.h) */
    return COPROC_OK;
}

static coproc_status wait_queue(fused *f, coproc__device *dev, const char *what)
{
    cl_int err = coproc__finish(dev, dev->queue);
    return err == CL_SUCCESS ? COPROC_OK : coproc__fail_cl(f->rt, err, "query: %s on device %d", what, dev->index);
}

static coproc_status buffer(fused *f, coproc__device *dev, size_t bytes, cl_mem *out)
{
    return coproc__buffer_new(f->rt, dev, bytes, out);
}

coproc_status coproc__qread(fused *f, coproc__device *dev, cl_mem m, void *dst, size_t bytes)
{
    if (!bytes)
        return COPROC_OK;
    cl_int err = coproc__read_now(dev, dev->queue, m, 0, bytes, dst, 0, NULL, NULL);
    return err == CL_SUCCESS ? COPROC_OK : coproc__fail_cl(f->rt, err, "query: reading a result");
}

/* A dense table this small (1 MiB of slots) stays in a CPU core's L2. */
#define DENSE_CACHED_SLOTS (1u << 18)

/* The range of build pipeline q's key: its column's, or for a key of
 * several columns the packed key's, [0, range - 1], with each column's range
 * and stride kept in the table (the last column varies fastest). range 0:
 * no key (no row, or a key column null in every row). A packed key that
 * would need more than 62 bits is UNSUPPORTED with the run's note: the plan
 * runs one operator at a time, whose composite-key joins hash the columns. */
static coproc_status key_range(fused *f, coproc__qpipe *q, const coproc__qkernel *k, int64_t *lo,
                               int64_t *hi, uint64_t *range)
{
    coproc__qbuilt *t = &q->built;
    int nk = k->nkey_cols;
    t->nkeys = nk;
    uint64_t r[COPROC__QP_MAX_JOIN_KEYS], packed = 1;
    int empty = 0, wide = 0;
    memset(t->kst, 0, sizeof t->kst);
    for (int m = 0; m < nk; m++) {
        coproc_status s = coproc__qcolumn_range(f, q->src->cols[k->key_cols[m]],
                                                &t->klo[m], &t->khi[m]);
        if (s != COPROC_OK)
            return s;
        /* 0 for a column's full 64-bit range (hi - lo + 1 wraps) */
        r[m] = t->khi[m] >= t->klo[m] ? (uint64_t)t->khi[m] - (uint64_t)t->klo[m] + 1 : 0;
        if (t->khi[m] < t->klo[m])
            empty = 1;
        else if (r[m] == 0 || packed > (UINT64_C(1) << 62) / r[m])
            wide = 1;
        else
            packed *= r[m];
    }
    if (nk == 1) {
        *lo = t->klo[0];
        *hi = t->khi[0];
        *range = r[0];
        return COPROC_OK;
    }
    if (empty) {
        *lo = 0;
        *hi = -1;
        *range = 0;
        return COPROC_OK;
    }
    if (wide) {
        snprintf(f->run->note, sizeof f->run->note,
                 "%s: the key columns' ranges need more than 62 bits packed", q->sink_node->label);
        return COPROC_UNSUPPORTED;
    }
    for (int m = nk - 1; m >= 0; m--)
        t->kst[m] = m == nk - 1 ? 1 : t->kst[m + 1] * (int64_t)r[m + 1];
    *lo = 0;
    *hi = (int64_t)(packed - 1);
    *range = packed;
    return COPROC_OK;
}

/* The maps of the join's string keys whose two sides have different
 * dictionaries (plan.h, key_remap) into buffers on dev, for the probe. */
static coproc_status upload_remaps(fused *f, coproc__device *dev, coproc__qpipe *q)
{
    const coproc_node *j = q->sink_node;
    coproc__qbuilt *t = &q->built;
    for (int m = 0; m < j->njoin_keys && m < COPROC__QP_MAX_JOIN_KEYS; m++) {
        if (!j->key_remap[m])
            continue;
        int pi = coproc__schema_find(&j->in->schema, j->probe_keys[m]);
        const coproc__dict *d = pi >= 0 ? j->in->schema.dicts[pi] : NULL;
        size_t n = d ? (size_t)d->n : 0;
        if (t->remap[m]) /* a build run again (on another device) */
            clReleaseMemObject(t->remap[m]);
        t->remap[m] = NULL;
        coproc_status s = buffer(f, dev, (n ? n : 1) * sizeof(int32_t), &t->remap[m]);
        if (s != COPROC_OK)
            return s;
        t->nremap[m] = (int64_t)n;
        cl_int err = n ? coproc__write_now(dev, dev->queue, t->remap[m], 0, n * sizeof(int32_t),
                                           j->key_remap[m], 0, NULL, NULL)
                       : CL_SUCCESS;
        if (err != CL_SUCCESS)
            return coproc__fail_cl(f->rt, err, "%s: the map of string codes", j->label);
    }
    return COPROC_OK;
}

/* A join's table over the build pipeline's rows, on dev. */
static coproc_status run_build(fused *f, coproc__device *dev, int bi, const coproc__qkernel *k,
                               const bound *b)
{
    coproc__qpipe *q = &f->prog.p[bi];
    coproc__qbuilt *t = &q->built;
    coproc_runtime *rt = f->rt;
    size_t n = q->src->rows;
    if (n >= UINT32_MAX)
        return coproc__fail(rt, COPROC_UNSUPPORTED, "%s: more than 2^32 - 2 build rows", q->sink_node->label);
    int64_t lo, hi;
    uint64_t range;
    coproc_status s = key_range(f, q, k, &lo, &hi, &range);
    if (s == COPROC_OK)
        s = upload_remaps(f, dev, q);
    if (s != COPROC_OK)
        return s;
    /* No key to insert: no row, or a key column null in every row (a
     * single column's full 64-bit range, range 0 too, is hashed). */
    int none = n == 0 || (hi < lo && k->nkey_cols > 1);
    size_t slots;
    /* Direct indexing (one load a probe, no key compare) when the key range
     * is within twice the rows, or small enough to stay in a core's cache
     * anyway (dates as yyyymmdd: 2556 keys over a range of 70,000). */
    if (none || (range > 0 && (range <= 2 * (uint64_t)n + 1024 || range <= DENSE_CACHED_SLOTS))) {
        t->dense = 1;
        t->kmin = none ? 1 : lo;
        t->kmax = none ? 0 : hi;
        slots = none ? 1 : range;
    } else {
        size_t cap = 16;
        while (cap < 2 * n)
            cap *= 2;
        t->dense = 0;
        t->kmin = 1;
        t->kmax = 0;
        t->mask = (uint32_t)(cap - 1);
        slots = cap;
    }
    t->src_rows = n;
    double key_bytes = 0;
    for (int m = 0; m < t->nkeys; m++)
        key_bytes += coproc_type_size(q->src->cols[k->key_cols[m]]->type);
    t->bytes = (double)slots * sizeof(cl_uint) + (t->dense ? 0 : (double)n * key_bytes);
    /* Dense tables also get a bitmap of the keys present (one bit a slot, a
     * 32nd of the table: it stays in a near cache where the table does
     * not), which probes test first; a hashed table gets one unused word. */
    size_t words = t->dense ? (slots + 31) / 32 : 1;
    if ((s = buffer(f, dev, slots * sizeof(cl_uint), &t->ht)) != COPROC_OK ||
        (s = buffer(f, dev, words * sizeof(cl_uint), &t->bits)) != COPROC_OK)
        return s;
    cl_uint zero = 0;
    cl_int err = coproc__enqueue_fill(dev, dev->queue, t->ht, &zero, sizeof zero, 0, slots * sizeof(cl_uint),
                                      0, NULL, NULL);
    if (err == CL_SUCCESS)
        err = coproc__enqueue_fill(dev, dev->queue, t->bits, &zero, sizeof zero, 0, words * sizeof(cl_uint),
                                   0, NULL, NULL);
    if (err != CL_SUCCESS)
        return coproc__fail_cl(rt, err, "%s: clearing the hash table", q->sink_node->label);
    if (none) {
        t->rows = 0;
        return COPROC_OK;
    }
    cl_mem flag, kr;
    /* flag[0]: a duplicate key was seen; flag[1]: the rows inserted. */
    if ((s = buffer(f, dev, 2 * sizeof(cl_uint), &flag)) != COPROC_OK)
        return s;
    /* The measured key ranges start empty: min at the top, max at the bottom. */
    cl_uint init[16];
    for (int r = 0; r < q->nranges; r++) {
        int sign = q->src->cols[q->range_col[r]]->type == COPROC_INT32;
        init[2 * r] = sign ? (cl_uint)INT32_MAX : UINT32_MAX;
        init[2 * r + 1] = sign ? (cl_uint)INT32_MIN : 0;
    }
    if ((s = buffer(f, dev, sizeof init, &kr)) != COPROC_OK) {
        clReleaseMemObject(flag);
        return s;
    }
    err = coproc__enqueue_fill(dev, dev->queue, flag, &zero, sizeof zero, 0, 2 * sizeof zero, 0, NULL, NULL);
    if (err == CL_SUCCESS && q->nranges)
        err = coproc__write_now(dev, dev->queue, kr, 0, 2 * q->nranges * sizeof(cl_uint), init, 0,
                                NULL, NULL);
    cl_kernel kern = NULL;
    if (err != CL_SUCCESS)
        s = coproc__fail_cl(rt, err, "%s: clearing a flag", q->sink_node->label);
    else
        s = coproc__qkernel_of(f, dev, k, "q_build", &kern);
    if (s == COPROC_OK) {
        coproc__args a = {.kernel = kern};
        coproc__qset_common_args(&a, f, k, b, n);
        cl_int dense = t->dense, check = q->sink_node->join == COPROC_JOIN_INNER;
        cl_long kmin = t->kmin;
        cl_uint mask = t->mask;
        COPROC__ARG(a, t->ht);
        COPROC__ARG(a, t->bits);
        COPROC__ARG(a, dense);
        COPROC__ARG(a, kmin);
        COPROC__ARG(a, mask);
        COPROC__ARG(a, check);
        COPROC__ARG(a, flag);
        COPROC__ARG(a, kr);
        for (int m = 0; t->nkeys > 1 && m < t->nkeys; m++) {
            cl_long klo = t->klo[m], kst = t->kst[m];
            COPROC__ARG(a, klo);
            COPROC__ARG(a, kst);
        }
        coproc__geometry g = coproc__geometry_for(dev, n, 0);
        s = coproc__launch(rt, dev, &a, &g, "query build");
    }
    cl_uint fl[2] = {0, 0};
    if (s == COPROC_OK)
        s = coproc__qread(f, dev, flag, fl, sizeof fl);
    cl_uint dup = fl[0];
    t->rows = fl[1];
    if (s == COPROC_OK && q->nranges)
        s = coproc__qread(f, dev, kr, init, 2 * q->nranges * sizeof(cl_uint));
    for (int r = 0; s == COPROC_OK && r < q->nranges; r++) {
        coproc_type t = q->src->cols[q->range_col[r]]->type;
        q->range_ok[r] = t == COPROC_INT32 || t == COPROC_UINT32;
        q->range_lo[r] = t == COPROC_INT32 ? (int32_t)init[2 * r] : (int64_t)init[2 * r];
        q->range_hi[r] = t == COPROC_INT32 ? (int32_t)init[2 * r + 1] : (int64_t)init[2 * r + 1];
    }
    if (kern)
        clReleaseKernel(kern);
    clReleaseMemObject(flag);
    clReleaseMemObject(kr);
    if (s == COPROC_OK && dup) {
        snprintf(f->run->note, sizeof f->run->note,
                 "%s: the build side has duplicate keys", q->sink_node->label);
        return COPROC_UNSUPPORTED;
    }
    return s;
}

/* Convert a partial aggregate (long or real as downloaded) into column type t. */
/* Ask pipeline pi's builds to measure the ranges of its group-by's keys. */
static void request_ranges(fused *f, int pi)
{
    coproc__qpipe *q = &f->prog.p[pi];
    if (q->sink != COPROC__QK_GROUP)
        return;
    const coproc_node *gb = q->sink_node;
    for (int i = 0; i < q->nsteps; i++) {
        if (q->steps[i].kind != COPROC__QS_PROBE || q->steps[i].node->join != COPROC_JOIN_INNER)
            continue;
        coproc__qpipe *b = &f->prog.p[q->steps[i].build];
        int projected = 0;
        for (int k = 0; k < b->nsteps; k++)
            projected |= b->steps[k].kind == COPROC__QS_PROJECT;
        if (projected || !b->src)
            continue;
        b->nranges = 0;
        for (int m = 0; m < gb->n && b->nranges < 8; m++)
            for (int c = 0; c < b->src->n; c++)
                if (strcmp(b->src->names[c], gb->names[m]) == 0)
                    b->range_col[b->nranges++] = c;
    }
}

/* The group-by over all of the pipeline's rows in one launch. */
static coproc_status run_group(fused *f, coproc__device *dev, int pi, const coproc__qkernel *k,
                               const bound *b)
{
    coproc__qpipe *q = &f->prog.p[pi];
    coproc__qslots sl;
    coproc__qgroup g;
    coproc__qpartial part = {0};
    coproc_status s = coproc__qslots_of(f, pi, k, &sl);
    if (s != COPROC_OK)
        return s;
    s = coproc__qgroup_open(&g, f, dev, pi, k, b, &sl, q->src->rows);
    if (s == COPROC_OK)
        s = coproc__qgroup_add(&g, q->src->rows, NULL);
    if (s == COPROC_OK)
        s = coproc__qgroup_close(&g, &part);
    coproc__qgroup_release(&g);
    if (s == COPROC_OK)
        s = coproc__qgroup_table(f, pi, k, &sl, &part, &q->out);
    coproc__qpartial_free(&part);
    return s;
}

/* Give col (rows rows) the validity that m holds, a byte a row (0: null). */
static coproc_status attach_validity(fused *f, coproc__device *dev, cl_mem m, coproc_column *col,
                                     size_t rows)
{
    size_t words = (rows + 31) / 32;
    unsigned char *bytes = malloc(rows ? rows : 1);
    coproc_column *bm = NULL;
    coproc_status s =
        bytes ? COPROC_OK
              : coproc__fail(f->rt, COPROC_HOST_OUT_OF_MEMORY, "query: out of host memory");
    if (s == COPROC_OK)
        s = coproc__qread(f, dev, m, bytes, rows);
    if (s == COPROC_OK)
        s = coproc__host_column_new(f->rt, COPROC_UINT32, words, &bm);
    if (s == COPROC_OK && words) {
        uint32_t *w = bm->host;
        memset(w, 0, words * sizeof *w);
        for (size_t i = 0; i < rows; i++)
            w[i / 32] |= (uint32_t)(bytes[i] != 0) << (i % 32);
    }
    if (s == COPROC_OK && (s = coproc_column_set_validity(col, bm)) != COPROC_OK)
        coproc_column_free(bm);
    free(bytes);
    return s;
}

static coproc_status run_materialize(fused *f, coproc__device *dev, int pi, const coproc__qkernel *k,
                                     const bound *b)
{
    coproc__qpipe *q = &f->prog.p[pi];
    const coproc__schema *sc = &q->top->schema;
    coproc_runtime *rt = f->rt;
    size_t n = q->src->rows;
    cl_mem counts = NULL, offsets = NULL, outs[256] = {0}, valids[256] = {0};
    cl_kernel kn = NULL, kw = NULL;
    /* The program first: building it learns the device's work-group limit
     * for its kernels (program.c), which the geometry must respect. */
    coproc_status s = coproc__qkernel_of(f, dev, k, "q_count", &kn);
    coproc__geometry g = coproc__geometry_for(dev, n, 0);
    size_t P = g.global;
    cl_uint *cnt = malloc(P * sizeof *cnt);
    cl_ulong *off = malloc(P * sizeof *off);
    if (s == COPROC_OK && (!cnt || !off))
        s = coproc__fail(rt, COPROC_HOST_OUT_OF_MEMORY, "query: out of host memory");
    if (s == COPROC_OK && sc->n > 256)
        s = coproc__fail(rt, COPROC_UNSUPPORTED, "query: more than 256 output columns");
    if (s == COPROC_OK)
        s = buffer(f, dev, P * sizeof(cl_uint), &counts);
    if (s == COPROC_OK) {
        coproc__args a = {.kernel = kn};
        coproc__qset_common_args(&a, f, k, b, n);
        COPROC__ARG(a, counts);
        s = coproc__launch(rt, dev, &a, &g, "query count");
    }
    if (s == COPROC_OK)
        s = coproc__qread(f, dev, counts, cnt, P * sizeof *cnt);
    size_t total = 0;
    for (size_t i = 0; s == COPROC_OK && i < P; i++) {
        off[i] = total;
        total += cnt[i];
    }
    coproc_table *t = NULL;
    if (s == COPROC_OK)
        s = coproc_table_create(rt, &t);
    for (int c = 0; c < sc->n && s == COPROC_OK; c++) {
        coproc_column *col;
        s = coproc__host_column_new(rt, sc->types[c], total, &col);
        if (s == COPROC_OK)
            s = coproc__table_add_owned(t, sc->names[c], col);
        if (s == COPROC_OK && total)
            s = buffer(f, dev, total * coproc_type_size(sc->types[c]), &outs[c]);
        if (s == COPROC_OK && total && k->out_valid[c])
            s = buffer(f, dev, total, &valids[c]);
    }
    if (s == COPROC_OK && total) {
        s = buffer(f, dev, P * sizeof(cl_ulong), &offsets);
        if (s == COPROC_OK) {
            cl_int err =
                coproc__write_now(dev, dev->queue, offsets, 0, P * sizeof *off, off, 0, NULL, NULL);
            if (err != CL_SUCCESS)
                s = coproc__fail_cl(rt, err, "query: writing offsets");
        }
        if (s == COPROC_OK)
            s = coproc__qkernel_of(f, dev, k, "q_write", &kw);
        if (s == COPROC_OK) {
            coproc__args a = {.kernel = kw};
            coproc__qset_common_args(&a, f, k, b, n);
            COPROC__ARG(a, offsets);
            for (int c = 0; c < sc->n; c++)
                COPROC__ARG(a, outs[c]);
            for (int c = 0; c < sc->n; c++)
                if (k->out_valid[c])
                    COPROC__ARG(a, valids[c]);
            s = coproc__launch(rt, dev, &a, &g, "query write");
        }
        for (int c = 0; c < sc->n && s == COPROC_OK; c++)
            s = coproc__qread(f, dev, outs[c], t->owned[c]->host, total * coproc_type_size(sc->types[c]));
    }
    /* Columns that can be null: their validity, a byte a row from the
     * kernel, into a bitmap. */
    for (int c = 0; c < sc->n && s == COPROC_OK; c++)
        if (k->out_valid[c])
            s = attach_validity(f, dev, valids[c], t->owned[c], total);
    if (s == COPROC_OK)
        q->out = t;
    else
        coproc_table_free(t);
    for (int c = 0; c < sc->n && c < 256; c++) {
        if (outs[c])
            clReleaseMemObject(outs[c]);
        if (valids[c])
            clReleaseMemObject(valids[c]);
    }
    if (counts)
        clReleaseMemObject(counts);
    if (offsets)
        clReleaseMemObject(offsets);
    if (kn)
        clReleaseKernel(kn);
    if (kw)
        clReleaseKernel(kw);
    free(cnt);
    free(off);
    return s;
}

/* ---------------------------------------------------------------- payloads */

/* The payloads kernel k reads from dense tables, made where missing: the
 * build side's column laid out by key, so a probe reads it with one load. */
coproc_status coproc__qmake_payloads(fused *f, coproc__device *dev, const coproc__qkernel *k, const bound *b)
{
    for (int p = 0; p < k->npays; p++) {
        coproc__qpipe *bp = &f->prog.p[k->builds[k->pays[p].build]];
        coproc__qbuilt *t = &bp->built;
        int c = k->args[k->pays[p].arg].col;
        if (!t->dense || (t->pay && t->pay[c]))
            continue;
        if (!t->pay) {
            if (!(t->pay = calloc(bp->src->n, sizeof *t->pay)))
                return coproc__fail(f->rt, COPROC_HOST_OUT_OF_MEMORY, "query: out of host memory");
            t->npay = bp->src->n;
        }
        size_t size = coproc_type_size(bp->src->cols[c]->type);
        size_t slots = t->kmax >= t->kmin ? (size_t)(t->kmax - t->kmin) + 1 : 0;
        cl_mem pay;
        coproc_status s = buffer(f, dev, (slots ? slots : 1) * size, &pay);
        if (s != COPROC_OK)
            return s;
        t->pay[c] = pay;
        if (!slots)
            continue;
        cl_kernel kern;
        if ((s = coproc__qkernel_of(f, dev, k, size == 8 ? "q_pay8" : "q_pay4", &kern)) != COPROC_OK)
            return s;
        coproc__args a = {.kernel = kern};
        cl_ulong n = slots;
        COPROC__ARG(a, n);
        COPROC__ARG(a, t->ht);
        COPROC__ARG(a, b[k->pays[p].arg].mem);
        COPROC__ARG(a, pay);
        coproc__geometry g = coproc__geometry_for(dev, slots, 0);
        s = coproc__launch(f->rt, dev, &a, &g, "query payload");
        clReleaseKernel(kern);
        if (s != COPROC_OK)
            return s;
    }
    return COPROC_OK;
}

/* ---------------------------------------------------------------- running pipelines */

coproc_status coproc__qrun_pipe(fused *f, int pi, int device);

/* Generate, bind and run pipeline pi on dev (its builds are ready). */
static coproc_status run_kernel(fused *f, coproc__device *dev, int pi, coproc_pipeline_info *info)
{
    coproc__qpipe *q = &f->prog.p[pi];
    coproc__qkernel *k = calloc(1, sizeof *k);
    bound *b = calloc(COPROC__QP_MAX_ARGS, sizeof *b);
    if (!k || !b) {
        free(k);
        free(b);
        return coproc__fail(f->rt, COPROC_HOST_OUT_OF_MEMORY, "query: out of host memory");
    }
    coproc_status s;
    uint64_t fixed = 0, per_row = 0, footprint = 0;
    if (coproc__codegen(&f->prog, pi, dev->info.has_fp64, k) != 0) {
        snprintf(f->run->note, sizeof f->run->note, "%s", k->why);
        s = COPROC_UNSUPPORTED;
    } else {
        /* Admitted once its columns fit beside those of the pipelines running there. */
        kernel_footprint(q, dev, k, &fixed, &per_row);
        footprint = fixed + per_row * q->src->rows;
        double until = f->rt->backend->now(f->rt) + (info->estimate_s > 0 ? info->estimate_s : 0);
        if (coproc__admit(dev, footprint, until, 1) < 0) {
            s = coproc__fail(f->rt, COPROC_DEVICE_OUT_OF_MEMORY,
                             "query: the pipeline over %s reads %llu bytes of columns, more than "
                             "device %d's budget (%llu bytes)", q->src_name,
                             (unsigned long long)footprint, dev->index,
                             (unsigned long long)dev->budget_bytes);
            footprint = 0;
        } else {
            s = coproc__qbind(f, dev, k, b, &info->bytes_moved);
            if (s != COPROC_OK) {
                coproc__admit_release(dev, footprint);
                footprint = 0;
            }
        }
    }
    if (s == COPROC_OK) {
        for (int i = 0; i < k->nargs; i++) {
            const coproc_column *c = b[i].col;
            info->bytes_in += c->length * coproc_type_size(c->type);
        }
        s = coproc__qmake_payloads(f, dev, k, b);
        if (s == COPROC_OK && q->sink == COPROC__QK_BUILD)
            s = run_build(f, dev, pi, k, b);
        else if (s == COPROC_OK && q->sink == COPROC__QK_GROUP)
            s = run_group(f, dev, pi, k, b);
        else if (s == COPROC_OK)
            s = run_materialize(f, dev, pi, k, b);
        if (s == COPROC_OK)
            s = wait_queue(f, dev, "a pipeline");
        else
            coproc__finish(dev, dev->queue); /* nothing may still read the columns we unpin */
        coproc__qunbind(dev, b, k->nargs);
        coproc__admit_release(dev, footprint);
    }
    coproc__qkernel_free(k);
    free(k);
    free(b);
    return s;
}

static void describe(const fused *f, int pi, char *out, size_t len)
{
    const coproc__qpipe *q = &f->prog.p[pi];
    static const char *sinks[] = {"?", "group-by", "materialise", "build"};
    int w = snprintf(out, len, "%s", q->src_name);
    for (int i = 0; i < q->nsteps && w > 0 && (size_t)w < len; i++) {
        const coproc__qstep *st = &q->steps[i];
        const char *what = st->kind == COPROC__QS_FILTER ? "filter" : st->kind == COPROC__QS_PROJECT ? "project" : "probe";
        w += snprintf(out + w, len - w, " > %s", what);
        if (st->kind == COPROC__QS_PROBE && (size_t)w < len)
            w += snprintf(out + w, len - w, " %s", f->prog.p[st->build].src_name);
    }
    if (w > 0 && (size_t)w < len)
        snprintf(out + w, len - w, " > %s", sinks[q->sink]);
}

/* The pipeline's output in its order-by's order, if it has one. */
static coproc_status order_output(fused *f, coproc__qpipe *q)
{
    if (!q->order || !q->out)
        return COPROC_OK;
    coproc_table *sorted;
    coproc_status s = coproc__order_by_host(f->rt, q->out, q->order, &sorted);
    if (s != COPROC_OK)
        return s;
    coproc_table_free(q->out);
    q->out = sorted;
    return COPROC_OK;
}

/* Run pipeline pi: first what it reads (an earlier pipeline's output, its
 * join tables' own inputs), then its builds on its device, then itself.
 * device >= 0 forces the device (a build runs where its probe does). */
coproc_status coproc__qrun_pipe(fused *f, int pi, int device)
{
    coproc__qpipe *q = &f->prog.p[pi];
    coproc_status s;
    if (q->src_pipe >= 0 && !q->src) {
        if ((s = coproc__qrun_pipe(f, q->src_pipe, -1)) != COPROC_OK)
            return s;
        q->src = f->prog.p[q->src_pipe].out;
    }
    /* The build sides' inputs first, so that placement sees their sizes. */
    for (int i = 0; i < q->nsteps; i++)
        if (q->steps[i].kind == COPROC__QS_PROBE) {
            coproc__qpipe *bp = &f->prog.p[q->steps[i].build];
            if (bp->src_pipe >= 0 && !bp->src) {
                if ((s = coproc__qrun_pipe(f, bp->src_pipe, -1)) != COPROC_OK)
                    return s;
                bp->src = f->prog.p[bp->src_pipe].out;
            }
        }
    coproc_pipeline_info info = {.fused = 1, .estimate_s = -1};
    int devices[COPROC__QMAX_DEVICES], ndev = device < 0 ? hybrid_devices(f, pi, devices) : 0;
    if (ndev >= 2) {
        request_ranges(f, pi);
        describe(f, pi, info.what, sizeof info.what);
        if ((s = coproc__hybrid_group(f, pi, devices, ndev, info.what)) != COPROC_OK)
            return s;
        return order_output(f, q);
    }
    double est = -1;
    if (device >= 0) {
        q->device = device;
    } else {
        if ((s = place(f, pi, &est)) != COPROC_OK)
            return s;
    }
    coproc__device *dev = &f->rt->devices[q->device];
    request_ranges(f, pi);
    /* Over the device's budget whole: its scanned table streams through in
     * morsels (hybrid.c on this device alone), as a cold copy would cost. */
    if (streamable(f, pi) && !fits_whole(f, dev, pi)) {
        int one = q->device;
        describe(f, pi, info.what, sizeof info.what);
        double t0 = coproc__qrun_now(f->run);
        if ((s = coproc__hybrid_group(f, pi, &one, 1, info.what)) != COPROC_OK)
            return s;
        /* The device's correction learns from it as from a whole run (the
         * same pipeline on one device): else an estimate that misses the
         * copies would keep placing it here. */
        if (est > 0)
            coproc__query_observe(f->rt, q->device, est / coproc__query_correction(f->rt, q->device),
                                  coproc__qrun_now(f->run) - t0);
        return order_output(f, q);
    }
    for (int i = 0; i < q->nsteps; i++)
        if (q->steps[i].kind == COPROC__QS_PROBE && (s = coproc__qrun_pipe(f, q->steps[i].build, q->device)) != COPROC_OK)
            return s;
    coproc__order_probes(&f->prog, pi);
    describe(f, pi, info.what, sizeof info.what);
    info.device = q->device;
    info.estimate_s = est;
    info.rows_in = q->src->rows;
    info.start_s = coproc__qrun_now(f->run);
    double w0 = coproc__now();
    s = run_kernel(f, dev, pi, &info);
    if (s != COPROC_OK)
        return s;
    dev->backend->pipeline_ran(dev, (double)info.bytes_in, (double)info.rows_in, 2 + 4.0 * q->nsteps,
                               coproc__now() - w0);
    info.end_s = coproc__qrun_now(f->run);
    if (est > 0)
        coproc__query_observe(f->rt, q->device, est / coproc__query_correction(f->rt, q->device),
                              info.end_s - info.start_s);
    if ((s = order_output(f, q)) != COPROC_OK)
        return s;
    info.end_s = coproc__qrun_now(f->run);
    return coproc__qrun_report(f->run, &info);
}

coproc_status coproc__fused_run(coproc__qrun *run, const coproc_node *root, coproc_table **out)
{
    *out = NULL;
    fused f = {.run = run, .rt = run->rt};
    coproc_status s = coproc__lower(run->rt, root, &f.prog);
    if (s == COPROC_OK)
        s = coproc__qrun_pipe(&f, f.prog.result, -1);
    if (s == COPROC_OK) {
        *out = f.prog.p[f.prog.result].out;
        f.prog.p[f.prog.result].out = NULL;
    }
    if (s != COPROC_OK)
        run->ninfo = 0; /* a fallback reports its own */
    coproc__qprog_free(&f.prog);
    return s;
}
