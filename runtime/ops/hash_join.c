/* hash_join.c - equi-join by an open-addressing table on the left side, probed
 * by the right side: the pairs counted (the count-only join) or written where
 * each work-item's count says (cl/hash_join.cl). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>

#include "data/column.h"
#include "backend/opencl/launch.h"
#include "backend/opencl/program.h"
#include "backend/opencl/transfer.h"
#include "ops/nulls.h"
#include "ops/ops.h"
#include "core/error.h"
#include "exec/hostops.h"
#include "ops/join_tasks.h"
#include "ops/table.h"

/* Loop steps a probe or build row may take (batch, probe, once-loops, a short
 * duplicate list), with margin. */
#define JOIN_LOOP_STEPS_PER_ROW 16

/* The geometry over n rows. Where a driver caps the loop steps of a
 * work-item (quirks.h), a join row takes several steps: more work-items, fewer
 * rows each. The count, items and pairs kernels must share it (offsets per
 * work-item). */
static coproc__geometry join_geometry(const coproc__device *dev, size_t n)
{
    return coproc__join_geometry(dev, n, JOIN_LOOP_STEPS_PER_ROW);
}

/* The build side's open-addressing table (cl/hash_join.cl): 2^bits slots of
 * (key, row word), the duplicates' lists and counts, the kernels' suffix. */
typedef struct hj_table {
    cl_mem slots, next, dups;
    cl_uint shift, mask;  /* 64 - bits, 2^bits - 1 */
    const char *sfx;      /* "k32" or "k64" */
} hj_table;

static void hj_table_free(hj_table *t)
{
    if (t->slots)
        clReleaseMemObject(t->slots);
    if (t->next)
        clReleaseMemObject(t->next);
    if (t->dups)
        clReleaseMemObject(t->dups);
}

/* Slots for nl build rows: a power of two at least 2 nl (at least 16). */
static uint64_t hj_slots(uint64_t nl) { return coproc__next_pow2(2 * nl < 16 ? 16 : 2 * nl); }

/* Bytes of one slot: the key (4 or 8) and the row word, as 2 or 4 uint words. */
static size_t hj_slot_bytes(size_t ks) { return ks == 8 ? 16 : 8; }

/* The checks both forms share; `what` names the call. */
static coproc_status join_args_check(coproc_runtime *rt, const coproc_column *left,
                                     const coproc_column *right, const char *what)
{
    char side[64];
    snprintf(side, sizeof side, "%s: left", what);
    coproc_status s = coproc__column_check(rt, left, NULL, side);
    snprintf(side, sizeof side, "%s: right", what);
    if (s == COPROC_OK)
        s = coproc__column_check(rt, right, left->dev, side);
    if (s != COPROC_OK)
        return s;
    if (!coproc__is_key_type(left->type) || !coproc__is_key_type(right->type))
        return coproc__fail(rt, COPROC_UNSUPPORTED_TYPE, "%s: keys of type %s and %s; keys "
                            "must be integers", what, coproc_type_name(left->type),
                            coproc_type_name(right->type));
    if (left->type != right->type)
        return coproc__fail(rt, COPROC_INVALID_ARGUMENT, "%s: left keys are %s but right keys "
                            "are %s; both must have the same type", what,
                            coproc_type_name(left->type), coproc_type_name(right->type));
    if (left->length > COPROC__HASH_JOIN_MAX_BUILD || right->length > UINT32_MAX)
        return coproc__fail(rt, COPROC_UNSUPPORTED, "%s: %zu x %zu rows; at most 2^31 - 1 left "
                            "(build) rows and 2^32 - 1 right rows", what, left->length,
                            right->length);
    return COPROC_OK;
}

