/* hash_join.cl - equi-join of two integer key columns (runtime/ops/hash_join.c).
 *
 * Build side (left): a bucketed table laid out like a CSR matrix, built in two
 * passes with no waiting and no 64-bit atomics. B buckets (a power of two,
 * about one left row each): hj_count_* counts the rows per bucket
 * (atomic_inc); an exclusive scan of the B + 1 counts gives each bucket's start
 * (start[B] = all rows); hj_place_* puts every row at start[b] + a slot taken
 * with atomic_dec on the bucket's count, so the bucket's (key, row) entries
 * are contiguous (one vector per entry: key and row share a memory sector).
 * Duplicate keys simply share a bucket.
 * Probe side (right): hj_matches_* counts each probe row's matches by walking
 * its bucket; an exclusive scan of the counts gives every probe row the first
 * output position of its pairs; hj_pairs_* walks the bucket again and writes
 * (left row, right row) pairs there. So the output is exactly sized, with no
 * atomics at all in the probe passes.
 */

/* murmur3's 64-bit finaliser; keys are hashed as raw bits (32-bit keys zero-extended) */
static inline uint hj_bucket(ulong k, uint mask)
{
    k ^= k >> 33;
    k *= 0xff51afd7ed558ccdUL;
    k ^= k >> 33;
    k *= 0xc4ceb9fe1a85ec53UL;
    k ^= k >> 33;
    return (uint)k & mask;
}

#define HJ_KERNELS(SUFFIX, KT, ET)                                                       \
    __kernel void hj_count_##SUFFIX(__global const KT *keys, ulong n, uint mask,          \
                                    __global uint *bucket_count)                          \
    {                                                                                    \
        COPROC_FOR_EACH_ROW(i, n) { atomic_inc(&bucket_count[hj_bucket(keys[i], mask)]); } \
    }                                                                                    \
                                                                                         \
    __kernel void hj_place_##SUFFIX(__global const KT *keys, ulong n, uint mask,          \
                                    __global const uint *bucket_start,                    \
                                    __global uint *bucket_count, __global ET *entry)      \
    {                                                                                    \
        COPROC_FOR_EACH_ROW(i, n) {                                                      \
            KT k = keys[i];                                                              \
            uint b = hj_bucket(k, mask);                                                 \
            uint at = bucket_start[b] + atomic_dec(&bucket_count[b]) - 1;                \
            entry[at] = (ET)(k, (KT)i);                                                  \
        }                                                                                \
    }                                                                                    \
                                                                                         \
    __kernel void hj_matches_##SUFFIX(__global const KT *probe, ulong n, uint mask,       \
                                      __global const uint *bucket_start,                  \
                                      __global const ET *entry, __global uint *matches)   \
    {                                                                                    \
        COPROC_FOR_EACH_ROW(i, n) {                                                      \
            KT k = probe[i];                                                             \
            uint b = hj_bucket(k, mask);                                                 \
            uint m = 0;                                                                  \
            for (uint e = bucket_start[b], end = bucket_start[b + 1]; e < end; e++)      \
                m += entry[e].x == k;                                                    \
            matches[i] = m;                                                              \
        }                                                                                \
    }                                                                                    \
                                                                                         \
    __kernel void hj_pairs_##SUFFIX(__global const KT *probe, ulong n, uint mask,         \
                                    __global const uint *bucket_start,                    \
                                    __global const ET *entry,                             \
                                    __global const uint *matches,                         \
                                    __global const uint *offsets, __global uint *out_left, \
                                    __global uint *out_right)                             \
    {                                                                                    \
        COPROC_FOR_EACH_ROW(i, n) {                                                      \
            if (matches[i] == 0)                                                         \
                continue;                                                                \
            KT k = probe[i];                                                             \
            uint b = hj_bucket(k, mask);                                                 \
            uint o = offsets[i];                                                         \
            for (uint e = bucket_start[b], end = bucket_start[b + 1]; e < end; e++) {    \
                ET en = entry[e];                                                        \
                if (en.x == k) {                                                         \
                    out_left[o] = (uint)en.y;                                            \
                    out_right[o] = (uint)i;                                              \
                    o++;                                                                 \
                }                                                                        \
            }                                                                            \
        }                                                                                \
    }

HJ_KERNELS(k32, uint, uint2)
HJ_KERNELS(k64, ulong, ulong2)
