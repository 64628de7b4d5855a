/* group_sink.c - a fused group-by's sink (fused.h): the slots' layout, one
 * device's partials over one launch or many (morsels), their merge across
 * devices, and the result table. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/opencl/sync.h"
#include "core/error.h"
#include "data/column.h"
#include "query/fused.h"

#define MAX_SLOTS (1u << 24)            /* groups a fused group-by holds */
#define PARTIALS_MAX_BYTES (256u << 20) /* its partial aggregates, all work-items */
/* The GPU path's table in each work-group's local memory, at most. */
#define LOCAL_TABLE_MAX_BYTES (32u << 10)

/* ---------------------------------------------------------------- slots */

/* A key's range as the build kernel of the dimension it comes from measured
 * it over the rows that pass that dimension's filters. */
static int measured_range(const coproc__fused *f, int pi, const coproc__qarg *key, int64_t *lo,
                          int64_t *hi)
{
    const coproc__qpipe *q = &f->prog.p[pi];
    for (int i = 0; i < q->nsteps; i++) {
        if (q->steps[i].kind != COPROC__QS_PROBE)
            continue;
        const coproc__qpipe *b = &f->prog.p[q->steps[i].build];
        if (b->src != key->table)
            continue;
        for (int r = 0; r < b->nranges; r++)
            if (b->range_col[r] == key->col && b->range_ok[r]) {
                *lo = b->range_lo[r];
                *hi = b->range_hi[r];
                return 1;
            }
    }
    return 0;
}

coproc_status coproc__qslots_of(coproc__fused *f, int pi, const coproc__qkernel *k,
                                coproc__qslots *out)
{
    const coproc_node *gb = f->prog.p[pi].sink_node;
    memset(out, 0, sizeof *out);
    double slots = 1;
    for (int m = 0; m < k->nkeys; m++) {
        int64_t lo, hi;
        if (!measured_range(f, pi, &k->keys[m], &lo, &hi)) {
            coproc_status s =
                coproc__qcolumn_range(f, k->keys[m].table->cols[k->keys[m].col], &lo, &hi);
            if (s != COPROC_OK)
                return s;
        }
        out->kmin[m] = lo;
        /* hi - lo + 1 wraps to 0 for a key spanning all 64 bits: counted
         * in a double, it is then far over MAX_SLOTS */
        /* a key that can be null: one slot more, its last, for the null key */
        out->range[m] = (hi >= lo ? (uint64_t)hi - (uint64_t)lo + 1 : 1) + k->key_nullable[m];
        slots *=
            (hi >= lo ? (double)((uint64_t)hi - (uint64_t)lo) + 1.0 : 1.0) + k->key_nullable[m];
    }
    size_t per_slot = sizeof(cl_long) * (1 + (size_t)k->naggs);
    if (slots > MAX_SLOTS || slots * per_slot > PARTIALS_MAX_BYTES) {
        snprintf(f->run->note, sizeof f->run->note,
                 "%s: the keys span %.0f combinations, more than a fused group-by holds",
                 gb->label, slots);
        return COPROC_UNSUPPORTED;
    }
    out->S = (size_t)slots;
    for (int m = k->nkeys - 1; m >= 0; m--)
        out->stride[m] = m == k->nkeys - 1 ? 1 : out->stride[m + 1] * out->range[m + 1];
    return COPROC_OK;
}

/* ---------------------------------------------------------------- partials */

static int agg_is_float(const coproc__qkernel *k, int a)
{
    return k->agg_float[a] && k->agg_fn[a] != COPROC_AGG_COUNT;
}

static coproc_status partial_alloc(coproc_runtime *rt, const coproc__qkernel *k, size_t S,
                                   coproc__qpartial *p)
{
    memset(p, 0, sizeof *p);
    p->S = S;
    p->naggs = k->naggs;
    p->cnt = malloc((S ? S : 1) * sizeof *p->cnt);
    int ok = p->cnt != NULL;
    for (int a = 0; a < k->naggs && ok; a++)
        ok = (p->agg[a] = malloc((S ? S : 1) * 8)) != NULL;
    if (ok)
        return COPROC_OK;
    coproc__qpartial_free(p);
    return coproc__fail(rt, COPROC_HOST_OUT_OF_MEMORY, "query: out of host memory");
}