/* Build the table over the nl > 0 rows of left (queued, not waited for). */
static coproc_status hj_build(coproc_runtime *rt, const coproc_column *left, hj_table *t)
{
    coproc__device *dev = left->dev;
    size_t ks = coproc_type_size(left->type), nl = left->length;
    /* Built before the geometry is made: the build tells the work-group limit
     * its kernels allow (program.c). */
    cl_program built;
    coproc_status s = coproc__program_get(rt, dev, "hash_join", &built);
    if (s != COPROC_OK)
        return s;
    uint64_t slots = hj_slots(nl);
    unsigned bits = 0;
    while (((uint64_t)1 << bits) < slots)
        bits++;
    t->sfx = ks == 8 ? "k64" : "k32";
    t->shift = 64 - bits;
    t->mask = (cl_uint)(slots - 1);
    s = coproc__buffer_new(rt, dev, slots * hj_slot_bytes(ks), &t->slots);
    if (s == COPROC_OK)
        s = coproc__buffer_new(rt, dev, nl * 4, &t->next);
    if (s == COPROC_OK)
        s = coproc__buffer_new(rt, dev, nl * 4, &t->dups);
    if (s != COPROC_OK)
        return s;
    /* Every row word HJ_EMPTY (the key words 0), every list empty, no duplicates. */
    static const cl_uint empty32[2] = {0, 0xffffffffu}, empty64[4] = {0, 0, 0xffffffffu, 0};
    cl_int err = coproc__enqueue_fill(dev, dev->queue, t->slots, ks == 8 ? empty64 : empty32,
                                      hj_slot_bytes(ks), 0, slots * hj_slot_bytes(ks), 0, NULL,
                                      NULL);
    if (err == CL_SUCCESS)
        err = coproc__enqueue_fill(dev, dev->queue, t->next, &empty32[1], 4, 0, nl * 4, 0, NULL,
                                   NULL);
    if (err == CL_SUCCESS)
        err = coproc__enqueue_fill(dev, dev->queue, t->dups, &empty32[0], 4, 0, nl * 4, 0, NULL,
                                   NULL);
    if (err != CL_SUCCESS)
        return coproc__fail_cl(rt, err, "coproc_hash_join: clearing the table on device %d",
                               dev->index);
    char kname[32];
    snprintf(kname, sizeof kname, "hj_build_%s", t->sfx);
    coproc__kernel_lease *l = NULL;
    if ((s = coproc__kernel_borrow(rt, dev, "hash_join", kname, &l)) != COPROC_OK)
        return s;
    cl_ulong n = nl;
    coproc__args a = {l->kernel, 0, CL_SUCCESS};
    COPROC__ARG(a, left->mem);
    COPROC__ARG(a, n);
    COPROC__ARG(a, t->shift);
    COPROC__ARG(a, t->mask);
    COPROC__ARG(a, t->slots);
    COPROC__ARG(a, t->next);
    COPROC__ARG(a, t->dups);
    coproc__geometry g = join_geometry(dev, nl);
    s = coproc__launch(rt, dev, &a, &g, kname);
    coproc__kernel_return(dev, l);
    return s;
}

/* Set the arguments every probe kernel starts with: probe rows, table. */
static void probe_args(coproc__args *a, const coproc_column *right, const cl_ulong *n,
                       const hj_table *t)
{
    coproc__arg(a, sizeof(cl_mem), &right->mem);
    coproc__arg(a, sizeof *n, n);
    coproc__arg(a, sizeof(cl_mem), &t->slots);
    coproc__arg(a, sizeof t->shift, &t->shift);
    coproc__arg(a, sizeof t->mask, &t->mask);
}

coproc_status coproc__hash_join_count_run(coproc_runtime *rt, const coproc_column *left,
                                          const coproc_column *right, uint64_t *count)
{
    if (!rt)
        return COPROC_NULL_POINTER;
    if (!count)
        return coproc__fail(rt, COPROC_NULL_POINTER, "coproc_hash_join_count: count is NULL");
    *count = 0;
    coproc_status s = join_args_check(rt, left, right, "coproc_hash_join_count");
    if (s == COPROC_OK && (left->validity || right->validity)) /* null keys: dropped first */
        return coproc__nulls_join_count(rt, left, right, count);
    if (s != COPROC_OK || left->length == 0 || right->length == 0)
        return s;
    coproc__device *dev = left->dev;
    hj_table t = {NULL, NULL, NULL, 0, 0, NULL};
    coproc__kernel_lease *l = NULL;
    char kname[32];
    if ((s = hj_build(rt, left, &t)) != COPROC_OK)
        goto done;
    snprintf(kname, sizeof kname, "hj_count_%s", t.sfx);
    coproc__geometry g = join_geometry(dev, right->length);
    /* The per-group counts go to the lease's scratch buffer and its host copy. */
    if ((s = coproc__kernel_borrow(rt, dev, "hash_join", kname, &l)) != COPROC_OK ||
        (s = coproc__lease_scratch(rt, dev, l, g.groups * 8)) != COPROC_OK)
        goto done;
    cl_ulong n = right->length;
    coproc__args a = {l->kernel, 0, CL_SUCCESS};
    probe_args(&a, right, &n, &t);
    COPROC__ARG(a, t.dups);
    COPROC__ARG(a, l->scratch);
    COPROC__ARG_LOCAL(a, g.local * sizeof(cl_ulong));
    if ((s = coproc__launch(rt, dev, &a, &g, kname)) != COPROC_OK)
        goto done;
    const uint64_t *host = l->scratch_host;
    if ((s = coproc__d2h(rt, dev, NULL, l->scratch_host, l->scratch, 0, g.groups * 8, 0)) !=
        COPROC_OK)
        goto done;
    uint64_t sum = 0;
    for (size_t i = 0; i < g.groups; i++)
        sum += host[i];
    *count = sum;
done:
    coproc__kernel_return(dev, l);
    hj_table_free(&t);
    return s;
}

