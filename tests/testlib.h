/* testlib.h - shared helpers for the cmocka tests: opening a runtime (or
 * skipping with 77), deterministic random data, reference comparisons. */
#ifndef COPROC_TESTLIB_H
#define COPROC_TESTLIB_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "coproc.h"

#define TEST_SKIP 77

/* Open a runtime over `devices` (NULL: all). Exits 77 (skipped) when no such
 * device exists; fails the test on any other error. */
coproc_runtime *test_open(const char *devices);

/*
 * For every device of rt and, on CPU devices, both kernel paths (the CPU
 * contiguous-chunk path and the GPU strided path), open a runtime and call
 * fn(rt, device, user). The GPU path on PoCL checks GPU code without a GPU.
 */
typedef void (*test_device_fn)(coproc_runtime *rt, int device, const char *path, void *user);
void test_each_device_path(test_device_fn fn, void *user);

/* test_each_device_path with the device quirks `quirks` (COPROC_QUIRKS syntax,
 * e.g. "max_loop_steps=300") added to any the environment already forces;
 * COPROC_QUIRKS is as before afterwards. */
void test_each_device_path_quirks(const char *quirks, test_device_fn fn, void *user);

/* Force device i's kernel path before it builds anything (1 CPU, 0 GPU). */
void test_force_path(coproc_runtime *rt, int device, int cpu_path);

/* Seconds on the monotonic clock; sleep for s seconds. */
double test_now(void);
void test_sleep(double s);

/* Deterministic random numbers (splitmix64). */
typedef struct test_rng { uint64_t s; } test_rng;
uint64_t test_rand(test_rng *r);
/* Uniform in [0, bound). */
uint64_t test_rand_below(test_rng *r, uint64_t bound);

/* Sizes that hit the edges of a kernel: 0, 1, work-group sizes +-1, vector
 * widths, chunk boundaries, and a few larger ones; ends with SIZE_MAX. */
extern const size_t test_edge_sizes[];

/* Element i of an array of type t, widened without conversion: signed
 * (int32/int64), unsigned (uint32/uint64) or double (float32/float64). */
static inline int64_t test_get_i(coproc_type t, const void *d, size_t i)
{
    return t == COPROC_INT32 ? ((const int32_t *)d)[i] : ((const int64_t *)d)[i];
}
static inline uint64_t test_get_u(coproc_type t, const void *d, size_t i)
{
    return t == COPROC_UINT32 ? ((const uint32_t *)d)[i] : ((const uint64_t *)d)[i];
}
static inline double test_get_f(coproc_type t, const void *d, size_t i)
{
    return t == COPROC_FLOAT32 ? ((const float *)d)[i] : ((const double *)d)[i];
}
static inline int test_is_float(coproc_type t) { return t == COPROC_FLOAT32 || t == COPROC_FLOAT64; }

/* Open a runtime with these options (devices, budget, ...), skipping (77)
 * when no device matches; fails on any other error. */
coproc_runtime *test_open_with(const coproc_options *opts);

/* A join result pair (left row, right row), and qsort order for comparing
 * pair lists regardless of the order an operator wrote them in. */
typedef struct test_pair { uint32_t l, r; } test_pair;
int test_cmp_pair(const void *a, const void *b);

/* The join reference: every pair (l, r) with left[l] == right[r] over keys of
 * ks bytes (4 or 8), sorted by test_cmp_pair; *count their number. A nested
 * loop for small inputs, binary search in the sorted left side otherwise.
 * malloc'd (caller frees). */
test_pair *test_join_reference(size_t ks, const void *left, size_t nl, const void *right,
                               size_t nr, size_t *count);

/* Check a join's pairs (gl[i], gr[i]), i < m, in any order, against want (sorted
 * by test_cmp_pair, m pairs); fails the test naming `ctx` and the first wrong pair. */
void test_check_pairs(const uint32_t *gl, const uint32_t *gr, size_t m, const test_pair *want,
                      const char *ctx);

/* The order coproc_sort promises, written as plainly as possible:
 * -inf < ... < -0.0 < +0.0 < ... < +inf < NaN, NaNs equal; <0, 0, >0. */
int test_sort_cmp_keys(coproc_type t, const void *d, size_t a, size_t b);

/* The stable permutation that sorts d's n keys of type t in that order (a
 * bottom-up merge sort of positions), into perm[0..n-1]. */
void test_ref_argsort(coproc_type t, const void *d, size_t n, uint32_t *perm);

/* Make a fresh empty directory under $TMPDIR; returns a malloc'd path. */
char *test_temp_dir(const char *tag);

#define assert_ok(rt, expr)                                                                  \
    do {                                                                                     \
        coproc_status s_ = (expr);                                                           \
        if (s_ != COPROC_OK)                                                                 \
            fail_msg("%s -> %s: %s", #expr, coproc_status_name(s_), coproc_errmsg(rt));      \
    } while (0)

#define assert_status(expected, expr)                                                        \
    do {                                                                                     \
        coproc_status s_ = (expr);                                                           \
        if (s_ != (expected))                                                                \
            fail_msg("%s -> %s, expected %s", #expr, coproc_status_name(s_),                 \
                     coproc_status_name(expected));                                          \
    } while (0)

#endif
