/* prelude.cl - prepended to every kernel program (see runtime/program.c).
 *
 * Build options set by the runtime per device:
 *   COPROC_CPU   1 on CPU devices: each work-item walks one contiguous chunk
 *                (PoCL runs this ~5x faster than a strided loop); 0 on GPUs:
 *                work-items stride by the global size so loads coalesce.
 *   COPROC_FP64  defined where the device has double precision.
 */
#ifdef COPROC_FP64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif

/* Visit the rows [0, n) this work-item owns, in the device's access pattern. */
#if COPROC_CPU
#define COPROC_FOR_EACH_ROW(i, n)                                                        \
    for (ulong i##_chunk = ((n) + get_global_size(0) - 1) / get_global_size(0),          \
               i = get_global_id(0) * i##_chunk,                                         \
               i##_end = min((ulong)(n), i + i##_chunk);                                 \
         i < i##_end; i++)
#else
#define COPROC_FOR_EACH_ROW(i, n)                                                        \
    for (ulong i = get_global_id(0); i < (ulong)(n); i += get_global_size(0))
#endif

/* Tree-reduce scratch[0..get_local_size(0)) in local memory with OP(a, b);
 * the result is in scratch[0] after the call (all work-items must call it). */
#define COPROC_LOCAL_REDUCE(scratch, OP)                                                 \
    do {                                                                                 \
        uint lid_ = get_local_id(0);                                                     \
        for (uint s_ = get_local_size(0); s_ > 1;) {                                     \
            uint h_ = (s_ + 1) / 2;                                                      \
            barrier(CLK_LOCAL_MEM_FENCE);                                                \
            if (lid_ + h_ < s_)                                                          \
                scratch[lid_] = OP(scratch[lid_], scratch[lid_ + h_]);                   \
            s_ = h_;                                                                     \
        }                                                                                \
        barrier(CLK_LOCAL_MEM_FENCE);                                                    \
    } while (0)
