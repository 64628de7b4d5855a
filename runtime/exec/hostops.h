/* hostops.h - operators over host columns on one device whose inputs do not
 * fit the device's budget (dev->budget_bytes): streaming operators copy chunk
 * k+1 (dev->copy_queue) while computing on chunk k (dev->queue); sort and the
 * hash join partition. Inputs are host columns (col->dev == NULL, rows at
 * col->host); outputs are new host columns (coproc__host_column_new) owned by
 * the caller. Results equal the in-memory operators' (same order contracts as
 * coproc.h). Bytes moved are counted by transfer.h. `budget` is the device
 * memory in bytes the call may use at once, inputs, outputs and temporaries. */
#ifndef COPROC_HOSTOPS_H
#define COPROC_HOSTOPS_H

#include "data/column.h"

/* The least budget the streaming operators work with. */
#define COPROC__STREAM_MIN_BUDGET ((size_t)64 << 10)

/* stream.c */
coproc_status coproc__stream_reduce(coproc_runtime *rt, coproc__device *dev, coproc_reduce_op op,
                                    const coproc_column *col, size_t budget, coproc_scalar *out);
/* positions: host column, ascending: UINT32 for inputs of at most UINT32_MAX
 * rows, UINT64 for longer ones; count may be NULL. */
coproc_status coproc__stream_select(coproc_runtime *rt, coproc__device *dev,
                                    const coproc_filter *f, size_t budget,
                                    coproc_column **positions, uint64_t *count);
/* b == NULL: a op c. */
coproc_status coproc__stream_map(coproc_runtime *rt, coproc__device *dev, coproc_arith op,
                                 const coproc_column *a, const coproc_column *b, coproc_value c,
                                 size_t budget, coproc_column **out);
/* Per-chunk group-by, partial aggregates merged; out's columns are host columns. */
coproc_status coproc__stream_group_by(coproc_runtime *rt, coproc__device *dev,
                                      const coproc_column *keys, const coproc_column *values,
                                      int sorted, size_t budget, coproc_group_result *out);

/* outofcore.c */
/* Sorted copies of keys (and values permuted alongside, stably; values may be NULL). */
coproc_status coproc__outofcore_sort(coproc_runtime *rt, coproc__device *dev,
                                     const coproc_column *keys, const coproc_column *values,
                                     size_t budget, coproc_column **keys_out,
                                     coproc_column **values_out);
/* Every pair (l, r) with left[l] == right[r]; out's columns are host UINT32 columns. */
coproc_status coproc__outofcore_hash_join(coproc_runtime *rt, coproc__device *dev,
                                          const coproc_column *left, const coproc_column *right,
                                          size_t budget, coproc_join_result *out);

#endif
