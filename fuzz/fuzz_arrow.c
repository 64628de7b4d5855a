/* fuzz_arrow.c - the Arrow C Data Interface import (runtime/data/arrow.c,
 * coproc_column_import_arrow). Builds an ArrowSchema and an ArrowArray from the
 * input - format string, flags, children and dictionary, length, offset,
 * null_count, buffer count, validity and data buffers, alignment, released
 * structs, NULL arguments, the device index - imports them, checks the
 * ownership rules of coproc/arrow.h (on failure nothing taken and *out NULL;
 * on success the caller's array marked released and its release callback
 * called exactly once, by the time the column is freed; the schema never
 * released), that the column holds exactly the rows [offset, offset + length)
 * of the data buffer, and that exporting it gives those rows back.
 *
 * The rule this target keeps: an importer cannot know how large a buffer is,
 * so every buffer it may legally read under the Arrow C data interface is
 * backed by as many bytes as the struct claims - the data buffer by
 * (offset + length + 1) elements of 8 bytes (the largest type, whatever the
 * format; a utf8 array's offsets have one more than its rows), the validity bitmap by (offset + length) bits, `buffers` and
 * `children` by n_buffers and n_children entries. A claim too large to back
 * (over 1 MiB) gets NULL buffers instead, which the importer must refuse or
 * not read. Claims the specification forbids (negative length, offset,
 * n_buffers or n_children) get small buffers the importer must not read
 * beyond: it has to refuse them first. A crash that needs a buffer smaller
 * than its struct claims would be this target's fault, not the importer's.
 *
 * Why: Arrow arrays come from other libraries (pyarrow, DuckDB, Polars) and
 * from user code; a malformed one must be refused, never read out of bounds. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"

#include "coproc/arrow.h"

#define MAX_BACKED ((uint64_t)1 << 20) /* bytes of data buffer the target backs */
#define MAX_ENTRIES 4                  /* children and buffers the target backs */

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    fuzz_runtime();
    return 0;
}

/* ---- the producer: what one input made, freed by the array's release */

typedef struct producer {
    int array_released;  /* calls of the array's release */
    int schema_released; /* calls of the schema's release (the importer must make none) */
    int moved;           /* the importer's copy of the array was released */
    uint8_t *data_block; /* the data buffer's allocation (data may start 1 byte in) */
    uint8_t *validity;
    const void **buffers;
    struct ArrowArray child_arrays[MAX_ENTRIES], *child_array_ptrs[MAX_ENTRIES], dict_array;
    struct ArrowSchema child_schemas[MAX_ENTRIES], *child_schema_ptrs[MAX_ENTRIES], dict_schema;
    char format[20];
} producer;

static void nested_array_release(struct ArrowArray *a)
{
    a->release = NULL;
}

static void nested_schema_release(struct ArrowSchema *s)
{
    s->release = NULL;
}

static void array_release(struct ArrowArray *a)
{
    producer *p = a->private_data;
    if (!a->release)
        fuzz_fail("the array's release called on a released array");
    p->array_released++;
    free(p->data_block);
    free(p->validity);
    free(p->buffers);
    p->data_block = NULL;
    p->validity = NULL;
    p->buffers = NULL;
    a->release = NULL;
}

static void schema_release(struct ArrowSchema *s)
{
    producer *p = s->private_data;
    p->schema_released++;
    s->release = NULL;
}

/* A length or offset: mostly small, sometimes any 64-bit value. */
static int64_t count_of(fuzz_in *in)
{
    uint8_t sel = fuzz_u8(in);
    if (sel < 200)
        return sel;
    if (sel < 250)
        return (int64_t)fuzz_u32(in) % 100000;
    return (int64_t)fuzz_u64(in);
}

/* An entry count: 0..MAX_ENTRIES (backed), or -1 (forbidden). */
static int64_t entries_of(fuzz_in *in, int64_t usual)
{
    uint8_t sel = fuzz_u8(in);
    if (sel < 128)
        return usual;
    if (sel == 255)
        return -1;
    return sel % (MAX_ENTRIES + 1);
}

