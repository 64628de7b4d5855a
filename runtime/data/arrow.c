/* arrow.c - the Arrow C Data Interface for primitive columns, nulls included:
 * import (zero-copy on host-unified devices, else one upload; the validity
 * buffer likewise where its words line up, else realigned on the host) and
 * export (one download of the values, one of the validity). */
#include "coproc/arrow.h"

#include <stdlib.h>
#include <string.h>

#include "data/arrow_strings.h"
#include "data/column.h"
#include "core/runtime.h"

/* The Arrow format string of each supported type; NULL where Arrow has none here. */
static const char *arrow_format(coproc_type t)
{
    switch (t) {
    case COPROC_INT32: return "i";
    case COPROC_INT64: return "l";
    case COPROC_UINT32: return "I";
    case COPROC_UINT64: return "L";
    case COPROC_FLOAT32: return "f";
    case COPROC_FLOAT64: return "g";
    default: return NULL;
    }
}

static int type_of_format(const char *format, coproc_type *t)
{
    for (int i = 0; i < COPROC__TYPE_COUNT; i++) {
        const char *f = arrow_format((coproc_type)i);
        if (f && strcmp(f, format) == 0) {
            *t = (coproc_type)i;
            return 1;
        }
    }
    return 0;
}

/* Host words in little-endian byte order: Arrow's bitmap bytes read as coproc's words. */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
#define HOST_LITTLE_ENDIAN 0
#else
#define HOST_LITTLE_ENDIAN 1
#endif

/*
 * Word w (32 rows) of coproc's validity for rows [0, n) of an Arrow validity
 * bitmap (LSB first) whose row 0 is bit `from`: bits (from + 32 w + j) for j
 * < 32, those past row n cleared. Reads only the bytes Arrow guarantees,
 * [0, ceil((from + n) / 8)).
 */
static uint32_t arrow_word(const uint8_t *bitmap, uint64_t from, uint64_t n, uint64_t w)
{
    uint64_t bit = from + 32 * w, byte = bit >> 3, last = (from + n - 1) >> 3;
    uint64_t v = 0;
    for (unsigned k = 0; k < 5 && byte + k <= last; k++)
        v |= (uint64_t)bitmap[byte + k] << (8 * k);
    uint32_t word = (uint32_t)(v >> (bit & 7));
    uint64_t rows = n - 32 * w; /* rows in this word (n > 32 w) */
    return rows >= 32 ? word : word & ((1u << rows) - 1u);
}

/* The number of null rows among [0, n) of an Arrow validity bitmap from bit `from`. */
static uint64_t arrow_nulls(const uint8_t *bitmap, uint64_t from, uint64_t n)
{
    uint64_t valid = 0;
    for (uint64_t w = 0; w < (n + 31) / 32; w++)
        valid += (uint64_t)__builtin_popcount(arrow_word(bitmap, from, n, w));
    return n - valid;
}

int coproc__arrow_has_nulls(const struct ArrowArray *a, const char **why)
{
    /* Nulls: a null_count > 0, or -1 (not computed) over a validity buffer
     * with a zero bit. A null_count of 0, or no validity buffer, means none. */
    if (a->length < 0 || a->offset < 0 || a->length > INT64_MAX - a->offset) {
        *why = "its length or offset is negative or too large";
        return -1;
    }
    if (a->null_count < -1 || a->null_count > a->length) {
        *why = "its null_count is outside [-1, length]";
        return -1;
    }
    const uint8_t *validity = a->n_buffers > 0 && a->buffers ? a->buffers[0] : NULL;
    if (a->null_count > 0 && !validity) {
        *why = "it has a null_count and no validity buffer";
        return -1;
    }
    return a->length > 0 && validity && a->null_count != 0 &&
           (a->null_count > 0 ||
            arrow_nulls(validity, (uint64_t)a->offset, (uint64_t)a->length) > 0);
}

/* The validity of an imported column of n > 0 rows with nulls, on the device
 * of `col` (which takes it): the Arrow words themselves when the data was
 * taken zero-copy (col wraps it) and the validity's words line up - an offset
 * that is a multiple of 32, 4-byte aligned, and whole words (n a multiple of
 * 32: no byte read past what Arrow guarantees) - else realigned on the host
 * and uploaded. */
coproc_status coproc__arrow_import_validity(coproc_runtime *rt, coproc__device *dev,
                                            coproc_column *col, const uint8_t *bitmap,
                                            uint64_t from, size_t n)
{
    size_t words = (n + 31) / 32;
    coproc_column *v = NULL;
    coproc_status s;
    const uint8_t *first = bitmap + from / 8;
    if (col->host_wrapped && HOST_LITTLE_ENDIAN && from % 32 == 0 && n % 32 == 0 &&
        (uintptr_t)first % 4 == 0) {
        /* kept alive by the Arrow array col holds (released after the validity) */
        s = coproc__column_wrap_host(rt, dev, COPROC_UINT32, words, (void *)first, &v);
    } else {
        uint32_t *host = malloc(words * sizeof *host);
        if (!host)
            return coproc__fail(rt, COPROC_HOST_OUT_OF_MEMORY,
                                "out of host memory for the "
                                "validity of %zu rows",
                                n);
        for (size_t w = 0; w < words; w++)
            host[w] = arrow_word(bitmap, from, n, w);
        s = coproc_column_upload(rt, dev->index, COPROC_UINT32, host, words, &v);
        free(host);
    }
    if (s == COPROC_OK)
        coproc__attach_validity(col, v);
    return s;
}

