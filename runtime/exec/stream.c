/* stream.c - reduce, select, map and group-by over host columns larger than
 * the device budget. The input flows through two device buffers: while the
 * operator computes chunk k on dev->queue, chunk k+1 is copied on
 * dev->copy_queue; once chunk k is done its buffer takes chunk k+2. Each chunk
 * runs the in-memory operator (runtime/ops/) on a view of its buffer, and the
 * host combines the chunks' results. Each streams the inputs' validities
 * beside them (chunks of a multiple of 32 rows, so each chunk's bits are
 * whole words of the bitmap). */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "exec/hostops.h"
#include "backend/opencl/launch.h"
#include "ops/ops.h"
#include "ops/reduce_fold.h"
#include "core/error.h"
#include "backend/opencl/transfer.h"
#include "backend/opencl/sync.h"

#define STREAM_BUFFERS 2                   /* chunks on the device at once */
#define STREAM_MIN_BUDGET COPROC__STREAM_MIN_BUDGET

/* ---------------------------------------------------------------- the pipeline */

/* Inputs: in[0] and in[1] (NULL: none) the columns, in[2] and in[3] their
 * validities when streamed (NULL: none). */
#define STREAM_INPUTS 4

typedef struct stream {
    coproc_runtime *rt;
    coproc__device *dev;
    const coproc_column *in[STREAM_INPUTS];
    size_t n, rows, chunks; /* rows per chunk; n == 0 still runs one empty chunk */
    int nbuf;
    cl_mem buf[STREAM_BUFFERS][STREAM_INPUTS];
    cl_event copied[STREAM_BUFFERS]; /* the last copy into that slot */
    /* Pinned host buffers a pageable input is staged through on a device with
     * its own memory (a DMA from pageable memory runs at a fraction of the bus). */
    cl_mem stage[STREAM_BUFFERS][STREAM_INPUTS];
    void *stage_ptr[STREAM_BUFFERS][STREAM_INPUTS];
} stream;

static size_t chunk_start(const stream *st, size_t k) { return k * st->rows; }

static size_t chunk_rows(const stream *st, size_t k)
{
    size_t start = chunk_start(st, k);
    return st->n - start < st->rows ? st->n - start : st->rows;
}

/* Elements of input i for `rows` rows from row `start`: the rows, or for a
 * validity the words (a chunk starts at a multiple of 32 rows); *first the
 * first one. */
static size_t input_elements(int i, size_t start, size_t rows, size_t *first)
{
    if (i < 2) {
        *first = start;
        return rows;
    }
    *first = start / 32;
    return (rows + 31) / 32;
}

/* Start copying chunk k into its slot (the slot must be free). */
static coproc_status stream_copy(stream *st, size_t k)
{
    int slot = (int)(k % st->nbuf);
    for (int i = 0; i < STREAM_INPUTS; i++) {
        if (!st->in[i])
            continue;
        size_t es = coproc_type_size(st->in[i]->type), start;
        size_t rows = input_elements(i, chunk_start(st, k), chunk_rows(st, k), &start);
        const char *src = rows ? (const char *)st->in[i]->host + start * es : NULL;
        if (src && st->stage_ptr[slot][i]) {
            /* The slot's previous copy finished before its chunk ran: reuse. */
            coproc__memcpy_parallel(st->stage_ptr[slot][i], src, rows * es);
            src = st->stage_ptr[slot][i];
        }
        cl_event ev = NULL;
        coproc_status s = coproc__h2d_async(st->rt, st->dev, NULL, st->buf[slot][i], 0, src,
                                            rows * es, &ev);
        if (s != COPROC_OK)
            return s;
        /* The copy queue is in order: the last copy's event covers the others. */
        if (st->copied[slot])
            clReleaseEvent(st->copied[slot]);
        st->copied[slot] = ev;
    }
    /* Submit now, so the copy runs while the caller computes (GPU drivers batch). */
    cl_command_queue q = st->dev->copy_queue ? st->dev->copy_queue : st->dev->queue;
    coproc__submit_begin(st->dev);
    cl_int err = clFlush(q);
    coproc__submit_end(st->dev);
    if (err != CL_SUCCESS)
        return coproc__fail_cl(st->rt, err, "streaming to device %d: clFlush", st->dev->index);
    return COPROC_OK;
}

/* Allocate the buffers and start copying the first chunks; with_nulls: the
 * validities of a and b too (rows a multiple of 32 then, or all of a). On
 * failure the caller still calls stream_close. */
static coproc_status stream_open(stream *st, coproc_runtime *rt, coproc__device *dev,
                                 const coproc_column *a, const coproc_column *b, size_t rows,
                                 int with_nulls)
{
    memset(st, 0, sizeof *st);
    st->rt = rt;
    st->dev = dev;
    st->in[0] = a;
    st->in[1] = b;
    st->in[2] = with_nulls ? a->validity : NULL;
    st->in[3] = with_nulls && b ? b->validity : NULL;
    st->n = a->length;
    st->rows = rows;
    st->chunks = st->n == 0 ? 1 : (st->n + rows - 1) / rows;
    st->nbuf = st->chunks < STREAM_BUFFERS ? (int)st->chunks : STREAM_BUFFERS;
    size_t alloc_rows = st->n < rows ? st->n : rows;
    coproc__log(rt, COPROC_LOG_DEBUG, "streaming %zu rows in %zu chunks of %zu rows, %d buffers "
                "on device %d", st->n, st->chunks, rows, st->nbuf, dev->index);
    for (int s = 0; s < st->nbuf; s++)
        for (int i = 0; i < STREAM_INPUTS; i++) {
            size_t first;
            if (!st->in[i])
                continue;
            size_t bytes =
                input_elements(i, 0, alloc_rows, &first) * coproc_type_size(st->in[i]->type);
            coproc_status r = coproc__buffer_new(rt, dev, bytes, &st->buf[s][i]);
            if (r != COPROC_OK)
                return r;
        }
    int in_place = dev->zero_copy && dev->info.host_unified_memory; /* copies are memcpys */
    for (int s = 0; s < st->nbuf && !in_place; s++)
        for (int i = 0; i < STREAM_INPUTS; i++) {
            size_t first;
            if (!st->in[i])
                continue;
            size_t bytes =
                input_elements(i, 0, alloc_rows, &first) * coproc_type_size(st->in[i]->type);
            cl_int err;
            if (st->in[i]->pinned || bytes == 0)
                continue;
            st->stage[s][i] = clCreateBuffer(dev->context,
                                             CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR, bytes,
                                             NULL, &err);
            if (st->stage[s][i])
                st->stage_ptr[s][i] = coproc__map_now(dev, dev->queue, st->stage[s][i],
                                                      CL_MAP_READ | CL_MAP_WRITE, 0, bytes, &err);
            /* No pinned memory: copy straight from the caller's (slower, still right). */
        }
    for (size_t k = 0; k < (size_t)st->nbuf; k++) {
        coproc_status r = stream_copy(st, k);
        if (r != COPROC_OK)
            return r;
    }
    return COPROC_OK;
}

