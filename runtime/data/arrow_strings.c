/* arrow_strings.c - strings through the Arrow C Data Interface (coproc/arrow.h):
 * dictionary arrays of utf8 (or large utf8) strings import as
 * dictionary-encoded columns (coproc.h "strings"), their dictionary made
 * sorted and distinct and the indices mapped onto it; plain utf8 arrays
 * import dictionary-encoded; a string column exports as a dictionary array
 * (int32 indices, a utf8 dictionary). Strings are copied both ways; a null
 * row (Arrow's validity, coproc's validity bitmap) has code 0 and no string. */
#include <stdlib.h>
#include <string.h>

#include "coproc/arrow.h"
#include "core/error.h"
#include "core/runtime.h"
#include "data/arrow_strings.h"
#include "data/column.h"
#include "data/dictionary.h"

int coproc__arrow_is_strings(const struct ArrowSchema *schema)
{
    return schema->dictionary || strcmp(schema->format, "u") == 0 ||
           strcmp(schema->format, "U") == 0;
}

/* Whether f is an integer format an index buffer may have. */
static int index_format(const char *f)
{
    return f[0] && !f[1] && strchr("cCsSiIlL", f[0]);
}

/* Element i of an integer index buffer of Arrow format f (index_format). */
static int index_at(const char *f, const void *data, int64_t i, int64_t *out)
{
    switch (f[0]) {
    case 'c': *out = ((const int8_t *)data)[i]; return 1;
    case 'C': *out = ((const uint8_t *)data)[i]; return 1;
    case 's': *out = ((const int16_t *)data)[i]; return 1;
    case 'S': *out = ((const uint16_t *)data)[i]; return 1;
    case 'i': *out = ((const int32_t *)data)[i]; return 1;
    case 'I': *out = ((const uint32_t *)data)[i]; return 1;
    case 'l': *out = ((const int64_t *)data)[i]; return 1;
    case 'L': *out = (int64_t)((const uint64_t *)data)[i]; return 1;
    }
    return 0;
}

/* Whether row i of array a (nulls: it has some) is valid. */
static int row_valid(const struct ArrowArray *a, int nulls, size_t i)
{
    if (!nulls)
        return 1;
    uint64_t bit = (uint64_t)a->offset + i;
    return (((const uint8_t *)a->buffers[0])[bit >> 3] >> (bit & 7)) & 1;
}

/* The n strings of a utf8 ("u", int32 offsets) or large utf8 ("U", int64)
 * array as C strings (malloc'd copies in one block, *block; caller frees
 * both), NULL for a null row (nulls: the array has some, else none may be).
 * NULL with *why set on a malformed array. */
static char **strings_of(const char *format, const struct ArrowArray *a, int nulls, char **block,
                         const char **why)
{
    *block = NULL;
    int large = strcmp(format, "U") == 0;
    if (strcmp(format, "u") != 0 && !large) {
        *why = "its strings are not utf8 (format u or U)";
        return NULL;
    }
    if (a->n_buffers != 3 || !a->buffers || a->length < 0 || a->offset < 0 ||
        (a->length > 0 && (!a->buffers[1] || !a->buffers[2]))) {
        *why = "a utf8 array needs 3 buffers (validity, offsets, data)";
        return NULL;
    }
    size_t n = (size_t)a->length, total = 0;
    for (size_t i = 0; i < n; i++) {
        int64_t lo, hi;
        if (!row_valid(a, nulls, i))
            continue; /* a null row's offsets and bytes mean nothing */
        size_t k = (size_t)a->offset + i;
        if (large)
            lo = ((const int64_t *)a->buffers[1])[k], hi = ((const int64_t *)a->buffers[1])[k + 1];
        else
            lo = ((const int32_t *)a->buffers[1])[k], hi = ((const int32_t *)a->buffers[1])[k + 1];
        if (lo < 0 || hi < lo) {
            *why = "its offsets are not ascending";
            return NULL;
        }
        total += (size_t)(hi - lo) + 1;
    }
    char **v = malloc((n ? n : 1) * sizeof *v);
    *block = malloc(total ? total : 1);
    if (!v || !*block) {
        free(v), free(*block);
        *block = NULL;
        *why = "out of host memory";
        return NULL;
    }
    char *at = *block;
    for (size_t i = 0; i < n; i++) {
        v[i] = NULL;
        if (!row_valid(a, nulls, i))
            continue;
        size_t k = (size_t)a->offset + i;
        int64_t lo = large ? ((const int64_t *)a->buffers[1])[k] : ((const int32_t *)a->buffers[1])[k];
        int64_t hi = large ? ((const int64_t *)a->buffers[1])[k + 1]
                           : ((const int32_t *)a->buffers[1])[k + 1];
        size_t len = (size_t)(hi - lo);
        if (memchr((const char *)a->buffers[2] + lo, '\0', len)) {
            free(v), free(*block);
            *block = NULL;
            *why = "a string holds a NUL byte";
            return NULL;
        }
        memcpy(at, (const char *)a->buffers[2] + lo, len);
        at[len] = '\0';
        v[i] = at;
        at += len + 1;
    }
    return v;
}