/* on_free hook of a zero-copy column: release the Arrow array it took over. */
static void release_moved_array(void *ctx)
{
    struct ArrowArray *a = ctx;
    if (a->release)
        a->release(a);
    free(a);
}

coproc_status coproc_column_import_arrow(coproc_runtime *rt, int device,
                                         const struct ArrowSchema *schema,
                                         struct ArrowArray *array, coproc_column **out)
{
    if (!rt)
        return COPROC_NULL_POINTER;
    if (!out)
        return coproc__fail(rt, COPROC_NULL_POINTER, "out is NULL");
    *out = NULL;
    if (!schema || !array)
        return coproc__fail(rt, COPROC_NULL_POINTER, "%s is NULL", schema ? "array" : "schema");
    if (!schema->release || !array->release)
        return coproc__fail(rt, COPROC_INVALID_ARGUMENT, "the Arrow %s is already released",
                            schema->release ? "array" : "schema");
    if (!schema->format)
        return coproc__fail(rt, COPROC_INVALID_ARGUMENT, "the Arrow schema has no format");
    if (coproc__arrow_is_strings(schema)) /* dictionary-encoded: arrow_strings.c */
        return coproc__arrow_import_strings(rt, device, schema, array, out);
    coproc_type t;
    if (!type_of_format(schema->format, &t))
        return coproc__fail(rt, COPROC_UNSUPPORTED_TYPE, "Arrow format \"%.32s\" is not supported "
                            "(only i, l, I, L, f, g: primitive numbers)", schema->format);
    if (schema->dictionary || schema->n_children != 0)
        return coproc__fail(rt, COPROC_UNSUPPORTED_TYPE, "Arrow dictionary or nested schemas are "
                            "not supported");
    if (array->n_buffers != 2 || !array->buffers || array->n_children != 0 || array->dictionary)
        return coproc__fail(rt, COPROC_INVALID_ARGUMENT, "Arrow array of format \"%s\" must have "
                            "2 buffers and no children (has %lld buffers, %lld children)",
                            schema->format, (long long)array->n_buffers,
                            (long long)array->n_children);
    size_t esize = coproc_type_size(t);
    if (array->length < 0 || array->offset < 0 || array->length > INT64_MAX - array->offset ||
        (uint64_t)(array->offset + array->length) > SIZE_MAX / 2 / esize)
        return coproc__fail(rt, COPROC_INVALID_ARGUMENT, "Arrow array has bad length %lld or "
                            "offset %lld", (long long)array->length, (long long)array->offset);
    size_t n = (size_t)array->length;
    const uint8_t *validity = array->buffers[0];
    const char *data = array->buffers[1];
    const char *why = NULL;
    int nulls = coproc__arrow_has_nulls(array, &why);
    if (nulls < 0)
        return coproc__fail(rt, COPROC_INVALID_ARGUMENT, "Arrow array: %s", why);
    if (!data && n > 0)
        return coproc__fail(rt, COPROC_INVALID_ARGUMENT, "Arrow array of %zu rows has no data "
                            "buffer", n);
    coproc__device *dev = coproc__device_at(rt, device);
    if (!dev)
        return COPROC_INVALID_ARGUMENT;
    const char *first = n > 0 ? data + (size_t)array->offset * esize : NULL;

    coproc_status s;
    if (n > 0 && dev->info.host_unified_memory && (uintptr_t)first % esize == 0) {
        /* Zero-copy: the column reads the Arrow buffer and keeps the array alive. */
        struct ArrowArray *moved = malloc(sizeof *moved);
        if (!moved)
            return coproc__fail(rt, COPROC_HOST_OUT_OF_MEMORY, "out of host memory");
        s = coproc__column_wrap_host(rt, dev, t, n, (void *)first, out);
        if (s != COPROC_OK) {
            free(moved);
            return s;
        }
        if (nulls && (s = coproc__arrow_import_validity(rt, dev, *out, validity,
                                                        (uint64_t)array->offset, n)) != COPROC_OK) {
            coproc_column_free(*out); /* the array is still the caller's */
            *out = NULL;
            free(moved);
            return s;
        }
        *moved = *array;
        array->release = NULL;
        (*out)->on_free = release_moved_array;
        (*out)->on_free_ctx = moved;
        return COPROC_OK;
    }
    s = coproc_column_upload(rt, device, t, first, n, out);
    if (s == COPROC_OK && nulls &&
        (s = coproc__arrow_import_validity(rt, dev, *out, validity, (uint64_t)array->offset, n)) !=
            COPROC_OK) {
        coproc_column_free(*out);
        *out = NULL;
    }
    if (s != COPROC_OK)
        return s;
    struct ArrowArray moved = *array; /* moved, then released: the caller's is marked released */
    array->release = NULL;
    moved.release(&moved);
    return COPROC_OK;
}