/* The pairs by tasks (ops/join_tasks.h), for a device that caps loop steps
 * where a work-item has more pairs than a task may write, or where one
 * work-item has far more pairs than the others (a heavy build key: tasks of
 * per_task pairs spread them): the duplicates' lists laid out as arrays
 * first, so that a task can start mid-key. */
static coproc_status hj_pairs_by_tasks(coproc_runtime *rt, const coproc_column *left,
                                       const coproc_column *right, const hj_table *t,
                                       const coproc__geometry *g, cl_mem starts,
                                       const uint32_t *start, uint64_t pairs, uint64_t per_task,
                                       coproc_join_result *r)
{
    coproc__device *dev = left->dev;
    cl_ulong nl = left->length, nr = right->length, items = g->global;
    cl_mem total = NULL, dup_rows = NULL;
    coproc__kernel_lease *k[3] = {NULL, NULL, NULL};
    char kname[3][32];
    snprintf(kname[0], sizeof kname[0], "hj_dup_start");
    snprintf(kname[1], sizeof kname[1], "hj_dup_rows_%s", t->sfx);
    snprintf(kname[2], sizeof kname[2], "hj_task_pairs_%s", t->sfx);
    coproc_status s = COPROC_OK;
    for (int i = 0; i < 3 && s == COPROC_OK; i++)
        s = coproc__kernel_borrow(rt, dev, "hash_join", kname[i], &k[i]);
    if (s == COPROC_OK)
        s = coproc__buffer_new(rt, dev, 4, &total);
    if (s == COPROC_OK)
        s = coproc__buffer_new(rt, dev, nl * 4, &dup_rows);
    if (s != COPROC_OK)
        goto done;
    static const cl_uint zero = 0;
    cl_int err = coproc__enqueue_fill(dev, dev->queue, total, &zero, 4, 0, 4, 0, NULL, NULL);
    if (err != CL_SUCCESS) {
        s = coproc__fail_cl(rt, err, "coproc_hash_join: clearing on device %d", dev->index);
        goto done;
    }
    coproc__geometry gb = join_geometry(dev, nl);
    coproc__args a0 = {k[0]->kernel, 0, CL_SUCCESS};
    COPROC__ARG(a0, t->dups);
    COPROC__ARG(a0, nl);
    COPROC__ARG(a0, t->next);
    COPROC__ARG(a0, total);
    coproc__args a1 = {k[1]->kernel, 0, CL_SUCCESS};
    COPROC__ARG(a1, left->mem);
    COPROC__ARG(a1, nl);
    COPROC__ARG(a1, t->slots);
    COPROC__ARG(a1, t->shift);
    COPROC__ARG(a1, t->mask);
    COPROC__ARG(a1, t->next);
    COPROC__ARG(a1, dup_rows);
    coproc__args a2 = {k[2]->kernel, 0, CL_SUCCESS};
    probe_args(&a2, right, &nr, t);
    COPROC__ARG(a2, t->dups);
    COPROC__ARG(a2, t->next);
    COPROC__ARG(a2, dup_rows);
    COPROC__ARG(a2, starts);
    COPROC__ARG(a2, items);
    if ((s = coproc__launch(rt, dev, &a0, &gb, kname[0])) == COPROC_OK &&
        (s = coproc__launch(rt, dev, &a1, &gb, kname[1])) == COPROC_OK)
        s = coproc__join_tasks_run(rt, dev, &a2, start, g->global, pairs, per_task, r->left->mem,
                                   r->right->mem, "coproc_hash_join");
done:
    if (total)
        clReleaseMemObject(total);
    if (dup_rows)
        clReleaseMemObject(dup_rows);
    for (int i = 0; i < 3; i++)
        coproc__kernel_return(dev, k[i]);
    return s;
}