void coproc__qpartial_free(coproc__qpartial *p)
{
    free(p->cnt);
    for (int a = 0; a < COPROC__QP_MAX_PARTIALS; a++)
        free(p->agg[a]);
    memset(p, 0, sizeof *p);
}

void coproc__qpartial_merge(coproc__qpartial *dst, const coproc__qpartial *src,
                            const coproc__qkernel *k)
{
    for (size_t s = 0; s < dst->S; s++)
        dst->cnt[s] = (int64_t)((uint64_t)dst->cnt[s] + (uint64_t)src->cnt[s]);
    for (int a = 0; a < dst->naggs; a++) {
        int fn = k->agg_fn[a];
        if (k->agg_float[a]) {
            double *d = dst->agg[a];
            const double *x = src->agg[a];
            for (size_t s = 0; s < dst->S; s++)
                d[s] = fn == COPROC_AGG_MIN   ? fmin(d[s], x[s])
                       : fn == COPROC_AGG_MAX ? fmax(d[s], x[s])
                                              : d[s] + x[s];
        } else {
            int64_t *d = dst->agg[a];
            const int64_t *x = src->agg[a];
            for (size_t s = 0; s < dst->S; s++)
                d[s] = fn == COPROC_AGG_MIN   ? (x[s] < d[s] ? x[s] : d[s])
                       : fn == COPROC_AGG_MAX ? (x[s] > d[s] ? x[s] : d[s])
                                              : (int64_t)((uint64_t)d[s] + (uint64_t)x[s]);
        }
    }
}

static void put_value(void *col, size_t row, coproc_type t, int is_float, int64_t iv, double fv)
{
    switch (t) {
    case COPROC_INT32: ((int32_t *)col)[row] = (int32_t)(is_float ? (int64_t)fv : iv); break;
    case COPROC_INT64: ((int64_t *)col)[row] = is_float ? (int64_t)fv : iv; break;
    case COPROC_UINT32: ((uint32_t *)col)[row] = (uint32_t)(is_float ? (int64_t)fv : iv); break;
    case COPROC_UINT64: ((uint64_t *)col)[row] = (uint64_t)(is_float ? (int64_t)fv : iv); break;
    case COPROC_FLOAT32: ((float *)col)[row] = (float)(is_float ? fv : (double)iv); break;
    case COPROC_FLOAT64: ((double *)col)[row] = is_float ? fv : (double)iv; break;
    default: break;
    }
}

/* Give col (rows rows) a validity of its own, every row null for now; *bits
 * receives its words (NULL for no rows). */
static coproc_status new_validity(coproc_runtime *rt, coproc_column *col, size_t rows,
                                  uint32_t **bits)
{
    coproc_column *bm;
    coproc_status st = coproc__host_column_new(rt, COPROC_UINT32, (rows + 31) / 32, &bm);
    if (st == COPROC_OK && (st = coproc_column_set_validity(col, bm)) != COPROC_OK)
        coproc_column_free(bm);
    if (st == COPROC_OK && rows) {
        *bits = bm->host;
        memset(*bits, 0, (rows + 31) / 32 * sizeof **bits);
    }
    return st;
}

