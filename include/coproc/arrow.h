/*
 * coproc/arrow.h - exchange primitive columns with Arrow consumers and
 * producers (pyarrow, DuckDB, Polars, ...) through the Arrow C Data Interface.
 *
 * Supported: primitive arrays of formats "i" (int32), "l" (int64), "I"
 * (uint32), "L" (uint64), "f" (float32) and "g" (float64), with nulls or
 * without: an Arrow validity buffer becomes the column's validity bitmap
 * (coproc.h, "nulls"), which has the same bits; and strings (coproc.h
 * "strings"): dictionary arrays with integer indices (c C
 * s S i I l L) and a utf8 ("u") or large utf8 ("U") dictionary, and plain
 * utf8 / large utf8 arrays, import as dictionary-encoded columns (the
 * strings copied, the dictionary made sorted and distinct, the indices
 * mapped onto it; null rows keep the array's validity and get code 0; a
 * dictionary holding a null string: UNSUPPORTED); a column with a dictionary
 * exports as a dictionary array (int32 indices, a utf8 dictionary, the
 * validity with null_count, a null row's index 0).
 */
#ifndef COPROC_ARROW_H
#define COPROC_ARROW_H

#include <stdint.h>

#include <coproc.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The ABI structs, exactly as the Arrow C Data Interface specification gives them. */
#ifndef ARROW_C_DATA_INTERFACE
#define ARROW_C_DATA_INTERFACE

#define ARROW_FLAG_DICTIONARY_ORDERED 1
#define ARROW_FLAG_NULLABLE 2
#define ARROW_FLAG_MAP_KEYS_SORTED 4

struct ArrowSchema {
    // Array type description
    const char* format;
    const char* name;
    const char* metadata;
    int64_t flags;
    int64_t n_children;
    struct ArrowSchema** children;
    struct ArrowSchema* dictionary;

    // Release callback
    void (*release)(struct ArrowSchema*);
    // Opaque producer-specific data
    void* private_data;
};

struct ArrowArray {
    // Array data description
    int64_t length;
    int64_t null_count;
    int64_t offset;
    int64_t n_buffers;
    int64_t n_children;
    const void** buffers;
    struct ArrowArray** children;
    struct ArrowArray* dictionary;

    // Release callback
    void (*release)(struct ArrowArray*);
    // Opaque producer-specific data
    void* private_data;
};

#endif  // ARROW_C_DATA_INTERFACE

/*
 * Make a column on device `device` from an Arrow array described by schema.
 *
 * schema is borrowed (read during the call only; the caller still releases it).
 * On success, *out owns a new column (free it with coproc_column_free) and the
 * column has taken `array` over: the struct is moved (copied, and the caller's
 * array->release set to NULL, as the specification describes for moving), so
 * the caller must not release it. Its release callback is called exactly once:
 * at once when the data was copied to the device, or by coproc_column_free when
 * the column wraps the Arrow data buffer (zero-copy, on devices with
 * host-unified memory whose buffer is suitably aligned). The data buffer must
 * not be changed while the column lives. Arrow buffers are immutable and often
 * shared, so a zero-copy column is read-only: coproc_sort and coproc_scatter
 * refuse to write into it (INVALID_ARGUMENT); sort a copy instead (e.g. from
 * coproc_map_const(ADD, 0)).
 * Nulls: the array has nulls when null_count > 0, or null_count is -1 (not
 * computed) and its validity buffer (buffers[0]) has a zero bit among the
 * array's rows; a NULL validity buffer or a null_count of 0 means none. A
 * column with nulls gets a validity bitmap on the same device
 * (coproc_column_validity); one without gets none and runs at full speed.
 * The validity buffer is used in place, beside a zero-copy data buffer, when
 * its words line up: the offset a multiple of 32, the rows a multiple of 32
 * (so no byte past the ceil(length / 8) Arrow guarantees is read) and 4-byte
 * aligned, on a little-endian host; else it is realigned into words on the
 * host (length / 8 bytes, a sliced array's offset shifted away) and copied.
 * On failure nothing is taken: the caller keeps (and still releases) the array,
 * and *out is NULL.
 *
 * UNSUPPORTED_TYPE: a format other than the six above (the message names it).
 * UNSUPPORTED: float64 on a device without fp64. INVALID_ARGUMENT: a malformed
 * array (n_buffers != 2, children, negative length/offset, NULL data buffer,
 * null_count below -1 or above the length, null_count > 0 without a validity
 * buffer, already released).
 * NULL_POINTER: rt, schema, array or out is NULL.
 */
COPROC_API coproc_status coproc_column_import_arrow(coproc_runtime *rt, int device,
                                                    const struct ArrowSchema *schema,
                                                    struct ArrowArray *array,
                                                    coproc_column **out);

/*
 * Copy the column (borrowed) to host memory and describe it as an Arrow array:
 * *schema and *array (caller-provided, overwritten) are filled as a producer
 * does, with buffers {validity, data}, 64-byte aligned and padded. A column
 * with nulls gives its validity bitmap as the validity buffer (the bits past
 * the last row cleared) and null_count the number of nulls, counted; the
 * schema's flags say ARROW_FLAG_NULLABLE when the column has a validity.
 * Without nulls (no validity, or one with every bit set) the validity buffer
 * is NULL and null_count 0. The values under nulls are whatever the column
 * holds there. The caller owns both: call schema->release(schema) and
 * array->release(array) once each (or hand them to a consumer that does);
 * the release callbacks free everything, independently of the column and of
 * the runtime, which may be freed or closed first.
 * On failure neither struct is written.
 * NULL_POINTER: col, schema or array is NULL.
 */
COPROC_API coproc_status coproc_column_export_arrow(const coproc_column *col,
                                                    struct ArrowSchema *schema,
                                                    struct ArrowArray *array);

#ifdef __cplusplus
}
#endif

#endif
