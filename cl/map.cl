/* map.cl - element-wise arithmetic (map_<type>) and casts (cast_<from>), one
 * strided or chunked pass over the rows.
 *
 * Integers wrap: signed arithmetic runs on the unsigned bits (no undefined
 * overflow); x / 0 = 0 and x / -1 = -x (so INT_MIN / -1 = INT_MIN).
 * float32 arithmetic runs in double where the device has fp64 and rounds
 * once to float: correctly rounded like the host (double rounding is exact for
 * + - * / since 53 >= 2 * 24 + 2), whatever the device's float division
 * accuracy or denormal handling. */

/* One kernel per type; op (0 add, 1 sub, 2 mul, 3 div) and use_const are
 * uniform, so each case is its own loop (few kernels keep PoCL's build short). */
#define MAP_LOOP(OPF)                                                                    \
    if (use_const) {                                                                     \
        COPROC_FOR_EACH_ROW(i, n) { out[i] = OPF(a[i], c); }                             \
    } else {                                                                             \
        COPROC_FOR_EACH_ROW(i, n) { out[i] = OPF(a[i], b[i]); }                          \
    }
#define MAP_KERNEL(NAME, T, ADD, SUB, MUL, DIV)                                          \
    __kernel void NAME(__global const T *a, __global const T *b, T c, int use_const,     \
                       int op, ulong n, __global T *out)                                 \
    {                                                                                    \
        switch (op) {                                                                    \
        case 0: MAP_LOOP(ADD) break;                                                     \
        case 1: MAP_LOOP(SUB) break;                                                     \
        case 2: MAP_LOOP(MUL) break;                                                     \
        default: MAP_LOOP(DIV) break;                                                    \
        }                                                                                \
    }

/* Wrapping signed arithmetic through the unsigned type U. */
#define WRAP(T, U, x, op, y) as_##T((U)(as_##U(x) op as_##U(y)))
#define ADD_I32(x, y) WRAP(int, uint, x, +, y)
#define SUB_I32(x, y) WRAP(int, uint, x, -, y)
#define MUL_I32(x, y) WRAP(int, uint, x, *, y)
#define DIV_I32(x, y) ((y) == 0 ? 0 : (y) == -1 ? as_int(0u - as_uint(x)) : (x) / (y))
#define ADD_I64(x, y) WRAP(long, ulong, x, +, y)
#define SUB_I64(x, y) WRAP(long, ulong, x, -, y)
#define MUL_I64(x, y) WRAP(long, ulong, x, *, y)
#define DIV_I64(x, y) ((y) == 0 ? 0L : (y) == -1 ? as_long(0UL - as_ulong(x)) : (x) / (y))
#define ADD_U(x, y) ((x) + (y))
#define SUB_U(x, y) ((x) - (y))
#define MUL_U(x, y) ((x) * (y))
#define DIV_U(x, y) ((y) == 0 ? 0 : (x) / (y))
#define ADD_F(x, y) ((x) + (y))
#define SUB_F(x, y) ((x) - (y))
#define MUL_F(x, y) ((x) * (y))
#define DIV_F(x, y) ((x) / (y))
#ifdef COPROC_FP64
#define ADD_F32(x, y) ((float)((double)(x) + (double)(y)))
#define SUB_F32(x, y) ((float)((double)(x) - (double)(y)))
#define MUL_F32(x, y) ((float)((double)(x) * (double)(y)))
#define DIV_F32(x, y) ((float)((double)(x) / (double)(y)))
#else
#define ADD_F32 ADD_F
#define SUB_F32 SUB_F
#define MUL_F32 MUL_F
#define DIV_F32 DIV_F
#endif