coproc_status coproc__qgroup_table(coproc__fused *f, int pi, const coproc__qkernel *k,
                                   const coproc__qslots *sl, const coproc__qpartial *p,
                                   coproc_table **out)
{
    const coproc_node *gb = f->prog.p[pi].sink_node;
    coproc_runtime *rt = f->rt;
    size_t rows = 0, S = sl->S;
    for (size_t s = 0; s < S; s++)
        rows += p->cnt[s] > 0 || gb->n == 0;
    coproc_table *t;
    coproc_status st = coproc_table_create(rt, &t);
    if (st != COPROC_OK)
        return st;
    for (int c = 0; c < gb->schema.n && st == COPROC_OK; c++) {
        coproc_column *col;
        st = coproc__host_column_new(rt, gb->schema.types[c], rows, &col);
        if (st == COPROC_OK)
            st = coproc__table_add_owned(t, gb->schema.names[c], col);
    }
    if (st != COPROC_OK) {
        coproc_table_free(t);
        return st;
    }
    /* An aggregate over values that can be null is null where its group
     * has no valid value (COUNT is 0 there): its column gets a validity. */
    uint32_t *valid[16] = {0}, *valid_key[8] = {0};
    for (int a = 0; a < gb->naggs && st == COPROC_OK; a++)
        if (k->agg_valid[a] && k->agg_fn[a] != COPROC_AGG_COUNT)
            st = new_validity(rt, t->owned[gb->n + a], rows, &valid[a]);
    /* A key that can be null: null in the row of the null keys' group. */
    for (int m = 0; m < gb->n && st == COPROC_OK; m++)
        if (k->key_nullable[m])
            st = new_validity(rt, t->owned[m], rows, &valid_key[m]);
    if (st != COPROC_OK) {
        coproc_table_free(t);
        return st;
    }
    size_t r = 0;
    for (size_t s = 0; s < S; s++) {
        int64_t cnt = p->cnt[s];
        if (cnt == 0 && gb->n > 0)
            continue;
        for (int m = 0; m < gb->n; m++) {
            uint64_t at = (s / sl->stride[m]) % sl->range[m];
            int null_slot = valid_key[m] && at == sl->range[m] - 1;
            if (valid_key[m] && !null_slot)
                valid_key[m][r / 32] |= 1u << (r % 32);
            /* the null keys' slot holds 0 (its key's range may be empty:
             * kmin INT64_MAX, where kmin + at would overflow) */
            put_value(t->owned[m]->host, r, gb->schema.types[m], 0,
                      null_slot ? 0 : (int64_t)((uint64_t)sl->kmin[m] + at), 0);
        }
        for (int a = 0; a < gb->naggs; a++) {
            int fl = agg_is_float(k, a);
            int64_t iv = 0;
            double fv = 0;
            /* the rows whose argument is valid (all of them when it cannot be null) */
            int64_t nvalid =
                k->agg_valid[a] > 0 ? ((const int64_t *)p->agg[k->agg_valid[a] - 1])[s] : cnt;
            if (valid[a] && nvalid > 0)
                valid[a][r / 32] |= 1u << (r % 32);
            if (k->agg_fn[a] == COPROC_AGG_COUNT)
                iv = nvalid;
            else if (fl)
                fv = ((const double *)p->agg[a])[s];
            else
                iv = ((const int64_t *)p->agg[a])[s];
            coproc_type ty = gb->schema.types[gb->n + a];
            void *col = t->owned[gb->n + a]->host;
            if (k->agg_fn[a] == COPROC_AGG_AVG) {
                double sum = fl ? fv : (double)iv;
                put_value(col, r, ty, 1, 0, nvalid ? sum / (double)nvalid : NAN);
            } else if ((k->agg_fn[a] == COPROC_AGG_MIN || k->agg_fn[a] == COPROC_AGG_MAX) &&
                       nvalid == 0) {
                put_value(col, r, ty, 1, 0, 0); /* no rows (only without keys): 0, as the operators */
            } else {
                put_value(col, r, ty, fl, iv, fv);
            }
        }
        r++;
    }
    *out = t;
    return COPROC_OK;
}

/* ---------------------------------------------------------------- one device's group-by */

/* The leading arguments: the pipeline's, each key's least value and
 * stride, then the slots. */
static void set_group_args(coproc__args *a, coproc__qgroup *g, const coproc__qbound *b,
                           uint64_t n)
{
    coproc__qset_common_args(a, g->f, g->k, b, n);
    for (int m = 0; m < g->k->nkeys; m++) {
        cl_long lo = g->sl.kmin[m];
        cl_ulong st = g->sl.stride[m], null_slot = g->sl.range[m] - 1;
        COPROC__ARG(*a, lo);
        COPROC__ARG(*a, st);
        if (g->k->key_nullable[m])
            COPROC__ARG(*a, null_slot);
    }
    cl_ulong S = g->sl.S;
    COPROC__ARG(*a, S);
}

/* The GPU path: q_local (a table in each work-group's local memory) when
 * the slots fit there, else q_global (atomics on the result). The result
 * holds (lo, hi) word pairs a slot: the count, then each sum. */
