/* group_by.cl - hash group-by: count, sum, min, max per distinct integer key.
 *
 * Design (runtime/ops/group_by.c drives it). Only 32-bit atomics, no waiting
 * on another work-item, no 64-bit atomics at all, so it runs unchanged on
 * every OpenCL 1.2 device.
 *
 * The table. C slots (a power of two), open addressing with linear probing.
 * A key is stored in W set-once 32-bit words (W = 2 for 32-bit keys, 3 for
 * 64-bit keys), each holding 31 key bits and the top bit set, so the value 0
 * means "not written yet" and no key value can collide with it (there is no
 * sentinel key). A row claims the words of a slot one after the other with
 * atomic_cmpxchg(word, 0, mine); a word that holds another value sends the row
 * to the next slot. Words never change once written, so every row that carries
 * the same key sees the same words and stops at the same slot, and the row that
 * writes (or matches) the last word of a slot always exists: no slot is left
 * half-claimed, and nobody waits for anybody. Every access to a word that
 * other work-items update is itself atomic (OpenCL 1.2 has no atomic load, and
 * a plain read beside another work-item's atomic write is a data race that
 * Oclgrind reports): the claim is one atomic_cmpxchg(word, 0, mine), whose old
 * value is also the read; min/max/emax are one atomic_min/max each, with no
 * plain read first to filter them.
 *
 * Overflow. Claiming the first word of a slot bumps a claimed-slot counter
 * (on big tables only claims of every 16th slot, by slot index, so that many
 * new groups do not all hit one atomic); past about C/2 (or after C probes) the
 * kernel raises an overflow flag and every work-item stops at its next row.
 * The host then grows the table (x8) and runs pass 1 again from scratch. At
 * C >= 2n (load <= 1/2) the host lifts the limit: that table cannot overflow,
 * so no row is ever lost. Every work-item also adds the rows it placed to a
 * counter (none where its loops were stopped: GB_LOOP_CANARY): a flag raised
 * below the claim limit, or fewer rows placed than there are, means a
 * work-item's loops stopped early (a driver's loop limit, quirk loop-65535),
 * and the host runs pass 1 again with fewer rows a work-item
 * (runtime/ops/group_by.c, insert_rows).
 *
 * Pass 1 (gb_insert_*): row -> slot (row_slot[i]); for float values also the
 * per-slot largest binary exponent (atomic_max), and for 64-bit values the high
 * 32 bits of the order-preserving min/max encoding (atomic_min/max).
 * Pass 2 (gb_aggregate_*): rows are aggregated by slot, first into a
 * work-group-local hash table keyed by slot id (local atomics on GPUs; plain
 * operations on the CPU path, whose work-groups have one work-item), merged into
 * the global per-slot aggregates at the end; rows that find no local entry go
 * straight to the global ones. Aggregates, all exact with 32-bit atomics:
 *   count  atomic_add of 32-bit counts (rows are limited to 2^32 - 1);
 *   sum    integers: 64-bit wrapping sums as two words, added word by word with
 *          atomic_add and an explicit carry into the next word (the carries out
 *          of a word are counted exactly, so the total is exact in any order);
 *          floats: a 128-bit two's-complement fixed-point accumulator per slot
 *          (four words, same carry scheme) with its least significant bit at
 *          2^(emax - 94), emax from pass 1: every value is truncated to
 *          < 2^(emax - 94), the sum of up to 2^32 values cannot overflow, and
 *          the result is independent of order and within ~2^-60 of the largest
 *          magnitude (far inside double rounding). NaN, +inf and -inf are flags.
 *          Values are split by their bits and the sum is rounded once into the
 *          output format by integer operations (gb_fix32, gb_round_bits): no
 *          float arithmetic, so flushed subnormals and missing fp64 change
 *          nothing.
 *   min/max values mapped to an order-preserving unsigned encoding (sign bit
 *          flipped for signed ints, the radix-sort transform for floats; NaN
 *          rows skipped), then atomic_min/max; 64-bit values in two phases:
 *          the high word in pass 1, then the low word, in pass 2, of the rows
 *          whose high word equals the winner.
 * Then gb_flags + coproc__flags_to_positions number the occupied slots (group
 * g = the g-th occupied slot) and gb_final_* write the output columns, either
 * at g or at dest[g] (the key's rank, for sorted output).
 */

#define GB_FLAG 0x80000000u
#define GB_LOW31 0x7FFFFFFFu
#define GB_NONE 0xFFFFFFFFu     /* no slot (overflow); also an empty local-table entry */
#define GB_LOCAL_PROBES 16
#define GB_CTL_EVERY 64         /* pass 1 reads the overflow flag every 64 rows */
#define GB_FL_NAN 1u
#define GB_FL_PINF 2u
#define GB_FL_NINF 4u

/* murmur3's 64-bit finaliser */
static inline ulong gb_hash(ulong k)
{
    k ^= k >> 33;
    k *= 0xff51afd7ed558ccdUL;
    k ^= k >> 33;
    k *= 0xc4ceb9fe1a85ec53UL;
    k ^= k >> 33;
    return k;
}

/* The slot of `key` in a table of mask + 1 slots of W words, inserting it if
 * new; GB_NONE after raising the overflow flag ctl[0] (past the claim limit,
 * or after a probe loop that ended without a slot: mask + 1 probes, or a loop
 * stopped by the driver). ctl[1] counts the claims of slots s with
 * (s & sample) == 0. */
#define GB_DEFINE_INSERT(W)                                                              \
    static inline uint gb_insert_w##W(__global uint *words, uint mask, ulong key,        \
                               volatile __global uint *ctl, uint sample, uint limit)     \
    {                                                                                    \
        uint e[3];                                                                       \
        e[0] = ((uint)key & GB_LOW31) | GB_FLAG;                                         \
        e[1] = ((uint)(key >> 31) & GB_LOW31) | GB_FLAG;                                 \
        e[2] = (uint)(key >> 62) | GB_FLAG;                                              \
        uint s = (uint)gb_hash(key) & mask;                                              \
        for (uint p = 0; p <= mask; p++) {                                               \
            __global uint *w = words + (size_t)s * W;                                    \
            uint j = 0;                                                                  \
            for (; j < W; j++) {                                                         \
                uint cur = atomic_cmpxchg((volatile __global uint *)&w[j], 0u, e[j]);    \
                if (cur == 0) {                                                          \
                    cur = e[j];                                                          \
                    if (j == 0 && (s & sample) == 0 && atomic_inc(&ctl[1]) >= limit) {   \
                        atomic_xchg(&ctl[0], 1u);                                        \
                        return GB_NONE;                                                  \
                    }                                                                    \
                }                                                                        \
                if (cur != e[j])                                                         \
                    break;                                                               \
            }                                                                            \
            if (j == W)                                                                  \
                return s;                                                                \
            s = (s + 1) & mask;                                                          \
        }                                                                                \
        atomic_xchg(&ctl[0], 1u);                                                        \
        return GB_NONE;                                                                  \
    }
GB_DEFINE_INSERT(2)
GB_DEFINE_INSERT(3)

/* Order-preserving unsigned encodings (floats: -inf < -0.0 < +0.0 < +inf). */
static inline uint gb_ord32(uint b) /* b: a float32's bits */
{
    return (b & 0x80000000u) ? ~b : b | 0x80000000u;
}
static inline uint gb_unord32(uint o) { return (o & 0x80000000u) ? o & 0x7FFFFFFFu : ~o; }
static inline ulong gb_ord64(ulong b) /* b: a float64's bits */
{
    return (b & 0x8000000000000000UL) ? ~b : b | 0x8000000000000000UL;
}
static inline ulong gb_unord64(ulong o)
{
    return (o & 0x8000000000000000UL) ? o & 0x7FFFFFFFFFFFFFFFUL : ~o;
}

/* Float values are summed from their bits alone, with integer operations: a
 * device that flushes subnormals (rusticl), or has no fp64, adds them as
 * exactly as any other (and no float builtin is needed: Oclgrind 21.10 stops
 * on frexp with a private pointer). A finite float32 magnitude a (bits
 * without the sign) with biased exponent E is m x 2^(max(E, 1) - 150), m its
 * 24-bit significand (with the implicit bit when E > 0); a float64 one
 * m x 2^(max(E, 1) - 1075), m of 53 bits. */

/* frexp's exponent of a finite magnitude a != 0: 2^(e-1) <= |v| < 2^e. */
static inline int gb_exp32(uint a)
{
    uint E = a >> 23;
    return E ? (int)E - 126 : 32 - (int)clz(a) - 149;
}

static inline int gb_exp64(ulong a)
{
    uint E = (uint)(a >> 52);
    return E ? (int)E - 1022 : 64 - (int)clz(a) - 1074;
}

/* x[0..3] = -x (128-bit two's complement). */
static inline void gb_neg128(uint *x)
{
    uint c = 1;
    for (int j = 0; j < 4; j++) {
        x[j] = ~x[j] + c;
        c = c && x[j] == 0;
    }
}

