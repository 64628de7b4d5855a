/* baseline.h - plain multi-threaded C loops that do the same work as the
 * operators, on the same cores, for the ratios coproc-bench prints. */
#ifndef COPROC_BENCH_BASELINE_H
#define COPROC_BENCH_BASELINE_H

#include <stddef.h>
#include <stdint.h>

int64_t base_sum_i32(const int32_t *a, size_t n, int threads);
int32_t base_min_i32(const int32_t *a, size_t n, int threads);
/* Positions of rows with a[i] < c, in order; returns the count. */
size_t base_select_lt_i32(const int32_t *a, size_t n, int32_t c, uint32_t *pos, int threads);
/* The number of rows with a[i] < c (what base_select_lt_i32 counts before writing). */
size_t base_count_lt_i32(const int32_t *a, size_t n, int32_t c, int threads);
void base_add_const_i32(const int32_t *a, size_t n, int32_t c, int32_t *out, int threads);
void base_gather_i32(const int32_t *a, const uint32_t *pos, size_t n, int32_t *out, int threads);
/* Inclusive prefix sum into 64 bits. */
void base_scan_i32(const int32_t *a, size_t n, int64_t *out, int threads);
/* The C library's qsort (single-threaded, as the target names it). */
void base_qsort_u32(uint32_t *keys, size_t n);
void base_qsort_pairs_u32(uint32_t *keys, uint32_t *vals, size_t n);
/* Sum and count per key (keys < groups); returns the number of keys that occur.
 * sums and counts hold groups entries each. */
size_t base_group_sum_count(const uint32_t *keys, const int32_t *vals, size_t n, uint32_t groups,
                            int64_t *sums, int64_t *counts, int threads);
/* Hash join of unique build keys and probe keys: returns the number of pairs. */
size_t base_hash_join_u32(const uint32_t *build, size_t nb, const uint32_t *probe, size_t np,
                          uint32_t *left, uint32_t *right, int threads);
/* The same join's number of pairs, counted without writing them. */
size_t base_hash_join_count_u32(const uint32_t *build, size_t nb, const uint32_t *probe,
                                size_t np, int threads);

#endif
