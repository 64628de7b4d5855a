/* gather.cl - gather, scatter, compaction by bitmap, and reductions over the
 * rows a bitmap selects. Moves are by element size (b32/b64: the bits are
 * copied, so float64 needs no fp64). A bitmap holds bit i % 32 of word i / 32
 * for row i; bits at rows >= n are ignored. */

#define GA_ADD(a, b) ((a) + (b))

/* Flags (atomically, once per work-item) when a position is >= limit. */
__kernel void gather_check(__global const uint *positions, ulong m, ulong limit,
                           __global uint *bad)
{
    uint b = 0;
    COPROC_FOR_EACH_ROW(i, m) { b |= positions[i] >= limit; }
    if (b)
        atomic_or(bad, 1u);
}

/* out[i] = src[positions[i]] (positions of type P: uint, or ulong past 2^32
 * rows); a bad position writes 0 there and sets *bad (the host then drops
 * the output). */
#define GATHER_KERNEL(NAME, T, P)                                                        \
    __kernel void NAME(__global const T *src, ulong limit, __global const P *positions,  \
                       ulong m, __global T *out, __global uint *bad)                     \
    {                                                                                    \
        uint b = 0;                                                                      \
        COPROC_FOR_EACH_ROW(i, m) {                                                      \
            P p = positions[i];                                                          \
            int ok = p < limit;                                                          \
            b |= !ok;                                                                    \
            out[i] = ok ? src[p] : (T)0;                                                 \
        }                                                                                \
        if (b)                                                                           \
            atomic_or(bad, 1u);                                                          \
    }

/* dst[positions[i]] = src[i], only if gather_check found no bad position
 * (it ran before on the same in-order queue), so dst stays untouched. */
#define SCATTER_KERNEL(NAME, T)                                                          \
    __kernel void NAME(__global const T *src, __global const uint *positions, ulong m,   \
                       __global T *dst, __global const uint *bad)                        \
    {                                                                                    \
        if (*bad)                                                                        \
            return;                                                                      \
        COPROC_FOR_EACH_ROW(i, m) { dst[positions[i]] = src[i]; }                        \
    }

/* The scatter streamed through a window of dst: dst holds rows [lo, lo + n)
 * of the whole, of `limit` rows; positions outside the window are left to
 * the other windows' runs, positions >= limit set *bad (the host then drops
 * the output). */
#define SCATTER_WINDOW_KERNEL(NAME, T)                                                   \
    __kernel void NAME(__global const T *src, __global const uint *positions, ulong m,   \
                       __global T *dst, ulong lo, ulong n, ulong limit, __global uint *bad) \
    {                                                                                    \
        uint b = 0;                                                                      \
        COPROC_FOR_EACH_ROW(i, m) {                                                      \
            ulong p = positions[i];                                                      \
            b |= p >= limit;                                                             \
            if (p >= lo && p - lo < n)                                                   \
                dst[p - lo] = src[i];                                                    \
        }                                                                                \
        if (b)                                                                           \
            atomic_or(bad, 1u);                                                          \
    }

/* ---- scatter with nulls (runtime/ops/gather.c): of the rows i writing one
 * dst row p, the last (the highest i) wins, its value and its validity
 * together; a null position writes nothing. owner[p] = that i + 1, 0 where
 * no row writes (a zeroed buffer before scatter_owner). */
#define GA_BIT(bits, i) (((bits)[(i) >> 5] >> (uint)((i) & 31)) & 1u)

/* owner[p] = max(i + 1) over the valid positions p; one >= limit sets *bad
 * (its row then writes nothing, and the kernels after skip all writes). */
__kernel void scatter_owner(__global const uint *positions, __global const uint *pvalid,
                            uint has_pvalid, ulong m, ulong limit, __global uint *owner,
                            __global uint *bad)
{
    uint b = 0;
    COPROC_FOR_EACH_ROW(i, m) {
        if (has_pvalid && !GA_BIT(pvalid, i))
            continue;
        uint p = positions[i];
        if (p >= limit)
            b = 1;
        else
            atomic_max(owner + p, (uint)i + 1u);
    }
    if (b)
        atomic_or(bad, 1u);
}