/* x = m x 2^sh as a 128-bit two's-complement integer, negated when neg
 * (bits shifted out on the right are truncated; m x 2^sh < 2^127). */
static inline void gb_fix_place(ulong m, int sh, uint neg, uint *x)
{
    ulong lo = 0, hi = 0;
    if (sh >= 64)
        hi = m << (sh - 64);
    else if (sh > 0) {
        lo = m << sh;
        hi = m >> (64 - sh);
    } else if (sh > -64)
        lo = m >> -sh;
    x[0] = (uint)lo;
    x[1] = (uint)(lo >> 32);
    x[2] = (uint)hi;
    x[3] = (uint)(hi >> 32);
    if (neg)
        gb_neg128(x);
}

/* 128-bit two's complement of trunc(v x 2^(94 - emax)) for the float32 of
 * bits b, finite and not zero, |v| < 2^emax: m shifted by max(E, 1) - 56 - emax
 * (m x 2^shift < 2^94; bits shifted out on the right are truncated). */
static inline void gb_fix32(uint b, int emax, uint *x)
{
    uint a = b & 0x7FFFFFFFu, E = a >> 23;
    ulong m = E ? (a & 0x7FFFFFu) | 0x800000u : a;
    gb_fix_place(m, (int)max(E, 1u) - 56 - emax, b >> 31, x);
}

/* ---------------------------------------------------------------- init */

#define GB_INIT_SUM 1u
#define GB_INIT_MM 2u
#define GB_INIT_HI 4u
#define GB_INIT_EMAX 8u
#define GB_INIT_FL 16u

__kernel void gb_init(ulong cap, uint what, __global uint *words, uint nw, __global uint *cnt,
                      __global uint *sum, uint sw, __global uint *mn, __global uint *mx,
                      __global uint *mnhi, __global uint *mxhi, __global int *emax,
                      __global uint *fl, __global uint *ctl)
{
    if (get_global_id(0) == 0) {
        ctl[0] = 0;
        ctl[1] = 0;
        ctl[2] = 0;
        ctl[3] = 0;
    }
    COPROC_FOR_EACH_ROW(s, cap) {
        for (uint j = 0; j < nw; j++)
            words[s * nw + j] = 0;
        cnt[s] = 0;
        if (what & GB_INIT_SUM)
            for (uint j = 0; j < sw; j++)
                sum[s * sw + j] = 0;
        if (what & GB_INIT_MM) {
            mn[s] = 0xFFFFFFFFu;
            mx[s] = 0;
        }
        if (what & GB_INIT_HI) {
            mnhi[s] = 0xFFFFFFFFu;
            mxhi[s] = 0;
        }
        if (what & GB_INIT_EMAX)
            emax[s] = INT_MIN;
        if (what & GB_INIT_FL)
            fl[s] = 0;
    }
}

/* ---------------------------------------------------------------- pass 1: insert */

#define GB_P1_ARGS_plain
#define GB_P1_WORK_plain
#define GB_P1_ARGS_v64 , __global const ulong *vals, ulong flip, __global uint *mnhi,          \
                       __global uint *mxhi
#define GB_P1_WORK_v64                                                                   \
    {                                                                                    \
        uint hi = (uint)((vals[i] ^ flip) >> 32);                                        \
        atomic_min(&mnhi[s], hi);                                                        \
        atomic_max(&mxhi[s], hi);                                                        \
    }
#define GB_P1_ARGS_f32 , __global const uint *vals, __global int *emax
#define GB_P1_WORK_f32                                                                   \
    {                                                                                    \
        uint a = vals[i] & 0x7FFFFFFFu;                                                  \
        if (a != 0 && a < 0x7F800000u) /* finite, not zero */                           \
            atomic_max(&emax[s], gb_exp32(a));                                           \
    }
#define GB_P1_ARGS_f64 , __global const ulong *vals, __global int *emax,                     \
                       __global uint *mnhi, __global uint *mxhi
#define GB_P1_WORK_f64                                                                   \
    {                                                                                    \
        ulong b = vals[i], a = b & 0x7FFFFFFFFFFFFFFFUL;                                 \
        if (a <= 0x7FF0000000000000UL) { /* not NaN */                                  \
            uint hi = (uint)(gb_ord64(b) >> 32);                                         \
            atomic_min(&mnhi[s], hi);                                                    \
            atomic_max(&mxhi[s], hi);                                                    \
            if (a != 0 && a < 0x7FF0000000000000UL) /* finite, not zero */              \
                atomic_max(&emax[s], gb_exp64(a));                                       \
        }                                                                                \
    }

/* On the CPU path (one work-item per group) pass 1 keeps the keys it has placed
 * in a direct-mapped key -> slot cache in local memory, its own: a slot never
 * changes once claimed, so a hit skips the table and its atomics (the claim is
 * an atomic_cmpxchg even when the key is already there). GPUs go to the table. */
#define GB_CACHE 1024
#if COPROC_CPU
#define GB_CACHE_DECL(KT)                                                                \
    __local KT ck[GB_CACHE];                                                             \
    __local uint cs[GB_CACHE];                                                           \
    for (uint c = 0; c < GB_CACHE; c++)                                                  \
        cs[c] = GB_NONE;
#define GB_CACHE_FIND(key, s)                                                            \
    uint ch = (uint)((ulong)(key) * 0x9E3779B97F4A7C15UL >> 54);                         \
    s = cs[ch];                                                                          \
    if (s == GB_NONE || ck[ch] != (key))
#define GB_CACHE_PUT(key, s)                                                             \
    ck[ch] = (key);                                                                      \
    cs[ch] = s;
#else
#define GB_CACHE_DECL(KT)
#define GB_CACHE_FIND(key, s) if (1)
#define GB_CACHE_PUT(key, s)
#endif

/* Where the driver stops a work-item's loops after so many steps in all
 * (COPROC_MAX_ROWS_PER_ITEM is defined under quirk loop-65535), a probe loop
 * stopped so can end as if it had found its slot (seen on Mesa 22.3.6: a wrong
 * slot, no flag), and the row loop then stops: the rows placed may even be all
 * of them. Once stopped, every later loop stops after one trip, so a two-trip
 * loop after the rows (its step read from memory: no compiler can count its
 * trips) runs once exactly when some loop was stopped; the work-item then
 * reports no rows placed and the host runs pass 1 again, fewer rows each.
 * ctl[3] is 0 (gb_init) and nobody writes it in pass 1. */
#ifdef COPROC_MAX_ROWS_PER_ITEM
#define GB_LOOP_CANARY(ctl, placed)                                                      \
    {                                                                                    \
        uint trips = 0;                                                                  \
        for (uint c = 0; c < 2; c += 1 + *(volatile __global uint *)&ctl[3])             \
            trips++;                                                                     \
        if (trips != 2)                                                                  \
            placed = 0;                                                                  \
    }
#else
#define GB_LOOP_CANARY(ctl, placed)
#endif

