/* order.c - a stable multi-key order-by of a host table (order.h): a merge
 * sort of row numbers, then the columns gathered in that order. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "data/column.h"
#include "query/order.h"

typedef struct sort_key {
    const void *data;
    coproc_type type;
    int desc;
    const uint32_t *valid; /* the key's validity, NULL: no nulls */
    int nulls_first;
} sort_key;

static int is_valid(const uint32_t *w, size_t r)
{
    return !w || ((w[r / 32] >> (r % 32)) & 1u);
}

static int cmp_one(const sort_key *k, size_t a, size_t b)
{
    int r = 0;
    int va = is_valid(k->valid, a), vb = is_valid(k->valid, b);
    if (!va || !vb) /* nulls together, first or last whatever the direction */
        return va == vb ? 0 : (!va == !!k->nulls_first) ? -1 : 1;
    switch (k->type) {
#define CMP(T)                                                                                     \
    {                                                                                              \
        T x = ((const T *)k->data)[a], y = ((const T *)k->data)[b];                                \
        r = (x > y) - (x < y);                                                                     \
        break;                                                                                     \
    }
    case COPROC_INT32: CMP(int32_t)
    case COPROC_INT64: CMP(int64_t)
    case COPROC_UINT32: CMP(uint32_t)
    case COPROC_UINT64: CMP(uint64_t)
#undef CMP
    case COPROC_FLOAT32:
    case COPROC_FLOAT64: {
        double x = k->type == COPROC_FLOAT32 ? ((const float *)k->data)[a] : ((const double *)k->data)[a];
        double y = k->type == COPROC_FLOAT32 ? ((const float *)k->data)[b] : ((const double *)k->data)[b];
        /* NaN sorts as the largest value. */
        if (isnan(x) || isnan(y))
            r = isnan(x) - isnan(y);
        else
            r = (x > y) - (x < y);
        break;
    }
    default:
        break;
    }
    return k->desc ? -r : r;
}

static int cmp_rows(const sort_key *keys, int n, size_t a, size_t b)
{
    for (int i = 0; i < n; i++) {
        int r = cmp_one(&keys[i], a, b);
        if (r)
            return r;
    }
    return 0;
}

/* Stable merge sort of idx[0..n) with tmp as scratch. */
static void merge_sort(size_t *idx, size_t *tmp, size_t n, const sort_key *keys, int nk)
{
    for (size_t w = 1; w < n; w *= 2) {
        for (size_t lo = 0; lo < n; lo += 2 * w) {
            size_t mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n;
            size_t i = lo, j = mid, o = lo;
            while (i < mid && j < hi)
                tmp[o++] = cmp_rows(keys, nk, idx[j], idx[i]) < 0 ? idx[j++] : idx[i++];
            while (i < mid)
                tmp[o++] = idx[i++];
            while (j < hi)
                tmp[o++] = idx[j++];
        }
        memcpy(idx, tmp, n * sizeof *idx);
    }
}

/* col (keep rows) gets the validity of src's rows idx[0..keep). */
static coproc_status permute_validity(coproc_runtime *rt, const coproc_column *src,
                                      const size_t *idx, size_t keep, coproc_column *col)
{
    coproc_column *bits;
    if (src->validity->dev)
        return coproc__fail(rt, COPROC_INTERNAL, "order-by: a device validity");
    coproc_status s = coproc__host_column_new(rt, COPROC_UINT32, (keep + 31) / 32, &bits);
    if (s != COPROC_OK)
        return s;
    uint32_t *d = bits->host;
    const uint32_t *v = src->validity->host;
    if (keep) /* no rows: no words, and d may be NULL */
        memset(d, 0, (keep + 31) / 32 * sizeof *d);
    for (size_t r = 0; r < keep; r++)
        if (is_valid(v, idx[r]))
            d[r / 32] |= 1u << (r % 32);
    if ((s = coproc_column_set_validity(col, bits)) != COPROC_OK)
        coproc_column_free(bits);
    return s;
}

coproc_status coproc__order_by_host(coproc_runtime *rt, const coproc_table *in, const coproc_node *n,
                                    coproc_table **out)
{
    *out = NULL;
    size_t rows = in->rows;
    sort_key keys[8];
    for (int i = 0; i < n->n; i++) {
        const coproc_column *c = coproc_table_column(in, n->names[i]);
        if (!c || c->dev)
            return coproc__fail(rt, COPROC_INTERNAL, "%s: key \"%s\" is not a host column", n->label, n->names[i]);
        const uint32_t *valid = c->validity ? c->validity->host : NULL;
        if (c->validity && c->validity->dev)
            return coproc__fail(rt, COPROC_INTERNAL, "%s: key \"%s\" has a device validity",
                                n->label, n->names[i]);
        keys[i] = (sort_key){c->host, c->type, n->desc[i], valid, n->nulls_first[i]};
    }
    size_t *idx = malloc((rows ? rows : 1) * sizeof *idx), *tmp = malloc((rows ? rows : 1) * sizeof *tmp);
    if (!idx || !tmp) {
        free(idx);
        free(tmp);
        return coproc__fail(rt, COPROC_HOST_OUT_OF_MEMORY, "%s: out of host memory", n->label);
    }
    for (size_t i = 0; i < rows; i++)
        idx[i] = i;
    merge_sort(idx, tmp, rows, keys, n->n);
    free(tmp);
    size_t keep = n->limit && n->limit < rows ? (size_t)n->limit : rows;
    coproc_table *t = NULL;
    coproc_status s = coproc_table_create(rt, &t);
    for (int c = 0; s == COPROC_OK && c < in->n; c++) {
        const coproc_column *src = in->cols[c];
        coproc_column *col;
        s = coproc__host_column_new(rt, src->type, keep, &col);
        if (s != COPROC_OK)
            break;
        size_t w = coproc_type_size(src->type);
        for (size_t r = 0; r < keep; r++)
            memcpy((char *)col->host + r * w, (const char *)src->host + idx[r] * w, w);
        if (src->validity) /* the nulls move with their rows */
            s = permute_validity(rt, src, idx, keep, col);
        if (s == COPROC_OK)
            s = coproc__table_add_owned(t, in->names[c], col);
        else
            coproc_column_free(col);
    }
    free(idx);
    if (s != COPROC_OK) {
        coproc_table_free(t);
        return s;
    }
    *out = t;
    return COPROC_OK;
}