coproc_status coproc__hash_join_run(coproc_runtime *rt, const coproc_column *left,
                                    const coproc_column *right, coproc_join_result *out)
{
    if (!rt)
        return COPROC_NULL_POINTER;
    if (!out)
        return coproc__fail(rt, COPROC_NULL_POINTER, "coproc_hash_join: out is NULL");
    memset(out, 0, sizeof *out);
    coproc_status s = join_args_check(rt, left, right, "coproc_hash_join");
    if (s != COPROC_OK)
        return s;
    if (left->validity || right->validity) /* null keys never match: dropped first */
        return coproc__nulls_join(rt, left, right, coproc__hash_join_run, out);
    coproc__device *dev = left->dev;
    coproc_join_result r = {0, NULL, NULL};
    hj_table t = {NULL, NULL, NULL, 0, 0, NULL};
    coproc__kernel_lease *k[2] = {NULL, NULL};
    cl_mem items = NULL, starts = NULL;
    uint32_t *start = NULL;
    uint64_t pairs = 0, most = 0; /* all pairs, a work-item's most */
    char kname[2][32];
    cl_program built; /* before the geometry, as in hj_build */
    if (left->length && right->length &&
        (s = coproc__program_get(rt, dev, "hash_join", &built)) != COPROC_OK)
        return s;
    coproc__geometry g = join_geometry(dev, right->length);
    cl_ulong n = right->length;
    if (left->length == 0 || right->length == 0)
        goto output; /* no pairs */
    if ((s = hj_build(rt, left, &t)) != COPROC_OK)
        goto done;
    snprintf(kname[0], sizeof kname[0], "hj_items_%s", t.sfx);
    snprintf(kname[1], sizeof kname[1], "hj_pairs_%s", t.sfx);
    for (int i = 0; i < 2 && s == COPROC_OK; i++)
        s = coproc__kernel_borrow(rt, dev, "hash_join", kname[i], &k[i]);
    if (s == COPROC_OK)
        s = coproc__buffer_new(rt, dev, g.global * 4, &items);
    if (s == COPROC_OK)
        s = coproc__buffer_new(rt, dev, g.global * 4, &starts);
    if (s != COPROC_OK)
        goto done;

    /* Pairs per work-item; where each work-item's pairs start, scanned here (a
     * few per compute unit on the CPU path, a few per work-item slot on GPUs). */
    coproc__args a0 = {k[0]->kernel, 0, CL_SUCCESS};
    probe_args(&a0, right, &n, &t);
    COPROC__ARG(a0, t.dups);
    COPROC__ARG(a0, items);
    s = coproc__launch(rt, dev, &a0, &g, kname[0]);
    if (s == COPROC_OK && !(start = malloc(g.global * 8))) /* starts, then ends */
        s = coproc__fail(rt, COPROC_HOST_OUT_OF_MEMORY, "out of host memory");
    if (s == COPROC_OK)
        s = coproc__d2h(rt, dev, NULL, start, items, 0, g.global * 4, 0);
    if (s != COPROC_OK)
        goto done;
    for (size_t i = 0; i < g.global; i++) {
        uint32_t c = start[i];
        start[i] = (uint32_t)pairs;
        pairs += c;
        most = c > most ? c : most;
    }
    if (pairs > UINT32_MAX - 1) { /* a work-item's count saturates at UINT32_MAX */
        s = coproc__fail(rt, COPROC_UNSUPPORTED, "coproc_hash_join: %llu pairs or more; at most "
                         "2^32 - 2", (unsigned long long)pairs);
        goto done;
    }
    if ((s = coproc__h2d(rt, dev, NULL, starts, 0, start, g.global * 4, 0)) != COPROC_OK)
        goto done;
output:
    r.count = (size_t)pairs;
    s = coproc__column_new(rt, dev, COPROC_UINT32, r.count, &r.left);
    if (s == COPROC_OK)
        s = coproc__column_new(rt, dev, COPROC_UINT32, r.count, &r.right);
    if (s != COPROC_OK || pairs == 0)
        goto done;
    uint64_t per_task = coproc__join_pairs_per_task(dev);
    /* A heavy key on the GPU path: one work-item would walk its whole list of
     * duplicates alone (dependent loads, one after another); tasks spread it.
     * On the CPU path the list lies mostly in row order (hj_build links each
     * work-item's runs in private), and walking it is as fast as writing. */
    uint64_t skew = dev->cpu_path ? 0 : coproc__join_skew_per_task(pairs, most, g.global);
    if ((per_task && most > per_task) || skew) {
        s = hj_pairs_by_tasks(rt, left, right, &t, &g, starts, start, pairs, skew, &r);
        goto done;
    }
    coproc__args a1 = {k[1]->kernel, 0, CL_SUCCESS};
    probe_args(&a1, right, &n, &t);
    COPROC__ARG(a1, t.next);
    COPROC__ARG(a1, starts);
    COPROC__ARG(a1, r.left->mem);
    COPROC__ARG(a1, r.right->mem);
    COPROC__ARG(a1, items);
    s = coproc__launch(rt, dev, &a1, &g, kname[1]);
    /* Where each work-item's pairs ended: a device that stops loops early (Mesa's
     * loop-65535, docs/portability.md) leaves pairs unwritten; an error, not them. */
    uint32_t *end = start + g.global;
    if (s == COPROC_OK)
        s = coproc__d2h(rt, dev, NULL, end, items, 0, g.global * 4, 0);
    for (size_t i = 0; s == COPROC_OK && i < g.global; i++) {
        uint64_t want = i + 1 < g.global ? start[i + 1] : pairs;
        if (end[i] != want)
            s = coproc__fail(rt, COPROC_INTERNAL, "coproc_hash_join: device %d (%s) wrote %llu "
                             "of work-item %zu's %llu pairs (a loop limit? docs/portability.md)",
                             dev->index, dev->info.name,
                             (unsigned long long)(end[i] - start[i]), i,
                             (unsigned long long)(want - start[i]));
    }
done:
    if (s == COPROC_OK) {
        *out = r;
    } else {
        coproc_column_free(r.left);
        coproc_column_free(r.right);
    }
    free(start);
    if (items)
        clReleaseMemObject(items);
    if (starts)
        clReleaseMemObject(starts);
    for (int i = 0; i < 2; i++)
        coproc__kernel_return(dev, k[i]);
    hj_table_free(&t);
    return s;
}

