/* test_submit_all.c - every public operator of coproc.h on host columns,
 * through coproc_submit/coproc_wait (kind + variant) and through the
 * synchronous call, against plain scalar C references written here.
 *
 * Each operator's test runs its cases in one of five modes:
 *   device columns  the synchronous call on columns uploaded to device 0 (the
 *                   paths that check the references and the checks themselves)
 *   host sync       the synchronous call on host columns (outputs are host columns)
 *   host submit     coproc_submit + coproc_wait on host columns
 *   budget submit   the same on a runtime with a 1 MiB device budget and
 *                   copies forced (disable_zero_copy), up to 2M-row inputs
 *                   that must stream or partition (coproc_result.streamed)
 *   budget sync     the synchronous call on that runtime
 * Sizes 0, 1, 31, 32, 33, 1000, 300007 (and 2000003 under the budget), int32
 * and at least one other type per operator. Orders the header documents are
 * compared exactly; results "in no particular order" as multisets.
 *
 * Also: gather/scatter's contract under the budget (gather's source is not
 * streamed: DEVICE_OUT_OF_MEMORY, no output; scatter streams through windows
 * of dst, dst unchanged); sort and
 * scatter refuse wrapped (read-only) host columns and write the memory of a
 * coproc_column_host_alloc column, whose cached copies must be dropped; and
 * argument errors refused at coproc_submit. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testlib.h"

#define BUDGET ((uint64_t)1 << 20)
#define BIG ((size_t)2000003) /* 8 MB of int32: 8x the budget */
#define NO_VALUES COPROC__TYPE_COUNT

enum { M_DEVICE, M_SYNC, M_SUBMIT, M_BUDGET, M_BUDGET_SYNC, M_COUNT };
static const char *const mode_names[M_COUNT] = {"device columns", "host sync", "host submit",
                                                "budget submit", "budget sync"};
static int mode_ids[M_COUNT] = {M_DEVICE, M_SYNC, M_SUBMIT, M_BUDGET, M_BUDGET_SYNC};

static coproc_runtime *rt_main;   /* default options (zero-copy on PoCL) */
static coproc_runtime *rt_budget; /* 1 MiB budget, copies forced */

typedef struct env {
    int mode;
    coproc_runtime *rt;
    int fp64;                      /* every device of rt has fp64 */
    uint64_t budget_min, budget_max; /* over rt's devices */
    test_rng rng;
    char where[256];
} env;

#define FAIL(e, ...)                                                                         \
    do {                                                                                     \
        char m_[768];                                                                        \
        snprintf(m_, sizeof m_, __VA_ARGS__);                                                \
        fail_msg("[%s] %s: %s", mode_names[(e)->mode], (e)->where, m_);                      \
    } while (0)

#define WHERE(e, ...) snprintf((e)->where, sizeof (e)->where, __VA_ARGS__)

static int submit_mode(const env *e) { return e->mode == M_SUBMIT || e->mode == M_BUDGET; }
static int budget_mode(const env *e) { return e->mode == M_BUDGET || e->mode == M_BUDGET_SYNC; }

/* ---------------------------------------------------------------- runtimes, column tracking */

static coproc_runtime *open_rt(int budget)
{
    coproc_options o;
    coproc_options_init(&o);
    o.calibration = COPROC_CALIBRATION_OFF;
    if (budget) {
        o.device_budget_bytes = BUDGET;
        o.disable_zero_copy = 1;
    }
    return test_open_with(&o);
}

static int group_setup(void **state)
{
    (void)state;
    rt_main = open_rt(0);
    rt_budget = open_rt(1);
    return 0;
}

/* Every column a test makes or receives is tracked until freed, so that a
 * failing check (which longjmps out of the test) leaks none past the test. */
#define MAX_TRACKED 512
static coproc_column *tracked[MAX_TRACKED];
static size_t ntracked;

static coproc_column *track(coproc_column *c)
{
    if (c) {
        if (ntracked == MAX_TRACKED)
            fail_msg("test bug: too many live columns");
        tracked[ntracked++] = c;
    }
    return c;
}

static void release(coproc_column *c)
{
    if (!c)
        return;
    for (size_t i = 0; i < ntracked; i++)
        if (tracked[i] == c) {
            tracked[i] = tracked[--ntracked];
            break;
        }
    coproc_column_free(c);
}

/* SUBMIT_ALL_TIMES=1 prints each test's seconds (to keep the whole run short);
 * SUBMIT_ALL_FILTER=pattern runs only the matching tests. */
static double test_started;

static int test_setup(void **state)
{
    (void)state;
    test_started = test_now();
    return 0;
}

static int test_teardown(void **state)
{
    (void)state;
    while (ntracked)
        coproc_column_free(tracked[--ntracked]);
    if (getenv("SUBMIT_ALL_TIMES"))
        fprintf(stderr, "  %.2f s\n", test_now() - test_started);
    return 0;
}

static int group_teardown(void **state)
{
    test_teardown(state);
    coproc_close(rt_main);
    coproc_close(rt_budget);
    return 0;
}

static env env_for(int mode, uint64_t seed)
{
    env e;
    memset(&e, 0, sizeof e);
    e.mode = mode;
    e.rt = mode == M_BUDGET || mode == M_BUDGET_SYNC ? rt_budget : rt_main;
    e.rng.s = seed;
    e.fp64 = 1;
    e.budget_min = UINT64_MAX;
    int nd = coproc_device_count(e.rt);
    for (int i = 0; i < nd; i++) {
        coproc_device_info info;
        assert_ok(e.rt, coproc_device_info_get(e.rt, i, &info));
        e.fp64 &= info.has_fp64 != 0;
        coproc_device_stats ds = {.struct_size = sizeof ds};
        assert_ok(e.rt, coproc_device_stats_get(e.rt, i, &ds));
        if (ds.budget_bytes < e.budget_min)
            e.budget_min = ds.budget_bytes;
        if (ds.budget_bytes > e.budget_max)
            e.budget_max = ds.budget_bytes;
    }
    if (budget_mode(&e) && e.budget_max != BUDGET)
        fail_msg("the budget runtime's budget is %llu bytes, not %llu",
                 (unsigned long long)e.budget_max, (unsigned long long)BUDGET);
    WHERE(&e, "setup");
    return e;
}

static env get_env(void **state, uint64_t seed) { return env_for(*(int *)*state, seed); }

/* The sizes a case runs at in e's mode; BIG (under the budget) only when `big`. */
static size_t sizes_for(const env *e, int big, size_t out[16])
{
    static const size_t std[] = {0, 1, 31, 32, 33, 1000, 300007};
    size_t k = 0;
    if (e->mode == M_BUDGET_SYNC) { /* the same path as budget submit, behind the call */
        out[k++] = 0;
        out[k++] = 33;
    } else {
        for (size_t i = 0; i < sizeof std / sizeof *std; i++)
            out[k++] = std[i];
    }
    if (big && budget_mode(e))
        out[k++] = BIG;
    return k;
}

/* ---------------------------------------------------------------- columns in and out */

static size_t tsize(coproc_type t) { return coproc_type_size(t); }

static void *xmalloc(size_t bytes)
{
    void *p = malloc(bytes ? bytes : 8);
    if (!p)
        fail_msg("out of host memory (%zu bytes)", bytes);
    return p;
}

/* An input column: uploaded to device 0 in device mode, else wrapping d. */
static coproc_column *in_col(env *e, coproc_type t, const void *d, size_t n)
{
    coproc_column *c = NULL;
    coproc_status s = e->mode == M_DEVICE ? coproc_column_upload(e->rt, 0, t, d, n, &c)
                                          : coproc_column_wrap(e->rt, t, d, n, &c);
    if (s != COPROC_OK)
        FAIL(e, "making an input column of %zu %s: %s: %s", n, coproc_type_name(t),
             coproc_status_name(s), coproc_errmsg(e->rt));
    return track(c);
}

/* A column the operator may write: on device 0, or a host column owning its
 * memory (coproc_column_host_alloc), holding a copy of d. */
static coproc_column *owned_col(env *e, coproc_type t, const void *d, size_t n)
{
    if (e->mode == M_DEVICE)
        return in_col(e, t, d, n);
    coproc_column *c = NULL;
    coproc_status s = coproc_column_host_alloc(e->rt, t, n, &c);
    if (s != COPROC_OK)
        FAIL(e, "coproc_column_host_alloc: %s: %s", coproc_status_name(s), coproc_errmsg(e->rt));
    track(c);
    if (n) {
        void *h = coproc_column_host_data(c);
        if (!h)
            FAIL(e, "coproc_column_host_data of a host_alloc column is NULL");
        memcpy(h, d, n * tsize(t));
    }
    return c;
}

/* Download (and free) an output column after checking its type, length and
 * place: device 0 in device mode, the host (-1) otherwise. malloc'd. */
static void *fetch(env *e, coproc_column *c, coproc_type t, size_t n, const char *what)
{
    if (!c)
        FAIL(e, "%s: no output column", what);
    size_t len = coproc_column_length(c);
    coproc_type ct = coproc_column_type(c);
    int dev = coproc_column_device(c);
    void *buf = xmalloc(len * coproc_type_size(ct));
    coproc_status s = coproc_column_download(c, buf, len);
    release(c);
    if (s != COPROC_OK)
        FAIL(e, "%s: download: %s", what, coproc_status_name(s));
    if (ct != t)
        FAIL(e, "%s: type %s, want %s", what, coproc_type_name(ct), coproc_type_name(t));
    if (len != n)
        FAIL(e, "%s: %zu rows, want %zu", what, len, n);
    int want_dev = e->mode == M_DEVICE ? 0 : -1;
    if (dev != want_dev)
        FAIL(e, "%s: the output lives on %d, want %d", what, dev, want_dev);
    return buf;
}

/* Read a column's rows without freeing it (host memory, or a download). */
static void *peek(env *e, const coproc_column *c, const char *what)
{
    size_t len = coproc_column_length(c);
    void *buf = xmalloc(len * tsize(coproc_column_type(c)));
    coproc_status s = coproc_column_download(c, buf, len);
    if (s != COPROC_OK)
        FAIL(e, "%s: download: %s", what, coproc_status_name(s));
    return buf;
}

static void check_same_bits(env *e, const void *got, const void *want, size_t n, size_t es,
                            const char *what)
{
    if (n == 0 || memcmp(got, want, n * es) == 0)
        return;
    for (size_t i = 0; i < n; i++)
        if (memcmp((const char *)got + i * es, (const char *)want + i * es, es) != 0) {
            uint64_t g = 0, w = 0;
            memcpy(&g, (const char *)got + i * es, es);
            memcpy(&w, (const char *)want + i * es, es);
            FAIL(e, "%s: row %zu of %zu is %llx, want %llx", what, i, n, (unsigned long long)g,
                 (unsigned long long)w);
        }
}

/* ---------------------------------------------------------------- submit and results */

static uint64_t col_bytes(const coproc_column *c)
{
    return c ? (uint64_t)coproc_column_length(c) * tsize(coproc_column_type(c)) : 0;
}

static uint64_t op_bytes(const coproc_op *op)
{
    if (op->kind == COPROC_OP_SELECT)
        return col_bytes(op->filter.first.col) +
               (op->filter.logic != COPROC_LOGIC_NONE ? col_bytes(op->filter.second.col) : 0);
    uint64_t b = col_bytes(op->a) + col_bytes(op->b);
    if (op->kind == COPROC_OP_GATHER && op->variant == COPROC_VARIANT_SCATTER)
        b += col_bytes(op->dst);
    return b;
}

/* The column members of a result. */
static void result_columns(coproc_result *r, coproc_column **c[9])
{
    c[0] = &r->column;
    c[1] = &r->column2;
    c[2] = &r->groups.keys;
    c[3] = &r->groups.count;
    c[4] = &r->groups.sum;
    c[5] = &r->groups.min;
    c[6] = &r->groups.max;
    c[7] = &r->join.left;
    c[8] = &r->join.right;
}

static void track_result(coproc_result *r)
{
    coproc_column **c[9];
    result_columns(r, c);
    for (int i = 0; i < 9; i++)
        track(*c[i]);
}

static int result_has_columns(coproc_result *r)
{
    coproc_column **c[9];
    result_columns(r, c);
    for (int i = 0; i < 9; i++)
        if (*c[i])
            return 1;
    return 0;
}

/* Free (and untrack) the columns of a result. */
static void drop_result(coproc_result *r)
{
    coproc_column **c[9];
    result_columns(r, c);
    for (int i = 0; i < 9; i++) {
        release(*c[i]);
        *c[i] = NULL;
    }
}

/* Submit op, wait, track the result's columns. On success checks the task
 * ran on a device of rt and that `streamed` says 1 when the inputs exceed the
 * budget (0 when they are far below it); on error, that no column came back.
 * An error from coproc_submit is returned as it is. */
static coproc_status submit_wait(env *e, const coproc_op *op, coproc_result *r)
{
    coproc_task *t = NULL;
    memset(r, 0, sizeof *r);
    coproc_status s = coproc_submit(e->rt, op, &t);
    if (s != COPROC_OK)
        return s;
    if (!t)
        FAIL(e, "coproc_submit returned OK and no task");
    s = coproc_wait(t, r);
    track_result(r);
    if (s != COPROC_OK) {
        if (result_has_columns(r))
            FAIL(e, "coproc_wait -> %s but the result holds columns", coproc_status_name(s));
        return s;
    }
    if (r->device < 0 || r->device >= coproc_device_count(e->rt))
        FAIL(e, "the task ran on device %d", r->device);
    uint64_t in = op_bytes(op);
    if (in > e->budget_max && r->streamed != 1)
        FAIL(e, "%llu input bytes exceed the %llu-byte budget, yet streamed = %d",
             (unsigned long long)in, (unsigned long long)e->budget_max, r->streamed);
    /* (joins excepted: their output, which the runtime must also find room
     * for, is not bounded by their inputs) */
    int joins = op->kind == COPROC_OP_HASH_JOIN || op->kind == COPROC_OP_MERGE_JOIN;
    if (!joins && in * 16 < e->budget_min && r->streamed != 0)
        FAIL(e, "%llu input bytes, far below the budget, yet streamed = %d",
             (unsigned long long)in, r->streamed);
    return s;
}

static void expect_status(env *e, coproc_status want, coproc_status got, const char *what)
{
    if (got != want)
        FAIL(e, "%s -> %s, want %s (%s)", what, coproc_status_name(got), coproc_status_name(want),
             coproc_errmsg(e->rt));
}

/* ---------------------------------------------------------------- data */

static void set_bits(coproc_type t, void *d, size_t i, uint64_t v)
{
    if (tsize(t) == 4)
        ((uint32_t *)d)[i] = (uint32_t)v;
    else
        ((uint64_t *)d)[i] = v;
}