coproc_status coproc__arrow_import_strings(coproc_runtime *rt, int device,
                                           const struct ArrowSchema *schema,
                                           struct ArrowArray *array, coproc_column **out)
{
    const char *why = NULL;
    char *block = NULL, *dblock = NULL;
    char **values = NULL, **dict = NULL;
    int32_t *codes = NULL, *remap = NULL;
    coproc__dict *d = NULL;
    coproc_status s = COPROC_OK;
    size_t n = array->length > 0 ? (size_t)array->length : 0;
    coproc__device *dev = coproc__device_at(rt, device);
    if (!dev)
        return COPROC_INVALID_ARGUMENT;
    int nulls = coproc__arrow_has_nulls(array, &why);
    if (nulls < 0)
        goto bad;
    if (!schema->dictionary) {
        /* plain strings: encoded here, the valid ones (a null row's code is 0) */
        if (!(values = strings_of(schema->format, array, nulls, &block, &why)))
            goto bad;
        size_t valid = 0;
        for (size_t i = 0; i < n; i++)
            if (values[i])
                values[valid++] = values[i];
        if (!(codes = malloc((n ? n : 1) * sizeof *codes)) ||
            !(d = coproc__dict_encode(valid, (const char *const *)values, codes, &why)))
            goto bad;
        for (size_t i = n, k = valid; i-- > 0;) /* the codes back to their rows */
            codes[i] = row_valid(array, nulls, i) ? codes[--k] : 0;
    } else {
        const struct ArrowSchema *ds = schema->dictionary;
        const struct ArrowArray *da = array->dictionary;
        if (!da || !ds->format) {
            why = "a dictionary schema without a dictionary array";
            goto bad;
        }
        if (!index_format(schema->format)) {
            why = "its indices are not integers (c, C, s, S, i, I, l, L)";
            goto bad;
        }
        if (array->n_buffers != 2 || !array->buffers || array->length < 0 || array->offset < 0 ||
            (n && !array->buffers[1])) {
            why = "a dictionary array needs 2 buffers (validity, indices)";
            goto bad;
        }
        size_t m = da->length > 0 ? (size_t)da->length : 0;
        int dnulls = coproc__arrow_has_nulls(da, &why);
        if (dnulls != 0) {
            why = dnulls < 0 ? why : "its dictionary has null strings (not supported)";
            goto bad;
        }
        if (!(dict = strings_of(ds->format, da, 0, &dblock, &why)))
            goto bad;
        /* the dictionary sorted and distinct; each old index to its new code */
        if (!(remap = malloc((m ? m : 1) * sizeof *remap)) ||
            !(d = coproc__dict_encode(m, (const char *const *)dict, remap, &why)))
            goto bad;
        if (!(codes = malloc((n ? n : 1) * sizeof *codes))) {
            why = "out of host memory";
            goto bad;
        }
        for (size_t i = 0; i < n; i++) {
            int64_t k = -1;
            if (!row_valid(array, nulls, i)) { /* a null row's index means nothing */
                codes[i] = 0;
                continue;
            }
            index_at(schema->format, array->buffers[1], array->offset + (int64_t)i, &k);
            if (k < 0 || (uint64_t)k >= m) {
                why = "an index is outside its dictionary";
                goto bad;
            }
            codes[i] = remap[k];
        }
    }
    if ((s = coproc_column_upload(rt, device, COPROC_INT32, codes, n, out)) != COPROC_OK)
        goto done;
    if (nulls && (s = coproc__arrow_import_validity(rt, dev, *out, array->buffers[0],
                                                    (uint64_t)array->offset, n)) != COPROC_OK) {
        coproc_column_free(*out); /* the array is still the caller's */
        *out = NULL;
        goto done;
    }
    (*out)->dict = d;
    d = NULL;
    /* copied: the array is released now (moved, then released) */
    struct ArrowArray moved = *array;
    array->release = NULL;
    moved.release(&moved);
    goto done;
bad:
    s = coproc__fail(rt,
                     why && strcmp(why, "out of host memory") == 0 ? COPROC_HOST_OUT_OF_MEMORY
                     : why && strstr(why, "null strings")          ? COPROC_UNSUPPORTED
                     : why && strstr(why, "not utf8")              ? COPROC_UNSUPPORTED_TYPE
                                                                   : COPROC_INVALID_ARGUMENT,
                     "Arrow string array (format \"%.8s\"): %s", schema->format,
                     why ? why : "out of host memory");
done:
    coproc__dict_unref(d);
    free(values), free(block), free(dict), free(dblock), free(codes), free(remap);
    return s;
}

