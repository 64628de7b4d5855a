/* select.cl - filters into a bitmap (bit i % 32 of word i / 32 = row i) with
 * per-group counts, then the bitmap into ordered row positions.
 * Group g owns bitmap words [g * wchunk, (g + 1) * wchunk) in both kernels;
 * the positions kernel finds its output offset by summing the counts of the
 * groups before it (a few hundred values), so no separate scan pass is needed.
 * Codes of cmp: 0 EQ, 1 NE, 2 LT, 3 LE, 4 GT, 5 GE, 6 RANGE (a <= x < b),
 * 7 never, 8 always (the host turns some float32 tests into these).
 * mode: 0 write the bitmap, 1 AND into it, 2 OR into it. */

#define SEL_PRED(x, cmp, a, b)                                                           \
    ((cmp) == 0 ? (x) == (a) : (cmp) == 1 ? (x) != (a) : (cmp) == 2 ? (x) < (a)          \
     : (cmp) == 3 ? (x) <= (a) : (cmp) == 4 ? (x) > (a) : (cmp) == 5 ? (x) >= (a)        \
     : (cmp) == 6 ? ((x) >= (a) && (x) < (b)) : (cmp) == 8)

#define SEL_ADD(a, b) ((a) + (b))

/* The bitmap words [ws, we) of this work-group (W words in all). */
#define SEL_GROUP_WORDS(W, wchunk)                                                       \
    ulong ws = min((ulong)get_group_id(0) * (wchunk), (ulong)(W));                       \
    ulong we = min(ws + (wchunk), (ulong)(W))

/* Combine a freshly computed word with the bitmap's word per mode. */
#define SEL_COMBINE(word, mode, old) ((mode) == 1 ? (word) & (old) : (mode) == 2 ? (word) | (old) : (word))

#if COPROC_CPU
/* CPU path: the work-item walks its words, 32 contiguous rows each. */
#define SEL_FILTER_KERNEL(NAME, T)                                                       \
    __kernel void NAME(__global const T *col, ulong n, ulong wchunk, int cmp, T a, T b,  \
                       int mode, __global uint *bitmap, __global uint *counts,           \
                       __local uchar *flags, __local uint *scratch)                      \
    {                                                                                    \
        ulong W = (n + 31) / 32;                                                         \
        SEL_GROUP_WORDS(W, wchunk);                                                      \
        uint cnt = 0;                                                                    \
        for (ulong w = ws; w < we; w++) {                                                \
            __global const T *x = col + w * 32;                                          \
            uint word = 0;                                                               \
            uint m = (uint)min((ulong)32, n - w * 32);                                   \
            if (m == 32) {                                                               \
                for (uint j = 0; j < 32; j++)                                            \
                    word |= (uint)SEL_PRED(x[j], cmp, a, b) << j;                        \
            } else {                                                                     \
                for (uint j = 0; j < m; j++)                                             \
                    word |= (uint)SEL_PRED(x[j], cmp, a, b) << j;                        \
            }                                                                            \
            if (mode)                                                                    \
                word = SEL_COMBINE(word, mode, bitmap[w]);                               \
            bitmap[w] = word;                                                            \
            cnt += popcount(word);                                                       \
        }                                                                                \
        counts[get_group_id(0)] = cnt;                                                   \
    }

__kernel void select_positions(__global const uint *bitmap, ulong W, ulong wchunk,
                               __global const uint *counts, __global uint *positions,
                               __local uint *words, __local uint *scratch)
{
    SEL_GROUP_WORDS(W, wchunk);
    ulong at = 0;
    for (uint g = 0; g < get_group_id(0); g++)
        at += counts[g];
    for (ulong w = ws; w < we; w++) {
        uint word = bitmap[w];
        uint row = (uint)(w * 32);
        while (word) {
            uint low = word & (0u - word);
            positions[at++] = row + 31 - clz(low);
            word ^= low;
        }
    }
}
#else
/* GPU path: tiles of 32 * L rows. Work-item lid tests rows k * L + lid
 * (coalesced) into local byte flags, then packs word lid from 32 flags.
 * Flags are padded 4 bytes every 32, so those reads hit distinct banks. */