/* What an exported array owns: its buffers array, the aligned data and the
 * validity (NULL without nulls). */
typedef struct export_private {
    const void *buffers[2];
    void *data;
    void *validity;
} export_private;

static void release_exported_array(struct ArrowArray *a)
{
    export_private *p = a->private_data;
    free(p->data);
    free(p->validity);
    free(p);
    a->release = NULL;
}

/* col's validity as an Arrow validity buffer: 64-byte aligned and padded,
 * the bits past the last row cleared. */
coproc_status coproc__arrow_export_validity(const coproc_column *col, void **out)
{
    coproc_runtime *rt = col->rt;
    size_t n = col->length, words = (n + 31) / 32;
    size_t rounded = (words * 4 + 63) / 64 * 64;
    uint32_t *w = aligned_alloc(64, rounded ? rounded : 64);
    if (!w)
        return coproc__fail(rt, COPROC_HOST_OUT_OF_MEMORY,
                            "out of host memory for a validity "
                            "of %zu rows",
                            n);
    memset(w, 0, rounded ? rounded : 64);
    coproc_status s = coproc_column_download(col->validity, w, words);
    if (s != COPROC_OK) {
        free(w);
        return s;
    }
    if (n % 32)
        w[words - 1] &= (1u << (n % 32)) - 1u;
    if (!HOST_LITTLE_ENDIAN) /* Arrow's bitmap is bytes, least significant bit first */
        for (size_t i = 0; i < words; i++) {
            uint32_t x = w[i];
            uint8_t *b = (uint8_t *)&w[i];
            for (int k = 0; k < 4; k++)
                b[k] = (uint8_t)(x >> (8 * k));
        }
    *out = w;
    return COPROC_OK;
}

static void release_exported_schema(struct ArrowSchema *s)
{
    s->release = NULL; /* the format string is static; nothing else is owned */
}

coproc_status coproc_column_export_arrow(const coproc_column *col, struct ArrowSchema *schema,
                                         struct ArrowArray *array)
{
    if (!col)
        return COPROC_NULL_POINTER;
    coproc_runtime *rt = col->rt;
    if (!schema || !array)
        return coproc__fail(rt, COPROC_NULL_POINTER, "%s is NULL", schema ? "array" : "schema");
    if (col->dict) /* a string column: a dictionary array (arrow_strings.c) */
        return coproc__arrow_export_strings(col, schema, array);
    const char *format = arrow_format(col->type);
    if (!format)
        return coproc__fail(rt, COPROC_UNSUPPORTED_TYPE, "column type %s has no Arrow format",
                            coproc_type_name(col->type));
    uint64_t nulls = 0;
    coproc_status s = coproc_column_null_count(col, &nulls);
    if (s != COPROC_OK)
        return s;
    size_t bytes = col->length * coproc_type_size(col->type);
    size_t rounded = (bytes + 63) / 64 * 64; /* aligned_alloc wants a multiple; Arrow likes padding */
    export_private *p = calloc(1, sizeof *p);
    if (p)
        p->data = aligned_alloc(64, rounded ? rounded : 64);
    if (!p || !p->data) {
        free(p);
        return coproc__fail(rt, COPROC_HOST_OUT_OF_MEMORY, "out of host memory for %zu bytes",
                            bytes);
    }
    s = coproc_column_download(col, p->data, col->length);
    if (s == COPROC_OK && nulls)
        s = coproc__arrow_export_validity(col, &p->validity);
    if (s != COPROC_OK) {
        free(p->data);
        free(p);
        return s;
    }
    if (rounded > bytes)
        memset((char *)p->data + bytes, 0, rounded - bytes);
    p->buffers[0] = p->validity; /* NULL without nulls: every row valid */
    p->buffers[1] = p->data;
    *array = (struct ArrowArray){
        .length = (int64_t)col->length,
        .null_count = (int64_t)nulls,
        .offset = 0,
        .n_buffers = 2,
        .n_children = 0,
        .buffers = p->buffers,
        .children = NULL,
        .dictionary = NULL,
        .release = release_exported_array,
        .private_data = p,
    };
    *schema = (struct ArrowSchema){
        .format = format,
        .name = NULL,
        .metadata = NULL,
        .flags = col->validity ? ARROW_FLAG_NULLABLE : 0,
        .n_children = 0,
        .children = NULL,
        .dictionary = NULL,
        .release = release_exported_schema,
        .private_data = NULL,
    };
    return COPROC_OK;
}