/* Wait until chunk k is on the device; views[0] and views[1] then show it,
 * with their validities (views[2], views[3]) when streamed (views are not
 * freed). */
static coproc_status stream_wait(stream *st, size_t k, coproc_column views[STREAM_INPUTS])
{
    int slot = (int)(k % st->nbuf);
    if (st->copied[slot]) {
        cl_int err = coproc__wait_event(st->dev, st->copied[slot]);
        clReleaseEvent(st->copied[slot]);
        st->copied[slot] = NULL;
        if (err != CL_SUCCESS)
            return coproc__fail_cl(st->rt, err, "streaming chunk %zu to device %d", k,
                                   st->dev->index);
    }
    for (int i = 0; i < STREAM_INPUTS; i++) {
        size_t first;
        if (!st->in[i])
            continue;
        views[i] = (coproc_column){
            .rt = st->rt,
            .dev = st->dev,
            .type = st->in[i]->type,
            .length = input_elements(i, chunk_start(st, k), chunk_rows(st, k), &first),
            .mem = st->buf[slot][i],
            .is_validity = i >= 2};
        if (i >= 2)
            views[i - 2].validity = &views[i];
    }
    return COPROC_OK;
}

/* The operator is done with chunk k: its slot takes chunk k + nbuf. */
static coproc_status stream_done(stream *st, size_t k)
{
    if (k + st->nbuf >= st->chunks)
        return COPROC_OK;
    /* The operators' null steps (a validity AND after map's kernel) may still
     * be queued when they return: done before the slot is overwritten. */
    if (st->in[2] || st->in[3]) {
        cl_int err = coproc__finish(st->dev, st->dev->queue);
        if (err != CL_SUCCESS)
            return coproc__fail_cl(st->rt, err, "streaming on device %d: clFinish", st->dev->index);
    }
    return stream_copy(st, k + st->nbuf);
}

static void stream_close(stream *st)
{
    /* No kernel may still read a buffer the pool hands out. */
    if (st->dev)
        coproc__finish(st->dev, st->dev->queue);
    for (int s = 0; s < STREAM_BUFFERS; s++) {
        if (st->copied[s]) {
            coproc__wait_event(st->dev, st->copied[s]); /* never free a buffer under a copy */
            clReleaseEvent(st->copied[s]);
        }
        for (int i = 0; i < STREAM_INPUTS; i++) {
            if (st->buf[s][i])
                coproc__pool_give(&st->dev->pool, st->buf[s][i]);
            if (st->stage_ptr[s][i]) {
                coproc__submit_begin(st->dev);
                clEnqueueUnmapMemObject(st->dev->queue, st->stage[s][i], st->stage_ptr[s][i], 0,
                                        NULL, NULL);
                coproc__submit_end(st->dev);
            }
            if (st->stage[s][i])
                clReleaseMemObject(st->stage[s][i]);
        }
    }
    if (st->dev)
        coproc__finish(st->dev, st->dev->queue); /* the unmaps */
    memset(st, 0, sizeof *st);
}

/* ---------------------------------------------------------------- chunk sizes */

/* Device bytes a set of buffers takes, as coproc__buffer_new rounds them. */
typedef struct cost {
    size_t total;
    uint64_t max_alloc;
    int over; /* some buffer exceeds the largest allocation */
} cost;

static void cost_add(cost *c, size_t count, size_t bytes)
{
    if (bytes > c->max_alloc)
        c->over = 1;
    bytes = bytes < 16 ? 16 : coproc__pool_round(bytes);
    c->total += count * bytes;
}

static cost cost_init(const coproc__device *dev)
{
    return (cost){0, dev->info.max_alloc_bytes, 0};
}

/* Work-groups of the largest launch: the size of per-group partials. No chunk
 * holds more rows than the largest buffer holds 4-byte values (a cap on rows
 * per work-item makes the group count grow with the rows). */
static size_t max_groups(const coproc__device *dev)
{
    return coproc__geometry_for(dev, dev->info.max_alloc_bytes / 4, 0).groups;
}

/* The work-groups reduce and select launch over a chunk of `rows` rows (as
 * ops/reduce.c and ops/select.c size them): on a device that caps the rows
 * of a work-item (a quirk) far fewer than max_groups for a small chunk. */
static size_t chunk_groups(const coproc__device *dev, size_t rows)
{
    return coproc__geometry_for(dev, rows, 0).groups;
}

/* What one streamed operator needs on the device. */
typedef struct plan {
    int op;                 /* which operator */
    coproc_type t[2];       /* the streamed inputs' types */
    int inputs;
    int positions;          /* select: positions are written */
    int has_values;         /* group-by */
    int bitmaps;            /* validities streamed beside the inputs */
} plan;

enum { OP_REDUCE, OP_SELECT, OP_MAP, OP_GROUP_BY };

/* Device bytes of the group-by of `rows` rows (all distinct, the worst case):
 * the largest of its phases, as runtime/ops/group_by.c allocates them. */
