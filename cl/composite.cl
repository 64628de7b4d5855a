/* composite.cl - folding several key columns into one key
 * (runtime/ops/composite_keys.c).
 *
 * range_<t>: each work-group's smallest and largest valid key, into part[2 g]
 * and part[2 g + 1] (one pass for both); a group without a valid key gives
 * min > max (T's largest and smallest value).
 * pack_<t> / pack32_<t>: one fold step, acc = acc * radix + digit, or
 * acc = digit on the first column, into a ulong or (when every combination
 * fits) a uint key; digit = key - lo, or null_digit where the row is null.
 * The key converts to ulong as C does (signed values sign-extend, then wrap),
 * so key - lo is the value's offset from the smallest one, in the values'
 * order.
 * has_valid: the column has nulls, valid its validity bitmap (bit i % 32 of
 * word i / 32 set: row i valid); without nulls valid is never read. */
#define COPROC_ROW_VALID(i) (!has_valid || ((valid[(i) / 32] >> ((i) % 32)) & 1u))

#define RANGE_KERNEL(NAME, T, TMIN, TMAX)                                                \
    __kernel void NAME(__global const T *key, ulong n, __global T *part,                 \
                       __local T *lmin, __local T *lmax, __global const uint *valid,     \
                       int has_valid)                                                    \
    {                                                                                    \
        T mn = TMAX, mx = TMIN;                                                          \
        COPROC_FOR_EACH_ROW(i, n)                                                        \
        {                                                                                \
            if (COPROC_ROW_VALID(i)) {                                                   \
                T v = key[i];                                                            \
                mn = min(mn, v);                                                         \
                mx = max(mx, v);                                                         \
            }                                                                            \
        }                                                                                \
        lmin[get_local_id(0)] = mn;                                                      \
        lmax[get_local_id(0)] = mx;                                                      \
        COPROC_LOCAL_REDUCE(lmin, min);                                                  \
        COPROC_LOCAL_REDUCE(lmax, max);                                                  \
        if (get_local_id(0) == 0) {                                                      \
            part[2 * get_group_id(0)] = lmin[0];                                         \
            part[2 * get_group_id(0) + 1] = lmax[0];                                     \
        }                                                                                \
    }

RANGE_KERNEL(range_i32, int, INT_MIN, INT_MAX)
RANGE_KERNEL(range_i64, long, LONG_MIN, LONG_MAX)
RANGE_KERNEL(range_u32, uint, 0u, UINT_MAX)
RANGE_KERNEL(range_u64, ulong, 0ul, ULONG_MAX)

#define PACK_KERNEL(NAME, A, T)                                                          \
    __kernel void NAME(__global A *acc, __global const T *key, ulong n, ulong lo,        \
                       ulong radix, int first, __global const uint *valid, int has_valid, \
                       ulong null_digit)                                                 \
    {                                                                                    \
        COPROC_FOR_EACH_ROW(i, n)                                                        \
        {                                                                                \
            ulong digit = COPROC_ROW_VALID(i) ? (ulong)key[i] - lo : null_digit;         \
            acc[i] = (A)(first ? digit : (ulong)acc[i] * radix + digit);                 \
        }                                                                                \
    }

PACK_KERNEL(pack_i32, ulong, int)
PACK_KERNEL(pack_i64, ulong, long)
PACK_KERNEL(pack_u32, ulong, uint)
PACK_KERNEL(pack_u64, ulong, ulong)
PACK_KERNEL(pack32_i32, uint, int)
PACK_KERNEL(pack32_i64, uint, long)
PACK_KERNEL(pack32_u32, uint, uint)
PACK_KERNEL(pack32_u64, uint, ulong)
