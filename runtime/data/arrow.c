/* arrow.c - the Arrow C Data Interface for primitive columns: import (zero-copy
 * on host-unified devices, else one upload) and export (one download). */
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

/* 1 if any of bits [from, from + n) of an Arrow validity bitmap (LSB first) is 0. */
static int any_null_bit(const uint8_t *bitmap, uint64_t from, uint64_t n)
{
    for (uint64_t i = from; i < from + n; i++)
        if (!(bitmap[i >> 3] >> (i & 7) & 1))
            return 1;
    return 0;
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
    /* Nulls would be read as whatever bytes lie under them: refuse, never be silently wrong. */
    if (array->null_count > 0 || array->null_count < -1 ||
        (array->null_count == -1 && validity &&
         any_null_bit(validity, (uint64_t)array->offset, n)))
        return coproc__fail(rt, COPROC_UNSUPPORTED, "nulls are not supported (Arrow array with "
                            "null_count %lld)", (long long)array->null_count);
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
        *moved = *array;
        array->release = NULL;
        (*out)->on_free = release_moved_array;
        (*out)->on_free_ctx = moved;
        return COPROC_OK;
    }
    s = coproc_column_upload(rt, device, t, first, n, out);
    if (s != COPROC_OK)
        return s;
    struct ArrowArray moved = *array; /* moved, then released: the caller's is marked released */
    array->release = NULL;
    moved.release(&moved);
    return COPROC_OK;
}

/* What an exported array owns: its buffers array and the aligned data. */
typedef struct export_private {
    const void *buffers[2];
    void *data;
} export_private;

static void release_exported_array(struct ArrowArray *a)
{
    export_private *p = a->private_data;
    free(p->data);
    free(p);
    a->release = NULL;
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
    coproc_status s = coproc_column_download(col, p->data, col->length);
    if (s != COPROC_OK) {
        free(p->data);
        free(p);
        return s;
    }
    if (rounded > bytes)
        memset((char *)p->data + bytes, 0, rounded - bytes);
    p->buffers[0] = NULL;
    p->buffers[1] = p->data;
    *array = (struct ArrowArray){
        .length = (int64_t)col->length,
        .null_count = 0,
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
        .flags = 0,
        .n_children = 0,
        .children = NULL,
        .dictionary = NULL,
        .release = release_exported_schema,
        .private_data = NULL,
    };
    return COPROC_OK;
}