static void group_by_cost(const coproc__device *dev, const plan *p, size_t rows, cost *c)
{
    coproc_type kt = p->t[0], vt = p->has_values ? p->t[1] : COPROC_INT32;
    size_t ks = coproc_type_size(kt), vs = p->has_values ? coproc_type_size(vt) : 0;
    size_t cap = coproc__next_pow2(2 * rows), g = rows;
    cost table = cost_init(dev);
    cost_add(&table, 1, cap * (ks == 8 ? 12 : 8));
    size_t per_slot = coproc__group_by_slot_bytes(kt, p->has_values, vt) - (ks == 8 ? 12 : 8);
    for (size_t w = 0; w < per_slot / 4; w++)
        cost_add(&table, 1, cap * 4);
    cost_add(&table, 2, 16); /* ctl; the sums of flags_to_positions */
    cost insert = cost_init(dev), number = cost_init(dev), out = cost_init(dev);
    cost_add(&insert, 1, rows * 4);                  /* row -> slot */
    cost_add(&number, 1, cap * 4);                   /* occupied flags */
    cost_add(&number, 1, (chunk_groups(dev, cap) + 1) * 8); /* their prefix sums */
    cost_add(&number, 1, g * 4);                     /* positions of the groups */
    cost_add(&out, 1, g * 4);
    cost_add(&out, 1, g * ks);                       /* result keys, count, aggregates */
    cost_add(&out, 1, g * 8);
    if (p->has_values) {
        cost_add(&out, 1, g * 8);
        cost_add(&out, 2, g * vs);
    }
    cost_add(&out, 1, g * ks);                       /* keys in group order, ranks */
    cost_add(&out, 1, g * 4);
    if (g >= 65536) {                                /* ranks by coproc_argsort */
        cost_add(&out, 2, g * 4);
        cost_add(&out, 2, g * ks);
        cost_add(&out, 1, (size_t)8 * 256 * 4 * max_groups(dev));
        cost_add(&out, 1, (size_t)8 * 256 * 4);
    }
    size_t peak = insert.total;
    peak = number.total > peak ? number.total : peak;
    peak = out.total > peak ? out.total : peak;
    if (p->bitmaps) {
        /* Nulls composed from the null-free group-by (ops/group_by.c): a
         * filled copy of the keys or values, the null rows' positions and
         * their compacted keys and values beside the table, at worst. */
        cost nulls = cost_init(dev);
        cost_add(&nulls, 1, rows * (ks > vs ? ks : vs));
        cost_add(&nulls, 1, rows * 4);
        cost_add(&nulls, 1, rows * ks);
        if (vs)
            cost_add(&nulls, 1, rows * vs);
        cost_add(&nulls, 2, (rows + 31) / 32 * 4);
        peak += nulls.total;
        c->over |= nulls.over;
    }
    c->total += table.total + peak;
    c->over |= table.over | insert.over | number.over | out.over;
}

/* Device bytes of a chunk of `rows` rows with `nbuf` input buffers in flight. */
static size_t plan_bytes(const coproc__device *dev, const plan *p, size_t rows, int nbuf)
{
    cost c = cost_init(dev);
    for (int i = 0; i < p->inputs; i++)
        cost_add(&c, (size_t)nbuf, rows * coproc_type_size(p->t[i]));
    for (int i = 0; i < p->bitmaps; i++)
        cost_add(&c, (size_t)nbuf, (rows + 31) / 32 * 4);
    if (p->bitmaps && p->op == OP_MAP)
        cost_add(&c, 1, (rows + 31) / 32 * 4); /* the result's validity */
    switch (p->op) {
    case OP_REDUCE:
        cost_add(&c, 1, chunk_groups(dev, rows) * 8); /* per-group partials */
        break;
    case OP_SELECT:
        cost_add(&c, 1, (rows + 31) / 32 * 4); /* bitmap */
        cost_add(&c, 1, chunk_groups(dev, rows) * 4); /* per-group counts */
        if (p->positions)
            cost_add(&c, 1, rows * 4);         /* at worst every row matches */
        break;
    case OP_MAP:
        cost_add(&c, 1, rows * coproc_type_size(p->t[0]));
        break;
    default:
        group_by_cost(dev, p, rows, &c);
        break;
    }
    return c.over ? SIZE_MAX : c.total;
}

/* The most rows a chunk may have within budget (at least 1), in *rows. */
static coproc_status plan_rows(coproc_runtime *rt, const coproc__device *dev, const plan *p,
                               size_t n, size_t budget, size_t limit, const char *what,
                               size_t *rows)
{
    if (budget < STREAM_MIN_BUDGET)
        return coproc__fail(rt, COPROC_INVALID_ARGUMENT, "%s: a budget of %zu bytes is below "
                            "the minimum of %zu", what, budget, STREAM_MIN_BUDGET);
    size_t hi = n > 1 ? n : 1;
    if (hi > limit)
        hi = limit;
    if (hi > UINT32_MAX) /* each chunk runs the in-memory operator: 32-bit rows and positions */
        hi = UINT32_MAX;
    /* One chunk needs one buffer per input; more need STREAM_BUFFERS. */
    if (plan_bytes(dev, p, hi, 1) <= budget) {
        *rows = hi < n && p->bitmaps ? hi - hi % 32 : hi; /* each chunk's bits: whole words */
        return COPROC_OK;
    }
    if (plan_bytes(dev, p, 1, STREAM_BUFFERS) > budget)
        return coproc__fail(rt, COPROC_INVALID_ARGUMENT, "%s: a budget of %zu bytes is too "
                            "small for this operator on device %d", what, budget, dev->index);
    size_t lo = 1; /* fits; hi does not */
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        if (plan_bytes(dev, p, mid, STREAM_BUFFERS) <= budget)
            lo = mid;
        else
            hi = mid;
    }
    if (p->bitmaps) /* each chunk's validity: whole words */
        lo -= lo % 32;
    if (lo == 0)
        return coproc__fail(rt, COPROC_INVALID_ARGUMENT,
                            "%s: a budget of %zu bytes holds no "
                            "chunk of 32 rows with their validity on device %d",
                            what, budget, dev->index);
    *rows = lo;
    return COPROC_OK;
}

/* ---------------------------------------------------------------- checks and helpers */

