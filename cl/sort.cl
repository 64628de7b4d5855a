/* sort.cl - LSD radix sort with 8-bit digits (runtime/ops/sort.c drives it).
 *
 * Keys are sorted as order-preserving unsigned bits (sort_enc*): signed
 * integers flip the sign bit; floats flip every bit when negative, else the
 * sign bit; every NaN becomes all ones, after +inf, so NaNs keep input order.
 * Each group owns a contiguous range of rows. Per pass: a histogram per group
 * (table[digit * groups + group]), an exclusive scan of that table, then a
 * stable scatter: rows of one group go out in row order, groups in order.
 * The first pass's table comes from sort_hist_all_*, which also sums the
 * digit counts of every pass so the host can skip passes whose digit is
 * constant.
 *
 * Scatter flags (sort.c keeps the same values). */
#define SORT_ENC_IN 1u      /* keys in are raw column values: encode on load */
#define SORT_DEC_OUT 2u     /* decode keys on store (last pass) */
#define SORT_IOTA_IN 4u     /* values in are the row positions (argsort's first pass) */
#define SORT_NO_KEYS_OUT 8u /* do not store keys (argsort's last pass) */

/* Key kinds (sort.c: key_kind). */
#define SORT_KIND_SIGNED 1u
#define SORT_KIND_FLOAT 2u

/* GPU path: work-group size at most SORT_MAX_LOCAL, SORT_ITEMS_K* rows per
 * work-item per tile (sort.c mirrors these). */
#define SORT_MAX_LOCAL 256
#define SORT_ITEMS_K32 8
#define SORT_ITEMS_K64 6

/* GPU path: fully unroll loops over a work-item's rows so its arrays stay in
 * registers. Not for CPU compilers (the GPU path runs there only in tests):
 * PoCL's work-group compiler slows down sharply on unrolled barrier code. */
#if defined(__x86_64__) || defined(__i386__) || defined(__aarch64__) || defined(__arm__)
#define SORT_UNROLL
#else
#define SORT_UNROLL _Pragma("unroll")
#endif

uint sort_enc32(uint x, uint kind)
{
    if (kind == SORT_KIND_SIGNED)
        return x ^ 0x80000000u;
    if (kind == SORT_KIND_FLOAT) {
        if ((x & 0x7fffffffu) > 0x7f800000u)
            return 0xffffffffu;
        return (x & 0x80000000u) ? ~x : x ^ 0x80000000u;
    }
    return x;
}

uint sort_dec32(uint y, uint kind)
{
    if (kind == SORT_KIND_SIGNED)
        return y ^ 0x80000000u;
    if (kind == SORT_KIND_FLOAT) {
        if (y == 0xffffffffu)
            return 0x7fc00000u; /* the canonical quiet NaN */
        return (y & 0x80000000u) ? y ^ 0x80000000u : ~y;
    }
    return y;
}

ulong sort_enc64(ulong x, uint kind)
{
    const ulong sign = 0x8000000000000000ul;
    if (kind == SORT_KIND_SIGNED)
        return x ^ sign;
    if (kind == SORT_KIND_FLOAT) {
        if ((x & ~sign) > 0x7ff0000000000000ul)
            return ~0ul;
        return (x & sign) ? ~x : x ^ sign;
    }
    return x;
}

ulong sort_dec64(ulong y, uint kind)
{
    const ulong sign = 0x8000000000000000ul;
    if (kind == SORT_KIND_SIGNED)
        return y ^ sign;
    if (kind == SORT_KIND_FLOAT) {
        if (y == ~0ul)
            return 0x7ff8000000000000ul;
        return (y & sign) ? y ^ sign : ~y;
    }
    return y;
}

/* Rows [begin, end) of this group: in order on the CPU path (one work-item
 * per group), strided over the work-items on the GPU path. */
#if COPROC_CPU
#define SORT_ROWS(i, begin, end) for (ulong i = (begin); i < (end); i++)
#define SORT_LOCAL_INC(p) ((*(p))++)
#else
#define SORT_ROWS(i, begin, end)                                                         \
    for (ulong i = (begin) + get_local_id(0); i < (end); i += get_local_size(0))
