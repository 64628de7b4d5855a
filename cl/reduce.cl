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