static uint64_t get_bits(coproc_type t, const void *d, size_t i)
{
    return tsize(t) == 4 ? ((const uint32_t *)d)[i] : ((const uint64_t *)d)[i];
}

static uint32_t f2u(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}

static float u2f(uint32_t u)
{
    float f;
    memcpy(&f, &u, 4);
    return f;
}

/* A value spread over the whole range of t, with the type's extremes; for
 * float32 also NaNs (both signs, payloads), -0.0, infinities, values past
 * the int32/int64 range and fractions. As bits. */
static uint64_t wide_bits(env *e, coproc_type t)
{
    uint64_t x = test_rand(&e->rng);
    int neg = (int)((x >> 7) & 1);
    switch (t) {
    case COPROC_INT32: case COPROC_UINT32: {
        static const uint32_t ext[] = {0x80000000u, 0x80000001u, 0xFFFFFFFFu, 0u,
                                       1u,          0x7FFFFFFFu, 2u,          0xFFFFFFFEu};
        if (x % 6 == 0)
            return ext[(x >> 8) % 8];
        uint32_t v = (uint32_t)(x >> 32) >> ((x >> 3) % 24);
        return neg ? 0u - v : v;
    }
    case COPROC_INT64: case COPROC_UINT64: {
        static const uint64_t ext[] = {1ull << 63, (1ull << 63) + 1, UINT64_MAX, 0, 1,
                                       (1ull << 63) - 1, 0xFFFFFFFFull, 0x80000000ull};
        if (x % 6 == 0)
            return ext[(x >> 8) % 8];
        uint64_t v = test_rand(&e->rng) >> ((x >> 3) % 56);
        return neg ? 0 - v : v;
    }
    default: {
        static const uint32_t sp[] = {0x7fc00000u, 0xffc00000u, 0x7fc01234u, 0xff800001u,
                                      0x80000000u, 0x00000000u, 0x7f800000u, 0xff800000u};
        static const float big[] = {3e9f, -3e9f, 1e20f, -1e20f, 2147483648.0f, -2147483904.0f,
                                    4294967296.0f, 9.3e18f};
        int pick = (int)(x % 16);
        if (pick < 2)
            return sp[(x >> 8) % 8];
        if (pick == 2)
            return f2u(big[(x >> 8) % 8]);
        double v = ((double)(x >> 11) / 9007199254740992.0 - 0.5) * 2e4;
        return f2u((float)v);
    }
    }
}

static void fill_wide(env *e, coproc_type t, void *d, size_t n)
{
    for (size_t i = 0; i < n; i++)
        set_bits(t, d, i, wide_bits(e, t));
}

/* float32 multiples of 1/4 in [-lim, lim): every sum of them in any order is exact in double. */
static void fill_quarters(env *e, float *d, size_t n, int lim)
{
    for (size_t i = 0; i < n; i++)
        d[i] = (float)((int64_t)test_rand_below(&e->rng, (uint64_t)lim * 8) - lim * 4) / 4.0f;
}

/* A random bitmap of n rows (bits past n zero); density: 0 none, 1 half, 2 all. */
static uint32_t *make_bitmap(env *e, size_t n, int density)
{
    size_t w = (n + 31) / 32;
    uint32_t *bm = xmalloc(w * 4);
    for (size_t i = 0; i < w; i++)
        bm[i] = density == 0 ? 0 : density == 2 ? 0xFFFFFFFFu : (uint32_t)test_rand(&e->rng);
    if (n % 32)
        bm[w - 1] &= (1u << (n % 32)) - 1;
    return bm;
}

static int bit(const uint32_t *bm, size_t i) { return (bm[i / 32] >> (i % 32)) & 1; }

/* An integer key as an unsigned number in the same order (int32/int64). */
static uint64_t key_ord(coproc_type t, const void *d, size_t i)
{
    return (uint64_t)test_get_i(t, d, i) ^ (1ull << 63);
}

/* Stable LSD radix sort of k[0..n-1], carrying v (may be NULL) along: the
 * references' sort, fast enough for millions of rows. */
static void radix_sort(uint64_t *k, uint32_t *v, size_t n)
{
    uint64_t *tk = xmalloc(n * 8);
    uint32_t *tv = xmalloc(n * 4);
    for (int shift = 0; shift < 64; shift += 8) {
        size_t cnt[257] = {0};
        for (size_t i = 0; i < n; i++)
            cnt[((k[i] >> shift) & 255) + 1]++;
        int trivial = 0;
        for (int d = 0; d < 256; d++)
            trivial |= cnt[d + 1] == n;
        if (trivial)
            continue;
        for (int d = 0; d < 256; d++)
            cnt[d + 1] += cnt[d];
        for (size_t i = 0; i < n; i++) {
            size_t at = cnt[(k[i] >> shift) & 255]++;
            tk[at] = k[i];
            if (v)
                tv[at] = v[i];
        }
        memcpy(k, tk, n * 8);
        if (v)
            memcpy(v, tv, n * 4);
    }
    free(tk);
    free(tv);
}

/* ---------------------------------------------------------------- reduce, reduce_where */

static coproc_scalar ref_reduce(coproc_reduce_op op, coproc_type t, const void *d, size_t n,
                                const uint32_t *bm, double *abs_sum)
{
    coproc_scalar r;
    memset(&r, 0, sizeof r);
    int mn = op == COPROC_REDUCE_MIN;
    uint64_t cnt = 0;
    *abs_sum = 0;
    if (t == COPROC_FLOAT32) {
        double acc = op == COPROC_REDUCE_SUM ? 0 : mn ? INFINITY : -INFINITY;
        int number = 0;
        for (size_t i = 0; i < n; i++) {
            if (bm && !bit(bm, i))
                continue;
            cnt++;
            double v = ((const float *)d)[i];
            *abs_sum += fabs(v);
            if (op == COPROC_REDUCE_SUM)
                acc += v;
            else if (!isnan(v)) {
                number = 1;
                acc = mn ? fmin(acc, v) : fmax(acc, v);
            }
        }
        if ((op == COPROC_REDUCE_MIN || op == COPROC_REDUCE_MAX) && cnt && !number)
            acc = NAN; /* every row NaN */
        r.type = COPROC_FLOAT64;
        r.v.f64 = acc;
    } else { /* int32, int64 */
        int64_t acc = op == COPROC_REDUCE_SUM ? 0
                    : mn ? (t == COPROC_INT32 ? INT32_MAX : INT64_MAX)
                         : (t == COPROC_INT32 ? INT32_MIN : INT64_MIN);
        for (size_t i = 0; i < n; i++) {
            if (bm && !bit(bm, i))
                continue;
            cnt++;
            int64_t v = test_get_i(t, d, i);
            if (op == COPROC_REDUCE_SUM)
                acc = (int64_t)((uint64_t)acc + (uint64_t)v);
            else if (mn ? v < acc : v > acc)
                acc = v;
        }
        r.type = COPROC_INT64;
        r.v.i64 = acc;
    }
    r.count = cnt;
    if (op == COPROC_REDUCE_COUNT) {
        r.type = COPROC_UINT64;
        r.v.u64 = cnt;
    }
    return r;
}

static coproc_status run_reduce(env *e, coproc_reduce_op op, const coproc_column *col,
                                const coproc_column *bm, coproc_scalar *out)
{
    if (submit_mode(e)) {
        coproc_op o;
        coproc_op_init(&o, COPROC_OP_REDUCE);
        o.a = col;
        o.b = bm;
        o.variant = bm ? COPROC_VARIANT_REDUCE_WHERE : COPROC_VARIANT_DEFAULT;
        o.reduce = op;
        coproc_result r;
        coproc_status s = submit_wait(e, &o, &r);
        if (s == COPROC_OK)
            *out = r.scalar;
        return s;
    }
    return bm ? coproc_reduce_where(e->rt, op, col, bm, out) : coproc_reduce(e->rt, op, col, out);
}

/* All four reductions (ops: bit mask of coproc_reduce_op) of d, optionally under a bitmap. */
static void reduce_case(env *e, coproc_type t, const void *d, size_t n, int density, unsigned ops,
                        const char *what)
{
    uint32_t *bm = density >= 0 ? make_bitmap(e, n, density) : NULL;
    coproc_column *col = in_col(e, t, d, n);
    coproc_column *cbm = bm ? in_col(e, COPROC_UINT32, bm, (n + 31) / 32) : NULL;
    for (int op = COPROC_REDUCE_SUM; op <= COPROC_REDUCE_COUNT; op++) {
        if (!(ops & (1u << op)))
            continue;
        WHERE(e, "%s %s n=%zu %s op=%d", bm ? "reduce_where" : "reduce", coproc_type_name(t), n,
              what, op);
        double abs_sum;
        coproc_scalar want = ref_reduce((coproc_reduce_op)op, t, d, n, bm, &abs_sum), got;
        memset(&got, 0, sizeof got);
        coproc_status s = run_reduce(e, (coproc_reduce_op)op, col, cbm, &got);
        expect_status(e, COPROC_OK, s, "reduce");
        if (got.type != want.type || got.count != want.count)
            FAIL(e, "type %s count %llu, want %s %llu", coproc_type_name(got.type),
                 (unsigned long long)got.count, coproc_type_name(want.type),
                 (unsigned long long)want.count);
        if (want.type == COPROC_FLOAT64) {
            double g = got.v.f64, w = want.v.f64;
            /* Multiples of 1/4 sum exactly in double; a float accumulator (no fp64) rounds. */
            double tol = e->fp64 ? 0 : 4 * ((double)want.count + 1) * FLT_EPSILON * abs_sum;
            if (isnan(w) ? !isnan(g) : !(g == w || fabs(g - w) <= tol))
                FAIL(e, "got %.17g, want %.17g", g, w);
        } else if (got.v.u64 != want.v.u64) {
            FAIL(e, "got %lld (%llx), want %lld", (long long)got.v.i64,
                 (unsigned long long)got.v.u64, (long long)want.v.i64);
        }
    }
    release(col);
    release(cbm);
    free(bm);
}

static void reduce_test(void **state, int where)
{
    env e = get_env(state, 101 + (uint64_t)where);
    size_t sz[16], ns = sizes_for(&e, 1, sz);
    const unsigned all = 0xF, no_sum = 0xE;
    for (size_t si = 0; si < ns; si++) {
        size_t n = sz[si];
        void *d = xmalloc(n * 8);
        int dens = where ? (int)(si % 3) : -1; /* reduce_where: none, half, all rows */
        if (where && n > 1000)
            dens = 1;
        fill_wide(&e, COPROC_INT32, d, n);
        reduce_case(&e, COPROC_INT32, d, n, dens, all, "wide");
        if (n != BIG) {
            fill_wide(&e, COPROC_INT64, d, n);
            reduce_case(&e, COPROC_INT64, d, n, dens, all, "wide");
        }
        fill_quarters(&e, d, n, 1000);
        reduce_case(&e, COPROC_FLOAT32, d, n, dens, all, "quarters");
        if (n != BIG) { /* NaN is ignored by MIN/MAX unless every row is NaN */
            fill_wide(&e, COPROC_FLOAT32, d, n);
            reduce_case(&e, COPROC_FLOAT32, d, n, dens, no_sum, "with NaN");
            for (size_t i = 0; i < n; i++)
                ((float *)d)[i] = i % 3 ? NAN : -NAN;
            reduce_case(&e, COPROC_FLOAT32, d, n, dens, no_sum, "all NaN");
        }
        free(d);
    }
}

static void test_reduce(void **state) { reduce_test(state, 0); }
static void test_reduce_where(void **state) { reduce_test(state, 1); }

/* ---------------------------------------------------------------- select, select_bitmap */

static int ref_pred(const coproc_predicate *p, coproc_type t, const void *d, size_t i)
{
    if (t == COPROC_FLOAT32) {
        double x = ((const float *)d)[i], a = p->a.f64, b = p->b.f64;
        switch (p->cmp) {
        case COPROC_CMP_EQ: return x == a;
        case COPROC_CMP_NE: return x != a;
        case COPROC_CMP_LT: return x < a;
        case COPROC_CMP_LE: return x <= a;
        case COPROC_CMP_GT: return x > a;
        case COPROC_CMP_GE: return x >= a;
        default: return a <= x && x < b;
        }
    }
    int64_t x = test_get_i(t, d, i), a = p->a.i64, b = p->b.i64;
    switch (p->cmp) {
    case COPROC_CMP_EQ: return x == a;
    case COPROC_CMP_NE: return x != a;
    case COPROC_CMP_LT: return x < a;
    case COPROC_CMP_LE: return x <= a;
    case COPROC_CMP_GT: return x > a;
    case COPROC_CMP_GE: return x >= a;
    default: return a <= x && x < b;
    }
}

static coproc_predicate mkpred(const coproc_column *c, coproc_type t, coproc_cmp cmp, double a,
                               double b)
{
    coproc_predicate p;
    memset(&p, 0, sizeof p);
    p.col = c;
    p.cmp = cmp;
    if (t == COPROC_FLOAT32) {
        p.a.f64 = a;
        p.b.f64 = b;
    } else {
        p.a.i64 = (int64_t)a;
        p.b.i64 = (int64_t)b;
    }
    return p;
}

static coproc_status run_select(env *e, const coproc_filter *f, int bitmap, coproc_column **out,
                                uint64_t *count)
{
    if (submit_mode(e)) {
        coproc_op o;
        coproc_op_init(&o, COPROC_OP_SELECT);
        o.filter = *f;
        o.variant = bitmap ? COPROC_VARIANT_SELECT_BITMAP : COPROC_VARIANT_DEFAULT;
        coproc_result r;
        coproc_status s = submit_wait(e, &o, &r);
        *out = r.column;
        *count = r.count;
        return s;
    }
    coproc_status s = bitmap ? coproc_select_bitmap(e->rt, f, out, count)
                             : coproc_select(e->rt, f, out, count);
    track(*out);
    return s;
}