MAP_KERNEL(map_i32, int, ADD_I32, SUB_I32, MUL_I32, DIV_I32)
MAP_KERNEL(map_i64, long, ADD_I64, SUB_I64, MUL_I64, DIV_I64)
MAP_KERNEL(map_u32, uint, ADD_U, SUB_U, MUL_U, DIV_U)
MAP_KERNEL(map_u64, ulong, ADD_U, SUB_U, MUL_U, DIV_U)
MAP_KERNEL(map_f32, float, ADD_F32, SUB_F32, MUL_F32, DIV_F32)
#ifdef COPROC_FP64
MAP_KERNEL(map_f64, double, ADD_F, SUB_F, MUL_F, DIV_F)
#endif

/* ---- casts: integer to integer keeps the low bits (two's complement), float
 * to integer truncates and saturates (NaN -> 0), to float rounds to nearest. */

/* One kernel per source type; `to` (a coproc_type) is uniform and picks the
 * loop; out is cast to the target's element type. */
#define CAST_LOOP(T, CONV)                                                               \
    {                                                                                    \
        __global T *o = (__global T *)out;                                               \
        COPROC_FOR_EACH_ROW(i, n) { o[i] = CONV(in[i]); }                                \
    }                                                                                    \
    break;

#define TO_I32(x) ((int)(x))
#define TO_I64(x) ((long)(x))
#define TO_U32(x) ((uint)(x))
#define TO_U64(x) ((ulong)(x))
/* NaN is tested for explicitly: OpenCL C leaves convert_<int>_sat(NaN)
 * unspecified (PoCL gives 0, Mesa's rusticl and Oclgrind INT_MIN, LONG_MIN or
 * all ones). */
#define SAT_I32(x) (isnan(x) ? 0 : convert_int_sat_rtz(x))
#define SAT_I64(x) (isnan(x) ? 0L : convert_long_sat_rtz(x))
#define SAT_U32(x) (isnan(x) ? 0u : convert_uint_sat_rtz(x))
#define SAT_U64(x) (isnan(x) ? 0UL : convert_ulong_sat_rtz(x))
#define TO_F32(x) convert_float_rte(x)
#define SAME(x) (x)
#ifdef COPROC_FP64
#define TO_F64(x) convert_double_rte(x)
#define CAST_CASE_F64(CONV) case 5: CAST_LOOP(double, CONV)
#else
#define CAST_CASE_F64(CONV)
#endif

/* Integer sources: integers keep their low bits, floats round to nearest. */
#define CAST_FROM_INT(NAME, F)                                                           \
    __kernel void NAME(__global const F *in, ulong n, int to, __global uchar *out)       \
    {                                                                                    \
        switch (to) {                                                                    \
        case 0: CAST_LOOP(int, TO_I32)                                                   \
        case 1: CAST_LOOP(long, TO_I64)                                                  \
        case 2: CAST_LOOP(uint, TO_U32)                                                  \
        case 3: CAST_LOOP(ulong, TO_U64)                                                 \
        case 4: CAST_LOOP(float, TO_F32)                                                 \
        CAST_CASE_F64(TO_F64)                                                            \
        }                                                                                \
    }

/* Float sources: integers truncate and saturate (NaN -> 0). */
#define CAST_FROM_FLOAT(NAME, F, F32, F64)                                               \
    __kernel void NAME(__global const F *in, ulong n, int to, __global uchar *out)       \
    {                                                                                    \
        switch (to) {                                                                    \
        case 0: CAST_LOOP(int, SAT_I32)                                                  \
        case 1: CAST_LOOP(long, SAT_I64)                                                 \
        case 2: CAST_LOOP(uint, SAT_U32)                                                 \
        case 3: CAST_LOOP(ulong, SAT_U64)                                                \
        case 4: CAST_LOOP(float, F32)                                                    \
        CAST_CASE_F64(F64)                                                               \
        }                                                                                \
    }

CAST_FROM_INT(cast_i32, int)
CAST_FROM_INT(cast_i64, long)
CAST_FROM_INT(cast_u32, uint)
CAST_FROM_INT(cast_u64, ulong)
CAST_FROM_FLOAT(cast_f32, float, SAME, TO_F64)
#ifdef COPROC_FP64
CAST_FROM_FLOAT(cast_f64, double, TO_F32, SAME)
#endif