/* Keys are read as raw bits: uint for 32-bit keys, ulong for 64-bit keys. */
#define GB_PASS1(NAME, KT, W, VC)                                                        \
    __kernel void NAME(__global const KT *keys, ulong n, __global uint *words, uint mask,   \
                       volatile __global uint *ctl, uint sample, uint limit,             \
                       __global uint *row_slot GB_P1_ARGS_##VC)                          \
    {                                                                                    \
        GB_CACHE_DECL(KT)                                                                \
        uint seen = 0, placed = 0;                                                       \
        COPROC_FOR_EACH_ROW(i, n) {                                                      \
            /* the table overflowed: the host starts again. An atomic read of the   */  \
            /* flag every GB_CTL_EVERY rows: stopping late only wastes work.        */  \
            if ((seen++ & (GB_CTL_EVERY - 1)) == 0 && atomic_or(&ctl[0], 0u))            \
                break;                                                                   \
            KT key = keys[i];                                                            \
            uint s;                                                                      \
            GB_CACHE_FIND(key, s)                                                        \
            {                                                                            \
                s = gb_insert_w##W(words, mask, (ulong)key, ctl, sample, limit);         \
                if (s == GB_NONE)                                                        \
                    break;                                                               \
                GB_CACHE_PUT(key, s)                                                     \
            }                                                                            \
            row_slot[i] = s;                                                             \
            GB_P1_WORK_##VC                                                              \
            placed++;                                                                    \
        }                                                                                \
        GB_LOOP_CANARY(ctl, placed)                                                      \
        /* ctl[2] = the rows placed: the host sees any left out                  */  \
        if (placed)                                                                      \
            atomic_add(&ctl[2], placed);                                                 \
    }


GB_PASS1(gb_insert_k32_plain, uint, 2, plain)
GB_PASS1(gb_insert_k64_plain, ulong, 3, plain)
GB_PASS1(gb_insert_k32_v64, uint, 2, v64)
GB_PASS1(gb_insert_k64_v64, ulong, 3, v64)
GB_PASS1(gb_insert_k32_f32, uint, 2, f32)
GB_PASS1(gb_insert_k64_f32, ulong, 3, f32)
#ifdef COPROC_FP64
GB_PASS1(gb_insert_k32_f64, uint, 2, f64)
GB_PASS1(gb_insert_k64_f64, ulong, 3, f64)
#endif

/* ---------------------------------------------------------------- pass 2: aggregate */

/* Local-table operations. On the CPU path a work-group is one work-item
 * (coproc__geometry_for), so its local table needs no atomics. */
#if COPROC_CPU
static inline uint gb_lxadd(__local uint *p, uint v)
{
    uint o = *p;
    *p = o + v;
    return o;
}
static inline uint gb_lxcmpxchg(__local uint *p, uint cmp, uint v)
{
    uint o = *p;
    if (o == cmp)
        *p = v;
    return o;
}
#define GB_LADD(p, v) gb_lxadd((p), (v))
#define GB_LCMPXCHG(p, c, v) gb_lxcmpxchg((p), (c), (v))
#define GB_LMIN(p, v) (*(p) = min(*(p), (v)))
#define GB_LMAX(p, v) (*(p) = max(*(p), (v)))
#define GB_LOR(p, v) (*(p) |= (v))
#else
#define GB_LADD(p, v) atomic_add((p), (v))
#define GB_LCMPXCHG(p, c, v) atomic_cmpxchg((p), (c), (v))
#define GB_LMIN(p, v) atomic_min((p), (v))
#define GB_LMAX(p, v) atomic_max((p), (v))
#define GB_LOR(p, v) atomic_or((p), (v))
#endif
#define GB_GADD(p, v) atomic_add((p), (v))

/* w[0..nw) += x[0..nw) as one multi-word integer (wrapping), word by word: an
 * atomic add that wraps a word reports it through its old value, and exactly
 * that carry goes into the next word. */
#define GB_DEFINE_ADDW(NAME, AS, ADD)                                                    \
    static inline void NAME(AS uint *w, const uint *x, uint nw)                          \
    {                                                                                    \
        uint c = 0;                                                                      \
        for (uint j = 0; j < nw; j++) {                                                  \
            uint a = x[j] + c;                                                           \
            uint carry = a < c; /* x[j] + c wrapped (then a == 0) */                     \
            if (a != 0) {                                                                \
                uint old = ADD(&w[j], a);                                                \
                carry += old + a < old;                                                  \
            }                                                                            \
            c = carry;                                                                   \
        }                                                                                \
    }
GB_DEFINE_ADDW(gb_addw_local, __local, GB_LADD)
GB_DEFINE_ADDW(gb_addw_global, __global, GB_GADD)

/* One row's (or one local entry's) contribution; min/max hold the encoding's
 * identity (0xFFFFFFFF / 0) when the row does not take part. */
typedef struct gb_contrib {
    uint sum[4];
    uint mn, mx, fl;
} gb_contrib;

static inline void gb_apply_global(uint s, uint count, const gb_contrib *c, uint sw, uint mm, uint fls,
                            __global uint *cnt, __global uint *sum, __global uint *mn,
                            __global uint *mx, __global uint *fl)
{
    atomic_add(&cnt[s], count);
    if (sw)
        gb_addw_global(sum + (size_t)s * sw, c->sum, sw);
    if (mm) { /* identities (a row that does not take part) need no atomic */
        if (c->mn != 0xFFFFFFFFu)
            atomic_min(&mn[s], c->mn);
        if (c->mx != 0u)
            atomic_max(&mx[s], c->mx);
    }
    if (fls && c->fl)
        atomic_or(&fl[s], c->fl);
}

/* The local-table entry of global slot s, or -1 when its probes are full. */
static inline int gb_local_slot(__local uint *lk, uint L, uint s)
{
    uint h = mul_hi(s * 0x9E3779B1u, L);
    for (uint p = 0; p < GB_LOCAL_PROBES; p++) {
        uint cur = GB_LCMPXCHG(&lk[h], GB_NONE, s);
        if (cur == GB_NONE || cur == s)
            return (int)h;
        h = h + 1 == L ? 0 : h + 1;
    }
    return -1;
}

/* The same for the float64 of bits b: m shifted by max(E, 1) - 981 - emax. */
static inline void gb_fix64(ulong b, int emax, uint *x)
{
    ulong a = b & 0x7FFFFFFFFFFFFFFFUL;
    uint E = (uint)(a >> 52);
    ulong m = E ? (a & 0xFFFFFFFFFFFFFUL) | 0x10000000000000UL : a;
    gb_fix_place(m, (int)max(E, 1u) - 981 - emax, (uint)(b >> 63), x);
}

#define GB_P2_ARGS_none
#define GB_CONTRIB_none
#define GB_P2_ARGS_v32 , __global const uint *vals, uint flip, uint sign_extend
#define GB_CONTRIB_v32                                                                   \
    {                                                                                    \
        uint x = vals[i];                                                                \
        c.sum[0] = x;                                                                    \
        c.sum[1] = sign_extend && (int)x < 0 ? 0xFFFFFFFFu : 0u;                          \
        c.mn = c.mx = x ^ flip;                                                          \
    }
#define GB_P2_ARGS_v64 , __global const ulong *vals, ulong flip, __global const uint *mnhi,    \
                       __global const uint *mxhi
#define GB_CONTRIB_v64                                                                   \
    {                                                                                    \
        ulong x = vals[i];                                                               \
        c.sum[0] = (uint)x;                                                              \
        c.sum[1] = (uint)(x >> 32);                                                      \
        ulong o = x ^ flip;                                                              \
        uint hi = (uint)(o >> 32);                                                       \
        c.mn = hi == mnhi[s] ? (uint)o : 0xFFFFFFFFu;                                    \
        c.mx = hi == mxhi[s] ? (uint)o : 0u;                                             \
    }
#define GB_P2_ARGS_f32 , __global const uint *vals, __global const int *emax
#define GB_CONTRIB_f32                                                                   \
    {                                                                                    \
        uint b = vals[i], a = b & 0x7FFFFFFFu;                                           \
        if (a > 0x7F800000u) {                                                           \
            c.fl = GB_FL_NAN;                                                            \
        } else {                                                                         \
            c.mn = c.mx = gb_ord32(b);                                                   \
            if (a == 0x7F800000u)                                                        \
                c.fl = (b >> 31) ? GB_FL_NINF : GB_FL_PINF;                              \
            else if (a != 0)                                                             \
                gb_fix32(b, emax[s], c.sum);                                             \
        }                                                                                \
    }
#define GB_P2_ARGS_f64 , __global const ulong *vals, __global const int *emax,                \
                       __global const uint *mnhi, __global const uint *mxhi
#define GB_CONTRIB_f64                                                                   \
    {                                                                                    \
        ulong b = vals[i], a = b & 0x7FFFFFFFFFFFFFFFUL;                                 \
        if (a > 0x7FF0000000000000UL) {                                                  \
            c.fl = GB_FL_NAN;                                                            \
        } else {                                                                         \
            ulong o = gb_ord64(b);                                                       \
            uint hi = (uint)(o >> 32);                                                   \
            c.mn = hi == mnhi[s] ? (uint)o : 0xFFFFFFFFu;                                \
            c.mx = hi == mxhi[s] ? (uint)o : 0u;                                         \
            if (a == 0x7FF0000000000000UL)                                               \
                c.fl = (b >> 63) ? GB_FL_NINF : GB_FL_PINF;                              \
            else if (a != 0)                                                             \
                gb_fix64(b, emax[s], c.sum);                                             \
        }                                                                                \
    }

/* SW: sum words; MM: has min/max; FL: has float flags. The local table is L
 * entries of 2 + SW + 2 MM + FL words (group_by.c's local_words must agree). */
#define GB_PASS2(NAME, VC, SW, MM, FL)                                                   \
    __kernel void NAME(__global const uint *row_slot, ulong n GB_P2_ARGS_##VC,           \
                       __global uint *cnt, __global uint *sum, __global uint *mn,        \
                       __global uint *mx, __global uint *fl, __local uint *lm, uint L)   \
    {                                                                                    \
        __local uint *lk = lm, *lc = lm + L, *lsum = lm + 2 * L;                         \
        __local uint *lmn = lsum + SW * L, *lmx = lmn + MM * L, *lfl = lmx + MM * L;     \
        for (uint l = get_local_id(0); l < L; l += get_local_size(0)) {                  \
            lk[l] = GB_NONE;                                                             \
            lc[l] = 0;                                                                   \
            for (uint j = 0; j < SW; j++)                                                \
                lsum[l * SW + j] = 0;                                                    \
            if (MM) {                                                                    \
                lmn[l] = 0xFFFFFFFFu;                                                    \
                lmx[l] = 0;                                                              \
            }                                                                            \
            if (FL)                                                                      \
                lfl[l] = 0;                                                              \
        }                                                                                \
        barrier(CLK_LOCAL_MEM_FENCE);                                                    \
        COPROC_FOR_EACH_ROW(i, n) {                                                      \
            uint s = row_slot[i];                                                        \
            gb_contrib c = {{0, 0, 0, 0}, 0xFFFFFFFFu, 0u, 0u};                          \
            GB_CONTRIB_##VC                                                              \
            int h = gb_local_slot(lk, L, s);                                             \
            if (h >= 0) {                                                                \
                GB_LADD(&lc[h], 1u);                                                     \
                if (SW)                                                                  \
                    gb_addw_local(lsum + h * SW, c.sum, SW);                             \
                if (MM) {                                                                \
                    if (c.mn != 0xFFFFFFFFu)                                             \
                        GB_LMIN(&lmn[h], c.mn);                                          \
                    if (c.mx != 0u)                                                      \
                        GB_LMAX(&lmx[h], c.mx);                                          \
                }                                                                        \
                if (FL && c.fl)                                                          \
                    GB_LOR(&lfl[h], c.fl);                                               \
            } else {                                                                     \
                gb_apply_global(s, 1u, &c, SW, MM, FL, cnt, sum, mn, mx, fl);            \
            }                                                                            \
        }                                                                                \
        barrier(CLK_LOCAL_MEM_FENCE);                                                    \
        for (uint l = get_local_id(0); l < L; l += get_local_size(0)) {                  \
            uint s = lk[l];                                                              \
            if (s == GB_NONE)                                                            \
                continue;                                                                \
            gb_contrib c = {{0, 0, 0, 0}, 0xFFFFFFFFu, 0u, 0u};                          \
            for (uint j = 0; j < SW; j++)                                                \
                c.sum[j] = lsum[l * SW + j];                                             \
            if (MM) {                                                                    \
                c.mn = lmn[l];                                                           \
                c.mx = lmx[l];                                                           \
            }                                                                            \
            if (FL)                                                                      \
                c.fl = lfl[l];                                                           \
            gb_apply_global(s, lc[l], &c, SW, MM, FL, cnt, sum, mn, mx, fl);             \
        }                                                                                \
    }

/* Sums and counts of 64-bit integers, no min/max (pass 1 was gb_insert_*_plain). */
#define GB_P2_ARGS_s64 , __global const ulong *vals
#define GB_CONTRIB_s64                                                                   \
    {                                                                                    \
        ulong x = vals[i];                                                               \
        c.sum[0] = (uint)x;                                                              \
        c.sum[1] = (uint)(x >> 32);                                                      \
    }

GB_PASS2(gb_aggregate_none, none, 0, 0, 0)
GB_PASS2(gb_aggregate_v32, v32, 2, 1, 0)
GB_PASS2(gb_aggregate_v64, v64, 2, 1, 0)
GB_PASS2(gb_aggregate_v32_sum, v32, 2, 0, 0) /* no min/max asked */
GB_PASS2(gb_aggregate_v64_sum, s64, 2, 0, 0)
GB_PASS2(gb_aggregate_f32, f32, 4, 1, 1)
#ifdef COPROC_FP64
GB_PASS2(gb_aggregate_f64, f64, 4, 1, 1)
#endif

/* ---------------------------------------------------------------- numbering, output */

__kernel void gb_flags(__global const uint *cnt, ulong cap, __global uint *flags)
{
    COPROC_FOR_EACH_ROW(s, cap) { flags[s] = cnt[s] != 0; }
}

/* Group g is slot pos[g]; it is written at dest[g] when use_dest, else at g. */
#define GB_DEST(g) (use_dest ? dest[g] : (uint)(g))

__kernel void gb_final_keys_w2(__global const uint *pos, ulong groups, __global const uint *words,
                               __global const uint *dest, uint use_dest, __global uint *out)
{
    COPROC_FOR_EACH_ROW(g, groups) {
        __global const uint *w = words + (size_t)pos[g] * 2;
        out[GB_DEST(g)] = (w[0] & GB_LOW31) | (w[1] << 31);
    }
}

__kernel void gb_final_keys_w3(__global const uint *pos, ulong groups, __global const uint *words,
                               __global const uint *dest, uint use_dest, __global ulong *out)
{
    COPROC_FOR_EACH_ROW(g, groups) {
        __global const uint *w = words + (size_t)pos[g] * 3;
        out[GB_DEST(g)] = (ulong)(w[0] & GB_LOW31) | ((ulong)(w[1] & GB_LOW31) << 31) |
                          ((ulong)w[2] << 62);
    }
}

#define GB_FA_none
#define GB_FW_none
#define GB_FA_v32 , __global const uint *sum, __global const uint *mn, __global const uint *mx, \
                  uint flip, __global ulong *out_sum, __global uint *out_min,             \
                  __global uint *out_max
#define GB_FW_v32                                                                        \
    out_sum[d] = (ulong)sum[2 * s] | ((ulong)sum[2 * s + 1] << 32);                      \
    out_min[d] = mn[s] ^ flip;                                                           \
    out_max[d] = mx[s] ^ flip;
#define GB_FA_v64 , __global const uint *sum, __global const uint *mn, __global const uint *mx, \
                  __global const uint *mnhi, __global const uint *mxhi, ulong flip,      \
                  __global ulong *out_sum, __global ulong *out_min, __global ulong *out_max
#define GB_FW_v64                                                                        \
    out_sum[d] = (ulong)sum[2 * s] | ((ulong)sum[2 * s + 1] << 32);                      \
    out_min[d] = (((ulong)mnhi[s] << 32) | mn[s]) ^ flip;                                \
    out_max[d] = (((ulong)mxhi[s] << 32) | mx[s]) ^ flip;
/* Integer sums (two words a slot) without min/max. */
#define GB_FA_sum , __global const uint *sum, __global ulong *out_sum
#define GB_FW_sum out_sum[d] = (ulong)sum[2 * s] | ((ulong)sum[2 * s + 1] << 32);

/* The float sum: the fixed-point accumulator rounded to the output format
 * (float64 with fp64, else float32), then the flags; as bits, built with
 * integer operations only, so that a device that flushes subnormals still
 * writes a subnormal sum (and no float arithmetic rounds twice). */
#ifdef COPROC_FP64
#define GB_SUM_BITS_T ulong
#define GB_SUM_P 53 /* significand bits */
#define GB_SUM_B 1023 /* exponent bias */
#else
#define GB_SUM_BITS_T uint
#define GB_SUM_P 24
#define GB_SUM_B 127
#endif
#define GB_SUM_SIGN ((GB_SUM_BITS_T)1 << (8 * sizeof(GB_SUM_BITS_T) - 1))
#define GB_SUM_INF ((GB_SUM_BITS_T)(2 * GB_SUM_B + 1) << (GB_SUM_P - 1))
#define GB_SUM_NAN (GB_SUM_INF | (GB_SUM_BITS_T)1 << (GB_SUM_P - 2))

/* x x 2^lsb (x: a 128-bit magnitude, not 0) rounded to nearest, ties to even,
 * in the binary format of P significand bits and exponent bias B: its bits
 * without the sign, subnormal results included, infinity past the largest. */
static inline ulong gb_round_bits(const uint *x, int lsb, int P, int B)
{
    ulong hi = ((ulong)x[3] << 32) | x[2], lo = ((ulong)x[1] << 32) | x[0];
    int t = hi ? 127 - (int)clz(hi) : 63 - (int)clz(lo); /* x's top bit */
    int q = max(t + lsb - (P - 1), 2 - B - P); /* the result's last bit is 2^q */
    int r = q - lsb;                           /* x's bits below it */
    ulong m;
    if (r <= 0) {
        m = lo << -r; /* x < 2^P here */
    } else {
        m = r >= 64 ? hi >> (r - 64) : (lo >> r) | (hi << (64 - r));
        ulong rb = r > 64 ? (hi >> (r - 65)) & 1 : (lo >> (r - 1)) & 1;
        ulong rest = r > 65    ? lo | (hi & ((1UL << (r - 65)) - 1))
                     : r == 65 ? lo
                               : lo & ((1UL << (r - 1)) - 1);
        if (rb && (rest || (m & 1)))
            m++;
    }
    if (m >> P) { /* rounded up to 2^P */
        m >>= 1;
        q++;
    }
    ulong E = (m >> (P - 1)) ? (ulong)(q + (P - 1) + B) : 0; /* 0: subnormal */
    if (E > (ulong)(2 * B))
        return (ulong)(2 * B + 1) << (P - 1);
    return (E << (P - 1)) | (m & ((1UL << (P - 1)) - 1));
}

static inline GB_SUM_BITS_T gb_float_sum(__global const uint *w, int emax, uint fl)
{
    if ((fl & GB_FL_NAN) || (fl & (GB_FL_PINF | GB_FL_NINF)) == (GB_FL_PINF | GB_FL_NINF))
        return GB_SUM_NAN;
    if (fl & GB_FL_PINF)
        return GB_SUM_INF;
    if (fl & GB_FL_NINF)
        return GB_SUM_SIGN | GB_SUM_INF;
    if (emax == INT_MIN)
        return 0; /* only zeros */
    uint x[4] = {w[0], w[1], w[2], w[3]};
    int neg = x[3] >> 31;
    if (neg)
        gb_neg128(x);
    if ((x[0] | x[1] | x[2] | x[3]) == 0)
        return 0;
    GB_SUM_BITS_T r = (GB_SUM_BITS_T)gb_round_bits(x, emax - 94, GB_SUM_P, GB_SUM_B);
    return neg ? r | GB_SUM_SIGN : r;
}

#define GB_FA_f32 , __global const uint *sum, __global const uint *mn, __global const uint *mx, \
                  __global const int *emax, __global const uint *fl,                     \
                  __global GB_SUM_BITS_T *out_sum, __global uint *out_min,              \
                  __global uint *out_max
#define GB_FW_f32                                                                        \
    out_sum[d] = gb_float_sum(sum + (size_t)s * 4, emax[s], fl[s]);                      \
    out_min[d] = mn[s] == 0xFFFFFFFFu ? 0x7FC00000u : gb_unord32(mn[s]);                 \
    out_max[d] = mx[s] == 0u ? 0x7FC00000u : gb_unord32(mx[s]);
#define GB_FA_f64 , __global const uint *sum, __global const uint *mn, __global const uint *mx, \
                  __global const uint *mnhi, __global const uint *mxhi,                  \
                  __global const int *emax, __global const uint *fl,                     \
                  __global ulong *out_sum, __global ulong *out_min, __global ulong *out_max
#define GB_FW_f64                                                                        \
    {                                                                                    \
        ulong omn = ((ulong)mnhi[s] << 32) | mn[s], omx = ((ulong)mxhi[s] << 32) | mx[s];  \
        out_sum[d] = gb_float_sum(sum + (size_t)s * 4, emax[s], fl[s]);                  \
        out_min[d] = omn == 0xFFFFFFFFFFFFFFFFUL ? 0x7FF8000000000000UL : gb_unord64(omn); \
        out_max[d] = omx == 0UL ? 0x7FF8000000000000UL : gb_unord64(omx);                \
    }

/* Counts, and for values sums, minima and maxima, of group g at GB_DEST(g). */
#define GB_FINAL(NAME, VC)                                                               \
    __kernel void NAME(__global const uint *pos, ulong groups, __global const uint *dest, \
                       uint use_dest, __global const uint *cnt,                          \
                       __global ulong *out_count GB_FA_##VC)                             \
    {                                                                                    \
        COPROC_FOR_EACH_ROW(g, groups) {                                                 \
            uint s = pos[g], d = GB_DEST(g);                                             \
            out_count[d] = cnt[s];                                                       \
            GB_FW_##VC                                                                   \
        }                                                                                \
    }

GB_FINAL(gb_final_none, none)
GB_FINAL(gb_final_v32, v32)
GB_FINAL(gb_final_v64, v64)
GB_FINAL(gb_final_sum, sum)
GB_FINAL(gb_final_f32, f32)
#ifdef COPROC_FP64
GB_FINAL(gb_final_f64, f64)
#endif

/* rank[perm[j]] = j: the inverse of a sorting permutation. */
__kernel void gb_invert(__global const uint *perm, ulong n, __global uint *rank)
{
    COPROC_FOR_EACH_ROW(j, n) { rank[perm[j]] = (uint)j; }
}

/* ---------------------------------------------------------------- dense keys
 *
 * When the keys span a small range (group_by.c decides from gb_key_range's
 * minimum and maximum), a key's slot is key - base: no hashing, no slot map,
 * one pass over the rows, groups come out in key order. Integer values (or
 * none) only; float values take the hash path above.
 *
 * CPU path: work-item p owns a private table of `range` entries at
 * part + p * range and walks one contiguous chunk of rows with plain
 * operations and native 64-bit sums (wrapping, so exact mod 2^64 in any
 * order); gb_dmerge_* then adds the P tables slot by slot into the per-slot
 * arrays that gb_final_* read. GPU path: one table of per-slot words (as the
 * hash path's: 32-bit atomics, sums with explicit carries); a work-group
 * aggregates into a local copy of it when the range fits local memory (L > 0)
 * and adds its non-empty entries to the global table at the end, else rows go
 * to the global table directly. 64-bit values are not dense on the GPU path
 * (their min/max need the hash path's two phases). */

/* Per work-group minimum and maximum of the keys' ordered form (raw ^ flip),
 * as ulong pairs at out[2 * group]: each work-item's (lo, hi), then the group's. */
#define GB_RANGE_GROUP(lo, hi, out, scratch)                                             \
    {                                                                                    \
        uint lid = get_local_id(0), ls = get_local_size(0);                              \
        scratch[lid] = lo;                                                               \
        scratch[ls + lid] = hi;                                                          \
        for (uint s = ls; s > 1;) {                                                      \
            uint h = (s + 1) / 2;                                                        \
            barrier(CLK_LOCAL_MEM_FENCE);                                                \
            if (lid + h < s) {                                                           \
                scratch[lid] = min(scratch[lid], scratch[lid + h]);                      \
                scratch[ls + lid] = max(scratch[ls + lid], scratch[ls + lid + h]);       \
            }                                                                            \
            s = h;                                                                       \
        }                                                                                \
        if (lid == 0) {                                                                  \
            out[2 * get_group_id(0)] = scratch[0];                                       \
            out[2 * get_group_id(0) + 1] = scratch[ls];                                  \
        }                                                                                \
    }

#define GB_DEFINE_RANGE(NAME, KT)                                                        \
    __kernel void NAME(__global const KT *keys, ulong n, ulong flip,                     \
                       __global ulong *out, __local ulong *scratch)                      \
    {                                                                                    \
        ulong lo = ULONG_MAX, hi = 0;                                                    \
        COPROC_FOR_EACH_ROW(i, n) {                                                      \
            ulong o = (ulong)keys[i] ^ flip;                                             \
            lo = min(lo, o);                                                             \
            hi = max(hi, o);                                                             \
        }                                                                                \
        GB_RANGE_GROUP(lo, hi, out, scratch)                                             \
    }
GB_DEFINE_RANGE(gb_key_range_k64, ulong)

/* Row i valid in bitmap v (NULL: every row is). */
#define GB_VALID(v, i) (!(v) || (((v)[(i) >> 5] >> ((uint)(i) & 31u)) & 1u))

/* The range of the valid keys only (a null key's bits are anything). */
#define GB_DEFINE_RANGE_VALID(NAME, KT)                                                  \
    __kernel void NAME(__global const KT *keys, ulong n, ulong flip,                     \
                       __global const uint *kvalid, __global ulong *out,                 \
                       __local ulong *scratch)                                           \
    {                                                                                    \
        ulong lo = ULONG_MAX, hi = 0;                                                    \
        COPROC_FOR_EACH_ROW(i, n) {                                                      \
            ulong o = (ulong)keys[i] ^ flip;                                             \
            if (GB_VALID(kvalid, i)) {                                                   \
                lo = min(lo, o);                                                         \
                hi = max(hi, o);                                                         \
            }                                                                            \
        }                                                                                \
        GB_RANGE_GROUP(lo, hi, out, scratch)                                             \
    }
GB_DEFINE_RANGE_VALID(gb_key_range_valid_k32, uint)
GB_DEFINE_RANGE_VALID(gb_key_range_valid_k64, ulong)

#if COPROC_CPU
/* 32-bit keys on the CPU path: a work-item's chunk 8 keys a step in uint
 * lanes (the row loop in ulong stays scalar, and took about half as long as
 * the dense pass that follows it). */
__kernel void gb_key_range_k32(__global const uint *keys, ulong n, ulong flip,
                               __global ulong *out, __local ulong *scratch)
{
    ulong chunk = (n + get_global_size(0) - 1) / get_global_size(0);
    ulong i = min(n, get_global_id(0) * chunk), end = min(n, i + chunk);
    uint8 f = (uint8)((uint)flip), vlo = (uint8)(UINT_MAX), vhi = (uint8)(0);
    for (; i + 8 <= end; i += 8) {
        uint8 o = vload8(0, keys + i) ^ f;
        vlo = min(vlo, o);
        vhi = max(vhi, o);
    }
    uint4 lo4 = min(vlo.lo, vlo.hi), hi4 = max(vhi.lo, vhi.hi);
    uint2 lo2 = min(lo4.lo, lo4.hi), hi2 = max(hi4.lo, hi4.hi);
    uint lo32 = min(lo2.x, lo2.y), hi32 = max(hi2.x, hi2.y);
    for (; i < end; i++) {
        uint o = keys[i] ^ (uint)flip;
        lo32 = min(lo32, o);
        hi32 = max(hi32, o);
    }
    ulong lo = lo32, hi = hi32; /* a work-item without rows: UINT_MAX, 0 (neutral) */
    GB_RANGE_GROUP(lo, hi, out, scratch)
}
#else
GB_DEFINE_RANGE(gb_key_range_k32, uint)
#endif

/* Group g's key: base + its slot, in the key's width (wrapping). */
__kernel void gb_dense_keys_k32(__global const uint *pos, ulong groups, uint base,
                                __global uint *out)
{
    COPROC_FOR_EACH_ROW(g, groups) { out[g] = base + pos[g]; }
}
__kernel void gb_dense_keys_k64(__global const uint *pos, ulong groups, ulong base,
                                __global ulong *out)
{
    COPROC_FOR_EACH_ROW(g, groups) { out[g] = base + pos[g]; }
}

/* The value of row i as it is added (sum) and compared (ordered form). */
#define GB_DV_i32 (ulong)(long)(int)x
#define GB_DV_u32 (ulong)x
#define GB_DV_v64 x

#if COPROC_CPU

/* Private table entries (group_by.c allocates DENSE_ENTRY_* bytes each). */
typedef struct gb_de32 {
    ulong sum;
    uint cnt, mn, mx, pad;
} gb_de32;
typedef struct gb_de64 {
    ulong sum, mn, mx;
    uint cnt, pad;
} gb_de64;

/* Nulls (the CPU path): kvalid / vvalid are the keys' / values' validity
 * bitmaps, or NULL (no nulls). A row with a null key goes to the last slot,
 * range - 1, which group_by.c adds for it (the null group). A row with a null
 * value counts in its group's rows (the group exists) but adds nothing: the
 * entry's pad counts those rows, and gb_dmerge_* takes them out of the count. */
#define GB_BIT(v, i) (((v)[(i) >> 5] >> ((uint)(i) & 31u)) & 1u)
#define GB_DENSE_SLOT(kok, i) ((kok) ? (uint)(keys[i] - base) : (uint)(range - 1))
/* The rows of a work-item's chunk [i, end) with nulls, a validity word (32
 * rows) at a time: ROWS(KOK, VOK, ...) runs the rows up to `stop` with KOK /
 * VOK (whether row i's key / value is valid) the constant 1 for a word
 * whose rows are all valid (most, where nulls are few: the null-free loop).
 * Null values alone under sums and counts (MM 0): the word's rows run as
 * valid, then UNDO takes its null rows' values back out (integer sums wrap:
 * exactly), as testing each row cost about twice the null-free row. A word
 * with null keys runs as runs of rows whose keys are all valid or all null
 * (GB_KEY_RUNS), KOK a constant in each: a null key's garbage is never
 * read, and the valid rows take the null-free loop. Without nulls, the
 * null-free loop. */
#define GB_WORD_ROWS(ROWS, UNDO, VT, ET, DV, MM, ...)                                    \
    if (!kvalid && !vvalid) {                                                            \
        ulong stop = end;                                                                \
        ROWS(1u, 1u, __VA_ARGS__)                                                        \
    }                                                                                    \
    while ((kvalid || vvalid) && i < end && !out) {                                      \
        ulong stop = min(end, (i | 31) + 1), from = i;                                   \
        uint kw = kvalid ? kvalid[i >> 5] : ~0u, vw = vvalid ? vvalid[i >> 5] : ~0u;     \
        if ((kw & vw) == ~0u) {                                                          \
            ROWS(1u, 1u, __VA_ARGS__)                                                    \
        } else if (kw == ~0u && !(MM)) {                                                 \
            ROWS(1u, 1u, __VA_ARGS__)                                                    \
            UNDO(from, stop, vw, VT, ET, DV)                                             \
        } else if (!vvalid) {                                                            \
            GB_KEY_RUNS(ROWS, 1u, __VA_ARGS__)                                           \
        } else {                                                                         \
            GB_KEY_RUNS(ROWS, (vw >> ((uint)i & 31u)) & 1u, __VA_ARGS__)                 \
        }                                                                                \
    }

/* The rows [i, wstop) of one validity word kw of the keys, as runs of equal
 * bits: each run ends at the next row whose key bit differs (the lowest set
 * bit of the other bits from row i on; OpenCL C 1.2 has clz, not ctz), so a
 * run costs a loop entry and its rows, about as the per-row test did at
 * worst (alternating bits) and as the null-free loop where nulls are few. */
#define GB_KEY_RUNS(ROWS, VOK, ...)                                                      \
    for (ulong wstop = stop; i < wstop && !out;) {                                       \
        uint rel = (uint)i & 31u, kok = (kw >> rel) & 1u;                                \
        uint other = (kok ? ~kw : kw) >> rel;                                            \
        ulong stop = other ? min(wstop, i + (31 - clz(other & (0u - other)))) : wstop;   \
        if (kok) {                                                                       \
            ROWS(1u, VOK, __VA_ARGS__)                                                   \
        } else {                                                                         \
            ROWS(0u, VOK, __VA_ARGS__)                                                   \
        }                                                                                \
    }

/* The rows of [from, stop) whose bit of vw is 0 (a null value) taken out of
 * their entry's sum and counted in its pad (none when a window stopped:
 * its tables are not used, and its rows past the stop not in them). */
#define GB_UNDO_NONE(from, stop, vw, VT, ET, DV)
#define GB_UNDO_VALUES(from, stop, vw, VT, ET, DV)                                       \
    for (uint m = out ? 0u : ~vw; m != 0; m &= m - 1) {                                  \
        ulong j = ((from) & ~(ulong)31) + (31 - clz(m & (0u - m)));                      \
        if (j >= (from) && j < (stop)) {                                                 \
            __global ET *e = t + (uint)(keys[j] - base);                                 \
            VT x = vals[j];                                                              \
            ulong add = DV;                                                              \
            e->sum -= add;                                                               \
            e->pad++;                                                                    \
        }                                                                                \
    }

/* GB_DEFINE_DENSE's rows (GB_WORD_ROWS). */
#define GB_DENSE_ROWS(KOK, VOK, ET, VT, DV, MM)                                          \
    for (; i < stop; i++) {                                                              \
        uint vok = VOK;                                                                  \
        __global ET *e = t + GB_DENSE_SLOT(KOK, i);                                      \
        VT x = vals[i], o = x ^ flip;                                                    \
        ulong add = DV;                                                                  \
        e->cnt++;                                                                        \
        e->pad += vok ^ 1u;                                                              \
        e->sum += vok ? add : 0;                                                         \
        if (vok) {                                                                       \
            GB_DMM_ROW_##MM(e, o)                                                        \
        }                                                                                \
    }

/* Counts only. */
#define GB_DEFINE_DENSE_NONE(NAME, KT)                                                   \
    __kernel void NAME(__global const KT *keys, ulong n, KT base, ulong range,           \
                       __global const uint *kvalid, __global uint *part)                 \
    {                                                                                    \
        __global uint *t = part + get_global_id(0) * range;                              \
        for (ulong s = 0; s < range; s++)                                                \
            t[s] = 0;                                                                    \
        if (kvalid) {                                                                    \
            COPROC_FOR_EACH_ROW(i, n) { t[GB_DENSE_SLOT(GB_BIT(kvalid, i), i)]++; }      \
        } else {                                                                         \
            COPROC_FOR_EACH_ROW(i, n) { t[(uint)(keys[i] - base)]++; }                   \
        }                                                                                \
    }
GB_DEFINE_DENSE_NONE(gb_dense_k32_none, uint)
GB_DEFINE_DENSE_NONE(gb_dense_k64_none, ulong)

/* Sums and counts only (no min/max asked), whatever the value's width. */
typedef struct gb_des {
    ulong sum;
    uint cnt, pad;
} gb_des;

/* Min/max of one entry (MM 1) or nothing (MM 0): clearing, and one row's
 * ordered value o. New extremes are rare after a group's first rows: a
 * branch, no store, where min()/max() would store on every row. */
#define GB_DMM_CLEAR_0(e, VT)
#define GB_DMM_CLEAR_1(e, VT)                                                            \
    (e).mn = (VT) ~(VT)0;                                                                \
    (e).mx = 0;
#define GB_DMM_ROW_0(e, o)
#define GB_DMM_ROW_1(e, o)                                                               \
    if ((o) < (e)->mn)                                                                   \
        (e)->mn = (o);                                                                   \
    if ((o) > (e)->mx)                                                                   \
        (e)->mx = (o);

/* Values of raw type VT into entries ET; DV how a value widens into the sum;
 * MM whether min/max are kept (ET has mn/mx then). */
#define GB_DEFINE_DENSE(NAME, KT, VT, ET, DV, MM)                                        \
    __kernel void NAME(__global const KT *keys, ulong n, KT base, ulong range,           \
                       __global const uint *kvalid, __global const VT *vals, VT flip,    \
                       __global const uint *vvalid, __global ET *part)                   \
    {                                                                                    \
        __global ET *t = part + get_global_id(0) * range;                                \
        for (ulong s = 0; s < range; s++) {                                              \
            t[s].sum = 0;                                                                \
            t[s].cnt = 0;                                                                \
            t[s].pad = 0;                                                                \
            GB_DMM_CLEAR_##MM(t[s], VT)                                                  \
        }                                                                                \
        ulong chunk = (n + get_global_size(0) - 1) / get_global_size(0);                 \
        ulong i = min(n, get_global_id(0) * chunk), end = min(n, i + chunk);             \
        uint out = 0; /* never set: GB_WORD_ROWS's flag for gb_wdense_* */              \
        GB_WORD_ROWS(GB_DENSE_ROWS, GB_UNDO_VALUES, VT, ET, DV, MM, ET, VT, DV, MM)      \
    }
GB_DEFINE_DENSE(gb_dense_k32_i32, uint, uint, gb_de32, GB_DV_i32, 1)
GB_DEFINE_DENSE(gb_dense_k64_i32, ulong, uint, gb_de32, GB_DV_i32, 1)
GB_DEFINE_DENSE(gb_dense_k32_u32, uint, uint, gb_de32, GB_DV_u32, 1)
GB_DEFINE_DENSE(gb_dense_k64_u32, ulong, uint, gb_de32, GB_DV_u32, 1)
GB_DEFINE_DENSE(gb_dense_k32_v64, uint, ulong, gb_de64, GB_DV_v64, 1)
GB_DEFINE_DENSE(gb_dense_k64_v64, ulong, ulong, gb_de64, GB_DV_v64, 1)
GB_DEFINE_DENSE(gb_dense_k32_i32_sum, uint, uint, gb_des, GB_DV_i32, 0)
GB_DEFINE_DENSE(gb_dense_k64_i32_sum, ulong, uint, gb_des, GB_DV_i32, 0)
GB_DEFINE_DENSE(gb_dense_k32_u32_sum, uint, uint, gb_des, GB_DV_u32, 0)
GB_DEFINE_DENSE(gb_dense_k64_u32_sum, ulong, uint, gb_des, GB_DV_u32, 0)
GB_DEFINE_DENSE(gb_dense_k32_v64_sum, uint, ulong, gb_des, GB_DV_v64, 0)
GB_DEFINE_DENSE(gb_dense_k64_v64_sum, ulong, ulong, gb_des, GB_DV_v64, 0)

/* GB_DEFINE_WDENSE's rows (GB_WORD_ROWS). */
#define GB_WROWS(KOK, VOK, KT, VT, ET, ROW, MM, DV)                                       \
    for (; i < stop && !out; i++) { /* a flag, not a break (hash_join.cl) */              \
        uint kok = KOK;                                                                   \
        KT s = kok ? keys[i] - base : (KT)W;                                              \
        if (kok && s >= W)                                                                \
            out = 1;                                                                      \
        else                                                                              \
            ROW(ET, MM, DV, VT, VOK)                                                      \
    }

/* Windowed: the key range not measured first. Work-item p's table covers the
 * W slots from base_p = its first key - W / 2 (wrapping); it stops at a key
 * outside them. It leaves (base_p, the smallest and largest ordered key
 * (raw ^ kflip) it aggregated, 1 if it stopped) at win + 4 p: the host takes
 * the range from these, and gb_dmerge_* finds slot s of p at base + s - base_p.
 * The extremes come from the table's occupied slots after the rows (min/max
 * a row made the row loop twice as slow). None (values unused) or values as
 * GB_DEFINE_DENSE; USED(j) whether slot j holds rows. Tables of W + 1
 * entries: the last is the null keys' (kvalid, as GB_DENSE_SLOT), and the
 * window is around the first valid key. */
#define GB_DEFINE_WDENSE(NAME, KT, VT, ET, CLEAR, ROW, UNDO, USED, MM, DV)                \
    __kernel void NAME(__global const KT *keys, ulong n, ulong W, KT kflip,               \
                       __global const uint *kvalid, __global const VT *vals, VT flip,     \
                       __global const uint *vvalid, __global ET *part,                    \
                       __global ulong *win)                                               \
    {                                                                                     \
        __global ET *t = part + get_global_id(0) * (W + 1);                               \
        for (ulong s = 0; s <= W; s++) {                                                  \
            CLEAR                                                                         \
        }                                                                                 \
        ulong chunk = (n + get_global_size(0) - 1) / get_global_size(0);                  \
        ulong i = min(n, get_global_id(0) * chunk), end = min(n, i + chunk), f = i;       \
        while (kvalid && f < end && !GB_BIT(kvalid, f))                                   \
            f++;                                                                          \
        KT base = f < end ? keys[f] - (KT)(W / 2) : 0;                                    \
        uint out = 0;                                                                     \
        GB_WORD_ROWS(GB_WROWS, UNDO, VT, ET, DV, MM, KT, VT, ET, ROW, MM, DV)             \
        ulong lo = ULONG_MAX, hi = 0;                                                     \
        for (ulong j = 0; j < W; j++)                                                     \
            if (USED(j)) {                                                                \
                ulong o = (ulong)((KT)(base + (KT)j) ^ kflip);                            \
                lo = min(lo, o);                                                          \
                hi = max(hi, o);                                                          \
            }                                                                             \
        __global ulong *w = win + 4 * get_global_id(0);                                   \
        w[0] = (ulong)base;                                                               \
        w[1] = lo;                                                                        \
        w[2] = hi;                                                                        \
        w[3] = out;                                                                       \
    }
#define GB_WCLEAR_NONE t[s] = 0;
#define GB_WROW_NONE(ET, MM, DV, VT, VALID) t[(uint)s]++;
#define GB_WCLEAR(MM, VT)                                                                 \
    t[s].sum = 0;                                                                         \
    t[s].cnt = 0;                                                                         \
    t[s].pad = 0;                                                                         \
    GB_DMM_CLEAR_##MM(t[s], VT)
#define GB_WROW(ET, MM, DV, VT, VALID)                                                    \
    {                                                                                     \
        __global ET *e = t + (uint)s;                                                     \
        VT x = vals[i], o = x ^ flip;                                                     \
        uint vok = VALID;                                                                 \
        ulong add = DV;                                                                   \
        e->cnt++;                                                                         \
        e->pad += vok ^ 1u;                                                               \
        e->sum += vok ? add : 0;                                                          \
        if (vok) {                                                                        \
            GB_DMM_ROW_##MM(e, o)                                                         \
        }                                                                                 \
    }
#define GB_WUSED_NONE(j) (t[j] != 0)
#define GB_WUSED(j) (t[j].cnt != 0)
#define GB_DEFINE_WDENSE_V(NAME, KT, VT, ET, DV, MM)                                      \
    GB_DEFINE_WDENSE(NAME, KT, VT, ET, GB_WCLEAR(MM, VT), GB_WROW, GB_UNDO_VALUES, GB_WUSED, MM, \
                     DV)
GB_DEFINE_WDENSE(gb_wdense_k32_none, uint, uint, uint, GB_WCLEAR_NONE, GB_WROW_NONE,
                 GB_UNDO_NONE, GB_WUSED_NONE, 0, 0)
GB_DEFINE_WDENSE(gb_wdense_k64_none, ulong, uint, uint, GB_WCLEAR_NONE, GB_WROW_NONE,
                 GB_UNDO_NONE, GB_WUSED_NONE, 0, 0)
GB_DEFINE_WDENSE_V(gb_wdense_k32_i32, uint, uint, gb_de32, GB_DV_i32, 1)
GB_DEFINE_WDENSE_V(gb_wdense_k64_i32, ulong, uint, gb_de32, GB_DV_i32, 1)
GB_DEFINE_WDENSE_V(gb_wdense_k32_u32, uint, uint, gb_de32, GB_DV_u32, 1)
GB_DEFINE_WDENSE_V(gb_wdense_k64_u32, ulong, uint, gb_de32, GB_DV_u32, 1)
GB_DEFINE_WDENSE_V(gb_wdense_k32_v64, uint, ulong, gb_de64, GB_DV_v64, 1)
GB_DEFINE_WDENSE_V(gb_wdense_k64_v64, ulong, ulong, gb_de64, GB_DV_v64, 1)
GB_DEFINE_WDENSE_V(gb_wdense_k32_i32_sum, uint, uint, gb_des, GB_DV_i32, 0)
GB_DEFINE_WDENSE_V(gb_wdense_k64_i32_sum, ulong, uint, gb_des, GB_DV_i32, 0)
GB_DEFINE_WDENSE_V(gb_wdense_k32_u32_sum, uint, uint, gb_des, GB_DV_u32, 0)
GB_DEFINE_WDENSE_V(gb_wdense_k64_u32_sum, ulong, uint, gb_des, GB_DV_u32, 0)
GB_DEFINE_WDENSE_V(gb_wdense_k32_v64_sum, uint, ulong, gb_des, GB_DV_v64, 0)
GB_DEFINE_WDENSE_V(gb_wdense_k64_v64_sum, ulong, ulong, gb_des, GB_DV_v64, 0)

/* The P private tables added slot by slot into the per-slot arrays gb_final_*
 * read (sums as lo/hi words, min/max of 64-bit values as lo words + mnhi/mxhi),
 * and the occupancy flags. W = 0: tables of `range` entries, slot s at s.
 * W > 0 (gb_wdense_*): tables of W + 1 entries, slot s (key base + s) of
 * table p at (base + s - win[4 p]) & mask (the key's width), when below W;
 * slot null_slot (the null keys', when the keys have nulls) at W. */
#define GB_DMERGE_ARGS                                                                    \
    ulong W, __global const ulong *win, ulong base, ulong mask, ulong null_slot
#define GB_DMERGE_ENTRY(p, s, e)                                                          \
    ulong e##_at = s, e##_stride = W ? W + 1 : range;                                     \
    if (W && s == null_slot) {                                                            \
        e##_at = W;                                                                       \
    } else if (W) {                                                                       \
        e##_at = (base + s - win[4 * p]) & mask;                                          \
        if (e##_at >= W)                                                                  \
            continue;                                                                     \
    }
__kernel void gb_dmerge_none(__global const uint *part, uint P, ulong range, GB_DMERGE_ARGS,
                             __global uint *cnt, __global uint *flags)
{
    COPROC_FOR_EACH_ROW(s, range) {
        uint c = 0;
        for (uint p = 0; p < P; p++) {
            GB_DMERGE_ENTRY(p, s, e)
            c += part[p * e_stride + e_at];
        }
        cnt[s] = c;
        flags[s] = c != 0;
    }
}

__kernel void gb_dmerge_v32(__global const gb_de32 *part, uint P, ulong range, GB_DMERGE_ARGS,
                            __global uint *cnt, __global uint *sum, __global uint *mn,
                            __global uint *mx, __global uint *flags)
{
    COPROC_FOR_EACH_ROW(s, range) {
        uint c = 0, nv = 0, lo = 0xFFFFFFFFu, hi = 0;
        ulong t = 0;
        for (uint p = 0; p < P; p++) {
            GB_DMERGE_ENTRY(p, s, e)
            __global const gb_de32 *e = part + p * e_stride + e_at;
            c += e->cnt;
            nv += e->pad;
            t += e->sum;
            lo = min(lo, e->mn);
            hi = max(hi, e->mx);
        }
        cnt[s] = c - nv; /* the valid values; the group exists if any row does */
        sum[2 * s] = (uint)t;
        sum[2 * s + 1] = (uint)(t >> 32);
        mn[s] = lo;
        mx[s] = hi;
        flags[s] = c != 0;
    }
}

__kernel void gb_dmerge_v64(__global const gb_de64 *part, uint P, ulong range, GB_DMERGE_ARGS,
                            __global uint *cnt, __global uint *sum, __global uint *mn,
                            __global uint *mx, __global uint *mnhi, __global uint *mxhi,
                            __global uint *flags)
{
    COPROC_FOR_EACH_ROW(s, range) {
        uint c = 0, nv = 0;
        ulong t = 0, lo = ULONG_MAX, hi = 0;
        for (uint p = 0; p < P; p++) {
            GB_DMERGE_ENTRY(p, s, e)
            __global const gb_de64 *e = part + p * e_stride + e_at;
            c += e->cnt;
            nv += e->pad;
            t += e->sum;
            lo = min(lo, e->mn);
            hi = max(hi, e->mx);
        }
        cnt[s] = c - nv; /* the valid values; the group exists if any row does */
        sum[2 * s] = (uint)t;
        sum[2 * s + 1] = (uint)(t >> 32);
        mn[s] = (uint)lo;
        mx[s] = (uint)hi;
        mnhi[s] = (uint)(lo >> 32);
        mxhi[s] = (uint)(hi >> 32);
        flags[s] = c != 0;
    }
}

__kernel void gb_dmerge_sum(__global const gb_des *part, uint P, ulong range, GB_DMERGE_ARGS,
                            __global uint *cnt, __global uint *sum, __global uint *flags)
{
    COPROC_FOR_EACH_ROW(s, range) {
        uint c = 0, nv = 0;
        ulong t = 0;
        for (uint p = 0; p < P; p++) {
            GB_DMERGE_ENTRY(p, s, e)
            __global const gb_des *e = part + p * e_stride + e_at;
            c += e->cnt;
            nv += e->pad;
            t += e->sum;
        }
        cnt[s] = c - nv; /* the valid values; the group exists if any row does */
        sum[2 * s] = (uint)t;
        sum[2 * s + 1] = (uint)(t >> 32);
        flags[s] = c != 0;
    }
}

#else /* GPU path */

/* Counts only (SW 0) or 32-bit values (SW 2; min/max when MM), into the
 * global per-slot arrays (cleared by gb_init), through a local table of
 * L = range entries of 1 + SW + 2 MM words when L > 0. kvalid: the keys'
 * validity (NULL: none); a row with a null key goes to the last slot,
 * range - 1, which group_by.c adds for it (the null group). */
#define GB_DENSE_ROW_none(KT)
#define GB_DENSE_ROW_v(DV)                                                               \
    {                                                                                    \
        uint x = vals[i];                                                                \
        ulong w = DV;                                                                    \
        c.sum[0] = (uint)w;                                                              \
        c.sum[1] = (uint)(w >> 32);                                                      \
        c.mn = c.mx = x ^ flip;                                                          \
    }
#define GB_DEFINE_DENSE_GPU(NAME, KT, SW, MM, ROW)                                       \
    __kernel void NAME(__global const KT *keys, ulong n, KT base, ulong range,           \
                       __global const uint *kvalid, __global const uint *vals, uint flip, \
                       __global uint *cnt,                                               \
                       __global uint *sum, __global uint *mn, __global uint *mx,         \
                       __local uint *lm, uint L)                                         \
    {                                                                                    \
        __local uint *lc = lm, *lsum = lm + L, *lmn = lsum + SW * L;                     \
        __local uint *lmx = lmn + MM * L;                                                \
        for (uint l = get_local_id(0); l < L; l += get_local_size(0)) {                  \
            lc[l] = 0;                                                                   \
            for (uint j = 0; j < SW; j++)                                                \
                lsum[l * SW + j] = 0;                                                    \
            if (MM) {                                                                    \
                lmn[l] = 0xFFFFFFFFu;                                                    \
                lmx[l] = 0;                                                              \
            }                                                                            \
        }                                                                                \
        barrier(CLK_LOCAL_MEM_FENCE);                                                    \
        COPROC_FOR_EACH_ROW(i, n) {                                                      \
            uint s = GB_VALID(kvalid, i) ? (uint)(keys[i] - base) : (uint)(range - 1);   \
            gb_contrib c = {{0, 0, 0, 0}, 0xFFFFFFFFu, 0u, 0u};                          \
            ROW                                                                          \
            if (L) {                                                                     \
                atomic_inc(&lc[s]);                                                      \
                if (SW)                                                                  \
                    gb_addw_local(lsum + s * SW, c.sum, SW);                             \
                if (MM) {                                                                \
                    atomic_min(&lmn[s], c.mn);                                           \
                    atomic_max(&lmx[s], c.mx);                                           \
                }                                                                        \
            } else {                                                                     \
                gb_apply_global(s, 1u, &c, SW, MM, 0, cnt, sum, mn, mx, cnt);            \
            }                                                                            \
        }                                                                                \
        barrier(CLK_LOCAL_MEM_FENCE);                                                    \
        for (uint l = get_local_id(0); l < L; l += get_local_size(0)) {                  \
            uint k = lc[l];                                                              \
            if (k == 0)                                                                  \
                continue;                                                                \
            gb_contrib c = {{0, 0, 0, 0}, 0xFFFFFFFFu, 0u, 0u};                          \
            for (uint j = 0; j < SW; j++)                                                \
                c.sum[j] = lsum[l * SW + j];                                             \
            if (MM) {                                                                    \
                c.mn = lmn[l];                                                           \
                c.mx = lmx[l];                                                           \
            }                                                                            \
            gb_apply_global(l, k, &c, SW, MM, 0, cnt, sum, mn, mx, cnt);                 \
        }                                                                                \
    }
GB_DEFINE_DENSE_GPU(gb_dense_k32_none, uint, 0, 0, GB_DENSE_ROW_none(uint))
GB_DEFINE_DENSE_GPU(gb_dense_k64_none, ulong, 0, 0, GB_DENSE_ROW_none(ulong))
GB_DEFINE_DENSE_GPU(gb_dense_k32_i32, uint, 2, 1, GB_DENSE_ROW_v(GB_DV_i32))
GB_DEFINE_DENSE_GPU(gb_dense_k64_i32, ulong, 2, 1, GB_DENSE_ROW_v(GB_DV_i32))
GB_DEFINE_DENSE_GPU(gb_dense_k32_u32, uint, 2, 1, GB_DENSE_ROW_v(GB_DV_u32))
GB_DEFINE_DENSE_GPU(gb_dense_k64_u32, ulong, 2, 1, GB_DENSE_ROW_v(GB_DV_u32))
GB_DEFINE_DENSE_GPU(gb_dense_k32_i32_sum, uint, 2, 0, GB_DENSE_ROW_v(GB_DV_i32))
GB_DEFINE_DENSE_GPU(gb_dense_k64_i32_sum, ulong, 2, 0, GB_DENSE_ROW_v(GB_DV_i32))
GB_DEFINE_DENSE_GPU(gb_dense_k32_u32_sum, uint, 2, 0, GB_DENSE_ROW_v(GB_DV_u32))
GB_DEFINE_DENSE_GPU(gb_dense_k64_u32_sum, ulong, 2, 0, GB_DENSE_ROW_v(GB_DV_u32))

#endif