/* dst[positions[i]] = src[i] for the winning rows only (so no two write one
 * element), unless scatter_owner found a bad position. */
#define SCATTER_NULLS_KERNEL(NAME, T)                                                    \
    __kernel void NAME(__global const T *src, __global const uint *positions,            \
                       __global const uint *pvalid, uint has_pvalid, ulong m,            \
                       __global const uint *owner, __global T *dst, __global const uint *bad) \
    {                                                                                    \
        if (*bad)                                                                        \
            return;                                                                      \
        COPROC_FOR_EACH_ROW(i, m) {                                                      \
            if (has_pvalid && !GA_BIT(pvalid, i))                                        \
                continue;                                                                \
            uint p = positions[i];                                                       \
            if (owner[p] == (uint)i + 1u)                                                \
                dst[p] = src[i];                                                         \
        }                                                                                \
    }

/* dst's validity `valid` (n rows) updated in place, a work-item a whole word:
 * a written row takes its winner's bit of svalid (1 without: has_svalid 0),
 * the others keep theirs; nothing when *bad. */
__kernel void scatter_nulls_bits(__global const uint *owner, ulong n, __global const uint *svalid,
                                 uint has_svalid, __global uint *valid, __global const uint *bad)
{
    if (*bad)
        return;
    ulong W = (n + 31) / 32;
    COPROC_FOR_EACH_ROW(w, W) {
        uint word = valid[w];
        uint cnt = (uint)min((ulong)32, n - w * 32);
        for (uint j = 0; j < cnt; j++) {
            uint o = owner[w * 32 + j];
            if (o) {
                uint bit = has_svalid ? GA_BIT(svalid, o - 1u) : 1u;
                word = (word & ~(1u << j)) | (bit << j);
            }
        }
        valid[w] = word;
    }
}

GATHER_KERNEL(gather_b32, uint, uint)
GATHER_KERNEL(gather_b64, ulong, uint)
GATHER_KERNEL(gather_p64_b32, uint, ulong)
GATHER_KERNEL(gather_p64_b64, ulong, ulong)
SCATTER_KERNEL(scatter_b32, uint)
SCATTER_KERNEL(scatter_b64, ulong)
SCATTER_WINDOW_KERNEL(scatter_window_b32, uint)
SCATTER_WINDOW_KERNEL(scatter_window_b64, ulong)
SCATTER_NULLS_KERNEL(scatter_nulls_b32, uint)
SCATTER_NULLS_KERNEL(scatter_nulls_b64, ulong)

/* ---- bitmaps. Group g owns words [g * wchunk, (g + 1) * wchunk). */

#define GA_GROUP_WORDS(W, wchunk)                                                        \
    ulong ws = min((ulong)get_group_id(0) * (wchunk), (ulong)(W));                       \
    ulong we = min(ws + (wchunk), (ulong)(W))

/* Word w of the bitmap with the bits of rows >= n cleared. */
#define GA_WORD(bitmap, w, n)                                                            \
    ((w) * 32 + 32 <= (n) ? bitmap[w] : bitmap[w] & ((1u << (uint)((n) & 31)) - 1u))

/* counts[group] = selected rows in the group's words. */
__kernel void bitmap_counts(__global const uint *bitmap, ulong n, ulong wchunk,
                            __global uint *counts, __local uint *scratch)
{
    ulong W = (n + 31) / 32;
    GA_GROUP_WORDS(W, wchunk);
    uint c = 0;
    for (ulong w = ws + get_local_id(0); w < we; w += get_local_size(0))
        c += popcount(GA_WORD(bitmap, w, n));
    scratch[get_local_id(0)] = c;
    COPROC_LOCAL_REDUCE(scratch, GA_ADD);
    if (get_local_id(0) == 0)
        counts[get_group_id(0)] = scratch[0];
}

