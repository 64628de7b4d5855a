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
 * no work-item ever waits for another) is a duplicate: it goes on the owner's
 * list of duplicates (next[], atomic_xchg on next[owner]), is counted there
 * (dups[owner], atomic_add) and HJ_DUPS is set in the row word - once for each
 * run of one key's duplicates that a work-item meets, linked in private first,
 * so that a heavy key is not three contended atomics a row. So a probe reads
 * one slot per step and stops at its key or at a free slot; counting reads
 * dups[] and writing pairs follows next[], only for keys that have duplicates.
 *
 * Probe side (right), never per-row arrays:
 *   hj_count_*   the pairs per work-group (64-bit), for the count-only join;
 *   hj_items_*   the pairs per work-item (uint, saturated); their exclusive scan
 *                (on the host: a few per compute unit) gives each work-item where
 *                its pairs start;
 *   hj_pairs_*   probes again and writes each work-item's pairs from there, and
 *                where they ended (the host checks them against the scan).
 * Where a device caps a work-item's loop steps (quirks.h max_loop_steps) and a
 * work-item has more pairs than a task may write (ops/join_tasks.h), the
 * lists are laid out as arrays instead (hj_dup_start, hj_dup_rows_*: a key's
 * k-th match found without walking k steps) and hj_task_pairs_* writes the
 * pairs, each task a range of one work-item's pairs.
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

/* The pairs of a probe row whose lookup gave the row word `row`. */
static inline uint hj_count_row(__global const uint *dups, uint row)
{
    return row == HJ_EMPTY ? 0 : row & HJ_DUPS ? 1 + dups[row & ~HJ_DUPS] : 1;
}

/* Write probe row i's pairs from o on; returns where the next pairs go. */
static inline uint hj_write_row(__global const uint *next, uint row, uint i, uint o,
                                __global uint *out_left, __global uint *out_right)
{
    if (row == HJ_EMPTY)
        return o;
    out_left[o] = row & ~HJ_DUPS;
    out_right[o++] = i;
    if (row & HJ_DUPS)
        for (uint d = next[row & ~HJ_DUPS]; d != HJ_EMPTY; d = next[d]) {
            out_left[o] = d;
            out_right[o++] = i;
        }
    return o;
}

/* For each probe row i of this work-item, `row` = its lookup's row word, then the
 * statement that follows. On the CPU path the rows go HJ_BATCH at a time through
 * hj_find_batch_* (the work-item's chunk as COPROC_FOR_EACH_ROW gives it); the
 * inner for-headers only declare i and row, once per row. */
