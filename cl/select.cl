/* select.cl - one predicate (col CMP a, or a <= col < b) counted, or evaluated
 * into a bitmap (bit i % 32 of word i / 32 = row i) with per-group counts,
 * and a bitmap turned into ordered row positions.
 *
 * Built once per column type: runtime/ops/select.c puts "#define SEL_T int"
 * (long, uint, ulong, float, double) before this source, and picks the
 * comparison by kernel name, select_lt, select_range, ...: each
 * comparison is compiled into its own kernel, so no row chooses its test at
 * run time and the loops vectorise. The constants a and b are kernel
 * arguments, so a new constant builds nothing. Without the define (a build of
 * every program, tests/test_portable.c) the type is int.
 *
 * Group g owns bitmap words [g * wchunk, (g + 1) * wchunk) in the filter and
 * positions kernels; the positions kernel finds its output offset by summing
 * the counts of the groups before it (a few hundred values), so no separate
 * scan pass is needed. mode: 0 write the bitmap, 1 AND into it, 2 OR into it
 * (a second predicate, one word at a time), 3 count only. has_valid (modes
 * 0-2): the column has nulls, valid its validity bitmap; a null row's test is
 * not true (its bit is cleared before the word is combined). */

#ifndef SEL_T
#define SEL_T int
#endif

/* The tests, as int 0 or 1, branch-free (& rather than &&). NaN fails all
 * but NE, as in C. */
#define SEL_EQ(x, a, b) ((x) == (a))
#define SEL_NE(x, a, b) ((x) != (a))
#define SEL_LT(x, a, b) ((x) < (a))
#define SEL_LE(x, a, b) ((x) <= (a))
#define SEL_GT(x, a, b) ((x) > (a))
#define SEL_GE(x, a, b) ((x) >= (a))
#define SEL_RANGE(x, a, b) (((x) >= (a)) & ((x) < (b)))

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

/* cnt of this work-item into counts[group], summed over the group. */
static inline void sel_group_count(uint cnt, __global uint *counts, __local uint *scratch)
{
    uint lid = get_local_id(0);
    scratch[lid] = cnt;
    COPROC_LOCAL_REDUCE(scratch, SEL_ADD);
    if (lid == 0)
        counts[get_group_id(0)] = scratch[0];
}

/*
 * The kernel select_NAME of one comparison NAME with test TEST.
 * mode 3 counts only: the matching rows of each group's part into
 * counts[group], nothing else read or written (on the CPU path the
 * work-item's rows are one contiguous chunk, a plain sum the compiler
 * vectorises). Modes 0-2 write (AND, OR) the bitmap words of the group's
 * part, a word at a time, and their popcounts into counts[group].
 * sel_word_NAME: the word of rows x[0..m), m <= 32, bits m..31 are 0 (a
 * loop without branches; explicit 8-lane vector tests ran the bitmap twice as
 * fast on PoCL but Oclgrind 21.10 crashes on them and computes wrong words).
 * One kernel for all modes: PoCL compiles each kernel it runs on first use.
 */
#define SEL_KERNEL(NAME, TEST)                                                           \
    static inline uint sel_word_##NAME(__global const SEL_T *x, uint m, SEL_T a, SEL_T b) \
    {                                                                                    \
        uint word = 0;                                                                   \
        for (uint j = 0; j < m; j++)                                                     \
            word |= (uint)TEST(x[j], a, b) << j;                                         \
        return word;                                                                     \
    }                                                                                    \
    __kernel void select_##NAME(__global const SEL_T *col, ulong n, ulong wchunk, SEL_T a, \
                                SEL_T b, int mode, __global uint *bitmap,                \
                                __global uint *counts, __local uchar *flags,             \
                                __local uint *scratch, __global const uint *valid,       \
                                int has_valid)                                           \
    {                                                                                    \
        if (mode == 3) {                                                                 \
            uint cnt = 0;                                                                \
            COPROC_FOR_EACH_ROW(i, n)                                                    \
                cnt += (uint)TEST(col[i], a, b);                                         \
            sel_group_count(cnt, counts, scratch);                                       \
            return;                                                                      \
        }                                                                                \
        SEL_FILTER_BODY(NAME, TEST)                                                      \
    }