/* ---------------------------------------------------------------- export */

/* What an exported string array owns: its indices, and its dictionary
 * array with the dictionary's strings. */
typedef struct strings_private {
    const void *buffers[2];      /* the indices array's: the validity (or none), the codes */
    const void *dict_buffers[3]; /* the dictionary's: no validity, offsets, bytes */
    void *validity;              /* NULL without nulls */
    int32_t *indices;
    int32_t *offsets;
    char *data;
    struct ArrowArray dict;
} strings_private;

static void release_dict_array(struct ArrowArray *a)
{
    a->release = NULL; /* its buffers belong to the parent's private data */
}

static void release_strings_array(struct ArrowArray *a)
{
    strings_private *p = a->private_data;
    free(p->validity), free(p->indices), free(p->offsets), free(p->data);
    free(p);
    a->release = NULL;
}

static void release_dict_schema(struct ArrowSchema *s)
{
    s->release = NULL; /* a static format; freed with its parent */
}

static void release_strings_schema(struct ArrowSchema *s)
{
    free(s->dictionary);
    s->release = NULL;
}

coproc_status coproc__arrow_export_strings(const coproc_column *col, struct ArrowSchema *schema,
                                           struct ArrowArray *array)
{
    coproc_runtime *rt = col->rt;
    const coproc__dict *d = col->dict;
    size_t bytes = (size_t)d->offsets[d->n] - (size_t)d->n; /* the strings less their NULs */
    strings_private *p = calloc(1, sizeof *p);
    struct ArrowSchema *dschema = malloc(sizeof *dschema);
    if (p) {
        p->indices = malloc((col->length ? col->length : 1) * sizeof *p->indices);
        p->offsets = malloc(((size_t)d->n + 1) * sizeof *p->offsets);
        p->data = malloc(bytes ? bytes : 1);
    }
    coproc_status s = p && dschema && p->indices && p->offsets && p->data
                          ? coproc_column_download(col, p->indices, col->length)
                          : coproc__fail(rt, COPROC_HOST_OUT_OF_MEMORY,
                                         "exporting a string column of %zu rows", col->length);
    uint64_t nulls = 0;
    if (s == COPROC_OK && (s = coproc_column_null_count(col, &nulls)) == COPROC_OK && nulls &&
        (s = coproc__arrow_export_validity(col, &p->validity)) == COPROC_OK) {
        /* a null row's code may be anything: index 0 keeps every index in its dictionary */
        const uint8_t *v = p->validity;
        for (size_t i = 0; i < col->length; i++)
            if (!(v[i >> 3] >> (i & 7) & 1))
                p->indices[i] = 0;
    }
    if (s != COPROC_OK) {
        if (p)
            free(p->validity), free(p->indices), free(p->offsets), free(p->data);
        free(p), free(dschema);
        return s;
    }
    int32_t at = 0;
    for (int32_t i = 0; i < d->n; i++) {
        size_t len;
        const char *v = coproc__dict_value(d, i, &len);
        p->offsets[i] = at;
        memcpy(p->data + at, v, len);
        at += (int32_t)len;
    }
    p->offsets[d->n] = at;
    p->dict_buffers[0] = NULL;
    p->dict_buffers[1] = p->offsets;
    p->dict_buffers[2] = p->data;
    p->dict = (struct ArrowArray){.length = d->n,
                                  .n_buffers = 3,
                                  .buffers = p->dict_buffers,
                                  .release = release_dict_array};
    p->buffers[0] = p->validity;
    p->buffers[1] = p->indices;
    *array = (struct ArrowArray){.length = (int64_t)col->length,
                                 .null_count = (int64_t)nulls,
                                 .n_buffers = 2,
                                 .buffers = p->buffers,
                                 .dictionary = &p->dict,
                                 .release = release_strings_array,
                                 .private_data = p};
    *dschema = (struct ArrowSchema){.format = "u", .release = release_dict_schema};
    *schema = (struct ArrowSchema){.format = "i",
                                   .dictionary = dschema,
                                   .flags = col->validity ? ARROW_FLAG_NULLABLE : 0,
                                   .release = release_strings_schema};
    return COPROC_OK;
}
