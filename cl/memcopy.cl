/* memcopy.cl - device memory bandwidth: a plain copy in the device's access
 * pattern (uint4 per access, so each work-item moves 16 bytes at a time). */
__kernel void copy_u32x4(__global const uint4 *in, __global uint4 *out, ulong n)
{
    COPROC_FOR_EACH_ROW(i, n) { out[i] = in[i]; }
}
