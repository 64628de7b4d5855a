/* nulls.h - validity bitmaps on a device (cl/nulls.cl), the pieces the
 * operators' null semantics (coproc.h, "nulls") are made of. Bitmaps here are
 * device UINT32 columns of ceil(n / 32) words, laid out as coproc.h says; the
 * bitmaps these functions make have the bits past row n cleared. Outputs are
 * new device columns owned by the caller; on error none is made (*out NULL). */
#ifndef COPROC_OPS_NULLS_H
#define COPROC_OPS_NULLS_H

#include "data/column.h"

/* a & b over n rows on dev; one of them NULL: a copy of the other; both NULL:
 * *out = NULL (every row valid). */
coproc_status coproc__nulls_and(coproc_runtime *rt, coproc__device *dev, const coproc_column *a,
                                const coproc_column *b, size_t n, coproc_column **out);

/* ~a over n rows (a NULL: no row set). */
coproc_status coproc__nulls_not(coproc_runtime *rt, coproc__device *dev, const coproc_column *a,
                                size_t n, coproc_column **out);

/* Bits [lo, hi) of n rows set. */
coproc_status coproc__nulls_range(coproc_runtime *rt, coproc__device *dev, size_t n, size_t lo,
                                  size_t hi, coproc_column **out);

/* Out bit i = bit positions[i] of bits, i < m (positions of type ptype,
 * UINT32 or UINT64, already checked to be in range). */
coproc_status coproc__nulls_gather(coproc_runtime *rt, coproc__device *dev,
                                   const coproc_column *bits, cl_mem positions, coproc_type ptype,
                                   size_t m, coproc_column **out);

/* The number of set bits among rows [0, n) of the device bitmap. */
coproc_status coproc__nulls_count(coproc_runtime *rt, coproc__device *dev, cl_mem bits, size_t n,
                                  uint64_t *count);

/* The rows (UINT32, ascending) of the set bits among rows [0, n). */
coproc_status coproc__nulls_positions(coproc_runtime *rt, coproc__device *dev, cl_mem bits,
                                      size_t n, coproc_column **out);

/* Move `bytes` (a multiple of 4) from src at byte src_at to dst at byte
 * dst_at, on the device's queue (not waited for); 0 bytes: nothing. */
coproc_status coproc__nulls_copy(coproc_runtime *rt, coproc__device *dev, cl_mem src, size_t src_at,
                                 cl_mem dst, size_t dst_at, size_t bytes);

/* Put the element of `size` bytes (4 or 8) at v into dst at byte `at`. */
coproc_status coproc__nulls_put(coproc_runtime *rt, coproc__device *dev, cl_mem dst, size_t at,
                                const void *v, size_t size);

/* A copy of col's rows (no validity) with the rows under its nulls set to the
 * value whose bytes are at c (col's element size); col must have a validity. */
coproc_status coproc__nulls_fill(coproc_runtime *rt, const coproc_column *col, const void *c,
                                 coproc_column **out);

/* The rows among n that a bitmap argument (reduce_where's, compact's)
 * selects, nulls considered: its set bits, where its words are valid (a
 * bitmap column with a validity of its own: a null word selects no row), and
 * (valid not NULL) the row is valid. *out: a new bitmap, or NULL when the
 * bitmap selects as it is (no validity of its own, valid NULL). */
coproc_status coproc__nulls_selected(coproc_runtime *rt, const coproc_column *bitmap,
                                     const coproc_column *valid, size_t n, coproc_column **out);

/* Give *out (a new device column) the validity a & b of n rows (the
 * inputs' validities, either may be NULL); on failure *out is freed and set
 * to NULL. */
coproc_status coproc__nulls_give_and(coproc_runtime *rt, coproc_column **out,
                                     const coproc_column *a, const coproc_column *b);

/* Joins with null keys (coproc.h): a null key never matches, so each side's
 * null rows are dropped first (compacted away) and the pairs' positions
 * mapped back to the rows of the inputs. The null-free joins are called on
 * the compacted keys; left and right are checked by them. */
typedef coproc_status (*coproc__join_fn)(coproc_runtime *rt, const coproc_column *left,
                                         const coproc_column *right, coproc_join_result *out);
coproc_status coproc__nulls_join(coproc_runtime *rt, const coproc_column *left,
                                 const coproc_column *right, coproc__join_fn fn,
                                 coproc_join_result *out);
coproc_status coproc__nulls_join_count(coproc_runtime *rt, const coproc_column *left,
                                       const coproc_column *right, uint64_t *count);
coproc_status coproc__nulls_semi_join(coproc_runtime *rt, const coproc_column *probe,
                                      const coproc_column *build, coproc_column **positions,
                                      uint64_t *count);

/* The message and status of an operator that does not handle nulls yet,
 * given an input with a validity: UNSUPPORTED, never a silent wrong answer. */
coproc_status coproc__nulls_refuse(coproc_runtime *rt, const char *what, const char *input);

#endif