static coproc_status open_atomic(coproc__qgroup *g, const coproc__qbound *b, uint64_t max_rows)
{
    coproc__device *dev = g->dev;
    coproc_runtime *rt = g->f->rt;
    const coproc__qkernel *k = g->k;
    size_t W = 2 * (1 + (size_t)k->naggs), table = g->sl.S * W * sizeof(cl_uint);
    cl_ulong dev_local = 0, kern_local = 0;
    size_t kern_wg = 0;
    clGetDeviceInfo(dev->id, CL_DEVICE_LOCAL_MEM_SIZE, sizeof dev_local, &dev_local, NULL);
    g->local = table <= LOCAL_TABLE_MAX_BYTES && table + 1024 <= dev_local;
    coproc_status s = coproc__buffer_new(rt, dev, table, &g->out);
    if (s == COPROC_OK) {
        cl_uint zero = 0;
        cl_int err = coproc__enqueue_fill(dev, dev->queue, g->out, &zero, sizeof zero, 0, table,
                                          0, NULL, NULL);
        if (err != CL_SUCCESS)
            s = coproc__fail_cl(rt, err, "%s: clearing the groups",
                                g->f->prog.p[g->pi].sink_node->label);
    }
    if (s == COPROC_OK)
        s = coproc__qkernel_of(g->f, dev, k, g->local ? "q_local" : "q_global", &g->km);
    /* The local table beside what the kernel itself keeps in local memory. */
    if (s == COPROC_OK && g->local &&
        (clGetKernelWorkGroupInfo(g->km, dev->id, CL_KERNEL_LOCAL_MEM_SIZE, sizeof kern_local,
                                  &kern_local, NULL) != CL_SUCCESS ||
         kern_local + table > dev_local)) {
        clReleaseKernel(g->km);
        g->km = NULL;
        g->local = 0;
        s = coproc__qkernel_of(g->f, dev, k, "q_global", &g->km);
    }
    if (s != COPROC_OK)
        return s;
    g->g = coproc__geometry_for(dev, max_rows, 0);
    if (clGetKernelWorkGroupInfo(g->km, dev->id, CL_KERNEL_WORK_GROUP_SIZE, sizeof kern_wg,
                                 &kern_wg, NULL) == CL_SUCCESS &&
        kern_wg && g->g.local > kern_wg) {
        g->g.local = kern_wg;
        g->g.global = g->g.groups * g->g.local;
    }
    coproc__args a = {.kernel = g->km};
    set_group_args(&a, g, b, max_rows);
    if (g->local)
        COPROC__ARG_LOCAL(a, table);
    COPROC__ARG(a, g->out);
    return a.err == CL_SUCCESS ? COPROC_OK
                               : coproc__fail_cl(rt, a.err, "query group-by: clSetKernelArg %u",
                                                 a.next);
}

/* The CPU path: one partition of partials per work-item (no atomics, any
 * aggregate), added up slot by slot by q_combine at the end. */