static void select_case(env *e, int bitmap, coproc_type ta, const void *a, coproc_type tb,
                        const void *b, size_t n)
{
    coproc_column *ca = in_col(e, ta, a, n), *cb = in_col(e, tb, b, n);
    int fa = ta == COPROC_FLOAT32, fb = tb == COPROC_FLOAT32;
    coproc_filter fs[6];
    memset(fs, 0, sizeof fs);
    fs[0].first = mkpred(ca, ta, COPROC_CMP_LT, fa ? 0.5 : 3, 0);
    fs[1].first = mkpred(ca, ta, COPROC_CMP_RANGE, fa ? -100 : -100000, fa ? 250 : 1 << 30);
    /* every row (NaN != a is true), and none */
    fs[2].first = fa ? mkpred(ca, ta, COPROC_CMP_NE, NAN, 0) : mkpred(ca, ta, COPROC_CMP_GE, INT32_MIN, 0);
    fs[3].first = fa ? mkpred(ca, ta, COPROC_CMP_EQ, NAN, 0) : mkpred(ca, ta, COPROC_CMP_LT, INT32_MIN, 0);
    fs[4].first = mkpred(ca, ta, COPROC_CMP_LE, 0, 0);
    fs[4].logic = COPROC_LOGIC_AND;
    fs[4].second = mkpred(cb, tb, COPROC_CMP_GT, fb ? 10.0 : 1000, 0);
    fs[5].first = mkpred(ca, ta, COPROC_CMP_GE, fa ? 100.0 : 1 << 20, 0);
    fs[5].logic = COPROC_LOGIC_OR;
    fs[5].second = mkpred(cb, tb, COPROC_CMP_LT, -5, 0);
    uint32_t *want = xmalloc(n * 4), *wbm = xmalloc((n + 31) / 32 * 4);
    for (int k = 0; k < 6; k++) {
        WHERE(e, "%s %s/%s n=%zu filter %d", bitmap ? "select_bitmap" : "select",
              coproc_type_name(ta), coproc_type_name(tb), n, k);
        const coproc_filter *f = &fs[k];
        size_t m = 0;
        memset(wbm, 0, (n + 31) / 32 * 4);
        for (size_t i = 0; i < n; i++) {
            int x = ref_pred(&f->first, ta, a, i);
            if (f->logic == COPROC_LOGIC_AND)
                x = x && ref_pred(&f->second, tb, b, i);
            else if (f->logic == COPROC_LOGIC_OR)
                x = x || ref_pred(&f->second, tb, b, i);
            if (x) {
                want[m++] = (uint32_t)i;
                wbm[i / 32] |= 1u << (i % 32);
            }
        }
        coproc_column *out = NULL;
        uint64_t count = 0;
        expect_status(e, COPROC_OK, run_select(e, f, bitmap, &out, &count), "select");
        if (count != m)
            FAIL(e, "count %llu, want %zu", (unsigned long long)count, m);
        if (bitmap) {
            uint32_t *got = fetch(e, out, COPROC_UINT32, (n + 31) / 32, "bitmap");
            check_same_bits(e, got, wbm, (n + 31) / 32, 4, "bitmap word");
            free(got);
        } else {
            uint32_t *got = fetch(e, out, COPROC_UINT32, m, "positions");
            check_same_bits(e, got, want, m, 4, "position (ascending)");
            free(got);
        }
        if (k == 0 && !bitmap && !submit_mode(e)) { /* count only: positions may be NULL */
            count = 0;
            expect_status(e, COPROC_OK, coproc_select(e->rt, f, NULL, &count), "select, count only");
            if (count != m)
                FAIL(e, "count only: %llu, want %zu", (unsigned long long)count, m);
        }
    }
    free(want);
    free(wbm);
    release(ca);
    release(cb);
}

static void select_test(void **state, int bitmap)
{
    env e = get_env(state, 202 + (uint64_t)bitmap);
    size_t sz[16], ns = sizes_for(&e, 1, sz);
    for (size_t si = 0; si < ns; si++) {
        size_t n = sz[si];
        void *a = xmalloc(n * 8), *b = xmalloc(n * 8);
        fill_wide(&e, COPROC_INT32, a, n);
        fill_wide(&e, COPROC_INT64, b, n);
        select_case(&e, bitmap, COPROC_INT32, a, COPROC_INT64, b, n);
        if (n != BIG) {
            fill_wide(&e, COPROC_FLOAT32, a, n);
            fill_wide(&e, COPROC_FLOAT32, b, n);
            select_case(&e, bitmap, COPROC_FLOAT32, a, COPROC_FLOAT32, b, n);
            fill_wide(&e, COPROC_INT32, b, n);
            select_case(&e, bitmap, COPROC_FLOAT32, a, COPROC_INT32, b, n);
        }
        free(a);
        free(b);
    }
}

static void test_select(void **state) { select_test(state, 0); }
static void test_select_bitmap(void **state) { select_test(state, 1); }

/* ---------------------------------------------------------------- map, map_const */

/* Integer arithmetic as the header defines it: wrapping, x / 0 = 0, MIN / -1 = MIN. */
static uint64_t ref_int(coproc_arith op, int bits, uint64_t x, uint64_t y)
{
    uint64_t mask = bits == 32 ? 0xFFFFFFFFull : UINT64_MAX;
    x &= mask, y &= mask;
    switch (op) {
    case COPROC_ARITH_ADD: return (x + y) & mask;
    case COPROC_ARITH_SUB: return (x - y) & mask;
    case COPROC_ARITH_MUL: return (x * y) & mask;
    default:
        if (y == 0)
            return 0;
        if (y == mask) /* / -1 wraps */
            return (0 - x) & mask;
        int64_t sx = bits == 32 ? (int32_t)(uint32_t)x : (int64_t)x;
        int64_t sy = bits == 32 ? (int32_t)(uint32_t)y : (int64_t)y;
        return (uint64_t)(sx / sy) & mask;
    }
}

static float ref_float(coproc_arith op, float x, float y)
{
    volatile float r = op == COPROC_ARITH_ADD ? x + y : op == COPROC_ARITH_SUB ? x - y
                     : op == COPROC_ARITH_MUL ? x * y : x / y;
    return r;
}

static coproc_status run_map(env *e, coproc_arith op, const coproc_column *a,
                             const coproc_column *b, coproc_value c, coproc_column **out)
{
    *out = NULL;
    if (submit_mode(e)) {
        coproc_op o;
        coproc_op_init(&o, COPROC_OP_MAP);
        o.a = a;
        o.b = b;
        o.arith = op;
        o.c = c;
        coproc_result r;
        coproc_status s = submit_wait(e, &o, &r);
        *out = r.column;
        return s;
    }
    coproc_status s = b ? coproc_map(e->rt, op, a, b, out) : coproc_map_const(e->rt, op, a, c, out);
    track(*out);
    return s;
}

static void map_check(env *e, coproc_type t, coproc_arith op, const void *a, const void *b,
                      coproc_value c, size_t n, coproc_column *out)
{
    void *got = fetch(e, out, t, n, "map output");
    for (size_t i = 0; i < n; i++) {
        if (t == COPROC_FLOAT32) {
            float x = ((const float *)a)[i], y = b ? ((const float *)b)[i] : (float)c.f64;
            float w = ref_float(op, x, y), g = ((float *)got)[i];
            /* float32 division: OpenCL allows 2.5 ulp without fp64 */
            double tol = op == COPROC_ARITH_DIV && !e->fp64
                             ? 3 * fabs((double)nextafterf(w, INFINITY) - w) : 0;
            if (!(g == w || (isnan(g) && isnan(w)) || fabs((double)g - w) <= tol))
                FAIL(e, "row %zu: %.9g op %.9g = %.9g, want %.9g", i, x, y, g, w);
        } else {
            int bits = tsize(t) == 4 ? 32 : 64;
            uint64_t x = get_bits(t, a, i), y = b ? get_bits(t, b, i) : (uint64_t)c.i64;
            uint64_t w = ref_int(op, bits, x, y), g = get_bits(t, got, i);
            if (g != w)
                FAIL(e, "row %zu: %llx op %llx = %llx, want %llx", i, (unsigned long long)x,
                     (unsigned long long)y, (unsigned long long)g, (unsigned long long)w);
        }
    }
    free(got);
}

static void map_test(void **state, int with_const)
{
    env e = get_env(state, 303 + (uint64_t)with_const);
    size_t sz[16], ns = sizes_for(&e, 1, sz);
    const coproc_type types[] = {COPROC_INT32, COPROC_INT64, COPROC_FLOAT32};
    for (size_t si = 0; si < ns; si++) {
        size_t n = sz[si];
        void *a = xmalloc(n * 8), *b = xmalloc(n * 8);
        for (int ti = 0; ti < 3; ti++) {
            coproc_type t = types[ti];
            if (n == BIG && t != COPROC_INT32)
                continue;
            fill_wide(&e, t, a, n);
            fill_wide(&e, t, b, n);
            for (size_t i = 0; i < n; i++) { /* divisors 0 and -1, dividends MIN */
                uint64_t x = test_rand(&e.rng) % 8;
                if (x == 0)
                    set_bits(t, b, i, t == COPROC_FLOAT32 ? f2u(i % 2 ? 0.0f : -0.0f) : 0);
                else if (x == 1 && t != COPROC_FLOAT32)
                    set_bits(t, b, i, UINT64_MAX);
                else if (x == 2 && t != COPROC_FLOAT32)
                    set_bits(t, a, i, t == COPROC_INT32 ? 0x80000000u : 1ull << 63);
            }
            coproc_column *ca = in_col(&e, t, a, n), *cb = in_col(&e, t, b, n);
            for (int op = COPROC_ARITH_ADD; op <= COPROC_ARITH_DIV; op++) {
                coproc_value cs[3];
                int nc = 0;
                if (with_const) {
                    if (t == COPROC_FLOAT32) {
                        cs[nc++].f64 = -2.5;
                        cs[nc++].f64 = 0.1; /* rounded to float first */
                        if (op == COPROC_ARITH_DIV)
                            cs[nc++].f64 = 0.0;
                    } else {
                        cs[nc++].i64 = -7;
                        if (op == COPROC_ARITH_DIV) {
                            cs[nc++].i64 = 0;
                            cs[nc++].i64 = -1;
                        } else {
                            cs[nc++].i64 = t == COPROC_INT32 ? INT32_MAX : INT64_MAX;
                        }
                    }
                } else {
                    cs[nc++].i64 = 0;
                }
                for (int k = 0; k < nc; k++) {
                    WHERE(&e, "%s %s n=%zu op=%d const %d", with_const ? "map_const" : "map",
                          coproc_type_name(t), n, op, k);
                    coproc_column *out;
                    expect_status(&e, COPROC_OK,
                                  run_map(&e, (coproc_arith)op, ca, with_const ? NULL : cb, cs[k],
                                          &out), "map");
                    map_check(&e, t, (coproc_arith)op, a, with_const ? NULL : b, cs[k], n, out);
                }
            }
            release(ca);
            release(cb);
        }
        free(a);
        free(b);
    }
}

static void test_map(void **state) { map_test(state, 0); }
static void test_map_const(void **state) { map_test(state, 1); }

/* ---------------------------------------------------------------- cast */

/* C conversion of the header: integer to integer keeps the low bits, float to
 * integer truncates toward zero and saturates (NaN 0), to float rounds. */
static uint64_t ref_cast(coproc_type from, coproc_type to, uint64_t bits)
{
    if (from == COPROC_FLOAT32) {
        double x = u2f((uint32_t)bits);
        if (to == COPROC_FLOAT64) {
            double d = x;
            uint64_t u;
            memcpy(&u, &d, 8);
            return u;
        }
        if (isnan(x))
            return 0;
        double t = trunc(x);
        switch (to) {
        case COPROC_INT32:
            return (uint32_t)(t < INT32_MIN ? INT32_MIN : t > INT32_MAX ? INT32_MAX : (int32_t)t);
        case COPROC_UINT32:
            return t < 0 ? 0 : t > UINT32_MAX ? UINT32_MAX : (uint32_t)t;
        case COPROC_INT64:
            return (uint64_t)(t < -9223372036854775808.0 ? INT64_MIN
                              : t >= 9223372036854775808.0 ? INT64_MAX : (int64_t)t);
        default:
            return t < 0 ? 0 : t >= 18446744073709551616.0 ? UINT64_MAX : (uint64_t)t;
        }
    }
    int64_t v = from == COPROC_INT32 ? (int32_t)(uint32_t)bits : (int64_t)bits;
    switch (to) {
    case COPROC_FLOAT32: return f2u((float)v);
    case COPROC_FLOAT64: {
        double d = (double)v;
        uint64_t u;
        memcpy(&u, &d, 8);
        return u;
    }
    case COPROC_INT32: case COPROC_UINT32: return (uint32_t)(uint64_t)v;
    default: return (uint64_t)v;
    }
}

static coproc_status run_cast(env *e, const coproc_column *a, coproc_type to, coproc_column **out)
{
    *out = NULL;
    if (submit_mode(e)) {
        coproc_op o;
        coproc_op_init(&o, COPROC_OP_MAP);
        o.variant = COPROC_VARIANT_CAST;
        o.a = a;
        o.to = to;
        coproc_result r;
        coproc_status s = submit_wait(e, &o, &r);
        *out = r.column;
        return s;
    }
    coproc_status s = coproc_cast(e->rt, a, to, out);
    track(*out);
    return s;
}

static void test_cast(void **state)
{
    env e = get_env(state, 404);
    static const coproc_type pairs[][2] = {
        {COPROC_INT32, COPROC_INT64},   {COPROC_INT32, COPROC_FLOAT32},
        {COPROC_INT32, COPROC_UINT32},  {COPROC_INT64, COPROC_INT32},
        {COPROC_FLOAT32, COPROC_INT32}, {COPROC_FLOAT32, COPROC_UINT32},
        {COPROC_FLOAT32, COPROC_INT64}, {COPROC_FLOAT32, COPROC_FLOAT64},
    };
    size_t sz[16], ns = sizes_for(&e, 1, sz);
    for (size_t si = 0; si < ns; si++) {
        size_t n = sz[si];
        void *a = xmalloc(n * 8);
        for (size_t pi = 0; pi < sizeof pairs / sizeof *pairs; pi++) {
            coproc_type from = pairs[pi][0], to = pairs[pi][1];
            if (to == COPROC_FLOAT64 && !e.fp64)
                continue;
            if (n == BIG && pi != 0 && pi != 4)
                continue;
            WHERE(&e, "cast %s -> %s n=%zu", coproc_type_name(from), coproc_type_name(to), n);
            fill_wide(&e, from, a, n);
            coproc_column *ca = in_col(&e, from, a, n), *out;
            expect_status(&e, COPROC_OK, run_cast(&e, ca, to, &out), "cast");
            void *got = fetch(&e, out, to, n, "cast output");
            for (size_t i = 0; i < n; i++) {
                uint64_t in = get_bits(from, a, i), w = ref_cast(from, to, in);
                uint64_t g = get_bits(to, got, i);
                if (to == COPROC_FLOAT64 && isnan(u2f((uint32_t)in))) {
                    double gd;
                    memcpy(&gd, &g, 8);
                    if (!isnan(gd))
                        FAIL(&e, "row %zu: NaN became %g", i, gd);
                } else if (g != w) {
                    FAIL(&e, "row %zu: %llx -> %llx, want %llx", i, (unsigned long long)in,
                         (unsigned long long)g, (unsigned long long)w);
                }
            }
            free(got);
            release(ca);
        }
        free(a);
    }
}

/* ---------------------------------------------------------------- gather */