/* Device bytes of one hash join of nl x nr rows giving `pairs` pairs, as
 * coproc__hash_join_run allocates them: the keys, the table (2 nl to 4 nl
 * slots), the duplicates' lists and counts, the pair columns, the per-work-item counts
 * (a few thousand at most, in the slack); plus a quarter for slack.
 * UINT64_MAX when absurdly large. */
uint64_t coproc__hash_join_device_bytes(uint64_t nl, uint64_t nr, uint64_t pairs, size_t ks)
{
    if (pairs > UINT64_MAX / 32 || nl > UINT32_MAX || nr > UINT32_MAX)
        return UINT64_MAX;
    uint64_t b = (nl + nr) * ks + hj_slots(nl) * hj_slot_bytes(ks) + 8 * nl + 8 * pairs +
                 64 * 1024;
    return b + b / 4;
}

/* ---- the operator table's entry (ops/table.h) */

static coproc_status join_check(coproc_runtime *rt, const coproc_op *op,
                                const coproc_column *const *in, int n)
{
    return coproc__check_keys(rt, coproc__op_def_of(op)->name, op->a, op->b);
}

static void join_features(const coproc_op *op, const coproc_result *r, const coproc__op_seen *seen,
                          double x[2], double *out_bytes)
{
    double n = coproc__col_rows(op->a), m = coproc__col_rows(op->b);
    x[0] = coproc__col_bytes(op->a) + coproc__col_bytes(op->b);
    x[1] = r ? (double)r->join.count : (n > m ? n : m) * seen->pairs_per_row;
    *out_bytes = x[1] * 8;
}

/* The join's own allocations for `pairs` pairs (the keys, already counted as
 * inputs, aside). */
static double join_own_bytes(const coproc_op *op, uint64_t pairs)
{
    double b = (double)coproc__hash_join_device_bytes(op->a->length, op->b->length, pairs,
                                                      coproc_type_size(op->a->type));
    return b - coproc__col_bytes(op->a) - coproc__col_bytes(op->b);
}

