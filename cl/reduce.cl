/* reduce.cl - sum, min, max of a whole column: one partial per work-group,
 * finished on the host (a few KiB), so no atomics and no inter-group sync. */

#define ADD(a, b) ((a) + (b))

/* NAME: kernel name; T: element type; A: accumulator type; INIT: identity;
 * LOAD(x): element to accumulator; OP: combine. */
#define REDUCE_KERNEL(NAME, T, A, INIT, OP)                                              \
    __kernel void NAME(__global const T *in, ulong n, __global A *partials,              \
                       __local A *scratch)                                               \
    {                                                                                    \
        A acc = INIT;                                                                    \
        COPROC_FOR_EACH_ROW(i, n) { acc = OP(acc, (A)in[i]); }                           \
        scratch[get_local_id(0)] = acc;                                                  \
        COPROC_LOCAL_REDUCE(scratch, OP);                                                \
        if (get_local_id(0) == 0)                                                        \
            partials[get_group_id(0)] = scratch[0];                                      \
    }

/* Integer sums widen to 64 bits and wrap. */
REDUCE_KERNEL(reduce_sum_i32, int, long, 0, ADD)
REDUCE_KERNEL(reduce_sum_i64, long, long, 0, ADD)
REDUCE_KERNEL(reduce_sum_u32, uint, ulong, 0, ADD)
REDUCE_KERNEL(reduce_sum_u64, ulong, ulong, 0, ADD)
REDUCE_KERNEL(reduce_min_i32, int, int, INT_MAX, min)
REDUCE_KERNEL(reduce_min_i64, long, long, LONG_MAX, min)
REDUCE_KERNEL(reduce_min_u32, uint, uint, UINT_MAX, min)
REDUCE_KERNEL(reduce_min_u64, ulong, ulong, ULONG_MAX, min)
REDUCE_KERNEL(reduce_max_i32, int, int, INT_MIN, max)
REDUCE_KERNEL(reduce_max_i64, long, long, LONG_MIN, max)
REDUCE_KERNEL(reduce_max_u32, uint, uint, 0, max)
REDUCE_KERNEL(reduce_max_u64, ulong, ulong, 0, max)
/* Float min/max start from NaN: fmin/fmax ignore a NaN operand, so NaN rows
 * are skipped and the result is NaN only when every row is NaN. */
REDUCE_KERNEL(reduce_min_f32, float, float, NAN, fmin)
REDUCE_KERNEL(reduce_max_f32, float, float, NAN, fmax)
#ifdef COPROC_FP64
REDUCE_KERNEL(reduce_sum_f32, float, double, 0.0, ADD)
REDUCE_KERNEL(reduce_sum_f64, double, double, 0.0, ADD)
REDUCE_KERNEL(reduce_min_f64, double, double, (double)NAN, fmin)
REDUCE_KERNEL(reduce_max_f64, double, double, (double)NAN, fmax)
#else
/* Without fp64: compensated float pairs and exact subnormals (prelude.cl's
 * coproc_fsum), finished on the host in double. */
__kernel void reduce_sum_f32(__global const float *in, ulong n, __global coproc_fsum *partials,
                             __local coproc_fsum *scratch)
{
    coproc_fsum acc = coproc_fsum_zero();
    COPROC_FOR_EACH_ROW(i, n) { acc = coproc_fsum_addf(acc, in[i]); }
    scratch[get_local_id(0)] = acc;
    COPROC_LOCAL_REDUCE(scratch, coproc_fsum_add);
    if (get_local_id(0) == 0)
        partials[get_group_id(0)] = scratch[0];
}
#endif

/* ---- over the valid rows of a column with nulls (coproc.h, "nulls"): a null
 * row adds the identity, so the loop keeps its shape; each work-group also
 * counts its valid rows (the result's count; 0 rows: the identity). On the
 * CPU path a work-item's rows are contiguous: it walks them a validity word
 * (32 rows) at a time, a word of valid rows as plainly as without nulls. */
#define VALID_BIT(valid, i) ((valid[(i) >> 5] >> (uint)((i) & 31)) & 1u)
#if COPROC_CPU
#define REDUCE_VALID_ROWS(A, INIT, OP, LOAD)                                             \
    ulong chunk_ = (n + get_global_size(0) - 1) / get_global_size(0);                    \
    ulong i = get_global_id(0) * chunk_, end_ = min(n, i + chunk_);                      \
    for (; i < end_ && (i & 31); i++) { /* up to a word boundary */                      \
        uint ok = VALID_BIT(valid, i);                                                   \
        acc = OP(acc, ok ? LOAD(in[i]) : (A)(INIT));                                     \
        c += ok;                                                                         \
    }                                                                                    \
    for (; i + 32 <= end_; i += 32) {                                                    \
        uint m = valid[i >> 5];                                                          \
        c += popcount(m);                                                                \
        if (m == 0xFFFFFFFFu)                                                            \
            for (uint j = 0; j < 32; j++)                                                \
                acc = OP(acc, LOAD(in[i + j]));                                          \
        else if (m)                                                                      \
            for (uint j = 0; j < 32; j++)                                                \
                acc = OP(acc, (m >> j) & 1u ? LOAD(in[i + j]) : (A)(INIT));              \
    }                                                                                    \
    for (; i < end_; i++) {                                                              \
        uint ok = VALID_BIT(valid, i);                                                   \
        acc = OP(acc, ok ? LOAD(in[i]) : (A)(INIT));                                     \
        c += ok;                                                                         \
    }