#define HJ_BATCH 8
#if COPROC_CPU
#define HJ_EACH_ROW_FOUND(S, i, row, n)                                                  \
    for (ulong i##_chunk = ((n) + get_global_size(0) - 1) / get_global_size(0),          \
               i##_0 = get_global_id(0) * i##_chunk,                                     \
               i##_end = min((ulong)(n), i##_0 + i##_chunk);                             \
         i##_0 < i##_end; i##_0 += HJ_BATCH)                                             \
        for (uint i##_rows[HJ_BATCH], i##_j = (hj_find_batch_##S(table, probe, i##_0,    \
                                                                 i##_end, shift, mask,   \
                                                                 i##_rows), 0);          \
             i##_j < HJ_BATCH && i##_0 + i##_j < i##_end; i##_j++)                       \
            for (ulong i = i##_0 + i##_j, i##_once = 1; i##_once; i##_once = 0)          \
                for (uint row = i##_rows[i##_j], row##_once = 1; row##_once; row##_once = 0)
#else
#define HJ_EACH_ROW_FOUND(S, i, row, n)                                                  \
    COPROC_FOR_EACH_ROW(i, n)                                                            \
        for (uint row = hj_find_##S(table, probe[i], shift, mask), row##_once = 1;       \
             row##_once; row##_once = 0)
#endif

/* The rows HJ_EACH_ROW_FOUND gives work-item j of `items` over n rows: from
 * HJ_ITEM_FIRST below HJ_ITEM_END, by HJ_ITEM_STEP. */
#if COPROC_CPU
#define HJ_ITEM_FIRST(n, j, items) ((j) * (((n) + (items)-1) / (items)))
#define HJ_ITEM_END(n, j, items) min((ulong)(n), ((j) + 1) * (((n) + (items)-1) / (items)))
#define HJ_ITEM_STEP(items) 1
#else
#define HJ_ITEM_FIRST(n, j, items) (j)
#define HJ_ITEM_END(n, j, items) ((ulong)(n))
#define HJ_ITEM_STEP(items) (items)
#endif

/* Write pairs q .. qe - 1 of probe row i (row word `row`, pairs from o on): pair
 * 0 is the owner, pair q > 0 its (q - 1)-th duplicate, from dup_rows at the
 * owner's start (dup_end[owner] - dups[owner]). */
static inline void hj_write_range(__global const uint *dups, __global const uint *dup_end,
                                  __global const uint *dup_rows, uint row, uint i, uint o,
                                  uint q, uint qe, __global uint *out_left,
                                  __global uint *out_right)
{
    uint owner = row & ~HJ_DUPS;
    uint first = row & HJ_DUPS ? dup_end[owner] - dups[owner] : 0;
    for (; q < qe; q++) {
        out_left[o + q] = q ? dup_rows[first + q - 1] : owner;
        out_right[o + q] = i;
    }
}

/* Where each key's duplicates start in dup_rows: next[owner], claimed from
 * *total (next[] then holds no lists; hj_dup_rows_* moves it to their end). */
__kernel void hj_dup_start(__global const uint *dups, ulong n, __global uint *next,
                           __global uint *total)
{
    COPROC_FOR_EACH_ROW(i, n) {
        uint d = dups[i];
        if (d)
            next[i] = atomic_add(total, d);
    }
}

/* Push a work-item's run of duplicates (rows head .. tail, linked by next[],
 * cn of them) of the key owned by row co, in slot cs, onto co's list. */
#define HJ_PUSH_RUN(S)                                                                   \
    if (cn) {                                                                            \
        next[ctail] = atomic_xchg(&next[co], chead);                                     \
        atomic_add(&dups[co], cn);                                                       \
        atomic_or(table + (size_t)cs * HJ_W_##S + HJ_ROW_##S, HJ_DUPS);                  \
    }

#define HJ_KERNELS(S, KT)                                                                \
    /* A row whose key is owned already is a duplicate. The duplicates of the      \
     * last such key a work-item met (its cache: ck, owned by row co in slot cs)   \
     * are linked in private and pushed on the owner's list at once, when another  \
     * key's duplicate comes or the rows end: a heavy key (most rows on one key)   \
     * costs each work-item three atomics on the key's words, not three a row.     \
     * A row of a new key claims a slot and leaves the cache as it is. */           \
    __kernel void hj_build_##S(__global const KT *keys, ulong n, uint shift, uint mask,  \
                               __global uint *table, __global uint *next,                \
                               __global uint *dups)                                      \
    {                                                                                    \
        KT ck = 0;                                                                       \
        uint co = HJ_EMPTY, cs = 0, chead = 0, ctail = 0, cn = 0;                        \
        COPROC_FOR_EACH_ROW(i, n) {                                                      \
            KT k = keys[i];                                                              \
            if (co != HJ_EMPTY && k == ck) {                                             \
                next[i] = chead;                                                         \
                chead = (uint)i;                                                         \
                cn++;                                                                    \
            } else {                                                                     \
                /* Ends on a flag, not a break: llvmpipe (rusticl) mishandled lanes    \
                 * that break out while others of their SIMD batch loop on. */          \
                for (uint s = hj_slot(k, shift), done = 0; !done; s = (s + 1) & mask) {  \
                    __global uint *slot = table + (size_t)s * HJ_W_##S;                  \
                    uint o = atomic_cmpxchg(slot + HJ_ROW_##S, HJ_EMPTY, (uint)i);       \
                    if (o == HJ_EMPTY) {                                                 \
                        HJ_STORE_KEY_##S(slot, k);                                       \
                        done = 1;                                                        \
                    } else if (keys[o & ~HJ_DUPS] == k) {                                \
                        HJ_PUSH_RUN(S)                                                   \
                        ck = k;                                                          \
                        co = o & ~HJ_DUPS;                                               \
                        cs = s;                                                          \
                        chead = ctail = (uint)i;                                         \
                        cn = 1;                                                          \
                        done = 1;                                                        \
                    }                                                                    \
                }                                                                        \
            }                                                                            \
        }                                                                                \
        HJ_PUSH_RUN(S)                                                                   \
    }                                                                                    \
                                                                                         \
    /* The build rows of k, from slot s whose words are e: the owner's row word      \
     * (HJ_EMPTY: none). One exit: Mesa's llvmpipe lost lanes returning from inside  \
     * an endless loop (GPU path, rusticl). */                                       \
    static inline uint hj_find_from_##S(__global const uint *table, KT k, uint s,        \
                                        HJ_VT_##S e, uint mask)                          \
    {                                                                                    \
        while (HJ_ROWW_##S(e) != HJ_EMPTY && HJ_KEY_##S(e) != k) {                       \
            s = (s + 1) & mask;                                                          \
            e = HJ_LOAD_##S(s, table);                                                   \
        }                                                                                \
        return HJ_ROWW_##S(e);                                                           \
    }                                                                                    \
                                                                                         \
    /* The row words of probe rows i0 .. i0 + HJ_BATCH - 1 (those below end): the     \
     * home slots of all loaded first, so their cache misses overlap. */              \
    static inline void hj_find_batch_##S(__global const uint *table,                     \
                                         __global const KT *probe, ulong i0, ulong end,  \
                                         uint shift, uint mask, uint *rows)              \
    {                                                                                    \
        KT k[HJ_BATCH];                                                                  \
        uint s[HJ_BATCH];                                                                \
        HJ_VT_##S e[HJ_BATCH];                                                           \
        for (uint j = 0; j < HJ_BATCH; j++) {                                            \
            k[j] = probe[min(i0 + j, end - 1)];                                          \
            s[j] = hj_slot(k[j], shift);                                                 \
        }                                                                                \
        for (uint j = 0; j < HJ_BATCH; j++)                                              \
            e[j] = HJ_LOAD_##S(s[j], table);                                             \
        for (uint j = 0; j < HJ_BATCH; j++)                                              \
            rows[j] = hj_find_from_##S(table, k[j], s[j], e[j], mask);                   \
    }                                                                                    \
                                                                                         \
    static inline uint hj_find_##S(__global const uint *table, KT k, uint shift, uint mask) \
    {                                                                                    \
        uint s = hj_slot(k, shift);                                                      \
        return hj_find_from_##S(table, k, s, HJ_LOAD_##S(s, table), mask);               \
    }                                                                                    \
                                                                                         \
    /* The pairs of each probe row this work-item owns. */                               \
    static inline ulong hj_probe_count_##S(__global const KT *probe, ulong n,            \
                                           __global const uint *table, uint shift,       \
                                           uint mask, __global const uint *dups)         \
    {                                                                                    \
        ulong m = 0;                                                                     \
        HJ_EACH_ROW_FOUND(S, i, row, n) { m += hj_count_row(dups, row); }                \
        return m;                                                                        \
    }                                                                                    \
                                                                                         \
    __kernel void hj_count_##S(__global const KT *probe, ulong n,                        \
                               __global const uint *table, uint shift, uint mask,        \
                               __global const uint *dups, __global ulong *group_pairs,   \
                               __local ulong *scratch)                                   \
    {                                                                                    \
        scratch[get_local_id(0)] = hj_probe_count_##S(probe, n, table, shift, mask, dups); \
        COPROC_LOCAL_REDUCE(scratch, HJ_ADD);                                            \
        if (get_local_id(0) == 0)                                                        \
            group_pairs[get_group_id(0)] = scratch[0];                                   \
    }                                                                                    \
                                                                                         \
    __kernel void hj_items_##S(__global const KT *probe, ulong n,                        \
                               __global const uint *table, uint shift, uint mask,        \
                               __global const uint *dups, __global uint *item_pairs)     \
    {                                                                                    \
        ulong m = hj_probe_count_##S(probe, n, table, shift, mask, dups);                \
        item_pairs[get_global_id(0)] = m > 0xffffffffUL ? 0xffffffffu : (uint)m;         \
    }                                                                                    \
                                                                                         \
    __kernel void hj_pairs_##S(__global const KT *probe, ulong n,                        \
                               __global const uint *table, uint shift, uint mask,        \
                               __global const uint *next, __global const uint *item_start, \
                               __global uint *out_left, __global uint *out_right,        \
                               __global uint *item_end)                                  \
    {                                                                                    \
        uint o = item_start[get_global_id(0)];                                           \
        HJ_EACH_ROW_FOUND(S, i, row, n) {                                                \
            o = hj_write_row(next, row, (uint)i, o, out_left, out_right);                \
        }                                                                                \
        item_end[get_global_id(0)] = o;                                                  \
    }                                                                                    \
                                                                                         \
    /* Each duplicate build row into its key's range of dup_rows (any order). */        \
    __kernel void hj_dup_rows_##S(__global const KT *keys, ulong n,                      \
                                  __global const uint *table, uint shift, uint mask,     \
                                  __global uint *next, __global uint *dup_rows)          \
    {                                                                                    \
        COPROC_FOR_EACH_ROW(i, n) {                                                      \
            uint owner = hj_find_##S(table, keys[i], shift, mask) & ~HJ_DUPS;            \
            if (owner != (uint)i)                                                        \
                dup_rows[atomic_inc(&next[owner])] = (uint)i;                            \
        }                                                                                \
    }                                                                                    \
                                                                                         \
    /* Task t: pairs [task_begin[t], task_begin[t + 1]) of work-item task_item[t] of    \
     * `items` (its pairs start at item_start[]); task_done[t]: how many it wrote.     \
     * Its rows before the range are counted, not written; it stops at the end.       \
     * (No a > o ? a - o : 0: clang makes it llvm.usub.sat, which Oclgrind lacks.) */ \
    __kernel void hj_task_pairs_##S(__global const KT *probe, ulong n,                   \
                                    __global const uint *table, uint shift, uint mask,   \
                                    __global const uint *dups,                           \
                                    __global const uint *dup_end,                        \
                                    __global const uint *dup_rows,                       \
                                    __global const uint *item_start, ulong items,        \
                                    __global const uint *task_item,                      \
                                    __global const uint *task_begin, uint tasks,         \
                                    __global uint *out_left, __global uint *out_right,   \
                                    __global uint *task_done)                            \
    {                                                                                    \
        uint t = get_global_id(0);                                                       \
        if (t < tasks) {                                                                 \
            ulong j = task_item[t], i = HJ_ITEM_FIRST(n, j, items),                      \
                  end = HJ_ITEM_END(n, j, items);                                        \
            uint a = task_begin[t], b = task_begin[t + 1], o = item_start[j], done = 0;  \
            uint c = 0;                                                                  \
            while (i < end &&                                                            \
                   o + (c = hj_count_row(dups, hj_find_##S(table, probe[i], shift,       \
                                                           mask))) <= a) {               \
                o += c;                                                                  \
                i += HJ_ITEM_STEP(items);                                                \
            }                                                                            \
            /* Row i's pairs from a - o on (o <= a < o + c), the next rows' from 0. */   \
            for (uint q = a - o; i < end && o < b; i += HJ_ITEM_STEP(items), q = 0) {    \
                uint row = hj_find_##S(table, probe[i], shift, mask);                    \
                uint qe = min(c = hj_count_row(dups, row), b - o);                       \
                if (c)                                                                   \
                    hj_write_range(dups, dup_end, dup_rows, row, (uint)i, o, q, qe,      \
                                   out_left, out_right);                                 \
                done += qe - q;                                                          \
                o += c;                                                                  \
            }                                                                            \
            task_done[t] = done;                                                         \
        }                                                                                \
    }

HJ_KERNELS(k32, uint)
HJ_KERNELS(k64, ulong)
