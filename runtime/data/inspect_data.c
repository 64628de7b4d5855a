/* inspect_data.c - coproc_column_write (coproc/inspect.h): rows into a device
 * column through the runtime's own host->device path (transfer.h). */
#include <stdint.h>

#include "coproc/inspect.h"
#include "backend/opencl/transfer.h"
#include "core/error.h"
#include "data/column.h"

coproc_status coproc_column_write(coproc_column *col, size_t first_row, const void *src,
                                  size_t rows, unsigned flags)
{
    if (!col)
        return COPROC_NULL_POINTER;
    coproc_runtime *rt = col->rt;
    if (!col->dev)
        return coproc__fail(rt, COPROC_INVALID_ARGUMENT, "coproc_column_write: a host column "
                            "(write its rows through coproc_column_host_data)");
    if (flags & ~COPROC_WRITE_PINNED_SOURCE)
        return coproc__fail(rt, COPROC_INVALID_ARGUMENT, "coproc_column_write: unknown flags "
                            "0x%x", flags & ~COPROC_WRITE_PINNED_SOURCE);
    if (first_row > col->length || rows > col->length - first_row)
        return coproc__fail(rt, COPROC_OUT_OF_RANGE, "coproc_column_write: rows %zu..%zu of a "
                            "column of %zu", first_row, first_row + rows, col->length);
    if (rows == 0)
        return COPROC_OK;
    if (!src)
        return coproc__fail(rt, COPROC_NULL_POINTER, "coproc_column_write: src is NULL");
    size_t es = coproc_type_size(col->type);
    return coproc__h2d(rt, col->dev, NULL, col->mem, first_row * es, src, rows * es,
                       (flags & COPROC_WRITE_PINNED_SOURCE) != 0);
}
