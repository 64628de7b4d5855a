/* chunked.c - operators over host columns, chunk by chunk (chunked.h). */
#include "exec/chunked.h"

#include <stdlib.h>
#include <string.h>

#include "backend/opencl/transfer.h"
#include "core/error.h"
#include "data/column.h"
#include "exec/hostrun.h"

coproc_status coproc__host_view(coproc_runtime *rt, const coproc_column *col, size_t first,
                                size_t n, coproc_column **out)
{
    const char *base = col->host;
    return coproc_column_wrap(rt, col->type, n ? base + first * coproc_type_size(col->type) : NULL,
                              n, out);
}

coproc_status coproc__host_grow(coproc_runtime *rt, coproc_type t, coproc_column **col,
                                size_t rows)
{
    if (!*col)
        return coproc__host_column_new(rt, t, rows, col);
    coproc_column *c = *col;
    if (!c->host_owned)
        return coproc__fail(rt, COPROC_INTERNAL, "growing a column coproc does not own");
    void *p = realloc(c->host, (rows ? rows : 1) * coproc_type_size(c->type));
    if (!p)
        return coproc__fail(rt, COPROC_HOST_OUT_OF_MEMORY, "out of host memory");
    c->host = p;
    c->length = rows;
    return COPROC_OK;
}

/* A device copy of the host column col. */
static coproc_status upload(coproc_runtime *rt, coproc__device *dev, const coproc_column *col,
                            coproc_column **out)
{
    coproc_status s = coproc__column_new(rt, dev, col->type, col->length, out);
    size_t bytes = col->length * coproc_type_size(col->type);
    if (s == COPROC_OK && bytes)
        s = coproc__h2d(rt, dev, NULL, (*out)->mem, 0, col->host, bytes, col->pinned != NULL);
    if (s != COPROC_OK) {
        coproc_column_free(*out);
        *out = NULL;
    }
    return s;
}

coproc_status coproc__stream_chunked(coproc_runtime *rt, coproc__device *dev, const coproc_op *op,
                                     const coproc__op_def *def, size_t budget,
                                     const coproc__chunking *c, coproc_result *out)
{
    double room = (double)budget - c->whole_bytes;
    double fit = c->row_bytes > 0 ? room / c->row_bytes : (double)c->rows;
    size_t chunk = fit >= (double)UINT32_MAX ? UINT32_MAX : fit > 0 ? (size_t)fit : 0;
    chunk -= chunk % c->align;
    if (chunk == 0)
        return coproc__fail(rt, COPROC_DEVICE_OUT_OF_MEMORY, "%s on device %d: %zu bytes of "
                            "budget hold no chunk (%.0f bytes needed whole, %.0f per row)",
                            def->name, dev->index, budget, c->whole_bytes, c->row_bytes);
    const coproc_column *orig[COPROC__OP_MAX_INPUTS];
    int n_in = def->inputs(op, orig);
    coproc_column *whole[COPROC__OP_MAX_INPUTS] = {NULL}; /* device copies of whole inputs */
    coproc_status s = COPROC_OK;
    memset(out, 0, sizeof *out);
    size_t first = 0;
    do {
        size_t n = c->rows - first < chunk ? c->rows - first : chunk;
        coproc_op part;
        coproc_column *views[COPROC__OP_MAX_INPUTS] = {NULL};
        coproc_column *dcols[COPROC__OP_MAX_INPUTS] = {NULL};
        const coproc_column *in[COPROC__OP_MAX_INPUTS], *v[COPROC__OP_MAX_INPUTS];
        coproc_result r;
        memset(&r, 0, sizeof r);
        s = c->slice(rt, op, first, n, &part, views);
        int k = s == COPROC_OK ? def->inputs(&part, in) : 0;
        for (int i = 0; i < k && s == COPROC_OK; i++) {
            int w = -1; /* an input every chunk uses whole: copied once */
            for (int j = 0; j < n_in && w < 0; j++)
                if (in[i] == orig[j])
                    w = j;
            if (w >= 0) {
                if (!whole[w])
                    s = upload(rt, dev, in[i], &whole[w]);
                v[i] = whole[w];
            } else {
                s = upload(rt, dev, in[i], &dcols[i]);
                v[i] = dcols[i];
            }
        }
        if (s == COPROC_OK)
            s = def->run(rt, dev, &part, v, &r);
        for (int i = 0; i < COPROC__OP_MAX_INPUTS; i++) {
            coproc_column_free(dcols[i]);
            coproc_column_free(views[i]);
        }
        if (s == COPROC_OK)
            s = coproc__result_to_host(rt, dev, &r);
        if (s == COPROC_OK)
            s = c->combine(rt, op, first, n, &r, out);
        coproc_result_free(&r);
        first += n;
    } while (s == COPROC_OK && first < c->rows);
    for (int j = 0; j < COPROC__OP_MAX_INPUTS; j++)
        coproc_column_free(whole[j]);
    if (s != COPROC_OK) {
        coproc_result_free(out);
        memset(out, 0, sizeof *out);
    }
    out->streamed = 1;
    return s;
}

coproc_status coproc__slice_rows(coproc_runtime *rt, const coproc_op *op, size_t first, size_t n,
                                 coproc_op *part, coproc_column *views[COPROC__OP_MAX_INPUTS])
{
    *part = *op;
    coproc_status s = coproc__host_view(rt, op->a, first, n, &views[0]);
    part->a = views[0];
    if (s == COPROC_OK && op->b) {
        s = coproc__host_view(rt, op->b, first, n, &views[1]);
        part->b = views[1];
    }
    return s;
}

coproc_status coproc__combine_rows(coproc_runtime *rt, const coproc_op *op, size_t first,
                                   size_t n, coproc_result *part, coproc_result *acc)
{
    const coproc_column *p = part->column;
    if (!acc->column) {
        coproc_status s = coproc__host_column_new(rt, p->type, op->a->length, &acc->column);
        if (s != COPROC_OK)
            return s;
    }
    size_t w = coproc_type_size(p->type);
    if (p->length)
        memcpy((char *)acc->column->host + first * w, p->host, p->length * w);
    return COPROC_OK;
}
