/* hash_join.cl - equi-join of two integer key columns (runtime/ops/hash_join.c).
 *
 * Build side (left): one open-addressing table of 2^bits slots (at least twice
 * the build rows), linear probing, slots found by one multiply (Fibonacci
 * hashing: the top bits of key * 2^64 / phi). A slot is W uint words side by
 * side: the key (one word, or two for 64-bit keys: low, high) and the row
 * word, the build row that owns the key. HJ_EMPTY in the row word marks a free
 * slot, so every key value (0 and all-ones too) can be stored.
 *
 * Each distinct key has exactly one slot. hj_build_* claims slots with a 32-bit
 * atomic_cmpxchg on the row word; a row that finds its key already owned (the
 * owner's key is read from the build column itself, which no one writes, so
 * no work-item ever waits for another) pushes itself on the owner's list of
 * duplicates (next[], atomic_xchg on next[owner]), counts itself there
 * (dups[owner], atomic_inc) and sets HJ_DUPS in the row word. So a probe reads
 * one slot per step and stops at its key or at a free slot; counting reads
 * dups[] and writing pairs follows next[], only for keys that have duplicates.
 *
 * Probe side (right), never per-row arrays:
 *   hj_count_*   the pairs per work-group (64-bit), for the count-only join;
 *   hj_items_*   the pairs per work-item (uint, saturated); an exclusive scan of
 *                those gives each work-item where its pairs start;
 *   hj_pairs_*   probes again and writes each work-item's pairs from there.
 * Build rows are below 2^31 (HJ_DUPS is the row word's top bit).
 */
#define HJ_EMPTY 0xffffffffu
#define HJ_DUPS 0x80000000u
#define HJ_ADD(a, b) ((a) + (b))

/* The home slot of k: the top bits of k times 2^64 / phi (shift = 64 - bits). */
static inline uint hj_slot(ulong k, uint shift)
{
    return (uint)((k * 0x9e3779b97f4a7c15UL) >> shift);
}

/* Per key width: words a slot, the slot as a vector, its key and row word. */
#define HJ_W_k32 2
#define HJ_VT_k32 uint2
#define HJ_ROW_k32 1
#define HJ_LOAD_k32(s, t) vload2((s), (t))
#define HJ_KEY_k32(e) (e).x
#define HJ_ROWW_k32(e) (e).y
#define HJ_STORE_KEY_k32(p, k) ((p)[0] = (k))
#define HJ_W_k64 4
#define HJ_VT_k64 uint4
#define HJ_ROW_k64 2
#define HJ_LOAD_k64(s, t) vload4((s), (t))
#define HJ_KEY_k64(e) upsample((e).y, (e).x)
#define HJ_ROWW_k64(e) (e).z
#define HJ_STORE_KEY_k64(p, k) ((p)[0] = (uint)(k), (p)[1] = (uint)((k) >> 32))