int LLVMFuzzerTestOneInput(const uint8_t *bytes, size_t size)
{
    coproc_runtime *rt = fuzz_runtime();
    if (!rt) {
        fuzz_skipped = 1;
        return 0;
    }
    fuzz_in in = {bytes, size};
    producer *p = calloc(1, sizeof *p);
    uint32_t flags = fuzz_u32(&in);

    /* The schema. */
    size_t flen;
    const uint8_t *f = fuzz_bytes(&in, sizeof p->format - 1, &flen);
    memcpy(p->format, f, flen);
    struct ArrowSchema schema = {
        .format = flags & 1 ? NULL : p->format,
        .name = flags & 2 ? "" : "column",
        .flags = (int64_t)fuzz_u8(&in) % 8,
        .n_children = entries_of(&in, 0),
        .release = flags & 4 ? NULL : schema_release,
        .private_data = p,
    };
    for (int i = 0; i < MAX_ENTRIES; i++) {
        p->child_schemas[i] = (struct ArrowSchema){.format = "i", .release = nested_schema_release};
        p->child_schema_ptrs[i] = &p->child_schemas[i];
        p->child_arrays[i] = (struct ArrowArray){.n_buffers = 2, .release = nested_array_release};
        p->child_array_ptrs[i] = &p->child_arrays[i];
    }
    p->dict_schema = (struct ArrowSchema){.format = "i", .release = nested_schema_release};
    p->dict_array = (struct ArrowArray){.n_buffers = 2, .release = nested_array_release};
    p->dict_array.buffers = calloc(2, sizeof *p->dict_array.buffers);
    schema.children = schema.n_children ? p->child_schema_ptrs : NULL;
    schema.dictionary = flags & 8 ? &p->dict_schema : NULL;

    /* The array. */
    int64_t length = count_of(&in), offset = count_of(&in);
    uint8_t nsel = fuzz_u8(&in);
    int64_t null_count = nsel < 128   ? 0
                         : nsel < 192 ? -1
                         : nsel < 250 ? nsel % 4
                                      : (int64_t)fuzz_u64(&in);
    struct ArrowArray array = {
        .length = length,
        .null_count = null_count,
        .offset = offset,
        .n_buffers = entries_of(&in, 2),
        .n_children = entries_of(&in, 0),
        .dictionary = flags & 16 ? &p->dict_array : NULL,
        .release = flags & 32 ? NULL : array_release,
        .private_data = p,
    };
    array.children = array.n_children ? p->child_array_ptrs : NULL;
    int forbidden = length < 0 || offset < 0 || length > INT64_MAX - offset;
    uint64_t rows = forbidden ? 1 : (uint64_t)length + (uint64_t)offset;
    int backed = rows <= MAX_BACKED / 8;
    int nb = array.n_buffers < 0 ? MAX_ENTRIES : (int)array.n_buffers;
    p->buffers = calloc(nb ? nb : 1, sizeof *p->buffers);
    array.buffers = flags & 64 ? NULL : p->buffers;
    const uint8_t *data = NULL;
    if (backed && !(flags & 128)) {
        int shift = flags & 256 ? 1 : 0; /* misaligned: the copy path */
        /* one element more: a utf8 array's offsets buffer holds rows + 1 */
        p->data_block = malloc((rows + 1) * 8 + shift + 1);
        uint8_t *d = p->data_block + shift;
        for (uint64_t i = 0; i < (rows + 1) * 8; i++)
            d[i] = in.n ? in.p[i % in.n] : (uint8_t)i;
        data = d;
    }
    if (backed && (flags & 512)) {
        size_t vbytes = (rows + 7) / 8;
        p->validity = malloc(vbytes);
        uint8_t fill = flags & 1024 ? 0xff : fuzz_u8(&in);
        for (size_t i = 0; i < vbytes; i++)
            p->validity[i] = fill;
    }
    if (nb > 0)
        p->buffers[0] = p->validity;
    if (nb > 1)
        p->buffers[1] = data;

    int device = (int)(fuzz_u8(&in) % 4) - 1;
    if (flags & 2048)
        device = (int)fuzz_u32(&in);
    const struct ArrowSchema *schema_arg = flags & 4096 ? NULL : &schema;
    struct ArrowArray *array_arg = flags & 8192 ? NULL : &array;

    /* The rows the column must hold, kept: a copying import releases the array. */
    uint8_t *want = NULL;
    if (data) {
        want = malloc(rows * 8);
        memcpy(want, data, rows * 8);
    }
    coproc_column *col = (coproc_column *)p; /* must be overwritten */
    coproc_status s =
        coproc_column_import_arrow(rt, device, schema_arg, array_arg, flags & 16384 ? NULL : &col);
    if (p->schema_released)
        fuzz_fail("the importer released the schema (it is borrowed)");
    if (s != COPROC_OK) {
        if (!(flags & 16384) && col != NULL)
            fuzz_fail("a failed import left *out set (%s)", coproc_status_name(s));
        if (p->array_released)
            fuzz_fail("a failed import released the array (%s)", coproc_status_name(s));
        if (!(flags & 32) && !array.release)
            fuzz_fail("a failed import marked the array released (%s)", coproc_status_name(s));
        if (array.release)
            array.release(&array);
    } else {
        if (array.release)
            fuzz_fail("a successful import left the caller's array unreleased");
        if (p->array_released > 1)
            fuzz_fail("the array's release called %d times", p->array_released);
        size_t n = coproc_column_length(col);
        if (n != (size_t)length)
            fuzz_fail("a column of %zu rows from an array of %lld", n, (long long)length);
        coproc_type t = coproc_column_type(col);
        size_t es = coproc_type_size(t);
        void *got = malloc(n * es + 1);
        if (coproc_column_download(col, got, n) != COPROC_OK)
            fuzz_fail("downloading an imported column: %s", coproc_errmsg(rt));
        if (n && memcmp(got, want + (size_t)offset * es, n * es) != 0)
            fuzz_fail("an imported column's rows differ from the Arrow buffer's");
        struct ArrowSchema es_schema;
        struct ArrowArray es_array;
        if (coproc_column_export_arrow(col, &es_schema, &es_array) != COPROC_OK)
            fuzz_fail("exporting an imported column: %s", coproc_errmsg(rt));
        if (es_array.length != length || es_array.n_buffers != 2 ||
            (n && memcmp(es_array.buffers[1], got, n * es) != 0))
            fuzz_fail("an exported column differs from the one imported");
        es_array.release(&es_array);
        es_schema.release(&es_schema);
        free(got);
        coproc_column_free(col);
        if (p->array_released != 1)
            fuzz_fail("the array's release called %d times by the column's end", p->array_released);
    }
    free(p->data_block); /* what no release freed (an array given as released) */
    free(p->validity);
    free(p->buffers);
    free(want);
    free(p->dict_array.buffers);
    free(p);
    return 0;
}