#if COPROC_CPU
/* CPU path: the work-item walks its words, 32 contiguous rows each, a whole
 * word at a time (no per-bit stores). */
#define SEL_FILTER_BODY(NAME, TEST)                                                      \
    ulong W = (n + 31) / 32;                                                             \
    SEL_GROUP_WORDS(W, wchunk);                                                          \
    ulong full = min(we, (ulong)(n / 32)); /* words of 32 rows */                        \
    uint cnt = 0;                                                                        \
    for (ulong w = ws; w < full; w++) {                                                  \
        uint word = sel_word_##NAME(col + w * 32, 32, a, b);                             \
        if (has_valid)                                                                   \
            word &= valid[w];                                                            \
        if (mode)                                                                        \
            word = sel_combine(word, mode, bitmap[w]);                                   \
        bitmap[w] = word;                                                                \
        cnt += popcount(word);                                                           \
    }                                                                                    \
    if (ws <= full && full < we) { /* the last word, partly used, if it is ours */       \
        uint word = sel_word_##NAME(col + full * 32, (uint)(n - full * 32), a, b);       \
        if (has_valid)                                                                   \
            word &= valid[full];                                                         \
        if (mode)                                                                        \
            word = sel_combine(word, mode, bitmap[full]);                                \
        bitmap[full] = word;                                                             \
        cnt += popcount(word);                                                           \
    }                                                                                    \
    counts[get_group_id(0)] = cnt;

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
#define SEL_FILTER_BODY(NAME, TEST)                                                      \
    ulong W = (n + 31) / 32;                                                             \
    SEL_GROUP_WORDS(W, wchunk);                                                          \
    uint lid = get_local_id(0), L = get_local_size(0);                                   \
    ulong rend = min(we * 32, n);                                                        \
    uint cnt = 0;                                                                        \
    for (ulong wb = ws; wb < we; wb += L) {                                              \
        ulong rb = wb * 32;                                                              \
        for (uint k = 0; k < 32; k++) {                                                  \
            uint t = k * L + lid;                                                        \
            flags[SEL_FLAG_AT(t)] = rb + t < rend ? (uchar)TEST(col[rb + t], a, b) : 0;  \
        }                                                                                \
        barrier(CLK_LOCAL_MEM_FENCE);                                                    \
        ulong w = wb + lid;                                                              \
        if (w < we) {                                                                    \
            uint word = sel_flags_word(flags, lid);                                      \
            if (has_valid)                                                               \
                word &= valid[w];                                                        \
            if (mode)                                                                    \
                word = sel_combine(word, mode, bitmap[w]);                               \
            bitmap[w] = word;                                                            \
            cnt += popcount(word);                                                       \
        }                                                                                \
        barrier(CLK_LOCAL_MEM_FENCE);                                                    \
    }                                                                                    \
    sel_group_count(cnt, counts, scratch);

/* Word w of the tile from its 32 flags (36 bytes with the padding). */
static inline uint sel_flags_word(__local const uchar *flags, uint w)
{
    uint word = 0;
    for (uint m = 0; m < 8; m++) {
        uchar4 v = vload4(w * 9 + m, flags);
        word |= ((uint)v.x | (uint)v.y << 1 | (uint)v.z << 2 | (uint)v.w << 3) << (4 * m);
    }
    return word;
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

SEL_KERNEL(eq, SEL_EQ)
SEL_KERNEL(ne, SEL_NE)
SEL_KERNEL(lt, SEL_LT)
SEL_KERNEL(le, SEL_LE)
SEL_KERNEL(gt, SEL_GT)
SEL_KERNEL(ge, SEL_GE)
SEL_KERNEL(range, SEL_RANGE)