#define HJ_KERNELS(S, KT)                                                                \
    __kernel void hj_build_##S(__global const KT *keys, ulong n, uint shift, uint mask,  \
                               __global uint *table, __global uint *next,                \
                               __global uint *dups)                                      \
    {                                                                                    \
        COPROC_FOR_EACH_ROW(i, n) {                                                      \
            KT k = keys[i];                                                              \
            for (uint s = hj_slot(k, shift);; s = (s + 1) & mask) {                      \
                __global uint *slot = table + (size_t)s * HJ_W_##S;                      \
                uint o = atomic_cmpxchg(slot + HJ_ROW_##S, HJ_EMPTY, (uint)i);           \
                if (o == HJ_EMPTY) {                                                     \
                    HJ_STORE_KEY_##S(slot, k);                                           \
                    break;                                                               \
                }                                                                        \
                o &= ~HJ_DUPS;                                                           \
                if (keys[o] == k) {                                                      \
                    next[i] = atomic_xchg(&next[o], (uint)i);                            \
                    atomic_inc(&dups[o]);                                                \
                    atomic_or(slot + HJ_ROW_##S, HJ_DUPS);                               \
                    break;                                                               \
                }                                                                        \
            }                                                                            \
        }                                                                                \
    }                                                                                    \
                                                                                         \
    /* The build rows of k: the owner's row word (HJ_EMPTY: none). One exit: Mesa's      \
     * llvmpipe lost lanes returning from inside an endless loop (GPU path, rusticl). */ \
    static inline uint hj_find_##S(__global const uint *table, KT k, uint shift, uint mask) \
    {                                                                                    \
        uint s = hj_slot(k, shift);                                                      \
        HJ_VT_##S e = HJ_LOAD_##S(s, table);                                             \
        while (HJ_ROWW_##S(e) != HJ_EMPTY && HJ_KEY_##S(e) != k) {                       \
            s = (s + 1) & mask;                                                          \
            e = HJ_LOAD_##S(s, table);                                                   \
        }                                                                                \
        return HJ_ROWW_##S(e);                                                           \
    }                                                                                    \
                                                                                         \
    /* The build rows of k, counted (no list walked). */                                 \
    static inline uint hj_matches_##S(__global const uint *table,                        \
                                      __global const uint *dups, KT k, uint shift,       \
                                      uint mask)                                         \
    {                                                                                    \
        uint row = hj_find_##S(table, k, shift, mask);                                   \
        if (row == HJ_EMPTY)                                                             \
            return 0;                                                                    \
        return row & HJ_DUPS ? 1 + dups[row & ~HJ_DUPS] : 1;                             \
    }                                                                                    \
                                                                                         \
    __kernel void hj_count_##S(__global const KT *probe, ulong n,                        \
                               __global const uint *table, uint shift, uint mask,        \
                               __global const uint *dups, __global ulong *group_pairs,   \
                               __local ulong *scratch)                                   \
    {                                                                                    \
        ulong m = 0;                                                                     \
        COPROC_FOR_EACH_ROW(i, n) { m += hj_matches_##S(table, dups, probe[i], shift, mask); } \
        scratch[get_local_id(0)] = m;                                                    \
        COPROC_LOCAL_REDUCE(scratch, HJ_ADD);                                            \
        if (get_local_id(0) == 0)                                                        \
            group_pairs[get_group_id(0)] = scratch[0];                                   \
    }                                                                                    \
                                                                                         \
    __kernel void hj_items_##S(__global const KT *probe, ulong n,                        \
                               __global const uint *table, uint shift, uint mask,        \
                               __global const uint *dups, __global uint *item_pairs)     \
    {                                                                                    \
        ulong m = 0;                                                                     \
        COPROC_FOR_EACH_ROW(i, n) { m += hj_matches_##S(table, dups, probe[i], shift, mask); } \
        item_pairs[get_global_id(0)] = m > 0xffffffffUL ? 0xffffffffu : (uint)m;         \
    }                                                                                    \
                                                                                         \
    __kernel void hj_pairs_##S(__global const KT *probe, ulong n,                        \
                               __global const uint *table, uint shift, uint mask,        \
                               __global const uint *next, __global const uint *item_start, \
                               __global uint *out_left, __global uint *out_right)        \
    {                                                                                    \
        uint o = item_start[get_global_id(0)];                                           \
        COPROC_FOR_EACH_ROW(i, n) {                                                      \
            uint row = hj_find_##S(table, probe[i], shift, mask);                        \
            if (row == HJ_EMPTY)                                                         \
                continue;                                                                \
            out_left[o] = row & ~HJ_DUPS;                                                \
            out_right[o++] = (uint)i;                                                    \
            if (row & HJ_DUPS)                                                           \
                for (uint d = next[row & ~HJ_DUPS]; d != HJ_EMPTY; d = next[d]) {        \
                    out_left[o] = d;                                                     \
                    out_right[o++] = (uint)i;                                            \
                }                                                                        \
        }                                                                                \
    }

HJ_KERNELS(k32, uint)
HJ_KERNELS(k64, ulong)