static coproc_status check_host(coproc_runtime *rt, coproc__device *dev, const coproc_column *col,
                                const char *what)
{
    if (!col)
        return coproc__fail(rt, COPROC_NULL_POINTER, "%s is NULL", what);
    if (col->rt != rt)
        return coproc__fail(rt, COPROC_INVALID_ARGUMENT, "%s belongs to another runtime", what);
    if (col->dev)
        return coproc__fail(rt, COPROC_INVALID_ARGUMENT, "%s is a device column; streaming "
                            "takes host columns", what);
    if ((unsigned)col->type >= COPROC__TYPE_COUNT)
        return coproc__fail(rt, COPROC_UNSUPPORTED_TYPE, "%s: invalid type %d", what,
                            (int)col->type);
    if (col->length > 0 && !col->host)
        return coproc__fail(rt, COPROC_INVALID_ARGUMENT, "%s has %zu rows but no data", what,
                            col->length);
    if (col->type == COPROC_FLOAT64 && !dev->info.has_fp64)
        return coproc__fail(rt, COPROC_UNSUPPORTED, "%s: device %d (%s) has no fp64", what,
                            dev->index, dev->info.name);
    return COPROC_OK;
}

static coproc_status check_common(coproc_runtime *rt, coproc__device *dev, const char *what)
{
    if (!rt)
        return COPROC_NULL_POINTER;
    if (!dev)
        return coproc__fail(rt, COPROC_NULL_POINTER, "%s: device is NULL", what);
    return COPROC_OK;
}

/* Give a host column `length` rows, keeping the first ones (the rest is uninitialised). */
static coproc_status host_resize(coproc_runtime *rt, coproc_column *col, size_t length)
{
    size_t es = coproc_type_size(col->type);
    if (length == 0) {
        free(col->host);
        col->host = NULL;
        col->length = 0;
        return COPROC_OK;
    }
    void *p = realloc(col->host, length * es);
    if (!p) {
        if (length < col->length) { /* a shrink that failed: keep the larger block */
            col->length = length;
            return COPROC_OK;
        }
        return coproc__fail(rt, COPROC_HOST_OUT_OF_MEMORY, "out of host memory for %zu rows",
                            length);
    }
    col->host = p;
    col->length = length;
    return COPROC_OK;
}

/* Copy a device column (of a chunk's result) into host memory. */
static coproc_status download(coproc_runtime *rt, coproc__device *dev, const coproc_column *col,
                              void *dst)
{
    return coproc__d2h(rt, dev, NULL, dst, col->mem, 0,
                       col->length * coproc_type_size(col->type), 0);
}

/*
 * Append a chunk's positions (part, UINT32, relative to the chunk) at row
 * `at` of the host positions `dst` (UINT64 if wide, else UINT32), adding the
 * chunk's first row `start`. The 64-bit case downloads the 32-bit positions
 * into the upper half of their own 64-bit destination and widens them in
 * place, front to back: element i is read (bytes 4m + 4i of the m-element
 * range) before it is written (bytes 8i .. 8i + 7), and the write never
 * reaches an element not yet read (8i + 8 <= 4m + 4(i + 1) while i < m).
 */
static coproc_status append_positions(coproc_runtime *rt, coproc__device *dev,
                                      const coproc_column *part, size_t start, int wide, void *dst,
                                      size_t at)
{
    size_t m = part->length;
    if (!wide) {
        uint32_t *d = (uint32_t *)dst + at;
        coproc_status s = download(rt, dev, part, d);
        for (size_t i = 0; s == COPROC_OK && i < m; i++)
            d[i] += (uint32_t)start; /* start + i < 2^32: the input has at most UINT32_MAX rows */
        return s;
    }
    uint64_t *d = (uint64_t *)dst + at;
    unsigned char *upper = (unsigned char *)d + m * sizeof(uint32_t);
    coproc_status s = download(rt, dev, part, upper);
    for (size_t i = 0; s == COPROC_OK && i < m; i++) {
        uint32_t p;
        memcpy(&p, upper + i * sizeof p, sizeof p);
        d[i] = (uint64_t)start + p;
    }
    return s;
}

/* ---------------------------------------------------------------- reduce */

coproc_status coproc__stream_reduce(coproc_runtime *rt, coproc__device *dev, coproc_reduce_op op,
                                    const coproc_column *col, size_t budget, coproc_scalar *out)
{
    const char *what = "coproc_reduce (streamed)";
    coproc_status s = check_common(rt, dev, what);
    if (s != COPROC_OK)
        return s;
    if (!out)
        return coproc__fail(rt, COPROC_NULL_POINTER, "%s: out is NULL", what);
    if ((s = check_host(rt, dev, col, "coproc_reduce: column")) != COPROC_OK)
        return s;
    if ((unsigned)op > COPROC_REDUCE_COUNT)
        return coproc__fail(rt, COPROC_INVALID_ARGUMENT, "%s: unknown op %d", what, (int)op);
    int nulls = col->validity != NULL;
    plan p = {.op = OP_REDUCE, .t = {col->type}, .inputs = 1, .bitmaps = nulls};
    size_t rows = 0;
    if ((s = plan_rows(rt, dev, &p, col->length, budget, SIZE_MAX, what, &rows)) != COPROC_OK)
        return s;
    coproc_scalar r;
    coproc__reduce_identity(op, col->type, &r);
    if (op == COPROC_REDUCE_COUNT) { /* no row needs reading; nulls: the bitmap's, counted */
        uint64_t null_rows = 0;
        if (nulls && (s = coproc_column_null_count(col, &null_rows)) != COPROC_OK)
            return s;
        r.v.u64 = r.count = col->length - null_rows;
        *out = r;
        return COPROC_OK;
    }

    stream st;
    coproc_column v[STREAM_INPUTS];
    if ((s = stream_open(&st, rt, dev, col, NULL, rows, nulls)) != COPROC_OK)
        goto fail;
    for (size_t k = 0; k < st.chunks; k++) {
        coproc_scalar part;
        if ((s = stream_wait(&st, k, v)) != COPROC_OK ||
            (s = coproc__reduce_run(rt, op, &v[0], &part)) != COPROC_OK ||
            (s = stream_done(&st, k)) != COPROC_OK)
            goto fail;
        if (v[0].length > 0)
            coproc__reduce_combine(op, &part, &r, k == 0);
    }
    stream_close(&st);
    if (!nulls) /* with nulls: the chunks' counts of valid rows, summed */
        r.count = col->length;
    *out = r;
    return COPROC_OK;
fail:
    stream_close(&st);
    return s;
}