#define SORT_LOCAL_INC(p) atomic_inc(p)
#endif

/* Exclusive scan of v over the work-group (at most SORT_MAX_LOCAL items);
 * *total gets the sum. Every work-item must call it. Two levels of 16 with
 * serial sums: a few barriers and no barrier inside a loop, which keeps PoCL's
 * work-group compiler quick. scratch: SORT_MAX_LOCAL + 16 uints. */
uint sort_group_scan(uint v, __local uint *scratch, uint *total)
{
    uint lid = get_local_id(0), n = get_local_size(0), chunks = (n + 15) / 16;
    __local uint *sums = scratch + SORT_MAX_LOCAL;
    scratch[lid] = v;
    barrier(CLK_LOCAL_MEM_FENCE);
    if (lid < chunks) { /* exclusive scan of each chunk of 16, in place */
        uint run = 0;
        for (uint i = lid * 16; i < min(n, lid * 16 + 16); i++) {
            uint x = scratch[i];
            scratch[i] = run;
            run += x;
        }
        sums[lid] = run;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    if (lid == 0) {
        uint run = 0;
        for (uint c = 0; c < chunks; c++) {
            uint x = sums[c];
            sums[c] = run;
            run += x;
        }
        scratch[SORT_MAX_LOCAL + 16] = run;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    uint r = scratch[lid] + sums[lid / 16];
    *total = scratch[SORT_MAX_LOCAL + 16];
    barrier(CLK_LOCAL_MEM_FENCE); /* scratch is reused by the caller */
    return r;
}

/* Digit counts of every pass over the group's rows (keys raw, encoded here):
 * table[(pass * 256 + digit) * groups + group], and totals[pass * 256 + digit]
 * summed over groups (zeroed by the host). */
#define SORT_HIST_ALL(NAME, K, PASSES, ENC)                                              \
    __kernel void NAME(__global const K *keys, ulong n, ulong rows_per_group, uint kind, \
                       __global uint *table, __global uint *totals)                      \
    {                                                                                    \
        __local uint cnt[PASSES * 256];                                                  \
        uint lid = get_local_id(0), nl = get_local_size(0);                              \
        uint g = get_group_id(0), groups = get_num_groups(0);                            \
        for (uint d = lid; d < PASSES * 256; d += nl)                                    \
            cnt[d] = 0;                                                                  \
        barrier(CLK_LOCAL_MEM_FENCE);                                                    \
        ulong begin = (ulong)g * rows_per_group, end = min(n, begin + rows_per_group);   \
        SORT_ROWS(i, begin, end) {                                                       \
            K x = ENC(keys[i], kind);                                                    \
            for (uint p = 0; p < PASSES; p++)                                            \
                SORT_LOCAL_INC(&cnt[p * 256 + ((uint)(x >> (8 * p)) & 255u)]);           \
        }                                                                                \
        barrier(CLK_LOCAL_MEM_FENCE);                                                    \
        for (uint d = lid; d < PASSES * 256; d += nl) {                                  \
            uint c = cnt[d];                                                             \
            table[(ulong)d * groups + g] = c;                                            \
            if (c)                                                                       \
                atomic_add(&totals[d], c);                                               \
        }                                                                                \
    }

/* One pass's digit counts over encoded keys into table[off + digit * groups + group]. */
#define SORT_HIST(NAME, K)                                                               \
    __kernel void NAME(__global const K *keys, ulong n, ulong rows_per_group, uint shift, \
                       __global uint *table, ulong off)                                  \
    {                                                                                    \
        __local uint cnt[256];                                                           \
        uint lid = get_local_id(0), nl = get_local_size(0);                              \
        uint g = get_group_id(0), groups = get_num_groups(0);                            \
        for (uint d = lid; d < 256; d += nl)                                             \
            cnt[d] = 0;                                                                  \
        barrier(CLK_LOCAL_MEM_FENCE);                                                    \
        ulong begin = (ulong)g * rows_per_group, end = min(n, begin + rows_per_group);   \
        SORT_ROWS(i, begin, end) { SORT_LOCAL_INC(&cnt[(uint)(keys[i] >> shift) & 255u]); } \
        barrier(CLK_LOCAL_MEM_FENCE);                                                    \
        for (uint d = lid; d < 256; d += nl)                                             \
            table[off + (ulong)d * groups + g] = cnt[d];                                 \
    }

SORT_HIST_ALL(sort_hist_all_k32, uint, 4, sort_enc32)
SORT_HIST_ALL(sort_hist_all_k64, ulong, 8, sort_enc64)
SORT_HIST(sort_hist_k32, uint)
SORT_HIST(sort_hist_k64, ulong)

/* Exclusive scan in place of table[off, off + len), by one work-group: each
 * work-item sums a contiguous chunk, the group scans the sums, then each
 * work-item rewrites its chunk. The table is 256 x groups, small. A table
 * longer than a work-item's loop steps allow (quirk loop-65535) is scanned in
 * segments, one launch each, in order: `chained` adds *carry (the sum of the
 * segments before), and every launch leaves its end sum in *carry. */
__kernel void sort_scan_table(__global uint *table, ulong off, uint len, __global uint *carry,
                              uint chained)
{
    __local uint scratch[SORT_MAX_LOCAL + 17];
    uint lid = get_local_id(0), nl = get_local_size(0);
    uint chunk = (len + nl - 1) / nl;
    uint b = min(len, lid * chunk), e = min(len, b + chunk);
    __global uint *t = table + off;
    uint sum = 0;
    for (uint i = b; i < e; i++)
        sum += t[i];
    uint total;
    uint base = chained ? *carry : 0;
    uint run = base + sort_group_scan(sum, scratch, &total);
    barrier(CLK_GLOBAL_MEM_FENCE); /* every work-item has read *carry */
    if (lid == 0)
        *carry = base + total;
    for (uint i = b; i < e; i++) {
        uint v = t[i];
        t[i] = run;
        run += v;
    }
}

__kernel void sort_iota(__global uint *out, ulong n)
{
    COPROC_FOR_EACH_ROW(i, n) { out[i] = (uint)i; }
}

#if COPROC_CPU
/* CPU path: one work-item per group walks its rows in order and scatters each
 * to the next free slot of its digit - stable by construction. MOVE moves
 * row i's value to pos; one loop per value kind keeps the loop tight. */
#define SORT_SCATTER_LOOP(K, ENC, DEC, MOVE)                                             \
    for (ulong i = begin; i < end; i++) {                                                \
        K x = kin[i];                                                                    \
        if (enc)                                                                         \
            x = ENC(x, kind);                                                            \
        uint pos = next[(uint)(x >> shift) & 255u]++;                                    \
        if (keys_out)                                                                    \
            kout[pos] = dec ? DEC(x, kind) : x;                                          \
        MOVE;                                                                            \
    }

#define SORT_SCATTER(NAME, K, ITEMS, ENC, DEC)                                           \
    __kernel void NAME(__global const K *kin, __global K *kout, __global const uint *vin, \
                       __global uint *vout, __global const uint *table, ulong off, ulong n, \
                       ulong rows_per_group, uint shift, uint kind, uint flags, uint vwords) \
    {                                                                                    \
        uint g = get_group_id(0), groups = get_num_groups(0);                            \
        uint next[256];                                                                  \
        for (uint d = 0; d < 256; d++)                                                   \
            next[d] = table[off + (ulong)d * groups + g];                                \
        ulong begin = (ulong)g * rows_per_group, end = min(n, begin + rows_per_group);   \
        int enc = (flags & SORT_ENC_IN) != 0, dec = (flags & SORT_DEC_OUT) != 0;         \
        int keys_out = (flags & SORT_NO_KEYS_OUT) == 0;                                  \
        __global const ulong *vin64 = (__global const ulong *)vin;                       \
        __global ulong *vout64 = (__global ulong *)vout;                                 \
        if (vwords == 0)                                                                 \
            SORT_SCATTER_LOOP(K, ENC, DEC, (void)0)                                      \
        else if (flags & SORT_IOTA_IN)                                                   \
            SORT_SCATTER_LOOP(K, ENC, DEC, vout[pos] = (uint)i)                          \
        else if (vwords == 1)                                                            \
            SORT_SCATTER_LOOP(K, ENC, DEC, vout[pos] = vin[i])                           \
        else                                                                             \
            SORT_SCATTER_LOOP(K, ENC, DEC, vout64[pos] = vin64[i])                       \
    }
#else
/*
 * GPU path: the group walks its range in tiles of ITEMS rows per work-item.
 * Each tile is sorted stably in local memory by the pass's 8-bit digit with
 * two 4-bit counting rounds (counters per digit and work-item, packed two
 * 16-bit counters per word; work-item w holds tile rows w*ITEMS.. in order,
 * so the counter scan in (digit, work-item) order gives stable ranks). Then
 * row i of the sorted tile goes to base[digit] + i - first[digit]: runs of
 * one digit are written to consecutive addresses. Values are read through the
 * tile's row index (lidx) once, at the end.
 */
#define SORT_SCATTER(NAME, K, ITEMS, ENC, DEC)                                           \
    __kernel void NAME(__global const K *kin, __global K *kout, __global const uint *vin, \
                       __global uint *vout, __global const uint *table, ulong off, ulong n, \
                       ulong rows_per_group, uint shift, uint kind, uint flags, uint vwords) \
    {                                                                                    \
        __local K lkeys[ITEMS * SORT_MAX_LOCAL];                                         \
        __local ushort lidx[ITEMS * SORT_MAX_LOCAL];                                     \
        __local uint cnt[8 * SORT_MAX_LOCAL];                                            \
        __local uint base[256];                                                          \
        __local ushort first[256];                                                       \
        __local uint scratch[SORT_MAX_LOCAL + 17];                                        \
        uint lid = get_local_id(0), nl = get_local_size(0);                              \
        uint g = get_group_id(0), groups = get_num_groups(0);                            \
        uint tile = nl * ITEMS;                                                          \
        for (uint d = lid; d < 256; d += nl)                                             \
            base[d] = table[off + (ulong)d * groups + g];                                \
        ulong begin = (ulong)g * rows_per_group, end = min(n, begin + rows_per_group);   \
        for (ulong tb = begin; tb < end; tb += tile) {                                   \
            uint valid = (uint)min((ulong)tile, end - tb);                               \
            /* Coalesced load; missing rows become all-ones keys, which sort last. */    \
            SORT_UNROLL for (uint j = 0; j < ITEMS; j++) {                               \
                uint i = j * nl + lid;                                                   \
                K x = (K)0 - (K)1;                                                       \
                if (i < valid) {                                                         \
                    x = kin[tb + i];                                                     \
                    if (flags & SORT_ENC_IN)                                             \
                        x = ENC(x, kind);                                                \
                }                                                                        \
                lkeys[i] = x;                                                            \
            }                                                                            \
            barrier(CLK_LOCAL_MEM_FENCE);                                                \
            K k[ITEMS];                                                                  \
            uint idx[ITEMS];                                                             \
            SORT_UNROLL for (uint j = 0; j < ITEMS; j++) {                               \
                k[j] = lkeys[lid * ITEMS + j];                                           \
                idx[j] = lid * ITEMS + j;                                                \
            }                                                                            \
            SORT_UNROLL for (uint r = 0; r < 2; r++) {                                   \
                uint sh = shift + 4 * r;                                                 \
                uint prior[ITEMS];                                                       \
                SORT_UNROLL for (uint l = 0; l < 8; l++)                                 \
                    cnt[l * nl + lid] = 0;                                               \
                SORT_UNROLL for (uint j = 0; j < ITEMS; j++) {                           \
                    uint d = (uint)(k[j] >> sh) & 15u, s16 = (d >> 3) << 4;              \
                    __local uint *c = &cnt[(d & 7u) * nl + lid];                         \
                    uint cv = *c;                                                        \
                    prior[j] = (cv >> s16) & 0xffffu;                                    \
                    *c = cv + (1u << s16);                                               \
                }                                                                        \
                barrier(CLK_LOCAL_MEM_FENCE);                                            \
                uint run[8], sum = 0;                                                    \
                SORT_UNROLL for (uint q = 0; q < 8; q++) {                               \
                    uint v = cnt[lid * 8 + q];                                           \
                    run[q] = sum;                                                        \
                    sum += v;                                                            \
                }                                                                        \
                uint total;                                                              \
                uint excl = sort_group_scan(sum, scratch, &total);                       \
                SORT_UNROLL for (uint q = 0; q < 8; q++)                                 \
                    cnt[lid * 8 + q] = run[q] + excl;                                    \
                barrier(CLK_LOCAL_MEM_FENCE);                                            \
                /* Digits 8..15 live in the high halves: they follow all of 0..7. */     \
                SORT_UNROLL for (uint j = 0; j < ITEMS; j++) {                           \
                    uint d = (uint)(k[j] >> sh) & 15u, s16 = (d >> 3) << 4;              \
                    uint rank = ((cnt[(d & 7u) * nl + lid] >> s16) & 0xffffu) + prior[j] + \
                                (s16 ? (total & 0xffffu) : 0u);                          \
                    lkeys[rank] = k[j];                                                  \
                    lidx[rank] = (ushort)idx[j];                                         \
                }                                                                        \
                barrier(CLK_LOCAL_MEM_FENCE);                                            \
                if (r == 0) {                                                            \
                    SORT_UNROLL for (uint j = 0; j < ITEMS; j++) {                       \
                        k[j] = lkeys[lid * ITEMS + j];                                   \
                        idx[j] = lidx[lid * ITEMS + j];                                  \
                    }                                                                    \
                    barrier(CLK_LOCAL_MEM_FENCE);                                        \
                }                                                                        \
            }                                                                            \
            /* The tile is sorted by digit: find where each digit's run starts. */       \
            SORT_UNROLL for (uint j = 0; j < ITEMS; j++) {                               \
                uint i = j * nl + lid;                                                   \
                uint d = (uint)(lkeys[i] >> shift) & 255u;                               \
                if (i == 0 || ((uint)(lkeys[i - 1] >> shift) & 255u) != d)               \
                    first[d] = (ushort)i;                                                \
            }                                                                            \
            barrier(CLK_LOCAL_MEM_FENCE);                                                \
            uint end_digit[ITEMS], end_count[ITEMS];                                     \
            SORT_UNROLL for (uint j = 0; j < ITEMS; j++) {                               \
                uint i = j * nl + lid;                                                   \
                end_digit[j] = 256;                                                      \
                end_count[j] = 0;                                                        \
                if (i < valid) {                                                         \
                    K x = lkeys[i];                                                      \
                    uint d = (uint)(x >> shift) & 255u;                                  \
                    uint pos = base[d] + i - first[d];                                   \
                    if (!(flags & SORT_NO_KEYS_OUT))                                     \
                        kout[pos] = (flags & SORT_DEC_OUT) ? DEC(x, kind) : x;           \
                    if (vwords) {                                                        \
                        ulong src = tb + lidx[i];                                        \
                        if (flags & SORT_IOTA_IN)                                        \
                            vout[pos] = (uint)src;                                       \
                        else if (vwords == 1)                                            \
                            vout[pos] = vin[src];                                        \
                        else                                                             \
                            ((__global ulong *)vout)[pos] = ((__global const ulong *)vin)[src]; \
                    }                                                                    \
                    if (i == valid - 1 || ((uint)(lkeys[i + 1] >> shift) & 255u) != d) { \
                        end_digit[j] = d;                                                \
                        end_count[j] = i + 1 - first[d];                                 \
                    }                                                                    \
                }                                                                        \
            }                                                                            \
            barrier(CLK_LOCAL_MEM_FENCE);                                                \
            SORT_UNROLL for (uint j = 0; j < ITEMS; j++)                                 \
                if (end_digit[j] < 256)                                                  \
                    base[end_digit[j]] += end_count[j];                                  \
            barrier(CLK_LOCAL_MEM_FENCE);                                                \
        }                                                                                \
    }
#endif

/* Values move as 32-bit (vwords 1) or 64-bit words (vwords 2), or not at all (0). */
SORT_SCATTER(sort_scatter_k32, uint, SORT_ITEMS_K32, sort_enc32, sort_dec32)
SORT_SCATTER(sort_scatter_k64, ulong, SORT_ITEMS_K64, sort_enc64, sort_dec64)