static double join_device_bytes(const coproc__device *dev, const coproc_op *op, double out)
{
    return join_own_bytes(op, (uint64_t)(out / 8));
}

static void join_learn(const coproc_op *op, const coproc_result *r, coproc__op_seen *seen)
{
    double n = coproc__col_rows(op->a), m = coproc__col_rows(op->b);
    double rows = n > m ? n : m;
    if (rows > 0)
        coproc__op_seen_learn(seen, NAN, (double)r->join.count / rows, NAN);
}

static coproc_status join_in_memory(coproc_runtime *rt, coproc__device *dev, const coproc_op *op,
                                    const coproc_column *const *v, coproc_result *out)
{
    coproc_status s = coproc__hash_join_run(rt, v[0], v[1], &out->join);
    out->count = out->join.count;
    return s;
}

/* Both sides partitioned by key hash (exec/outofcore.c). */
static coproc_status join_stream(coproc_runtime *rt, coproc__device *dev, const coproc_op *op,
                                 size_t budget, coproc_result *out)
{
    coproc_status s = coproc__outofcore_hash_join(rt, dev, op->a, op->b, budget, &out->join);
    out->count = out->join.count;
    return s;
}

const coproc__op_def coproc__op_hash_join = {
    .name = "hash_join", .kind = COPROC_OP_HASH_JOIN, .variant = COPROC_VARIANT_DEFAULT,
    .inputs = coproc__inputs_ab, .check = join_check, .features = join_features,
    .device_bytes = join_device_bytes, .learn = join_learn, .run = join_in_memory,
    .stream = join_stream,
};

/* The count-only join: the hash join's model (HASH_JOIN kind), its pairs
 * counted, none written. */
static void join_count_features(const coproc_op *op, const coproc_result *r,
                                const coproc__op_seen *seen, double x[2], double *out_bytes)
{
    double n = coproc__col_rows(op->a), m = coproc__col_rows(op->b);
    x[0] = coproc__col_bytes(op->a) + coproc__col_bytes(op->b);
    x[1] = r ? (double)r->count : (n > m ? n : m) * seen->pairs_per_row;
    *out_bytes = 0;
}

/* The table and the lists (the probe's per-group counts in the slack). */
static double join_count_device_bytes(const coproc__device *dev, const coproc_op *op, double out)
{
    return join_own_bytes(op, 0);
}

static void join_count_learn(const coproc_op *op, const coproc_result *r, coproc__op_seen *seen)
{
    double n = coproc__col_rows(op->a), m = coproc__col_rows(op->b);
    double rows = n > m ? n : m;
    if (rows > 0)
        coproc__op_seen_learn(seen, NAN, (double)r->count / rows, NAN);
}

static coproc_status join_count_in_memory(coproc_runtime *rt, coproc__device *dev,
                                          const coproc_op *op, const coproc_column *const *v,
                                          coproc_result *out)
{
    return coproc__hash_join_count_run(rt, v[0], v[1], &out->count);
}

/* Over the budget: the partitioned join's pairs, counted (exec/outofcore.c). */
static coproc_status join_count_stream(coproc_runtime *rt, coproc__device *dev,
                                       const coproc_op *op, size_t budget, coproc_result *out)
{
    coproc_join_result j = {0, NULL, NULL};
    coproc_status s = coproc__outofcore_hash_join(rt, dev, op->a, op->b, budget, &j);
    out->count = s == COPROC_OK ? j.count : 0;
    coproc_join_result_free(&j);
    return s;
}

const coproc__op_def coproc__op_hash_join_count = {
    .name = "hash_join_count", .kind = COPROC_OP_HASH_JOIN,
    .variant = COPROC_VARIANT_JOIN_COUNT, .inputs = coproc__inputs_ab, .check = join_check,
    .features = join_count_features, .device_bytes = join_count_device_bytes,
    .learn = join_count_learn, .run = join_count_in_memory, .stream = join_count_stream,
};

/* The sort-merge join: the same pairs as the hash join, so it shares the
 * hash join's features, and over the budget its partitioned run. */
static coproc_status merge_join_in_memory(coproc_runtime *rt, coproc__device *dev,
                                          const coproc_op *op, const coproc_column *const *v,
                                          coproc_result *out)
{
    coproc_status s = coproc__sort_merge_join_run(rt, v[0], v[1], &out->join);
    out->count = out->join.count;
    return s;
}