static coproc_status open_partitions(coproc__qgroup *g, const coproc__qbound *b,
                                     uint64_t max_rows)
{
    coproc__device *dev = g->dev;
    coproc_runtime *rt = g->f->rt;
    const coproc__qkernel *k = g->k;
    size_t S = g->sl.S, per_slot = sizeof(cl_long) * (1 + (size_t)k->naggs);
    int fp64 = dev->info.has_fp64;
    /* The kernels first: building them teaches the device the work-group
     * size they allow (program.c), which the geometry keeps to (a register-
     * hungry kernel on a GPU path may allow 32 where the device allows 256). */
    coproc_status s = coproc__qkernel_of(g->f, dev, k, "q_main", &g->km);
    if (s == COPROC_OK)
        s = coproc__qkernel_of(g->f, dev, k, "q_combine", &g->kc);
    if (s != COPROC_OK)
        return s;
    g->g = coproc__geometry_for(dev, max_rows, 0);
    size_t kern_wg = 0;
    if (clGetKernelWorkGroupInfo(g->km, dev->id, CL_KERNEL_WORK_GROUP_SIZE, sizeof kern_wg,
                                 &kern_wg, NULL) == CL_SUCCESS &&
        kern_wg && g->g.local > kern_wg) {
        g->g.local = kern_wg;
        g->g.global = g->g.groups * g->g.local;
    }
    while (g->g.global > 1 && (double)g->g.global * S * per_slot > PARTIALS_MAX_BYTES) {
        if (g->g.groups > 1)
            g->g.groups = (g->g.groups + 1) / 2;
        else
            g->g.local = (g->g.local + 1) / 2;
        g->g.global = g->g.groups * g->g.local;
    }
    /* Fewer work-items must not walk more rows each than the device allows. */
    uint64_t cap = dev->quirks.max_rows_per_item;
    if (cap && (max_rows + g->g.global - 1) / g->g.global > cap) {
        snprintf(g->f->run->note, sizeof g->f->run->note,
                 "%s: %zu groups' partials for every work-item would leave more rows to each "
                 "than device %d allows",
                 g->f->prog.p[g->pi].sink_node->label, S, dev->index);
        return COPROC_UNSUPPORTED;
    }
    size_t P = g->g.global;
    s = coproc__buffer_new(rt, dev, P * S * sizeof(cl_long), &g->pcnt);
    if (s == COPROC_OK)
        s = coproc__buffer_new(rt, dev, S * sizeof(cl_long), &g->ocnt);
    for (int a = 0; a < k->naggs && s == COPROC_OK; a++) {
        g->asize[a] = k->agg_float[a] ? (fp64 ? sizeof(double) : sizeof(float)) : sizeof(cl_long);
        s = coproc__buffer_new(rt, dev, P * S * g->asize[a], &g->pa[a]);
        if (s == COPROC_OK)
            s = coproc__buffer_new(rt, dev, S * g->asize[a], &g->oa[a]);
    }
    if (s != COPROC_OK)
        return s;
    coproc__args a = {.kernel = g->km};
    set_group_args(&a, g, b, max_rows);
    COPROC__ARG(a, g->pcnt);
    for (int x = 0; x < k->naggs; x++)
        COPROC__ARG(a, g->pa[x]);
    g->fresh_arg = a.next;
    return a.err == CL_SUCCESS ? COPROC_OK
                               : coproc__fail_cl(rt, a.err, "query group-by: clSetKernelArg %u",
                                                 a.next);
}

coproc_status coproc__qgroup_open(coproc__qgroup *g, coproc__fused *f, coproc__device *dev,
                                  int pi, const coproc__qkernel *k, const coproc__qbound *b,
                                  const coproc__qslots *sl, uint64_t max_rows)
{
    memset(g, 0, sizeof *g);
    g->f = f;
    g->dev = dev;
    g->pi = pi;
    g->k = k;
    g->sl = *sl;
    g->atomic = !dev->cpu_path && k->atomic_ok;
    return g->atomic ? open_atomic(g, b, max_rows) : open_partitions(g, b, max_rows);
}

coproc_status coproc__qgroup_add(coproc__qgroup *g, uint64_t rows, const cl_mem *cols)
{
    cl_ulong n = rows;
    cl_uint fresh = g->launches == 0;
    cl_int err = clSetKernelArg(g->km, 0, sizeof n, &n);
    for (int i = 0; cols && i < g->k->nargs && err == CL_SUCCESS; i++)
        if (cols[i])
            err = clSetKernelArg(g->km, 1 + (cl_uint)i, sizeof cols[i], &cols[i]);
    if (err == CL_SUCCESS && !g->atomic)
        err = clSetKernelArg(g->km, g->fresh_arg, sizeof fresh, &fresh);
    if (err != CL_SUCCESS)
        return coproc__fail_cl(g->f->rt, err, "query group-by: clSetKernelArg");
    coproc__args a = {.kernel = g->km};
    coproc_status s = coproc__launch(g->f->rt, g->dev, &a, &g->g,
                                     g->atomic ? (g->local ? "query group-by (local table)"
                                                           : "query group-by (global table)")
                                               : "query pipeline");
    g->launches += s == COPROC_OK;
    return s;
}

