/* reduce_fold.h - host side of reductions: each work-group writes a partial,
 * the host folds them (shared by coproc_reduce and coproc_reduce_where). */
#ifndef COPROC_REDUCE_FOLD_H
#define COPROC_REDUCE_FOLD_H

#include <stddef.h>

#include "backend/opencl/device.h"

/* Bytes of one partial as the kernels write it (sums: 8, or 4 for float32
 * sums on devices without fp64; min/max: the element size). */
size_t coproc__reduce_partial_size(const coproc__device *dev, coproc_reduce_op op, coproc_type t);

/* The result over zero rows (count 0; min/max: the type's extreme or +-inf). */
void coproc__reduce_identity(coproc_reduce_op op, coproc_type t, coproc_scalar *r);

/* Fold one partial (raw bytes, psize of them) into r; first replaces the identity. */
void coproc__reduce_fold(coproc_reduce_op op, coproc_type t, size_t psize, const unsigned char *p,
                         coproc_scalar *r, int first);

/* Fold the result of a part of the rows into the result so far (*acc; first:
 * the first part, which replaces it). Counts add; min/max of parts without
 * rows change nothing, NaN only where every row of every part is NaN. */
void coproc__reduce_combine(coproc_reduce_op op, const coproc_scalar *part, coproc_scalar *acc,
                            int first);

#endif