#if COPROC_CPU
/* out[k] = src[row of the k-th set bit], each group from the sum of the
 * counts of the groups before it. */
#define COMPACT_KERNEL(NAME, T)                                                          \
    __kernel void NAME(__global const T *src, ulong n, __global const uint *bitmap,      \
                       ulong wchunk, __global const uint *counts, __global T *out,       \
                       __local uint *words, __local uint *scratch)                       \
    {                                                                                    \
        ulong W = (n + 31) / 32;                                                         \
        GA_GROUP_WORDS(W, wchunk);                                                       \
        ulong at = 0;                                                                    \
        for (uint g = 0; g < get_group_id(0); g++)                                       \
            at += counts[g];                                                             \
        for (ulong w = ws; w < we; w++) {                                                \
            uint word = GA_WORD(bitmap, w, n);                                           \
            __global const T *row = src + w * 32;                                        \
            while (word) {                                                               \
                uint low = word & (0u - word);                                           \
                out[at++] = row[31 - clz(low)];                                          \
                word ^= low;                                                             \
            }                                                                            \
        }                                                                                \
    }
#else
#define GA_LOCAL_INCLUSIVE(scratch, lid, L)                                              \
    for (uint off_ = 1; off_ < (L); off_ <<= 1) {                                        \
        barrier(CLK_LOCAL_MEM_FENCE);                                                    \
        uint t_ = (lid) >= off_ ? scratch[(lid) - off_] : 0u;                            \
        barrier(CLK_LOCAL_MEM_FENCE);                                                    \
        scratch[lid] += t_;                                                              \
    }                                                                                    \
    barrier(CLK_LOCAL_MEM_FENCE)

/* Tiles of L words; work-item lid moves rows k * L + lid, so a warp's rows
 * share one word, and reads and writes are coalesced. */
#define COMPACT_KERNEL(NAME, T)                                                          \
    __kernel void NAME(__global const T *src, ulong n, __global const uint *bitmap,      \
                       ulong wchunk, __global const uint *counts, __global T *out,       \
                       __local uint *words, __local uint *scratch)                       \
    {                                                                                    \
        ulong W = (n + 31) / 32;                                                         \
        GA_GROUP_WORDS(W, wchunk);                                                       \
        uint lid = get_local_id(0), L = get_local_size(0);                               \
        uint before = 0;                                                                 \
        for (uint g = lid; g < get_group_id(0); g += L)                                  \
            before += counts[g];                                                         \
        scratch[lid] = before;                                                           \
        COPROC_LOCAL_REDUCE(scratch, GA_ADD);                                            \
        ulong at = scratch[0];                                                           \
        barrier(CLK_LOCAL_MEM_FENCE);                                                    \
        for (ulong wb = ws; wb < we; wb += L) {                                          \
            ulong w = wb + lid;                                                          \
            uint word = w < we ? GA_WORD(bitmap, w, n) : 0u;                             \
            words[lid] = word;                                                           \
            scratch[lid] = popcount(word);                                               \
            GA_LOCAL_INCLUSIVE(scratch, lid, L);                                         \
            ulong rb = wb * 32;                                                          \
            for (uint k = 0; k < 32; k++) {                                              \
                uint t = k * L + lid, wi = t >> 5, bit = t & 31;                         \
                uint wd = words[wi];                                                     \
                if ((wd >> bit) & 1u)                                                    \
                    out[at + (wi ? scratch[wi - 1] : 0u) + popcount(wd & ((1u << bit) - 1u))] = \
                        src[rb + t];                                                     \
            }                                                                            \
            at += scratch[L - 1];                                                        \
            barrier(CLK_LOCAL_MEM_FENCE);                                                \
        }                                                                                \
    }
#endif

