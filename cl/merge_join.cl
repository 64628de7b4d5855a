/* merge_join.cl - sort-merge join and semi-join over sorted integer keys
 * (runtime/ops/merge_join.c sorts copies of the inputs with coproc_sort). */

__kernel void mj_iota(__global uint *out, ulong n)
{
    COPROC_FOR_EACH_ROW(i, n) { out[i] = (uint)i; }
}

/* Searches in sorted a[lo, hi): first index whose key is >= key (lower) or
 * > key (upper). The gallop variants start at lo knowing a[lo - 1] is below
 * the bound, and find it in O(log distance): sorted probes walk forward. */
#define MJ_SEARCH(T, SFX)                                                                \
    ulong mj_lower_##SFX(__global const T *a, ulong lo, ulong hi, T key)                 \
    {                                                                                    \
        while (lo < hi) {                                                                \
            ulong mid = lo + (hi - lo) / 2;                                              \
            if (a[mid] < key)                                                            \
                lo = mid + 1;                                                            \
            else                                                                         \
                hi = mid;                                                                \
        }                                                                                \
        return lo;                                                                       \
    }                                                                                    \
    ulong mj_upper_##SFX(__global const T *a, ulong lo, ulong hi, T key)                 \
    {                                                                                    \
        while (lo < hi) {                                                                \
            ulong mid = lo + (hi - lo) / 2;                                              \
            if (a[mid] <= key)                                                           \
                lo = mid + 1;                                                            \
            else                                                                         \
                hi = mid;                                                                \
        }                                                                                \
        return lo;                                                                       \
    }                                                                                    \
    ulong mj_gallop_lower_##SFX(__global const T *a, ulong lo, ulong n, T key)           \
    {                                                                                    \
        ulong hi = lo, step = 1;                                                         \
        while (hi < n && a[hi] < key) {                                                  \
            lo = hi + 1;                                                                 \
            hi += step;                                                                  \
            step <<= 1;                                                                  \
        }                                                                                \
        return mj_lower_##SFX(a, lo, min(hi, n), key);                                   \
    }                                                                                    \
    ulong mj_gallop_upper_##SFX(__global const T *a, ulong lo, ulong n, T key)           \
    {                                                                                    \
        ulong hi = lo, step = 1;                                                         \
        while (hi < n && a[hi] <= key) {                                                 \
            lo = hi + 1;                                                                 \
            hi += step;                                                                  \
            step <<= 1;                                                                  \
        }                                                                                \
        return mj_upper_##SFX(a, lo, min(hi, n), key);                                   \
    }

/*
 * For each row i of the sorted left keys: count[i] = how many right keys equal
 * it, lower[i] = where they start in the sorted right keys. The CPU path walks
 * its chunk of left keys forward through the right keys (galloping, and
 * reusing the range for repeated keys); the GPU path searches per row.
 */
#if COPROC_CPU
#define MJ_COUNT_BODY(T, SFX)                                                            \
    ulong chunk = (nl + get_global_size(0) - 1) / get_global_size(0);                    \
    ulong begin = get_global_id(0) * chunk, end = min(nl, begin + chunk);                \
    ulong lb = 0, ub = 0;                                                                \
    for (ulong i = begin; i < end; i++) {                                                \
        T key = lk[i];                                                                   \
        if (i == begin) {                                                                \
            lb = mj_lower_##SFX(rk, 0, nr, key);                                         \
            ub = mj_gallop_upper_##SFX(rk, lb, nr, key);                                 \
        } else if (key != lk[i - 1]) {                                                   \
            lb = mj_gallop_lower_##SFX(rk, ub, nr, key);                                 \
            ub = mj_gallop_upper_##SFX(rk, lb, nr, key);                                 \
        }                                                                                \
        count[i] = (uint)(ub - lb);                                                      \
        lower[i] = (uint)lb;                                                             \
    }
#else
#define MJ_COUNT_BODY(T, SFX)                                                            \
    COPROC_FOR_EACH_ROW(i, nl) {                                                         \
        T key = lk[i];                                                                   \
        ulong lb = mj_lower_##SFX(rk, 0, nr, key);                                       \
        ulong ub = mj_upper_##SFX(rk, lb, nr, key);                                      \
        count[i] = (uint)(ub - lb);                                                      \
        lower[i] = (uint)lb;                                                             \
    }
