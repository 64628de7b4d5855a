/* arrow_strings.h - string columns through the Arrow C Data Interface
 * (arrow_strings.c), called by arrow.c's import and export. */
#ifndef COPROC_ARROW_STRINGS_H
#define COPROC_ARROW_STRINGS_H

#include "coproc/arrow.h"

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

#endif
