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

#ifndef COPROC_FP64
/* Float sums on a device without fp64 (the API sums floats "into double"):
 * each work-item keeps a float pair hi + lo with Neumaier's compensation, so
 * the sum is good to about 2^-44 of the sum of magnitudes, as a double
 * accumulator would be for float input. Devices without fp64 may flush
 * subnormal floats to zero (llvmpipe does), so a subnormal (or zero) input is
 * not added as a float: its mantissa, an exact count of 2^-149, goes into sub.
 * The host adds hi + lo + sub * 2^-149 in double. An infinite or NaN row
 * makes hi infinite or NaN; the host then takes hi alone (lo is NaN). */
typedef struct {
    float hi, lo;
    long sub;
} coproc_fsum;

static inline coproc_fsum coproc_fsum_zero(void)
{
    coproc_fsum z = {0.0f, 0.0f, 0};
    return z;
}

static inline coproc_fsum coproc_fsum_addf(coproc_fsum a, float x)
{
    uint b = as_uint(x);
    int tiny = (b & 0x7f800000u) == 0;
    long m = (long)(b & 0x007fffffu);
    a.sub += tiny ? ((b >> 31) ? -m : m) : 0;
    float y = tiny ? 0.0f : x;
    float t = a.hi + y;
    a.lo += fabs(a.hi) >= fabs(y) ? (a.hi - t) + y : (y - t) + a.hi;
    a.hi = t;
    return a;
}

static inline coproc_fsum coproc_fsum_add(coproc_fsum a, coproc_fsum b)
{
    float t = a.hi + b.hi;
    float e = fabs(a.hi) >= fabs(b.hi) ? (a.hi - t) + b.hi : (b.hi - t) + a.hi;
    a.lo = (a.lo + b.lo) + e;
    a.hi = t;
    a.sub += b.sub;
    return a;
}
#endif