static coproc_status run_gather(env *e, const coproc_column *src, const coproc_column *pos,
                                coproc_column **out)
{
    *out = NULL;
    if (submit_mode(e)) {
        coproc_op o;
        coproc_op_init(&o, COPROC_OP_GATHER);
        o.a = src;
        o.b = pos;
        coproc_result r;
        coproc_status s = submit_wait(e, &o, &r);
        *out = r.column;
        return s;
    }
    coproc_status s = coproc_gather(e->rt, src, pos, out);
    track(*out);
    return s;
}

static void test_gather(void **state)
{
    env e = get_env(state, 505);
    size_t sz[16], ns = sizes_for(&e, 1, sz);
    const coproc_type types[] = {COPROC_INT32, COPROC_INT64};
    for (size_t si = 0; si < ns; si++) {
        size_t n = sz[si];
        /* src rows: under the budget the random-access side must fit the budget */
        size_t m = n / 2 + 1;
        if (budget_mode(&e) && m > 4096)
            m = 4096;
        for (int ti = 0; ti < 2; ti++) {
            coproc_type t = types[ti];
            if (n == BIG && t != COPROC_INT32)
                continue;
            size_t es = tsize(t);
            WHERE(&e, "gather %s n=%zu from %zu rows", coproc_type_name(t), n, m);
            void *src = xmalloc(m * es), *want = xmalloc(n * es);
            uint32_t *pos = xmalloc(n * 4);
            fill_wide(&e, t, src, m);
            for (size_t i = 0; i < n; i++) {
                pos[i] = (uint32_t)test_rand_below(&e.rng, m);
                if (i % 97 == 5)
                    pos[i] = (uint32_t)(m - 1); /* the last row, and duplicates */
                memcpy((char *)want + i * es, (char *)src + pos[i] * es, es);
            }
            coproc_column *cs = in_col(&e, t, src, m), *cp = in_col(&e, COPROC_UINT32, pos, n), *out;
            expect_status(&e, COPROC_OK, run_gather(&e, cs, cp, &out), "gather");
            void *got = fetch(&e, out, t, n, "gather output");
            check_same_bits(&e, got, want, n, es, "gather row");
            free(got);
            release(cp);
            if (n == 33 || n == 300007) { /* a position == length(src): OUT_OF_RANGE, no output */
                WHERE(&e, "gather %s n=%zu, a position out of range", coproc_type_name(t), n);
                pos[n / 2] = (uint32_t)m;
                cp = in_col(&e, COPROC_UINT32, pos, n);
                expect_status(&e, COPROC_OUT_OF_RANGE, run_gather(&e, cs, cp, &out), "gather");
                if (out)
                    FAIL(&e, "an output column after OUT_OF_RANGE");
                release(cp);
            }
            release(cs);
            free(src);
            free(want);
            free(pos);
        }
    }
}

/* ---------------------------------------------------------------- scatter */

/* Scatter src at pos into dst (m rows). Device mode: into a device column;
 * sync modes: into a coproc_column_host_alloc column (its memory is checked);
 * submit modes: into a copy of a wrapped dst that must stay unchanged. *got
 * (malloc'd) receives the dst after the call on success. */
static coproc_status scatter_run(env *e, coproc_type t, const void *src, const uint32_t *pos,
                                 size_t n, const void *dst, size_t m, void **got)
{
    size_t es = tsize(t);
    *got = NULL;
    coproc_column *cs = in_col(e, t, src, n), *cp = in_col(e, COPROC_UINT32, pos, n);
    coproc_status s;
    if (submit_mode(e)) {
        void *dst_copy = xmalloc(m * es);
        memcpy(dst_copy, dst, m * es);
        coproc_column *cd = in_col(e, t, dst_copy, m);
        coproc_op o;
        coproc_op_init(&o, COPROC_OP_GATHER);
        o.variant = COPROC_VARIANT_SCATTER;
        o.a = cs;
        o.b = cp;
        o.dst = cd;
        coproc_result r;
        s = submit_wait(e, &o, &r);
        if (s == COPROC_OK)
            *got = fetch(e, r.column, t, m, "scatter output (the copy of dst)");
        void *after = peek(e, cd, "dst after a submitted scatter");
        check_same_bits(e, after, dst, m, es, "dst must not change: row");
        check_same_bits(e, dst_copy, dst, m, es, "the wrapped memory must not change: row");
        free(after);
        release(cd);
        free(dst_copy);
    } else {
        coproc_column *cd = owned_col(e, t, dst, m);
        s = coproc_scatter(e->rt, cs, cp, cd);
        /* a host_alloc column is written in its own memory; on error it is untouched */
        void *after = e->mode == M_DEVICE ? peek(e, cd, "dst") : coproc_column_host_data(cd);
        if (m && !after)
            FAIL(e, "no host data for the dst column");
        if (s != COPROC_OK) {
            check_same_bits(e, after, dst, m, es, "a failed scatter changed dst: row");
        } else {
            *got = xmalloc(m * es);
            memcpy(*got, after, m * es);
        }
        if (e->mode == M_DEVICE)
            free(after);
        release(cd);
    }
    release(cs);
    release(cp);
    return s;
}

static void scatter_case(env *e, coproc_type t, size_t n, int dups)
{
    size_t es = tsize(t), m = dups ? n / 4 + 1 : n + n / 2 + 1;
    void *src = xmalloc(n * es), *dst = xmalloc(m * es), *want = xmalloc(m * es);
    uint32_t *pos = xmalloc(n * 4), *perm = xmalloc(m * 4);
    fill_wide(e, t, src, n);
    fill_wide(e, t, dst, m);
    for (size_t i = 0; i < m; i++)
        perm[i] = (uint32_t)i;
    for (size_t i = m; i > 1; i--) { /* Fisher-Yates */
        size_t j = test_rand_below(&e->rng, i);
        uint32_t x = perm[i - 1];
        perm[i - 1] = perm[j];
        perm[j] = x;
    }
    for (size_t i = 0; i < n; i++)
        pos[i] = dups ? (uint32_t)test_rand_below(&e->rng, m) : perm[i];
    memcpy(want, dst, m * es);
    for (size_t i = 0; i < n; i++)
        memcpy((char *)want + pos[i] * es, (char *)src + i * es, es);
    WHERE(e, "scatter %s n=%zu into %zu rows%s", coproc_type_name(t), n, m,
          dups ? " (duplicate positions)" : "");
    void *got; /* over the budget too: scatter streams through windows of dst */
    coproc_status s = scatter_run(e, t, src, pos, n, dst, m, &got);
    expect_status(e, COPROC_OK, s, "scatter");
    if (!dups) {
        check_same_bits(e, got, want, m, es, "scattered dst row");
    } else { /* one of the writers wins: each written row holds one of theirs */
        for (size_t p = 0; p < m; p++) {
            int written = 0, ok = 0;
            for (size_t i = 0; i < n; i++)
                if (pos[i] == p) {
                    written = 1;
                    ok |= memcmp((char *)got + p * es, (char *)src + i * es, es) == 0;
                }
            if (!written)
                ok = memcmp((char *)got + p * es, (char *)dst + p * es, es) == 0;
            if (!ok)
                FAIL(e, "row %zu holds no writer's value (written: %d)", p, written);
        }
    }
    free(got);
    if ((n == 33 || n == 1000) && !dups) { /* a position == length(dst): OUT_OF_RANGE */
        WHERE(e, "scatter %s n=%zu, a position out of range", coproc_type_name(t), n);
        pos[n - 1] = (uint32_t)m;
        expect_status(e, COPROC_OUT_OF_RANGE, scatter_run(e, t, src, pos, n, dst, m, &got),
                      "scatter");
        if (got)
            FAIL(e, "an output after OUT_OF_RANGE");
    }
    free(src);
    free(dst);
    free(want);
    free(pos);
    free(perm);
}

static void test_scatter(void **state)
{
    env e = get_env(state, 606);
    size_t sz[16], ns = sizes_for(&e, 1, sz);
    for (size_t si = 0; si < ns; si++) {
        size_t n = sz[si];
        scatter_case(&e, COPROC_INT32, n, 0);
        if (n != BIG)
            scatter_case(&e, COPROC_INT64, n, 0);
        if (n == 1000)
            scatter_case(&e, COPROC_INT32, n, 1);
    }
    if (e.mode == M_SYNC || e.mode == M_BUDGET_SYNC) {
        /* a wrapped dst is caller memory, read-only: INVALID_ARGUMENT, untouched */
        WHERE(&e, "scatter into a wrapped column");
        int32_t src[4] = {1, 2, 3, 4}, dst[6] = {9, 9, 9, 9, 9, 9}, dst0[6];
        uint32_t pos[4] = {5, 0, 2, 1};
        memcpy(dst0, dst, sizeof dst);
        coproc_column *cs = in_col(&e, COPROC_INT32, src, 4), *cp = in_col(&e, COPROC_UINT32, pos, 4);
        coproc_column *cd = in_col(&e, COPROC_INT32, dst, 6);
        expect_status(&e, COPROC_INVALID_ARGUMENT, coproc_scatter(e.rt, cs, cp, cd), "scatter");
        check_same_bits(&e, dst, dst0, 6, 4, "wrapped dst row");
        release(cs);
        release(cp);
        release(cd);
    }
}

/* ---------------------------------------------------------------- compact */

static coproc_status run_compact(env *e, const coproc_column *src, const coproc_column *bm,
                                 coproc_column **out)
{
    *out = NULL;
    if (submit_mode(e)) {
        coproc_op o;
        coproc_op_init(&o, COPROC_OP_GATHER);
        o.variant = COPROC_VARIANT_COMPACT;
        o.a = src;
        o.b = bm;
        coproc_result r;
        coproc_status s = submit_wait(e, &o, &r);
        *out = r.column;
        return s;
    }
    coproc_status s = coproc_compact(e->rt, src, bm, out);
    track(*out);
    return s;
}

static void test_compact(void **state)
{
    env e = get_env(state, 707);
    size_t sz[16], ns = sizes_for(&e, 1, sz);
    const coproc_type types[] = {COPROC_INT32, COPROC_INT64};
    for (size_t si = 0; si < ns; si++) {
        size_t n = sz[si];
        for (int ti = 0; ti < 2; ti++) {
            coproc_type t = types[ti];
            if (n == BIG && t != COPROC_INT32)
                continue;
            for (int dens = 0; dens < 3; dens++) {
                if (n > 1000 && dens != 1)
                    continue;
                WHERE(&e, "compact %s n=%zu density %d", coproc_type_name(t), n, dens);
                size_t es = tsize(t), m = 0;
                void *src = xmalloc(n * es), *want = xmalloc(n * es);
                fill_wide(&e, t, src, n);
                uint32_t *bm = make_bitmap(&e, n, dens);
                for (size_t i = 0; i < n; i++)
                    if (bit(bm, i))
                        memcpy((char *)want + m++ * es, (char *)src + i * es, es);
                coproc_column *cs = in_col(&e, t, src, n);
                coproc_column *cb = in_col(&e, COPROC_UINT32, bm, (n + 31) / 32), *out;
                expect_status(&e, COPROC_OK, run_compact(&e, cs, cb, &out), "compact");
                void *got = fetch(&e, out, t, m, "compact output");
                check_same_bits(&e, got, want, m, es, "compacted row (in order)");
                free(got);
                release(cs);
                release(cb);
                free(src);
                free(want);
                free(bm);
            }
        }
    }
}

/* ---------------------------------------------------------------- scan */

static coproc_status run_scan(env *e, const coproc_column *in, int exclusive, coproc_column **out)
{
    *out = NULL;
    if (submit_mode(e)) {
        coproc_op o;
        coproc_op_init(&o, COPROC_OP_SCAN);
        o.a = in;
        o.exclusive = exclusive;
        coproc_result r;
        coproc_status s = submit_wait(e, &o, &r);
        *out = r.column;
        return s;
    }
    coproc_status s = coproc_scan(e->rt, in, exclusive, out);
    track(*out);
    return s;
}

static void test_scan(void **state)
{
    env e = get_env(state, 808);
    size_t sz[16], ns = sizes_for(&e, 1, sz);
    const coproc_type types[] = {COPROC_INT32, COPROC_INT64, COPROC_UINT32, COPROC_FLOAT32};
    for (size_t si = 0; si < ns; si++) {
        size_t n = sz[si];
        void *in = xmalloc(n * 8);
        for (int ti = 0; ti < 4; ti++) {
            coproc_type t = types[ti];
            if (n == BIG && t != COPROC_INT32)
                continue;
            coproc_type ot = t == COPROC_FLOAT32 ? COPROC_FLOAT32
                           : t == COPROC_UINT32 ? COPROC_UINT64 : COPROC_INT64;
            if (t == COPROC_FLOAT32)
                fill_quarters(&e, in, n, 8);
            else
                fill_wide(&e, t, in, n); /* int64: sums wrap */
            coproc_column *ci = in_col(&e, t, in, n);
            for (int excl = 0; excl < 2; excl++) {
                WHERE(&e, "scan %s %s n=%zu", coproc_type_name(t), excl ? "exclusive" : "inclusive", n);
                coproc_column *out;
                expect_status(&e, COPROC_OK, run_scan(&e, ci, excl, &out), "scan");
                void *got = fetch(&e, out, ot, n, "scan output");
                uint64_t acc = 0;
                double facc = 0, fabs_acc = 0;
                for (size_t i = 0; i < n; i++) {
                    if (t == COPROC_FLOAT32) {
                        float x = ((const float *)in)[i];
                        if (!excl) {
                            facc += x;
                            fabs_acc += fabs(x);
                        }
                        double g = ((float *)got)[i];
                        if (fabs(g - facc) > 1e-6 * fabs_acc)
                            FAIL(&e, "row %zu: %.9g, want %.9g", i, g, facc);
                        if (excl) {
                            facc += x;
                            fabs_acc += fabs(x);
                        }
                        continue;
                    }
                    uint64_t x = t == COPROC_INT32 ? (uint64_t)(int64_t)((const int32_t *)in)[i]
                                                   : get_bits(t, in, i);
                    if (!excl)
                        acc += x;
                    uint64_t g = ((uint64_t *)got)[i];
                    if (g != acc)
                        FAIL(&e, "row %zu: %llx, want %llx", i, (unsigned long long)g,
                             (unsigned long long)acc);
                    if (excl)
                        acc += x;
                }
                free(got);
            }
            release(ci);
        }
        free(in);
    }
}

/* ---------------------------------------------------------------- group-by */

/* Keys of a group-by or join: FEW distinct (-50..49), or up to `range`
 * distinct; int64 keys spread into the high bits. */
static void fill_keys(env *e, coproc_type t, void *k, size_t n, uint64_t range, int64_t offset)
{
    for (size_t i = 0; i < n; i++) {
        int64_t v = (int64_t)test_rand_below(&e->rng, range) + offset;
        if (t == COPROC_INT64)
            v = v * 0x100000001ll - 12345;
        set_bits(t, k, i, (uint64_t)v);
    }
}

