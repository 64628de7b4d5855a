/* arrow_strings.h - string columns through the Arrow C Data Interface
 * (arrow_strings.c), called by arrow.c's import and export. */
#ifndef COPROC_ARROW_STRINGS_H
#define COPROC_ARROW_STRINGS_H

#include "coproc/arrow.h"
#include "core/runtime.h"

/* Whether schema describes strings: a dictionary array, or utf8 ("u", "U"). */
int coproc__arrow_is_strings(const struct ArrowSchema *schema);

/* coproc_column_import_arrow for strings (the arguments checked for NULL and
 * release already): a dictionary-encoded column on `device`, the array
 * released (its strings copied). */
coproc_status coproc__arrow_import_strings(coproc_runtime *rt, int device,
                                           const struct ArrowSchema *schema,
                                           struct ArrowArray *array, coproc_column **out);

/* coproc_column_export_arrow for a column with a dictionary: a dictionary
 * array of int32 indices and a utf8 dictionary. */
coproc_status coproc__arrow_export_strings(const coproc_column *col, struct ArrowSchema *schema,
                                           struct ArrowArray *array);

/* arrow.c's nulls, shared with the strings. Whether array a has nulls (1),
 * none (0), or a null_count that contradicts it (-1, *why set). */
int coproc__arrow_has_nulls(const struct ArrowArray *a, const char **why);

/* Give col (n > 0 rows, on dev) the validity of an Arrow validity bitmap
 * whose row 0 is bit `from`: wrapped where col wraps the array's data and
 * the words line up, else copied. */
coproc_status coproc__arrow_import_validity(coproc_runtime *rt, coproc__device *dev,
                                            coproc_column *col, const uint8_t *bitmap,
                                            uint64_t from, size_t n);

/* col's validity as a new Arrow validity buffer (64-byte aligned, padded,
 * the bits past the last row cleared; free() it). */
coproc_status coproc__arrow_export_validity(const coproc_column *col, void **out);

#endif
