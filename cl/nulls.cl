/* nulls.cl - validity bitmaps, for the null semantics of the operators
 * (runtime/ops/nulls.c). A validity bitmap is Arrow's: bit i % 32 of word
 * i / 32 set when row i is valid; bits of rows >= n are ignored, so every
 * kernel here that counts or negates masks them, and every bitmap it writes
 * has them 0. Group g owns words [g * wchunk, (g + 1) * wchunk) in the
 * counting and positions kernels (the host sums the counts of the groups
 * before each, as cl/gather.cl's compaction does). */

#define NL_ADD(a, b) ((a) + (b))

#define NL_GROUP_WORDS(W, wchunk)                                                        \
    ulong ws = min((ulong)get_group_id(0) * (wchunk), (ulong)(W));                       \
    ulong we = min(ws + (wchunk), (ulong)(W))

/* Word w of the bitmap with the bits of rows >= n cleared. */
#define NL_WORD(bitmap, w, n)                                                            \
    ((w) * 32 + 32 <= (n) ? (bitmap)[w] : (bitmap)[w] & ((1u << (uint)((n) & 31)) - 1u))

/* Bit i of a bitmap, as 0 or 1. */
#define NL_BIT(bitmap, i) (((bitmap)[(i) >> 5] >> (uint)((i) & 31)) & 1u)

/* out = a & b over the words of n rows (the bits past n cleared). */
__kernel void nulls_and(__global const uint *a, __global const uint *b, ulong n,
                        __global uint *out)
{
    ulong W = (n + 31) / 32;
    COPROC_FOR_EACH_ROW(w, W) { out[w] = NL_WORD(a, w, n) & b[w]; }
}

/* out = ~a over n rows (the bits past n cleared). */
__kernel void nulls_not(__global const uint *a, ulong n, __global uint *out)
{
    ulong W = (n + 31) / 32;
    COPROC_FOR_EACH_ROW(w, W) {
        uint x = ~a[w];
        out[w] = w * 32 + 32 <= n ? x : x & ((1u << (uint)(n & 31)) - 1u);
    }
}

/* Bits [lo, hi) of n rows set, the others 0. */
__kernel void nulls_range(ulong n, ulong lo, ulong hi, __global uint *out)
{
    ulong W = (n + 31) / 32;
    COPROC_FOR_EACH_ROW(w, W) {
        uint word = 0;
        for (uint j = 0; j < 32; j++) {
            ulong i = w * 32 + j;
            word |= (uint)(i >= lo && i < hi && i < n) << j;
        }
        out[w] = word;
    }
}

/* Out bit i = bit positions[i] of bits, i < m (positions of type P): a
 * work-item writes whole words, so no two write one. Positions are in range
 * (checked before). */
#define NL_GATHER_KERNEL(NAME, P)                                                        \
    __kernel void NAME(__global const uint *bits, __global const P *positions, ulong m,  \
                       __global uint *out)                                               \
    {                                                                                    \
        ulong W = (m + 31) / 32;                                                         \
        COPROC_FOR_EACH_ROW(w, W) {                                                      \
            ulong base = w * 32;                                                         \
            uint cnt = (uint)min((ulong)32, m - base);                                   \
            uint word = 0;                                                               \
            for (uint j = 0; j < cnt; j++) {                                             \
                P p = positions[base + j];                                               \
                word |= NL_BIT(bits, p) << j;                                            \
            }                                                                            \
            out[w] = word;                                                               \
        }                                                                                \
    }
NL_GATHER_KERNEL(nulls_gather, uint)
NL_GATHER_KERNEL(nulls_gather_p64, ulong)

/* The set bits of each group's words (rows >= n not counted) into counts[group]. */
__kernel void nulls_count(__global const uint *bitmap, ulong n, ulong wchunk,
                          __global uint *counts, __local uint *scratch)
{
    ulong W = (n + 31) / 32;
    NL_GROUP_WORDS(W, wchunk);
    uint c = 0;
    for (ulong w = ws + get_local_id(0); w < we; w += get_local_size(0))
        c += popcount(NL_WORD(bitmap, w, n));
    scratch[get_local_id(0)] = c;
    COPROC_LOCAL_REDUCE(scratch, NL_ADD);
    if (get_local_id(0) == 0)
        counts[get_group_id(0)] = scratch[0];
}

