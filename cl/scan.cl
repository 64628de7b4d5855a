/* scan.cl - prefix sums and flag compaction, reduce-then-scan in three passes
 * (no inter-group waiting, so no forward-progress assumption):
 *   1. sums:   each work-group reduces its contiguous range of rows;
 *   2. groups: one work-group turns the group sums into exclusive offsets
 *              (sums[groups] receives the total);
 *   3. apply:  each work-group scans its range again, starting from its offset.
 * Group g owns rows [g * chunk, (g + 1) * chunk) in every pass.
 * CPU path: one work-item per group walks its range sequentially. GPU path:
 * tiles of SCAN_ITEMS * local rows are loaded coalesced into local memory,
 * each work-item scans SCAN_ITEMS consecutive rows, a work-group scan joins them.
 * Nulls (has_valid, the sums and apply kernels): a row whose bit in the
 * validity bitmap `valid` is 0 adds 0 (its output is null; runtime/ops/scan.c
 * gives the output the input's validity). */

#define SCAN_ITEMS 8
/* One padding slot every 32 so work-items reading rows lid * SCAN_ITEMS + k
 * hit different local memory banks. */
#define SCAN_PAD(i) ((i) + ((i) >> 5))
#define SCAN_ADD(a, b) ((a) + (b))
#define SCAN_LOAD_VALUE(x) (x)
#define SCAN_LOAD_FLAG(x) ((x) != 0)
/* Row i counts: no validity, or its bit set. */
#define SCAN_VALID(i) (!has_valid || ((valid[(i) >> 5] >> (uint)((i) & 31)) & 1u))

/* Rows [start, end) with nulls, one work-item walking them in order (the CPU
 * path): a validity word (32 rows) at a time where the rows fill it, so a
 * word of valid rows runs ROW(i, 1) as plainly as without nulls; else
 * ROW(i, ok) row by row, ok the row's bit. */
#define SCAN_VALID_WALK(start, end, ROW, A, B)                                           \
    {                                                                                    \
        ulong i = (start);                                                               \
        for (; i < (end) && (i & 31); i++)                                               \
            ROW(i, SCAN_VALID(i), A, B)                                                  \
        for (; i + 32 <= (end); i += 32) {                                               \
            uint m_ = valid[i >> 5];                                                     \
            if (m_ == 0xFFFFFFFFu)                                                       \
                for (uint j_ = 0; j_ < 32; j_++)                                         \
                    ROW(i + j_, 1, A, B)                                                 \
            else                                                                         \
                for (uint j_ = 0; j_ < 32; j_++)                                         \
                    ROW(i + j_, (m_ >> j_) & 1u, A, B)                                   \
        }                                                                                \
        for (; i < (end); i++)                                                           \
            ROW(i, SCAN_VALID(i), A, B)                                                  \
    }

/* The rows [start, end) of this work-group. */
#define SCAN_GROUP_RANGE(n, chunk)                                                       \
    ulong start = min((ulong)get_group_id(0) * (chunk), (ulong)(n));                     \
    ulong end = min(start + (chunk), (ulong)(n))

/* Inclusive Hillis-Steele scan of scratch[0..L) in place; all work-items call it. */
#define SCAN_LOCAL_INCLUSIVE(S, scratch, lid, L)                                         \
    for (uint off_ = 1; off_ < (L); off_ <<= 1) {                                        \
        barrier(CLK_LOCAL_MEM_FENCE);                                                    \
        S t_ = (lid) >= off_ ? scratch[(lid) - off_] : (S)0;                             \
        barrier(CLK_LOCAL_MEM_FENCE);                                                    \
        scratch[lid] += t_;                                                              \
    }                                                                                    \
    barrier(CLK_LOCAL_MEM_FENCE)

/* Pass 1: sums[group] = sum of LOAD(in[i]) over the group's rows. */
#define SCAN_SUM_ROW(i, ok, S, LOAD) acc += (ok) ? (S)LOAD(in[i]) : (S)0;
#define SCAN_SUMS_KERNEL(NAME, T, S, LOAD)                                               \
    __kernel void NAME(__global const T *in, ulong n, ulong chunk, __global S *sums,     \
                       __local S *scratch, __global const uint *valid, int has_valid)    \
    {                                                                                    \
        SCAN_GROUP_RANGE(n, chunk);                                                      \
        S acc = 0;                                                                       \
        if (has_valid && COPROC_CPU) { /* one work-item a group: its rows in order */    \
            SCAN_VALID_WALK(start, end, SCAN_SUM_ROW, S, LOAD)                           \
        } else if (has_valid)                                                            \
            for (ulong i = start + get_local_id(0); i < end; i += get_local_size(0))     \
                acc += SCAN_VALID(i) ? (S)LOAD(in[i]) : (S)0;                            \
        else                                                                             \
            for (ulong i = start + get_local_id(0); i < end; i += get_local_size(0))     \
                acc += (S)LOAD(in[i]);                                                   \
        scratch[get_local_id(0)] = acc;                                                  \
        COPROC_LOCAL_REDUCE(scratch, SCAN_ADD);                                          \
        if (get_local_id(0) == 0)                                                        \
            sums[get_group_id(0)] = scratch[0];                                          \
    }