/* aggs: COPROC_GROUP_* asked (coproc_group_by_aggs, op.aggs), 0 for coproc_group_by
 * (op.aggs left at 0: all). */
static coproc_status run_group(env *e, const coproc_column *k, const coproc_column *v, int sorted,
                               unsigned aggs, coproc_group_result *g)
{
    memset(g, 0, sizeof *g);
    if (submit_mode(e)) {
        coproc_op o;
        coproc_op_init(&o, COPROC_OP_GROUP_BY);
        o.a = k;
        o.b = v;
        o.sorted = sorted;
        o.aggs = aggs;
        coproc_result r;
        coproc_status s = submit_wait(e, &o, &r);
        *g = r.groups;
        if (s == COPROC_OK && r.count != g->groups)
            FAIL(e, "result.count %llu, groups %zu", (unsigned long long)r.count, g->groups);
        return s;
    }
    coproc_status s = aggs ? coproc_group_by_aggs(e->rt, k, v, aggs, sorted, g)
                           : coproc_group_by(e->rt, k, v, sorted, g);
    track(g->keys);
    track(g->count);
    track(g->sum);
    track(g->min);
    track(g->max);
    return s;
}

static void group_case(env *e, coproc_type kt, coproc_type vt, size_t n, uint64_t range,
                       int sorted, unsigned aggs)
{
    size_t ks = tsize(kt);
    void *k = xmalloc(n * ks), *v = xmalloc(n * 4);
    fill_keys(e, kt, k, n, range, -(int64_t)range / 2);
    if (vt == COPROC_FLOAT32)
        fill_quarters(e, v, n, 1000);
    else if (vt == COPROC_INT32)
        fill_wide(e, COPROC_INT32, v, n);
    WHERE(e, "group_by keys %s values %s n=%zu range %llu %s aggs 0x%x", coproc_type_name(kt),
          vt == NO_VALUES ? "none" : coproc_type_name(vt), n, (unsigned long long)range,
          sorted ? "sorted" : "unsorted", aggs);
    coproc_column *ck = in_col(e, kt, k, n), *cv = vt == NO_VALUES ? NULL : in_col(e, vt, v, n);
    coproc_group_result g;
    expect_status(e, COPROC_OK, run_group(e, ck, cv, sorted, aggs, &g), "group_by");
    /* the columns asked (all with aggs 0), and only those */
    unsigned want = aggs ? aggs : COPROC_GROUP_ALL;
    int has_sum = cv && (want & COPROC_GROUP_SUM), has_min = cv && (want & COPROC_GROUP_MIN),
        has_max = cv && (want & COPROC_GROUP_MAX);
    if (!g.sum != !has_sum || !g.min != !has_min || !g.max != !has_max)
        FAIL(e, "sum/min/max columns %s/%s/%s, want %s/%s/%s", g.sum ? "set" : "NULL",
             g.min ? "set" : "NULL", g.max ? "set" : "NULL", has_sum ? "set" : "NULL",
             has_min ? "set" : "NULL", has_max ? "set" : "NULL");
    size_t m = g.groups;
    coproc_type st = vt == COPROC_INT32 ? COPROC_INT64 : COPROC_FLOAT64;
    if (vt == COPROC_FLOAT32 && !e->fp64 && g.sum && coproc_column_type(g.sum) == COPROC_FLOAT32)
        st = COPROC_FLOAT32; /* devices without fp64 */
    if (vt == NO_VALUES && (g.sum || g.min || g.max))
        FAIL(e, "sum/min/max columns without values");
    void *gk = fetch(e, g.keys, kt, m, "group keys");
    uint64_t *gc = fetch(e, g.count, COPROC_UINT64, m, "group counts");
    void *gs = NULL, *gmn = NULL, *gmx = NULL;
    if (has_sum)
        gs = fetch(e, g.sum, st, m, "group sums");
    if (has_min)
        gmn = fetch(e, g.min, vt, m, "group mins");
    if (has_max)
        gmx = fetch(e, g.max, vt, m, "group maxes");
    /* reference: the rows in key order; the result's groups in key order */
    uint64_t *rk = xmalloc(n * 8), *gord = xmalloc(m * 8);
    uint32_t *rows = xmalloc(n * 4), *grow = xmalloc(m * 4);
    for (size_t i = 0; i < n; i++) {
        rk[i] = key_ord(kt, k, i);
        rows[i] = (uint32_t)i;
    }
    radix_sort(rk, rows, n);
    for (size_t j = 0; j < m; j++) {
        gord[j] = key_ord(kt, gk, j);
        grow[j] = (uint32_t)j;
    }
    if (sorted) {
        for (size_t j = 1; j < m; j++)
            if (gord[j - 1] >= gord[j])
                FAIL(e, "keys not ascending at group %zu", j);
    } else {
        radix_sort(gord, grow, m);
        for (size_t j = 1; j < m; j++)
            if (gord[j - 1] == gord[j])
                FAIL(e, "key %lld in two groups", (long long)test_get_i(kt, gk, grow[j]));
    }
    size_t j = 0;
    for (size_t a = 0; a < n; j++) {
        size_t b = a;
        while (b < n && rk[b] == rk[a])
            b++;
        if (j >= m)
            FAIL(e, "%zu groups, want more", m);
        size_t at = grow[j];
        if (gord[j] != rk[a] || gc[at] != b - a)
            FAIL(e, "group %zu: key %lld count %llu, want key %lld count %zu", j,
                 (long long)test_get_i(kt, gk, at), (unsigned long long)gc[at],
                 (long long)test_get_i(kt, k, rows[a]), b - a);
        if (vt == COPROC_INT32) {
            int64_t sum = 0, mn = INT32_MAX, mx = INT32_MIN;
            for (size_t r = a; r < b; r++) {
                int64_t x = ((const int32_t *)v)[rows[r]];
                sum += x;
                mn = x < mn ? x : mn;
                mx = x > mx ? x : mx;
            }
            /* an aggregate not asked is taken as right */
            int64_t s_ = gs ? ((int64_t *)gs)[at] : sum, n_ = gmn ? ((int32_t *)gmn)[at] : mn,
                    x_ = gmx ? ((int32_t *)gmx)[at] : mx;
            if (s_ != sum || n_ != mn || x_ != mx)
                FAIL(e, "group %zu (key %lld): sum/min/max %lld/%lld/%lld, want %lld/%lld/%lld", j,
                     (long long)test_get_i(kt, k, rows[a]), (long long)s_, (long long)n_, (long long)x_,
                     (long long)sum, (long long)mn, (long long)mx);
        } else if (vt == COPROC_FLOAT32) {
            double sum = 0, abs_sum = 0, mn = INFINITY, mx = -INFINITY;
            for (size_t r = a; r < b; r++) {
                double x = ((const float *)v)[rows[r]];
                sum += x;
                abs_sum += fabs(x);
                mn = fmin(mn, x);
                mx = fmax(mx, x);
            }
            double s_ = !gs ? sum : st == COPROC_FLOAT64 ? ((double *)gs)[at] : ((float *)gs)[at];
            double n_ = gmn ? ((float *)gmn)[at] : mn, x_ = gmx ? ((float *)gmx)[at] : mx;
            double tol = st == COPROC_FLOAT64 ? 0 : 4 * (double)(b - a + 1) * FLT_EPSILON * abs_sum;
            if (fabs(s_ - sum) > tol || n_ != mn || x_ != mx)
                FAIL(e, "group %zu (key %lld): sum/min/max %.17g/%g/%g, want %.17g/%g/%g", j,
                     (long long)test_get_i(kt, k, rows[a]), s_, n_, x_, sum, mn, mx);
        }
        a = b;
    }
    if (j != m)
        FAIL(e, "%zu groups, want %zu", m, j);
    free(rk);
    free(gord);
    free(rows);
    free(grow);
    free(gk);
    free(gc);
    free(gs);
    free(gmn);
    free(gmx);
    release(ck);
    release(cv);
    free(k);
    free(v);
}

static void test_group_by(void **state)
{
    env e = get_env(state, 909);
    size_t sz[16], ns = sizes_for(&e, 1, sz);
    for (size_t si = 0; si < ns; si++) {
        size_t n = sz[si];
        for (int sorted = 0; sorted < 2; sorted++) {
            if (n == BIG) { /* one of each, to keep the run short */
                if (sorted)
                    group_case(&e, COPROC_INT32, NO_VALUES, n, n + 1, sorted, 0);
                else
                    group_case(&e, COPROC_INT32, COPROC_INT32, n, 100, sorted,
                               COPROC_GROUP_COUNT | COPROC_GROUP_SUM);
                continue;
            }
            group_case(&e, COPROC_INT32, COPROC_INT32, n, 100, sorted, 0);
            group_case(&e, COPROC_INT32, NO_VALUES, n, n + 1, sorted, 0);
            group_case(&e, COPROC_INT64, COPROC_FLOAT32, n, n / 3 + 1, sorted, 0);
            group_case(&e, COPROC_INT64, NO_VALUES, n, 100, sorted, 0);
            /* some aggregates only: dense (int32 keys over 100) and hash (int64 keys
             * spread by 2^32 + 1) */
            static const unsigned some[] = {COPROC_GROUP_COUNT | COPROC_GROUP_SUM,
                                            COPROC_GROUP_COUNT, COPROC_GROUP_MIN,
                                            COPROC_GROUP_SUM | COPROC_GROUP_MAX};
            unsigned a = some[(si + (size_t)sorted) % 4];
            group_case(&e, COPROC_INT32, COPROC_INT32, n, 100, sorted, a);
            group_case(&e, COPROC_INT64, COPROC_INT32, n, n + 1, sorted, a);
            group_case(&e, COPROC_INT32, COPROC_FLOAT32, n, n / 3 + 1, sorted, a);
        }
    }
}

/* ---------------------------------------------------------------- sort, argsort */

/* Sort keys: int32 with many duplicates, int64 over the whole range, float32
 * with NaNs (signs, payloads), -0.0/+0.0, infinities and duplicates. */
static void fill_sort_keys(env *e, coproc_type t, void *k, size_t n)
{
    if (t == COPROC_INT32) {
        fill_keys(e, t, k, n, n / 4 + 2, -(int64_t)(n / 8) - 1);
        for (size_t i = 0; i < n; i += 41)
            ((int32_t *)k)[i] = i % 2 ? INT32_MIN : INT32_MAX;
    } else if (t == COPROC_INT64) {
        fill_wide(e, t, k, n);
    } else {
        fill_wide(e, t, k, n);
        for (size_t i = 0; i < n; i += 5)
            ((float *)k)[i] = (float)(test_rand_below(&e->rng, 7)) - 3.0f; /* duplicates */
    }
}

/* The keys the header promises: d[perm[i]], float NaNs as the canonical quiet NaN. */
static void *ref_sorted(coproc_type t, const void *d, const uint32_t *perm, size_t n)
{
    size_t es = tsize(t);
    void *out = xmalloc(n * es);
    for (size_t i = 0; i < n; i++) {
        memcpy((char *)out + i * es, (const char *)d + perm[i] * es, es);
        if (t == COPROC_FLOAT32 && isnan(((float *)out)[i]))
            ((uint32_t *)out)[i] = 0x7fc00000u;
    }
    return out;
}

static void sort_case(env *e, coproc_type kt, coproc_type vt, size_t n)
{
    size_t ks = tsize(kt), vs = vt == NO_VALUES ? 4 : tsize(vt);
    void *k = xmalloc(n * ks), *v = xmalloc(n * vs);
    uint32_t *perm = xmalloc(n * 4);
    fill_sort_keys(e, kt, k, n);
    for (size_t i = 0; i < n; i++) /* values: the row (checks stability) or floats */
        if (vt == COPROC_FLOAT32)
            ((float *)v)[i] = (float)i * 0.5f - 7.0f;
        else
            set_bits(vt == NO_VALUES ? COPROC_INT32 : vt, v, i, i * 3 + 1);
    WHERE(e, "sort keys %s values %s n=%zu", coproc_type_name(kt),
          vt == NO_VALUES ? "none" : coproc_type_name(vt), n);
    test_ref_argsort(kt, k, n, perm);
    void *wk = ref_sorted(kt, k, perm, n), *wv = vt == NO_VALUES ? NULL : ref_sorted(vt, v, perm, n);
    void *gk = NULL, *gv = NULL;
    if (submit_mode(e)) { /* sorted copies; the wrapped inputs are not changed */
        void *k0 = xmalloc(n * ks), *v0 = xmalloc(n * vs);
        memcpy(k0, k, n * ks);
        memcpy(v0, v, n * vs);
        coproc_column *ck = in_col(e, kt, k, n), *cv = vt == NO_VALUES ? NULL : in_col(e, vt, v, n);
        coproc_op o;
        coproc_op_init(&o, COPROC_OP_SORT);
        o.a = ck;
        o.b = cv;
        coproc_result r;
        expect_status(e, COPROC_OK, submit_wait(e, &o, &r), "sort");
        gk = fetch(e, r.column, kt, n, "sorted keys");
        if (cv)
            gv = fetch(e, r.column2, vt, n, "permuted values");
        else if (r.column2)
            FAIL(e, "permuted values without values");
        check_same_bits(e, k, k0, n, ks, "the wrapped keys changed: row");
        check_same_bits(e, v, v0, n, vs, "the wrapped values changed: row");
        release(ck);
        release(cv);
        free(k0);
        free(v0);
    } else { /* in place: device columns, or host_alloc columns' own memory */
        coproc_column *ck = owned_col(e, kt, k, n), *cv = vt == NO_VALUES ? NULL : owned_col(e, vt, v, n);
        expect_status(e, COPROC_OK, coproc_sort(e->rt, ck, cv), "sort");
        if (coproc_column_length(ck) != n || coproc_column_type(ck) != kt)
            FAIL(e, "the keys column changed shape");
        if (e->mode == M_DEVICE) {
            gk = peek(e, ck, "keys");
            gv = cv ? peek(e, cv, "values") : NULL;
        } else {
            gk = xmalloc(n * ks);
            memcpy(gk, n ? coproc_column_host_data(ck) : gk, n * ks);
            if (cv) {
                gv = xmalloc(n * vs);
                memcpy(gv, n ? coproc_column_host_data(cv) : gv, n * vs);
            }
        }
        release(ck);
        release(cv);
    }
    check_same_bits(e, gk, wk, n, ks, "sorted key");
    if (wv)
        check_same_bits(e, gv, wv, n, vs, "value (stable order)");
    free(gk);
    free(gv);
    free(wk);
    free(wv);
    free(k);
    free(v);
    free(perm);
}