/* ---------------------------------------------------------------- select */

coproc_status coproc__stream_select(coproc_runtime *rt, coproc__device *dev,
                                    const coproc_filter *f, size_t budget,
                                    coproc_column **positions, uint64_t *count)
{
    const char *what = "coproc_select (streamed)";
    coproc_status s = check_common(rt, dev, what);
    if (s != COPROC_OK)
        return s;
    if (positions)
        *positions = NULL;
    if (!f)
        return coproc__fail(rt, COPROC_NULL_POINTER, "%s: filter is NULL", what);
    if ((unsigned)f->logic > COPROC_LOGIC_OR)
        return coproc__fail(rt, COPROC_INVALID_ARGUMENT, "%s: unknown logic %d", what,
                            (int)f->logic);
    int two = f->logic != COPROC_LOGIC_NONE;
    if ((s = check_host(rt, dev, f->first.col, "coproc_select: first predicate's column")) !=
        COPROC_OK)
        return s;
    if (two && (s = check_host(rt, dev, f->second.col,
                               "coproc_select: second predicate's column")) != COPROC_OK)
        return s;
    const coproc_column *a = f->first.col, *b = two ? f->second.col : NULL;
    if (b && b->length != a->length)
        return coproc__fail(rt, COPROC_LENGTH_MISMATCH,
                            "%s: the predicates' columns have %zu "
                            "and %zu rows",
                            what, a->length, b->length);
    int nulls = a->validity || (b && b->validity);
    plan p = {.op = OP_SELECT,
              .t = {a->type, b ? b->type : a->type},
              .inputs = b ? 2 : 1,
              .positions = positions != NULL,
              .bitmaps = (a->validity != NULL) + (b && b->validity)};
    size_t rows = 0;
    if ((s = plan_rows(rt, dev, &p, a->length, budget, SIZE_MAX, what, &rows)) != COPROC_OK)
        return s;
    if (!positions && !count)
        return COPROC_OK;

    stream st;
    coproc_column v[STREAM_INPUTS], *pos = NULL, *part = NULL;
    size_t total = 0;
    /* Positions past UINT32_MAX need 64 bits; below, the 32-bit column as in memory. */
    int wide = a->length > UINT32_MAX;
    if (positions && (s = coproc__host_column_new(rt, wide ? COPROC_UINT64 : COPROC_UINT32, 0,
                                                  &pos)) != COPROC_OK)
        return s;
    if ((s = stream_open(&st, rt, dev, a, b, rows, nulls)) != COPROC_OK)
        goto fail;
    for (size_t k = 0; k < st.chunks; k++) {
        if ((s = stream_wait(&st, k, v)) != COPROC_OK)
            goto fail;
        coproc_filter fv = *f;
        fv.first.col = &v[0];
        if (b)
            fv.second.col = &v[1];
        uint64_t matched = 0;
        if ((s = coproc__select_run(rt, &fv, positions ? &part : NULL, &matched)) != COPROC_OK ||
            (s = stream_done(&st, k)) != COPROC_OK)
            goto fail;
        if (positions && matched > 0) {
            if (total + matched > pos->length) { /* grow geometrically */
                size_t want = pos->length * 2 > total + matched ? pos->length * 2
                                                                : total + matched;
                if (want > a->length)
                    want = a->length;
                if ((s = host_resize(rt, pos, want)) != COPROC_OK)
                    goto fail;
            }
            if ((s = append_positions(rt, dev, part, chunk_start(&st, k), wide, pos->host,
                                      total)) != COPROC_OK)
                goto fail;
        }
        coproc_column_free(part);
        part = NULL;
        total += matched;
    }
    stream_close(&st);
    if (positions) {
        if ((s = host_resize(rt, pos, total)) != COPROC_OK)
            goto fail;
        *positions = pos;
    }
    if (count)
        *count = total;
    return COPROC_OK;
fail:
    stream_close(&st);
    coproc_column_free(part);
    coproc_column_free(pos);
    return s;
}

/* ---------------------------------------------------------------- map */

coproc_status coproc__stream_map(coproc_runtime *rt, coproc__device *dev, coproc_arith op,
                                 const coproc_column *a, const coproc_column *b, coproc_value c,
                                 size_t budget, coproc_column **out)
{
    const char *what = b ? "coproc_map (streamed)" : "coproc_map_const (streamed)";
    coproc_status s = check_common(rt, dev, what);
    if (s != COPROC_OK)
        return s;
    if (!out)
        return coproc__fail(rt, COPROC_NULL_POINTER, "%s: out is NULL", what);
    *out = NULL;
    if ((s = check_host(rt, dev, a, "coproc_map: a")) != COPROC_OK)
        return s;
    if (b && (s = check_host(rt, dev, b, "coproc_map: b")) != COPROC_OK)
        return s;
    if (b && a->type != b->type)
        return coproc__fail(rt, COPROC_INVALID_ARGUMENT, "%s: a is %s, b is %s (types must "
                            "match; coproc_cast one)", what, coproc_type_name(a->type),
                            coproc_type_name(b->type));
    if (b && a->length != b->length)
        return coproc__fail(rt, COPROC_LENGTH_MISMATCH, "%s: a has %zu rows, b %zu", what,
                            a->length, b->length);
    int nulls = a->validity || (b && b->validity);
    plan p = {.op = OP_MAP,
              .t = {a->type, a->type},
              .inputs = b ? 2 : 1,
              .bitmaps = (a->validity != NULL) + (b && b->validity)};
    size_t rows = 0;
    if ((s = plan_rows(rt, dev, &p, a->length, budget, SIZE_MAX, what, &rows)) != COPROC_OK)
        return s;

    stream st;
    coproc_column v[STREAM_INPUTS], *res = NULL, *part = NULL, *bits = NULL;
    size_t es = coproc_type_size(a->type);
    if ((s = coproc__host_column_new(rt, a->type, a->length, &res)) != COPROC_OK)
        return s;
    if (nulls) { /* the result's validity, each chunk's words in place */
        if ((s = coproc__host_column_new(rt, COPROC_UINT32, (a->length + 31) / 32, &bits)) !=
            COPROC_OK) {
            coproc_column_free(res);
            return s;
        }
        coproc__attach_validity(res, bits);
    }
    if ((s = stream_open(&st, rt, dev, a, b, rows, nulls)) != COPROC_OK)
        goto fail;
    for (size_t k = 0; k < st.chunks; k++) {
        if ((s = stream_wait(&st, k, v)) != COPROC_OK)
            goto fail;
        s = b ? coproc__map_run(rt, op, &v[0], &v[1], &part)
              : coproc__map_const_run(rt, op, &v[0], c, &part);
        /* The inputs are free once the kernel is done: the next copy starts
         * before this chunk's result is read back. */
        if (s != COPROC_OK || (s = stream_done(&st, k)) != COPROC_OK)
            goto fail;
        if (v[0].length > 0 &&
            (s = download(rt, dev, part, (char *)res->host + chunk_start(&st, k) * es)) !=
                COPROC_OK)
            goto fail;
        if (v[0].length > 0 && nulls &&
            (s = download(rt, dev, part->validity,
                          (uint32_t *)bits->host + chunk_start(&st, k) / 32)) != COPROC_OK)
            goto fail;
        coproc_column_free(part);
        part = NULL;
    }
    stream_close(&st);
    *out = res;
    return COPROC_OK;
fail:
    stream_close(&st);
    coproc_column_free(part);
    coproc_column_free(res);
    return s;
}