#else
#define REDUCE_VALID_ROWS(A, INIT, OP, LOAD)                                             \
    COPROC_FOR_EACH_ROW(i, n) {                                                          \
        uint ok = VALID_BIT(valid, i);                                                   \
        acc = OP(acc, ok ? LOAD(in[i]) : (A)(INIT));                                     \
        c += ok;                                                                         \
    }
#endif
#define REDUCE_VALID_KERNEL(NAME, T, A, INIT, OP)                                        \
    __kernel void NAME(__global const T *in, ulong n, __global const uint *valid,        \
                       __global A *partials, __global uint *counts, __local A *scratch,  \
                       __local uint *cscratch)                                           \
    {                                                                                    \
        A acc = INIT;                                                                    \
        uint c = 0;                                                                      \
        REDUCE_VALID_ROWS(A, INIT, OP, (A))                                              \
        scratch[get_local_id(0)] = acc;                                                  \
        cscratch[get_local_id(0)] = c;                                                   \
        COPROC_LOCAL_REDUCE(scratch, OP);                                                \
        COPROC_LOCAL_REDUCE(cscratch, ADD);                                              \
        if (get_local_id(0) == 0) {                                                      \
            partials[get_group_id(0)] = scratch[0];                                      \
            counts[get_group_id(0)] = cscratch[0];                                       \
        }                                                                                \
    }

REDUCE_VALID_KERNEL(reduce_valid_sum_i32, int, long, 0, ADD)
REDUCE_VALID_KERNEL(reduce_valid_sum_i64, long, long, 0, ADD)
REDUCE_VALID_KERNEL(reduce_valid_sum_u32, uint, ulong, 0, ADD)
REDUCE_VALID_KERNEL(reduce_valid_sum_u64, ulong, ulong, 0, ADD)
REDUCE_VALID_KERNEL(reduce_valid_min_i32, int, int, INT_MAX, min)
REDUCE_VALID_KERNEL(reduce_valid_min_i64, long, long, LONG_MAX, min)
REDUCE_VALID_KERNEL(reduce_valid_min_u32, uint, uint, UINT_MAX, min)
REDUCE_VALID_KERNEL(reduce_valid_min_u64, ulong, ulong, ULONG_MAX, min)
REDUCE_VALID_KERNEL(reduce_valid_max_i32, int, int, INT_MIN, max)
REDUCE_VALID_KERNEL(reduce_valid_max_i64, long, long, LONG_MIN, max)
REDUCE_VALID_KERNEL(reduce_valid_max_u32, uint, uint, 0, max)
REDUCE_VALID_KERNEL(reduce_valid_max_u64, ulong, ulong, 0, max)
REDUCE_VALID_KERNEL(reduce_valid_min_f32, float, float, NAN, fmin)
REDUCE_VALID_KERNEL(reduce_valid_max_f32, float, float, NAN, fmax)
#ifdef COPROC_FP64
REDUCE_VALID_KERNEL(reduce_valid_sum_f32, float, double, 0.0, ADD)
REDUCE_VALID_KERNEL(reduce_valid_sum_f64, double, double, 0.0, ADD)
REDUCE_VALID_KERNEL(reduce_valid_min_f64, double, double, (double)NAN, fmin)
REDUCE_VALID_KERNEL(reduce_valid_max_f64, double, double, (double)NAN, fmax)
#else
__kernel void reduce_valid_sum_f32(__global const float *in, ulong n, __global const uint *valid,
                                   __global coproc_fsum *partials, __global uint *counts,
                                   __local coproc_fsum *scratch, __local uint *cscratch)
{
    coproc_fsum acc = coproc_fsum_zero();
    uint c = 0;
    REDUCE_VALID_ROWS(float, 0.0f, coproc_fsum_addf, (float))
    scratch[get_local_id(0)] = acc;
    cscratch[get_local_id(0)] = c;
    COPROC_LOCAL_REDUCE(scratch, coproc_fsum_add);
    COPROC_LOCAL_REDUCE(cscratch, ADD);
    if (get_local_id(0) == 0) {
        partials[get_group_id(0)] = scratch[0];
        counts[get_group_id(0)] = cscratch[0];
    }
}
#endif