#endif

#define MJ_KERNELS(T, SFX)                                                               \
    MJ_SEARCH(T, SFX)                                                                    \
    __kernel void mj_count_##SFX(__global const T *lk, ulong nl, __global const T *rk,   \
                                 ulong nr, __global uint *count, __global uint *lower)   \
    {                                                                                    \
        MJ_COUNT_BODY(T, SFX)                                                            \
    }                                                                                    \
    /* flags[i] = 1 when probe[i] occurs in the sorted build keys. */                    \
    __kernel void mj_semi_##SFX(__global const T *probe, ulong np, __global const T *bk, \
                                ulong nb, __global uint *flags)                          \
    {                                                                                    \
        COPROC_FOR_EACH_ROW(i, np) {                                                     \
            T key = probe[i];                                                            \
            ulong lb = mj_lower_##SFX(bk, 0, nb, key);                                   \
            flags[i] = lb < nb && bk[lb] == key;                                         \
        }                                                                                \
    }

MJ_KERNELS(int, i32)
MJ_KERNELS(long, i64)
MJ_KERNELS(uint, u32)
MJ_KERNELS(ulong, u64)

/* Row i of the sorted left side pairs with right rows lower[i] .. + count[i]
 * of the sorted right side, written from offset[i] on, as original positions. */
__kernel void mj_pairs(__global const uint *count, __global const uint *lower,
                       __global const uint *offset, __global const uint *lperm,
                       __global const uint *rperm, ulong nl, __global uint *out_left,
                       __global uint *out_right)
{
    COPROC_FOR_EACH_ROW(i, nl) {
        uint c = count[i];
        if (c == 0)
            continue;
        uint o = offset[i], lb = lower[i], lp = lperm[i];
        for (uint k = 0; k < c; k++) {
            out_left[o + k] = lp;
            out_right[o + k] = rperm[lb + k];
        }
    }
}

/* ---- Where a device caps a work-item's loop steps (quirks.h max_loop_steps),
 * the pairs are written by tasks (ops/join_tasks.h): item j is the sorted left
 * rows [j * rows, (j + 1) * rows); a task writes a range of an item's pairs. */

/* Where item j's pairs start. */
__kernel void mj_item_starts(__global const uint *offset, ulong rows, ulong items,
                             __global uint *item_start)
{
    COPROC_FOR_EACH_ROW(j, items) { item_start[j] = offset[j * rows]; }
}

/* Task t: pairs [task_begin[t], task_begin[t + 1]) of item task_item[t], any
 * row's pairs from any of them on; task_done[t]: how many it wrote. (No
 * a > o ? a - o : 0: clang makes it llvm.usub.sat, which Oclgrind lacks.) */
__kernel void mj_task_pairs(__global const uint *count, __global const uint *lower,
                            __global const uint *offset, __global const uint *lperm,
                            __global const uint *rperm, ulong nl, ulong rows,
                            __global const uint *task_item, __global const uint *task_begin,
                            uint tasks, __global uint *out_left, __global uint *out_right,
                            __global uint *task_done)
{
    uint t = get_global_id(0);
    if (t < tasks) {
        uint a = task_begin[t], b = task_begin[t + 1], done = 0;
        ulong i = task_item[t] * rows, end = min(nl, i + rows);
        while (i < end && offset[i] + count[i] <= a) /* rows wholly before a */
            i++;
        /* Row i's pairs from a - offset[i] on (offset[i] <= a), the next rows' from 0. */
        for (uint q = i < end ? a - offset[i] : 0; i < end && offset[i] < b; i++, q = 0) {
            uint o = offset[i], c = count[i], qe = min(c, b - o), lb = lower[i], lp = lperm[i];
            done += qe - q;
            for (; q < qe; q++) {
                out_left[o + q] = lp;
                out_right[o + q] = rperm[lb + q];
            }
        }
        task_done[t] = done;
    }
}