/* ---------------------------------------------------------------- group-by */

/* The chunks' results, concatenated: run k is rows [start[k], start[k+1]).
 * With nulls, a chunk's group of null keys is folded into `nullg` (row 0 of
 * its own columns) instead, and a group's sum, min and max count only where
 * its count (of valid values) is not 0. */
typedef struct partials {
    size_t len, cap;
    unsigned char *col[5]; /* keys, count, sum, min, max */
    size_t size[5];        /* element bytes; 0: absent */
    size_t *start;
    size_t runs;
    int null_values;       /* the values have a validity: count 0 = no valid value */
    int has_nullg;         /* some chunk had rows with a null key */
    unsigned char nullg[5][8];
} partials;

static void partials_free(partials *p)
{
    for (int i = 0; i < 5; i++)
        free(p->col[i]);
    free(p->start);
    memset(p, 0, sizeof *p);
}

static void fold_group(const partials *p, int i, unsigned char *acc, const unsigned char *acc_count,
                       const unsigned char *v, const unsigned char *vcount, coproc_type sum_t,
                       coproc_type vt);

/* Append one chunk's group-by result (device columns). */
static coproc_status partials_add(coproc_runtime *rt, coproc__device *dev, partials *p,
                                  const coproc_group_result *g, size_t chunks)
{
    const coproc_column *cols[5] = {g->keys, g->count, g->sum, g->min, g->max};
    if (!p->start && !(p->start = calloc(chunks + 1, sizeof *p->start)))
        return coproc__fail(rt, COPROC_HOST_OUT_OF_MEMORY, "out of host memory");
    if (p->len + g->groups > p->cap) {
        size_t cap = p->cap * 2 > p->len + g->groups ? p->cap * 2 : p->len + g->groups;
        for (int i = 0; i < 5; i++) {
            if (!cols[i])
                continue;
            void *m = realloc(p->col[i], cap * coproc_type_size(cols[i]->type));
            if (!m)
                return coproc__fail(rt, COPROC_HOST_OUT_OF_MEMORY, "out of host memory for %zu "
                                    "partial groups", cap);
            p->col[i] = m;
        }
        p->cap = cap;
    }
    for (int i = 0; i < 5; i++) {
        if (!cols[i])
            continue;
        p->size[i] = coproc_type_size(cols[i]->type);
        coproc_status s = download(rt, dev, cols[i], p->col[i] + p->len * p->size[i]);
        if (s != COPROC_OK)
            return s;
    }
    size_t groups = g->groups;
    if (groups && g->keys->validity) {
        /* The null keys' group is the last one, its key's bit 0. */
        uint32_t w;
        size_t last = groups - 1;
        coproc_status s = coproc__d2h(rt, dev, NULL, &w, g->keys->validity->mem, last / 32 * 4, 4, 0);
        if (s != COPROC_OK)
            return s;
        if (!(w >> (last % 32) & 1u)) {
            groups--;
            size_t at = p->len + last;
            for (int i = 4; i >= 1; i--) /* the count last: the others read it */
                if (cols[i])
                    fold_group(p, i, p->nullg[i], p->has_nullg ? p->nullg[1] : NULL,
                               p->col[i] + at * p->size[i], p->col[1] + at * p->size[1],
                               g->sum ? g->sum->type : COPROC_INT64, g->min ? g->min->type : COPROC_INT64);
            p->has_nullg = 1;
        }
    }
    p->len += groups;
    p->start[++p->runs] = p->len;
    return COPROC_OK;
}

/* A key in an order that compares as the key type's values. */
static uint64_t key_order(coproc_type t, const unsigned char *k)
{
    if (coproc_type_size(t) == 4) {
        uint32_t w;
        memcpy(&w, k, 4);
        return t == COPROC_INT32 ? w ^ 0x80000000u : w;
    }
    uint64_t w;
    memcpy(&w, k, 8);
    return t == COPROC_INT64 ? w ^ 0x8000000000000000ull : w;
}

/* Fold value v into the aggregate at acc: min (mn) or max of type t. */
#define FOLD_MINMAX(T, MIN, MAX)                                                           \
    do {                                                                                   \
        T x, y;                                                                            \
        memcpy(&x, acc, sizeof x);                                                         \
        memcpy(&y, v, sizeof y);                                                           \
        x = mn ? MIN(x, y) : MAX(x, y);                                                    \
        memcpy(acc, &x, sizeof x);                                                         \
    } while (0)
#define LESSER(x, y) ((y) < (x) ? (y) : (x))
#define GREATER(x, y) ((y) > (x) ? (y) : (x))