/* Pass 2 (one work-group): sums[0..groups) becomes exclusive, sums[groups] the total. */
#define SCAN_GROUPS_KERNEL(NAME, S)                                                      \
    __kernel void NAME(__global S *sums, uint groups, __local S *scratch)                \
    {                                                                                    \
        uint lid = get_local_id(0), L = get_local_size(0);                               \
        S carry = 0;                                                                     \
        for (uint base = 0; base < groups; base += L) {                                  \
            uint i = base + lid;                                                         \
            scratch[lid] = i < groups ? sums[i] : (S)0;                                  \
            SCAN_LOCAL_INCLUSIVE(S, scratch, lid, L);                                    \
            if (i < groups)                                                              \
                sums[i] = carry + (lid ? scratch[lid - 1] : (S)0);                       \
            carry += scratch[L - 1];                                                     \
            barrier(CLK_LOCAL_MEM_FENCE);                                                \
        }                                                                                \
        if (lid == 0)                                                                    \
            sums[groups] = carry;                                                        \
    }

#if COPROC_CPU
/* Pass 3, CPU path: a sequential scan of the work-item's chunk. */
#define SCAN_INCLUSIVE_ROW(i, ok, O, unused)                                             \
    {                                                                                    \
        acc += (ok) ? (O)in[i] : (O)0;                                                   \
        out[i] = acc;                                                                    \
    }
#define SCAN_EXCLUSIVE_ROW(i, ok, O, unused)                                             \
    {                                                                                    \
        O v_ = (ok) ? (O)in[i] : (O)0;                                                   \
        out[i] = acc;                                                                    \
        acc += v_;                                                                       \
    }
#define SCAN_APPLY_KERNEL(NAME, T, O, S)                                                 \
    __kernel void NAME(__global const T *in, ulong n, ulong chunk, __global const S *sums, \
                       __global O *out, int inclusive, __local O *tile, __local O *scratch, \
                       __global const uint *valid, int has_valid)                        \
    {                                                                                    \
        SCAN_GROUP_RANGE(n, chunk);                                                      \
        O acc = (O)sums[get_group_id(0)];                                                \
        if (has_valid && inclusive)                                                      \
            SCAN_VALID_WALK(start, end, SCAN_INCLUSIVE_ROW, O, 0)                        \
        else if (has_valid)                                                              \
            SCAN_VALID_WALK(start, end, SCAN_EXCLUSIVE_ROW, O, 0)                        \
        else if (inclusive)                                                              \
            for (ulong i = start; i < end; i++) {                                        \
                acc += (O)in[i];                                                         \
                out[i] = acc;                                                            \
            }                                                                            \
        else                                                                             \
            for (ulong i = start; i < end; i++) {                                        \
                O v = (O)in[i];                                                          \
                out[i] = acc;                                                            \
                acc += v;                                                                \
            }                                                                            \
    }

/* Pass 3 of flag compaction: positions[offset + k] = row of the k-th nonzero flag. */
__kernel void scan_positions(__global const uint *flags, ulong n, ulong chunk,
                             __global const ulong *sums, __global uint *positions,
                             __local uint *tile, __local uint *scratch)
{
    SCAN_GROUP_RANGE(n, chunk);
    ulong at = sums[get_group_id(0)];
    for (ulong i = start; i < end; i++)
        if (flags[i])
            positions[at++] = (uint)i;
}
#else
/* Load tile rows [base, base + SCAN_ITEMS * L) coalesced; each work-item then
 * reads its SCAN_ITEMS consecutive values into mine[] and their sum into
 * scratch[lid], and the work-group scan makes scratch inclusive. */
#define SCAN_TILE_LOAD(O, LOAD)                                                          \
    for (uint k = 0; k < SCAN_ITEMS; k++) {                                              \
        ulong r = base + k * L + lid;                                                    \
        tile[SCAN_PAD(k * L + lid)] = r < end && SCAN_VALID(r) ? (O)LOAD(in[r]) : (O)0;  \
    }                                                                                    \
    barrier(CLK_LOCAL_MEM_FENCE);                                                        \
    O mine[SCAN_ITEMS];                                                                  \
    O sum = 0;                                                                           \
    for (uint k = 0; k < SCAN_ITEMS; k++) {                                              \
        mine[k] = tile[SCAN_PAD(lid * SCAN_ITEMS + k)];                                  \
        sum += mine[k];                                                                  \
    }                                                                                    \
    scratch[lid] = sum;                                                                  \
    SCAN_LOCAL_INCLUSIVE(O, scratch, lid, L)