/* The GPU path's (lo, hi) words into counts and sums. */
static coproc_status close_atomic(coproc__qgroup *g, coproc__qpartial *p)
{
    size_t S = g->sl.S, W = 2 * (1 + (size_t)g->k->naggs);
    cl_uint *words = malloc((S ? S : 1) * W * sizeof *words);
    if (!words)
        return coproc__fail(g->f->rt, COPROC_HOST_OUT_OF_MEMORY, "query: out of host memory");
    coproc_status s = coproc__qread(g->f, g->dev, g->out, words, S * W * sizeof *words);
    for (size_t sl = 0; s == COPROC_OK && sl < S; sl++) {
        const cl_uint *w = words + sl * W;
        p->cnt[sl] = (int64_t)(((uint64_t)w[1] << 32) | w[0]);
        for (int a = 0; a < g->k->naggs; a++)
            ((int64_t *)p->agg[a])[sl] = (int64_t)(((uint64_t)w[3 + 2 * a] << 32) | w[2 + 2 * a]);
    }
    free(words);
    return s;
}

static coproc_status close_partitions(coproc__qgroup *g, coproc__qpartial *p)
{
    coproc_runtime *rt = g->f->rt;
    const coproc__qkernel *k = g->k;
    size_t S = g->sl.S;
    coproc__args a = {.kernel = g->kc};
    cl_ulong P = g->g.global, sl = S;
    COPROC__ARG(a, P);
    COPROC__ARG(a, sl);
    COPROC__ARG(a, g->pcnt);
    COPROC__ARG(a, g->ocnt);
    for (int x = 0; x < k->naggs; x++) {
        COPROC__ARG(a, g->pa[x]);
        COPROC__ARG(a, g->oa[x]);
    }
    coproc__geometry gc = coproc__geometry_for(g->dev, S, 0);
    if (g->dev->cpu_path)
        gc.local = 1;
    else if (gc.local > 64) /* within the kernel's limit: geometry_for keeps to it */
        gc.local = 64;
    gc.groups = (S + gc.local - 1) / gc.local;
    gc.global = gc.groups * gc.local;
    coproc_status s = coproc__launch(rt, g->dev, &a, &gc, "query combine");
    if (s == COPROC_OK)
        s = coproc__qread(g->f, g->dev, g->ocnt, p->cnt, S * sizeof *p->cnt);
    for (int x = 0; x < k->naggs && s == COPROC_OK; x++) {
        s = coproc__qread(g->f, g->dev, g->oa[x], p->agg[x], S * g->asize[x]);
        /* float32 partials (a device without fp64) widen in place, from the end */
        if (s == COPROC_OK && g->asize[x] == sizeof(float))
            for (size_t i = S; i-- > 0;)
                ((double *)p->agg[x])[i] = ((const float *)p->agg[x])[i];
    }
    return s;
}

coproc_status coproc__qgroup_close(coproc__qgroup *g, coproc__qpartial *out)
{
    coproc_status s = partial_alloc(g->f->rt, g->k, g->sl.S, out);
    if (s != COPROC_OK)
        return s;
    if (g->launches == 0) { /* no rows: empty slots */
        memset(out->cnt, 0, g->sl.S * sizeof *out->cnt);
        for (int a = 0; a < g->k->naggs; a++)
            for (size_t i = 0; i < g->sl.S; i++) {
                int fn = g->k->agg_fn[a];
                if (g->k->agg_float[a])
                    ((double *)out->agg[a])[i] =
                        fn == COPROC_AGG_MIN || fn == COPROC_AGG_MAX ? NAN : 0;
                else
                    ((int64_t *)out->agg[a])[i] = fn == COPROC_AGG_MIN   ? INT64_MAX
                                                  : fn == COPROC_AGG_MAX ? INT64_MIN
                                                                         : 0;
            }
        return COPROC_OK;
    }
    s = g->atomic ? close_atomic(g, out) : close_partitions(g, out);
    if (s != COPROC_OK)
        coproc__qpartial_free(out);
    return s;
}

void coproc__qgroup_release(coproc__qgroup *g)
{
    cl_mem *m[] = {&g->pcnt, &g->ocnt, &g->out};
    for (size_t i = 0; i < sizeof m / sizeof m[0]; i++)
        if (*m[i])
            clReleaseMemObject(*m[i]);
    for (int a = 0; a < COPROC__QP_MAX_PARTIALS; a++) {
        if (g->pa[a])
            clReleaseMemObject(g->pa[a]);
        if (g->oa[a])
            clReleaseMemObject(g->oa[a]);
    }
    if (g->km)
        clReleaseKernel(g->km);
    if (g->kc)
        clReleaseKernel(g->kc);
    memset(g, 0, sizeof *g);
}