#define SEL_FLAG_AT(t) ((t) + (((t) >> 5) << 2))
#define SEL_FILTER_KERNEL(NAME, T)                                                       \
    __kernel void NAME(__global const T *col, ulong n, ulong wchunk, int cmp, T a, T b,  \
                       int mode, __global uint *bitmap, __global uint *counts,           \
                       __local uchar *flags, __local uint *scratch)                      \
    {                                                                                    \
        ulong W = (n + 31) / 32;                                                         \
        SEL_GROUP_WORDS(W, wchunk);                                                      \
        uint lid = get_local_id(0), L = get_local_size(0);                               \
        ulong rend = min(we * 32, n);                                                    \
        uint cnt = 0;                                                                    \
        for (ulong wb = ws; wb < we; wb += L) {                                          \
            ulong rb = wb * 32;                                                          \
            for (uint k = 0; k < 32; k++) {                                              \
                uint t = k * L + lid;                                                    \
                flags[SEL_FLAG_AT(t)] = rb + t < rend ? (uchar)SEL_PRED(col[rb + t], cmp, a, b) : 0; \
            }                                                                            \
            barrier(CLK_LOCAL_MEM_FENCE);                                                \
            ulong w = wb + lid;                                                          \
            if (w < we) {                                                                \
                uint word = 0;                                                           \
                for (uint m = 0; m < 8; m++) {                                           \
                    uchar4 v = vload4(lid * 9 + m, flags);                               \
                    word |= ((uint)v.x | (uint)v.y << 1 | (uint)v.z << 2 | (uint)v.w << 3) \
                            << (4 * m);                                                  \
                }                                                                        \
                if (mode)                                                                \
                    word = SEL_COMBINE(word, mode, bitmap[w]);                           \
                bitmap[w] = word;                                                        \
                cnt += popcount(word);                                                   \
            }                                                                            \
            barrier(CLK_LOCAL_MEM_FENCE);                                                \
        }                                                                                \
        scratch[lid] = cnt;                                                              \
        COPROC_LOCAL_REDUCE(scratch, SEL_ADD);                                           \
        if (lid == 0)                                                                    \
            counts[get_group_id(0)] = scratch[0];                                        \
    }

/* Inclusive Hillis-Steele scan of scratch[0..L) in place. */
#define SEL_LOCAL_INCLUSIVE(scratch, lid, L)                                             \
    for (uint off_ = 1; off_ < (L); off_ <<= 1) {                                        \
        barrier(CLK_LOCAL_MEM_FENCE);                                                    \
        uint t_ = (lid) >= off_ ? scratch[(lid) - off_] : 0u;                            \
        barrier(CLK_LOCAL_MEM_FENCE);                                                    \
        scratch[lid] += t_;                                                              \
    }                                                                                    \
    barrier(CLK_LOCAL_MEM_FENCE)

/* A tile of L words: scan their popcounts, then work-item lid handles rows
 * k * L + lid, so a warp's 32 rows share one word and write consecutive
 * positions (coalesced). */
__kernel void select_positions(__global const uint *bitmap, ulong W, ulong wchunk,
                               __global const uint *counts, __global uint *positions,
                               __local uint *words, __local uint *scratch)
{
    SEL_GROUP_WORDS(W, wchunk);
    uint lid = get_local_id(0), L = get_local_size(0);
    uint before = 0;
    for (uint g = lid; g < get_group_id(0); g += L)
        before += counts[g];
    scratch[lid] = before;
    COPROC_LOCAL_REDUCE(scratch, SEL_ADD);
    ulong at = scratch[0];
    barrier(CLK_LOCAL_MEM_FENCE);
    for (ulong wb = ws; wb < we; wb += L) {
        ulong w = wb + lid;
        uint word = w < we ? bitmap[w] : 0u;
        words[lid] = word;
        scratch[lid] = popcount(word);
        SEL_LOCAL_INCLUSIVE(scratch, lid, L);
        uint rb = (uint)(wb * 32);
        for (uint k = 0; k < 32; k++) {
            uint t = k * L + lid, wi = t >> 5, bit = t & 31;
            uint wd = words[wi];
            if ((wd >> bit) & 1u)
                positions[at + (wi ? scratch[wi - 1] : 0u) + popcount(wd & ((1u << bit) - 1u))] =
                    rb + t;
        }
        at += scratch[L - 1];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
}
#endif

SEL_FILTER_KERNEL(select_filter_i32, int)
SEL_FILTER_KERNEL(select_filter_i64, long)
SEL_FILTER_KERNEL(select_filter_u32, uint)
SEL_FILTER_KERNEL(select_filter_u64, ulong)
SEL_FILTER_KERNEL(select_filter_f32, float)
#ifdef COPROC_FP64
SEL_FILTER_KERNEL(select_filter_f64, double)
#endif