#define SCAN_APPLY_KERNEL(NAME, T, O, S)                                                 \
    __kernel void NAME(__global const T *in, ulong n, ulong chunk, __global const S *sums, \
                       __global O *out, int inclusive, __local O *tile, __local O *scratch, \
                       __global const uint *valid, int has_valid)                        \
    {                                                                                    \
        SCAN_GROUP_RANGE(n, chunk);                                                      \
        uint lid = get_local_id(0), L = get_local_size(0);                               \
        O carry = (O)sums[get_group_id(0)];                                              \
        for (ulong base = start; base < end; base += (ulong)L * SCAN_ITEMS) {            \
            SCAN_TILE_LOAD(O, SCAN_LOAD_VALUE);                                          \
            O run = carry + (lid ? scratch[lid - 1] : (O)0);                             \
            for (uint k = 0; k < SCAN_ITEMS; k++) {                                      \
                O v = mine[k];                                                           \
                if (inclusive)                                                           \
                    run += v;                                                            \
                tile[SCAN_PAD(lid * SCAN_ITEMS + k)] = run;                              \
                if (!inclusive)                                                          \
                    run += v;                                                            \
            }                                                                            \
            carry += scratch[L - 1];                                                     \
            barrier(CLK_LOCAL_MEM_FENCE);                                                \
            for (uint k = 0; k < SCAN_ITEMS; k++) {                                      \
                ulong r = base + k * L + lid;                                            \
                if (r < end)                                                             \
                    out[r] = tile[SCAN_PAD(k * L + lid)];                                \
            }                                                                            \
            barrier(CLK_LOCAL_MEM_FENCE);                                                \
        }                                                                                \
    }

__kernel void scan_positions(__global const uint *in, ulong n, ulong chunk,
                             __global const ulong *sums, __global uint *positions,
                             __local uint *tile, __local uint *scratch)
{
    SCAN_GROUP_RANGE(n, chunk);
    uint lid = get_local_id(0), L = get_local_size(0);
    ulong carry = sums[get_group_id(0)];
    const int has_valid = 0; /* flags have no nulls */
    __global const uint *valid = 0;
    for (ulong base = start; base < end; base += (ulong)L * SCAN_ITEMS) {
        SCAN_TILE_LOAD(uint, SCAN_LOAD_FLAG);
        ulong at = carry + (lid ? scratch[lid - 1] : 0u);
        ulong row = base + (ulong)lid * SCAN_ITEMS;
        for (uint k = 0; k < SCAN_ITEMS; k++)
            if (mine[k])
                positions[at++] = (uint)(row + k);
        carry += scratch[L - 1];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
}
#endif

SCAN_SUMS_KERNEL(scan_sums_i32, int, long, SCAN_LOAD_VALUE)
SCAN_SUMS_KERNEL(scan_sums_i64, long, long, SCAN_LOAD_VALUE)
SCAN_SUMS_KERNEL(scan_sums_u32, uint, ulong, SCAN_LOAD_VALUE)
SCAN_SUMS_KERNEL(scan_sums_u64, ulong, ulong, SCAN_LOAD_VALUE)
SCAN_SUMS_KERNEL(scan_sums_f32, float, float, SCAN_LOAD_VALUE)
SCAN_SUMS_KERNEL(scan_sums_flags, uint, ulong, SCAN_LOAD_FLAG)
/* Signed and unsigned 64-bit sums wrap alike: one kernel serves both. */
SCAN_GROUPS_KERNEL(scan_groups_u64, ulong)
SCAN_GROUPS_KERNEL(scan_groups_f32, float)
SCAN_APPLY_KERNEL(scan_apply_i32, int, long, long)
SCAN_APPLY_KERNEL(scan_apply_i64, long, long, long)
SCAN_APPLY_KERNEL(scan_apply_u32, uint, ulong, ulong)
SCAN_APPLY_KERNEL(scan_apply_u64, ulong, ulong, ulong)
SCAN_APPLY_KERNEL(scan_apply_f32, float, float, float)
/* The uint32 primitive: 32-bit output (wraps), 64-bit group sums for the total. */
SCAN_APPLY_KERNEL(scan_apply_u32_u32, uint, uint, ulong)
#ifdef COPROC_FP64
SCAN_SUMS_KERNEL(scan_sums_f64, double, double, SCAN_LOAD_VALUE)
SCAN_GROUPS_KERNEL(scan_groups_f64, double)
SCAN_APPLY_KERNEL(scan_apply_f64, double, double, double)
#endif