static void test_sort(void **state)
{
    env e = get_env(state, 1010);
    size_t sz[16], ns = sizes_for(&e, 1, sz);
    for (size_t si = 0; si < ns; si++) {
        size_t n = sz[si];
        sort_case(&e, COPROC_INT32, NO_VALUES, n);
        sort_case(&e, COPROC_INT32, COPROC_INT32, n);
        if (n == BIG)
            continue;
        sort_case(&e, COPROC_INT64, COPROC_FLOAT32, n);
        sort_case(&e, COPROC_FLOAT32, NO_VALUES, n);
        sort_case(&e, COPROC_FLOAT32, COPROC_INT64, n);
    }
    if (e.mode == M_SYNC || e.mode == M_BUDGET_SYNC) {
        /* wrapped keys or values are caller memory, read-only: INVALID_ARGUMENT, untouched */
        WHERE(&e, "sort of wrapped columns");
        int32_t k[5] = {5, 1, 4, 2, 3}, v[5] = {0, 1, 2, 3, 4}, k0[5], v0[5];
        memcpy(k0, k, sizeof k);
        memcpy(v0, v, sizeof v);
        coproc_column *wk = in_col(&e, COPROC_INT32, k, 5), *wv = in_col(&e, COPROC_INT32, v, 5);
        coproc_column *ok = owned_col(&e, COPROC_INT32, k, 5), *ov = owned_col(&e, COPROC_INT32, v, 5);
        expect_status(&e, COPROC_INVALID_ARGUMENT, coproc_sort(e.rt, wk, NULL), "sort(wrapped)");
        expect_status(&e, COPROC_INVALID_ARGUMENT, coproc_sort(e.rt, wk, ov), "sort(wrapped, owned)");
        expect_status(&e, COPROC_INVALID_ARGUMENT, coproc_sort(e.rt, ok, wv), "sort(owned, wrapped)");
        check_same_bits(&e, k, k0, 5, 4, "wrapped keys row");
        check_same_bits(&e, v, v0, 5, 4, "wrapped values row");
        check_same_bits(&e, coproc_column_host_data(ok), k0, 5, 4, "refused sort changed keys: row");
        check_same_bits(&e, coproc_column_host_data(ov), v0, 5, 4, "refused sort changed values: row");
        release(wk);
        release(wv);
        release(ok);
        release(ov);
    }
}

static coproc_status run_argsort(env *e, const coproc_column *k, coproc_column **perm)
{
    *perm = NULL;
    if (submit_mode(e)) {
        coproc_op o;
        coproc_op_init(&o, COPROC_OP_SORT);
        o.variant = COPROC_VARIANT_ARGSORT;
        o.a = k;
        coproc_result r;
        coproc_status s = submit_wait(e, &o, &r);
        *perm = r.column;
        if (s == COPROC_OK && r.column2)
            FAIL(e, "argsort gave a second column");
        return s;
    }
    coproc_status s = coproc_argsort(e->rt, k, perm);
    track(*perm);
    return s;
}

static void test_argsort(void **state)
{
    env e = get_env(state, 1111);
    size_t sz[16], ns = sizes_for(&e, 1, sz);
    const coproc_type types[] = {COPROC_INT32, COPROC_INT64, COPROC_FLOAT32};
    for (size_t si = 0; si < ns; si++) {
        size_t n = sz[si];
        for (int ti = 0; ti < 3; ti++) {
            coproc_type t = types[ti];
            if (n == BIG && t != COPROC_INT32)
                continue;
            WHERE(&e, "argsort %s n=%zu", coproc_type_name(t), n);
            size_t es = tsize(t);
            void *k = xmalloc(n * es), *k0 = xmalloc(n * es);
            uint32_t *want = xmalloc(n * 4);
            fill_sort_keys(&e, t, k, n);
            memcpy(k0, k, n * es);
            test_ref_argsort(t, k, n, want);
            coproc_column *ck = in_col(&e, t, k, n), *perm;
            expect_status(&e, COPROC_OK, run_argsort(&e, ck, &perm), "argsort");
            uint32_t *got = fetch(&e, perm, COPROC_UINT32, n, "permutation");
            check_same_bits(&e, got, want, n, 4, "permutation (stable)");
            void *after = peek(&e, ck, "keys");
            check_same_bits(&e, after, k0, n, es, "argsort changed the keys: row");
            free(after);
            free(got);
            release(ck);
            free(k);
            free(k0);
            free(want);
        }
    }
}

/* ---------------------------------------------------------------- joins */

enum { J_HASH, J_MERGE };

static coproc_status run_join(env *e, int which, const coproc_column *l, const coproc_column *r,
                              coproc_join_result *j)
{
    memset(j, 0, sizeof *j);
    if (submit_mode(e)) {
        coproc_op o;
        coproc_op_init(&o, which == J_HASH ? COPROC_OP_HASH_JOIN : COPROC_OP_MERGE_JOIN);
        o.a = l;
        o.b = r;
        coproc_result res;
        coproc_status s = submit_wait(e, &o, &res);
        *j = res.join;
        if (s == COPROC_OK && res.count != j->count)
            FAIL(e, "result.count %llu, join.count %zu", (unsigned long long)res.count, j->count);
        return s;
    }
    coproc_status s = which == J_HASH ? coproc_hash_join(e->rt, l, r, j)
                                      : coproc_sort_merge_join(e->rt, l, r, j);
    track(j->left);
    track(j->right);
    return s;
}

/* Every pair (l, r) with left[l] == right[r], as l << 32 | r, ascending: both
 * sides in key order, the equal runs crossed. malloc'd; *count pairs. */
static uint64_t *join_reference(coproc_type kt, const void *l, size_t nl, const void *r, size_t nr,
                                size_t *count)
{
    uint64_t *lk = xmalloc(nl * 8), *rk = xmalloc(nr * 8);
    uint32_t *lrow = xmalloc(nl * 4), *rrow = xmalloc(nr * 4);
    for (size_t i = 0; i < nl; i++) {
        lk[i] = key_ord(kt, l, i);
        lrow[i] = (uint32_t)i;
    }
    for (size_t i = 0; i < nr; i++) {
        rk[i] = key_ord(kt, r, i);
        rrow[i] = (uint32_t)i;
    }
    radix_sort(lk, lrow, nl);
    radix_sort(rk, rrow, nr);
    uint64_t *pairs = NULL;
    size_t m = 0;
    for (int pass = 0; pass < 2; pass++) { /* count, then write */
        size_t a = 0, b = 0, w = 0;
        while (a < nl && b < nr) {
            if (lk[a] < rk[b]) {
                a++;
            } else if (lk[a] > rk[b]) {
                b++;
            } else {
                size_t a2 = a, b2 = b;
                while (a2 < nl && lk[a2] == lk[a])
                    a2++;
                while (b2 < nr && rk[b2] == rk[b])
                    b2++;
                for (size_t x = a; x < a2; x++)
                    for (size_t y = b; y < b2; y++, w++)
                        if (pass)
                            pairs[w] = (uint64_t)lrow[x] << 32 | rrow[y];
                a = a2;
                b = b2;
            }
        }
        if (!pass) {
            m = w;
            pairs = xmalloc(m * 8);
        }
    }
    radix_sort(pairs, NULL, m);
    free(lk);
    free(rk);
    free(lrow);
    free(rrow);
    *count = m;
    return pairs;
}

/* The pairs (gl[i], gr[i]) as a multiset equal `want` (ascending, packed). */
static void check_pairs(env *e, const uint32_t *gl, const uint32_t *gr, const uint64_t *want,
                        size_t m)
{
    uint64_t *got = xmalloc(m * 8);
    for (size_t i = 0; i < m; i++)
        got[i] = (uint64_t)gl[i] << 32 | gr[i];
    radix_sort(got, NULL, m);
    for (size_t i = 0; i < m; i++)
        if (got[i] != want[i])
            FAIL(e, "pair %zu (in order) is (%u, %u), want (%u, %u)", i, (unsigned)(got[i] >> 32),
                 (unsigned)got[i], (unsigned)(want[i] >> 32), (unsigned)want[i]);
    free(got);
}

/* dist 0: duplicate keys on both sides; 1: no key matches (left even, right odd). */
static void join_case(env *e, int which, coproc_type kt, size_t nl, size_t nr, int dist)
{
    size_t ks = tsize(kt);
    void *l = xmalloc(nl * ks), *r = xmalloc(nr * ks);
    uint64_t range = (nl > nr ? nl : nr) / 2 + 1;
    fill_keys(e, kt, l, nl, range, -3);
    fill_keys(e, kt, r, nr, range, -3);
    if (dist == 1) {
        for (size_t i = 0; i < nl; i++)
            set_bits(kt, l, i, get_bits(kt, l, i) & ~(uint64_t)1);
        for (size_t i = 0; i < nr; i++)
            set_bits(kt, r, i, get_bits(kt, r, i) | 1);
    }
    WHERE(e, "%s %s left %zu right %zu %s", which == J_HASH ? "hash_join" : "sort_merge_join",
          coproc_type_name(kt), nl, nr, dist ? "no matches" : "duplicates");
    size_t want_n;
    uint64_t *want = join_reference(kt, l, nl, r, nr, &want_n);
    if (dist == 1 && want_n)
        FAIL(e, "test bug: %zu pairs where none match", want_n);
    if ((uint64_t)nl * nr <= 1000000) { /* small: the reference agrees with testlib's */
        size_t tn;
        test_pair *tp = test_join_reference(ks, l, nl, r, nr, &tn);
        if (tn != want_n)
            FAIL(e, "test bug: references disagree, %zu and %zu pairs", tn, want_n);
        for (size_t i = 0; i < tn; i++)
            if (((uint64_t)tp[i].l << 32 | tp[i].r) != want[i])
                FAIL(e, "test bug: references disagree at pair %zu", i);
        free(tp);
    }
    coproc_column *cl = in_col(e, kt, l, nl), *cr = in_col(e, kt, r, nr);
    coproc_join_result j;
    expect_status(e, COPROC_OK, run_join(e, which, cl, cr, &j), "join");
    if (j.count != want_n)
        FAIL(e, "%zu pairs, want %zu", j.count, want_n);
    uint32_t *gl = fetch(e, j.left, COPROC_UINT32, want_n, "left positions");
    uint32_t *gr = fetch(e, j.right, COPROC_UINT32, want_n, "right positions");
    check_pairs(e, gl, gr, want, want_n);
    free(gl);
    free(gr);
    free(want);
    release(cl);
    release(cr);
    free(l);
    free(r);
}

static void join_test(void **state, int which)
{
    env e = get_env(state, 1212 + (uint64_t)which);
    size_t sz[16], ns = sizes_for(&e, 1, sz);
    for (size_t si = 0; si < ns; si++) {
        size_t n = sz[si];
        if (n == BIG) { /* both sides over the budget; about 1M pairs */
            join_case(&e, which, COPROC_INT32, n, n / 4 + 1, 0);
            continue;
        }
        join_case(&e, which, COPROC_INT32, n, n, 0);
        join_case(&e, which, COPROC_INT32, n, n / 3 + 1, 0);
        join_case(&e, which, COPROC_INT32, n / 3, n, 0);
        join_case(&e, which, COPROC_INT32, n, n, 1);
        join_case(&e, which, COPROC_INT64, n, n, 0);
        join_case(&e, which, COPROC_INT64, n, n / 2 + 1, 1);
    }
}

static void test_hash_join(void **state) { join_test(state, J_HASH); }
static void test_merge_join(void **state) { join_test(state, J_MERGE); }

/* ---------------------------------------------------------------- semi-join */

static coproc_status run_semi(env *e, const coproc_column *probe, const coproc_column *build,
                              coproc_column **pos, uint64_t *count)
{
    *pos = NULL;
    if (submit_mode(e)) {
        coproc_op o;
        coproc_op_init(&o, COPROC_OP_SEMI_JOIN);
        o.a = probe;
        o.b = build;
        coproc_result r;
        coproc_status s = submit_wait(e, &o, &r);
        *pos = r.column;
        *count = r.count;
        return s;
    }
    coproc_status s = coproc_semi_join(e->rt, probe, build, pos, count);
    track(*pos);
    return s;
}

static void semi_case(env *e, coproc_type kt, size_t np, size_t nb, int dist)
{
    size_t ks = tsize(kt);
    void *p = xmalloc(np * ks), *b = xmalloc(nb * ks);
    uint64_t range = (np > nb ? np : nb) + 1;
    fill_keys(e, kt, p, np, range, -7);
    fill_keys(e, kt, b, nb, range, -7);
    if (dist == 1)
        for (size_t i = 0; i < nb; i++)
            set_bits(kt, b, i, (uint64_t)(test_get_i(kt, b, i) + (int64_t)range * 0x100000001ll * 4));
    WHERE(e, "semi_join %s probe %zu build %zu %s", coproc_type_name(kt), np, nb,
          dist ? "no matches" : "duplicates");
    uint64_t *sorted = xmalloc(nb * 8); /* build keys in order; each probe row looks its key up */
    for (size_t i = 0; i < nb; i++)
        sorted[i] = key_ord(kt, b, i);
    radix_sort(sorted, NULL, nb);
    uint32_t *want = xmalloc(np * 4);
    size_t m = 0;
    for (size_t i = 0; i < np; i++) {
        uint64_t key = key_ord(kt, p, i);
        size_t lo = 0, hi = nb;
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            if (sorted[mid] < key)
                lo = mid + 1;
            else
                hi = mid;
        }
        if (lo < nb && sorted[lo] == key)
            want[m++] = (uint32_t)i;
    }
    coproc_column *cp = in_col(e, kt, p, np), *cb = in_col(e, kt, b, nb), *out;
    uint64_t count = 0;
    expect_status(e, COPROC_OK, run_semi(e, cp, cb, &out, &count), "semi_join");
    if (count != m)
        FAIL(e, "count %llu, want %zu", (unsigned long long)count, m);
    uint32_t *got = fetch(e, out, COPROC_UINT32, m, "positions");
    check_same_bits(e, got, want, m, 4, "probe position (ascending)");
    free(got);
    free(want);
    free(sorted);
    release(cp);
    release(cb);
    free(p);
    free(b);
}

static void test_semi_join(void **state)
{
    env e = get_env(state, 1313);
    size_t sz[16], ns = sizes_for(&e, 1, sz);
    for (size_t si = 0; si < ns; si++) {
        size_t n = sz[si];
        semi_case(&e, COPROC_INT32, n, n, 0);
        if (n == BIG)
            continue;
        semi_case(&e, COPROC_INT32, n, n / 4 + 1, 0);
        semi_case(&e, COPROC_INT32, n / 4, n, 1);
        semi_case(&e, COPROC_INT64, n, n / 2 + 1, 0);
        semi_case(&e, COPROC_INT64, n, n, 1);
    }
}

/* ---------------------------------------------------------------- gather/scatter over the budget */

