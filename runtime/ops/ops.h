/* ops.h - the operator implementations in runtime/ops/ and the small helpers
 * they share. The public entry points (runtime/operators.c) wrap each one to
 * time it and feed the cost model; the arguments and results are those of the
 * matching coproc_* call. */
#ifndef COPROC_OPS_H
#define COPROC_OPS_H

#include <stddef.h>
#include <stdint.h>

#include "coproc.h"
#include "backend/opencl/device.h"

/* Key columns of group-by and joins are the integer types. */
static inline int coproc__is_key_type(coproc_type t) { return t <= COPROC_UINT64; }

/* The smallest power of two >= x (1 for 0): hash table sizes. */
static inline size_t coproc__next_pow2(size_t x)
{
    size_t p = 1;
    while (p < x)
        p <<= 1;
    return p;
}

coproc_status coproc__reduce_run(coproc_runtime *rt, coproc_reduce_op op,
                                 const coproc_column *col, coproc_scalar *out);
coproc_status coproc__reduce_where_run(coproc_runtime *rt, coproc_reduce_op op,
                                       const coproc_column *col, const coproc_column *bitmap,
                                       coproc_scalar *out);
coproc_status coproc__select_run(coproc_runtime *rt, const coproc_filter *f,
                                 coproc_column **positions, uint64_t *count);
coproc_status coproc__select_bitmap_run(coproc_runtime *rt, const coproc_filter *f,
                                        coproc_column **bitmap, uint64_t *count);
coproc_status coproc__map_run(coproc_runtime *rt, coproc_arith op, const coproc_column *a,
                              const coproc_column *b, coproc_column **out);
coproc_status coproc__map_const_run(coproc_runtime *rt, coproc_arith op, const coproc_column *a,
                                    coproc_value c, coproc_column **out);
coproc_status coproc__cast_run(coproc_runtime *rt, const coproc_column *a, coproc_type to,
                               coproc_column **out);
coproc_status coproc__gather_run(coproc_runtime *rt, const coproc_column *src,
                                 const coproc_column *positions, coproc_column **out);
coproc_status coproc__scatter_run(coproc_runtime *rt, const coproc_column *src,
                                  const coproc_column *positions, coproc_column *dst);
coproc_status coproc__compact_run(coproc_runtime *rt, const coproc_column *src,
                                  const coproc_column *bitmap, coproc_column **out);
coproc_status coproc__scan_run(coproc_runtime *rt, const coproc_column *in, int exclusive,
                               coproc_column **out);
/* aggs: COPROC_GROUP_* (0: all); the columns not asked are NULL. */
coproc_status coproc__group_by_run(coproc_runtime *rt, const coproc_column *keys,
                                   const coproc_column *values, unsigned aggs, int sorted,
                                   coproc_group_result *out);
/* Free the columns of r that aggs (0: all) does not ask for, leaving them NULL. */
void coproc__group_result_keep(coproc_group_result *r, unsigned aggs);
/* nulls_first: where rows with null keys go (coproc_sort_nulls). */
coproc_status coproc__sort_run(coproc_runtime *rt, coproc_column *keys, coproc_column *values,
                               int nulls_first);
coproc_status coproc__argsort_run(coproc_runtime *rt, const coproc_column *keys, int nulls_first,
                                  coproc_column **perm);
/* Work-items per group for the sort kernels k[0..count) (the GPU path's, and the
 * table scan's on both paths): at most 256, the device's, the max_work_group
 * quirk's and each kernel's own limit. */
size_t coproc__sort_work_group(const coproc__device *dev, const cl_kernel *k, int count);
/* The hash join's build side (left) has at most this many rows (the table's
 * row word keeps its top bit for "has duplicates"). */
#define COPROC__HASH_JOIN_MAX_BUILD ((size_t)INT32_MAX)
coproc_status coproc__hash_join_run(coproc_runtime *rt, const coproc_column *left,
                                    const coproc_column *right, coproc_join_result *out);
coproc_status coproc__hash_join_count_run(coproc_runtime *rt, const coproc_column *left,
                                          const coproc_column *right, uint64_t *count);
coproc_status coproc__sort_merge_join_run(coproc_runtime *rt, const coproc_column *left,
                                          const coproc_column *right, coproc_join_result *out);
coproc_status coproc__semi_join_run(coproc_runtime *rt, const coproc_column *probe,
                                    const coproc_column *build, coproc_column **positions,
                                    uint64_t *count);

/* Device bytes the in-memory operators allocate (beside their code; the
 * operator table and the out-of-core runs size their work by them). */
/* Sorting `rows` rows of kb-byte keys and vb-byte values in place. */
uint64_t coproc__sort_device_bytes(const coproc__device *dev, uint64_t rows, size_t kb, size_t vb);
/* One slot of the group-by's hash table, per key and value type. */
size_t coproc__group_by_slot_bytes(coproc_type kt, int has_values, coproc_type vt);
/* One hash join of nl x nr rows giving `pairs` pairs (UINT64_MAX when absurd). */
uint64_t coproc__hash_join_device_bytes(uint64_t nl, uint64_t nr, uint64_t pairs, size_t ks);

#endif