/* dst[doff + i] = src[soff + i], i < count: rows moved within or between
 * columns by a kernel (Oclgrind 21.10's uninitialised-memory check follows
 * kernel stores, not copies or host writes into part of a buffer). */
__kernel void nulls_copy(__global const uint *src, ulong soff, __global uint *dst, ulong doff,
                         ulong count)
{
    COPROC_FOR_EACH_ROW(i, count) { dst[doff + i] = src[soff + i]; }
}

/* dst[at] = w0 and, when two, dst[at + 1] = w1: one element put in place. */
__kernel void nulls_put(__global uint *dst, ulong at, uint w0, uint w1, uint two)
{
    if (get_global_id(0) == 0) {
        dst[at] = w0;
        if (two)
            dst[at + 1] = w1;
    }
}

/* out[i] = in[i] where row i is valid, else c: the values under nulls made a
 * known value (a scan adds 0 for them), bits moved as they are. */
#define NL_FILL_KERNEL(NAME, T)                                                          \
    __kernel void NAME(__global const T *in, ulong n, __global const uint *valid, T c,   \
                       __global T *out)                                                  \
    {                                                                                    \
        COPROC_FOR_EACH_ROW(i, n) { out[i] = NL_BIT(valid, i) ? in[i] : c; }             \
    }
NL_FILL_KERNEL(nulls_fill_b32, uint)
NL_FILL_KERNEL(nulls_fill_b64, ulong)

#if COPROC_CPU
/* The rows of the set bits, ascending: each group from the sum of the counts
 * of the groups before it. */
__kernel void nulls_positions(__global const uint *bitmap, ulong n, ulong wchunk,
                              __global const uint *counts, __global uint *out,
                              __local uint *words, __local uint *scratch)
{
    ulong W = (n + 31) / 32;
    NL_GROUP_WORDS(W, wchunk);
    ulong at = 0;
    for (uint g = 0; g < get_group_id(0); g++)
        at += counts[g];
    for (ulong w = ws; w < we; w++) {
        uint word = NL_WORD(bitmap, w, n);
        while (word) {
            uint low = word & (0u - word);
            out[at++] = (uint)(w * 32) + 31 - clz(low);
            word ^= low;
        }
    }
}
#else
#define NL_LOCAL_INCLUSIVE(scratch, lid, L)                                              \
    for (uint off_ = 1; off_ < (L); off_ <<= 1) {                                        \
        barrier(CLK_LOCAL_MEM_FENCE);                                                    \
        uint t_ = (lid) >= off_ ? scratch[(lid) - off_] : 0u;                            \
        barrier(CLK_LOCAL_MEM_FENCE);                                                    \
        scratch[lid] += t_;                                                              \
    }                                                                                    \
    barrier(CLK_LOCAL_MEM_FENCE)

/* Tiles of L words; work-item lid handles rows k * L + lid, so a warp's rows
 * share one word and its writes are coalesced. */
__kernel void nulls_positions(__global const uint *bitmap, ulong n, ulong wchunk,
                              __global const uint *counts, __global uint *out,
                              __local uint *words, __local uint *scratch)
{
    ulong W = (n + 31) / 32;
    NL_GROUP_WORDS(W, wchunk);
    uint lid = get_local_id(0), L = get_local_size(0);
    uint before = 0;
    for (uint g = lid; g < get_group_id(0); g += L)
        before += counts[g];
    scratch[lid] = before;
    COPROC_LOCAL_REDUCE(scratch, NL_ADD);
    ulong at = scratch[0];
    barrier(CLK_LOCAL_MEM_FENCE);
    for (ulong wb = ws; wb < we; wb += L) {
        ulong w = wb + lid;
        uint word = w < we ? NL_WORD(bitmap, w, n) : 0u;
        words[lid] = word;
        scratch[lid] = popcount(word);
        NL_LOCAL_INCLUSIVE(scratch, lid, L);
        uint rb = (uint)(wb * 32);
        for (uint k = 0; k < 32; k++) {
            uint t = k * L + lid, wi = t >> 5, bit = t & 31;
            uint wd = words[wi];
            if ((wd >> bit) & 1u)
                out[at + (wi ? scratch[wi - 1] : 0u) + popcount(wd & ((1u << bit) - 1u))] =
                    rb + t;
        }
        at += scratch[L - 1];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
}
#endif
