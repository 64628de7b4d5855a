/* calibrate.cl - kernels of the calibration passes (runtime/calibration/):
 * a read-only bandwidth kernel, integer and fp32 multiply-add loops that are
 * compute bound, and an empty kernel for the launch latency. */

/* Read n uint4 in the device's access pattern; one sum per work-item goes out
 * so the loads cannot be optimised away. The kernels here store their vectors
 * whole: folding lanes into one (acc.x ^ acc.y ...) becomes, in LLVM, shuffles
 * with undefined lanes, on which Oclgrind 21.10's --uninitialized crashes. */
__kernel void calibrate_read(__global const uint4 *in, ulong n, __global uint4 *out)
{
    uint4 acc = (uint4)(0);
    COPROC_FOR_EACH_ROW(i, n) { acc += in[i]; }
    out[get_global_id(0)] = acc;
}

/* CALIB_CHAINS independent chains of 8-wide vectors per work-item, so neither
 * the latency of one multiply-add nor a narrow vector unit limits the rate:
 * each iteration does 64 multiply-adds per work-item. The multipliers and
 * addends are arguments, so the compiler cannot fold the loop. */
#define CALIB_STEP(x, a, b, MAD)                                                           \
    x##0 = MAD(x##0, a, b); x##1 = MAD(x##1, a, b); x##2 = MAD(x##2, a, b);                 \
    x##3 = MAD(x##3, a, b); x##4 = MAD(x##4, a, b); x##5 = MAD(x##5, a, b);                 \
    x##6 = MAD(x##6, a, b); x##7 = MAD(x##7, a, b)

#define INT_MAD(x, a, b) ((x) * (a) + (b))

__kernel void calibrate_int_mad(__global uint8 *out, uint iters, uint a, uint b)
{
    uint s = (uint)get_global_id(0);
    uint x0 = s, x1 = s + 1, x2 = s + 2, x3 = s + 3, x4 = s + 4, x5 = s + 5, x6 = s + 6,
         x7 = s + 7;
    uint8 v0 = (uint8)(x0, x1, x2, x3, x4, x5, x6, x7);
    uint8 v1 = v0 + 8, v2 = v0 + 16, v3 = v0 + 24, v4 = v0 + 32, v5 = v0 + 40, v6 = v0 + 48,
          v7 = v0 + 56;
    for (uint i = 0; i < iters; i++) {
        CALIB_STEP(v, a, b, INT_MAD);
    }
    out[get_global_id(0)] = v0 ^ v1 ^ v2 ^ v3 ^ v4 ^ v5 ^ v6 ^ v7;
}

/* mad() lets the device use its fastest multiply-add (an FMA on GPUs and on
 * CPUs that have one). a slightly below 1 and b small keep values near 1:
 * no overflow, no denormals. */
__kernel void calibrate_float_mad(__global float8 *out, uint iters, float a, float b)
{
    float s = (float)(get_global_id(0) & 255) * (1.0f / 256.0f);
    float8 v0 = (float8)(s, s + 0.01f, s + 0.02f, s + 0.03f, s + 0.04f, s + 0.05f, s + 0.06f,
                         s + 0.07f);
    float8 v1 = v0 + 0.1f, v2 = v0 + 0.2f, v3 = v0 + 0.3f, v4 = v0 + 0.4f, v5 = v0 + 0.5f,
           v6 = v0 + 0.6f, v7 = v0 + 0.7f;
    float8 va = (float8)(a), vb = (float8)(b);
    for (uint i = 0; i < iters; i++) {
        CALIB_STEP(v, va, vb, mad);
    }
    out[get_global_id(0)] = v0 + v1 + v2 + v3 + v4 + v5 + v6 + v7;
}

/* Does nothing: enqueue + finish of it is the launch latency. */
__kernel void calibrate_empty(__global uint *unused)
{
}