/* Each row of got (m rows) holds the value of one of the rows of src
 * scattered there (src[i] at pos[i], i < n), or dst0's where none was. */
static void check_one_writer(env *e, const int32_t *got, const int32_t *dst0, size_t m,
                             const int32_t *src, const uint32_t *pos, size_t n, const char *what)
{
    char *written = calloc(m + 1, 1), *ok = calloc(m + 1, 1);
    for (size_t i = 0; i < n; i++)
        if (pos[i] < m) {
            written[pos[i]] = 1;
            ok[pos[i]] |= got[pos[i]] == src[i];
        }
    for (size_t p = 0; p < m; p++)
        if (!(written[p] ? ok[p] : got[p] == dst0[p]))
            FAIL(e, "%s: row %zu holds %d, no writer's value (written: %d)", what, p, got[p],
                 written[p]);
    free(written);
    free(ok);
}

/* Gather's source is read at random and not streamed: a gather whose src
 * exceeds half the budget fails with DEVICE_OUT_OF_MEMORY (no output),
 * through the synchronous call and through coproc_submit; one whose src fits
 * streams its positions. Scatter streams either way: into a dst over the
 * budget (windows of dst), and from src and positions over it (chunks
 * through dst's one window), the wrapped dst unchanged. */
static void test_budget_gather_scatter_limits(void **state)
{
    (void)state;
    env e = env_for(M_BUDGET, 1414);
    size_t small = 1000;
    int32_t *big = xmalloc(BIG * 4), *big0 = xmalloc(BIG * 4), *vals = xmalloc(BIG * 4);
    uint32_t *pos = xmalloc(BIG * 4);
    fill_wide(&e, COPROC_INT32, big, BIG);
    fill_wide(&e, COPROC_INT32, vals, BIG);
    memcpy(big0, big, BIG * 4);
    for (size_t i = 0; i < BIG; i++)
        pos[i] = (uint32_t)test_rand_below(&e.rng, small);
    coproc_column *cbig = in_col(&e, COPROC_INT32, big, BIG);
    coproc_column *cpos_small = in_col(&e, COPROC_UINT32, pos, small);
    coproc_column *cpos_big = in_col(&e, COPROC_UINT32, pos, BIG);
    coproc_column *cvals_small = in_col(&e, COPROC_INT32, vals, small);
    coproc_column *cvals_big = in_col(&e, COPROC_INT32, vals, BIG);
    coproc_column *out = NULL;
    coproc_op o;
    coproc_result r;

    WHERE(&e, "gather from a src of %zu rows (over the budget)", BIG);
    expect_status(&e, COPROC_DEVICE_OUT_OF_MEMORY, coproc_gather(e.rt, cbig, cpos_small, &out),
                  "coproc_gather");
    if (out)
        FAIL(&e, "an output column after DEVICE_OUT_OF_MEMORY");
    coproc_op_init(&o, COPROC_OP_GATHER);
    o.a = cbig;
    o.b = cpos_small;
    expect_status(&e, COPROC_DEVICE_OUT_OF_MEMORY, submit_wait(&e, &o, &r), "submitted gather");

    WHERE(&e, "gather of %zu positions from %zu rows (positions stream)", BIG, small);
    coproc_op_init(&o, COPROC_OP_GATHER);
    o.a = cvals_small;
    o.b = cpos_big;
    expect_status(&e, COPROC_OK, submit_wait(&e, &o, &r), "submitted gather");
    if (r.streamed != 1)
        FAIL(&e, "streamed = %d", r.streamed);
    int32_t *got = fetch(&e, r.column, COPROC_INT32, BIG, "gather output");
    for (size_t i = 0; i < BIG; i++)
        if (got[i] != vals[pos[i]])
            FAIL(&e, "row %zu: %d, want %d", i, got[i], vals[pos[i]]);
    free(got);
    expect_status(&e, COPROC_OK, coproc_gather(e.rt, cvals_small, cpos_big, &out), "coproc_gather");
    got = fetch(&e, track(out), COPROC_INT32, BIG, "gather output");
    for (size_t i = 0; i < BIG; i++)
        if (got[i] != vals[pos[i]])
            FAIL(&e, "sync: row %zu: %d, want %d", i, got[i], vals[pos[i]]);
    free(got);

    /* scatter into a big dst: submitted (a copy of the wrapped dst) and in place (host_alloc) */
    WHERE(&e, "scatter of %zu rows into a dst of %zu rows (over the budget)", small, BIG);
    coproc_op_init(&o, COPROC_OP_GATHER);
    o.variant = COPROC_VARIANT_SCATTER;
    o.a = cvals_small;
    o.b = cpos_small;
    o.dst = cbig;
    expect_status(&e, COPROC_OK, submit_wait(&e, &o, &r), "submitted scatter");
    if (r.streamed != 1)
        FAIL(&e, "streamed = %d", r.streamed);
    got = fetch(&e, r.column, COPROC_INT32, BIG, "scatter output");
    check_one_writer(&e, got, big0, BIG, vals, pos, small, "submitted scatter");
    free(got);
    check_same_bits(&e, big, big0, BIG, 4, "the wrapped dst changed: row");
    coproc_column *owned = NULL;
    assert_ok(e.rt, coproc_column_host_alloc(e.rt, COPROC_INT32, BIG, &owned));
    track(owned);
    memcpy(coproc_column_host_data(owned), big0, BIG * 4);
    expect_status(&e, COPROC_OK, coproc_scatter(e.rt, cvals_small, cpos_small, owned),
                  "coproc_scatter");
    check_one_writer(&e, coproc_column_host_data(owned), big0, BIG, vals, pos, small,
                     "coproc_scatter into host_alloc");

    /* a small dst, but src and positions over the budget */
    WHERE(&e, "scatter of %zu rows into a dst of %zu rows (over the budget)", BIG, small);
    int32_t *dst_small = xmalloc(small * 4);
    memcpy(dst_small, big0, small * 4);
    coproc_column *cdst_small = in_col(&e, COPROC_INT32, dst_small, small);
    o.a = cvals_big;
    o.b = cpos_big;
    o.dst = cdst_small;
    expect_status(&e, COPROC_OK, submit_wait(&e, &o, &r), "submitted scatter");
    got = fetch(&e, r.column, COPROC_INT32, small, "scatter output");
    check_one_writer(&e, got, big0, small, vals, pos, BIG, "submitted scatter");
    free(got);
    check_same_bits(&e, dst_small, big0, small, 4, "the wrapped dst changed: row");
    coproc_column *owned_small = owned_col(&e, COPROC_INT32, big0, small);
    expect_status(&e, COPROC_OK, coproc_scatter(e.rt, cvals_big, cpos_big, owned_small),
                  "coproc_scatter");
    check_one_writer(&e, coproc_column_host_data(owned_small), big0, small, vals, pos, BIG,
                     "coproc_scatter into host_alloc");

    release(cbig);
    release(cpos_small);
    release(cpos_big);
    release(cvals_small);
    release(cvals_big);
    release(owned);
    release(cdst_small);
    release(owned_small);
    free(big);
    free(big0);
    free(vals);
    free(pos);
    free(dst_small);
}

/* ---------------------------------------------------------------- writes into host columns */

/* coproc_sort and coproc_scatter on coproc_column_host_alloc columns write
 * the column's own memory and drop its cached copies: an operator that ran on
 * the column before (and left a copy in a device's cache, with copies forced)
 * sees the new rows after. Both runtimes. */
static void inplace_case(env *e)
{
    enum { N = 5000 };
    int32_t *k = xmalloc(N * 4), *v = xmalloc(N * 4);
    uint32_t *ident = xmalloc(N * 4), *perm = xmalloc(N * 4), *rev = xmalloc(N * 4);
    fill_keys(e, COPROC_INT32, k, N, 700, -350);
    for (uint32_t i = 0; i < N; i++) {
        v[i] = (int32_t)i;
        ident[i] = i;
        rev[i] = N - 1 - i;
    }
    test_ref_argsort(COPROC_INT32, k, N, perm);
    coproc_column *ck = owned_col(e, COPROC_INT32, k, N), *cv = owned_col(e, COPROC_INT32, v, N);
    coproc_column *cid = in_col(e, COPROC_UINT32, ident, N), *crev = in_col(e, COPROC_UINT32, rev, N);
    coproc_column *out = NULL;
    WHERE(e, "gather of a host_alloc column before sorting it");
    expect_status(e, COPROC_OK, coproc_gather(e->rt, ck, cid, &out), "gather");
    int32_t *got = fetch(e, track(out), COPROC_INT32, N, "gather output");
    check_same_bits(e, got, k, N, 4, "row");
    free(got);
    WHERE(e, "sort of host_alloc columns in place");
    expect_status(e, COPROC_OK, coproc_sort(e->rt, ck, cv), "sort");
    const int32_t *hk = coproc_column_host_data(ck), *hv = coproc_column_host_data(cv);
    for (size_t i = 0; i < N; i++)
        if (hk[i] != k[perm[i]] || hv[i] != (int32_t)perm[i])
            FAIL(e, "row %zu: (%d, %d), want (%d, %u)", i, hk[i], hv[i], k[perm[i]], perm[i]);
    WHERE(e, "gather of the column after sorting it (the cached copy must be gone)");
    expect_status(e, COPROC_OK, coproc_gather(e->rt, ck, cid, &out), "gather");
    got = fetch(e, track(out), COPROC_INT32, N, "gather output");
    check_same_bits(e, got, hk, N, 4, "row");
    free(got);
    WHERE(e, "scatter into a host_alloc column in place");
    /* dst[rev[i]] = v_sorted[i]: the values reversed */
    expect_status(e, COPROC_OK, coproc_scatter(e->rt, cv, crev, ck), "scatter");
    for (size_t i = 0; i < N; i++)
        if (hk[N - 1 - i] != (int32_t)perm[i])
            FAIL(e, "row %zu: %d, want %u", N - 1 - i, hk[N - 1 - i], perm[i]);
    WHERE(e, "gather of the column after scattering into it");
    expect_status(e, COPROC_OK, coproc_gather(e->rt, ck, cid, &out), "gather");
    got = fetch(e, track(out), COPROC_INT32, N, "gather output");
    check_same_bits(e, got, hk, N, 4, "row");
    free(got);
    release(ck);
    release(cv);
    release(cid);
    release(crev);
    free(k);
    free(v);
    free(ident);
    free(perm);
    free(rev);
}

static void test_inplace_host_columns(void **state)
{
    (void)state;
    env e = env_for(M_SYNC, 1515);
    inplace_case(&e);
    e = env_for(M_BUDGET_SYNC, 1516);
    inplace_case(&e);
}

/* ---------------------------------------------------------------- argument errors at submit */

typedef struct bad_cols {
    coproc_column *a, *a7, *f, *bm, *bm2, *pos, *pos7, *dst, *dev, *devpos, *devbm;
} bad_cols;

/* A valid op of kind k and variant v on the 8-row host columns of c. */
static void valid_op(coproc_op *o, coproc_op_kind k, coproc_op_variant v, const bad_cols *c)
{
    coproc_op_init(o, k);
    o->variant = v;
    o->a = c->a;
    switch (k) {
    case COPROC_OP_REDUCE:
        o->b = v == COPROC_VARIANT_REDUCE_WHERE ? c->bm : NULL;
        break;
    case COPROC_OP_SELECT:
        o->a = NULL;
        o->filter.first = (coproc_predicate){.col = c->a, .cmp = COPROC_CMP_LT, .a.i64 = 3};
        break;
    case COPROC_OP_MAP:
        o->b = v == COPROC_VARIANT_CAST ? NULL : c->a;
        o->to = COPROC_INT64;
        break;
    case COPROC_OP_GATHER:
        o->b = v == COPROC_VARIANT_COMPACT ? c->bm : c->pos;
        o->dst = v == COPROC_VARIANT_SCATTER ? c->dst : NULL;
        break;
    case COPROC_OP_GROUP_BY: case COPROC_OP_SORT:
        o->b = v == COPROC_VARIANT_ARGSORT ? NULL : c->a;
        break;
    case COPROC_OP_HASH_JOIN: case COPROC_OP_MERGE_JOIN: case COPROC_OP_SEMI_JOIN:
        o->b = c->a;
        break;
    default: /* SCAN */
        break;
    }
}

static void expect_refused(env *e, const coproc_op *o, coproc_status want, const char *what)
{
    coproc_task *t = NULL;
    WHERE(e, "submit %s (%s, variant %d)", what, coproc_op_kind_name(o->kind), (int)o->variant);
    coproc_status s = coproc_submit(e->rt, o, &t);
    if (s == COPROC_OK) {
        coproc_result r;
        coproc_status w = coproc_wait(t, &r);
        coproc_result_free(&r);
        FAIL(e, "accepted at submit (coproc_wait then gave %s), want %s", coproc_status_name(w),
             coproc_status_name(want));
    }
    if (s != want)
        FAIL(e, "-> %s, want %s (%s)", coproc_status_name(s), coproc_status_name(want),
             coproc_errmsg(e->rt));
    if (!coproc_errmsg(e->rt)[0])
        FAIL(e, "no error message");
}

static int valid_variant(coproc_op_kind k, int v)
{
    if (v == COPROC_VARIANT_DEFAULT)
        return 1;
    switch (k) {
    case COPROC_OP_REDUCE: return v == COPROC_VARIANT_REDUCE_WHERE;
    case COPROC_OP_SELECT:
        return v == COPROC_VARIANT_SELECT_BITMAP || v == COPROC_VARIANT_SELECT_COUNT;
    case COPROC_OP_MAP: return v == COPROC_VARIANT_CAST;
    case COPROC_OP_GATHER: return v == COPROC_VARIANT_SCATTER || v == COPROC_VARIANT_COMPACT;
    case COPROC_OP_SORT: return v == COPROC_VARIANT_ARGSORT;
    case COPROC_OP_HASH_JOIN: return v == COPROC_VARIANT_JOIN_COUNT;
    default: return 0;
    }
}