/* Sorted copies of both sides with their positions, the per-row counts,
 * bounds and offsets, the pairs (coproc__sort_merge_join_run). */
static double merge_join_device_bytes(const coproc__device *dev, const coproc_op *op, double out)
{
    size_t ks = coproc_type_size(op->a->type);
    double rows = (double)op->a->length + (double)op->b->length;
    return rows * (double)(ks + 4) + /* the sorted copies with their positions */
           (double)coproc__sort_device_bytes(dev, op->a->length, ks, 4) +
           (double)coproc__sort_device_bytes(dev, op->b->length, ks, 4) +
           12.0 * (double)op->a->length + out;
}

const coproc__op_def coproc__op_merge_join = {
    .name = "sort_merge_join", .kind = COPROC_OP_MERGE_JOIN, .variant = COPROC_VARIANT_DEFAULT,
    .inputs = coproc__inputs_ab, .check = join_check, .features = join_features,
    .device_bytes = merge_join_device_bytes, .learn = join_learn, .run = merge_join_in_memory,
    .stream = join_stream,
};

static void semi_join_features(const coproc_op *op, const coproc_result *r,
                               const coproc__op_seen *seen, double x[2], double *out_bytes)
{
    x[0] = coproc__col_bytes(op->a) + coproc__col_bytes(op->b);
    x[1] = r ? (double)r->count : coproc__col_rows(op->a) * seen->selectivity;
    *out_bytes = x[1] * 4;
}

/* A sorted copy of the build side, a flag per probe row, the positions. */
static double semi_join_device_bytes(const coproc__device *dev, const coproc_op *op, double out)
{
    size_t ks = coproc_type_size(op->b->type);
    return (double)op->b->length * (double)ks +
           (double)coproc__sort_device_bytes(dev, op->b->length, ks, 0) +
           4.0 * (double)op->a->length + out;
}

static coproc_status semi_join_in_memory(coproc_runtime *rt, coproc__device *dev,
                                         const coproc_op *op, const coproc_column *const *v,
                                         coproc_result *out)
{
    return coproc__semi_join_run(rt, v[0], v[1], &out->column, &out->count);
}

/* The partitioned hash join of build x probe; the probe rows that found a
 * pair, each once, ascending. */
static coproc_status semi_join_stream(coproc_runtime *rt, coproc__device *dev,
                                      const coproc_op *op, size_t budget, coproc_result *out)
{
    size_t np = op->a->length;
    coproc_join_result j = {0};
    coproc_status s = coproc__outofcore_hash_join(rt, dev, op->b, op->a, budget, &j);
    unsigned char *hit = s == COPROC_OK ? calloc(np ? np : 1, 1) : NULL;
    if (s == COPROC_OK && !hit)
        s = coproc__fail(rt, COPROC_HOST_OUT_OF_MEMORY, "out of host memory");
    uint64_t count = 0;
    if (s == COPROC_OK) {
        const uint32_t *probe_row = j.right ? j.right->host : NULL;
        for (size_t i = 0; i < j.count; i++)
            if (!hit[probe_row[i]]) {
                hit[probe_row[i]] = 1;
                count++;
            }
        s = coproc__host_column_new(rt, COPROC_UINT32, count, &out->column);
    }
    if (s == COPROC_OK) {
        uint32_t *pos = out->column->host;
        for (size_t i = 0, k = 0; i < np; i++)
            if (hit[i])
                pos[k++] = (uint32_t)i;
        out->count = count;
    }
    free(hit);
    coproc_join_result_free(&j);
    return s;
}

static void semi_join_learn(const coproc_op *op, const coproc_result *r, coproc__op_seen *seen)
{
    double rows = coproc__col_rows(op->a);
    if (rows > 0)
        coproc__op_seen_learn(seen, (double)r->count / rows, NAN, NAN);
}

const coproc__op_def coproc__op_semi_join = {
    .name = "semi_join", .kind = COPROC_OP_SEMI_JOIN, .variant = COPROC_VARIANT_DEFAULT,
    .inputs = coproc__inputs_ab, .check = join_check, .features = semi_join_features,
    .device_bytes = semi_join_device_bytes, .learn = semi_join_learn,
    .run = semi_join_in_memory, .stream = semi_join_stream,
};