static void fold_minmax(coproc_type t, int mn, unsigned char *acc, const unsigned char *v)
{
    switch (t) {
    case COPROC_INT32: FOLD_MINMAX(int32_t, LESSER, GREATER); break;
    case COPROC_INT64: FOLD_MINMAX(int64_t, LESSER, GREATER); break;
    case COPROC_UINT32: FOLD_MINMAX(uint32_t, LESSER, GREATER); break;
    case COPROC_UINT64: FOLD_MINMAX(uint64_t, LESSER, GREATER); break;
    /* fmin/fmax drop NaN: NaN only when every value of the group was NaN. */
    case COPROC_FLOAT32: FOLD_MINMAX(float, fminf, fmaxf); break;
    default: FOLD_MINMAX(double, fmin, fmax); break;
    }
}

static void fold_sum(coproc_type t, unsigned char *acc, const unsigned char *v)
{
    if (t == COPROC_FLOAT64) {
        double x, y;
        memcpy(&x, acc, 8);
        memcpy(&y, v, 8);
        x += y;
        memcpy(acc, &x, 8);
    } else if (t == COPROC_FLOAT32) { /* devices without fp64 sum in float */
        float x, y;
        memcpy(&x, acc, 4);
        memcpy(&y, v, 4);
        x += y;
        memcpy(acc, &x, 4);
    } else {
        uint64_t x, y; /* wrapping, the same bits for signed sums */
        memcpy(&x, acc, 8);
        memcpy(&y, v, 8);
        x += y;
        memcpy(acc, &x, 8);
    }
}

/* Fold aggregate i (1 count, 2 sum, 3 min, 4 max) of a partial group (v,
 * its count vcount) into acc, whose group counted acc_count so far (NULL:
 * acc holds nothing yet). With nullable values a count of 0 means no valid
 * value: such a sum, min or max is null and left out (or replaced). The
 * caller folds the count (i = 1) after the others. */
static void fold_group(const partials *p, int i, unsigned char *acc, const unsigned char *acc_count,
                       const unsigned char *v, const unsigned char *vcount, coproc_type sum_t,
                       coproc_type vt)
{
    uint64_t ac = 0, vc = 1;
    if (acc_count)
        memcpy(&ac, acc_count, 8);
    if (p->null_values)
        memcpy(&vc, vcount, 8);
    int empty = !acc_count || (i > 1 && p->null_values && ac == 0);
    if (i > 1 && vc == 0)
        return; /* nothing valid to add (not even to a count, which is i == 1) */
    if (empty) {
        memcpy(acc, v, p->size[i]);
        return;
    }
    if (i == 1)
        fold_sum(COPROC_UINT64, acc, v);
    else if (i == 2)
        fold_sum(sum_t, acc, v);
    else
        fold_minmax(vt, i == 3, acc, v);
}

/* Heap of runs ordered by their current key (a min-heap on key_order). */
typedef struct merge_heap {
    size_t *run;   /* heap of run indices */
    size_t *pos;   /* per run: next row */
    size_t size;
    const partials *p;
    coproc_type kt;
} merge_heap;

static uint64_t heap_key(const merge_heap *h, size_t i)
{
    size_t r = h->run[i];
    return key_order(h->kt, h->p->col[0] + h->pos[r] * h->p->size[0]);
}

static void heap_down(merge_heap *h, size_t i)
{
    for (;;) {
        size_t l = 2 * i + 1, m = i;
        if (l < h->size && heap_key(h, l) < heap_key(h, m))
            m = l;
        if (l + 1 < h->size && heap_key(h, l + 1) < heap_key(h, m))
            m = l + 1;
        if (m == i)
            return;
        size_t t = h->run[i];
        h->run[i] = h->run[m];
        h->run[m] = t;
        i = m;
    }
}

/*
 * Merge the runs (each ascending by key, keys distinct within a run) into
 * out's host columns (capacity p->len rows), summing counts and sums and
 * folding min/max of equal keys; out->groups receives the number of groups.
 */
static coproc_status merge_partials(coproc_runtime *rt, const partials *p, coproc_type kt,
                                    coproc_type sum_t, coproc_type vt, coproc_group_result *out)
{
    merge_heap h = {.p = p, .kt = kt};
    h.run = malloc((p->runs + 1) * sizeof *h.run);
    h.pos = malloc((p->runs + 1) * sizeof *h.pos);
    if (!h.run || !h.pos) {
        free(h.run);
        free(h.pos);
        return coproc__fail(rt, COPROC_HOST_OUT_OF_MEMORY, "out of host memory");
    }
    for (size_t r = 0; r < p->runs; r++) {
        h.pos[r] = p->start[r];
        if (p->start[r] < p->start[r + 1])
            h.run[h.size++] = r;
    }
    for (size_t i = h.size; i-- > 0;)
        heap_down(&h, i);
    coproc_column *dst[5] = {out->keys, out->count, out->sum, out->min, out->max};
    size_t groups = 0;
    uint64_t last = 0;
    while (h.size > 0) {
        size_t r = h.run[0], row = h.pos[r];
        uint64_t key = heap_key(&h, 0);
        int same = groups > 0 && key == last;
        if (!same)
            groups++;
        size_t g = groups - 1;
        /* the aggregates first: they read the group's count before it adds up */
        for (int i = 4; i >= 0; i--) {
            if (!dst[i])
                continue;
            size_t es = p->size[i];
            unsigned char *acc = (unsigned char *)dst[i]->host + g * es;
            const unsigned char *v = p->col[i] + row * es;
            if (!same || i == 0)
                memcpy(acc, v, es);
            else
                fold_group(p, i, acc, (unsigned char *)dst[1]->host + g * 8, v, p->col[1] + row * 8,
                           sum_t, vt);
        }
        last = key;
        if (++h.pos[r] < p->start[r + 1])
            heap_down(&h, 0);
        else if (--h.size > 0) {
            h.run[0] = h.run[h.size];
            heap_down(&h, 0);
        }
    }
    free(h.run);
    free(h.pos);
    out->groups = groups;
    return COPROC_OK;
}

/* Give host column col (NULL: nothing to do) a validity: valid where the
 * group's count is not 0, or (count NULL, last_null) every row but the last. */