static void test_submit_bad_args(void **state)
{
    (void)state;
    env e = env_for(M_SUBMIT, 1616);
    int32_t a[8] = {5, -1, 3, 3, 0, 7, 2, -4};
    float f[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    uint32_t bm[2] = {0xA5u, 0}, pos[8] = {7, 6, 5, 4, 3, 2, 1, 0};
    int32_t dst[8] = {0};
    bad_cols c;
    c.a = in_col(&e, COPROC_INT32, a, 8);
    c.a7 = in_col(&e, COPROC_INT32, a, 7);
    c.f = in_col(&e, COPROC_FLOAT32, f, 8);
    c.bm = in_col(&e, COPROC_UINT32, bm, 1);
    c.bm2 = in_col(&e, COPROC_UINT32, bm, 2);
    c.pos = in_col(&e, COPROC_UINT32, pos, 8);
    c.pos7 = in_col(&e, COPROC_UINT32, pos, 7);
    c.dst = in_col(&e, COPROC_INT32, dst, 8);
    assert_ok(e.rt, coproc_column_upload(e.rt, 0, COPROC_INT32, a, 8, &c.dev));
    track(c.dev);
    assert_ok(e.rt, coproc_column_upload(e.rt, 0, COPROC_UINT32, pos, 8, &c.devpos));
    track(c.devpos);
    assert_ok(e.rt, coproc_column_upload(e.rt, 0, COPROC_UINT32, bm, 1, &c.devbm));
    track(c.devbm);
    coproc_op o;
    coproc_task *t = NULL;

    /* every valid (kind, variant) is accepted: the refusals below are for their one fault */
    for (int k = 0; k < COPROC_OP_KIND_COUNT; k++)
        for (int v = 0; v < COPROC_VARIANT_COUNT; v++) {
            if (!valid_variant((coproc_op_kind)k, v))
                continue;
            valid_op(&o, (coproc_op_kind)k, (coproc_op_variant)v, &c);
            coproc_result r;
            WHERE(&e, "a valid %s op, variant %d", coproc_op_kind_name((coproc_op_kind)k), v);
            expect_status(&e, COPROC_OK, submit_wait(&e, &o, &r), "submit");
            drop_result(&r);
        }

    WHERE(&e, "NULL op / task");
    expect_status(&e, COPROC_NULL_POINTER, coproc_submit(e.rt, NULL, &t), "submit(NULL op)");
    valid_op(&o, COPROC_OP_REDUCE, COPROC_VARIANT_DEFAULT, &c);
    expect_status(&e, COPROC_NULL_POINTER, coproc_submit(e.rt, &o, NULL), "submit(NULL task)");

    /* a variant out of range for its kind */
    for (int k = 0; k < COPROC_OP_KIND_COUNT; k++) {
        const int extra[] = {COPROC_VARIANT_COUNT, -1, 1000};
        for (int v = 0; v < COPROC_VARIANT_COUNT + 3; v++) {
            int var = v < COPROC_VARIANT_COUNT ? v : extra[v - COPROC_VARIANT_COUNT];
            if (v < COPROC_VARIANT_COUNT && valid_variant((coproc_op_kind)k, var))
                continue;
            valid_op(&o, (coproc_op_kind)k, COPROC_VARIANT_DEFAULT, &c);
            o.variant = (coproc_op_variant)var;
            expect_refused(&e, &o, COPROC_INVALID_ARGUMENT, "a variant of another kind");
        }
    }

    /* NULL required inputs */
    valid_op(&o, COPROC_OP_REDUCE, COPROC_VARIANT_DEFAULT, &c);
    o.a = NULL;
    expect_refused(&e, &o, COPROC_NULL_POINTER, "reduce without a");
    valid_op(&o, COPROC_OP_REDUCE, COPROC_VARIANT_REDUCE_WHERE, &c);
    o.b = NULL;
    expect_refused(&e, &o, COPROC_NULL_POINTER, "reduce_where without the bitmap");
    valid_op(&o, COPROC_OP_SELECT, COPROC_VARIANT_DEFAULT, &c);
    o.filter.first.col = NULL;
    expect_refused(&e, &o, COPROC_NULL_POINTER, "select without a column");
    valid_op(&o, COPROC_OP_SELECT, COPROC_VARIANT_SELECT_BITMAP, &c);
    o.filter.logic = COPROC_LOGIC_AND;
    o.filter.second = (coproc_predicate){.col = NULL, .cmp = COPROC_CMP_GT};
    expect_refused(&e, &o, COPROC_NULL_POINTER, "select_bitmap without the second column");
    valid_op(&o, COPROC_OP_MAP, COPROC_VARIANT_DEFAULT, &c);
    o.a = NULL;
    expect_refused(&e, &o, COPROC_NULL_POINTER, "map without a");
    valid_op(&o, COPROC_OP_MAP, COPROC_VARIANT_CAST, &c);
    o.a = NULL;
    expect_refused(&e, &o, COPROC_NULL_POINTER, "cast without a");
    valid_op(&o, COPROC_OP_GATHER, COPROC_VARIANT_DEFAULT, &c);
    o.a = NULL;
    expect_refused(&e, &o, COPROC_NULL_POINTER, "gather without src");
    valid_op(&o, COPROC_OP_GATHER, COPROC_VARIANT_DEFAULT, &c);
    o.b = NULL;
    expect_refused(&e, &o, COPROC_NULL_POINTER, "gather without positions");
    valid_op(&o, COPROC_OP_GATHER, COPROC_VARIANT_SCATTER, &c);
    o.dst = NULL;
    expect_refused(&e, &o, COPROC_NULL_POINTER, "scatter without dst");
    valid_op(&o, COPROC_OP_GATHER, COPROC_VARIANT_SCATTER, &c);
    o.b = NULL;
    expect_refused(&e, &o, COPROC_NULL_POINTER, "scatter without positions");
    valid_op(&o, COPROC_OP_GATHER, COPROC_VARIANT_COMPACT, &c);
    o.b = NULL;
    expect_refused(&e, &o, COPROC_NULL_POINTER, "compact without the bitmap");
    valid_op(&o, COPROC_OP_SCAN, COPROC_VARIANT_DEFAULT, &c);
    o.a = NULL;
    expect_refused(&e, &o, COPROC_NULL_POINTER, "scan without a");
    valid_op(&o, COPROC_OP_GROUP_BY, COPROC_VARIANT_DEFAULT, &c);
    o.a = NULL;
    expect_refused(&e, &o, COPROC_NULL_POINTER, "group_by without keys");
    valid_op(&o, COPROC_OP_GROUP_BY, COPROC_VARIANT_DEFAULT, &c);
    o.aggs = COPROC_GROUP_SUM | 0x10u;
    expect_refused(&e, &o, COPROC_INVALID_ARGUMENT, "group_by, aggs with an unknown bit");
    if (!strstr(coproc_errmsg(e.rt), "aggs"))
        FAIL(&e, "message \"%s\" does not name aggs", coproc_errmsg(e.rt));
    o.aggs = 0x80000000u;
    expect_refused(&e, &o, COPROC_INVALID_ARGUMENT, "group_by, aggs 0x80000000");
    valid_op(&o, COPROC_OP_SORT, COPROC_VARIANT_DEFAULT, &c);
    o.a = NULL;
    expect_refused(&e, &o, COPROC_NULL_POINTER, "sort without keys");
    valid_op(&o, COPROC_OP_SORT, COPROC_VARIANT_ARGSORT, &c);
    o.a = NULL;
    expect_refused(&e, &o, COPROC_NULL_POINTER, "argsort without keys");
    const coproc_op_kind joins[] = {COPROC_OP_HASH_JOIN, COPROC_OP_MERGE_JOIN, COPROC_OP_SEMI_JOIN};
    for (int i = 0; i < 3; i++) {
        valid_op(&o, joins[i], COPROC_VARIANT_DEFAULT, &c);
        o.a = NULL;
        expect_refused(&e, &o, COPROC_NULL_POINTER, "join without a");
        valid_op(&o, joins[i], COPROC_VARIANT_DEFAULT, &c);
        o.b = NULL;
        expect_refused(&e, &o, COPROC_NULL_POINTER, "join without b");
    }

    /* lengths that do not match */
    valid_op(&o, COPROC_OP_MAP, COPROC_VARIANT_DEFAULT, &c);
    o.b = c.a7;
    expect_refused(&e, &o, COPROC_LENGTH_MISMATCH, "map of 8 and 7 rows");
    valid_op(&o, COPROC_OP_SELECT, COPROC_VARIANT_DEFAULT, &c);
    o.filter.logic = COPROC_LOGIC_OR;
    o.filter.second = (coproc_predicate){.col = c.a7, .cmp = COPROC_CMP_GT};
    expect_refused(&e, &o, COPROC_LENGTH_MISMATCH, "select over 8 and 7 rows");
    valid_op(&o, COPROC_OP_GROUP_BY, COPROC_VARIANT_DEFAULT, &c);
    o.b = c.a7;
    expect_refused(&e, &o, COPROC_LENGTH_MISMATCH, "group_by, 8 keys and 7 values");
    valid_op(&o, COPROC_OP_SORT, COPROC_VARIANT_DEFAULT, &c);
    o.b = c.a7;
    expect_refused(&e, &o, COPROC_LENGTH_MISMATCH, "sort, 8 keys and 7 values");
    valid_op(&o, COPROC_OP_GATHER, COPROC_VARIANT_SCATTER, &c);
    o.b = c.pos7;
    expect_refused(&e, &o, COPROC_LENGTH_MISMATCH, "scatter, 8 rows and 7 positions");
    valid_op(&o, COPROC_OP_REDUCE, COPROC_VARIANT_REDUCE_WHERE, &c);
    o.b = c.bm2;
    expect_refused(&e, &o, COPROC_LENGTH_MISMATCH, "reduce_where, 8 rows and a 2-word bitmap");
    valid_op(&o, COPROC_OP_GATHER, COPROC_VARIANT_COMPACT, &c);
    o.b = c.bm2;
    expect_refused(&e, &o, COPROC_LENGTH_MISMATCH, "compact, 8 rows and a 2-word bitmap");

    /* float keys */
    valid_op(&o, COPROC_OP_GROUP_BY, COPROC_VARIANT_DEFAULT, &c);
    o.a = c.f;
    expect_refused(&e, &o, COPROC_UNSUPPORTED_TYPE, "group_by on float keys");
    valid_op(&o, COPROC_OP_GROUP_BY, COPROC_VARIANT_DEFAULT, &c);
    o.a = c.f;
    o.b = NULL;
    expect_refused(&e, &o, COPROC_UNSUPPORTED_TYPE, "group_by on float keys, no values");
    for (int i = 0; i < 3; i++) {
        valid_op(&o, joins[i], COPROC_VARIANT_DEFAULT, &c);
        o.a = c.f;
        o.b = c.f;
        expect_refused(&e, &o, COPROC_UNSUPPORTED_TYPE, "join on float keys");
    }

    /* host and device columns mixed */
    valid_op(&o, COPROC_OP_MAP, COPROC_VARIANT_DEFAULT, &c);
    o.b = c.dev;
    expect_refused(&e, &o, COPROC_WRONG_DEVICE, "map, host a and device b");
    valid_op(&o, COPROC_OP_SELECT, COPROC_VARIANT_SELECT_BITMAP, &c);
    o.filter.logic = COPROC_LOGIC_AND;
    o.filter.second = (coproc_predicate){.col = c.dev, .cmp = COPROC_CMP_GT};
    expect_refused(&e, &o, COPROC_WRONG_DEVICE, "select, host and device columns");
    valid_op(&o, COPROC_OP_REDUCE, COPROC_VARIANT_REDUCE_WHERE, &c);
    o.b = c.devbm;
    expect_refused(&e, &o, COPROC_WRONG_DEVICE, "reduce_where, host column and device bitmap");
    valid_op(&o, COPROC_OP_GATHER, COPROC_VARIANT_DEFAULT, &c);
    o.b = c.devpos;
    expect_refused(&e, &o, COPROC_WRONG_DEVICE, "gather, host src and device positions");
    valid_op(&o, COPROC_OP_GATHER, COPROC_VARIANT_DEFAULT, &c);
    o.a = c.dev;
    expect_refused(&e, &o, COPROC_WRONG_DEVICE, "gather, device src and host positions");
    valid_op(&o, COPROC_OP_GATHER, COPROC_VARIANT_SCATTER, &c);
    o.dst = c.dev;
    expect_refused(&e, &o, COPROC_WRONG_DEVICE, "scatter, host inputs and device dst");
    valid_op(&o, COPROC_OP_GATHER, COPROC_VARIANT_SCATTER, &c);
    o.a = c.dev;
    o.b = c.devpos;
    expect_refused(&e, &o, COPROC_WRONG_DEVICE, "scatter, device inputs and host dst");
    valid_op(&o, COPROC_OP_GATHER, COPROC_VARIANT_COMPACT, &c);
    o.b = c.devbm;
    expect_refused(&e, &o, COPROC_WRONG_DEVICE, "compact, host src and device bitmap");
    valid_op(&o, COPROC_OP_GROUP_BY, COPROC_VARIANT_DEFAULT, &c);
    o.b = c.dev;
    expect_refused(&e, &o, COPROC_WRONG_DEVICE, "group_by, host keys and device values");
    valid_op(&o, COPROC_OP_SORT, COPROC_VARIANT_DEFAULT, &c);
    o.b = c.dev;
    expect_refused(&e, &o, COPROC_WRONG_DEVICE, "sort, host keys and device values");
    for (int i = 0; i < 3; i++) {
        valid_op(&o, joins[i], COPROC_VARIANT_DEFAULT, &c);
        o.b = c.dev;
        expect_refused(&e, &o, COPROC_WRONG_DEVICE, "join, host and device keys");
    }
    /* the test's own columns are freed by the teardown */
}

/* ---------------------------------------------------------------- main */

#define MODES(fn)                                                                          \
    {#fn " [device columns]", fn, test_setup, test_teardown, &mode_ids[M_DEVICE]},               \
    {#fn " [host sync]", fn, test_setup, test_teardown, &mode_ids[M_SYNC]},                      \
    {#fn " [host submit]", fn, test_setup, test_teardown, &mode_ids[M_SUBMIT]},                  \
    {#fn " [budget submit]", fn, test_setup, test_teardown, &mode_ids[M_BUDGET]},                \
    {#fn " [budget sync]", fn, test_setup, test_teardown, &mode_ids[M_BUDGET_SYNC]}

int main(void)
{
    const struct CMUnitTest tests[] = {
        MODES(test_reduce),
        MODES(test_reduce_where),
        MODES(test_select),
        MODES(test_select_bitmap),
        MODES(test_map),
        MODES(test_map_const),
        MODES(test_cast),
        MODES(test_gather),
        MODES(test_scatter),
        MODES(test_compact),
        MODES(test_scan),
        MODES(test_group_by),
        MODES(test_sort),
        MODES(test_argsort),
        MODES(test_hash_join),
        MODES(test_merge_join),
        MODES(test_semi_join),
        cmocka_unit_test_setup_teardown(test_budget_gather_scatter_limits, test_setup, test_teardown),
        cmocka_unit_test_setup_teardown(test_inplace_host_columns, test_setup, test_teardown),
        cmocka_unit_test_setup_teardown(test_submit_bad_args, test_setup, test_teardown),
    };
    unsetenv("COPROC_BUDGET"); /* the budget runtime's budget is this test's */
    const char *only = getenv("SUBMIT_ALL_FILTER"); /* e.g. "*device*" while debugging */
    if (only)
        cmocka_set_test_filter(only);
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
