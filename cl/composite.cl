/* composite.cl - one step of folding several key columns into one 64-bit key
 * (runtime/ops/composite_keys.c): acc = acc * radix + (key - lo), or
 * acc = key - lo on the first column. The key converts to ulong as C does
 * (signed values sign-extend, then wrap), so key - lo is the value's offset
 * from the smallest one, in the values' order. */
#define PACK_KERNEL(NAME, T)                                                             \
    __kernel void NAME(__global ulong *acc, __global const T *key, ulong n, ulong lo,    \
                       ulong radix, int first)                                           \
    {                                                                                    \
        if (first) {                                                                     \
            COPROC_FOR_EACH_ROW(i, n) { acc[i] = (ulong)key[i] - lo; }                   \
        } else {                                                                         \
            COPROC_FOR_EACH_ROW(i, n) { acc[i] = acc[i] * radix + ((ulong)key[i] - lo); } \
        }                                                                                \
    }

PACK_KERNEL(pack_i32, int)
PACK_KERNEL(pack_i64, long)
PACK_KERNEL(pack_u32, uint)
PACK_KERNEL(pack_u64, ulong)
