/* select.cl - one predicate (col CMP a, or a <= col < b) counted, or evaluated
 * into a bitmap (bit i % 32 of word i / 32 = row i) with per-group counts,
 * and a bitmap turned into ordered row positions.
 *
 * The predicate's shape is chosen when the program is built, by defines that
 * runtime/ops/select.c puts before this source (one program per shape, built
 * once per device and kept in the binary cache):
 *   SEL_T    the column's element type (int, long, uint, ulong, float, double)
 *   SEL_CMP  0 EQ, 1 NE, 2 LT, 3 LE, 4 GT, 5 GE, 6 RANGE (a <= x < b),
 *            7 never, 8 always (the host turns some float32 tests into these)
 * The constants a and b are kernel arguments, so a new constant builds nothing.
 * Without the defines (a build of every program, tests/test_portable.c) the
 * shape is int <.
 *
 * Group g owns bitmap words [g * wchunk, (g + 1) * wchunk) in the filter and
 * positions kernels; the positions kernel finds its output offset by summing
 * the counts of the groups before it (a few hundred values), so no separate
 * scan pass is needed. mode: 0 write the bitmap, 1 AND into it, 2 OR into it
 * (a second predicate, one word at a time). */

#ifndef SEL_T
#define SEL_T int
#endif
#ifndef SEL_CMP
#define SEL_CMP 2
#endif

/* The test as an int 0 or 1, branch-free (& rather than &&). */
#if SEL_CMP == 0
#define SEL_TEST(x, a, b) ((x) == (a))
#elif SEL_CMP == 1
#define SEL_TEST(x, a, b) ((x) != (a))
#elif SEL_CMP == 2
#define SEL_TEST(x, a, b) ((x) < (a))
#elif SEL_CMP == 3
#define SEL_TEST(x, a, b) ((x) <= (a))
#elif SEL_CMP == 4
#define SEL_TEST(x, a, b) ((x) > (a))
#elif SEL_CMP == 5
#define SEL_TEST(x, a, b) ((x) >= (a))
#elif SEL_CMP == 6
#define SEL_TEST(x, a, b) (((x) >= (a)) & ((x) < (b)))
#elif SEL_CMP == 7
#define SEL_TEST(x, a, b) 0
#else
#define SEL_TEST(x, a, b) 1
#endif

#define SEL_ADD(a, b) ((a) + (b))

/* The bitmap words [ws, we) of this work-group (W words in all). */
#define SEL_GROUP_WORDS(W, wchunk)                                                       \
    ulong ws = min((ulong)get_group_id(0) * (wchunk), (ulong)(W));                       \
    ulong we = min(ws + (wchunk), (ulong)(W))

/* A freshly computed word combined with the bitmap's word per mode. */
static inline uint sel_combine(uint word, int mode, uint old)
{
    return mode == 1 ? word & old : mode == 2 ? word | old : word;
}

/* The word of rows x[0..m), m <= 32; bits m..31 are 0. */
static inline uint sel_word(__global const SEL_T *x, uint m, SEL_T a, SEL_T b)
{
    uint word = 0;
    for (uint j = 0; j < m; j++)
        word |= (uint)SEL_TEST(x[j], a, b) << j;
    return word;
}

/* Count only: the matching rows of this group's part, into counts[group].
 * Nothing else is written. On the CPU path the work-item's rows are one
 * contiguous chunk and the loop is a plain sum the compiler vectorises. */
__kernel void select_count(__global const SEL_T *col, ulong n, SEL_T a, SEL_T b,
                           __global uint *counts, __local uint *scratch)
{
    uint cnt = 0;
    COPROC_FOR_EACH_ROW(i, n)
        cnt += (uint)SEL_TEST(col[i], a, b);
    uint lid = get_local_id(0);
    scratch[lid] = cnt;
    COPROC_LOCAL_REDUCE(scratch, SEL_ADD);
    if (lid == 0)
        counts[get_group_id(0)] = scratch[0];
}

#if COPROC_CPU
/* CPU path: the work-item walks its words, 32 contiguous rows each, a whole
 * word at a time (the 32 tests vectorise; no per-bit stores). */
__kernel void select_filter(__global const SEL_T *col, ulong n, ulong wchunk, SEL_T a, SEL_T b,
                            int mode, __global uint *bitmap, __global uint *counts,
                            __local uchar *flags, __local uint *scratch)
{
    ulong W = (n + 31) / 32;
    SEL_GROUP_WORDS(W, wchunk);
    ulong full = min(we, (ulong)(n / 32)); /* words of 32 rows */
    uint cnt = 0;
    for (ulong w = ws; w < full; w++) {
        uint word = sel_word(col + w * 32, 32, a, b);
        if (mode)
            word = sel_combine(word, mode, bitmap[w]);
        bitmap[w] = word;
        cnt += popcount(word);
    }
    if (full < we) { /* the last word, partly used */
        uint word = sel_word(col + full * 32, (uint)(n - full * 32), a, b);
        if (mode)
            word = sel_combine(word, mode, bitmap[full]);
        bitmap[full] = word;
        cnt += popcount(word);
    }
    counts[get_group_id(0)] = cnt;
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
__kernel void select_filter(__global const SEL_T *col, ulong n, ulong wchunk, SEL_T a, SEL_T b,
                            int mode, __global uint *bitmap, __global uint *counts,
                            __local uchar *flags, __local uint *scratch)
{
    ulong W = (n + 31) / 32;
    SEL_GROUP_WORDS(W, wchunk);
    uint lid = get_local_id(0), L = get_local_size(0);
    ulong rend = min(we * 32, n);
    uint cnt = 0;
    for (ulong wb = ws; wb < we; wb += L) {
        ulong rb = wb * 32;
        for (uint k = 0; k < 32; k++) {
            uint t = k * L + lid;
            flags[SEL_FLAG_AT(t)] = rb + t < rend ? (uchar)SEL_TEST(col[rb + t], a, b) : 0;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        ulong w = wb + lid;
        if (w < we) {
            uint word = 0;
            for (uint m = 0; m < 8; m++) {
                uchar4 v = vload4(lid * 9 + m, flags);
                word |= ((uint)v.x | (uint)v.y << 1 | (uint)v.z << 2 | (uint)v.w << 3)
                        << (4 * m);
            }
            if (mode)
                word = sel_combine(word, mode, bitmap[w]);
            bitmap[w] = word;
            cnt += popcount(word);
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    scratch[lid] = cnt;
    COPROC_LOCAL_REDUCE(scratch, SEL_ADD);
    if (lid == 0)
        counts[get_group_id(0)] = scratch[0];
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
