/* chunked.h - running an operator over host columns larger than a device's
 * budget in chunks of rows, for the operators whose rows (or row ranges) are
 * independent: each chunk's inputs are copied to the device, the operator's
 * in-memory run (ops/table.h) computes on them, the chunk's result comes back
 * and the operator's combine folds it into the whole. Simpler than stream.c
 * (no copy/compute overlap), so it serves the operators streamed less often. */
#ifndef COPROC_EXEC_CHUNKED_H
#define COPROC_EXEC_CHUNKED_H

#include "ops/table.h"

typedef struct coproc__chunking {
    size_t rows;        /* rows of the op's row inputs */
    size_t align;       /* chunk rows are a multiple of this (32: bitmaps split on words) */
    double row_bytes;   /* device bytes per chunk row: its inputs, outputs and temporaries */
    double whole_bytes; /* device bytes of inputs every chunk uses whole (gather's source) */
    /* The op over rows [first, first + n): op with its row inputs replaced by
     * host views (coproc__host_view) stored in views[] (the runner frees them);
     * an input left as it is is used whole by every chunk. */
    coproc_status (*slice)(coproc_runtime *rt, const coproc_op *op, size_t first, size_t n,
                           coproc_op *part, coproc_column *views[COPROC__OP_MAX_INPUTS]);
    /* Fold the chunk's result (host columns; the runner frees what is left in
     * *part) into *acc, which is zeroed before the first chunk. */
    coproc_status (*combine)(coproc_runtime *rt, const coproc_op *op, size_t first, size_t n,
                             coproc_result *part, coproc_result *acc);
} coproc__chunking;

/* Run op on dev within `budget` bytes, chunk by chunk; *out gets host columns. */
coproc_status coproc__stream_chunked(coproc_runtime *rt, coproc__device *dev, const coproc_op *op,
                                     const coproc__op_def *def, size_t budget,
                                     const coproc__chunking *c, coproc_result *out);

/* A host column over rows [first, first + n) of the host column col (borrowed:
 * valid while col is). */
coproc_status coproc__host_view(coproc_runtime *rt, const coproc_column *col, size_t first,
                                size_t n, coproc_column **out);

/* Make the host column *col `rows` rows long, keeping its first rows (a
 * result growing chunk by chunk; *col NULL: a new one of type t). */
coproc_status coproc__host_grow(coproc_runtime *rt, coproc_type t, coproc_column **col,
                                size_t rows);

#endif

/* slice and combine of the row-wise operators (row i of the output from row i
 * of a and b): a and b (when set) split into rows; the chunks' output
 * columns laid end to end in result.column. */
coproc_status coproc__slice_rows(coproc_runtime *rt, const coproc_op *op, size_t first, size_t n,
                                 coproc_op *part, coproc_column *views[COPROC__OP_MAX_INPUTS]);
coproc_status coproc__combine_rows(coproc_runtime *rt, const coproc_op *op, size_t first,
                                   size_t n, coproc_result *part, coproc_result *acc);