static coproc_status group_validity(coproc_runtime *rt, coproc_column *col, const coproc_column *count,
                                    int last_null)
{
    if (!col)
        return COPROC_OK;
    size_t n = col->length, words = (n + 31) / 32;
    coproc_column *bits;
    coproc_status s = coproc__host_column_new(rt, COPROC_UINT32, words, &bits);
    if (s != COPROC_OK)
        return s;
    uint32_t *w = bits->host;
    if (words) /* no groups: no words, and w may be NULL */
        memset(w, 0, words * 4);
    const uint64_t *c = count ? count->host : NULL;
    for (size_t i = 0; i < n; i++)
        if (c ? c[i] != 0 : !(last_null && i == n - 1))
            w[i / 32] |= 1u << (i % 32);
    if ((s = coproc_column_set_validity(col, bits)) != COPROC_OK)
        coproc_column_free(bits);
    return s;
}

coproc_status coproc__stream_group_by(coproc_runtime *rt, coproc__device *dev,
                                      const coproc_column *keys, const coproc_column *values,
                                      int sorted, size_t budget, coproc_group_result *out)
{
    const char *what = "coproc_group_by (streamed)";
    coproc_status s = check_common(rt, dev, what);
    if (s != COPROC_OK)
        return s;
    if (!out)
        return coproc__fail(rt, COPROC_NULL_POINTER, "%s: out is NULL", what);
    memset(out, 0, sizeof *out);
    if ((s = check_host(rt, dev, keys, "coproc_group_by: keys")) != COPROC_OK)
        return s;
    if (values && (s = check_host(rt, dev, values, "coproc_group_by: values")) != COPROC_OK)
        return s;
    if (!coproc__is_key_type(keys->type))
        return coproc__fail(rt, COPROC_UNSUPPORTED_TYPE, "%s: keys of type %s; keys must be "
                            "integers", what, coproc_type_name(keys->type));
    if (values && values->length != keys->length)
        return coproc__fail(rt, COPROC_LENGTH_MISMATCH, "%s: %zu keys but %zu values", what,
                            keys->length, values->length);
    /* With nulls, the validities stream beside the rows (chunks of whole
     * words) and each chunk's group-by follows SQL (coproc.h, "nulls"). */
    int nulls = coproc__has_nulls(keys) || coproc__has_nulls(values);
    plan p = {.op = OP_GROUP_BY, .t = {keys->type, values ? values->type : keys->type},
              .inputs = values ? 2 : 1, .has_values = values != NULL,
              .bitmaps = nulls ? (values ? 2 : 1) : 0};
    size_t rows = 0;
    /* The in-memory group-by takes at most 2^32 - 1 rows; tables stay below 2^31 slots. */
    if ((s = plan_rows(rt, dev, &p, keys->length, budget, (size_t)1 << 30, what, &rows)) !=
        COPROC_OK)
        return s;
    (void)sorted; /* the merge gives ascending keys either way */

    stream st;
    coproc_column v[STREAM_INPUTS];
    coproc_group_result part, r;
    memset(&part, 0, sizeof part);
    memset(&r, 0, sizeof r);
    partials pt;
    memset(&pt, 0, sizeof pt);
    coproc_type sum_t = COPROC_INT64;
    pt.null_values = coproc__has_nulls(values);
    if ((s = stream_open(&st, rt, dev, keys, values, rows, p.bitmaps > 0)) != COPROC_OK)
        goto fail;
    for (size_t k = 0; k < st.chunks; k++) {
        /* Sorted partials merge in one pass on the host. */
        if ((s = stream_wait(&st, k, v)) != COPROC_OK ||
            (s = coproc__group_by_run(rt, &v[0], values ? &v[1] : NULL, COPROC_GROUP_ALL, 1,
                                      &part)) != COPROC_OK ||
            (s = stream_done(&st, k)) != COPROC_OK ||
            (s = partials_add(rt, dev, &pt, &part, st.chunks)) != COPROC_OK)
            goto fail;
        if (part.sum)
            sum_t = part.sum->type;
        coproc_group_result_free(&part);
    }
    stream_close(&st);

    size_t cap = pt.len + 1; /* and the null keys' group */
    if ((s = coproc__host_column_new(rt, keys->type, cap, &r.keys)) != COPROC_OK ||
        (s = coproc__host_column_new(rt, COPROC_UINT64, cap, &r.count)) != COPROC_OK)
        goto fail;
    if (values &&
        ((s = coproc__host_column_new(rt, sum_t, cap, &r.sum)) != COPROC_OK ||
         (s = coproc__host_column_new(rt, values->type, cap, &r.min)) != COPROC_OK ||
         (s = coproc__host_column_new(rt, values->type, cap, &r.max)) != COPROC_OK))
        goto fail;
    if ((s = merge_partials(rt, &pt, keys->type, sum_t, values ? values->type : keys->type,
                            &r)) != COPROC_OK)
        goto fail;
    coproc_column *cols[5] = {r.keys, r.count, r.sum, r.min, r.max};
    if (pt.has_nullg) { /* the null keys' group, last */
        for (int i = 0; i < 5; i++)
            if (cols[i])
                memcpy((unsigned char *)cols[i]->host + r.groups * pt.size[i], pt.nullg[i], pt.size[i]);
        memset((unsigned char *)r.keys->host + r.groups * pt.size[0], 0, pt.size[0]);
        r.groups++;
    }
    for (int i = 0; i < 5; i++)
        if (cols[i] && (s = host_resize(rt, cols[i], r.groups)) != COPROC_OK)
            goto fail;
    if ((pt.has_nullg && (s = group_validity(rt, r.keys, NULL, 1)) != COPROC_OK) ||
        (pt.null_values && ((s = group_validity(rt, r.sum, r.count, 0)) != COPROC_OK ||
                            (s = group_validity(rt, r.min, r.count, 0)) != COPROC_OK ||
                            (s = group_validity(rt, r.max, r.count, 0)) != COPROC_OK)))
        goto fail;
    partials_free(&pt);
    *out = r;
    return COPROC_OK;
fail:
    stream_close(&st);
    coproc_group_result_free(&part);
    coproc_group_result_free(&r);
    partials_free(&pt);
    return s;
}