COMPACT_KERNEL(compact_b32, uint)
COMPACT_KERNEL(compact_b64, ulong)

/* ---- reductions over selected rows: sum, min, max and count in one pass
 * (one kernel per type keeps the program small; the work is memory-bound),
 * one partial of each per work-group, finished on the host as cl/reduce.cl's.
 * A warp's 32 rows share one bitmap word, so the word loads are broadcasts. */
#define REDUCE_WHERE_KERNEL(NAME, T, S, SZERO, SADDV, SADD, MININIT, MAXINIT, MINOP, MAXOP) \
    __kernel void NAME(__global const T *in, ulong n, __global const uint *bitmap,       \
                       __global S *psum, __global T *pmin, __global T *pmax,             \
                       __global uint *counts, __local S *ssum, __local T *smin,          \
                       __local T *smax, __local uint *scount)                            \
    {                                                                                    \
        S sum = SZERO;                                                                   \
        T mn = MININIT, mx = MAXINIT;                                                    \
        uint c = 0;                                                                      \
        COPROC_FOR_EACH_ROW(i, n) {                                                      \
            if ((bitmap[i >> 5] >> (uint)(i & 31)) & 1u) {                               \
                T v = in[i];                                                             \
                sum = SADDV(sum, v);                                                     \
                mn = MINOP(mn, v);                                                       \
                mx = MAXOP(mx, v);                                                       \
                c++;                                                                     \
            }                                                                            \
        }                                                                                \
        uint lid = get_local_id(0);                                                      \
        ssum[lid] = sum;                                                                 \
        smin[lid] = mn;                                                                  \
        smax[lid] = mx;                                                                  \
        scount[lid] = c;                                                                 \
        COPROC_LOCAL_REDUCE(ssum, SADD);                                                 \
        COPROC_LOCAL_REDUCE(smin, MINOP);                                                \
        COPROC_LOCAL_REDUCE(smax, MAXOP);                                                \
        COPROC_LOCAL_REDUCE(scount, GA_ADD);                                             \
        if (lid == 0) {                                                                  \
            uint g = get_group_id(0);                                                    \
            psum[g] = ssum[0];                                                           \
            pmin[g] = smin[0];                                                           \
            pmax[g] = smax[0];                                                           \
            counts[g] = scount[0];                                                       \
        }                                                                                \
    }

/* Integer sums widen to 64 bits and wrap; float min/max start from NaN, which
 * fmin/fmax skip (NaN only when every selected row is NaN). */
#define RW_ADDV(s, v) ((s) + (v))
REDUCE_WHERE_KERNEL(reduce_where_i32, int, long, 0, RW_ADDV, GA_ADD, INT_MAX, INT_MIN, min, max)
REDUCE_WHERE_KERNEL(reduce_where_i64, long, long, 0, RW_ADDV, GA_ADD, LONG_MAX, LONG_MIN, min, max)
REDUCE_WHERE_KERNEL(reduce_where_u32, uint, ulong, 0, RW_ADDV, GA_ADD, UINT_MAX, 0, min, max)
REDUCE_WHERE_KERNEL(reduce_where_u64, ulong, ulong, 0, RW_ADDV, GA_ADD, ULONG_MAX, 0, min, max)
#ifdef COPROC_FP64
REDUCE_WHERE_KERNEL(reduce_where_f32, float, double, 0, RW_ADDV, GA_ADD, NAN, NAN, fmin, fmax)
REDUCE_WHERE_KERNEL(reduce_where_f64, double, double, 0, RW_ADDV, GA_ADD, (double)NAN,
                    (double)NAN, fmin, fmax)
#else
/* Without fp64: compensated float pairs and exact subnormals (prelude.cl). */
REDUCE_WHERE_KERNEL(reduce_where_f32, float, coproc_fsum, coproc_fsum_zero(), coproc_fsum_addf,
                    coproc_fsum_add, NAN, NAN, fmin, fmax)
#endif
